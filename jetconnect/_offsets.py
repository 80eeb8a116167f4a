"""Reading back the offsets of range-readable streams: ``{key: position}`` with integer positions.

Spark keeps a stream's offsets as JSON in the checkpoint, a file anyone can edit or a disk can
damage, so a source checks what it is handed before it plans or reads: an entry that is not a
known key with a non-negative integer position is an :class:`~jetconnect.errors.OffsetError`
naming the entry, never a bare ``KeyError`` or ``TypeError`` from deep inside a read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jetconnect.errors import OffsetError


def integer_positions(
    offset: Any, owner: str, of_what: str, check_key: Callable[[str], None] | None = None
) -> dict[str, int]:
    """The entries of ``offset`` as ``{key: position}``, each checked.

    ``owner`` starts every message (``"kafka"``), ``of_what`` says what a key names (``"partition"``);
    ``check_key`` raises an OffsetError for a key the source does not know.
    """
    if not isinstance(offset, dict):
        raise OffsetError(
            f"{owner}: the offset must be a JSON object of {of_what} -> position, got {offset!r}; was the checkpoint edited?"
        )
    positions = {}
    for key, position in offset.items():
        if not isinstance(key, str):
            raise OffsetError(f"{owner}: offset entry {key!r} is not a {of_what}")
        if check_key is not None:
            check_key(key)
        if type(position) is not int or position < 0:
            raise OffsetError(
                f"{owner}: offset entry {key!r} has position {position!r}, not a non-negative integer; was the checkpoint edited?"
            )
        positions[key] = position
    return positions


__all__ = ["integer_positions"]
