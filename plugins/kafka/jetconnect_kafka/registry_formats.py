"""Keys and values in the Schema Registry wire format: ``avro-confluent``, ``json-schema-confluent``
and ``protobuf-confluent``, read and written as Confluent's serializers read and write them.

Reading: each record names its writer's schema by id (:mod:`~jetconnect_kafka.wire`); the
schema is fetched once per id per executor process (:mod:`~jetconnect_kafka.schema_registry`)
and the record is decoded into the *reader* schema, which fixes the Spark type: the subject's
latest version (or the one named by ``schema_version``), or a schema the user gives
(``registry_schema``). Avro records of other versions are resolved to it by Avro's own rules
(fastavro's schema resolution: a field added with a default, a field removed, a promoted type);
JSON and Protobuf records are matched to it field by field by name (missing fields are null,
fields it lacks are left out). A record that is not framed, names an id the registry does not
know, or does not resolve is a :class:`~jetconnect_kafka.serde.DecodeError` naming the id.

Writing: the schema is derived from the DataFrame's column (or given), registered under the
subject on the driver (or, with ``auto_register=False``, looked up there: it must be registered
already, and without a given schema the subject's latest version is used), and each value is
framed with its id. The registry is asked on the driver and once per task at most, never per record.
"""

from __future__ import annotations

import datetime
import io
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import fastavro
import pyarrow as pa
from confluent_kafka.schema_registry import Schema
from pyspark.sql.types import DataType, StructField, StructType

from jetconnect.api import rows_to_batch, to_arrow_schema
from jetconnect.avro_schemas import avro_data, avro_type, needs_fixing, to_spark_schema, value_fixer
from jetconnect.errors import OptionError, SchemaError
from jetconnect_kafka import wire
from jetconnect_kafka.errors import KafkaRegistryError
from jetconnect_kafka.json_schemas import from_spark_type, to_spark_type
from jetconnect_kafka.schema_registry import Registry, SchemaNotFound
from jetconnect_kafka.serde import DecodeError, ValueFormat, exact_arrow

REGISTRY_FORMATS = ("avro-confluent", "json-schema-confluent", "protobuf-confluent")
#: The record name of a schema derived from a DataFrame, as Spark's own ``to_avro`` names it.
RECORD_NAME = "topLevelRecord"


@dataclass(frozen=True)
class Binding:
    """Which registry and subject one key or value format uses, and how."""

    registry: Registry
    role: str  # "key" or "value"
    #: the subject; None when it cannot be derived (several topics, a pattern, a topic column)
    subject: str | None
    #: why ``subject`` is None, for the error that asks for option 'subject' / 'key_subject'
    no_subject_because: str = ""
    version: int | None = None
    given: str | None = None
    auto_register: bool = True

    @property
    def subject_option(self) -> str:
        return "subject" if self.role == "value" else "key_subject"

    def subject_name(self) -> str:
        if self.subject is None:
            raise OptionError(
                f"kafka: the {self.role} format needs a Schema Registry subject, and {self.no_subject_because}: "
                f"give option '{self.subject_option}'"
            )
        return self.subject


class _Reading:
    """The reader side of one format: the reader schema's Spark type, and decoders per writer id."""

    spark: DataType

    def decoder(self, writer: Schema, writer_id: int) -> Callable[[memoryview], Any]:
        raise NotImplementedError

    def to_arrow(self, items: list[Any]) -> pa.Array:
        raise NotImplementedError


