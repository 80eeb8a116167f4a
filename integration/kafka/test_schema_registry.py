"""Schema Registry formats through the real SparkSession, against Apache Kafka and a real registry.

The registry is Apicurio Registry 3.3.3's Confluent API (scripts/servers/schema-registry.sh), and
the other side of every exchange is confluent-kafka's own ``AvroSerializer`` / ``JSONSerializer``
/ ``ProtobufSerializer`` and their deserializers, with their defaults (the client given only a
``timeout``, since it has none by default). Records written by them are read exactly through
Spark, batch and streaming (with a restart from the checkpoint); what jetconnect writes, they
read exactly. The failure cases each have a test: a record that is not framed, an id the registry
does not know, a subject that does not exist, an incompatible schema change under a running
query, a column with no Avro type, and a registry that stops answering mid-stream.
"""

from __future__ import annotations

import datetime
import decimal
import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import message_factory
from pyspark.sql import functions as F

from jetconnect import sinks, sources
from jetconnect_kafka.errors import KafkaRegistryError, KafkaSourceError
from jetconnect_kafka.protobuf_format import file_descriptor
from jetconnect_kafka.registry_formats import forget_schemas

pytestmark = pytest.mark.spark

URL = "http://127.0.0.1:8081/apis/ccompat/v7"
UTC = datetime.UTC

#: An order as a Java service's Avro schema would have it: a nested record, an array, a nullable
#: union, an enum, a map, and the logical types decimal, timestamp-millis, date and uuid.
ORDER_V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "com.acme",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"]}},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "placed", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "counts", "type": {"type": "map", "values": "long"}},
        {
            "name": "ship_to",
            "type": {"type": "record", "name": "Address", "fields": [{"name": "city", "type": "string"}]},
        },
    ],
}
#: Version 2, backward compatible: a field added with a default.
ORDER_V2 = {**ORDER_V1, "fields": [*ORDER_V1["fields"], {"name": "channel", "type": "string", "default": "web"}]}


def order(i: int, channel: str | None = None) -> dict[str, Any]:
    record = {
        "id": i,
        "note": None if i % 3 == 0 else f"note {i} with 'quotes' and %",
        "status": ("NEW", "PAID", "SHIPPED")[i % 3],
        "price": decimal.Decimal(i) + decimal.Decimal("0.25"),
        "placed": datetime.datetime(2026, 1, 1, tzinfo=UTC) + datetime.timedelta(milliseconds=1001 * i),
        "day": datetime.date(2026, 1, 1) + datetime.timedelta(days=i),
        "ref": str(uuid.UUID(int=i)),
        "tags": [f"t{j}" for j in range(i % 4)],
        "counts": {f"k{j}": j * i for j in range(i % 3)},
        "ship_to": {"city": f"city{i}"},
    }
    if channel is not None:
        record["channel"] = channel
    return record


def as_read(record: dict[str, Any], channel: str = "web") -> dict[str, Any]:
    """What Spark gives for ``record`` read with ORDER_V2 as the reader schema."""
    return {
        **record,
        "placed": local(record["placed"]),
        "counts": sorted(record["counts"].items()),
        "channel": record.get("channel", channel),
    }


def local(stamp: datetime.datetime) -> datetime.datetime:
    """An aware time as PySpark's ``collect`` gives a timestamp: naive, in this process's time zone."""
    return stamp.astimezone().replace(tzinfo=None)


@pytest.fixture(scope="module")
def registry(server) -> SchemaRegistryClient:  # type: ignore[no-untyped-def]
    """Apicurio Registry on 127.0.0.1:8081 (scripts/servers/schema-registry.sh), as a confluent-kafka
    client sees it: a timeout (its default is none), nothing else."""
    server("schema-registry")
    return SchemaRegistryClient({"url": URL, "timeout": 10})


def produce(
    kafka, topic: str, values: list[bytes | None], partitions: int = 1, keys: list[bytes] | None = None
) -> None:  # type: ignore[no-untyped-def]
    producer = Producer({"bootstrap.servers": kafka.bootstrap})
    for i, value in enumerate(values):
        producer.produce(topic, value=value, key=keys[i] if keys else None, partition=i % partitions)
    assert producer.flush(30) == 0


