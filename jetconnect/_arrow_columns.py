"""One column's values to an Arrow array of its type, every value exactly or not at all.

Arrow's own conversion from Python objects truncates a float into an integer column, decodes bytes
into a string column and reads a naive datetime as UTC, so each type has its rule here: mostly
Arrow itself, in C, plus a check of the kinds of values the type takes (:func:`require`). A column
is converted whole; what fails is a :class:`Mismatch`, traced back to the item by the caller.
"""

from __future__ import annotations

import datetime as dt
from itertools import accumulate, chain
from operator import methodcaller
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from jetconnect._item_columns import split_items
from jetconnect._short_repr import short_repr
from jetconnect._value_kinds import Mismatch, ValueKind, require

#: What Arrow raises for values it cannot convert.
ARROW_ERRORS = (pa.ArrowException, TypeError, ValueError, OverflowError)


def _typed(values: list[Any], data_type: pa.DataType) -> pa.Array:
    """Arrow's own conversion, for the types whose Python values it converts exactly."""
    try:
        return pa.array(values, type=data_type)
    except ARROW_ERRORS as exc:
        raise Mismatch(_arrow_reason(values, exc)) from None


def _arrow_reason(values: list[Any], exc: Exception | str) -> str:
    return f"{short_repr(values[0], 80)}: {exc}" if len(values) == 1 else str(exc)


def _integers(values: list[Any], data_type: pa.DataType) -> pa.Array:
    # A typed conversion would truncate 1.5 and Decimal('1.5') to 1. Letting Arrow infer the
    # type instead costs about a third more, still in C, and any float, Decimal, bool or string
    # among the ints shows as a non-integer type or an error. (Counting the ints first and then
    # converting typed costs more than inferring: measured.)
    try:
        inferred = pa.array(values)
    except ARROW_ERRORS as exc:
        require(values, "an integer", ValueKind.INT)
        huge = next((v for v in values if v is not None and not -(2**63) <= v < 2**63), None)
        reason = f"{short_repr(huge, 80)} does not fit in 64 bits" if huge is not None else _arrow_reason(values, exc)
        raise Mismatch(reason) from None
    if not (pa.types.is_integer(inferred.type) or pa.types.is_null(inferred.type)):
        require(values, "an integer", ValueKind.INT)
        raise Mismatch(f"the values are {inferred.type}, not integers")
    try:
        return inferred.cast(data_type)  # safe: out of range is an error
    except ARROW_ERRORS as exc:
        raise Mismatch(f"out of range for {_spark_name(data_type)}: {exc}") from None


def _floats(values: list[Any], data_type: pa.DataType) -> pa.Array:
    require(values, "a number", ValueKind.INT, ValueKind.FLOAT)  # Arrow would take True for 1.0
    array = _typed(values, data_type)  # Arrow refuses an int it cannot represent exactly
    if pa.types.is_float32(data_type) and array.null_count < len(array) and pc.any(pc.is_inf(array)).as_py():
        # rounding to single precision is what a FLOAT column means; overflowing to infinity is not
        for value, out in zip(values, array.to_pylist()):
            if out in (float("inf"), float("-inf")) and float(value) not in (float("inf"), float("-inf")):
                raise Mismatch(f"{short_repr(value, 80)} is beyond the range of float (single precision)")
    return array


def _decimals(values: list[Any], data_type: pa.DataType) -> pa.Array:
    require(values, "a Decimal or an int", ValueKind.INT, ValueKind.DECIMAL)
    try:
        return pa.array(values, type=data_type)  # refuses what would need rounding or more digits
    except ARROW_ERRORS as exc:
        if len(values) == 1:
            what = f"{short_repr(values[0], 80)} does not fit {_spark_name(data_type)}"
            raise Mismatch(f"{what} without rounding ({exc})") from None
        raise Mismatch(str(exc)) from None