class RegistryFormat(ValueFormat):
    """A format whose every record carries a schema id: see the module's docstring."""

    name = "registry"
    #: the registry's ``schemaType`` of this format's schemas
    schema_type = "AVRO"

    def __init__(self, binding: Binding) -> None:
        self.binding = binding
        self._reading_state: _Reading | None = None  # made on first use in each process (not pickled)
        self._reader_text: str | None = None
        self._reader_id: int | None = None
        self._writer_id: int | None = None
        self._writer_text: str | None = None
        self._writer_type: DataType | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        # Parsed schemas and decoders are made again in each process from the texts (they hold
        # closures and descriptor pools); the texts and ids are what the driver resolved.
        state["_reading_state"] = None
        state.pop("_encoder", None)
        return state

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.binding.role}, subject={self.binding.subject!r}, {self.binding.registry!r})"
        )

    # --- reading ---------------------------------------------------------------------------------

    def spark_type(self) -> DataType:
        return self._reading().spark

    def _reading(self) -> _Reading:
        if self._reading_state is None:
            if self._reader_text is None:
                self._reader_text, self._reader_id = self._reader_schema()
            self._reading_state = self._make_reading(self._reader_text)
        return self._reading_state

    def _reader_schema(self) -> tuple[str, int | None]:
        """The reader schema's text and id (None for a given schema): asked on the driver."""
        binding = self.binding
        if binding.given is not None:
            return binding.given, None
        found = binding.registry.subject_version(binding.subject_name(), binding.version)
        if found.schema.schema_type != self.schema_type:
            raise KafkaRegistryError(
                f"kafka: subject {found.subject!r} version {found.version} is a {found.schema.schema_type} schema; "
                f"{self.name} reads {self.schema_type} schemas (another {binding.role}_format?)"
            )
        self._check_references(found.schema, f"subject {found.subject!r} version {found.version}")
        return str(found.schema.schema_str), found.schema_id

    def _check_references(self, schema: Schema, what: str) -> None:
        if schema.references:
            names = ", ".join(sorted(str(r.name) for r in schema.references))
            raise KafkaRegistryError(
                f"kafka: {what} refers to other schemas ({names}); schema references are not supported yet "
                f"by {self.name}: register the schema whole"
            )

    def _make_reading(self, text: str) -> _Reading:
        raise NotImplementedError

    def decode(self, values: Sequence[bytes | None]) -> pa.Array:
        reading = self._reading()
        decoders = _decoders_of(self._cache_key())
        out: list[Any] = []
        append = out.append
        for i, value in enumerate(values):
            if value is None:
                append(None)
                continue
            try:
                schema_id, payload = wire.split(value)
            except wire.FrameError as exc:
                raise DecodeError(i, str(exc)) from None
            decode = decoders.get(schema_id)
            if decode is None:
                decode = decoders[schema_id] = self._decoder_for(schema_id, reading, i)
            try:
                append(decode(payload))
            except DecodeError as exc:
                raise DecodeError(i, f"schema id {schema_id}: {exc.reason}") from None
            except Exception as exc:  # noqa: BLE001 - fastavro, json and protobuf raise many types
                raise DecodeError(
                    i, f"schema id {schema_id}: the payload does not decode ({type(exc).__name__}: {exc})"
                ) from None
        return reading.to_arrow(out)

    def _cache_key(self) -> tuple[Any, ...]:
        return (self.binding.registry.url, self.schema_type, self._reader_text)

    def _decoder_for(self, schema_id: int, reading: _Reading, index: int) -> Callable[[memoryview], Any]:
        registry = self.binding.registry
        try:
            writer = registry.schema_by_id(schema_id)
        except SchemaNotFound:
            registry.check_unknown_id(schema_id)  # a URL that is no registry fails the read instead
            raise DecodeError(
                index,
                f"schema id {schema_id} is not in the schema registry at {registry.shown_url} "
                f"(written against another registry, or deleted?)",
            ) from None
        if writer.schema_type != self.schema_type:
            raise DecodeError(
                index,
                f"schema id {schema_id} is a {writer.schema_type} schema, not {self.schema_type} (read as {self.name})",
            )
        try:
            self._check_references(writer, f"schema id {schema_id}")
        except KafkaRegistryError as exc:
            raise DecodeError(index, str(exc)) from None
        try:
            return reading.decoder(writer, schema_id)
        except DecodeError as exc:
            raise DecodeError(index, f"schema id {schema_id}: {exc.reason}") from None

    # --- writing ---------------------------------------------------------------------------------

    def prepare(self, data_type: DataType) -> None:
        """Fix the writer schema for columns of ``data_type`` and its id: register it (or look it
        up) under the subject. The sink calls it on the driver; a task whose copy has it asks nothing."""
        if self._writer_id is not None and self._writer_type == data_type:
            return
        binding = self.binding
        subject = binding.subject_name()
        registry = binding.registry
        if binding.auto_register:
            text = binding.given if binding.given is not None else self._derive(data_type)
            self._writer_id = registry.register(subject, Schema(text, self.schema_type))
        elif binding.given is not None:
            text = binding.given
            found = registry.lookup(subject, Schema(text, self.schema_type))
            if found is None:
                raise KafkaRegistryError(
                    f"kafka: auto_register is off and the given {binding.role} schema (option 'registry_schema') is not "
                    f"registered under subject {subject!r} at {registry.shown_url}: register it, or allow auto_register"
                )
            self._writer_id = found.schema_id
        else:  # as Confluent's use.latest.version: the subject's latest version, which the rows must fit
            latest = registry.subject_version(subject, None)
            if latest.schema.schema_type != self.schema_type:
                raise KafkaRegistryError(
                    f"kafka: subject {subject!r} holds {latest.schema.schema_type} schemas, not {self.schema_type}"
                )
            self._check_references(latest.schema, f"subject {subject!r} version {latest.version}")
            text, self._writer_id = str(latest.schema.schema_str), latest.schema_id
        self._writer_text, self._writer_type = text, data_type
        self.__dict__.pop("_encoder", None)

    def _derive(self, data_type: DataType) -> str:
        raise NotImplementedError

    def encode(self, column: pa.Array) -> list[bytes | None]:
        if self._writer_id is None or self._writer_text is None or self._writer_type is None:
            raise KafkaRegistryError(f"kafka sink: the {self.binding.role} format was not prepared (no schema id)")
        encoder = self.__dict__.get("_encoder")
        if encoder is None:
            encoder = self.__dict__["_encoder"] = self._make_encoder(self._writer_text, self._writer_type)
        head = wire.header(self._writer_id)
        return [None if datum is None else head + payload for datum, payload in encoder(column)]

    def _make_encoder(self, text: str, data_type: DataType) -> Callable[[pa.Array], list[tuple[Any, bytes]]]:
        raise NotImplementedError


