"""``protobuf-confluent``: Protobuf messages in the Schema Registry wire format, without generated code.

A registry holds a Protobuf schema as ``.proto`` text (what Confluent's Java serializer
registers) or as a base64 ``FileDescriptorProto`` (what confluent-kafka's Python serializer
registers); text is compiled by protoc (grpcio-tools' own, run as ``python -m grpc_tools.protoc``:
no code is generated), and messages are read and written as dynamic messages of a
``descriptor_pool`` (``message_factory.GetMessageClass``). The message indexes after the schema
id (:mod:`~jetconnect_kafka.wire`) say which message of the file a record is.

Protobuf to Spark: int32/sint32/sfixed32 -> int, int64/sint64/sfixed64 -> bigint,
uint32/fixed32 -> bigint, uint64/fixed64 -> decimal(20,0) (no value wraps around), float, double,
bool, string, bytes -> binary, enums -> string (the value's name), messages -> structs,
``repeated`` -> arrays, ``map<K, V>`` -> maps, ``google.protobuf.Timestamp`` -> timestamp,
``google.type.Date`` -> date, the wrappers (``Int64Value`` ...) -> their value. A field that is
not set is null if it has presence (messages, ``optional`` scalars, proto2), else its default
(0, "", false), as protobuf itself reads it. The reader schema is the file's first message.

Spark to Protobuf (a write's schema, proto3): one message ``topLevelRecord`` with a field per
column numbered from 1 in column order, nullable scalars ``optional`` (null is "not set"),
structs as nested messages, arrays as ``repeated``, maps with string/integer/boolean keys as
``map``, dates and timestamps as ``google.type.Date`` and ``google.protobuf.Timestamp``. Decimal,
timestamp_ntz, arrays of arrays and arrays holding nulls have no Protobuf form and are refused.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import decimal
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
from confluent_kafka.schema_registry import Schema
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, FileDescriptor
from google.protobuf.message import DecodeError as ProtobufDecodeError
from google.protobuf.message import Message
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
    TimestampType,
)

from jetconnect.api import to_arrow_schema
from jetconnect.avro_schemas import avro_data
from jetconnect.errors import SchemaError
from jetconnect_kafka import wire
from jetconnect_kafka.registry_formats import RECORD_NAME, RegistryFormat, _Reading
from jetconnect_kafka.serde import DecodeError, exact_arrow

_F = FieldDescriptor
_TIMESTAMP = "google.protobuf.Timestamp"
_DATE = "google.type.Date"
_WRAPPERS: dict[str, DataType] = {
    "google.protobuf.DoubleValue": DoubleType(),
    "google.protobuf.FloatValue": FloatType(),
    "google.protobuf.Int64Value": LongType(),
    "google.protobuf.UInt64Value": DecimalType(20, 0),
    "google.protobuf.Int32Value": IntegerType(),
    "google.protobuf.UInt32Value": LongType(),
    "google.protobuf.BoolValue": BooleanType(),
    "google.protobuf.StringValue": StringType(),
    "google.protobuf.BytesValue": BinaryType(),
}
_SCALARS: dict[int, DataType] = {
    _F.TYPE_DOUBLE: DoubleType(),
    _F.TYPE_FLOAT: FloatType(),
    _F.TYPE_INT64: LongType(),
    _F.TYPE_SINT64: LongType(),
    _F.TYPE_SFIXED64: LongType(),
    _F.TYPE_UINT64: DecimalType(20, 0),
    _F.TYPE_FIXED64: DecimalType(20, 0),
    _F.TYPE_INT32: IntegerType(),
    _F.TYPE_SINT32: IntegerType(),
    _F.TYPE_SFIXED32: IntegerType(),
    _F.TYPE_UINT32: LongType(),
    _F.TYPE_FIXED32: LongType(),
    _F.TYPE_BOOL: BooleanType(),
    _F.TYPE_STRING: StringType(),
    _F.TYPE_BYTES: BinaryType(),
}
_UNSIGNED_64 = (_F.TYPE_UINT64, _F.TYPE_FIXED64)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# --- schemas: registry text -> descriptors --------------------------------------------------------


def _include_dirs() -> list[str]:
    """protoc's include path: the well-known types grpcio-tools ships, and google/type/*.proto of
    googleapis-common-protos (a dependency of confluent-kafka's protobuf extra)."""
    import google.type.date_pb2
    import grpc_tools

    return [str(Path(grpc_tools.__file__).parent / "_proto"), str(Path(google.type.date_pb2.__file__).parents[2])]


def file_set(schema_text: str) -> descriptor_pb2.FileDescriptorSet:
    """The schema's files (itself last, its imports before it) as descriptors: a base64
    ``FileDescriptorProto`` taken as it is, ``.proto`` text compiled by protoc."""
    text = schema_text.strip()
    if text and not any(c in text for c in " \n;{"):  # base64 has none of these; .proto text has all
        try:
            proto = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(text, validate=True))
        except (binascii.Error, ProtobufDecodeError, ValueError):
            pass
        else:
            return _with_imports(proto)
    with tempfile.TemporaryDirectory(prefix="jetconnect-proto-") as folder:
        path = Path(folder) / "schema.proto"
        path.write_text(schema_text)
        out = Path(folder) / "schema.pb"
        includes = [f"-I{d}" for d in (folder, *_include_dirs())]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "grpc_tools.protoc",
                *includes,
                "--include_imports",
                f"--descriptor_set_out={out}",
                str(path),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode != 0:
            said = done.stderr.strip().replace(str(path), "schema.proto").replace(folder + "/", "")
            raise SchemaError(f"not a .proto schema protoc compiles: {said[:600]}")
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


