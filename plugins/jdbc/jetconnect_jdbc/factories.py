"""``sources.jdbc(...)`` and ``sinks.jdbc(...)``: the registered factories.

Their annotated parameters are also the options of ``spark.read.format("jetconnect.jdbc")``:
jetconnect converts Spark's string options by these annotations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jetconnect_jdbc.sink import JdbcSink
from jetconnect_jdbc.source import JdbcSource, PartitionsFn


def jdbc_source(
    url: str,
    query: str | None = None,
    table: str | None = None,
    schema: Any = None,
    partition_column: str | None = None,
    lower_bound: Any = None,
    upper_bound: Any = None,
    num_partitions: int = 1,
    partitions_fn: PartitionsFn | None = None,
    fetch_size: int = 10_000,
    offset_column: str | None = None,
    start_offset: Any = None,
    use_copy: bool = True,
    row_fn: Callable[[Any], Any] | None = None,
    row_schema: str | None = None,
    connection_fn: Callable[[], Any] | None = None,
) -> JdbcSource:
    """A table or query read through SQLAlchemy, in parallel splits or as an incremental stream."""
    return JdbcSource(
        url,
        query=query,
        table=table,
        schema=schema,
        partition_column=partition_column,
        lower_bound=lower_bound,
        upper_bound=upper_bound,
        num_partitions=num_partitions,
        partitions_fn=partitions_fn,
        fetch_size=fetch_size,
        offset_column=offset_column,
        start_offset=start_offset,
        use_copy=use_copy,
        row_fn=row_fn,
        row_schema=row_schema,
        connection_fn=connection_fn,
    )


def jdbc_sink(
    url: str,
    table: str | None = None,
    statement: str | None = None,
    mode: str = "insert",
    key_columns: list[str] | None = None,
    batch_size: int = 10_000,
    create_table: bool = True,
    progress_table: str = "jetconnect_progress",
    retry_deadline: float = 60.0,
    bind_fn: Callable[[Any], Any] | None = None,
    connection_fn: Callable[[], Any] | None = None,
) -> JdbcSink:
    """Rows written through SQLAlchemy (COPY on PostgreSQL), exactly once per micro-batch."""
    return JdbcSink(
        url,
        table=table,
        statement=statement,
        mode=mode,
        key_columns=key_columns,
        batch_size=batch_size,
        create_table=create_table,
        progress_table=progress_table,
        retry_deadline=retry_deadline,
        bind_fn=bind_fn,
        connection_fn=connection_fn,
    )
