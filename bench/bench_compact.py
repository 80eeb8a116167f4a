"""Compact benchmark: an application's ``Order`` objects (6 fields, one a nested ``Address``) on
the 3-member Hazelcast cluster (scripts/servers/hazelcast.sh), through Spark and through the
official Python client, in one run.

    python bench/bench_compact.py [--rows 1000000] [--repeat 2] [--warmup 1]

* write: ``sinks.map(..., value_format="compact", value_compact_type_name="bench.Order")`` of a
  DataFrame of N orders vs. hazelcast-python-client's ``put_all`` of N ``Order`` objects with a
  registered ``CompactSerializer`` (the objects made before its clock starts; a call per 100,000
  entries), one process;
* read: ``sources.map(..., schema=...)`` into Spark's ``noop`` sink vs. the client's
  ``entry_set()`` of the map, which deserialises every entry with the ``CompactSerializer``, one
  process; Hazelcast's own SQL engine beside it for reference (a mapping, every row's fields
  iterated by the client). The memory columns are each side's peaks: ``workers`` are Spark's
  Python workers, one task (a quarter of the map's partitions) each.

Spark runs local[2], 4 partitions. Writes bench/results/imap-compact.json (bench/_harness.py).
"""

from __future__ import annotations

import uuid
from typing import Any

from _harness import Bench, Row, bench_parser, bench_spark, best_of_turns
from hazelcast import HazelcastClient
from hazelcast.config import IntType
from hazelcast.serialization.api import CompactReader, CompactSerializer, CompactWriter

from jetconnect import sinks, sources

#: Entries per put_all call of the raw client.
RAW_CHUNK = 100_000
HAZELCAST = "hazelcast://127.0.0.1:5701,127.0.0.1:5702,127.0.0.1:5703/jetconnect"
ORDER_SCHEMA = (
    "key bigint, value struct<id: bigint, customer: string, amount: double, discount: bigint, paid: boolean, "
    "address: struct<street: string, city: string, zip: int>>"
)
ORDER_SQL = """named_struct('id', id, 'customer', concat('customer-', id), 'amount', id * 0.25D,
    'discount', CASE WHEN id % 3 = 0 THEN NULL ELSE id * 10 END, 'paid', id % 2 = 0,
    'address', named_struct('street', concat('street ', id), 'city', 'Zürich', 'zip', CAST(8000 + id % 1000 AS INT))
) AS value"""


class Address:
    __slots__ = ("city", "street", "zip")

    def __init__(self, street: str, city: str, zip_: int) -> None:
        self.street, self.city, self.zip = street, city, zip_


class Order:
    __slots__ = ("address", "amount", "customer", "discount", "id", "paid")

    def __init__(
        self, id_: int, customer: str, amount: float, discount: int | None, paid: bool, address: Address
    ) -> None:
        self.id, self.customer, self.amount, self.discount, self.paid, self.address = (
            id_,
            customer,
            amount,
            discount,
            paid,
            address,
        )


class AddressSerializer(CompactSerializer[Address]):
    def read(self, reader: CompactReader) -> Address:
        return Address(reader.read_string("street"), reader.read_string("city"), reader.read_int32("zip"))

    def write(self, writer: CompactWriter, obj: Address) -> None:
        writer.write_string("street", obj.street)
        writer.write_string("city", obj.city)
        writer.write_int32("zip", obj.zip)

    def get_type_name(self) -> str:
        return "bench.Address"

    def get_class(self) -> type[Address]:
        return Address


class OrderSerializer(CompactSerializer[Order]):
    def read(self, reader: CompactReader) -> Order:
        return Order(
            reader.read_int64("id"),
            reader.read_string("customer"),
            reader.read_float64("amount"),
            reader.read_nullable_int64("discount"),
            reader.read_boolean("paid"),
            reader.read_compact("address"),
        )

    def write(self, writer: CompactWriter, obj: Order) -> None:
        writer.write_int64("id", obj.id)
        writer.write_string("customer", obj.customer)
        writer.write_float64("amount", obj.amount)
        writer.write_nullable_int64("discount", obj.discount)
        writer.write_boolean("paid", obj.paid)
        writer.write_compact("address", obj.address)

    def get_type_name(self) -> str:
        return "bench.Order"

    def get_class(self) -> type[Order]:
        return Order


def order(i: int) -> Order:
    return Order(
        i,
        f"customer-{i}",
        i * 0.25,
        None if i % 3 == 0 else i * 10,
        i % 2 == 0,
        Address(f"street {i}", "Zürich", 8000 + i % 1000),
    )


