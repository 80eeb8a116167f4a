"""``sinks.avro``: Avro Object Container Files, one per partition and micro-batch, exactly-once.

The Avro schema is the user's, or derived from the DataFrame's (nullable columns become unions
with null). Files are staged, rolled and committed like the lines sink (:mod:`jetconnect._files.sink`);
this module only writes the records of each file. A plain batch :meth:`AvroSink.write` (no schema
of the user's, no rolling, the default names) goes to Spark's own Avro writer, spark-avro, when the
session has it (``batch_writer``; the conditions are :meth:`AvroSink.batch_writer_choice`'s and
:func:`jetconnect.files_family.spark_avro_write_refusal`'s).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO

import fastavro
import fastavro.write
import pyarrow as pa

from jetconnect import WriteContext
from jetconnect.api import FileSystem, check_count
from jetconnect.avro_schemas import avro_records, load_avro_schema, to_avro_schema
from jetconnect.errors import JetconnectError, OptionError, SinkError
from jetconnect.files_family import (
    BatchReaderChoice,
    FileWriters,
    LocalFileSystem,
    StagedCommit,
    StagedFileSink,
    check_batch_reader,
    choose_batch_reader,
    spark_avro_write,
    spark_avro_write_refusal,
    unsafe_file_name,
)

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

_log = logging.getLogger(__name__)

#: fastavro's default, and what Spark's writer uses (Avro's ``DataFileWriter``: 64000 bytes).
SYNC_INTERVAL = 64000

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
        sync_interval: int = SYNC_INTERVAL,
        batch_writer: str = "auto",
    ) -> None:
        if codec.lower() not in CODECS:
            raise OptionError(f"avro sink: option 'codec' must be one of null, deflate, snappy, zstd; got {codec!r}")
        self._staged = StagedCommit(fs, directory.rstrip("/") or "/", prefix, suffix)
        self.codec = CODECS[codec.lower()]
        self.avro_schema = load_avro_schema(schema) if schema is not None else None
        self.roll_bytes = check_count(roll_bytes, "roll_bytes", "avro sink", 0)
        self.sync_interval = sync_interval
        self.batch_writer = check_batch_reader(batch_writer, "avro sink", "batch_writer")

    def write(self, df: DataFrame, **options: Any) -> None:
        """Write a batch DataFrame: by Spark's Avro writer where it writes what this sink would
        (see :meth:`batch_writer_choice`), else by jetconnect's, in Python workers."""
        choice = self.batch_writer_choice(df, **options)
        _log.info("avro sink: batch write by %s's writer: %s", choice.reader, choice.reason)
        if choice.reader == "spark":
            spark_avro_write(df, choice.uris[0], self.codec)
            return
        super().write(df, **options)

    def batch_writer_choice(self, df: DataFrame, **options: Any) -> BatchReaderChoice:
        """The writer :meth:`write` would use for ``df`` now, and why (an :class:`OptionError` if
        ``batch_writer="spark"`` cannot be honoured); for Spark's, ``uris`` holds the directory's."""
        return choose_batch_reader(
            self.batch_writer,
            "avro sink",
            lambda: self._why_not_spark(df, options),
            lambda uris: "a plain batch write",
            option="batch_writer",
        )

    def spark_directory_uri(self) -> tuple[str | None, str]:
        """(None, the URI Spark's Hadoop client writes this sink's directory at), or (why it
        cannot, ""): the local disk's ``file://`` URI; another file system overrides it."""
        if not isinstance(self._staged.fs, LocalFileSystem):
            return f"no Spark URI is known for {type(self._staged.fs).__name__}", ""
        return None, f"file://{self._staged.directory}"

    def _why_not_spark(self, df: DataFrame, options: dict[str, Any]) -> tuple[str | None, tuple[str, ...]]:
        # Cheapest first: what the options alone decide needs no call to Spark.
        if options:
            return f"write options {sorted(options)} are jetconnect's", ()
        for given, why in (
            (self.avro_schema is not None, "option 'schema' (an Avro schema of the user's)"),
            (self.roll_bytes != 0, "option 'roll_bytes'"),
            (self.sync_interval != SYNC_INTERVAL, "option 'sync_interval'"),
            ((self._staged.prefix, self._staged.suffix) != ("part", ".avro"), "options 'prefix' and 'suffix'"),
        ):
            if given:
                return f"{why} is jetconnect's", ()
        if df.isStreaming:
            return "a streaming DataFrame is written by write_stream (jetconnect's writer says so)", ()
        schema = df.schema  # under Spark Connect each access may ask the server
        try:
            to_avro_schema(schema)
        except JetconnectError as exc:
            return f"jetconnect's writer refuses the schema ({exc})", ()
        reason, uri = self.spark_directory_uri()
        if reason is not None:
            return reason, ()
        if unsafe_file_name([self._staged.directory]) is not None:
            return f"the directory {self._staged.directory!r} has characters Spark takes for a glob or a URI", ()
        if (refusal := spark_avro_write_refusal(df.sparkSession, schema)) is not None:
            return refusal, ()
        return None, (uri,)

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
        to_python = avro_records(ctx.schema, parsed)
        written = _Written()  # numbers records across the partition's files, for errors
        return lambda out: _AvroFile(out, parsed, self.codec, self.sync_interval, to_python, written)


class _Written:
    """How many records a task has written so far, over all its files."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0


class _AvroFile:
    """One Avro container file: the header when opened, blocks of records as they come."""

    def __init__(
        self,
        out: BinaryIO,
        parsed: Any,
        codec: str,
        sync_interval: int,
        to_python: Callable[[pa.RecordBatch], list[dict]],
        written: _Written,
    ) -> None:
        self.parsed = parsed
        self.to_python = to_python
        self.written = written
        self.writer = fastavro.write.Writer(out, parsed, codec, sync_interval)

    def write(self, batch: pa.RecordBatch) -> None:
        records = self.to_python(batch)
        write = self.writer.write
        i = 0
        try:  # one try around the loop, not one per record: this loop is the sink's hot path
            for i, record in enumerate(records):  # noqa: B007  # i names the failing record below
                write(record)
        except Exception as exc:  # fastavro raises ValueError, TypeError, AttributeError...
            raise _mismatch(self.parsed, records[i], self.written.count + i, exc) from exc
        self.written.count += len(records)

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
