"""Spark's pushed filters as Hazelcast predicates, which the members evaluate.

A filter Spark hands over is not checked again, so only filters whose meaning on a member is
exactly Spark's are taken: comparisons, ``IN`` and ``NOT`` on an integral or boolean key or value
column, or such a field of a struct key or value (a Compact record's field, which members read
without the record's class). Members compare a Java Integer or Long with the given number alike, as Spark compares the
long it reads. Strings are left to Spark (a string column also shows the JSON text of values
that are not strings, which a member would not compare as text), and so are floating-point
columns (NaN orders differently). Filters are kept as the core's plain tuples
(:func:`jetconnect.api.plain_filter`) so the source pickles.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import types as T

from jetconnect.api import PlainFilter, filter_operands, plain_filter

_EXACT = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.BooleanType)


def _member_side_exact(plain: PlainFilter, spark_type: T.DataType) -> bool:
    """Comparisons and ``IN`` on an integral column, ``=`` and ``IN`` on a boolean one, with values
    of the column's type (a null, or another type, is Spark's to judge)."""
    if plain[0] in ("null", "not null") or not isinstance(spark_type, _EXACT):
        return False
    boolean = isinstance(spark_type, T.BooleanType)
    if boolean and plain[0] not in ("=", "in"):
        return False
    wanted = bool if boolean else int
    return all(type(v) is wanted for v in filter_operands(plain))


def to_plain(spark_filter: Any, columns: Mapping[str, tuple[str, T.DataType]]) -> PlainFilter | None:
    """The plain form of a Spark ``pyspark.sql.datasource`` filter on one of ``columns`` (column
    name -> Hazelcast attribute and Spark type), or on a field of a struct column (a Compact
    record's field: ``value.address.zip``), or None if it cannot be pushed; the attribute is
    Hazelcast's: ``__key`` for the key, ``this`` for the value, ``__key.id`` and ``address.zip``
    for their fields."""
    types = {name: spark_type for name, (_, spark_type) in columns.items()}

    def attribute(path: str) -> str:
        column, _, field = path.partition(".")
        whole = columns[column][0]
        if not field:
            return whole
        return field if whole == "this" else f"{whole}.{field}"

    return plain_filter(spark_filter, types, _member_side_exact, attribute=attribute, nested=True)


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


__all__ = ["to_plain", "to_predicate"]
