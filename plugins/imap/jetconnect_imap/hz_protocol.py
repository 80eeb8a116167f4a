"""The Hazelcast client-protocol messages that hazelcast-python-client 5.7 does not ship:
per-partition iteration of a map or cache, the event journal of maps and caches, and the Cache
(JCache) service calls the connectors need. Written from Hazelcast's published protocol
definitions (``hazelcast/hazelcast-client-protocol``, ``protocol-definitions/Map.yaml`` and
``Cache.yaml``) in the shape of the client's own generated codecs, and sent through the client's
invocation service to the member that owns the partition, as its proxies do.

Public API (every call blocks until the member answers; keys and values come back as Python
objects, deserialized by the client's own serialization service):

Maps
    ``fetch_entries(client, name, partition_id, pointers=None, batch=2048) -> (pointers, entries)``
        One page of a map partition (``Map.fetchEntries``, 0x013800), ``entries`` a list of
        ``(key, value)``. ``pointers`` None starts the partition (Hazelcast's first iteration
        pointer is ``(Integer.MAX_VALUE, -1)``); pass the returned pointers for the next page
        until ``exhausted(pointers)``. ``batch`` is the member's hint, not a cap: it finishes a hash
        bucket it has started, so a page may hold a few more. Jet's remote map reader asks for 2,048.
    ``exhausted(pointers) -> bool``
        Whether the partition has no more pages.
    ``map_journal_subscribe(client, name, partition_id) -> (oldest, newest)``
        The partition's journal bounds (``Map.eventJournalSubscribe``, 0x014100): the sequence of
        the oldest event still kept and of the newest (``newest = oldest - 1`` when empty). The
        next event written gets ``newest + 1``.
    ``map_journal_read(client, name, partition_id, start_sequence, min_size, max_size,
    allow_lost=False) -> JournalPage``
        Up to ``max_size`` events from ``start_sequence`` (``Map.eventJournalRead``, 0x014200);
        ``min_size`` > 0 makes the member wait until that many exist (up to the client's invocation
        timeout); 0 answers at once, with what there is.

Caches (``name`` is the cache's name as configured; on the wire it is ``/hz/<name>``)
    ``cache_ensure(client, name) -> None``
        Makes a cache declared in the members' configuration (``cache:`` in hz.yaml) live on
        every member (``Cache.getConfig`` then ``Cache.createConfig``), as the Java client's
        ``CacheManager.getCache`` does. :class:`CacheNotConfiguredError` if none matches ``name``.
    ``cache_put_all(client, name, entries) -> None``
        ``Cache.putAll`` (0x131B00), one request per partition, all in flight at once.
    ``cache_fetch_entries(client, name, partition_id, pointers=None, batch=2048)``
        As ``fetch_entries``, for a cache (``Cache.iterateEntries``, 0x131C00).
    ``cache_journal_subscribe(client, name, partition_id) -> (oldest, newest)``
        (``Cache.eventJournalSubscribe``, 0x131F00)
    ``cache_journal_read(client, name, partition_id, start_sequence, min_size, max_size,
    allow_lost=False) -> JournalPage``
        (``Cache.eventJournalRead``, 0x132000)

Whole journals (what a journal source's driver and executors need)
    ``map_journal_bounds(client, name) -> list[(oldest, next)]``, ``cache_journal_bounds``
        Every partition's journal bounds, one subscribe per partition all in flight at once;
        ``next`` is the sequence the next event will get.
    ``map_journal_read_ranges(client, name, {partition: (start, end)}, allow_lost=False,
    page_size=10_000) -> {partition: JournalPage}``, ``cache_journal_read_ranges``
        Exactly the events ``[start, end)`` of each partition (reads of all partitions in
        flight at once), the same however often replayed; lost ones raise as below.

Journal pages
    :class:`JournalPage` ``(read_count, events, next_sequence, lost)``, each
    :class:`JournalEvent` ``(sequence, type, key, old_value, new_value)``, ``type`` one of Jet's
    names: maps ``ADDED, REMOVED, UPDATED, EVICTED, EXPIRED, EVICT_ALL, CLEAR_ALL, MERGED,
    INVALIDATION, LOADED``; caches ``CREATED, UPDATED, REMOVED, EXPIRED, EVICTED, INVALIDATED,
    COMPLETED, EXPIRATION_TIME_UPDATED, PARTITION_LOST``.

Lost events are never a silent gap. A Hazelcast 5 member asked for a sequence its ring has
already dropped (capacity or time-to-live) answers from the oldest one it still has; the read
then raises :class:`JournalEventsLostError` carrying the partition and the lost range
``[lost_from, lost_to)`` (with ``allow_lost=True`` it returns the page with ``lost`` set, for a
source told to skip). A start past the journal's end (the map was destroyed and recreated, or a
partition lost with its backups) raises :class:`JournalSequenceError`. A map or cache without a
journal raises :class:`JournalNotEnabledError`.

Events are the members' ``DeserializingEventJournal{Map,Cache}Event`` (IdentifiedDataSerializable
of factory -4 class 132 for maps, -13 class 54 for caches, in Hazelcast 5.7): an int event type,
then key, new value and old value as length-prefixed Data, then a "lost events detected" flag.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from hazelcast.errors import HazelcastError
from hazelcast.future import Future, combine_futures
from hazelcast.invocation import Invocation
from hazelcast.protocol.builtin import (
    CodecUtil,
    DataCodec,
    EntryListCodec,
    FixSizedTypesCodec,
    ListMultiFrameCodec,
    LongArrayCodec,
    StringCodec,
)
from hazelcast.protocol.client_message import (
    _BEGIN_FRAGMENT_FLAG,
    _END_FRAGMENT_FLAG,
    _IS_FINAL_FLAG,
    REQUEST_HEADER_SIZE,
    RESPONSE_HEADER_SIZE,
    SIZE_OF_FRAME_LENGTH_AND_FLAGS,
    InboundMessage,
    OutboundMessage,
    create_initial_buffer,
)
from hazelcast.serialization.bits import BOOLEAN_SIZE_IN_BYTES, INT_SIZE_IN_BYTES, LE_INT, LE_UINT16, LONG_SIZE_IN_BYTES
from hazelcast.serialization.data import Data

from jetconnect_imap.store import StoreError

#: Entries a page of ``fetch_entries`` asks for by default (what Jet's remote map reader asks).
DEFAULT_BATCH = 2048
#: Hazelcast's first iteration pointer: (index Integer.MAX_VALUE, size -1).
START_POINTERS: tuple[tuple[int, int], ...] = ((2**31 - 1, -1),)
#: The JCache manager prefix of the default CacheManager: a cache "c" is "/hz/c" on the wire.
CACHE_PREFIX = "/hz/"

# Message types: service id << 16 | method id << 8 (Map 0x01, Cache 0x13).
_MAP_FETCH_ENTRIES = 0x013800
_MAP_JOURNAL_SUBSCRIBE = 0x014100
_MAP_JOURNAL_READ = 0x014200
_CACHE_CREATE_CONFIG = 0x130600
_CACHE_GET_CONFIG = 0x130C00
_CACHE_PUT_ALL = 0x131B00
_CACHE_ITERATE_ENTRIES = 0x131C00
_CACHE_JOURNAL_SUBSCRIBE = 0x131F00
_CACHE_JOURNAL_READ = 0x132000

# The journal events (read from the hazelcast-5.7.0 jar with javap: MapDataSerializerHook and
# CacheDataSerializerHook, DeserializingEventJournal{Map,Cache}Event).
_MAP_FACTORY_ID, _MAP_EVENT_CLASS_IDS = -4, (132, 133)
_CACHE_FACTORY_ID, _CACHE_EVENT_CLASS_IDS = -13, (54, 55)
#: com.hazelcast.core.EntryEventType: type id -> Jet's name.
MAP_EVENT_TYPES = {
    1: "ADDED",
    2: "REMOVED",
    4: "UPDATED",
    8: "EVICTED",
    16: "EXPIRED",
    32: "EVICT_ALL",
    64: "CLEAR_ALL",
    128: "MERGED",
    256: "INVALIDATION",
    512: "LOADED",
}
#: com.hazelcast.cache.CacheEventType: type id -> name.
CACHE_EVENT_TYPES = {
    1: "CREATED",
    2: "UPDATED",
    3: "REMOVED",
    4: "EXPIRED",
    5: "EVICTED",
    6: "INVALIDATED",
    7: "COMPLETED",
    8: "EXPIRATION_TIME_UPDATED",
    9: "PARTITION_LOST",
}
_DATA_SERIALIZABLE_TYPE = -2  # SerializationConstants.CONSTANT_TYPE_DATA_SERIALIZABLE
_IDENTIFIED_FLAG, _VERSIONED_FLAG = 1, 2  # DataSerializableHeader
_BE_INT = struct.Struct(">i")

Pointers = tuple[tuple[int, int], ...]


class HazelcastProtocolError(StoreError):
    """A call of this module that the cluster refused or answered unexpectedly."""


class JournalNotEnabledError(HazelcastProtocolError):
    """The map or cache has no event journal in the members' configuration."""


