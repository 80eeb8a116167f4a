"""``jetconnect doctor``: is this machine, this Spark and this server ready for a pipeline?

One progress line per check, and a non-zero exit if any failed:

1. a Spark session starts (local, ``--master URL``, or Spark Connect ``--remote sc://...``);
2. the Python that runs Spark's workers imports jetconnect, pyarrow and every installed plugin, at
   the driver's versions (the one-row probe of :mod:`jetconnect.spark._imports`);
3. the session's settings against :data:`~jetconnect.spark.RECOMMENDED_SPARK_CONF` (a difference
   is reported, not failed: it costs speed, not correctness);
4. with ``--source NAME`` (or ``--sink NAME``) and ``--option key=value``: the connector is built
   from the registry with those options and asked what needs its server: for a source
   ``schema()``, then ``splits()`` (batch) or ``initial_offset()`` (``--stream``); for a sink
   ``check_connection()`` (connect and log in, nothing written), where the sink has one.

A connector check that fails says first what kind of failure the server's answer tells
(:mod:`jetconnect._connection_failures`): ``authentication refused``, ``certificate not trusted``,
``wrong protocol`` or ``not reachable``. Every line goes through :func:`jetconnect._redaction.redact`
with the options' secrets: a password given to the doctor, or quoted back by a driver's error,
never shows.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jetconnect._connection_failures import connection_failure
from jetconnect._redaction import redact, redact_options, secrets_of

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

    from jetconnect._registry import ConnectorSpec

OK, FAIL, DIFFERS = "ok", "FAIL", "differs"

#: Spark's own default of each recommended setting: what a session that does not set it runs with.
SPARK_DEFAULTS: Mapping[str, str] = {
    "spark.python.worker.reuse": "true",
    "spark.python.unix.domain.socket.enabled": "false",
    "spark.redaction.regex": "(?i)secret|password|token|access[.]?key|credential",
}


@dataclass(frozen=True)
class Check:
    """One line of the report: ``status`` is ok, FAIL or differs."""

    status: str
    what: str
    detail: str = ""

    def line(self) -> str:
        return f"[{self.status}] {self.what}" + (f": {self.detail}" if self.detail else "")


def parse_option(text: str) -> tuple[str, str]:
    """``key=value`` as a pair (the value may hold ``=``); argparse's type for ``--option``."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text.split('=')[0]!r}")
    return key.strip(), value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The doctor's flags, on the ``doctor`` subcommand of ``jetconnect``."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--master", help="Spark master URL (default: local[2])")
    where.add_argument("--remote", help="a Spark Connect server, sc://host:15002")
    where.add_argument("--skip-spark", action="store_true", help="check only the connector, start no session")
    parser.add_argument(
        "--conf",
        action="append",
        type=parse_option,
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting for the session, as your pipeline sets it (repeatable)",
    )
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--source", metavar="NAME", help="build this registered source and ask its server")
    what.add_argument("--sink", metavar="NAME", help="build this registered sink from the options")
    parser.add_argument(
        "--option",
        action="append",
        type=parse_option,
        default=[],
        metavar="KEY=VALUE",
        help="a connector option (repeatable)",
    )
    parser.add_argument("--stream", action="store_true", help="check the source as a stream: initial_offset()")


def conf_report(settings: Mapping[str, str | None], recommended: Mapping[str, str] | None = None) -> list[Check]:
    """One check per recommended setting: ok when the session's value (or, unset, Spark's default)
    is the recommended one, else ``differs`` naming both."""
    if recommended is None:
        from jetconnect.spark import RECOMMENDED_SPARK_CONF

        recommended = RECOMMENDED_SPARK_CONF
    checks = []
    for key, want in recommended.items():
        value = settings.get(key)
        shown = value if value is not None else f"unset, Spark's default {SPARK_DEFAULTS.get(key, 'unknown')}"
        effective = value if value is not None else SPARK_DEFAULTS.get(key)
        if effective is not None and effective.strip().lower() == want.lower():
            checks.append(Check(OK, key, shown))
        else:
            checks.append(Check(DIFFERS, key, f"{shown}; recommended {want} (set it when the session is built)"))
    return checks


