"""Avro Object Container Files read by byte range: the header, and the data blocks of a range.

A container file is a header (magic, metadata with the writer schema and codec, a 16-byte sync
marker) followed by blocks ``<count><size><data><sync>``. As Hadoop's Avro input format does, a
byte range owns the blocks that *start* inside it: a range that does not start at the header finds
its first block by searching for the sync marker, then walks blocks by their sizes. The blocks are
decoded by fastavro, fed the file's own header followed by the range's blocks, so every codec and
logical type fastavro knows works, and an error names the file and the block's byte offset.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import fastavro

from jetconnect.errors import SourceError
from jetconnect.filesystem import FileSystem

MAGIC = b"Obj\x01"
SYNC_SIZE = 16
#: Compressed bytes of blocks decoded together (one fastavro reader, then one Arrow batch).
GROUP_BYTES = 4 << 20


class AvroFileError(SourceError):
    """A container file is corrupt or does not match the schema; names the file and the block."""


@dataclass(frozen=True)
class AvroHeader:
    """What the header of a container file says, and where its first block starts."""

    schema: Any
    codec: str
    sync: bytes
    raw: bytes

    @property
    def data_start(self) -> int:
        return len(self.raw)


class _Bytes:
    """A growing buffer over a stream, for parsing Avro's variable-length integers."""

    def __init__(self, stream: BinaryIO, path: str, position: int = 0) -> None:
        self.stream, self.path, self.buf, self.pos, self.base = stream, path, b"", 0, position

    def need(self, n: int) -> bool:
        """Make ``n`` bytes available from the current position; False at end of file."""
        while len(self.buf) - self.pos < n:
            more = self.stream.read(max(1 << 16, n))
            if not more:
                return False
            self.buf = self.buf[self.pos :] + more
            self.base += self.pos
            self.pos = 0
        return True

    def take(self, n: int) -> bytes:
        if not self.need(n):
            raise AvroFileError(f"avro: '{self.path}' ends inside a block or header at byte {self.offset + len(self.buf) - self.pos}")
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def long(self) -> int:
        shift = result = 0
        while True:
            byte = self.take(1)[0]
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return (result >> 1) ^ -(result & 1)
            shift += 7
            if shift > 63:
                raise AvroFileError(f"avro: '{self.path}' has a malformed number at byte {self.offset}")

    @property
    def offset(self) -> int:
        return self.base + self.pos


def read_header(fs: FileSystem, path: str) -> AvroHeader:
    """Parse the header of the container file at ``path``."""
    with fs.open(path) as stream:
        data = _Bytes(stream, path)
        if data.need(4) is False or data.take(4) != MAGIC:
            raise AvroFileError(f"avro: '{path}' is not an Avro container file (no 'Obj\\x01' magic)")
        meta: dict[str, bytes] = {}
        while (count := data.long()) != 0:
            if count < 0:
                count = -count
                data.long()  # the block's byte size, not needed
            for _ in range(count):
                key = data.take(data.long()).decode("utf-8", "replace")
                meta[key] = data.take(data.long())
        sync = data.take(SYNC_SIZE)
        end = data.offset
    with fs.open(path) as stream:
        raw = stream.read(end)
    try:
        schema = json.loads(meta["avro.schema"])
    except (KeyError, ValueError) as exc:
        raise AvroFileError(f"avro: '{path}' has no readable writer schema in its header: {exc}") from None
    return AvroHeader(schema, meta.get("avro.codec", b"null").decode(), sync, raw)


def read_block_groups(
    fs: FileSystem, path: str, header: AvroHeader, start: int, end: int, group_bytes: int = GROUP_BYTES
) -> Iterator[tuple[list[int], bytes]]:
    """The blocks starting in ``[start, end)``, grouped: (file offset of each block, their bytes)."""
    first = max(start, header.data_start)
    with fs.open(path, max(first - SYNC_SIZE, 0)) as stream:
        data = _Bytes(stream, path, max(first - SYNC_SIZE, 0))
        if first > header.data_start:
            if not _seek_past_sync(data, header.sync):
                return
        else:
            data.take(first - data.offset)
        offsets: list[int] = []
        chunks: list[bytes] = []
        size = 0
        while data.offset < end and data.need(1):
            block_start = data.offset
            count, length = data.long(), data.long()
            if count < 0 or length < 0:
                raise AvroFileError(f"avro: '{path}' block at byte {block_start} has a negative count or size: corrupt file")
            body = data.take(length)
            if data.take(SYNC_SIZE) != header.sync:
                raise AvroFileError(
                    f"avro: '{path}' block at byte {block_start} is not followed by the file's sync marker: corrupt file"
                )
            chunks.append(_varint(count) + _varint(length) + body + header.sync)
            offsets.append(block_start)
            size += length
            if size >= group_bytes:
                yield offsets, b"".join(chunks)
                offsets, chunks, size = [], [], 0
        if chunks:
            yield offsets, b"".join(chunks)


def _seek_past_sync(data: _Bytes, sync: bytes) -> bool:
    """Move to just after the next sync marker; False if there is none."""
    while True:
        if not data.need(SYNC_SIZE):
            return False
        found = data.buf.find(sync, data.pos)
        if found >= 0:
            data.pos = found + SYNC_SIZE
            return True
        # Keep the last 15 bytes: a marker may straddle two reads.
        keep = max(data.pos, len(data.buf) - SYNC_SIZE + 1)
        data.pos = keep
        if not data.need(len(data.buf) - keep + 1):
            return False


def _varint(value: int) -> bytes:
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while value & ~0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_records(
    path: str, header: AvroHeader, offsets: list[int], blocks: bytes, reader_schema: Any = None
) -> Iterator[list[dict]]:
    """The records of a group of blocks, one list per block; errors name the file and the block."""
    stream = io.BytesIO(header.raw + blocks)
    done = 0  # blocks decoded so far: the next one is the one an error is about
    try:
        for block in fastavro.block_reader(stream, reader_schema):
            records = list(block)
            done += 1
            yield records
    except Exception as exc:  # fastavro raises many types (EOFError, ValueError, zlib.error, ...)
        where = offsets[min(done, len(offsets) - 1)]
        raise AvroFileError(
            f"avro: '{path}' block at byte {where} cannot be decoded ({header.codec} codec): "
            f"{type(exc).__name__}: {exc}"
        ) from exc


__all__ = ["AvroFileError", "AvroHeader", "decode_records", "read_block_groups", "read_header"]
