"""Where a predicate or projection runs: a Hazelcast one (``hazelcast.predicate`` /
``hazelcast.projection``) on the members, a Python function in the Spark task."""

from __future__ import annotations

from typing import Any


def is_member_side(function: Any) -> bool:
    """Whether ``function`` is a Hazelcast predicate or projection (run by the members)."""
    if function is None:
        return False
    from hazelcast.predicate import Predicate
    from hazelcast.projection import Projection

    return isinstance(function, (Predicate, Projection))


__all__ = ["is_member_side"]
