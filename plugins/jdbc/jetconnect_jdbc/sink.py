"""The JDBC sink: each Spark partition in one transaction, exactly once per streaming micro-batch.

A streaming partition's rows and its progress record (:mod:`jetconnect_jdbc.progress`) commit
together, so a micro-batch Spark re-delivers after a crash is recognised and skipped. A lost
connection or a restarting server is retried with backoff (the partition's rows are kept in a
local file for that, :mod:`jetconnect_jdbc.spool`, so memory holds one batch at a time); a refused
row fails the write with the table, the statement and that row's key, and the password of the
URL never appears in a message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import sqlalchemy as sa
from pyspark.sql import types as T

from jetconnect import CommitContext, Guarantee, Sink, WriteContext
from jetconnect.api import (
    PLAIN_NAME,
    PLAIN_NAME_IS,
    WriteKey,
    check_name,
    raise_unchained,
    redact,
    retry_call,
    url_secrets,
)
from jetconnect.errors import OptionError, SchemaError, SinkError
from jetconnect_jdbc import progress
from jetconnect_jdbc.engines import ConnectionFn, check_connection_fn, check_url, dialect_name, engine_for, safe_url
from jetconnect_jdbc.names import split_table_name
from jetconnect_jdbc.spool import Spool
from jetconnect_jdbc.sql_types import sql_type_for
from jetconnect_jdbc.sqlite_values import UnstorableValue
from jetconnect_jdbc.transient import cannot_connect, is_refusal, is_transient, retry_backoff
from jetconnect_jdbc.writers import MODES, Writer, bind_rows, make_writer, statement_parameters

#: (url, table, progress table) already checked or created by this process.
_ensured: set[tuple[str, str | None, str]] = set()


class TransientWriteError(SinkError):
    """A write failed for a reason that may go away (connection lost); it is retried."""


@dataclass(frozen=True)
class PartitionWritten:
    """The commit message of one partition: how many rows it wrote, or that it was a replay."""

    partition_id: int
    row_count: int
    skipped: bool


class JdbcSink(Sink):
    """Rows written through SQLAlchemy (COPY on PostgreSQL), exactly once per micro-batch.

    ``sinks.jdbc(...)``: its parameters are the connector's options, declared here once. It writes
    to a table (``mode`` insert, upsert or ignore) or through the user's ``statement``.
    """

    name = "jdbc"
    guarantee = Guarantee.EXACTLY_ONCE
    input_format = "arrow"

    def __init__(
        self,
        url: str,
        table: str | None = None,
        statement: str | None = None,
        mode: str = "insert",
        key_columns: Sequence[str] | str | None = None,
        batch_size: int = 10_000,
        create_table: bool = True,
        progress_table: str = "jetconnect_progress",
        retry_deadline: float = 60.0,
        bind_fn: Callable[[Any], Any] | None = None,
        connection_fn: ConnectionFn | None = None,
    ) -> None:
        owner = f"jdbc sink ({safe_url(url)})"
        check_connection_fn(connection_fn, owner)
        if bind_fn is not None and (statement is None or not callable(bind_fn)):
            raise OptionError(
                f"{owner}: option 'bind_fn' is a Python function of the row giving the parameters of "
                f"option 'statement' (pass both to sinks.jdbc(...) in Python)"
            )
        if (table is None) == (statement is None):
            raise OptionError(f"{owner}: give option 'table' or option 'statement', not both or neither")
        mode = mode.lower()
        if mode not in MODES:
            raise OptionError(f"{owner}: option 'mode' must be one of {', '.join(MODES)}, got {mode!r}")
        keys = [k.strip() for k in key_columns.split(",")] if isinstance(key_columns, str) else list(key_columns or [])
        if mode in ("upsert", "ignore") and not keys:
            raise OptionError(f"{owner}: option 'mode' {mode} needs option 'key_columns'")
        if batch_size < 1:
            raise OptionError(f"{owner}: option 'batch_size' must be at least 1, got {batch_size}")
        check_url(url, owner)
        for option, name in (("table", table), ("progress_table", progress_table)):
            if name is not None:
                check_name(name, option, owner, PLAIN_NAME, PLAIN_NAME_IS)
        self.url = url
        self.table = table
        self.statement = statement
        self.mode = mode
        self.key_columns = keys
        self.batch_size = batch_size
        self.create_table = create_table
        self.progress_table = progress_table
        self.retry_deadline = retry_deadline
        self.bind_fn = bind_fn
        self.connection_fn = connection_fn
        self.owner = owner

    # --- tables ---------------------------------------------------------------------------------

    def _table(self, schema: T.StructType) -> sa.Table | None:
        if self.table is None:
            return None
        name, db_schema = split_table_name(self.table)
        self._check_name_length("table", name)
        columns = []
        for field in schema.fields:
            self._check_name_length("column", field.name)
            try:
                sql_type = sql_type_for(field.dataType)
            except TypeError as exc:
                raise SchemaError(f"{self.owner}: column '{field.name}': {exc}") from None
            columns.append(sa.Column(field.name, sql_type, primary_key=field.name in self.key_columns))
        return sa.Table(name, sa.MetaData(), *columns, schema=db_schema)

    def _check_name_length(self, kind: str, name: str) -> None:
        """PostgreSQL cuts a longer name to 63 bytes without an error: the table or column would be
        written (and read back) under another name."""
        limit = engine_for(self.url, self.connection_fn).dialect.max_identifier_length
        if limit and len(name.encode()) > limit:
            raise SchemaError(
                f"{self.owner}: {kind} name '{name}' is {len(name.encode())} bytes, the database keeps {limit}; rename it"
            )

    def check_schema(self, schema: T.StructType) -> None:
        missing = [k for k in self.key_columns if k not in schema.fieldNames()]
        if missing:
            raise SchemaError(
                f"{self.owner}: option 'key_columns' names {', '.join(missing)}, not in the data's columns {', '.join(schema.fieldNames())}"
            )
        self._ensure_tables(schema)

    def _ensure_tables(self, schema: T.StructType) -> None:
        """Create the target (if allowed) and the progress table when missing, once per process."""
        if (self.url, self.table, self.progress_table) in _ensured:
            return
        tables = [progress.progress_table(self.progress_table)]
        target = self._table(schema)
        if target is not None and self.create_table:
            tables.append(target)
        engine = engine_for(self.url, self.connection_fn)
        for table in tables:
            try:
                table.create(engine, checkfirst=True)
                continue
            except sa.exc.DBAPIError as exc:
                failure = exc
            if _refused_connection(failure):
                raise_unchained(SinkError(cannot_connect(self.owner, redact(str(failure.orig), url_secrets(self.url)))))
            # Two tasks creating the same table at once: the loser finds it there.
            if not _has_table(engine, table):
                raise_unchained(
                    SinkError(
                        f"{self.owner}: cannot create table '{table.name}': {redact(str(failure.orig), url_secrets(self.url))}"
                    )
                )
        _ensured.add((self.url, self.table, self.progress_table))

    def check_connection(self) -> str:
        """Connect and log in as a write would (TLS handshake and certificate checks included), run
        ``SELECT 1`` and write nothing: once, without retrying, so ``jetconnect doctor --sink`` says
        at once whether the server is not reachable, refuses the login or is not trusted."""
        engine = engine_for(self.url, self.connection_fn)
        try:
            with engine.connect() as conn:
                conn.execute(sa.text("SELECT 1"))
                tls = _tls_in_use(conn)
        except sa.exc.DBAPIError as exc:
            engine.dispose()
            raise_unchained(SinkError(cannot_connect(self.owner, redact(str(exc.orig), url_secrets(self.url)))))
        return f"{safe_url(self.url)}: reachable, {tls}, authenticated"

    # --- writing --------------------------------------------------------------------------------

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> PartitionWritten:
        if ctx.overwrite:
            raise SinkError(f"{self.owner}: overwrite is not supported; delete the rows first or use mode 'upsert'")
        key = ctx.key  # None in a batch write: nothing to re-deliver, no progress row
        self._ensure_tables(ctx.schema)
        table = self._table(ctx.schema)
        writer = make_writer(
            dialect_name(self.url),
            self.mode,
            table,
            self.statement,
            self.key_columns,
            self.batch_size,
            bind_rows(self.bind_fn, self.owner, statement_parameters(self.statement or ""))
            if self.bind_fn is not None
            else None,
        )
        where = f"partition {ctx.partition_id}" + (
            f" of micro-batch {ctx.batch_id}" if ctx.batch_id is not None else ""
        )
        with Spool(data) as batches:
            written = retry_call(
                lambda: self._write_once(writer, batches, key, ctx.partition_id),
                retry_on=(TransientWriteError,),
                what=f"{self.owner}: writing {where}",
                backoff=retry_backoff(self.retry_deadline),
                secrets=url_secrets(self.url),
            )
            batches.drain()  # a skipped replay never read its input; Spark expects it read
        return written

    def _write_once(
        self, writer: Writer, batches: Iterable[pa.RecordBatch], key: WriteKey | None, partition_id: int
    ) -> PartitionWritten:
        """One transaction: the rows, streamed batch by batch, then the progress row, committed together."""
        engine = engine_for(self.url, self.connection_fn)
        marks = progress.progress_table(self.progress_table)
        try:
            with engine.begin() as conn:
                if key is not None and progress.already_written(conn, marks, key):
                    return PartitionWritten(partition_id, 0, skipped=True)
                count = writer.write(conn, batches)
                if key is not None:
                    progress.record(conn, marks, key, self.table or "<statement>", count)
                return PartitionWritten(partition_id, count, skipped=False)
        except UnstorableValue as exc:
            raise_unchained(
                SinkError(f"{self.owner}: writing table '{self.table}': {exc}; nothing of the partition was written")
            )
        except sa.exc.DBAPIError as exc:
            failure = exc
        except sa.exc.StatementError as exc:
            # refused before the database saw it (e.g. a missing parameter): SQLAlchemy's text quotes
            # every row of the block, so only the cause's own words are shown
            raise_unchained(
                SinkError(
                    f"{self.owner}: {self.statement or self.table}: {type(exc.orig).__name__}: "
                    f"{redact(str(exc.orig), url_secrets(self.url))}; nothing of the partition was written"
                )
            )
        if is_transient(failure):
            engine.dispose()  # pooled connections to a restarted server are all dead
            raise_unchained(TransientWriteError(f"{self.owner}: {redact(str(failure.orig), url_secrets(self.url))}"))
        if _refused_connection(failure):  # credentials, certificate, TLS: no row was even sent
            raise_unchained(SinkError(cannot_connect(self.owner, redact(str(failure.orig), url_secrets(self.url)))))
        if isinstance(failure, sa.exc.IntegrityError) and key is not None and self._committed_elsewhere(key, marks):
            # Another attempt of this very partition committed first (the key of its progress row,
            # or of its rows, refused ours): its rows are there and ours were rolled back.
            return PartitionWritten(partition_id, 0, skipped=True)
        raise_unchained(self._refused(writer, batches, failure))

    def _committed_elsewhere(self, key: WriteKey, marks: sa.Table) -> bool:
        """Whether the progress table holds ``key``: asked of the database, never guessed from an
        error's text (a real duplicate key whose statement merely names the table is a failure)."""
        try:
            with engine_for(self.url, self.connection_fn).connect() as conn:
                return progress.already_written(conn, marks, key)
        except sa.exc.DBAPIError as exc:
            if is_transient(exc):  # the next attempt looks again, before writing anything
                raise_unchained(TransientWriteError(f"{self.owner}: {redact(str(exc.orig), url_secrets(self.url))}"))
            raise_unchained(
                SinkError(
                    f"{self.owner}: cannot read progress table '{marks.name}': {redact(str(exc.orig), url_secrets(self.url))}"
                )
            )

    def _refused(self, writer: Writer, batches: Iterable[pa.RecordBatch], exc: sa.exc.DBAPIError) -> SinkError:
        """A non-transient error naming the table, the statement and the first row the database refuses."""
        engine = engine_for(self.url, self.connection_fn)
        reason = redact(str(exc.orig).strip(), url_secrets(self.url))
        with engine.connect() as conn:
            statement = writer.statement(conn)
            culprit = _first_refused_row(conn, writer, batches)
            conn.rollback()
        target = f"writing table '{self.table}'" if self.table is not None else "writing through option 'statement'"
        if culprit is None:
            return SinkError(f"{self.owner}: {target}: {statement} failed: {reason}")
        index, row = culprit
        shown = {k: row[k] for k in self.key_columns} if self.key_columns else row
        return SinkError(
            f"{self.owner}: {target}: {statement} failed at row {index} of the partition ({_describe(shown)}); "
            f"nothing of the partition was written: {reason}"
        )

    # --- commit ---------------------------------------------------------------------------------

    def commit(self, messages: list[Any], ctx: CommitContext) -> None:
        if ctx.batch_id is None or ctx.query_id is None:
            return
        marks = progress.progress_table(self.progress_table)
        try:
            with engine_for(self.url, self.connection_fn).begin() as conn:
                progress.trim(conn, marks, ctx.query_id, ctx.batch_id)
        except sa.exc.DBAPIError:
            pass  # trimming is housekeeping: the next commit tries again

    def __repr__(self) -> str:
        target = f"table={self.table!r}" if self.table else f"statement={self.statement!r}"
        return f"JdbcSink({safe_url(self.url)!r}, {target}, mode={self.mode!r})"


