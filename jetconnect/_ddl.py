"""Spark's DDL without a JVM: schema text such as ``"id bigint NOT NULL, name string"`` to a ``StructType``.

A small parser so that a schema string works everywhere (executors, Spark Connect clients), without
a JVM: Spark's own parser needs an active SparkContext. It follows Spark's DDL (checked against
Spark 4.3's parser): names may be quoted in backticks (a backtick inside doubled), the colon in
"name: type" is optional, and the whole schema may be written as one struct<...>.
"""

from __future__ import annotations

import re
from functools import lru_cache

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

from jetconnect._short_repr import short_repr
from jetconnect.errors import SchemaError

#: Nesting deeper than this in DDL is refused: real schemas stay far below it, and every layer of
#: Spark and pyarrow that walks a type does so recursively.
MAX_NESTING = 100


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
        return SchemaError(f"cannot parse schema {short_repr(self.text)}: {what}")

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
            found = "the end" if token is None else repr(short_repr(token, 40, text=True))
            raise self.error(f"expected {want}, found {found} {self.at()}")
        self.i += 1
        return token

    def name(self) -> str:
        token = self.peek()
        if token is not None and token.startswith("`"):
            self.i += 1
            return token[1:-1].replace("``", "`")
        if token is None or not (token[0].isalnum() or token[0] == "_") or token.isdigit():
            found = "the end" if token is None else repr(short_repr(token, 40, text=True))
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
            raise self.error(f"unknown type {short_repr(name, 40, text=True)!r} {at}")
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
            raise self.error(f"expected a small number, found {short_repr(token, 40, text=True)!r} {at}")
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
        if parser.peek() is None and isinstance(struct, StructType) and not struct.fields:
            raise parser.error("it has no columns")
    else:
        struct = parser.fields()
    if parser.peek() is not None:
        raise parser.error(f"unexpected {short_repr(parser.peek(), 40, text=True)!r} {parser.at()}")
    assert isinstance(struct, StructType)
    return struct


__all__ = ["MAX_NESTING", "parse_schema"]
