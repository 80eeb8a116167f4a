"""How a read is divided among Spark tasks: partitions into groups, a record budget into shares.

Generic to any range-readable source with many small partitions (a journal's 271, Kafka's).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def spread(partitions: Sequence[T], groups: int) -> list[list[T]]:
    """``partitions`` dealt round-robin into at most ``groups`` non-empty groups."""
    groups = max(1, min(groups, len(partitions)))
    return [list(partitions[i::groups]) for i in range(groups) if partitions[i::groups]]


def share(backlog: dict[int, int], budget: int) -> dict[int, int]:
    """Split ``budget`` records over partitions with ``backlog`` waiting, fairly (max-min)."""
    allowed = {p: 0 for p in backlog}
    waiting = {p: n for p, n in backlog.items() if n > 0}
    while budget > 0 and waiting:
        each = max(1, budget // len(waiting))
        for p in sorted(waiting):
            take = min(each, waiting[p], budget)
            allowed[p] += take
            waiting[p] -= take
            budget -= take
            if budget == 0:
                break
        waiting = {p: n for p, n in waiting.items() if n > 0}
    return allowed
