"""Spark's pushed filters as Hazelcast predicates, which the members evaluate.

A filter Spark hands over is not checked again, so only filters whose meaning on a member is
exactly Spark's are taken: comparisons, ``IN`` and ``NOT`` on an integral or boolean key or value
column. Members compare a Java Integer or Long with the given number alike, as Spark compares the
long it reads. Strings are left to Spark (a string column also shows the JSON text of values
that are not strings, which a member would not compare as text), and so are floating-point
columns (NaN orders differently). Filters are kept as plain tuples so the source pickles.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import types as T

#: Spark filter class name -> comparison, for filters with ``attribute`` and ``value``.
_COMPARISONS = {
    "EqualTo": "=",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
    "LessThan": "<",
    "LessThanOrEqual": "<=",
}
_EXACT = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.BooleanType)

#: ("=", attribute, value), ("in", attribute, values) or ("not", filter); the attribute is
#: Hazelcast's: ``__key`` for the key, ``this`` for the value.
PlainFilter = tuple[Any, ...]


def is_member_side(function: Any) -> bool:
    """Whether ``function`` is a Hazelcast predicate or projection (run by the members)."""
    if function is None:
        return False
    from hazelcast.predicate import Predicate
    from hazelcast.projection import Projection

    return isinstance(function, (Predicate, Projection))


def to_plain(spark_filter: Any, columns: Mapping[str, tuple[str, T.DataType]]) -> PlainFilter | None:
    """The plain form of a Spark ``pyspark.sql.datasource`` filter on one of ``columns``
    (column name -> Hazelcast attribute and Spark type), or None if it cannot be pushed."""
    kind = type(spark_filter).__name__
    if kind == "Not":
        inner = to_plain(spark_filter.child, columns)
        return ("not", inner) if inner is not None else None
    path: tuple[str, ...] = getattr(spark_filter, "attribute", ())
    if len(path) != 1 or path[0] not in columns:
        return None
    attribute, spark_type = columns[path[0]]
    if not isinstance(spark_type, _EXACT):
        return None
    wanted = bool if isinstance(spark_type, T.BooleanType) else int
    values = spark_filter.value if kind == "In" else (getattr(spark_filter, "value", None),)
    if not all(type(v) is wanted for v in values):
        return None  # a null, or a value of another type than the column's: Spark's to judge
    if kind == "In":
        return ("in", attribute, tuple(spark_filter.value))
    if kind in _COMPARISONS:
        op = _COMPARISONS[kind]
        if op != "=" and isinstance(spark_type, T.BooleanType):
            return None
        return (op, attribute, spark_filter.value)
    return None


def to_predicate(plain: PlainFilter) -> Any:
    """The Hazelcast predicate of a plain filter."""
    from hazelcast import predicate as p

    op = plain[0]
    if op == "not":
        return p.not_(to_predicate(plain[1]))
    if op == "in":
        return p.in_(plain[1], *plain[2])
    make = {"=": p.equal, ">": p.greater, ">=": p.greater_or_equal, "<": p.less, "<=": p.less_or_equal}[op]
    return make(plain[1], plain[2])


__all__ = ["PlainFilter", "is_member_side", "to_plain", "to_predicate"]
