"""``sinks.avro``: Avro Object Container Files, one per partition and micro-batch, exactly-once.

The Avro schema is the user's, or derived from the DataFrame's (nullable columns become unions
with null). Files are staged, rolled and committed like the lines sink (:mod:`jetconnect._files.sink`);
this module only writes the records of each file.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

import fastavro
import fastavro.write
import pyarrow as pa

from jetconnect.api import (
    FileSystem,
    FileWriters,
    StagedCommit,
    StagedFileSink,
    WriteContext,
    check_count,
    load_avro_schema,
    to_avro_schema,
)
from jetconnect.errors import OptionError, SinkError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql.types import DataType, StructType

#: Our option values -> the codec names of the Avro specification.
CODECS = {"null": "null", "deflate": "deflate", "snappy": "snappy", "zstd": "zstandard", "zstandard": "zstandard"}


class AvroSink(StagedFileSink):
    """Rows into Avro container files in ``directory`` (``<prefix>-<batch>-<partition>-<seq>-<query>.avro``)."""

    name = "avro"

    def __init__(
        self,
        fs: FileSystem,
        directory: str,
        schema: str | dict | None = None,
        codec: str = "null",
        prefix: str = "part",
        suffix: str = ".avro",
        roll_bytes: int = 0,
        sync_interval: int = 64000,
    ) -> None:
        if codec.lower() not in CODECS:
            raise OptionError(f"avro sink: option 'codec' must be one of null, deflate, snappy, zstd; got {codec!r}")
        self._staged = StagedCommit(fs, directory.rstrip("/") or "/", prefix, suffix)
        self.codec = CODECS[codec.lower()]
        self.avro_schema = load_avro_schema(schema) if schema is not None else None
        self.roll_bytes = check_count(roll_bytes, "roll_bytes", "avro sink", 0)
        self.sync_interval = sync_interval

    def _parsed_schema(self, schema: StructType) -> Any:
        try:
            return fastavro.parse_schema(self.avro_schema if self.avro_schema is not None else to_avro_schema(schema))
        except fastavro.schema.SchemaParseException as exc:
            raise OptionError(f"avro sink: option 'schema' is not a valid Avro schema: {exc}") from None

    def check_schema(self, schema: StructType) -> None:
        self._parsed_schema(schema)

    @property
    def staged(self) -> StagedCommit:
        return self._staged

    def file_writers(self, ctx: WriteContext) -> FileWriters:
        parsed = self._parsed_schema(ctx.schema)
        to_python = _python_converter(ctx.schema)
        records = itertools.count()  # numbers records across the partition's files, for errors
        return lambda out: _AvroFile(out, parsed, self.codec, self.sync_interval, to_python, records)


class _AvroFile:
    """One Avro container file: the header when opened, blocks of records as they come."""

    def __init__(
        self,
        out: BinaryIO,
        parsed: Any,
        codec: str,
        sync_interval: int,
        to_python: Callable[[pa.RecordBatch], list[dict]],
        records: Iterator[int],
    ) -> None:
        self.parsed = parsed
        self.to_python = to_python
        self.records = records
        self.writer = fastavro.write.Writer(out, parsed, codec, sync_interval)

    def write(self, batch: pa.RecordBatch) -> None:
        for record in self.to_python(batch):
            index = next(self.records)
            try:
                self.writer.write(record)
            except Exception as exc:  # fastavro raises ValueError, TypeError, AttributeError...
                raise _mismatch(self.parsed, record, index, exc) from exc

    def close(self) -> None:
        self.writer.flush()


def _mismatch(parsed: Any, record: dict, index: int, exc: Exception) -> SinkError:
    """Name the record and, through fastavro's validator, the field that does not fit."""
    detail = f"{type(exc).__name__}: {exc}"
    try:
        fastavro.validation.validate(record, parsed, raise_errors=True)
    except fastavro.validation.ValidationError as invalid:
        detail = "; ".join(str(e) for e in invalid.errors)[:500]
    except Exception:  # the validator itself failing: keep the writer's message
        pass
    return SinkError(f"avro sink: record #{index} of this partition does not match the Avro schema: {detail}")


def _python_converter(schema: StructType) -> Callable[[pa.RecordBatch], list[dict]]:
    """Arrow batch -> records fastavro writes. Arrow gives maps as lists of pairs: make them dicts."""
    fixers = {f.name: fix for f in schema.fields if (fix := _value_fixer(f.dataType)) is not None}
    if not fixers:
        return pa.RecordBatch.to_pylist

    def convert(batch: pa.RecordBatch) -> list[dict]:
        records = batch.to_pylist()
        for record in records:
            for name, fix in fixers.items():
                if record[name] is not None:
                    record[name] = fix(record[name])
        return records

    return convert


def _value_fixer(data_type: DataType) -> Callable[[Any], Any] | None:
    from pyspark.sql.types import ArrayType, MapType, StructType

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