_DECODERS_LOCK = threading.Lock()
_DECODERS: dict[tuple[Any, ...], dict[int, Callable[[memoryview], Any]]] = {}


def _decoders_of(key: tuple[Any, ...]) -> dict[int, Callable[[memoryview], Any]]:
    """This process's decoders for one reader schema, by writer id (made once each, then kept)."""
    with _DECODERS_LOCK:
        return _DECODERS.setdefault(key, {})


def forget_schemas() -> None:
    """Drop every schema and decoder this process keeps, as a fresh worker starts (for tests)."""
    from jetconnect_kafka import schema_registry

    with _DECODERS_LOCK:
        _DECODERS.clear()
    schema_registry.forget_schemas()


# --- Avro ------------------------------------------------------------------------------------------


def _avro_spark_type(raw: Any, where: str) -> DataType:
    """The Spark type of an Avro schema of any type (a key is often a bare "string" or "long")."""
    if isinstance(raw, dict) and raw.get("type") in ("record", "error"):
        return to_spark_schema(raw, where)
    wrapped = {"type": "record", "name": "wrapper", "fields": [{"name": "value", "type": raw}]}
    return to_spark_schema(wrapped, where).fields[0].dataType


class _AvroReading(_Reading):
    def __init__(self, text: str, reader_id: int | None, where: str) -> None:
        try:
            raw = json.loads(text)
            self.parsed = fastavro.parse_schema(raw)
        except (ValueError, fastavro.schema.SchemaParseException) as exc:
            raise SchemaError(f"{where} is not a valid Avro schema: {exc}") from None
        self.reader_id = reader_id
        self.spark = _avro_spark_type(raw, where)
        wrapped = StructType([StructField("value", self.spark, True)])
        self.arrow_type = to_arrow_schema(wrapped).field("value").type
        # fastavro gives uuid.UUID and datetime.time for uuid and time-of-day values: made str / int
        fix = value_fixer(wrapped) if needs_fixing(raw) else None
        self.fix = None if fix is None else (lambda datum: fix({"value": datum})["value"])

    def decoder(self, writer: Schema, writer_id: int) -> Callable[[memoryview], Any]:
        try:
            writer_parsed = fastavro.parse_schema(json.loads(str(writer.schema_str)))
        except (ValueError, fastavro.schema.SchemaParseException) as exc:
            raise DecodeError(0, f"the registry's schema is not a valid Avro schema: {exc}") from None
        # Resolution (writer -> reader) only when they differ: reading with the writer's own schema is faster.
        reader = None if writer_id == self.reader_id else self.parsed
        read = fastavro.schemaless_reader

        def decode(payload: memoryview) -> Any:
            buffer = io.BytesIO(payload)
            try:
                datum = read(buffer, writer_parsed, reader)
            except fastavro.read.SchemaResolutionError as exc:
                raise DecodeError(0, f"does not resolve to the reader schema by Avro's rules: {exc}") from None
            if buffer.tell() != len(payload):
                raise DecodeError(0, f"{len(payload) - buffer.tell()} byte(s) left over after the Avro record")
            return datum

        return decode

    def to_arrow(self, items: list[Any]) -> pa.Array:
        if self.fix is not None:
            items = [None if item is None else self.fix(item) for item in items]
        return exact_arrow(items, self.arrow_type, "the Avro reader schema")


