"""Jet's mapping function (``mapper``) of the files and Avro sources through a real SparkSession:
batch, and the file watcher streaming from a checkpoint, restarted once."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import fastavro
import pytest

from jetconnect import sinks, sources

SCHEMA = "file string, id bigint, amount double"


def parse(file: str, line: str):
    if line.startswith("id,"):
        return None  # the header: Jet's rule, None leaves the line out
    id_, amount = line.split(",")
    return (file, int(id_), float(amount))


def csv(path: Path, ids: range) -> None:
    path.write_text("id,amount\n" + "".join(f"{i},{i / 4}\n" for i in ids))


def test_files_mapper_makes_each_row_through_spark(spark, tmp_path):
    csv(tmp_path / "a.csv", range(0, 3000))
    (tmp_path / "day").mkdir()
    csv(tmp_path / "day" / "b.csv", range(3000, 3010))
    source = sources.files(
        directory=str(tmp_path), glob="*.csv", recursive=True, mapper=parse, schema=SCHEMA, max_split_bytes=4096
    )
    df = source.read(spark)
    assert df.schema.simpleString() == "struct<file:string,id:bigint,amount:double>"
    rows = sorted(tuple(r) for r in df.collect())
    assert rows == sorted(
        [("a.csv", i, i / 4) for i in range(3000)] + [("day/b.csv", i, i / 4) for i in range(3000, 3010)]
    )
    assert "BatchScan" in df._jdf.queryExecution().executedPlan().toString()  # jetconnect's reader, not FileScan text


def test_a_mapper_that_raises_fails_the_query_naming_the_file_and_line(spark, tmp_path):
    csv(tmp_path / "a.csv", range(0, 100))

    def strict(file, line):
        if line == "57,14.25":
            raise ValueError("unexpected row")
        return parse(file, line)

    with pytest.raises(
        Exception, match=rf"the mapper raised ValueError for line 59 of '{tmp_path}/a.csv': unexpected row"
    ):
        sources.files(directory=str(tmp_path), mapper=strict, schema=SCHEMA, max_split_bytes=300).read(spark).collect()
    with pytest.raises(
        Exception, match=r"the mapper's row for line 1 of '.*a.csv', \('a.csv', 'id', 0.0\), does not match"
    ):
        sources.files(
            directory=str(tmp_path), mapper=lambda f, line: (f, *line.split(",")[:1], 0.0), schema=SCHEMA
        ).read(spark).collect()


@pytest.mark.parametrize("name", ["files", "file_watcher", "avro"])
def test_a_mapper_given_as_a_spark_string_option_is_refused_naming_it(spark, tmp_path, name):
    reader = spark.readStream if name == "file_watcher" else spark.read
    with pytest.raises(
        Exception, match=r"option 'mapper' must be a Python function .*a string option cannot carry one"
    ):
        reader.format(f"jetconnect.{name}").option("directory", str(tmp_path)).option("mapper", "lambda f, l: l").load()


def test_file_watcher_mapper_streams_exactly_once_across_a_restart(spark, tmp_path):
    watched, out, checkpoint = tmp_path / "in", tmp_path / "out", tmp_path / "cp"
    watched.mkdir()
    csv(watched / "a.csv", range(0, 50))

    def run() -> None:
        stream = sources.file_watcher(
            directory=str(watched), read_existing=True, mapper=parse, schema=SCHEMA
        ).read_stream(spark)
        query = sinks.files(directory=str(out)).write_stream(
            stream.selectExpr("concat_ws('|', file, id, amount) AS value"),
            checkpoint_location=str(checkpoint),
            trigger={"availableNow": True},
        )
        query.awaitTermination(300)
        assert query.exception() is None

    run()
    with open(watched / "a.csv", "a") as more:
        more.write("".join(f"{i},{i / 4}\n" for i in range(50, 80)))
    csv(watched / "b.csv", range(80, 90))
    run()
    lines = [line for p in sorted(out.glob("part-*")) for line in p.read_text().splitlines()]
    expected = [f"a.csv|{i}|{i / 4}" for i in range(80)] + [f"b.csv|{i}|{i / 4}" for i in range(80, 90)]
    assert sorted(lines) == sorted(expected)  # each once: none lost at the restart, none twice


def test_avro_mapper_maps_each_record_through_spark(spark, tmp_path):
    schema = {
        "type": "record",
        "name": "Event",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        ],
    }
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    for n in range(2):
        with open(tmp_path / f"e{n}.avro", "wb") as f:
            fastavro.writer(
                f, schema, [{"id": i, "at": start + dt.timedelta(minutes=i)} for i in range(n * 500, n * 500 + 500)]
            )
    source = sources.avro(
        directory=str(tmp_path),
        mapper=lambda file, r: (file, r["id"], r["at"].minute) if r["id"] % 2 else None,
        mapped_schema="file string, id bigint, minute int",
    )
    rows = sorted(tuple(r) for r in source.read(spark).collect())
    assert rows == [(f"e{i // 500}.avro", i, (start + dt.timedelta(minutes=i)).minute) for i in range(1, 1000, 2)]
    with pytest.raises(Exception, match=r"option 'batch_reader' is 'spark' but a mapper runs in Python"):
        sources.avro(directory=str(tmp_path), mapper=lambda f, r: str(r["id"]), batch_reader="spark").read(spark)
