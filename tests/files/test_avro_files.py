"""Avro container files by byte range, schema mapping both ways, sink files read by fastavro."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid

import fastavro
import pytest
from pyspark.sql.types import (
    ArrayType,
    DateType,
    DecimalType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from jetconnect._connector import CommitContext, WriteContext
from jetconnect._files.avro_schema import to_avro_schema, to_spark_schema
from jetconnect._files.filesystem import LocalFileSystem
from jetconnect._files.line_splits import FileRange
from jetconnect.errors import SchemaError, SinkError
from jetconnect_files.avro_container import AvroFileError, read_header
from jetconnect_files.avro_sink import AvroSink
from jetconnect_files.avro_source import AvroSource

SCHEMA = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
        {"name": "key", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": ["null", "long"]}},
        {"name": "state", "type": {"type": "enum", "name": "State", "symbols": ["NEW", "DONE"]}},
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 2}},
        {
            "name": "where",
            "type": {"type": "record", "name": "Address", "fields": [{"name": "city", "type": "string"}]},
        },
        {"name": "previous", "type": ["null", "State"], "default": None},
    ],
}


def _record(i: int) -> dict:
    return {
        "id": i,
        "note": None if i % 2 else f"n{i}",
        "day": dt.date(2024, 1, 1 + i % 28),
        "at": dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i),
        "local": dt.datetime(2024, 1, 1, 12) + dt.timedelta(microseconds=i),
        "price": decimal.Decimal(i) / 100,
        "key": str(uuid.UUID(int=i)),
        "tags": ["a"] * (i % 3),
        "attrs": {"k": i, "none": None},
        "state": "NEW",
        "hash": b"ab",
        "where": {"city": f"c{i}"},
        "previous": "DONE" if i % 3 == 0 else None,
    }


def _write(path, records, codec="null", sync_interval=200) -> None:
    with open(path, "wb") as out:
        fastavro.writer(out, fastavro.parse_schema(SCHEMA), records, codec=codec, sync_interval=sync_interval)


def test_spark_schema_from_writer_schema() -> None:
    schema = to_spark_schema(SCHEMA, "test")
    types = {f.name: f.dataType for f in schema.fields}
    assert types["id"] == LongType() and not schema["id"].nullable and schema["note"].nullable
    assert types["day"] == DateType() and types["at"] == TimestampType() and types["local"] == TimestampNTZType()
    assert types["price"] == DecimalType(9, 2) and types["key"] == StringType() and types["state"] == StringType()
    assert types["tags"] == ArrayType(StringType(), False)
    assert types["attrs"] == MapType(StringType(), LongType(), True)
    assert types["where"] == StructType([StructField("city", StringType(), False)])
    assert types["previous"] == StringType() and schema["previous"].nullable


def test_unsupported_union_names_the_field() -> None:
    bad = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "x", "type": {"type": "array", "items": ["int", "string"]}}],
    }
    with pytest.raises(SchemaError, match=r"field 'x\[\]' is a union"):
        to_spark_schema(bad, "test")


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "zstandard"])
def test_any_byte_ranges_read_every_record_once(tmp_path, codec: str) -> None:
    path = tmp_path / "orders.avro"
    records = [_record(i) for i in range(300)]
    _write(path, records, codec)
    size = path.stat().st_size
    source = AvroSource(LocalFileSystem(), str(tmp_path))
    for step in (size, 997, 151):
        split = [FileRange(str(path), start, min(start + step, size)) for start in range(0, size, step)]
        batches = list(source.read_split(split))
        ids = [row["id"] for b in batches for row in b.to_pylist()]
        assert ids == list(range(300)), step
    row = next(source.read_split([FileRange(str(path), 0, size)])).to_pylist()[3]
    assert (
        row["key"] == str(uuid.UUID(int=3)) and row["attrs"] == [("k", 3), ("none", None)] and row["previous"] == "DONE"
    )


def test_reader_schema_projects_every_file(tmp_path) -> None:
    _write(tmp_path / "a.avro", [_record(1)])
    reader = {
        "type": "record",
        "name": "Order",
        "namespace": "shop",
        "fields": [{"name": "id", "type": "long"}, {"name": "extra", "type": "string", "default": "x"}],
    }
    source = AvroSource(LocalFileSystem(), str(tmp_path), schema=json.dumps(reader))
    assert [f.name for f in source.schema().fields] == ["id", "extra"]
    split = source.splits()[0]
    assert [r for b in source.read_split(split) for r in b.to_pylist()] == [{"id": 1, "extra": "x"}]


def test_corrupt_files_name_file_and_block(tmp_path) -> None:
    (tmp_path / "not.avro").write_bytes(b"hello")
    with pytest.raises(AvroFileError, match="not an Avro container file"):
        read_header(LocalFileSystem(), str(tmp_path / "not.avro"))
    path = tmp_path / "bad.avro"
    _write(path, [_record(i) for i in range(50)], "deflate")
    data = bytearray(path.read_bytes())
    header = read_header(LocalFileSystem(), str(path))
    data[header.data_start + 10 : header.data_start + 30] = b"\xff" * 20
    path.write_bytes(bytes(data))
    source = AvroSource(LocalFileSystem(), str(tmp_path), glob="bad.avro")
    with pytest.raises(AvroFileError, match=rf"bad.avro' block at byte {header.data_start}"):
        list(source.read_split([FileRange(str(path), 0, len(data))]))


def test_sink_schema_derivation_and_fastavro_reads_the_files(tmp_path) -> None:
    import pyarrow as pa

    schema = StructType(
        [
            StructField("id", LongType(), False),
            StructField("n", IntegerType()),
            StructField("m", MapType(StringType(), ArrayType(LongType()))),
            StructField("s", StructType([StructField("x", MapType(StringType(), StringType()))])),
        ]
    )
    avro = to_avro_schema(schema)
    assert avro["fields"][0] == {"name": "id", "type": "long"}
    assert avro["fields"][1]["type"] == ["null", "int"]
    from jetconnect._arrow_schema import to_arrow_schema

    batch = pa.RecordBatch.from_pylist(
        [{"id": 1, "n": None, "m": {"a": [1, None]}, "s": {"x": {"k": "v"}}}], schema=to_arrow_schema(schema)
    )
    sink = AvroSink(LocalFileSystem(), str(tmp_path), codec="zstd")
    ctx = WriteContext(partition_id=0, attempt=0, batch_id=None, query_id=None, schema=schema)
    sink.commit([sink.write_partition(iter([batch]), ctx)], CommitContext(None, None))
    (written,) = list(tmp_path.glob("*.avro"))
    with open(written, "rb") as f:
        assert list(fastavro.reader(f)) == [{"id": 1, "n": None, "m": {"a": [1, None]}, "s": {"x": {"k": "v"}}}]


def test_sink_mismatching_record_names_it(tmp_path) -> None:
    import pyarrow as pa

    schema = StructType([StructField("id", LongType())])
    user = {"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}]}  # not nullable
    sink = AvroSink(LocalFileSystem(), str(tmp_path), schema=json.dumps(user))
    batch = pa.RecordBatch.from_pylist([{"id": 1}, {"id": None}])
    ctx = WriteContext(partition_id=0, attempt=0, batch_id=1, query_id="q", schema=schema)
    with pytest.raises(SinkError, match=r"record #1 of this partition"):
        sink.write_partition(iter([batch]), ctx)
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_sink_rolls_files_and_numbers_records_across_them(tmp_path) -> None:
    import pyarrow as pa

    schema = StructType([StructField("id", LongType())])
    user = {"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}]}
    sink = AvroSink(LocalFileSystem(), str(tmp_path), schema=json.dumps(user), roll_bytes=1)
    batches = [pa.RecordBatch.from_pylist([{"id": i}, {"id": i + 1}]) for i in (0, 2, 4)]
    ctx = WriteContext(partition_id=0, attempt=0, batch_id=3, query_id="q", schema=schema)
    sink.commit([sink.write_partition(iter(batches), ctx)], CommitContext(3, "q"))
    files = sorted(tmp_path.glob("*.avro"))
    assert len(files) == 3, "roll_bytes=1: a new file after every batch"
    read = []
    for path in files:
        with open(path, "rb") as f:
            read.append([r["id"] for r in fastavro.reader(f)])
    assert read == [[0, 1], [2, 3], [4, 5]]

    bad = [*batches[:2], pa.RecordBatch.from_pylist([{"id": 4}, {"id": None}])]
    with pytest.raises(SinkError, match=r"record #5 of this partition"):
        sink.write_partition(
            iter(bad), WriteContext(partition_id=1, attempt=0, batch_id=4, query_id="q", schema=schema)
        )


def test_records_of_an_empty_schema_are_counted_and_a_crafted_count_is_refused(tmp_path) -> None:
    empty = {"type": "record", "name": "E", "fields": []}
    with open(tmp_path / "e.avro", "wb") as out:
        fastavro.writer(out, empty, [{}] * 1000, sync_interval=10)
    source = AvroSource(LocalFileSystem(), str(tmp_path))
    assert sum(b.num_rows for split in source.splits() for b in source.read_split(split)) == 1000
    # Records of no bytes cannot bound a block's count by its size: a huge count is corruption, not a loop.
    data = (tmp_path / "e.avro").read_bytes()
    header = read_header(LocalFileSystem(), str(tmp_path / "e.avro"))
    crafted = data[: header.data_start] + b"\xfe\xff\xff\xff\xff\x0f" + b"\x00" + header.sync
    (tmp_path / "e.avro").write_bytes(crafted)
    with pytest.raises(
        AvroFileError, match=rf"block at byte {header.data_start}: it declares 274877906943 records in 0 bytes"
    ):
        list(source.read_split([FileRange(str(tmp_path / "e.avro"), 0, len(crafted))]))


def test_sink_writes_timestamps_and_dates_as_avro_stores_them(tmp_path) -> None:
    """Timestamps (with a zone other than UTC too, and without one) and dates go to fastavro as the
    numbers Avro stores (#35); a timestamp-millis field of the user's still gets datetimes. Read
    back by fastavro, every value and null is the one written."""
    import pyarrow as pa

    schema = StructType(
        [
            StructField("utc", TimestampType()),
            StructField("paris", TimestampType()),
            StructField("ntz", TimestampNTZType()),
            StructField("day", DateType()),
            StructField("ms", TimestampType()),
        ]
    )
    user = to_avro_schema(schema)
    user["fields"][4]["type"] = ["null", {"type": "long", "logicalType": "timestamp-millis"}]
    at = dt.datetime(2024, 3, 31, 0, 59, 59, 123456, tzinfo=dt.UTC)
    rows = [
        {
            "utc": at,
            "paris": at,
            "ntz": dt.datetime(1969, 12, 31, 23, 59, 59, 1),
            "day": dt.date(1969, 12, 31),
            "ms": at,
        },
        {"utc": None, "paris": None, "ntz": None, "day": None, "ms": None},
    ]
    arrow = pa.schema(
        [
            ("utc", pa.timestamp("us", tz="UTC")),
            ("paris", pa.timestamp("us", tz="Europe/Paris")),
            ("ntz", pa.timestamp("us")),
            ("day", pa.date32()),
            ("ms", pa.timestamp("us", tz="UTC")),
        ]
    )
    batch = pa.RecordBatch.from_pylist(rows, schema=arrow)
    sink = AvroSink(LocalFileSystem(), str(tmp_path), schema=json.dumps(user))
    ctx = WriteContext(partition_id=0, attempt=0, batch_id=None, query_id=None, schema=schema)
    sink.commit([sink.write_partition(iter([batch]), ctx)], CommitContext(None, None))
    (written,) = list(tmp_path.glob("*.avro"))
    with open(written, "rb") as f:
        got = list(fastavro.reader(f))
    millis = at.replace(microsecond=123000)
    assert got == [{**rows[0], "ms": millis}, rows[1]]
