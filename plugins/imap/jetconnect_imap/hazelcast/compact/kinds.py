"""Compact field kinds and Spark types, both ways.

============================== =========================== ======================================
kind (``NULLABLE_*`` alike)    Spark type read             written from
============================== =========================== ======================================
BOOLEAN                        boolean                     boolean
INT8, INT16, INT32, INT64      tinyint, smallint, int,     the same (a nullable column: the
                               bigint                      ``NULLABLE_`` kind)
FLOAT32, FLOAT64               float, double               the same
STRING                         string                      string
DECIMAL                        decimal(38, 18)             decimal(p, s)
TIME                           time                        time
DATE                           date                        date
TIMESTAMP                      timestamp_ntz               timestamp_ntz
TIMESTAMP_WITH_TIMEZONE        timestamp (UTC)             timestamp
COMPACT                        struct of its fields        struct (a nested Compact type)
ARRAY_OF_INT8                  binary                      binary
ARRAY_OF_<kind>                array of the kind's type    array (``ARRAY_OF_NULLABLE_*`` when it
                                                           may hold nulls)
============================== =========================== ======================================

A column of another type takes a kind whose values it holds exactly (a wider integer, a double
for FLOAT32, any decimal for DECIMAL, a string for anything: the value's JSON text); any other
pairing is a SchemaError naming the field and both. CHAR and PORTABLE kinds exist only inside
Portable objects and are not read.
"""

from __future__ import annotations

from hazelcast.serialization.api import FieldKind as K
from pyspark.sql import types as T

#: Fixed-size kinds: struct code and size (BOOLEAN is a bit of its own).
FIXED: dict[K, tuple[str, int]] = {
    K.INT8: ("b", 1),
    K.INT16: ("h", 2),
    K.INT32: ("i", 4),
    K.INT64: ("q", 8),
    K.FLOAT32: ("f", 4),
    K.FLOAT64: ("d", 8),
}
#: Each nullable kind's plain kind (a nullable value is a variable-size field holding the plain one).
NULLABLE: dict[K, K] = {
    K.NULLABLE_BOOLEAN: K.BOOLEAN,
    K.NULLABLE_INT8: K.INT8,
    K.NULLABLE_INT16: K.INT16,
    K.NULLABLE_INT32: K.INT32,
    K.NULLABLE_INT64: K.INT64,
    K.NULLABLE_FLOAT32: K.FLOAT32,
    K.NULLABLE_FLOAT64: K.FLOAT64,
}
#: Each array kind's item kind.
ARRAY_ITEM: dict[K, K] = {
    K.ARRAY_OF_BOOLEAN: K.BOOLEAN,
    K.ARRAY_OF_INT8: K.INT8,
    K.ARRAY_OF_INT16: K.INT16,
    K.ARRAY_OF_INT32: K.INT32,
    K.ARRAY_OF_INT64: K.INT64,
    K.ARRAY_OF_FLOAT32: K.FLOAT32,
    K.ARRAY_OF_FLOAT64: K.FLOAT64,
    K.ARRAY_OF_STRING: K.STRING,
    K.ARRAY_OF_DECIMAL: K.DECIMAL,
    K.ARRAY_OF_TIME: K.TIME,
    K.ARRAY_OF_DATE: K.DATE,
    K.ARRAY_OF_TIMESTAMP: K.TIMESTAMP,
    K.ARRAY_OF_TIMESTAMP_WITH_TIMEZONE: K.TIMESTAMP_WITH_TIMEZONE,
    K.ARRAY_OF_COMPACT: K.COMPACT,
    K.ARRAY_OF_NULLABLE_BOOLEAN: K.NULLABLE_BOOLEAN,
    K.ARRAY_OF_NULLABLE_INT8: K.NULLABLE_INT8,
    K.ARRAY_OF_NULLABLE_INT16: K.NULLABLE_INT16,
    K.ARRAY_OF_NULLABLE_INT32: K.NULLABLE_INT32,
    K.ARRAY_OF_NULLABLE_INT64: K.NULLABLE_INT64,
    K.ARRAY_OF_NULLABLE_FLOAT32: K.NULLABLE_FLOAT32,
    K.ARRAY_OF_NULLABLE_FLOAT64: K.NULLABLE_FLOAT64,
}
#: Array kinds whose items are fixed-size values back to back (the others: a list of positions).
PACKED_ARRAYS = {kind for kind, item in ARRAY_ITEM.items() if item in FIXED}
#: Kinds jetconnect does not read: only Portable objects have them.
UNSUPPORTED = {K.CHAR, K.ARRAY_OF_CHAR, K.PORTABLE, K.ARRAY_OF_PORTABLE, K.NOT_AVAILABLE}
#: Decimal type a derived schema gives DECIMAL fields (arbitrary precision on the member).
DERIVED_DECIMAL = T.DecimalType(38, 18)

