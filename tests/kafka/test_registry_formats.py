"""The Schema Registry wire format, Kafka's Java serializer formats and the schema mappings, without a server.

The registry itself (Apicurio) and confluent-kafka's serializers are in
integration/kafka/test_schema_registry.py; here the pieces that need neither: framing, message
indexes, the fixed-width formats, JSON Schema and Protobuf schemas from Spark types and back, the
registry client's settings and secrets, and the options that name what is missing.
"""

from __future__ import annotations

import struct

import pyarrow as pa
import pytest
from pyspark.sql.types import (
    ArrayType,
    DecimalType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
)

from jetconnect.errors import OptionError, SchemaError
from jetconnect_kafka import wire
from jetconnect_kafka.java_types import java_format
from jetconnect_kafka.json_schemas import from_spark_type, to_spark_type
from jetconnect_kafka.protobuf_format import file_descriptor, proto_text, spark_type_of
from jetconnect_kafka.schema_registry import Registry, split_registry_options
from jetconnect_kafka.serde import DecodeError, key_format, value_format
from jetconnect_kafka.sink import KafkaSink
from jetconnect_kafka.source import KafkaSource

URL = "http://127.0.0.1:8081/apis/ccompat/v7"


def test_frames_split_as_confluent_writes_them_and_bad_ones_say_why() -> None:
    framed = wire.frame(258, b"payload")
    assert framed == b"\x00\x00\x00\x01\x02payload"
    schema_id, payload = wire.split(framed)
    assert (schema_id, bytes(payload)) == (258, b"payload")
    with pytest.raises(wire.FrameError, match="starts with byte 1, not the Schema Registry magic byte 0"):
        wire.split(b"\x01\x00\x00\x00\x01x")
    with pytest.raises(wire.FrameError, match="has 3 byte"):
        wire.split(b"\x00\x00\x01")
    assert wire.split(b"\x00\x00\x00\x00\x07") == (7, memoryview(b""))  # an empty payload is a frame


@pytest.mark.parametrize("indexes", [[0], [1], [0, 2], [3, 0, 1], [70]])
def test_protobuf_message_indexes_round_trip(indexes: list[int]) -> None:
    encoded = wire.message_indexes_bytes(indexes)
    assert encoded != b"\x00" or indexes == [0]  # [0] is the single byte 0, as Confluent writes it
    read, rest = wire.read_message_indexes(memoryview(encoded + b"msg"))
    assert (read, bytes(rest)) == (indexes, b"msg")
    # Confluent's zigzag varints: [1] is count 1 (2) then index 1 (2)
    assert wire.message_indexes_bytes([1]) == b"\x02\x02"
    with pytest.raises(wire.FrameError):
        wire.read_message_indexes(memoryview(b"\x04\x02"))  # two indexes promised, one given


@pytest.mark.parametrize(
    ("name", "packing", "values"),
    [
        ("short", ">h", [0, -1, -32768, 32767]),
        ("integer", ">i", [0, -1, -(2**31), 2**31 - 1]),
        ("long", ">q", [0, -1, -(2**63), 2**63 - 1]),
        ("float", ">f", [0.0, -1.5, 3.25]),
        ("double", ">d", [0.0, -1.5, 1e300]),
    ],
)
def test_java_fixed_width_formats_are_big_endian_and_null_for_null(name: str, packing: str, values: list) -> None:
    fmt = java_format(name)
    raw = [struct.pack(packing, v) for v in values]
    assert fmt.decode([*raw, None]).to_pylist() == [*values, None]
    assert fmt.encode(pa.array([*values, None], type=fmt.arrow)) == [*raw, None]
    with pytest.raises(DecodeError) as err:
        fmt.decode([raw[0], raw[0] + b"\x00"])
    assert err.value.index == 1 and f"has {fmt.width + 1} bytes" in err.value.reason
    assert fmt.decode([]).to_pylist() == []


def test_a_value_out_of_the_java_types_range_is_refused_not_wrapped() -> None:
    with pytest.raises(ValueError, match="does not fit Kafka's ShortSerializer"):
        java_format("short").encode(pa.array([40_000]))