class CacheNotConfiguredError(HazelcastProtocolError):
    """No cache configuration of the members matches the name."""


class JournalEventsLostError(HazelcastProtocolError):
    """Events ``[lost_from, lost_to)`` of a partition's journal were dropped before being read."""

    def __init__(self, kind: str, name: str, partition: int, lost_from: int, lost_to: int) -> None:
        self.kind, self.name, self.partition = kind, name, partition
        self.lost_from, self.lost_to = lost_from, lost_to
        super().__init__(
            f"events {lost_from}..{lost_to - 1} of partition {partition} of {kind} '{name}' were lost: the "
            f"event journal dropped them (capacity or time-to-live) before they were read; the oldest it "
            f"still has is {lost_to}"
        )


class JournalSequenceError(HazelcastProtocolError):
    """A start sequence past the journal's end: the journal is not the one the sequence came from."""


class JournalEvent(NamedTuple):
    """One event of a map's or cache's journal (a named tuple: a read makes millions of them, and
    a frozen dataclass costs three times as much to build)."""

    sequence: int
    type: str
    key: Any
    old_value: Any
    new_value: Any

    def __repr__(self) -> str:  # the values left out, as they may be large
        return f"JournalEvent(sequence={self.sequence!r}, type={self.type!r}, key={self.key!r})"


