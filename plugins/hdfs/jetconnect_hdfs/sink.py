"""The HDFS sink: one file per partition and micro-batch, visible only once the batch commits.

Tasks write under hidden staging names and the commit renames them to deterministic final names
(:mod:`jetconnect._files.staged_commit`); HDFS's rename never overwrites, so a micro-batch that Spark
re-delivers after a crash finds its final names taken and drops its copy: exactly once, as long
as the source replays the batch identically. A killed attempt leaves only hidden files, which
readers skip and the next commit removes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from jetconnect import WriteContext
from jetconnect.api import check_charset, check_count
from jetconnect.errors import OptionError, SchemaError
from jetconnect.files_family import Encoder, StagedCommit, StagedFileSink, encode_lines
from jetconnect_hdfs.filesystem import WebHdfsFileSystem, hdfs_path

FORMATS = ("lines", "jsonl")
_SUFFIXES = {"lines": ".txt", "jsonl": ".jsonl"}


@dataclass(frozen=True)
class HdfsSink(StagedFileSink):
    """Rows written as text files under ``directory``: ``lines`` (one string column) or ``jsonl``."""

    fs: WebHdfsFileSystem
    directory: str
    format: str = "lines"
    prefix: str = "part"
    suffix: str = ".txt"
    charset: str = "utf-8"
    max_file_bytes: int = 0

    name = "hdfs"

    def __post_init__(self) -> None:
        _ = self.staged  # checks prefix and suffix now, not at the first write
        # the base's roll_bytes, given as max_file_bytes (frozen: set the way dataclasses do)
        object.__setattr__(self, "roll_bytes", self.max_file_bytes)

    @property
    def staged(self) -> StagedCommit:
        return StagedCommit(self.fs, self.directory, self.prefix, self.suffix)

    def check_connection(self) -> str:
        """The NameNode asked for the sink's directory (TLS and the user's identity included),
        nothing written."""
        return self.fs.check(self.directory)

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

    def encoder(self, ctx: WriteContext) -> Encoder:
        return self._encode

    def _encode(self, batch: pa.RecordBatch) -> bytes:
        if self.format == "jsonl":
            rows = batch.to_pylist()
            text = "".join(json.dumps(row, default=str, ensure_ascii=False) + "\n" for row in rows)
            return text.encode(self.charset)
        return encode_lines(batch.column(0), self.charset, owner="sink 'hdfs'")


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
    max_file_bytes = check_count(max_file_bytes, "max_file_bytes", "hdfs", minimum=0)
    charset = check_charset(charset, owner="hdfs")
    try:
        directory = hdfs_path(directory)
    except ValueError as exc:
        raise OptionError(f"hdfs: option 'directory': {exc}") from None
    return HdfsSink(
        fs, directory, format, prefix, _SUFFIXES[format] if suffix is None else suffix, charset, max_file_bytes
    )


__all__ = ["FORMATS", "HdfsSink", "make_sink"]