def _strings(values: list[Any], data_type: pa.DataType) -> pa.Array:
    # A typed conversion would decode bytes; inferring gives binary as soon as one value is bytes.
    try:
        inferred = pa.array(values)
    except ARROW_ERRORS as exc:
        require(values, "a string", ValueKind.STR)
        raise Mismatch(_arrow_reason(values, exc)) from None
    if not (
        pa.types.is_string(inferred.type) or pa.types.is_large_string(inferred.type) or pa.types.is_null(inferred.type)
    ):
        require(values, "a string", ValueKind.STR)
        raise Mismatch(f"the values are {inferred.type}, not strings")
    try:
        return inferred.cast(data_type)
    except ARROW_ERRORS as exc:
        raise Mismatch(str(exc)) from None


def _binaries(values: list[Any], data_type: pa.DataType) -> pa.Array:
    require(values, "bytes", ValueKind.BYTES)  # Arrow would encode a str
    return _typed(values, data_type)


def _booleans(values: list[Any], data_type: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, type=data_type)  # Arrow takes only bools here
    except ARROW_ERRORS as exc:
        require(values, "a bool", ValueKind.BOOL)
        raise Mismatch(_arrow_reason(values, exc)) from None


def _dates(values: list[Any], data_type: pa.DataType) -> pa.Array:
    require(values, "a date", ValueKind.DATE)  # Arrow would cut a datetime's time off
    return _typed(values, data_type)


def _is_naive(value: dt.datetime) -> bool:
    return value.utcoffset() is None


def _timestamps(values: list[Any], data_type: pa.DataType) -> pa.Array:
    # Arrow reads a naive datetime as UTC and shifts an aware one into a timestamp_ntz column: a
    # TIMESTAMP (an instant) takes only aware datetimes, a TIMESTAMP_NTZ (a wall clock) only naive.
    require(values, "a datetime", ValueKind.DATETIME)
    aware = data_type.tz is not None
    present = [v for v in values if v is not None]
    if set(map(_is_naive, present)) - {not aware}:
        value = next(v for v in present if _is_naive(v) == aware)
        if aware:
            raise Mismatch(
                f"{short_repr(value, 80)} has no time zone: a timestamp column takes aware datetimes "
                "(datetime(..., tzinfo=...)); naive ones go in a timestamp_ntz column"
            )
        raise Mismatch(
            f"{short_repr(value, 80)} has a time zone: a timestamp_ntz column takes naive datetimes; "
            "instants go in a timestamp column"
        )
    if any(hasattr(cls, "nanosecond") for cls in set(map(type, present))):  # pandas.Timestamp
        value = next((v for v in present if getattr(v, "nanosecond", 0)), None)
        if value is not None:
            raise Mismatch(f"{short_repr(value, 80)} has nanoseconds; Spark keeps microseconds")
    return _typed(values, data_type)


def _nulls(values: list[Any], data_type: pa.DataType) -> pa.Array:
    require(values, "None")
    return pa.nulls(len(values), data_type)


def _offsets(containers: list[Any]) -> tuple[pa.Array, pa.Array | None, list[Any]]:
    """List offsets, the null mask (or None) and the non-null containers of a list or map column."""
    present = [c for c in containers if c is not None]
    if len(present) == len(containers):
        return pa.array([0, *accumulate(map(len, containers))], pa.int32()), None, present
    lengths = [0 if c is None else len(c) for c in containers]
    return pa.array([0, *accumulate(lengths)], pa.int32()), pa.array([c is None for c in containers]), present


def _lists(values: list[Any], data_type: pa.DataType) -> pa.Array:
    # Arrow would take a str as a list of characters and a set in any order
    require(values, "a list or tuple", ValueKind.SEQUENCE)
    offsets, mask, present = _offsets(values)
    element = data_type.value_field
    try:
        items = _array(list(chain.from_iterable(present)), element.type)
        if not element.nullable and items.null_count:
            raise Mismatch("an element is None but the array's elements are NOT NULL")
    except Mismatch as exc:
        raise exc.under("[]") from None
    return pa.ListArray.from_arrays(offsets, items, type=data_type, mask=mask)


