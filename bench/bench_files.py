"""Benchmark: the files source vs ``spark.read.text``, the Avro source vs plain fastavro, and
what Jet's ``to_string_fn`` costs the files sink against its columnar path.

Usage: python bench/bench_files.py [--gb 1.0] [--avro-records 1000000] [--sink-rows 2000000] [--data /tmp/jetconnect-bench-files]

Generates the data once under ``--data`` (about ``--gb`` GB of lines, an Avro file), then times each
pair in one run on one SparkSession and prints a table. ``ratio`` is the native time divided by
jetconnect's: 1.0 means as fast, above 1 faster. Each timing is the best of ``--repeat`` runs after
a warm-up, so the page cache is equally warm for both sides.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import time
from collections.abc import Callable
from pathlib import Path

import fastavro

import jetconnect
from jetconnect import sinks, sources
from jetconnect.testing import spark_builder

LINES_PER_BLOCK = 100_000


def make_lines(directory: Path, gigabytes: float, files: int = 8) -> int:
    """About ``gigabytes`` of varied text lines in ``files`` files; returns the total bytes."""
    directory.mkdir(parents=True, exist_ok=True)
    wanted = int(gigabytes * 1e9)
    existing = sum(p.stat().st_size for p in directory.glob("*.txt"))
    if existing >= wanted:
        return existing
    per_file = wanted // files + 1
    for f in range(files):
        block = "".join(
            f"{f:02d}-{i:07d} the quick brown fox jumps over the lazy dog; line {i * 7919 % 100003} é\n"
            for i in range(LINES_PER_BLOCK)
        ).encode()
        with open(directory / f"lines-{f:02d}.txt", "wb") as out:
            written = 0
            while written < per_file:
                out.write(block)
                written += len(block)
    return sum(p.stat().st_size for p in directory.glob("*.txt"))


AVRO_SCHEMA = {
    "type": "record",
    "name": "Event",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "score", "type": "double"},
        {"name": "tag", "type": ["null", "string"], "default": None},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    ],
}


def make_avro(directory: Path, records: int, files: int = 4) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    if len(list(directory.glob("*.avro"))) == files:
        return sum(p.stat().st_size for p in directory.glob("*.avro"))
    start = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    per_file = records // files
    parsed = fastavro.parse_schema(AVRO_SCHEMA)
    for f in range(files):
        rows = (
            {"id": i, "name": f"name-{i}", "score": i * 0.5, "tag": None if i % 3 else f"t{i % 10}",
             "at": start + dt.timedelta(microseconds=i)}
            for i in range(f * per_file, (f + 1) * per_file)
        )
        with open(directory / f"events-{f}.avro", "wb") as out:
            fastavro.writer(out, parsed, rows, codec="null", sync_interval=64000)
    return sum(p.stat().st_size for p in directory.glob("*.avro"))


def best_of(repeat: int, fn: Callable[[], object]) -> tuple[float, object]:
    fn()  # warm-up: page cache, JIT, Python workers
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return min(times), result


def fastavro_read(directory: Path) -> int:
    """The plain alternative: fastavro reading every record in this one process."""
    total = 0
    for path in sorted(directory.glob("*.avro")):
        with open(path, "rb") as f:
            for record in fastavro.reader(f):
                total += record["id"]
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gb", type=float, default=1.0)
    parser.add_argument("--avro-records", type=int, default=1_000_000)
    parser.add_argument("--data", default="/tmp/jetconnect-bench-files")
    parser.add_argument("--sink-rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    data = Path(args.data)
    lines_dir, avro_dir = data / "lines", data / "avro"
    lines_bytes = make_lines(lines_dir, args.gb)
    avro_bytes = make_avro(avro_dir, args.avro_records)

    spark = spark_builder("bench-files", master=args.master).config("spark.ui.showConsoleProgress", "false").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    jetconnect.register(spark)

    def total_length(df) -> int:
        return df.selectExpr("sum(length(value)) AS n").collect()[0].n

    rows = []
    native_s, native_n = best_of(args.repeat, lambda: total_length(spark.read.text(str(lines_dir))))
    ours_s, ours_n = best_of(args.repeat, lambda: total_length(sources.files(directory=str(lines_dir)).read(spark)))
    assert native_n == ours_n, f"files source read {ours_n} characters, spark.read.text {native_n}"
    rows.append(("lines: sum(length(value))", f"{lines_bytes / 1e9:.2f} GB", "spark.read.text", native_s, ours_s))

    raw_s, raw_n = best_of(args.repeat, lambda: fastavro_read(avro_dir))
    avro_s, avro_n = best_of(
        args.repeat, lambda: sources.avro(directory=str(avro_dir)).read(spark).selectExpr("sum(id) AS n").collect()[0].n
    )
    assert raw_n == avro_n, f"avro source summed {avro_n}, fastavro {raw_n}"
    rows.append(("avro: sum(id)", f"{args.avro_records:,} rec, {avro_bytes / 1e6:.0f} MB", "fastavro.reader (1 process)", raw_s, avro_s))

    # The same lines from Spark's columns (the fast default) and from Jet's to_string_fn per row.
    table = spark.range(args.sink_rows, numPartitions=2).selectExpr("id", "concat('item-', id % 1000) AS name").cache()
    table.count()
    out = data / "sink-out"
    columns_s, _ = best_of(args.repeat, lambda: sinks.files(directory=str(out), append=False).write(
        table.selectExpr("concat(id, '|', name) AS value")))
    columns_lines = sum(1 for p in out.glob("part-*") for _ in p.open())
    function_s, _ = best_of(args.repeat, lambda: sinks.files(
        directory=str(out), to_string_fn=lambda row: f"{row.id}|{row.name}", append=False).write(table))
    function_lines = sum(1 for p in out.glob("part-*") for _ in p.open())
    assert columns_lines == function_lines == args.sink_rows, (columns_lines, function_lines)
    rows.append(("files sink: to_string_fn", f"{args.sink_rows:,} rows", "the same sink, a string column", columns_s, function_s))
    spark.stop()

    print(f"\nmachine: {os.cpu_count()} cores, Spark master {args.master}, best of {args.repeat} after a warm-up")
    header = f"{'workload':<28} {'data':<22} {'native':<28} {'native s':>9} {'jetconnect s':>13} {'ratio':>6}"
    print(header)
    print("-" * len(header))
    for name, size, native, n_s, j_s in rows:
        print(f"{name:<28} {size:<22} {native:<28} {n_s:>9.2f} {j_s:>13.2f} {n_s / j_s:>6.2f}")
    print("ratio = native time / jetconnect time (>= 1: jetconnect as fast or faster)")


if __name__ == "__main__":
    main()
