"""Schemas and Arrow conversion: the one place rows become ``pyarrow.RecordBatch`` objects.

Spark's Python data sources are 3-4x faster when ``read()`` yields Arrow batches, but Spark only
accepts a batch whose Arrow schema equals the one it derives from the declared schema (int64 for
LONG, ``string`` not ``large_string``, nullability, column order). Everything here aims at that.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import Any

import pyarrow as pa
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
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from jetconnect.errors import SchemaError

#: Rows converted per Arrow batch when a read yields rows rather than batches.
DEFAULT_BATCH_ROWS = 8192

# --- DDL -----------------------------------------------------------------------------------------
# A small parser so that a schema string works everywhere (executors, Spark Connect clients),
# without a JVM: Spark's own parser needs an active SparkContext.

_SIMPLE_TYPES: dict[str, DataType] = {
    "string": StringType(), "varchar": StringType(), "char": StringType(), "text": StringType(),
    "int": IntegerType(), "integer": IntegerType(),
    "bigint": LongType(), "long": LongType(),
    "smallint": ShortType(), "short": ShortType(),
    "tinyint": ByteType(), "byte": ByteType(),
    "double": DoubleType(), "float": FloatType(), "real": FloatType(),
    "boolean": BooleanType(), "bool": BooleanType(),
    "binary": BinaryType(), "bytes": BinaryType(),
    "date": DateType(),
    "timestamp": TimestampType(), "timestamp_ltz": TimestampType(), "timestamp_ntz": TimestampNTZType(),
}
_TOKEN = re.compile(r"\s*(`[^`]*`|[A-Za-z_][A-Za-z0-9_]*|\d+|[<>(),:])")


class _DDLParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[str] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            match = _TOKEN.match(text, pos)
            if match is None:
                raise SchemaError(f"cannot parse schema {text!r} at character {pos}: {text[pos:pos + 20]!r}")
            self.tokens.append(match.group(1))
            pos = match.end()
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token.lower() != expected):
            want = f"'{expected}'" if expected else "more"
            raise SchemaError(f"cannot parse schema {self.text!r}: expected {want}, found {token!r}")
        self.i += 1
        return token

    def fields(self, separator: str | None) -> StructType:
        fields = []
        while True:
            name = self.take().strip("`")
            if separator is not None:
                self.take(separator)
            data_type = self.data_type()
            nullable = True
            if (self.peek() or "").lower() == "not":
                self.take("not")
                self.take("null")
                nullable = False
            fields.append(StructField(name, data_type, nullable))
            if self.peek() != ",":
                return StructType(fields)
            self.take(",")

    def data_type(self) -> DataType:
        name = self.take().lower()
        if name in _SIMPLE_TYPES:
            return _SIMPLE_TYPES[name]
        if name in ("decimal", "numeric", "dec"):
            precision, scale = 10, 0
            if self.peek() == "(":
                self.take("(")
                precision = int(self.take())
                if self.peek() == ",":
                    self.take(",")
                    scale = int(self.take())
                self.take(")")
            return DecimalType(precision, scale)
        if name == "array":
            self.take("<")
            element = self.data_type()
            self.take(">")
            return ArrayType(element, True)
        if name == "map":
            self.take("<")
            key = self.data_type()
            self.take(",")
            value = self.data_type()
            self.take(">")
            return MapType(key, value, True)
        if name == "struct":
            self.take("<")
            struct = self.fields(":")
            self.take(">")
            return struct
        raise SchemaError(f"cannot parse schema {self.text!r}: unknown type {name!r}")


def parse_schema(schema: str | StructType) -> StructType:
    """A ``StructType`` from itself or from DDL text such as ``"id bigint NOT NULL, name string"``."""
    if isinstance(schema, StructType):
        return schema
    if not isinstance(schema, str):
        raise SchemaError(f"a schema must be DDL text or a StructType, not {type(schema).__name__}")
    return _parse_cached(schema)


@lru_cache(maxsize=256)
def _parse_cached(text: str) -> StructType:
    parser = _DDLParser(text)
    struct = parser.fields(None)
    if parser.peek() is not None:
        raise SchemaError(f"cannot parse schema {text!r}: unexpected {parser.peek()!r}")
    return struct


# --- Arrow ---------------------------------------------------------------------------------------


_by_identity: dict[int, tuple[StructType, pa.Schema]] = {}


def to_arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark expects from a Python data source declaring ``schema``."""
    # Called per batch on hot paths: StructType.json() costs more than the conversion it keys.
    known = _by_identity.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    arrow = _arrow_schema_cached(schema.json())
    if len(_by_identity) > 1024:
        _by_identity.clear()
    _by_identity[id(schema)] = (schema, arrow)
    return arrow


@lru_cache(maxsize=256)
def _arrow_schema_cached(schema_json: str) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema as spark_to_arrow_schema

    return spark_to_arrow_schema(StructType.fromJson(json.loads(schema_json)), timezone="UTC")


def rows_to_batch(rows: Sequence[Any], schema: StructType, owner: str) -> pa.RecordBatch:
    """Convert rows (tuples, Rows, dicts, or bare values for a one-column schema) to one batch.

    Raises :class:`SchemaError` naming ``owner`` and the first item that does not fit.
    """
    arrow_schema = to_arrow_schema(schema)
    if not rows:
        return pa.RecordBatch.from_pylist([], schema=arrow_schema)
    try:
        return _convert(rows, arrow_schema)
    except (pa.ArrowException, ValueError, TypeError, OverflowError, KeyError, IndexError) as exc:
        # The fast path assumes every row has the shape of the first; mixed shapes get one
        # more, slower try before the error hunt.
        try:
            return _convert(_as_tuples(rows, arrow_schema.names), arrow_schema)
        except (pa.ArrowException, ValueError, TypeError, OverflowError):
            raise _explain(rows, schema, arrow_schema, owner, exc) from exc