def _with_imports(proto: descriptor_pb2.FileDescriptorProto) -> descriptor_pb2.FileDescriptorSet:
    """A descriptor of confluent-kafka's Python serializer, with the well-known files it imports."""
    import google.type.date_pb2  # noqa: F401 - each import puts its file in the default pool
    from google.protobuf import any_pb2, duration_pb2, empty_pb2, struct_pb2, timestamp_pb2, wrappers_pb2  # noqa: F401
    from google.protobuf import descriptor_pool as pools

    files = descriptor_pb2.FileDescriptorSet()
    for name in proto.dependency:
        try:
            known = pools.Default().FindFileByName(name)
        except KeyError:
            raise SchemaError(
                f"the schema imports {name!r}, which is no well-known type; schema references are not supported"
            ) from None
        known.CopyToProto(files.file.add())
    files.file.add().CopyFrom(proto)
    return files


def file_descriptor(schema_text: str) -> FileDescriptor:
    """The schema's file in a pool of its own (two schemas may define the same message names)."""
    pool = descriptor_pool.DescriptorPool()
    files = file_set(schema_text)
    for proto in files.file:
        pool.Add(proto)
    return pool.FindFileByName(files.file[-1].name)


def message_at(file: FileDescriptor, indexes: list[int]) -> Descriptor:
    """The message the indexes of a record name: ``[i, j]`` is nested message j of top-level message i."""
    proto = descriptor_pb2.FileDescriptorProto()
    file.CopyToProto(proto)  # its messages in declaration order, which the indexes count
    try:
        message = file.message_types_by_name[proto.message_type[indexes[0]].name]
        for i in indexes[1:]:
            message = message.nested_types[i]
    except IndexError:
        raise DecodeError(0, f"the message indexes {indexes} name no message of the schema") from None
    return message


# --- Protobuf -> Spark ------------------------------------------------------------------------------


def _is_map(field: FieldDescriptor) -> bool:
    return field.type == _F.TYPE_MESSAGE and field.message_type.GetOptions().map_entry


def _repeated(field: FieldDescriptor) -> bool:
    if hasattr(field, "is_repeated"):  # protobuf >= 6.31; ``label`` went in 7
        return bool(field.is_repeated)
    return bool(field.label == _F.LABEL_REPEATED)


def spark_type_of(message: Descriptor, seen: tuple[str, ...] = ()) -> StructType:
    """The Spark struct of messages of ``message``."""
    if message.full_name in seen:
        raise SchemaError(f"message {message.full_name} holds itself, which Spark cannot represent")
    return StructType([StructField(f.name, _field_type(f, (*seen, message.full_name)), True) for f in message.fields])


def _field_type(field: FieldDescriptor, seen: tuple[str, ...]) -> DataType:
    if _is_map(field):
        key, value = field.message_type.fields_by_name["key"], field.message_type.fields_by_name["value"]
        return MapType(_single_type(key, seen), _single_type(value, seen), False)
    single = _single_type(field, seen)
    return ArrayType(single, False) if _repeated(field) else single


