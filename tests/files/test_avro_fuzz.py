"""Fuzzing the Avro container reader: a typed error naming the file and the byte, or the right records.

Whatever a file holds (random bytes, a crafted header, a valid file truncated, its sync markers,
counts or sizes overwritten, bits flipped), reading it through ``sources.avro`` must, within a
time bound, either give the records it holds or raise a :class:`JetconnectError` whose message
names the file and a byte offset; never hang, never a bare Python error, never silently fewer.
"""

from __future__ import annotations

import io
import re
import signal
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jetconnect import sources
from jetconnect.errors import JetconnectError
from jetconnect_files.avro_container import AvroFileError

SCHEMA = {
    "type": "record",
    "name": "R",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "maybe", "type": ["null", "string"], "default": None},
    ],
}
#: What one example may take, far above the few milliseconds a read of these small files needs.
TIME_BOUND = 3.0
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Hang(Exception):
    """Raised in the reading thread when an example runs past TIME_BOUND."""


@contextmanager
def time_bound(seconds: float = TIME_BOUND):
    """Fail (rather than hang) when the block runs longer than ``seconds``: loops run Python code."""

    def expire(signum, frame):
        raise Hang(f"still reading after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def read_avro(data: bytes, max_split_bytes: int = 1 << 20) -> tuple[list[dict] | None, Exception | None]:
    """(records, None) or (None, the typed error) of ``data`` as a file read through ``sources.avro``.

    The error must name the file and a byte offset; anything but a JetconnectError fails the test.
    """
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "f.avro"
        path.write_bytes(data)
        with time_bound():
            try:
                source = sources.avro(directory=directory, max_split_bytes=max_split_bytes)
                source.schema()
                # ranges in file order, so records come back in the order they were written
                ranges = sorted((r for split in source.splits() for r in split), key=lambda r: r.start)
                rows = [row for r in ranges for batch in source.read_split([r]) for row in batch.to_pylist()]
            except JetconnectError as exc:
                message = str(exc)
                assert f"'{path}'" in message, message
                assert re.search(r"byte \d+", message), message
                return None, exc
    return rows, None


def avro_file(records: list[dict], codec: str = "null", sync_interval: int = 60) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(SCHEMA), records, codec=codec, sync_interval=sync_interval)
    return out.getvalue()


def blocks_of(data: bytes) -> list[tuple[int, int, int]]:
    """(start, end after the sync marker, records) of each block of a valid file."""
    return [(b.offset, b.offset + b.size, b.num_records) for b in fastavro.block_reader(io.BytesIO(data))]


def varint(value: int) -> bytes:
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while value & ~0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


records_st = st.lists(
    st.builds(
        lambda i, name, maybe: {"id": i, "name": name, "maybe": maybe},
        st.integers(-(2**63), 2**63 - 1),
        st.text(max_size=12),
        st.none() | st.text(max_size=5),
    ),
    min_size=1,
    max_size=40,
)
#: Values that break length and count fields: zero, negatives, and far more than any file holds.
interesting_longs = st.sampled_from([0, 1, -1, 2, 7, -64, 1000, 2**31, -(2**31), 2**62, 2**63 - 1, -(2**63)])


def test_the_crafted_header_that_looped_forever() -> None:
    # A metadata key of length -3 moved the parser back onto the metadata count: a loop for good.
    rows, error = read_avro(b"Obj\x01\x02\x05" + b"\x00" * 30)
    assert isinstance(error, AvroFileError) and "at byte 5" in str(error) and "negative length" in str(error)


@pytest.mark.parametrize(
    "data, detail",
    [
        (
            b"Obj\x01" + varint(1) + varint(2**62) + b"k",
            "at byte 5: a metadata key is 4611686018427387904 bytes long but the file ends",
        ),
        (
            b"Obj\x01" + varint(1) + varint(1) + b"k" + varint(2**62) + b"v",
            "at byte 7: metadata 'k' is 4611686018427387904 bytes long",
        ),
        (b"Obj\x01" + varint(2**62) + b"\x00" * 20, "declares 4611686018427387904 metadata entries"),
        (b"Obj\x01" + b"\xff" * 11, "longer than 10 bytes"),
        (b"Obj\x01" + varint(-(2**63)) + varint(0) + b"\x00" * 16, "declares 9223372036854775808 metadata entries"),
    ],
    ids=["key-length", "value-length", "entry-count", "varint", "negative-count"],
)
def test_huge_declared_header_lengths_fail_at_once(data: bytes, detail: str) -> None:
    started = time.monotonic()
    rows, error = read_avro(data)
    assert error is not None and detail in str(error)
    assert time.monotonic() - started < TIME_BOUND


@pytest.mark.parametrize("field", ["count", "size"])
@pytest.mark.parametrize("value", [2**62, -(2**62), 2**31])
def test_huge_declared_block_fields_fail_naming_the_block(field: str, value: int) -> None:
    data = avro_file([{"id": i, "name": "x" * i, "maybe": None} for i in range(30)])
    start, _, count = blocks_of(data)[1]
    length = len(varint(count))
    if field == "count":
        mutated = data[:start] + varint(value) + data[start + length :]
    else:
        size_at = start + length
        size_len = next(i for i in range(10) if data[size_at + i] < 0x80) + 1
        mutated = data[:size_at] + varint(value) + data[size_at + size_len :]
    rows, error = read_avro(mutated)
    assert isinstance(error, AvroFileError), rows
    assert f"block at byte {start}" in str(error)