def _as_tuples(rows: Sequence[Any], names: list[str]) -> list[tuple[Any, ...]]:
    one_column = len(names) == 1
    result = []
    for row in rows:
        if isinstance(row, dict):
            result.append(tuple(row.get(n) for n in names))
        elif isinstance(row, (tuple, list)):
            result.append(tuple(row))
        elif one_column:
            result.append((row,))
        else:
            raise ValueError(f"a bare value {row!r} for {len(names)} columns")
    return result


def _convert(rows: Sequence[Any], arrow_schema: pa.Schema) -> pa.RecordBatch:
    first = rows[0]
    if isinstance(first, dict):
        batch = pa.RecordBatch.from_pylist(list(rows), schema=arrow_schema)
    elif len(arrow_schema) == 1:
        if isinstance(first, (tuple, list)):
            # unpacking "(v,)" checks, at comprehension speed, that each row has one value
            column: Sequence[Any] = [v for (v,) in rows]
        else:
            column = rows
        batch = pa.RecordBatch.from_arrays([pa.array(column, type=arrow_schema[0].type)], schema=arrow_schema)
    else:
        # Arrow converts tuples to a struct column in C++, checking every row's width, faster
        # than transposing in Python from about three columns up
        struct = pa.array(rows, type=pa.struct(list(arrow_schema)))
        batch = pa.RecordBatch.from_arrays(struct.flatten(), schema=arrow_schema)
    _check_nulls(batch, arrow_schema)
    return batch


def _check_nulls(batch: pa.RecordBatch, arrow_schema: pa.Schema) -> None:
    for field, column in zip(arrow_schema, batch.columns):
        if not field.nullable and column.null_count:
            raise ValueError(f"column '{field.name}' is NOT NULL but got a null")


def _explain(rows: Sequence[Any], schema: StructType, arrow_schema: pa.Schema, owner: str, exc: Exception) -> SchemaError:
    """Find the first offending item so the error can name it (the batch failed as a whole)."""
    for index, row in enumerate(rows):
        try:
            _check_row(row, arrow_schema)
        except (pa.ArrowException, ValueError, TypeError, OverflowError) as row_exc:
            return SchemaError(
                f"{owner}: item #{index} of the batch, {_short(row)}, does not match schema "
                f"<{schema.simpleString()}>: {row_exc}"
            )
    return SchemaError(f"{owner}: items do not match schema <{schema.simpleString()}>: {exc}")


def _check_row(row: Any, arrow_schema: pa.Schema) -> None:
    if isinstance(row, dict):
        missing = [f.name for f in arrow_schema if f.name not in row and not f.nullable]
        if missing:
            raise ValueError(f"missing NOT NULL field(s) {missing}")
        pa.RecordBatch.from_pylist([row], schema=arrow_schema)
        return
    values = row if isinstance(row, (tuple, list)) else (row,)
    if len(values) != len(arrow_schema):
        raise ValueError(f"{len(values)} values for {len(arrow_schema)} columns")
    for value, field in zip(values, arrow_schema):
        try:
            pa.array([value], type=field.type)
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            raise ValueError(f"column '{field.name}' ({field.type}): {exc}") from None
        if value is None and not field.nullable:
            raise ValueError(f"column '{field.name}' is NOT NULL but got None")


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def conform_batch(batch: pa.RecordBatch, arrow_schema: pa.Schema, owner: str) -> pa.RecordBatch:
    """``batch`` with exactly ``arrow_schema``: columns picked by name, types cast safely."""
    if batch.schema.equals(arrow_schema):
        return batch
    try:
        columns = []
        for field in arrow_schema:
            column = batch.column(field.name)
            if not column.type.equals(field.type):
                column = column.cast(field.type, safe=True)
            columns.append(column)
        result = pa.RecordBatch.from_arrays(columns, schema=arrow_schema)
        _check_nulls(result, arrow_schema)
        return result
    except (KeyError, pa.ArrowException, ValueError, TypeError) as exc:
        raise SchemaError(
            f"{owner}: an Arrow batch with schema <{_one_line(batch.schema)}> does not fit the "
            f"declared schema <{_one_line(arrow_schema)}>: {exc}"
        ) from exc


def _one_line(schema: pa.Schema) -> str:
    return ", ".join(f"{f.name}: {f.type}{'' if f.nullable else ' not null'}" for f in schema)


def to_batches(items: Iterable[Any], schema: StructType, owner: str, batch_rows: int = DEFAULT_BATCH_ROWS) -> Iterator[pa.RecordBatch]:
    """Arrow batches from what a read yields: batches are conformed, rows are grouped and converted."""
    arrow_schema = to_arrow_schema(schema)
    pending: list[Any] = []
    for item in items:
        if isinstance(item, pa.RecordBatch):
            if pending:
                yield rows_to_batch(pending, schema, owner)
                pending = []
            if item.num_rows:
                yield conform_batch(item, arrow_schema, owner)
        elif isinstance(item, pa.Table):
            if pending:
                yield rows_to_batch(pending, schema, owner)
                pending = []
            for batch in item.to_batches():
                if batch.num_rows:
                    yield conform_batch(batch, arrow_schema, owner)
        else:
            pending.append(item)
            if len(pending) >= batch_rows:
                yield rows_to_batch(pending, schema, owner)
                pending = []
    if pending:
        yield rows_to_batch(pending, schema, owner)


__all__ = [
    "DEFAULT_BATCH_ROWS",
    "conform_batch",
    "parse_schema",
    "rows_to_batch",
    "to_arrow_schema",
    "to_batches",
]
