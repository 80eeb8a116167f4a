"""JSON Schema and Spark types, both ways, for the ``json-schema-confluent`` format.

JSON Schema to Spark: ``object`` with ``properties`` -> struct (every field nullable: JSON may
leave any out), ``object`` with only ``additionalProperties`` -> map<string, ...>, ``array`` ->
array, ``integer`` -> bigint, ``number`` -> double, ``boolean``, ``string`` (whatever its
``format``: JSON has no time type) -> string; a type list or ``oneOf``/``anyOf`` of null and one
type -> that type; ``$ref`` to ``#/definitions/...`` or ``#/$defs/...`` is followed. Anything
else (a union of two real types, a recursive ``$ref``) is an error naming the field.

Spark to JSON Schema (draft-07, what a write registers): struct -> ``object`` with ``properties``
and ``required`` for its NOT NULL fields; a nullable field is ``oneOf`` null and its type, as
Confluent's Java schema generator writes it; map<string, ...> -> ``additionalProperties``; dates
and timestamps -> ``string`` with ``format`` date / date-time (written as ISO-8601). Decimal and
binary have no exact JSON form and are refused: cast them to string or double first.
"""

from __future__ import annotations

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

DRAFT = "http://json-schema.org/draft-07/schema#"
_SCALARS: dict[str, DataType] = {
    "integer": LongType(),
    "number": DoubleType(),
    "boolean": BooleanType(),
    "string": StringType(),
}


def to_spark_type(schema: Any, where: str) -> DataType:
    """The Spark type of JSON values of ``schema`` (a parsed JSON Schema); ``where`` names it."""
    return _to_spark(schema, schema, where, "", set())


def _to_spark(node: Any, root: Any, where: str, path: str, seen: set[str]) -> DataType:
    at = f"field '{path}'" if path else "the top level"
    if node is True or node == {}:
        raise SchemaError(f"{where}: {at} allows any JSON value; Spark needs one type (give it a 'type')")
    if not isinstance(node, dict):
        raise SchemaError(f"{where}: {at} is not a JSON Schema: {str(node)[:100]}")
    ref = node.get("$ref")
    if isinstance(ref, str):
        if ref in seen:
            raise SchemaError(f"{where}: {at} refers to itself ({ref}), which Spark cannot represent")
        return _to_spark(_resolve(ref, root, where, at), root, where, path, seen | {ref})
    for key in ("oneOf", "anyOf"):
        if isinstance(node.get(key), list):
            branches = [b for b in node[key] if not (isinstance(b, dict) and b.get("type") == "null")]
            if len(branches) != 1:
                raise SchemaError(
                    f"{where}: {at} is a {key} of {len(node[key])} schemas; Spark has no union type, so only "
                    f"one schema or null and one schema is supported"
                )
            return _to_spark(branches[0], root, where, path, seen)
    kind = node.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) != 1:
            raise SchemaError(f"{where}: {at} has types {kind}; Spark has no union type: give null and one type")
        kind = kinds[0]
    if kind is None and "properties" in node:
        kind = "object"
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "array":
        items = node.get("items")
        if not isinstance(items, dict):
            raise SchemaError(f"{where}: {at} is an array without one 'items' schema")
        return ArrayType(_to_spark(items, root, where, f"{path}[]", seen), True)
    if kind == "object":
        properties = node.get("properties")
        if isinstance(properties, dict) and properties:
            return StructType(
                [
                    StructField(name, _to_spark(sub, root, where, f"{path}.{name}" if path else name, seen), True)
                    for name, sub in properties.items()
                ]
            )
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            return MapType(StringType(), _to_spark(extra, root, where, f"{path}{{}}", seen), True)
        raise SchemaError(f"{where}: {at} is an object with neither 'properties' nor an 'additionalProperties' schema")
    raise SchemaError(f"{where}: {at} has JSON Schema type {kind!r}, which has no Spark type here")


def _resolve(ref: str, root: Any, where: str, at: str) -> Any:
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        raise SchemaError(f"{where}: {at} refers to {ref!r}; only references within the schema (#/...) are followed")
    node = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise SchemaError(f"{where}: {at} refers to {ref!r}, which the schema does not define")
        node = node[part]
    return node


def from_spark_type(data_type: DataType, title: str, owner: str) -> dict[str, Any]:
    """A JSON Schema (draft-07) for values of ``data_type``, its top level titled ``title``."""
    schema = {"$schema": DRAFT, "title": title, **_from_spark(data_type, "", owner)}
    return schema


def _from_spark(data_type: DataType, path: str, owner: str) -> dict[str, Any]:
    at = f"column '{path}'" if path else "the column"
    if isinstance(data_type, (ByteType, ShortType, IntegerType, LongType)):
        return {"type": "integer"}
    if isinstance(data_type, (FloatType, DoubleType)):
        return {"type": "number"}
    if isinstance(data_type, BooleanType):
        return {"type": "boolean"}
    if isinstance(data_type, StringType):
        return {"type": "string"}
    if isinstance(data_type, DateType):
        return {"type": "string", "format": "date"}
    if isinstance(data_type, (TimestampType, TimestampNTZType)):
        return {"type": "string", "format": "date-time"}
    if isinstance(data_type, StructType):
        properties = {}
        for f in data_type.fields:
            sub = _from_spark(f.dataType, f"{path}.{f.name}" if path else f.name, owner)
            properties[f.name] = {"oneOf": [{"type": "null"}, sub]} if f.nullable else sub
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        required = [f.name for f in data_type.fields if not f.nullable]
        if required:
            schema["required"] = required
        return schema
    if isinstance(data_type, ArrayType):
        items = _from_spark(data_type.elementType, f"{path}[]", owner)
        return {"type": "array", "items": {"oneOf": [{"type": "null"}, items]} if data_type.containsNull else items}
    if isinstance(data_type, MapType):
        if not isinstance(data_type.keyType, StringType):
            raise SchemaError(
                f"{owner}: {at} is a map with {data_type.keyType.simpleString()} keys; JSON keys are strings"
            )
        values = _from_spark(data_type.valueType, f"{path}{{}}", owner)
        return {
            "type": "object",
            "additionalProperties": {"oneOf": [{"type": "null"}, values]} if data_type.valueContainsNull else values,
        }
    if isinstance(data_type, (DecimalType, BinaryType)):
        raise SchemaError(
            f"{owner}: {at} is {data_type.simpleString()}, which JSON cannot carry exactly; cast it to string "
            f"(or a decimal to double) first, or use avro-confluent"
        )
    raise SchemaError(f"{owner}: {at} has type {data_type.simpleString()}, which has no JSON Schema equivalent here")


__all__ = ["DRAFT", "from_spark_type", "to_spark_type"]
