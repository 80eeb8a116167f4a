"""The one check of a ``charset`` option, for every connector that reads or writes lines of text.

Lines are found by their byte ``\\n`` (files, HDFS, sockets), and a split of a file starts reading
at the first line after its first byte: every line must therefore decode on its own. A charset
qualifies only if

- it encodes newline and carriage return as the single ASCII bytes, which rules out UTF-16 and
  UTF-32 (their ``\\n`` is two or four bytes, and a 0x0A byte may sit inside another character);
- no other character's bytes hold 0x0A or 0x0D, so a line boundary is a character boundary; and
- it is *stateless*: a text's bytes are its characters' bytes one after the other, so no byte
  means something different after an earlier line. Escape-sequence encodings (ISO-2022-*, HZ),
  UTF-7's shifted Base64 and encodings that start with a byte-order mark (utf-8-sig) fail this:
  a split after the first would be decoded in the wrong state, as garbage.

The last two are tested on the codec itself (its whole repertoire in the Basic Multilingual
Plane), not looked up in a list, so a codec nobody here thought of is judged by what it does.
"""

from __future__ import annotations

import codecs
import functools

from jetconnect.errors import OptionError

#: Characters a codec is tried on: the Basic Multilingual Plane without surrogates (every
#: registered codec's repertoire lies in it, up to the rare astral characters of a few).
_PLANE = "".join(chr(c) for c in range(0x20, 0x10000) if not 0xD800 <= c < 0xE000)


def check_charset(charset: object, option: str = "charset", owner: str | None = None) -> str:
    """The normalised codec name of ``charset``; an :class:`OptionError` naming ``option`` and the
    charset if it is unknown or its lines cannot be found and decoded one by one (see the module's
    docstring). ``owner`` starts the message."""
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
    why = _why_lines_do_not_decode_alone(name)
    if why:
        raise OptionError(
            f"{where}: charset {charset!r} cannot be read line by line: {why}, so every split of a file "
            f"after the first would be decoded as garbage; use a charset without shift states "
            f"(utf-8, latin-1, cp1252, shift_jis, euc-jp, gb18030, ...)"
        )
    return name


#: Codecs whose lines decode alone by construction (UTF-8 is self-synchronising, ASCII and Latin-1
#: map each byte to one character): the test below would pass them, at a cost paid in every worker.
_BY_DESIGN = frozenset({"utf-8", "ascii", "iso8859-1"})


@functools.lru_cache(maxsize=64)
def _why_lines_do_not_decode_alone(name: str) -> str | None:
    """None if every line of ``name`` decodes on its own; else what about the codec prevents it."""
    return None if name in _BY_DESIGN else codec_test(name)


def codec_test(name: str) -> str | None:
    """The test itself, on the codec's repertoire (tests/core run it on the codecs passed by design too)."""
    encodable = []
    for char in _PLANE:
        try:
            data = char.encode(name)
        except UnicodeError:
            continue
        if b"\n" in data or b"\r" in data:
            return f"{char!r} is encoded with a byte 0x0A or 0x0D ({data!r}), which would end a line inside it"
        encodable.append((char, data))
    if not encodable:
        return "it encodes none of the characters it was tried on"
    text = "".join(char for char, _ in encodable)
    whole = text.encode(name)
    if whole != b"".join(data for _, data in encodable):
        return "it is stateful (a text's bytes are not its characters' bytes one after the other: shift states or a byte-order mark)"
    # and back: each character's bytes decode alike alone and after a newline (a decoder with state
    # of its own would read the second of two equal characters differently)
    sample = encodable[:: max(1, len(encodable) // 512)]
    for char, data in sample:
        alone = data.decode(name)
        if (data + b"\n" + data).decode(name) != alone + "\n" + alone:
            return f"the bytes of {char!r} decode differently after a newline"
    return None


__all__ = ["check_charset"]
