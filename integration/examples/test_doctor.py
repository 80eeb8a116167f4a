"""``jetconnect doctor`` run as a user runs it, against the test PostgreSQL
(scripts/servers/postgresql.sh): a local session, the workers' imports, the settings and a jdbc
source that answers; then a wrong password, which fails and shows nowhere. The parts that need no
server are in tests/core/test_doctor.py."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from urllib.parse import quote, quote_plus

import pytest

USER, HOST = "jetconnect", "127.0.0.1:5432/jetconnect"
PASSWORD = "pg-Secret-7f3a"  # set by scripts/servers/postgresql.sh
POSTGRES = os.environ.get("JETCONNECT_PG_URL", f"postgresql+psycopg://{USER}:{PASSWORD}@{HOST}")
WRONG = "not-c@n#a/r%y'\\x"


def doctor(*args: str) -> subprocess.CompletedProcess[str]:
    # PYSPARK_PYTHON: the fix the doctor itself asks for when the workers would run another Python
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    return subprocess.run(
        [sys.executable, "-m", "jetconnect.cli", "doctor", *args], capture_output=True, text=True, timeout=300, env=env
    )


@pytest.fixture
def table(server):  # type: ignore[no-untyped-def]
    import sqlalchemy

    server("postgresql")
    name = f"doctor_{uuid.uuid4().hex[:8]}"
    engine = sqlalchemy.create_engine(POSTGRES)
    with engine.begin() as conn:
        conn.exec_driver_sql(f"create table {name} (id bigint primary key, note text)")
        conn.exec_driver_sql(f"insert into {name} values (1, 'one'), (2, 'two')")
    yield name
    with engine.begin() as conn:
        conn.exec_driver_sql(f"drop table {name}")
    engine.dispose()


def test_doctor_passes_with_a_jdbc_source_that_answers(table: str) -> None:
    result = doctor("--source", "jdbc", "--option", f"url={POSTGRES}", "--option", f"table={table}")
    out = result.stdout
    assert result.returncode == 0, out + result.stderr[-3000:]
    assert "[ok] Spark session (local[2])" in out
    assert f"[ok] workers' Python: {sys.executable}" in out
    assert "[ok] plugin jdbc on the workers: jetconnect-jdbc" in out
    assert "spark.python.unix.domain.socket.enabled" in out
    assert "[ok] source jdbc: schema(): struct<id:bigint,note:string>" in out
    assert "[ok] source jdbc: splits(): 1 split(s)" in out
    assert PASSWORD not in out + result.stderr
    assert out.rstrip().endswith("jetconnect doctor: all checks passed")


def test_doctor_fails_on_a_wrong_password_and_never_shows_it(table: str) -> None:
    url = f"postgresql+psycopg://{USER}:{quote_plus(WRONG)}@{HOST}"
    # the session's checks are the previous test's: this one is about the connector's answer
    result = doctor("--skip-spark", "--source", "jdbc", "--option", f"url={url}", "--option", f"table={table}")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "[FAIL] source jdbc: schema():" in result.stdout and "password authentication failed" in result.stdout
    for spelling in (WRONG, quote(WRONG, safe=""), quote_plus(WRONG), repr(WRONG)[1:-1], "c@n#a"):
        assert spelling not in output, output
