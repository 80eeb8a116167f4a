"""How a partition's rows reach the table: COPY on PostgreSQL, batched statements elsewhere.

Every writer works inside the caller's transaction and can also write a single row, which is how
the sink finds the row at fault when a whole block is refused. Table and column names are quoted
by SQLAlchemy's dialect, never pasted into SQL text.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import sqlalchemy as sa

from jetconnect.api import spark_rows
from jetconnect.errors import OptionError, SinkError
from jetconnect_jdbc.pg_copy import INLINE_DIALECT
from jetconnect_jdbc.sqlite_values import sqlite_rows

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql, sqlite

MODES = ("insert", "upsert", "ignore")

#: What a StatementWriter runs: an INSERT (plain, or a dialect's upsert) or the user's SQL text.
Statement = sa.Insert | sa.TextClause


class Writer(Protocol):
    """Writes Arrow batches inside an open transaction."""

    def write(self, conn: sa.Connection, batches: Iterable[pa.RecordBatch]) -> int:
        """Write every row; return how many."""

    def write_row(self, conn: sa.Connection, row: dict[str, Any]) -> None:
        """Write one row the same way (used to find which row the database refuses)."""

    def statement(self, conn: sa.Connection) -> str:
        """The SQL of this writer, without values, for error messages."""


class StatementWriter:
    """An INSERT, an upsert or the user's statement, executed for blocks of rows (executemany)."""

    def __init__(
        self,
        statement: Statement,
        block_rows: int,
        to_rows: Callable[[pa.RecordBatch, int], list[dict]] | None = None,
        binds: bool = False,
    ) -> None:
        self._statement = statement
        self._block_rows = block_rows
        #: ``to_rows`` is the user's bind function: a single row is bound the same way
        self._binds = binds
        # (block, index of its first row in the partition) -> parameter rows
        self._to_rows = to_rows or (lambda block, _first: block.to_pylist())

    def write(self, conn: sa.Connection, batches: Iterable[pa.RecordBatch]) -> int:
        count = 0
        for batch in batches:
            for offset in range(0, batch.num_rows, self._block_rows):
                rows = self._to_rows(batch.slice(offset, self._block_rows), count)
                if rows:
                    conn.execute(self._statement, rows)
                    count += len(rows)
        return count

    def write_row(self, conn: sa.Connection, row: dict[str, Any]) -> None:
        conn.execute(self._statement, self._to_rows(pa.RecordBatch.from_pylist([row]), 0) if self._binds else [row])

    def statement(self, conn: sa.Connection) -> str:
        return str(self._statement.compile(dialect=conn.dialect))


class CopyWriter:
    """PostgreSQL ``COPY ... FROM STDIN (FORMAT csv)`` fed with CSV that Arrow writes in C++.

    About nine times faster than executemany here. Arrow's CSV is PostgreSQL's: NULL is an empty
    field, an empty string is ``""``; binary columns are sent as bytea hex (``\\x...``).
    """

    def __init__(self, table: sa.Table, block_rows: int) -> None:
        self._table = table
        self._block_rows = block_rows
        self._insert = StatementWriter(table.insert(), block_rows)

    def statement(self, conn: sa.Connection) -> str:
        # not the connection's dialect: psycopg's doubles a '%' in a quoted name for its
        # placeholders, which COPY's text never goes through
        quote = INLINE_DIALECT.identifier_preparer
        columns = ", ".join(quote.quote(c.name) for c in self._table.columns)
        return f"COPY {quote.format_table(self._table)} ({columns}) FROM STDIN (FORMAT csv)"

    def write(self, conn: sa.Connection, batches: Iterable[pa.RecordBatch]) -> int:
        import psycopg

        statement = self.statement(conn)
        driver = conn.connection.driver_connection
        # conn.connection is checked out and valid (SQLAlchemy reconnects an invalidated one)
        assert driver is not None, "a checked-out connection has its driver connection"
        cursor = driver.cursor()
        count = 0
        options = pacsv.WriteOptions(include_header=False)
        try:
            with cursor.copy(statement) as copy:
                # One COPY for the partition, fed in chunks of at most block_rows rows: the CSV of
                # one chunk is all the memory it takes beyond the batch being written.
                for batch in batches:
                    for offset in range(0, batch.num_rows, self._block_rows):
                        chunk = batch.slice(offset, self._block_rows)
                        buffer = io.BytesIO()
                        pacsv.write_csv(_csv_ready(chunk), buffer, options)
                        copy.write(buffer.getbuffer())
                        count += chunk.num_rows
        except psycopg.Error as exc:
            # The driver's cursor bypasses SQLAlchemy: give its error SQLAlchemy's shape
            # (IntegrityError, OperationalError, ...) like every other writer's.
            raise sa.exc.DBAPIError.instance(statement, None, exc, psycopg.Error, dialect=conn.dialect) from exc
        return count

    def write_row(self, conn: sa.Connection, row: dict[str, Any]) -> None:
        self._insert.write_row(conn, row)


