"""Admission control for range sources: how a micro-batch's record budget is shared.

Spark gives a stream one number (``max_records_per_batch``); a source with many partitions must
split it so that no busy partition starves the others, and do it deterministically.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

from jetconnect.errors import OptionError

K = TypeVar("K")
T = TypeVar("T")


def share_budget(backlog: Mapping[K, int], budget: int) -> dict[K, int]:
    """Split ``budget`` records over partitions with ``backlog`` waiting, max-min fairly.

    Water-filling: every partition with data gets an equal share, and what a short partition
    leaves unused goes to the others. The same inputs always give the same answer.
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        # a float budget would put fractional positions into Spark's offset log, which no restart can read
        raise OptionError(f"option 'max_records_per_batch' must be a whole number of at least 1, got {budget!r}")
    allowed: dict[K, int] = dict.fromkeys(backlog, 0)
    waiting = {k: n for k, n in backlog.items() if n > 0}
    while budget > 0 and waiting:
        each = max(1, budget // len(waiting))
        for key in sorted(waiting):  # type: ignore[type-var]  # keys are partition ids, sortable; K cannot say so
            take = min(each, waiting[key], budget)
            allowed[key] += take
            waiting[key] -= take
            budget -= take
            if budget == 0:
                break
        waiting = {k: n for k, n in waiting.items() if n > 0}
    return allowed


def admit_offsets(start: Mapping[str, int], end: Mapping[str, int], max_records: int) -> dict[str, int]:
    """``end`` cut down so that at most ``max_records`` records lie past ``start`` in all.

    For integer positions counting records (Kafka offsets, journal sequences). A partition
    missing from ``start`` is new: it keeps its ``end`` (its beginning), never behind ``start``.
    """
    backlog = {k: max(0, end[k] - start[k]) for k in end if k in start}
    allowed = share_budget(backlog, max_records)
    return {k: (start[k] + allowed[k] if k in start else end[k]) for k in end}


def spread(items: Sequence[T], groups: int) -> list[list[T]]:
    """``items`` dealt round-robin into at most ``groups`` non-empty groups (one per Spark task)."""
    groups = max(1, min(groups, len(items)))
    return [list(items[i::groups]) for i in range(groups) if items[i::groups]]


__all__ = ["admit_offsets", "share_budget", "spread"]
