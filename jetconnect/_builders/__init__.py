"""Jet's source and sink builders, in Python's snake_case.

A source is a ``create_fn(ctx) -> state`` and a ``fill_buffer_fn(state, buf)`` that adds what is
available now; a sink is a ``create_fn(ctx) -> state`` and a ``receive_fn(state, row)``. The
built objects are ordinary :mod:`jetconnect._connector` sources and sinks, so they run on Spark::

    numbers = (
        SourceBuilder.batch("numbers", lambda ctx: iter(range(ctx.global_processor_index, 100, ctx.total_parallelism)))
        .fill_buffer_fn(fill_from_iterator)
        .schema("n bigint")
        .distributed(2)
        .build()
    )
    numbers.read(spark).count()  # 100

Processors run in executor tasks, batch and stream alike: processor i of n in the read task of
Spark partition i. How a stream survives a restart is in :mod:`jetconnect._builders._stream_source`.

The modules: ``_contexts`` (what user functions get), ``_source_builder`` (the builder and its
spec), ``_processor`` (a processor and the live ones a worker keeps), ``_batch_source``,
``_stream_source`` (the driver's planning), ``_position`` (a stream's offset), ``_round_reader``
(one round in an executor task) with its two replay strategies ``_snapshot_rounds`` and
``_log_rounds``, ``_receiver`` and ``_lease`` (the processors of streams that cannot replay) and
``_sink``. The files of a run live where :mod:`jetconnect._run_directory` says.
"""

from jetconnect._builders._batch_source import BuilderBatchSource
from jetconnect._builders._contexts import ProcessorContext, SinkContext, SourceBuffer, fill_from_iterator
from jetconnect._builders._sink import BuilderSink, SinkBuilder
from jetconnect._builders._source_builder import SourceBuilder
from jetconnect._builders._spec import MEMBERS
from jetconnect._builders._stream_source import (
    DEFAULT_IDLE_POLL_MS,
    DEFAULT_KEEP_ALIVE_MS,
    SPOOL_LINGER_MS_LIMIT,
    WAL_LOCATION,
    BuilderStreamSource,
    StreamOptions,
    stop_receivers,
)
from jetconnect._round_log import spool_of

__all__ = [
    "MEMBERS",
    "DEFAULT_IDLE_POLL_MS",
    "DEFAULT_KEEP_ALIVE_MS",
    "SPOOL_LINGER_MS_LIMIT",
    "WAL_LOCATION",
    "BuilderBatchSource",
    "BuilderSink",
    "BuilderStreamSource",
    "ProcessorContext",
    "SinkBuilder",
    "SinkContext",
    "SourceBuffer",
    "SourceBuilder",
    "StreamOptions",
    "fill_from_iterator",
    "spool_of",
    "stop_receivers",
]
