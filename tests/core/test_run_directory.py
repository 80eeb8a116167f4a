"""The layout of a stream run's files, made in one place (jetconnect/_run_directory.py), and the
worker's locked registry of receivers."""

from __future__ import annotations

from typing import cast

import pyarrow as pa

from jetconnect._builders._receiver import Receiver, Receivers
from jetconnect._files.filesystem import LocalFileSystem
from jetconnect._round_log import Round, RoundFacts, RoundLog, spool_of
from jetconnect._run_directory import RunDirectory


def test_every_file_of_a_run_lives_under_its_directory_where_the_layout_says(tmp_path):
    fs = LocalFileSystem()
    rounds = RoundLog(fs, str(tmp_path), "run1")
    run = rounds.run_dir
    rounds.write(0, 3, Round(RoundFacts(1, 1, "dry", "a", round=3), pa.table({"n": [7]})))
    spool_of(rounds, 1).append(0, pa.table({"n": [1, 2]}))
    run.mark_stopped()
    assert (tmp_path / "run1" / "0" / "000000000003.arrow").is_file() and run.record(0, 3).endswith("3.arrow")
    assert run.round_of(run.record(0, 3)) == 3 and run.round_of(run.stop_marker) is None
    assert [p.name for p in (tmp_path / "run1" / "1" / "spool").iterdir()] == [f"{0:020d}-{2:020d}.arrow"]
    assert (tmp_path / "run1" / "_stopped").is_file()
    assert [r.run for r in RunDirectory.runs(fs, str(tmp_path))] == ["run1"]
    run.clear_stopped()
    assert not (tmp_path / "run1" / "_stopped").exists()
    assert RunDirectory.runs(fs, str(tmp_path / "nothing here")) == []


def test_the_registry_forgets_a_stopped_receiver_but_not_the_newer_one_under_its_key():
    registry = Receivers()
    old, new = cast(Receiver, object()), cast(Receiver, object())  # the registry only keeps them
    registry.add(("s", "r", 0), old)
    registry.add(("s", "r", 0), new)
    registry.discard(("s", "r", 0), old)
    assert registry.get(("s", "r", 0)) is new and registry.all() == [new]
    registry.clear()
    assert registry.all() == []
