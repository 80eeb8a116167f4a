"""The JDBC sink on SQLite, without Spark: transactions per partition, replays skipped, errors named."""

import pyarrow as pa
import pytest
import sqlalchemy as sa
from pyspark.sql import types as T

from jetconnect import sinks, sources
from jetconnect._connector import CommitContext, WriteContext
from jetconnect.errors import OptionError, SinkError
from jetconnect_jdbc import JdbcSink

SCHEMA = T.StructType([T.StructField("id", T.LongType()), T.StructField("name", T.StringType())])


def batch(ids, names=None):
    names = names or [f"n{i}" for i in ids]
    return pa.record_batch({"id": pa.array(ids, pa.int64()), "name": pa.array(names, pa.string())})


def ctx(partition=0, batch_id=None, query_id=None):
    return WriteContext(partition_id=partition, attempt=0, batch_id=batch_id, query_id=query_id, schema=SCHEMA)


def rows(url, table="out"):
    with sa.create_engine(url).connect() as conn:
        return conn.execute(sa.text(f"select id, name from {table} order by id")).all()


@pytest.fixture()
def url(tmp_path):
    return f"sqlite:///{tmp_path / 'db.sqlite'}"


def test_insert_creates_the_table_and_writes_every_row(url):
    sink = JdbcSink(url, table="out", batch_size=3)
    sink.check_schema(SCHEMA)
    written = sink.write_partition(iter([batch([1, 2, 3, 4]), batch([5])]), ctx())
    assert written.row_count == 5 and not written.skipped
    assert [r.id for r in rows(url)] == [1, 2, 3, 4, 5]


def test_a_redelivered_micro_batch_partition_is_skipped(url):
    sink = JdbcSink(url, table="out")
    first = sink.write_partition(iter([batch([1, 2])]), ctx(0, batch_id=7, query_id="q"))
    again = sink.write_partition(iter([batch([1, 2])]), ctx(0, batch_id=7, query_id="q"))
    other = sink.write_partition(iter([batch([3])]), ctx(1, batch_id=7, query_id="q"))
    assert (first.skipped, again.skipped, other.skipped) == (False, True, False)
    sink.commit([first, other], CommitContext(batch_id=7, query_id="q"))
    assert [r.id for r in rows(url)] == [1, 2, 3]


def test_upsert_replaces_rows_by_key(url):
    sink = JdbcSink(url, table="out", mode="upsert", key_columns=["id"])
    sink.check_schema(SCHEMA)
    sink.write_partition(iter([batch([1, 2])]), ctx())
    sink.write_partition(iter([batch([2, 3], ["two", "three"])]), ctx())
    assert [tuple(r) for r in rows(url)] == [(1, "n1"), (2, "two"), (3, "three")]


def test_statement_mode_binds_columns_by_name(url):
    with sa.create_engine(url).begin() as conn:
        conn.execute(sa.text("create table audit (id integer, label text)"))
    sink = JdbcSink(url, statement="insert into audit (id, label) values (:id, upper(:name))")
    sink.write_partition(iter([batch([1, 2])]), ctx())
    with sa.create_engine(url).connect() as conn:
        assert conn.execute(sa.text("select id, label from audit order by id")).all() == [(1, "N1"), (2, "N2")]


def test_a_refused_row_fails_the_partition_naming_statement_and_key_and_writes_nothing(url):
    sink = JdbcSink(url, table="out", key_columns=["id"])
    sink.check_schema(SCHEMA)
    sink.write_partition(iter([batch([1, 2])]), ctx())
    with pytest.raises(SinkError) as failure:
        sink.write_partition(iter([batch([10, 11]), batch([12, 2, 13])]), ctx(1, batch_id=0, query_id="q"))
    message = str(failure.value)
    assert "INSERT INTO out" in message and "row 3 of the partition (id=2)" in message and "UNIQUE" in message
    assert [r.id for r in rows(url)] == [1, 2]


def test_options_at_fault_are_named(url):
    with pytest.raises(OptionError, match="'table' or option 'statement'"):
        JdbcSink(url)
    with pytest.raises(OptionError, match="'mode' must be one of insert, upsert, ignore"):
        JdbcSink(url, table="t", mode="merge")
    with pytest.raises(OptionError, match="needs option 'key_columns'"):
        JdbcSink(url, table="t", mode="upsert")


# --- off the happy path ---------------------------------------------------------------------------


def test_a_real_duplicate_key_in_a_table_named_like_the_progress_table_fails_and_loses_nothing(url):
    # The target's name contains the progress table's: the sink once took any duplicate-key error
    # whose SQL named it for "another attempt committed this partition" and dropped the rows.
    sink = sinks.jdbc(url, table="jetconnect_progress_archive", key_columns=["id"])
    sink.check_schema(SCHEMA)
    sink.write_partition(iter([batch([1])]), ctx(0, batch_id=0, query_id="q"))
    with pytest.raises(SinkError) as failure:
        sink.write_partition(iter([batch([2, 1, 3])]), ctx(0, batch_id=1, query_id="q"))
    message = str(failure.value)
    assert "writing table 'jetconnect_progress_archive'" in message and "(id=1)" in message, message
    assert [r.id for r in rows(url, "jetconnect_progress_archive")] == [1]
    # Nothing of batch 1 was recorded as written, so a fixed re-run writes it.
    with sa.create_engine(url).connect() as conn:
        assert conn.execute(sa.text("select batch_id from jetconnect_progress")).scalars().all() == [0]


