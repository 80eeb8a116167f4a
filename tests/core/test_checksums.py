"""Spool segments and round records carry a CRC32C: changed bytes are an error naming the file, never other rows."""

from __future__ import annotations

import pyarrow as pa
import pytest

from jetconnect._checksums import TRAILER_BYTES, trailer, verified
from jetconnect._files.filesystem import LocalFileSystem
from jetconnect._round_log import Round, RoundFacts, RoundLog
from jetconnect._spool import Spool
from jetconnect.errors import ChecksumError, OffsetError


def _rows(*values: int) -> pa.Table:
    return pa.table({"n": pa.array(values, pa.int64())})


def _arrow_stream(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _flip_in_column(path, value: int) -> None:
    """Flip the bits of ``value``'s 8 bytes inside the file (the row data, not Arrow's framing)."""
    data = bytearray(path.read_bytes())
    at = data.index(value.to_bytes(8, "little"))
    data[at : at + 8] = bytes(b ^ 0xFF for b in data[at : at + 8])
    path.write_bytes(bytes(data))


def test_a_flipped_value_in_a_spool_segment_is_an_error_naming_the_file_processor_and_rows(tmp_path):
    spool = Spool(LocalFileSystem(), str(tmp_path), owner="processor 3")
    spool.append(0, _rows(*range(8530, 8540)))
    spool.append(10, _rows(1, 2))
    (segment, _) = sorted(tmp_path.glob("*.arrow"))
    _flip_in_column(segment, 8539)
    # Arrow alone reads the flipped file back as other data: that is what the checksum is for
    payload = segment.read_bytes()[:-TRAILER_BYTES]
    assert pa.ipc.open_stream(payload).read_all().column("n").to_pylist()[-1] == ~8539
    with pytest.raises(ChecksumError) as caught:
        list(spool.read(0, 12))
    message = str(caught.value)
    assert str(segment) in message and "processor 3" in message and "rows 0..10" in message
    assert "CRC32C" in message
    assert isinstance(caught.value, OffsetError)  # what a round's read already fails on
    assert [r for b in spool.read(10, 12) for r in b.column("n").to_pylist()] == [1, 2]  # the others still read


def test_a_flipped_byte_in_a_round_record_is_an_error_naming_the_record_and_round(tmp_path):
    rounds = RoundLog(LocalFileSystem(), str(tmp_path), "run")
    facts = RoundFacts(3, 5, "limit", "a", carried=2, round=4, snapshot=17)
    rounds.write(1, 4, Round(facts, _rows(777_777, 888_888)))
    path = tmp_path / "run" / "1" / "000000000004.arrow"
    _flip_in_column(path, 888_888)
    for read in (rounds.read, rounds.facts):
        with pytest.raises(ChecksumError, match=rf"round record {path} \(round 4 of processor 1"):
            read(1, 4)


def test_a_flipped_byte_in_a_records_facts_is_an_error_too(tmp_path):
    rounds = RoundLog(LocalFileSystem(), str(tmp_path), "run")
    rounds.write(0, 1, Round(RoundFacts(0, 0, "dry", "a", round=1, log_from=5, log_to=9), _rows()))
    path = tmp_path / "run" / "0" / "000000000001.arrow"
    data = path.read_bytes().replace(b'"log_to":9', b'"log_to":8')
    path.write_bytes(data)
    with pytest.raises(ChecksumError, match=str(path)):
        rounds.facts(0, 1)


def test_files_written_before_checksums_still_read(tmp_path):
    """A spool or a record from the version before (no trailer) reads as it did: Arrow and the counts check it."""
    spool_dir = tmp_path / "spool"
    spool_dir.mkdir()
    (spool_dir / f"{0:020d}-{3:020d}.arrow").write_bytes(_arrow_stream(_rows(7, 8, 9)))
    spool = Spool(LocalFileSystem(), str(spool_dir))
    assert [r for b in spool.read(0, 3) for r in b.column("n").to_pylist()] == [7, 8, 9]

    rounds = RoundLog(LocalFileSystem(), str(tmp_path / "wal"), "run")
    rounds.write(0, 2, Round(RoundFacts(1, 1, "dry", "a", carried=1, round=2), _rows(5)))
    path = tmp_path / "wal" / "run" / "0" / "000000000002.arrow"
    path.write_bytes(path.read_bytes()[:-TRAILER_BYTES])  # as the version before wrote it
    record = rounds.read(0, 2)
    assert record is not None and record.carry.column("n").to_pylist() == [5]


def test_a_damaged_trailer_or_tail_is_an_error_not_a_file_from_before(tmp_path):
    payload = _arrow_stream(_rows(1))
    whole = payload + trailer(payload)
    assert bytes(verified(whole, "f", "rows")) == payload
    with pytest.raises(ChecksumError, match=rf"f \(rows\) holds {len(payload)} bytes before its checksum"):
        verified(whole[:-8] + (len(payload) + 1).to_bytes(8, "little"), "f", "rows")
    with pytest.raises(ChecksumError, match="does not end with a checksum"):
        verified(whole[:-3], "f", "rows")
    with pytest.raises(ChecksumError, match="holds 1 bytes before its checksum, which was written for"):
        verified(b"x" + whole[-TRAILER_BYTES:], "f", "rows")
