"""Arrow data to the Python values fastavro writes, for every plugin that writes Avro.

Arrow gives maps as lists of pairs (fastavro wants dicts), and a timestamp or date column as
datetimes fastavro only turns back into the number it stores: such top-level columns go as those
numbers. The files plugin's Avro files and the Kafka plugin's Avro values write through this one
conversion, so the same DataFrame makes the same Avro wherever it goes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
from pyspark.sql.types import ArrayType, DataType, MapType, StructType

#: Avro logical types fastavro also takes as the number it stores, and the Arrow type holding that
#: very number: a timestamp with a time zone (UTC microseconds), one without (local microseconds;
#: Spark hands both to Python in microseconds), a date (days). A column of these goes to Python as
#: plain numbers: ``to_pylist`` would make a datetime per value (an aware one costs most) only for
#: fastavro to turn it back into the number; that took 70% of the sink's Python time on a table with
#: one timestamp column among five (#35).
_STORED_AS = {"timestamp-micros": "aware", "local-timestamp-micros": "naive", "date": "date"}


def _number_columns(parsed: Any) -> dict[str, str]:
    """Top-level fields whose Avro type (or its one non-null branch) is a logical type of
    ``_STORED_AS``: field name -> the kind of Arrow column whose numbers they are."""
    found: dict[str, str] = {}
    for field in parsed.get("fields", []) if isinstance(parsed, dict) else []:
        branches = field["type"] if isinstance(field["type"], list) else [field["type"]]
        typed = [b for b in branches if b != "null"]
        if len(typed) == 1 and isinstance(typed[0], dict) and typed[0].get("logicalType") in _STORED_AS:
            found[field["name"]] = _STORED_AS[typed[0]["logicalType"]]
    return found


def _as_numbers(batch: pa.RecordBatch, columns: dict[str, str]) -> pa.RecordBatch:
    """``batch`` with those of ``columns`` whose Arrow type is their kind cast to the integers
    they hold; any other column (a timestamp in another unit, say) is left to fastavro."""
    for name, kind in columns.items():
        at = batch.schema.get_field_index(name)
        if at < 0:
            continue
        column = batch.column(at)
        if kind == "date":
            if column.type != pa.date32():
                continue
            number = pa.int32()
        elif not (
            pa.types.is_timestamp(column.type)
            and column.type.unit == "us"
            and (column.type.tz is not None) == (kind == "aware")
        ):
            continue
        else:
            number = pa.int64()
        batch = batch.set_column(at, batch.schema.field(at).with_type(number), column.cast(number))
    return batch


def avro_records(schema: StructType, parsed: Any = None) -> Callable[[pa.RecordBatch], list[dict]]:
    """Arrow batch of rows of ``schema`` -> the records fastavro writes with the Avro record schema
    ``parsed`` (maps as dicts; top-level timestamp and date fields of ``parsed`` as their numbers)."""
    numbers = _number_columns(parsed)
    fixers = {f.name: fix for f in schema.fields if (fix := _value_fixer(f.dataType)) is not None}
    if not fixers and not numbers:
        return pa.RecordBatch.to_pylist
    if not fixers:
        return lambda batch: _as_numbers(batch, numbers).to_pylist()

    def convert(batch: pa.RecordBatch) -> list[dict]:
        records = _as_numbers(batch, numbers).to_pylist()
        for record in records:
            for name, fix in fixers.items():
                if record[name] is not None:
                    record[name] = fix(record[name])
        return records

    return convert


def avro_data(data_type: DataType, parsed: Any = None) -> Callable[[pa.Array], list[Any]]:
    """Arrow column of ``data_type`` -> one fastavro datum per value (None for a null): records of a
    struct column as :func:`avro_records` makes them, any other type as :func:`avro_records` makes
    a field of it."""
    if isinstance(data_type, StructType):
        rows = avro_records(data_type, parsed)

        def records(column: pa.Array) -> list[Any]:
            if isinstance(column, pa.ChunkedArray):
                column = column.combine_chunks()
            made: list[Any] = rows(pa.RecordBatch.from_struct_array(column))
            if column.null_count:  # from_struct_array keeps the fields of a null struct: None it is
                for i, valid in enumerate(column.is_valid().to_pylist()):
                    if not valid:
                        made[i] = None
            return made

        return records
    fix = _value_fixer(data_type)
    if fix is None:
        return lambda column: column.to_pylist()
    return lambda column: [None if v is None else fix(v) for v in column.to_pylist()]


def _value_fixer(data_type: DataType) -> Callable[[Any], Any] | None:
    if isinstance(data_type, MapType):
        fix_value = _value_fixer(data_type.valueType)
        if fix_value is None:
            return dict
        return lambda pairs: {k: (fix_value(v) if v is not None else None) for k, v in pairs}
    if isinstance(data_type, ArrayType):
        fix_item = _value_fixer(data_type.elementType)
        if fix_item is None:
            return None
        return lambda items: [fix_item(v) if v is not None else None for v in items]
    if isinstance(data_type, StructType):
        fixers = {f.name: fix for f in data_type.fields if (fix := _value_fixer(f.dataType)) is not None}
        if not fixers:
            return None

        def fix_struct(value: dict) -> dict:
            for name, fix in fixers.items():
                if value[name] is not None:
                    value[name] = fix(value[name])
            return value

        return fix_struct
    return None


__all__ = ["avro_data", "avro_records"]