class AvroConfluentFormat(RegistryFormat):
    """Avro, framed: what Confluent's ``KafkaAvroSerializer`` and confluent-kafka's ``AvroSerializer`` write."""

    name = "avro-confluent"
    schema_type = "AVRO"

    def _make_reading(self, text: str) -> _Reading:
        return _AvroReading(text, self._reader_id, f"kafka: the {self.binding.role} reader schema")

    def _derive(self, data_type: DataType) -> str:
        return json.dumps(avro_type(data_type, RECORD_NAME, owner=f"kafka sink: {self.binding.role} as avro-confluent"))

    def _make_encoder(self, text: str, data_type: DataType) -> Callable[[pa.Array], list[tuple[Any, bytes]]]:
        raw = json.loads(text)
        parsed = fastavro.parse_schema(raw)
        to_data = avro_data(data_type, raw)
        write = fastavro.schemaless_writer

        def encode(column: pa.Array) -> list[tuple[Any, bytes]]:
            out = []
            for datum in to_data(column):
                if datum is None:
                    out.append((None, b""))
                    continue
                buffer = io.BytesIO()
                write(buffer, parsed, datum)
                out.append((datum, buffer.getvalue()))
            return out

        return encode


# --- JSON Schema -----------------------------------------------------------------------------------


class _JsonReading(_Reading):
    def __init__(self, text: str, where: str) -> None:
        try:
            raw = json.loads(text)
        except ValueError as exc:
            raise SchemaError(f"{where} is not JSON: {exc}") from None
        self.spark = to_spark_type(raw, where)
        self.one_column = StructType([StructField("value", self.spark, True)])

    def decoder(self, writer: Schema, writer_id: int) -> Callable[[memoryview], Any]:
        spark = self.spark

        def decode(payload: memoryview) -> Any:
            try:
                return _fit(json.loads(bytes(payload)), spark)
            except (ValueError, UnicodeDecodeError) as exc:
                raise DecodeError(0, f"the payload is not JSON ({exc})") from None

        return decode

    def to_arrow(self, items: list[Any]) -> pa.Array:
        return _exact_rows(items, self.one_column, "the JSON reader schema")


def _fit(value: Any, data_type: DataType) -> Any:
    """``value`` with the object keys ``data_type``'s structs lack left out, at every depth (a
    newer writer's fields), so the exact conversion judges only what the reader schema has."""
    from pyspark.sql.types import ArrayType, MapType

    if isinstance(data_type, StructType) and isinstance(value, dict):
        fields = {f.name: f.dataType for f in data_type.fields}
        return {k: _fit(v, fields[k]) for k, v in value.items() if k in fields}
    if isinstance(data_type, ArrayType) and isinstance(value, list):
        return [_fit(v, data_type.elementType) for v in value]
    if isinstance(data_type, MapType) and isinstance(value, dict):
        return {k: _fit(v, data_type.valueType) for k, v in value.items()}
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} has no JSON form")


