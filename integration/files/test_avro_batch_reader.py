"""A batch read of Avro files goes to Spark's own Avro reader (spark-avro) when the session has it:
the same rows as jetconnect's, and jetconnect's reader wherever the two could differ (#35).

spark-avro's jar exists on Maven Central only up to PySpark 4.2.0: the oldest-PySpark profile
(scripts/test-spark-oldest.sh) puts it on the shared session, and there the tests that need it must
run (in CI they fail without it); on the main venv they skip, and the test of a session without
spark-avro runs instead.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from pathlib import Path

import fastavro
import pytest

from jetconnect import sources
from jetconnect.errors import OptionError
from jetconnect.files_family import spark_avro_refusal
from jetconnect.testing import spark_conf
from jetconnect_files.avro_source import AvroSource

UTC = dt.UTC
SCHEMA = {
    "type": "record",
    "name": "Everything",
    "namespace": "jetconnect.test",
    "fields": [
        {"name": "id", "type": "int"},
        {"name": "flag", "type": "boolean"},
        {"name": "big", "type": "long"},
        {"name": "real", "type": "float"},
        {"name": "wide", "type": "double"},
        {"name": "raw", "type": "bytes"},
        {"name": "text", "type": "string"},
        {"name": "maybe_text", "type": ["null", "string"], "default": None},
        {"name": "maybe_long", "type": ["long", "null"], "default": 0},
        {
            "name": "inner",
            "type": {
                "type": "record",
                "name": "Inner",
                "fields": [
                    {"name": "x", "type": "int"},
                    {"name": "y", "type": ["null", "string"]},
                    {
                        "name": "deep",
                        "type": {"type": "record", "name": "Deep", "fields": [{"name": "z", "type": "double"}]},
                    },
                ],
            },
        },
        {"name": "maybe_inner", "type": ["null", "Inner"], "default": None},
        {"name": "numbers", "type": {"type": "array", "items": "int"}},
        {"name": "words", "type": {"type": "array", "items": ["null", "string"]}},
        {"name": "inners", "type": {"type": "array", "items": "Inner"}},
        {"name": "counts", "type": {"type": "map", "values": "long"}},
        {"name": "maybe_scores", "type": {"type": "map", "values": ["null", "double"]}},
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}},
        {"name": "four", "type": {"type": "fixed", "name": "Four", "size": 4}},
        {"name": "money", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
        {
            "name": "fixed_money",
            "type": {
                "type": "fixed",
                "name": "Money",
                "size": 9,
                "logicalType": "decimal",
                "precision": 20,
                "scale": 4,
            },
        },
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "local_ms", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "local_us", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "key", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "maybe_day", "type": ["null", {"type": "int", "logicalType": "date"}], "default": None},
    ],
}


def record(i: int) -> dict:
    """Record ``i``: edge values (extremes, empty, non-ASCII, ancient and pre-epoch dates) by ``i``."""
    odd = i % 2 == 1
    inner = {"x": -i, "y": None if odd else f"y\u00e9{i}", "deep": {"z": -0.0 if odd else 1e308}}
    return {
        "id": i,
        "flag": odd,
        "big": [-(2**63), 2**63 - 1, 0, i][i % 4],
        "real": [float("inf"), -1.5, 3.4028234663852886e38, 1e-45][i % 4],
        "wide": [float("-inf"), 2.2250738585072014e-308, -0.0, 1 / 3][i % 4],
        "raw": bytes(range(i % 7 * 37 % 256)) if i % 3 else b"",
        "text": ["", "plain", "h\u00e9llo w\u00f6rld \u65e5\u672c \U0001f642", "tab\tnew\nline\x00nul"][i % 4] + str(i),
        "maybe_text": None if i % 3 == 0 else f"t{i}",
        "maybe_long": None if odd else -i,
        "inner": inner,
        "maybe_inner": None if i % 3 == 1 else inner,
        "numbers": list(range(i % 5)),
        "words": [None, "w", "\u00fc"][: i % 4],
        "inners": [inner] * (i % 3),
        "counts": {} if odd else {"a": i, "\u00e9": -i, "": 0},
        "maybe_scores": {"n": None, "v": i / 4},
        "color": ["RED", "GREEN", "BLUE"][i % 3],
        "four": bytes([i % 256, 0, 255, 7]),
        "money": decimal.Decimal(f"{(-1) ** i * i * 1234567}.{i % 100:02d}"),
        "fixed_money": decimal.Decimal(f"{(-1) ** i * (10**15 + i)}.{i % 10000:04d}"),
        "day": [dt.date(1000, 1, 1), dt.date(1969, 12, 31), dt.date(2024, 2, 29), dt.date(9999, 12, 31)][i % 4],
        "at_ms": dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC) + dt.timedelta(milliseconds=i),
        "at_us": [
            dt.datetime(1500, 6, 1, 12, 0, 0, 1, tzinfo=UTC),
            dt.datetime(1970, 1, 1, tzinfo=UTC),
            dt.datetime(2038, 1, 19, 3, 14, 8, 999999, tzinfo=UTC),
            dt.datetime(2024, 3, 31, 2, 30, tzinfo=UTC),
        ][i % 4],
        "local_ms": dt.datetime(2024, 3, 31, 2, 30, 0, 123000) + dt.timedelta(days=i),
        "local_us": dt.datetime(1601, 1, 1, 0, 0, 0, 7) + dt.timedelta(microseconds=i),
        "key": uuid.UUID(int=i * 2**64 + i),
        "maybe_day": None if odd else dt.date(1, 1, 1) + dt.timedelta(days=i),
    }


def write(path: Path, schema: dict, records: list[dict], codec: str = "null", **options) -> Path:
    with open(path, "wb") as out:
        fastavro.writer(out, fastavro.parse_schema(schema), records, codec=codec, **options)
    return path


@pytest.fixture
def awkward_dir(tmp_path):
    """Valid but awkward files: every type, three codecs, blocks of a few records, an empty file."""
    directory = tmp_path / "_avro"  # a hidden-looking directory given by the user is still read
    directory.mkdir()
    write(directory / "plain.avro", SCHEMA, [record(i) for i in range(0, 40)], sync_interval=300)
    write(directory / "deflate.avro", SCHEMA, [record(i) for i in range(40, 70)], codec="deflate", sync_interval=500)
    write(directory / "snappy.avro", SCHEMA, [record(i) for i in range(70, 90)], codec="snappy")
    write(directory / "empty.avro", SCHEMA, [])
    write(directory / "a name with spaces #1 \u00e9.avro", SCHEMA, [record(90)])
    (directory / "_SUCCESS").write_bytes(b"")  # hidden: neither reader sees it
    return directory


def rows_by_id(df) -> list:
    return sorted(df.collect(), key=lambda row: row.id)


def plan(df) -> str:
    return df._jdf.queryExecution().toString()


def test_spark_and_jetconnect_readers_give_the_same_rows(spark, need_spark_avro, awkward_dir):
    auto = sources.avro(directory=str(awkward_dir))
    choice = auto.batch_reader_choice(spark)
    assert choice.reader == "spark", choice.reason
    assert len(choice.uris) == 5
    theirs = auto.read(spark)
    assert "FileScan avro" in plan(theirs)
    ours = sources.avro(directory=str(awkward_dir), batch_reader="jetconnect").read(spark)
    assert "FileScan avro" not in plan(ours)
    expected = rows_by_id(ours)
    assert [row.id for row in expected] == list(range(91))
    assert rows_by_id(theirs) == expected
    assert rows_by_id(sources.avro(directory=str(awkward_dir), batch_reader="spark").read(spark)) == expected
    # names and types are jetconnect's; Spark's file sources say every field is nullable
    assert [(f.name, f.dataType.simpleString()) for f in theirs.schema.fields] == [
        (f.name, f.dataType.simpleString()) for f in ours.schema.fields
    ]
    # a few values spelled out, so "equal" cannot mean "equally wrong"
    first = expected[0]
    assert first.big == -(2**63) and first.text == "0" and first.day == dt.date(1000, 1, 1)
    assert first.color == "RED" and first.four == bytearray([0, 0, 255, 7]) and first.key == str(uuid.UUID(int=0))
    assert (
        expected[1].money == decimal.Decimal("-1234567.01")
        and expected[1].inner.deep.z == 0.0
        and expected[1].maybe_inner is None
    )
    # a reader schema that is the files' own changes nothing
    same = sources.avro(directory=str(awkward_dir), schema=json.dumps(SCHEMA))
    assert same.batch_reader_choice(spark).reader == "spark"


def test_what_keeps_jetconnects_reader(spark, need_spark_avro, awkward_dir, tmp_path):
    def choice(directory=awkward_dir, **options):
        return sources.avro(directory=str(directory), **options).batch_reader_choice(spark)

    # a reader schema that projects the files: jetconnect resolves it, Spark's reader would not
    projected = {**SCHEMA, "fields": [f for f in SCHEMA["fields"] if f["name"] in ("id", "text")]}
    assert "another writer schema than option 'schema'" in choice(schema=json.dumps(projected)).reason
    with pytest.raises(OptionError, match="batch_reader.*another writer schema"):
        choice(schema=json.dumps(projected), batch_reader="spark")
    assert sources.avro(directory=str(awkward_dir), schema=json.dumps(projected)).read(spark).count() == 91
    # split sizes, Spark set to skip files jetconnect fails on
    assert "min_splits" in choice(min_splits=3).reason
    with spark_conf(spark, "spark.sql.files.ignoreCorruptFiles", "true"):
        assert "ignoreCorruptFiles" in choice().reason
    with spark_conf(spark, "spark.sql.files.ignoreMissingFiles", "true"):
        assert "ignoreMissingFiles" in choice().reason
    # a file written with another schema than the first file's
    evolved = {**SCHEMA, "fields": [*SCHEMA["fields"], {"name": "extra", "type": "int", "default": 7}]}
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    write(mixed / "a.avro", SCHEMA, [record(1)])
    write(mixed / "b.avro", evolved, [{**record(2), "extra": 3}])
    assert "another writer schema" in choice(mixed).reason
    # a name Spark reads as a glob; a Hadoop checksum file beside one; a file Spark wrote in its
    # legacy calendar (its reader would rebase the dates)
    odd = tmp_path / "odd"
    odd.mkdir()
    write(odd / "a[1].avro", SCHEMA, [record(1)])
    assert "glob or a URI" in choice(odd).reason
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    write(legacy / "old.avro", SCHEMA, [record(0)], metadata={"org.apache.spark.version": "2.4.8"})
    assert "legacy calendar" in choice(legacy).reason
    (legacy / "old.avro").unlink()
    write(legacy / "new.avro", SCHEMA, [record(0)], metadata={"org.apache.spark.version": "3.5.0"})
    assert choice(legacy).reader == "spark"
    (legacy / ".new.avro.crc").write_bytes(b"stale")
    assert "checksum file" in choice(legacy).reason
    # a file without the .avro suffix (a glob of "*"), with Spark told to skip such files: read
    named = tmp_path / "named"
    named.mkdir()
    write(named / "part-0", SCHEMA, [record(5)])
    with spark_conf(spark, "avro.mapred.ignore.inputs.without.extension", "true"):
        with pytest.raises(Exception, match="No Avro files found"):  # Spark alone skips it (beside others: silently)
            spark.read.format("avro").load(f"file://{named}/part-0").count()
        handed = sources.avro(directory=str(named), glob="*")
        assert handed.batch_reader_choice(spark).reader == "spark"
        assert [r.id for r in handed.read(spark).collect()] == [5]
    # a header jetconnect's reader cannot take: it says what is wrong, not Spark's
    (odd / "junk.avro").write_bytes(b"not avro at all")
    (odd / "a[1].avro").unlink()
    reason = choice(odd).reason
    assert "junk.avro" in reason and "cannot take" in reason and "magic" in reason
    # field names equal but for case: Spark's reader matches them ignoring case (or refuses them)
    twins = tmp_path / "twins"
    twins.mkdir()
    pair = {"type": "record", "name": "P", "fields": [{"name": "a", "type": "int"}, {"name": "A", "type": "int"}]}
    write(
        twins / "t.avro",
        {"type": "record", "name": "T", "fields": [{"name": "n", "type": pair}]},
        [{"n": {"a": 1, "A": 2}}],
    )
    reason = choice(twins).reason
    assert "differ only by case" in reason or "already exists" in reason, reason
    assert sources.avro(directory=str(twins)).read(spark).collect()[0].n.asDict() == {"a": 1, "A": 2}


def test_unions_spark_reads_differently_keep_jetconnects_reader(spark, need_spark_avro, tmp_path):
    """A union of several types: Spark's reader makes it a struct of members, jetconnect refuses it
    (a reader schema picks a branch); auto must not turn that refusal into Spark's struct."""
    union = {"type": "record", "name": "U", "fields": [{"name": "v", "type": ["null", "int", "string"]}]}
    write(tmp_path / "u.avro", union, [{"v": 1}, {"v": "one"}, {"v": None}])
    assert spark.read.format("avro").load(f"file://{tmp_path}/u.avro").schema["v"].dataType.typeName() == "struct"
    auto = sources.avro(directory=str(tmp_path))
    assert "refuses the schema" in auto.batch_reader_choice(spark).reason
    with pytest.raises(Exception, match="field 'v' is a union of"):  # jetconnect's SchemaError, through Spark
        auto.read(spark).collect()
    with pytest.raises(OptionError, match="batch_reader.*union"):
        sources.avro(directory=str(tmp_path), batch_reader="spark").read(spark)
    # a time of day: whatever Spark maps it to, auto gives jetconnect's rows
    timed = tmp_path / "timed"
    timed.mkdir()
    time_schema = {
        "type": "record",
        "name": "Tm",
        "fields": [{"name": "at", "type": {"type": "int", "logicalType": "time-millis"}}],
    }
    write(timed / "t.avro", time_schema, [{"at": dt.time(23, 59, 59, 999000)}])
    got = sources.avro(directory=str(timed)).read(spark).collect()
    assert got == sources.avro(directory=str(timed), batch_reader="jetconnect").read(spark).collect()
    assert got[0].at == 86_399_999


