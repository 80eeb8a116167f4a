"""The staged-commit protocol: each record in exactly one visible file, whatever Spark re-delivers."""

from __future__ import annotations

import pickle

from jetconnect._connector import CommitContext, WriteContext
from jetconnect._files.filesystem import LocalFileSystem
from jetconnect._files.staged_commit import StagedCommit


def _ctx(partition: int, batch: int | None, attempt: int = 0, query: str | None = "q-1234-5678") -> WriteContext:
    return WriteContext(partition_id=partition, attempt=attempt, batch_id=batch, query_id=query, schema=None)  # type: ignore[arg-type]


def _write(commit: StagedCommit, ctx: WriteContext, *contents: bytes) -> list:
    task = commit.task(ctx)
    for content in contents:
        task.new_file().write(content)
    return task.finish()


def _visible(directory) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def test_staged_files_are_hidden_until_commit(tmp_path) -> None:
    commit = StagedCommit(LocalFileSystem(), str(tmp_path), suffix=".txt")
    message = _write(commit, _ctx(0, 7), b"a\n")
    assert _visible(tmp_path) == {}
    commit.commit([pickle.loads(pickle.dumps(message))], CommitContext(batch_id=7, query_id="q-1234-5678"))
    assert _visible(tmp_path) == {"part-0000000007-00000-000-q1234567.txt": b"a\n"}
    assert not (tmp_path / ".jetconnect-staging").exists() or not any((tmp_path / ".jetconnect-staging").iterdir())


def test_redelivered_batch_after_partial_commit_is_not_duplicated(tmp_path) -> None:
    commit = StagedCommit(LocalFileSystem(), str(tmp_path))
    ctx = CommitContext(batch_id=3, query_id="q")
    first = [_write(commit, _ctx(p, 3), f"p{p}\n".encode()) for p in range(2)]
    # A crash inside commit: only partition 0 got renamed.
    commit.commit([first[0]], ctx)
    # Spark re-delivers batch 3 (same records, same partitions); a killed attempt left a file too.
    _write(commit, _ctx(1, 3, attempt=1), b"killed attempt\n")
    again = [_write(commit, _ctx(p, 3), f"p{p}\n".encode()) for p in range(2)]
    made = commit.commit(again, ctx)
    assert len(made) == 1
    assert sorted(_visible(tmp_path).values()) == [b"p0\n", b"p1\n"]
    assert list((tmp_path / ".jetconnect-staging").rglob("*.*")) == []


def test_committing_the_same_messages_twice_is_a_no_op(tmp_path) -> None:
    commit = StagedCommit(LocalFileSystem(), str(tmp_path))
    message = _write(commit, _ctx(0, 9), b"once\n")
    ctx = CommitContext(batch_id=9, query_id="q")
    assert len(commit.commit([message], ctx)) == 1
    assert commit.commit([message], ctx) == []
    assert list(_visible(tmp_path).values()) == [b"once\n"]


def test_commit_cleans_leftovers_of_older_batches(tmp_path) -> None:
    commit = StagedCommit(LocalFileSystem(), str(tmp_path))
    _write(commit, _ctx(0, 1, attempt=2), b"orphan\n")
    commit.commit([_write(commit, _ctx(0, 2), b"x\n")], CommitContext(batch_id=2, query_id="q-1234-5678"))
    assert [p for p in (tmp_path / ".jetconnect-staging").rglob("*") if p.is_file()] == []


def test_rolling_files_and_batch_jobs_get_unique_names(tmp_path) -> None:
    commit = StagedCommit(LocalFileSystem(), str(tmp_path), prefix="out")
    m1 = _write(commit, _ctx(0, None, query=None), b"1\n", b"2\n")
    m2 = _write(commit, _ctx(0, None, query=None), b"3\n")
    commit.commit([m1, m2, None], CommitContext(batch_id=None, query_id=None))
    files = _visible(tmp_path)
    assert sorted(files.values()) == [b"1\n", b"2\n", b"3\n"]
    assert all(name.startswith("out-") for name in files)


def test_abort_and_discard_remove_staged_files(tmp_path) -> None:
    commit = StagedCommit(LocalFileSystem(), str(tmp_path))
    commit.abort([_write(commit, _ctx(0, 5), b"x\n")], CommitContext(batch_id=5, query_id="q"))
    task = commit.task(_ctx(1, 5))
    task.new_file().write(b"y\n")
    task.discard()
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_overwrite_replaces_visible_files(tmp_path) -> None:
    (tmp_path / "old.txt").write_text("old\n")
    commit = StagedCommit(LocalFileSystem(), str(tmp_path))
    commit.commit([_write(commit, _ctx(0, None, query=None), b"new\n")], CommitContext(None, None, overwrite=True))
    assert list(_visible(tmp_path).values()) == [b"new\n"]
