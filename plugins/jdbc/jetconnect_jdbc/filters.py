"""Spark's pushed-down filters as SQLAlchemy expressions (the WHERE clause of every split).

Only filters whose SQL meaning is exactly Spark's are taken: a filter Spark hands over is not
checked again. Ordering comparisons on text depend on the database's collation, so text columns
only take equality, IN and NULL tests. Filters are kept as plain tuples so the source pickles.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from pyspark.sql import types as T

#: Spark filter class name -> SQL comparison, for filters with ``attribute`` and ``value``.
_COMPARISONS = {
    "EqualTo": "=",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
    "LessThan": "<",
    "LessThanOrEqual": "<=",
}
_OPERATORS = {"=": operator.eq, ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
_ORDERED = (T.NumericType, T.DateType, T.TimestampType, T.TimestampNTZType, T.BooleanType)

#: A pushed filter: ("=", column, value), ("in", column, values), ("null", column),
#: ("not null", column) or ("not", filter).
PlainFilter = tuple[Any, ...]


def to_plain(spark_filter: Any, columns: Mapping[str, T.DataType]) -> PlainFilter | None:
    """The plain form of a Spark ``pyspark.sql.datasource`` filter, or None if it cannot be pushed."""
    kind = type(spark_filter).__name__
    if kind == "Not":
        inner = to_plain(spark_filter.child, columns)
        # NOT(x = 1) keeps NULLs out in SQL and in Spark alike; NOT(x IS NULL) is fine too.
        return ("not", inner) if inner is not None else None
    path: tuple[str, ...] = getattr(spark_filter, "attribute", ())  # Spark's ColumnPath
    if len(path) != 1 or path[0] not in columns:
        return None
    name, spark_type = path[0], columns[path[0]]
    if kind == "IsNull":
        return ("null", name)
    if kind == "IsNotNull":
        return ("not null", name)
    if kind == "In":
        if any(v is None for v in spark_filter.value):
            return None
        return ("in", name, tuple(spark_filter.value))
    if kind in _COMPARISONS and spark_filter.value is not None:
        op = _COMPARISONS[kind]
        if op != "=" and not isinstance(spark_type, _ORDERED):
            return None
        if isinstance(spark_type, (T.FloatType, T.DoubleType)):
            return None  # NaN ordering differs between Spark and SQL
        return (op, name, spark_filter.value)
    return None


def to_expression(plain: PlainFilter, column: Any) -> sa.ColumnElement[bool]:
    """The SQLAlchemy condition of a plain filter; ``column(name)`` gives the typed column."""
    op = plain[0]
    if op == "not":
        return sa.not_(to_expression(plain[1], column))
    col = column(plain[1])
    if op == "null":
        return col.is_(None)
    if op == "not null":
        return col.is_not(None)
    if op == "in":
        return col.in_(list(plain[2]))
    return _OPERATORS[op](col, plain[2])
