"""Column values as option text and as JSON offsets, and back, by the column's Spark type."""

from __future__ import annotations

import datetime
import decimal
from typing import Any

from pyspark.sql import types as T


def parse(text: Any, spark_type: T.DataType) -> Any:
    """A bound or an offset (option text or JSON value) as a value of the column's type."""
    if text is None or not isinstance(text, str):
        return text
    if isinstance(spark_type, T.IntegralType):
        return int(text)
    if isinstance(spark_type, T.DecimalType):
        return decimal.Decimal(text)
    if isinstance(spark_type, (T.FloatType, T.DoubleType)):
        return float(text)
    if isinstance(spark_type, (T.TimestampType, T.TimestampNTZType)):
        return datetime.datetime.fromisoformat(text)
    if isinstance(spark_type, T.DateType):
        return datetime.date.fromisoformat(text)
    return text


def from_offset(value: Any, spark_type: T.DataType) -> Any:
    """A value read back from a checkpointed offset, as :func:`to_json` wrote it for a column of
    ``spark_type``; anything else (an edited or damaged checkpoint) is a ValueError saying why."""
    if value is None:
        return None
    if isinstance(spark_type, T.IntegralType):
        if type(value) is not int or not -(2**63) <= value < 2**63:
            raise ValueError(f"{value!r} is not a 64-bit integer")
        return value
    if isinstance(spark_type, (T.FloatType, T.DoubleType)):
        if type(value) not in (int, float):
            raise ValueError(f"{value!r} is not a number")
        return float(value)
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not the text a {spark_type.simpleString()} offset is kept as")
    try:
        return parse(value, spark_type)
    except (ValueError, ArithmeticError) as exc:  # decimal.InvalidOperation is an ArithmeticError
        raise ValueError(f"{value!r} is not a {spark_type.simpleString()}: {exc}") from None


def to_json(value: Any) -> Any:
    """A column value as it is stored in a streaming offset (JSON)."""
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


def is_partitionable(spark_type: T.DataType) -> bool:
    """Whether a column can cut a read into ranges (numbers, dates, timestamps)."""
    return isinstance(spark_type, (T.NumericType, T.DateType, T.TimestampType, T.TimestampNTZType))
