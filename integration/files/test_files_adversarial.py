"""The files family off the happy path, through a real SparkSession: options, offsets and files made
to hurt (a split size of 0, an edited checkpoint, a prefix with '..', a crafted or truncated Avro
file, values with line breaks) give typed errors naming what is wrong, and nothing is lost or wrong."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import fastavro
import pytest

from jetconnect import sinks, sources
from jetconnect.errors import OptionError
from jetconnect.testing import checkpoint_batches

HOSTILE = [
    "",
    None,
    "plain",
    "é€𝄞 ünïcödé",
    "\u2028 line separator",
    "\x85 next line",
    "nul \x00 inside",
    "tab\tand \r inside",
    "  spaces  ",
    "'quotes' \"and\" \\backslashes\\",
    "x" * 100_000,
]


def visible_lines(directory: Path) -> list[str]:
    return [
        line
        for path in sorted(directory.glob("*"))
        if path.is_file() and not path.name.startswith((".", "_"))
        for line in path.read_text().split("\n")[:-1]
    ]


@pytest.mark.parametrize("value", ["0", "-1", "lots"])
def test_a_watcher_split_size_below_one_fails_before_any_offset(spark, tmp_path, value: str) -> None:
    source_dir = tmp_path / "in"
    source_dir.mkdir()
    (source_dir / "a.txt").write_text("a0\na1\n")
    with pytest.raises(Exception, match=r"file_watcher'?: option 'max_split_bytes' must be"):
        stream = (
            spark.readStream.format("jetconnect.file_watcher")
            .option("directory", str(source_dir))
            .option("read_existing", "true")
            .option("max_split_bytes", value)
            .load()
        )
        stream.writeStream.format("memory").queryName(f"never_{value.strip('-')}").option(
            "checkpointLocation", str(tmp_path / "cp")
        ).start().processAllAvailable()
    assert checkpoint_batches(tmp_path / "cp", "offsets") == []
    with pytest.raises(OptionError, match=r"option 'max_split_bytes' must be at least 1, got 0"):
        sources.file_watcher(directory=str(source_dir), max_split_bytes=0)


def test_an_edited_offset_naming_a_file_outside_fails_the_query_naming_the_entry(spark, tmp_path) -> None:
    source_dir, out, checkpoint = tmp_path / "in", tmp_path / "out", tmp_path / "cp"
    source_dir.mkdir()
    (source_dir / "a.txt").write_text("a0\na1\n")
    (tmp_path / "secret.txt").write_text("not for the stream\n")

    def run() -> None:
        stream = sources.file_watcher(directory=str(source_dir), read_existing=True).read_stream(spark)
        query = sinks.files(directory=str(out)).write_stream(stream, checkpoint_location=str(checkpoint))
        try:
            query.processAllAvailable()
        finally:
            query.stop()

    run()
    assert sorted(visible_lines(out)) == ["a0", "a1"]
    # Someone edits the checkpoint: a new micro-batch whose offset names a file outside the directory.
    header, metadata, offset = (checkpoint / "offsets" / "0").read_text().splitlines()
    edited = {**json.loads(offset), "../secret.txt": 19}
    (checkpoint / "offsets" / "1").write_text("\n".join([header, metadata, json.dumps(edited)]))
    with pytest.raises(
        Exception, match=r"OffsetError: file_watcher: offset entry '../secret.txt' does not name a file inside"
    ):
        run()
    assert "not for the stream" not in visible_lines(out)


@pytest.mark.parametrize("option, value", [("prefix", "../escaped"), ("suffix", "/../../escaped.txt")])
def test_a_sink_name_option_with_a_path_is_refused_and_writes_nothing(spark, tmp_path, option: str, value: str) -> None:
    out = tmp_path / "deep" / "out"
    df = spark.createDataFrame([("x",)], "value string")
    for fmt in ("jetconnect.files", "jetconnect.avro"):
        with pytest.raises(Exception, match=rf"option '{option}' must be part of a file name"):
            df.write.format(fmt).option("directory", str(out)).option(option, value).mode("append").save()
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_a_crafted_avro_header_fails_fast_naming_file_and_byte(spark, tmp_path) -> None:
    # A metadata key of length -3 sent the header parser back to the start of the metadata: forever.
    (tmp_path / "crafted.avro").write_bytes(b"Obj\x01\x02\x05" + b"\x00" * 30)
    started = time.monotonic()
    with pytest.raises(Exception, match=r"crafted.avro' at byte 5: a metadata key has a negative length"):
        sources.avro(directory=str(tmp_path)).read(spark).collect()
    with pytest.raises(Exception, match=r"crafted.avro' at byte 5"):
        spark.read.format("jetconnect.avro").option("directory", str(tmp_path)).load().collect()
    assert time.monotonic() - started < 60


def test_files_cut_mid_record_fail_or_give_complete_records(spark, tmp_path) -> None:
    schema = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "id", "type": "long"}, {"name": "s", "type": "string"}],
    }
    whole = io.BytesIO()
    fastavro.writer(whole, schema, [{"id": i, "s": f"value {i}"} for i in range(500)], sync_interval=500)
    data = whole.getvalue()
    avro_dir, lines_dir = tmp_path / "avro", tmp_path / "lines"
    avro_dir.mkdir()
    lines_dir.mkdir()
    (avro_dir / "cut.avro").write_bytes(data[: len(data) - 20])  # the last block loses its end
    with pytest.raises(
        Exception,
        match=r"cut.avro' block at byte \d+ \(at byte \d+\): the block's data is \d+ bytes long but the file ends",
    ):
        sources.avro(directory=str(avro_dir), max_split_bytes=2000).read(spark).collect()
    # A lines file cut inside a UTF-8 sequence: an error naming the byte where the sequence starts.
    (lines_dir / "cut.txt").write_bytes("line\nhalf a €".encode()[:-1])
    with pytest.raises(Exception, match=r"cut.txt': bytes at offset 12 are not valid utf-8"):
        sources.files(directory=str(lines_dir), batch_reader="jetconnect").read(spark).collect()


def test_hostile_strings_round_trip_through_spark(spark, tmp_path) -> None:
    rows = [(i, v) for i, v in enumerate(HOSTILE)]
    df = spark.createDataFrame(rows, "id bigint, value string").repartition(3)
    sinks.avro(directory=str(tmp_path / "avro"), codec="zstd").write(df)
    back = sources.avro(directory=str(tmp_path / "avro")).read(spark).collect()
    assert sorted((r.id, r.value) for r in back) == rows
    sinks.files(directory=str(tmp_path / "lines")).write(df.select("value"))
    lines = sources.files(directory=str(tmp_path / "lines")).read(spark).collect()
    assert sorted(r.value for r in lines) == sorted("" if v is None else v for v in HOSTILE)  # null: an empty line
    # A value with a line break would read back as two lines: the write fails, naming the row.
    broken = spark.createDataFrame([("one",), ("two\nlines",)], "value string").coalesce(1)
    with pytest.raises(Exception, match=r"files sink: the value of row 1 .* holds a line break"):
        sinks.files(directory=str(tmp_path / "broken")).write(broken)
    assert [p for p in (tmp_path / "broken").glob("*") if p.is_file()] == []
