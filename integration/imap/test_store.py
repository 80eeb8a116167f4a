"""The embedded store behind IMap and IList (SQLite): its contract, without Spark.

A Hazelcast cluster keeps its own entries and journal; the connectors' tests against it are in
test_hazelcast_*.py.
"""

from __future__ import annotations

import multiprocessing
import uuid

import pytest

from jetconnect.api import redact_url
from jetconnect_imap import EventType, MapConfig, StoreError, connect
from jetconnect_imap.backend import Progress
from jetconnect_imap.canonical_json import dumps
from jetconnect_imap.embedded.serde import partition_of
from jetconnect_imap.embedded.sqlite_store import Change, open_store


@pytest.fixture
def url(tmp_path) -> str:
    return f"sqlite:///{tmp_path}/imap.db"


def _name() -> str:
    return f"m{uuid.uuid4().hex[:10]}"


def test_partition_is_a_stable_hash_of_the_serialised_key() -> None:
    # Fixed values: any change would move every stored key to another partition.
    assert partition_of(dumps("a")) == partition_of('"a"') == 83
    assert partition_of(dumps({"b": 1, "a": 2})) == partition_of(dumps({"a": 2, "b": 1}))
    assert all(0 <= partition_of(dumps(i)) < 271 for i in range(1000))


def test_put_get_remove_and_entries(url: str) -> None:
    m = connect(url).map(_name())
    assert m.put("a", {"x": 1}) is None
    assert m.put("a", {"x": 2}) == {"x": 1}
    m.put_all({i: i * i for i in range(500)})
    assert m.get("a") == {"x": 2} and m.get(7) == 49 and m.get("missing") is None
    assert m.remove(7) == 49 and m.remove(7) is None
    assert len(m) == 500 and "a" in m and 7 not in m
    assert dict(m.entries()) == {"a": {"x": 2}, **{i: i * i for i in range(500) if i != 7}}
    m.clear()
    assert len(m) == 0


def test_journal_records_each_change_in_order(url: str) -> None:
    m = connect(url).map(_name(), partitions=3)
    m.put("k", 1)
    m.put("k", 2)
    m.evict("k")
    m.put("k", 3)
    m.remove("k")
    p = partition_of(dumps("k"), 3)
    events = m.journal(p)
    assert [(e.sequence, e.type, e.old_value, e.new_value) for e in events] == [
        (0, EventType.ADDED, None, 1),
        (1, EventType.UPDATED, 1, 2),
        (2, EventType.EVICTED, 2, None),
        (3, EventType.ADDED, None, 3),
        (4, EventType.REMOVED, 3, None),
    ]
    m.clear()
    assert [e.type for e in m.journal() if e.type is EventType.CLEARED] == [EventType.CLEARED] * 3
    assert m.journal(p)[-1].sequence == 5


def test_journal_is_a_ring_of_the_configured_capacity(url: str) -> None:
    m = connect(url).map(_name(), partitions=2, journal_capacity=10)  # 5 per partition
    keys = [k for k in range(100) if partition_of(dumps(k), 2) == 0][:8]
    for k in keys:
        m.put(k, k)
    store = m.store
    oldest, nxt = store.journal_bounds(m.name, m.config)[0]
    assert (oldest, nxt) == (3, 8)
    assert [e.key for e in m.journal(0)] == keys[3:]


def test_progress_skips_a_replayed_batch(url: str) -> None:
    m = connect(url).map(_name(), partitions=4)
    changes = {partition_of(dumps(k), 4): [Change(dumps(k), dumps(k))] for k in ["x"]}
    assert m.store.apply(m.name, m.config, changes, Progress("q/0", 5))
    assert not m.store.apply(m.name, m.config, changes, Progress("q/0", 5))
    assert not m.store.apply(m.name, m.config, changes, Progress("q/0", 4))
    assert len(m.journal()) == 1


def test_read_modify_write_sees_the_current_value(url: str) -> None:
    m = connect(url).map(_name(), partitions=4)
    k = dumps("counter")
    p = partition_of(k, 4)

    def add_one(_p, current):
        old = int(current[k]) if current[k] is not None else 0
        return [Change(k, str(old + 1))]

    for _ in range(5):
        m.store.update(m.name, m.config, {p: [k]}, add_one)
    assert m.get("counter") == 5


def _increment(url: str, name: str, n: int) -> None:
    m = connect(url).map(name)
    k = dumps("c")

    def add_one(_p, current):
        return [Change(k, str(int(current[k] or 0) + 1))]

    for _ in range(n):
        m.store.update(m.name, m.config, {partition_of(k): [k]}, add_one)


def test_concurrent_writers_in_processes_lose_no_update(url: str) -> None:
    name = _name()
    connect(url).map(name)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_increment, args=(url, name, 50)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    m = connect(url).map(name)
    assert m.get("c") == 200
    events = m.journal()  # the ring keeps the last ceil(10000 / 271) = 37, consecutive
    assert [e.sequence for e in events] == list(range(163, 200))
    assert all(e.new_value == e.old_value + 1 for e in events)


def test_lists_append_in_order(url: str) -> None:
    lst = connect(url).list(_name())
    lst.add("a")
    lst.add_all([1, {"b": 2}])
    assert lst.to_list() == ["a", 1, {"b": 2}]
    assert lst.store.list_append(lst.name, [dumps("once")], Progress("w", 1))
    assert not lst.store.list_append(lst.name, [dumps("once")], Progress("w", 1))  # a replay
    assert len(lst) == 4


def test_a_map_keeps_its_partition_count(url: str) -> None:
    name = _name()
    connect(url).map(name, partitions=7)
    with pytest.raises(StoreError, match="has 7 partitions"):
        connect(url).map(name, partitions=8)
    assert connect(url).map(name).config == MapConfig(7, 10_000, 0.0)


def test_bad_names_and_urls_are_refused_without_showing_secrets() -> None:
    with pytest.raises(StoreError, match="must be letters"):
        connect("sqlite:////tmp/x.db").map("a{b}")
    with pytest.raises(StoreError) as info:
        open_store("mongodb://user:hunter2@host/db")
    assert "hunter2" not in str(info.value)
    assert redact_url("hazelcast://u:hunter2@h:1/c") == "hazelcast://u:***@h:1/c"