def _maps(values: list[Any], data_type: pa.DataType) -> pa.Array:
    require(values, "a dict", ValueKind.DICT)  # Arrow would take a list of pairs, repeats and all
    offsets, mask, present = _offsets(values)
    try:
        keys = _array(list(chain.from_iterable(present)), data_type.key_type)
        if keys.null_count:
            raise Mismatch("a key is None; map keys cannot be null")
    except Mismatch as exc:
        raise exc.under("[key]") from None
    try:
        items = _array(list(chain.from_iterable(map(methodcaller("values"), present))), data_type.item_type)
        if not data_type.item_field.nullable and items.null_count:
            raise Mismatch("a value is None but the map's values are NOT NULL")
    except Mismatch as exc:
        raise exc.under("[value]") from None
    return pa.MapArray.from_arrays(offsets, keys, items, type=data_type, mask=mask)


def _structs(values: list[Any], data_type: pa.DataType) -> pa.Array:
    fields = list(data_type)
    columns, mask = split_items(values, fields, top=False)
    if not fields:  # struct<>: nothing to build children from, so nothing to tell the length by
        return pa.array([{}] * len(values) if mask is None else [None if m else {} for m in mask], type=data_type)
    null_parents = pa.array(mask) if mask is not None else None
    children = [_child(column, field, null_parents) for column, field in zip(columns, fields)]
    return pa.StructArray.from_arrays(children, fields=fields, mask=null_parents)


def _child(values: list[Any], field: pa.Field, null_parents: pa.Array | None) -> pa.Array:
    try:
        return column_array(values, field, null_parents)
    except Mismatch as exc:
        raise exc.under(field.name) from None


def column_array(values: list[Any], field: pa.Field, null_parents: pa.Array | None = None) -> pa.Array:
    """The values of one field, refusing None in a NOT NULL field (but under a null struct)."""
    array = _array(values, field.type)
    if not field.nullable and array.null_count:
        # the None a null struct leaves in each of its fields is no violation
        if null_parents is None or pc.any(pc.and_(array.is_null(), pc.invert(null_parents))).as_py():
            raise Mismatch("is NOT NULL but got None")
    return array


def _array(values: list[Any], data_type: pa.DataType) -> pa.Array:
    """``values`` as an Arrow array of ``data_type``, every value exactly, or :class:`Mismatch`."""
    convert = _CONVERTERS.get(data_type.id, _typed)  # _typed: types DDL cannot declare (intervals...)
    try:
        return convert(values, data_type)
    except (Mismatch, MemoryError):
        raise
    except Exception as exc:  # a value's own methods raised (a broken Mapping, a strange tzinfo): name it
        raise Mismatch(_arrow_reason(values, f"{type(exc).__name__}: {exc}")) from None


_CONVERTERS = {
    **{t.id: _integers for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64())},
    pa.float32().id: _floats,
    pa.float64().id: _floats,
    pa.decimal128(1, 0).id: _decimals,
    pa.string().id: _strings,
    pa.binary().id: _binaries,
    pa.bool_().id: _booleans,
    pa.date32().id: _dates,
    pa.timestamp("us").id: _timestamps,
    pa.null().id: _nulls,
    pa.list_(pa.int8()).id: _lists,
    pa.map_(pa.int8(), pa.int8()).id: _maps,
    pa.struct([]).id: _structs,
}


_SPARK_NAMES = {pa.int8(): "tinyint", pa.int16(): "smallint", pa.int32(): "int", pa.int64(): "bigint"}


def _spark_name(data_type: pa.DataType) -> str:
    if pa.types.is_decimal(data_type):
        return f"decimal({data_type.precision},{data_type.scale})"
    return _SPARK_NAMES.get(data_type, str(data_type))


__all__ = ["ARROW_ERRORS", "column_array"]