def plugin_modules() -> dict[str, tuple[str, str]]:
    """``{what: (module, distribution)}`` a worker must import: jetconnect, pyarrow and every plugin
    the registry loaded (``JETCONNECT_PLUGINS`` narrows them, as it does for pipelines)."""
    from jetconnect._registry import ENTRY_POINT_GROUP, get_registry

    loaded = get_registry().plugins
    wanted = {"jetconnect": ("jetconnect", "jetconnect"), "pyarrow": ("pyarrow", "pyarrow")}
    for ep in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if ep.name in loaded and ep.dist is not None:
            wanted[f"plugin {ep.name}"] = (ep.module, ep.dist.name)
    return wanted


def worker_report(
    wanted: Mapping[str, tuple[str, str]], answer: tuple[str, list[str | None], list[str | None]]
) -> list[Check]:
    """Compare what the probe answered (worker interpreter, import errors, versions, in the order of
    ``wanted``) with the driver: a module that does not import, or another version, fails."""
    from jetconnect.spark._imports import worker_setup_message

    executable, errors, versions = answer
    checks = [Check(OK, "workers' Python", f"{executable} (driver: {sys.executable})")]
    missing = {}
    for (what, (module, dist)), error, version in zip(wanted.items(), errors, versions):
        driver = _version(dist)
        if error is not None:
            missing[module] = error
            checks.append(Check(FAIL, f"{what} on the workers", error))
        elif version != driver:
            checks.append(Check(FAIL, f"{what} on the workers", f"{dist} {version} there, {driver} on the driver"))
        else:
            checks.append(Check(OK, f"{what} on the workers", f"{dist} {version}"))
    if missing:
        fix = worker_setup_message("the workers", executable, missing).splitlines()[-1]
        checks.append(Check(FAIL, "how to fix the workers", fix))
    return checks


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def connector_checks(spec: ConnectorSpec, options: Mapping[str, str], stream: bool = False) -> Iterator[Check]:
    """Build the connector of ``spec`` from ``options`` and ask, for a source, what needs its server.

    Yields one check per step and stops at the first failure; an error is shown as its type and
    message (the caller redacts every line).
    """
    from jetconnect._connector import BatchSource, StreamSource
    from jetconnect._options import Options

    label = f"{spec.kind} {spec.name}"
    steps: list[tuple[str, Callable[[Any], str]]] = []
    try:
        connector = spec.create_from_options(Options(options, owner=f"{spec.kind} '{spec.name}'"))
    except Exception as exc:  # whatever a plugin raises is what the doctor reports
        yield Check(FAIL, f"{label}: build from the options", _error(exc))
        return
    yield Check(OK, f"{label}: build from the options", json.dumps(redact_options(options), sort_keys=True))
    if spec.kind == "sink":
        try:
            checked = connector.check_connection()
        except Exception as exc:  # the server's answer is the point of the check
            yield Check(FAIL, f"{label}: check_connection()", _failure(exc))
            return
        if checked is None:
            yield Check(
                OK,
                f"{label}: not contacted",
                "a sink reaches its server only when it writes; the doctor writes nothing",
            )
        else:
            yield Check(OK, f"{label}: check_connection()", checked)
        return
    steps.append(("schema()", lambda c: c.schema().simpleString()))
    if stream or not isinstance(connector, BatchSource):
        if not isinstance(connector, StreamSource):
            yield Check(FAIL, f"{label}: initial_offset()", "this source cannot stream")
            return
        steps.append(("initial_offset()", lambda c: json.dumps(c.initial_offset(), sort_keys=True, default=str)))
    else:
        steps.append(("splits()", lambda c: f"{len(c.splits())} split(s)"))
    for what, step in steps:
        try:
            detail = step(connector)
        except Exception as exc:  # the server's answer, or the driver's, is the point of the check
            yield Check(FAIL, f"{label}: {what}", _failure(exc))
            return
        yield Check(OK, f"{label}: {what}", detail)


def _error(exc: BaseException) -> str:
    message = " | ".join(line for line in str(exc).splitlines() if line.strip())
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _failure(exc: BaseException) -> str:
    """A connector's error, led by the kind of connection failure it tells when its text does not
    say it already (``certificate not trusted: SourceError: ...``)."""
    text = _error(exc)
    kind = connection_failure(text)
    return text if kind is None or kind.value in text else f"{kind.value}: {text}"


