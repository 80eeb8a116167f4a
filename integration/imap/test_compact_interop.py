"""Hazelcast applications' own objects, through Spark, against the shared 3-member cluster: Compact
records a Java service wrote (integration/imap/java/com/acme: zero-config records ``Order`` with a
nested ``Address``, an array with null items, a nullable ``Long``) read exactly, with the schema
derived or given; what jetconnect writes read back by that Java service as its own ``Order`` and
by Hazelcast's own SQL; member-side predicates and pushed Spark filters on record fields; the
map's journal; and what cannot be read said clearly."""

from __future__ import annotations

import decimal
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hazelcast.predicate import greater_or_equal
from hazelcast.projection import single_attribute
from pyspark.sql.datasource import GreaterThanOrEqual

from jetconnect import sinks, sources
from jetconnect.errors import SchemaError, SinkError, SourceError
from jetconnect.testing import read_rows

from .conftest import HAZELCAST_URL

MEMBERS = "127.0.0.1:5701,127.0.0.1:5702,127.0.0.1:5703"
ORDERS = 100_000
#: The Java Order's fields as a Spark struct, as a user who knows the class would give it.
ORDER_DDL = (
    "key bigint, value struct<id: bigint, customer: string, amount: double, discount: bigint, "
    "tags: array<string>, address: struct<street: string, city: string, zip: int>, paid: boolean>"
)
NAMES = {"value.address": "com.acme.Address"}


def expected_order(i: int) -> dict[str, Any]:
    """``Order.number(i)`` of integration/imap/java/com/acme/Order.java, as Spark reads it."""
    return {
        "id": i,
        "customer": f'Zoë "{i}"' if i % 7 == 0 else f"customer-{i}",
        "amount": i * 0.25,
        "discount": None if i % 3 == 0 else i * 10,
        "tags": None if i % 4 == 0 else [f"t{i % 10}", None if i % 2 == 0 else "odd"],
        "address": None
        if i % 5 == 0
        else {"street": f"street {i}", "city": "Zürich" if i % 2 == 0 else "Bern", "zip": 8000 + i % 1000},
        "paid": i % 2 == 0,
    }


def expected_line(i: int) -> str:
    """``Order.number(i).line()``: what the Java service prints of an order it reads."""
    o = expected_order(i)
    tags = "null" if o["tags"] is None else ",".join("null" if t is None else t for t in o["tags"])
    a = o["address"]
    address = "null" if a is None else f"{a['street']}/{a['city']}/{a['zip']}"
    amount = repr(o["amount"])
    discount = "null" if o["discount"] is None else o["discount"]
    return f"{i}|{o['customer']}|{amount}|{discount}|{tags}|{address}|{str(o['paid']).lower()}"


#: ``Order.number(id)`` computed by Spark: the DataFrame jetconnect writes for the Java service.
ORDER_SQL = """named_struct(
    'id', id,
    'customer', CASE WHEN id % 7 = 0 THEN concat('Zoë "', id, '"') ELSE concat('customer-', id) END,
    'amount', id * 0.25D,
    'discount', CASE WHEN id % 3 = 0 THEN NULL ELSE id * 10 END,
    'tags', CASE WHEN id % 4 = 0 THEN NULL
                 ELSE array(concat('t', id % 10), CASE WHEN id % 2 = 0 THEN NULL ELSE 'odd' END) END,
    'address', CASE WHEN id % 5 = 0 THEN NULL
                    ELSE named_struct('street', concat('street ', id), 'city', CASE WHEN id % 2 = 0 THEN 'Zürich'
                                      ELSE 'Bern' END, 'zip', CAST(8000 + id % 1000 AS INT)) END,
    'paid', id % 2 = 0) AS value"""