_SCALAR: dict[K, T.DataType] = {
    K.BOOLEAN: T.BooleanType(),
    K.INT8: T.ByteType(),
    K.INT16: T.ShortType(),
    K.INT32: T.IntegerType(),
    K.INT64: T.LongType(),
    K.FLOAT32: T.FloatType(),
    K.FLOAT64: T.DoubleType(),
    K.STRING: T.StringType(),
    K.DECIMAL: DERIVED_DECIMAL,
    K.TIME: T.TimeType(),
    K.DATE: T.DateType(),
    K.TIMESTAMP: T.TimestampNTZType(),
    K.TIMESTAMP_WITH_TIMEZONE: T.TimestampType(),
}
_INTEGRAL_RANK: dict[type[T.DataType], int] = {T.ByteType: 1, T.ShortType: 2, T.IntegerType: 3, T.LongType: 4}


def plain_kind(kind: K) -> K:
    """``kind`` without ``NULLABLE_``."""
    return NULLABLE.get(kind, kind)


def is_nullable(kind: K) -> bool:
    """Whether a field of ``kind`` may hold null (every variable-size kind but the nullable forms' plain twins)."""
    return kind not in FIXED and kind != K.BOOLEAN


def scalar_type(kind: K) -> T.DataType | None:
    """The Spark type a derived schema gives a field of a scalar ``kind`` (None: not a scalar)."""
    return _SCALAR.get(plain_kind(kind))


def accepts(target: T.DataType, kind: K) -> bool:
    """Whether a column of ``target`` holds every value of a field of (scalar or array) ``kind``
    exactly (COMPACT and its arrays are matched field by field, elsewhere)."""
    if isinstance(target, T.StringType):
        return True  # the value itself, or its JSON text
    kind = plain_kind(kind)
    if kind == K.ARRAY_OF_INT8 and isinstance(target, T.BinaryType):
        return True
    if kind in ARRAY_ITEM:
        return isinstance(target, T.ArrayType) and (
            ARRAY_ITEM[kind] in (K.COMPACT,) or accepts(target.elementType, ARRAY_ITEM[kind])
        )
    derived = _SCALAR.get(kind)
    if derived is None:
        return False
    if type(target) in _INTEGRAL_RANK and type(derived) in _INTEGRAL_RANK:
        return _INTEGRAL_RANK[type(target)] >= _INTEGRAL_RANK[type(derived)]
    if kind == K.FLOAT32 and isinstance(target, T.DoubleType):
        return True
    if kind == K.DECIMAL:
        return isinstance(target, T.DecimalType)
    return type(target) is type(derived)


__all__ = [
    "ARRAY_ITEM",
    "DERIVED_DECIMAL",
    "FIXED",
    "NULLABLE",
    "PACKED_ARRAYS",
    "UNSUPPORTED",
    "accepts",
    "is_nullable",
    "plain_kind",
    "scalar_type",
]
