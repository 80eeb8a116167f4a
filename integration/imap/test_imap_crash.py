"""Journal -> map, SIGKILLed mid-stream and restarted from its checkpoint: nothing lost, nothing twice.

The source map keeps changing while the pipeline runs (puts, updates, removes). At the end the
target must equal the source, and the target's own journal must hold exactly one event per
source event: an event applied twice would add an UPDATED event with the same value, a lost
one would leave an entry behind or make the counts differ.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jetconnect.testing import checkpoint_batches, start_pipeline, wait_until
from jetconnect_imap import EventType, connect

PIPELINE = Path(__file__).resolve().parent.parent / "pipelines" / "imap_journal_to_map.py"


def _changes(source, round_: int) -> None:
    """One round of changes: new keys, updates of old ones, and a few removals."""
    base = round_ * 100
    source.put_all({f"k{base + i}": f"v{round_}-{i}" for i in range(100)})
    if round_:
        source.put_all({f"k{i}": f"u{round_}-{i}" for i in range(0, base, 7)})
        for i in range(1, base, 23):
            source.remove(f"k{i}")


def _run_crash_test(store_url: str, name, tmp_path: Path) -> None:
    grid = connect(store_url)
    source = grid.map(name("src"), journal_capacity=1_000_000)
    target_name = name("dst")
    checkpoint = tmp_path / "checkpoint"
    args = [store_url, source.name, target_name, str(checkpoint), "150"]
    _changes(source, 0)

    pipeline = start_pipeline(PIPELINE, args, tmp_path / "run1.log")
    try:
        for round_ in (1, 2):
            wait_until(lambda r=round_: len(checkpoint_batches(checkpoint)) >= r, 300, f"commit #{round_}", pipeline)
            _changes(source, round_)
        # Kill with a batch in flight (planned in offsets/, not yet in commits/) when we catch one.
        wait_until(
            lambda: (
                len(checkpoint_batches(checkpoint, "offsets")) > len(checkpoint_batches(checkpoint))
                or len(checkpoint_batches(checkpoint)) >= 4
            ),
            120,
            "a batch in flight",
            pipeline,
        )
    finally:
        pipeline.kill()
    _changes(source, 3)  # written while the pipeline is down

    start_pipeline(PIPELINE, [*args, "--until-done"], tmp_path / "run2.log").wait(timeout=400)

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
