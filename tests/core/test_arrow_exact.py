"""Builder items of every shape against every type: converted exactly, or an error naming them.

A small model of the rules, written from the contract of ``rows_to_batch`` and not from its code,
says for each item whether it fits and what each column must then hold. Hypothesis draws
schemas over every type ``parse_schema`` knows (nested too), items of every shape (tuple, list,
dict, Row, namedtuple, bare value) with right values, wrong values and None, and checks that the
batch holds exactly the model's values or that the SchemaError names an item and column the
model also finds wrong.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import struct
from collections import namedtuple
from decimal import Decimal, localcontext
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import Row
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from jetconnect import SchemaError
from jetconnect._arrow_conform import conform_batch
from jetconnect._arrow_rows import columns_to_batch, rows_to_batch
from jetconnect._arrow_schema import to_arrow_schema
from jetconnect._ddl import parse_schema

# --- the model -----------------------------------------------------------------------------------


class Wrong(Exception):
    """The model's verdict: this value or item does not fit; ``column`` names where, if anywhere."""

    def __init__(self, column: str | None = None) -> None:
        super().__init__(column)
        self.column = column


INT_RANGES = {ByteType: 8, ShortType: 16, IntegerType: 32, LongType: 64}


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def single(value: float) -> float:
    """``value`` rounded to single precision, as a FLOAT column holds it; Wrong if out of range."""
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        raise Wrong() from None


def expect(value: Any, data_type: DataType, nullable: bool) -> Any:
    """What a column of ``data_type`` holds for ``value`` (as pyarrow's to_pylist gives it), or Wrong."""
    if value is None:
        if not nullable:
            raise Wrong()
        return None
    kind = type(data_type)
    if kind in INT_RANGES:
        bits = INT_RANGES[kind]
        if is_int(value) and -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            return value
        raise Wrong()
    if kind in (FloatType, DoubleType):
        exact = 2**24 if kind is FloatType else 2**53  # Arrow takes ints only up to where all are exact
        if is_int(value) and abs(value) <= exact:
            return float(value)
        if type(value) is float:
            return single(value) if kind is FloatType else value
        raise Wrong()
    if kind is DecimalType:
        if not (is_int(value) or isinstance(value, Decimal)) or not Decimal(value).is_finite():
            raise Wrong()
        with localcontext(prec=1000):  # exact: the default 28 digits would round 38-digit values
            scaled = Decimal(value).scaleb(data_type.scale)
            if scaled != scaled.to_integral_value() or abs(scaled) >= 10**data_type.precision:
                raise Wrong()
        return Decimal(value)
    if kind is StringType:
        if isinstance(value, str):
            return value
        raise Wrong()
    if kind is BinaryType:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        raise Wrong()
    if kind is BooleanType:
        if isinstance(value, bool):
            return value
        raise Wrong()
    if kind is DateType:
        if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            return value
        raise Wrong()
    if kind in (TimestampType, TimestampNTZType):
        if not isinstance(value, dt.datetime) or (value.utcoffset() is None) != (kind is TimestampNTZType):
            raise Wrong()
        return value
    if kind is NullType:
        raise Wrong()  # only None fits, and None was handled above
    if kind is ArrayType:
        if type(value) not in (list, tuple):
            raise Wrong()
        return [expect(v, data_type.elementType, data_type.containsNull) for v in value]
    if kind is MapType:
        if not isinstance(value, dict):
            raise Wrong()
        return [
            (expect(k, data_type.keyType, False), expect(v, data_type.valueType, data_type.valueContainsNull))
            for k, v in value.items()
        ]
    if kind is StructType:
        try:
            return record(value, data_type, top=False)
        except Wrong:
            raise Wrong() from None
    raise AssertionError(f"the model does not know {data_type}")


