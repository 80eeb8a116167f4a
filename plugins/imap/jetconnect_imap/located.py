"""Where a connector's map, cache or list lives: one rule for every connector of this plugin."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jetconnect_imap.hz_store import is_hazelcast
from jetconnect_imap.store import default_url


class StoreClient:
    """Base of this plugin's connectors: the store they read or write, as :meth:`_locate` sets it."""

    store_url: str
    on_hazelcast: bool
    client_config: dict[str, Any]

    def _locate(self, store: str | None, client_config: Mapping[str, Any] | None) -> None:
        """``store`` (by default :func:`~jetconnect_imap.store.default_url`: ``$JETCONNECT_IMAP_STORE``
        or the embedded store), whether it is a Hazelcast cluster, and the Hazelcast client's settings."""
        self.store_url = store or default_url()
        self.on_hazelcast = is_hazelcast(self.store_url)
        self.client_config = dict(client_config or {})


__all__ = ["StoreClient"]
