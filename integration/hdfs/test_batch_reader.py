"""A batch read of plain lines goes to Spark's own hdfs:// reader: the same rows as jetconnect's (#35)."""

from __future__ import annotations

import pytest

from jetconnect import sources
from jetconnect.errors import OptionError

WEBHDFS_URL, USER = "http://127.0.0.1:9870", "root"  # scripts/servers/hdfs.sh
BLOCK = 1 << 20

#: Bytes where the two readers could disagree, each file a case.
AWKWARD = {
    "plain.txt": b"a\nb\nc\n",
    "no-final-newline.txt": b"x\ny",
    "crlf.txt": b"c1\r\nc2\r\n\r\nc4",
    "empty-lines.txt": b"\n\n\nz\n\n",
    "non-ascii.txt": "h\u00e9llo w\u00f6rld\n\u65e5\u672c\u8a9e\n\U0001f642 \u00fc\u00df\r\n".encode(),
    "lone-cr.txt": b"p\rq\nr\r\r\ns\r",
    "only-newline.txt": b"\n",
    "empty.txt": b"",
    # lines of varied lengths across 1 MiB blocks, one of them longer than a block
    "blocks.txt": b"".join(b"%06d-" % i + b"w" * (i * 53 % 900) + b"\n" for i in range(4000))
    + b"L" * (BLOCK + 7)
    + b"\r\nafter\n",
}


def write(fs, path: str, data: bytes) -> None:
    with fs.create(path) as out:
        out.write(data)


@pytest.fixture
def awkward_dir(hdfs_fs, hdfs_dir) -> str:
    for name, data in AWKWARD.items():
        write(hdfs_fs, f"{hdfs_dir}/{name}", data)
    write(hdfs_fs, f"{hdfs_dir}/_SUCCESS", b"hidden\n")  # neither reader sees hidden files
    write(hdfs_fs, f"{hdfs_dir}/sub/nested.txt", b"not recursive\n")
    return hdfs_dir


def rows(spark, path: str, reader: str, **options) -> list[str]:
    source = sources.hdfs(WEBHDFS_URL, path, user=USER, batch_reader=reader, **options)
    return sorted(row.value for row in source.read(spark).collect())


def test_spark_and_jetconnect_readers_give_the_same_rows(spark, awkward_dir):
    ours = rows(spark, awkward_dir, "jetconnect")
    theirs = rows(spark, awkward_dir, "spark")
    assert theirs == ours
    # and they are the lines the bytes hold, read by jetconnect's rule (only "\n" ends a line)
    expected = []
    for data in AWKWARD.values():
        lines = data.decode().split("\n")
        if lines[-1] == "":  # the newline ends the last line, it does not start another
            lines.pop()
        expected += [line.removesuffix("\r") for line in lines]
    assert ours == sorted(expected)
    assert "r\r" in ours and "s" in ours and "p\rq" in ours  # a lone CR stays inside its line


def test_the_choice_is_visible_and_can_be_forced(spark, awkward_dir):
    auto = sources.hdfs(WEBHDFS_URL, awkward_dir, user=USER)
    choice = auto.batch_reader_choice()
    assert choice.reader == "spark" and len(choice.uris) == len(AWKWARD)
    assert all(uri.startswith("hdfs://127.0.0.1:8020/") for uri in choice.uris)
    assert "FileScan text" in auto.read(spark)._jdf.queryExecution().toString()
    forced = sources.hdfs(WEBHDFS_URL, awkward_dir, user=USER, batch_reader="jetconnect")
    assert "FileScan text" not in forced.read(spark)._jdf.queryExecution().toString()
    # a user's own hdfs:// path names the RPC address
    assert sources.hdfs(WEBHDFS_URL, f"hdfs://127.0.0.1:8020{awkward_dir}").batch_reader_choice().reader == "spark"

    mapped = sources.hdfs(WEBHDFS_URL, awkward_dir, user=USER, mapper=lambda path, line: (line.upper(),))
    assert mapped.batch_reader_choice().reader == "jetconnect"
    assert "mapper" in mapped.batch_reader_choice().reason
    with pytest.raises(OptionError, match="batch_reader.*include_path"):
        sources.hdfs(WEBHDFS_URL, awkward_dir, user=USER, include_path=True, batch_reader="spark").read(spark)


def test_spark_reader_fails_naming_the_file_on_bytes_that_are_not_utf8(spark, hdfs_fs, hdfs_dir):
    write(hdfs_fs, f"{hdfs_dir}/bad.txt", b"fine\nbad \xff\xfe here\n")
    with pytest.raises(Exception) as failure:
        rows(spark, hdfs_dir, "spark")
    message = str(failure.value)
    assert f"{hdfs_dir}/bad.txt" in message and "utf-8" in message
