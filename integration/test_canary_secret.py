"""A canary secret against the real PostgreSQL and ActiveMQ: it works, and it shows nowhere.

A role's password (PostgreSQL) and a user's passcode (ActiveMQ) is a canary made of every character that broke redaction somewhere
(``@ # / % ' \\``). Read and write through Spark with it, fail with a wrong one (which contains the
canary, so it shows if the wrong one shows at all), and look for the canary, raw, percent-encoded
or repr-escaped, in everything a user or an operator sees:

- the text, ``repr`` and ``traceback.format_exception`` of every failure and of every exception
  chained to it, explicitly or implicitly (driver-side and executor-side failures: Spark's error
  carries the Python worker's traceback);
- ``repr()`` of every source and sink, and of the :class:`Options` Spark's string options become;
- ``df.explain(True)`` and the query execution's text, for the Python API and the options path;
- the output of ``jetconnect plugins`` run with a canary-bearing store URL in its environment;
- every log record of the test process down to DEBUG (jetconnect, SQLAlchemy, psycopg), and the
  whole stdout/stderr of a separate Spark application (the JVM driver's log with the failed tasks'
  Python worker tracebacks, the driver's Python logging at DEBUG) that reads with the canary and
  fails with the wrong password.

ActiveMQ: scripts/servers/activemq.sh gives the test broker one user, :data:`JMS_USER`, whose
password is the canary (anonymous connections, those of every other test, stay allowed). A queue
is written and streamed back with it, then the sink and the source fail with the wrong one; the
failures, reprs, plans, logs and output are searched as above (the JMS log records at DEBUG).
tests/jms/test_stomp_client_faults.py covers a broker that refuses and quotes the passcode.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import time
import traceback
import uuid
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from jetconnect import sinks, sources
from jetconnect._options import Options

CANARY = "c@n#a/r%y'\\x"
WRONG = "not-" + CANARY
ROLE = "jetconnect_canary_secret"
PORT = int(os.environ.get("JETCONNECT_PG_PORT", "5432"))
JMS_USER = "jetconnect_canary"  # scripts/servers/activemq.sh: its password is CANARY
SOCKETS = Path("/tmp/jetconnect-postgresql/sockets")  # scripts/servers/postgresql.sh: trusted for superuser
ROOT = Path(__file__).resolve().parent.parent


def url_for(password: str) -> str:
    return f"postgresql+psycopg://{ROLE}:{quote_plus(password)}@127.0.0.1:{PORT}/jetconnect"


def spellings() -> list[str]:
    """The canary as a leak would spell it: raw, percent-encoded, repr-, JSON-, libpq-escaped."""
    c = CANARY
    return sorted(
        {
            c,
            quote(c, safe=""),
            quote(c),
            quote_plus(c),
            repr(c)[1:-1],
            json.dumps(c)[1:-1],
            c.replace("\\", "\\\\").replace("'", "\\'"),
            c.replace("'", "''"),
        }
    )


def assert_clean(what: str, text: str) -> None:
    for spelled in spellings():
        at = text.find(spelled)
        assert at < 0, f"the canary spelled {spelled!r} shows in {what}: ...{text[max(0, at - 300) : at + 300]}..."


def everything_shown(error: BaseException) -> str:
    """An error's text, repr and traceback, and those of every exception chained to it, even one a
    traceback would not show (``raise ... from None`` keeps it as ``__context__``)."""
    shown, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        shown += [str(error), repr(error), "".join(traceback.format_exception(error))]
        error = error.__cause__ or error.__context__
    return "\n".join(shown)


@pytest.fixture(scope="module")
def canary_url(server) -> str:
    """A role whose password is the canary, made as superuser over the server script's socket."""
    server("postgresql")
    if not SOCKETS.exists():
        pytest.skip(f"no local socket {SOCKETS}: not the PostgreSQL that scripts/servers/postgresql.sh runs")
    import psycopg
    from psycopg import sql

    with psycopg.connect(host=str(SOCKETS), port=PORT, user="postgres", dbname="jetconnect", autocommit=True) as admin:
        if admin.execute("select 1 from pg_roles where rolname = %s", [ROLE]).fetchone() is None:
            admin.execute(sql.SQL("create role {} login").format(sql.Identifier(ROLE)))
        admin.execute(sql.SQL("alter role {} password {}").format(sql.Identifier(ROLE), sql.Literal(CANARY)))
        admin.execute(sql.SQL("grant create, usage on schema public to {}").format(sql.Identifier(ROLE)))
    return url_for(CANARY)


