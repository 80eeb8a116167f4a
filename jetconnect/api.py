"""The plugin API: every core name a connector plugin may use, in one place.

A plugin under ``plugins/`` or ``contrib/`` imports from here, from ``jetconnect`` (the builders,
``hookimpl``, ``sources``/``sinks``), from :mod:`jetconnect.errors` and, in its tests, from
:mod:`jetconnect.testing` and :mod:`jetconnect.fuzzing`. Every other core module is private (its
name starts with ``_``) and may change without notice; ``tests/core/test_plugin_api.py`` fails if
a plugin reaches past this module. See docs/ARCHITECTURE.md for how the pieces fit together.
"""

from __future__ import annotations

# Arrow and Spark schemas, rows and admission control.
from jetconnect._admission import admit_offsets, share_budget, spread
from jetconnect._arrow_rows import columns_to_batch, mapped_rows, rows_to_batch, spark_rows
from jetconnect._arrow_schema import to_arrow_schema

# Builders and the write-ahead-logged stream they share with pull-based plugins (JMS, sockets).
from jetconnect._builders import (
    BACKLOG_PAST_COMMITS,
    IDLE_POLL_MS,
    KEEP_ALIVE_MS,
    MAX_BACKLOG,
    MAX_PULL_MS,
    SPOOL_KEEP_COMMITTED_ROWS,
    SPOOL_LINGER_MS,
    SPOOL_SEGMENT_ROWS,
    WAL_LOCATION,
    BuilderSink,
    BuilderStreamSource,
    ProcessorContext,
    SinkBuilder,
    SinkContext,
    SourceBuffer,
    SourceBuilder,
)
from jetconnect._charsets import check_charset
from jetconnect._clients import ClientCache

# The contracts: what a connector implements and what Spark hands it.
from jetconnect._connector import (
    BatchSource,
    CommitContext,
    Guarantee,
    GuaranteeOption,
    Json,
    Offset,
    Range,
    ReadOutput,
    Sink,
    Source,
    StreamSource,
    WriteContext,
    WriteKey,
)

# Schemas written as Spark DDL text.
from jetconnect._ddl import parse_schema

# The files family: file systems, line splits, the lines sources, staged exactly-once file sinks, Avro.
from jetconnect._files.avro_schema import (
    load_avro_schema,
    may_be_empty,
    needs_fixing,
    to_avro_schema,
    to_spark_schema,
    value_fixer,
)
from jetconnect._files.batch_reader import (
    BatchReaderChoice,
    LocalLinesSource,
    SparkTextLinesSource,
    choose_batch_reader,
    compressed_file_name,
    file_starting_with_bom,
    files_for_spark,
    for_each_file,
    local_file_uris,
    skipping_files_conf,
    split_options_given,
)
from jetconnect._files.filesystem import FileInfo, FileSystem, LocalFileSystem, is_hidden, read_exactly, shared_path
from jetconnect._files.growing_files import GrowingLinesSource
from jetconnect._files.line_splits import FileRange, plan_splits
from jetconnect._files.lines_source import LinesSource
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
from jetconnect._files.spark_text import BATCH_READERS, check_batch_reader, spark_text_lines, unsafe_file_name
from jetconnect._files.staged_commit import StagedCommit
from jetconnect._files.whole_files import WholeFilesSource
from jetconnect._hookspecs import hookimpl

# Where state lives, retries, and keeping secrets out of what a user sees.
from jetconnect._locations import resolve_location
from jetconnect._offsets import integer_positions
from jetconnect._options import (
    PLAIN_NAME,
    PLAIN_NAME_IS,
    check_count,
    check_duration,
    check_function_option,
    check_name,
)

# Spark's pushed filters as picklable tuples (each source decides which it can evaluate exactly).
from jetconnect._pushdown import PlainFilter, filter_operands, plain_filter
from jetconnect._redaction import (
    describe,
    raise_unchained,
    redact,
    redact_hosts,
    redact_options,
    redact_url,
    secrets_of,
    split_credentials,
    url_secrets,
)
from jetconnect._retry import Backoff, RetriesExhausted, retry_call
from jetconnect._run_directory import run_spools
from jetconnect._spool import Spool
from jetconnect.errors import JetconnectError, OffsetError, OptionError, SchemaError, SinkError, SourceError

__all__ = [
    "PlainFilter",
    "filter_operands",
    "plain_filter",
    "BACKLOG_PAST_COMMITS",
    "BATCH_READERS",
    "BatchReaderChoice",
    "IDLE_POLL_MS",
    "KEEP_ALIVE_MS",
    "MAX_BACKLOG",
    "MAX_PULL_MS",
    "SPOOL_KEEP_COMMITTED_ROWS",
    "SPOOL_LINGER_MS",
    "SPOOL_SEGMENT_ROWS",
    "WAL_LOCATION",
    "Backoff",
    "BatchSource",
    "BuilderSink",
    "BuilderStreamSource",
    "ClientCache",
    "CommitContext",
    "Encoder",
    "FileInfo",
    "FileRange",
    "FileSystem",
    "FileWriters",
    "GrowingLinesSource",
    "Guarantee",
    "GuaranteeOption",
    "JetconnectError",
    "Json",
    "LinesSource",
    "LocalFileSystem",
    "LocalLinesSource",
    "Offset",
    "OffsetError",
    "OptionError",
    "PLAIN_NAME",
    "PLAIN_NAME_IS",
    "ProcessorContext",
    "Range",
    "ReadOutput",
    "RetriesExhausted",
    "SchemaError",
    "Sink",
    "SinkBuilder",
    "SinkContext",
    "SinkError",
    "Source",
    "SourceBuffer",
    "SourceBuilder",
    "SourceError",
    "SparkTextLinesSource",
    "Spool",
    "StagedCommit",
    "StagedFileSink",
    "StreamSource",
    "WholeFilesSource",
    "WriteContext",
    "WriteKey",
    "admit_offsets",
    "check_batch_reader",
    "compressed_file_name",
    "check_function_option",
    "check_name",
    "choose_batch_reader",
    "check_charset",
    "check_count",
    "columns_to_batch",
    "check_duration",
    "describe",
    "encode_lines",
    "file_starting_with_bom",
    "files_for_spark",
    "for_each_file",
    "hookimpl",
    "integer_positions",
    "is_hidden",
    "load_avro_schema",
    "local_file_uris",
    "mapped_rows",
    "may_be_empty",
    "needs_fixing",
    "parse_schema",
    "plan_splits",
    "raise_unchained",
    "read_exactly",
    "rebased_by_spark",
    "redact",
    "redact_hosts",
    "redact_options",
    "redact_url",
    "resolve_location",
    "retry_call",
    "run_spools",
    "rows_to_batch",
    "schema_difference",
    "secrets_of",
    "share_budget",
    "shared_path",
    "skipping_files_conf",
    "spark_avro_frame",
    "spark_avro_records",
    "spark_avro_refusal",
    "spark_avro_write",
    "spark_avro_write_refusal",
    "spark_rows",
    "spark_text_lines",
    "split_options_given",
    "split_credentials",
    "spread",
    "to_arrow_schema",
    "to_avro_schema",
    "to_spark_schema",
    "unsafe_file_name",
    "url_secrets",
    "value_fixer",
]
