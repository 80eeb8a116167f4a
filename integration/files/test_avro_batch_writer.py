"""A plain batch write of the Avro sink goes to Spark's own Avro writer (spark-avro) when the
session has it: what both writers leave reads back as the same rows, through both readers, and
jetconnect's writer stays wherever the two could differ (#35). Where spark-avro runs: see
test_avro_batch_reader.py (the oldest-PySpark profile)."""

from __future__ import annotations

import json
import os

import pytest

from jetconnect import sinks, sources
from jetconnect.errors import OptionError
from jetconnect.files_family import spark_avro_refusal
from jetconnect.testing import spark_conf

#: Every type the sink writes, nulls in every nullable place, values at their edges.
COLUMNS = [
    "CAST(id AS INT) AS id",
    "CAST(id % 128 AS TINYINT) AS tiny",
    "CAST(id AS SMALLINT) AS small",
    "IF(id = 0, -9223372036854775808, id * 1000003) AS big",
    "IF(id % 7 = 0, CAST('NaN' AS FLOAT), CAST(id / 3 AS FLOAT)) AS real",
    "IF(id % 5 = 0, CAST('-Infinity' AS DOUBLE), id / 7) AS wide",
    "id % 2 = 0 AS flag",
    "CONCAT('é \u2603 ', id, IF(id % 3 = 0, '\u0000x', '')) AS text",
    "CAST(CONCAT('b', id) AS BINARY) AS raw",
    "IF(id % 4 = 0, NULL, CAST(id / 7 AS DECIMAL(12, 3))) AS money",
    "CAST(-id / 3 AS DECIMAL(38, 10)) AS wide_money",
    "DATE_ADD(DATE'0001-01-01', CAST(id * 997 AS INT)) AS day",
    "TIMESTAMP'1000-01-01 00:00:00 UTC' + make_interval(0, 0, 0, CAST(id AS INT), 0, 0, id / 1000) AS ts",
    "TIMESTAMP_NTZ'2024-02-29 23:59:59' + make_interval(0, 0, 0, 0, 0, 0, id) AS ntz",
    "IF(id % 3 = 0, NULL, CONCAT('n', id)) AS maybe",
    "ARRAY(id, IF(id % 2 = 0, NULL, id + 1)) AS arr",
    "MAP('k', id, 'n', CAST(NULL AS BIGINT)) AS m",
    "NAMED_STRUCT('x', id, 'y', NAMED_STRUCT('z', IF(id % 2 = 0, NULL, CAST(id AS STRING)))) AS nested",
    "ARRAY(NAMED_STRUCT('a', id, 'b', MAP('q', ARRAY(CAST(id AS DOUBLE))))) AS deep",
]


def frame(spark, rows: int = 300, partitions: int = 3):
    return spark.range(0, rows, numPartitions=partitions).selectExpr(*COLUMNS)


def by_id(df) -> list[str]:
    """The rows by id, each as its repr: NaN is not equal to itself, its repr is."""
    return [repr(row) for row in sorted(df.collect(), key=lambda row: row.id)]


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "zstd"])
def test_spark_and_jetconnect_writers_leave_the_same_rows(spark, need_spark_avro, tmp_path, codec) -> None:
    df = frame(spark)
    auto = sinks.avro(directory=str(tmp_path / "spark"), codec=codec)
    choice = auto.batch_writer_choice(df)
    assert choice.reader == "spark", choice.reason
    auto.write(df)
    sinks.avro(directory=str(tmp_path / "jetconnect"), codec=codec, batch_writer="jetconnect").write(df)
    # the directory as jetconnect's sink leaves it: Avro files only, no _SUCCESS, no .crc
    names = sorted(os.listdir(tmp_path / "spark"))
    assert names and all(n.startswith("part-") and n.endswith(".avro") for n in names), names
    expected = by_id(df)
    for written in ("spark", "jetconnect"):
        directory = str(tmp_path / written)
        assert by_id(sources.avro(directory=directory, batch_reader="jetconnect").read(spark)) == expected, written
        read = sources.avro(directory=directory)
        assert read.batch_reader_choice(spark).reader == "spark", written  # no .crc keeps it from Spark's
        assert by_id(read.read(spark)) == expected, written
    # a few values spelled out, so "equal" cannot mean "equally wrong"
    first = sorted(df.collect(), key=lambda row: row.id)[0]
    assert first.big == -(2**63) and first.day.year == 1 and first.ts.year == 1000 and first.text == "é \u2603 0\u0000x"


