"""WebHdfsFileSystem against the real HDFS: what the file machinery and the staged commit rely on."""

from __future__ import annotations

import pytest

from jetconnect._files.filesystem import FileSystem

BLOCK = 1 << 20  # the test server's block size


def write(fs, path: str, data: bytes) -> None:
    with fs.create(path) as out:
        out.write(data)


def test_it_is_a_jetconnect_file_system(hdfs_fs):
    assert isinstance(hdfs_fs, FileSystem)


def test_ranged_reads_return_exactly_the_bytes_asked_for(hdfs_fs, hdfs_dir):
    data = bytes(range(256)) * (3 * BLOCK // 256 + 7)  # three blocks and a bit
    write(hdfs_fs, f"{hdfs_dir}/f", data)
    for offset, length in [(0, 10), (BLOCK - 5, 10), (2 * BLOCK + 1, BLOCK), (len(data) - 3, 100)]:
        assert hdfs_fs.read_range(f"{hdfs_dir}/f", offset, length) == data[offset : offset + length]
    with hdfs_fs.open(f"{hdfs_dir}/f", BLOCK + 1) as stream:
        assert stream.read() == data[BLOCK + 1 :]
    # At and past the end of a file a reader gets EOF, not an error (WebHDFS itself refuses).
    assert hdfs_fs.read_range(f"{hdfs_dir}/f", len(data), 10) == b""
    with hdfs_fs.open(f"{hdfs_dir}/f", len(data) + 5) as stream:
        assert stream.read() == b""


def test_listing_gives_sizes_block_sizes_and_skips_hidden_names(hdfs_fs, hdfs_dir):
    write(hdfs_fs, f"{hdfs_dir}/b.txt", b"bb\n")
    write(hdfs_fs, f"{hdfs_dir}/a.txt", b"a\n")
    write(hdfs_fs, f"{hdfs_dir}/.staging", b"hidden\n")
    write(hdfs_fs, f"{hdfs_dir}/_SUCCESS", b"")
    write(hdfs_fs, f"{hdfs_dir}/sub/c.log", b"c\n")
    listed = hdfs_fs.list_files(hdfs_dir)
    assert [(f.path, f.size, f.block_size) for f in listed] == [
        (f"{hdfs_dir}/a.txt", 2, BLOCK),
        (f"{hdfs_dir}/b.txt", 3, BLOCK),
    ]
    assert [f.path for f in hdfs_fs.list_files(hdfs_dir, "*.log", recursive=True)] == [f"{hdfs_dir}/sub/c.log"]
    assert [f.path for f in hdfs_fs.list_files(f"{hdfs_dir}/a.txt")] == [f"{hdfs_dir}/a.txt"]
    assert hdfs_fs.list_files(f"{hdfs_dir}/missing") == []
    assert hdfs_fs.status(f"{hdfs_dir}/missing") is None


def test_rename_never_overwrites(hdfs_fs, hdfs_dir):
    write(hdfs_fs, f"{hdfs_dir}/.s1", b"first")
    write(hdfs_fs, f"{hdfs_dir}/.s2", b"second")
    assert hdfs_fs.rename(f"{hdfs_dir}/.s1", f"{hdfs_dir}/out/final") is True
    assert hdfs_fs.rename(f"{hdfs_dir}/.s2", f"{hdfs_dir}/out/final") is False
    assert hdfs_fs.read_range(f"{hdfs_dir}/out/final", 0, 100) == b"first"
    assert hdfs_fs.exists(f"{hdfs_dir}/.s2") and not hdfs_fs.exists(f"{hdfs_dir}/.s1")
    with pytest.raises(FileNotFoundError, match="missing"):
        hdfs_fs.rename(f"{hdfs_dir}/missing", f"{hdfs_dir}/other")


def test_create_is_all_or_nothing_and_does_not_overwrite_by_default(hdfs_fs, hdfs_dir):
    with pytest.raises(RuntimeError):
        with hdfs_fs.create(f"{hdfs_dir}/half") as out:
            out.write(b"partial")
            raise RuntimeError("writer failed")
    assert not hdfs_fs.exists(f"{hdfs_dir}/half")
    write(hdfs_fs, f"{hdfs_dir}/f", b"one")
    with pytest.raises(FileExistsError, match=f"{hdfs_dir}/f"):
        write(hdfs_fs, f"{hdfs_dir}/f", b"two")
    with hdfs_fs.create(f"{hdfs_dir}/f", overwrite=True) as out:
        out.write(b"three")
    assert hdfs_fs.read_range(f"{hdfs_dir}/f", 0, 10) == b"three"


def test_append_checksum_blocks_and_delete(hdfs_fs, hdfs_dir):
    data = b"x" * (BLOCK + 100)
    write(hdfs_fs, f"{hdfs_dir}/a", data[:1000])
    with hdfs_fs.append(f"{hdfs_dir}/a") as out:
        out.write(data[1000:])
    write(hdfs_fs, f"{hdfs_dir}/b", data)
    assert hdfs_fs.read_range(f"{hdfs_dir}/a", 0, 2 * BLOCK) == data
    assert hdfs_fs.checksum(f"{hdfs_dir}/a")["bytes"] == hdfs_fs.checksum(f"{hdfs_dir}/b")["bytes"]
    blocks = hdfs_fs.block_locations(f"{hdfs_dir}/b")
    assert [(b.offset, b.length) for b in blocks] == [(0, BLOCK), (BLOCK, 100)]
    assert all(b.hosts == ("127.0.0.1",) for b in blocks)
    assert hdfs_fs.delete(f"{hdfs_dir}/a") is True
    assert hdfs_fs.delete(f"{hdfs_dir}/a") is False


def test_missing_files_are_file_not_found_naming_the_path(hdfs_fs, hdfs_dir):
    with pytest.raises(FileNotFoundError, match=f"{hdfs_dir}/nope"):
        hdfs_fs.read_range(f"{hdfs_dir}/nope", 0, 1)
