"""jetconnect's own Hazelcast wire pieces against the real 3-member cluster of
scripts/servers/hazelcast.sh: the entry processors the members know (hazelcast.processors), and the
codecs the Python client lacks (jetconnect_imap.hazelcast). The official client writes, ours reads (and the
reverse); every partition is covered and sequences are exact."""

from __future__ import annotations

import threading
import time
import uuid
from functools import partial

import pytest
from hazelcast import HazelcastClient
from hazelcast.config import IntType
from hazelcast.core import HazelcastJsonValue
from hazelcast.errors import HazelcastError

from jetconnect_imap.errors import JournalEventsLostError, JournalNotEnabledError, JournalSequenceError
from jetconnect_imap.hazelcast import caches, iteration, journal
from jetconnect_imap.hazelcast.clients import (
    DEFAULT_CONNECT_TIMEOUT,
    client_for,
    client_settings,
    parse_store_url,
    shown_config,
)
from jetconnect_imap.hazelcast.errors import HazelcastConnectError, HazelcastProtocolError, HazelcastUrlError
from jetconnect_imap.hazelcast.iteration import exhausted
from jetconnect_imap.hazelcast.journal import CACHE_JOURNAL, MAP_JOURNAL
from jetconnect_imap.hazelcast.processors import AddDelta, SetValue

MEMBERS = ["127.0.0.1:5701", "127.0.0.1:5702", "127.0.0.1:5703"]


@pytest.fixture(scope="module")
def client(hz: HazelcastClient) -> HazelcastClient:
    """The official client (conftest's ``hz``), under the name these codec tests give it."""
    return hz


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


# --- hz_client: the store URL, client_config, one bounded connect -------------------------------

URL = "hazelcast://127.0.0.1:5701,127.0.0.1:5702,127.0.0.1:5703/jetconnect"
CANARY = "s3c@r#e/t%25'\"q"  # every character that broke URL handling somewhere


def test_store_urls_parse_or_fail_naming_the_part() -> None:
    target = parse_store_url(URL)
    assert target.members == ("127.0.0.1:5701", "127.0.0.1:5702", "127.0.0.1:5703")
    assert target.cluster_name == "jetconnect" and target.username is None
    odd = parse_store_url(f"hazelcast://us%40er:{CANARY}@[::1],localhost:5702/my%20%27cluster%27")
    assert odd.members == ("[::1]:5701", "localhost:5702") and odd.cluster_name == "my 'cluster'"
    assert (odd.username, odd.password) == ("us@er", "s3c@r#e/t%'\"q")
    assert CANARY not in repr(odd) and odd.password not in repr(odd)
    assert parse_store_url("hazelcast://127.0.0.1").cluster_name == "dev"  # Hazelcast's default
    for bad, part in [
        ("hazelcast://'127.0.0.1':5701/x", "is not a host name"),
        ("hazelcast://127..0.1/x", "is not a host name"),
        ("hazelcast://h:70000/x", "port '70000'"),
        ("hazelcast://h/a/b", "more than one segment"),
        ("hazelcast://h/..", "not a usable name"),
        ("hazelcast://h/50%", "not a %XX escape"),
        ("hazelcast://h,,g/x", "empty member"),
        ("hazelcast:///x", "no member"),
        (f"hazelcast://u:{CANARY}@h/x?token=1", "query"),
        ("redis://127.0.0.1:6379/0", "scheme"),
    ]:
        with pytest.raises(HazelcastUrlError, match=part) as info:
            parse_store_url(bad)
        assert "store " in str(info.value) and CANARY not in str(info.value)


def test_client_config_is_checked_before_connecting_and_never_shows_a_secret() -> None:
    secret = {"creds_password": CANARY}
    for config, part in [
        ({"no_such_option": 1, **secret}, "Unrecognized config option: no_such_option"),
        ({"cluster_name": "other", **secret}, r"client_config\['cluster_name'\]='other' contradicts"),
        ({"cluster_connect_timeout": float("inf"), **secret}, "positive number of seconds"),
        ({"default_int_type": IntType.INT, **secret}, "must be IntType.LONG"),
        ({"smart_routing": "yes", **secret}, "smart_routing"),
    ]:
        with pytest.raises(HazelcastUrlError, match=part) as info:
            client_settings(URL, config)
        assert CANARY not in str(info.value)
    with pytest.raises(HazelcastUrlError, match=r"creds_password.*\*\*\*") as info:
        client_settings(f"hazelcast://u:{CANARY}@127.0.0.1/jetconnect", {"creds_password": "other"})
    assert CANARY not in str(info.value) and "other" not in str(info.value)
    assert shown_config({"creds_password": CANARY, "cluster_connect_timeout": 3}) == {
        "creds_password": "***",
        "cluster_connect_timeout": 3,
    }
    settings = client_settings(URL)
    assert settings["default_int_type"] == IntType.LONG and settings["smart_routing"] is True
    assert settings["cluster_connect_timeout"] == DEFAULT_CONNECT_TIMEOUT


