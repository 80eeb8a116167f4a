"""Sending a request to the member that owns a partition, and what a member's error means.

The client's proxies send through its invocation service; so do the codecs the client lacks
(:mod:`jetconnect_imap.hazelcast.codecs`). A member's refusal arrives as a ``HazelcastError``
with the Java stack trace appended: :func:`translate` reads its first line and names the
structure and the request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from hazelcast.errors import HazelcastError
from hazelcast.future import Future
from hazelcast.invocation import Invocation
from hazelcast.protocol.client_message import InboundMessage, OutboundMessage

from jetconnect_imap.errors import JournalNotEnabledError, StoreError
from jetconnect_imap.hazelcast.errors import HazelcastProtocolError

T = TypeVar("T")


def invoke(client: Any, request: OutboundMessage, partition_id: int, decode: Callable[[InboundMessage], T]) -> Future:
    """Send ``request`` to the owner of ``partition_id`` (retried on another member by the client
    when the owner is gone, for retryable requests); the future yields ``decode(response)``."""
    invocation = Invocation(request, partition_id=partition_id, response_handler=decode)
    client._invocation_service.invoke(invocation)
    return invocation.future


def result(future: Future, what: str) -> Any:
    """The future's value, or the member's refusal as a StoreError naming ``what`` (:func:`translate`)."""
    try:
        return future.result()
    except HazelcastError as exc:
        raise translate(exc, what) from exc


def translate(exc: HazelcastError, what: str) -> StoreError:
    """A member's error as ours: a missing journal and a cache not live yet say what to do."""
    text = str(exc).strip().split("\n", 1)[0].strip()
    lowered = text.lower()
    if "journal is not available" in lowered or ("event journal" in lowered and "not" in lowered):
        return JournalNotEnabledError(
            f"{what}: the members keep no event journal for it; add one to the members' configuration "
            "(hazelcast.yaml: map (or cache): <its name or a pattern>: event-journal: enabled: true, capacity: "
            f"<events kept>) and restart them: {type(exc).__name__}: {text}"
        )
    if "CacheNotExists" in text:
        return HazelcastProtocolError(
            f"{what}: the cache is not live on the members yet (caches.ensure(client, name) makes a declared "
            f"cache live): {type(exc).__name__}: {text}"
        )
    return HazelcastProtocolError(f"{what}: {type(exc).__name__}: {text}")


def check_partition(client: Any, partition_id: int) -> None:
    """``partition_id`` if it is one of the cluster's, else a HazelcastProtocolError saying so."""
    count = client.partition_service.get_partition_count()
    if isinstance(partition_id, bool) or not isinstance(partition_id, int) or not 0 <= partition_id < count:
        raise HazelcastProtocolError(
            f"partition {partition_id!r} does not exist: the cluster has {count} (0..{count - 1})"
        )


__all__ = ["check_partition", "invoke", "result", "translate"]