def serialized(serializer: Any, topic: str, records: list[Any], field: str = MessageField.VALUE) -> list[bytes]:
    ctx = SerializationContext(topic, field)
    return [serializer(r, ctx) for r in records]


def value_dict(row: Any) -> dict[str, Any]:
    return row.value.asDict(recursive=True)


def avro_source(kafka, topic: str, **options: Any) -> Any:  # type: ignore[no-untyped-def]
    return sources.kafka(
        bootstrap_servers=kafka.bootstrap,
        topics=[topic],
        value_format="avro-confluent",
        schema_registry_url=URL,
        **options,
    )


# --- reading what confluent-kafka's serializers wrote ----------------------------------------------


def test_avro_written_by_confluents_serializer_in_two_versions_reads_exactly_batch_and_stream(
    spark, kafka, registry, tmp_path
) -> None:
    topic = kafka.topic(partitions=2, prefix="avro-cf")
    v1 = AvroSerializer(registry, json.dumps(ORDER_V1))
    produce(kafka, topic, serialized(v1, topic, [order(i) for i in range(40)]), partitions=2)
    v2 = AvroSerializer(registry, json.dumps(ORDER_V2))
    produce(kafka, topic, serialized(v2, topic, [order(i, "shop") for i in range(40, 60)]), partitions=2)
    ids = {registry.get_version(f"{topic}-value", v).schema_id for v in (1, 2)}
    assert len(ids) == 2  # two schema versions, two ids, in one topic

    df = avro_source(kafka, topic).read(spark)
    assert df.schema["value"].dataType.simpleString() == (
        "struct<id:bigint,note:string,status:string,price:decimal(10,2),placed:timestamp,day:date,ref:string,"
        "tags:array<string>,counts:map<string,bigint>,ship_to:struct<city:string>,channel:string>"
    )
    got = sorted((value_dict(r) for r in df.collect()), key=lambda v: v["id"])
    expected = [as_read(order(i)) for i in range(40)] + [as_read(order(i, "shop")) for i in range(40, 60)]
    assert [{**g, "counts": sorted(g["counts"].items())} for g in got] == expected

    # a stream, stopped after what is there and restarted from its checkpoint, reads each record once
    checkpoint = str(tmp_path / "checkpoint")
    table = f"avro_cf_{uuid.uuid4().hex[:8]}"

    def run_to_end() -> None:
        stream = avro_source(kafka, topic).read_stream(spark).select("partition", "offset", "value.id")
        query = (
            stream.writeStream.format("parquet")
            .option("path", str(tmp_path / table))
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        assert query.awaitTermination(240)
        assert query.exception() is None

    run_to_end()
    produce(kafka, topic, serialized(v1, topic, [order(i) for i in range(60, 75)]), partitions=2)
    run_to_end()
    rows = spark.read.parquet(str(tmp_path / table)).collect()
    assert sorted(r.id for r in rows) == list(range(75))
    assert len({(r.partition, r.offset) for r in rows}) == 75


def test_a_named_version_is_the_reader_schema_and_a_newer_writer_resolves_to_it(spark, kafka, registry) -> None:
    topic = kafka.topic(prefix="avro-ver")
    produce(kafka, topic, serialized(AvroSerializer(registry, json.dumps(ORDER_V1)), topic, [order(1)]))
    produce(kafka, topic, serialized(AvroSerializer(registry, json.dumps(ORDER_V2)), topic, [order(2, "shop")]))
    df = avro_source(kafka, topic, schema_version=1).read(spark)
    assert "channel" not in df.schema["value"].dataType.fieldNames()  # the field v2 added is left out
    assert sorted(r.value.id for r in df.collect()) == [1, 2]


def test_json_schema_and_protobuf_written_by_confluents_serializers_read_exactly(spark, kafka, registry) -> None:
    topic = kafka.topic(prefix="json-cf")
    schema = {
        "type": "object",
        "title": "Reading",
        "properties": {
            "sensor": {"type": "string"},
            "value": {"type": "number"},
            "count": {"type": "integer"},
            "ok": {"type": "boolean"},
            "labels": {"type": "array", "items": {"type": "string"}},
            "where": {"type": "object", "properties": {"room": {"type": ["null", "string"]}}},
        },
        "required": ["sensor"],
    }
    records = [
        {
            "sensor": f"s{i}",
            "value": i / 4,
            "count": i,
            "ok": i % 2 == 0,
            "labels": ["a"] * (i % 3),
            "where": {"room": None},
        }
        for i in range(10)
    ]
    produce(kafka, topic, serialized(JSONSerializer(json.dumps(schema), registry), topic, records))
    df = sources.kafka(
        bootstrap_servers=kafka.bootstrap, topics=[topic], value_format="json-schema-confluent", schema_registry_url=URL
    ).read(spark)
    assert sorted((value_dict(r) for r in df.collect()), key=lambda v: v["count"]) == records

    ptopic = kafka.topic(prefix="proto-cf")
    proto = """syntax = "proto3";
package com.acme;
import "google/protobuf/timestamp.proto";
message Shipment {
  int64 id = 1;
  optional string carrier = 2;
  enum Kind { PARCEL = 0; PALLET = 1; }
  Kind kind = 3;
  google.protobuf.Timestamp sent = 4;
  repeated int32 boxes = 5;
  map<string, string> attrs = 6;
  message Stop { string city = 1; uint64 seq = 2; }
  repeated Stop stops = 7;
}
"""
    Shipment = message_factory.GetMessageClass(file_descriptor(proto).message_types_by_name["Shipment"])
    messages = []
    for i in range(10):
        m = Shipment(id=i, kind=i % 2, boxes=list(range(i % 3)), attrs={"k": str(i)})
        if i % 2:
            m.carrier = f"carrier{i}"
        m.sent.FromDatetime(datetime.datetime(2026, 2, 1, tzinfo=UTC) + datetime.timedelta(seconds=i))
        m.stops.add(city=f"c{i}", seq=2**64 - 1 - i)
        messages.append(m)
    produce(
        kafka,
        ptopic,
        serialized(ProtobufSerializer(Shipment, registry, {"use.deprecated.format": False}), ptopic, messages),
    )
    df = sources.kafka(
        bootstrap_servers=kafka.bootstrap, topics=[ptopic], value_format="protobuf-confluent", schema_registry_url=URL
    ).read(spark)
    got = sorted((value_dict(r) for r in df.collect()), key=lambda v: v["id"])
    assert got == [
        {
            "id": i,
            "carrier": f"carrier{i}" if i % 2 else None,  # optional: presence, so unset is null
            "kind": ("PARCEL", "PALLET")[i % 2],
            "sent": local(datetime.datetime(2026, 2, 1, tzinfo=UTC) + datetime.timedelta(seconds=i)),
            "boxes": list(range(i % 3)),
            "attrs": {"k": str(i)},
            "stops": [{"city": f"c{i}", "seq": decimal.Decimal(2**64 - 1 - i)}],
        }
        for i in range(10)
    ]


# --- what jetconnect writes, confluent-kafka's deserializers read ----------------------------------


def _orders_df(spark, n: int):  # type: ignore[no-untyped-def]
    return spark.range(n).select(
        F.col("id").alias("key"),
        F.struct(
            F.col("id"),
            F.when(F.col("id") % 2 == 0, F.concat(F.lit("o'%@"), F.col("id").cast("string"))).alias("note"),
            F.array(F.col("id").cast("string"), F.lit("x")).alias("tags"),
            F.create_map(F.lit("n"), F.col("id")).alias("counts"),
            F.struct((F.col("id") * 2).alias("box")).alias("detail"),
            F.timestamp_seconds(F.col("id") + 1_700_000_000).alias("at"),
        ).alias("value"),
    )


def _expected(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "note": f"o'%@{i}" if i % 2 == 0 else None,
        "tags": [str(i), "x"],
        "counts": {"n": i},
        "detail": {"box": 2 * i},
    }


@pytest.mark.parametrize("fmt", ["avro-confluent", "json-schema-confluent", "protobuf-confluent"])
def test_what_the_sink_writes_confluents_deserializers_read_exactly(spark, kafka, registry, fmt) -> None:
    topic = kafka.topic(partitions=2, prefix=fmt.split("-")[0] + "-out")
    sinks.kafka(
        bootstrap_servers=kafka.bootstrap, topic=topic, key_format="long", value_format=fmt, schema_registry_url=URL
    ).write(_orders_df(spark, 30))
    records = kafka.read_all(topic)
    registered = registry.get_latest_version(f"{topic}-value")
    ctx = SerializationContext(topic, MessageField.VALUE)
    if fmt == "avro-confluent":
        read = AvroDeserializer(registry)
    elif fmt == "json-schema-confluent":
        read = JSONDeserializer(None, schema_registry_client=registry)  # validates against the writer's schema
    else:
        cls = message_factory.GetMessageClass(
            file_descriptor(registered.schema.schema_str).message_types_by_name["topLevelRecord"]
        )
        deserializer = ProtobufDeserializer(cls, {"use.deprecated.format": False})

        def read(value: bytes, ctx: SerializationContext) -> dict[str, Any]:
            m = deserializer(value, ctx)
            return {
                "id": m.id,
                "note": m.note if m.HasField("note") else None,
                "tags": list(m.tags),
                "counts": dict(m.counts),
                "detail": {"box": m.detail.box},
                "at": m.at.ToDatetime(tzinfo=UTC),
            }

    got = {}
    for _, _, key, value in records:
        assert value[0] == 0 and int.from_bytes(value[1:5], "big") == registered.schema_id
        decoded = read(value, ctx)
        got[int.from_bytes(key, "big", signed=True)] = decoded  # key_format long: LongSerializer's 8 bytes
    assert sorted(got) == list(range(30))
    for i, decoded in got.items():
        at = decoded.pop("at")
        assert decoded == _expected(i)
        stamp = datetime.datetime.fromtimestamp(1_700_000_000 + i, UTC)
        assert at == (stamp.isoformat() if fmt == "json-schema-confluent" else stamp)
    back = sources.kafka(
        bootstrap_servers=kafka.bootstrap, topics=[topic], key_format="long", value_format=fmt, schema_registry_url=URL
    ).read(spark)
    assert sorted(r.key for r in back.collect()) == list(range(30))


def test_keys_in_avro_confluent_both_ways_under_the_topics_key_subject(spark, kafka, registry) -> None:
    topic = kafka.topic(prefix="avro-key")
    keys = serialized(
        AvroSerializer(registry, '"string"'), topic, [f"customer-{i}" for i in range(5)], MessageField.KEY
    )
    produce(kafka, topic, [b"v"] * 5, keys=keys)
    df = sources.kafka(
        bootstrap_servers=kafka.bootstrap, topics=[topic], key_format="avro-confluent", schema_registry_url=URL
    ).read(spark)
    assert df.schema["key"].dataType.simpleString() == "string"
    assert sorted(r.key for r in df.collect()) == [f"customer-{i}" for i in range(5)]

    out = kafka.topic(prefix="avro-key-out")
    sinks.kafka(
        bootstrap_servers=kafka.bootstrap, topic=out, key_format="avro-confluent", schema_registry_url=URL
    ).write(df.select("key", "value"))
    assert registry.get_latest_version(f"{out}-key").schema.schema_str == '"string"'
    read = AvroDeserializer(registry)
    ctx = SerializationContext(out, MessageField.KEY)
    assert sorted(read(k, ctx) for _, _, k, _ in kafka.read_all(out)) == [f"customer-{i}" for i in range(5)]


def test_a_stream_writes_exactly_once_through_a_restart_and_a_second_schema_version(
    spark, kafka, registry, tmp_path
) -> None:
    source_topic = kafka.topic(partitions=2, prefix="sr-in")
    target = kafka.topic(partitions=2, prefix="sr-out")
    v1 = AvroSerializer(registry, json.dumps(ORDER_V1))
    produce(kafka, source_topic, serialized(v1, source_topic, [order(i) for i in range(30)]), partitions=2)
    checkpoint = str(tmp_path / "checkpoint")

    def run_to_end() -> None:
        stream = (
            avro_source(kafka, source_topic)
            .read_stream(spark)
            .select(F.struct("value.id", "value.status", "value.price", "value.ship_to").alias("value"))
        )
        query = sinks.kafka(
            bootstrap_servers=kafka.bootstrap, topic=target, value_format="avro-confluent", schema_registry_url=URL
        ).write_stream(stream, checkpoint_location=checkpoint, trigger={"availableNow": True})
        assert query.awaitTermination(240)
        assert query.exception() is None

    run_to_end()
    # records of version 2 arrive; the restarted query still reads with version 1 (its reader
    # schema is the latest version when it starts, and v2 only adds a field it does not select)
    v2 = AvroSerializer(registry, json.dumps(ORDER_V2))
    produce(kafka, source_topic, serialized(v2, source_topic, [order(i, "app") for i in range(30, 50)]), partitions=2)
    run_to_end()
    read = AvroDeserializer(registry)
    ctx = SerializationContext(target, MessageField.VALUE)
    got = [read(v, ctx) for *_, v in kafka.read_all(target)]
    assert sorted(g["id"] for g in got) == list(range(50))
    assert all(g["price"] == decimal.Decimal(g["id"]) + decimal.Decimal("0.25") for g in got)


# --- off the happy path ----------------------------------------------------------------------------


def test_unframed_cut_and_unknown_id_records_fail_naming_the_record_or_become_null(spark, kafka, registry) -> None:
    topic = kafka.topic(prefix="avro-bad")
    good = serialized(AvroSerializer(registry, json.dumps(ORDER_V1)), topic, [order(1), order(2)])
    unknown_id = b"\x00" + (2**31 - 7).to_bytes(4, "big") + good[0][5:]
    bad = [b"\x01" + good[0][1:], b"\x00\x00\x01", unknown_id, good[1][:-4]]
    produce(kafka, topic, [good[0], *bad, None, good[1]])

    with pytest.raises(
        Exception, match=rf"topic '{topic}' partition 0 offset 1 as avro-confluent: value starts with byte 1"
    ):
        avro_source(kafka, topic).read(spark).collect()
    for offset, says in (
        (2, "value has 3 byte"),
        (3, rf"schema id {2**31 - 7} is not in the schema registry at {URL}"),
        (4, r"schema id \d+: the payload does not decode"),
    ):
        source = avro_source(kafka, topic, starting_offsets=json.dumps({f"{topic}:0": offset}))
        with pytest.raises(KafkaSourceError, match=rf"offset {offset} as avro-confluent: {says}"):
            list(source.read_split(source.splits()[0]))

    rows = sorted(avro_source(kafka, topic, on_bad_record="null").read(spark).collect(), key=lambda r: r.offset)
    assert [r.value.id if r.value else None for r in rows] == [1, None, None, None, None, None, 2]
    assert [r._corrupt_value for r in rows] == [None, *bad, None, None]  # a null record is no bad record


def test_a_url_that_is_no_registry_api_fails_the_read_rather_than_nulling_every_record(kafka, registry) -> None:
    topic = kafka.topic(prefix="avro-wrong-url")
    produce(kafka, topic, serialized(AvroSerializer(registry, json.dumps(ORDER_V1)), topic, [order(1)]))
    source = sources.kafka(
        bootstrap_servers=kafka.bootstrap,
        topics=[topic],
        value_format="avro-confluent",
        schema_registry_url="http://127.0.0.1:8081/apis",  # Apicurio without /ccompat/v7: 404 to everything
        registry_schema=json.dumps(ORDER_V1),  # so the driver asks the registry nothing
        on_bad_record="null",
    )
    with pytest.raises(
        KafkaRegistryError, match=r"answers HTTP 404 to GET /subjects: it is no Schema Registry's Confluent API"
    ):
        list(source.read_split(source.splits()[0]))


def test_a_subject_that_does_not_exist_is_named_with_what_the_registry_has(spark, kafka, registry) -> None:
    topic = kafka.topic(prefix="no-subject")
    with pytest.raises(Exception, match=rf"KafkaRegistryError: .* has no subject '{topic}-value' \(it has subjects"):
        avro_source(kafka, topic).read(spark)
    with pytest.raises(
        Exception, match="needs a Schema Registry subject, and the source reads several topics: give option 'subject'"
    ):
        sources.kafka(
            bootstrap_servers=kafka.bootstrap,
            topics=[topic, topic + "x"],
            value_format="avro-confluent",
            schema_registry_url=URL,
        ).schema()


def test_an_incompatible_schema_change_under_a_running_query_fails_it_naming_the_record(
    spark, kafka, registry, tmp_path
) -> None:
    topic = kafka.topic(prefix="avro-break")
    v1 = {
        "type": "record",
        "name": "Reading",
        "fields": [{"name": "id", "type": "long"}, {"name": "temp", "type": "double"}],
    }
    produce(
        kafka,
        topic,
        serialized(AvroSerializer(registry, json.dumps(v1)), topic, [{"id": i, "temp": 1.5} for i in range(5)]),
    )
    stream = avro_source(kafka, topic).read_stream(spark).select("offset", "value.*")
    table = f"break_{uuid.uuid4().hex[:8]}"
    query = (
        stream.writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", str(tmp_path / "c"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:
        deadline = time.monotonic() + 120
        while spark.table(table).count() < 5 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert spark.table(table).count() == 5
        # not backward compatible: 'temp' becomes a string with no default (Apicurio's default rule, none, lets it in)
        v2 = {
            "type": "record",
            "name": "Reading",
            "fields": [{"name": "id", "type": "long"}, {"name": "temp", "type": "string"}],
        }
        produce(kafka, topic, serialized(AvroSerializer(registry, json.dumps(v2)), topic, [{"id": 5, "temp": "hot"}]))
        with pytest.raises(Exception) as failure:  # a failed query raises from awaitTermination
            query.awaitTermination(120)
        error = str(failure.value)
        assert f"topic '{topic}' partition 0 offset 5 as avro-confluent: schema id" in error
        assert "does not resolve to the reader schema" in error
    finally:
        query.stop()
    assert sorted(r.id for r in spark.table(table).collect()) == list(range(5))  # nothing of v2 slipped in


def test_a_column_with_no_avro_type_is_refused_before_anything_is_written(spark, kafka, registry) -> None:
    topic = kafka.topic(prefix="no-avro")
    df = spark.range(3).select(F.struct(F.create_map(F.col("id"), F.lit("x")).alias("by_id")).alias("value"))
    with pytest.raises(
        Exception,
        match="SchemaError: kafka sink: value as avro-confluent: field .by_id. is a map with bigint keys; Avro maps have string keys",
    ):
        sinks.kafka(
            bootstrap_servers=kafka.bootstrap, topic=topic, value_format="avro-confluent", schema_registry_url=URL
        ).write(df)
    assert kafka.read_all(topic) == []


def test_a_schema_the_subjects_compatibility_rule_refuses_fails_the_write_before_any_row(
    spark, kafka, registry
) -> None:
    topic = kafka.topic(prefix="avro-compat")
    sink = sinks.kafka(
        bootstrap_servers=kafka.bootstrap, topic=topic, value_format="avro-confluent", schema_registry_url=URL
    )
    sink.write(spark.range(2).select(F.struct(F.col("id"), F.lit(1.5).alias("temp")).alias("value")))
    registry.set_compatibility(f"{topic}-value", "BACKWARD")
    # temp: double -> string cannot read the old records: the registry refuses it
    incompatible = spark.range(2).select(F.struct(F.col("id"), F.lit("hot").alias("temp")).alias("value"))
    with pytest.raises(
        Exception,
        match=rf"KafkaRegistryError: .*registering a AVRO schema under subject '{topic}-value' failed: HTTP 409",
    ):
        sink.write(incompatible)
    assert len(kafka.read_all(topic)) == 2
    # a backward-compatible change (a field added with a default: a nullable column) is taken
    sink.write(
        spark.range(2).select(
            F.struct(F.col("id"), F.lit(2.5).alias("temp"), F.lit(None).cast("string").alias("room")).alias("value")
        )
    )
    assert len(registry.get_versions(f"{topic}-value")) == 2


def test_auto_register_off_writes_with_the_subjects_schema_or_says_it_is_missing(spark, kafka, registry) -> None:
    topic = kafka.topic(prefix="no-register")
    sink = sinks.kafka(
        bootstrap_servers=kafka.bootstrap,
        topic=topic,
        value_format="avro-confluent",
        schema_registry_url=URL,
        auto_register=False,
    )
    df = spark.range(4).select(F.struct(F.col("id"), F.lit(20.5).alias("temp")).alias("value"))
    with pytest.raises(Exception, match=rf"KafkaRegistryError: .* has no subject .{topic}-value."):
        sink.write(df)
    v1 = {
        "type": "record",
        "name": "Reading",
        "fields": [{"name": "id", "type": "long"}, {"name": "temp", "type": "double"}],
    }
    schema_id = registry.register_schema(f"{topic}-value", Schema(json.dumps(v1), "AVRO"))
    sink.write(df)
    read = AvroDeserializer(registry)
    ctx = SerializationContext(topic, MessageField.VALUE)
    records = kafka.read_all(topic)
    assert {int.from_bytes(v[1:5], "big") for *_, v in records} == {schema_id}
    assert sorted(read(v, ctx)["id"] for *_, v in records) == [0, 1, 2, 3]
    assert len(registry.get_versions(f"{topic}-value")) == 1  # nothing registered


def test_spark_string_options_carry_registry_settings_and_their_secret_shows_nowhere(spark, kafka, registry) -> None:
    topic = kafka.topic(prefix="avro-opts")
    produce(kafka, topic, serialized(AvroSerializer(registry, json.dumps(ORDER_V1)), topic, [order(7)]))
    canary = "c@n#a/r%y'\\x"
    df = (
        spark.read.format("jetconnect.kafka")
        .option("bootstrap_servers", kafka.bootstrap)
        .option("topics", topic)
        .option("value_format", "avro-confluent")
        .option("schema_registry_url", URL)
        .option("schema_registry.basic.auth.user.info", f"reader:{canary}")  # Apicurio here runs without auth
        .option("schema_registry.timeout", "5")
        .load()
    )
    assert [r.value.id for r in df.collect()] == [7]
    plan = df._jdf.queryExecution().toString()
    assert canary not in plan and canary not in repr(df.schema)
    # a registry that does not answer: the error names it, never the password
    dead = sources.kafka(
        bootstrap_servers=kafka.bootstrap,
        topics=[topic],
        value_format="avro-confluent",
        schema_registry_url="http://127.0.0.1:9/apis/ccompat/v7",
        schema_registry_config={"basic.auth.user.info": f"reader:{canary}"},
        broker_timeout_s=1,
    )
    with pytest.raises(KafkaRegistryError, match="did not answer for 1 s") as failure:
        dead.schema()
    assert canary not in str(failure.value) and canary not in repr(dead)


# --- a registry that stops answering mid-stream ------------------------------------------------------


class Proxy:
    """A TCP relay from a port of its own to the registry: stopping it is the registry going away
    for this test's readers only (the shared registry and its in-memory schemas stay up)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.listener.close()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/apis/ccompat/v7"

    def start(self) -> None:
        self._stop.clear()
        self.listener = socket.create_server(("127.0.0.1", self.port))
        self.listener.settimeout(0.2)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        self.listener.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                continue
            upstream = socket.create_connection(self.target, timeout=10)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, a: socket.socket, b: socket.socket) -> None:
        try:
            while not self._stop.is_set() and (data := a.recv(65536)):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.close()
                except OSError:
                    pass


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    relay = Proxy(("127.0.0.1", 8081))
    relay.start()
    yield relay
    relay.stop()


def test_a_registry_down_mid_stream_is_retried_then_a_clear_error_and_nothing_is_skipped(
    kafka, registry, proxy
) -> None:
    topic = kafka.topic(prefix="avro-down")
    produce(
        kafka, topic, serialized(AvroSerializer(registry, json.dumps(ORDER_V1)), topic, [order(i) for i in range(3)])
    )

    def through_proxy() -> Any:
        return sources.kafka(
            bootstrap_servers=kafka.bootstrap,
            topics=[topic],
            value_format="avro-confluent",
            schema_registry_url=proxy.url,
            broker_timeout_s=6,
        )

    source = through_proxy()
    source.schema()  # planned while the registry answers
    start = source.initial_offset()
    # records of a version this process has not fetched yet, read while the registry is away
    produce(
        kafka,
        topic,
        serialized(AvroSerializer(registry, json.dumps(ORDER_V2)), topic, [order(i, "x") for i in range(3, 6)]),
    )
    end = source.latest_offset(start, None)
    [range_] = source.ranges(start, end)
    proxy.stop()
    threading.Timer(2.0, proxy.start).start()  # back within the deadline: the read goes on
    rows = [r for batch in source.read_range(range_) for r in batch.to_pylist()]
    assert [r["value"]["id"] for r in rows] == list(range(6))

    forget_schemas()  # a new query, in fresh workers, which know no schema
    source = through_proxy()
    source.schema()
    proxy.stop()  # gone for good: after the deadline, an error that says so, not a skipped record
    began = time.monotonic()
    with pytest.raises(KafkaRegistryError, match=r"fetching schema id \d+ failed .* did not answer for 6 s"):
        list(source.read_range(range_))
    assert 5 < time.monotonic() - began < 30


def test_a_stream_lives_through_a_registry_outage_within_the_deadline_and_fails_clearly_after_it(
    spark, kafka, registry, proxy, tmp_path
) -> None:
    topic = kafka.topic(prefix="avro-outage")
    write = AvroSerializer(registry, json.dumps(ORDER_V1))
    produce(kafka, topic, serialized(write, topic, [order(i) for i in range(5)]))
    source = sources.kafka(
        bootstrap_servers=kafka.bootstrap,
        topics=[topic],
        value_format="avro-confluent",
        schema_registry_url=proxy.url,
        broker_timeout_s=10,
    )
    table = f"outage_{uuid.uuid4().hex[:8]}"
    query = (
        source.read_stream(spark)
        .select("offset", "value.id")
        .writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", str(tmp_path / "c"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )

    def ids(count: int) -> list[int]:
        deadline = time.monotonic() + 120
        while spark.table(table).count() < count and time.monotonic() < deadline and query.isActive:
            time.sleep(0.5)
        return sorted(r.id for r in spark.table(table).collect())

    try:
        assert ids(5) == list(range(5))
        proxy.stop()  # the registry goes away; records of a version no worker has fetched arrive
        produce(
            kafka,
            topic,
            serialized(AvroSerializer(registry, json.dumps(ORDER_V2)), topic, [order(i, "x") for i in range(5, 10)]),
        )
        time.sleep(3)
        proxy.start()  # back within broker_timeout_s: the query goes on, nothing skipped
        assert ids(10) == list(range(10))
        proxy.stop()  # and gone for good, with another new version arriving
        v3 = {**ORDER_V2, "fields": [*ORDER_V2["fields"], {"name": "rank", "type": "int", "default": 0}]}
        produce(
            kafka, topic, serialized(AvroSerializer(registry, json.dumps(v3)), topic, [{**order(10, "x"), "rank": 1}])
        )
        with pytest.raises(
            Exception,
            match=r"KafkaRegistryError: kafka: schema registry at .*fetching schema id \d+ failed .*did not answer for 10 s",
        ):
            query.awaitTermination(180)
    finally:
        query.stop()
    assert ids(10) == list(range(10))  # the record the registry could not explain is not there, nor skipped past
