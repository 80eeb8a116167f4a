"""Compact schemas: found by id (the client's registry, else fetched from the cluster), replicated
to the cluster before a write, and turned into Spark types.

A schema is the client's own :class:`hazelcast.serialization.compact.Schema`: its fields carry
the positions and indexes the format needs, computed exactly as every other client does, and its
id is the same Rabin fingerprint.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from hazelcast.future import ImmediateFuture
from hazelcast.protocol.codec import client_send_schema_codec
from hazelcast.serialization.api import FieldKind as K
from hazelcast.serialization.compact import Schema
from pyspark.sql import types as T

from jetconnect.errors import SchemaError
from jetconnect_imap.hazelcast.compact.kinds import ARRAY_ITEM, UNSUPPORTED, is_nullable, scalar_type
from jetconnect_imap.hazelcast.errors import HazelcastProtocolError

#: How many times a schema is offered to the cluster before a write gives up (the client's own count).
REPLICATION_ATTEMPTS = 100


class CompactSchemas:
    """The schemas one client knows, and the ones it asks the cluster for."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._replicated: set[int] = set()
        self._lock = threading.Lock()

    @property
    def _registry(self) -> Any:
        return self._client._serialization_service.compact_stream_serializer

    def get(self, schema_id: int) -> Schema:
        """The schema of ``schema_id``: known to the client, or fetched from the cluster (once)."""
        schema = self._registry._id_to_schema.get(schema_id)
        if schema is not None:
            return schema
        try:
            fetched = self._client._compact_schema_service.fetch_schema(schema_id).result()
        except Exception as exc:  # the cluster's refusal, or a connection lost while asking
            raise HazelcastProtocolError(f"fetching Compact schema {schema_id} from the cluster: {exc}") from exc
        if fetched is None:
            raise HazelcastProtocolError(
                f"the cluster knows no Compact schema {schema_id} (a value written before a cluster restart "
                "without persistence, whose schema was lost?)"
            )
        with self._lock:
            self._registry.register_schema_to_id(fetched)
        return fetched

    def replicate(self, schema: Schema) -> None:
        """Make sure every member has ``schema`` before a value of it is sent (else no other client
        could read that value): sent once per process and schema, as the client does for its own."""
        if schema.schema_id in self._replicated:
            return
        service = self._client._compact_schema_service
        request = client_send_schema_codec.encode_request(schema)

        def registered() -> Any:
            with self._lock:
                self._registry.register_schema_to_id(schema)
            service._has_replicated_schemas = True  # resent on reconnection, as the client's own are
            return ImmediateFuture(None)

        try:
            service._replicate_schema(schema, request, REPLICATION_ATTEMPTS, registered).result()
        except Exception as exc:
            raise HazelcastProtocolError(
                f"registering Compact schema of {schema.type_name!r} with the cluster: {exc}"
            ) from exc
        self._replicated.add(schema.schema_id)


def derived_type(found: dict[str, list[Schema]]) -> T.StructType:
    """The Spark struct of the records whose schemas by path (``CompactReader.schemas_by_path``)
    are ``found``: every version's fields, nested records as structs."""
    return union(found.get("", []), lambda path: found.get(path, []))


def spark_type(schema: Schema, schemas_of: Any, where: str = "") -> T.StructType:
    """The Spark struct of one schema: a field per Compact field, named as the field is, nested
    Compact fields as structs of the schemas ``schemas_of(path)`` gives (the nested values'
    schemas, found in the data: a field's schema is not part of its parent's)."""
    fields = []
    for field in sorted(schema.fields, key=lambda f: f.name):
        path = f"{where}{field.name}"
        fields.append(T.StructField(field.name, field_type(field.kind, path, schemas_of), is_nullable(field.kind)))
    return T.StructType(fields)


def field_type(kind: K, path: str, schemas_of: Any) -> T.DataType:
    """The Spark type of a field of ``kind`` at ``path`` (see :mod:`.kinds`)."""
    if kind in UNSUPPORTED:
        raise SchemaError(
            f"Compact field '{path}' is of kind {kind.name}, which jetconnect does not read (Portable only)"
        )
    if kind == K.ARRAY_OF_INT8:
        return T.BinaryType()
    if kind == K.COMPACT:
        return union(schemas_of(path), schemas_of, path)
    if kind in ARRAY_ITEM:
        item = ARRAY_ITEM[kind]
        element = union(schemas_of(path), schemas_of, path) if item == K.COMPACT else field_type(item, path, schemas_of)
        return T.ArrayType(element, containsNull=is_nullable(item))
    found = scalar_type(kind)
    assert found is not None, kind
    return found


def union(schemas: Iterable[Schema], schemas_of: Any, path: str = "") -> T.StructType:
    """One Spark struct for the versions of a type in ``schemas`` (a field added later, or dropped:
    the union, nullable where a version lacks it); versions whose fields disagree on a type, or
    schemas of two type names, cannot be merged and say so."""
    versions = list({s.schema_id: s for s in schemas}.values())
    where = f"Compact field '{path}'" if path else "the Compact values"
    if not versions:
        raise SchemaError(
            f"{where}: no value to learn the schema from (every one read is null, or the map is empty); give the schema"
        )
    names = sorted({s.type_name for s in versions})
    if len(names) > 1:
        raise SchemaError(
            f"{where} are of {len(names)} type names ({', '.join(map(repr, names))}): one Spark schema cannot "
            "hold them; read them with an explicit schema, or with a predicate that keeps one type"
        )
    prefix = f"{path}." if path else ""
    merged: dict[str, T.StructField] = {}
    seen_in: dict[str, int] = {}
    for schema in versions:
        for field in spark_type(schema, schemas_of, prefix).fields:
            seen_in[field.name] = seen_in.get(field.name, 0) + 1
            if field.name in merged and merged[field.name].dataType != field.dataType:
                raise SchemaError(
                    f"{where}: versions of {names[0]!r} disagree on field '{prefix}{field.name}' "
                    f"({merged[field.name].dataType.simpleString()} and {field.dataType.simpleString()}): "
                    "they cannot be merged; give the schema"
                )
            merged[field.name] = (
                field
                if field.name not in merged
                else T.StructField(field.name, field.dataType, merged[field.name].nullable or field.nullable)
            )
    return T.StructType(
        [
            T.StructField(name, f.dataType, f.nullable or seen_in[name] < len(versions))
            for name, f in sorted(merged.items())
        ]
    )


__all__ = ["REPLICATION_ATTEMPTS", "CompactSchemas", "derived_type", "field_type", "spark_type", "union"]
