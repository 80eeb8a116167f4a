"""Value formats: Kafka bytes to Spark columns (source) and Spark columns to bytes (sink).

``bytes`` (as is), ``string`` (UTF-8), ``json`` (a struct given by ``value_schema`` DDL) and
``avro`` (schemaless Avro records given by ``avro_schema``, decoded with fastavro, mapped to Spark
types by the core's :mod:`jetconnect.avro_schemas`, as the avro files source maps them); Kafka's
Java serializers (``short`` ... ``uuid``, :mod:`~jetconnect_kafka.java_types`) and the Schema
Registry formats (``avro-confluent`` ..., :mod:`~jetconnect_kafka.registry_formats`).
Decoders work on whole batches and fall back to one record at a time only to name the record at fault.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from typing import Any, cast

import fastavro
import pyarrow as pa
from pyspark.sql.types import BinaryType, DataType, StringType, StructField, StructType

from jetconnect.api import parse_schema, rows_to_batch, to_arrow_schema
from jetconnect.avro_schemas import needs_fixing, to_spark_schema, value_fixer
from jetconnect.errors import OptionError, SchemaError

FORMATS = ("bytes", "string", "json", "avro")
#: every key and value format: these, Kafka's Java serializers', and the Schema Registry's
ALL_FORMATS = (
    *FORMATS,
    "short",
    "integer",
    "long",
    "float",
    "double",
    "uuid",
    "avro-confluent",
    "json-schema-confluent",
    "protobuf-confluent",
)
#: Describes where record ``i`` of a batch came from, e.g. "topic 'orders' partition 2 offset 17".
Where = Callable[[int], str]


class DecodeError(ValueError):
    """One record cannot be decoded; ``index`` is its position in the batch."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(reason)
        self.index, self.reason = index, reason


class ValueFormat:
    """How one column's bytes map to a Spark type, both ways."""

    name = "bytes"

    def spark_type(self) -> DataType:
        return BinaryType()

    def decode(self, values: Sequence[bytes | None]) -> pa.Array:
        return pa.array(values, type=pa.binary())

    def encode(self, column: pa.Array) -> list[bytes | None]:
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            return [None if v is None else v.encode() for v in column.to_pylist()]
        return column.to_pylist()


