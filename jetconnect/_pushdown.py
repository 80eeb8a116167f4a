"""Spark's pushed filters as plain tuples: the walk every source that pushes filters shares.

Spark hands a Python data source's ``pushFilters`` objects of ``pyspark.sql.datasource``
(``EqualTo``, ``In``, ``Not``, ...). A filter the source takes is not checked again by Spark, so
each source decides which it can evaluate with exactly Spark's meaning (``admits``); this module
only turns the ones on a single top-level column into picklable tuples, the same for every source::

    ("=", column, value)   # also ">", ">=", "<", "<="
    ("in", column, (value, ...))
    ("null", column), ("not null", column)
    ("not", plain_filter)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pyspark.sql import types as T

#: A pushed filter in plain form (see the module docstring).
PlainFilter = tuple[Any, ...]

#: Spark filter class name -> the plain form's operator.
_OPERATORS = {
    "EqualTo": "=",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
    "LessThan": "<",
    "LessThanOrEqual": "<=",
    "In": "in",
    "IsNull": "null",
    "IsNotNull": "not null",
}


def plain_filter(
    spark_filter: Any,
    columns: Mapping[str, T.DataType],
    admits: Callable[[PlainFilter, T.DataType], bool],
    attribute: Callable[[str], Any] = str,
    nested: bool = False,
) -> PlainFilter | None:
    """The plain form of ``spark_filter`` on one of ``columns`` (name -> Spark type), or None if it
    cannot be pushed: another kind, a nested column (unless ``nested``), or a form
    ``admits(plain, type)`` refuses.

    ``attribute(column)`` names the column in the plain form (the source's own name for it); with
    ``nested``, a field of a struct column is pushed too, its column named by its dotted path
    (``"value.amount"``). ``NOT`` is pushed when its child is.
    """
    kind = type(spark_filter).__name__
    if kind == "Not":
        inner = plain_filter(spark_filter.child, columns, admits, attribute, nested)
        return ("not", inner) if inner is not None else None
    op = _OPERATORS.get(kind)
    path: tuple[str, ...] = getattr(spark_filter, "attribute", ())  # Spark's ColumnPath
    if op is None or not path or path[0] not in columns or (len(path) > 1 and not nested):
        return None
    if len(path) > 1 and any("." in step for step in path):
        return None  # a dotted path could not tell the field 'a.b' from 'b' of 'a'

    data_type = columns[path[0]]
    for step in path[1:]:
        fields = {f.name: f.dataType for f in data_type.fields} if isinstance(data_type, T.StructType) else {}
        if step not in fields:
            return None
        data_type = fields[step]
    name = ".".join(path)
    if op in ("null", "not null"):
        plain: PlainFilter = (op, name)
    elif op == "in":
        plain = (op, name, tuple(spark_filter.value))
    else:
        plain = (op, name, spark_filter.value)
    if not admits(plain, data_type):
        return None
    return (plain[0], attribute(name), *plain[2:])


def filter_operands(plain: PlainFilter) -> tuple[Any, ...]:
    """The values a plain comparison or ``in`` compares with (none for the null tests)."""
    if plain[0] == "in":
        return tuple(plain[2])
    return (plain[2],) if len(plain) > 2 else ()


__all__ = ["PlainFilter", "filter_operands", "plain_filter"]
