"""What a read yields, as Arrow batches of exactly the declared schema.

A read may yield rows (grouped and converted by :func:`rows_to_batch`) and Arrow batches or tables
of its own, which Spark takes only with exactly the Arrow schema it derives from the declared one:
those are conformed here: columns picked by name, types cast safely, and NOT NULL checked at
every depth (Arrow builds a batch with a null in a NOT NULL field without a word).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import StructType

from jetconnect._arrow_rows import rows_to_batch
from jetconnect._arrow_schema import to_arrow_schema
from jetconnect.errors import SchemaError

#: Rows converted per Arrow batch when a read yields rows rather than batches.
DEFAULT_BATCH_ROWS = 8192


def _null_violation(array: pa.Array, data_type: pa.DataType, path: str) -> str | None:
    """The path of a NOT NULL field nested in ``array`` that holds a null, if any."""
    if pa.types.is_struct(data_type):
        # flatten() gives each field the struct's nulls too: only nulls beyond those count
        for field, child in zip(data_type, array.flatten()):
            if not field.nullable and child.null_count > array.null_count:
                return f"{path}.{field.name}"
            found = _null_violation(child, field.type, f"{path}.{field.name}")
            if found is not None:
                return found
        return None
    if pa.types.is_map(data_type):
        # the entries of the non-null maps only; list_flatten has no kernel for maps, so the map
        # is viewed (zero-copy, slices too) as the list of key-value structs it is laid out as
        entry = pa.struct(
            [("key", array.type.key_type), ("value", array.type.item_type)]
        )  # nullable: a view checks nothing
        entries = pc.list_flatten(array.view(pa.list_(pa.field("entries", entry, nullable=False))))
        keys, items = entries.field(0), entries.field(1)
        if not data_type.item_field.nullable and items.null_count:
            return f"{path}[value]"
        return _null_violation(keys, data_type.key_type, f"{path}[key]") or _null_violation(
            items, data_type.item_type, f"{path}[value]"
        )
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        elements = pc.list_flatten(array)
        if not data_type.value_field.nullable and elements.null_count:
            return f"{path}[]"
        return _null_violation(elements, data_type.value_type, f"{path}[]")
    return None


def conform_batch(batch: pa.RecordBatch, arrow_schema: pa.Schema, owner: str) -> pa.RecordBatch:
    """``batch`` with exactly ``arrow_schema``: columns picked by name, types cast safely."""
    if batch.schema.equals(arrow_schema):
        result = batch
    else:
        try:
            columns = []
            for field in arrow_schema:
                column = batch.column(field.name)
                if not column.type.equals(field.type):
                    column = column.cast(field.type, safe=True)
                columns.append(column)
            result = pa.RecordBatch.from_arrays(columns, schema=arrow_schema)
        except (KeyError, pa.ArrowException, ValueError, TypeError) as exc:
            raise SchemaError(
                f"{owner}: an Arrow batch with schema <{_one_line(batch.schema)}> does not fit the "
                f"declared schema <{_one_line(arrow_schema)}>: {exc}"
            ) from exc
    for field, column in zip(arrow_schema, result.columns):
        found = (
            field.name if not field.nullable and column.null_count else _null_violation(column, field.type, field.name)
        )
        if found is not None:
            raise SchemaError(f"{owner}: an Arrow batch has a null in '{found}', which is NOT NULL")
    return result


def _one_line(schema: pa.Schema) -> str:
    return ", ".join(f"{f.name}: {f.type}{'' if f.nullable else ' not null'}" for f in schema)


def to_batches(
    items: Iterable[Any], schema: StructType, owner: str, batch_rows: int = DEFAULT_BATCH_ROWS
) -> Iterator[pa.RecordBatch]:
    """Arrow batches from what a read yields: batches are conformed, rows are grouped and converted."""
    arrow_schema = to_arrow_schema(schema)
    pending: list[Any] = []
    for item in items:
        if isinstance(item, pa.RecordBatch):
            if pending:
                yield rows_to_batch(pending, schema, owner)
                pending = []
            if item.num_rows:
                yield conform_batch(item, arrow_schema, owner)
        elif isinstance(item, pa.Table):
            if pending:
                yield rows_to_batch(pending, schema, owner)
                pending = []
            for batch in item.to_batches():
                if batch.num_rows:
                    yield conform_batch(batch, arrow_schema, owner)
        else:
            pending.append(item)
            if len(pending) >= batch_rows:
                yield rows_to_batch(pending, schema, owner)
                pending = []
    if pending:
        yield rows_to_batch(pending, schema, owner)


__all__ = ["DEFAULT_BATCH_ROWS", "conform_batch", "to_batches"]
