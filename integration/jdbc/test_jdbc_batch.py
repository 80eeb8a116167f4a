"""The JDBC source and sink through the real SparkSession, against PostgreSQL and SQLite."""

from __future__ import annotations

import datetime
import decimal
import os
import uuid

import pytest
import sqlalchemy as sa

from jetconnect import sinks, sources

PASSWORD = "pg-Secret-7f3a"  # set by scripts/servers/postgresql.sh
POSTGRES = os.environ.get("JETCONNECT_PG_URL", f"postgresql+psycopg://jetconnect:{PASSWORD}@127.0.0.1:5432/jetconnect")


@pytest.fixture(params=["postgresql", "sqlite"])
def url(request, server, tmp_path):
    if request.param == "postgresql":
        server("postgresql")
        return POSTGRES
    return f"sqlite:///{tmp_path / 'db.sqlite'}"


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def fill(url: str, table: str, rows: int) -> None:
    engine = sa.create_engine(url)
    meta = sa.MetaData()
    t = sa.Table(
        table,
        meta,
        sa.Column("id", sa.BigInteger, primary_key=True),
        sa.Column("grp", sa.Integer),
        sa.Column("name", sa.Text),
        sa.Column("amount", sa.Numeric(12, 2)),
        sa.Column("day", sa.Date),
    )
    meta.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            t.insert(),
            [
                {
                    "id": i,
                    "grp": i % 7,
                    "name": None if i % 10 == 0 else f"name-{i}",
                    "amount": decimal.Decimal(i) / 100,
                    "day": datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 365),
                }
                for i in range(1, rows + 1)
            ],
        )
    engine.dispose()


def test_parallel_reads_give_the_same_rows_as_one_query(spark, url):
    table = unique("orders")
    fill(url, table, 5000)
    one = sources.jdbc(url, table=table).read(spark)
    by_id = sources.jdbc(url, table=table, partition_column="id", num_partitions=4).read(spark)
    by_day = sources.jdbc(url, table=table, partition_column="day", num_partitions=3).read(spark)
    # SQLite results carry no types: a query says its schema (a table's is reflected).
    by_query = sources.jdbc(
        url,
        query=f"select * from {table} where id > 0",
        partition_column="id",
        num_partitions=2,
        schema="id long, grp int, name string, amount decimal(12,2), day date",
    ).read(spark)
    assert by_id.rdd.getNumPartitions() == 4
    expected = sorted(one.collect())
    assert len(expected) == 5000
    assert sorted(by_id.collect()) == expected
    assert sorted(by_day.collect()) == expected
    assert sorted(by_query.collect()) == expected
    by_name = (
        spark.read.format("jetconnect.jdbc")
        .option("url", url)
        .option("table", table)
        .option("partition_column", "id")
        .option("lower_bound", "1000")
        .option("upper_bound", "2000")
        .option("num_partitions", "3")
        .load()
    )
    assert sorted(by_name.collect()) == expected


def test_filters_are_pushed_into_the_query(spark, url):
    table = unique("orders")
    fill(url, table, 500)
    df = sources.jdbc(url, table=table, num_partitions=2, partition_column="id").read(spark)
    picked = df.filter("id > 100 and grp = 3 and name is not null").select("id").collect()
    assert sorted(r.id for r in picked) == [i for i in range(101, 501) if i % 7 == 3 and i % 10 != 0]
    source = sources.jdbc(url, table=table)
    sources_left = source.push_filters(list(_spark_filters()))
    assert sources_left == [] and len(source._filters) == 2