def _session(args: argparse.Namespace) -> SparkSession:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    if args.remote:
        builder = builder.remote(args.remote)
    else:
        builder = (
            builder.master(args.master or "local[2]")
            .appName("jetconnect doctor")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
        )
    for key, value in args.conf:
        builder = builder.config(key, value)
    return builder.getOrCreate()


def _probe(
    spark: SparkSession, wanted: Mapping[str, tuple[str, str]]
) -> tuple[str, list[str | None], list[str | None]]:
    """Run :func:`~jetconnect.spark._imports.installed_probe` in one worker task (classic or Connect)."""
    from jetconnect.spark._connect import is_connect
    from jetconnect.spark._imports import installed_probe

    probe = installed_probe([m for m, _ in wanted.values()], [d for _, d in wanted.values()])
    if not is_connect(spark):
        # an RDD job, as the pipelines' own check: it needs nothing in the worker but pyspark
        return spark.sparkContext.parallelize([0], 1).map(probe).first()

    def in_arrow(batches: Any) -> Any:  # nested: pickled by value, needs only pyarrow on the server
        import json as json_

        import pyarrow as pa

        for _ in batches:
            pass
        yield pa.RecordBatch.from_pydict({"answer": [json_.dumps(probe(None))]})

    answer = spark.range(1).mapInArrow(in_arrow, "answer string").collect()[0]["answer"]
    executable, errors, versions = json.loads(answer)
    return executable, errors, versions


def _settings(spark: SparkSession, keys: Sequence[str]) -> dict[str, str | None]:
    from jetconnect.spark._connect import is_connect

    if is_connect(spark):
        return {key: spark.conf.get(key, None) for key in keys}
    conf = spark.sparkContext.getConf()
    return {key: conf.get(key) for key in keys}


def run(args: argparse.Namespace, out: Callable[[str], None] = print) -> int:
    """Run every check ``args`` asks for, printing each line as it is done; 1 if any failed, else 0."""
    options = dict(args.option)
    secrets = secrets_of(options)
    failed = 0

    def report(check: Check) -> None:
        nonlocal failed
        failed += check.status == FAIL
        out(redact(check.line(), secrets))
        sys.stdout.flush()  # a progress line shows while the next check runs

    if args.option and not (args.source or args.sink):
        report(Check(FAIL, "options", "--option needs --source NAME or --sink NAME"))
    if not args.skip_spark:
        _spark_checks(args, report)
    if args.source or args.sink:
        from jetconnect._registry import get_registry

        kind, name = ("source", args.source) if args.source else ("sink", args.sink)
        registry = get_registry()
        table = registry.sources if kind == "source" else registry.sinks
        if name not in table:
            report(Check(FAIL, f"{kind} {name}", f"not installed; {kind}s: {', '.join(sorted(table))}"))
        else:
            for check in connector_checks(table[name], options, stream=args.stream):
                report(check)
    out(f"jetconnect doctor: {'all checks passed' if not failed else f'{failed} check(s) failed'}")
    return 1 if failed else 0


def _spark_checks(args: argparse.Namespace, report: Callable[[Check], None]) -> None:
    from jetconnect.spark import RECOMMENDED_SPARK_CONF

    where = args.remote or args.master or "local[2]"
    try:
        spark = _session(args)
    except Exception as exc:  # no session: nothing else about Spark can be checked
        report(Check(FAIL, f"Spark session ({where})", _error(exc)))
        return
    try:
        if not args.remote:
            spark.sparkContext.setLogLevel("ERROR")
        report(Check(OK, f"Spark session ({where})", f"Spark {spark.version}"))
        wanted = plugin_modules()
        try:
            answer = _probe(spark, wanted)
        except Exception as exc:  # the workers' Python could not even run a one-row job
            report(Check(FAIL, "workers' Python", f"a one-row job that only imports failed: {_error(exc)[:2000]}"))
        else:
            for check in worker_report(wanted, answer):
                report(check)
        try:
            settings = _settings(spark, list(RECOMMENDED_SPARK_CONF))
        except Exception as exc:  # a Connect server may refuse to show a setting
            report(Check(DIFFERS, "Spark settings", f"could not be read: {_error(exc)}"))
        else:
            for check in conf_report(settings):
                report(check)
    finally:
        spark.stop()


__all__ = ["Check", "add_arguments", "conf_report", "connector_checks", "parse_option", "run", "worker_report"]
