"""A builder stream's position in Spark's offset: how many rounds each processor has completed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jetconnect.errors import OffsetError


@dataclass(frozen=True)
class RoundPosition:
    """Processor ``index`` of ``total`` has completed ``round`` rounds of stream run ``run``.

    ``limit`` is the item limit the last round was planned with (None: no limit). ``drain``: the
    round was planned by ``Trigger.AvailableNow`` without a limit, so it pulls until a fill adds
    nothing (up to ``available_now_max_pull_ms``) instead of ``max_pull_ms``: fewer, bigger
    micro-batches, as Spark's own sources read everything available in one. Round 0 is the
    processor's fresh state: nothing pulled yet.
    """

    run: str
    round: int
    total: int
    limit: int | None = None
    drain: bool = False

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"run": self.run, "round": self.round, "of": self.total}
        if self.limit is not None:
            value["limit"] = self.limit
        if self.drain:
            value["drain"] = True
        return value

    def next(self, limit: int | None, drain: bool = False) -> RoundPosition:
        """The position after one more round, planned with ``limit`` items at most (and to ``drain``)."""
        return RoundPosition(self.run, self.round + 1, self.total, limit, drain)


def parse_position(key: str, value: Any, source: str) -> RoundPosition:
    """One processor's entry of an offset, checked: an edited or foreign entry is an OffsetError naming it."""
    where = f"source '{source}': offset entry {key!r}: {value!r}"
    if not (isinstance(key, str) and key.isascii() and key.isdigit()):
        raise OffsetError(f"{where}: keys must be processor numbers")
    if isinstance(value, int) or (isinstance(value, dict) and "seq" in value):
        raise OffsetError(
            f"{where} was written by a jetconnect that pulled on the driver; this one pulls in executor "
            f"tasks and cannot continue that checkpoint: start the query with a new checkpoint location"
        )
    if not isinstance(value, dict) or set(value) - {"run", "round", "of", "limit", "drain"}:
        raise OffsetError(f"{where}: expected {{'run', 'round', 'of'[, 'limit'][, 'drain']}}")
    run, round_, total, limit = value.get("run"), value.get("round"), value.get("of"), value.get("limit")
    drain = value.get("drain", False)
    if not isinstance(run, str) or not (run.isascii() and run.isalnum()):
        raise OffsetError(f"{where}: 'run' must be the run id jetconnect wrote")
    for name, number, low in (("round", round_, 0), ("of", total, int(key) + 1)):
        if type(number) is not int or number < low:
            raise OffsetError(f"{where}: '{name}' must be an integer >= {low}")
    if limit is not None and (type(limit) is not int or limit < 1):
        raise OffsetError(f"{where}: 'limit' must be a positive integer")
    if not isinstance(drain, bool) or (drain and limit is not None):
        raise OffsetError(f"{where}: 'drain' must be true or absent, and only without 'limit'")
    assert isinstance(round_, int) and isinstance(total, int)  # checked above; this tells the type checker
    return RoundPosition(run, round_, total, limit, drain)


def parse_offset(offset: Mapping[str, Any], source: str) -> dict[int, RoundPosition]:
    """The positions in a Spark offset, each checked, and together naming processors 0..n-1 of one run."""
    if not isinstance(offset, Mapping):
        raise OffsetError(
            f"source '{source}': offset {offset!r} is not a JSON object of processor -> position: was it edited?"
        )
    positions = {}
    for key, value in offset.items():
        position = parse_position(key, value, source)  # checks the key first
        positions[int(key)] = position
    totals = {p.total for p in positions.values()}
    runs = {p.run for p in positions.values()}
    if positions and (len(totals) != 1 or len(runs) != 1 or sorted(positions) != list(range(next(iter(totals))))):
        raise OffsetError(
            f"source '{source}': offset {dict(offset)!r} does not name processors 0..n-1 of one run: was it edited?"
        )
    return positions


__all__ = ["RoundPosition", "parse_offset", "parse_position"]
