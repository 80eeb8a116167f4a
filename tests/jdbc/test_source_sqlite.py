"""The JDBC source on SQLite, without Spark: splits, types, pushed filters, incremental offsets."""

import datetime
import decimal

import pyarrow as pa
import pytest
import sqlalchemy as sa
from pyspark.sql.datasource import EqualTo, GreaterThan, In, IsNull, Not, StringStartsWith

from jetconnect._connector import Range
from jetconnect.errors import OffsetError, OptionError, SchemaError, SourceError
from jetconnect_jdbc import JdbcSource


@pytest.fixture()
def url(tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    engine = sa.create_engine(url)
    meta = sa.MetaData()
    events = sa.Table(
        "events",
        meta,
        sa.Column("id", sa.BigInteger, primary_key=True),
        sa.Column("name", sa.Text),
        sa.Column("price", sa.Numeric(10, 2)),
        sa.Column("day", sa.Date),
        sa.Column("at", sa.DateTime),
        sa.Column("ok", sa.Boolean),
        sa.Column("blob", sa.LargeBinary),
    )
    meta.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            events.insert(),
            [
                {
                    "id": i,
                    "name": f"n{i}",
                    "price": decimal.Decimal(i) / 4,
                    "day": datetime.date(2024, 1, 1) + datetime.timedelta(days=i),
                    "at": datetime.datetime(2024, 1, 1, 0, 0, i % 60),
                    "ok": i % 2 == 0,
                    "blob": bytes([i % 256]),
                }
                for i in range(1, 101)
            ],
        )
        conn.execute(events.insert(), [{"id": 1000, "name": None}])
    engine.dispose()
    return url


def read_all(source: JdbcSource) -> pa.Table:
    batches = [b for split in source.splits() for b in source.read_split(split)]
    return pa.Table.from_batches(batches, schema=source.arrow_schema())


def test_table_columns_map_to_spark_types(url):
    schema = JdbcSource(url, table="events").schema()
    assert schema.simpleString() == (
        "struct<id:bigint,name:string,price:decimal(10,2),day:date,at:timestamp_ntz,ok:boolean,blob:binary>"
    )


def test_parallel_splits_read_the_same_rows_as_one_query(url):
    whole = read_all(JdbcSource(url, table="events")).sort_by("id")
    parts = JdbcSource(url, table="events", partition_column="id", num_partitions=4, fetch_size=7)
    assert len(parts.splits()) == 4
    assert read_all(parts).sort_by("id").equals(whole)
    by_day = JdbcSource(
        url,
        table="events",
        partition_column="day",
        lower_bound="2024-01-10",
        upper_bound="2024-02-10",
        num_partitions=3,
    )
    assert read_all(by_day).sort_by("id").equals(whole)
    assert whole.num_rows == 101
    assert whole.column("price")[3].as_py() == decimal.Decimal("1.00")


def test_query_source_infers_types_from_values(url):
    source = JdbcSource(url, query="select id, name, id * 2 as twice from events where id <= 10")
    assert source.schema().simpleString() == "struct<id:bigint,name:string,twice:bigint>"
    assert read_all(source).column("twice").to_pylist() == [i * 2 for i in range(1, 11)]


def test_pushed_filters_become_the_where_clause_and_unsafe_ones_are_returned(url):
    source = JdbcSource(url, table="events", partition_column="id", num_partitions=2)
    left = source.push_filters(
        [
            GreaterThan(("id",), 90),
            Not(IsNull(("name",))),
            In(("name",), ("n95", "n96", "n1")),
            StringStartsWith(("name",), "n9"),
        ]
    )
    assert left == [StringStartsWith(("name",), "n9")]
    assert sorted(read_all(source).column("id").to_pylist()) == [95, 96]
    assert JdbcSource(url, table="events").push_filters([GreaterThan(("name",), "a")]) == [GreaterThan(("name",), "a")]
    source = JdbcSource(url, table="events")
    source.push_filters([EqualTo(("ok",), True), EqualTo(("day",), datetime.date(2024, 1, 3))])
    assert read_all(source).column("id").to_pylist() == [2]