@FUZZ
@given(st.binary(max_size=200))
def test_random_bytes_are_a_typed_error(noise: bytes) -> None:
    rows, error = read_avro(noise)
    assert error is not None or rows == []


@FUZZ
@given(
    st.lists(
        st.one_of(
            interesting_longs.map(varint), st.binary(max_size=6), st.just(b"avro.schema"), st.just(b"avro.codec")
        ),
        max_size=12,
    ),
    st.sampled_from([b"", b'"long"', b'{"type":"record","name":"R","fields":[]}', b"[" * 5000, b'{"type": "record"}']),
)
def test_crafted_headers_are_a_typed_error_or_read(pieces: list[bytes], schema: bytes) -> None:
    """Headers made of hostile varints and strings around a schema: the parser's loops are bounded."""
    data = b"Obj\x01" + varint(1) + varint(11) + b"avro.schema" + varint(len(schema)) + schema + b"".join(pieces)
    read_avro(data + b"\x00" * 40)


@FUZZ
@given(records_st, st.sampled_from(["null", "deflate"]), st.data())
def test_truncated_files_give_their_complete_blocks_or_an_error(records, codec, data) -> None:
    """A file cut anywhere: a typed error, or (cut exactly between blocks) the records of the blocks before."""
    whole = avro_file(records, codec)
    cut = data.draw(st.integers(0, len(whole) - 1), label="cut")
    split = data.draw(st.integers(40, len(whole) + 1), label="max_split_bytes")
    rows, error = read_avro(whole[:cut], split)
    if error is None:
        blocks = blocks_of(whole)
        ends = [blocks[0][0]] + [end for _, end, _ in blocks]
        assert cut in ends, f"{cut} is inside a block, yet {len(rows)} records came back without an error"
        complete = sum(n for _, end, n in blocks if end <= cut)
        assert rows == records[:complete]


@FUZZ
@given(records_st, st.sampled_from(["null", "deflate"]), st.data())
def test_overwritten_counts_sizes_and_sync_markers_are_errors(records, codec, data) -> None:
    """The structure of a block (count, size, sync marker) overwritten: an error naming that block."""
    whole = avro_file(records, codec)
    blocks = blocks_of(whole)
    index = data.draw(st.integers(0, len(blocks) - 1), label="block")
    start, end, count = blocks[index]
    what = data.draw(st.sampled_from(["count", "size", "sync"]), label="field")
    if what == "sync":
        at = data.draw(st.integers(end - 16, end - 1), label="byte")
        mutated = whole[:at] + bytes([whole[at] ^ data.draw(st.integers(1, 255))]) + whole[at + 1 :]
    else:
        count_len = len(varint(count))
        size_at = start + count_len
        size_len = next(i for i in range(10) if whole[size_at + i] < 0x80) + 1
        old = count if what == "count" else fastavro_block_size(whole, size_at)
        new = data.draw(interesting_longs | st.integers(-5, 5).map(lambda d: old + d), label="value")
        if new == old:
            return
        at, length = (start, count_len) if what == "count" else (size_at, size_len)
        mutated = whole[:at] + varint(new) + whole[at + length :]
    split = data.draw(st.integers(40, len(whole) + 1), label="max_split_bytes")
    rows, error = read_avro(mutated, split)
    assert error is not None, (
        f"{what} of block {index} overwritten, yet {len(rows)} of {len(records)} records came back"
    )
    assert re.search(r"block at byte \d+", str(error)), str(error)


def fastavro_block_size(data: bytes, at: int) -> int:
    value = shift = 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if not byte & 0x80:
            return (value >> 1) ^ -(value & 1)
        shift += 7


@FUZZ
@given(records_st, st.sampled_from(["null", "deflate", "snappy"]), st.data())
def test_flipped_bits_give_every_record_or_an_error(records, codec, data) -> None:
    """A bit flipped anywhere: values may differ (Avro has no checksum), the number of records may not."""
    whole = avro_file(records, codec)
    at = data.draw(st.integers(0, len(whole) - 1), label="byte")
    mutated = whole[:at] + bytes([whole[at] ^ (1 << data.draw(st.integers(0, 7)))]) + whole[at + 1 :]
    rows, error = read_avro(mutated, data.draw(st.integers(40, len(whole) + 1), label="max_split_bytes"))
    assert error is not None or len(rows) == len(records)


@settings(max_examples=40, deadline=None)
@given(records_st, st.sampled_from(["null", "deflate", "zstandard"]), st.integers(40, 5000))
def test_intact_files_read_back_exactly_whatever_the_splits(records, codec, split) -> None:
    rows, error = read_avro(avro_file(records, codec), split)
    assert error is None and rows == records
