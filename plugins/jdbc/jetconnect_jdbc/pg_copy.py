"""PostgreSQL's fast read path: ``COPY (query) TO STDOUT`` as CSV, parsed into Arrow in C++.

About ten times faster than fetching rows through a cursor and building Arrow arrays in Python.
The session is pinned to ISO dates and UTC for the transaction, so every value's text form is one
Arrow parses exactly; PostgreSQL's CSV tells NULL (empty) from an empty string (``""``).
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.csv as pacsv
import sqlalchemy as sa

from jetconnect.errors import SourceError

#: Bytes of CSV per Arrow batch (roughly 50k rows of a narrow table).
BLOCK_BYTES = 4 << 20


def can_copy(schema: pa.Schema) -> bool:
    """Binary columns come out of COPY as hex text: those reads take the cursor path."""
    return not any(pa.types.is_binary(f.type) for f in schema)


def copy_batches(conn: sa.Connection, statement: sa.Executable, schema: pa.Schema, owner: str) -> Iterator[pa.RecordBatch]:
    """The rows of ``statement`` as record batches of ``schema``, streamed (never all in memory)."""
    import psycopg

    # COPY takes no parameters: values (pushed filters, split bounds) are rendered by SQLAlchemy.
    sql = str(statement.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
    driver = conn.connection.driver_connection  # type: ignore[union-attr]
    cursor = driver.cursor()
    try:
        cursor.execute("SET LOCAL TimeZone = 'UTC'")
        cursor.execute("SET LOCAL DateStyle = 'ISO, YMD'")
        with cursor.copy(f"COPY ({sql}) TO STDOUT (FORMAT csv)") as copy:
            reader = pacsv.open_csv(
                io.BufferedReader(_CopyStream(copy), buffer_size=1 << 20),
                read_options=pacsv.ReadOptions(column_names=schema.names, block_size=BLOCK_BYTES),
                parse_options=pacsv.ParseOptions(newlines_in_values=True),
                convert_options=pacsv.ConvertOptions(
                    column_types=schema,
                    null_values=[""],
                    strings_can_be_null=True,
                    quoted_strings_can_be_null=False,
                    true_values=["t"],
                    false_values=["f"],
                ),
            )
            for batch in reader:
                yield batch.cast(schema) if batch.schema != schema else batch
    except psycopg.Error as exc:
        raise SourceError(f"{owner}: COPY of the query failed: {str(exc).strip()}") from None
    except pa.ArrowInvalid as exc:
        raise SourceError(f"{owner}: a value does not fit the source's schema {schema}: {exc}") from None
    finally:
        cursor.close()


class _CopyStream(io.RawIOBase):
    """psycopg's COPY data messages (about one per row) as a raw file, buffered for Arrow's reader.

    (Joining many messages per ``read`` measured slower here than this plus a BufferedReader.)
    """

    def __init__(self, copy: object) -> None:
        self._chunks: Iterator[memoryview] = iter(copy)  # type: ignore[call-overload]
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Sequence[int]) -> int:  # type: ignore[override]
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._pending = memoryview(chunk)
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]  # type: ignore[index]
        self._pending = self._pending[n:]
        return n
