"""The files family, written once over a :class:`~jetconnect.api.FileSystem`, for plugins that keep files.

The files plugin builds its lines, Avro and file-watcher connectors on it over the local file
system, the HDFS plugin the same connectors over WebHDFS: byte-range splits of text files, the
lines and whole-files sources, Jet's mapping function of a file's items (``mapped_batch``), the
growing-files stream (offsets per file), the staged
exactly-once file sinks, and the choice of when a plain batch read goes to Spark's own text or
Avro reader (same rows, checked by tests that compare both paths).
"""

from __future__ import annotations

from jetconnect._files.batch_reader import (
    BatchReaderChoice,
    LocalLinesSource,
    SparkTextLinesSource,
    choose_batch_reader,
    files_for_spark,
    for_each_file,
    local_file_uris,
    split_options_given,
)
from jetconnect._files.filesystem import LocalFileSystem, is_hidden, read_exactly, relative_name, shared_path
from jetconnect._files.growing_files import GrowingLinesSource
from jetconnect._files.line_splits import FileRange, plan_splits
from jetconnect._files.mapper import FileMapper, mapped_batch
from jetconnect._files.sink import Encoder, FileWriters, StagedFileSink, encode_lines
from jetconnect._files.spark_avro import (
    rebased_by_spark,
    schema_difference,
    spark_avro_frame,
    spark_avro_records,
    spark_avro_refusal,
    spark_avro_write,
    spark_avro_write_refusal,
)
from jetconnect._files.spark_text import check_batch_reader, unsafe_file_name
from jetconnect._files.staged_commit import StagedCommit
from jetconnect._files.whole_files import WholeFilesSource

__all__ = [
    "BatchReaderChoice",
    "Encoder",
    "FileMapper",
    "FileRange",
    "FileWriters",
    "GrowingLinesSource",
    "LocalFileSystem",
    "LocalLinesSource",
    "SparkTextLinesSource",
    "StagedCommit",
    "StagedFileSink",
    "WholeFilesSource",
    "check_batch_reader",
    "choose_batch_reader",
    "encode_lines",
    "files_for_spark",
    "for_each_file",
    "is_hidden",
    "local_file_uris",
    "mapped_batch",
    "plan_splits",
    "read_exactly",
    "rebased_by_spark",
    "relative_name",
    "schema_difference",
    "shared_path",
    "spark_avro_frame",
    "spark_avro_records",
    "spark_avro_refusal",
    "spark_avro_write",
    "spark_avro_write_refusal",
    "split_options_given",
    "unsafe_file_name",
]
