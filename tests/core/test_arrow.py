"""Schemas from DDL without a JVM, and Arrow batches exactly as Spark expects them."""

import datetime as dt
import re
from collections import namedtuple
from collections.abc import Mapping
from decimal import Decimal

import pyarrow as pa
import pytest
from pyspark.sql import Row
from pyspark.sql.types import ArrayType, IntegerType, StructField, StructType

from jetconnect import SchemaError
from jetconnect._arrow_conform import conform_batch, to_batches
from jetconnect._arrow_rows import rows_to_batch
from jetconnect._arrow_schema import to_arrow_schema
from jetconnect._ddl import parse_schema

UTC = dt.UTC


def test_ddl_parser_covers_spark_types():
    schema = parse_schema(
        "id bigint NOT NULL, price decimal(10, 2), tags array<string>, attrs map<string,int>, "
        "who struct<name: string, age: int>, at timestamp, day date, raw binary, ok boolean"
    )
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


def test_not_null_violation_names_the_item_and_column():
    with pytest.raises(SchemaError, match=r"item #1 .*column 'n': is NOT NULL but got None"):
        rows_to_batch([(1,), (None,)], parse_schema("n bigint NOT NULL"), "source 't'")


def test_conform_batch_reorders_and_casts_safely():
    target = to_arrow_schema(parse_schema("a bigint, b string"))
    batch = pa.record_batch([pa.array(["x"]), pa.array([1], pa.int32())], names=["b", "a"])
    assert conform_batch(batch, target, "t").schema.equals(target)
    with pytest.raises(SchemaError, match="does not fit the declared schema"):
        conform_batch(pa.record_batch([pa.array(["x"])], names=["a"]), target, "t")


def test_conform_batch_refuses_a_null_in_a_nested_not_null_field():
    target = to_arrow_schema(parse_schema("s struct<a: int NOT NULL>"))
    fine = pa.record_batch([pa.array([{"a": 1}, None], target.field("s").type)], schema=target)
    assert conform_batch(fine, target, "t").num_rows == 2  # a null struct is no null field
    bad = pa.record_batch([pa.array([{"a": None}], target.field("s").type)], schema=target)
    with pytest.raises(SchemaError, match=r"source 'x': an Arrow batch has a null in 's\.a', which is NOT NULL"):
        conform_batch(bad, target, "source 'x'")


# --- every item converts exactly, or the error names the item and the column ----------------------


def fails(items, ddl, *, index, column, says=""):
    """Assert rows_to_batch refuses ``items`` naming item ``index`` and ``column``."""
    with pytest.raises(SchemaError) as caught:
        rows_to_batch(items, parse_schema(ddl), "source 's'")
    message = str(caught.value)
    assert message.startswith(f"source 's': item #{index} of the batch, "), message
    if column is not None:
        assert f"column '{column}'" in message, message
    assert says in message, message
    return message


@pytest.mark.parametrize("value", [1.5, 1.0, -0.0, float("nan"), Decimal("1.5"), Decimal("2")])
def test_a_float_or_decimal_into_an_int_column_is_an_error_not_a_truncation(value):
    # Arrow's own conversion gave 1 for 1.5 and for Decimal('1.5')
    for ddl in ("n bigint", "n int", "n smallint", "n tinyint"):
        fails([7, value], ddl, index=1, column="n", says="is not an integer")


def test_a_string_or_bool_into_an_int_column_is_an_error():
    fails([("12",)], "n int", index=0, column="n", says="'12' (str) is not an integer")
    fails([1, True], "n bigint", index=1, column="n", says="True (bool) is not an integer")


@pytest.mark.parametrize(
    "ddl, low, high",
    [
        ("n tinyint", -128, 127),
        ("n smallint", -(2**15), 2**15 - 1),
        ("n int", -(2**31), 2**31 - 1),
        ("n bigint", -(2**63), 2**63 - 1),
    ],
)
def test_ints_out_of_range_of_the_column_are_errors_and_the_bounds_fit(ddl, low, high):
    assert rows_to_batch([low, high], parse_schema(ddl), "s").column(0).to_pylist() == [low, high]
    fails([0, high + 1], ddl, index=1, column="n")
    fails([low - 1], ddl, index=0, column="n")


def test_a_bool_or_string_into_a_double_is_an_error_and_ints_go_in_exactly():
    fails([1.5, True], "x double", index=1, column="x", says="True (bool) is not a number")
    fails(["1.5"], "x double", index=0, column="x")
    fails([2**53 + 1], "x double", index=0, column="x", says="exactly representable")
    assert rows_to_batch([2**53, 3], parse_schema("x double"), "s").column(0).to_pylist() == [2.0**53, 3.0]


