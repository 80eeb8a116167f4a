"""Schemas and Arrow conversion: the one place rows become ``pyarrow.RecordBatch`` objects.

Spark's Python data sources are 3-4x faster when ``read()`` yields Arrow batches, but Spark only
accepts a batch whose Arrow schema equals the one it derives from the declared schema (int64 for
LONG, ``string`` not ``large_string``, nullability, column order). Everything here aims at that.

Items are converted exactly or not at all: Arrow's own conversion from Python objects truncates a
float into an integer column, decodes bytes into a string column, reads a naive datetime as UTC and
matches a ``Row`` by position, so each column is checked for the Python types it may hold (mostly
by Arrow itself, in C) and a failure is traced back to the item and column at fault.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import re
import reprlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from functools import lru_cache
from itertools import accumulate, chain
from operator import countOf, itemgetter, methodcaller
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
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
    Row,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from jetconnect.errors import SchemaError

try:  # numpy scalars are numbers too (pandas, which jetconnect depends on, brings numpy)
    import numpy as _np

    _NP_BOOL: tuple[type, ...] = (_np.bool_,)
    _NP_INT: tuple[type, ...] = (_np.integer,)
    _NP_FLOAT: tuple[type, ...] = (_np.floating,)
except ImportError:  # pragma: no cover
    _NP_BOOL = _NP_INT = _NP_FLOAT = ()

#: Rows converted per Arrow batch when a read yields rows rather than batches.
DEFAULT_BATCH_ROWS = 8192

#: Nesting deeper than this in DDL is refused: real schemas stay far below it, and every layer of
#: Spark and pyarrow that walks a type does so recursively.
MAX_NESTING = 100

# --- DDL -----------------------------------------------------------------------------------------
# A small parser so that a schema string works everywhere (executors, Spark Connect clients),
# without a JVM: Spark's own parser needs an active SparkContext. It follows Spark's DDL (checked
# against Spark 4.3's parser): names may be quoted in backticks (a backtick inside doubled), the
# colon in "name: type" is optional, and the whole schema may be written as one struct<...>.

_SIMPLE_TYPES: dict[str, DataType] = {
    "string": StringType(),
    "varchar": StringType(),
    "char": StringType(),
    "text": StringType(),
    "int": IntegerType(),
    "integer": IntegerType(),
    "bigint": LongType(),
    "long": LongType(),
    "smallint": ShortType(),
    "short": ShortType(),
    "tinyint": ByteType(),
    "byte": ByteType(),
    "double": DoubleType(),
    "float": FloatType(),
    "real": FloatType(),
    "boolean": BooleanType(),
    "bool": BooleanType(),
    "binary": BinaryType(),
    "bytes": BinaryType(),
    "date": DateType(),
    "timestamp": TimestampType(),
    "timestamp_ltz": TimestampType(),
    "timestamp_ntz": TimestampNTZType(),
    "void": NullType(),
}
_DECIMAL_NAMES = ("decimal", "numeric", "dec")
# a token, or (group 2) the first character of something that is none
_TOKEN = re.compile(r"\s*(?:(`(?:[^`]|``)*`|[A-Za-z0-9_]+|[<>(),:])|(\S))")
_UNCACHED_LENGTH = 10_000  # longer DDL is parsed every time rather than kept in the cache


class _DDLParser:
    """Recursive descent over the tokens of one DDL string; every failure is a SchemaError."""

    def __init__(self, text: str) -> None:
        self.text = text
        # tokens are read as the parser needs them: hostile text fails at its first wrong token
        self.matches = _TOKEN.finditer(text)
        self.tokens: list[tuple[str, int]] = []  # (token, character position)
        self.i = 0
        self.depth = 0

    def error(self, what: str) -> SchemaError:
        return SchemaError(f"cannot parse schema {_short(self.text)}: {what}")

    def peek(self, ahead: int = 0) -> str | None:
        while len(self.tokens) <= self.i + ahead:
            match = next(self.matches, None)
            if match is None:
                return None
            if match.group(2) is not None:  # a character no token starts with
                start = match.start(2)
                what = (
                    "an unclosed backtick" if match.group(2) == "`" else f"unexpected {self.text[start : start + 20]!r}"
                )
                raise self.error(f"{what} at character {start}")
            self.tokens.append((match.group(1), match.start(1)))
        return self.tokens[self.i + ahead][0]

    def at(self) -> str:
        """Where the next token is, for error messages."""
        if self.peek() is None:
            return "at the end"
        return f"at character {self.tokens[self.i][1]}"

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token.lower() != expected):
            want = f"'{expected}'" if expected else "more"
            found = "the end" if token is None else repr(_short(token, 40, text=True))
            raise self.error(f"expected {want}, found {found} {self.at()}")
        self.i += 1
        return token

    def name(self) -> str:
        token = self.peek()
        if token is not None and token.startswith("`"):
            self.i += 1
            return token[1:-1].replace("``", "`")
        if token is None or not (token[0].isalnum() or token[0] == "_") or token.isdigit():
            found = "the end" if token is None else repr(_short(token, 40, text=True))
            raise self.error(f"expected a column name, found {found} {self.at()}")
        self.i += 1
        return token

    def fields(self) -> StructType:
        fields: list[StructField] = []
        while True:
            name = self.name()
            if self.peek() == ":":
                self.take(":")
            data_type = self.data_type()
            nullable = True
            if (self.peek() or "").lower() == "not":
                self.take("not")
                self.take("null")
                nullable = False
            if not nullable and isinstance(data_type, NullType):
                raise self.error(f"column '{name}' is void NOT NULL: a void column holds only nulls")
            fields.append(StructField(name, data_type, nullable))
            if self.peek() != ",":
                return StructType(fields)
            self.take(",")

    def data_type(self) -> DataType:
        at = self.at()
        name = self.take().lower()
        if name in _SIMPLE_TYPES:
            return _SIMPLE_TYPES[name]
        if name in _DECIMAL_NAMES:
            return self.decimal()
        if name not in ("array", "map", "struct"):
            raise self.error(f"unknown type {_short(name, 40, text=True)!r} {at}")
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(f"types nested deeper than {MAX_NESTING} levels {at}")
        self.take("<")
        result: DataType
        if name == "array":
            result = ArrayType(self.data_type(), True)
        elif name == "map":
            key = self.data_type()
            self.take(",")
            result = MapType(key, self.data_type(), True)
        else:
            result = StructType([]) if self.peek() == ">" else self.fields()
        self.take(">")
        self.depth -= 1
        return result

    def decimal(self) -> DecimalType:
        precision, scale = 10, 0  # Spark's defaults for a bare DECIMAL
        if self.peek() == "(":
            self.take("(")
            precision = self.number()
            if self.peek() == ",":
                self.take(",")
                scale = self.number()
            self.take(")")
        if not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise self.error(
                f"decimal({precision},{scale}): the precision must be 1 to 38 and the scale 0 to the precision"
            )
        return DecimalType(precision, scale)

    def number(self) -> int:
        at = self.at()
        token = self.take()
        if not token.isdigit() or len(token) > 4:
            raise self.error(f"expected a small number, found {_short(token, 40, text=True)!r} {at}")
        return int(token)


def parse_schema(schema: str | StructType) -> StructType:
    """A ``StructType`` from itself or from DDL text such as ``"id bigint NOT NULL, name string"``.

    Raises :class:`SchemaError` quoting the DDL and saying where it went wrong.
    """
    if isinstance(schema, StructType):
        return schema
    if not isinstance(schema, str):
        raise SchemaError(f"a schema must be DDL text or a StructType, not {type(schema).__name__}")
    if len(schema) > _UNCACHED_LENGTH:
        return _parse(schema)
    return _parse_cached(schema)


@lru_cache(maxsize=256)
def _parse_cached(text: str) -> StructType:
    return _parse(text)


def _parse(text: str) -> StructType:
    parser = _DDLParser(text)
    first = parser.peek()
    if first is None:
        raise parser.error("it is empty")
    if first.lower() == "struct" and parser.peek(1) == "<":
        struct = parser.data_type()  # the whole schema as one struct<...>, as Spark allows
    else:
        struct = parser.fields()
    if parser.peek() is not None:
        raise parser.error(f"unexpected {_short(parser.peek(), 40, text=True)!r} {parser.at()}")
    assert isinstance(struct, StructType)
    return struct


# --- Arrow schemas -------------------------------------------------------------------------------


_by_identity: dict[int, tuple[StructType, pa.Schema]] = {}


def to_arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark expects from a Python data source declaring ``schema``."""
    # Called per batch on hot paths: StructType.json() costs more than the conversion it keys.
    known = _by_identity.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    try:
        arrow = _arrow_schema_cached(schema.json())
    except (TypeError, ValueError, pa.ArrowException) as exc:  # pyspark's own words: unsupported types and such
        raise SchemaError(f"schema <{_schema_text(schema)}> has no Arrow form: {exc}") from None
    if len(_by_identity) > 1024:
        _by_identity.clear()
    _by_identity[id(schema)] = (schema, arrow)
    return arrow


