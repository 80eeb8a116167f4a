"""The journal -> map workload the crash tests and the chaos soak share: the changes a source map
goes through, the pipeline killed with a batch in flight and restarted, and a map's history as its
journal shows it. One copy, so that the embedded store's test, the Hazelcast test and both soak
pairs produce and count the same way (the soak loads it with ``workloads.from_tests``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jetconnect.testing import checkpoint_batches, start_pipeline, wait_until

PIPELINE = Path(__file__).resolve().parent.parent / "pipelines" / "imap_journal_to_map.py"


def changes(source: Any, round_: int) -> None:
    """One round of changes of ``source`` (any map with ``put_all`` and ``remove``): new keys,
    updates of old ones, and a few removals."""
    base = round_ * 100
    source.put_all({f"k{base + i}": f"v{round_}-{i}" for i in range(100)})
    if round_:
        source.put_all({f"k{i}": f"u{round_}-{i}" for i in range(0, base, 7)})
        for i in range(1, base, 23):
            source.remove(f"k{i}")


def run_killed_and_restarted(args: list[str], change: Callable[[int], None], checkpoint: Path, logs: Path) -> None:
    """Run the journal -> map pipeline with ``args`` while ``change(round)`` changes its source:
    round 0 before it starts, 1 and 2 after its first and second commits; SIGKILL it with a batch
    in flight (planned in offsets/, not yet in commits/) when one is caught, change round 3 while
    it is down, and run it again from its checkpoint until it has read everything."""
    change(0)
    pipeline = start_pipeline(PIPELINE, args, logs / "run1.log")
    try:
        for round_ in (1, 2):
            wait_until(lambda r=round_: len(checkpoint_batches(checkpoint)) >= r, 300, f"commit #{round_}", pipeline)
            change(round_)
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
    change(3)  # written while the pipeline is down
    start_pipeline(PIPELINE, [*args, "--until-done"], logs / "run2.log").wait(timeout=400)


def history(client: Any, name: str) -> dict[str, list[str | None]]:
    """Per key, the values the journal of Hazelcast map ``name`` shows it took (None: removed),
    repeats collapsed."""
    from jetconnect_imap.hazelcast import journal

    seen: dict[str, list[str | None]] = defaultdict(list)
    for partition in range(client.partition_service.get_partition_count()):
        oldest, newest = journal.subscribe(client, journal.MAP_JOURNAL, name, partition)
        start = oldest
        while start <= newest:
            page = journal.read_page(client, journal.MAP_JOURNAL, name, partition, start, 0, 1000)
            for event in page.events:
                values = seen[event.key]
                if not values or values[-1] != event.new_value:
                    values.append(event.new_value)
            start = page.next_sequence
    return dict(seen)


def is_subsequence(part: list, whole: list) -> bool:
    """Whether ``part``'s items all stand in ``whole``, in the same order."""
    remaining = iter(whole)
    return all(any(item == other for other in remaining) for item in part)