def _single_type(field: FieldDescriptor, seen: tuple[str, ...]) -> DataType:
    if field.type == _F.TYPE_ENUM:
        return StringType()
    if field.type in (_F.TYPE_MESSAGE, _F.TYPE_GROUP):
        name = field.message_type.full_name
        if name == _TIMESTAMP:
            return TimestampType()
        if name == _DATE:
            return DateType()
        if name in _WRAPPERS:
            return _WRAPPERS[name]
        return spark_type_of(field.message_type, seen)
    return _SCALARS[field.type]


def _reader(message: Descriptor) -> Callable[[Message], dict[str, Any]]:
    """Message -> the dict of its Spark struct (made once per message type, then reused)."""
    getters = [(f.name, _getter(f)) for f in message.fields]

    def read(msg: Message) -> dict[str, Any]:
        return {name: get(msg) for name, get in getters}

    return read


def _getter(field: FieldDescriptor) -> Callable[[Message], Any]:
    name = field.name
    if _is_map(field):
        value_of = _single_value(field.message_type.fields_by_name["value"])
        key_of = _single_value(field.message_type.fields_by_name["key"])
        return lambda msg: [(key_of(k), value_of(v)) for k, v in getattr(msg, name).items()]
    value_of = _single_value(field)
    if _repeated(field):
        return lambda msg: [value_of(v) for v in getattr(msg, name)]
    if field.has_presence:
        return lambda msg: value_of(getattr(msg, name)) if msg.HasField(name) else None
    return lambda msg: value_of(getattr(msg, name))


def _single_value(field: FieldDescriptor) -> Callable[[Any], Any]:
    if field.type == _F.TYPE_ENUM:
        names = {v.number: v.name for v in field.enum_type.values}
        return lambda number: names.get(number, str(number))  # an unknown number, as protobuf's JSON writes it
    if field.type in _UNSIGNED_64:
        return decimal.Decimal
    if field.type in (_F.TYPE_MESSAGE, _F.TYPE_GROUP):
        full = field.message_type.full_name
        if full == _TIMESTAMP:
            return lambda ts: ts.ToDatetime(tzinfo=datetime.UTC)
        if full == _DATE:
            return lambda d: datetime.date(d.year, d.month, d.day)
        if full in _WRAPPERS:
            return (lambda w: decimal.Decimal(w.value)) if full.endswith("UInt64Value") else (lambda w: w.value)
        return _reader(field.message_type)
    return lambda v: v


class _ProtobufReading(_Reading):
    def __init__(self, text: str, where: str) -> None:
        try:
            file = file_descriptor(text)
        except SchemaError as exc:
            raise SchemaError(f"{where}: {exc}") from None
        if not file.message_types_by_name:
            raise SchemaError(f"{where}: the .proto schema defines no message")
        self.message = message_at(file, [0])
        self.struct = spark_type_of(self.message)
        self.spark = self.struct
        self.arrow_type = to_arrow_schema(StructType([StructField("value", self.spark, True)])).field("value").type

    def decoder(self, writer: Schema, writer_id: int) -> Callable[[memoryview], Any]:
        try:
            file = file_descriptor(str(writer.schema_str))
        except SchemaError as exc:
            raise DecodeError(0, str(exc)) from None
        classes: dict[tuple[int, ...], tuple[type[Message], Callable[[Message], dict]]] = {}
        reader_fields = [f.name for f in self.struct.fields]

        def decode(payload: memoryview) -> Any:
            indexes, body = wire.read_message_indexes(payload)
            known = classes.get(tuple(indexes))
            if known is None:
                descriptor = message_at(file, indexes)
                known = classes[tuple(indexes)] = (message_factory.GetMessageClass(descriptor), _reader(descriptor))
            cls, read = known
            msg = cls()
            try:
                msg.ParseFromString(bytes(body))
            except ProtobufDecodeError as exc:
                raise DecodeError(0, f"the payload is not a {cls.DESCRIPTOR.full_name} message ({exc})") from None
            record = read(msg)
            # matched to the reader by field name: fields it lacks are left out, missing ones are null
            return {name: record.get(name) for name in reader_fields}

        return decode

    def to_arrow(self, items: list[Any]) -> pa.Array:
        return exact_arrow(items, self.arrow_type, "the Protobuf reader schema")


# --- Spark -> Protobuf ------------------------------------------------------------------------------

_SPARK_TO_PROTO: list[tuple[type[DataType], str]] = [
    (BooleanType, "bool"),
    (ByteType, "int32"),
    (ShortType, "int32"),
    (IntegerType, "int32"),
    (LongType, "int64"),
    (FloatType, "float"),
    (DoubleType, "double"),
    (StringType, "string"),
    (BinaryType, "bytes"),
]
_MAP_KEYS = (StringType, IntegerType, LongType, ShortType, ByteType, BooleanType)


