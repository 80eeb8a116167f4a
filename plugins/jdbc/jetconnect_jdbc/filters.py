"""Spark's pushed-down filters as SQLAlchemy expressions (the WHERE clause of every split).

Only filters whose SQL meaning is exactly Spark's are taken: a filter Spark hands over is not
checked again. Ordering comparisons on text depend on the database's collation, so text columns
only take equality, IN and NULL tests. Filters are kept as the core's plain tuples
(:func:`jetconnect.api.plain_filter`) so the source pickles.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from pyspark.sql import types as T

from jetconnect.api import PlainFilter, filter_operands, plain_filter

_OPERATORS = {"=": operator.eq, ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
_ORDERED = (T.NumericType, T.DateType, T.TimestampType, T.TimestampNTZType, T.BooleanType)


def _exact_in_sql(plain: PlainFilter, spark_type: T.DataType) -> bool:
    """NULL tests always; ``IN`` without a null; comparisons with a value, ordering ones only on
    ordered types, none on floating point (NaN orders differently in Spark and SQL)."""
    op = plain[0]
    if op in ("null", "not null"):
        return True
    if op == "in":
        return all(v is not None for v in filter_operands(plain))
    if plain[2] is None or isinstance(spark_type, (T.FloatType, T.DoubleType)):
        return False
    return op == "=" or isinstance(spark_type, _ORDERED)


def to_plain(spark_filter: Any, columns: Mapping[str, T.DataType]) -> PlainFilter | None:
    """The plain form of a Spark ``pyspark.sql.datasource`` filter, or None if it cannot be pushed.

    NOT(x = 1) keeps NULLs out in SQL and in Spark alike; NOT(x IS NULL) is fine too.
    """
    return plain_filter(spark_filter, columns, _exact_in_sql)


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
