"""The lines sink on its own: encoding, rolling, schema checks, exactly-once commit."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from jetconnect import sinks
from jetconnect._connector import CommitContext, WriteContext
from jetconnect._files.filesystem import LocalFileSystem
from jetconnect._files.sink import encode_lines
from jetconnect.errors import OptionError, SchemaError, SinkError
from jetconnect_files.lines_sink import FilesSink

SCHEMA = StructType([StructField("value", StringType())])


def test_encode_lines() -> None:
    column = pa.array(["a", None, "ünï", ""]).slice(1)
    assert encode_lines(column, "utf-8") == "\nünï\n\n".encode()
    assert encode_lines(pa.array(["café"]), "latin-1") == "café\n".encode("latin-1")
    assert encode_lines(pa.array([], pa.string()), "utf-8") == b""


def test_write_roll_and_commit_twice(tmp_path) -> None:
    sink = FilesSink(LocalFileSystem(), str(tmp_path), roll_bytes=10)
    batches = [pa.RecordBatch.from_pydict({"value": [f"line{i}" for i in range(j, j + 2)]}) for j in range(0, 6, 2)]
    ctx = WriteContext(partition_id=0, attempt=0, batch_id=4, query_id="abc", schema=SCHEMA)
    message = sink.write_partition(iter(batches), ctx)
    assert len(message) == 3
    sink.commit([message], CommitContext(batch_id=4, query_id="abc"))
    # Spark re-delivers batch 4 after a crash: nothing is added.
    sink.commit([sink.write_partition(iter(batches), ctx)], CommitContext(batch_id=4, query_id="abc"))
    files = sorted(p for p in tmp_path.iterdir() if p.is_file())
    assert [p.name for p in files] == [f"part-0000000004-00000-00{i}-abc.txt" for i in range(3)]
    assert "".join(p.read_text() for p in files) == "".join(f"line{i}\n" for i in range(6))


def test_schema_must_be_one_string_column() -> None:
    sink = FilesSink(LocalFileSystem(), "/tmp/unused")
    two = StructType([StructField("a", StringType()), StructField("b", StringType())])
    with pytest.raises(SchemaError, match="one string column, got 2"):
        sink.check_schema(two)
    with pytest.raises(SchemaError, match="not string"):
        sink.check_schema(StructType([StructField("n", LongType())]))
    FilesSink(LocalFileSystem(), "/tmp/unused", column="b").check_schema(two)


@pytest.mark.parametrize("sink", ["files", "avro"])
@pytest.mark.parametrize("value", [-1, "lots", 2.5])
def test_roll_bytes_must_be_a_count(tmp_path, sink, value) -> None:
    with pytest.raises(OptionError, match=rf"{sink} sink: option 'roll_bytes'"):
        getattr(sinks, sink)(directory=str(tmp_path), roll_bytes=value)


NAMES = [
    ("prefix", "../escape"),
    ("prefix", "a/b"),
    ("prefix", "/abs"),
    ("prefix", ".hidden"),
    ("prefix", "_x"),
    ("prefix", ""),
    ("suffix", "/../../x.txt"),
    ("suffix", ".txt/.."),
    ("suffix", "x\\y"),
    ("prefix", "nul\x00"),
]


@pytest.mark.parametrize("sink", ["files", "avro"])
@pytest.mark.parametrize("option, value", NAMES)
def test_name_options_that_leave_the_directory_or_hide_files_are_option_errors(tmp_path, sink, option, value) -> None:
    out = tmp_path / "out"
    with pytest.raises(OptionError, match=rf"option '{option}'"):
        getattr(sinks, sink)(directory=str(out), **{option: value})
    assert not tmp_path.joinpath("escape").exists() and list(tmp_path.iterdir()) == []


def test_a_value_with_a_line_break_fails_the_task_and_commits_nothing(tmp_path) -> None:
    sink = sinks.files(directory=str(tmp_path))
    ctx = WriteContext(partition_id=0, attempt=0, batch_id=1, query_id="q", schema=SCHEMA)
    for values, row in ((["ok", "two\nlines"], 1), (["cr at the end\r", "ok"], 0), (["a\r\nb"], 0)):
        batch = pa.RecordBatch.from_pydict({"value": values})
        with pytest.raises(
            SinkError, match=rf"files sink: the value of row {row} \(of a batch of {len(values)}\) holds a line break"
        ):
            sink.write_partition(iter([batch]), ctx)
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
    # A "\r" inside a value is no line break here: it reads back as it was.
    assert encode_lines(pa.array(["a\rb"]), "utf-8") == b"a\rb\n"


SCHEMA_KV = StructType([StructField("k", StringType()), StructField("v", LongType())])


def _batch_write(sink: FilesSink, batch: pa.RecordBatch) -> None:
    """A batch write of one partition, as Spark's task and commit make it."""
    ctx = WriteContext(partition_id=0, attempt=0, batch_id=None, query_id=None, schema=SCHEMA_KV)
    sink.commit([sink.write_partition(iter([batch]), ctx)], CommitContext(batch_id=None, query_id=None))


def _visible_lines(directory) -> list[str]:
    return sorted(line for p in directory.iterdir() if p.is_file() for line in p.read_text().splitlines())


def test_to_string_fn_and_append_as_jet_has_them(tmp_path):
    """Jet's toStringFn makes each row's line; append=False replaces the directory's files."""
    sink = FilesSink(LocalFileSystem(), str(tmp_path), to_string_fn=lambda row: f"{row.k}={row.v}")
    sink.check_schema(SCHEMA_KV)  # any schema: the function decides the line
    _batch_write(sink, pa.record_batch({"k": ["a", "b"], "v": [1, None]}))
    _batch_write(sink, pa.record_batch({"k": ["c"], "v": [3]}))
    assert _visible_lines(tmp_path) == ["a=1", "b=None", "c=3"]
    _batch_write(
        FilesSink(LocalFileSystem(), str(tmp_path), to_string_fn=lambda row: row.k, append=False),
        pa.record_batch({"k": ["d"], "v": [4]}),
    )
    assert _visible_lines(tmp_path) == ["d"]


def test_to_string_fn_returning_no_string_names_the_row(tmp_path):
    sink = FilesSink(LocalFileSystem(), str(tmp_path), to_string_fn=lambda row: None if row.k == "b" else row.k)
    with pytest.raises(SinkError, match=r"to_string_fn returned NoneType, not str, for row 1 of this task"):
        _batch_write(sink, pa.record_batch({"k": ["a", "b"], "v": [1, 2]}))
    assert _visible_lines(tmp_path) == []  # nothing of the failed task is visible


def test_a_function_option_cannot_come_as_a_string_and_append_false_refuses_streams(tmp_path):
    with pytest.raises(OptionError, match=r"option 'to_string_fn' must be a Python function"):
        FilesSink(LocalFileSystem(), str(tmp_path), to_string_fn="lambda r: r")
    sink = FilesSink(LocalFileSystem(), str(tmp_path), append=False)
    ctx = WriteContext(partition_id=0, attempt=0, batch_id=3, query_id="q", schema=SCHEMA)
    with pytest.raises(SinkError, match=r"append=false .* each\s+micro-batch of a stream would delete"):
        sink.write_partition(iter(()), ctx)
