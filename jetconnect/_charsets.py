"""The one check of a ``charset`` option, for every connector that reads or writes lines of text.

Lines are found by their byte ``\\n`` (files, HDFS, sockets): a charset qualifies only if it
encodes newline and carriage return as the single ASCII bytes, which rules out UTF-16 and UTF-32
(their ``\\n`` is two or four bytes, and a 0x0A byte may sit inside another character).
"""

from __future__ import annotations

import codecs

from jetconnect.errors import OptionError


def check_charset(charset: object, option: str = "charset", owner: str | None = None) -> str:
    """The normalised codec name of ``charset``; an :class:`OptionError` naming ``option`` if it is
    unknown or does not encode ``\\n`` and ``\\r`` as one byte each. ``owner`` starts the message."""
    where = f"{owner}: option '{option}'" if owner else f"option '{option}'"
    if not isinstance(charset, str):
        raise OptionError(f"{where}: a charset is a name like 'utf-8', got {type(charset).__name__}")
    try:
        name = codecs.lookup(charset).name
    except LookupError:
        raise OptionError(f"{where}: unknown charset {charset!r}") from None
    if "\n".encode(name) != b"\n" or "\r".encode(name) != b"\r":
        raise OptionError(
            f"{where}: charset {charset!r} does not encode newline as one byte 0x0A; "
            f"use an ASCII-compatible charset (utf-8, latin-1, cp1252, ...)"
        )
    return name


__all__ = ["check_charset"]
