"""Schemas from DDL without a JVM, and Arrow batches exactly as Spark expects them."""

import pyarrow as pa
import pytest

from jetconnect import SchemaError
from jetconnect.arrow import conform_batch, parse_schema, rows_to_batch, to_arrow_schema


def test_ddl_parser_covers_spark_types():
    schema = parse_schema("id bigint NOT NULL, price decimal(10, 2), tags array<string>, attrs map<string,int>, "
                          "who struct<name: string, age: int>, at timestamp, day date, raw binary, ok boolean")
    assert schema.simpleString() == (
        "struct<id:bigint,price:decimal(10,2),tags:array<string>,attrs:map<string,int>,"
        "who:struct<name:string,age:int>,at:timestamp,day:date,raw:binary,ok:boolean>"
    )
    assert schema["id"].nullable is False


def test_ddl_errors_say_where():
    with pytest.raises(SchemaError, match="unknown type 'strnig'"):
        parse_schema("a strnig")


def test_rows_to_batch_matches_spark_arrow_schema():
    schema = parse_schema("n bigint, s string")
    batch = rows_to_batch([(1, "a"), (2, None)], schema, "t")
    assert batch.schema.equals(to_arrow_schema(schema))


def test_not_null_violation_names_the_item():
    with pytest.raises(SchemaError, match=r"item #1 .*NOT NULL"):
        rows_to_batch([(1,), (None,)], parse_schema("n bigint NOT NULL"), "source 't'")


def test_conform_batch_reorders_and_casts_safely():
    target = to_arrow_schema(parse_schema("a bigint, b string"))
    batch = pa.record_batch([pa.array(["x"]), pa.array([1], pa.int32())], names=["b", "a"])
    assert conform_batch(batch, target, "t").schema.equals(target)
    with pytest.raises(SchemaError, match="does not fit the declared schema"):
        conform_batch(pa.record_batch([pa.array(["x"])], names=["a"]), target, "t")
