"""``sources.avro``: records of Avro Object Container Files, blocks split across partitions."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from jetconnect.api import (
    BatchSource,
    FileRange,
    FileSystem,
    Guarantee,
    ReadOutput,
    check_count,
    load_avro_schema,
    needs_fixing,
    plan_splits,
    to_arrow_schema,
    to_spark_schema,
    value_fixer,
)
from jetconnect.errors import SourceError
from jetconnect_files.avro_container import AvroFileError, decode_records, read_block_groups, read_header

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql.types import StructType


class AvroSource(BatchSource):
    """Every container file matching ``glob``; the Spark schema comes from ``schema`` (a reader
    schema every file is projected onto) or else from the first file's writer schema."""

    name = "avro"
    guarantee = Guarantee.EXACTLY_ONCE

    def __init__(
        self,
        fs: FileSystem,
        directory: str,
        glob: str = "*.avro",
        schema: str | dict | None = None,
        recursive: bool = False,
        max_split_bytes: int = 128 << 20,
        min_splits: int | None = None,
    ) -> None:
        self.fs = fs
        self.directory = directory.rstrip("/") or "/"
        self.glob = glob
        self.recursive = recursive
        self.max_split_bytes = check_count(max_split_bytes, "max_split_bytes", "avro source")
        self.min_splits = check_count(min_splits or 0, "min_splits", "avro source", 0) or os.cpu_count() or 2
        self._avro: Any = load_avro_schema(schema) if schema is not None else None
        self._where = "avro source: option 'schema'"

    def _reference_schema(self) -> Any:
        """The Avro schema rows are shaped by: the user's reader schema, or the first file's."""
        if self._avro is None:
            files = self._files()
            if not files:
                raise SourceError(
                    f"avro source: no files matching '{self.glob}' in '{self.directory}' to take a "
                    f"schema from; give option 'schema' (an Avro reader schema)"
                )
            header = read_header(self.fs, files[0].path)
            self._avro = header.schema
            self._where = f"avro: '{files[0].path}' at byte {header.schema_offset} (its writer schema)"
        return self._avro

    def _files(self):
        if not self.fs.exists(self.directory):
            raise SourceError(f"avro source: directory '{self.directory}' does not exist")
        return self.fs.list_files(self.directory, self.glob, recursive=self.recursive)

    def schema(self) -> StructType:
        reference = self._reference_schema()
        return to_spark_schema(reference, self._where)

    def splits(self) -> Sequence[list[FileRange]]:
        self._reference_schema()  # fixed on the driver, so every task shapes rows alike
        return plan_splits(self._files(), self.max_split_bytes, min_splits=self.min_splits)

    def read_split(self, split: list[FileRange]) -> ReadOutput:
        spark_schema = self.schema()
        arrow_schema = to_arrow_schema(spark_schema)
        reference = self._reference_schema()
        for range_ in split:
            header = read_header(self.fs, range_.path)
            # Files written with the reference schema need no resolution (fastavro is faster without).
            reader_schema = None if header.schema == reference else reference
            fix = value_fixer(spark_schema) if needs_fixing(header.schema) else None
            for offsets, blocks in read_block_groups(self.fs, range_.path, header, range_.start, range_.end):
                records: list[dict] = []
                for block in decode_records(range_.path, header, offsets, blocks, reader_schema):
                    records.extend(block)
                if fix is not None:
                    records = [fix(r) for r in records]
                yield _to_batch(records, arrow_schema, range_.path, offsets)


def _to_batch(records: list[dict], arrow_schema: pa.Schema, path: str, offsets: list[int]) -> pa.RecordBatch:
    try:
        if not arrow_schema:
            # from_pylist gives 0 rows when there are no columns: records of an empty schema
            # would vanish, and a count of them be wrong.
            return pa.RecordBatch.from_struct_array(pa.array(records, pa.struct([])))
        return pa.RecordBatch.from_pylist(records, schema=arrow_schema)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
        raise AvroFileError(
            f"avro: '{path}' blocks at bytes {offsets[0]}..{offsets[-1]} hold a record that does not fit "
            f"the Spark schema: {exc}"
        ) from exc


__all__ = ["AvroSource"]
