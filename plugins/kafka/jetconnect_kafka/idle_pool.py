"""Kafka clients one Python worker keeps between Spark tasks, by their settings.

Spark reuses its Python workers, and a new librdkafka client costs a broker connection and its
metadata before its first request: 55-65 ms here, and now and then 0.7 s (a request sent before
the connection to the partition's leader is up waits for librdkafka's retry timer). A task borrows
a client with exactly its settings, and gives it back only after it ended cleanly, so an idle
client never holds an open transaction, an assignment or an unread failure.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

Item = TypeVar("Item")
Key = tuple[tuple[str, str], ...]


def settings_key(settings: Mapping[str, Any]) -> Key:
    """The pool key of a client's settings: equal settings, equal keys."""
    return tuple(sorted((k, repr(v)) for k, v in settings.items()))


class IdlePool(Generic[Item]):
    """Idle clients by settings key; beyond ``max_idle`` the least recently used is dropped (``drop``)."""

    def __init__(self, max_idle: int, drop: Callable[[Item], None]) -> None:
        self.max_idle, self._drop = max_idle, drop
        self._idle: OrderedDict[Key, list[Item]] = OrderedDict()
        self.lock = threading.Lock()

    def take(self, key: Key) -> Item | None:
        """The most recently kept idle client of ``key``, or None."""
        with self.lock:
            idle = self._idle.get(key)
            if not idle:
                return None
            item = idle.pop()
            if not idle:
                del self._idle[key]
            return item

    def keep(self, key: Key, item: Item) -> None:
        """Put ``item`` among the idle clients, dropping the least recently used beyond the bound."""
        with self.lock:
            self._idle.setdefault(key, []).append(item)
            self._idle.move_to_end(key)
            dropped = []
            while sum(len(v) for v in self._idle.values()) > self.max_idle:
                oldest = next(iter(self._idle))
                dropped.append(self._idle[oldest].pop(0))
                if not self._idle[oldest]:
                    del self._idle[oldest]
        for old in dropped:
            self._drop(old)

    def take_where(self, wanted: Callable[[Item], bool]) -> list[tuple[Key, Item]]:
        """Remove and return the idle clients ``wanted`` says yes to, with their keys."""
        with self.lock:
            taken = [(key, item) for key, items in self._idle.items() for item in items if wanted(item)]
            for key, item in taken:
                self._idle[key].remove(item)
                if not self._idle[key]:
                    del self._idle[key]
        return taken

    def drop_all(self) -> int:
        """Drop every idle client; returns how many."""
        with self.lock:
            idle = [item for items in self._idle.values() for item in items]
            self._idle.clear()
        for item in idle:
            self._drop(item)
        return len(idle)

    def __len__(self) -> int:
        with self.lock:
            return sum(len(v) for v in self._idle.values())


__all__ = ["IdlePool", "Key", "settings_key"]
