"""Avro Object Container Files read by byte range: the header, and the data blocks of a range.

A container file is a header (magic, metadata with the writer schema and codec, a 16-byte sync
marker) followed by blocks ``<count><size><data><sync>``. As Hadoop's Avro input format does, a
byte range owns the blocks that *start* inside it: a range that does not start at the header finds
its first block by searching for the sync marker, then walks blocks by their sizes. The blocks are
decoded by fastavro, fed the file's own header followed by the range's blocks, so every codec and
logical type fastavro knows works, and an error names the file and the block's byte offset.

Every length and count the file declares is checked against the bytes the file holds before it is
used, so a corrupt or hostile file fails at once with an :class:`AvroFileError` naming the file and
the byte offset: no loop runs longer, and no buffer grows larger, than the file itself.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, cast

import fastavro
import fastavro.read

from jetconnect.api import FileSystem
from jetconnect.avro_schemas import may_be_empty
from jetconnect.errors import SourceError
from jetconnect.files_family import read_exactly

MAGIC = b"Obj\x01"
SYNC_SIZE = 16
#: Compressed bytes of blocks decoded together (one fastavro reader, then one Arrow batch).
GROUP_BYTES = 4 << 20
#: Bytes asked of the stream per read while parsing.
_READ_SIZE = 1 << 16
#: Records per block of a schema whose records may take no bytes at all (a record of nulls): the
#: bytes cannot bound their count, so a count above this is taken as corruption, not looped over.
MAX_EMPTY_RECORDS = 1 << 20


class AvroFileError(SourceError):
    """A container file is corrupt or does not match the schema; names the file and the block."""


@dataclass(frozen=True)
class AvroHeader:
    """What the header of a container file says, and where its first block starts."""

    schema: Any
    codec: str
    sync: bytes
    raw: bytes
    #: Byte offset of the writer schema's JSON in the file, for errors about it.
    schema_offset: int = 0

    @property
    def data_start(self) -> int:
        return len(self.raw)


class _Bytes:
    """A window over a stream of a file of ``size`` bytes, for Avro's varints and lengths.

    Nothing is read past ``size``, so a declared length larger than what is left fails before a
    buffer of that length is asked for; errors name the file and the byte offset.
    """

    def __init__(self, stream: BinaryIO, path: str, size: int, position: int = 0) -> None:
        self.stream, self.path, self.size = stream, path, size
        self.buf, self.pos, self.base = b"", 0, position
        #: The block being parsed, if any: errors name it.
        self.block: int | None = None

    @property
    def offset(self) -> int:
        return self.base + self.pos

    @property
    def remaining(self) -> int:
        return max(0, self.size - self.offset)

    def more(self) -> bool:
        """Read one more piece of the stream; False at the end of the file."""
        piece = self.stream.read(_READ_SIZE)
        if not piece:
            return False
        self.buf = self.buf[self.pos :] + piece
        self.base += self.pos
        self.pos = 0
        return True

    def need(self, n: int) -> bool:
        """Make ``n`` bytes available from the current position; False if the file has fewer."""
        have = len(self.buf) - self.pos
        if have >= n:
            return True
        if n > self.remaining:
            return False
        parts = [self.buf[self.pos :]]
        while have < n:
            piece = self.stream.read(max(_READ_SIZE, n - have))
            if not piece:
                break
            parts.append(piece)
            have += len(piece)
        self.base += self.pos
        self.buf, self.pos = b"".join(parts), 0
        return have >= n

    def sized(self, what: str) -> bytes:
        """Avro's ``bytes``/``string``: a length, then that many bytes; errors name the length's byte."""
        at = self.offset
        return self.take(self.long(f"the length of {what}"), what, at)

    def take(self, n: int, what: str, at: int | None = None) -> bytes:
        at = self.offset if at is None else at
        if n < 0:
            raise self.error(at, f"{what} has a negative length ({n})")
        if not self.need(n):
            raise self.error(at, f"{what} is {n} bytes long but the file ends {self.remaining} bytes later")
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def long(self, what: str) -> int:
        at = self.offset
        result = 0
        for shift in range(0, 70, 7):  # a 64-bit long takes at most 10 bytes
            if not self.need(1):
                raise self.error(at, f"the file ends inside {what}")
            byte = self.buf[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return (result >> 1) ^ -(result & 1)
        raise self.error(at, f"{what} is a malformed number (longer than 10 bytes)")

    def error(self, offset: int, detail: str) -> AvroFileError:
        where = f"at byte {offset}" if self.block is None else f"block at byte {self.block} (at byte {offset})"
        return AvroFileError(f"avro: '{self.path}' {where}: {detail}: corrupt or truncated file")


def _size(fs: FileSystem, path: str) -> int:
    info = fs.status(path)
    if info is None:
        raise FileNotFoundError(f"avro: '{path}' does not exist")
    return info.size


def read_header(fs: FileSystem, path: str) -> AvroHeader:
    """Parse the header of the container file at ``path``."""
    size = _size(fs, path)
    meta: dict[str, bytes] = {}
    where: dict[str, int] = {}
    with fs.open(path) as stream:
        data = _Bytes(stream, path, size)
        if not data.need(4) or data.take(4, "the magic") != MAGIC:
            raise AvroFileError(f"avro: '{path}' at byte 0: not an Avro container file (no 'Obj\\x01' magic)")
        while (count := data.long("the header's metadata count")) != 0:
            if count < 0:
                count = -count
                data.long("the header's metadata size")  # the block's byte size, not needed
            if count > data.remaining // 2:  # each entry is two lengths at least
                raise data.error(
                    data.offset, f"the header declares {count} metadata entries, more than the file can hold"
                )
            for _ in range(count):
                key = data.sized("a metadata key").decode("utf-8", "replace")
                where[key] = data.offset
                meta[key] = data.sized(f"metadata '{key}'")
        sync = data.take(SYNC_SIZE, "the sync marker")
        end = data.offset
    with fs.open(path) as stream:
        raw = read_exactly(stream, end)
    if "avro.schema" not in meta:
        raise AvroFileError(f"avro: '{path}' at byte 4: its header has no writer schema ('avro.schema')")
    try:
        schema = json.loads(meta["avro.schema"])
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise AvroFileError(
            f"avro: '{path}' at byte {where['avro.schema']}: the writer schema is not readable JSON: {type(exc).__name__}: {exc}"
        ) from None
    codec = meta.get("avro.codec", b"null").decode("utf-8", "replace")
    if codec not in fastavro.read.BLOCK_READERS:
        raise AvroFileError(
            f"avro: '{path}' at byte {where['avro.codec']}: unknown codec {codec!r} "
            f"(known: {', '.join(sorted(fastavro.read.BLOCK_READERS))})"
        )
    return AvroHeader(schema, codec, sync, raw, where["avro.schema"])


def read_block_groups(
    fs: FileSystem, path: str, header: AvroHeader, start: int, end: int, group_bytes: int = GROUP_BYTES
) -> Iterator[tuple[list[int], bytes]]:
    """The blocks starting in ``[start, end)``, grouped: (file offset of each block, their bytes)."""
    first = max(start, header.data_start)
    size = _size(fs, path)
    with fs.open(path, max(first - SYNC_SIZE, 0)) as stream:
        data = _Bytes(stream, path, size, max(first - SYNC_SIZE, 0))
        if first > header.data_start:
            if not _seek_past_sync(data, header.sync):
                return
        else:
            data.take(first - data.offset, "the header")
        offsets: list[int] = []
        chunks: list[bytes] = []
        group = 0
        while data.offset < end and data.need(1):
            block_start = data.block = data.offset
            count = data.long("the record count")
            length = data.long("the size")
            if count < 0:
                raise data.error(block_start, f"negative record count ({count})")
            body = data.take(length, "the block's data")
            if data.take(SYNC_SIZE, "the sync marker") != header.sync:
                raise data.error(data.offset - SYNC_SIZE, "not followed by the file's sync marker")
            if header.sync in body:
                # The declared size ran over into the next block: decoding would drop its records.
                raise data.error(block_start, f"its declared size {length} runs over the next block")
            data.block = None
            chunks.append(_varint(count) + _varint(length) + body + header.sync)
            offsets.append(block_start)
            group += length
            if group >= group_bytes:
                yield offsets, b"".join(chunks)
                offsets, chunks, group = [], [], 0
        if chunks:
            yield offsets, b"".join(chunks)


def _seek_past_sync(data: _Bytes, sync: bytes) -> bool:
    """Move to just after the next sync marker; False if there is none."""
    while True:
        found = data.buf.find(sync, data.pos)
        if found >= 0:
            data.pos = found + SYNC_SIZE
            return True
        # Keep the last 15 bytes: a marker may straddle two reads.
        data.pos = max(data.pos, len(data.buf) - SYNC_SIZE + 1)
        if not data.more():
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
    """The records of a group of blocks, one list per block; errors name the file and the block.

    A block must hold exactly its declared number of records: a count that does not match the
    block's (decompressed) bytes is corruption, never a silently shorter or endless read.
    """
    stream = io.BytesIO(header.raw + blocks)
    extra = MAX_EMPTY_RECORDS if may_be_empty(header.schema) else 0
    done = 0  # blocks decoded so far: the next one is the one an error is about
    try:
        for block in fastavro.block_reader(stream, reader_schema):
            data = getattr(block, "bytes_", None)  # the block's decompressed bytes
            buffer = data if isinstance(data, io.BytesIO) else None
            size = _length(buffer) if buffer is not None else None
            if size is not None and block.num_records > size + extra:
                raise _Corrupt(f"it declares {block.num_records} records in {size} bytes")
            # fastavro types what it reads as any Avro value; these are records, as the schema rows
            # are read with is a record one (the source's to_spark_schema refuses any other).
            records = cast("list[dict]", list(block))
            left = size - buffer.tell() if buffer is not None and size is not None else 0
            if left:
                raise _Corrupt(f"{left} of its {size} bytes are left after its {block.num_records} records")
            done += 1
            yield records
    except _Corrupt as exc:
        where = offsets[min(done, len(offsets) - 1)]
        raise AvroFileError(f"avro: '{path}' block at byte {where}: {exc}: corrupt file") from None
    except Exception as exc:  # fastavro raises many types (EOFError, ValueError, zlib.error, ...)
        where = offsets[min(done, len(offsets) - 1)]
        raise AvroFileError(
            f"avro: '{path}' block at byte {where} cannot be decoded ({header.codec} codec): "
            f"{type(exc).__name__}: {exc}"
        ) from exc


class _Corrupt(Exception):
    """A block whose record count does not match its bytes (turned into an AvroFileError)."""


def _length(data: io.BytesIO) -> int:
    with data.getbuffer() as view:
        return view.nbytes


__all__ = ["AvroFileError", "AvroHeader", "decode_records", "read_block_groups", "read_header"]
