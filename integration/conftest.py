"""Shared fixtures for the integration tests: one SparkSession per run, real servers started once.

A test that needs a server asks for ``server("name")``: ``scripts/servers/NAME.sh start`` is run
once per test run (it installs what is missing, starts the server on 127.0.0.1 and waits until
it answers). Locally a server that cannot start skips its tests; in CI (``CI=true``) it fails them.
``server("name secured")`` runs ``NAME.sh secured start`` (the server's TLS and authentication
mode, beside the plain one), and ``secured_server("name")`` does that and returns what a client
needs of it (``NAME.sh secured env``: ports, users, passwords, CA and client certificates).
"""

from __future__ import annotations

import gc
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "scripts" / "servers"
IN_CI = os.environ.get("CI", "").lower() == "true"

# A Spark Connect client cannot share a process with a classic SparkSession (creating one switches
# the whole process to Connect), so the Connect tests run in a pytest run of their own:
# `JETCONNECT_TEST_PROFILE=connect pytest integration/connect` (scripts/test-connect.sh).
CONNECT_PROFILE = os.environ.get("JETCONNECT_TEST_PROFILE") == "connect"

#: The PySpark version the pinned spark-avro jar (bench/spark-avro/pom.xml) is built for: on it, the
#: jar must be on the session (scripts/test-spark-oldest.sh puts it there).
SPARK_AVRO_VERSION = re.search(  # type: ignore[union-attr]
    r"spark-avro_2.13</artifactId>\s*<version>([^<]+)<", (ROOT / "bench" / "spark-avro" / "pom.xml").read_text()
).group(1)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """In the Connect profile only ``connect/`` is collected; in every other run all but it."""
    if collection_path.is_dir() and collection_path.parent == Path(__file__).parent:
        if (collection_path.name == "connect") != CONNECT_PROFILE:
            return True
    return None


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """The one SparkSession of this test run (local[2]), with every installed plugin registered."""
    from jetconnect.testing import shared_spark_session

    session = shared_spark_session()
    yield session
    session.stop()


_started: dict[str, str | None] = {}
_already_running: set[str] = set()


def _script_and_mode(name: str) -> tuple[Path, list[str]]:
    """``"postgresql secured"`` -> (postgresql.sh, ["secured"]): the verbs before start/status/stop."""
    script, *mode = name.split()
    return SERVERS / f"{script}.sh", mode


def _start(name: str) -> str | None:
    """Start server ``name``; return None when up, or the reason it is not."""
    if name not in _started:
        script, mode = _script_and_mode(name)
        if not script.exists():
            _started[name] = f"no script {script}"
        else:
            # a server that was already up (another run, a developer's) is used but not stopped
            if subprocess.run(["bash", str(script), *mode, "status"], capture_output=True, timeout=60).returncode == 0:
                _already_running.add(name)
            result = subprocess.run(["bash", str(script), *mode, "start"], capture_output=True, text=True, timeout=900)
            _started[name] = (
                None
                if result.returncode == 0
                else f"{script.name} start exited {result.returncode}:\n{_head_and_tail(result.stdout)}\n{_head_and_tail(result.stderr)}"
            )
    return _started[name]


def _head_and_tail(text: str, keep: int = 3000) -> str:
    """``text`` cut to its start and end: a start script says *why* it failed first (fail_start),
    then shows the end of the server's logs, which alone may be lines from an older run."""
    if len(text) <= 2 * keep:
        return text
    return f"{text[:keep]}\n[... {len(text) - 2 * keep} characters left out ...]\n{text[-keep:]}"


@pytest.fixture(scope="session")
def server() -> Callable[[str], None]:
    """``server("postgresql")`` starts that server once; skip locally, fail in CI, if it cannot."""

    def need(name: str) -> None:
        reason = _start(name)
        if reason is not None:
            if IN_CI:
                pytest.fail(f"server '{name}' could not start in CI: {reason}")
            pytest.skip(f"server '{name}' could not start: {reason}")

    return need


@pytest.fixture(scope="session")
def secured_server(server: Callable[[str], None]) -> Callable[[str], dict[str, Any]]:
    """``secured_server("postgresql")``: that server's secured mode, started once, and what a client
    needs of it as the script prints it (``NAME.sh secured env``, JSON)."""
    import json

    def need(name: str) -> dict[str, Any]:
        server(f"{name} secured")
        script, _ = _script_and_mode(name)
        result = subprocess.run(["bash", str(script), "secured", "env"], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, f"{script.name} secured env exited {result.returncode}: {result.stderr}"
        return json.loads(result.stdout)

    return need


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # Kafka clients still alive here would log every reconnect once their broker stops.
    for pool in ("jetconnect_kafka.producers", "jetconnect_kafka.consumers"):
        if pool in sys.modules:
            sys.modules[pool].drop_idle()
    gc.collect()
    # Servers are stopped at the end of the run so a fresh CI machine leaves nothing behind.
    for name, reason in _started.items():
        if reason is None and name not in _already_running and os.environ.get("JETCONNECT_KEEP_SERVERS") != "1":
            script, mode = _script_and_mode(name)
            subprocess.run(["bash", str(script), *mode, "stop"], capture_output=True, timeout=120)


@pytest.fixture
def need_spark_avro(spark: Any) -> None:
    """Skip (or, on the PySpark spark-avro's jar is built for, fail in CI) when the session lacks
    Spark's Avro connector, which the hand-offs of Avro reads and writes need."""
    import pyspark

    from jetconnect.files_family import spark_avro_refusal

    refusal = spark_avro_refusal(spark)
    if refusal is not None:
        if IN_CI and pyspark.__version__ == SPARK_AVRO_VERSION:
            pytest.fail(
                f"PySpark {pyspark.__version__} in CI must have spark-avro (scripts/test-spark-oldest.sh): {refusal}"
            )
        pytest.skip(refusal)