@pytest.fixture()
def table(canary_url) -> str:
    import sqlalchemy as sa

    name = f"canary_{uuid.uuid4().hex[:8]}"
    engine = sa.create_engine(canary_url)
    with engine.begin() as conn:
        conn.execute(sa.text(f"create table {name} (id bigint, name text)"))
        conn.execute(sa.text(f"insert into {name} select g, 'n' || g from generate_series(1, 40) g"))
    engine.dispose()
    return name


def test_the_canary_works_through_spark_and_shows_nowhere(spark, canary_url, table, capsys, caplog):
    for logger in ("jetconnect", "jetconnect_jdbc", "sqlalchemy", "psycopg"):
        caplog.set_level(logging.DEBUG, logger=logger)
    shown: dict[str, str] = {}
    wrong_url = url_for(WRONG)

    # the right password: the Python API and Spark's options, both read paths, and a write
    source = sources.jdbc(canary_url, table=table)  # the COPY path; the options read below does not copy
    df = source.read(spark)
    assert df.count() == 40
    df.explain(True)
    shown["repr of the source"] = repr(source)
    shown["query execution"] = df._jdf.queryExecution().toString()
    options = {"url": canary_url, "table": table, "use_copy": "false"}
    by_name = spark.read.format("jetconnect.jdbc").options(**options).load()
    assert sorted(r.id for r in by_name.collect()) == list(range(1, 41))
    by_name.explain(True)
    shown["query execution (options)"] = by_name._jdf.queryExecution().toString()
    shown["repr of the Options"] = repr(Options(options, owner="jdbc source"))
    copy = f"{table}_copy"
    sink = sinks.jdbc(canary_url, table=copy)
    sink.write(by_name)
    assert sources.jdbc(canary_url, table=copy).read(spark).count() == 40
    shown["repr of the sink"] = repr(sink)

    # the wrong password: on the driver (the table's columns), on an executor (the rows), through
    # Spark's options, and in the sink (retried, then given up)
    failures = {
        "driver-side read": lambda: sources.jdbc(wrong_url, table=table).read(spark),
        "executor-side read": lambda: (
            sources.jdbc(wrong_url, table=table, use_copy=False, schema="id long, name string").read(spark).collect()
        ),
        "executor-side COPY read": lambda: (
            sources.jdbc(wrong_url, table=table, use_copy=True, schema="id long, name string").read(spark).collect()
        ),
        "options read": lambda: (
            spark.read.format("jetconnect.jdbc")
            .options(**{**options, "url": wrong_url})
            .option("schema", "id long, name string")
            .load()
            .collect()
        ),
        "sink write": lambda: sinks.jdbc(wrong_url, table=copy, retry_deadline=1).write(by_name),
    }
    for what, fail in failures.items():
        with pytest.raises(Exception) as refused:
            fail()
        text = everything_shown(refused.value)
        assert "password authentication failed" in text, f"{what}: {text[-2000:]}"
        shown[f"failure: {what}"] = text
        shown[f"repr of the failing source/sink: {what}"] = repr(sources.jdbc(wrong_url, table=table))

    captured = capsys.readouterr()
    assert "== Physical Plan ==" in captured.out  # explain(True) was captured
    shown["stdout and stderr (explain)"] = captured.out + captured.err
    shown["log records"] = "\n".join(f"{r.name}: {r.getMessage()}" for r in caplog.records)
    for what, text in shown.items():
        assert_clean(what, text)