def test_a_string_that_is_not_utf8_fails_spark_reader_naming_the_file(spark, need_spark_avro, tmp_path):
    schema = {
        "type": "record",
        "name": "S",
        "fields": [{"name": "id", "type": "int"}, {"name": "names", "type": {"type": "array", "items": "string"}}],
    }
    path = write(tmp_path / "bad.avro", schema, [{"id": 1, "names": ["ok", "\u00e9tat"]}])
    path.write_bytes(path.read_bytes().replace("\u00e9tat".encode(), b"\xff\xfetat"))  # same length
    auto = sources.avro(directory=str(tmp_path))
    assert auto.batch_reader_choice(spark).reader == "spark"
    with pytest.raises(Exception) as failure:
        auto.read(spark).collect()
    assert f"{path}" in str(failure.value) and "not UTF-8" in str(failure.value)
    with pytest.raises(Exception, match=r"bad\.avro' block at byte \d+ cannot be decoded"):
        sources.avro(directory=str(tmp_path), batch_reader="jetconnect").read(spark).collect()


def test_no_file_keeps_jetconnects_reader(spark, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no file matches" in sources.avro(directory=str(empty)).batch_reader_choice(spark).reason
    with pytest.raises(OptionError, match="batch_reader.*no file matches"):
        sources.avro(directory=str(empty), batch_reader="spark").read(spark)
    with pytest.raises(OptionError, match="batch_reader.*does not exist"):
        sources.avro(directory=str(tmp_path / "nowhere"), batch_reader="spark").read(spark)


def test_without_spark_avro_jetconnects_reader_says_why(spark, tmp_path):
    if spark_avro_refusal(spark) is None:
        pytest.skip("this session has spark-avro (the oldest-PySpark profile): the hand-off is tested instead")
    write(tmp_path / "a.avro", SCHEMA, [record(1), record(2)])
    auto = sources.avro(directory=str(tmp_path))
    choice = auto.batch_reader_choice(spark)
    assert choice.reader == "jetconnect" and "spark-avro" in choice.reason
    assert [r.id for r in rows_by_id(auto.read(spark))] == [1, 2]
    with pytest.raises(
        OptionError,
        match="option 'batch_reader' is 'spark' but Spark's Avro reader .spark-avro. is not on this session",
    ):
        sources.avro(directory=str(tmp_path), batch_reader="spark").read(spark)
    with pytest.raises(OptionError, match="batch_reader.*must be one of"):
        sources.avro(directory=str(tmp_path), batch_reader="native")


def test_hdfs_style_file_systems_keep_jetconnects_reader(spark, tmp_path):
    """A file system Spark has no URI for (the HDFS plugin's Avro) stays on jetconnect's reader."""
    from jetconnect.files_family import LocalFileSystem

    class Elsewhere:  # the local disk behind another FileSystem class, as WebHDFS is for Spark
        def __init__(self) -> None:
            self.local = LocalFileSystem()

        def __getattr__(self, name: str):
            return getattr(self.local, name)

    write(tmp_path / "a.avro", SCHEMA, [record(1)])
    source = AvroSource(Elsewhere(), str(tmp_path))
    assert "no Spark URI is known for files on Elsewhere" in source.batch_reader_choice(spark).reason
