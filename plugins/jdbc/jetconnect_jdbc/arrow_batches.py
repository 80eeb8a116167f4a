"""Fetched rows to Arrow record batches, column by column (Spark reads Arrow 3-4x faster than rows)."""

from __future__ import annotations

import decimal
import math
from collections.abc import Sequence
from typing import TypeGuard

import pyarrow as pa

from jetconnect.errors import SchemaError


def rows_to_record_batch(rows: Sequence[Sequence[object]], schema: pa.Schema, owner: str) -> pa.RecordBatch:
    """One record batch from a list of result rows whose columns are in ``schema``'s order."""
    if not rows:
        return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in schema], schema=schema)
    columns = list(zip(*rows))
    arrays = []
    for field, values in zip(schema, columns):
        if pa.types.is_integer(field.type):
            _refuse_fractions(values, field, owner)
        try:
            arrays.append(pa.array(values, type=field.type))
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            raise SchemaError(_describe(owner, field, values, exc)) from None
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _refuse_fractions(values: Sequence[object], field: pa.Field, owner: str) -> None:
    """Arrow truncates a float or Decimal into an integer column without a word (1.5 becomes 1):
    a fraction there is an error naming the column and the value, a whole number passes."""
    if set(map(type, values)) <= {int, type(None)}:
        return  # the common case, checked in C
    for index, value in enumerate(values):
        if _finite_number(value) and value != int(value):
            raise SchemaError(
                f"{owner}: column '{field.name}' value {value!r} (row {index} of the fetched block) has a fraction; "
                f"Spark type {field.type} would cut it off: declare the column as a double or decimal in the schema"
            )


def _finite_number(value: object) -> TypeGuard[float | decimal.Decimal]:
    """A finite float or Decimal (Arrow refuses NaN and infinity in an integer column itself)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, decimal.Decimal) and value.is_finite()


def _describe(owner: str, field: pa.Field, values: Sequence[object], exc: Exception) -> str:
    for index, value in enumerate(values):
        try:
            pa.array([value], type=field.type)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            return (
                f"{owner}: column '{field.name}' value {value!r} (row {index} of the fetched block) "
                f"does not fit Spark type {field.type}: {exc}"
            )
    return f"{owner}: column '{field.name}' does not fit Spark type {field.type}: {exc}"
