"""The JDBC source: a table or query read in parallel splits, or followed by an increasing column.

Batch reads are Jet's JDBC source: one query, or one query per split over ranges of a column, or a
user function ``(connection, parallelism, index) -> rows`` that gives each split its own rows.
Rows stream through a server-side cursor in blocks of ``fetch_size`` and leave as Arrow batches.

Streaming reads follow a monotonically increasing column (an id, an updated-at timestamp): the
offset is the largest value read, and a micro-batch ``(start, end]`` is re-read exactly on replay.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import pyarrow as pa
import sqlalchemy as sa
from pyspark.sql import types as T

from jetconnect import BatchSource, Guarantee, Range, StreamSource
from jetconnect.api import (
    PLAIN_NAME,
    PLAIN_NAME_IS,
    Offset,
    PlainFilter,
    RetriesExhausted,
    check_function_option,
    check_name,
    mapped_rows,
    parse_schema,
    raise_unchained,
    redact,
    retry_call,
    rows_to_batch,
    spark_rows,
    url_secrets,
)
from jetconnect.errors import OffsetError, OptionError, SourceError
from jetconnect_jdbc import filters, values
from jetconnect_jdbc.arrow_batches import rows_to_record_batch
from jetconnect_jdbc.columns import Column, arrow_schema, describe_query, from_spark_schema, reflect_table, spark_schema
from jetconnect_jdbc.engines import ConnectionFn, check_connection_fn, check_url, dialect_name, engine_for, safe_url
from jetconnect_jdbc.names import split_table_name
from jetconnect_jdbc.partitioning import FunctionSplit, RangeSplit, Split, WholeSplit, function_splits, range_splits
from jetconnect_jdbc.pg_copy import copy_batches
from jetconnect_jdbc.transient import cannot_connect, connection_failure_words, is_transient, retry_backoff

#: Jet's form: ``(connection, parallelism, index)`` -> a SQLAlchemy statement, SQL text, a
#: SQLAlchemy ``Result`` or any iterable of rows in the source's column order.
PartitionsFn = Callable[[sa.Connection, int, int], Any]


class JdbcSource(BatchSource, StreamSource):
    """A table or query read through SQLAlchemy, in parallel splits or as an incremental stream.

    ``sources.jdbc(...)``: its parameters are the connector's options, declared here once (Spark's
    string options are parsed from their annotations); the module docstring says how it reads.
    """

    name = "jdbc"
    guarantee = Guarantee.EXACTLY_ONCE

    def __init__(
        self,
        url: str,
        query: str | None = None,
        table: str | None = None,
        schema: str | T.StructType | None = None,
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
        row_schema: str | T.StructType | None = None,
        connection_fn: ConnectionFn | None = None,
        retry_deadline: float = 60.0,
    ) -> None:
        check_connection_fn(connection_fn, self._owner_for(url))
        check_function_option(
            row_fn,
            "row_fn",
            self._owner_for(url),
            "the row",
            schema=row_schema,
            schema_option="row_schema",
            factory="sources.jdbc",
        )
        if query is not None and table is not None:
            raise OptionError(f"{self._owner_for(url)}: give option 'query' or option 'table', not both")
        if query is None and table is None and (partitions_fn is None or schema is None):
            raise OptionError(
                f"{self._owner_for(url)}: give option 'query' or 'table' (or 'partitions_fn' with 'schema')"
            )
        if partitions_fn is not None and partition_column is not None:
            raise OptionError(
                f"{self._owner_for(url)}: options 'partitions_fn' and 'partition_column' exclude each other"
            )
        if num_partitions < 1:
            raise OptionError(
                f"{self._owner_for(url)}: option 'num_partitions' must be at least 1, got {num_partitions}"
            )
        if fetch_size < 1:
            raise OptionError(f"{self._owner_for(url)}: option 'fetch_size' must be at least 1, got {fetch_size}")
        check_url(url, self._owner_for(url))
        if table is not None:
            check_name(table, "table", self._owner_for(url), PLAIN_NAME, PLAIN_NAME_IS)
        self.url = url
        self.query = query
        self.table = table
        self.partition_column = partition_column
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.num_partitions = num_partitions
        self.partitions_fn = partitions_fn
        self.fetch_size = fetch_size
        self.offset_column = offset_column
        self.start_offset = start_offset
        self.use_copy = use_copy
        self.row_fn = row_fn
        self.connection_fn = connection_fn
        self.retry_deadline = retry_deadline
        self.row_schema = row_schema
        self._declared_schema = schema
        self._columns: list[Column] | None = None
        self._filters: list[PlainFilter] = []
        self._from_clause: sa.FromClause | None = None

    # --- what is read ---------------------------------------------------------------------------

    @staticmethod
    def _owner_for(url: str) -> str:
        return f"jdbc source ({safe_url(url)})"

    @property
    def owner(self) -> str:
        return self._owner_for(self.url)

    @property
    def columns(self) -> list[Column]:
        """The columns read, found on the driver on first use and pickled to executors with the source."""
        if self._columns is None:
            self._columns = self._find_columns()
            names = {c.name for c in self._columns}
            for option in ("partition_column", "offset_column"):
                name = getattr(self, option)
                if name is not None and name not in names:
                    raise OptionError(
                        f"{self.owner}: option '{option}' names column '{name}', which is not read; columns: {', '.join(sorted(names))}"
                    )
        return self._columns

    def _find_columns(self) -> list[Column]:
        if self._declared_schema is not None:
            from jetconnect.api import parse_schema

            return from_spark_schema(parse_schema(self._declared_schema))
        with self._connect() as conn:
            if self.table is not None:
                name, schema = split_table_name(self.table)
                if not sa.inspect(conn).has_table(name, schema=schema):
                    raise SourceError(f"{self.owner}: table '{self.table}' does not exist")
                return reflect_table(conn, name, schema)
            return describe_query(conn, sa.select(sa.text("*")).select_from(self._untyped_query()))

    def schema(self) -> T.StructType:
        if self.row_fn is not None:
            return parse_schema(self.row_schema or "value string")
        return spark_schema(self.columns)

    def arrow_schema(self) -> pa.Schema:
        return arrow_schema(self.columns)

    def _untyped_query(self) -> sa.TextClause:
        # The user's own SQL, as a sub-query; everything around it is built by SQLAlchemy.
        return _verbatim(f"({self.query}) AS jetconnect_query")

    def _from(self) -> sa.FromClause:
        """The table or the query as one FROM element, shared by every condition built on it."""
        if self._from_clause is None:
            typed = [sa.column(c.name, c.sql_type) for c in self.columns]
            if self.table is not None:
                name, schema = split_table_name(self.table)
                self._from_clause = sa.table(name, *typed, schema=schema)
            else:
                self._from_clause = _verbatim(str(self.query)).columns(*typed).subquery("jetconnect_query")
        return self._from_clause

    def __getstate__(self) -> dict[str, Any]:
        # SQLAlchemy constructs are rebuilt where they are used; only plain settings travel.
        return {**self.__dict__, "_from_clause": None}

    def _select(self, *conditions: sa.ColumnElement[bool], numeric_as_text: bool = False) -> sa.Select:
        """The columns read, with the pushed filters and ``conditions``; types without a Spark
        equivalent (and NUMERIC for the COPY path, see :mod:`jetconnect_jdbc.pg_copy`) as text."""
        source = self._from()
        selected = [
            sa.cast(source.c[c.name], sa.Text).label(c.name)
            if c.type.as_text or (numeric_as_text and pa.types.is_decimal(c.type.arrow))
            else source.c[c.name]
            for c in self.columns
        ]
        pushed = [filters.to_expression(f, lambda name: source.c[name]) for f in self._filters]
        return sa.select(*selected).where(*pushed, *conditions)

    def _column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def _connect(self) -> sa.Connection:
        """A connection to the database. One that cannot be made for a reason that passes (the
        server restarting) is tried again with backoff for ``retry_deadline`` seconds, on the
        driver and in the tasks alike, so a streaming query lives through a server restart; a
        refusal (credentials, certificate, TLS required, database) fails at once."""
        engine = engine_for(self.url, self.connection_fn)
        try:
            return retry_call(
                engine.connect,
                retry_on=(sa.exc.DBAPIError,),
                retry_if=is_transient,
                what=f"{self.owner}: connecting",
                backoff=retry_backoff(self.retry_deadline),
                secrets=url_secrets(self.url),
            )
        except sa.exc.DBAPIError as exc:  # a refusal: not retried
            error = SourceError(cannot_connect(self.owner, redact(str(exc.orig), url_secrets(self.url))))
        except RetriesExhausted as exc:  # scrubbed already
            error = SourceError(
                f"{exc}; cannot connect, {connection_failure_words(str(exc))}"
                f"(option 'retry_deadline' is {self.retry_deadline:g} s)"
            )
        raise_unchained(error)

    # --- batch ----------------------------------------------------------------------------------

    def push_filters(self, spark_filters: list[Any]) -> list[Any]:
        if self.partitions_fn is not None or self.row_fn is not None:
            return spark_filters  # the user's function builds its own queries, or its own columns
        types = {c.name: c.type.spark for c in self.columns}
        rejected = []
        for spark_filter in spark_filters:
            plain = filters.to_plain(spark_filter, types)
            if plain is None:
                rejected.append(spark_filter)
            else:
                self._filters.append(plain)
        return rejected

    def splits(self) -> Sequence[Split]:
        self.columns  # noqa: B018 - found on the driver, so executors never reflect
        if self.partitions_fn is not None:
            return function_splits(self.num_partitions)
        if self.partition_column is None or self.num_partitions == 1:
            return [WholeSplit()]
        column = self._column(self.partition_column)
        if not values.is_partitionable(column.type.spark):
            raise OptionError(
                f"{self.owner}: option 'partition_column' must name a numeric, date or timestamp column; "
                f"'{column.name}' is {column.type.spark.simpleString()}"
            )
        lower, upper = self._bounds(column)
        return range_splits(lower, upper, self.num_partitions)

    def _bounds(self, column: Column) -> tuple[Any, Any]:
        try:
            lower = values.parse(self.lower_bound, column.type.spark)
            upper = values.parse(self.upper_bound, column.type.spark)
        except ValueError as exc:
            raise OptionError(
                f"{self.owner}: options 'lower_bound'/'upper_bound' must be values of column '{column.name}' ({column.type.spark.simpleString()}): {exc}"
            ) from None
        if lower is None or upper is None:
            # Unlike Spark's JDBC source, missing bounds are asked of the database.
            source = self._from()
            with self._connect() as conn:
                low, high = conn.execute(
                    sa.select(sa.func.min(source.c[column.name]), sa.func.max(source.c[column.name]))
                ).one()
            lower = low if lower is None else lower
            upper = high if upper is None else upper
        return lower, upper

    def read_split(self, split: Split) -> Iterator[pa.RecordBatch]:
        return self._mapped(self._read_split(split))

    def _mapped(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Jet's ``createOutputFn``: with ``row_fn``, each row read, as a pyspark ``Row``, made into a row
        of ``row_schema``; without it, the columns as read (the fast default)."""
        if self.row_fn is None:
            yield from batches
            return
        schema, done = self.schema(), 0
        for batch in batches:
            # a row row_fn returns None for is left out (Jet's rule for mapping functions)
            rows = mapped_rows(self.row_fn(row) for row in spark_rows(batch))
            yield rows_to_batch(rows, schema, f"{self.owner}: row_fn (rows from #{done} of this task)")
            done += batch.num_rows

    def _read_split(self, split: Split) -> Iterator[pa.RecordBatch]:
        if isinstance(split, FunctionSplit):
            with self._connect() as conn:
                yield from self._batches(self._call_partitions_fn(conn, split))
        elif isinstance(split, RangeSplit):
            column = self._from().c[str(self.partition_column)]
            yield from self._read(split.condition(column))
        else:
            yield from self._read()

    def _read(
        self, *conditions: sa.ColumnElement[bool], order_by: sa.ColumnElement | None = None
    ) -> Iterator[pa.RecordBatch]:
        """COPY decoded into Arrow on PostgreSQL (much faster), a server-side cursor elsewhere."""
        # COPY goes through DuckDB's own connection by URL: a connection_fn's connections cannot
        if self.use_copy and self.connection_fn is None and dialect_name(self.url) == "postgresql":
            statement = self._select(*conditions, numeric_as_text=True)
            if order_by is not None:
                statement = statement.order_by(order_by)
            yield from copy_batches(self.url, statement, self.arrow_schema(), self.owner, self.retry_deadline)
            return
        statement = self._select(*conditions)
        if order_by is not None:
            statement = statement.order_by(order_by)
        with self._connect() as conn:
            yield from self._batches(self._stream(conn, statement))

    def _stream(self, conn: sa.Connection, statement: sa.Executable) -> Iterable[Sequence[Sequence[Any]]]:
        """Blocks of rows from a server-side cursor (``yield_per``), never the whole result at once."""
        try:
            result = conn.execution_options(yield_per=self.fetch_size).execute(statement)
        except sa.exc.DBAPIError as exc:
            error = SourceError(f"{self.owner}: query failed: {redact(str(exc.orig), url_secrets(self.url))}")
        else:
            return result.partitions(self.fetch_size)
        raise_unchained(error)

    def _call_partitions_fn(self, conn: sa.Connection, split: FunctionSplit) -> Iterable[Sequence[Sequence[Any]]]:
        partitions_fn = self.partitions_fn
        assert partitions_fn is not None, "function splits are planned only for a partitions_fn"
        produced = partitions_fn(conn, split.parallelism, split.index)
        if isinstance(produced, str):
            produced = sa.text(produced)
        if isinstance(produced, sa.Executable):
            return self._stream(conn, produced)
        if isinstance(produced, sa.Result):
            return produced.partitions(self.fetch_size)
        return _blocks(produced, self.fetch_size)

    def _batches(self, blocks: Iterable[Sequence[Sequence[Any]]]) -> Iterator[pa.RecordBatch]:
        schema = self.arrow_schema()
        for rows in blocks:
            yield rows_to_record_batch(rows, schema, self.owner)

    # --- streaming ------------------------------------------------------------------------------

    def _offset_column(self) -> Column:
        if self.offset_column is None:
            raise OptionError(
                f"{self.owner}: a streaming read needs option 'offset_column' (a column whose values only grow)"
            )
        return self._column(self.offset_column)

    def initial_offset(self) -> Offset:
        column = self._offset_column()
        try:
            start = values.parse(self.start_offset, column.type.spark)
        except ValueError as exc:
            raise OptionError(
                f"{self.owner}: option 'start_offset' is not a value of column '{column.name}': {exc}"
            ) from None
        return {column.name: values.to_json(start)}

    def _position(self, offset: Offset, column: Column) -> Any:
        """``offset``'s value of the offset column. An offset kept for another column (the option
        changed between restarts) is refused: its value means nothing for this column, and reading
        on without it would start over from the first row."""
        if not isinstance(offset, dict):
            raise OffsetError(
                f"{self.owner}: the query's checkpointed offset {offset!r} is not a JSON object of column -> value: "
                "was the checkpoint edited?"
            )
        if set(offset) != {column.name}:
            kept = ", ".join(f"'{name}'" for name in offset) or "no column"
            raise OffsetError(
                f"{self.owner}: the query's checkpointed offset {json.dumps(offset, default=str)} is for column {kept}, "
                f"but option 'offset_column' is now '{column.name}'; set 'offset_column' back to {kept}, "
                "or start a new query (new checkpoint location) with 'start_offset' on the new column"
            )
        try:
            return values.from_offset(offset[column.name], column.type.spark)
        except ValueError as exc:
            raise OffsetError(
                f"{self.owner}: the query's checkpointed offset of column '{column.name}' is unusable: {exc}; "
                "was the checkpoint edited?"
            ) from None

    def latest_offset(self, start: Offset, max_records: int | None) -> Offset:
        column = self._offset_column()
        after = self._position(start, column)
        source = self._from()
        col = source.c[column.name]
        newer = sa.select(col).where(*([col > after] if after is not None else []), col.is_not(None))
        if max_records is not None:
            # Rows sharing the boundary value all go into this batch (read_range takes "<= end").
            newer = newer.order_by(col).limit(max_records)
        with self._connect() as conn:
            latest = conn.execute(sa.select(sa.func.max(newer.subquery().c[column.name]))).scalar()
        return {column.name: values.to_json(latest if latest is not None else after)}

    def ranges(self, start: Offset, end: Offset) -> Sequence[Range]:
        column = self._offset_column()
        self._position(start, column)  # both offsets come from the checkpoint after a restart
        self._position(end, column)
        return super().ranges(start, end)

    def read_range(self, range_: Range) -> Iterator[pa.RecordBatch]:
        column = self._offset_column()
        start = self._position({range_.partition: range_.start}, column)
        end = self._position({range_.partition: range_.end}, column)
        col = self._from().c[column.name]
        conditions = [col <= end] + ([col > start] if start is not None else [])
        yield from self._mapped(self._read(*conditions, order_by=col))

    def __repr__(self) -> str:
        what = f"table={self.table!r}" if self.table is not None else f"query={self.query!r}"
        return f"JdbcSource({safe_url(self.url)!r}, {what})"


def _verbatim(sql: str) -> sa.TextClause:
    """The user's SQL as SQLAlchemy text that renders exactly as written: each ``:`` is escaped,
    so that ``':name'`` in a string literal is never taken for a bind parameter (and dropped)."""
    return sa.text(sql.replace(":", "\\:"))


def _blocks(rows: Iterable[Sequence[Any]], size: int) -> Iterator[list[Sequence[Any]]]:
    block: list[Sequence[Any]] = []
    for row in rows:
        block.append(row)
        if len(block) >= size:
            yield block
            block = []
    if block:
        yield block
