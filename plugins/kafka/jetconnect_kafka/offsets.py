"""Offsets as Spark checkpoints them: ``{"topic:partition": next offset to read}``.

Pure functions (no broker): naming partitions, parsing ``starting_offsets`` and sharing an
admission-control budget between partitions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jetconnect.errors import OptionError

#: In a ``starting_offsets`` JSON map, as in Spark's own Kafka source.
EARLIEST, LATEST = -2, -1


def partition_key(topic: str, partition: int) -> str:
    """The offset key of one partition; Kafka topic names cannot contain ``:``."""
    return f"{topic}:{partition}"


def split_key(key: str) -> tuple[str, int]:
    topic, _, partition = key.rpartition(":")
    if not topic or not partition.isdigit():
        raise OptionError(f"kafka: '{key}' is not a 'topic:partition' offset key")
    return topic, int(partition)


@dataclass(frozen=True)
class StartingOffsets:
    """Where a new query starts: ``earliest``, ``latest``, a timestamp, or explicit offsets.

    ``offsets`` maps ``topic:partition`` to an offset, or to ``EARLIEST`` / ``LATEST``; partitions
    not in the map start at ``default``.
    """

    default: str = "earliest"  # "earliest" | "latest" | "timestamp"
    timestamp_ms: int | None = None
    offsets: Mapping[str, int] | None = None


def parse_starting_offsets(text: str, option: str = "starting_offsets") -> StartingOffsets:
    """``"earliest"``, ``"latest"``, epoch milliseconds, an ISO-8601 time, or a JSON map.

    The JSON map is ``{"topic:partition": offset}`` or Spark's ``{"topic": {"partition": offset}}``,
    with -2 for earliest and -1 for latest.
    """
    raw = text.strip()
    if raw.lower() in ("earliest", "latest"):
        return StartingOffsets(default=raw.lower())
    if raw.startswith("{"):
        return StartingOffsets(default="earliest", offsets=_offset_map(raw, option))
    if raw.lstrip("-").isdigit():
        return StartingOffsets(default="timestamp", timestamp_ms=int(raw))
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise OptionError(
            f"kafka: option '{option}' must be earliest, latest, a JSON map of offsets, epoch "
            f"milliseconds or an ISO-8601 time, got {text!r}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return StartingOffsets(default="timestamp", timestamp_ms=int(moment.timestamp() * 1000))


#: librdkafka's spellings of ``auto.offset.reset`` and where each starts a new query.
_RESETS = {
    "smallest": "earliest",
    "earliest": "earliest",
    "beginning": "earliest",
    "largest": "latest",
    "latest": "latest",
    "end": "latest",
}


def resolve_starting_offsets(starting_offsets: str | None, auto_offset_reset: Any) -> str:
    """``starting_offsets`` of a new query: as given, else what the user's ``auto.offset.reset``
    says (a Kafka user's usual way to say it), else earliest. The two disagreeing is an error."""
    reset = None
    if auto_offset_reset is not None:
        reset = _RESETS.get(str(auto_offset_reset).strip().lower())
        if reset is None:
            raise OptionError(
                f"kafka: auto.offset.reset={auto_offset_reset!r} cannot choose where a new query starts "
                f"(earliest/smallest/beginning or latest/largest/end); the checkpoint decides for a restarted "
                f"one, and a vanished checkpointed offset follows option 'on_offset_out_of_range'"
            )
    if starting_offsets is None:
        return reset or "earliest"
    if reset is not None and starting_offsets.strip().lower() != reset:
        raise OptionError(
            f"kafka: options 'starting_offsets' ({starting_offsets!r}) and auto.offset.reset "
            f"({auto_offset_reset!r}) disagree about where a new query starts; give one of them"
        )
    return starting_offsets


def _offset_map(raw: str, option: str) -> dict[str, int]:
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise OptionError(f"kafka: option '{option}' must be JSON ({exc.msg} at character {exc.pos})") from None
    offsets: dict[str, int] = {}
    for key, value in parsed.items():
        if isinstance(value, dict):  # Spark's shape: {"topic": {"0": 23}}
            for partition, offset in value.items():
                offsets[partition_key(key, int(partition))] = _offset(offset, option, key)
        else:
            split_key(key)
            offsets[key] = _offset(value, option, key)
    return offsets


def _offset(value: object, option: str, key: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < EARLIEST:
        raise OptionError(f"kafka: option '{option}': offset of '{key}' must be an offset, -2 or -1, got {value!r}")
    return value


__all__ = [
    "EARLIEST",
    "LATEST",
    "StartingOffsets",
    "parse_starting_offsets",
    "partition_key",
    "resolve_starting_offsets",
    "split_key",
]
