"""The JDBC connector as a hostile user meets it, against real PostgreSQL and SQLite.

Each test is the regression test of a defect that lost, re-read or corrupted data without a word,
or showed a password: a duplicate key taken for a replay, an offset column changed between
restarts, a ``%`` rewritten on the COPY path, a password quoted in a connection error, and a
partition held whole in memory.
"""

from __future__ import annotations

import os
import threading
import traceback
import uuid
from pathlib import Path
from urllib.parse import quote, quote_plus

import pyarrow as pa
import pytest
import sqlalchemy as sa
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jetconnect import sinks, sources
from jetconnect._connector import WriteContext

PASSWORD = "pg-Secret-7f3a"  # set by scripts/servers/postgresql.sh
POSTGRES = os.environ.get("JETCONNECT_PG_URL", f"postgresql+psycopg://jetconnect:{PASSWORD}@127.0.0.1:5432/jetconnect")
#: The server script's cluster trusts local socket connections: how a test becomes superuser.
SOCKETS = Path("/tmp/jetconnect-postgresql/sockets")
PORT = int(os.environ.get("JETCONNECT_PG_PORT", "5432"))

CANARY_ROLE = "jetconnect_canary"
CANARY = "p'a\\s@s#w/o%rd"  # every character that broke redaction somewhere
WRONG = "q\"u'o\\t@e#/%x"
SCHEMA = T.StructType([T.StructField("id", T.LongType()), T.StructField("name", T.StringType())])


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def pg_url(role: str, password: str) -> str:
    return f"postgresql+psycopg://{role}:{quote_plus(password)}@127.0.0.1:{PORT}/jetconnect"


def execute(url: str, *statements: str, params: list[dict] | None = None) -> None:
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        for statement in statements:
            conn.execute(sa.text(statement), params or {})
    engine.dispose()


def scalar_rows(url: str, query: str) -> list:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        found = [tuple(r) for r in conn.execute(sa.text(query))]
    engine.dispose()
    return found


def ctx(batch_id: int, query_id: str, partition: int = 0) -> WriteContext:
    return WriteContext(partition_id=partition, attempt=0, batch_id=batch_id, query_id=query_id, schema=SCHEMA)


def batch(ids, names=None) -> pa.RecordBatch:
    names = names if names is not None else [f"n{i}" for i in ids]
    return pa.record_batch({"id": pa.array(ids, pa.int64()), "name": pa.array(names, pa.string())})


@pytest.fixture()
def postgresql(server):
    server("postgresql")
    return POSTGRES


# --- 1. a real duplicate key is a failure, never "already written" ------------------------------


def test_a_duplicate_key_fails_the_stream_naming_the_table_and_a_rerun_writes_every_row_once(
    spark, postgresql, tmp_path
):
    source_url = f"sqlite:///{tmp_path / 'events.sqlite'}"
    execute(source_url, "create table events (id integer primary key, name text)")
    execute(
        source_url, "insert into events values (:id, :name)", params=[{"id": i, "name": f"e{i}"} for i in range(1, 31)]
    )
    # The target's name contains the progress table's, which the sink once took for a replay.
    target = unique("jetconnect_progress_orders")
    execute(
        postgresql,
        f"create table {target} (id bigint primary key, name text)",
        f"insert into {target} values (7, 'already here')",
    )

    def run() -> object:
        stream = sources.jdbc(source_url, table="events", offset_column="id").read_stream(
            spark, max_records_per_batch=30
        )
        query = sinks.jdbc(postgresql, table=target, key_columns=["id"]).write_stream(
            stream, checkpoint_location=str(tmp_path / "checkpoint"), trigger={"availableNow": True}
        )
        try:
            query.awaitTermination(180)
        except Exception:  # the failure is read from query.exception() below
            pass
        return query.exception()

    failure = run()
    assert failure is not None, "a duplicate key was taken for an already-written batch"
    message = str(failure)
    assert f"writing table '{target}'" in message and "(id=7)" in message, message[-3000:]
    assert scalar_rows(postgresql, f"select id from {target}") == [(7,)], "the failed batch left rows behind"
    execute(postgresql, f"delete from {target} where id = 7")
    assert run() is None
    assert scalar_rows(postgresql, f"select count(*), count(distinct id), min(id), max(id) from {target}") == [
        (30, 30, 1, 30)
    ]


