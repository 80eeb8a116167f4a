"""The connectors' operations on a Hazelcast cluster, as its client (``store="hazelcast://..."``).

The embedded store (:mod:`jetconnect_imap.store`) keeps serialised JSON and its own journal; a
Hazelcast member keeps typed values and its own journal, and runs predicates, projections and
entry processors itself. So the connectors share everything above the data (options, schemas,
row shaping, chunking, the journal's offsets and overflow rules) and meet the two backends at
the level of *whole operations on one Spark task's share*: read these partitions, put this
chunk, merge this chunk, append these items. This module is the Hazelcast side of each:

* reads go partition by partition with ``Map.fetchEntries`` (the iteration pointers of Jet's
  remote map reader, 2,048 entries a page), or, with a Hazelcast predicate or projection, one
  member-side query per partition (a ``PartitionPredicate`` around it: the member evaluates it
  on that partition only and sends the matches);
* puts are ``Map.putAll`` grouped by partition, every partition's request in flight at once;
* merging and updating read the current values and write each with ``replace_if_same`` /
  ``put_if_absent`` / ``remove_if_same``: a compare-and-set, read again and recomputed when
  another writer got there first, so no concurrent update is lost;
* entry processors are Hazelcast's own (Java classes the members know), run on the member
  that owns the key with ``executeOnKey``.

Values are mapped by :mod:`jetconnect_imap.hz_values` (never a Python pickle).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from hazelcast.core import HazelcastJsonValue
from hazelcast.errors import (
    HazelcastError,
    HazelcastInstanceNotActiveError,
    MemberLeftError,
    OperationTimeoutError,
    PartitionMigratingError,
    RetryableHazelcastError,
    RetryableIOError,
    TargetDisconnectedError,
    TargetNotMemberError,
    WrongTargetError,
)
from hazelcast.future import combine_futures
from hazelcast.protocol.codec import map_put_all_codec
from hazelcast.serialization.api import IdentifiedDataSerializable

from jetconnect.api import Backoff, RetriesExhausted, redact_url, retry_call
from jetconnect_imap.store import StoreError

#: Entries a ``fetchEntries`` page brings (Jet's remote map reader asks for the same).
FETCH_BATCH = 2048
#: How long an idempotent operation is retried while the cluster changes (a member lost: the
#: members notice in ~10 s, then promote the backups).
RETRY_DEADLINE_S = 60.0
T = TypeVar("T")
#: What a cluster that is changing raises: the operation may succeed once it settles.
_TRANSIENT: tuple[type[BaseException], ...] = (
    TargetDisconnectedError,
    TargetNotMemberError,
    MemberLeftError,
    HazelcastInstanceNotActiveError,
    PartitionMigratingError,
    WrongTargetError,
    RetryableHazelcastError,
    RetryableIOError,
    OperationTimeoutError,
)
#: How often a compare-and-set of one key is retried when other writers keep changing it.
CAS_ATTEMPTS = 100
#: Hazelcast's factory of its built-in predicates, and its partition predicate's class id.
_PREDICATE_FACTORY_ID = -20
_PARTITION_PREDICATE_ID = 16


def is_hazelcast(url: str | None) -> bool:
    """Whether ``url`` names a Hazelcast cluster (``hazelcast://members/cluster``)."""
    return bool(url) and urlsplit(str(url)).scheme.lower() == "hazelcast"


class PartitionPredicate(IdentifiedDataSerializable):
    """Hazelcast's ``Predicates.partitionPredicate(partitionKey, target)``: ``target`` evaluated
    by the member on the partition of ``partition_key`` only (the Python client has none)."""

    def __init__(self, partition_key: Any, target: Any) -> None:
        self.partition_key, self.target = partition_key, target

    def write_data(self, object_data_output: Any) -> None:
        object_data_output.write_object(self.partition_key)
        object_data_output.write_object(self.target)

    def read_data(self, object_data_input: Any) -> None:  # never sent back by a member
        self.partition_key = object_data_input.read_object()
        self.target = object_data_input.read_object()

    def get_factory_id(self) -> int:
        return _PREDICATE_FACTORY_ID

    def get_class_id(self) -> int:
        return _PARTITION_PREDICATE_ID


class HazelcastStore:
    """One client of one cluster (shared per process and configuration by ``hz_client``)."""

    def __init__(self, url: str, client_config: Mapping[str, Any] | None = None) -> None:
        self.url = url
        self.client_config = client_config
        self.client  # noqa: B018 - connect now: a wrong URL or cluster fails here, naming the store
        self._partition_keys: list[Any] | None = None
        self._live_caches: set[str] = set()

    @property
    def client(self) -> Any:
        """The process's client of this cluster (hz_client keeps one per URL and config)."""
        from jetconnect_imap.hz_client import connect

        return connect(self.url, self.client_config)

    def retrying(self, what: str, operation: Callable[[], T]) -> T:
        """``operation()``, run again while the cluster changes under it (a member lost, a
        partition migrating) for up to :data:`RETRY_DEADLINE_S`: only for operations whose
        repetition changes nothing (reads, puts of given values, removals). Other errors
        become a StoreError naming the cluster at once."""
        try:
            return retry_call(
                operation,
                retry_on=(HazelcastError, StoreError),
                retry_if=is_transient,
                what=f"{what} on {self.display_url}",
                backoff=Backoff(initial=0.2, maximum=2.0, deadline=RETRY_DEADLINE_S),
            )
        except RetriesExhausted as exc:
            raise StoreError(str(exc)) from exc
        except HazelcastError as exc:
            raise self.fail(what, exc) from exc

    @property
    def display_url(self) -> str:
        return redact_url(self.url)

    def __repr__(self) -> str:
        return f"HazelcastStore({self.display_url!r})"

    def fail(self, what: str, exc: BaseException) -> StoreError:
        """A StoreError naming the cluster (never its secrets) and what was being done."""
        return StoreError(f"{what} on {self.display_url}: {type(exc).__name__}: {exc}")

    # --- partitions ----------------------------------------------------------------------------

    def partition_count(self) -> int:
        return int(self.client.partition_service.get_partition_count())

    def partition_key(self, partition: int) -> str:
        """A key the cluster places in ``partition``: what a partition predicate names it by."""
        if self._partition_keys is None:
            count = self.partition_count()
            found: list[Any] = [None] * count
            missing, candidate = count, 0
            owner = self.client.partition_service.get_partition_id
            while missing:
                pid = owner(f"p{candidate}")
                if found[pid] is None:
                    found[pid], missing = f"p{candidate}", missing - 1
                candidate += 1
            self._partition_keys = found
        return str(self._partition_keys[partition])

    # --- map reads -----------------------------------------------------------------------------

    def scan(self, name: str, partition: int) -> list[tuple[Any, Any]]:
        """Every ``(key, value)`` of one partition, page by page (``Map.fetchEntries``).

        The whole partition is read before any entry is handed on: iteration pointers index the
        owner's storage, and after the owner is lost its backup (now the owner) stores the same
        entries in another order, so a read cut by a lost member starts the partition again
        rather than continue with pointers that would skip or repeat entries.
        """
        return self.retrying(f"reading map '{name}' partition {partition}", lambda: self._scan_once(name, partition))

    def _scan_once(self, name: str, partition: int, cache: bool = False) -> list[tuple[Any, Any]]:
        from jetconnect_imap import hz_protocol

        client = self.client
        fetch = hz_protocol.cache_fetch_entries if cache else hz_protocol.fetch_entries
        found: list[tuple[Any, Any]] = []
        pointers = None
        while True:
            before = pointers
            pointers, entries = fetch(client, name, partition, pointers, FETCH_BATCH)
            found.extend(entries)
            if hz_protocol.exhausted(pointers) or (not entries and pointers == before):
                return found

    # --- caches (JCache) -----------------------------------------------------------------------

    def cache_scan(self, name: str, partition: int) -> list[tuple[Any, Any]]:
        """Every live ``(key, value)`` of one partition of cache ``name`` (``Cache.iterateEntries``;
        the members skip expired entries), read whole as :meth:`scan` does."""
        self.cache_ensure(name)
        return self.retrying(
            f"reading cache '{name}' partition {partition}", lambda: self._scan_once(name, partition, cache=True)
        )

    def cache_ensure(self, name: str) -> None:
        """Make the cache declared in the members' configuration live (once per process)."""
        from jetconnect_imap import hz_protocol

        if name not in self._live_caches:
            self.retrying(f"opening cache '{name}'", lambda: hz_protocol.cache_ensure(self.client, name))
            self._live_caches.add(name)

    def cache_put(self, name: str, entries: Sequence[tuple[Any, Any]]) -> None:
        """``Cache.putAll`` of ``entries``, one request per partition (the same values again
        leave the same cache: repeated whole while the cluster changes)."""
        from jetconnect_imap import hz_protocol

        self.cache_ensure(name)
        last = {hashable(key): (key, value) for key, value in entries}  # a key's last value wins
        self.retrying(
            f"writing cache '{name}'", lambda: hz_protocol.cache_put_all(self.client, name, list(last.values()))
        )

    def query(self, name: str, partition: int, predicate: Any, projection: Any) -> Iterator[Any]:
        """What ``predicate`` (and ``projection``) select in one partition, evaluated by the
        member that owns it: ``(key, value)`` pairs, or the projected values."""
        where = PartitionPredicate(self.partition_key(partition), predicate if predicate is not None else _true())

        def run() -> list[Any]:
            imap = self.client.get_map(name).blocking()
            return list(imap.project(projection, where) if projection is not None else imap.entry_set(where))

        return iter(self.retrying(f"querying map '{name}' partition {partition}", run))

    # --- map writes ----------------------------------------------------------------------------

    def put_chunk(self, name: str, entries: Iterable[tuple[Any, Any]]) -> int:
        """Put ``(key, value)`` pairs (a None value removes the key): one ``putAll`` request per
        partition, all in flight at once, then the removals. A key's last pair wins, as it would
        applied in order. Returns the number of pairs."""
        proxy = self.client.get_map(name)
        to_data = proxy._to_data
        partition_of = self.client.partition_service.get_partition_id
        last: dict[Any, tuple[Any, Any]] = {}  # Data hashes and compares by its bytes
        count = 0
        for key, value in entries:
            key_data = to_data(key)
            last[key_data] = (key_data, None if value is None else to_data(value))
            count += 1
        puts: dict[int, list[Any]] = {}
        removals = []
        for key_data, value_data in last.values():
            if value_data is None:
                removals.append(key_data)
            else:
                puts.setdefault(partition_of(key_data), []).append((key_data, value_data))

        def write() -> None:
            # the same values again, or a removal again, leave the same map: safe to repeat whole
            futures = [
                proxy._invoke_on_partition(map_put_all_codec.encode_request(name, pairs, False), pid)
                for pid, pairs in puts.items()
            ]
            combine_futures(futures).result()
            if removals:
                combine_futures([proxy.delete(key) for key in removals]).result()

        self.retrying(f"writing map '{name}'", write)
        return count

    def put_serialized(self, name: str, keys: Sequence[bytes], values: Sequence[bytes | None]) -> int:
        """:meth:`put_chunk` of keys and values already serialised (the bytes of their ``Data``,
        from :func:`jetconnect_imap.hz_bulk.serialize_column`; a None value removes the key).
        Returns the number of pairs."""
        prepared = self.prepare_put(name, keys, values)
        self.await_put(prepared, self.send_put(prepared))
        return prepared.pairs

    def prepare_put(self, name: str, keys: Sequence[bytes], values: Sequence[bytes | None]) -> PreparedPut:
        """The requests that put serialised ``keys`` and ``values`` (a None value removes the
        key; a key's last pair wins): partitioned and framed by :mod:`jetconnect_imap.hz_bulk`,
        one ``putAll`` per partition. Nothing is sent yet: a sink prepares its next chunk while
        the previous one is in flight."""
        from hazelcast.serialization.data import Data

        from jetconnect_imap import hz_bulk

        last = dict(zip(keys, values))  # bytes hash in C; a key's last value wins
        unique = list(last)
        pids = hz_bulk.partition_ids(unique, self.partition_count()).tolist()
        puts: dict[int, list[tuple[bytes, bytes]]] = {}
        removals = []
        for key, pid in zip(unique, pids):
            value = last[key]
            if value is None:
                removals.append(Data(key))
            else:
                puts.setdefault(pid, []).append((key, value))
        requests = {pid: hz_bulk.put_all_request(name, pairs) for pid, pairs in puts.items()}
        return PreparedPut(name, requests, removals, len(keys))

    def send_put(self, prepared: PreparedPut) -> Any:
        """Every request of ``prepared`` in flight at once (a key is either put or removed, so
        their order does not matter); the future of all of them."""
        proxy = self.client.get_map(prepared.name)
        futures = [proxy._invoke_on_partition(request.copy(), pid) for pid, request in prepared.requests.items()]
        futures += [proxy.delete(key) for key in prepared.removals]
        return combine_futures(futures)

    def await_put(self, prepared: PreparedPut, sent: Any) -> None:
        """Wait for ``sent`` (from :meth:`send_put`); when the cluster changed under it, send the
        whole of ``prepared`` again until it lands (the same values again leave the same map)."""
        first = [sent]

        def write() -> None:
            future = first.pop() if first else self.send_put(prepared)
            future.result()

        self.retrying(f"writing map '{prepared.name}'", write)

    def compare_and_set(
        self,
        name: str,
        keys: Mapping[Any, Any],
        compute: Callable[[Any, Any], Any],
        to_stored: Callable[[Any], Any],
    ) -> None:
        """For each key (``keys``: a hashable stand-in -> the key as sent), ``compute(stand_in,
        current)`` (current as read back, None if absent) and store ``to_stored(new)`` only if
        the entry still holds what was read; else read again and recompute. None from
        ``compute`` removes the entry. No concurrent update is lost; ``compute`` may run more
        than once for a key (once per lost race)."""
        imap = self.client.get_map(name).blocking()
        pending = list(keys)
        try:
            current = self._get_all(imap, keys, pending)
            for _attempt in range(CAS_ATTEMPTS):
                if not pending:
                    return
                lost = []
                for stand_in in pending:
                    key, old = keys[stand_in], current.get(stand_in)
                    new = compute(stand_in, old)
                    if new is None:
                        done = old is None or imap.remove_if_same(key, old)
                    elif old is None:
                        done = imap.put_if_absent(key, to_stored(new)) is None
                    else:
                        done = imap.replace_if_same(key, old, to_stored(new))
                    if not done:
                        lost.append(stand_in)
                pending = lost
                if pending:
                    current = self._get_all(imap, keys, pending)
                    time.sleep(0.001)
        except HazelcastError as exc:
            raise self.fail(f"updating map '{name}'", exc) from exc
        raise StoreError(
            f"updating map '{name}' on {self.display_url}: keys {pending[:5]!r} kept changing under "
            f"{CAS_ATTEMPTS} compare-and-set attempts (another writer, or a value this client reads back "
            "differently from how the member stores it)"
        )

    @staticmethod
    def _get_all(imap: Any, keys: Mapping[Any, Any], wanted: Sequence[Any]) -> dict[Any, Any]:
        """The current values of ``wanted`` stand-ins (one ``getAll``, grouped by partition)."""
        found = imap.get_all([keys[w] for w in wanted]) if wanted else {}
        return {hashable(key): value for key, value in found.items()}

    def execute(self, name: str, calls: Sequence[tuple[Any, Any]]) -> None:
        """Run each ``(key, entry processor)`` on the member owning the key, in order per key."""
        proxy = self.client.get_map(name)
        try:
            by_key: dict[Any, list[Any]] = {}
            for key, processor in calls:
                by_key.setdefault(key, []).append(processor)
            # Keys in parallel, each key's processors one after another (their order counts).
            rounds = max((len(p) for p in by_key.values()), default=0)
            for i in range(rounds):
                combine_futures(
                    [proxy.execute_on_key(key, ps[i]) for key, ps in by_key.items() if i < len(ps)]
                ).result()
        except HazelcastError as exc:
            raise self.fail(f"running entry processors on map '{name}'", exc) from exc

    def size(self, name: str) -> int:
        return int(self.retrying(f"counting map '{name}'", lambda: self.client.get_map(name).blocking().size()))

    # --- lists ---------------------------------------------------------------------------------

    def list_append(self, name: str, items: Sequence[Any]) -> None:
        if not items:
            return
        try:
            self.client.get_list(name).blocking().add_all(list(items))
        except HazelcastError as exc:
            raise self.fail(f"appending to list '{name}'", exc) from exc

    def list_read(self, name: str) -> list[Any]:
        return self.retrying(f"reading list '{name}'", lambda: list(self.client.get_list(name).blocking().get_all()))


@dataclass(frozen=True)
class PreparedPut:
    """A chunk's ``putAll`` requests by partition and its removals, ready to send (and to send
    again: each send copies the requests)."""

    name: str
    requests: Mapping[int, Any]
    removals: Sequence[Any]
    pairs: int


_stores: dict[tuple[str, str], HazelcastStore] = {}


def open_hazelcast(url: str, client_config: Mapping[str, Any] | None = None) -> HazelcastStore:
    """The store of ``url`` and ``client_config``, one per process (Spark reuses its workers)."""
    key = (url, repr(sorted((client_config or {}).items())))
    store = _stores.get(key)
    if store is None:
        store = _stores[key] = HazelcastStore(url, client_config)
    return store


def hashable(value: Any) -> Any:
    """A dict key standing for a key as sent to a member (a bytearray is not hashable, and two
    JSON values are the same key when their text is)."""
    if isinstance(value, (bytearray, bytes)):
        return ("bytes", bytes(value))
    if isinstance(value, HazelcastJsonValue):
        return ("json", value.to_string())
    return value


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` (or the client error it translates) says the cluster is changing: a
    member lost or leaving, a partition migrating. Such an operation may succeed once the
    backups are promoted."""
    cause: BaseException | None = exc
    for _ in range(4):  # the error and up to three causes behind it
        if cause is None:
            return False
        if isinstance(cause, _TRANSIENT):
            return True
        cause = cause.__cause__
    return False


def _true() -> Any:
    from hazelcast.predicate import true

    return true()


def check_entry_processor(processor: Any, owner: str) -> Any:
    """``processor`` if the client can send it to a member as a Java object, else an error: a
    Python function cannot run on a member."""
    from hazelcast.serialization.api import Portable

    if isinstance(processor, (IdentifiedDataSerializable, Portable)):
        return processor
    raise StoreError(
        f"{owner}: on Hazelcast, processor_fn(row) must return an entry processor the members know "
        f"(an IdentifiedDataSerializable, e.g. from jetconnect_imap.hz_processors), not a "
        f"{type(processor).__name__}; a Python function cannot run on a member"
    )


__all__ = [
    "FETCH_BATCH",
    "HazelcastStore",
    "PartitionPredicate",
    "PreparedPut",
    "check_entry_processor",
    "hashable",
    "is_transient",
    "is_hazelcast",
    "open_hazelcast",
]