@lru_cache(maxsize=256)
def _arrow_schema_cached(schema_json: str) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema as spark_to_arrow_schema

    return spark_to_arrow_schema(StructType.fromJson(json.loads(schema_json)), timezone="UTC")


# --- Items to Arrow ------------------------------------------------------------------------------
# An item is a row: a tuple or list (by position), a dict, a Row with field names or a namedtuple
# (by name), or, for a one-column schema, a bare value. Rows are first split into columns, then
# each column is converted by the rules of its type (_array); only when that fails are the values
# looked at one by one, to name the item and column at fault.

_ARROW_ERRORS = (pa.ArrowException, TypeError, ValueError, OverflowError)


class _Mismatch(Exception):
    """Values that do not fit a type: ``path`` names the nested field, ``index`` the item when known."""

    def __init__(self, reason: str, path: tuple[str, ...] = (), index: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path
        self.index = index

    def under(self, step: str) -> _Mismatch:
        return _Mismatch(self.reason, (step, *self.path), self.index)


# What kind of Python value each class holds, the unit the per-type rules are written in.
_NONE, _BOOL, _INT, _FLOAT, _DECIMAL, _STR, _BYTES = "none", "bool", "int", "float", "decimal", "str", "bytes"
_DATE, _DATETIME, _SEQUENCE, _DICT, _NAMED, _ROW, _OTHER = (
    "date",
    "datetime",
    "sequence",
    "dict",
    "named",
    "row",
    "other",
)
_ROW_KINDS = frozenset({_SEQUENCE, _DICT, _NAMED, _ROW})
_PLAIN_ROWS = frozenset({tuple, list})
_kinds: dict[type, str] = {}


def _kind(cls: type) -> str:
    kind = _kinds.get(cls)
    if kind is None:
        kind = _classify(cls)
        if len(_kinds) < 4096:  # classes made on the fly must not grow this without end
            _kinds[cls] = kind
    return kind


def _classify(cls: type) -> str:  # noqa: PLR0911 - one answer per kind
    if cls is type(None):
        return _NONE
    if issubclass(cls, (bool, *_NP_BOOL)):  # before int: bool is an int to Python
        return _BOOL
    if issubclass(cls, (int, *_NP_INT)):
        return _INT
    if issubclass(cls, (float, *_NP_FLOAT)):
        return _FLOAT
    if issubclass(cls, Decimal):
        return _DECIMAL
    if issubclass(cls, str):
        return _STR
    if issubclass(cls, (bytes, bytearray, memoryview)):
        return _BYTES
    if cls.__name__ == "NaTType":  # pandas' missing datetime is a datetime whose methods raise: no value
        return _OTHER
    if issubclass(cls, dt.datetime):  # before date: a datetime is a date to Python
        return _DATETIME
    if issubclass(cls, dt.date):
        return _DATE
    if issubclass(cls, Row):
        return _ROW  # by name when it has field names (Row(a=1)), else by position (Row(1))
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return _NAMED  # a namedtuple
    if issubclass(cls, (tuple, list)):
        return _SEQUENCE
    if issubclass(cls, Mapping):
        return _DICT
    return _OTHER


def _require(values: list[Any], allowed: frozenset[str], expected: str) -> None:
    """Raise naming the first value whose kind is not ``allowed``; cheap: one pass in C."""
    classes = set(map(type, values))
    bad = [cls for cls in classes if _kind(cls) not in allowed]
    if bad:
        value = next(v for v in values if type(v) in bad)
        raise _Mismatch(f"{_short(value, 80)} ({type(value).__name__}) is not {expected}")


def _typed(values: list[Any], data_type: pa.DataType) -> pa.Array:
    """Arrow's own conversion, for the types whose Python values it converts exactly."""
    try:
        return pa.array(values, type=data_type)
    except _ARROW_ERRORS as exc:
        raise _Mismatch(_arrow_reason(values, exc)) from None


def _arrow_reason(values: list[Any], exc: Exception | str) -> str:
    return f"{_short(values[0], 80)}: {exc}" if len(values) == 1 else str(exc)


_INT_KINDS = frozenset({_NONE, _INT})
_FLOAT_KINDS = frozenset({_NONE, _INT, _FLOAT})
_DECIMAL_KINDS = frozenset({_NONE, _INT, _DECIMAL})
_STR_KINDS = frozenset({_NONE, _STR})
_BYTES_KINDS = frozenset({_NONE, _BYTES})
_BOOL_KINDS = frozenset({_NONE, _BOOL})
_DATE_KINDS = frozenset({_NONE, _DATE})
_DATETIME_KINDS = frozenset({_NONE, _DATETIME})
_LIST_KINDS = frozenset({_NONE, _SEQUENCE})
_MAP_KINDS = frozenset({_NONE, _DICT})
_NULL_KINDS = frozenset({_NONE})


def _integers(values: list[Any], data_type: pa.DataType) -> pa.Array:
    # A typed conversion would truncate 1.5 and Decimal('1.5') to 1. Letting Arrow infer the
    # type instead costs about a third more, still in C, and any float, Decimal, bool or string
    # among the ints shows as a non-integer type or an error. (Counting the ints first and then
    # converting typed costs more than inferring: measured.)
    try:
        inferred = pa.array(values)
    except _ARROW_ERRORS as exc:
        _require(values, _INT_KINDS, "an integer")
        huge = next((v for v in values if v is not None and not -(2**63) <= v < 2**63), None)
        reason = f"{_short(huge, 80)} does not fit in 64 bits" if huge is not None else _arrow_reason(values, exc)
        raise _Mismatch(reason) from None
    if not (pa.types.is_integer(inferred.type) or pa.types.is_null(inferred.type)):
        _require(values, _INT_KINDS, "an integer")
        raise _Mismatch(f"the values are {inferred.type}, not integers")
    try:
        return inferred.cast(data_type)  # safe: out of range is an error
    except _ARROW_ERRORS as exc:
        raise _Mismatch(f"out of range for {_spark_name(data_type)}: {exc}") from None


def _floats(values: list[Any], data_type: pa.DataType) -> pa.Array:
    _require(values, _FLOAT_KINDS, "a number")  # Arrow would take True for 1.0
    array = _typed(values, data_type)  # Arrow refuses an int it cannot represent exactly
    if pa.types.is_float32(data_type) and array.null_count < len(array) and pc.any(pc.is_inf(array)).as_py():
        # rounding to single precision is what a FLOAT column means; overflowing to infinity is not
        for value, out in zip(values, array.to_pylist()):
            if out in (float("inf"), float("-inf")) and float(value) not in (float("inf"), float("-inf")):
                raise _Mismatch(f"{_short(value, 80)} is beyond the range of float (single precision)")
    return array


def _decimals(values: list[Any], data_type: pa.DataType) -> pa.Array:
    _require(values, _DECIMAL_KINDS, "a Decimal or an int")
    try:
        return pa.array(values, type=data_type)  # refuses what would need rounding or more digits
    except _ARROW_ERRORS as exc:
        if len(values) == 1:
            what = f"{_short(values[0], 80)} does not fit {_spark_name(data_type)}"
            raise _Mismatch(f"{what} without rounding ({exc})") from None
        raise _Mismatch(str(exc)) from None


def _strings(values: list[Any], data_type: pa.DataType) -> pa.Array:
    # A typed conversion would decode bytes; inferring gives binary as soon as one value is bytes.
    try:
        inferred = pa.array(values)
    except _ARROW_ERRORS as exc:
        _require(values, _STR_KINDS, "a string")
        raise _Mismatch(_arrow_reason(values, exc)) from None
    if not (
        pa.types.is_string(inferred.type) or pa.types.is_large_string(inferred.type) or pa.types.is_null(inferred.type)
    ):
        _require(values, _STR_KINDS, "a string")
        raise _Mismatch(f"the values are {inferred.type}, not strings")
    try:
        return inferred.cast(data_type)
    except _ARROW_ERRORS as exc:
        raise _Mismatch(str(exc)) from None


def _binaries(values: list[Any], data_type: pa.DataType) -> pa.Array:
    _require(values, _BYTES_KINDS, "bytes")  # Arrow would encode a str
    return _typed(values, data_type)


def _booleans(values: list[Any], data_type: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, type=data_type)  # Arrow takes only bools here
    except _ARROW_ERRORS as exc:
        _require(values, _BOOL_KINDS, "a bool")
        raise _Mismatch(_arrow_reason(values, exc)) from None


def _dates(values: list[Any], data_type: pa.DataType) -> pa.Array:
    _require(values, _DATE_KINDS, "a date")  # Arrow would cut a datetime's time off
    return _typed(values, data_type)


def _is_naive(value: dt.datetime) -> bool:
    return value.utcoffset() is None


def _timestamps(values: list[Any], data_type: pa.DataType) -> pa.Array:
    # Arrow reads a naive datetime as UTC and shifts an aware one into a timestamp_ntz column: a
    # TIMESTAMP (an instant) takes only aware datetimes, a TIMESTAMP_NTZ (a wall clock) only naive.
    _require(values, _DATETIME_KINDS, "a datetime")
    aware = data_type.tz is not None
    present = [v for v in values if v is not None]
    if set(map(_is_naive, present)) - {not aware}:
        value = next(v for v in present if _is_naive(v) == aware)
        if aware:
            raise _Mismatch(
                f"{_short(value, 80)} has no time zone: a timestamp column takes aware datetimes "
                "(datetime(..., tzinfo=...)); naive ones go in a timestamp_ntz column"
            )
        raise _Mismatch(
            f"{_short(value, 80)} has a time zone: a timestamp_ntz column takes naive datetimes; "
            "instants go in a timestamp column"
        )
    if any(hasattr(cls, "nanosecond") for cls in set(map(type, present))):  # pandas.Timestamp
        value = next((v for v in present if getattr(v, "nanosecond", 0)), None)
        if value is not None:
            raise _Mismatch(f"{_short(value, 80)} has nanoseconds; Spark keeps microseconds")
    return _typed(values, data_type)


def _nulls(values: list[Any], data_type: pa.DataType) -> pa.Array:
    _require(values, _NULL_KINDS, "None")
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
    _require(values, _LIST_KINDS, "a list or tuple")
    offsets, mask, present = _offsets(values)
    element = data_type.value_field
    try:
        items = _array(list(chain.from_iterable(present)), element.type)
        if not element.nullable and items.null_count:
            raise _Mismatch("an element is None but the array's elements are NOT NULL")
    except _Mismatch as exc:
        raise exc.under("[]") from None
    return pa.ListArray.from_arrays(offsets, items, type=data_type, mask=mask)


def _maps(values: list[Any], data_type: pa.DataType) -> pa.Array:
    _require(values, _MAP_KINDS, "a dict")  # Arrow would take a list of pairs, repeats and all
    offsets, mask, present = _offsets(values)
    try:
        keys = _array(list(chain.from_iterable(present)), data_type.key_type)
        if keys.null_count:
            raise _Mismatch("a key is None; map keys cannot be null")
    except _Mismatch as exc:
        raise exc.under("[key]") from None
    try:
        items = _array(list(chain.from_iterable(map(methodcaller("values"), present))), data_type.item_type)
        if not data_type.item_field.nullable and items.null_count:
            raise _Mismatch("a value is None but the map's values are NOT NULL")
    except _Mismatch as exc:
        raise exc.under("[value]") from None
    return pa.MapArray.from_arrays(offsets, keys, items, type=data_type, mask=mask)


def _structs(values: list[Any], data_type: pa.DataType) -> pa.Array:
    fields = list(data_type)
    columns, mask = _split(values, fields, top=False)
    if not fields:  # struct<>: nothing to build children from, so nothing to tell the length by
        return pa.array([{}] * len(values) if mask is None else [None if m else {} for m in mask], type=data_type)
    null_parents = pa.array(mask) if mask is not None else None
    children = [_child(column, field, null_parents) for column, field in zip(columns, fields)]
    return pa.StructArray.from_arrays(children, fields=fields, mask=null_parents)


def _child(values: list[Any], field: pa.Field, null_parents: pa.Array | None) -> pa.Array:
    try:
        return _column(values, field, null_parents)
    except _Mismatch as exc:
        raise exc.under(field.name) from None


def _column(values: list[Any], field: pa.Field, null_parents: pa.Array | None = None) -> pa.Array:
    """The values of one field, refusing None in a NOT NULL field (but under a null struct)."""
    array = _array(values, field.type)
    if not field.nullable and array.null_count:
        # the None a null struct leaves in each of its fields is no violation
        if null_parents is None or pc.any(pc.and_(array.is_null(), pc.invert(null_parents))).as_py():
            raise _Mismatch("is NOT NULL but got None")
    return array


def _array(values: list[Any], data_type: pa.DataType) -> pa.Array:
    """``values`` as an Arrow array of ``data_type``, every value exactly, or :class:`_Mismatch`."""
    convert = _CONVERTERS.get(data_type.id, _typed)  # _typed: types DDL cannot declare (intervals...)
    try:
        return convert(values, data_type)
    except (_Mismatch, MemoryError):
        raise
    except Exception as exc:  # a value's own methods raised (a broken Mapping, a strange tzinfo): name it
        raise _Mismatch(_arrow_reason(values, f"{type(exc).__name__}: {exc}")) from None


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


def _split(records: list[Any], fields: list[pa.Field], top: bool) -> tuple[list[list[Any]], list[bool] | None]:
    """Records as one list of values per field, and which records are None (a null struct).

    At the top (``top``) a record that is not a row is a bare value, allowed for one column only.
    """
    width = len(fields)
    # the common case, checked and split in C: all tuples (counted: cheaper than a set of types), or lists
    if countOf(map(type, records), tuple) == len(records) or set(map(type, records)) <= _PLAIN_ROWS:
        try:
            if width == 1:
                return [[v for (v,) in records]], None  # unpacking checks the width too
            if set(map(len, records)) - {width}:
                raise ValueError
        except ValueError:
            index = next(i for i, r in enumerate(records) if len(r) != width)
            raise _Mismatch(_count(len(records[index]), width), index=index) from None
        return _transpose(records, width), None
    names = [f.name for f in fields]
    resolve = _Resolver(names, [f.name for f in fields if not f.nullable])
    rows: list[Sequence[Any]] = []
    mask: list[bool] | None = None
    for index, record in enumerate(records):
        kind = _kind(type(record))
        try:
            if kind in _ROW_KINDS:
                if top and kind == _DICT and not record:
                    # it would be a row of NULLs: nearly always a function that built nothing
                    raise _Mismatch("an empty dict is not a row: it names none of the columns")
                rows.append(_resolved(resolve, record, kind))
            elif top and width == 1:
                rows.append((record,))
            elif record is None and not top:
                rows.append((None,) * width)
                if mask is None:
                    mask = [False] * index
                mask.append(True)
                continue
            else:
                what = "item" if top else "struct value"
                raise _Mismatch(
                    f"{_short(record, 80)} ({type(record).__name__}) is not a row: "
                    f"an {what} for {width} columns is a tuple, list, dict or Row"
                )
        except _Mismatch as exc:
            exc.index = index
            raise
        if mask is not None:
            mask.append(False)
    return _transpose(rows, width), mask


def _resolved(resolve: _Resolver, record: Any, kind: str) -> Sequence[Any]:
    try:
        return resolve(record, kind)
    except (_Mismatch, MemoryError):
        raise
    except Exception as exc:  # a Mapping or sequence of the user's that fails to be read: name it
        raise _Mismatch(f"{type(exc).__name__}: {exc}") from None


def _transpose(rows: list[Sequence[Any]], width: int) -> list[list[Any]]:
    # One pass in C per column; faster than zip(*rows) or slicing a flattened list (measured).
    return [list(map(itemgetter(i), rows)) for i in range(width)]


def _count(values: int, columns: int) -> str:
    return f"{values} value{'' if values == 1 else 's'} for {columns} column{'' if columns == 1 else 's'}"


class _Resolver:
    """One row as a tuple in schema order: by position for tuples, by name for dicts and named rows."""

    def __init__(self, names: list[str], required: list[str]) -> None:
        self.names = names
        self.known = set(names)
        self.required = required

    def __call__(self, record: Any, kind: str) -> Sequence[Any]:
        if kind == _DICT:
            return self.by_name(record)
        if kind == _NAMED:
            return self.by_name(record._asdict())
        if kind == _ROW and hasattr(record, "__fields__"):
            fields = record.__fields__
            if len(set(fields)) != len(fields):
                twice = next(f for f in fields if fields.count(f) > 1)
                raise _Mismatch(
                    f"the Row has the field '{twice}' twice; which one is meant is unclear", path=(str(twice),)
                )
            if fields == self.names:  # same names, same order: nothing to move
                return record
            return self.by_name(dict(zip(fields, record)))
        if len(record) != len(self.names):  # a tuple, list or Row(1, 2): by position
            raise _Mismatch(_count(len(record), len(self.names)))
        return record

    def by_name(self, record: Mapping[Any, Any]) -> tuple[Any, ...]:
        if len(self.names) != len(self.known):
            raise _Mismatch("the schema has two columns of the same name, so items cannot be matched by name")
        for key in record:
            if key not in self.known:
                close = difflib.get_close_matches(str(key), self.names, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise _Mismatch(
                    f"{_short(key, 80, text=True)!r} is not a column of the schema{hint}; "
                    "nothing in an item may be left behind",
                    path=(str(key),),
                )
        for name in self.required:
            if name not in record:
                raise _Mismatch(f"the item has no '{name}', a NOT NULL column", path=(name,))
        return tuple(map(record.get, self.names))


def mapped_rows(results: Iterable[Any]) -> list[Any]:
    """What a mapping function (projection, mapper) returned for each item, with the Nones left out.

    Jet's rule for every mapping function: one that returns None filters the item out (a NULL row
    would be neither the item nor nothing, and is what a forgotten ``return`` gives). Every
    connector that applies a user's mapping function passes its results through here.
    """
    return [row for row in results if row is not None]


def rows_to_batch(rows: Sequence[Any], schema: StructType, owner: str) -> pa.RecordBatch:
    """Convert rows (tuples, Rows, dicts, or bare values for a one-column schema) to one batch.

    Tuples and lists match the columns by position; dicts, Rows with field names and namedtuples by
    name (a name the schema lacks, or a missing NOT NULL column, is an error). Every value converts
    exactly or not at all: no float is truncated into an integer, no bytes decoded into a string, no
    naive datetime taken for UTC. Raises :class:`SchemaError` naming ``owner``, the item (its index
    in ``rows`` and its value, shortened) and the column.
    """
    arrow_schema = to_arrow_schema(schema)
    items = rows if isinstance(rows, list) else list(rows)
    if not items:
        return pa.RecordBatch.from_pylist([], schema=arrow_schema)
    fields = list(arrow_schema)
    bare = len(fields) == 1 and _kind(type(items[0])) not in _ROW_KINDS and not pa.types.is_nested(fields[0].type)
    try:
        arrays = _arrays(items, fields, bare)
    except _Mismatch as exc:
        raise _item_error(owner, schema, items, exc) from None
    try:
        return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)
    except _ARROW_ERRORS as exc:  # e.g. more than 2 GiB of strings in one column
        raise SchemaError(
            f"{owner}: items do not fit one Arrow batch of schema <{_schema_text(schema)}>: {exc}"
        ) from None


def _arrays(items: list[Any], fields: list[pa.Field], bare: bool) -> list[pa.Array]:
    """One array per field; with ``bare``, the items themselves are the one column's values."""
    columns = [items] if bare else _split(items, fields, top=True)[0]
    arrays = []
    for field, values in zip(fields, columns):
        try:
            arrays.append(_column(values, field))
        except _Mismatch as exc:
            if bare and any(_kind(type(v)) in _ROW_KINDS for v in items):
                return _arrays(items, fields, bare=False)  # rows among bare values: split them
            raise _first_bad(values, field, exc).under(field.name) from None
    return arrays


def _first_bad(values: list[Any], field: pa.Field, failure: _Mismatch) -> _Mismatch:
    """The first value of a column that fails alone, with its index (the column failed as a whole)."""
    step = 1024  # chunks first: a big column is then walked value by value over one chunk only
    for start in range(0, len(values), step):
        try:
            _column(values[start : start + step], field)
            continue
        except _Mismatch:
            pass
        for index in range(start, min(start + step, len(values))):
            try:
                _column([values[index]], field)
            except _Mismatch as exc:
                exc.index = index
                return exc
    return failure  # no single value fails alone: the message says so without an item


def _item_error(owner: str, schema: StructType, items: list[Any], exc: _Mismatch) -> SchemaError:
    where = f"column '{'.'.join(exc.path).replace('.[', '[')}': " if exc.path else ""
    if exc.index is None:
        return SchemaError(f"{owner}: items do not match schema <{_schema_text(schema)}>: {where}{exc.reason}")
    return SchemaError(
        f"{owner}: item #{exc.index} of the batch, {_short(items[exc.index])}, does not match schema "
        f"<{_schema_text(schema)}>: {where}{exc.reason}"
    )


def _schema_text(schema: StructType) -> str:
    return _short(schema.simpleString(), text=True)


_SPARK_NAMES = {pa.int8(): "tinyint", pa.int16(): "smallint", pa.int32(): "int", pa.int64(): "bigint"}


def _spark_name(data_type: pa.DataType) -> str:
    if pa.types.is_decimal(data_type):
        return f"decimal({data_type.precision},{data_type.scale})"
    return _SPARK_NAMES.get(data_type, str(data_type))


class _Repr(reprlib.Repr):
    """reprlib with bytes cut before rendering too: a huge value is never rendered whole to be cut."""

    def repr_bytes(self, value: bytes, level: int) -> str:
        return repr(value[: self.maxstring]) + ("..." if len(value) > self.maxstring else "")

    repr_bytearray = repr_bytes


_repr = _Repr()
_repr.maxstring = _repr.maxother = 160
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 8
_repr.maxlevel = 6


def _short(value: Any, limit: int = 200, text: bool = False) -> str:
    """``repr(value)`` (or ``value`` itself, when ``text`` and a str) cut to about ``limit`` characters."""
    rendered = value if text and isinstance(value, str) else _repr.repr(value)
    return rendered if len(rendered) <= limit else rendered[:limit] + "..."


# --- Arrow batches -------------------------------------------------------------------------------


def _null_violation(array: pa.Array, data_type: pa.DataType, path: str) -> str | None:
    """The path of a NOT NULL field nested in ``array`` that holds a null, if any."""
    if pa.types.is_struct(data_type):
        # flatten() gives each field the struct's nulls too: only nulls beyond those count
        for field, child in zip(data_type, array.flatten()):
            if not field.nullable and child.null_count > array.null_count:
                return f"{path}.{field.name}"
            found = _null_violation(child, field.type, f"{path}.{field.name}")
            if found is not None:
                return found
        return None
    if pa.types.is_map(data_type):
        # the entries of the non-null maps only; list_flatten has no kernel for maps, so the map
        # is viewed (zero-copy, slices too) as the list of key-value structs it is laid out as
        entry = pa.struct(
            [("key", array.type.key_type), ("value", array.type.item_type)]
        )  # nullable: a view checks nothing
        entries = pc.list_flatten(array.view(pa.list_(pa.field("entries", entry, nullable=False))))
        keys, items = entries.field(0), entries.field(1)
        if not data_type.item_field.nullable and items.null_count:
            return f"{path}[value]"
        return _null_violation(keys, data_type.key_type, f"{path}[key]") or _null_violation(
            items, data_type.item_type, f"{path}[value]"
        )
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        elements = pc.list_flatten(array)
        if not data_type.value_field.nullable and elements.null_count:
            return f"{path}[]"
        return _null_violation(elements, data_type.value_type, f"{path}[]")
    return None


def conform_batch(batch: pa.RecordBatch, arrow_schema: pa.Schema, owner: str) -> pa.RecordBatch:
    """``batch`` with exactly ``arrow_schema``: columns picked by name, types cast safely."""
    if batch.schema.equals(arrow_schema):
        result = batch
    else:
        try:
            columns = []
            for field in arrow_schema:
                column = batch.column(field.name)
                if not column.type.equals(field.type):
                    column = column.cast(field.type, safe=True)
                columns.append(column)
            result = pa.RecordBatch.from_arrays(columns, schema=arrow_schema)
        except (KeyError, pa.ArrowException, ValueError, TypeError) as exc:
            raise SchemaError(
                f"{owner}: an Arrow batch with schema <{_one_line(batch.schema)}> does not fit the "
                f"declared schema <{_one_line(arrow_schema)}>: {exc}"
            ) from exc
    for field, column in zip(arrow_schema, result.columns):
        found = (
            field.name if not field.nullable and column.null_count else _null_violation(column, field.type, field.name)
        )
        if found is not None:
            raise SchemaError(f"{owner}: an Arrow batch has a null in '{found}', which is NOT NULL")
    return result


def _one_line(schema: pa.Schema) -> str:
    return ", ".join(f"{f.name}: {f.type}{'' if f.nullable else ' not null'}" for f in schema)


def to_batches(
    items: Iterable[Any], schema: StructType, owner: str, batch_rows: int = DEFAULT_BATCH_ROWS
) -> Iterator[pa.RecordBatch]:
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


def spark_rows(batch: pa.RecordBatch) -> Iterator[Any]:
    """Each row of ``batch`` as a pyspark ``Row`` with its column names: what Jet's per-row
    functions (a sink's ``toStringFn``, ``bindFn``, ``toRecordFn``, ``messageFn``) are given."""
    from pyspark.sql import Row

    make_row = Row(*batch.schema.names)
    for values in zip(*(column.to_pylist() for column in batch.columns)):
        yield make_row(*values)


__all__ = [
    "DEFAULT_BATCH_ROWS",
    "MAX_NESTING",
    "conform_batch",
    "parse_schema",
    "rows_to_batch",
    "spark_rows",
    "to_arrow_schema",
    "to_batches",
]
