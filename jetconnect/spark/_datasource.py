"""Spark ``DataSource`` classes made from jetconnect sources and sinks.

One class per format name. Its sources and sinks come from a *factory* that takes the Spark
options: either a connector object captured by value (``source.read(spark)``, functions
allowed) or a lookup in the plugin registry by name (``spark.read.format("jetconnect.x")``),
which needs the plugin installed wherever Spark runs Python.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from pyspark.sql.datasource import DataSource
from pyspark.sql.types import StructType

from jetconnect._connector import BatchSource, Sink, Source, StreamSource
from jetconnect._options import Options
from jetconnect.errors import OptionError, PluginError, SinkError, SourceError
from jetconnect.spark._guard import guarded, secrets_kept_out
from jetconnect.spark._readers import BatchReader, FailedStreamReader, FilteringBatchReader, StreamReader
from jetconnect.spark._writers import make_writer

#: Options the adapter itself reads; they are not passed to a plugin's factory.
MAX_RECORDS_PER_BATCH = "max_records_per_batch"
_ADAPTER_OPTIONS = {MAX_RECORDS_PER_BATCH, "checkpointlocation"}
_ADAPTER_PREFIX = "jetconnect."
#: Options Spark itself may hand a data source (``load(path)``, ``start(path)``, ``queryName``).
_SPARK_OPTIONS = {"path", "queryname"}

Factory = Callable[[Options], Any]


@dataclass(frozen=True)
class Bound:
    """A factory that configures one connector object with the Spark options (pickled by value)."""

    connector: Source | Sink

    def __call__(self, options: Options) -> Any:
        if not options:
            return self.connector
        takes_none = type(self.connector).with_options in (Source.with_options, Sink.with_options)
        ignored = sorted(k for k in options if not _is_adapters(k)) if takes_none else []
        if ignored:
            # without this, the one way in that would take an option and do nothing with it: the
            # factory checks its options, so a value given here instead would be neither checked nor used
            kind = "sink" if isinstance(self.connector, Sink) else "source"
            raise OptionError(
                f"{kind} '{self.connector.name}': option(s) {', '.join(map(repr, ignored))} given to "
                f"{'write' if kind == 'sink' else 'read'}/..._stream(...) would be ignored: this {kind} takes its "
                f"options where it is built ({kind}s.{self.connector.name}(...)); the options it takes here are "
                f"{', '.join(sorted(_ADAPTER_OPTIONS))}"
            )
        return self.connector.with_options(options)


def _is_adapters(key: str) -> bool:
    """Whether an option is the adapter's (or Spark's own) rather than a connector's."""
    lowered = key.lower()
    return lowered in _ADAPTER_OPTIONS or lowered in _SPARK_OPTIONS or lowered.startswith(_ADAPTER_PREFIX)


@dataclass(frozen=True)
class FromRegistry:
    """A factory that builds the connector named ``name`` from the installed plugins."""

    kind: str
    name: str

    def __call__(self, options: Options) -> Any:
        from jetconnect._registry import get_registry

        registry = get_registry()
        table = registry.sources if self.kind == "source" else registry.sinks
        if self.name not in table:
            raise PluginError(
                f"{self.kind} '{self.name}' is not installed in this Python ({sys.executable}): "
                f"install its jetconnect plugin wherever Spark runs Python (driver, executors, Connect server)"
            )
        plugin_options = Options(
            {
                k: v
                for k, v in options.items()
                if k.lower() not in _ADAPTER_OPTIONS and not k.lower().startswith(_ADAPTER_PREFIX)
            },
            owner=f"{self.kind} '{self.name}'",
        )
        return table[self.name].create_from_options(plugin_options)


class JetconnectDataSource(DataSource):
    """Base of the generated data sources; subclasses set the class attributes below."""

    format_name: ClassVar[str] = "jetconnect"
    source_factory: ClassVar[Factory | None] = None
    sink_factory: ClassVar[Factory | None] = None
    filter_pushdown: ClassVar[bool] = False

    @classmethod
    def name(cls) -> str:
        return cls.format_name

    def secret_holders(self) -> tuple[Any, ...]:
        return (dict(self.options), type(self).source_factory, type(self).sink_factory)

    def _opts(self, kind: str) -> Options:
        return Options(dict(self.options), owner=f"{kind} '{self.format_name}'")

    def _source(self) -> Source:
        cached = self.__dict__.get("_cached_source")
        if cached is None:
            factory = type(self).source_factory  # through the class: a plain function, not a method
            if factory is None:
                raise SourceError(f"'{self.format_name}' is a sink only: it cannot be read")
            cached = factory(self._opts("source"))
            self.__dict__["_cached_source"] = cached
        return cached

    def _sink(self) -> Sink:
        factory = type(self).sink_factory  # through the class: a plain function, not a method
        if factory is None:
            raise SinkError(f"'{self.format_name}' is a source only: it cannot be written to")
        return factory(self._opts("sink"))

    @guarded
    def schema(self) -> StructType:
        return self._source().schema()

    @guarded
    def reader(self, schema: StructType) -> BatchReader:
        source = self._source()
        if not isinstance(source, BatchSource):
            raise SourceError(
                f"source '{source.name}' is a stream: read it with spark.readStream or source.read_stream(spark)"
            )
        pushes = type(source).push_filters is not BatchSource.push_filters
        cls = FilteringBatchReader if (pushes and self.filter_pushdown) else BatchReader
        return cls(source, schema)

    def streamReader(self, schema: StructType) -> StreamReader:
        """The stream reader; one that fails with the error when it cannot be made.

        It must not raise: PySpark's stream runner (4.x) calls ``reader.stop()`` in a ``finally``
        around this call, so an error here leaves ``reader`` unbound and PySpark's own
        ``UnboundLocalError`` follows ours. The failed reader raises ours from its first call,
        and its ``stop()`` does nothing.
        """
        try:
            with secrets_kept_out(*self.secret_holders()):
                source = self._source()
                if not isinstance(source, StreamSource):
                    raise SourceError(
                        f"source '{source.name}' is a batch source: read it with spark.read or source.read(spark)"
                    )
                max_records = self._opts("source").get_int(MAX_RECORDS_PER_BATCH, None, minimum=1)
        except Exception as exc:
            return FailedStreamReader(exc)
        return StreamReader(source, schema, max_records)

    @guarded
    def writer(self, schema: StructType, overwrite: bool) -> Any:
        return make_writer(self._sink(), schema, overwrite, self._opts("sink"), streaming=False)

    @guarded
    def streamWriter(self, schema: StructType, overwrite: bool) -> Any:
        return make_writer(self._sink(), schema, overwrite, self._opts("sink"), streaming=True)


def data_source_class(
    format_name: str,
    source_factory: Factory | None = None,
    sink_factory: Factory | None = None,
    filter_pushdown: bool = False,
) -> type[JetconnectDataSource]:
    """A new ``DataSource`` subclass answering to ``format_name``."""
    attrs: dict[str, Any] = {
        "format_name": format_name,
        "source_factory": source_factory,
        "sink_factory": sink_factory,
        "filter_pushdown": filter_pushdown,
        "__module__": __name__,
    }
    class_name = "DataSource_" + "".join(c if c.isalnum() else "_" for c in format_name)
    return type(class_name, (JetconnectDataSource,), attrs)
