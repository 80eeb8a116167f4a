"""The JDBC connector against a PostgreSQL that accepts only TLS and scram-sha-256 (or a client
certificate), as production servers are set up: ``scripts/servers/postgresql.sh secured``.

The happy path: the source (COPY through DuckDB and the cursor) and the sink, batch and
streaming with a restart from the checkpoint, Python and Spark's string options, with
``sslmode=verify-full`` and a password holding ``' " @ %``. Off it: a wrong password, an unknown
user, an untrusted, expired or misnamed server certificate, a client certificate the server does
not trust, a plaintext client: each fails at once (10 s direct, 30 s through a Spark job) (never retried for ``retry_deadline``)
saying which, the server logs a handful of failed logins, and what was committed stays.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
import sqlalchemy as sa

from jetconnect import sinks, sources
from jetconnect.testing import REFUSAL_PROMPT_S as PROMPT
from jetconnect.testing import REFUSAL_THROUGH_SPARK_S as SPARK_JOB
from jetconnect.testing import checkpoint_batches, text_leaks, wait_until

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pg(secured_server) -> dict[str, Any]:
    return secured_server("postgresql")


def url_of(
    pg: dict[str, Any],
    *,
    user: str | None = None,
    password: str | None = "default",
    host: str | None = None,
    port: int | None = None,
    **query: str | None,
) -> str:
    """A SQLAlchemy URL of the secured server: ``verify-full`` against the script's CA unless the
    query options say otherwise (None drops one)."""
    password = pg["password"] if password == "default" else password
    auth = quote_plus(user or pg["user"]) + (f":{quote_plus(password)}" if password is not None else "")
    options = {"sslmode": "verify-full", "sslrootcert": pg["ca"], **query}
    text = "&".join(f"{k}={quote(v, safe='/')}" for k, v in options.items() if v is not None)
    return f"postgresql+psycopg://{auth}@{host or pg['host']}:{port or pg['port']}/{pg['database']}?{text}"


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def fill(url: str, table: str, rows: int) -> None:
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text(f"create table {table} (id bigint primary key, name text)"))
        conn.execute(sa.text(f"insert into {table} select g, 'n''%@\"' || g from generate_series(1, {rows}) g"))
    engine.dispose()


def counts(url: str, table: str) -> tuple[int, int]:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        found = conn.execute(sa.text(f"select count(*), count(distinct id) from {table}")).one()
    engine.dispose()
    return found[0], found[1]


def test_the_session_is_encrypted_and_plaintext_has_no_way_in(pg):
    engine = sa.create_engine(url_of(pg))
    with engine.connect() as conn:
        ssl, version = conn.execute(sa.text("select ssl, version from pg_stat_ssl where pid = pg_backend_pid()")).one()
    engine.dispose()
    assert ssl and version.startswith("TLS")
    hba = Path(pg["ca"]).parents[1] / "main" / "data" / "pg_hba.conf"
    rules = [line.split()[0] for line in hba.read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert set(rules) == {"local", "hostssl"}, rules  # no `host` line: TCP without TLS is refused


@pytest.mark.parametrize("use_copy", [True, False], ids=["copy", "cursor"])
def test_batch_read_and_write_with_verify_full(spark, pg, use_copy):
    url = url_of(pg)
    table = unique("tls_src")
    fill(url, table, 500)
    df = sources.jdbc(url, table=table, use_copy=use_copy, partition_column="id", num_partitions=3).read(spark)
    assert sorted(r.id for r in df.collect()) == list(range(1, 501))
    target = unique("tls_dst")
    sinks.jdbc(url, table=target).write(df)
    assert counts(url, target) == (500, 500)
    # Spark's string options, as SQL and notebooks give them
    by_name = (
        spark.read.format("jetconnect.jdbc")
        .option("url", url)
        .option("table", target)
        .option("use_copy", str(use_copy).lower())
        .load()
    )
    assert by_name.count() == 500
    copied = unique("tls_opts")
    by_name.write.format("jetconnect.jdbc").option("url", url).option("table", copied).mode("append").save()
    assert counts(url, copied) == (500, 500)


def test_a_client_certificate_logs_in_without_a_password(spark, pg):
    url = url_of(pg, user=pg["cert_user"], password=None, sslcert=pg["client_cert"], sslkey=pg["client_key"])
    target = unique("tls_cert")
    sinks.jdbc(url, table=target).write(spark.range(0, 100).selectExpr("id", "cast(id as string) as name"))
    assert sources.jdbc(url, table=target).read(spark).count() == 100
    assert sources.jdbc(url, table=target, use_copy=False).read(spark).count() == 100


def test_a_stream_through_the_secured_server_restarts_from_its_checkpoint(spark, pg, tmp_path):
    """PostgreSQL (TLS) -> PostgreSQL (TLS), exactly once: stopped after some batches, started
    again from the checkpoint with a wrong password (fails at once, writes nothing), then with the
    right one: every row once."""
    url = url_of(pg)
    source, target = unique("tls_stream_src"), unique("tls_stream_dst")
    fill(url, source, 300)
    checkpoint = str(tmp_path / "checkpoint")

    def start(sink_url: str) -> Any:
        stream = sources.jdbc(url, table=source, offset_column="id").read_stream(spark, max_records_per_batch=40)
        return sinks.jdbc(sink_url, table=target).write_stream(
            stream, checkpoint_location=checkpoint, trigger={"processingTime": "200 milliseconds"}
        )

    query = start(url)
    try:
        wait_until(lambda: len(checkpoint_batches(checkpoint)) >= 2, 180, "two committed micro-batches")
    finally:
        query.stop()
    committed = counts(url, target)
    assert 0 < committed[0] < 300 and committed[0] == committed[1], committed

    began = time.monotonic()
    failing = start(url_of(pg, password="not-" + pg["password"]))
    try:
        failing.awaitTermination(60)
    except Exception:  # noqa: BLE001 - the query's own exception is asserted below
        pass
    finally:
        failing.stop()
    took = time.monotonic() - began
    assert failing.exception() is not None, "the stream with a wrong password did not fail"
    assert "authentication refused" in str(failing.exception())
    assert took < 30, f"the failing stream took {took:.1f} s (a Spark query's start is most of it)"
    assert counts(url, target) == committed  # nothing committed was lost, nothing written twice

    query = start(url)
    try:
        wait_until(lambda: query.exception() is not None or counts(url, target)[0] >= 300, 240, "all 300 rows")
        assert query.exception() is None
    finally:
        query.stop()
    assert counts(url, target) == (300, 300)


# --- off the happy path ----------------------------------------------------------------------------

#: case -> (URL options, the kind of failure the error must name, what the driver's words say)
REFUSALS: dict[str, tuple[dict[str, Any], str, str]] = {
    "wrong-password": (
        {"password": "not-the-password'\"@%"},
        "authentication refused",
        "password authentication failed",
    ),
    "unknown-user": ({"user": "nobody_here"}, "authentication refused", "password authentication failed"),
    "untrusted-server-certificate": (
        {"sslrootcert": "untrusted_ca"},
        "certificate not trusted",
        "certificate verify failed",
    ),
    "hostname-mismatch": ({"host": "address"}, "certificate not trusted", "does not match host name"),
    "expired-server-certificate": ({"port": "expired_port"}, "certificate not trusted", "certificate verify failed"),
    "untrusted-client-certificate": (
        {"user": "cert_user", "password": None, "sslcert": "untrusted_client_cert", "sslkey": "untrusted_client_key"},
        "certificate not trusted",
        "unknown ca",
    ),
    "plaintext-client": ({"sslmode": "disable", "sslrootcert": None}, "wrong protocol", "no encryption"),
}


def refused_url(pg: dict[str, Any], case: str) -> str:
    """The URL of ``case``: values naming a key of the server's description are taken from it."""
    options = {k: (pg[v] if isinstance(v, str) and v in pg else v) for k, v in REFUSALS[case][0].items()}
    return url_of(pg, **options)


