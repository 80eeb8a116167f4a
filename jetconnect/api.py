"""The plugin API: every core name a connector plugin may use, in one place.

A plugin under ``plugins/`` or ``contrib/`` imports from here, from ``jetconnect`` (the builders,
``hookimpl``, ``sources``/``sinks``), from :mod:`jetconnect.errors` and, in its tests, from
:mod:`jetconnect.testing` and :mod:`jetconnect.fuzzing`. Every other core module is private (its
name starts with ``_``) and may change without notice; ``tests/core/test_plugin_api.py`` fails if
a plugin reaches past this module. See docs/ARCHITECTURE.md for how the pieces fit together.
"""

from __future__ import annotations

# The contracts: what a connector implements and what Spark hands it.
from jetconnect.connector import (
    BatchSource,
    CommitContext,
    Guarantee,
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
from jetconnect.errors import JetconnectError, OffsetError, OptionError, SchemaError, SinkError, SourceError
from jetconnect.hookspecs import hookimpl

# Builders and the write-ahead-logged stream they share with pull-based plugins (JMS, sockets).
from jetconnect.builders import (
    BACKLOG_PAST_COMMITS,
    IDLE_POLL_MS,
    KEEP_ALIVE_MS,
    MAX_BACKLOG,
    MAX_PULL_MS,
    SPOOL_KEEP_COMMITTED_ROWS,
    WAL_LOCATION,
    BuilderSink,
    BuilderStreamSource,
    ProcessorContext,
    SinkBuilder,
    SinkContext,
    SourceBuffer,
    SourceBuilder,
    spool_of,
)
from jetconnect.rounds import RoundLog
from jetconnect.spool import Spool

# Arrow and Spark schemas, rows and admission control.
from jetconnect.admission import admit_offsets, share_budget, spread
from jetconnect.arrow import parse_schema, rows_to_batch, spark_rows, to_arrow_schema
from jetconnect.offsets import integer_positions

# Where state lives, retries, and keeping secrets out of what a user sees.
from jetconnect.locations import resolve_location
from jetconnect.redaction import (
    describe,
    raise_unchained,
    redact,
    redact_options,
    redact_url,
    secrets_of,
    split_credentials,
    url_secrets,
)
from jetconnect.retry import Backoff, RetriesExhausted, retry_call

__all__ = [
    "BACKLOG_PAST_COMMITS",
    "IDLE_POLL_MS",
    "KEEP_ALIVE_MS",
    "MAX_BACKLOG",
    "MAX_PULL_MS",
    "SPOOL_KEEP_COMMITTED_ROWS",
    "WAL_LOCATION",
    "Backoff",
    "BatchSource",
    "BuilderSink",
    "BuilderStreamSource",
    "CommitContext",
    "Guarantee",
    "JetconnectError",
    "Json",
    "Offset",
    "OffsetError",
    "OptionError",
    "ProcessorContext",
    "Range",
    "ReadOutput",
    "RetriesExhausted",
    "RoundLog",
    "SchemaError",
    "Sink",
    "SinkBuilder",
    "SinkContext",
    "SinkError",
    "Source",
    "SourceBuffer",
    "SourceBuilder",
    "SourceError",
    "Spool",
    "StreamSource",
    "WriteContext",
    "WriteKey",
    "admit_offsets",
    "describe",
    "hookimpl",
    "integer_positions",
    "parse_schema",
    "raise_unchained",
    "redact",
    "redact_options",
    "redact_url",
    "resolve_location",
    "retry_call",
    "rows_to_batch",
    "secrets_of",
    "share_budget",
    "spark_rows",
    "split_credentials",
    "spool_of",
    "spread",
    "to_arrow_schema",
    "url_secrets",
]
