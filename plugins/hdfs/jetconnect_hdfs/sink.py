"""The HDFS sink: one file per partition and micro-batch, visible only once the batch commits.

Tasks write under hidden staging names and the commit renames them to deterministic final names
(:mod:`jetconnect.staged_commit`); HDFS's rename never overwrites, so a micro-batch that Spark
re-delivers after a crash finds its final names taken and drops its copy: exactly once, as long
as the source replays the batch identically. A killed attempt leaves only hidden files, which
readers skip and the next commit removes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import pyarrow as pa

from jetconnect.connector import CommitContext, Guarantee, Sink, WriteContext
from jetconnect.errors import OptionError, SchemaError, SinkError
from jetconnect.staged_commit import StagedCommit, StagedFile
from jetconnect_hdfs.filesystem import WebHdfsFileSystem, hdfs_path

FORMATS = ("lines", "jsonl")
_SUFFIXES = {"lines": ".txt", "jsonl": ".jsonl"}


@dataclass(frozen=True)
class HdfsSink(Sink):
    """Rows written as text files under ``directory``: ``lines`` (one string column) or ``jsonl``."""

    fs: WebHdfsFileSystem
    directory: str
    format: str = "lines"
    prefix: str = "part"
    suffix: str = ".txt"
    charset: str = "utf-8"
    max_file_bytes: int = 0

    name = "hdfs"
    guarantee = Guarantee.EXACTLY_ONCE
    input_format = "arrow"

    @property
    def staged(self) -> StagedCommit:
        return StagedCommit(self.fs, self.directory, self.prefix, self.suffix)

    def check_schema(self, schema: Any) -> None:
        if self.format != "lines":
            return
        fields = schema.fields
        if len(fields) != 1 or fields[0].dataType.simpleString() != "string":
            raise SchemaError(
                f"sink 'hdfs': format 'lines' writes one string column, got <{schema.simpleString()}>; "
                f"select a single string column (e.g. df.selectExpr('to_json(struct(*)) AS value')) "
                f"or use format='jsonl'"
            )

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> list[StagedFile]:
        task = self.staged.task(ctx)
        try:
            out: BinaryIO | None = None
            written = 0
            for batch in data:
                if not batch.num_rows:
                    continue
                if out is None or (self.max_file_bytes and written >= self.max_file_bytes):
                    out, written = task.new_file(), 0
                written += out.write(self._encode(batch, ctx))
            return task.finish()
        except BaseException:
            task.discard()
            raise

    def commit(self, messages: list[Any], ctx: CommitContext) -> None:
        self.staged.commit(messages, ctx)

    def abort(self, messages: list[Any], ctx: CommitContext) -> None:
        self.staged.abort(messages, ctx)

    def _encode(self, batch: pa.RecordBatch, ctx: WriteContext) -> bytes:
        if self.format == "jsonl":
            rows = batch.to_pylist()
            text = "".join(json.dumps(row, default=str, ensure_ascii=False) + "\n" for row in rows)
        else:
            column = batch.column(0)
            if column.null_count:
                first = column.is_null().index(True).as_py()
                raise SinkError(
                    f"sink 'hdfs': format 'lines' cannot write a null line (partition {ctx.partition_id}, "
                    f"row {first} of a batch); fill or filter nulls first"
                )
            lines = column.to_pylist()
            text = "\n".join(lines) + "\n"
        return text.encode(self.charset)


def make_sink(
    fs: WebHdfsFileSystem,
    directory: str,
    *,
    format: str = "lines",
    prefix: str = "part",
    suffix: str | None = None,
    charset: str = "utf-8",
    max_file_bytes: int = 0,
) -> HdfsSink:
    """Validate the options (errors name them) and build the sink."""
    if format not in FORMATS:
        raise OptionError(f"hdfs: option 'format' must be one of {', '.join(FORMATS)}, avro; got {format!r}")
    if max_file_bytes < 0:
        raise OptionError(f"hdfs: option 'max_file_bytes' must be 0 (no rolling) or more, got {max_file_bytes}")
    if not prefix or "/" in prefix or prefix.startswith((".", "_")):
        raise OptionError(f"hdfs: option 'prefix' must be a visible file name part without '/', got {prefix!r}")
    try:
        "\n".encode(charset)
        directory = hdfs_path(directory)
    except LookupError:
        raise OptionError(f"hdfs: option 'charset': unknown charset {charset!r}") from None
    except ValueError as exc:
        raise OptionError(f"hdfs: option 'directory': {exc}") from None
    return HdfsSink(fs, directory, format, prefix, _SUFFIXES[format] if suffix is None else suffix, charset, max_file_bytes)


__all__ = ["FORMATS", "HdfsSink", "make_sink"]