class StringFormat(ValueFormat):
    name = "string"

    def spark_type(self) -> DataType:
        return StringType()

    def decode(self, values: Sequence[bytes | None]) -> pa.Array:
        try:
            return pa.array(values, type=pa.binary()).cast(pa.string())  # validates UTF-8 in C
        except pa.ArrowInvalid:
            for i, value in enumerate(values):
                try:
                    value is None or value.decode()
                except UnicodeDecodeError as exc:
                    raise DecodeError(i, f"value is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
            raise


class JsonWriter(ValueFormat):
    """JSON values written from a column of any type (a sink needs no ``value_schema``)."""

    name = "json"

    def encode(self, column: pa.Array) -> list[bytes | None]:
        return [
            None if v is None else json.dumps(v, default=str, separators=(",", ":")).encode()
            for v in column.to_pylist()
        ]


class JsonFormat(JsonWriter):
    """JSON objects decoded into the struct given by ``value_schema`` (missing fields are null)."""

    def __init__(self, schema: StructType) -> None:
        self.schema = schema
        self.arrow_type = pa.struct(list(to_arrow_schema(schema)))
        self._fields = frozenset(schema.fieldNames())
        self._one_column = StructType([StructField("value", schema)])

    def spark_type(self) -> DataType:
        return self.schema

    def decode(self, values: Sequence[bytes | None]) -> pa.Array:
        parsed: list[dict[str, Any] | None] = []
        for i, value in enumerate(values):
            if value is None:
                parsed.append(None)
                continue
            try:
                item = json.loads(value)
            except (ValueError, UnicodeDecodeError) as exc:
                raise DecodeError(i, f"value is not JSON ({exc})") from None
            if not isinstance(item, dict):
                raise DecodeError(i, f"value is JSON {type(item).__name__}, not an object")
            # keys the value_schema lacks are left out, as Spark's from_json leaves them
            parsed.append(item if item.keys() <= self._fields else {k: item[k] for k in self._fields if k in item})
        return self._exact(parsed)

    def _exact(self, parsed: list[dict[str, Any] | None]) -> pa.Array:
        """The struct column, each value converted exactly by the core's rules: 1.5 is no bigint,
        true no double; a value that does not fit is a :class:`DecodeError` naming the record."""
        rows = [(item,) for item in parsed]
        try:
            return rows_to_batch(rows, self._one_column, "kafka").column(0)
        except SchemaError:
            for i, row in enumerate(rows):  # find the record at fault
                try:
                    rows_to_batch([row], self._one_column, "kafka")
                except SchemaError as exc:
                    reason = str(exc).split(": column ", 1)[-1]
                    raise DecodeError(i, f"value does not fit the value_schema: column {reason}") from None
            raise


class AvroFormat(ValueFormat):
    """Schemaless Avro records (no Confluent framing), one record per Kafka value."""

    name = "avro"

    def __init__(self, avro_schema: str | dict) -> None:
        try:
            raw = json.loads(avro_schema) if isinstance(avro_schema, str) else avro_schema
            self.avro = fastavro.parse_schema(raw)
        except (ValueError, fastavro.schema.SchemaParseException) as exc:
            raise OptionError(f"kafka: option 'avro_schema' is not a valid Avro schema: {exc}") from None
        try:
            self.schema = to_spark_schema(raw, "kafka: option 'avro_schema'")
        except SchemaError as exc:
            raise OptionError(str(exc)) from None
        # fastavro gives uuid.UUID and datetime.time for uuid and time-of-day values: made str / int
        self._fix = value_fixer(self.schema) if needs_fixing(raw) else None
        field = StructField("value", self.schema)
        self.arrow_type = to_arrow_schema(StructType([field])).field("value").type

    def spark_type(self) -> DataType:
        return self.schema

    def decode(self, values: Sequence[bytes | None]) -> pa.Array:
        decoded: list[dict[str, Any] | None] = []
        reader = fastavro.schemaless_reader
        for i, value in enumerate(values):
            if value is None:
                decoded.append(None)
                continue
            buffer = io.BytesIO(value)
            try:
                # fastavro types what it reads as any Avro value; the schema is a record (or null or a
                # record: to_spark_schema refuses anything else), so each value is a dict or None.
                decoded.append(cast("dict[str, Any] | None", reader(buffer, self.avro, None)))
            except Exception as exc:  # fastavro raises anything from EOFError to UnicodeDecodeError
                raise DecodeError(i, f"value does not match the Avro schema ({type(exc).__name__}: {exc})") from None
            if buffer.tell() != len(value):
                raise DecodeError(
                    i, f"value does not match the Avro schema ({len(value) - buffer.tell()} bytes left over)"
                )
        if self._fix is not None:
            decoded = [None if record is None else self._fix(record) for record in decoded]
        return exact_arrow(decoded, self.arrow_type, "the Avro schema")

    def encode(self, column: pa.Array) -> list[bytes | None]:
        out: list[bytes | None] = []
        for value in column.to_pylist():
            if value is None:
                out.append(None)
                continue
            buffer = io.BytesIO()
            fastavro.schemaless_writer(buffer, self.avro, value)
            out.append(buffer.getvalue())
        return out


def exact_arrow(items: list[Any], arrow_type: pa.DataType, what: str) -> pa.Array:
    """``items`` as an Arrow array of ``arrow_type``, or a DecodeError naming the first record that does not fit."""
    try:
        return pa.array(items, type=arrow_type)
    except (pa.ArrowException, TypeError, ValueError):
        for i, item in enumerate(items):  # find the record at fault
            try:
                pa.array([item], type=arrow_type)
            except (pa.ArrowException, TypeError, ValueError) as exc:
                raise DecodeError(i, f"value does not fit {what}: {exc}") from None
        raise


def value_format(
    name: str,
    value_schema: str | None = None,
    avro_schema: str | dict | None = None,
    binding: Any = None,
    option: str = "value_format",
    writing: bool = False,
) -> ValueFormat:
    """The format called ``name``, checking that the schema it needs was given; ``binding`` (a
    :class:`~jetconnect_kafka.registry_formats.Binding`) is what a Schema Registry format needs.
    ``writing``: for a sink, where JSON needs no schema (the column is serialised as it is)."""
    name = str(name).lower()
    from jetconnect_kafka.java_types import JAVA_FORMATS, java_format
    from jetconnect_kafka.registry_formats import REGISTRY_FORMATS, registry_format

    if name in JAVA_FORMATS:
        return java_format(name)
    if name in REGISTRY_FORMATS:
        if binding is None:
            raise OptionError(
                f"kafka: {option} {name!r} needs option 'schema_registry_url' (the registry's Confluent API, "
                f"e.g. http://registry:8081 or Apicurio's http://registry:8080/apis/ccompat/v7)"
            )
        return registry_format(name, binding)
    if name == "bytes":
        return ValueFormat()
    if name == "string":
        return StringFormat()
    if name == "json":
        if not value_schema:
            if writing:
                return JsonWriter()
            raise OptionError(
                "kafka: value_format 'json' needs option 'value_schema' (DDL, e.g. 'id bigint, name string')"
            )
        return JsonFormat(parse_schema(value_schema))
    if name == "avro":
        if not avro_schema:
            raise OptionError("kafka: value_format 'avro' needs option 'avro_schema' (the Avro schema as JSON)")
        return AvroFormat(avro_schema)
    raise OptionError(f"kafka: option '{option}' must be one of {', '.join(ALL_FORMATS)}, got {name!r}")


#: formats a key may have (json and avro need a schema option of the value's)
KEY_FORMATS = tuple(f for f in ALL_FORMATS if f not in ("json", "avro"))


def key_format(name: str, binding: Any = None) -> ValueFormat:
    """The key format called ``name``: any format but the schemaless ``json`` and ``avro``."""
    if str(name).lower() not in KEY_FORMATS:
        raise OptionError(f"kafka: option 'key_format' must be one of {', '.join(KEY_FORMATS)}, got {name!r}")
    return value_format(name, binding=binding, option="key_format")


__all__ = [
    "ALL_FORMATS",
    "KEY_FORMATS",
    "key_format",
    "FORMATS",
    "AvroFormat",
    "DecodeError",
    "JsonFormat",
    "StringFormat",
    "ValueFormat",
    "value_format",
]