def test_connect_shares_one_client_that_writes_64_bit_integers(client) -> None:
    ours = client_for(URL)
    assert client_for(URL) is ours and client_for(URL, {"cluster_connect_timeout": 5}) is not ours
    assert len(ours.cluster_service.get_members()) == 3
    assert {m.address.host for m in ours.cluster_service.get_members()} == {"127.0.0.1"}  # loopback only
    name = unique("long")
    ours.get_map(name).blocking().put("big", 2**40 + 1)
    assert client.get_map(name).blocking().get("big") == 2**40 + 1


@pytest.mark.parametrize(
    ("url", "says"),
    [
        (
            "hazelcast://127.0.0.1:5701/not-jetconnect",
            "did not admit the client: the cluster name 'not-jetconnect' refused",
        ),
        ("hazelcast://127.0.0.1:5799/jetconnect", "no member reachable: nothing listens at 127.0.0.1:5799"),
        (
            f"hazelcast://bob:{CANARY}@127.0.0.1:5701/jetconnect",
            "did not admit the client: the credentials of user 'bob'",
        ),
    ],
)
def test_a_cluster_that_refuses_or_is_absent_fails_in_bounded_time(client, url, says, caplog) -> None:
    started = time.monotonic()
    with pytest.raises(HazelcastConnectError, match=says) as info:
        client_for(url, {"cluster_connect_timeout": 2})
    assert time.monotonic() - started < 8  # the timeout plus a 1 s probe per member, never a hang
    shown = [str(info.value), repr(info.value), *(r.getMessage() for r in caplog.records)]
    assert all(CANARY not in text and "s3c@r" not in text for text in shown)
    assert info.value.__cause__ is None and info.value.__context__ is None


# --- the codecs: what the official client writes, the codecs read exactly ----------------------


def every_partition(client) -> range:
    return range(client.partition_service.get_partition_count())


def scan(fetch, ours, name: str, partition: int, batch: int) -> list[tuple[object, object]]:
    pointers, out, pages = None, [], 0
    while True:
        pointers, page = fetch(ours, name, partition, pointers, batch)
        out, pages = out + page, pages + 1
        if exhausted(pointers):
            # batch is the member's hint (it finishes a hash bucket it started): many entries, many pages
            assert pages >= len(out) // (3 * batch)
            return out


def test_fetch_entries_reads_every_partition_exactly(client) -> None:
    name = unique("fetch")
    written = {f"k{i}": i * 2**33 if i % 3 else f"text {i}" for i in range(6_000)}
    written |= {
        "float": 1.5,
        "bool": True,
        "bytes": bytearray(b"\x00\xff"),
        "json": HazelcastJsonValue('{"a": [1, 2]}'),
    }
    client.get_map(name).blocking().put_all(written)
    ours = client_for(URL)
    owners = client.partition_service.get_partition_id
    read: dict[object, object] = {}
    for partition in every_partition(client):
        entries = scan(iteration.fetch_entries, ours, name, partition, batch=7)  # several pages per partition
        assert all(owners(k) == partition for k, _ in entries)
        assert not set(read) & {k for k, _ in entries}  # nothing twice
        read |= dict(entries)
    json_value = read.pop("json")
    assert isinstance(json_value, HazelcastJsonValue) and json_value.loads() == {"a": [1, 2]}
    assert read == {k: v for k, v in written.items() if k != "json"}
    assert exhausted(iteration.fetch_entries(ours, unique("empty"), 0)[0])  # a map nobody wrote: one empty page
    with pytest.raises(HazelcastProtocolError, match="partition 271 does not exist"):
        iteration.fetch_entries(ours, name, 271)


