"""Values quoted in error messages, cut short: an error names the item at fault without printing it whole."""

from __future__ import annotations

import reprlib
from typing import Any


class _Repr(reprlib.Repr):
    """reprlib with bytes cut before rendering too: a huge value is never rendered whole to be cut."""

    def repr_bytes(self, value: bytes, level: int) -> str:
        return repr(value[: self.maxstring]) + ("..." if len(value) > self.maxstring else "")

    repr_bytearray = repr_bytes


_repr = _Repr()
_repr.maxstring = _repr.maxother = 160
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 8
_repr.maxlevel = 6


def short_repr(value: Any, limit: int = 200, text: bool = False) -> str:
    """``repr(value)`` (or ``value`` itself, when ``text`` and a str) cut to about ``limit`` characters."""
    rendered = value if text and isinstance(value, str) else _repr.repr(value)
    return rendered if len(rendered) <= limit else rendered[:limit] + "..."


__all__ = ["short_repr"]
