"""One client per key and process: connection pools, HTTP sessions, stores, made once and reused.

Spark reuses its Python workers, so a connector keeps the client it built for the next task of
the same process. Python workers are *forked* from a daemon, and a child that used the parent's
client would share its sockets: two processes writing one TCP stream, answers read by the wrong
one. A :class:`ClientCache` therefore keeps the clients of the process that made them only: in a
forked child it starts empty, and the parent's clients are dropped without being closed (closing
them would send, on the parent's socket, the goodbye of a session the parent still uses).

A client can also die in its process: one that gave up on its server after an outage longer
than its reconnect window stays shut down, and every later task that got it from the cache would
fail although the server is back. A cache made with ``alive`` asks it of a cached client each time
it hands one out, and replaces one that is no longer alive.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar, final

log = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)
C = TypeVar("C")

#: Every cache of this process, so that a fork can give each a fresh lock (see ``_after_fork``).
_caches: weakref.WeakSet[ClientCache] = weakref.WeakSet()


@final
class ClientCache(Generic[K, C]):
    """This process's clients by key: ``cache.get(key, factory)`` builds one the first time.

    Thread-safe: concurrent tasks of one worker asking for one key get one client. ``on_close``
    (e.g. ``Engine.dispose``) is what :meth:`close_all` calls on each client of this process.
    ``alive(client)`` (e.g. ``lambda c: c.lifecycle_service.is_running()``), when given, is asked
    of a cached client before it is handed out: one no longer alive is closed (best effort) and
    replaced by a new one. It must be cheap and never block: it runs on every :meth:`get`.
    """

    def __init__(
        self, name: str, on_close: Callable[[C], None] | None = None, alive: Callable[[C], bool] | None = None
    ) -> None:
        self.name = name
        self._on_close = on_close
        self._alive = alive
        self._reset()
        _caches.add(self)

    def _reset(self) -> None:
        # A new lock too: a thread of the parent may have held the old one at the fork, and in
        # the child that thread does not exist to release it.
        self._lock = threading.RLock()
        self._clients: dict[K, C] = {}
        self._pid = os.getpid()

    def _own_clients(self) -> dict[K, C]:
        """The clients, after dropping a parent's ones if this process is a fork of it.

        ``os.register_at_fork`` covers forks made from Python; this check covers a fork made in
        C (an extension calling ``fork()``), which runs no Python hook.
        """
        if self._pid != os.getpid():
            self._clients = {}
            self._pid = os.getpid()
        return self._clients

    def get(self, key: K, factory: Callable[[], C]) -> C:
        """The client for ``key``, made by ``factory()`` if this process has none yet.

        The factory runs under the cache's lock (re-entrant: it may use the cache for another
        key), so two tasks never both build one: a pool made twice leaks the loser's connections.
        A cached client that ``alive`` says is dead is closed and made again.
        """
        if self._pid != os.getpid():
            self._reset()
        with self._lock:
            clients = self._own_clients()
            client = clients.get(key)
            if client is not None and self._alive is not None and not self._alive(client):
                log.info("%s: a cached client is no longer alive; making a new one", self.name)
                del clients[key]
                self._close_quietly(client)
                client = None
            if client is None:
                client = clients[key] = factory()
            return client

    def _close_quietly(self, client: C) -> None:
        """``on_close(client)`` for a client that died: closing what is already shut down may fail."""
        if self._on_close is None:
            return
        try:
            self._on_close(client)
        except Exception:  # a dead client's close is best effort; the new one matters
            log.debug("%s: closing a dead client failed", self.name, exc_info=True)

    def pop(self, key: K) -> C | None:
        """Forget ``key``'s client and return it (the caller closes it), or None if there is none."""
        with self._lock:
            return self._own_clients().pop(key, None)

    def close_all(self) -> None:
        """Close (``on_close``) and forget every client of this process: tests, a server restart."""
        with self._lock:
            clients = list(self._own_clients().values())
            self._clients = {}
        if self._on_close is not None:
            for client in clients:
                self._on_close(client)

    def __len__(self) -> int:
        with self._lock:
            return len(self._own_clients())

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._own_clients()

    def __repr__(self) -> str:
        return f"<ClientCache {self.name!r}: {len(self)} client(s) of pid {self._pid}>"


def _after_fork() -> None:
    for cache in list(_caches):
        cache._reset()


if hasattr(os, "register_at_fork"):  # POSIX; Windows has no fork
    os.register_at_fork(after_in_child=_after_fork)


__all__ = ["ClientCache"]