def record(item: Any, schema: StructType, top: bool) -> dict[str, Any]:
    """The row an item (or a struct value) stands for, by the rules of shapes, or Wrong naming the column."""
    names = schema.fieldNames()
    if top and type(item) is dict and not item:
        raise Wrong()  # an empty dict names no column: refused, not taken for a row of NULLs (#32)
    if isinstance(item, Row) and hasattr(item, "__fields__"):
        if len(set(item.__fields__)) != len(item.__fields__):
            raise Wrong()
        item = dict(zip(item.__fields__, item))
    elif isinstance(item, tuple) and hasattr(item, "_fields"):
        item = item._asdict()
    if isinstance(item, dict):
        for key in item:
            if key not in names:
                raise Wrong(str(key))
        for field in schema.fields:
            if not field.nullable and field.name not in item:
                raise Wrong(field.name)
        values = [item.get(name) for name in names]
    elif isinstance(item, (tuple, list)):
        if len(item) != len(names):
            raise Wrong()
        values = list(item)
    elif top and len(names) == 1:
        values = [item]  # a bare value
    else:
        raise Wrong()
    row = {}
    for field, value in zip(schema.fields, values):
        try:
            row[field.name] = expect(value, field.dataType, field.nullable)
        except Wrong:
            raise Wrong(field.name) from None
    return row


def same(got: Any, want: Any) -> bool:
    """Equal as values, NaN equal to NaN, containers compared element by element."""
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if isinstance(want, dict):
        return isinstance(got, dict) and list(got) == list(want) and all(same(got[k], want[k]) for k in want)
    if isinstance(want, (list, tuple)):
        return isinstance(got, (list, tuple)) and len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if isinstance(want, dt.datetime) and isinstance(got, dt.datetime):
        return got == want and (got.utcoffset() is None) == (want.utcoffset() is None)
    return type(got) is type(want) and got == want  # True is not 1 here


# --- strategies ----------------------------------------------------------------------------------

PRIMITIVES = st.one_of(  # each type as likely as the others, decimals of any precision and scale among them
    *[
        st.just(t)
        for t in (
            ByteType(),
            ShortType(),
            IntegerType(),
            LongType(),
            FloatType(),
            DoubleType(),
            StringType(),
            BinaryType(),
            BooleanType(),
            DateType(),
            TimestampType(),
            TimestampNTZType(),
            NullType(),
        )
    ],
    st.integers(1, 38).flatmap(lambda p: st.integers(0, p).map(lambda s: DecimalType(p, s))),
)
KEYS = PRIMITIVES.filter(lambda t: not isinstance(t, (NullType, FloatType, DoubleType)))  # NaN keys never meet
NAMES = st.sampled_from(["a", "b", "c", "id", "name", "x y", "ü"])


def nullable(data_type: DataType, flag: bool) -> bool:
    return flag or isinstance(data_type, NullType)  # Arrow has no NOT NULL null type


def fields(children: st.SearchStrategy[DataType], min_size: int) -> st.SearchStrategy[list[StructField]]:
    return st.lists(
        st.tuples(NAMES, children, st.booleans()), min_size=min_size, max_size=4, unique_by=lambda f: f[0]
    ).map(lambda fs: [StructField(n, t, nullable(t, flag)) for n, t, flag in fs])


def containers(children: st.SearchStrategy[DataType]) -> st.SearchStrategy[DataType]:
    return st.one_of(
        st.builds(lambda t, flag: ArrayType(t, nullable(t, flag)), children, st.booleans()),
        st.builds(lambda k, t, flag: MapType(k, t, nullable(t, flag)), KEYS, children, st.booleans()),
        fields(children, 0).map(StructType),
    )


NESTED = containers(st.one_of(PRIMITIVES, containers(PRIMITIVES)))  # two levels deep at most
SCHEMAS = fields(st.one_of(PRIMITIVES, NESTED), 1).map(StructType)  # flat columns as often as nested ones

# fixed offsets, odd ones included, and a zone with DST and a seconds-precise historical offset
ZONES = st.sampled_from(
    [
        dt.timezone(dt.timedelta(**offset))
        for offset in ({}, {"hours": -7}, {"hours": 5, "minutes": 45}, {"seconds": -37})
    ]
    + [ZoneInfo("Europe/Amsterdam")]
)
DATETIMES = st.datetimes(min_value=dt.datetime(2, 1, 1), max_value=dt.datetime(9998, 12, 31))
AWARE = st.builds(lambda d, z: d.replace(tzinfo=z), DATETIMES, ZONES)
#: Values of every kind, for any place: the faults planted in otherwise right batches.
ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, -1, 127, 128, 2**31, 2**53 + 1, 2**63]),
    st.floats(),
    st.sampled_from([1.0, 1.5, -0.0, 3.5e38, 1e39]),
    st.decimals(allow_nan=True, places=None),
    st.text(max_size=5),
    st.binary(max_size=5),
    st.dates(),
    DATETIMES,
    AWARE,
    st.sampled_from([[1], (1,), {"a": 1}, {1: "a"}, {1, 2}, "ab"]),
)
WRONG_KEYS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=3),
    st.binary(max_size=3),
    st.dates(),
    DATETIMES,
)


