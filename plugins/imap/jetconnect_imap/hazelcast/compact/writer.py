"""Writing rows as Compact records that applications read as their own classes.

A :class:`CompactPlan` is made once per sink from the Spark type of the column it writes: one
Compact schema (the client's own :class:`~hazelcast.serialization.compact.Schema`, so its id and
field positions are exactly what every client computes) for the struct and one for each nested
struct, with the type names the user gives (``com.acme.Order``; nested ones by field path, e.g.
``{"address": "com.acme.Address"}``, else the parent's name and the field's:
``com.acme.Order.address``). Spark types become kinds as :mod:`.kinds` says: a nullable column of
a number or boolean becomes the ``NULLABLE_`` kind (Java's boxed ``Long``), a non-nullable one the
plain kind (``long``); a map, an array of arrays or of binary, or an interval has no Compact kind
and is refused naming the field. :meth:`CompactPlan.encode` turns a struct column into the bytes
of one ``Data`` per row, big-endian as the client writes.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
from hazelcast.serialization.api import FieldKind as K
from hazelcast.serialization.compact import FieldDescriptor, Schema
from pyspark.sql import types as T

from jetconnect.errors import OptionError, SchemaError
from jetconnect_imap.hazelcast.compact.kinds import ARRAY_ITEM, FIXED, NULLABLE, PACKED_ARRAYS
from jetconnect_imap.hazelcast.compact.reader import COMPACT_TYPE_ID

_DATA_HEADER = struct.pack(">ii", 0, COMPACT_TYPE_ID)  # partition hash 0, type id: big-endian in every Data
_UINT8_RANGE, _UINT16_RANGE = 255, 65535
_NUMPY = {"b": "i1", "h": "i2", "i": "i4", "q": "i8", "f": "f4", "d": "f8"}
_TYPE_NAME = re.compile(r"\S(?:.*\S)?")

_PLAIN: list[tuple[type[T.DataType], K]] = [
    (T.BooleanType, K.BOOLEAN),
    (T.ByteType, K.INT8),
    (T.ShortType, K.INT16),
    (T.IntegerType, K.INT32),
    (T.LongType, K.INT64),
    (T.FloatType, K.FLOAT32),
    (T.DoubleType, K.FLOAT64),
]
_VAR: list[tuple[type[T.DataType], K]] = [
    (T.StringType, K.STRING),
    (T.DecimalType, K.DECIMAL),
    (T.DateType, K.DATE),
    (T.TimestampNTZType, K.TIMESTAMP),
    (T.TimestampType, K.TIMESTAMP_WITH_TIMEZONE),
    (T.TimeType, K.TIME),
]
_NULLABLE_OF = {plain: nullable for nullable, plain in NULLABLE.items()}
_ARRAY_OF = {item: array for array, item in ARRAY_ITEM.items()}


def check_type_name(option: str, name: Any) -> str:
    """A Compact type name as given (``com.acme.Order``): a non-empty string, no control
    characters, no space at either end (Java matches it to a class by exact name)."""
    if not isinstance(name, str) or not _TYPE_NAME.fullmatch(name) or not name.isprintable():
        raise OptionError(
            f"option '{option}' must be a Compact type name such as 'com.acme.Order' (non-empty, printable, "
            f"no space at either end), got {name!r}"
        )
    return name


def kind_of(data_type: T.DataType, nullable: bool, path: str) -> K:
    """The Compact kind a column of ``data_type`` is written as (see the module docstring)."""
    for spark, kind in _PLAIN:
        if isinstance(data_type, spark):
            return _NULLABLE_OF[kind] if nullable else kind
    for spark, kind in _VAR:
        if isinstance(data_type, spark):
            return kind
    if isinstance(data_type, T.BinaryType):
        return K.ARRAY_OF_INT8
    if isinstance(data_type, T.StructType):
        return K.COMPACT
    if isinstance(data_type, T.ArrayType):
        element = data_type.elementType
        if not isinstance(element, (T.ArrayType, T.MapType, T.BinaryType)):
            item = kind_of(element, data_type.containsNull, f"{path}[]")
            return _ARRAY_OF[item]
    raise SchemaError(
        f"column '{path}' of type {data_type.simpleString()} has no Compact kind: Compact holds numbers, booleans, "
        "strings, decimals, dates, times, timestamps, structs, binary and arrays of those; convert it (a map to "
        "an array of key/value structs), or write the value with value_format 'auto' (JSON)"
    )


@dataclass
class CompactPlan:
    """How rows of one Spark struct are written: the schema of each struct by path."""

    type_name: str
    spark_type: T.StructType
    schemas: dict[str, Schema] = field(default_factory=dict)
    #: The byte order of the client's stream (big-endian unless configured otherwise).
    big_endian: bool = True
    #: The column the records are written from, for errors.
    column: str = ""

    @classmethod
    def of(
        cls, spark_type: T.StructType, type_name: str, nested: Mapping[str, str] | None = None, column: str = ""
    ) -> CompactPlan:
        """The plan of a struct ``column`` (named in errors) of records of ``type_name``."""
        plan = cls(type_name, spark_type)
        plan.column = column
        names = dict(nested or {})
        plan._add("", spark_type, type_name, names)
        unknown = sorted(set(names) - set(plan.schemas))
        if unknown:
            raise OptionError(
                f"option 'compact_type_names' names {', '.join(map(repr, unknown))}, which is no struct field of "
                f"the value (its struct fields: {', '.join(repr(p) for p in plan.schemas if p) or 'none'})"
            )
        return plan

    def _add(self, path: str, spark_type: T.StructType, type_name: str, names: dict[str, str]) -> None:
        seen: set[str] = set()
        fields = []
        for spark_field in spark_type.fields:
            if spark_field.name in seen:
                raise SchemaError(f"struct '{path or type_name}' has two fields named {spark_field.name!r}")
            seen.add(spark_field.name)
            inner = f"{path}.{spark_field.name}" if path else spark_field.name
            kind = kind_of(
                spark_field.dataType, spark_field.nullable, f"{self.column}.{inner}" if self.column else inner
            )
            fields.append(FieldDescriptor(spark_field.name, kind))
            nested = spark_field.dataType
            if isinstance(nested, T.ArrayType):
                nested = nested.elementType
            if isinstance(nested, T.StructType):
                given = names.get(inner)
                nested_name = (
                    check_type_name(f"compact_type_names[{inner!r}]", given)
                    if given
                    else f"{type_name}.{spark_field.name}"
                )
                self._add(inner, nested, nested_name, names)
        self.schemas[path] = Schema(type_name, fields)

    # --- encoding ----------------------------------------------------------------------------------

    def encode(self, column: pa.Array, where: str) -> list[bytes | None]:
        """The ``Data`` bytes of each row of a struct ``column`` (None for a null row), built a
        field at a time over the whole column (:class:`_Writer`)."""
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        try:
            records = _Writer(self).records(self.schemas[""], column, "")
        except (struct.error, OverflowError, TypeError, ValueError) as exc:
            raise SchemaError(f"{where}: a row cannot be written as Compact {self.type_name!r}: {exc}") from None
        return [None if record is None else _DATA_HEADER + record for record in records]


class _Writer:
    def __init__(self, plan: CompactPlan) -> None:
        self.plan = plan
        self.order = ">" if plan.big_endian else "<"
        self._i32 = struct.Struct(self.order + "i").pack
        self._i64 = struct.Struct(self.order + "q").pack

    def records(self, schema: Schema, column: pa.Array, path: str) -> list[bytes | None]:
        """Each row of struct ``column`` as a record of ``schema`` (None for a null row): the fixed
        section of every row at once with numpy, each variable-size field's bytes a column at a
        time, then one join per row with its positions."""
        n = len(column)
        children = {column.type.field(i).name: column.field(i) for i in range(column.type.num_fields)}
        fixed = np.zeros((n, schema.fix_sized_fields_length), dtype=np.uint8)
        variable: list[tuple[int, list[bytes | None]]] = []
        for f in schema.fields:
            child = children[f.name]
            inner = f"{path}.{f.name}" if path else f.name
            if f.kind == K.BOOLEAN:
                bits = np.asarray(child.fill_null(False).to_numpy(zero_copy_only=False), dtype=np.uint8)
                fixed[:, f.position] |= bits << f.bit_position
            elif f.kind in FIXED:
                code = FIXED[f.kind][0]
                values = np.asarray(child.fill_null(0).to_numpy(zero_copy_only=False))
                packed = values.astype(self.order + _NUMPY[code]).view(np.uint8).reshape(n, -1)
                fixed[:, f.position : f.position + packed.shape[1]] = packed
            elif f.kind == K.COMPACT:
                variable.append((f.index, self.records(self.plan.schemas[inner], child, inner)))
            else:
                variable.append((f.index, self.column(f.kind, child, inner)))
        head = self._i64(schema.schema_id)
        rows = fixed.tobytes()
        width = schema.fix_sized_fields_length
        valid = column.is_valid().to_pylist() if column.null_count else None
        out: list[bytes | None] = []
        if not variable:
            for i in range(n):
                out.append(head + rows[i * width : (i + 1) * width] if valid is None or valid[i] else None)
            return out
        variable.sort()
        count = schema.var_sized_field_count
        i32 = self._i32
        for i in range(n):
            if valid is not None and not valid[i]:
                out.append(None)
                continue
            parts = [rows[i * width : (i + 1) * width]]
            positions = [-1] * count
            cursor = width
            for index, encodings in variable:
                encoded = encodings[i]
                if encoded is not None:
                    positions[index] = cursor
                    parts.append(encoded)
                    cursor += len(encoded)
            body = b"".join(parts)
            out.append(head + i32(len(body)) + body + self.positions(len(body), positions))
        return out

    def column(self, kind: K, child: pa.Array, path: str) -> list[bytes | None]:
        """The encoded values of a variable-size field, a column at a time (strings and nullable
        numbers, most fields, without the per-value dispatch of :meth:`value`)."""
        values = child.to_pylist()
        if kind == K.STRING:
            i32 = self._i32
            out: list[bytes | None] = []
            for v in values:
                if v is None:
                    out.append(None)
                else:
                    raw = v.encode("utf-8")
                    out.append(i32(len(raw)) + raw)
            return out
        plain = NULLABLE.get(kind)
        if plain in FIXED:
            pack = struct.Struct(self.order + FIXED[plain][0]).pack
            return [None if v is None else pack(v) for v in values]
        return [None if v is None else self.value(kind, v, path) for v in values]

    def record(self, schema: Schema, row: Mapping[str, Any], path: str) -> bytes:
        """One record of ``schema`` from a row dict (an item of an array of records)."""
        fixed = bytearray(schema.fix_sized_fields_length)
        parts: list[bytes] = []
        positions = [-1] * schema.var_sized_field_count
        cursor = schema.fix_sized_fields_length
        for f in schema.fields:
            value = row.get(f.name)
            inner = f"{path}.{f.name}" if path else f.name
            if f.kind == K.BOOLEAN:
                if value:
                    fixed[f.position] |= 1 << f.bit_position
            elif f.kind in FIXED:
                struct.pack_into(self.order + FIXED[f.kind][0], fixed, f.position, 0 if value is None else value)
            elif value is not None:
                encoded = self.value(f.kind, value, inner)
                positions[f.index] = cursor
                parts.append(encoded)
                cursor += len(encoded)
        body = bytes(fixed) + b"".join(parts)
        head = self._i64(schema.schema_id)
        if not schema.var_sized_field_count:
            return head + body
        return head + self._i32(len(body)) + body + self.positions(len(body), positions)

    def positions(self, length: int, positions: Sequence[int]) -> bytes:
        if length < _UINT8_RANGE:
            return bytes(p & 0xFF for p in positions)
        if length < _UINT16_RANGE:
            return struct.pack(f"{self.order}{len(positions)}H", *(p & 0xFFFF for p in positions))
        return struct.pack(f"{self.order}{len(positions)}i", *positions)

    def value(self, kind: K, value: Any, path: str) -> bytes:
        """A variable-size value of ``kind``."""
        o = self.order
        plain = NULLABLE.get(kind)
        if plain == K.BOOLEAN:
            return b"\x01" if value else b"\x00"
        if plain in FIXED:
            return struct.pack(o + FIXED[plain][0], value)
        if kind == K.STRING:
            raw = value.encode("utf-8")
            return self._i32(len(raw)) + raw
        if kind == K.DECIMAL:
            return self.decimal(value)
        if kind == K.DATE:
            return self._date(value)
        if kind == K.TIME:
            return self._time(value)
        if kind == K.TIMESTAMP:
            return self._date(value) + self._time(value)
        if kind == K.TIMESTAMP_WITH_TIMEZONE:
            offset = value.utcoffset() or dt.timedelta(0)
            return self._date(value) + self._time(value) + self._i32(int(offset.total_seconds()))
        if kind == K.COMPACT:  # an item of an array of records
            return self.record(self.plan.schemas[path], value, path)
        if kind == K.ARRAY_OF_INT8:
            return self._i32(len(value)) + bytes(value)
        if kind == K.ARRAY_OF_BOOLEAN:
            packed = bytearray((len(value) + 7) // 8)
            for i, item in enumerate(value):
                if item:
                    packed[i // 8] |= 1 << (i % 8)
            return self._i32(len(value)) + bytes(packed)
        if kind in PACKED_ARRAYS:
            if any(item is None for item in value):
                raise ValueError(f"column '{path}' holds a null item, which {kind.name} cannot")
            return self._i32(len(value)) + struct.pack(f"{o}{len(value)}{FIXED[ARRAY_ITEM[kind]][0]}", *value)
        item_kind = ARRAY_ITEM[kind]
        items: list[bytes] = []
        item_positions = []
        at = 0
        for item in value:
            if item is None:
                item_positions.append(-1)
                continue
            encoded = self.value(item_kind, item, path)
            item_positions.append(at)
            items.append(encoded)
            at += len(encoded)
        data = b"".join(items)
        return self._i32(len(data)) + self._i32(len(value)) + data + self.positions(len(data), item_positions)

    def decimal(self, value: decimal.Decimal) -> bytes:
        sign, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)  # Spark's decimals are finite
        unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
        raw = unscaled.to_bytes((8 + (unscaled + (unscaled < 0)).bit_length()) // 8, "big", signed=True)
        return self._i32(len(raw)) + raw + self._i32(-exponent)

    def _date(self, value: dt.date) -> bytes:
        return self._i32(value.year) + bytes((value.month, value.day))

    def _time(self, value: dt.time | dt.datetime) -> bytes:
        return bytes((value.hour, value.minute, value.second)) + self._i32(value.microsecond * 1000)


__all__ = ["CompactPlan", "check_type_name", "kind_of"]
