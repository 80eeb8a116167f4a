"""Which reader a batch read of the files source uses, decided without Spark (#35): Spark's text
reader only where its rows are provably jetconnect's, jetconnect's everywhere else."""

from __future__ import annotations

import gzip

import pytest

from jetconnect import sources
from jetconnect._files.batch_reader import compressed_file_name
from jetconnect.errors import OptionError
from jetconnect.files_family import LocalFileSystem, LocalLinesSource


def choice(directory, **options):
    return sources.files(directory=str(directory), **options).batch_reader_choice()


@pytest.fixture
def plain(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"a\r\nb\n")
    (tmp_path / "b.txt").write_bytes(b"")
    (tmp_path / ".hidden.txt").write_bytes(b"\xef\xbb\xbfhidden: neither reader sees it\n")
    (tmp_path / "_SUCCESS").write_bytes(b"")
    return tmp_path


def test_plain_utf8_lines_go_to_spark_over_exactly_the_listed_files(plain):
    picked = choice(plain)
    assert picked.reader == "spark", picked.reason
    assert picked.uris == (f"file://{plain}/a.txt", f"file://{plain}/b.txt")
    assert choice(plain, glob="a*").uris == (f"file://{plain}/a.txt",)


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ({"batch_reader": "jetconnect"}, "batch_reader='jetconnect'"),
        ({"include_file_name": True}, "'file_name' column (include_file_name"),
        ({"charset": "latin-1"}, "UTF-8 only"),
        ({"max_split_bytes": 1000}, "max_split_bytes"),
        ({"min_splits": 3}, "min_splits"),
        ({"glob": "*.csv"}, "no file matches"),
    ],
)
def test_what_only_jetconnect_does_keeps_its_reader(plain, options, reason):
    picked = choice(plain, **options)
    assert picked.reader == "jetconnect" and reason in picked.reason


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("z.gz", gzip.compress(b"x\n"), "decompress"),
        ("Z.BZ2", b"BZh9", "decompress"),  # Hadoop matches the suffix in any case
        ("bom.txt", b"\xef\xbb\xbffirst\n", "byte order mark"),
        ("a[1].txt", b"x\n", "glob or a URI"),
        ("50%.txt", b"x\n", "glob or a URI"),
    ],
)
def test_files_spark_would_read_differently_keep_jetconnects_reader(plain, name, data, reason):
    (plain / name).write_bytes(data)
    picked = choice(plain)
    assert picked.reader == "jetconnect" and reason in picked.reason and name in picked.reason
    with pytest.raises(OptionError, match=f"option 'batch_reader' is 'spark' but .*{reason}"):
        choice(plain, batch_reader="spark")


def test_a_hadoop_checksum_file_beside_one_keeps_jetconnects_reader(plain):
    (plain / ".a.txt.crc").write_bytes(b"crc\x00stale")
    assert "checksum" in choice(plain).reason


def test_a_mapper_or_a_missing_directory_keeps_jetconnects_reader(plain):
    mapped = LocalLinesSource(LocalFileSystem(), str(plain), mapper=lambda name, line: (line,))
    assert mapped.batch_reader_choice().reason == "a mapper runs in Python"
    assert "does not exist" in choice(plain / "missing").reason
    with pytest.raises(OptionError, match="option 'batch_reader' must be one of auto, jetconnect, spark"):
        choice(plain, batch_reader="jvm")


def test_compressed_names():
    assert compressed_file_name(["/d/a.txt", "/d/gz.txt", "/d/a.gzip"]) is None
    for packed in ("/d/a.gz", "/d/a.txt.GZ", "/d/a.bz2", "/d/a.deflate", "/d/a.zst", "/d/a.snappy", "/d/a.lz4"):
        assert compressed_file_name(["/d/ok.txt", packed]) == packed