@cache  # building strategies costs more than drawing from them
def valid(data_type: DataType, nullable: bool) -> st.SearchStrategy[Any]:
    """Values that fit a place of ``data_type``: None too where the place is nullable."""
    return st.one_of(st.none(), right(data_type)) if nullable else right(data_type)


@cache
def right(data_type: DataType) -> st.SearchStrategy[Any]:  # noqa: PLR0911 - one strategy per type
    """Values, not None, that fit ``data_type`` (structs in any shape)."""
    kind = type(data_type)
    if kind in INT_RANGES:
        bits = INT_RANGES[kind]
        return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if kind is FloatType:
        return st.one_of(st.floats(width=32), st.integers(-(2**24), 2**24), st.floats())
    if kind is DoubleType:
        return st.one_of(st.floats(), st.integers(-(2**53), 2**53))
    if kind is DecimalType:
        bound = Decimal(10) ** (data_type.precision - data_type.scale) - Decimal(10) ** -data_type.scale
        return st.decimals(min_value=-bound, max_value=bound, places=data_type.scale, allow_nan=False)
    if kind is StringType:
        return st.text(max_size=8)
    if kind is BinaryType:
        return st.one_of(st.binary(max_size=8), st.binary(max_size=4).map(bytearray))
    if kind is BooleanType:
        return st.booleans()
    if kind is DateType:
        return st.dates()
    if kind is TimestampType:
        return AWARE
    if kind is TimestampNTZType:
        return DATETIMES
    if kind is NullType:
        return st.nothing()  # only None fits, and None is drawn where the place is nullable
    if kind is ArrayType:
        elements = valid(data_type.elementType, data_type.containsNull)
        return st.lists(elements, max_size=3).flatmap(lambda v: st.sampled_from([v, tuple(v)]))
    if kind is MapType:
        return st.dictionaries(
            keys(data_type.keyType), valid(data_type.valueType, data_type.valueContainsNull), max_size=3
        )
    if kind is StructType:
        return st.fixed_dictionaries({f.name: valid(f.dataType, f.nullable) for f in data_type.fields}).flatmap(
            lambda row: shaped(row, top=False)
        )
    raise AssertionError(f"no strategy for {data_type}")


def keys(data_type: DataType) -> st.SearchStrategy[Any]:
    return st.binary(max_size=8) if isinstance(data_type, BinaryType) else right(data_type)  # a bytearray is no key


@cache
def faulty(data_type: DataType) -> st.SearchStrategy[Any]:
    """A value of ``data_type`` with one fault planted somewhere inside (or at the top)."""
    kind = type(data_type)
    if kind is ArrayType:
        good = st.lists(valid(data_type.elementType, data_type.containsNull), max_size=2)
        inside = st.tuples(good, faulty(data_type.elementType), good).map(lambda p: [*p[0], p[1], *p[2]])
        return st.one_of(inside, st.text(min_size=1, max_size=3), st.just({1, 2}))  # Arrow takes both as lists
    if kind is MapType:
        good = right(data_type)
        pairs = good.map(lambda d: list(d.items()))  # Arrow takes a list of pairs for a map
        bad_value = st.tuples(good, keys(data_type.keyType), faulty(data_type.valueType)).map(
            lambda p: {**p[0], p[1]: p[2]}
        )
        bad_key = st.tuples(good, WRONG_KEYS, valid(data_type.valueType, True)).map(lambda p: {**p[0], p[1]: p[2]})
        return st.one_of(pairs, bad_value, bad_key)
    if kind is StructType and data_type.fields:
        return (
            st.sampled_from(data_type.fieldNames())
            .flatmap(
                lambda name: st.fixed_dictionaries(
                    {
                        f.name: faulty(f.dataType) if f.name == name else valid(f.dataType, f.nullable)
                        for f in data_type.fields
                    }
                )
            )
            .flatmap(lambda row: shaped(row, top=False))
        )
    near = near_miss(data_type)
    return st.integers(0, 3).flatmap(lambda k: ANY_VALUE if k == 0 else near)  # mostly the near misses