def _refused_connection(exc: sa.exc.DBAPIError) -> bool:
    """Whether ``exc`` is the server (or the client's TLS checks) refusing the connection itself, as
    opposed to a statement: drivers give those no SQLSTATE."""
    return getattr(exc.orig, "sqlstate", None) is None and is_refusal(str(exc.orig))


def _tls_in_use(conn: sa.Connection) -> str:
    """``TLS 1.3 handshake`` when the connection is encrypted (PostgreSQL's ``pg_stat_ssl``), else
    ``no TLS``; a database without that view (SQLite) has no network to encrypt."""
    if conn.dialect.name != "postgresql":
        return "no network connection" if conn.dialect.name == "sqlite" else "TLS unknown"
    row = conn.execute(sa.text("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")).first()
    return f"{row[1]} handshake" if row is not None and row[0] else "no TLS"


def _has_table(engine: sa.Engine, table: sa.Table) -> bool:
    try:
        return sa.inspect(engine).has_table(table.name, schema=table.schema)
    except sa.exc.DBAPIError:  # no connection: the error that made creating it fail says why
        return False


def _first_refused_row(
    conn: sa.Connection, writer: Writer, batches: Iterable[pa.RecordBatch]
) -> tuple[int, dict] | None:
    """Write row by row, each in a savepoint, inside a transaction that is rolled back."""
    index = 0
    for batch in batches:
        for row in batch.to_pylist():
            savepoint = conn.begin_nested()
            try:
                writer.write_row(conn, row)
                savepoint.commit()  # later rows must see it: a duplicate key may be within the partition
            except sa.exc.DBAPIError:
                savepoint.rollback()
                return index, row
            index += 1
    return None


def _describe(row: dict[str, Any]) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in row.items())
    return text if len(text) <= 300 else text[:300] + "..."