@pytest.mark.parametrize("key_columns", [None, ["id"]], ids=["progress-row-conflict", "data-row-conflict"])
def test_an_attempt_that_lost_the_race_to_a_committed_one_is_skipped_by_the_progress_table(postgresql, key_columns):
    """Two attempts of one partition: the second waits on the first's uncommitted rows, then finds
    the first's progress row and writes nothing (the rows are there exactly once)."""
    target = unique("raced")
    sink = sinks.jdbc(postgresql, table=target, key_columns=key_columns)
    sink.check_schema(SCHEMA)
    query_id = unique("q")
    engine = sa.create_engine(postgresql)
    first = engine.connect()
    first.begin()  # the first attempt: rows and progress row written, not yet committed
    first.execute(sa.text(f"insert into {target} select g, 'first' from generate_series(1, 100) g"))
    first.execute(
        sa.text(
            "insert into jetconnect_progress (query_id, batch_id, partition_id, target, row_count) values (:q, 3, 0, :t, 100)"
        ),
        {"q": query_id, "t": target},
    )
    outcome: dict = {}
    second = threading.Thread(
        target=lambda: outcome.update(result=sink.write_partition(iter([batch(list(range(1, 101)))]), ctx(3, query_id)))
    )
    second.start()
    second.join(1.5)
    assert second.is_alive(), "the second attempt did not wait for the first one's rows"
    first.commit()
    first.close()
    second.join(60)
    assert outcome["result"].skipped
    assert scalar_rows(postgresql, f"select count(*), min(name), max(name) from {target}") == [(100, "first", "first")]
    engine.dispose()


# --- 2. an offset checkpointed for one column is not read as another's ---------------------------


def test_changing_offset_column_between_restarts_fails_naming_both_columns(spark, tmp_path):
    source_url = f"sqlite:///{tmp_path / 'events.sqlite'}"
    target_url = f"sqlite:///{tmp_path / 'copy.sqlite'}"
    execute(source_url, "create table events (id integer primary key, seq integer, name text)")
    execute(
        source_url,
        "insert into events values (:id, :seq, 'e')",
        params=[{"id": i, "seq": 1000 + i} for i in range(1, 21)],
    )

    def run(offset_column: str):
        stream = sources.jdbc(source_url, table="events", offset_column=offset_column).read_stream(
            spark, max_records_per_batch=8
        )
        query = sinks.jdbc(target_url, table="copied").write_stream(
            stream.select("id", "seq"), checkpoint_location=str(tmp_path / "checkpoint"), trigger={"availableNow": True}
        )
        try:
            query.awaitTermination(120)
        except Exception:
            pass
        return query.exception()

    assert run("id") is None
    failure = run("seq")
    assert failure is not None, "the changed offset column re-read the table"
    message = str(failure)
    assert "OffsetError" in message and "is for column 'id', but option 'offset_column' is now 'seq'" in message, (
        message[-3000:]
    )
    assert scalar_rows(target_url, "select count(*), count(distinct id) from copied") == [(20, 20)]


# --- 3. the user's SQL reaches PostgreSQL as written on the COPY path ----------------------------

TRICKY_NAMES = ["abc", "a%b", "a%%b", "%s", "%(id)s", "a\\b", "it's", "a :b", "x::y", "100%"]


def test_percent_signs_in_queries_and_pushed_filters_reach_postgresql_unchanged(spark, postgresql):
    table = unique("percent")
    execute(postgresql, f"create table {table} (id int, name text)")
    execute(
        postgresql,
        f"insert into {table} values (:id, :name)",
        params=[{"id": i, "name": n} for i, n in enumerate(TRICKY_NAMES)],
    )
    ids = {name: i for i, name in enumerate(TRICKY_NAMES)}
    queries = {
        f"select * from {table} where name like 'a%'": ["abc", "a%b", "a%%b", "a\\b", "a :b"],
        f"select * from {table} where name = 'a%%b' or name = '%s' or name = '100%'": ["a%%b", "%s", "100%"],
        f"select * from {table} where name in ('%(id)s', 'a :b', 'x::y') and id::text like '%'": [
            "%(id)s",
            "a :b",
            "x::y",
        ],
        f"select * from {table} where name like 'a\\%b' escape '\\'": ["a%b"],
    }
    for use_copy in (True, False):
        # the source's own contract first (many cases, no Spark job each), then through Spark
        for query, expected in queries.items():
            got = read_ids(sources.jdbc(postgresql, query=query, use_copy=use_copy))
            assert got == sorted(ids[n] for n in expected), (query, use_copy)
        for name in TRICKY_NAMES:
            source = sources.jdbc(postgresql, table=table, use_copy=use_copy)
            assert source.push_filters(_filters(EqualTo=("name", name))) == []
            assert read_ids(source) == [ids[name]], (name, use_copy)
        source = sources.jdbc(postgresql, table=table, use_copy=use_copy)
        assert source.push_filters(_filters(In=("name", ("a%b", "%s", "it's")))) == []
        assert read_ids(source) == sorted(ids[n] for n in ("a%b", "%s", "it's"))
        df = sources.jdbc(postgresql, table=table, use_copy=use_copy).read(spark)
        assert [r.id for r in df.filter(F.col("name") == "a%b").collect()] == [ids["a%b"]]
        like = sources.jdbc(
            postgresql, query=f"select * from {table} where name like '%\\%%' escape '\\'", use_copy=use_copy
        )
        assert sorted(r.id for r in like.read(spark).collect()) == sorted(i for n, i in ids.items() if "%" in n)


