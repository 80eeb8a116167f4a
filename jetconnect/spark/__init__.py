"""The Spark adapter: any jetconnect source or sink as a Spark Python data source.

This package is the only code that touches ``pyspark.sql.datasource``; if a connector needs
something it cannot express, the adapter grows.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from jetconnect._builders import MEMBERS
from jetconnect._connector import Sink, Source, plug_spark_adapter
from jetconnect._locations import CHECKPOINT_CONF, CHECKPOINT_ROOT
from jetconnect._options import Options, _to_option_string
from jetconnect.errors import ConnectSetupError, WorkerSetupError
from jetconnect.spark._connect import check_plugins_on_server, check_server_imports, is_connect
from jetconnect.spark._datasource import MAX_RECORDS_PER_BATCH, Bound, FromRegistry, data_source_class
from jetconnect.spark._imports import check_worker_imports
from jetconnect.spark._session import filter_pushdown, members
from jetconnect.spark._shipping import ship_user_modules

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

FORMAT_PREFIX = "jetconnect."
#: Spark's own default ``spark.redaction.regex`` (PySpark 4.3's spark-core), which
#: :data:`RECOMMENDED_SPARK_CONF` extends.
SPARK_REDACTION_REGEX = "(?i)secret|password|token|access[.]?key|credential"

#: Spark settings that make every Python data source faster. Both are read when the session
#: starts, so pass them to the builder (``SparkSession.builder.config(map=RECOMMENDED_SPARK_CONF)``);
#: jetconnect's own sessions (:func:`jetconnect.testing.spark_builder`) use them.
#:
#: - ``spark.python.worker.reuse``: a Python worker serves many tasks, so imports, connection
#:   pools and the frozen heap (:mod:`jetconnect.spark._worker`) carry over.
#: - ``spark.python.unix.domain.socket.enabled``: over TCP the JVM sends a task's input as a small
#:   segment that waits for the worker's delayed ACK (Nagle's algorithm): ~40 ms per task before
#:   a worker can start reading, which a Unix socket does not pay.
#: - ``spark.redaction.regex``: Spark's default (:data:`SPARK_REDACTION_REGEX`) masks option and
#:   setting values whose name or text holds secret, password, token, access key or credential,
#:   and prints an inline private key (``kafka.ssl.key.pem``) of a ``CREATE TEMPORARY VIEW ...
#:   USING ... OPTIONS`` in ``EXPLAIN`` and the event log, key and all; ``pem`` and
#:   ``jaas`` (a JAAS line need not say ``password``) are added.
RECOMMENDED_SPARK_CONF: Mapping[str, str] = {
    "spark.python.worker.reuse": "true",
    "spark.python.unix.domain.socket.enabled": "true",
    "spark.redaction.regex": SPARK_REDACTION_REGEX + "|pem|jaas",
}


def format_name(name: str) -> str:
    """The Spark format a registered connector answers to: ``jetconnect.<name>``."""
    return FORMAT_PREFIX + name


def register(spark: SparkSession) -> list[str]:
    """Register every installed plugin's sources and sinks with ``spark``; return the formats.

    Under Spark Connect the server's Python must have jetconnect (else ConnectSetupError), and each
    plugin it lacks gets a ConnectPluginWarning: its formats are registered but fail there. In a
    classic session the Python workers must import jetconnect and pyarrow (else WorkerSetupError).
    """
    from jetconnect._registry import get_registry

    registry = get_registry()
    if is_connect(spark):
        specs = [*registry.sources.values(), *registry.sinks.values()]
        check_plugins_on_server(spark, {s.plugin: s.factory.__module__ for s in specs})
    else:
        check_worker_imports(spark, "jetconnect.register(spark)")
    pushdown = filter_pushdown(spark)
    formats = []
    for name in sorted(set(registry.sources) | set(registry.sinks)):
        cls = data_source_class(
            format_name(name),
            source_factory=FromRegistry("source", name) if name in registry.sources else None,
            sink_factory=FromRegistry("sink", name) if name in registry.sinks else None,
            filter_pushdown=pushdown,
        )
        spark.dataSource.register(cls)
        formats.append(cls.format_name)
    return formats


def read(source: Source, spark: SparkSession, **options: Any) -> DataFrame:
    """A batch DataFrame of ``source``."""
    name = _register_object(spark, source, "source")
    return spark.read.format(name).options(**_spark_options(spark, options)).load()


def read_stream(source: Source, spark: SparkSession, **options: Any) -> DataFrame:
    """A streaming DataFrame of ``source``, with its watermark when it declares one."""
    name = _register_object(spark, source, "source")
    spark_options = _spark_options(spark, options)
    root = spark.conf.get(CHECKPOINT_CONF, None)  # where a builder stream's wal_location defaults to
    if root and CHECKPOINT_ROOT not in spark_options:
        spark_options[CHECKPOINT_ROOT] = root
    df = spark.readStream.format(name).options(**spark_options).load()
    watermark = getattr(source, "watermark", None)
    if watermark:
        df = df.withWatermark(*watermark)
    return df


def write(sink: Sink, df: DataFrame, mode: str = "append", **options: Any) -> None:
    """Write the batch DataFrame ``df`` to ``sink``."""
    name = _register_object(df.sparkSession, sink, "sink")
    spark_options = _spark_options(df.sparkSession, options)
    df = _preferred_partitions(sink, df, spark_options)
    df.write.format(name).mode(mode).options(**spark_options).save()


def write_stream(
    sink: Sink,
    df: DataFrame,
    checkpoint_location: str,
    trigger: Mapping[str, Any] | None = None,
    query_name: str | None = None,
    output_mode: str = "append",
    **options: Any,
) -> StreamingQuery:
    """Start a streaming query writing ``df`` to ``sink``, committed per micro-batch.

    ``trigger`` takes the keyword form of ``DataStreamWriter.trigger``, e.g.
    ``{"processingTime": "1 second"}`` or ``{"availableNow": True}``.
    """
    name = _register_object(df.sparkSession, sink, "sink")
    spark_options = _spark_options(df.sparkSession, options)
    writer = (
        _preferred_partitions(sink, df, spark_options)
        .writeStream.format(name)
        .outputMode(output_mode)
        .option("checkpointLocation", checkpoint_location)
        .options(**spark_options)
    )
    if trigger:
        writer = writer.trigger(**trigger)
    if query_name:
        writer = writer.queryName(query_name)
    return writer.start()


def _register_object(spark: SparkSession, connector: Source | Sink, kind: str) -> str:
    fmt = f"{FORMAT_PREFIX}{connector.name}.{uuid.uuid4().hex[:12]}"
    factory = Bound(connector)
    cls = data_source_class(
        fmt,
        source_factory=factory if kind == "source" else None,
        sink_factory=factory if kind == "sink" else None,
        filter_pushdown=filter_pushdown(spark),
    )
    ship_user_modules(cls)  # executors (and a Connect server) may not be able to import them
    if is_connect(spark):
        check_server_imports(spark, cls, f"{kind} '{connector.name}'")
    else:
        check_worker_imports(spark, f"{kind} '{connector.name}'", cls)
    spark.dataSource.register(cls)
    return fmt


def _preferred_partitions(sink: Sink, df: DataFrame, spark_options: Mapping[str, str]) -> DataFrame:
    """``df`` in the sink's preferred number of partitions per member (Jet's preferred local parallelism)."""
    parallelism = getattr(sink, "preferred_parallelism", None)
    if not parallelism:
        return df
    member_count = Options(spark_options, owner=f"sink '{sink.name}'").get_int(MEMBERS, minimum=1)
    return df.repartition(parallelism * member_count)


def _spark_options(spark: SparkSession, options: Mapping[str, Any]) -> dict[str, str]:
    """The options as Spark's strings, with the number of members (the caller's, else the session's)."""
    result = {k: _to_option_string(v) for k, v in options.items() if v is not None}
    if MEMBERS not in result:
        result[MEMBERS] = str(members(spark))
    return result


__all__ = [
    "FORMAT_PREFIX",
    "MAX_RECORDS_PER_BATCH",
    "RECOMMENDED_SPARK_CONF",
    "SPARK_REDACTION_REGEX",
    "ConnectSetupError",
    "WorkerSetupError",
    "format_name",
    "members",
    "read",
    "read_stream",
    "register",
    "write",
    "write_stream",
]

plug_spark_adapter(sys.modules[__name__])  # source.read(spark) and sink.write(df) come here
