"""The plugin API: the core names a connector plugin needs beyond ``jetconnect`` itself.

A plugin under ``plugins/`` or ``contrib/`` takes the builders, the contracts and ``hookimpl`` from
``jetconnect``, its errors from :mod:`jetconnect.errors`, and the rest from here; plugins that keep
files on a file system add :mod:`jetconnect.files_family`, and those that carry Avro
:mod:`jetconnect.avro_schemas`. Tests add :mod:`jetconnect.testing` and :mod:`jetconnect.fuzzing`.
Each name has one import path, and every other core module is private (its name starts with ``_``)
and may change without notice; ``tests/core/test_plugin_api.py`` checks both. See
docs/ARCHITECTURE.md for how the pieces fit together.
"""

from __future__ import annotations

# Arrow and Spark schemas, rows and admission control.
from jetconnect._admission import admit_offsets, share_budget, spread
from jetconnect._arrow_rows import columns_to_batch, mapped_rows, rows_to_batch, spark_rows
from jetconnect._arrow_schema import to_arrow_schema

# The write-ahead-logged builder stream, which pull-based plugins (JMS, sockets) build on too.
from jetconnect._builders import (
    DEFAULT_IDLE_POLL_MS,
    DEFAULT_KEEP_ALIVE_MS,
    SPOOL_LINGER_MS_LIMIT,
    WAL_LOCATION,
    BuilderSink,
    BuilderStreamSource,
    StreamOptions,
)
from jetconnect._charsets import check_charset
from jetconnect._clients import ClientCache

# Why a connection failed (credentials, certificate, protocol, not reached): what is never retried.
from jetconnect._connection_failures import (
    ConnectionFailure,
    connection_failure,
    explain_connection_failure,
    is_permanent_connection_failure,
)

# What the contracts of ``jetconnect`` hand a connector and take back.
from jetconnect._connector import GuaranteeOption, Offset, ReadOutput, WriteKey

# Schemas written as Spark DDL text.
from jetconnect._ddl import parse_schema

# The file system a ``register_file_systems`` hook provides (for state locations and file connectors).
from jetconnect._files.filesystem import FileInfo, FileSystem

# Positions, option checks and Spark's pushed filters as picklable tuples.
from jetconnect._offsets import integer_positions
from jetconnect._option_aliases import OptionAlias
from jetconnect._options import PLAIN_NAME, PLAIN_NAME_IS, check_count, check_function_option, check_name
from jetconnect._pushdown import PlainFilter, filter_operands, plain_filter

# Keeping secrets out of what a user sees; retries; spools of rows on disk.
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
from jetconnect._short_repr import short_repr
from jetconnect._spool import Spool

__all__ = [
    "PLAIN_NAME",
    "PLAIN_NAME_IS",
    "DEFAULT_IDLE_POLL_MS",
    "DEFAULT_KEEP_ALIVE_MS",
    "SPOOL_LINGER_MS_LIMIT",
    "WAL_LOCATION",
    "Backoff",
    "BuilderSink",
    "BuilderStreamSource",
    "ClientCache",
    "ConnectionFailure",
    "FileInfo",
    "FileSystem",
    "GuaranteeOption",
    "Offset",
    "OptionAlias",
    "PlainFilter",
    "ReadOutput",
    "RetriesExhausted",
    "Spool",
    "StreamOptions",
    "WriteKey",
    "admit_offsets",
    "check_charset",
    "check_count",
    "check_function_option",
    "check_name",
    "columns_to_batch",
    "connection_failure",
    "describe",
    "explain_connection_failure",
    "filter_operands",
    "integer_positions",
    "is_permanent_connection_failure",
    "mapped_rows",
    "parse_schema",
    "plain_filter",
    "raise_unchained",
    "redact",
    "redact_hosts",
    "redact_options",
    "redact_url",
    "retry_call",
    "rows_to_batch",
    "run_spools",
    "secrets_of",
    "share_budget",
    "short_repr",
    "spark_rows",
    "split_credentials",
    "spread",
    "to_arrow_schema",
    "url_secrets",
]
