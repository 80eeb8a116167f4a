"""The skeleton every crash-test pipeline shares: its command line, its SparkSession, its trigger,
and how it runs to its end.

A pipeline module names its arguments and says how to start its query; :func:`run` does the rest::

    def start(spark, args, trigger):
        stream = sources.kafka(...).read_stream(spark, max_records_per_batch=args.max_records)
        return sinks.files(directory=args.output).write_stream(stream, checkpoint_location=args.checkpoint, trigger=trigger)

    if __name__ == "__main__":
        run("kafka-to-files", start, "bootstrap topic output checkpoint max_records:int", __doc__)

The tests run each pipeline as its own program (``python integration/pipelines/NAME.py ...``), so a
SIGKILL takes the whole driver, JVM included; this module sits beside them and is imported from
there (a program's folder is first on ``sys.path``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from jetconnect.testing import spark_builder

#: How a pipeline starts its query: (session, parsed arguments, trigger as keyword arguments of
#: ``DataStreamWriter.trigger``, which jetconnect's ``write_stream(trigger=...)`` takes as well).
Start = Callable[[Any, argparse.Namespace, dict[str, Any]], Any]

_TYPES: dict[str, Callable[[str], Any]] = {"str": str, "int": int}


def parser(name: str, arguments: str, doc: str | None, drain: bool | None) -> argparse.ArgumentParser:
    """A parser of positional ``arguments``: ``"name"``, ``"name:int"``, ``"name:int=300"`` (optional,
    with its default), separated by spaces; and ``--until-done`` when the pipeline may do either."""
    parse = argparse.ArgumentParser(prog=name, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    for spec in arguments.split():
        spec_name, _, rest = spec.partition(":")
        kind, has_default, default = rest.partition("=")
        convert = _TYPES[kind or "str"]
        if has_default:
            parse.add_argument(spec_name, type=convert, nargs="?", default=convert(default))
        else:
            parse.add_argument(spec_name, type=convert)
    if drain is None:
        parse.add_argument(
            "--until-done", action="store_true", help="drain what is there (Trigger.AvailableNow) and exit"
        )
    return parse


def run(
    name: str,
    start: Start,
    arguments: str,
    doc: str | None = None,
    *,
    drain: bool | None = None,
    interval: str = "0 seconds",
    options: Callable[[argparse.ArgumentParser], None] | None = None,
    conf: dict[str, str] | None = None,
) -> None:
    """Parse the command line, start the query with ``start`` and wait for its end.

    The trigger is AvailableNow (drain what is there, then exit) when ``drain`` is true, or when it
    is None and the command line says ``--until-done``; otherwise a micro-batch every ``interval``
    until the process is killed. ``options`` adds named options to the parser. A query that fails
    raises from ``awaitTermination``, so the program exits non-zero and a test sees why.
    """
    parse = parser(name, arguments, doc, drain)
    if options is not None:
        options(parse)
    args = parse.parse_args()
    builder = spark_builder(name).config("spark.ui.showConsoleProgress", "false")
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    drains = args.until_done if drain is None else drain
    trigger: dict[str, Any] = {"availableNow": True} if drains else {"processingTime": interval}
    query = start(spark, args, trigger)
    print("started", flush=True)
    query.awaitTermination()
    print("pipeline finished", flush=True)
    spark.stop()