def test_uuid_is_text_as_uuidserializer_writes_it() -> None:
    fmt = java_format("uuid")
    text = "123e4567-e89b-12d3-a456-426614174000"
    assert fmt.decode([text.encode(), None]).to_pylist() == [text, None]
    assert fmt.encode(pa.array([text.upper()])) == [text.encode()]  # canonical, as UUID.toString()
    with pytest.raises(DecodeError, match="is not a UUID"):
        fmt.decode([b"not-a-uuid"])


def test_json_schema_to_spark_and_back() -> None:
    schema = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "name": {"type": ["null", "string"]},
            "at": {"type": "string", "format": "date-time"},
            "tags": {"type": "array", "items": {"$ref": "#/definitions/tag"}},
            "attrs": {"type": "object", "additionalProperties": {"type": "number"}},
            "inner": {"oneOf": [{"type": "null"}, {"type": "object", "properties": {"ok": {"type": "boolean"}}}]},
        },
        "definitions": {"tag": {"type": "string"}},
    }
    spark = to_spark_type(schema, "test")
    assert spark.simpleString() == (
        "struct<id:bigint,name:string,at:string,tags:array<string>,attrs:map<string,double>,inner:struct<ok:boolean>>"
    )
    with pytest.raises(SchemaError, match="field 'u' is a oneOf of 2 schemas"):
        to_spark_type(
            {"type": "object", "properties": {"u": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}}, "t"
        )
    with pytest.raises(SchemaError, match="refers to itself"):
        to_spark_type({"type": "object", "properties": {"n": {"$ref": "#"}}}, "t")
    back = from_spark_type(
        StructType([StructField("id", LongType(), False), StructField("tags", ArrayType(StringType(), True))]),
        "R",
        "sink",
    )
    assert back["required"] == ["id"] and back["properties"]["tags"]["oneOf"][0] == {"type": "null"}
    with pytest.raises(SchemaError, match="column 'price' is decimal.* which JSON cannot carry exactly"):
        from_spark_type(StructType([StructField("price", DecimalType(10, 2))]), "R", "sink")


def test_a_proto_schema_from_spark_compiles_and_maps_back() -> None:
    struct_type = StructType(
        [
            StructField("id", LongType(), False),
            StructField("name", StringType(), True),
            StructField("tags", ArrayType(StringType(), False), True),
            StructField("attrs", MapType(StringType(), LongType(), False), True),
            StructField("inner", StructType([StructField("deep_one", StringType(), True)]), True),
        ]
    )
    text = proto_text(struct_type, "sink")
    assert "optional string name = 2;" in text and "int64 id = 1;" in text and "message Inner {" in text
    message = file_descriptor(text).message_types_by_name["topLevelRecord"]
    assert spark_type_of(message).simpleString() == (
        "struct<id:bigint,name:string,tags:array<string>,attrs:map<string,bigint>,inner:struct<deep_one:string>>"
    )
    for bad, says in (
        (StructField("a b", LongType()), "no Protobuf field name"),
        (StructField("d", DecimalType(5, 1)), "no Protobuf type here"),
        (StructField("t", TimestampNTZType()), "no Protobuf type here"),
        (StructField("aa", ArrayType(ArrayType(LongType()))), "no repeated of repeated"),
    ):
        with pytest.raises(SchemaError, match=says):
            proto_text(StructType([bad]), "sink")
    with pytest.raises(SchemaError, match="not a .proto schema protoc compiles"):
        file_descriptor('syntax = "proto3"; message M { int64 id = 1; bogus x = 2; }')


def test_registry_settings_from_spark_options_and_secrets_kept_out() -> None:
    extra = {"schema_registry.basic.auth.user.info": "u:p@ss%w0rd", "schema_registry.timeout": "5", "linger.ms": "5"}
    settings = split_registry_options(extra, {"max.retries": "2"})
    assert extra == {"linger.ms": "5"}  # librdkafka never sees them
    registry = Registry(URL, settings, 12)
    assert registry.settings() == {"url": URL, "timeout": 5.0, "max.retries": 2, "basic.auth.user.info": "u:p@ss%w0rd"}
    assert "p@ss%w0rd" in registry.secrets() and "p@ss%w0rd" not in repr(registry)
    assert "s3cret" not in repr(Registry("http://u:s3cret@registry:8081", {}, 1))
    with pytest.raises(OptionError, match="must be an http:// or https:// URL"):
        Registry("registry:8081", {}, 1)
    with pytest.raises(OptionError, match="must be a number"):
        Registry(URL, {"timeout": "soon"}, 1).settings()