def read_ids(source) -> list[int]:
    """The ids a source reads, through its splits as Spark's tasks read them."""
    return sorted(row["id"] for split in source.splits() for b in source.read_split(split) for row in b.to_pylist())


def _filters(**spec) -> list:
    import pyspark.sql.datasource as ds

    return [getattr(ds, kind)((column,), value) for kind, (column, value) in spec.items()]


# --- 4. no password in any message, repr or chained exception ------------------------------------


@pytest.fixture()
def canary_url(postgresql):
    """A role whose password holds every character that broke redaction, made as superuser over
    the server script's local socket."""
    if not SOCKETS.exists():
        pytest.skip(
            f"no local socket {SOCKETS}: the PostgreSQL server is not the one scripts/servers/postgresql.sh runs"
        )
    import psycopg
    from psycopg import sql

    with psycopg.connect(host=str(SOCKETS), port=PORT, user="postgres", dbname="jetconnect", autocommit=True) as admin:
        if admin.execute("select 1 from pg_roles where rolname = %s", [CANARY_ROLE]).fetchone() is None:
            admin.execute(sql.SQL("create role {} login").format(sql.Identifier(CANARY_ROLE)))
        admin.execute(sql.SQL("alter role {} password {}").format(sql.Identifier(CANARY_ROLE), sql.Literal(CANARY)))
        admin.execute(sql.SQL("grant create, usage on schema public to {}").format(sql.Identifier(CANARY_ROLE)))
    return pg_url(CANARY_ROLE, CANARY)


def spellings(password: str) -> list[str]:
    """How a password may be quoted: as is, URL-encoded, libpq-quoted, SQL-quoted, repr'd."""
    libpq = password.replace("\\", "\\\\").replace("'", "\\'")
    return [password, quote_plus(password), quote(password), libpq, password.replace("'", "''"), repr(password)[1:-1]]


def assert_no_password(text: str) -> None:
    for password in (CANARY, WRONG):
        for spelled in spellings(password):
            assert spelled not in text, f"password spelled {spelled!r} found in:\n{text[-3000:]}"


def everything_shown(error: BaseException) -> str:
    """An error's text, repr and traceback, and those of every exception chained to it, even one
    a traceback would not show (``raise ... from None`` keeps it as ``__context__``)."""
    shown, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        shown += [str(error), repr(error), "".join(traceback.format_exception(error))]
        error = error.__cause__ or error.__context__
    return "\n".join(shown)


