"""Reading a map or cache partition page by page, as Jet's remote map reader does.

A page is ``Map.fetchEntries`` (or ``Cache.iterateEntries``, the live entries of a cache) from the
iteration pointers the last page ended at; Hazelcast's first pointer is ``(Integer.MAX_VALUE,
-1)``, and a negative index in the last pointer means the partition is done. ``batch`` is the
member's hint, not a cap: it finishes a hash bucket it has started, so a page may hold a few more.
"""

from __future__ import annotations

from typing import Any

from hazelcast.future import Future
from hazelcast.protocol.client_message import InboundMessage
from hazelcast.serialization.data import Data

from jetconnect_imap.hazelcast.codecs import cache_iterate_entries, map_fetch_entries
from jetconnect_imap.hazelcast.decoding import DataDecoder
from jetconnect_imap.hazelcast.errors import HazelcastProtocolError
from jetconnect_imap.hazelcast.invocation import check_partition, invoke, result

#: Entries a page asks for by default (what Jet's remote map reader asks).
DEFAULT_BATCH = 2048
#: Hazelcast's first iteration pointer: (index Integer.MAX_VALUE, size -1).
START_POINTERS: tuple[tuple[int, int], ...] = ((2**31 - 1, -1),)
#: The JCache manager prefix of the default CacheManager: a cache "c" is "/hz/c" on the wire.
CACHE_PREFIX = "/hz/"

Pointers = tuple[tuple[int, int], ...]
#: One page as it came: where the next one starts, and the serialised entries.
RawPage = tuple[Pointers, list[tuple[Data, Data]]]


def exhausted(pointers: Pointers) -> bool:
    """Whether an iteration whose member returned ``pointers`` has no more pages (as Hazelcast's
    own iterators test it: the last pointer's index is negative)."""
    return bool(pointers) and pointers[-1][0] < 0


def _check_batch(batch: int) -> None:
    if isinstance(batch, bool) or not isinstance(batch, int) or not 0 < batch < 2**31:
        raise HazelcastProtocolError(f"batch must be a positive int, got {batch!r}")


def _decode_page(msg: InboundMessage) -> RawPage:
    response = map_fetch_entries.decode_response(msg)  # Cache.iterateEntries answers alike
    return tuple(response["iteration_pointers"]), response["entries"]


def fetch_page_async(
    client: Any, name: str, partition_id: int, pointers: Pointers | None, batch: int, cache: bool = False
) -> Future:
    """One page of ``name``'s partition without waiting: a future of its :data:`RawPage`."""
    _check_batch(batch)
    start = list(pointers) if pointers is not None else list(START_POINTERS)
    if cache:
        request = cache_iterate_entries.encode_request(CACHE_PREFIX + name, start, batch)
    else:
        request = map_fetch_entries.encode_request(name, start, batch)
    return invoke(client, request, partition_id, _decode_page)


def fetch_entries(
    client: Any,
    name: str,
    partition_id: int,
    pointers: Pointers | None = None,
    batch: int = DEFAULT_BATCH,
    cache: bool = False,
) -> tuple[Pointers, list[tuple[Any, Any]]]:
    """One page of map (or cache) ``name``'s partition ``partition_id``: the pointers to pass for
    the next page, and the page's ``(key, value)`` entries as Python objects."""
    check_partition(client, partition_id)
    what = f"reading partition {partition_id} of {'cache' if cache else 'map'} '{name}'"
    next_pointers, raw = result(fetch_page_async(client, name, partition_id, pointers, batch, cache), what)
    to_object = DataDecoder(client).object
    return next_pointers, [(to_object(k), to_object(v)) for k, v in raw]


def read_partition(
    client: Any, name: str, partition_id: int, batch: int = DEFAULT_BATCH, cache: bool = False
) -> list[tuple[Any, Any]]:
    """Every ``(key, value)`` of one partition, page by page, read whole before any is handed on."""
    found: list[tuple[Any, Any]] = []
    pointers = None
    while True:
        before = pointers
        pointers, entries = fetch_entries(client, name, partition_id, pointers, batch, cache)
        found.extend(entries)
        if exhausted(pointers) or (not entries and pointers == before):
            return found


__all__ = [
    "CACHE_PREFIX",
    "DEFAULT_BATCH",
    "START_POINTERS",
    "Pointers",
    "exhausted",
    "fetch_entries",
    "fetch_page_async",
    "read_partition",
]