def test_formats_name_what_they_are_missing() -> None:
    with pytest.raises(OptionError, match="value_format 'avro-confluent' needs option 'schema_registry_url'"):
        value_format("avro-confluent")
    with pytest.raises(OptionError, match="'key_format' must be one of .*avro-confluent"):
        key_format("avro")
    with pytest.raises(OptionError, match="option 'subject' is for a Schema Registry format"):
        KafkaSource(bootstrap_servers="b:9092", topics=["t"], subject="s")
    with pytest.raises(OptionError, match="'on_bad_record' must be fail or null"):
        KafkaSource(bootstrap_servers="b:9092", topics=["t"], on_bad_record="skip")
    with pytest.raises(OptionError, match="'schema_version' must be a version number"):
        KafkaSource(
            bootstrap_servers="b:9092",
            topics=["t"],
            value_format="avro-confluent",
            schema_registry_url=URL,
            schema_version=0,
        )
    sink = KafkaSink(bootstrap_servers="b:9092", value_format="avro-confluent", schema_registry_url=URL)
    with pytest.raises(OptionError, match="option 'topic' is not set .*: give option 'subject'"):
        sink.check_schema(StructType([StructField("value", LongType()), StructField("topic", StringType())]))
    with pytest.raises(OptionError, match="record_fn makes each record's bytes itself"):
        KafkaSink(bootstrap_servers="b:9092", topic="t", key_format="long", record_fn=lambda row: row)
    # nothing asks the registry before a schema is needed: building a source or sink is free
    KafkaSource(
        bootstrap_servers="b:9092",
        topics=["t"],
        value_format="protobuf-confluent",
        schema_registry_url="http://127.0.0.1:9",
    )


def _avro_read(reader: dict, writer: dict, record: dict) -> dict:
    """``record`` written with ``writer`` and read with ``reader`` as avro-confluent reads it."""
    import io
    import json

    import fastavro
    from confluent_kafka.schema_registry import Schema

    from jetconnect_kafka.registry_formats import _AvroReading

    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(writer), record)
    decode = _AvroReading(json.dumps(reader), 1, "test").decoder(Schema(json.dumps(writer), "AVRO"), 2)
    return decode(memoryview(buffer.getvalue()))


def test_avro_records_of_another_version_resolve_by_avros_rules() -> None:
    def schema(*fields: dict) -> dict:
        return {"type": "record", "name": "R", "fields": list(fields)}

    id_int, id_long = {"name": "id", "type": "int"}, {"name": "id", "type": "long"}
    added = {"name": "tag", "type": "string", "default": "none"}
    assert _avro_read(schema(id_long, added), schema(id_long), {"id": 1}) == {"id": 1, "tag": "none"}
    assert _avro_read(schema(id_long), schema(id_long, added), {"id": 1, "tag": "x"}) == {"id": 1}  # removed
    assert _avro_read(schema(id_long), schema(id_int), {"id": 7}) == {"id": 7}  # int promoted to long
    color = {"name": "c", "type": {"type": "enum", "name": "C", "symbols": ["RED"]}}
    wider = {"name": "c", "type": {"type": "enum", "name": "C", "symbols": ["RED", "BLUE"]}}
    with pytest.raises(DecodeError, match="does not resolve to the reader schema"):
        _avro_read(schema(color), schema(wider), {"c": "BLUE"})  # a symbol the reader does not know
    with pytest.raises(DecodeError, match="does not resolve to the reader schema"):
        _avro_read(schema(id_long, {"name": "tag", "type": "string"}), schema(id_long), {"id": 1})  # no default


def test_a_null_value_is_written_as_a_kafka_null_as_confluents_serializers_write_it() -> None:
    from jetconnect_kafka.registry_formats import AvroConfluentFormat, Binding

    fmt = AvroConfluentFormat(Binding(Registry(URL, {}, 1), "value", "t-value"))
    struct_type = StructType([StructField("id", LongType(), False)])
    fmt._writer_id, fmt._writer_type = 9, struct_type  # as prepare() leaves it, without a registry
    fmt._writer_text = '{"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}]}'
    column = pa.array([{"id": 3}, None], type=pa.struct([("id", pa.int64())]))
    assert fmt.encode(column) == [b"\x00\x00\x00\x00\x09\x06", None]