def failed_logins(pg: dict[str, Any]) -> int:
    """How many connections the secured server refused so far (its log, log_connections on)."""
    log = Path(pg["ca"]).parents[1] / "main" / "server.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    return len(re.findall(r"FATAL:|could not accept SSL connection|SSL error", text))


def timed_failure(fail: Callable[[], Any]) -> tuple[BaseException, float]:
    began = time.monotonic()
    with pytest.raises(Exception) as raised:
        fail()
    return raised.value, time.monotonic() - began


@pytest.mark.parametrize("case", list(REFUSALS))
def test_a_refused_connection_fails_at_once_saying_why(spark, pg, case):
    """Each path a connection is made on: the driver (schema), the tasks (cursor and COPY reads,
    given a schema so the driver does not connect first), the sink's tasks and its check. With the
    default retry_deadline (60 s), each fails at once (10 s direct, 30 s through a Spark job) naming the kind of failure."""
    url = refused_url(pg, case)
    kind, words = REFUSALS[case][1:]
    good = url_of(pg)
    table = unique("tls_refused")
    fill(good, table, 20)
    before = failed_logins(pg)
    schema = "id long, name string"
    paths: dict[str, tuple[Callable[[], Any], float]] = {
        "driver": (lambda: sources.jdbc(url, table=table).schema(), PROMPT),
        "cursor read": (
            lambda: sources.jdbc(url, table=table, schema=schema, use_copy=False).read(spark).collect(),
            SPARK_JOB,
        ),
        "COPY read": (lambda: sources.jdbc(url, table=table, schema=schema).read(spark).collect(), SPARK_JOB),
        "options read": (
            lambda: spark.read.format("jetconnect.jdbc").option("url", url).option("table", table).load().collect(),
            PROMPT,  # fails on the driver, reading the table's columns
        ),
        "sink write": (
            lambda: sinks.jdbc(url, table=unique("tls_never")).write(spark.range(5).selectExpr("id", "'x' as name")),
            PROMPT,  # fails on the driver, creating the table
        ),
        "sink check_connection": (lambda: sinks.jdbc(url, table="unused").check_connection(), PROMPT),
    }
    shown = {}
    for what, (fail, within) in paths.items():
        error, took = timed_failure(fail)
        text = str(error)
        assert took < within, f"{case}, {what}: failed after {took:.1f} s"
        assert kind in text and words in text.lower(), f"{case}, {what}: {text[-1500:]}"
        shown[f"{what}: error"] = text
    # One attempt per connection made (a few per Spark job), not a retry loop's hundreds.
    assert failed_logins(pg) - before <= 20, f"{failed_logins(pg) - before} refused connections for {len(paths)} tries"
    assert counts(good, table) == (20, 20)
    secrets = [pg["password"], "not-the-password'\"@%"]
    assert not text_leaks(shown, secrets, pg["private_keys"])


