"""Helpers for testing connectors the way a user relies on them: through a real SparkSession,
killed with SIGKILL mid-stream and restarted from the checkpoint.

A crash test runs its pipeline as a separate program (so the whole driver, JVM included, can be
killed), waits for a point in the query's life that it can see in the checkpoint folder, kills
the process group, restarts the same program, and then counts what arrived.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

_session: "SparkSession | None" = None


def spark_builder(app_name: str = "jetconnect", master: str = "local[2]") -> Any:
    """A SparkSession builder with the settings jetconnect's tests and demos use."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # tests and demos talk to 127.0.0.1 only
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return (
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
        .config("spark.python.worker.reuse", "true")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
    )


def shared_spark_session() -> "SparkSession":
    """One SparkSession per process with every installed plugin registered (8-12 s to start)."""
    global _session
    if _session is None:
        import jetconnect

        _session = spark_builder("jetconnect-tests").getOrCreate()
        _session.sparkContext.setLogLevel("ERROR")
        jetconnect.register(_session)
    return _session


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


def start_pipeline(script: str | Path, args: Sequence[str], log: str | Path, env: dict[str, str] | None = None) -> PipelineProcess:
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
    predicate: Callable[[], bool], timeout: float, what: str, proc: PipelineProcess | None = None, interval: float = 0.05
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


__all__ = [
    "PipelineProcess",
    "checkpoint_batches",
    "shared_spark_session",
    "spark_builder",
    "start_pipeline",
    "wait_until",
]
