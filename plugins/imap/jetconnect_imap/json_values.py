"""Spark values as JSON and back, exactly, for the values both backends keep as JSON text (the
embedded store's entries; structs, maps and arrays on Hazelcast, as ``HazelcastJsonValue``).

JSON has objects, arrays, strings, numbers and booleans; Spark has more. So a column's values are
made ready for JSON by their Arrow type (:func:`json_ready`: a map becomes an object, what JSON
cannot hold exactly is refused naming the column) and read back by the Spark type of the column
they fill (:func:`typed`: the text of a binary, date, time, timestamp or decimal becomes that
value again; canonical JSON writes them as hex, ISO and decimal text). What a sink writes, the
same schema reads back.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pyarrow as pa
from pyspark.sql import types as T

from jetconnect.errors import SchemaError


def json_ready(column: pa.Array, name: str) -> list[Any]:
    """The Python values of ``column`` for canonical JSON: a map's entries as an object (its keys
    strings: JSON has no other), anything else as ``to_pylist`` gives it."""
    values = column.to_pylist()
    if not _has_map(column.type):
        return values
    return [_ready(v, column.type, name) for v in values]


def _has_map(data_type: pa.DataType) -> bool:
    if pa.types.is_map(data_type):
        return True
    if pa.types.is_struct(data_type):
        return any(_has_map(data_type.field(i).type) for i in range(data_type.num_fields))
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        return _has_map(data_type.value_type)
    return False


def _ready(value: Any, data_type: pa.DataType, path: str) -> Any:
    if value is None:
        return None
    if pa.types.is_map(data_type):
        if not (pa.types.is_string(data_type.key_type) or pa.types.is_large_string(data_type.key_type)):
            raise SchemaError(
                f"column '{path}' is a map with {data_type.key_type} keys, which a JSON object cannot hold (its keys "
                "are strings): cast the keys to string, or write an array of key/value structs"
            )
        return {k: _ready(v, data_type.item_type, f"{path}[{k!r}]") for k, v in value}
    if pa.types.is_struct(data_type):
        return {
            f.name: _ready(value[f.name], f.type, f"{path}.{f.name}")
            for f in (data_type.field(i) for i in range(data_type.num_fields))
        }
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        return [_ready(v, data_type.value_type, path) for v in value]
    return value


def needs_typing(data_type: T.DataType) -> bool:
    """Whether values parsed from JSON need :func:`typed` to fill a column of ``data_type``."""
    if isinstance(
        data_type, (T.BinaryType, T.DateType, T.TimestampType, T.TimestampNTZType, T.DecimalType, T.TimeType)
    ):
        return True
    if isinstance(data_type, T.StructType):
        return any(needs_typing(f.dataType) for f in data_type.fields)
    if isinstance(data_type, T.ArrayType):
        return needs_typing(data_type.elementType)
    if isinstance(data_type, T.MapType):
        return needs_typing(data_type.valueType)
    return False


def typed(value: Any, data_type: T.DataType) -> Any:
    """A value parsed from canonical JSON as a value of ``data_type``: text back into bytes, dates,
    times, timestamps and decimals; anything else as it is (the core's conversion checks the rest)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            if isinstance(data_type, T.BinaryType):
                return bytes.fromhex(value)
            if isinstance(data_type, T.DecimalType):
                return decimal.Decimal(value)
            if isinstance(data_type, (T.TimestampType, T.TimestampNTZType)):
                return dt.datetime.fromisoformat(value)
            if isinstance(data_type, T.DateType):
                return dt.date.fromisoformat(value)
            if isinstance(data_type, T.TimeType):
                return dt.time.fromisoformat(value)
        except (ValueError, decimal.InvalidOperation):
            return value  # not that text: the core names the value that does not fit
        return value
    if isinstance(data_type, T.StructType) and isinstance(value, dict):
        return {f.name: typed(value.get(f.name), f.dataType) for f in data_type.fields}
    if isinstance(data_type, T.ArrayType) and isinstance(value, list):
        return [typed(v, data_type.elementType) for v in value]
    if isinstance(data_type, T.MapType) and isinstance(value, dict):
        return {k: typed(v, data_type.valueType) for k, v in value.items()}
    return value


__all__ = ["json_ready", "needs_typing", "typed"]