def proto_text(struct: StructType, owner: str, name: str = RECORD_NAME) -> str:
    """A proto3 file with one message ``name`` for rows of ``struct`` (see the module docstring)."""
    imports: set[str] = set()
    body = _message(struct, name, owner, imports, "", "")
    head = ['syntax = "proto3";', ""] + [f'import "{i}";' for i in sorted(imports)]
    return "\n".join([*head, "" if imports else "", body]).replace("\n\n\n", "\n\n")


def _message(struct: StructType, name: str, owner: str, imports: set[str], indent: str, path: str) -> str:
    lines = [f"{indent}message {name} {{"]
    nested: list[str] = []
    for number, f in enumerate(struct.fields, start=1):
        at = f"{path}.{f.name}" if path else f.name
        if not _IDENTIFIER.fullmatch(f.name):
            raise SchemaError(f"{owner}: column '{at}' is no Protobuf field name (letters, digits and '_')")
        label, type_name = _proto_field(f.dataType, f.nullable, at, owner, imports, nested, indent + "  ")
        lines.append(f"{indent}  {label}{type_name} {f.name} = {number};")
    return "\n".join([lines[0], *nested, *lines[1:], f"{indent}}}"])


def _proto_field(
    data_type: DataType, nullable: bool, at: str, owner: str, imports: set[str], nested: list[str], indent: str
) -> tuple[str, str]:
    if isinstance(data_type, ArrayType):
        if isinstance(data_type.elementType, (ArrayType, MapType)):
            raise SchemaError(
                f"{owner}: column '{at}' is {data_type.simpleString()}; Protobuf has no repeated of repeated or of maps"
            )
        return "repeated ", _proto_type(data_type.elementType, at, owner, imports, nested, indent)
    if isinstance(data_type, MapType):
        if not isinstance(data_type.keyType, _MAP_KEYS):
            raise SchemaError(
                f"{owner}: column '{at}' is a map with {data_type.keyType.simpleString()} keys; Protobuf map keys are strings, integers or booleans"
            )
        if isinstance(data_type.valueType, (ArrayType, MapType)):
            raise SchemaError(
                f"{owner}: column '{at}' is {data_type.simpleString()}; a Protobuf map's values cannot be repeated or maps"
            )
        key = _proto_type(data_type.keyType, at, owner, imports, nested, indent)
        value = _proto_type(data_type.valueType, at, owner, imports, nested, indent)
        return "", f"map<{key}, {value}>"
    type_name = _proto_type(data_type, at, owner, imports, nested, indent)
    scalar = not isinstance(data_type, (StructType, DateType, TimestampType))
    return ("optional " if nullable and scalar else ""), type_name


def _proto_type(data_type: DataType, at: str, owner: str, imports: set[str], nested: list[str], indent: str) -> str:
    for spark, proto in _SPARK_TO_PROTO:
        if isinstance(data_type, spark):
            return proto
    if isinstance(data_type, TimestampType) and type(data_type) is TimestampType:
        imports.add("google/protobuf/timestamp.proto")
        return _TIMESTAMP
    if isinstance(data_type, DateType):
        imports.add("google/type/date.proto")
        return _DATE
    if isinstance(data_type, StructType):
        name = "".join(part[:1].upper() + part[1:] for part in at.split(".")[-1].split("_")) or "Nested"
        taken = {line.split()[1] for line in nested if line.strip().startswith("message ")}
        while name in taken or name == RECORD_NAME:
            name += "_"
        nested.append(_message(data_type, name, owner, imports, indent, at))
        return name
    raise SchemaError(
        f"{owner}: column '{at}' is {data_type.simpleString()}, which has no Protobuf type here "
        f"(cast a decimal to string or double, a timestamp_ntz to timestamp)"
    )


def _writer(message: Descriptor, data_type: StructType) -> Callable[[Message, dict[str, Any]], None]:
    """Fills a message from the dict of a row of ``data_type`` (a None leaves the field unset)."""
    setters = []
    for f in data_type.fields:
        field = message.fields_by_name[f.name]
        setters.append((f.name, _setter(field, f.dataType)))

    def fill(msg: Message, record: dict[str, Any]) -> None:
        for name, put in setters:
            value = record.get(name)
            if value is not None:
                put(msg, value)

    return fill