def _csv_ready(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with the columns Arrow's CSV writer handles badly rewritten, in C++ where possible.

    Time-zone aware timestamps become naive UTC text plus ``+00``: Arrow formats them through the
    time-zone database, 18 times slower than a naive timestamp, and the offset keeps the value
    exact whatever the session's TimeZone. Binary columns become bytea hex (``\\x...``).
    """
    if not any(_needs_rewrite(f.type) for f in batch.schema):
        return batch
    arrays = []
    for field, column in zip(batch.schema, batch.columns):
        if pa.types.is_timestamp(field.type) and field.type.tz is not None:
            naive = column.cast(pa.timestamp(field.type.unit)).cast(pa.string())
            column = pc.binary_join_element_wise(naive, "+00", "")
        elif pa.types.is_binary(field.type) or pa.types.is_large_binary(field.type):
            column = pa.array([None if v is None else "\\x" + v.hex() for v in column.to_pylist()], pa.string())
        arrays.append(column)
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def _needs_rewrite(arrow_type: pa.DataType) -> bool:
    return (
        (pa.types.is_timestamp(arrow_type) and arrow_type.tz is not None)
        or pa.types.is_binary(arrow_type)
        or pa.types.is_large_binary(arrow_type)
    )


def make_writer(
    dialect: str,
    mode: str,
    table: sa.Table | None,
    statement: str | None,
    key_columns: Sequence[str],
    block_rows: int,
    bind: Callable[[pa.RecordBatch, int], list[dict]] | None = None,
) -> Writer:
    """The fastest correct writer for this dialect and mode; ``bind`` makes a statement's parameters."""
    if statement is not None:
        return StatementWriter(sa.text(statement), block_rows, bind, binds=bind is not None)
    assert table is not None
    if mode == "insert" and dialect == "postgresql":
        return CopyWriter(table, block_rows)
    # a table the sink reads back as it wrote: SQLite's rows are checked for what it cannot keep
    to_rows = sqlite_rows if dialect == "sqlite" else None
    statement_ = table.insert() if mode == "insert" else _on_conflict(dialect, mode, table, key_columns)
    return StatementWriter(statement_, block_rows, to_rows)


def bind_rows(
    bind_fn: Callable[[Any], Any], owner: str, parameters: Sequence[str] = ()
) -> Callable[[pa.RecordBatch, int], list[dict]]:
    """Jet's ``bindFn``: each row, as a pyspark ``Row``, made into the parameters of the statement
    (a mapping of its ``:name`` parameters, all of ``parameters`` present); anything else, and an
    exception of ``bind_fn``, is a :class:`SinkError` naming the row by its number in the partition.

    Only the row's number and the missing parameters are named: the database driver's own error
    for a missing parameter quotes every row of the block, user data and all.
    """

    def bind(block: pa.RecordBatch, first: int) -> list[dict]:
        params = []
        for i, row in enumerate(spark_rows(block)):
            try:
                bound = bind_fn(row)
            except Exception as exc:  # the user's function may raise anything: say which row it was
                raise SinkError(
                    f"{owner}: bind_fn raised {type(exc).__name__} for row {first + i} of this partition: {exc}"
                ) from exc
            if not isinstance(bound, Mapping):
                raise SinkError(
                    f"{owner}: bind_fn returned {type(bound).__name__} for row {first + i} of this "
                    f"partition; return a mapping of the statement's :name parameters"
                )
            missing = [name for name in parameters if name not in bound]
            if missing:
                raise SinkError(
                    f"{owner}: bind_fn returned no {', '.join(':' + m for m in missing)} for row {first + i} of "
                    f"this partition; the statement needs {', '.join(':' + p for p in parameters)}"
                )
            params.append(dict(bound))
        return params

    return bind


def statement_parameters(statement: str) -> list[str]:
    """The ``:name`` parameters of a statement, as SQLAlchemy's ``text()`` finds them."""
    return list(sa.text(statement).compile().params)


def _on_conflict(dialect: str, mode: str, table: sa.Table, keys: Sequence[str]) -> sa.Insert:
    statement: postgresql.Insert | sqlite.Insert
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        statement = postgresql_insert(table)
    elif dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        statement = sqlite_insert(table)
    else:
        raise OptionError(f"jdbc sink: option 'mode' {mode} is supported for postgresql and sqlite, not {dialect}")
    others = [c.name for c in table.columns if c.name not in keys]
    if mode == "ignore" or not others:
        return statement.on_conflict_do_nothing(index_elements=list(keys))
    return statement.on_conflict_do_update(
        index_elements=list(keys), set_={name: statement.excluded[name] for name in others}
    )