def test_a_float_column_rounds_to_single_precision_but_refuses_overflow():
    assert rows_to_batch([0.5, float("inf")], parse_schema("f float"), "s").column(0).to_pylist() == [0.5, float("inf")]
    fails([1.0, 1e39], "f float", index=1, column="f", says="beyond the range of float")


def test_decimals_fit_exactly_or_are_errors():
    batch = rows_to_batch([(Decimal("12345678.99"),), (Decimal("1.50"),), (7,)], parse_schema("d decimal(10,2)"), "s")
    assert batch.column(0).to_pylist() == [Decimal("12345678.99"), Decimal("1.5"), Decimal("7")]
    fails(
        [(Decimal("1.234"),)],
        "d decimal(10,2)",
        index=0,
        column="d",
        says="does not fit decimal(10,2) without rounding",
    )
    fails([(Decimal("123456789.1"),)], "d decimal(10,2)", index=0, column="d", says="does not fit decimal(10,2)")
    fails([(1.5,)], "d decimal(10,2)", index=0, column="d", says="1.5 (float) is not a Decimal or an int")
    fails([(Decimal("NaN"),)], "d decimal(10,2)", index=0, column="d")


def test_bytes_into_a_string_column_and_text_into_a_binary_column_are_errors():
    fails(["a", b"b"], "s string", index=1, column="s", says="b'b' (bytes) is not a string")
    fails([b"a", "b"], "b binary", index=1, column="b", says="'b' (str) is not bytes")
    batch = rows_to_batch([bytearray(b"x"), memoryview(b"y")], parse_schema("b binary"), "s")
    assert batch.column(0).to_pylist() == [b"x", b"y"]


def test_a_timestamp_takes_aware_datetimes_and_a_timestamp_ntz_naive_ones():
    naive, plus2 = (
        dt.datetime(2024, 5, 1, 12, 0),
        dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    )
    at = rows_to_batch([plus2], parse_schema("t timestamp"), "s").column(0).to_pylist()[0]
    assert at == plus2 and at.utcoffset() == dt.timedelta(0)  # the same instant, in UTC
    assert rows_to_batch([naive], parse_schema("t timestamp_ntz"), "s").column(0).to_pylist() == [naive]
    fails([plus2, naive], "t timestamp", index=1, column="t", says="has no time zone")
    fails([naive, plus2], "t timestamp_ntz", index=1, column="t", says="has a time zone")
    fails([dt.date(2024, 5, 1)], "t timestamp", index=0, column="t", says="is not a datetime")
    fails([1_700_000_000], "t timestamp", index=0, column="t", says="is not a datetime")


def test_a_datetime_into_a_date_column_is_an_error_not_a_cut():
    fails([dt.date(2024, 5, 1), dt.datetime(2024, 5, 1, 23, 59)], "d date", index=1, column="d", says="is not a date")
    fails([19000], "d date", index=0, column="d", says="is not a date")


def test_a_misspelled_dict_key_is_an_error_naming_the_item_and_the_key():
    message = fails([{"id": 1, "name": "a"}, {"id": 2, "nmae": "b"}], "id bigint, name string", index=1, column="nmae")
    assert "did you mean 'name'?" in message


def test_a_dict_may_leave_out_nullable_columns_but_not_not_null_ones():
    schema = parse_schema("id bigint NOT NULL, name string")
    assert rows_to_batch([{"id": 1}], schema, "s").to_pylist() == [{"id": 1, "name": None}]
    fails(
        [{"id": 1}, {"name": "x"}],
        "id bigint NOT NULL, name string",
        index=1,
        column="id",
        says="has no 'id', a NOT NULL column",
    )


def test_rows_with_field_names_match_by_name_whatever_their_order():
    schema = parse_schema("id bigint, name string")
    rows = [Row(name="a", id=1), (2, "b"), Row(id=3, name="c"), {"name": "d", "id": 4}]
    assert rows_to_batch(rows, schema, "s").to_pylist() == [
        {"id": 1, "name": "a"},
        {"id": 2, "name": "b"},
        {"id": 3, "name": "c"},
        {"id": 4, "name": "d"},
    ]
    fails([Row(id=1, nmae="x")], "id bigint, name string", index=0, column="nmae")


def test_a_namedtuple_matches_by_name_and_a_plain_tuple_or_unnamed_row_by_position():
    Point = namedtuple("Point", "y x")
    schema = parse_schema("x int, y int")
    assert rows_to_batch([Point(y=1, x=2), (3, 4), Row(5, 6)], schema, "s").to_pylist() == [
        {"x": 2, "y": 1},
        {"x": 3, "y": 4},
        {"x": 5, "y": 6},
    ]


def test_a_row_of_the_wrong_width_is_an_error():
    fails([(1, 2), (1, 2, 3)], "a int, b int", index=1, column=None, says="3 values for 2 columns")
    fails([None], "a int, b int", index=0, column=None, says="None (NoneType) is not a row")