def test_a_second_write_appends(spark, need_spark_avro, tmp_path) -> None:
    sink = sinks.avro(directory=str(tmp_path))
    sink.write(frame(spark, 10, 2))
    sink.write(frame(spark, 10, 2))
    assert sources.avro(directory=str(tmp_path)).read(spark).count() == 20


def test_what_keeps_jetconnects_writer(spark, need_spark_avro, tmp_path) -> None:
    df = frame(spark, 5, 1)
    schema = json.dumps(
        {"type": "record", "name": "R", "fields": [{"name": "id", "type": "int"}, {"name": "text", "type": "string"}]}
    )
    cases = {
        "option 'schema'": (sinks.avro(directory=str(tmp_path / "a"), schema=schema), df.select("id", "text")),
        "option 'roll_bytes'": (sinks.avro(directory=str(tmp_path / "b"), roll_bytes=1000), df),
        "options 'prefix' and 'suffix'": (sinks.avro(directory=str(tmp_path / "c"), prefix="orders"), df),
        "not a name Avro's Java library": (
            sinks.avro(directory=str(tmp_path / "d")),
            df.selectExpr("id", "id AS `a b`"),
        ),
        "differ only by case": (sinks.avro(directory=str(tmp_path / "e")), df.selectExpr("id", "id AS ID")),
        "characters Spark takes for a glob": (sinks.avro(directory=str(tmp_path / "f[1]")), df),
    }
    for why, (sink, data) in cases.items():
        choice = sink.batch_writer_choice(data)
        assert choice.reader == "jetconnect" and why in choice.reason, (why, choice.reason)
        sink.write(data)  # jetconnect's writer writes what Spark's could not have
        assert by_id(sources.avro(directory=sink.staged.directory, batch_reader="jetconnect").read(spark)) == by_id(
            data
        ), why
    assert "write options" in sinks.avro(directory=str(tmp_path / "g")).batch_writer_choice(df, x="1").reason
    with spark_conf(spark, "spark.sql.avro.datetimeRebaseModeInWrite", "LEGACY"):
        assert "rebase" in sinks.avro(directory=str(tmp_path / "h")).batch_writer_choice(df).reason
        assert sinks.avro(directory=str(tmp_path / "h")).batch_writer_choice(df.select("id")).reader == "spark"
    # a type the sink refuses is its own error, whichever writer was asked for
    intervals = df.selectExpr("make_dt_interval(1, 0, 0, 0) AS gap")
    assert "refuses the schema" in sinks.avro(directory=str(tmp_path / "i")).batch_writer_choice(intervals).reason
    with pytest.raises(OptionError, match="batch_writer' is 'spark' but jetconnect's writer refuses the schema"):
        sinks.avro(directory=str(tmp_path / "i"), batch_writer="spark").write(intervals)
    with pytest.raises(OptionError, match="batch_writer' is 'spark' but option 'roll_bytes' is jetconnect's"):
        sinks.avro(directory=str(tmp_path / "j"), roll_bytes=5, batch_writer="spark").write(df)


def test_without_spark_avro_jetconnects_writer_says_why(spark, tmp_path) -> None:
    if spark_avro_refusal(spark) is not None:
        df = frame(spark, 20, 2)
        sink = sinks.avro(directory=str(tmp_path))
        choice = sink.batch_writer_choice(df)
        assert choice.reader == "jetconnect" and "spark-avro" in choice.reason
        sink.write(df)
        assert by_id(sources.avro(directory=str(tmp_path)).read(spark)) == by_id(df)
        with pytest.raises(OptionError, match="batch_writer' is 'spark' but Spark's Avro reader .spark-avro. is not"):
            sinks.avro(directory=str(tmp_path), batch_writer="spark").write(df)
    with pytest.raises(OptionError, match="option 'batch_writer' must be one of auto, jetconnect, spark; got 'native'"):
        sinks.avro(directory=str(tmp_path), batch_writer="native")
