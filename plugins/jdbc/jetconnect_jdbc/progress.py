"""The progress table: one row per written (query, micro-batch, partition), in the data's transaction.

A micro-batch Spark re-delivers after a crash finds its row and is skipped, so a partition's rows
land exactly once. The row is the core's :class:`~jetconnect.api.WriteKey` in three columns
(``query_id``, ``batch_id``, ``partition_id``). Rows of old batches are trimmed when a later batch
commits.
"""

from __future__ import annotations

import sqlalchemy as sa

from jetconnect.api import WriteKey

#: How many micro-batches of history to keep: Spark only ever re-delivers the last one.
KEEP_BATCHES = 100


def progress_table(name: str) -> sa.Table:
    return sa.Table(
        name,
        sa.MetaData(),
        sa.Column("query_id", sa.String(64), primary_key=True),
        sa.Column("batch_id", sa.BigInteger, primary_key=True),
        sa.Column("partition_id", sa.Integer, primary_key=True),
        sa.Column("target", sa.Text, nullable=False),
        sa.Column("row_count", sa.BigInteger, nullable=False),
        sa.Column("written_at", sa.DateTime(timezone=True), server_default=sa.func.current_timestamp()),
    )


def already_written(conn: sa.Connection, table: sa.Table, key: WriteKey) -> bool:
    found = conn.execute(
        sa.select(sa.literal(1)).where(
            table.c.query_id == key.query_id,
            table.c.batch_id == key.batch_id,
            table.c.partition_id == key.partition_id,
        )
    ).first()
    return found is not None


def record(conn: sa.Connection, table: sa.Table, key: WriteKey, target: str, row_count: int) -> None:
    """Add the partition's row; a concurrent attempt of the same partition fails here on the key."""
    conn.execute(
        table.insert().values(
            query_id=key.query_id,
            batch_id=key.batch_id,
            partition_id=key.partition_id,
            target=target,
            row_count=row_count,
        )
    )


def trim(conn: sa.Connection, table: sa.Table, query_id: str, committed_batch: int) -> None:
    conn.execute(table.delete().where(table.c.query_id == query_id, table.c.batch_id < committed_batch - KEEP_BATCHES))
