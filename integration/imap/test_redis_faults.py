"""The Redis store off the happy path: restarts mid-read and mid-write, a reply lost after the
write was applied, a server that stays down, and a password full of the characters that break
URL handling. Each test runs its own redis-server (``own_redis``) so the shared one is not disturbed.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from urllib.parse import quote, unquote

import pyarrow as pa
import pytest
import redis
from pyspark.sql.types import StructType

from jetconnect._connector import WriteContext
from jetconnect.errors import SinkError
from jetconnect_imap import EventType, StoreError, connect
from jetconnect_imap.factories import list_sink, map_journal, map_sink, map_source, map_with_merging
from jetconnect_imap.store import open_store

# What `appendonly yes` buys in production: a restarted Redis still has what it acknowledged
# (`always`: even the last write before a SIGKILL), so what the test wrote can be counted after.
DURABLE = ["--appendonly", "yes", "--appendfsync", "always"]
# Every character that broke URL redaction or parsing somewhere: @ # / % ' \ and a %-escape.
CANARY = "c@n#ary/%41'\\x"


def _ctx(batch: int | None, partition: int = 0) -> WriteContext:
    return WriteContext(partition_id=partition, attempt=0, batch_id=batch, query_id="q-faults", schema=StructType())


def _batches(n: int, size: int = 1000, start: int = 0):
    for offset in range(start, start + n, size):
        yield pa.RecordBatch.from_pylist(
            [{"key": f"k{i}", "value": i} for i in range(offset, min(offset + size, start + n))]
        )


def _restart_when(server, ready: Callable[[], bool], down_for: float, log: list[str]) -> threading.Thread:
    """SIGKILL ``server`` as soon as ``ready()``, keep it down ``down_for`` s, start it again."""

    def run() -> None:
        deadline = time.monotonic() + 60
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.005)
        server.kill()
        log.append("killed")
        time.sleep(down_for)
        server.start()
        log.append("restarted")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _events_past(port: int, name: str, partitions: int, count: int) -> Callable[[], bool]:
    """True once map ``name`` on the server at ``port`` has journalled more than ``count`` events."""
    raw = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1)
    keys = [f"jc:{{imap:{name}:{p}}}:seq" for p in range(partitions)]

    def past() -> bool:
        try:
            return sum(int(v or 0) for v in raw.mget(keys)) > count
        except redis.RedisError:
            return False

    return past


def _retries_logged(caplog, port: int) -> int:
    return sum(1 for r in caplog.records if f"127.0.0.1:{port}" in r.getMessage() and "retrying" in r.getMessage())


def test_writes_retry_through_a_restart_and_apply_once(own_redis, name, caplog) -> None:
    caplog.set_level(logging.WARNING)
    server = own_redis(DURABLE)
    url = server.url()
    events: list[str] = []
    target = connect(url).map(name("restart-write"), partitions=16, journal_capacity=1_000_000)

    # A streaming sink task (progress records) of 100 chunks, SIGKILLed and restarted mid-way.
    sink = map_sink(target.name, store=url, chunk_rows=200)
    restarter = _restart_when(server, _events_past(server.port, target.name, 16, 1_000), 0.7, events)
    report = sink.write_partition(_batches(20_000), _ctx(batch=0))
    restarter.join(30)
    assert events == ["killed", "restarted"] and report.rows == 20_000
    # Plain puts (no progress record: the one-shot markers guard them), killed mid-way too.
    restarter = _restart_when(server, _events_past(server.port, target.name, 16, 21_000), 0.3, events)
    target.put_all({f"p{i}": i for i in range(20_000)})
    restarter.join(30)
    assert events == ["killed", "restarted"] * 2

    assert target.to_dict() == {**{f"k{i}": i for i in range(20_000)}, **{f"p{i}": i for i in range(20_000)}}
    # One ADDED event per key and nothing else: a chunk applied twice would add UPDATED events.
    kinds = Counter((e.type, e.key) for e in target.journal())
    assert set(kinds.values()) == {1} and {t for t, _ in kinds} == {EventType.ADDED} and len(kinds) == 40_000
    assert _retries_logged(caplog, server.port) >= 2  # the retries were ours, logged, naming the store


def test_a_cluster_node_restarted_mid_write_and_mid_read(own_cluster, name, caplog) -> None:
    caplog.set_level(logging.WARNING)
    nodes = own_cluster(DURABLE)
    url = f"redis+cluster://127.0.0.1:{nodes[0].port}"
    target = connect(url).map(name("cluster-restart"), partitions=16, journal_capacity=1_000_000)
    victim = nodes[1]  # not the node the client first asks: it must route around it, then back
    raw = redis.RedisCluster(host="127.0.0.1", port=nodes[0].port)
    events: list[str] = []

    def past_1000() -> bool:
        try:
            return sum(int(raw.get(f"jc:{{imap:{target.name}:{p}}}:seq") or 0) for p in range(16)) > 1_000
        except redis.RedisError:
            return False

    restarter = _restart_when(victim, past_1000, 0.7, events)
    map_sink(target.name, store=url, chunk_rows=200).write_partition(_batches(10_000), _ctx(batch=0))
    restarter.join(30)
    assert events == ["killed", "restarted"]

    entries = target.entries()
    seen = [next(entries) for _ in range(100)]
    victim.kill()
    threading.Timer(0.7, victim.start).start()
    seen += list(entries)
    assert len(seen) == 10_000 and dict(seen) == {f"k{i}": i for i in range(10_000)}
    kinds = Counter((e.type, e.key) for e in target.journal())
    assert set(kinds.values()) == {1} and {t for t, _ in kinds} == {EventType.ADDED} and len(kinds) == 10_000
    assert _retries_logged(caplog, nodes[0].port) >= 2
    raw.close()


def test_reads_retry_through_a_restart(own_redis, name) -> None:
    server = own_redis(DURABLE)
    url = server.url()
    m = connect(url).map(name("restart-read"), partitions=8)
    expected = {f"k{i}": {"n": i} for i in range(5_000)}
    m.put_all(expected)
    source = map_journal(m.name, store=url, parallelism=2)
    start = source.initial_offset()
    end = source.latest_offset(start, None)
    before = [row for r in source.ranges(start, end) for row in _rows_of(source.read_range(r))]

    entries = m.entries()
    seen = [next(entries) for _ in range(1_000)]
    server.kill()  # mid-scan: the rest is read from a server that is down, then back
    threading.Timer(0.7, server.start).start()
    seen += list(entries)
    assert len(seen) == 5_000 and dict(seen) == expected  # nothing missing, nothing twice

    server.kill()
    threading.Timer(0.5, server.start).start()
    rows = map_source(m.name, store=url, parallelism=3)
    assert sorted(row for split in rows.splits() for row in rows.read_split(split)) == sorted(
        (k, f'{{"n":{v["n"]}}}') for k, v in expected.items()
    )
    server.kill()
    threading.Timer(0.5, server.start).start()
    assert [row for r in source.ranges(start, end) for row in _rows_of(source.read_range(r))] == before


class LosingProxy:
    """A TCP proxy in front of a real Redis that can lose the reply to the next script call:
    Redis has applied the write, the client sees its connection drop before the answer."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lose_next = threading.Event()
        self.lost = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            armed = threading.Event()
            threading.Thread(target=self._requests, args=(client, upstream, armed), daemon=True).start()
            threading.Thread(target=self._replies, args=(upstream, client, armed), daemon=True).start()

    def _requests(self, client: socket.socket, upstream: socket.socket, armed: threading.Event) -> None:
        try:
            while data := client.recv(65536):
                if self.lose_next.is_set() and b"EVALSHA" in data:
                    self.lose_next.clear()
                    armed.set()  # before sending: the reply cannot overtake it
                upstream.sendall(data)
        except OSError:
            pass
        _close(client, upstream)

    def _replies(self, upstream: socket.socket, client: socket.socket, armed: threading.Event) -> None:
        try:
            while data := upstream.recv(65536):
                if armed.is_set():  # the script ran; its answer goes nowhere
                    self.lost += 1
                    break
                client.sendall(data)
        except OSError:
            pass
        _close(client, upstream)


