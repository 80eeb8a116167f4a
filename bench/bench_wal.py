"""Files a slow stream that cannot replay writes to its write-ahead log, per processor and second.

A builder stream without snapshot functions (as a socket or a broker is) gives ``--rate`` items a
second, paced by the clock, for ``--seconds``; one processor, Spark's default trigger, ``noop``
sink. Its receiver seals what it gathered into spool segments (files) after lingering
``spool_linger_ms`` (:class:`jetconnect._builders._receiver.Sealing`), and every round writes a
record. The spool is kept whole (``spool_keep_committed_rows``), so the segments are counted by
listing it at the end; rounds are counted from Spark's last offset. Lease renewals (2 a second)
and the query beacon (1 a second) rewrite fixed files and are not counted.

Cases: the default linger and ``spool_linger_ms=0`` (a segment per fill that brought items,
about what the receiver did before it lingered: ~1.5 items a segment at 1,000 items a second),
with ``wal_location`` on local disk and, with ``--hdfs``, on the HDFS of scripts/servers/hdfs.sh
(WebHDFS). The bound stated in docs/ARCHITECTURE.md: at most ``1 / linger + rate / 100,000``
segments a second, 5 a second at this rate.

Also the cost of the checksums: CRC32C of a 1,000,000-row spool (three columns), against writing
and reading it.

    python bench/bench_wal.py --seconds 60 --rate 1000 --hdfs
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import pyarrow as pa
from _harness import Bench, Row, bench_parser, bench_spark

from jetconnect._builders._receiver import DEFAULT_LINGER_MS
from jetconnect._checksums import crc32c
from jetconnect._files.filesystem import LocalFileSystem
from jetconnect._locations import resolve_location
from jetconnect._spool import Spool
from jetconnect.testing import paced_stream

HDFS_URL = "webhdfs://127.0.0.1:9870"


def run_case(spark, rate: int, seconds: float, wal: str, linger_ms: int, checkpoint: Path) -> dict:
    """One case; a query whose reader process did not start in Spark's 10 s (a loaded machine) is retried."""
    for attempt in range(3):
        try:
            return _run_case(spark, rate, seconds, wal, linger_ms, checkpoint / str(attempt))
        except RuntimeError as exc:
            if "failed to connect back" not in str(exc) or attempt == 2:
                raise
            print(f"  the query's reader did not start ({exc}); again")
    raise AssertionError("unreachable")


