"""The JCache service calls the connectors need that the Python client lacks: making a cache the
members declare live, and putting entries (``/hz/<name>`` on the wire, the default cache manager's)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hazelcast.future import combine_futures
from hazelcast.serialization.data import Data

from jetconnect_imap.hazelcast.codecs import cache_create_config, cache_get_config, cache_put_all
from jetconnect_imap.hazelcast.errors import CacheNotConfiguredError, HazelcastProtocolError
from jetconnect_imap.hazelcast.invocation import invoke, result
from jetconnect_imap.hazelcast.iteration import CACHE_PREFIX


def ensure(client: Any, name: str) -> None:
    """Make cache ``name`` (declared in the members' ``cache:`` configuration) live on every
    member: ``Cache.getConfig`` builds its configuration from the declared one on the member
    that owns the name, ``Cache.createConfig`` (create also on others) spreads it to all, as the
    Java client's ``CacheManager.getCache`` does. Idempotent; :class:`CacheNotConfiguredError`
    when no declared configuration matches."""
    wire_name = CACHE_PREFIX + name
    partition = client.partition_service.get_partition_id(wire_name)
    holder = result(
        invoke(client, cache_get_config.encode_request(wire_name, name), partition, cache_get_config.decode_response),
        f"reading the configuration of cache '{name}'",
    )
    if holder is None:
        raise CacheNotConfiguredError(
            f"cache '{name}' has no configuration on the members: declare it (or a pattern matching it) "
            f"under cache: in their configuration"
        )
    result(
        invoke(client, cache_create_config.encode_request(holder, True), partition, lambda msg: None),
        f"creating cache '{name}' on the members",
    )


def put_all(client: Any, name: str, entries: Mapping[Any, Any] | Iterable[tuple[Any, Any]]) -> None:
    """Put ``entries`` into cache ``name`` (``Cache.putAll``, the cache's own expiry policy): one
    request per partition, all in flight at once; returns when every partition has applied its
    share (each atomically)."""
    to_data = client._serialization_service.to_data
    partition_of = client._internal_partition_service.get_partition_id
    grouped: dict[int, list[tuple[Data, Data]]] = {}
    pairs = entries.items() if isinstance(entries, Mapping) else entries
    for key, value in pairs:
        if key is None or value is None:
            raise HazelcastProtocolError(f"cache '{name}': keys and values must not be None (JCache forbids null)")
        key_data = to_data(key)
        grouped.setdefault(partition_of(key_data), []).append((key_data, to_data(value)))
    futures = [
        invoke(client, cache_put_all.encode_request(CACHE_PREFIX + name, chunk, None, -1), partition, lambda msg: None)
        for partition, chunk in grouped.items()
    ]
    if futures:
        result(combine_futures(futures), f"putting {sum(map(len, grouped.values()))} entries into cache '{name}'")


__all__ = ["ensure", "put_all"]