def test_map_journal_sequences_and_events_are_exact(client) -> None:
    name = unique("journal")
    ours = client_for(URL)
    m = client.get_map(name).blocking()
    assert {journal.subscribe(ours, MAP_JOURNAL, name, p) for p in every_partition(client)} == {(0, -1)}
    expected: dict[object, list[tuple[str, object, object]]] = {}
    for i in range(400):
        key = f"k{i % 150}"
        old = m.put(key, i)
        expected.setdefault(key, []).append(("ADDED" if old is None else "UPDATED", old, i))
    for i in range(0, 150, 7):
        expected[f"k{i}"].append(("REMOVED", m.remove(f"k{i}"), None))
    m.put("evicted", "x")
    m.evict("evicted")
    expected["evicted"] = [("ADDED", None, "x"), ("EVICTED", "x", None)]
    for key, value in [
        ("float", 1.5),
        ("bytes", bytearray(b"\x00\xff")),
        ("text", "é😀"),
        ("big", -(2**40)),
        (7, True),
    ]:
        m.put(key, value)  # the decoder's own String and Long paths, and the client's for the rest
        expected[key] = [("ADDED", None, value)]

    seen: dict[object, list[tuple[str, object, object]]] = {}
    for partition in every_partition(client):
        oldest, newest = journal.subscribe(ours, MAP_JOURNAL, name, partition)
        events, start = [], oldest
        while start <= newest:  # pages of 10: next_sequence carries on exactly
            page = journal.read_page(ours, MAP_JOURNAL, name, partition, start, 0, 10)
            assert page.read_count == len(page.events) <= 10 and page.lost is None
            events += page.events
            start = page.next_sequence
        assert [e.sequence for e in events] == list(range(oldest, newest + 1))
        for e in events:
            assert client.partition_service.get_partition_id(e.key) == partition
            seen.setdefault(e.key, []).append((e.type, e.old_value, e.new_value))
        assert journal.read_page(ours, MAP_JOURNAL, name, partition, newest + 1, 0, 10).events == []
    assert seen == expected


def test_journal_overflow_is_an_error_naming_partition_and_range(client) -> None:
    name = unique("smalljournal")  # hz.yaml: 10 events per partition
    ours = client_for(URL)
    m = client.get_map(name).blocking()
    for i in range(25):
        m.put("hot", i)
    partition = client.partition_service.get_partition_id("hot")
    assert journal.subscribe(ours, MAP_JOURNAL, name, partition) == (15, 24)
    with pytest.raises(JournalEventsLostError, match=f"events 0..14 of partition {partition} of map") as info:
        journal.read_page(ours, MAP_JOURNAL, name, partition, 0, 0, 100)
    assert (info.value.partition, info.value.lost_from, info.value.lost_to) == (partition, 0, 15)
    page = journal.read_page(ours, MAP_JOURNAL, name, partition, 3, 0, 100, allow_lost=True)
    assert page.lost == (3, 15) and [e.new_value for e in page.events] == list(range(15, 25))
    with pytest.raises(JournalSequenceError, match="ends at sequence 24"):
        journal.read_page(ours, MAP_JOURNAL, name, partition, 40, 0, 100)  # a sequence from another journal


def test_a_map_without_a_journal_says_so(client) -> None:
    name = unique("nojournal")  # hz.yaml: no event journal for nojournal-*
    ours = client_for(URL)
    client.get_map(name).blocking().put("k", 1)
    partition = client.partition_service.get_partition_id("k")
    with pytest.raises(JournalNotEnabledError, match=f"map '{name}'.*event-journal: enabled: true"):
        journal.subscribe(ours, MAP_JOURNAL, name, partition)
    with pytest.raises(JournalNotEnabledError):
        journal.read_page(ours, MAP_JOURNAL, name, partition, 0, 0, 10)


