"""Helpers for testing connectors the way a user relies on them: through a real SparkSession,
killed with SIGKILL mid-stream and restarted from the checkpoint.

A crash test runs its pipeline as a separate program (so the whole driver, JVM included, can be
killed), waits for a point in the query's life that it can see in the checkpoint folder, kills
the process group, restarts the same program, and then counts what arrived.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

_session: SparkSession | None = None


#: Where tests, crash pipelines and the demo run Spark: ``local[2]`` unless this names a master
#: (``spark://127.0.0.1:7077`` in the cluster profile, scripts/cluster-test.sh).
MASTER_ENV = "JETCONNECT_SPARK_MASTER"
#: Overrides the master of the test run's own shared session only (the cluster profile's crash
#: tests keep it local, so the pipelines under test get the cluster's cores).
TEST_MASTER_ENV = "JETCONNECT_TEST_SPARK_MASTER"
#: Jars (comma-separated paths) every session of tests and demos gets as ``spark.jars``: the
#: oldest-PySpark profile puts Spark's own Avro reader there (scripts/test-spark-oldest.sh), so
#: the Avro source's hand-off to it is what its tests read through.
JARS_ENV = "JETCONNECT_SPARK_JARS"


#: Within this a refused connection (a wrong password, a certificate not trusted, the wrong
#: protocol) must fail where a connector is called directly: never retried as if unreachable.
REFUSAL_PROMPT_S = 10.0
#: ... and through a Spark job, whose own scheduling (10 s once on a loaded 2-core machine) comes
#: on top of the connector's failure (well under a second): still half of what one retried
#: attempt would take (retry_deadline 60 s, connect_timeout 30 s).
REFUSAL_THROUGH_SPARK_S = 30.0


def spark_builder(app_name: str = "jetconnect", master: str | None = None) -> Any:
    """A SparkSession builder with the settings jetconnect's tests and demos use.

    ``master`` defaults to ``$JETCONNECT_SPARK_MASTER`` or ``local[2]``. On a standalone cluster each
    executor gets one core and 768 MiB, so the two one-core workers give every job two executors.
    """
    from pyspark.sql import SparkSession

    from jetconnect.spark import RECOMMENDED_SPARK_CONF

    master = master or os.environ.get(MASTER_ENV) or "local[2]"
    # Spark's Python workers run PYSPARK_PYTHON, else PATH's python3, which need not be this
    # interpreter (a venv's python run without activating the venv). PySpark started from Python
    # reads only this variable, not spark.pyspark.python (that one works through spark-submit).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # tests and demos talk to 127.0.0.1 only
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.streaming.forceDeleteTempCheckpointLocation", "true")
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .config("spark.driver.memory", "2g")
        .config(map=dict(RECOMMENDED_SPARK_CONF))
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.executor.cores", "1")
        .config("spark.executor.memory", "768m")
        # Spark gives a fresh Python process (the stream reader's runner) 15 s to connect back; it
        # imports pyspark from a zip, without bytecode caching, and on 2 busy cores that can take
        # longer and fail streaming queries at their start
        .config("spark.python.authenticate.socketTimeout", "120s")
    )
    if jars := os.environ.get(JARS_ENV, "").strip():
        builder = builder.config("spark.jars", jars)
    if master.startswith("spark://"):
        # the test cluster's two one-core workers: two executors, and jobs wait for both, so the
        # number of members (jetconnect.spark.members) is the same in every run and restart
        # (Spark's default wait of 30 s ran out on 2 loaded cores, and a job ran on one executor)
        builder = (
            builder.config("spark.cores.max", "2")
            .config("spark.scheduler.minRegisteredResourcesRatio", "1.0")
            .config("spark.scheduler.maxRegisteredResourcesWaitingTime", "300s")
        )
    return builder


def shared_spark_session() -> SparkSession:
    """One SparkSession per process with every installed plugin registered (8-12 s to start)."""
    global _session
    if _session is None:
        import jetconnect

        _session = spark_builder("jetconnect-tests", master=os.environ.get(TEST_MASTER_ENV)).getOrCreate()
        _session.sparkContext.setLogLevel("ERROR")
        jetconnect.register(_session)
    return _session


class _Strided:
    """Processor i of n counts i, i+n, i+2n, ...; its position is how many it has emitted."""

    def __init__(self, ctx: Any) -> None:
        self.first, self.step, self.k = ctx.global_processor_index, ctx.total_parallelism, 0


def counter_stream(total: int | None, per_fill: int = 5, local_parallelism: int = 2, *, snapshots: bool = True) -> Any:
    """A builder stream of ``n bigint``: 0 .. total-1 exactly once, whatever the parallelism
    (``total=None``: counts on for ever).

    Crash and restart tests count on it: every number once, no matter how many processors the
    cluster gives it, and a restart continues exactly: from a snapshot, or with
    ``snapshots=False`` from the round records the receiver spooled (the stream then cannot replay
    by itself, as a queue cannot).
    """
    from jetconnect._builders import SourceBuilder

    if total is not None and total < 0:
        raise ValueError(f"counter_stream: total must be >= 0 or None, got {total}")
    if per_fill < 1:
        raise ValueError(f"counter_stream: per_fill must be >= 1, got {per_fill}")

    def fill(state: _Strided, buf: Any) -> None:
        for _ in range(per_fill):
            n = state.first + state.k * state.step
            if total is not None and n >= total:
                return
            buf.add(n)
            state.k += 1

    builder = SourceBuilder.stream("counter", _Strided).fill_buffer_fn(fill).schema("n bigint")
    builder = builder.distributed(local_parallelism)
    if snapshots:
        builder = builder.create_snapshot_fn(lambda s: s.k).restore_snapshot_fn(lambda s, k: setattr(s, "k", k))
    return builder.build()


def paced_stream(rate: int) -> Any:
    """A builder stream of ``n bigint`` at ``rate`` items a second by the clock, from 0 on, one
    processor: most fills find nothing due, as a slow socket's do (write-ahead log tests and
    ``bench/bench_wal.py`` hold the receiver's segment sealing to its bound with it)."""
    from jetconnect._builders import SourceBuilder

    if rate < 1:
        raise ValueError(f"paced_stream: rate must be >= 1, got {rate}")

    def create(ctx: Any) -> dict[str, float]:
        return {"t0": time.monotonic(), "sent": 0}

    def fill(state: dict[str, float], buf: Any) -> None:
        due = int((time.monotonic() - state["t0"]) * rate)
        for n in range(int(state["sent"]), due):
            buf.add(n)
        state["sent"] = max(state["sent"], due)

    return SourceBuilder.stream("paced", create).fill_buffer_fn(fill).schema("n bigint").build()


