"""LocalFileSystem: the FileSystem protocol's reference implementation."""

from __future__ import annotations

import pytest

from jetconnect import OptionError
from jetconnect._files.filesystem import FileSystem, LocalFileSystem, is_hidden, relative_name


def test_local_file_system_implements_the_protocol() -> None:
    assert isinstance(LocalFileSystem(), FileSystem)


def test_list_files_matches_glob_skips_hidden_and_sorts(tmp_path) -> None:
    for name in ["b.txt", "a.txt", "c.csv", ".hidden.txt", "_SUCCESS"]:
        (tmp_path / name).write_text("x")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.txt").write_text("xy")
    (tmp_path / ".staging").mkdir()
    (tmp_path / ".staging" / "e.txt").write_text("x")
    fs = LocalFileSystem()
    names = [relative_name(str(tmp_path), f.path) for f in fs.list_files(str(tmp_path), "*.txt")]
    assert names == ["a.txt", "b.txt"]
    deep = [relative_name(str(tmp_path), f.path) for f in fs.list_files(str(tmp_path), "*.txt", recursive=True)]
    assert deep == ["a.txt", "b.txt", "sub/d.txt"]
    assert fs.list_files(str(tmp_path / "missing")) == []


def test_open_reads_from_an_offset(tmp_path) -> None:
    (tmp_path / "f").write_bytes(b"0123456789")
    with LocalFileSystem().open(str(tmp_path / "f"), 4) as stream:
        assert stream.read() == b"456789"


def test_create_refuses_to_overwrite_unless_asked(tmp_path) -> None:
    fs = LocalFileSystem()
    path = str(tmp_path / "dir" / "f")
    with fs.create(path) as out:
        out.write(b"one")
    try:
        fs.create(path)
    except FileExistsError:
        pass
    else:
        raise AssertionError("create() overwrote an existing file")
    with fs.create(path, overwrite=True) as out:
        out.write(b"two")
    assert (tmp_path / "dir" / "f").read_bytes() == b"two"


def test_rename_never_overwrites(tmp_path) -> None:
    fs = LocalFileSystem()
    (tmp_path / "a").write_text("a")
    (tmp_path / "b").write_text("b")
    assert fs.rename(str(tmp_path / "a"), str(tmp_path / "b")) is False
    assert (tmp_path / "a").read_text() == "a" and (tmp_path / "b").read_text() == "b"
    assert fs.rename(str(tmp_path / "a"), str(tmp_path / "new" / "c")) is True
    assert not (tmp_path / "a").exists() and (tmp_path / "new" / "c").read_text() == "a"


def test_delete_and_mkdirs(tmp_path) -> None:
    fs = LocalFileSystem()
    fs.mkdirs(str(tmp_path / "x" / "y"))
    fs.mkdirs(str(tmp_path / "x" / "y"))
    (tmp_path / "x" / "y" / "f").write_text("f")
    assert fs.exists(str(tmp_path / "x" / "y" / "f"))
    assert fs.delete(str(tmp_path / "x"), recursive=True)
    assert not fs.exists(str(tmp_path / "x"))
    assert fs.delete(str(tmp_path / "x")) is False
    assert fs.status(str(tmp_path / "x")) is None


def test_hidden_names() -> None:
    assert is_hidden(".jetconnect-staging") and is_hidden("_SUCCESS") and not is_hidden("part-0")


@pytest.mark.parametrize("factory", ["files", "file_watcher", "avro"])
def test_a_relative_directory_is_refused_naming_the_connector(factory):
    from jetconnect import sources

    with pytest.raises(OptionError, match=rf"{factory} source: option 'directory': 'data/in' is a relative path"):
        getattr(sources, factory)("data/in")


def test_a_relative_sink_directory_is_refused():
    from jetconnect import sinks

    with pytest.raises(OptionError, match=r"files sink: option 'directory': 'out' is a relative path"):
        sinks.files("out")


@pytest.mark.parametrize("value", [False, "false"])
def test_jets_non_shared_file_system_is_refused_not_ignored(tmp_path, value):
    from jetconnect import sources
    from jetconnect._options import Options
    from jetconnect._registry import get_registry

    with pytest.raises(OptionError, match=r"option 'shared_file_system' = false .* cannot be honoured on Spark"):
        if isinstance(value, str):  # through Spark's string options
            get_registry().sources["files"].create_from_options(
                Options({"directory": str(tmp_path), "shared_file_system": value})
            )
        else:
            sources.files(str(tmp_path), shared_file_system=value)
    assert sources.files(str(tmp_path), shared_file_system=True).directory == str(tmp_path)