def test_cache_put_fetch_and_journal(client) -> None:
    name = unique("cache")
    ours = client_for(URL)
    with pytest.raises(HazelcastProtocolError, match=r"caches.ensure"):
        caches.put_all(ours, name, {"k": 1})
    caches.ensure(ours, name)
    caches.ensure(ours, name)  # idempotent
    written = {f"k{i}": (i * 2**33 if i % 2 else f"v{i}") for i in range(3_000)}
    caches.put_all(ours, name, written)
    caches.put_all(ours, name, {"k0": "again", "k1": 7})
    read: dict[object, object] = {}
    for partition in every_partition(client):
        read |= dict(scan(partial(iteration.fetch_entries, cache=True), ours, name, partition, batch=5))
    assert read == written | {"k0": "again", "k1": 7}

    partition = client.partition_service.get_partition_id("k0")
    oldest, newest = journal.subscribe(ours, CACHE_JOURNAL, name, partition)
    page = journal.read_page(ours, CACHE_JOURNAL, name, partition, oldest, 0, 1_000)
    assert [e.sequence for e in page.events] == list(range(oldest, newest + 1))
    k0 = [(e.type, e.old_value, e.new_value) for e in page.events if e.key == "k0"]
    assert k0 == [("CREATED", None, "v0"), ("UPDATED", "v0", "again")]
    with pytest.raises(JournalNotEnabledError, match=f"cache 'nojournal-{name}'"):
        caches.ensure(ours, f"nojournal-{name}")
        journal.subscribe(ours, CACHE_JOURNAL, f"nojournal-{name}", 0)


def test_journal_ranges_read_each_event_once_however_often_replayed(client) -> None:
    name = unique("ranges")
    ours = client_for(URL)
    m = client.get_map(name).blocking()
    before = journal.bounds(ours, MAP_JOURNAL, name)
    assert before == [(0, 0)] * len(before)
    m.put_all({f"k{i}": i for i in range(3_000)})
    for i in range(0, 3_000, 3):
        m.put(f"k{i}", -i)
    bounds = journal.bounds(ours, MAP_JOURNAL, name)
    middle = {p: (oldest, (oldest + nxt) // 2) for p, (oldest, nxt) in enumerate(bounds)}
    rest = {p: (middle[p][1], nxt) for p, (_oldest, nxt) in enumerate(bounds)}
    first = journal.read_ranges(ours, MAP_JOURNAL, name, middle, page_size=7)
    again = journal.read_ranges(ours, MAP_JOURNAL, name, middle, page_size=1_000)
    second = journal.read_ranges(ours, MAP_JOURNAL, name, rest)
    assert first == again  # a replayed micro-batch reads the same events
    events = []
    for p, (oldest, nxt) in enumerate(bounds):
        got = first[p].events + second[p].events
        assert [e.sequence for e in got] == list(range(oldest, nxt)) and first[p].next_sequence == middle[p][1]
        events += got
    assert len(events) == 4_000
    assert sorted((e.key, e.new_value) for e in events if e.type == "UPDATED") == sorted(
        (f"k{i}", -i) for i in range(0, 3_000, 3)
    )
    m.put("late", 1)  # written after the driver looked: not in the range
    assert journal.read_ranges(ours, MAP_JOURNAL, name, rest) == second
    nxt = journal.bounds(ours, MAP_JOURNAL, name)[0][1]
    with pytest.raises(JournalSequenceError, match=f"has no event {nxt} yet"):
        journal.read_ranges(ours, MAP_JOURNAL, name, {0: (nxt, nxt + 4)})  # a range past what the driver saw
    with pytest.raises(JournalSequenceError, match=f"ends at sequence {nxt - 1}"):
        journal.read_ranges(ours, MAP_JOURNAL, name, {0: (nxt + 5, nxt + 9)})  # a sequence of another journal


def test_journal_ranges_name_what_was_lost(client) -> None:
    name = unique("smalljournal")
    ours = client_for(URL)
    m = client.get_map(name).blocking()
    partition = client.partition_service.get_partition_id("hot")
    for i in range(30):
        m.put("hot", i)
    with pytest.raises(JournalEventsLostError, match=f"events 2..9 of partition {partition}"):
        journal.read_ranges(ours, MAP_JOURNAL, name, {partition: (2, 10)})  # only [2, 10) was asked for
    page = journal.read_ranges(ours, MAP_JOURNAL, name, {partition: (2, 25)}, allow_lost=True)[partition]
    assert page.lost == (2, 20) and [e.sequence for e in page.events] == list(range(20, 25))


def test_cache_journal_bounds_and_ranges(client) -> None:
    name = unique("cache-ranges")
    ours = client_for(URL)
    caches.ensure(ours, name)
    caches.put_all(ours, name, {f"k{i}": i for i in range(500)})
    bounds = journal.bounds(ours, CACHE_JOURNAL, name)
    pages = journal.read_ranges(ours, CACHE_JOURNAL, name, dict(enumerate(bounds)))
    events = [e for page in pages.values() for e in page.events]
    assert sorted((e.type, e.key, e.new_value) for e in events) == sorted(("CREATED", f"k{i}", i) for i in range(500))