def test_bare_values_and_rows_mix_for_one_column():
    batch = rows_to_batch([1, (2,), {"n": 3}, Row(n=4), None], parse_schema("n bigint"), "s")
    assert batch.column(0).to_pylist() == [1, 2, 3, 4, None]


def test_nested_values_follow_the_same_rules():
    fails([([1, 2.5],)], "a array<int>", index=0, column="a[]", says="2.5 (float) is not an integer")
    fails([("ab",)], "a array<string>", index=0, column="a", says="'ab' (str) is not a list or tuple")
    fails([({1, 2},)], "a array<int>", index=0, column="a", says="(set) is not a list or tuple")
    fails([([("k", 1)],)], "m map<string,int>", index=0, column="m", says="(list) is not a dict")
    fails([({"k": 1.5},)], "m map<string,bigint>", index=0, column="m[value]", says="1.5 (float) is not an integer")
    fails([({b"k": 1},)], "m map<string,int>", index=0, column="m[key]", says="is not a string")
    fails([({"a": 1, "z": 2},)], "s struct<a: int>", index=0, column="s.z", says="'z' is not a column of the schema")
    fails([({"a": None},)], "s struct<a: int NOT NULL>", index=0, column="s.a", says="is NOT NULL but got None")
    batch = rows_to_batch([([1, None],), (None,), ((),)], parse_schema("a array<int>"), "s")
    assert batch.column(0).to_pylist() == [[1, None], None, []]
    schema = parse_schema("m map<string, array<struct<a: int, b: string>>>")
    nested = rows_to_batch([({"k": [Row(b="x", a=1)]},)], schema, "s")
    assert nested.column(0).to_pylist() == [[("k", [{"a": 1, "b": "x"}])]]


def test_elements_declared_not_null_refuse_none():
    schema = StructType([StructField("a", ArrayType(IntegerType(), containsNull=False))])
    with pytest.raises(SchemaError, match=r"item #0 .*column 'a\[\]': an element is None"):
        rows_to_batch([([1, None],)], schema, "source 's'")


def test_the_culprit_is_found_deep_in_a_big_batch():
    items = [(i, f"n{i}") for i in range(100_000)]
    items[76_543] = (76_543.5, "x")
    fails(items, "id bigint, name string", index=76_543, column="id", says="76543.5 (float) is not an integer")


def test_the_error_shows_a_huge_item_shortened():
    huge = "x" * 1_000_000
    message = fails([(huge, "n", b"y" * 1_000_000)], "id bigint, name string, raw binary", index=0, column="id")
    item = re.search(r"item #0 of the batch, (.*), does not match", message).group(1)
    assert len(item) <= 210, len(item)
    assert len(message) < 700, len(message)


def test_to_batches_converts_items_with_the_same_rules():
    schema = parse_schema("n bigint")
    with pytest.raises(SchemaError, match=r"source 'g': item #2 of the batch, 1\.5"):
        list(to_batches([1, 2, 1.5], schema, "source 'g'"))


def test_numpy_and_pandas_scalars_follow_the_same_rules():
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    assert rows_to_batch([np.int64(3), np.int32(4)], parse_schema("n bigint"), "s").column(0).to_pylist() == [3, 4]
    assert rows_to_batch([np.float32(1.5)], parse_schema("d double"), "s").column(0).to_pylist() == [1.5]
    fails([np.float64(2.0)], "n bigint", index=0, column="n", says="is not an integer")
    fails([np.bool_(True)], "d double", index=0, column="d", says="is not a number")
    fails(
        [pd.Timestamp("2024-01-01 00:00:00.000000001", tz="UTC")],
        "t timestamp",
        index=0,
        column="t",
        says="has nanoseconds",
    )
    fails([pd.NaT], "t timestamp", index=0, column="t", says="NaT (NaTType) is not a datetime")
    fails([pd.NA], "n bigint", index=0, column="n", says="(NAType) is not an integer")


def test_a_value_whose_own_methods_raise_is_named_not_leaked():
    class Unreadable(Mapping):
        def __getitem__(self, key):
            raise KeyError(key)

        def __iter__(self):
            raise OSError("cannot list")

        def __len__(self):
            return 1

    class NoOffset(dt.tzinfo):
        def utcoffset(self, when):
            raise RuntimeError("no offset here")

    fails([(1, 2), Unreadable()], "a int, b int", index=1, column=None, says="OSError: cannot list")
    fails([({"k": 1},), (Unreadable(),)], "m map<string,int>", index=1, column="m", says="OSError: cannot list")
    fails(
        [dt.datetime(2020, 1, 1, tzinfo=NoOffset())],
        "t timestamp",
        index=0,
        column="t",
        says="RuntimeError: no offset here",
    )