def _run_case(spark, rate: int, seconds: float, wal: str, linger_ms: int, checkpoint: Path) -> dict:
    options = {
        "wal_location": wal,
        "spool_linger_ms": str(linger_ms),
        "spool_keep_committed_rows": str(10**12),  # nothing trimmed: the segments are counted at the end
    }
    df = paced_stream(rate).read_stream(spark, **options)
    query = df.writeStream.format("noop").option("checkpointLocation", str(checkpoint)).start()
    started = time.monotonic()
    try:
        while time.monotonic() - started < seconds:
            if not query.isActive:
                raise RuntimeError(f"the query died: {query.exception()}")
            time.sleep(0.5)
    finally:
        query.stop()
    elapsed = time.monotonic() - started
    offsets = checkpoint / "offsets"
    if query.exception() is not None:
        raise RuntimeError(f"the query died: {query.exception()}")
    last = max((p for p in offsets.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
    position = json.loads(last.read_text().splitlines()[-1])["0"]
    fs, root = resolve_location(wal, "wal_location")
    spool = Spool(fs, f"{root}/{position['run']}/0/spool")
    segments = len(fs.list_files(spool.directory, "*.arrow"))
    rows = spool.bounds()[1]
    # the receiver ran for as long as it took to receive its rows (the query's start, seconds on a
    # loaded machine, is not part of it): rates are per second of receiving
    receiving = max(1.0, rows / rate)
    return {
        "seconds": round(elapsed, 1),
        "receiving_s": round(receiving, 1),
        "segments": segments,
        "round_records": position["round"],
        "rows_spooled": rows,
        "segments_per_s": round(segments / receiving, 2),
        "files_per_s": round((segments + position["round"]) / receiving, 2),
        "rows_per_segment": round(rows / max(1, segments), 1),
    }


def checksum_cost(rows: int = 1_000_000) -> dict:
    """Seconds to CRC32C, write (with the trailer) and read back (verified) a spool of ``rows`` rows."""
    table = pa.table(
        {
            "n": pa.array(range(rows), pa.int64()),
            "line": pa.array([f"line {i} of the spool" for i in range(rows)], pa.string()),
            "at": pa.array(range(rows), pa.int64()).cast(pa.timestamp("us", tz="UTC")),
        }
    )
    folder = Path(tempfile.mkdtemp(prefix="bench-wal-crc-"))
    try:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        payload = sink.getvalue()
        t = time.perf_counter()
        for _ in range(5):
            crc32c(payload)
        crc_s = (time.perf_counter() - t) / 5
        spool = Spool(LocalFileSystem(), str(folder))
        t = time.perf_counter()
        spool.append(0, table)
        write_s = time.perf_counter() - t
        t = time.perf_counter()
        assert sum(b.num_rows for b in spool.read(0, rows)) == rows
        read_s = time.perf_counter() - t
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {
        "rows": rows,
        "bytes": payload.size,
        "crc_s": round(crc_s, 4),
        "write_s": round(write_s, 4),
        "read_s": round(read_s, 4),
        "crc_gb_per_s": round(payload.size / crc_s / 1e9, 2),
    }


def main() -> None:
    parser = bench_parser(__doc__, repeat=1, warmup=0)
    parser.add_argument("--rate", type=int, default=1000, help="items a second (default 1000)")
    parser.add_argument("--seconds", type=float, default=60, help="how long each case runs (default 60)")
    parser.add_argument("--hdfs", action="store_true", help="also with wal_location on HDFS (scripts/servers/hdfs.sh)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the spool_linger_ms=0 cases")
    args = parser.parse_args()

    cost = checksum_cost()
    print(
        f"CRC32C of a 1M-row spool ({cost['bytes'] / 1e6:.0f} MB): {cost['crc_s'] * 1000:.1f} ms "
        f"({cost['crc_gb_per_s']} GB/s); writing it {cost['write_s'] * 1000:.0f} ms, reading it back "
        f"verified {cost['read_s'] * 1000:.0f} ms"
    )
    spark = bench_spark("bench-wal")
    work = Path(tempfile.mkdtemp(prefix="bench-wal-"))
    locations = [("local", str(work / "wal"))]
    if args.hdfs:
        locations.append(("hdfs", f"{HDFS_URL}/bench-wal/{uuid.uuid4().hex[:8]}?user=root"))
    lingers = [DEFAULT_LINGER_MS] if args.no_baseline else [DEFAULT_LINGER_MS, 0]
    title = f"{args.rate} items/s for {args.seconds:.0f} s, one processor: WAL files written"
    with Bench("wal", args, results=args.results, title=title) as bench:
        bench.add(
            Row(
                "crc32c 1M rows",
                cost["crc_s"],
                cost["write_s"],
                note=f"CRC32C {cost['crc_gb_per_s']} GB/s; theirs = writing the segment (trailer included)",
                extra=cost,
            )
        )
        for where, wal in locations:
            found = {}
            for linger in lingers:
                case = f"{where} linger {linger} ms"
                with bench.measure(case):
                    found[linger] = run_case(spark, args.rate, args.seconds, wal, linger, work / f"ck-{where}-{linger}")
                print(f"  {case}: {found[linger]}")
            ours = found[DEFAULT_LINGER_MS]
            theirs = found.get(0, ours)
            bound = 1000 / DEFAULT_LINGER_MS + args.rate / 100_000
            bench.add(
                Row(
                    f"{where}: segments/s",
                    ours["segments_per_s"],
                    theirs["segments_per_s"],
                    note=(
                        f"ours = segments a second with spool_linger_ms={DEFAULT_LINGER_MS} (bound {bound:.1f}), "
                        f"theirs = with 0; files a second with round records {ours['files_per_s']} vs "
                        f"{theirs['files_per_s']}; rows a segment {ours['rows_per_segment']} vs "
                        f"{theirs['rows_per_segment']} (the columns are counts, not seconds)"
                    ),
                    extra={"linger": ours, "no_linger": theirs, "bound_segments_per_s": bound},
                )
            )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
