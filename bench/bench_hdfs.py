"""Benchmark: jetconnect's HDFS source vs the raw ``hdfs`` client reading the same files.

    python bench/bench_hdfs.py [--mb 256] [--files 4] [--block-mb 32] [--keep]

Starts the real HDFS (scripts/servers/hdfs.sh), writes the files once, then in one run reads them
(1) with the raw ``hdfs`` client, one sequential stream per file split into lines in Python, and
(2) through Spark with ``sources.hdfs`` (block-aligned splits read in parallel, Arrow batches),
each timed best of ``--repeat`` runs after a warm-up, and prints a table with the ratio, the
throughput and the peak memory of the driver and of the Python workers; the rows also go to
``bench/results/hdfs.json``. The raw client's time is the "theirs" of every row.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from _harness import Bench, Row, bench_parser, bench_spark, best_of

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


def main() -> None:
    parser = bench_parser(__doc__, repeat=3)
    parser.add_argument("--mb", type=int, default=256)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--block-mb", type=int, default=32)
    parser.add_argument("--keep", action="store_true", help="keep the data and the server for another run")
    args = parser.parse_args()

    script = str(ROOT / "scripts/servers/hdfs.sh")
    was_running = subprocess.run(["bash", script, "status"], capture_output=True).returncode == 0
    started = subprocess.run(["bash", script, "start"], capture_output=True, text=True)
    if started.returncode != 0:
        sys.exit(f"HDFS did not start:\n{started.stdout}{started.stderr}")

    import hdfs

    from jetconnect import sources

    client = hdfs.InsecureClient(URL, user=USER)
    size, lines = ensure_data(client, args.mb, args.files, args.block_mb)
    paths = [f"{DIRECTORY}/{name}" for name in sorted(client.list(DIRECTORY))]

    def check(counted: int) -> int:
        """Every reader must see every line, or its time means nothing."""
        if counted != lines:
            raise AssertionError(f"read {counted:,} lines of {lines:,} in {DIRECTORY}")
        return counted

    spark = bench_spark("bench-hdfs")
    mib = size / (1 << 20)
    title = (
        f"read of {mib:.0f} MiB, {lines:,} lines in {args.files} files, {args.block_mb} MiB blocks, WebHDFS 127.0.0.1"
    )
    with Bench("hdfs", args, results=args.results, title=title) as bench:
        cases = {
            "alone": "jetconnect splits, no Spark (1 process)",
            "source": "sources.hdfs -> Spark count()",
            "mapper": "the same with a mapper (Python per line)",
        }
        # one warm-up per side (the raw client's page cache on the datanode, Spark's Python workers)
        with bench.measure(cases["alone"]):
            raw_s = best_of(lambda: check(raw_client(client, paths)), args.repeat, args.warmup)
            alone_s = best_of(lambda: check(jetconnect_splits_without_spark(sources)), args.repeat, args.warmup)
        with bench.measure(cases["source"]):
            jet_s = best_of(lambda: check(jetconnect_source(spark, sources)), args.repeat, args.warmup)
        with bench.measure(cases["mapper"]):
            mapped_s = best_of(lambda: check(jetconnect_source_with_mapper(spark, sources)), args.repeat, args.warmup)
        note = f"{mib / raw_s:.0f} MiB/s raw"
        bench.add(Row(cases["alone"], alone_s, raw_s, note=f"{mib / alone_s:.0f} MiB/s; {note}"))
        bench.add(Row(cases["source"], jet_s, raw_s, target=0.8, note=f"{mib / jet_s:.0f} MiB/s; {note}"))
        bench.add(Row(cases["mapper"], mapped_s, raw_s, note=f"{mib / mapped_s:.0f} MiB/s; {note}"))

    spark.stop()
    if not args.keep:
        client.delete("/jetconnect-bench", recursive=True)
        if not was_running:
            subprocess.run(["bash", script, "stop"], capture_output=True)


if __name__ == "__main__":
    main()