def test_types_round_trip_through_spark_into_postgresql(spark, server):
    server("postgresql")
    source_table, target_table = unique("typed"), unique("typed_copy")
    engine = sa.create_engine(POSTGRES)
    with engine.begin() as conn:
        conn.exec_driver_sql(
            f"create table {source_table} (id bigint primary key, i int, s smallint, r real, d double precision,"
            " n numeric(12,3), txt text, b bytea, dt date, ts timestamp, tz timestamptz, ok boolean, j jsonb)"
        )
        conn.exec_driver_sql(
            f"insert into {source_table} values"
            " (1, -7, 3, 1.5, 2.25, 12.345, 'héllo, \"world\"', '\\x00ff10', '2024-02-29', '2024-01-01 10:00:00.123456',"
            "  '2024-01-01 10:00:00+02', true, '{\"a\": [1, 2]}'),"
            " (2, null, null, null, null, null, '', null, null, null, null, null, null)"
        )
    df = sources.jdbc(POSTGRES, table=source_table).read(spark)
    assert df.schema.simpleString() == (
        "struct<id:bigint,i:int,s:smallint,r:float,d:double,n:decimal(12,3),txt:string,b:binary,"
        "dt:date,ts:timestamp_ntz,tz:timestamp,ok:boolean,j:string>"
    )
    first = df.orderBy("id").first()
    assert first.n == decimal.Decimal("12.345") and first.b == bytearray(b"\x00\xff\x10")
    assert first.ts == datetime.datetime(2024, 1, 1, 10, 0, 0, 123456)
    assert first.j == '{"a": [1, 2]}'
    sinks.jdbc(POSTGRES, table=target_table).write(df.drop("j"))
    with engine.connect() as conn:
        differences = conn.exec_driver_sql(
            f"(select id, i, s, r, d, n, txt, b, dt, ts, tz, ok from {source_table}"
            f" except select id, i, s, r, d, n, txt, b, dt, ts, tz, ok from {target_table})"
            f" union all (select id, i, s, r, d, n, txt, b, dt, ts, tz, ok from {target_table}"
            f" except select id, i, s, r, d, n, txt, b, dt, ts, tz, ok from {source_table})"
        ).all()
        empty_is_empty = conn.exec_driver_sql(f"select txt = '' from {target_table} where id = 2").scalar()
    assert differences == [] and empty_is_empty is True


def test_upsert_through_spark(spark, url):
    table = unique("accounts")
    sink = sinks.jdbc(url, table=table, mode="upsert", key_columns=["id"])
    sink.write(spark.createDataFrame([(1, "a"), (2, "b")], "id long, name string"))
    sink.write(spark.createDataFrame([(2, "B"), (3, "C")], "id long, name string"))
    with sa.create_engine(url).connect() as conn:
        assert conn.execute(sa.text(f"select id, name from {table} order by id")).all() == [
            (1, "a"),
            (2, "B"),
            (3, "C"),
        ]


def test_a_refused_row_names_statement_and_key_never_the_password(spark, server):
    server("postgresql")
    table = unique("unique_ids")
    sink = sinks.jdbc(POSTGRES, table=table, key_columns=["id"])
    sink.write(spark.createDataFrame([(1, "a")], "id long, name string"))
    with pytest.raises(Exception) as failure:
        sink.write(spark.createDataFrame([(5, "x"), (1, "again")], "id long, name string").coalesce(1))
    message = str(failure.value)
    assert f"COPY {table} (id, name) FROM STDIN" in message and "(id=1)" in message and "already exists" in message, (
        message[-2000:]
    )
    assert PASSWORD not in message
    wrong = POSTGRES.replace(PASSWORD, "wrong-" + PASSWORD)
    with pytest.raises(Exception) as refused:
        sources.jdbc(wrong, table=table).read(spark).collect()
    assert "password authentication failed" in str(refused.value) and PASSWORD not in str(refused.value)


def _spark_filters():
    from pyspark.sql.datasource import EqualTo, GreaterThan

    return [GreaterThan(("id",), 100), EqualTo(("grp",), 3)]