def test_a_server_that_is_down_is_still_retried(pg):
    """Only a server that does not answer is worth waiting for (a restart): retry_deadline holds."""
    url = url_of(pg, port=1)
    error, took = timed_failure(lambda: sources.jdbc(url, table="t", retry_deadline=2).schema())
    assert took >= 2 and "not reachable" in str(error) and "failed" in str(error), str(error)


# --- jetconnect doctor ------------------------------------------------------------------------------


def doctor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jetconnect.cli", "doctor", "--skip-spark", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_doctor_checks_the_sinks_login_and_says_what_it_checked(pg):
    result = doctor("--sink", "jdbc", "--option", f"url={url_of(pg)}", "--option", "table=unused")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "reachable, TLSv1.3 handshake, authenticated" in result.stdout, result.stdout
    assert not text_leaks({"doctor": result.stdout + result.stderr}, [pg["password"]])


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("wrong-password", "authentication refused"),
        ("untrusted-server-certificate", "certificate not trusted"),
        ("hostname-mismatch", "certificate not trusted"),
        ("plaintext-client", "wrong protocol"),
        ("down", "not reachable"),
    ],
)
def test_doctor_says_why_the_sink_cannot_connect(pg, case, said):
    url = url_of(pg, port=1) if case == "down" else refused_url(pg, case)
    for kind in ("--sink", "--source"):
        options = ["--option", f"url={url}", "--option", "table=unused", "--option", "retry_deadline=1"]
        result = doctor(kind, "jdbc", *options)
        assert result.returncode == 1, result.stdout
        failed = [line for line in result.stdout.splitlines() if line.startswith("[FAIL]")]
        assert failed and said in failed[0], result.stdout
        assert not text_leaks({"doctor": result.stdout + result.stderr}, [pg["password"], "not-the-password'\"@%"])
