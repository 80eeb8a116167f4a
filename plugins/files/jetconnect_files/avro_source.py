"""``sources.avro``: records of Avro Object Container Files, blocks split across partitions.

A batch read that asks nothing only jetconnect can do goes to Spark's own Avro reader
(spark-avro) when the session has it, over exactly the files jetconnect listed
(``batch_reader="auto"``, see :meth:`AvroSource.batch_reader_choice`): the same rows, read in the
JVM without a Python worker. jetconnect's reader stays where it adds something or where the two
could differ:

- a reader ``schema`` that is not every file's writer schema, or files written with different
  schemas (jetconnect resolves each file to one schema; Spark's reader would take the first
  file's and match the others by name);
- a schema whose Spark form differs between the two (unions of several types, which jetconnect
  refuses; a time of day) or field names equal but for case
  (:func:`~jetconnect._files.spark_avro.schema_difference`);
- a file Spark wrote in its legacy calendar (Spark would rebase its dates);
- a ``mapper`` (Jet's ``mapOutputFn``, a Python function of each record);
- read options, split sizes the user set, ``spark.sql.files.ignoreMissingFiles`` or
  ``ignoreCorruptFiles``, a name Spark reads as a glob or URI, a Hadoop ``.crc`` file beside one;
- no file, a header jetconnect cannot read (its reader then says what is wrong), or no spark-avro
  on the session; files on another file system than the local one (HDFS's Avro).

``batch_reader="spark"`` forces Spark's reader or fails with an :class:`OptionError` saying why
not; ``"jetconnect"`` always reads in Python workers. On Spark's path the DataFrame says every
field is nullable (Spark's file sources always do); names, types and values are jetconnect's.
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import fastavro
import pyarrow as pa

from jetconnect import BatchSource, Guarantee
from jetconnect.api import FileInfo, FileSystem, ReadOutput, check_count, check_function_option, to_arrow_schema
from jetconnect.avro_schemas import load_avro_schema, needs_fixing, to_spark_schema, value_fixer
from jetconnect.errors import JetconnectError, SourceError
from jetconnect.files_family import (
    BatchReaderChoice,
    FileMapper,
    FileRange,
    LocalFileSystem,
    check_batch_reader,
    choose_batch_reader,
    files_for_spark,
    for_each_file,
    local_file_uris,
    mapped_batch,
    plan_splits,
    rebased_by_spark,
    relative_name,
    schema_difference,
    spark_avro_frame,
    spark_avro_records,
    spark_avro_refusal,
)
from jetconnect_files.avro_container import AvroFileError, AvroHeader, decode_records, read_block_groups, read_header

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

_log = logging.getLogger(__name__)
OWNER = "avro source"


class AvroSource(BatchSource):
    """Every container file matching ``glob``; the Spark schema comes from ``schema`` (a reader
    schema every file is projected onto) or else from the first file's writer schema.

    ``batch_reader``: ``auto``, ``jetconnect`` or ``spark`` (see the module's docstring);
    ``own_options``: options the user set that only jetconnect's reader honours (split sizes).
    ``mapper``: Jet's function of (file, record) making each row of ``mapped_schema`` (DDL, default
    ``value string``): the file's name relative to ``directory``, the record as fastavro decodes it
    (a dict, resolved to ``schema`` if given); a record it returns None for is left out, as in Jet."""

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
        batch_reader: str = "auto",
        own_options: Sequence[str] = (),
        mapper: FileMapper | None = None,
        mapped_schema: str | None = None,
    ) -> None:
        check_function_option(
            mapper,
            "mapper",
            OWNER,
            "(file, record)",
            schema=mapped_schema,
            schema_option="mapped_schema",
            factory="sources.avro",
        )
        self.mapper, self.mapped_schema = mapper, mapped_schema
        self.fs = fs
        self.directory = directory.rstrip("/") or "/"
        self.glob = glob
        self.recursive = recursive
        self.max_split_bytes = check_count(max_split_bytes, "max_split_bytes", "avro source")
        self.min_splits = check_count(min_splits or 0, "min_splits", "avro source", 0) or os.cpu_count() or 2
        self._avro: Any = load_avro_schema(schema) if schema is not None else None
        self._where = "avro source: option 'schema'"
        self._schema_given = schema is not None
        self.batch_reader = check_batch_reader(batch_reader, OWNER)
        self.own_options = tuple(own_options)

    def read(self, spark: SparkSession, **options: Any) -> DataFrame:
        choice = self.batch_reader_choice(spark, **options)
        _log.info("%s: batch read by %s's reader: %s", OWNER, choice.reader, choice.reason)
        if choice.reader == "spark":
            return spark_avro_records(spark, choice.uris, self.schema(), OWNER)
        return super().read(spark, **options)

    def batch_reader_choice(self, spark: SparkSession, **options: Any) -> BatchReaderChoice:
        """The reader :meth:`read` would use now, and why (an :class:`OptionError` if
        ``batch_reader="spark"`` cannot be honoured); ``options``: the read options :meth:`read`
        would get (any keeps jetconnect's reader)."""
        return choose_batch_reader(
            self.batch_reader,
            OWNER,
            lambda: self._why_not_spark(spark, options),
            lambda uris: f"Avro records with one writer schema of {len(uris)} files",
        )

    def spark_client_refusal(self) -> str | None:
        """Why Spark's Hadoop client cannot read this source's files, or None; asked before anything
        is listed. Only the local disk's files have a Spark URI here (:meth:`spark_uris`): another
        file system (HDFS's WebHDFS) keeps jetconnect's reader unless it overrides both."""
        if not isinstance(self.fs, LocalFileSystem):
            return f"no Spark URI is known for files on {type(self.fs).__name__}"
        return None

    def spark_uris(self, files: Sequence[FileInfo]) -> tuple[str | None, tuple[str, ...]]:
        """(None, the URIs Spark's Hadoop client reads ``files`` at), or (why it cannot, ()): the
        local disk's ``file://`` URIs; another file system overrides it (or keeps jetconnect's)."""
        return local_file_uris(self.fs, files)

    def _why_not_spark(self, spark: SparkSession, options: dict[str, Any]) -> tuple[str | None, tuple[str, ...]]:
        if self.mapper is not None:
            return "a mapper runs in Python", ()
        reason, files = files_for_spark(spark, options, self)
        if reason is not None:
            return reason, ()
        reason, uris = self.spark_uris(files)
        if reason is not None:
            return reason, ()
        if (missing := spark_avro_refusal(spark)) is not None:
            return missing, ()
        if (reason := self._why_not_spark_for_headers(files)) is not None:
            return reason, ()
        try:
            ours = self.schema()
        except JetconnectError as exc:
            return f"jetconnect's reader refuses the schema ({exc})", ()
        try:
            theirs = spark_avro_frame(spark, uris).schema
        except Exception as exc:  # whatever Spark's reader says about the files, jetconnect's reader has its say
            return f"Spark's reader cannot take the files' schema: {str(exc).strip()[:300]}", ()
        case_sensitive = str(spark.conf.get("spark.sql.caseSensitive", "false")).strip().lower() == "true"
        if (different := schema_difference(ours, theirs, case_sensitive)) is not None:
            return different, ()
        return None, uris

    def _why_not_spark_for_headers(self, files: Sequence[FileInfo]) -> str | None:
        """Why the files' headers keep jetconnect's reader: one unreadable, a writer schema that is
        not the reference one, a file Spark would rebase the dates of; or None."""

        def header_of(info: FileInfo) -> AvroHeader | str:
            try:
                return read_header(self.fs, info.path)
            except (AvroFileError, OSError) as exc:
                return f"{exc}"

        headers = for_each_file(header_of, files)
        if (unreadable := next((h for h in headers if isinstance(h, str)), None)) is not None:
            return f"a header jetconnect's reader cannot take ({unreadable})"
        reference = _expanded(self._reference_schema())
        if reference is None:
            return f"{self._where}: fastavro cannot parse the schema (jetconnect's reader says what is wrong)"
        for info, header in zip(files, headers, strict=True):
            assert not isinstance(header, str)
            if _expanded(header.schema) != reference:
                given = "option 'schema'" if self._schema_given else f"'{files[0].path}'"
                return (
                    f"'{info.path}' has another writer schema than {given}: jetconnect's reader resolves "
                    f"each file to one schema, Spark's would read them by the first file's"
                )
            if SPARK_METADATA_MARK in header.raw and rebased_by_spark(_metadata(header)):
                return (
                    f"'{info.path}' was written by Spark in its legacy calendar: Spark's reader would rebase its dates"
                )
        return None

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
        if self.mapper is not None:
            from jetconnect.api import parse_schema

            return parse_schema(self.mapped_schema or "value string")
        return self._records_schema()

    def _records_schema(self) -> StructType:
        """The Spark schema of the records themselves (without a mapper, the source's schema)."""
        reference = self._reference_schema()
        return to_spark_schema(reference, self._where)

    def splits(self) -> Sequence[list[FileRange]]:
        self._reference_schema()  # fixed on the driver, so every task shapes rows alike
        return plan_splits(self._files(), self.max_split_bytes, min_splits=self.min_splits)

    def read_split(self, split: list[FileRange]) -> ReadOutput:
        if self.mapper is not None:
            yield from self._read_mapped(split, self.mapper)
            return
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

    def _read_mapped(self, split: list[FileRange], mapper: FileMapper) -> ReadOutput:
        """Jet's ``mapOutputFn``: each record, as fastavro decodes it, through the user's function."""
        schema = self.schema()
        reference = self._reference_schema()
        for range_ in split:
            header = read_header(self.fs, range_.path)
            reader_schema = None if header.schema == reference else reference
            name = relative_name(self.directory, range_.path)  # as the lines source names it
            for offsets, blocks in read_block_groups(self.fs, range_.path, header, range_.start, range_.end):
                decoded = decode_records(range_.path, header, offsets, blocks, reader_schema)
                for offset, records in zip(offsets, decoded, strict=False):
                    yield mapped_batch(mapper, name, range_.path, records, schema, OWNER, _record_at(offset))


#: Bytes every header whose metadata Spark wrote holds (its keys start so): only those are parsed.
SPARK_METADATA_MARK = b"org.apache.spark."


def _record_at(block_offset: int) -> Callable[[int], str]:
    """Names record ``i`` (from 0) of the block at ``block_offset`` in an error, counting from 1."""
    return lambda index: f"record {index + 1} of the block at byte {block_offset}"


def _expanded(schema: Any) -> Any:
    """``schema`` with every name made full (a namespace spelled apart, a ``{"type": "long"}`` for
    ``"long"``): two schemas that say the same give the same; None for one fastavro refuses."""
    try:
        return fastavro.parse_schema(schema, _write_hint=False)
    except Exception:  # fastavro raises many types for a malformed schema; jetconnect's reader says what is wrong
        return None


def _metadata(header: AvroHeader) -> dict[str, str]:
    """The header's metadata as text (fastavro parses the header jetconnect has read already)."""
    parsed = fastavro.reader(io.BytesIO(header.raw)).metadata
    return {str(k): str(v) for k, v in parsed.items()}


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