def test_partitions_fn_gives_each_split_its_rows(url):
    def by_parity(conn, parallelism, index):
        return sa.text("select id, name from events where id <= 100 and id % :n = :i").bindparams(
            n=parallelism, i=index
        )

    source = JdbcSource(url, query="select id, name from events", partitions_fn=by_parity, num_partitions=3)
    assert len(source.splits()) == 3
    assert sorted(read_all(source).column("id").to_pylist()) == list(range(1, 101))


def test_incremental_offsets_replay_exactly(url):
    source = JdbcSource(url, table="events", offset_column="id", start_offset="90")
    start = source.initial_offset()
    assert start == {"id": 90}
    end = source.latest_offset(start, max_records=5)
    assert end == {"id": 95}
    (range_,) = source.ranges(start, end)
    first = pa.Table.from_batches(list(source.read_range(range_)))
    again = pa.Table.from_batches(list(source.read_range(Range("id", 90, 95))))
    assert first.column("id").to_pylist() == [91, 92, 93, 94, 95]
    assert first.equals(again)
    assert source.latest_offset(end, None) == {"id": 1000}
    assert source.latest_offset({"id": 1000}, None) == {"id": 1000}


def test_options_at_fault_are_named(url):
    with pytest.raises(OptionError, match="'query' or option 'table'"):
        JdbcSource(url, query="select 1", table="events")
    with pytest.raises(OptionError, match="partition_column"):
        JdbcSource(url, table="events", partition_column="nope", num_partitions=2).splits()
    with pytest.raises(OptionError, match="partition_column.*'name' is string"):
        JdbcSource(url, table="events", partition_column="name", num_partitions=2).splits()
    with pytest.raises(OptionError, match="lower_bound"):
        JdbcSource(
            url, table="events", partition_column="id", lower_bound="ten", upper_bound="20", num_partitions=2
        ).splits()
    with pytest.raises(OptionError, match="offset_column"):
        JdbcSource(url, table="events").initial_offset()
    with pytest.raises(SourceError, match="table 'missing' does not exist"):
        JdbcSource(url, table="missing").schema()


def test_a_checkpointed_offset_of_another_column_is_refused_naming_both(url):
    # A query restarted from its checkpoint with a different offset_column once re-read the table.
    by_id = JdbcSource(url, table="events", offset_column="id")
    checkpointed = by_id.latest_offset(by_id.initial_offset(), max_records=10)
    by_day = JdbcSource(url, table="events", offset_column="day")
    for attempt in (
        lambda: by_day.latest_offset(checkpointed, None),
        lambda: by_day.ranges(checkpointed, checkpointed),
        lambda: list(by_day.read_range(Range("id", 5, 10))),
    ):
        with pytest.raises(OffsetError, match="is for column 'id', but option 'offset_column' is now 'day'"):
            attempt()
    assert by_id.latest_offset(checkpointed, 5) == {"id": 15}


def test_a_query_is_run_as_written_colons_and_percents_included(url):
    with sa.create_engine(url).begin() as conn:
        conn.execute(sa.text("update events set name = :n where id = 3"), {"n": "a :b 50% %s"})
    query = "select id, name from events where name = 'a :b 50% %s' or name like 'n1%'"
    got = read_all(JdbcSource(url, query=query, schema="id long, name string")).column("id").to_pylist()
    assert sorted(got) == [1, 3, *range(10, 20), 100]  # ':b' was once taken for a bind parameter


def test_a_fraction_read_into_an_integer_column_fails_naming_it_instead_of_being_cut_off(tmp_path):
    url = f"sqlite:///{tmp_path}/fractions.db"
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("create table prices (id integer, amount real)"))
        conn.execute(sa.text("insert into prices values (1, 2.0), (2, 2.5)"))
    engine.dispose()
    whole = JdbcSource(url, query="select id, amount from prices where id = 1", schema="id bigint, amount bigint")
    assert read_all(whole).column("amount").to_pylist() == [2]  # a whole number fits
    cut = JdbcSource(url, table="prices", schema="id bigint, amount bigint")
    with pytest.raises(SchemaError, match=r"column 'amount' value 2\.5 \(row 1 of the fetched block\) has a fraction"):
        read_all(cut)