def java(java_classes: list[str], *args: str) -> str:
    done = subprocess.run([*java_classes, "com.acme.OrdersApp", *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def java_orders(server, java_classes, hz) -> Iterator[str]:
    """A map of 100,000 Orders the Java service wrote (once for the module; no journal kept, and
    destroyed after: the shared members' heaps are small)."""
    server("hazelcast")
    name = f"nojournal-orders-{uuid.uuid4().hex[:8]}"
    assert java(java_classes, "write", "jetconnect", MEMBERS, name, str(ORDERS)).strip() == f"wrote {ORDERS}"
    yield name
    hz.get_map(name).blocking().destroy()


def test_a_java_services_orders_read_exactly_with_the_schema_derived(spark, java_orders) -> None:
    df = sources.map(java_orders, store=HAZELCAST_URL).read(spark)
    assert df.schema.simpleString() == (
        "struct<key:string,value:struct<address:struct<city:string,street:string,zip:int>,amount:double,"
        "customer:string,discount:bigint,id:bigint,paid:boolean,tags:array<string>>>"
    )
    got = {int(row["key"]): row["value"].asDict(recursive=True) for row in df.collect()}
    assert len(got) == ORDERS
    assert got == {i: expected_order(i) for i in range(ORDERS)}


def test_a_java_services_orders_read_exactly_with_a_schema_given(spark, java_orders) -> None:
    df = sources.map(java_orders, store=HAZELCAST_URL, schema=ORDER_DDL).read(spark)
    assert df.count() == ORDERS
    rows = df.where("key % 997 = 0").collect()
    assert {r["key"]: r["value"].asDict(recursive=True) for r in rows} == {
        i: expected_order(i) for i in range(0, ORDERS, 997)
    }
    # by format name, with Spark's string options
    by_name = spark.read.format("jetconnect.map").option("name", java_orders).option("store", HAZELCAST_URL)
    assert by_name.option("schema", ORDER_DDL).load().selectExpr("sum(value.id)").first()[0] == sum(range(ORDERS))


def test_what_jetconnect_writes_the_java_service_reads_as_its_own_orders(spark, java_classes, name, hz) -> None:
    target = name("nojournal-jc-orders")
    df = spark.range(0, ORDERS, numPartitions=4).selectExpr("id AS key", ORDER_SQL)
    sinks.map(
        target,
        store=HAZELCAST_URL,
        value_format="compact",
        value_compact_type_name="com.acme.Order",
        compact_type_names=NAMES,
    ).write(df)
    lines = java(java_classes, "read", "jetconnect", MEMBERS, target).splitlines()
    hz.get_map(target).blocking().destroy()
    assert len(lines) == ORDERS
    assert lines == [expected_line(i) for i in range(ORDERS)]


def test_hazelcast_sql_reads_what_jetconnect_wrote(spark, hz, name) -> None:
    target = name("sql-orders")
    df = spark.range(0, 2_000, numPartitions=2).selectExpr("id AS key", ORDER_SQL)
    sinks.map(
        target,
        store=HAZELCAST_URL,
        value_format="compact",
        value_compact_type_name="com.acme.Order",
        compact_type_names=NAMES,
    ).write(df)
    mapping = target.replace('"', '""')
    hz.sql.execute(
        f'CREATE OR REPLACE MAPPING "{mapping}" (__key BIGINT, id BIGINT, customer VARCHAR, amount DOUBLE, '
        "discount BIGINT, paid BOOLEAN) TYPE IMap OPTIONS ('keyFormat' = 'bigint', 'valueFormat' = 'compact', "
        "'valueCompactTypeName' = 'com.acme.Order')"
    ).result()
    result = hz.sql.execute(f'SELECT __key, id, customer, amount, discount, paid FROM "{mapping}"').result()
    with result:
        got = sorted(tuple(row.get_object_with_index(i) for i in range(6)) for row in result)
    want = [
        (i, i, o["customer"], o["amount"], o["discount"], o["paid"]) for i in range(2_000) for o in [expected_order(i)]
    ]
    assert got == want


def test_member_side_predicates_and_pushed_filters_on_record_fields(spark, java_orders) -> None:
    kept = {i for i in range(ORDERS) if i >= 99_000}
    by_predicate = sources.map(java_orders, store=HAZELCAST_URL, predicate=greater_or_equal("id", 99_000)).read(spark)
    assert {int(r["key"]) for r in by_predicate.collect()} == kept
    # a projection the members run: a field, and a nested record, which reads into a struct
    projected = sources.map(
        java_orders,
        store=HAZELCAST_URL,
        predicate=greater_or_equal("id", 99_990),
        projection=single_attribute("customer"),
    ).read(spark)
    assert sorted(r["value"] for r in projected.collect()) == sorted(
        expected_order(i)["customer"] for i in range(99_990, ORDERS)
    )
    addresses = sources.map(
        java_orders,
        store=HAZELCAST_URL,
        predicate=greater_or_equal("id", 99_990),
        projection=single_attribute("address"),
        schema="value struct<street: string, city: string, zip: int>",
    ).read(spark)
    assert sorted(r["value"]["street"] for r in addresses.collect() if r["value"] is not None) == sorted(
        f"street {i}" for i in range(99_990, ORDERS) if i % 5
    )
    pushed = sources.map(java_orders, store=HAZELCAST_URL, schema=ORDER_DDL).read(spark).where("value.id >= 99000")
    assert {r["key"] for r in pushed.collect()} == kept
    # the filter runs on the members: the source reads only the matches (its methods called as
    # Spark's reader calls them)
    source = sources.map(java_orders, store=HAZELCAST_URL, schema=ORDER_DDL, parallelism=1)
    assert source.push_filters([GreaterThanOrEqual(("value", "id"), 99_000)]) == []
    (split,) = source.splits()
    rows = [row for batch in source.read_split(split) for row in read_rows([batch])]
    assert len(rows) == len(kept) == 1_000  # of 100,000 entries in the map


def test_the_journal_of_a_map_of_records(spark, java_classes, name, tmp_path) -> None:
    target = name("journal-orders")
    java(java_classes, "write", "jetconnect", MEMBERS, target, "3000")
    stream = sources.map_journal(target, store=HAZELCAST_URL).read_stream(spark, max_records_per_batch=1_000)
    query = (
        stream.writeStream.format("memory")
        .queryName(target.replace("-", "_"))
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    assert query.exception() is None
    rows = spark.table(target.replace("-", "_")).collect()
    assert {int(r["key"]): r["value"].asDict(recursive=True) for r in rows} == {
        i: expected_order(i) for i in range(3000)
    }
    assert len(rows) == 3000


def test_every_spark_type_round_trips_as_compact(spark, name) -> None:
    target = name("all-types")
    df = spark.range(0, 500, numPartitions=2).selectExpr(
        "id AS key",
        """named_struct(
            'b', id % 2 = 0, 'nb', CASE WHEN id % 3 = 0 THEN NULL ELSE id % 2 = 1 END,
            'i8', CAST(id % 100 AS TINYINT), 'i16', CAST(id AS SMALLINT), 'i32', CAST(id AS INT), 'i64', id,
            'f32', CAST(id / 4 AS FLOAT), 'f64', id / 8D,
            's', CASE WHEN id % 5 = 0 THEN NULL ELSE concat('ü', id) END,
            'dec', CAST(id / 3 AS DECIMAL(20, 6)),
            'day', date_add(DATE'1970-01-01', CAST(id AS INT)),
            'ts', timestamp_seconds(id * 3600),
            'ntz', CAST(timestamp_seconds(id * 60) AS TIMESTAMP_NTZ),
            'bin', CAST(concat('x', id) AS BINARY),
            'arr', array(id, id + 1), 'narr', array(CAST(NULL AS BIGINT), id),
            'sarr', array('a', CAST(NULL AS STRING)),
            'nested', named_struct('x', id, 'y', array(named_struct('z', id)))) AS value""",
    )
    sinks.map(target, store=HAZELCAST_URL, value_format="compact", value_compact_type_name="jc.AllTypes").write(df)
    back = sources.map(
        target, store=HAZELCAST_URL, schema=f"key bigint, value {df.schema['value'].dataType.simpleString()}"
    )
    got = sorted(back.read(spark).collect())
    want = sorted(df.collect())
    assert got == want
    derived = sources.map(target, store=HAZELCAST_URL).read(spark)
    assert {f.name for f in derived.schema["value"].dataType.fields} == set(df.schema["value"].dataType.names)


def test_what_cannot_be_written_or_read_as_compact_says_so(spark, hz, name) -> None:
    target = name("odd")
    frame = spark.range(3).selectExpr("id AS key", "named_struct('totals', map('a', id)) AS value")
    with pytest.raises(Exception, match="'value.totals' of type map<string,bigint> has no Compact kind"):
        sinks.map(target, store=HAZELCAST_URL, value_format="compact", value_compact_type_name="jc.Odd").write(frame)
    assert hz.get_map(target).blocking().size() == 0  # refused before anything left
    with pytest.raises(Exception, match="value_format='compact' needs option 'value_compact_type_name'"):
        sinks.map(target, store=HAZELCAST_URL, value_format="compact")
    with pytest.raises(Exception, match="Compact is Hazelcast's format"):
        sinks.map(target, value_format="compact", value_compact_type_name="jc.Odd")
    # two unrelated types in one map, and a version that changes a field's type
    for type_name, expr in (("jc.A", "named_struct('x', id)"), ("jc.B", "named_struct('y', id)")):
        sinks.map(target, store=HAZELCAST_URL, value_format="compact", value_compact_type_name=type_name).write(
            spark.range(2 if type_name == "jc.A" else 1).selectExpr("id AS key", f"{expr} AS value")
        )
    with pytest.raises(Exception, match="2 type names \\('jc.A', 'jc.B'\\)"):
        sources.map(target, store=HAZELCAST_URL).read(spark)
    with pytest.raises(Exception, match="is a Compact record of 'jc.A'|record has no field 'y'|SchemaError"):
        sources.map(target, store=HAZELCAST_URL, schema="key bigint, value struct<y: bigint not null>").read(
            spark
        ).collect()


def test_a_decimal_beyond_sparks_precision_names_field_and_entry(spark, name) -> None:
    from hazelcast import HazelcastClient
    from hazelcast.config import IntType
    from hazelcast.serialization.api import CompactReader, CompactSerializer, CompactWriter

    class Big:
        def __init__(self, amount: decimal.Decimal) -> None:
            self.amount = amount

    class BigSerializer(CompactSerializer[Big]):
        def read(self, reader: CompactReader) -> Big:
            return Big(reader.read_decimal("amount"))

        def write(self, writer: CompactWriter, obj: Big) -> None:
            writer.write_decimal("amount", obj.amount)

        def get_type_name(self) -> str:
            return "jc.Big"

        def get_class(self) -> type:
            return Big

    target = name("big")
    client = HazelcastClient(
        cluster_name="jetconnect",
        cluster_members=MEMBERS.split(","),
        default_int_type=IntType.LONG,
        compact_serializers=[BigSerializer()],
    )
    try:
        client.get_map(target).blocking().put_all({1: Big(decimal.Decimal("1.5")), 2: Big(decimal.Decimal("1E+50"))})
    finally:
        client.shutdown()
    with pytest.raises(Exception, match="entry 2.*'amount' holds Decimal\\('1E\\+50'\\).*decimal\\(38,18\\)"):
        sources.map(target, store=HAZELCAST_URL, schema="key bigint, value struct<amount: decimal(38,18)>").read(
            spark
        ).collect()
    # a string column takes it exactly
    as_text = sources.map(target, store=HAZELCAST_URL, schema="key bigint, value struct<amount: string>").read(spark)
    assert sorted((r["key"], r["value"]["amount"]) for r in as_text.collect()) == [(1, "1.5"), (2, "1E+50")]


def test_the_errors_name_the_connector_not_raw_client_errors(spark, java_orders) -> None:
    with pytest.raises(Exception, match="a Compact record of 'com.acme.Order' cannot fill a column of type bigint"):
        sources.map(java_orders, store=HAZELCAST_URL, schema="key bigint, value bigint").read(spark).collect()
    for error in (SchemaError, SourceError, SinkError):  # the types a user catches
        assert issubclass(error, Exception)


def test_caches_and_lists_of_records(spark, name) -> None:
    from hazelcast import HazelcastClient
    from hazelcast.config import IntType
    from hazelcast.serialization.api import CompactReader, CompactSerializer, CompactWriter

    cache = name("records")
    df = spark.range(0, 500, numPartitions=2).selectExpr("id AS key", ORDER_SQL)
    sinks.cache(
        cache,
        store=HAZELCAST_URL,
        value_format="compact",
        value_compact_type_name="com.acme.Order",
        compact_type_names=NAMES,
    ).write(df)
    back = sources.cache(cache, store=HAZELCAST_URL).read(spark)
    assert {int(r["key"]): r["value"].asDict(recursive=True) for r in back.collect()} == {
        i: expected_order(i) for i in range(500)
    }

    class Point:
        def __init__(self, x: int, label: str | None) -> None:
            self.x, self.label = x, label

    class PointSerializer(CompactSerializer[Point]):
        def read(self, reader: CompactReader) -> Point:
            return Point(reader.read_int32("x"), reader.read_string("label"))

        def write(self, writer: CompactWriter, obj: Point) -> None:
            writer.write_int32("x", obj.x)
            writer.write_string("label", obj.label)

        def get_type_name(self) -> str:
            return "jc.Point"

        def get_class(self) -> type:
            return Point

    listed = name("points")
    client = HazelcastClient(
        cluster_name="jetconnect",
        cluster_members=MEMBERS.split(","),
        default_int_type=IntType.LONG,
        compact_serializers=[PointSerializer()],
    )
    try:
        client.get_list(listed).blocking().add_all([Point(i, None if i % 2 else f"p{i}") for i in range(20)])
    finally:
        client.shutdown()
    points = sources.list(listed, store=HAZELCAST_URL).read(spark)
    assert points.schema.simpleString() == "struct<value:struct<label:string,x:int>>"
    assert [r["value"].asDict() for r in points.collect()] == [
        {"x": i, "label": None if i % 2 else f"p{i}"} for i in range(20)
    ]


def test_a_timestamp_outside_sparks_range_names_field_and_entry(spark, java_classes, name) -> None:
    target = name("events")
    java(java_classes, "events", "jetconnect", MEMBERS, target)
    read = sources.map(target, store=HAZELCAST_URL, schema="key bigint, value struct<id: bigint, at: timestamp_ntz>")
    with pytest.raises(Exception, match="entry 2.*field 'at' holds a TIMESTAMP value outside what Spark holds"):
        read.read(spark).collect()
    ok = sources.map(target, store=HAZELCAST_URL, schema="key bigint, value struct<id: bigint>").read(spark)
    assert sorted(r["value"]["id"] for r in ok.collect()) == [1, 2]  # the other fields read
