"""A CRC32C trailer that lets a write-ahead file prove its bytes are the ones written.

Spool segments and round records (:mod:`jetconnect._spool`, :mod:`jetconnect._round_log`) are Arrow
IPC streams. Arrow checks its own framing, so a truncated file fails, but nothing in the format
checks the bytes of the rows: a flipped bit inside a column's buffer is read back as another
value. Each file therefore ends with a trailer, appended after Arrow's end-of-stream marker
before the file is renamed into place (HDFS keeps a CRC32C per chunk and Kafka one per record
batch for the same reason)::

    <Arrow IPC stream> <magic "JCCRC32C"> <CRC32C of the stream: 4 bytes LE> <stream length: 8 bytes LE>

Every read checks the length and the CRC before Arrow sees a byte. A file written before the
trailer existed ends with Arrow's end-of-stream marker instead; it is read as before, checked by
Arrow's framing and the row counts only (its queries ran on the version before; their spools are
trimmed as Spark commits). Anything else at the end of a file is an error.
"""

from __future__ import annotations

import struct
from typing import Final

import google_crc32c
import pyarrow as pa

from jetconnect._locations import WAL_LOCATION
from jetconnect.errors import ChecksumError

_MAGIC: Final = b"JCCRC32C"
_TRAILER: Final = struct.Struct("<8sIQ")
#: Arrow's end-of-stream marker (continuation token, then a zero length): how every IPC stream ends.
_ARROW_EOS: Final = b"\xff\xff\xff\xff\x00\x00\x00\x00"
TRAILER_BYTES: Final = _TRAILER.size


def crc32c(data: bytes | memoryview) -> int:
    """The CRC32C (Castagnoli) of ``data``."""
    # its C function refuses memoryviews; an Arrow buffer over the same memory it takes, uncopied
    return int(google_crc32c.value(data if isinstance(data, bytes) else pa.py_buffer(data)))


def trailer(payload: bytes | memoryview) -> bytes:
    """The trailer to write right after ``payload`` (an Arrow IPC stream)."""
    return _TRAILER.pack(_MAGIC, crc32c(payload), len(payload))


def verified(data: bytes, path: str, what: str) -> memoryview:
    """The Arrow stream in ``data`` (a whole file read from ``path``), once its trailer vouches for it.

    ``what`` says what the file holds, for the error: the processor and the rows (a file that
    fails its check is never read, so its rows are named by where they belong, not by content).
    A file from before trailers (ending with Arrow's end-of-stream marker) is returned whole.
    """
    view = memoryview(data)
    if len(view) >= TRAILER_BYTES and view[-TRAILER_BYTES:][:8] == _MAGIC:
        magic, expected, length = _TRAILER.unpack(view[-TRAILER_BYTES:])
        payload = view[:-TRAILER_BYTES]
        if length != len(payload):
            raise ChecksumError(
                f"{path} ({what}) holds {len(payload)} bytes before its checksum, which was written for {length}: "
                f"the file was truncated or edited; its rows are not read"
            )
        actual = crc32c(payload)
        if actual != expected:
            raise ChecksumError(
                f"{path} ({what}) is not what was written: its CRC32C is {actual:08x}, written as {expected:08x} "
                f"(the disk or the file system changed its bytes); its rows are not read. Restore the file from a "
                f"copy to go on, or start the query afresh with a new checkpoint and '{WAL_LOCATION}'"
            )
        return payload
    if bytes(view[-len(_ARROW_EOS) :]) == _ARROW_EOS:
        return view  # written before checksums: Arrow's framing and the row counts still check it
    raise ChecksumError(
        f"{path} ({what}) does not end with a checksum or an Arrow end-of-stream marker: the file was truncated "
        f"or edited; its rows are not read"
    )


__all__ = ["TRAILER_BYTES", "crc32c", "trailer", "verified"]
