"""Value formats both ways, and errors that point at the record at fault."""

from __future__ import annotations

import io
import json

import fastavro
import pyarrow as pa
import pytest
from pyspark.sql.types import LongType, StringType, StructType

from jetconnect.errors import OptionError
from jetconnect_kafka.serde import DecodeError, value_format

AVRO = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "item", "type": ["null", "string"]},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ],
}


def avro_bytes(record: dict) -> bytes:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(AVRO), record)
    return buffer.getvalue()


def test_string_values_decode_and_bad_utf8_is_located() -> None:
    fmt = value_format("string")
    assert fmt.decode([b"a", None]).to_pylist() == ["a", None]
    with pytest.raises(DecodeError) as err:
        fmt.decode([b"ok", b"\xff\xfe"])
    assert err.value.index == 1 and "not UTF-8" in err.value.reason


def test_json_values_decode_into_the_declared_struct() -> None:
    fmt = value_format("json", value_schema="id bigint, name string")
    decoded = fmt.decode([b'{"id": 1, "name": "a"}', b'{"id": 2}'])
    assert decoded.to_pylist() == [{"id": 1, "name": "a"}, {"id": 2, "name": None}]
    with pytest.raises(DecodeError) as err:
        fmt.decode([b'{"id": 1}', b"{not json"])
    assert err.value.index == 1
    with pytest.raises(DecodeError, match="does not fit the value_schema") as err:
        fmt.decode([b'{"id": "x"}'])


def test_json_values_convert_exactly_or_name_the_record() -> None:
    fmt = value_format("json", value_schema="id bigint, score double")
    # a key the schema lacks is left out, as Spark's from_json leaves it
    assert fmt.decode([b'{"id": 1, "score": 2, "extra": 7}']).to_pylist() == [{"id": 1, "score": 2.0}]
    for value, says in ((b'{"id": 1.5}', "1.5 (float) is not an integer"), (b'{"score": true}', "is not a number")):
        with pytest.raises(DecodeError) as err:
            fmt.decode([b'{"id": 1}', None, value])
        assert err.value.index == 2 and "does not fit the value_schema" in err.value.reason and says in err.value.reason


def test_json_needs_a_schema() -> None:
    with pytest.raises(OptionError, match="value_schema"):
        value_format("json")


def test_avro_round_trip_through_encode_and_decode() -> None:
    fmt = value_format("avro", avro_schema=json.dumps(AVRO))
    records = [{"id": 1, "item": "pen", "tags": ["a"]}, {"id": 2, "item": None, "tags": []}]
    column = pa.array(records, type=fmt.arrow_type)
    assert fmt.decode(fmt.encode(column)).to_pylist() == records


def test_a_value_written_with_another_avro_schema_is_refused() -> None:
    fmt = value_format("avro", avro_schema=json.dumps(AVRO))
    other = io.BytesIO()
    fastavro.schemaless_writer(
        other,
        fastavro.parse_schema({"type": "record", "name": "X", "fields": [{"name": "name", "type": "string"}]}),
        {"name": "a long enough string to misread"},
    )
    with pytest.raises(DecodeError) as err:
        fmt.decode([avro_bytes({"id": 1, "item": None, "tags": []}), other.getvalue()])
    assert err.value.index == 1


def test_avro_schema_maps_to_spark_types() -> None:
    spark_type = value_format("avro", avro_schema=json.dumps(AVRO)).spark_type()
    assert isinstance(spark_type, StructType)
    assert spark_type["id"].dataType == LongType() and spark_type["item"].dataType == StringType()


def test_unknown_format_names_the_option() -> None:
    with pytest.raises(OptionError, match="'value_format' must be one of bytes, string, json, avro"):
        value_format("protobuf")


def test_avro_values_map_as_the_avro_files_source_maps_them() -> None:
    """The core's Avro mapping (jetconnect._files.avro_schema): a uuid is a string, a time of day an int."""
    schema = {
        "type": "record",
        "name": "Event",
        "fields": [
            {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
            {"name": "at", "type": {"type": "int", "logicalType": "time-millis"}},
        ],
    }
    fmt = value_format("avro", avro_schema=json.dumps(schema))
    buffer = io.BytesIO()
    fastavro.schemaless_writer(
        buffer, fastavro.parse_schema(schema), {"id": "6a2f41a3-c54c-fce8-32d2-0324e1c32e22", "at": 3_723_004}
    )
    assert fmt.decode([buffer.getvalue()]).to_pylist() == [
        {"id": "6a2f41a3-c54c-fce8-32d2-0324e1c32e22", "at": 3_723_004}
    ]


def test_a_sink_writes_json_of_any_column_without_a_schema() -> None:
    """Reading JSON needs the struct to decode into; writing serialises the column as it is."""
    fmt = value_format("json", writing=True)
    column = pa.array([{"id": 1, "tags": ["a"]}, None, {"id": 2, "tags": []}])
    assert fmt.encode(column) == [b'{"id":1,"tags":["a"]}', None, b'{"id":2,"tags":[]}']
    assert fmt.encode(pa.array(["text", None])) == [b'"text"', None]
