"""The JDBC sink on SQLite, without Spark: transactions per partition, replays skipped, errors named."""

import pyarrow as pa
import pytest
import sqlalchemy as sa
from pyspark.sql import types as T

from jetconnect.connector import CommitContext, WriteContext
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
