"""jetconnect's own Hazelcast wire pieces against the real 3-member cluster of
scripts/servers/hazelcast.sh: the entry processors the members know (hz_processors), and the
codecs the Python client lacks (hz_protocol). The official client writes, ours reads (and the
reverse); every partition is covered and sequences are exact."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import pytest
from hazelcast import HazelcastClient
from hazelcast.config import IntType
from hazelcast.core import HazelcastJsonValue
from hazelcast.errors import HazelcastError

from jetconnect_imap.hz_processors import AddDelta, SetValue

MEMBERS = ["127.0.0.1:5701", "127.0.0.1:5702", "127.0.0.1:5703"]


@pytest.fixture(scope="module")
def client(server) -> Iterator[HazelcastClient]:
    """The official client, as any other user of the cluster would configure it."""
    server("hazelcast")
    c = HazelcastClient(
        cluster_name="jetconnect", cluster_members=MEMBERS, default_int_type=IntType.LONG, cluster_connect_timeout=30
    )
    yield c
    c.shutdown()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_add_delta_runs_on_the_member_and_loses_no_increment(client) -> None:
    counters = client.get_map(unique("ep-add")).blocking()
    assert counters.execute_on_key("fresh", AddDelta(5)) == 5  # a missing entry counts as 0
    assert counters.execute_on_key("fresh", AddDelta(-7)) == -2
    counters.put("big", 2**40)
    assert counters.execute_on_key("big", AddDelta(2**32)) == 2**40 + 2**32  # 64-bit on both sides

    def bump() -> None:
        for _ in range(100):
            counters.execute_on_key("shared", AddDelta(1))

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counters.get("shared") == 400  # a client-side read-modify-write would lose some

    counters.put("text", "not a number")
    with pytest.raises(HazelcastError, match="is a java.lang.String, not an integer"):
        counters.execute_on_key("text", AddDelta(1))
    assert counters.get("text") == "not a number"
    with pytest.raises(ValueError, match="64-bit"):
        AddDelta(2**63)


def test_set_value_replaces_and_removes(client) -> None:
    m = client.get_map(unique("ep-set")).blocking()
    doc = HazelcastJsonValue('{"qty": 2}')
    assert m.execute_on_key("k", SetValue(doc)) is None
    assert m.get("k").loads() == {"qty": 2}  # stored as HazelcastJsonValue, not a pickle
    assert m.execute_on_key("k", SetValue("two")).loads() == {"qty": 2}  # the value it replaced
    m.execute_on_key("k", SetValue("two"))  # applied twice: the same state
    assert m.get("k") == "two"
    assert m.execute_on_key("k", SetValue(None)) == "two"
    assert not m.contains_key("k") and m.size() == 0
    assert "two" not in repr(SetValue("two"))  # a value (maybe a secret) never shows in a repr
