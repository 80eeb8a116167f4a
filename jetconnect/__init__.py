"""jetconnect: Hazelcast Jet's connector model for Apache Spark.

``from jetconnect import sources, sinks`` gives every installed connector; ``SourceBuilder`` and
``SinkBuilder`` make new ones in a few lines; ``register(spark)`` makes them all usable by name in
``spark.read.format(...)`` and friends.
"""

from __future__ import annotations

__version__ = "0.1.0"

import jetconnect._builtins as _builtins
from jetconnect._builders import ProcessorContext, SinkBuilder, SinkContext, SourceBuffer, SourceBuilder
from jetconnect._catalog import sinks, sources
from jetconnect._connector import (
    BatchSource,
    CommitContext,
    Guarantee,
    Range,
    Sink,
    Source,
    StreamSource,
    WriteContext,
)
from jetconnect._hookspecs import hookimpl
from jetconnect._options import Options
from jetconnect._registry import add_builtin_plugin
from jetconnect.errors import (
    ConnectSetupError,
    JetconnectError,
    OffsetError,
    OptionError,
    PluginError,
    PluginLoadWarning,
    SchemaError,
    SinkError,
    SourceError,
    WorkerSetupError,
)
from jetconnect.spark import register

add_builtin_plugin("jetconnect", __version__, _builtins)

__all__ = [
    "BatchSource",
    "CommitContext",
    "ConnectSetupError",
    "Guarantee",
    "JetconnectError",
    "OffsetError",
    "OptionError",
    "Options",
    "PluginError",
    "PluginLoadWarning",
    "ProcessorContext",
    "Range",
    "SchemaError",
    "Sink",
    "SinkBuilder",
    "SinkContext",
    "SinkError",
    "Source",
    "SourceBuffer",
    "SourceBuilder",
    "SourceError",
    "StreamSource",
    "WorkerSetupError",
    "WriteContext",
    "__version__",
    "hookimpl",
    "register",
    "sinks",
    "sources",
]
