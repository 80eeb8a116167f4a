"""Benchmark: jetconnect's HDFS source vs the raw ``hdfs`` client reading the same files.

    python bench/bench_hdfs.py [--mb 256] [--files 4] [--block-mb 32] [--keep]

Starts the real HDFS (scripts/servers/hdfs.sh), writes the files once, then in one run reads them
(1) with the raw ``hdfs`` client, one sequential stream per file split into lines in Python, and
(2) through Spark with ``sources.hdfs`` (block-aligned splits read in parallel, Arrow batches),
each timed best of ``--repeat`` runs, and prints a table with throughput and the ratio.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
URL, USER = "http://127.0.0.1:9870", "root"
DIRECTORY = "/jetconnect-bench/lines"


def ensure_data(client, mb: int, files: int, block_mb: int) -> tuple[int, int]:
    """Write ``files`` files of lines totalling ``mb`` MiB (once); return (bytes, lines)."""
    per_file = mb * (1 << 20) // files
    line = b"%012d some payload text for the benchmark, 80 bytes or so..........\n"
    total_bytes = total_lines = 0
    for f in range(files):
        path = f"{DIRECTORY}/part-{f:03d}.txt"
        count = per_file // len(line % 0)
        status = client.status(path, strict=False)
        if status is None or status["length"] != count * len(line % 0):
            data = b"".join(line % (f * count + i) for i in range(count))
            client.write(path, data=data, overwrite=True, blocksize=block_mb << 20)
        total_bytes += count * len(line % 0)
        total_lines += count
    return total_bytes, total_lines


def raw_client(client, paths: list[str]) -> int:
    """What a user would write without jetconnect: read each file, split it into lines."""
    lines = 0
    for path in paths:
        with client.read(path) as reader:
            data = reader.read()
        lines += len(data.decode("utf-8").splitlines())
    return lines


def jetconnect_source(spark, sources) -> int:
    return sources.hdfs(URL, DIRECTORY, user=USER).read(spark).count()


def jetconnect_source_with_mapper(spark, sources) -> int:
    """Jet's mapper of (key, value): a Python call per line instead of the columnar lines."""
    return sources.hdfs(URL, DIRECTORY, user=USER, mapper=lambda path, line: (line,)).read(spark).count()


def jetconnect_splits_without_spark(sources) -> int:
    """The connector alone: plan, then read every split into Arrow in this one process."""
    source = sources.hdfs(URL, DIRECTORY, user=USER)
    return sum(batch.num_rows for split in source.splits() for batch in source.read_split(split))


def best_of(repeat: int, fn) -> tuple[float, int]:
    best, result = float("inf"), 0
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=256)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--block-mb", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the data and the server for another run")
    args = parser.parse_args()

    script = str(ROOT / "scripts/servers/hdfs.sh")
    was_running = subprocess.run(["bash", script, "status"], capture_output=True).returncode == 0
    started = subprocess.run(["bash", script, "start"], capture_output=True, text=True)
    if started.returncode != 0:
        sys.exit(f"HDFS did not start:\n{started.stdout}{started.stderr}")

    import hdfs

    import jetconnect
    from jetconnect import sources
    from jetconnect.testing import spark_builder

    client = hdfs.InsecureClient(URL, user=USER)
    size, lines = ensure_data(client, args.mb, args.files, args.block_mb)
    paths = [f"{DIRECTORY}/{name}" for name in sorted(client.list(DIRECTORY))]
    spark = spark_builder("bench-hdfs").config("spark.ui.showConsoleProgress", "false").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    jetconnect.register(spark)
    jetconnect_source(spark, sources)  # warm-up: Python workers, plugin import, first job

    raw_s, raw_lines = best_of(args.repeat, lambda: raw_client(client, paths))
    alone_s, alone_lines = best_of(args.repeat, lambda: jetconnect_splits_without_spark(sources))
    jet_s, jet_lines = best_of(args.repeat, lambda: jetconnect_source(spark, sources))
    mapped_s, mapped_lines = best_of(args.repeat, lambda: jetconnect_source_with_mapper(spark, sources))
    assert raw_lines == alone_lines == jet_lines == mapped_lines == lines, (raw_lines, alone_lines, jet_lines, lines)

    mib = size / (1 << 20)
    print(f"\nHDFS read of {mib:.0f} MiB, {lines:,} lines in {args.files} files, {args.block_mb} MiB blocks, "
          f"{os.cpu_count()} cores (load average {os.getloadavg()[0]:.1f}), best of {args.repeat}")
    print(f"{'reader':<46} {'seconds':>8} {'MiB/s':>8} {'ratio':>6}")
    print(f"{'raw hdfs client (read + split lines)':<46} {raw_s:>8.2f} {mib / raw_s:>8.1f} {1.0:>6.2f}")
    print(f"{'jetconnect splits, no Spark (1 process)':<46} {alone_s:>8.2f} {mib / alone_s:>8.1f} {raw_s / alone_s:>6.2f}")
    print(f"{'jetconnect sources.hdfs -> Spark count()':<46} {jet_s:>8.2f} {mib / jet_s:>8.1f} {raw_s / jet_s:>6.2f}")
    print(f"{'the same with a mapper (Python per line)':<46} {mapped_s:>8.2f} {mib / mapped_s:>8.1f} {raw_s / mapped_s:>6.2f}")
    print("ratio = raw seconds / jetconnect seconds (above 1: jetconnect is faster)")

    spark.stop()
    if not args.keep:
        client.delete("/jetconnect-bench", recursive=True)
        if not was_running:
            subprocess.run(["bash", script, "stop"], capture_output=True)


if __name__ == "__main__":
    main()
