"""A batch read of plain lines goes to Spark's own text reader: the same rows as jetconnect's (#35)."""

from __future__ import annotations

import pytest

from jetconnect import sources
from jetconnect.errors import OptionError
from jetconnect.testing import spark_conf

#: Bytes where the two readers could disagree, each file a case.
AWKWARD = {
    "plain.txt": b"a\nb\nc\n",
    "no-final-newline.txt": b"x\ny",
    "crlf.txt": b"c1\r\nc2\r\n\r\nc4",
    "final-cr.txt": b"last\r",
    "empty-lines.txt": b"\n\n\nz\n\n",
    "non-ascii.txt": "h\u00e9llo w\u00f6rld\n\u65e5\u672c\u8a9e\n\U0001f642 \u00fc\u00df\r\n".encode(),
    "lone-cr.txt": b"p\rq\nr\r\r\ns\r",
    "only-newline.txt": b"\n",
    "empty.txt": b"",
    "a name with spaces #1 \u00e9.txt": b"odd name\n",
    # lines of varied lengths, one long, so Spark's and jetconnect's splits cut inside lines
    "long.txt": b"".join(b"%06d-" % i + b"w" * (i * 53 % 900) + b"\n" for i in range(400)) + b"L" * 70_000 + b"\r\nend",
}


@pytest.fixture
def awkward_dir(tmp_path):
    directory = tmp_path / "_in"  # a hidden-looking directory given by the user is still read
    directory.mkdir()
    for name, data in AWKWARD.items():
        (directory / name).write_bytes(data)
    # hidden files neither reader sees, and a sub-directory only a recursive read enters
    (directory / "_SUCCESS").write_bytes(b"hidden\n")
    (directory / ".part.txt").write_bytes(b"hidden\n")
    (directory / "day=1").mkdir()
    (directory / "day=1" / "nested.txt").write_bytes(b"nested\r\n")
    (directory / "_staging").mkdir()
    (directory / "_staging" / "x.txt").write_bytes(b"staged\n")
    return directory


def rows(spark, directory, reader: str, **options) -> list[str]:
    source = sources.files(directory=str(directory), batch_reader=reader, **options)
    return sorted(row.value for row in source.read(spark).collect())


def expected_lines(datas) -> list[str]:
    """jetconnect's rule: only "\\n" ends a line, one "\\r" before it (or at the end) is dropped."""
    expected = []
    for data in datas:
        lines = data.decode().split("\n")
        if lines[-1] == "":  # the newline ends the last line, it does not start another
            lines.pop()
        expected += [line.removesuffix("\r") for line in lines]
    return sorted(expected)


def test_spark_and_jetconnect_readers_give_the_same_rows(spark, awkward_dir):
    ours = rows(spark, awkward_dir, "jetconnect")
    assert ours == expected_lines(AWKWARD.values())
    # small Spark partitions: its reader cuts the long file inside lines too
    with spark_conf(spark, "spark.sql.files.maxPartitionBytes", str(64 << 10)):
        auto = sources.files(directory=str(awkward_dir)).read(spark)
        assert auto.rdd.getNumPartitions() > len(AWKWARD)
        assert sorted(row.value for row in auto.collect()) == ours
    assert rows(spark, awkward_dir, "spark") == ours
    assert "r\r" in ours and "s" in ours and "p\rq" in ours  # a lone CR stays inside its line
    recursive = expected_lines([*AWKWARD.values(), b"nested\r\n"])
    assert (
        rows(spark, awkward_dir, "spark", recursive=True)
        == recursive
        == rows(spark, awkward_dir, "jetconnect", recursive=True)
    )


def test_the_choice_is_visible_and_a_file_spark_reads_differently_keeps_jetconnects(spark, awkward_dir):
    auto = sources.files(directory=str(awkward_dir))
    choice = auto.batch_reader_choice(spark)
    assert choice.reader == "spark" and len(choice.uris) == len(AWKWARD)
    assert "FileScan text" in auto.read(spark)._jdf.queryExecution().toString()
    forced = sources.files(directory=str(awkward_dir), batch_reader="jetconnect")
    assert "FileScan text" not in forced.read(spark)._jdf.queryExecution().toString()

    # a byte order mark: Hadoop's reader drops it, jetconnect keeps it, so auto keeps jetconnect's
    (awkward_dir / "bom.txt").write_bytes(b"\xef\xbb\xbffirst\nsecond\n")
    assert [r.value for r in spark.read.text(f"file://{awkward_dir}/bom.txt").collect()][0] == "first"
    assert "byte order mark" in auto.batch_reader_choice(spark).reason
    assert rows(spark, awkward_dir, "auto") == expected_lines([*AWKWARD.values(), "\ufefffirst\nsecond\n".encode()])
    (awkward_dir / "bom.txt").unlink()

    # a file-name column, or Spark set to skip files jetconnect fails on: jetconnect's reader
    named = sources.files(directory=str(awkward_dir), include_file_name=True)
    assert "file_name" in named.batch_reader_choice(spark).reason
    assert {r.file_name for r in named.read(spark).collect()} >= {"plain.txt", "long.txt"}
    with pytest.raises(OptionError, match="batch_reader.*file_name"):
        sources.files(directory=str(awkward_dir), include_file_name=True, batch_reader="spark").read(spark)
    with spark_conf(spark, "spark.sql.files.ignoreCorruptFiles", "true"):
        assert "ignoreCorruptFiles" in auto.batch_reader_choice(spark).reason


def test_spark_reader_fails_naming_the_file_on_bytes_that_are_not_utf8(spark, tmp_path):
    (tmp_path / "bad.txt").write_bytes(b"fine\nbad \xff\xfe here\n")
    with pytest.raises(Exception) as failure:
        rows(spark, tmp_path, "spark")
    message = str(failure.value)
    assert f"{tmp_path}/bad.txt" in message and "utf-8" in message
