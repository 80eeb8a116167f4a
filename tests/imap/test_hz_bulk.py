"""hz_bulk's whole-column serialisation, partitioning and putAll framing make exactly what the
official client makes of the same values one at a time (its serialization service, murmur hash
and codec, no cluster needed)."""

from __future__ import annotations

import datetime as dt
import random

import pyarrow as pa
import pytest
from hazelcast.config import Config, IntType
from hazelcast.hash import hash_to_index, murmur_hash3_x86_32
from hazelcast.protocol.codec import map_put_all_codec
from hazelcast.serialization.data import Data
from hazelcast.serialization.service import SerializationServiceV1

from jetconnect_imap.hazelcast.bulk import partition_ids, serialize_column
from jetconnect_imap.hazelcast.codecs import map_put_all
from jetconnect_imap.hazelcast.values import ValueMappingError, to_hazelcast


def service(big_endian: bool = True) -> SerializationServiceV1:
    config = Config()
    config.default_int_type = IntType.LONG
    config.is_big_endian = big_endian
    return SerializationServiceV1(config)


COLUMNS = [
    pa.array([0, 1, -1, 2**31, -(2**63), 2**63 - 1, 42], pa.int64()),
    pa.array([0, 7, -128, 127], pa.int8()),
    pa.array([0, 2**32 - 1], pa.uint32()),
    pa.array([0, 2**63 - 1], pa.uint64()),
    pa.array([0.0, -0.0, 1.5, float("inf"), float("nan"), 1e308], pa.float64()),
    pa.array([0.25, -3.5], pa.float32()),
    pa.array(["", "a", "ünïcødé ✓", "x" * 1000, None], pa.string()),
    pa.array(["k1", None], pa.large_string()),
    pa.array([1, None, 3], pa.int64()),  # nulls: one by one
    pa.array([True, False, None], pa.bool_()),
    pa.array([b"\x00\x01", None], pa.binary()),
    pa.array([dt.date(2026, 11, 26)], pa.date32()),
    pa.array([{"a": 1, "b": "x"}], pa.struct([("a", pa.int64()), ("b", pa.string())])),
]


@pytest.mark.parametrize("big_endian", [True, False])
@pytest.mark.parametrize("column", COLUMNS, ids=lambda c: str(c.type))
def test_columns_serialise_to_the_clients_own_bytes(column: pa.Array, big_endian: bool) -> None:
    svc = service(big_endian)
    got = serialize_column(column, "c", svc.to_data, big_endian)
    want = [None if v is None else bytes(svc.to_data(to_hazelcast(v, "c")).buffer) for v in column.to_pylist()]
    assert len(got) == len(want)
    for mine, theirs in zip(got, want):
        if theirs is not None and column.type in (pa.float64(), pa.float32()):
            # NaN's payload aside, the bytes are the client's
            assert mine is not None and len(mine) == len(theirs) and mine[:8] == theirs[:8]
        else:
            assert mine == theirs
    assert [svc.to_object(Data(b)) if b is not None else None for b in got][:1] is not None


def test_a_uint64_past_a_java_long_is_an_error_naming_the_column() -> None:
    with pytest.raises(ValueMappingError, match="column 'qty'"):
        serialize_column(pa.array([1, 2**63], pa.uint64()), "qty", service().to_data)


def test_partitions_are_the_clients_for_every_key_length() -> None:
    svc = service()
    rng = random.Random(31)
    keys = [svc.to_data(v) for v in range(-500, 500)]
    keys += [svc.to_data("".join(rng.choice("abcxyzé✓") for _ in range(n))) for n in range(0, 40) for _ in range(5)]
    keys += [svc.to_data(rng.random()) for _ in range(50)]
    raw = [bytes(k.buffer) for k in keys]
    for count in (271, 7, 1):
        got = partition_ids(raw, count).tolist()
        assert got == [hash_to_index(murmur_hash3_x86_32(b), count) for b in raw]
    assert partition_ids([], 271).tolist() == []


def test_put_all_of_serialised_pairs_is_the_clients_message() -> None:
    svc = service()
    pairs = [(svc.to_data(i), svc.to_data(f"v{i}")) for i in range(50)] + [(svc.to_data("k"), svc.to_data(1.5))]
    theirs = map_put_all_codec.encode_request("bench-map", pairs, False)
    mine = map_put_all.encode_request("bench-map", [(bytes(k.buffer), bytes(v.buffer)) for k, v in pairs], False)
    assert bytes(mine.buf) == bytes(theirs.buf)
    assert (mine.retryable, mine.contains_data) == (theirs.retryable, theirs.contains_data)
