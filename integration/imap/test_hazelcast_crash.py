"""Journal -> map on the Hazelcast cluster, the driver SIGKILLed mid-stream and restarted from its
checkpoint: nothing lost, nothing twice in the final map.

The source map (written by the official client) keeps changing while the pipeline runs (puts,
updates, removes). At the end the target equals the source. On Hazelcast the plain map sink
re-puts a re-delivered batch (exactly-once for the map's content, not for its journal) and a
chunk puts each key's last value only, so the target's journal is checked per key: its values,
repeats of the same value collapsed, are a subsequence of the source's ending at the same
value: nothing applied out of order, nothing that never was, and a change applied again only as
the same value once more.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from hazelcast import HazelcastClient

from jetconnect.testing import checkpoint_batches, start_pipeline, wait_until
from jetconnect_imap import hz_protocol

from .conftest import HAZELCAST_URL

PIPELINE = Path(__file__).resolve().parent.parent / "pipelines" / "imap_journal_to_map.py"


def _changes(source, round_: int) -> None:
    """One round of changes: new keys, updates of old ones, and a few removals."""
    base = round_ * 100
    source.put_all({f"k{base + i}": f"v{round_}-{i}" for i in range(100)})
    if round_:
        source.put_all({f"k{i}": f"u{round_}-{i}" for i in range(0, base, 7)})
        for i in range(1, base, 23):
            source.remove(f"k{i}")


def _history(client: HazelcastClient, name: str) -> dict[str, list[str | None]]:
    """Per key, the values its journal shows it took (None: removed), repeats collapsed."""
    history: dict[str, list[str | None]] = defaultdict(list)
    for partition in range(client.partition_service.get_partition_count()):
        oldest, newest = hz_protocol.map_journal_subscribe(client, name, partition)
        start = oldest
        while start <= newest:
            page = hz_protocol.map_journal_read(client, name, partition, start, 0, 1000)
            for event in page.events:
                values = history[event.key]
                if not values or values[-1] != event.new_value:
                    values.append(event.new_value)
            start = page.next_sequence
    return dict(history)


@pytest.mark.crash
@pytest.mark.timeout(900)
def test_journal_to_map_on_hazelcast_survives_sigkill(hz, name, tmp_path) -> None:
    source_name, target_name = name("src"), name("dst")
    source = hz.get_map(source_name).blocking()
    checkpoint = tmp_path / "checkpoint"
    args = [HAZELCAST_URL, source_name, target_name, str(checkpoint), "150"]
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

    target = hz.get_map(target_name).blocking()
    assert dict(target.entry_set()) == dict(source.entry_set())
    theirs, ours = _history(hz, source_name), _history(hz, target_name)
    assert set(ours) <= set(theirs)
    # a key never seen by the target was put and removed within one chunk: it must be gone
    assert all(theirs[key][-1] is None for key in set(theirs) - set(ours))
    for key, values in ours.items():
        assert values[-1] == theirs[key][-1] and _is_subsequence(values, theirs[key]), (key, values, theirs[key])


def _is_subsequence(part: list, whole: list) -> bool:
    remaining = iter(whole)
    return all(any(item == other for other in remaining) for item in part)