def near_miss(data_type: DataType) -> st.SearchStrategy[Any]:  # noqa: PLR0911 - one strategy per type
    """Wrong values that Arrow's own conversion would take for ``data_type`` without a word."""
    kind = type(data_type)
    if kind in INT_RANGES:
        top = 2 ** (INT_RANGES[kind] - 1)
        return st.one_of(
            st.floats(),
            st.decimals(allow_nan=False, places=2),
            st.booleans(),
            st.sampled_from([top, -top - 1, str(top - 1)]),
        )
    if kind in (FloatType, DoubleType):
        return st.one_of(
            st.booleans(), st.decimals(allow_nan=False, places=1), st.sampled_from(["1.5", 2**53 + 1, 10**400])
        )
    if kind is DecimalType:
        return st.one_of(st.floats(), st.decimals(allow_nan=True), st.sampled_from([10**38, "1"]))
    if kind is StringType:
        return st.one_of(st.binary(max_size=3), st.binary(max_size=3).map(bytearray), st.integers())
    if kind is BinaryType:
        return st.one_of(st.text(max_size=3), st.integers(0, 255).map(lambda n: [n]))
    if kind is BooleanType:
        return st.sampled_from([0, 1, 1.0, "true", Decimal(1)])
    if kind is DateType:
        return st.one_of(DATETIMES, AWARE, st.integers(-(10**5), 10**5))
    if kind is TimestampType:
        return st.one_of(DATETIMES, st.dates(), st.integers(0, 2**40))
    if kind is TimestampNTZType:
        return st.one_of(AWARE, st.dates(), st.integers(0, 2**40))
    return ANY_VALUE


@st.composite
def shaped(draw: st.DrawFn, row: dict[str, Any], top: bool, mangled: bool = False) -> Any:
    """``row`` as a tuple, list, dict (leaving out None values at times), Row, namedtuple or bare value;
    with ``mangled``, as a dict with a key too many or a NOT NULL one missing, or a tuple too long or short."""
    names = list(row)
    if mangled:
        mangle = draw(st.sampled_from(["drop", "extra", "short", "long"]))
        if mangle == "drop" and names:
            return {k: v for k, v in row.items() if k != draw(st.sampled_from(names))}
        if mangle == "extra":
            return {**row, draw(st.sampled_from(["nmae", "A", "zz", ""])): 1}
        if mangle == "short" and names:
            return tuple(row.values())[:-1]
        return (*row.values(), None)
    shape = draw(st.sampled_from(["tuple", "list", "dict", "row", "named", "bare"]))
    if shape == "list":
        return list(row.values())
    if shape == "dict":
        return {k: row[k] for k in draw(st.permutations(names)) if row[k] is not None or draw(st.booleans())}
    if shape == "row" and names:
        return Row(**{k: row[k] for k in draw(st.permutations(names))})
    if shape == "named" and names and all(n.isidentifier() for n in names):
        return namedtuple("Item", names)(**row)
    if shape == "bare" and top and len(names) == 1:
        return row[names[0]]
    return tuple(row.values())


@st.composite
def cases(draw: st.DrawFn) -> tuple[StructType, list[Any]]:
    """A schema and right items for it, with one fault planted in three cases out of four."""
    schema = draw(SCHEMAS)
    places = {f.name: valid(f.dataType, f.nullable) for f in schema.fields}
    rows = draw(st.lists(st.fixed_dictionaries(places), min_size=1, max_size=4))
    fault = draw(st.sampled_from(["none", "value", "value", "shape"]))
    at = draw(st.integers(0, len(rows) - 1))
    if fault == "value":
        field = draw(st.sampled_from(schema.fields))
        rows[at] = {**rows[at], field.name: draw(faulty(field.dataType))}
    return schema, [draw(shaped(row, top=True, mangled=fault == "shape" and i == at)) for i, row in enumerate(rows)]