@pytest.fixture(scope="module")
def activemq(server) -> None:
    """The broker of scripts/servers/activemq.sh, which must know JMS_USER (anonymous stays allowed)."""
    server("activemq")
    from jetconnect_jms.stomp_client import StompClient, StompSettings

    login = StompSettings(user=JMS_USER, password=CANARY, connect_timeout=10)
    try:
        StompClient(login, "canary probe").connect().close()
    except Exception as exc:  # noqa: BLE001 - said as a setup problem, not as the test's failure
        pytest.fail(
            f"the broker refuses {JMS_USER} with the canary: was it started before "
            f"scripts/servers/activemq.sh gave it that user? Restart it (stop, then start): {exc}"
        )


def test_the_canary_works_through_jms_and_shows_nowhere(spark, activemq, tmp_path, capsys, caplog):
    from pyspark.errors import AnalysisException

    from jetconnect.testing import wait_until
    from jetconnect_jms.stomp_client import StompClient, StompSettings

    for logger in ("jetconnect", "jetconnect_jms"):
        caplog.set_level(logging.DEBUG, logger=logger)
    shown: dict[str, str] = {}
    queue = f"canary-{uuid.uuid4().hex[:8]}"
    destination = f"/queue/{queue}"
    right = {"user": JMS_USER, "password": CANARY, "connect_timeout": 10}
    wrong = {"user": JMS_USER, "password": WRONG, "connect_timeout": 3}
    df = spark.createDataFrame([(f"m{i}",) for i in range(40)], "body string").repartition(2)

    def stream(source, name: str):
        return (
            source.read_stream(spark)
            .writeStream.format("memory")
            .queryName(name)
            .option("checkpointLocation", str(tmp_path / f"cp-{name}"))
            .trigger(processingTime="200 milliseconds")
            .start()
        )

    def rows(name: str) -> int:
        time.sleep(1.0)  # each count is a Spark job: polling hard starves the query under test
        try:
            return spark.table(name).count()
        except AnalysisException:
            return 0

    # the right password: write a queue, stream it back
    sink = sinks.jms_queue(queue, **right)
    sink.write(df)
    shown["repr of the sink"] = f"{sink!r} {sink.settings!r}"
    source = sources.jms_queue(queue, wal_location=str(tmp_path / "wal"), **right)
    shown["repr of the source"] = f"{source!r} {source.settings!r} {source.config!r}"
    name = f"canary_{queue[7:]}"
    query = stream(source, name)
    try:

        def arrived() -> bool:
            if not query.isActive:
                raise AssertionError(f"the query stopped before the rows arrived: {query.exception()}")
            return rows(name) >= 40

        wait_until(arrived, 180, f"40 rows from {destination}")
        query.explain(True)
        shown["query execution (stream)"] = query._jsq.streamingQuery().lastExecution().toString()
    finally:
        query.stop()
    assert sorted(r.body for r in spark.table(name).collect()) == sorted(f"m{i}" for i in range(40))
    streamed = source.read_stream(spark)
    streamed.explain(True)
    shown["query execution (streaming DataFrame)"] = streamed._jdf.queryExecution().toString()
    options = {"destination": queue, "user": JMS_USER, "password": WRONG, "connect_timeout": "3"}
    by_name = spark.readStream.format("jetconnect.jms_queue").options(**options).load()
    by_name.explain(True)
    shown["query execution (options)"] = by_name._jdf.queryExecution().toString()
    shown["repr of the Options"] = repr(Options(options, owner="jms_queue sink"))

    # the wrong password: the sink (its tasks), Spark's options path, and the source (its consumer)
    def failing_stream() -> None:
        failing = stream(sources.jms_queue(queue, wal_location=str(tmp_path / "wal-wrong"), **wrong), f"{name}_wrong")
        try:
            failing.awaitTermination(180)
        finally:
            failing.stop()
        raise AssertionError(f"the query with the wrong password did not fail: {failing.exception()}")

    failures = {
        # in this process, so its retries are logged where caplog sees them
        "client connect": lambda: StompClient(StompSettings(**wrong), f"canary client {destination}").connect(),
        "sink write": lambda: sinks.jms_queue(queue, **wrong).write(df),
        "options write": lambda: df.write.format("jetconnect.jms_queue").options(**options).mode("append").save(),
        "source stream": failing_stream,
    }
    for what, fail in failures.items():
        with pytest.raises(Exception) as refused:
            fail()
        text = everything_shown(refused.value)
        for expected in (f"User name [{JMS_USER}] or password is invalid", "127.0.0.1:61613", destination):
            assert expected in text, f"{what}: {expected!r} not in {text[-3000:]}"
        shown[f"failure: {what}"] = text
    failing_sink, failing_source = sinks.jms_queue(queue, **wrong), sources.jms_queue(queue, **wrong)
    shown["repr of the failing sink"] = f"{failing_sink!r} {failing_sink.settings!r}"
    shown["repr of the failing source"] = f"{failing_source!r} {failing_source.settings!r} {failing_source.config!r}"

    captured = capsys.readouterr()
    assert "== Physical Plan ==" in captured.out  # explain(True) was captured
    shown["stdout and stderr"] = captured.out + captured.err
    # a refused login is not retried (issue #46), so the client logs no retry: the failures above
    # carry the broker's answer
    shown["log records"] = "\n".join(f"{r.name}: {r.getMessage()}" for r in caplog.records)
    shown["log records, formatted with their tracebacks"] = caplog.text
    for what, text in shown.items():
        assert_clean(what, text)


