"""``sources.jdbc(...)`` and ``sinks.jdbc(...)``: the registered factories.

Each is its connector's class, whose annotated parameters are also the options of
``spark.read.format("jetconnect.jdbc")``: jetconnect converts Spark's string options by these
annotations, so an option is declared once.
"""

from __future__ import annotations

from jetconnect_jdbc.sink import JdbcSink
from jetconnect_jdbc.source import JdbcSource

jdbc_source = JdbcSource
jdbc_sink = JdbcSink

__all__ = ["jdbc_sink", "jdbc_source"]