def test_a_duplicate_key_with_the_progress_table_named_in_the_users_statement_fails(url):
    with sa.create_engine(url).begin() as conn:
        conn.execute(sa.text("create table audit (id integer primary key, note text)"))
        conn.execute(sa.text("insert into audit values (2, 'old')"))
    statement = "insert into audit (id, note) values (:id, :name || ' (see jetconnect_progress)')"
    sink = sinks.jdbc(url, statement=statement)
    with pytest.raises(SinkError, match="writing through option 'statement'.*UNIQUE"):
        sink.write_partition(iter([batch([1, 2])]), ctx(0, batch_id=5, query_id="q"))
    with sa.create_engine(url).connect() as conn:
        assert conn.execute(sa.text("select id from audit")).scalars().all() == [2]


def test_a_partition_far_larger_than_a_chunk_is_written_once_without_being_held_in_memory(url):
    chunk, batches = 500, 200  # 100,000 rows of ~200 bytes: 200 chunks
    held = []

    def partition():
        base = pa.total_allocated_bytes()
        for b in range(batches):
            ids = range(b * chunk, (b + 1) * chunk)
            yield batch(list(ids), [f"{i:0200d}" for i in ids])
            held.append(pa.total_allocated_bytes() - base)

    sink = sinks.jdbc(url, table="big", batch_size=chunk)
    sink.check_schema(SCHEMA)
    one_batch = batch(list(range(chunk)), [f"{i:0200d}" for i in range(chunk)]).nbytes
    written = sink.write_partition(partition(), ctx(0, batch_id=0, query_id="q"))
    again = sink.write_partition(partition(), ctx(0, batch_id=0, query_id="q"))
    assert (written.row_count, written.skipped, again.skipped) == (chunk * batches, False, True)
    with sa.create_engine(url).connect() as conn:
        assert conn.execute(sa.text("select count(*), count(distinct id) from big")).one() == (chunk * batches,) * 2
    # Arrow memory in use while the partition streams: a few batches, never the partition
    # (which is 200 batches; the sink used to keep them all for a retry).
    assert max(held) < 4 * one_batch, (max(held), one_batch)


def test_values_sqlite_would_give_back_different_fail_the_write_and_aware_timestamps_are_stored_in_utc(url):
    import datetime
    import decimal

    schema = T.StructType(
        [
            T.StructField("id", T.LongType()),
            T.StructField("x", T.DoubleType()),
            T.StructField("d", T.DecimalType(38, 2)),
            T.StructField("at", T.TimestampType()),
        ]
    )

    def write(x, d, table):
        at = pa.array(
            [datetime.datetime(2024, 1, 1, 4, 30, tzinfo=datetime.UTC)], pa.timestamp("us", tz="Asia/Kolkata")
        )
        data = pa.record_batch(
            [pa.array([1], pa.int64()), pa.array([x], pa.float64()), pa.array([d], pa.decimal128(38, 2)), at],
            names=["id", "x", "d", "at"],
        )
        sink = sinks.jdbc(url, table=table)
        sink.check_schema(schema)
        return sink.write_partition(iter([data]), WriteContext(0, 0, None, None, schema))

    with pytest.raises(SinkError, match="column 'x' has NaN at row 0 of the partition: SQLite stores NaN as NULL"):
        write(float("nan"), decimal.Decimal("1.25"), "nan")
    with pytest.raises(
        SinkError,
        match=r"column 'd' value 123456789012345678\.91 at row 0 .* would read back from SQLite as 123456789012345680\.00",
    ):
        write(1.0, decimal.Decimal("123456789012345678.91"), "digits")
    with sa.create_engine(url).connect() as conn:
        assert (
            conn.execute(sa.text("select count(*) from nan")).scalar()
            == conn.execute(sa.text("select count(*) from digits")).scalar()
            == 0
        )
    write(float("inf"), decimal.Decimal("1234567890123.45"), "kept")
    source = sources.jdbc(url, table="kept")
    (row,) = [r for split in source.splits() for b in source.read_split(split) for r in b.to_pylist()]
    # 10:00 in Kolkata is 04:30 UTC: the instant, not the wall clock of the session's zone
    assert row == {
        "id": 1,
        "x": float("inf"),
        "d": decimal.Decimal("1234567890123.45"),
        "at": datetime.datetime(2024, 1, 1, 4, 30),
    }


def test_a_name_postgresql_would_cut_short_is_refused_before_connecting():
    from jetconnect.errors import SchemaError

    long_name = "é" * 32  # 64 bytes: PostgreSQL keeps 63 and would write column 'ééé...' under another name
    schema = T.StructType([T.StructField(long_name, T.LongType())])
    with pytest.raises(SchemaError, match="column name 'é+' is 64 bytes, the database keeps 63"):
        sinks.jdbc("postgresql+psycopg://u:p@127.0.0.1:1/db", table="t").check_schema(schema)