def test_postgresql_copy_reads_exactly_what_the_cursor_reads(spark, server):
    server("postgresql")
    table = unique("copied")
    with sa.create_engine(POSTGRES).begin() as conn:
        conn.exec_driver_sql(
            f"create table {table} (id bigint, r real, d double precision, n numeric(12,3), txt text, dt date,"
            " ts timestamp, tz timestamptz, ok boolean, j jsonb, u uuid, iv interval)"
        )
        conn.exec_driver_sql(
            f"insert into {table} select g, g / 3.0, g / 7.0, g / 8.0, E'a,\"b\\n' || g, date '2024-01-01' + g,"
            " timestamp '2024-01-01 10:00:00.5' + g * interval '1 minute', timestamptz '2024-03-01 10:00+05:30' + g * interval '1 hour',"
            " mod(g, 2) = 0, jsonb_build_object('g', g), gen_random_uuid(), g * interval '1 second'"
            " from generate_series(1, 3000) g"
        )
        conn.exec_driver_sql(f"insert into {table} (id, txt) values (0, ''), (-1, null)")
    copied = sources.jdbc(POSTGRES, table=table, partition_column="id", num_partitions=3).read(spark)
    fetched = sources.jdbc(POSTGRES, table=table, partition_column="id", num_partitions=3, use_copy=False).read(spark)
    assert copied.schema == fetched.schema
    assert copied.count() == 3002
    assert copied.exceptAll(fetched).count() == 0 and fetched.exceptAll(copied).count() == 0
    assert copied.filter("id = 0").first().txt == "" and copied.filter("id = -1").first().txt is None


def test_jets_row_fn_and_bind_fn_through_spark(spark, url):
    """Jet's createOutputFn on the read and bindFn on the write, against the real database."""
    table, target = unique("orders"), unique("totals")
    fill(url, table, 300)
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text(f"CREATE TABLE {target} (id BIGINT PRIMARY KEY, label TEXT, cents BIGINT)"))
    read = sources.jdbc(
        url,
        table=table,
        partition_column="id",
        num_partitions=3,
        row_schema="id long, label string",
        row_fn=lambda row: (row.id, f"{row.grp}:{row.name or '-'}"),
    )
    df = read.read(spark).where("id <= 200")  # a filter on the function's columns is Spark's, not the database's
    sinks.jdbc(
        url,
        statement=f"INSERT INTO {target} (id, label, cents) VALUES (:i, :l, :c)",
        bind_fn=lambda row: {"i": row.id, "l": row.label.upper(), "c": row.id * 100},
    ).write(df)
    with engine.connect() as conn:
        got = conn.execute(sa.text(f"SELECT id, label, cents FROM {target} ORDER BY id")).all()
    engine.dispose()
    assert [tuple(r) for r in got] == [
        (i, f"{i % 7}:{'-' if i % 10 == 0 else f'NAME-{i}'}", i * 100) for i in range(1, 201)
    ]
    with pytest.raises(Exception, match=r"bind_fn returned tuple for row 0 of this partition"):
        sinks.jdbc(url, statement=f"INSERT INTO {target} (id) VALUES (:i)", bind_fn=lambda row: (row.id,)).write(
            df.limit(1)
        )


def test_jets_connection_supplier_reads_and_writes_with_a_url_naming_only_the_dialect(spark, server):
    server("postgresql")
    import psycopg

    def connect():
        return psycopg.connect(host="127.0.0.1", port=5432, dbname="jetconnect", user="jetconnect", password=PASSWORD)

    table, copy = unique("orders"), unique("orders_copy")
    fill(POSTGRES, table, 500)
    bare = "postgresql+psycopg://"  # no host, no user, no password: the supplier has them
    df = sources.jdbc(bare, table=table, partition_column="id", num_partitions=2, connection_fn=connect).read(spark)
    sinks.jdbc(bare, table=copy, connection_fn=connect).write(df)
    back = sources.jdbc(POSTGRES, table=copy).read(spark)
    assert back.count() == 500 and back.agg({"id": "sum"}).collect()[0][0] == sum(range(1, 501))
    with pytest.raises(Exception, match="option 'connection_fn' must be a Python function"):
        sources.jdbc(bare, table=table, connection_fn="psycopg.connect")
