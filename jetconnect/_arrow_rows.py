"""Items to ``pyarrow.RecordBatch`` objects exactly or not at all, and batches back to rows.

Spark's Python data sources are 3-4x faster when ``read()`` yields Arrow batches, but Spark only
accepts a batch whose Arrow schema equals the one it derives from the declared schema; sinks are
given batches too. Items are split into columns (:mod:`jetconnect._item_columns`), each column is
converted by the rules of its type (:mod:`jetconnect._arrow_columns`), and only when that fails are
the values looked at one by one, to name the item and column at fault.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.types import StructType

from jetconnect._arrow_columns import ARROW_ERRORS, column_array
from jetconnect._arrow_schema import schema_text, to_arrow_schema
from jetconnect._item_columns import split_items
from jetconnect._short_repr import short_repr
from jetconnect._value_kinds import ROW_KINDS, Mismatch, kind_of
from jetconnect.errors import SchemaError


def mapped_rows(results: Iterable[Any]) -> list[Any]:
    """What a mapping function (projection, mapper) returned for each item, with the Nones left out.

    Jet's rule for every mapping function: one that returns None filters the item out (a NULL row
    would be neither the item nor nothing, and is what a forgotten ``return`` gives). Every
    connector that applies a user's mapping function passes its results through here.
    """
    return [row for row in results if row is not None]


def rows_to_batch(rows: Sequence[Any], schema: StructType, owner: str) -> pa.RecordBatch:
    """Convert rows (tuples, Rows, dicts, or bare values for a one-column schema) to one batch.

    Tuples and lists match the columns by position; dicts, Rows with field names and namedtuples by
    name (a name the schema lacks, or a missing NOT NULL column, is an error). Every value converts
    exactly or not at all: no float is truncated into an integer, no bytes decoded into a string, no
    naive datetime taken for UTC. Raises :class:`SchemaError` naming ``owner``, the item (its index
    in ``rows`` and its value, shortened) and the column.
    """
    arrow_schema = to_arrow_schema(schema)
    items = rows if isinstance(rows, list) else list(rows)
    if not items:
        return pa.RecordBatch.from_pylist([], schema=arrow_schema)
    fields = list(arrow_schema)
    bare = len(fields) == 1 and kind_of(type(items[0])) not in ROW_KINDS and not pa.types.is_nested(fields[0].type)
    try:
        arrays = _arrays(items, fields, bare)
    except Mismatch as exc:
        raise _item_error(owner, schema, items.__getitem__, exc) from None
    try:
        return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)
    except ARROW_ERRORS as exc:  # e.g. more than 2 GiB of strings in one column
        raise SchemaError(
            f"{owner}: items do not fit one Arrow batch of schema <{schema_text(schema)}>: {exc}"
        ) from None


def columns_to_batch(columns: Sequence[list[Any] | pa.Array], schema: StructType, owner: str) -> pa.RecordBatch:
    """:func:`rows_to_batch` for items already held as columns (one list of Python values per field
    of ``schema``, or an Arrow array of the field's own type, taken as it is): no split of items
    into columns, the same exact conversion and the same :class:`SchemaError` naming the item (its
    index, and its values across the columns) and the column at fault. For a connector that decodes
    a column at a time, e.g. the keys and values of a page of journal events."""
    arrow_schema = to_arrow_schema(schema)
    fields = list(arrow_schema)
    if len(columns) != len(fields):
        raise ValueError(f"{owner}: {len(columns)} columns for the {len(fields)} of schema <{schema_text(schema)}>")
    arrays = []
    for field, values in zip(fields, columns):
        if isinstance(values, pa.Array):
            arrays.append(values)
            continue
        try:
            arrays.append(column_array(values, field))
        except Mismatch as exc:
            failure = _first_bad(values, field, exc).under(field.name)
            raise _item_error(owner, schema, lambda index: _column_item(columns, index), failure) from None
    try:
        return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)
    except ARROW_ERRORS as exc:
        raise SchemaError(
            f"{owner}: items do not fit one Arrow batch of schema <{schema_text(schema)}>: {exc}"
        ) from None


def _column_item(columns: Sequence[list[Any] | pa.Array], index: int) -> tuple[Any, ...]:
    """Item ``index`` of items held as columns: its value in each column."""
    return tuple(c[index].as_py() if isinstance(c, pa.Array) else c[index] for c in columns)


def _arrays(items: list[Any], fields: list[pa.Field], bare: bool) -> list[pa.Array]:
    """One array per field; with ``bare``, the items themselves are the one column's values."""
    columns = [items] if bare else split_items(items, fields, top=True)[0]
    arrays = []
    for field, values in zip(fields, columns):
        try:
            arrays.append(column_array(values, field))
        except Mismatch as exc:
            if bare and any(kind_of(type(v)) in ROW_KINDS for v in items):
                return _arrays(items, fields, bare=False)  # rows among bare values: split them
            raise _first_bad(values, field, exc).under(field.name) from None
    return arrays


def _first_bad(values: list[Any], field: pa.Field, failure: Mismatch) -> Mismatch:
    """The first value of a column that fails alone, with its index (the column failed as a whole)."""
    step = 1024  # chunks first: a big column is then walked value by value over one chunk only
    for start in range(0, len(values), step):
        try:
            column_array(values[start : start + step], field)
            continue
        except Mismatch:
            pass
        for index in range(start, min(start + step, len(values))):
            try:
                column_array([values[index]], field)
            except Mismatch as exc:
                exc.index = index
                return exc
    return failure  # no single value fails alone: the message says so without an item


def _item_error(owner: str, schema: StructType, item_at: Callable[[int], Any], exc: Mismatch) -> SchemaError:
    where = f"column '{'.'.join(exc.path).replace('.[', '[')}': " if exc.path else ""
    if exc.index is None:
        return SchemaError(f"{owner}: items do not match schema <{schema_text(schema)}>: {where}{exc.reason}")
    return SchemaError(
        f"{owner}: item #{exc.index} of the batch, {short_repr(item_at(exc.index))}, does not match schema "
        f"<{schema_text(schema)}>: {where}{exc.reason}"
    )


def spark_rows(batch: pa.RecordBatch) -> Iterator[Any]:
    """Each row of ``batch`` as a pyspark ``Row`` with its column names: what Jet's per-row
    functions (a sink's ``toStringFn``, ``bindFn``, ``toRecordFn``, ``messageFn``) are given."""
    from pyspark.sql import Row

    make_row = Row(*batch.schema.names)
    for values in zip(*(column.to_pylist() for column in batch.columns)):
        yield make_row(*values)


__all__ = ["columns_to_batch", "mapped_rows", "rows_to_batch", "spark_rows"]
