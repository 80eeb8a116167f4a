"""What the files and Avro sinks write reads back equal: any Unicode, empty values, nulls, line breaks.

Lines files hold strings and nothing else, so two things cannot round-trip and are said: a null
is written as an empty line (it reads back as ""), and a value holding a line break (a "\\n", or a
"\\r" at its end, which the reader takes for half of a "\\r\\n") is refused with a SinkError naming
the row, nothing committed, rather than read back as two lines. Avro keeps every value exactly.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql.types import LongType, StringType, StructField, StructType

from jetconnect import sinks, sources
from jetconnect._connector import CommitContext, WriteContext
from jetconnect.errors import SinkError

ROUND_TRIP = settings(max_examples=50, deadline=None)
#: Any text Spark can hold (no lone surrogates: they are not UTF-8), nulls, empty and long values.
values_st = st.lists(
    st.none() | st.text(max_size=30) | st.sampled_from(["", "x" * 70_000, "\u2028", "\x85", "\x00"]), max_size=30
)


def write(sink, batch: pa.RecordBatch) -> None:
    schema = StructType(
        [
            StructField(name, LongType() if pa.types.is_integer(t) else StringType())
            for name, t in zip(batch.schema.names, batch.schema.types)
        ]
    )
    ctx = WriteContext(partition_id=0, attempt=0, batch_id=7, query_id="q-1", schema=schema)
    sink.commit([sink.write_partition(iter([batch]), ctx)], CommitContext(batch_id=7, query_id="q-1"))


def read(source) -> list[dict]:
    ranges = sorted((r for split in source.splits() for r in split), key=lambda r: (r.path, r.start))
    return [row for r in ranges for batch in source.read_split([r]) for row in batch.to_pylist()]


def has_line_break(value: str | None) -> bool:
    return value is not None and ("\n" in value or value.endswith("\r"))


@ROUND_TRIP
@given(values_st)
def test_lines_read_back_as_written(values: list[str | None]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        batch = pa.RecordBatch.from_pydict({"value": pa.array(values, pa.string())})
        if any(has_line_break(v) for v in values):
            with pytest.raises(SinkError, match="holds a line break"):
                write(sinks.files(directory=directory), batch)
            assert [p for p in Path(directory).rglob("*") if p.is_file()] == []
            return
        write(sinks.files(directory=directory), batch)
        back = read(sources.files(directory=directory, max_split_bytes=64, min_splits=1))
        assert [row["value"] for row in back] == ["" if v is None else v for v in values]


@ROUND_TRIP
@given(values_st, st.sampled_from(["null", "deflate", "zstd"]))
def test_avro_reads_back_exactly(values: list[str | None], codec: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        rows = [{"id": i, "value": v} for i, v in enumerate(values)]
        batch = pa.RecordBatch.from_pylist(rows, schema=pa.schema([("id", pa.int64()), ("value", pa.string())]))
        write(sinks.avro(directory=directory, codec=codec), batch)
        back = read(sources.avro(directory=directory, max_split_bytes=200, min_splits=1)) if values else []
        assert back == rows