def _close(*sockets: socket.socket) -> None:
    for s in sockets:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


@pytest.fixture
def losing_proxy(own_redis):
    server = own_redis()
    proxy = LosingProxy(server.port)
    yield proxy
    proxy.close()


def test_a_write_whose_reply_is_lost_is_not_applied_twice(losing_proxy, name) -> None:
    url = f"redis://127.0.0.1:{losing_proxy.port}/0"
    m = connect(url).map(name("lost-reply"), partitions=4)
    lst = connect(url).list(name("lost-reply-list"))
    m.put("warm", 0)  # scripts loaded: the next EVALSHA is the write itself
    lst.add("warm")

    for step, write in enumerate(
        [
            lambda: m.put("a", 1),  # read-modify-write, no progress record
            lambda: m.put_all({"b": 2, "c": 3}),  # plain write, no progress record
            lambda: lst.add_all([1, 2]),  # list append, no progress record
            lambda: map_with_merging(
                m.name,
                key_fn=lambda r: r["key"],
                value_fn=lambda r: r["value"],
                merge_fn=lambda old, new: old + new,
                store=url,
            ).write_partition(iter([pa.RecordBatch.from_pylist([{"key": "sum", "value": 5}])]), _ctx(batch=7)),
            lambda: m.clear(),
        ]
    ):
        losing_proxy.lose_next.set()
        write()
        assert losing_proxy.lost == step + 1, "the reply was not lost: the test proves nothing"

    assert lst.to_list() == ["warm", 1, 2]
    kinds = [(e.type, e.key) for e in m.journal()]
    assert Counter(kinds) == Counter(
        [(EventType.ADDED, k) for k in ["warm", "a", "b", "c", "sum"]] + [(EventType.CLEARED, None)] * 4
    )
    assert len(m) == 0


