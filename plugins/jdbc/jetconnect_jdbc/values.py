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
