"""The Hazelcast backend: the connectors' operations on a Hazelcast 5 cluster, as its client
(``store="hazelcast://..."``).

A member keeps typed values (:mod:`.values` maps rows to them, never to a Python pickle) and its
own journal, and runs predicates, projections and entry processors itself. So:

* reads go partition by partition with ``Map.fetchEntries`` (:mod:`.iteration`: the iteration
  pointers of Jet's remote map reader, 2,048 entries a page), or, with a Hazelcast predicate,
  projection or pushed Spark filter, one member-side query per partition (a partition predicate
  around it: the member evaluates it on that partition only and sends the matches);
* journals are the members' own (:mod:`.journal`), read by exact sequence ranges;
* puts are ``Map.putAll`` grouped by partition from whole serialised columns (:mod:`.bulk`),
  every partition's request in flight at once, the next chunk serialised while one is in flight;
* merging and updating read the current values and write each with ``replace_if_same`` /
  ``put_if_absent`` / ``remove_if_same``: a compare-and-set, read again and recomputed when
  another writer got there first, so no concurrent update is lost;
* entry processors are Hazelcast's own (Java classes the members know), run on the member that
  owns the key with ``executeOnKey``;
* caches are the members' JCache caches (:mod:`.caches`), lists their ILists.

No client write carries a progress record atomically with the data, so each sink's guarantee
rests on what the write is (see :mod:`jetconnect_imap.map_sinks`).
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar, cast

import pyarrow as pa
from hazelcast.core import HazelcastJsonValue
from hazelcast.errors import (
    HazelcastClientNotActiveError,
    HazelcastError,
    HazelcastInstanceNotActiveError,
    HazelcastSerializationError,
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
from hazelcast.protocol.codec import (
    list_get_all_codec,
    map_entries_with_predicate_codec,
    map_project_with_predicate_codec,
)
from hazelcast.serialization.api import IdentifiedDataSerializable, Portable
from hazelcast.serialization.data import Data
from pyspark.sql.pandas.types import from_arrow_type
from pyspark.sql.types import DataType, StructType

from jetconnect.api import Backoff, PlainFilter, RetriesExhausted, retry_call
from jetconnect.errors import OptionError
from jetconnect_imap.backend import (
    Backend,
    CompactFormat,
    EntryChunk,
    KeyFn,
    MapConfig,
    NewValue,
    Progress,
    Structure,
    WriteReport,
    fingerprint,
)
from jetconnect_imap.errors import StoreError, StructureNameError
from jetconnect_imap.events import CacheEventType, EventType, OtherEventType, RawEvent
from jetconnect_imap.hazelcast import bulk, caches, invocation, iteration, journal, processors
from jetconnect_imap.hazelcast.clients import client_for, client_settings, cluster_id
from jetconnect_imap.hazelcast.codec import HazelcastCodec
from jetconnect_imap.hazelcast.codecs import map_put_all
from jetconnect_imap.hazelcast.compact.writer import CompactPlan
from jetconnect_imap.hazelcast.decoding import DataDecoder
from jetconnect_imap.hazelcast.errors import ClusterLostError, HazelcastConnectError, HazelcastProtocolError
from jetconnect_imap.hazelcast.pushdown import to_plain, to_predicate
from jetconnect_imap.hazelcast.values import ValueMappingError, from_hazelcast, to_hazelcast
from jetconnect_imap.json_values import json_ready
from jetconnect_imap.queries import is_member_side

#: How long an idempotent operation is retried while the cluster changes (a member lost: the
#: members notice in ~10 s, then promote the backups).
RETRY_DEADLINE_S = 60.0
#: Entries per partition a schema derived from the data looks at (the first page of each).
SAMPLE_PAGE = 16
#: How often a compare-and-set of one key is retried when other writers keep changing it.
CAS_ATTEMPTS = 100
#: Hazelcast's factory of its built-in predicates, and its partition predicate's class id.
_PREDICATE_FACTORY_ID = -20
_PARTITION_PREDICATE_ID = 16
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
_JOURNALS = {"map": journal.MAP_JOURNAL, "cache": journal.CACHE_JOURNAL}
#: Each journal's event names as the sources' enums (names neither knows: OtherEventType).
_EVENT_TYPES: dict[str, dict[str, Any]] = {
    "map": {
        name: EventType(name) if name in EventType.__members__ else OtherEventType(name)
        for name in journal.MAP_EVENT_TYPES.values()
    },
    "cache": {
        name: CacheEventType(name) if name in CacheEventType.__members__ else OtherEventType(name)
        for name in journal.CACHE_EVENT_TYPES.values()
    },
}


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


@dataclass(frozen=True)
class PreparedPut:
    """A chunk's ``putAll`` requests by partition and its removals, ready to send (and to send
    again: each send copies the requests)."""

    name: str
    requests: Mapping[int, Any]
    removals: Sequence[Any]
    pairs: int


class HazelcastBackend(Backend):
    """A client of one cluster (the process's client of it: :func:`.clients.client_for`)."""

    kind = "hazelcast"

    def __init__(self, url: str, client_config: Mapping[str, Any] | None = None) -> None:
        super().__init__(url, client_config)
        self._partition_keys: list[str] | None = None
        self._live_caches: set[str] = set()
        self._codec = HazelcastCodec(lambda: self.client)
        self._client_seen: Any = None

    def __getstate__(self) -> dict[str, Any]:
        # what a process learnt of the cluster stays in it: an executor asks its own
        return {"url": self.url, "client_config": self.client_config}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.url, self.client_config = state["url"], state["client_config"]
        self._partition_keys, self._live_caches, self._client_seen = None, set(), None
        self._codec = HazelcastCodec(lambda: self.client)

    @property
    def client(self) -> Any:
        """The process's client of this cluster (connected on first use, made again after it shut
        down); what this backend learnt through another client (caches made live) is forgotten."""
        client = client_for(self.url, self.client_config)
        if client is not self._client_seen:
            self._client_seen, self._live_caches = client, set()
        return client

    # --- checks where a connector is built -------------------------------------------------------

    def stored_name(self, structure: Structure, name: str) -> str:
        """The name itself: any non-empty text without control characters (``"orders\\n"`` would
        be another map than ``"orders"``, which no later read by the typed name finds)."""
        if not isinstance(name, str) or not name or not name.isprintable():
            raise StructureNameError(
                f"{structure} name {name!r} must be a non-empty string of printable characters "
                "(no newline, tab or other control character)"
            )
        return name

    def check_queries(self, owner: str, structure: Structure, predicate: Any, projection: Any) -> None:
        if structure == "cache" and (is_member_side(predicate) or is_member_side(projection)):
            raise OptionError(f"{owner}: a JCache cache has no queries; give a Python predicate or projection")

    def check_expiry(self, owner: str, expiry_s: float | None) -> None:
        if expiry_s is not None:
            raise OptionError(
                f"{owner}: on Hazelcast a cache's entries expire by the expiry policy of its "
                "configuration on the members, not by expiry_s"
            )

    # --- running an operation ------------------------------------------------------------------

    def retrying(self, what: str, operation: Callable[[], T]) -> T:
        """``operation()``, run again while the cluster changes under it (a member lost, a
        partition migrating) for up to :data:`RETRY_DEADLINE_S`: only for operations whose
        repetition changes nothing (reads, puts of given values, removals). A client that shut
        down (the cluster lost for longer than its reconnect window) is replaced once: the
        operation runs again on a new client, and if that cannot connect either, the error is a
        :class:`~.errors.ClusterLostError` saying so. Other errors become a StoreError naming the
        cluster at once."""
        lost: list[BaseException] = []

        def attempt() -> T:
            try:
                return operation()  # operations ask self.client each time: a dead one is replaced
            except (HazelcastError, StoreError) as exc:
                if was_lost(exc):
                    lost.append(exc)
                raise

        def retry_if(exc: BaseException) -> bool:
            return is_transient(exc) or (was_lost(exc) and len(lost) == 1)

        try:
            return retry_call(
                attempt,
                retry_on=(HazelcastError, StoreError),
                retry_if=retry_if,
                what=f"{what} on {self.display_url}",
                backoff=Backoff(initial=0.2, maximum=2.0, deadline=RETRY_DEADLINE_S),
            )
        except RetriesExhausted as exc:
            raise (self.lost(what, lost[0]) if lost else StoreError(str(exc))) from exc
        except HazelcastSerializationError as exc:
            raise StoreError(
                f"{what} on {self.display_url}: a key or value this client cannot deserialise "
                f"(written by another client?): {exc}"
            ) from exc
        except HazelcastConnectError as exc:
            if lost:  # the new client could not connect: the cluster is still gone
                raise self.lost(what, lost[0], reconnect=exc) from None
            raise
        except (HazelcastError, StoreError) as exc:
            if was_lost(exc):  # lost again on the new client
                raise self.lost(what, exc) from exc
            if isinstance(exc, HazelcastError):
                raise self.fail(what, exc) from exc
            raise

    def fail(self, what: str, exc: BaseException) -> StoreError:
        """A StoreError naming the cluster (never its secrets) and what was being done; a
        :class:`~.errors.ClusterLostError` when the client shut down for want of its cluster."""
        if was_lost(exc):
            return self.lost(what, exc)
        return StoreError(f"{what} on {self.display_url}: {type(exc).__name__}: {exc}")

    def lost(self, what: str, exc: BaseException, reconnect: BaseException | None = None) -> ClusterLostError:
        """What losing the cluster means for the one who reads the error: what happened (the
        client gave up after its reconnect window) and what the query does now and on restart."""
        window = client_settings(self.url, self.client_config)["cluster_connect_timeout"]
        return ClusterLostError(
            f"{what} on {self.display_url}: lost the cluster: no member answered for longer than the client's "
            f"reconnect window ({window:g} s, client_config['cluster_connect_timeout']) and the client shut down "
            f"({type(exc).__name__}: {exc})"
            + (f"; a new client could not connect either: {reconnect}" if reconnect is not None else "")
            + ". The next operation of this process makes a new client. A streaming query fails now; restarted "
            "from its checkpoint once the cluster is back, it reads or writes its last micro-batch again (a "
            "journal whose cluster came back empty is a new journal: see on_journal_reset); a batch read or "
            "write must be run again"
        )

    # --- reads -----------------------------------------------------------------------------------

    @property
    def codec(self) -> HazelcastCodec:
        return self._codec

    def partition_count(self, structure: Structure, name: str) -> int:
        return int(
            self.retrying("asking the partition count", lambda: self.client.partition_service.get_partition_count())
        )

    def _partition_key(self, partition: int) -> str:
        """A key the cluster places in ``partition``: what a partition predicate names it by."""
        if self._partition_keys is None:
            owner = self.client.partition_service.get_partition_id
            count = self.client.partition_service.get_partition_count()
            found: list[str | None] = [None] * count
            missing, candidate = count, 0
            while missing:
                pid = owner(f"p{candidate}")
                if found[pid] is None:
                    found[pid], missing = f"p{candidate}", missing - 1
                candidate += 1
            self._partition_keys = [str(key) for key in found]
        return self._partition_keys[partition]

    def read_partition(self, structure: Structure, name: str, partition: int) -> list[tuple[Any, Any]]:
        """Every ``(key, value)`` of one partition, read whole before any entry is handed on:
        iteration pointers index the owner's storage, and after the owner is lost its backup (now
        the owner) stores the same entries in another order, so a read cut by a lost member starts
        the partition again rather than continue with pointers that would skip or repeat entries."""
        cache = structure == "cache"
        if cache:
            self._ensure_cache(name)
        return self.retrying(
            f"reading {structure} '{name}' partition {partition}",
            lambda: iteration.read_partition(self.client, name, partition, cache=cache),
        )

    def query(
        self, name: str, partition: int, predicate: Any, projection: Any, pushed: Sequence[PlainFilter] = ()
    ) -> list[Any]:
        """What the user's member-side ``predicate`` and the ``pushed`` Spark filters select in one
        partition (and ``projection`` makes of it), evaluated by the member that owns it."""
        from hazelcast.predicate import and_, true

        parts = ([predicate] if predicate is not None else []) + [to_predicate(f) for f in pushed]
        target = true() if not parts else parts[0] if len(parts) == 1 else and_(*parts)
        where = PartitionPredicate(self._partition_key(partition), target)

        def run() -> list[Any]:
            client = self.client
            to_data, to_object = client._serialization_service.to_data, DataDecoder(client).object
            if projection is not None:
                request = map_project_with_predicate_codec.encode_request(name, to_data(projection), to_data(where))
                found = invocation.result(
                    invocation.invoke(client, request, partition, map_project_with_predicate_codec.decode_response),
                    f"querying map '{name}' partition {partition}",
                )
                return [to_object(item) for item in found]
            request = map_entries_with_predicate_codec.encode_request(name, to_data(where))
            pairs = invocation.result(
                invocation.invoke(client, request, partition, map_entries_with_predicate_codec.decode_response),
                f"querying map '{name}' partition {partition}",
            )
            return [(to_object(k), to_object(v)) for k, v in pairs]

        return self.retrying(f"querying map '{name}' partition {partition}", run)

    def pushable(self, spark_filter: Any, columns: Mapping[str, tuple[str, DataType]]) -> PlainFilter | None:
        return to_plain(spark_filter, columns)

    def read_list(self, name: str) -> list[Any]:
        """Every item, decoded as map values are (Compact records kept for their column)."""

        def run() -> list[Any]:
            client = self.client
            partition = client.partition_service.get_partition_id(name)
            items = invocation.result(
                invocation.invoke(
                    client, list_get_all_codec.encode_request(name), partition, list_get_all_codec.decode_response
                ),
                f"reading list '{name}'",
            )
            to_object = DataDecoder(client).object
            return [to_object(item) for item in items]

        return self.retrying(f"reading list '{name}'", run)

    def sample(self, structure: Structure, name: str) -> list[tuple[Any, Any]]:
        """The first page (:data:`SAMPLE_PAGE` entries) of every partition, all asked at once; a
        list's first items."""
        if structure == "list":
            return [(None, item) for item in self.read_list(name)[: SAMPLE_PAGE * 16]]
        cache = structure == "cache"
        if cache:
            self._ensure_cache(name)

        def run() -> list[tuple[Any, Any]]:
            client = self.client
            count = client.partition_service.get_partition_count()
            futures = [iteration.fetch_page_async(client, name, p, None, SAMPLE_PAGE, cache) for p in range(count)]
            pages = invocation.result(combine_futures(futures), f"sampling {structure} '{name}'")
            to_object = DataDecoder(client).object
            return [(to_object(k), to_object(v)) for _, entries in pages for k, v in entries]

        return self.retrying(f"sampling {structure} '{name}'", run)

    # --- journals --------------------------------------------------------------------------------

    def journal_bounds(self, structure: Structure, name: str) -> list[tuple[int, int]]:
        return self.retrying(
            f"reading the journal bounds of {structure} '{name}'",
            lambda: journal.bounds(self.client, _JOURNALS[structure], name),
        )

    def read_journal(
        self, structure: Structure, name: str, spans: Mapping[int, tuple[int, int]]
    ) -> dict[int, list[RawEvent]]:
        """The members' events as raw events: Jet's type names as the sources' enums, keys and
        values as the client decoded them, no time (Hazelcast's journal events carry none)."""
        # lost events are left out: the source's overflow rule decides on the gap
        pages = self.retrying(
            f"reading the journal of {structure} '{name}'",
            lambda: journal.read_ranges(self.client, _JOURNALS[structure], name, spans, allow_lost=True),
        )
        types = _EVENT_TYPES[structure]
        out: dict[int, list[RawEvent]] = {}
        for partition, page in pages.items():
            events: list[RawEvent] = []
            for e in page.events:
                kind = types.get(e.type)
                if kind is None:
                    raise HazelcastProtocolError(
                        f"the journal of {structure} '{name}' holds an event of type {e.type}, which this "
                        "version of jetconnect does not know"
                    )
                events.append((e.sequence, kind, e.key, e.old_value, e.new_value, None))
            out[partition] = events
        return out

    def journal_retention(self, structure: Structure, name: str) -> tuple[str, str]:
        return (
            "as many events, for as long, as the members' event-journal configuration of it says",
            "raise its capacity or time-to-live on the members",
        )

    def journal_identity(self, structure: Structure, name: str) -> str | None:
        """The cluster's id, which the members make anew when the cluster starts without
        persistence (every member gone, journals with them) and keep while any member lives.
        It does not change when a map is destroyed and made again on a running cluster: that is
        what :meth:`journal_fingerprint` tells."""
        found = cluster_id(self.client)
        return None if found is None else f"cluster {found}"

    def journal_fingerprint(self, structure: Structure, name: str, partition: int, sequence: int) -> str | None:
        """The digest of the event's bytes as the member serialises them (its type, key, old and
        new value)."""
        data = self.retrying(
            f"reading the journal of {structure} '{name}' partition {partition}",
            lambda: journal.event_bytes(self.client, _JOURNALS[structure], name, partition, sequence),
        )
        return None if data is None else fingerprint(data)

    # --- writes ----------------------------------------------------------------------------------

    def put(
        self,
        structure: Structure,
        name: str,
        chunks: Iterable[EntryChunk],
        progress: Progress | None,
        layout: MapConfig | None = None,
        expiry_s: float | None = None,
        compact: Mapping[str, CompactFormat] | None = None,
    ) -> WriteReport:
        """A replayed micro-batch puts the same values again, which leaves the same map or cache:
        no progress record is needed for its content."""
        serialize = _Serializer(self, compact or {})
        if structure == "cache":
            return self._put_cache(name, chunks, serialize)
        return self._put_map(name, chunks, serialize)

    def check_compact(self, owner: str) -> None:
        """Compact records are Hazelcast's own: nothing to refuse."""

    def _put_map(self, name: str, chunks: Iterable[EntryChunk], serialize: _Serializer) -> WriteReport:
        """Each chunk serialised column by column (:func:`.bulk.serialize_column`: the same bytes
        the client makes of each value) while the chunk before it is in flight; a chunk is sent
        only once the one before it has landed, so a later row of a key still wins, even when a
        chunk had to be sent again. At most two chunks are held. A chunk that cannot be sent (a
        null key, a value with no Hazelcast type) fails the task after the chunks before it have
        landed and before any of its own entries leaves."""
        in_flight: tuple[PreparedPut, Any] | None = None
        rows = 0
        try:
            for chunk in chunks:
                try:
                    prepared = self._prepare_put(name, chunk, rows, serialize)
                except (ValueMappingError, StoreError):
                    if in_flight is not None:
                        self._await_put(*in_flight)  # what was sent lands whole: no half chunk
                    raise
                if in_flight is not None:
                    self._await_put(*in_flight)
                in_flight = prepared, self._send_put(prepared)
                rows += prepared.pairs
            if in_flight is not None:
                self._await_put(*in_flight)
        finally:
            in_flight = None
        return WriteReport(rows, False)

    def _prepare_put(self, name: str, chunk: EntryChunk, written: int, serialize: _Serializer) -> PreparedPut:
        """The requests that put a chunk: serialised keys and values (a null value removes the key;
        a key's last pair wins), partitioned and framed, one ``putAll`` per partition. Nothing is
        sent yet."""
        keys: list[bytes] = []
        values: list[bytes | None] = []
        for key_column, value_column in zip(chunk.keys, chunk.values):
            if key_column.null_count:
                first = written + len(keys) + key_column.is_null().to_pylist().index(True)
                raise ValueMappingError(
                    f"column '{chunk.key_column}' holds a null key (row {first} of this task), which Hazelcast "
                    f"refuses; the {written} row(s) before this chunk were written"
                )
            keys += cast(list[bytes], serialize("key", key_column, chunk.key_column))
            values += serialize("value", value_column, chunk.value_column)
        last = dict(zip(keys, values))  # bytes hash in C; a key's last value wins
        unique = list(last)
        pids = bulk.partition_ids(unique, self.client.partition_service.get_partition_count()).tolist()
        puts: dict[int, list[tuple[bytes, bytes]]] = {}
        removals = []
        for key, pid in zip(unique, pids):
            value = last[key]
            if value is None:
                removals.append(Data(key))
            else:
                puts.setdefault(pid, []).append((key, value))
        requests = {pid: map_put_all.encode_request(name, pairs, False) for pid, pairs in puts.items()}
        return PreparedPut(name, requests, removals, len(keys))

    def _send_put(self, prepared: PreparedPut) -> Any:
        """Every request of ``prepared`` in flight at once (a key is either put or removed, so
        their order does not matter); the future of all of them."""
        proxy = self.client.get_map(prepared.name)
        futures = [proxy._invoke_on_partition(request.copy(), pid) for pid, request in prepared.requests.items()]
        futures += [proxy.delete(key) for key in prepared.removals]
        return combine_futures(futures)

    def _await_put(self, prepared: PreparedPut, sent: Any) -> None:
        """Wait for ``sent``; when the cluster changed under it, send the whole of ``prepared``
        again until it lands (the same values again leave the same map)."""
        first = [sent]

        def write() -> None:
            future = first.pop() if first else self._send_put(prepared)
            future.result()

        self.retrying(f"writing map '{prepared.name}'", write)

    def _put_cache(self, name: str, chunks: Iterable[EntryChunk], serialize: _Serializer) -> WriteReport:
        """``Cache.putAll`` per chunk, one request per partition (JCache refuses null values,
        and a removal by null with them)."""
        self._ensure_cache(name)
        rows = 0
        for chunk in chunks:
            pairs = _cache_entries(chunk, serialize)
            self.retrying(f"writing cache '{name}'", partial(caches.put_all, self.client, name, pairs))
            rows += chunk.rows
        return WriteReport(rows, False)

    def _ensure_cache(self, name: str) -> None:
        """Make the cache declared in the members' configuration live (once per process and name)."""
        if name not in self._live_caches:
            self.retrying(f"opening cache '{name}'", lambda: caches.ensure(self.client, name))
            self._live_caches.add(name)

    def update(
        self,
        name: str,
        chunks: Iterable[list[dict[str, Any]]],
        key_fn: KeyFn,
        new_value: NewValue,
        progress: Progress | None,
        layout: MapConfig | None = None,
    ) -> WriteReport:
        """Each chunk's keys read, recomputed from their rows in order and written with
        compare-and-set (recomputed again for a key another writer changed meanwhile)."""
        rows = 0
        for chunk in chunks:
            member_keys: dict[Any, Any] = {}
            key_rows: dict[Any, list[dict[str, Any]]] = defaultdict(list)
            for row in chunk:
                member_key = to_hazelcast(key_fn(row), "key_fn(row)")
                stand_in = hashable(member_key)
                member_keys.setdefault(stand_in, member_key)
                key_rows[stand_in].append(row)
            rows += len(chunk)
            self._compare_and_set(name, member_keys, partial(_recompute, new_value, member_keys, key_rows))
        return WriteReport(rows, False)

    def _compare_and_set(self, name: str, keys: Mapping[Any, Any], compute: Callable[[Any, Any], Any]) -> None:
        """For each key (``keys``: a hashable stand-in -> the key as sent), ``compute(stand_in,
        current)`` (current as read back, None if absent) and store the new value only if the
        entry still holds what was read; else read again and recompute. None from ``compute``
        removes the entry. No concurrent update is lost; ``compute`` may run more than once for a
        key (once per lost race)."""
        imap = self.client.get_map(name).blocking()
        pending = list(keys)
        try:
            current = _get_all(imap, keys, pending)
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
                        done = imap.put_if_absent(key, to_hazelcast(new, "the new value")) is None
                    else:
                        done = imap.replace_if_same(key, old, to_hazelcast(new, "the new value"))
                    if not done:
                        lost.append(stand_in)
                pending = lost
                if pending:
                    current = _get_all(imap, keys, pending)
                    time.sleep(0.001)
        except HazelcastError as exc:
            raise self.fail(f"updating map '{name}'", exc) from exc
        raise StoreError(
            f"updating map '{name}' on {self.display_url}: keys {pending[:5]!r} kept changing under "
            f"{CAS_ATTEMPTS} compare-and-set attempts (another writer, or a value this client reads back "
            "differently from how the member stores it)"
        )

    def process(
        self,
        name: str,
        chunks: Iterable[list[dict[str, Any]]],
        key_fn: KeyFn,
        processor_fn: Callable[[Any], Any],
        progress: Progress | None,
        layout: MapConfig | None = None,
    ) -> WriteReport:
        """``processor_fn(row)`` returns an entry processor the members know (e.g. from
        :mod:`.processors`), run on the member owning ``key_fn(row)``; a key's processors in row
        order, keys in parallel."""
        rows = 0
        for chunk in chunks:
            calls = [(to_hazelcast(key_fn(row), "key_fn(row)"), _entry_processor(processor_fn(row))) for row in chunk]
            rows += len(chunk)
            self._execute(name, calls)
        return WriteReport(rows, False)

    def _execute(self, name: str, calls: Sequence[tuple[Any, Any]]) -> None:
        proxy = self.client.get_map(name)
        try:
            by_key: dict[Any, list[Any]] = {}
            for key, processor in calls:
                by_key.setdefault(hashable(key), []).append((key, processor))
            # Keys in parallel, each key's processors one after another (their order counts).
            rounds = max((len(p) for p in by_key.values()), default=0)
            for i in range(rounds):
                combine_futures([proxy.execute_on_key(*ps[i]) for ps in by_key.values() if i < len(ps)]).result()
        except HazelcastError as exc:
            factory = _UNKNOWN_FACTORY.search(str(exc))
            if factory is not None:
                raise StoreError(_unknown_factory(name, self.display_url, int(factory.group(1)))) from exc
            raise self.fail(f"running entry processors on map '{name}'", exc) from exc

    def append(self, name: str, chunks: Iterable[tuple[list[Any], str]], progress: Progress | None) -> WriteReport:
        """Each chunk with one ``addAll`` (no progress record: a replayed batch is appended again)."""
        rows = 0
        for items, column in chunks:
            values = [to_hazelcast(v, column) for v in items]
            if values:
                try:
                    self.client.get_list(name).blocking().add_all(values)
                except HazelcastError as exc:
                    raise self.fail(f"appending to list '{name}'", exc) from exc
            rows += len(values)
        return WriteReport(rows, False)


def _cache_entries(chunk: EntryChunk, serialize: _Serializer) -> list[tuple[Any, Any]]:
    """A chunk's entries as the cache keeps them (a key's last value wins); JCache refuses null
    keys and values (and so removals by null)."""
    entries: dict[Any, tuple[Any, Any]] = {}
    for key_column, value_column in zip(chunk.keys, chunk.values):
        if key_column.null_count:
            raise ValueMappingError(f"column '{chunk.key_column}' holds a null key, which Hazelcast refuses")
        if value_column.null_count:
            raise ValueMappingError(
                f"column '{chunk.value_column}': a null value; JCache refuses nulls (and removals by null)"
            )
        keys = serialize.objects("key", key_column, chunk.key_column)
        for key, value in zip(keys, serialize.objects("value", value_column, chunk.value_column)):
            entries[hashable(key)] = (key, value)
    return list(entries.values())


class _Serializer:
    """A put's keys and values as the members keep them: Compact records where the sink says so
    (their schemas registered with the cluster before the first is sent), else each Spark value
    as the Java type every client reads (:mod:`.values`, whole columns at once by :mod:`.bulk`)."""

    def __init__(self, backend: HazelcastBackend, compact: Mapping[str, CompactFormat]) -> None:
        self.backend, self.compact = backend, compact
        self._plans: dict[tuple[str, pa.DataType], CompactPlan] = {}

    def _plan(self, which: str, column: pa.Array, name: str) -> CompactPlan | None:
        form = self.compact.get(which)
        if form is None:
            return None
        plan = self._plans.get((which, column.type))
        if plan is None:
            spark = from_arrow_type(column.type, prefer_timestamp_ntz=True)
            if not isinstance(spark, StructType):
                raise ValueMappingError(
                    f"column '{name}' is {spark.simpleString()}: a Compact {which} is a record, written from a struct "
                    f"column (struct(...) of the fields of {form.type_name!r})"
                )
            plan = CompactPlan.of(spark, form.type_name, form.nested, name)
            plan.big_endian = getattr(self.backend.client._serialization_service, "_is_big_endian", True)
            schemas = self.backend.codec.compact.schemas
            for schema in plan.schemas.values():  # before any value of them leaves
                schemas.replicate(schema)
            self._plans[(which, column.type)] = plan
        return plan

    def __call__(self, which: str, column: pa.Array, name: str) -> list[bytes | None]:
        """The ``Data`` bytes of each value of ``column`` (None for a null)."""
        plan = self._plan(which, column, name)
        if plan is not None:
            return plan.encode(column, f"column '{name}'")
        service = self.backend.client._serialization_service
        return bulk.serialize_column(column, name, service.to_data, getattr(service, "_is_big_endian", True))

    def objects(self, which: str, column: pa.Array, name: str) -> list[Any]:
        """What the client's proxies take: ``Data`` of Compact records, else mapped values."""
        plan = self._plan(which, column, name)
        if plan is not None:
            return [Data(raw) for raw in plan.encode(column, f"column '{name}'")]
        return [to_hazelcast(value, name) for value in json_ready(column, name)]


def _recompute(
    new_value: NewValue,
    member_keys: Mapping[Any, Any],
    key_rows: Mapping[Any, list[dict[str, Any]]],
    stand_in: Any,
    old: Any,
) -> Any:
    """A key's new value from its current one and its rows, on plain Python values."""
    return new_value(from_hazelcast(member_keys[stand_in]), from_hazelcast(old), key_rows[stand_in])


_UNKNOWN_FACTORY = re.compile(r"No DataSerializerFactory registered for namespace: (-?\d+)")


def _unknown_factory(name: str, where: str, factory: int) -> str:
    """What to do when the members know no class of an entry processor's factory."""
    if factory == processors.FACTORY_ID:
        return (
            f"running entry processors on map '{name}' on {where}: the members do not know jetconnect's entry "
            f"processors (factory {factory}, class {processors.FACTORY_CLASS}): build their jar with "
            "`python -m jetconnect_imap.hazelcast.processors jar --classpath <the members' hazelcast jar> --out "
            "jetconnect-processors.jar`, put it on every member's classpath, and register the factory in the "
            f"members' configuration (serialization: data-serializable-factories: factory-id {factory}, class-name "
            f"{processors.FACTORY_CLASS}); then restart them"
        )
    return (
        f"running entry processors on map '{name}' on {where}: the members know no IdentifiedDataSerializable "
        f"factory {factory}: the processor's Java class and its factory must be on every member's classpath and "
        "in its configuration (serialization: data-serializable-factories)"
    )


def _get_all(imap: Any, keys: Mapping[Any, Any], wanted: Sequence[Any]) -> dict[Any, Any]:
    """The current values of ``wanted`` stand-ins (one ``getAll``, grouped by partition)."""
    found = imap.get_all([keys[w] for w in wanted]) if wanted else {}
    return {hashable(key): value for key, value in found.items()}


def _entry_processor(processor: Any) -> Any:
    """``processor`` if the client can send it to a member as a Java object, else an error: a
    Python function cannot run on a member."""
    if isinstance(processor, (IdentifiedDataSerializable, Portable)):
        return processor
    raise StoreError(
        f"on Hazelcast, processor_fn(row) must return an entry processor the members know "
        f"(an IdentifiedDataSerializable, e.g. from jetconnect_imap.hazelcast.processors), not a "
        f"{type(processor).__name__}; a Python function cannot run on a member"
    )


def hashable(value: Any) -> Any:
    """A dict key standing for a key as sent to a member (a bytearray is not hashable, and two
    JSON values are the same key when their text is)."""
    if isinstance(value, (bytearray, bytes)):
        return ("bytes", bytes(value))
    if isinstance(value, HazelcastJsonValue):
        return ("json", value.to_string())
    return value


def was_lost(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error behind it) says the client shut down: it lost every member
    for longer than its reconnect window (a new client may connect)."""
    cause: BaseException | None = exc
    for _ in range(4):
        if cause is None:
            return False
        if isinstance(cause, HazelcastClientNotActiveError):
            return True
        cause = cause.__cause__
    return False


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


__all__ = ["HazelcastBackend", "PartitionPredicate", "hashable", "is_transient", "was_lost"]