def test_a_store_that_stays_down_fails_in_bounded_time_naming_it(own_redis, name, caplog) -> None:
    _debug_logs(caplog)
    server = own_redis(password=CANARY)
    url = server.url(query="retry_deadline=1.5")
    m = connect(url).map(name("down"), partitions=4)
    m.put("k", 1)
    server.kill()

    started = time.monotonic()
    with pytest.raises(StoreError) as info:
        m.get("k")
    assert 1.0 <= time.monotonic() - started < 10
    message = str(info.value)
    assert f"127.0.0.1:{server.port}" in message and "ConnectionError" in message and "map" in message
    with pytest.raises(SinkError, match=f"sink 'map' writing map '{m.name}'.*127.0.0.1:{server.port}") as sink_info:
        map_sink(m.name, store=url).write_partition(_batches(10), _ctx(batch=1))
    _assert_no_canary(info.value, caplog)
    _assert_no_canary(sink_info.value, caplog)


def _debug_logs(caplog) -> None:
    """Everything jetconnect and redis-py log, down to DEBUG, is checked for the password."""
    for logger in ("jetconnect", "jetconnect_imap", "redis"):
        caplog.set_level(logging.DEBUG, logger=logger)


def _secret_forms() -> list[str]:
    # the password as written, as Redis gets it (%41 -> A), percent-encoded: none may show
    return [CANARY, unquote(CANARY), quote(CANARY, safe=""), quote(unquote(CANARY), safe="")]


def _assert_no_canary(exc: BaseException | None, caplog, *texts: str) -> None:
    shown = list(texts) + [r.getMessage() for r in caplog.records]
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:  # the error and everything chained to it
        seen.add(id(exc))
        shown += [str(exc), repr(exc), "".join(traceback.format_exception(exc))]
        exc = exc.__cause__ or exc.__context__
    for text in shown:
        for form in _secret_forms():
            assert form not in text, f"the password shows in: {text[:300]}"


def test_a_password_full_of_url_characters_works_and_never_shows(own_redis, name, caplog, spark) -> None:
    _debug_logs(caplog)
    server = own_redis(password=CANARY)
    url = server.url()  # percent-encoded, as a URL must be
    grid = connect(url)
    m = grid.map(name("canary"), partitions=4)
    m.put_all({"a": 1, "b": {"c": [2]}})
    sink = map_sink(name("canary-copy"), store=url)
    sink.write_partition(_batches(5), _ctx(batch=0))
    assert connect(url).map(sink.map_name).to_dict() == {f"k{i}": i for i in range(5)}
    things = [
        open_store(url),
        grid,
        m,
        grid.list("l"),
        sink,
        list_sink("l", store=url),
        map_source(m.name, store=url),
        map_journal(m.name, store=url),
        map_with_merging(m.name, key_fn=len, value_fn=len, merge_fn=max, store=url),
    ]
    texts = [repr(t) for t in things]
    assert all(f"127.0.0.1:{server.port}" in t for t in texts if "Grid(" in t or "Store(" in t)

    # Spark: the store option travels through the plan; explain() and the data must not show it.
    df = spark.read.format("jetconnect.map").option("name", m.name).option("store", url).load()
    assert sorted(df.collect()) == [("a", "1"), ("b", '{"c":[2]}')]
    texts.append(df._jdf.queryExecution().toString())

    errors: list[BaseException] = []
    wrong = server.url(password=quote("not-" + CANARY, safe=""))  # shows the canary if it shows at all
    raw = f"redis://:{CANARY}@127.0.0.1:{server.port}/0"  # not encoded: %41 decodes, so auth fails
    for bad in (wrong, raw):
        with pytest.raises(StoreError) as info:
            connect(bad).map(name("nope"))
        assert f"127.0.0.1:{server.port}" in str(info.value) and "AuthenticationError" in str(info.value)
        errors.append(info.value)
        texts.append(repr(open_store(bad)))
    for exc in errors:
        _assert_no_canary(exc, caplog, *texts)


def _rows_of(output) -> list[tuple]:
    """What a ``read_range`` yielded, as rows: Arrow batches (the plain journal) cut into tuples."""
    rows: list[tuple] = []
    for item in output:
        if isinstance(item, pa.RecordBatch):
            rows.extend(zip(*(column.to_pylist() for column in item.columns)))
        else:
            rows.append(item)
    return rows
