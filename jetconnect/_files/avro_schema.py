"""Avro schemas <-> Spark schemas, as Spark's own Avro source maps them.

Avro to Spark: records -> structs, arrays, maps (string keys), unions with null -> nullable, enums
-> string, fixed and bytes -> binary, and the logical types decimal, date, timestamp-millis/micros
(-> timestamp), local-timestamp-millis/micros (-> timestamp_ntz), uuid (-> string) and
time-millis/micros (-> int/bigint of the day, as Spark has no time type). Spark has no
union type: other unions are an error naming the field (give a reader schema that picks one).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from typing import Any

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

AvroSchema = Any  # a parsed Avro schema: a type name, a dict, or a list (union)

_PRIMITIVES: dict[str, DataType] = {
    "boolean": BooleanType(),
    "int": IntegerType(),
    "long": LongType(),
    "float": FloatType(),
    "double": DoubleType(),
    "bytes": BinaryType(),
    "string": StringType(),
}
_LOGICAL: dict[str, DataType] = {
    "date": DateType(),
    "timestamp-millis": TimestampType(),
    "timestamp-micros": TimestampType(),
    "local-timestamp-millis": TimestampNTZType(),
    "local-timestamp-micros": TimestampNTZType(),
    "uuid": StringType(),
}
#: Logical types fastavro turns into Python values Arrow cannot take for the Spark type above
#: (uuid.UUID for a string, datetime.time for a time of day): see :func:`value_fixer`.
_NEEDS_FIXING = ("uuid", "time-millis", "time-micros")


def load_avro_schema(schema: str | dict | list, option: str = "schema") -> AvroSchema:
    """An Avro schema given as JSON text or as parsed JSON."""
    if isinstance(schema, str):
        try:
            return json.loads(schema)
        except json.JSONDecodeError as exc:
            raise SchemaError(
                f"option '{option}' is not a JSON Avro schema: {exc.msg} at character {exc.pos}"
            ) from None
    return schema


def to_spark_schema(avro: AvroSchema, where: str) -> StructType:
    """The Spark schema of records of the Avro record schema ``avro``; ``where`` names it in errors."""
    named: dict[str, Any] = {}
    try:
        data_type, _ = _to_spark(avro, named, where, "")
    except (KeyError, TypeError, AttributeError, ValueError, RecursionError) as exc:
        if isinstance(exc, SchemaError):
            raise
        # A schema from a file header can be anything JSON can say: say what is wrong with it.
        raise SchemaError(f"{where}: not a valid Avro schema ({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(data_type, StructType):
        raise SchemaError(f"{where}: the Avro schema is a {_type_name(avro)}, not a record")
    return data_type


def _type_name(avro: AvroSchema) -> str:
    if isinstance(avro, dict):
        return str(avro.get("type"))
    return "union" if isinstance(avro, list) else str(avro)


def _full_name(schema: dict, namespace: str) -> str:
    name = schema["name"]
    ns = schema.get("namespace", namespace)
    return name if "." in name or not ns else f"{ns}.{name}"


def _to_spark(
    avro: AvroSchema, named: dict[str, Any], where: str, field: str, namespace: str = ""
) -> tuple[DataType, bool]:
    """(Spark type, nullable) of one Avro type; ``field`` is the dotted path shown in errors."""
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) != 1:
            raise SchemaError(
                f"{where}: field '{field}' is a union of {[_type_name(b) for b in avro]}; Spark has no "
                f"union type, so only a union of null and one type is supported (project it with a reader schema)"
            )
        data_type, _ = _to_spark(branches[0], named, where, field, namespace)
        return data_type, True
    if isinstance(avro, str):
        if avro in _PRIMITIVES:
            return _PRIMITIVES[avro], False
        full = avro if "." in avro or not namespace else f"{namespace}.{avro}"
        target = named.get(full, named.get(avro))
        if target is None:
            raise SchemaError(f"{where}: field '{field}' uses unknown type '{avro}'")
        if target == "recursive":
            raise SchemaError(f"{where}: field '{field}' is recursive ('{avro}'), which Spark cannot represent")
        return target, False
    kind = avro.get("type")
    logical = avro.get("logicalType")
    if logical == "decimal" and kind in ("bytes", "fixed"):
        precision, scale = int(avro["precision"]), int(avro.get("scale", 0))
        if precision > 38:
            raise SchemaError(
                f"{where}: field '{field}' is decimal({precision}, {scale}); Spark allows precision 38 at most"
            )
        if kind == "fixed":
            named[_full_name(avro, namespace)] = DecimalType(precision, scale)
        return DecimalType(precision, scale), False
    if logical in _LOGICAL:
        return _LOGICAL[logical], False
    if kind in ("record", "error"):
        full = _full_name(avro, namespace)
        named[full] = "recursive"
        inner_ns = full.rpartition(".")[0]
        fields = []
        for f in avro.get("fields", []):
            path = f"{field}.{f['name']}" if field else f["name"]
            data_type, nullable = _to_spark(f["type"], named, where, path, inner_ns)
            fields.append(StructField(f["name"], data_type, nullable))
        struct = StructType(fields)
        named[full] = struct
        named.setdefault(avro["name"], struct)
        return struct, False
    if kind == "enum":
        named[_full_name(avro, namespace)] = StringType()
        return StringType(), False
    if kind == "fixed":
        named[_full_name(avro, namespace)] = BinaryType()
        return BinaryType(), False
    if kind == "array":
        element, nullable = _to_spark(avro["items"], named, where, f"{field}[]", namespace)
        return ArrayType(element, nullable), False
    if kind == "map":
        value, nullable = _to_spark(avro["values"], named, where, f"{field}{{}}", namespace)
        return MapType(StringType(), value, nullable), False
    if isinstance(kind, (str, list, dict)):
        return _to_spark(kind, named, where, field, namespace)  # {"type": "long"} and friends
    raise SchemaError(f"{where}: field '{field}' has an Avro type Spark cannot read: {json.dumps(avro)[:200]}")


def may_be_empty(avro: AvroSchema, named: dict[str, Any] | None = None) -> bool:
    """Whether a value of ``avro`` may encode to no bytes at all (null, fixed(0), records of those).

    Every other value takes a byte at least, which is what bounds a block's record count by its size.
    """
    named = {} if named is None else named
    try:
        if isinstance(avro, list):
            return False  # a union writes its branch index
        if isinstance(avro, str):
            # A name not seen (yet) may be empty: assuming so only loosens the bound.
            return avro not in _SIZED and named.get(avro.rpartition(".")[2], True)
        kind = avro.get("type")
        name = str(avro.get("name")).rpartition(".")[2]
        if kind in ("record", "error"):
            named[name] = False  # a record holding itself cannot be empty forever
            named[name] = all(may_be_empty(f["type"], named) for f in avro.get("fields", []))
            return named[name]
        if kind == "fixed":
            named[name] = avro.get("size") == 0
            return named[name]
        if isinstance(kind, (str, list, dict)) and kind not in _SIZED:
            return may_be_empty(kind, named)
        return False
    except (AttributeError, KeyError, TypeError, RecursionError):
        return True  # a schema this malformed bounds nothing: assume the worst


#: Avro types whose every value takes at least one byte.
_SIZED = {"boolean", "int", "long", "float", "double", "bytes", "string", "enum", "array", "map"}


def needs_fixing(writer_schema: AvroSchema) -> bool:
    """Whether records of ``writer_schema`` hold values :func:`value_fixer` must convert."""
    text = json.dumps(writer_schema)
    return any(f'"{name}"' in text for name in _NEEDS_FIXING)


def value_fixer(schema: StructType) -> Callable[[dict], dict]:
    """Converts a record in place: uuid.UUID -> str, time of day -> int milli/microseconds."""
    fix = _fixer(schema)
    return fix


def _fixer(data_type: DataType) -> Callable[[Any], Any]:
    if isinstance(data_type, StructType):
        fields = [(f.name, _fixer(f.dataType)) for f in data_type.fields]

        def fix_struct(record: dict) -> dict:
            for name, fix in fields:
                value = record.get(name)
                if value is not None:
                    record[name] = fix(value)
            return record

        return fix_struct
    if isinstance(data_type, ArrayType):
        inner = _fixer(data_type.elementType)
        return lambda items: [inner(v) if v is not None else None for v in items]
    if isinstance(data_type, MapType):
        inner = _fixer(data_type.valueType)
        return lambda pairs: {k: inner(v) if v is not None else None for k, v in pairs.items()}
    if isinstance(data_type, StringType):
        return lambda v: v if isinstance(v, str) else str(v)
    if isinstance(data_type, (IntegerType, LongType)):
        unit = 1000 if isinstance(data_type, IntegerType) else 1_000_000
        return lambda v: v if isinstance(v, int) else _time_of_day(v, unit)
    return lambda v: v


def _time_of_day(value: datetime.time, per_second: int) -> int:
    seconds = value.hour * 3600 + value.minute * 60 + value.second
    return seconds * per_second + value.microsecond * per_second // 1_000_000


# --- Spark -> Avro ---------------------------------------------------------------------------------


def to_avro_schema(schema: StructType, name: str = "topLevelRecord", owner: str = "avro sink") -> dict:
    """An Avro record schema for rows of ``schema`` (nullable fields are unions with null);
    ``owner`` starts the error naming a field with no Avro equivalent."""
    return _record(schema, name, "", owner)


def avro_type(data_type: DataType, name: str = "topLevelRecord", owner: str = "avro sink") -> Any:
    """The Avro type of values of ``data_type``: a record schema for a struct (named ``name``),
    the primitive or logical type of anything else, as :func:`to_avro_schema` types a field."""
    return _avro_type(data_type, name, "", owner)


def _record(struct: StructType, name: str, namespace: str, owner: str) -> dict:
    record: dict[str, Any] = {"type": "record", "name": name}
    if namespace:
        record["namespace"] = namespace
    inner = f"{namespace}.{name}" if namespace else name
    fields = []
    for f in struct.fields:
        avro = _avro_type(f.dataType, f.name, inner, owner)
        if f.nullable:
            fields.append({"name": f.name, "type": ["null", avro], "default": None})
        else:
            fields.append({"name": f.name, "type": avro})
    record["fields"] = fields
    return record


def _avro_type(data_type: DataType, name: str, namespace: str, owner: str) -> Any:
    if isinstance(data_type, (ByteType, ShortType, IntegerType)):
        return "int"
    for spark_type, avro in (
        (LongType, "long"),
        (BooleanType, "boolean"),
        (FloatType, "float"),
        (DoubleType, "double"),
        (BinaryType, "bytes"),
        (StringType, "string"),
    ):
        if isinstance(data_type, spark_type):
            return avro
    if isinstance(data_type, DateType):
        return {"type": "int", "logicalType": "date"}
    if isinstance(data_type, TimestampNTZType):
        return {"type": "long", "logicalType": "local-timestamp-micros"}
    if isinstance(data_type, TimestampType):
        return {"type": "long", "logicalType": "timestamp-micros"}
    if isinstance(data_type, DecimalType):
        return {"type": "bytes", "logicalType": "decimal", "precision": data_type.precision, "scale": data_type.scale}
    if isinstance(data_type, StructType):
        return _record(data_type, name, namespace, owner)
    if isinstance(data_type, ArrayType):
        items = _avro_type(data_type.elementType, name, namespace, owner)
        return {"type": "array", "items": ["null", items] if data_type.containsNull else items}
    if isinstance(data_type, MapType):
        if not isinstance(data_type.keyType, StringType):
            raise SchemaError(
                f"{owner}: field '{name}' is a map with {data_type.keyType.simpleString()} keys; Avro maps have string keys"
            )
        values = _avro_type(data_type.valueType, name, namespace, owner)
        return {"type": "map", "values": ["null", values] if data_type.valueContainsNull else values}
    raise SchemaError(f"{owner}: field '{name}' has type {data_type.simpleString()}, which has no Avro equivalent here")


__all__ = [
    "avro_type",
    "load_avro_schema",
    "may_be_empty",
    "needs_fixing",
    "to_avro_schema",
    "to_spark_schema",
    "value_fixer",
]
