"""Where a connector's map, cache or list lives: one rule for every connector of this plugin,
applied once where the connector is built."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from jetconnect.api import redact_url
from jetconnect_imap.backend import Backend, Structure
from jetconnect_imap.embedded.backend import EmbeddedBackend
from jetconnect_imap.embedded.names import default_url
from jetconnect_imap.errors import StoreError
from jetconnect_imap.hazelcast.backend import HazelcastBackend

_BACKENDS: dict[str, type[Backend]] = {"sqlite": EmbeddedBackend, "hazelcast": HazelcastBackend}


def locate(store: str | None, client_config: Mapping[str, Any] | None = None) -> Backend:
    """The backend of ``store`` (by default :func:`~jetconnect_imap.embedded.names.default_url`:
    ``$JETCONNECT_IMAP_STORE`` or the embedded store): ``sqlite:///...`` or ``hazelcast://...``.
    Nothing is contacted yet."""
    url = store or default_url()
    if not isinstance(url, str):
        raise StoreError(f"store must be a URL string, got {type(url).__name__}")
    backend = _BACKENDS.get(urlsplit(url).scheme.lower())
    if backend is None:
        raise StoreError(
            f"store URL {redact_url(url)!r} is not supported: use sqlite:///path/file.db (embedded) or "
            "hazelcast://host:port[,host:port...]/cluster-name (a Hazelcast cluster)"
        )
    if client_config and backend is EmbeddedBackend:
        raise StoreError(
            f"client_config configures a Hazelcast client; store {redact_url(url)!r} is the embedded store"
        )
    return backend(url, client_config)


class OnBackend:
    """Base of this plugin's connectors: the backend they read or write (:func:`locate`), and the
    structure's name as the user gave it and as the backend keeps it."""

    #: The structure the connector reads or writes (``cache`` for the cache connectors).
    structure: Structure = "map"
    backend: Backend
    display_name: str
    #: The name the backend keeps the structure under.
    stored: str

    def _locate(self, name: str, store: str | None, client_config: Mapping[str, Any] | None) -> None:
        self.backend = locate(store, client_config)
        self.stored = self.backend.stored_name(self.structure, name)
        self.display_name = name

    @property
    def store_url(self) -> str:
        return self.backend.url

    @property
    def _subject(self) -> str:
        """The structure as messages name it: ``map 'orders'``."""
        return f"{self.structure} '{self.display_name}'"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.display_name!r}, store={self.backend.display_url!r})"


__all__ = ["OnBackend", "locate"]
