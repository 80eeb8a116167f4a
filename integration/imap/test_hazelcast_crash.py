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

import pytest

from .conftest import HAZELCAST_URL
from .journal_workload import changes, history, is_subsequence, run_killed_and_restarted


@pytest.mark.crash
@pytest.mark.timeout(900)
def test_journal_to_map_on_hazelcast_survives_sigkill(hz, name, tmp_path) -> None:
    source_name, target_name = name("src"), name("dst")
    source = hz.get_map(source_name).blocking()
    checkpoint = tmp_path / "checkpoint"
    args = [HAZELCAST_URL, source_name, target_name, str(checkpoint), "150"]
    run_killed_and_restarted(args, lambda round_: changes(source, round_), checkpoint, tmp_path)

    target = hz.get_map(target_name).blocking()
    assert dict(target.entry_set()) == dict(source.entry_set())
    theirs, ours = history(hz, source_name), history(hz, target_name)
    assert set(ours) <= set(theirs)
    # a key never seen by the target was put and removed within one chunk: it must be gone
    assert all(theirs[key][-1] is None for key in set(theirs) - set(ours))
    for key, values in ours.items():
        assert values[-1] == theirs[key][-1] and is_subsequence(values, theirs[key]), (key, values, theirs[key])
