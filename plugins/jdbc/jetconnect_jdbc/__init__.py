"""jetconnect's JDBC connector: tables and queries in and out of Spark through SQLAlchemy.

``sources.jdbc(url, table=...)`` reads in parallel splits or follows an increasing column as a
stream; ``sinks.jdbc(url, table=...)`` writes exactly once per micro-batch (COPY on PostgreSQL).
"""

from jetconnect_jdbc.sink import JdbcSink
from jetconnect_jdbc.source import JdbcSource

__all__ = ["JdbcSink", "JdbcSource"]