@dataclass(frozen=True)
class JournalPage:
    """What one journal read brought: ``events`` from the start sequence on (or, when events
    were lost and that was allowed, from the oldest one kept), ``read_count`` of them, and the
    sequence to read from next. ``lost`` is the dropped range ``(from, to)``, end exclusive."""

    read_count: int
    events: list[JournalEvent]
    next_sequence: int
    lost: tuple[int, int] | None = None


# --- sending ---------------------------------------------------------------------------------


def _invoke(client: Any, request: OutboundMessage, partition_id: int, decode: Any) -> Future:
    """Send ``request`` to the owner of ``partition_id`` (retried on another member by the client
    when the owner is gone, for retryable requests); the future yields ``decode(message)``."""
    invocation = Invocation(request, partition_id=partition_id, response_handler=decode)
    client._invocation_service.invoke(invocation)
    return invocation.future


def _result(future: Future, what: str) -> Any:
    try:
        return future.result()
    except HazelcastError as exc:
        raise _translate(exc, what) from exc


def _translate(exc: HazelcastError, what: str) -> HazelcastProtocolError:
    # A member's exception arrives with its Java stack trace appended: its first line says it.
    text = str(exc).strip().split("\n", 1)[0].strip()
    if "journal is not available" in text.lower() or "event journal" in text.lower() and "not" in text.lower():
        return JournalNotEnabledError(
            f"{what}: the members keep no event journal for it (configure event-journal for this name "
            f"in the members' map/cache configuration): {type(exc).__name__}: {text}"
        )
    if "CacheNotExists" in text:
        return HazelcastProtocolError(
            f"{what}: the cache is not live on the members yet (cache_ensure(client, name) makes a declared "
            f"cache live): {type(exc).__name__}: {text}"
        )
    return HazelcastProtocolError(f"{what}: {type(exc).__name__}: {text}")


def _check_partition(client: Any, partition_id: int) -> None:
    count = client.partition_service.get_partition_count()
    if isinstance(partition_id, bool) or not isinstance(partition_id, int) or not 0 <= partition_id < count:
        raise HazelcastProtocolError(
            f"partition {partition_id!r} does not exist: the cluster has {count} (0..{count - 1})"
        )


def _to_object(client: Any, data: Data | None) -> Any:
    return client._serialization_service.to_object(data)


# --- iteration pointers (EntryList_Integer_Integer: one frame of (int, int) pairs) -----------

_PAIR = 2 * INT_SIZE_IN_BYTES


def _encode_pointers(buf: bytearray, pointers: Pointers) -> None:
    size = SIZE_OF_FRAME_LENGTH_AND_FLAGS + len(pointers) * _PAIR
    frame = bytearray(size)
    LE_INT.pack_into(frame, 0, size)
    for i, (index, count) in enumerate(pointers):
        offset = SIZE_OF_FRAME_LENGTH_AND_FLAGS + i * _PAIR
        FixSizedTypesCodec.encode_int(frame, offset, index)
        FixSizedTypesCodec.encode_int(frame, offset + INT_SIZE_IN_BYTES, count)
    buf.extend(frame)


def _decode_pointers(msg: InboundMessage) -> Pointers:
    b = msg.next_frame().buf
    return tuple(
        (FixSizedTypesCodec.decode_int(b, o), FixSizedTypesCodec.decode_int(b, o + INT_SIZE_IN_BYTES))
        for o in range(0, len(b), _PAIR)
    )


def exhausted(pointers: Pointers) -> bool:
    """Whether an iteration whose member returned ``pointers`` has no more pages (as Hazelcast's
    own iterators test it: the last pointer's index is negative)."""
    return bool(pointers) and pointers[-1][0] < 0


def _check_batch(batch: int) -> None:
    if isinstance(batch, bool) or not isinstance(batch, int) or not 0 < batch < 2**31:
        raise HazelcastProtocolError(f"batch must be a positive int, got {batch!r}")


def _iterate_request(message_type: int, wire_name: str, pointers: Pointers | None, batch: int) -> OutboundMessage:
    _check_batch(batch)
    offset = REQUEST_HEADER_SIZE
    buf = create_initial_buffer(offset + INT_SIZE_IN_BYTES, message_type)
    FixSizedTypesCodec.encode_int(buf, offset, batch)
    StringCodec.encode(buf, wire_name)
    _encode_pointers(buf, tuple(pointers) if pointers is not None else START_POINTERS)
    _mark_final(buf)
    return OutboundMessage(buf, True)