# --- the property --------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases())
def test_items_convert_exactly_or_the_error_names_a_wrong_item_and_column(case):
    schema, rows = case
    verdicts: list[dict[str, Any] | Wrong] = []
    for item in rows:
        try:
            verdicts.append(record(item, schema, top=True))
        except Wrong as wrong:
            verdicts.append(wrong)
    try:
        batch = rows_to_batch(rows, schema, "source 'prop'")
    except SchemaError as exc:
        message = str(exc)
        found = re.search(r"item #(\d+) of the batch", message)
        assert found, f"no item named: {message}"
        index = int(found.group(1))
        verdict = verdicts[index]
        assert isinstance(verdict, Wrong), f"item #{index} fits the schema, yet: {message}"
        if verdict.column is not None:
            assert f"column '{verdict.column}" in message or f"'{verdict.column}'" in message, (verdict.column, message)
        assert message.startswith("source 'prop': ")
        return
    wrong = [(i, v.column) for i, v in enumerate(verdicts) if isinstance(v, Wrong)]
    assert not wrong, f"converted without a word although the model finds {wrong} wrong"
    arrow_schema = to_arrow_schema(schema)
    assert batch.schema.equals(arrow_schema)
    # the batch also passes the check Arrow batches from sources go through, whole and sliced
    assert conform_batch(batch, arrow_schema, "source 'prop'") is batch
    tail = batch.slice(1)
    assert conform_batch(tail, arrow_schema, "source 'prop'") is tail
    got = batch.to_pylist()
    for index, (row, want) in enumerate(zip(got, verdicts)):
        for name in schema.fieldNames():
            assert same(row[name], want[name]), (
                f"item #{index}, column '{name}': got {row[name]!r}, want {want[name]!r}"
            )


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_schema_from_ddl_converts_like_the_same_struct_type(data):
    """parse_schema's vocabulary, as DDL text, goes through the same rules (a smaller run)."""
    ddl = data.draw(
        st.sampled_from(
            [
                "a tinyint, b smallint, c int, d bigint",
                "f float, g double, h decimal(5,2)",
                "s string, b binary, t boolean",
                "d date, t timestamp, n timestamp_ntz, v void",
                "a array<int>, m map<string,double>, s struct<x: int NOT NULL, y: string>",
            ]
        )
    )
    schema = parse_schema(ddl)
    places = {
        f.name: data.draw(st.sampled_from([valid(f.dataType, f.nullable), faulty(f.dataType)])) for f in schema.fields
    }
    rows = [data.draw(st.fixed_dictionaries(places).flatmap(lambda row: shaped(row, top=True))) for _ in range(3)]
    try:
        expected: Any = [record(item, schema, top=True) for item in rows]
    except Wrong:
        expected = Wrong
    if expected is Wrong:
        with pytest.raises(SchemaError, match=r"item #\d+ of the batch"):
            rows_to_batch(rows, schema, "source 'ddl'")
    else:
        got = rows_to_batch(rows, schema, "source 'ddl'").to_pylist()
        assert all(same(g[n], w[n]) for g, w in zip(got, expected) for n in schema.fieldNames())


@st.composite
def column_cases(draw: st.DrawFn) -> tuple[StructType, list[tuple[Any, ...]]]:
    """A schema and items as tuples (what columns hold), with one wrong value planted at times."""
    schema = draw(SCHEMAS)
    places = {f.name: valid(f.dataType, f.nullable) for f in schema.fields}
    rows = draw(st.lists(st.fixed_dictionaries(places), min_size=1, max_size=4))
    if schema.fields and draw(st.booleans()):
        at, field = draw(st.integers(0, len(rows) - 1)), draw(st.sampled_from(schema.fields))
        rows[at] = {**rows[at], field.name: draw(faulty(field.dataType))}
    return schema, [tuple(row.values()) for row in rows]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(column_cases())
def test_columns_convert_as_the_same_items_as_rows(case):
    """``columns_to_batch`` is ``rows_to_batch`` for items held as columns: the same batch, or the
    same error naming the same item and column."""
    schema, rows = case
    if not schema.fields:
        return
    columns = [list(values) for values in zip(*rows)]
    try:
        want: pa.RecordBatch | str = rows_to_batch(rows, schema, "source 'prop'")
    except SchemaError as exc:
        want = str(exc)
    try:
        got: pa.RecordBatch | str = columns_to_batch(columns, schema, "source 'prop'")
    except SchemaError as exc:
        got = str(exc)
    if isinstance(want, str):
        assert got == want
    else:
        assert isinstance(got, pa.RecordBatch) and got.schema.equals(want.schema)
        assert same(got.to_pylist(), want.to_pylist())
