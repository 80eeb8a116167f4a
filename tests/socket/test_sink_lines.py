"""The socket sink's lines: a column's values or Jet's ``to_string_fn`` of each row, sent to a real
TCP listener on 127.0.0.1 (no Spark); what a careless function or value does."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from datetime import date

import pyarrow as pa
import pytest
from pyspark.sql.types import DateType, LongType, StringType, StructField, StructType

from jetconnect import sinks
from jetconnect._connector import WriteContext
from jetconnect._factory_calls import call_with_options
from jetconnect._options import Options
from jetconnect._registry import get_registry
from jetconnect.errors import OptionError, SinkError

SCHEMA = StructType([StructField("id", LongType()), StructField("text", StringType()), StructField("day", DateType())])


class Listener:
    """Accepts connections and keeps every byte each one sent, until it closes."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.received: list[bytes] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        chunks = []
        with conn:
            while data := conn.recv(65536):
                chunks.append(data)
        self.received.append(b"".join(chunks))

    def lines(self, connections: int = 1) -> list[str]:
        """The lines of ``connections`` connections, once each has closed."""
        deadline = time.monotonic() + 30
        while len(self.received) < connections and time.monotonic() < deadline:
            time.sleep(0.01)
        return [line for data in self.received for line in data.decode().split("\n")[:-1]]


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.server.close()


def batch(ids: list[int], texts: list[str | None]) -> pa.RecordBatch:
    days = [date(2026, 1, 1 + i % 28) for i in ids]
    return pa.RecordBatch.from_pydict(
        {"id": ids, "text": texts, "day": days},
        schema=pa.schema([("id", pa.int64()), ("text", pa.string()), ("day", pa.date32())]),
    )


def write(sink, *batches: pa.RecordBatch) -> None:
    sink.write_partition(
        iter(batches), WriteContext(partition_id=0, attempt=0, batch_id=None, query_id=None, schema=SCHEMA)
    )


def test_to_string_fn_makes_each_rows_line_from_a_pyspark_row(listener):
    def line(row):  # a pyspark Row by column name, as Jet's toStringFn gets the item
        return f"{row.id}|{row.text}|{row.day.isoformat()}"

    write(sinks.socket("127.0.0.1", listener.port, to_string_fn=line), batch([0, 1], ["a", None]), batch([2], ["é %s"]))
    assert listener.lines(1) == ["0|a|2026-01-01", "1|None|2026-01-02", "2|é %s|2026-01-03"]


def test_without_to_string_fn_the_first_column_goes_as_str_as_before(listener):
    write(sinks.socket("127.0.0.1", listener.port), batch([7, 8], ["x", "y"]))
    write(sinks.socket("127.0.0.1", listener.port, column="text"), batch([7, 8], [None, "y"]))
    assert sorted(listener.lines(2)) == ["", "7", "8", "y"]


@pytest.mark.parametrize(
    ("fn", "error"),
    [
        (lambda row: row.id, r"to_string_fn returned int, not str, for row 2 of this task"),
        (lambda row: None, r"to_string_fn returned NoneType, not str, for row 0 of this task"),
        (lambda row: b"bytes", r"to_string_fn returned bytes, not str, for row 0 of this task"),
        (
            lambda row: 1 / (row.id - 2),
            r"to_string_fn raised ZeroDivisionError for row 2 of this task: division by zero",
        ),
        (lambda row: row.missing, r"to_string_fn raised PySparkAttributeError for row 0 of this task: .*`missing`"),
    ],
)
def test_a_careless_to_string_fn_fails_naming_the_row(listener, fn, error):
    # rows 0 and 1 are in the first batch, so row 2 is counted across batches of the task
    first_ok = fn if "row 0" in error else (lambda row: str(row.id) if row.id < 2 else fn(row))
    with pytest.raises(SinkError, match=error):
        write(
            sinks.socket("127.0.0.1", listener.port, to_string_fn=first_ok),
            batch([0, 1], ["a", "b"]),
            batch([2], ["c"]),
        )


@pytest.mark.parametrize("line", ["two\nlines", "cr at the end\r", "a\r\nb"])
def test_a_line_with_a_line_break_fails_naming_the_row_and_sends_nothing_of_its_batch(listener, line):
    # once such a value went out as two lines (or lost its \r at a line reader): data changed silently
    sink = sinks.socket("127.0.0.1", listener.port, to_string_fn=lambda row: line if row.id == 1 else "ok")
    with pytest.raises(
        SinkError, match=r"socket sink partition 0: the value of row 1 \(of a batch of 2\) holds a line break"
    ):
        write(sink, batch([0, 1], ["a", "b"]))
    with pytest.raises(SinkError, match=r"row 0 \(of a batch of 1\) holds a line break"):
        write(sinks.socket("127.0.0.1", listener.port, column="text"), batch([0], [line]))
    assert listener.lines(2) == []


def test_a_character_the_charset_lacks_is_a_sink_error(listener):
    sink = sinks.socket("127.0.0.1", listener.port, charset="latin-1", to_string_fn=lambda row: "€")
    with pytest.raises(SinkError, match=r"character '€' cannot be written in iso8859-1"):
        write(sink, batch([0], ["a"]))


def test_to_string_fn_must_be_a_python_function_and_not_beside_column():
    with pytest.raises(
        OptionError, match=r"option 'to_string_fn' must be a Python function of the row \(pass it to sinks.socket"
    ):
        sinks.socket("127.0.0.1", 1, to_string_fn="lambda row: row.text")
    with pytest.raises(OptionError, match=r"give option 'column' or 'to_string_fn', not both"):
        sinks.socket("127.0.0.1", 1, column="text", to_string_fn=str)


def test_to_string_fn_from_spark_string_options_is_an_option_error():
    # what spark.write.format("jetconnect.socket").option("to_string_fn", ...) hands the registry
    factory = get_registry().sinks["socket"].factory
    options = Options({"host": "127.0.0.1", "port": "1", "to_string_fn": "lambda row: row.text"}, "sink 'socket'")
    with pytest.raises(OptionError, match=r"option 'to_string_fn' must be a Python function .* got str"):
        call_with_options(factory, options, "sink 'socket'")
