"""Bytes changed on disk in a write-ahead file, then a restart from the checkpoint: an error naming
the file, never other rows (issue #32: a flipped value was once delivered as another number)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pyspark.errors import StreamingQueryException

from jetconnect import SourceBuilder
from jetconnect.testing import wait_until

#: Values are positions plus this: eight bytes no Arrow header or offset buffer holds.
BASE = 7_000_000_000
TOTAL = 6_000


def _dispenser(position_file: str):
    """A source that cannot replay, as a broker: what it handed out it never hands out again."""

    def fill(state, buf):
        path = Path(position_file)
        n = int(path.read_text() or 0) if path.exists() else 0
        upto = min(TOTAL, n + 300)
        for k in range(n, upto):
            buf.add(BASE + k)
        path.write_text(str(upto))

    return SourceBuilder.stream("dispenser", lambda ctx: None).fill_buffer_fn(fill).schema("n bigint").build()


def _query(spark, source, tmp_path: Path, available_now: bool):
    df = source.read_stream(spark, wal_location=str(tmp_path / "wal"), max_records_per_batch=500)
    writer = (
        df.writeStream.format("parquet")
        .option("path", str(tmp_path / "out"))
        .option("checkpointLocation", str(tmp_path / "ck"))
    )
    return writer.trigger(availableNow=True).start() if available_now else writer.start()


def _flip(path: Path, needle: bytes) -> None:
    data = bytearray(path.read_bytes())
    at = data.index(needle)
    data[at : at + len(needle)] = bytes(b ^ 0xFF for b in needle)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("where", ["pending segment", "round record"])
def test_a_flipped_byte_in_a_wal_file_fails_the_restart_naming_it_never_other_rows(spark, tmp_path, where):
    source = _dispenser(str(tmp_path / "dispensed"))
    query = _query(spark, source, tmp_path, available_now=False)
    try:  # two micro-batches of 500 while the receiver spools all 6,000: the rest is pending
        wait_until(lambda: len([p for p in query.recentProgress if p["numInputRows"]]) >= 2, 180, "two batches")
        wait_until(
            lambda: (tmp_path / "dispensed").exists() and (tmp_path / "dispensed").read_text() == str(TOTAL),
            60,
            "the receiver spooling everything",
        )
        time.sleep(0.5)
    finally:
        query.stop()
    (spool,) = (tmp_path / "wal").glob("*/0/spool")
    if where == "pending segment":
        target = sorted(spool.glob("*.arrow"))[-1]  # the last rows received: no batch took them yet
        first = int(target.name.split("-")[0])
        _flip(target, (BASE + first + 1).to_bytes(8, "little", signed=True))
    else:
        target = sorted(spool.parent.glob("0*.arrow"))[-1]  # the record the next round starts from
        data = target.read_bytes()
        at = data.index(b'"log_to":') + len(b'"log_to":')
        digit = data[at : at + 1]
        target.write_bytes(data[:at] + (b"1" if digit != b"1" else b"2") + data[at + 1 :])  # still valid JSON

    query = _query(spark, source, tmp_path, available_now=True)
    with pytest.raises(StreamingQueryException) as caught:
        query.awaitTermination(300)
    message = str(caught.value)
    assert str(target) in message and "CRC32C" in message and "processor 0" in message, message
    delivered = sorted(r.n - BASE for r in spark.read.parquet(str(tmp_path / "out")).collect())
    assert delivered == list(range(len(delivered))), "rows other than those received were delivered"