def _mark_final(buf: bytearray) -> None:
    """Set IS_FINAL on the last frame of ``buf`` (the encoders above leave it off)."""
    offset, last = 0, 0
    while offset < len(buf):
        last = offset
        offset += LE_INT.unpack_from(buf, offset)[0]
    flags = LE_UINT16.unpack_from(buf, last + INT_SIZE_IN_BYTES)[0]
    LE_UINT16.pack_into(buf, last + INT_SIZE_IN_BYTES, flags | _IS_FINAL_FLAG)


def _entries_page(client: Any) -> Any:
    def decode(msg: InboundMessage) -> tuple[Pointers, list[tuple[Any, Any]]]:
        msg.next_frame()  # the initial frame: no fixed-size response parameters
        pointers = _decode_pointers(msg)
        raw = EntryListCodec.decode(msg, DataCodec.decode, DataCodec.decode)
        to_object = _DataDecoder(client).object
        return pointers, [(to_object(k), to_object(v)) for k, v in raw]

    return decode


def fetch_entries_async(
    client: Any, name: str, partition_id: int, pointers: Pointers | None = None, batch: int = DEFAULT_BATCH
) -> Future:
    """:func:`fetch_entries` without waiting: a future of ``(pointers, entries)``."""
    request = _iterate_request(_MAP_FETCH_ENTRIES, name, pointers, batch)
    return _invoke(client, request, partition_id, _entries_page(client))


def fetch_entries(
    client: Any, name: str, partition_id: int, pointers: Pointers | None = None, batch: int = DEFAULT_BATCH
) -> tuple[Pointers, list[tuple[Any, Any]]]:
    """One page of map ``name``'s partition ``partition_id`` (module docstring)."""
    _check_partition(client, partition_id)
    return _result(
        fetch_entries_async(client, name, partition_id, pointers, batch),
        f"reading partition {partition_id} of map '{name}'",
    )


def cache_fetch_entries(
    client: Any, name: str, partition_id: int, pointers: Pointers | None = None, batch: int = DEFAULT_BATCH
) -> tuple[Pointers, list[tuple[Any, Any]]]:
    """One page of cache ``name``'s partition ``partition_id`` (``Cache.iterateEntries``)."""
    _check_partition(client, partition_id)
    request = _iterate_request(_CACHE_ITERATE_ENTRIES, CACHE_PREFIX + name, pointers, batch)
    return _result(
        _invoke(client, request, partition_id, _entries_page(client)),
        f"reading partition {partition_id} of cache '{name}'",
    )


# --- event journal ---------------------------------------------------------------------------


def _subscribe_request(message_type: int, wire_name: str) -> OutboundMessage:
    buf = create_initial_buffer(REQUEST_HEADER_SIZE, message_type)
    StringCodec.encode(buf, wire_name, True)
    return OutboundMessage(buf, True)


def _decode_bounds(msg: InboundMessage) -> tuple[int, int]:
    initial = msg.next_frame()
    oldest = FixSizedTypesCodec.decode_long(initial.buf, RESPONSE_HEADER_SIZE)
    newest = FixSizedTypesCodec.decode_long(initial.buf, RESPONSE_HEADER_SIZE + LONG_SIZE_IN_BYTES)
    return oldest, newest


def map_journal_subscribe(client: Any, name: str, partition_id: int) -> tuple[int, int]:
    """``(oldest, newest)`` sequence of map ``name``'s journal in ``partition_id``."""
    _check_partition(client, partition_id)
    request = _subscribe_request(_MAP_JOURNAL_SUBSCRIBE, name)
    return _result(
        _invoke(client, request, partition_id, _decode_bounds),
        f"subscribing to the event journal of map '{name}' partition {partition_id}",
    )


def cache_journal_subscribe(client: Any, name: str, partition_id: int) -> tuple[int, int]:
    """``(oldest, newest)`` sequence of cache ``name``'s journal in ``partition_id``."""
    _check_partition(client, partition_id)
    request = _subscribe_request(_CACHE_JOURNAL_SUBSCRIBE, CACHE_PREFIX + name)
    return _result(
        _invoke(client, request, partition_id, _decode_bounds),
        f"subscribing to the event journal of cache '{name}' partition {partition_id}",
    )