def test_the_cli_shows_no_secret_from_its_environment():
    env = {**os.environ, "JETCONNECT_IMAP_STORE": f"hazelcast://:{quote(CANARY, safe='')}@127.0.0.1:1/jetconnect"}
    result = subprocess.run(
        [str(Path(sys.executable).parent / "jetconnect"), "plugins"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 0 and "jdbc" in result.stdout, result.stderr[-2000:]
    assert_clean("jetconnect plugins", result.stdout + result.stderr)


APPLICATION = """
import logging, sys
logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
logging.getLogger("py4j").setLevel(logging.INFO)  # every py4j command at DEBUG: noise, not secrets
from jetconnect import sinks, sources
from jetconnect.testing import spark_builder
import jetconnect

right, wrong, table = sys.argv[1:4]
spark = spark_builder("canary-log").getOrCreate()
spark.sparkContext.setLogLevel("INFO")
jetconnect.register(spark)
df = sources.jdbc(right, table=table, use_copy=False).read(spark)
print("rows", df.count(), flush=True)
df.explain(True)
for fail in (lambda: sources.jdbc(wrong, table=table, schema="id long, name string").read(spark).collect(),
             lambda: sinks.jdbc(wrong, table=table + "_x", retry_deadline=1).write(df)):
    try:
        fail()
    except Exception:
        logging.exception("failed as expected")  # the whole chained traceback, into the log
spark.stop()
print("done", flush=True)
"""


def test_a_spark_applications_whole_log_shows_no_canary(canary_url, table, tmp_path):
    script = tmp_path / "app.py"
    script.write_text(textwrap.dedent(APPLICATION))
    log = tmp_path / "app.log"
    with log.open("wb") as out:
        result = subprocess.run(
            [sys.executable, str(script), canary_url, url_for(WRONG), table],
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=300,
            cwd=ROOT,
        )
    text = log.read_text(errors="replace")
    assert result.returncode == 0 and "rows 40" in text and "done" in text, text[-3000:]
    # the log holds what we look in: the JVM's task failures with the Python worker's traceback,
    # the driver's logged exceptions, SQLAlchemy's and psycopg's debug lines
    for expected in ("WARN TaskSetManager", "PythonException", "failed as expected", "password authentication failed"):
        assert expected in text, f"{expected!r} not in the log:\n{text[-3000:]}"
    assert_clean("the Spark application's log", text)
