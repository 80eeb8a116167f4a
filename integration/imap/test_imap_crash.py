"""Journal -> map, SIGKILLed mid-stream and restarted from its checkpoint: nothing lost, nothing twice.

The source map keeps changing while the pipeline runs (puts, updates, removes). At the end the
target must equal the source, and the target's own journal must hold exactly one event per
source event: an event applied twice would add an UPDATED event with the same value, a lost
one would leave an entry behind or make the counts differ.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jetconnect_imap import EventType, connect

from .journal_workload import changes, run_killed_and_restarted


def _run_crash_test(store_url: str, name, tmp_path: Path) -> None:
    grid = connect(store_url)
    source = grid.map(name("src"), journal_capacity=1_000_000)
    target_name = name("dst")
    checkpoint = tmp_path / "checkpoint"
    args = [store_url, source.name, target_name, str(checkpoint), "150"]
    run_killed_and_restarted(args, lambda round_: changes(source, round_), checkpoint, tmp_path)

    target = grid.map(target_name)
    assert target.to_dict() == source.to_dict()
    source_events = [e for e in source.journal() if e.type is not EventType.CLEARED]
    target_events = target.journal()
    assert len(target_events) == len(source_events), "an event was lost or applied twice"
    assert sorted((e.key, e.type, e.new_value) for e in target_events) == sorted(
        (e.key, e.type, e.new_value) for e in source_events
    )


@pytest.mark.crash
@pytest.mark.timeout(900)
@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_journal_to_map_survives_sigkill(store_url, name, tmp_path) -> None:
    _run_crash_test(store_url, name, tmp_path)