def _read_request(message_type: int, wire_name: str, start: int, min_size: int, max_size: int) -> OutboundMessage:
    for label, value, low, high in (
        ("start_sequence", start, 0, 2**63),
        ("min_size", min_size, 0, 2**31),
        ("max_size", max_size, 1, 2**31),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value < high:
            raise HazelcastProtocolError(f"{label} must be an int from {low}, got {value!r}")
    if min_size > max_size:
        raise HazelcastProtocolError(f"min_size {min_size} is more than max_size {max_size}")
    start_at = REQUEST_HEADER_SIZE
    min_at = start_at + LONG_SIZE_IN_BYTES
    max_at = min_at + INT_SIZE_IN_BYTES
    buf = create_initial_buffer(max_at + INT_SIZE_IN_BYTES, message_type)
    FixSizedTypesCodec.encode_long(buf, start_at, start)
    FixSizedTypesCodec.encode_int(buf, min_at, min_size)
    FixSizedTypesCodec.encode_int(buf, max_at, max_size)
    StringCodec.encode(buf, wire_name)
    CodecUtil.encode_nullable(buf, None, DataCodec.encode)  # predicate: every event
    CodecUtil.encode_nullable(buf, None, DataCodec.encode, True)  # projection: the whole event
    return OutboundMessage(buf, True)


_STRING_TYPE, _LONG_TYPE = -11, -8  # SerializationConstants: String and Long, most keys and values


class _DataDecoder:
    """Decodes ``Data`` as the client's serialization service would, faster.

    A read of a million entries or journal events spends most of its time here, so the two most
    common key and value types, String and Long, are decoded in place with ``struct`` (in the
    stream byte order the client and the members share, big-endian unless configured otherwise);
    every other type goes through the client's own ``to_object``.
    """

    def __init__(self, client: Any) -> None:
        service = client._serialization_service
        order = ">" if getattr(service, "_is_big_endian", True) else "<"
        self._int = struct.Struct(order + "i").unpack_from
        self._long = struct.Struct(order + "q").unpack_from
        self._two_ints = struct.Struct(order + "ii").unpack_from
        self._to_object = service.to_object

    def _at(self, buf: bytes | bytearray, pos: int, end: int) -> Any:
        """The serialized Data ``buf[pos:end]`` (partition hash and type id big-endian, as in
        every Data) as a Python object."""
        type_id = _BE_INT.unpack_from(buf, pos + 4)[0]
        if type_id == _LONG_TYPE and end - pos == 16:
            return self._long(buf, pos + 8)[0]
        if type_id == _STRING_TYPE:
            length = self._int(buf, pos + 8)[0]
            if length >= 0 and pos + 12 + length == end:
                return buf[pos + 12 : end].decode("utf-8")
        return self._to_object(Data(bytes(buf[pos:end])))

    def object(self, data: Data | None) -> Any:
        """One Data (a key or value of a page) as a Python object (None stays None)."""
        if data is None:
            return None
        buf = data.buffer
        return self._at(buf, 0, len(buf)) if len(buf) >= 8 else self._to_object(data)

    def _value(self, buf: bytes | bytearray, pos: int) -> tuple[Any, int]:
        """IOUtil.readData at ``pos``: an int length (-1: null), then a whole serialized Data;
        the value and where it ends."""
        size = self._int(buf, pos)[0]
        pos += 4
        if size <= 0:
            return None, pos
        return self._at(buf, pos, pos + size), pos + size


class _EventDecoder(_DataDecoder):
    """Decodes journal events (their keys and values as :class:`_DataDecoder` does)."""

    def __init__(self, client: Any, factory_id: int, class_ids: tuple[int, ...], types: Mapping[int, str]) -> None:
        super().__init__(client)
        self.factory_id, self.class_ids, self.types = factory_id, class_ids, types

    def event(self, data: Data, sequence: int) -> JournalEvent:
        """One journal event (its trailing "after lost events" flag is read past, not used)."""
        buf = data.buffer
        serializer = _BE_INT.unpack_from(buf, 4)[0] if len(buf) >= 8 else None  # Data.get_type, inline
        if serializer != _DATA_SERIALIZABLE_TYPE:
            raise HazelcastProtocolError(
                f"journal item {sequence} is not a journal event (serializer type {serializer})"
            )
        header = buf[8]  # past the partition hash and the type id
        if not header & _IDENTIFIED_FLAG:
            raise HazelcastProtocolError(f"journal item {sequence} is not an IdentifiedDataSerializable event")
        factory, class_id = self._two_ints(buf, 9)
        if factory != self.factory_id or class_id not in self.class_ids:
            raise HazelcastProtocolError(
                f"journal item {sequence} is factory {factory} class {class_id}, not an event journal event "
                f"({self.factory_id}, {self.class_ids}): a member version this module was not written for?"
            )
        pos = 19 if header & _VERSIONED_FLAG else 17  # past the version's major and minor bytes
        type_id = self._int(buf, pos)[0]
        key, pos = self._value(buf, pos + 4)
        new_value, pos = self._value(buf, pos)
        old_value, pos = self._value(buf, pos)
        return JournalEvent(sequence, self.types.get(type_id) or f"UNKNOWN_{type_id}", key, old_value, new_value)


@dataclass(frozen=True)
class _Journal:
    """What differs between the map and the cache journal: names, message types, event classes."""

    kind: str
    prefix: str
    read_type: int
    subscribe_type: int
    factory_id: int
    class_ids: tuple[int, ...]
    types: Mapping[int, str]


_MAP_JOURNAL = _Journal(
    "map", "", _MAP_JOURNAL_READ, _MAP_JOURNAL_SUBSCRIBE, _MAP_FACTORY_ID, _MAP_EVENT_CLASS_IDS, MAP_EVENT_TYPES
)
_CACHE_JOURNAL = _Journal(
    "cache",
    CACHE_PREFIX,
    _CACHE_JOURNAL_READ,
    _CACHE_JOURNAL_SUBSCRIBE,
    _CACHE_FACTORY_ID,
    _CACHE_EVENT_CLASS_IDS,
    CACHE_EVENT_TYPES,
)
#: What a journal read answers, undecoded: read count, items, their sequences, next sequence.
_RawPage = tuple[int, list[Data], "list[int] | None", int]


def _decode_read(msg: InboundMessage) -> _RawPage:
    initial = msg.next_frame()
    read_count = FixSizedTypesCodec.decode_int(initial.buf, RESPONSE_HEADER_SIZE)
    next_seq = FixSizedTypesCodec.decode_long(initial.buf, RESPONSE_HEADER_SIZE + INT_SIZE_IN_BYTES)
    items = ListMultiFrameCodec.decode(msg, DataCodec.decode)
    seqs = CodecUtil.decode_nullable(msg, LongArrayCodec.decode)
    return read_count, items, seqs, next_seq


def _read_async(
    client: Any, journal: _Journal, name: str, partition_id: int, start: int, min_size: int, max_size: int
) -> Future:
    request = _read_request(journal.read_type, journal.prefix + name, start, min_size, max_size)
    return _invoke(client, request, partition_id, _decode_read)


def _reading(journal: _Journal, name: str, partition_id: int, start: int) -> str:
    return f"reading the event journal of {journal.kind} '{name}' partition {partition_id} from sequence {start}"


def _page(
    client: Any, journal: _Journal, name: str, partition_id: int, start: int, raw: _RawPage, allow_lost: bool
) -> JournalPage:
    """A read's answer checked against ``start``: lost events and foreign sequences are errors."""
    read_count, items, seqs, next_seq = raw
    what = _reading(journal, name, partition_id, start)
    if seqs is None:  # no filter: the items are consecutive and end just before next_seq
        seqs = list(range(next_seq - len(items), next_seq))
    # The sequences, not the events' "after lost events" flag, say what was lost: they are exact.
    decode = _EventDecoder(client, journal.factory_id, journal.class_ids, journal.types).event
    events = [decode(data, seq) for data, seq in zip(items, seqs)]
    lost = None
    kind = journal.kind
    if seqs:
        first = seqs[0]
        if first < start:
            raise JournalSequenceError(
                f"{what}: the journal answered from sequence {first}, before the one asked for: the sequence "
                f"is past the journal's end, so it is not the journal it came from (the {kind} was destroyed "
                f"and created again, or the partition was lost with its backups)"
            )
        if first > start:
            lost = (start, first)
    else:
        # An empty page says nothing of where the journal is (the member leaves next_seq at 0 when
        # it read nothing): its bounds tell whether the start was dropped, current or past the end.
        oldest, newest = _result(
            _invoke(
                client, _subscribe_request(journal.subscribe_type, journal.prefix + name), partition_id, _decode_bounds
            ),
            what,
        )
        if start > newest + 1:
            raise JournalSequenceError(
                f"{what}: the journal ends at sequence {newest} (next {newest + 1}), before the one asked for, "
                f"so it is not the journal the sequence came from (the {kind} was destroyed and created "
                f"again, or the partition was lost with its backups)"
            )
        if start < oldest:
            lost, next_seq = (start, oldest), oldest
        else:
            next_seq = start
    if lost is not None and not allow_lost:
        raise JournalEventsLostError(kind, name, partition_id, *lost)
    return JournalPage(read_count=read_count, events=events, next_sequence=next_seq, lost=lost)


def _journal_read(
    client: Any,
    journal: _Journal,
    name: str,
    partition_id: int,
    start: int,
    min_size: int,
    max_size: int,
    allow_lost: bool,
) -> JournalPage:
    _check_partition(client, partition_id)
    future = _read_async(client, journal, name, partition_id, start, min_size, max_size)
    raw = _result(future, _reading(journal, name, partition_id, start))
    return _page(client, journal, name, partition_id, start, raw, allow_lost)


def map_journal_read(
    client: Any,
    name: str,
    partition_id: int,
    start_sequence: int,
    min_size: int,
    max_size: int,
    allow_lost: bool = False,
) -> JournalPage:
    """Events of map ``name``'s journal in ``partition_id`` from ``start_sequence`` (module docstring)."""
    return _journal_read(client, _MAP_JOURNAL, name, partition_id, start_sequence, min_size, max_size, allow_lost)


def cache_journal_read(
    client: Any,
    name: str,
    partition_id: int,
    start_sequence: int,
    min_size: int,
    max_size: int,
    allow_lost: bool = False,
) -> JournalPage:
    """Events of cache ``name``'s journal in ``partition_id`` from ``start_sequence``."""
    return _journal_read(client, _CACHE_JOURNAL, name, partition_id, start_sequence, min_size, max_size, allow_lost)


# --- whole journals: what a journal source's driver and executors ask ------------------------


def _bounds(client: Any, journal: _Journal, name: str) -> list[tuple[int, int]]:
    count = client.partition_service.get_partition_count()
    request = _subscribe_request  # one request per partition, all in flight at once
    futures = [
        _invoke(client, request(journal.subscribe_type, journal.prefix + name), p, _decode_bounds) for p in range(count)
    ]
    bounds = _result(combine_futures(futures), f"reading the event journal bounds of {journal.kind} '{name}'")
    return [(oldest, newest + 1) for oldest, newest in bounds]


def map_journal_bounds(client: Any, name: str) -> list[tuple[int, int]]:
    """For every partition of map ``name``, ``(oldest, next)``: the oldest sequence its journal
    still keeps and the one the next event will get (equal when it keeps none). A source's
    ``start="oldest"`` is the first, ``"current"`` the second."""
    return _bounds(client, _MAP_JOURNAL, name)


def cache_journal_bounds(client: Any, name: str) -> list[tuple[int, int]]:
    """:func:`map_journal_bounds` for cache ``name``."""
    return _bounds(client, _CACHE_JOURNAL, name)


#: Events one request of a range read asks for at most (a page's answer is held in memory whole).
RANGE_PAGE = 10_000


def _read_ranges(
    client: Any,
    journal: _Journal,
    name: str,
    spans: Mapping[int, tuple[int, int]],
    allow_lost: bool,
    page_size: int,
) -> dict[int, JournalPage]:
    for partition, (start, end) in spans.items():
        _check_partition(client, partition)
        if not 0 <= start <= end:
            raise HazelcastProtocolError(
                f"partition {partition}: the range [{start}, {end}) is not a range of sequences"
            )
    events: dict[int, list[JournalEvent]] = {p: [] for p in spans}
    lost: dict[int, tuple[int, int] | None] = {p: None for p in spans}
    at = {p: start for p, (start, _end) in spans.items()}
    while True:
        # one read per partition still short of its end, all in flight at once (a round trip per
        # round, not per partition)
        todo = [p for p in spans if at[p] < spans[p][1]]
        if not todo:
            break
        futures = [_read_async(client, journal, name, p, at[p], 0, min(page_size, spans[p][1] - at[p])) for p in todo]
        answers = _result(combine_futures(futures), f"reading the event journal of {journal.kind} '{name}'")
        for p, raw in zip(todo, answers):
            end = spans[p][1]
            page = _page(client, journal, name, p, at[p], raw, allow_lost=True)
            if page.lost is not None:  # of this range, only what lies before its end was asked for
                dropped = (page.lost[0], min(page.lost[1], end))
                if not allow_lost:
                    raise JournalEventsLostError(journal.kind, name, p, *dropped)
                lost[p] = lost[p] or dropped
            kept = [e for e in page.events if e.sequence < end]
            events[p] += kept
            if page.next_sequence <= at[p] and not kept:
                raise JournalSequenceError(
                    f"{_reading(journal, name, p, at[p])}: the journal has no event {at[p]} yet, though the range "
                    f"asked for ends at {end} (a range must end at or before the journal's next sequence)"
                )
            at[p] = max(page.next_sequence, at[p]) if not kept else kept[-1].sequence + 1
    return {
        p: JournalPage(read_count=len(events[p]), events=events[p], next_sequence=spans[p][1], lost=lost[p])
        for p in spans
    }


def map_journal_read_ranges(
    client: Any,
    name: str,
    spans: Mapping[int, tuple[int, int]],
    allow_lost: bool = False,
    page_size: int = RANGE_PAGE,
) -> dict[int, JournalPage]:
    """Exactly the events ``[start, end)`` of each partition of ``spans`` (``{partition: (start,
    end)}``, ``end`` at most the journal's next sequence, from :func:`map_journal_bounds`): what a
    journal source's executor reads for one micro-batch, the same events however often it is
    replayed. Every partition's reads are in flight at once, ``page_size`` events a request.

    Events dropped before they were read raise :class:`JournalEventsLostError` naming the
    partition and the range; with ``allow_lost`` the page holds what is left of the range and
    ``lost`` says what was dropped. ``next_sequence`` of each page is the range's end."""
    return _read_ranges(client, _MAP_JOURNAL, name, spans, allow_lost, page_size)


def cache_journal_read_ranges(
    client: Any,
    name: str,
    spans: Mapping[int, tuple[int, int]],
    allow_lost: bool = False,
    page_size: int = RANGE_PAGE,
) -> dict[int, JournalPage]:
    """:func:`map_journal_read_ranges` for cache ``name``."""
    return _read_ranges(client, _CACHE_JOURNAL, name, spans, allow_lost, page_size)


# --- the Cache service -----------------------------------------------------------------------


def _raw_structure(msg: InboundMessage) -> list[tuple[bytes, int]] | None:
    """The frames of the next data structure of ``msg`` as they came (None for a null one), to
    send back unchanged: the member's CacheConfigHolder, which only the member needs to read."""
    frame = msg.next_frame()
    if frame.is_null_frame():
        return None
    if not frame.is_begin_frame():
        raise HazelcastProtocolError("Cache.getConfig answered without a cache configuration structure")
    frames, depth = [(bytes(frame.buf), frame.flags)], 1
    while depth:
        frame = msg.next_frame()
        if frame is None:
            raise HazelcastProtocolError("Cache.getConfig answered with a truncated cache configuration")
        frames.append((bytes(frame.buf), frame.flags))
        if frame.is_begin_frame():
            depth += 1
        elif frame.is_end_frame():
            depth -= 1
    return frames


def _append_frames(buf: bytearray, frames: list[tuple[bytes, int]]) -> None:
    last = len(frames) - 1
    for i, (content, flags) in enumerate(frames):
        flags &= ~(_IS_FINAL_FLAG | _BEGIN_FRAGMENT_FLAG | _END_FRAGMENT_FLAG)
        if i == last:
            flags |= _IS_FINAL_FLAG
        header = bytearray(SIZE_OF_FRAME_LENGTH_AND_FLAGS)
        LE_INT.pack_into(header, 0, SIZE_OF_FRAME_LENGTH_AND_FLAGS + len(content))
        LE_UINT16.pack_into(header, INT_SIZE_IN_BYTES, flags)
        buf.extend(header)
        buf.extend(content)


def cache_ensure(client: Any, name: str) -> None:
    """Make cache ``name`` (declared in the members' ``cache:`` configuration) live on every
    member: ``Cache.getConfig`` builds its configuration from the declared one on the member
    that owns the name, ``Cache.createConfig`` (create also on others) spreads it to all.
    Idempotent; :class:`CacheNotConfiguredError` when no declared configuration matches."""
    wire_name = CACHE_PREFIX + name
    partition = client.partition_service.get_partition_id(wire_name)
    buf = create_initial_buffer(REQUEST_HEADER_SIZE, _CACHE_GET_CONFIG)
    StringCodec.encode(buf, wire_name)
    StringCodec.encode(buf, name, True)

    def decode(msg: InboundMessage) -> list[tuple[bytes, int]] | None:
        msg.next_frame()
        return _raw_structure(msg)

    holder = _result(
        _invoke(client, OutboundMessage(buf, True), partition, decode), f"reading the configuration of cache '{name}'"
    )
    if holder is None:
        raise CacheNotConfiguredError(
            f"cache '{name}' has no configuration on the members: declare it (or a pattern matching it) "
            f"under cache: in their configuration"
        )
    offset = REQUEST_HEADER_SIZE
    buf = create_initial_buffer(offset + BOOLEAN_SIZE_IN_BYTES, _CACHE_CREATE_CONFIG)
    FixSizedTypesCodec.encode_boolean(buf, offset, True)  # createAlsoOnOthers
    _append_frames(buf, holder)
    _result(
        _invoke(client, OutboundMessage(buf, True), partition, lambda msg: None),
        f"creating cache '{name}' on the members",
    )


def cache_put_all(client: Any, name: str, entries: Mapping[Any, Any] | Iterable[tuple[Any, Any]]) -> None:
    """Put ``entries`` into cache ``name`` (``Cache.putAll``): one request per partition, all in
    flight at once; returns when every partition has applied its share (each atomically)."""
    to_data = client._serialization_service.to_data
    partition_of = client._internal_partition_service.get_partition_id
    grouped: dict[int, list[tuple[Data, Data]]] = {}
    pairs = entries.items() if isinstance(entries, Mapping) else entries
    for key, value in pairs:
        if key is None or value is None:
            raise HazelcastProtocolError(f"cache '{name}': keys and values must not be None (JCache forbids null)")
        key_data = to_data(key)
        grouped.setdefault(partition_of(key_data), []).append((key_data, to_data(value)))
    futures = []
    for partition, chunk in grouped.items():
        buf = create_initial_buffer(REQUEST_HEADER_SIZE + INT_SIZE_IN_BYTES, _CACHE_PUT_ALL)
        FixSizedTypesCodec.encode_int(buf, REQUEST_HEADER_SIZE, -1)  # completionId: no listener waits
        StringCodec.encode(buf, CACHE_PREFIX + name)
        EntryListCodec.encode(buf, chunk, DataCodec.encode, DataCodec.encode)
        CodecUtil.encode_nullable(buf, None, DataCodec.encode, True)  # expiryPolicy: the cache's own
        futures.append(_invoke(client, OutboundMessage(buf, False, True), partition, lambda msg: None))
    if futures:
        _result(combine_futures(futures), f"putting {sum(map(len, grouped.values()))} entries into cache '{name}'")


__all__ = [
    "CACHE_EVENT_TYPES",
    "CACHE_PREFIX",
    "DEFAULT_BATCH",
    "MAP_EVENT_TYPES",
    "RANGE_PAGE",
    "START_POINTERS",
    "CacheNotConfiguredError",
    "HazelcastProtocolError",
    "JournalEvent",
    "JournalEventsLostError",
    "JournalNotEnabledError",
    "JournalPage",
    "JournalSequenceError",
    "Pointers",
    "cache_ensure",
    "cache_fetch_entries",
    "cache_journal_bounds",
    "cache_journal_read",
    "cache_journal_read_ranges",
    "cache_journal_subscribe",
    "cache_put_all",
    "exhausted",
    "fetch_entries",
    "fetch_entries_async",
    "map_journal_bounds",
    "map_journal_read",
    "map_journal_read_ranges",
    "map_journal_subscribe",
]