def test_a_password_full_of_quotes_connects_and_never_shows(spark, canary_url, capsys):
    table, copied = unique("canary"), unique("canary_copy")
    execute(
        POSTGRES,
        f"create table {table} (id bigint, name text)",
        f"insert into {table} select g, 'n' || g from generate_series(1, 50) g",
    )
    execute(POSTGRES, f"grant select on {table} to {CANARY_ROLE}")
    wrong_url = pg_url(CANARY_ROLE, WRONG)
    for use_copy in (True, False):
        source = sources.jdbc(canary_url, table=table, use_copy=use_copy)
        df = source.read(spark)
        assert df.count() == 50
        df.explain(True)
        assert_no_password(repr(source) + capsys.readouterr().out)
        # the wrong password: on the driver (the table's columns) and on an executor (the rows)
        for failing in (
            lambda: sources.jdbc(wrong_url, table=table, use_copy=use_copy).read(spark),
            lambda: (
                sources.jdbc(wrong_url, table=table, use_copy=use_copy, schema="id long, name string")
                .read(spark)
                .collect()
            ),
            lambda: (
                spark.read.format("jetconnect.jdbc")
                .option("url", wrong_url)
                .option("table", table)
                .option("use_copy", str(use_copy).lower())
                .option("schema", "id long, name string")
                .load()
                .collect()
            ),
        ):
            with pytest.raises(Exception) as refused:
                failing()
            shown = everything_shown(refused.value)
            assert "password authentication failed" in shown, shown[-3000:]
            assert_no_password(shown)
    sink = sinks.jdbc(canary_url, table=copied)
    sink.write(df)
    assert scalar_rows(canary_url, f"select count(*) from {copied}") == [(50,)]
    assert_no_password(repr(sink))
    with pytest.raises(Exception) as refused:
        sinks.jdbc(wrong_url, table=copied, retry_deadline=1).write(df)
    shown = everything_shown(refused.value)
    assert "password authentication failed" in shown, shown[-3000:]
    assert_no_password(shown)


# --- 5. a partition is streamed, not held, and still written exactly once ------------------------


def test_a_partition_far_larger_than_a_chunk_survives_a_killed_connection_written_exactly_once(postgresql):
    target = unique("chunked")
    chunk, chunks = 1000, 200  # 200,000 rows of ~100 bytes in 200 COPY chunks, one transaction
    sink = sinks.jdbc(postgresql, table=target, batch_size=chunk)
    sink.check_schema(SCHEMA)
    watcher = sa.create_engine(postgresql)
    seen: dict[str, list] = {"visible": [], "held": [], "killed": []}

    def partition():
        base = pa.total_allocated_bytes()
        for k in range(chunks):
            ids = list(range(k * chunk, (k + 1) * chunk))
            yield batch(ids, [f"{i:0100d}" for i in ids])
            seen["held"].append(pa.total_allocated_bytes() - base)
            if k == chunks // 2 and not seen["killed"]:
                with watcher.begin() as conn:
                    # nothing is visible before the transaction ends with the last chunk
                    seen["visible"].append(conn.execute(sa.text(f"select count(*) from {target}")).scalar())
                    seen["killed"] = (
                        conn.execute(
                            sa.text(
                                "select pg_terminate_backend(pid) from pg_stat_activity where query like :copy and pid <> pg_backend_pid()"
                            ),
                            {"copy": f"COPY {target} %"},
                        )
                        .scalars()
                        .all()
                    )

    query_id = unique("q")
    written = sink.write_partition(partition(), ctx(0, query_id))
    assert seen["killed"] == [True], "the sink's connection was not found and killed mid-partition"
    assert seen["visible"] == [0]
    assert written.row_count == chunk * chunks and not written.skipped
    assert sink.write_partition(partition(), ctx(0, query_id)).skipped  # Spark's re-delivery
    assert scalar_rows(postgresql, f"select count(*), count(distinct id) from {target}") == [
        (chunk * chunks, chunk * chunks)
    ]
    one_batch = batch(list(range(chunk)), [f"{i:0100d}" for i in range(chunk)]).nbytes
    # Arrow memory in use, sampled at every batch handed over: a few batches, never the 200
    # the partition has (the sink used to keep them all in memory for a retry).
    assert max(seen["held"]) < 4 * one_batch, (max(seen["held"]), one_batch)
    watcher.dispose()


# --- 5. a refusal is not retried: it would only delay the same error ---------------------------


@pytest.mark.parametrize(
    "url",
    [
        pg_url("jetconnect", WRONG),
        pg_url("no_such_role", WRONG),
        f"postgresql+psycopg://jetconnect:{PASSWORD}@127.0.0.1:{PORT}/no_such_database",
    ],
    ids=["wrong-password", "unknown-role", "unknown-database"],
)
def test_a_server_that_refuses_the_credentials_or_database_is_not_worth_retrying(postgresql, url):
    from jetconnect_jdbc.transient import is_transient

    engine = sa.create_engine(url)
    with pytest.raises(sa.exc.OperationalError) as refused:
        engine.connect()
    assert not is_transient(refused.value), str(refused.value.orig)
    stopped = sa.create_engine(f"postgresql+psycopg://jetconnect:{PASSWORD}@127.0.0.1:1/jetconnect")
    with pytest.raises(sa.exc.OperationalError) as unreachable:
        stopped.connect()
    assert is_transient(unreachable.value)  # no server answered: it may be restarting
