"""Rows for SQLite, refusing the values it would not give back.

SQLite stores a NaN as NULL, and a NUMERIC column keeps 15 significant digits (SQLAlchemy sends
decimals to it as floats); a time-zone aware timestamp is stored as its wall-clock text, without
the zone. So aware timestamps are sent as UTC (read back as ``timestamp_ntz`` in UTC), and a NaN
or a decimal that would read back different fails the write, naming the column, row and value,
before anything is sent.
"""

from __future__ import annotations

import decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc


class UnstorableValue(ValueError):
    """A value SQLite would silently store as something else; the message names column, row, value."""


def sqlite_rows(batch: pa.RecordBatch, first_row: int) -> list[dict[str, Any]]:
    """``batch`` as parameter rows for SQLite; ``first_row`` is its first row's index in the partition."""
    columns = []
    for field, column in zip(batch.schema, batch.columns):
        if pa.types.is_timestamp(field.type) and field.type.tz is not None:
            column = column.cast(pa.timestamp(field.type.unit, tz="UTC"))  # the same instants, labelled UTC
        elif pa.types.is_floating(field.type):
            _refuse_nan(field.name, column, first_row)
        elif pa.types.is_decimal(field.type):
            _refuse_lost_digits(field.name, column, field.type.scale, first_row)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, names=batch.schema.names).to_pylist()


def _refuse_nan(name: str, column: pa.Array, first_row: int) -> None:
    nan = pc.fill_null(pc.is_nan(column), False)
    if pc.any(nan).as_py():
        row = first_row + pc.index(nan, True).as_py()
        raise UnstorableValue(f"column '{name}' has NaN at row {row} of the partition: SQLite stores NaN as NULL")


def _refuse_lost_digits(name: str, column: pa.Array, scale: int, first_row: int) -> None:
    for index, value in enumerate(column.to_pylist()):
        if value is None or not value.is_finite():
            continue
        # what SQLAlchemy reads back from the float SQLite keeps
        back = decimal.Decimal(format(float(value), f".{scale}f"))
        if back != value:
            raise UnstorableValue(
                f"column '{name}' value {value} at row {first_row + index} of the partition would read back from "
                f"SQLite as {back} (it keeps about 15 significant digits): cast the column to string or write it to another database"
            )
