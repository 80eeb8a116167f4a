"""Bulk writes to Hazelcast from Arrow columns: whole columns serialised, partitioned and framed
at once, where the client does it one object at a time.

Profiled (bench/bench_imap.py, 200,000 long entries, one process): the client's ``put_all``
spends ~60% of its time in ``to_data`` (a serializer lookup, an output buffer and three packs per
object), ~10% in its pure-Python ``murmur_hash3_x86_32`` for the partition of each key, and ~10%
building one frame per key and value. This module does the same work per column:

* :func:`serialize_column`: an Arrow column as the bytes of each value's ``Data`` (the client's
  own format: partition hash 0, the type id, the value, big-endian as the client writes unless
  configured otherwise). Integer columns become Java longs and float columns Java doubles with
  numpy, string columns Java Strings with one encode per value; any other type goes through
  :func:`~jetconnect_imap.hazelcast.values.to_hazelcast` and the client's ``to_data``, as before.
* :func:`partition_ids`: the client's partition of each key (murmur3 x86 32 of the Data past its
  8-byte header, Hazelcast's ``hash_to_index``), vectorised over keys of equal length.

(``Map.putAll`` of such pairs is :mod:`jetconnect_imap.hazelcast.codecs.map_put_all`.)

Each is checked against the client's own functions in tests/imap/test_hz_bulk.py.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jetconnect_imap.hazelcast.values import to_hazelcast
from jetconnect_imap.json_values import json_ready

#: Hazelcast's type ids (SerializationConstants) of the values serialised here.
_LONG_TYPE, _DOUBLE_TYPE, _STRING_TYPE = -8, -10, -11
_C1, _C2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)


def _header(type_id: int) -> bytes:
    """A Data's first 8 bytes: partition hash 0 (no partitioning strategy), the type id, both
    big-endian whatever the byte order of the values (as the client writes them)."""
    return struct.pack(">ii", 0, type_id)


def serialize_column(array: pa.Array, column: str, to_data: Any, big_endian: bool = True) -> list[bytes | None]:
    """The ``Data`` bytes of every value of ``array`` (None for a null), as the client's
    ``to_data(to_hazelcast(value, column))`` makes them. ``to_data`` is the client's, for the
    types not done here; ``big_endian`` its byte order (``serialization_service._is_big_endian``)."""
    kind = array.type
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array.null_count == 0 and (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        if pa.types.is_uint64(kind) and len(array) and pc.max(array).as_py() > 2**63 - 1:
            return _one_by_one(array, column, to_data)  # to_hazelcast names the value past a long
        is_int = pa.types.is_integer(kind)
        order = ">" if big_endian else "<"
        values = array.to_numpy(zero_copy_only=False).astype(order + ("i8" if is_int else "f8"))
        rows = np.empty(len(values), dtype=[("head", "S8"), ("value", values.dtype)])
        rows["head"] = _header(_LONG_TYPE if is_int else _DOUBLE_TYPE)
        rows["value"] = values
        flat = rows.tobytes()
        return [flat[i : i + 16] for i in range(0, len(flat), 16)]
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        head = _header(_STRING_TYPE)
        length = struct.Struct(order_of(big_endian) + "i").pack
        out: list[bytes | None] = []
        for text in array.to_pylist():
            if text is None:
                out.append(None)
            else:
                raw = text.encode("utf-8")
                out.append(head + length(len(raw)) + raw)
        return out
    return _one_by_one(array, column, to_data)


def order_of(big_endian: bool) -> str:
    """The struct prefix of the client's stream byte order."""
    return ">" if big_endian else "<"


def _one_by_one(array: pa.Array, column: str, to_data: Any) -> list[bytes | None]:
    return [None if v is None else bytes(to_data(to_hazelcast(v, column)).buffer) for v in json_ready(array, column)]


def partition_ids(keys: Sequence[bytes], partition_count: int) -> np.ndarray:
    """The partition of each serialised key, as the client computes it (its
    ``partition_service.get_partition_id``): murmur3 x86 32 (seed 0x01000193) of the bytes past
    the 8-byte header, then ``abs(hash) % partition_count`` (0 for Integer.MIN_VALUE)."""
    out = np.empty(len(keys), dtype=np.int64)
    by_length: dict[int, list[int]] = {}
    for i, key in enumerate(keys):
        by_length.setdefault(len(key), []).append(i)
    for size, where in by_length.items():
        raw = np.frombuffer(b"".join(keys[i] for i in where), dtype=np.uint8).reshape(len(where), size)
        hashes = _murmur(raw[:, 8:] if size >= 8 else raw[:, :0]).view(np.int32).astype(np.int64)
        index = np.abs(hashes) % partition_count
        index[hashes == -(2**31)] = 0
        out[np.asarray(where)] = index
    return out


def _murmur(body: np.ndarray) -> np.ndarray:
    """Hazelcast's murmur3 x86 32 of each row of ``body`` (uint8, rows of one length)."""
    rows, length = body.shape
    h = np.full(rows, 0x01000193, dtype=np.uint32)
    nblocks = length // 4
    if nblocks:
        blocks = np.ascontiguousarray(body[:, : nblocks * 4]).view("<u4")
        for b in range(nblocks):
            k = blocks[:, b] * _C1
            k = (k << np.uint32(15)) | (k >> np.uint32(17))
            h ^= k * _C2
            h = (h << np.uint32(13)) | (h >> np.uint32(19))
            h = h * np.uint32(5) + np.uint32(0xE6546B64)
    tail = length & 3
    if tail:
        k = np.zeros(rows, dtype=np.uint32)
        for j in range(tail - 1, -1, -1):
            k ^= body[:, nblocks * 4 + j].astype(np.uint32) << np.uint32(8 * j)
        k = k * _C1
        k = (k << np.uint32(15)) | (k >> np.uint32(17))
        h ^= k * _C2
    h ^= np.uint32(length)
    h ^= h >> np.uint32(16)
    h = h * np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h = h * np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h


__all__ = ["order_of", "partition_ids", "serialize_column"]