class JsonSchemaConfluentFormat(RegistryFormat):
    """JSON, framed, with a JSON Schema: what ``KafkaJsonSchemaSerializer`` and ``JSONSerializer`` write."""

    name = "json-schema-confluent"
    schema_type = "JSON"

    def _make_reading(self, text: str) -> _Reading:
        return _JsonReading(text, f"kafka: the {self.binding.role} reader schema")

    def _derive(self, data_type: DataType) -> str:
        return json.dumps(
            from_spark_type(data_type, RECORD_NAME, f"kafka sink: {self.binding.role} as json-schema-confluent")
        )

    def _make_encoder(self, text: str, data_type: DataType) -> Callable[[pa.Array], list[tuple[Any, bytes]]]:
        to_data = avro_data(data_type)  # maps as dicts: the same Python values Avro gets

        def encode(column: pa.Array) -> list[tuple[Any, bytes]]:
            return [
                (
                    datum,
                    b""
                    if datum is None
                    else json.dumps(datum, default=_json_default, allow_nan=False, separators=(",", ":")).encode(),
                )
                for datum in to_data(column)
            ]

        return encode


# --- shared ----------------------------------------------------------------------------------------


def _exact_rows(items: list[Any], one_column: StructType, what: str) -> pa.Array:
    """Items converted by the core's exact rules (1.5 is no bigint, "1" no int) into one column."""
    rows = [(item,) for item in items]
    try:
        return rows_to_batch(rows, one_column, "kafka").column(0)
    except SchemaError:
        for i, row in enumerate(rows):
            try:
                rows_to_batch([row], one_column, "kafka")
            except SchemaError as exc:
                reason = str(exc).split(": column ", 1)[-1]
                raise DecodeError(i, f"value does not fit {what}: column {reason}") from None
        raise


def source_bindings(
    registry: Registry | None,
    topics: Sequence[str],
    subject: str | None,
    key_subject: str | None,
    version: int | None,
    given: str | None,
) -> dict[str, Binding | None]:
    """The source's bindings by role: subjects by the topic-name strategy (``<topic>-value``,
    ``<topic>-key``) when it reads one topic, else the ones the user names."""
    if registry is None:
        for option, value in (
            ("subject", subject),
            ("key_subject", key_subject),
            ("schema_version", version),
            ("registry_schema", given),
        ):
            if value is not None:
                raise OptionError(
                    f"kafka: option '{option}' is for a Schema Registry format: give schema_registry_url too"
                )
        return {"key": None, "value": None}
    if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version < 1):
        raise OptionError(f"kafka: option 'schema_version' must be a version number (1, 2, ...), got {version!r}")
    why = "the source reads several topics" if len(topics) > 1 else "the source reads topics by pattern"
    own = topics[0] if len(topics) == 1 else None
    return {
        "key": Binding(registry, "key", key_subject or (own and f"{own}-key"), why),
        "value": Binding(registry, "value", subject or (own and f"{own}-value"), why, version, given),
    }


def sink_bindings(
    registry: Registry | None,
    topic: str | None,
    subject: str | None,
    key_subject: str | None,
    given: str | None,
    auto_register: bool,
) -> dict[str, Binding | None]:
    """The sink's bindings by role: subjects of option ``topic`` by the topic-name strategy, else named."""
    if registry is None:
        for option, value in (("subject", subject), ("key_subject", key_subject), ("registry_schema", given)):
            if value is not None:
                raise OptionError(
                    f"kafka sink: option '{option}' is for a Schema Registry format: give schema_registry_url too"
                )
        return {"key": None, "value": None}
    why = "option 'topic' is not set (rows name their topic)"
    return {
        "key": Binding(registry, "key", key_subject or (topic and f"{topic}-key"), why, auto_register=auto_register),
        "value": Binding(registry, "value", subject or (topic and f"{topic}-value"), why, None, given, auto_register),
    }


def registry_format(name: str, binding: Binding) -> RegistryFormat:
    if name == "avro-confluent":
        return AvroConfluentFormat(binding)
    if name == "json-schema-confluent":
        return JsonSchemaConfluentFormat(binding)
    from jetconnect_kafka.protobuf_format import ProtobufConfluentFormat

    return ProtobufConfluentFormat(binding)


__all__ = [
    "REGISTRY_FORMATS",
    "AvroConfluentFormat",
    "Binding",
    "JsonSchemaConfluentFormat",
    "RegistryFormat",
    "forget_schemas",
    "registry_format",
    "sink_bindings",
    "source_bindings",
]
