"""Splitting and parsing the STOMP 1.2 frames a broker sends, faster than stomp.py does it.

stomp.py parses each header line with a regular expression and two ``re.sub`` calls, and cuts
each frame off the front of its receive buffer with a copy of the rest: about 19 µs of the
consumer's one GIL per ActiveMQ MESSAGE frame, most of a JMS source's CPU. :class:`FrameReader`
does the same work with ``bytes.find`` and ``str.partition`` in about a third of the time, and
hands stomp.py the same ``Frame`` objects, so everything above the socket stays stomp.py's.
"""

from __future__ import annotations

import re

from stomp.utils import HEARTBEAT_FRAME, Frame

_HEADER_END = re.compile(rb"\n\r?\n")
_ESCAPE = re.compile(r"\\.")
_UNESCAPED = {"\\\\": "\\", "\\c": ":", "\\n": "\n", "\\r": "\r"}


class FrameError(ValueError):
    """The broker sent bytes that are not a STOMP frame (a body longer than its content-length)."""


def _unescape(text: str) -> str:
    """Undo STOMP 1.2 header escapes; an unknown escape is kept as it is, as stomp.py does."""
    if "\\\\" in text:  # an escaped backslash could pair with the next character: match escapes
        return _ESCAPE.sub(lambda m: _UNESCAPED.get(m.group(), m.group()), text)
    # Without one, the escapes cannot overlap (ActiveMQ's ids only have "\c"): plain replaces.
    return text.replace("\\c", ":").replace("\\n", "\n").replace("\\r", "\r")


def parse_headers(head: str) -> tuple[str, dict[str, str]]:
    """The command and headers of a frame's preamble (the text before the blank line).

    A repeated header keeps its first value, as STOMP 1.2 says; lines without a colon are ignored.
    """
    lines = head.split("\n")
    command = lines[0].rstrip("\r")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        line = line.removesuffix("\r")
        key, colon, value = line.partition(":")
        if not colon:
            continue
        if "\\" in value:
            value = _unescape(value)
        if "\\" in key:
            key = _unescape(key)
        if key not in headers:
            headers[key] = value
    return command, headers


class FrameReader:
    """Turns the bytes of one connection, in whatever chunks they arrive, into frames.

    End-of-line bytes right after a frame are its optional trailer (ActiveMQ sends one after
    every frame); any other are heart-beats. A frame with a ``content-length`` header ends after
    that many body bytes (its body may hold NULs), any other at the first NUL.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._after_frame = False

    def feed(self, data: bytes) -> list[Frame]:
        """Add received bytes; return the frames they complete, in order."""
        buffer = self._buffer
        buffer += data
        frames: list[Frame] = []
        pos, size = 0, len(buffer)
        while pos < size:
            if buffer[pos] in b"\r\n":
                while pos < size and buffer[pos] in b"\r\n":
                    pos += 1
                if not self._after_frame:
                    frames.append(HEARTBEAT_FRAME)
                self._after_frame = False
                continue
            header_end = _HEADER_END.search(buffer, pos)
            if header_end is None:
                break  # the preamble has not fully arrived
            command, headers = parse_headers(buffer[pos:header_end.start()].decode("utf-8"))
            body_start = header_end.end()
            length = headers.get("content-length")
            if length is not None:
                body_end = body_start + int(length)
                if body_end >= size:
                    break  # body or its closing NUL still to come
                if buffer[body_end] != 0:
                    raise FrameError(f"a {command} frame's body does not end after its content-length of {length} bytes")
            else:
                body_end = buffer.find(b"\x00", body_start)
                if body_end < 0:
                    break
            frames.append(Frame(command, headers, bytes(buffer[body_start:body_end])))
            pos = body_end + 1
            self._after_frame = True
        del buffer[:pos]
        return frames

    def clear(self) -> None:
        """Forget a partly received frame (the connection it came from is gone)."""
        self._buffer.clear()
        self._after_frame = False