def main() -> None:
    parser = bench_parser(__doc__.split("\n\n")[0], repeat=2)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    rows = args.rows
    spark = bench_spark(
        "bench-imap-compact", master="local[2]", conf={"spark.python.authenticate.socketTimeout": "120s"}
    )
    client = HazelcastClient(
        cluster_name="jetconnect",
        cluster_members=["127.0.0.1:5701", "127.0.0.1:5702", "127.0.0.1:5703"],
        default_int_type=IntType.LONG,
        compact_serializers=[AddressSerializer(), OrderSerializer()],
    )
    df = spark.range(0, rows, numPartitions=4).selectExpr("id AS key", ORDER_SQL)
    objects = {i: order(i) for i in range(rows)}
    chunks = [dict(list(objects.items())[start : start + RAW_CHUNK]) for start in range(0, rows, RAW_CHUNK)]
    made: list[str] = []

    def fresh() -> str:
        # nojournal-*: the members keep no journal of these maps (hz.yaml), only their entries
        made.append(f"nojournal-bench-compact-{uuid.uuid4().hex[:8]}")
        return made[-1]

    def drop_written() -> None:
        """Destroy every map written so far: the members hold one map of N orders at a time."""
        for name in made:
            client.get_map(name).blocking().destroy()
        del made[:]

    def ours_put() -> None:
        sinks.map(
            fresh(),
            store=HAZELCAST,
            value_format="compact",
            value_compact_type_name="bench.Order",
            compact_type_names={"value.address": "bench.Address"},
        ).write(df)

    def raw_put() -> None:
        imap = client.get_map(fresh()).blocking()
        for chunk in chunks:  # a call per 100,000 entries: one of 1M starved the members' heartbeats here
            imap.put_all(chunk)

    def ours_read() -> None:
        read = sources.map(made[-1], store=HAZELCAST, schema=ORDER_SCHEMA, parallelism=4).read(spark)
        read.write.format("noop").mode("overwrite").save()

    def raw_read() -> None:
        entries = client.get_map(made[-1]).blocking().entry_set()
        assert len(entries) == rows, (len(entries), rows)
        assert isinstance(entries[0][1], Order), type(entries[0][1])

    def sql_read() -> None:
        mapping = made[-1].replace('"', '""')
        client.sql.execute(
            f'CREATE OR REPLACE MAPPING "{mapping}" (__key BIGINT, id BIGINT, customer VARCHAR, amount DOUBLE, '
            "discount BIGINT, paid BOOLEAN) TYPE IMap OPTIONS ('keyFormat' = 'bigint', 'valueFormat' = 'compact', "
            "'valueCompactTypeName' = 'bench.Order')"
        ).result()
        result = client.sql.execute(
            f'SELECT __key, id, customer, amount, discount, paid FROM "{mapping}"', cursor_buffer_size=65_536
        ).result()
        with result:
            got = sum(1 for row in result if row.get_object_with_index(0) is not None)
        assert got == rows

    # warm up Spark's task workers once, as the raw client is connected before its clock starts
    warm = fresh()
    sinks.map(
        warm,
        store=HAZELCAST,
        value_format="compact",
        value_compact_type_name="bench.Order",
        compact_type_names={"value.address": "bench.Address"},
    ).write(df.limit(1000))
    sources.map(warm, store=HAZELCAST, schema=ORDER_SCHEMA).read(spark).collect()
    drop_written()
    title = f"{rows:,} Compact Order objects on a 3-member Hazelcast cluster; Spark local[2], 4 partitions; ratio = theirs / ours"
    extra: dict[str, Any] = {}
    with Bench("imap-compact", args, results=args.results, title=title) as bench:
        try:
            with bench.measure("compact: write"):
                ours, raw = best_of_turns([ours_put, raw_put], args.repeat, args.warmup, between=drop_written)
            bench.add(
                Row(
                    "compact: write",
                    ours,
                    raw,
                    target=1.0,
                    note="raw: put_all of Order objects (100,000 a call), CompactSerializer",
                    extra=extra,
                )
            )
            assert client.get_map(made[-1]).blocking().size() == rows  # the reads read the map written last
            with bench.measure("compact: read"):
                ours, raw = best_of_turns([ours_read, raw_read], args.repeat, args.warmup)
            bench.add(
                Row(
                    "compact: read",
                    ours,
                    raw,
                    target=1.5,
                    note="raw: entry_set() with a CompactSerializer; ours: noop sink",
                )
            )
            with bench.measure("compact: read vs Hazelcast SQL"):
                ours, sql = best_of_turns([ours_read, sql_read], args.repeat, args.warmup)
            bench.add(
                Row(
                    "compact: read vs Hazelcast SQL",
                    ours,
                    sql,
                    target=None,
                    note="theirs: client.sql SELECT of the fields",
                )
            )
        finally:
            for name in made:
                client.get_map(name).blocking().destroy()
            client.shutdown()
    spark.stop()


if __name__ == "__main__":
    main()