def recorded_rows(wal_location: str | Path) -> list[dict[str, Any]]:
    """Every row the round records under ``wal_location`` hold (a row carried into the next round
    appears in both records): what a stream that cannot replay has received and made durable."""
    import pyarrow as pa

    rows: list[dict[str, Any]] = []
    for path in sorted(Path(wal_location).rglob("[0-9]*.arrow")):
        with pa.OSFile(str(path)) as handle:
            rows.extend(pa.ipc.open_stream(handle).read_all().to_pylist())
    return rows


def executor_process() -> str:
    """Which Spark process runs the calling Python worker: ``executor <id> (pid <jvm pid>)`` or ``driver``.

    Python workers are forked from a daemon that the executor JVM started, so the JVM is found by
    walking up the process tree (Linux ``/proc``). Tests use it as evidence of where partitions ran.
    """
    pid = os.getpid()
    for _ in range(8):
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
            parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        if "org.apache.spark.executor.CoarseGrainedExecutorBackend" in args:
            executor_id = args[args.index("--executor-id") + 1] if "--executor-id" in args else "?"
            return f"executor {executor_id} (pid {pid})"
        if parent <= 1:
            break
        pid = parent
    return "driver"


# --- crash tests ---------------------------------------------------------------------------------


@dataclass
class PipelineProcess:
    """A pipeline program running in its own process group, so SIGKILL takes the JVM with it."""

    proc: subprocess.Popen[bytes]
    log: Path

    def kill(self) -> None:
        """SIGKILL the whole process group (Python driver and its JVM) and reap it."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=60)

    def wait(self, timeout: float) -> int:
        """Wait for a normal exit; raise with the end of the log if it fails or hangs."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"pipeline did not finish in {timeout} s; log:\n{self.tail()}") from None
        if code != 0:
            raise AssertionError(f"pipeline exited {code}; log:\n{self.tail()}")
        return code

    def running(self) -> bool:
        return self.proc.poll() is None

    def tail(self, chars: int = 6000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""


def start_pipeline(
    script: str | Path, args: Sequence[str], log: str | Path, env: dict[str, str] | None = None
) -> PipelineProcess:
    """Start ``python script *args`` in a new session (process group), output to ``log``."""
    log = Path(log)
    handle = log.open("ab")
    proc = subprocess.Popen(
        [sys.executable, str(script), *args],
        stdout=handle,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )
    handle.close()
    return PipelineProcess(proc, log)


def wait_until(
    predicate: Callable[[], bool],
    timeout: float,
    what: str,
    proc: PipelineProcess | None = None,
    interval: float = 0.05,
) -> None:
    """Poll ``predicate`` every ``interval`` s; fail naming ``what`` (and the pipeline's log) on time-out.

    A predicate that runs a Spark job should use an interval of a second or more: polling Spark
    hard starves the query under test.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc is not None and not proc.running():
            raise AssertionError(f"pipeline exited before {what}; log:\n{proc.tail()}")
        time.sleep(interval)
    log = f"; log:\n{proc.tail()}" if proc is not None else ""
    raise AssertionError(f"timed out after {timeout} s waiting for {what}{log}")


def checkpoint_batches(checkpoint: str | Path, kind: str = "commits") -> list[int]:
    """Batch ids Spark has written to ``checkpoint/<kind>`` (``offsets`` or ``commits``)."""
    folder = Path(checkpoint) / kind
    if not folder.is_dir():
        return []
    return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())


def java_program(sources: Path, classpath: str, workdir: Path) -> list[str]:
    """Compile the ``.java`` files under ``sources`` against ``classpath`` into ``workdir`` and return
    the ``java`` command that runs one of their classes (append the class name and its arguments):
    the other side of an interop test, written as the Java service a user runs would be."""
    javac = shutil.which("javac")
    if javac is None:
        raise RuntimeError("javac is not installed: a JDK (17+) is needed to compile the Java side of this test")
    files = sorted(str(path) for path in sources.rglob("*.java"))
    classes = workdir / "classes"
    classes.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [javac, "--release", "17", "-nowarn", "-d", str(classes), "-cp", classpath, *files],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"javac failed on {sources}:\n{done.stdout}{done.stderr}")
    return [str(Path(javac).with_name("java")), "-cp", f"{classes}{os.pathsep}{classpath}"]


def read_rows(output: Iterable[Any]) -> list[tuple[Any, ...]]:
    """The rows a source's ``read_split``/``read_range`` yields, as tuples, whether it yields rows
    or Arrow batches (a unit test of a source, without Spark)."""
    import pyarrow as pa

    rows: list[tuple[Any, ...]] = []
    for item in output:
        if isinstance(item, (pa.RecordBatch, pa.Table)):
            rows.extend(zip(*(column.to_pylist() for column in item.columns)))
        else:
            rows.append(tuple(item))
    return rows


@contextlib.contextmanager
def spark_conf(spark: SparkSession, name: str, value: str) -> Iterator[None]:
    """Set Spark setting ``name`` to ``value`` for the ``with`` block, then put back what it was
    (unset if it was unset): a test of a setting leaves the shared session as it found it."""
    before = spark.conf.get(name, None)
    spark.conf.set(name, value)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(name)
        else:
            spark.conf.set(name, before)


def _key_needles(key_file: str | Path) -> list[bytes]:
    """What of a private key may leak: its PEM's base64 lines (the whole body, and each full line,
    long enough to be the key's alone) and the DER bytes they encode; a binary key file (a
    keytab) whole, raw and base64-encoded."""
    import base64

    data = Path(key_file).read_bytes()
    if b"-----BEGIN" not in data:  # a binary secret (a Kerberos keytab): itself, and as base64
        return [data, base64.b64encode(data)]
    text = data.decode()
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("-----")]
    body = "".join(lines)
    needles = {body.encode(), base64.b64decode(body)}
    needles |= {line.encode() for line in lines if len(line) >= 40}
    return sorted(needles, key=len, reverse=True)


def _secret_needles(secrets: Iterable[str], private_keys: Iterable[str | Path]) -> list[tuple[str, bytes]]:
    """``(label, bytes)`` to look for: every spelling of each secret (as :func:`jetconnect.api.redact`
    knows them) and every piece of each key; the label names which, never the secret itself."""
    from jetconnect._redaction import secret_forms

    needles: list[tuple[str, bytes]] = []
    for number, secret in enumerate(secrets, 1):
        for form in sorted(secret_forms(secret)):
            needles.append((f"secret #{number} spelled {len(form)} chars", form.encode(errors="surrogatepass")))
    for key in private_keys:
        needles += [(f"private key {Path(key).name}", needle) for needle in _key_needles(key)]
    return needles


def secret_leaks(
    paths: Iterable[str | Path], secrets: Iterable[str], private_keys: Iterable[str | Path] = ()
) -> list[str]:
    """Every file under ``paths`` (folders walked whole: checkpoints, event logs, write-ahead logs,
    captured driver and executor logs) that holds one of ``secrets`` in any spelling a message may
    take (raw, percent-encoded, ``repr``-, JSON-, libpq-, STOMP-escaped) or any piece of the PEM
    files ``private_keys``; one ``"path: what"`` line each, empty when clean. The lines name the
    secret by number, so a failing test does not print it."""
    needles = _secret_needles(list(secrets), list(private_keys))
    leaks = []
    for root in paths:
        root = Path(root)
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            try:
                data = path.read_bytes()
            except OSError:  # a file removed while walking (a temporary one of a running query)
                continue
            found = next((label for label, needle in needles if needle in data), None)
            if found is not None:
                leaks.append(f"{path}: {found}")
    return leaks


def text_leaks(texts: Mapping[str, str], secrets: Iterable[str], private_keys: Iterable[str | Path] = ()) -> list[str]:
    """As :func:`secret_leaks`, for texts in memory (errors, reprs, doctor output) keyed by what they are."""
    needles = _secret_needles(list(secrets), list(private_keys))
    leaks = []
    for what, text in texts.items():
        data = text.encode(errors="surrogatepass")
        found = next((label for label, needle in needles if needle in data), None)
        if found is not None:
            leaks.append(f"{what}: {found}")
    return leaks


def python_blocks(text: str) -> Iterator[tuple[int, list[str], str]]:
    """(line of the opening fence, the block's lines, the paragraph right above it) per ```python block
    of a Markdown text: what the docs checks and the examples tests read of a page."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if re.match(r"^```python\s*$", lines[i]):
            j = i + 1
            while j < len(lines) and not re.match(r"^```\s*$", lines[j]):
                j += 1
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            above: list[str] = []
            while k >= 0 and lines[k].strip() and not lines[k].startswith("```"):
                above.insert(0, lines[k])
                k -= 1
            yield i + 1, lines[i + 1 : j], "\n".join(above)
            i = j
        i += 1


def contains_lines(text: str, lines: list[str]) -> bool:
    """Whether ``lines`` are consecutive lines of ``text`` (trailing spaces aside)."""
    have = [line.rstrip() for line in text.splitlines()]
    want = [line.rstrip() for line in lines]
    return bool(want) and any(have[i : i + len(want)] == want for i in range(len(have) - len(want) + 1))


__all__ = [
    "PipelineProcess",
    "checkpoint_batches",
    "contains_lines",
    "counter_stream",
    "executor_process",
    "paced_stream",
    "python_blocks",
    "read_rows",
    "recorded_rows",
    "secret_leaks",
    "shared_spark_session",
    "spark_conf",
    "spark_builder",
    "start_pipeline",
    "text_leaks",
    "wait_until",
]
