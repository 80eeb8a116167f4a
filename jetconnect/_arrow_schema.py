"""The Arrow schema Spark expects from a Python data source, kept per ``StructType``.

Spark only accepts a batch whose Arrow schema equals the one it derives from the declared schema
(int64 for LONG, ``string`` not ``large_string``, nullability, column order): this asks pyspark
for that schema, once per schema, since it is needed for every batch.
"""

from __future__ import annotations

import json
from functools import lru_cache

import pyarrow as pa
from pyspark.sql.types import StructType

from jetconnect._short_repr import short_repr
from jetconnect.errors import SchemaError

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
        raise SchemaError(f"schema <{schema_text(schema)}> has no Arrow form: {exc}") from None
    if len(_by_identity) > 1024:
        _by_identity.clear()
    _by_identity[id(schema)] = (schema, arrow)
    return arrow


@lru_cache(maxsize=256)
def _arrow_schema_cached(schema_json: str) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema as spark_to_arrow_schema

    return spark_to_arrow_schema(StructType.fromJson(json.loads(schema_json)), timezone="UTC")


def schema_text(schema: StructType) -> str:
    """``schema`` in Spark's short form, cut short, for error messages."""
    return short_repr(schema.simpleString(), text=True)


__all__ = ["schema_text", "to_arrow_schema"]