def _setter(field: FieldDescriptor, data_type: DataType) -> Callable[[Message, Any], None]:
    name = field.name
    if isinstance(data_type, MapType):
        value_field = field.message_type.fields_by_name["value"]
        if value_field.type == _F.TYPE_MESSAGE:
            put_value = _message_setter(value_field, data_type.valueType)

            def put_message_map(msg: Message, pairs: dict) -> None:
                target = getattr(msg, name)
                for k, v in pairs.items():
                    if v is None:
                        raise ValueError(f"field '{name}' holds a null map value, which Protobuf cannot carry")
                    put_value(target[k], v)

            return put_message_map

        def put_map(msg: Message, pairs: dict) -> None:
            if any(v is None for v in pairs.values()):
                raise ValueError(f"field '{name}' holds a null map value, which Protobuf cannot carry")
            getattr(msg, name).update(pairs)

        return put_map
    if isinstance(data_type, ArrayType):
        if field.type == _F.TYPE_MESSAGE:
            put_item = _message_setter(field, data_type.elementType)

            def put_messages(msg: Message, items: list) -> None:
                target = getattr(msg, name)
                for item in items:
                    if item is None:
                        raise ValueError(f"field '{name}' holds a null element, which Protobuf cannot carry")
                    put_item(target.add(), item)

            return put_messages

        def put_list(msg: Message, items: list) -> None:
            if any(v is None for v in items):
                raise ValueError(f"field '{name}' holds a null element, which Protobuf cannot carry")
            getattr(msg, name).extend(items)

        return put_list
    if field.type == _F.TYPE_MESSAGE:
        put_sub = _message_setter(field, data_type)
        return lambda msg, value: put_sub(getattr(msg, name), value)
    return lambda msg, value: setattr(msg, name, value)


def _message_setter(field: FieldDescriptor, data_type: DataType) -> Callable[[Message, Any], None]:
    full = field.message_type.full_name
    if full == _TIMESTAMP:
        return lambda target, value: target.FromDatetime(value)
    if full == _DATE:

        def put_date(target: Message, value: datetime.date) -> None:
            target.year, target.month, target.day = value.year, value.month, value.day

        return put_date
    assert isinstance(data_type, StructType)
    fill = _writer(field.message_type, data_type)

    def put_message(target: Message, value: dict[str, Any]) -> None:
        target.SetInParent()  # an empty struct is a message that is set, not null
        fill(target, value)

    return put_message


class ProtobufConfluentFormat(RegistryFormat):
    """Protobuf, framed with message indexes: what ``KafkaProtobufSerializer`` and ``ProtobufSerializer`` write."""

    name = "protobuf-confluent"
    schema_type = "PROTOBUF"

    def _make_reading(self, text: str) -> _Reading:
        return _ProtobufReading(text, f"kafka: the {self.binding.role} reader schema")

    def _derive(self, data_type: DataType) -> str:
        owner = f"kafka sink: {self.binding.role} as protobuf-confluent"
        if not isinstance(data_type, StructType):
            raise SchemaError(
                f"{owner}: the column is {data_type.simpleString()}; a Protobuf record is a struct column"
            )
        return proto_text(data_type, owner)

    def _make_encoder(self, text: str, data_type: DataType) -> Callable[[pa.Array], list[tuple[Any, bytes]]]:
        owner = f"kafka sink: {self.binding.role} as protobuf-confluent"
        if not isinstance(data_type, StructType):
            raise SchemaError(
                f"{owner}: the column is {data_type.simpleString()}; a Protobuf record is a struct column"
            )
        file = file_descriptor(text)
        message = message_at(file, [0])
        missing = [f.name for f in data_type.fields if f.name not in message.fields_by_name]
        if missing:
            raise SchemaError(
                f"{owner}: message {message.full_name} has no field(s) {', '.join(missing)} of the DataFrame"
            )
        cls = message_factory.GetMessageClass(message)
        fill = _writer(message, data_type)
        to_data = avro_data(data_type)  # maps as dicts
        indexes = wire.message_indexes_bytes([0])

        def encode(column: pa.Array) -> list[tuple[Any, bytes]]:
            out: list[tuple[Any, bytes]] = []
            for datum in to_data(column):
                if datum is None:
                    out.append((None, b""))
                    continue
                msg = cls()
                fill(msg, datum)
                out.append((datum, indexes + msg.SerializeToString()))
            return out

        return encode


__all__ = ["ProtobufConfluentFormat", "file_descriptor", "proto_text", "spark_type_of"]
