"""Benchmark: jetconnect's HDFS source vs Spark's own ``hdfs://`` reader and the raw ``hdfs`` client.

    python bench/bench_hdfs.py [--mb 256] [--files 4] [--block-mb 32] [--keep]

Starts the real HDFS (scripts/servers/hdfs.sh, Hadoop 3.5.0), writes the files once, then in one
run and one SparkSession reads them
(1) with ``spark.read.text("hdfs://127.0.0.1:8020/...")`` (Spark's text source on the Hadoop client
PySpark ships: the native alternative, "theirs" of the Spark rows), against ``sources.hdfs(...)``
with its default ``batch_reader="auto"`` (which hands this read to Spark's reader), and with
``batch_reader="jetconnect"`` (WebHDFS ranged reads into Arrow in Python workers); ``count()``
and ``sum(length(value))``, the sides taking turns, best of ``--repeat`` after a warm-up;
(2) with the raw ``hdfs`` client, one sequential stream per file split into lines in Python,
against jetconnect's splits read in one process without Spark and a mapper through Spark.
Prints a table with the ratio, the throughput and the peak memory of the driver and of the Python
workers; the rows also go to ``bench/results/hdfs.json``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from _harness import Bench, Row, bench_parser, bench_spark, best_of, best_of_turns

ROOT = Path(__file__).resolve().parents[1]
URL, USER = "http://127.0.0.1:9870", "root"
RPC = "hdfs://127.0.0.1:8020"  # the NameNode's RPC address, for Spark's own reader
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


def spark_native(spark):  # type: ignore[no-untyped-def]
    """What a PySpark user writes without jetconnect."""
    return spark.read.text(RPC + DIRECTORY)


def jetconnect_source(spark, sources, reader: str = "auto"):  # type: ignore[no-untyped-def]
    return sources.hdfs(URL, DIRECTORY, user=USER, batch_reader=reader).read(spark)


def total_length(df) -> int:  # type: ignore[no-untyped-def]
    """A query that reads every value (``count()`` lets Spark skip decoding them)."""
    from pyspark.sql import functions as F

    return int(df.select(F.sum(F.length("value"))).first()[0])


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
        native = "spark.read.text(hdfs://) count()"
        cases = {
            "auto": "sources.hdfs count() (auto: Spark's reader)",
            "jet": "sources.hdfs count(), batch_reader=jetconnect",
            "auto_len": "sources.hdfs sum(length) (auto: Spark's reader)",
            "jet_len": "sources.hdfs sum(length), batch_reader=jetconnect",
            "alone": "jetconnect splits, no Spark (1 process)",
            "mapper": "sources.hdfs with a mapper (Python per line)",
        }
        with bench.measure(cases["auto"], cases["jet"]):
            native_s, auto_s, jet_s = best_of_turns(
                [
                    lambda: check(spark_native(spark).count()),
                    lambda: check(jetconnect_source(spark, sources).count()),
                    lambda: check(jetconnect_source(spark, sources, "jetconnect").count()),
                ],
                args.repeat,
                args.warmup,
            )
        lengths: dict[str, int] = {}

        def length_of(key: str, df) -> int:  # type: ignore[no-untyped-def]
            lengths[key] = total_length(df)
            return lengths[key]

        with bench.measure(cases["auto_len"], cases["jet_len"]):
            native_len_s, auto_len_s, jet_len_s = best_of_turns(
                [
                    lambda: length_of("native", spark_native(spark)),
                    lambda: length_of("auto", jetconnect_source(spark, sources)),
                    lambda: length_of("jet", jetconnect_source(spark, sources, "jetconnect")),
                ],
                args.repeat,
                args.warmup,
            )
        if len(set(lengths.values())) != 1:
            raise AssertionError(f"the readers disagree on sum(length(value)): {lengths}")
        # one warm-up per side (the raw client's page cache on the datanode, Spark's Python workers)
        with bench.measure(cases["alone"]):
            raw_s = best_of(lambda: check(raw_client(client, paths)), args.repeat, args.warmup)
            alone_s = best_of(lambda: check(jetconnect_splits_without_spark(sources)), args.repeat, args.warmup)
        with bench.measure(cases["mapper"]):
            mapped_s = best_of(lambda: check(jetconnect_source_with_mapper(spark, sources)), args.repeat, args.warmup)

        def speed(seconds: float) -> str:
            return f"{mib / seconds:.0f} MiB/s"

        vs_native = f"theirs: {native}, {native_s:.2f} s ({speed(native_s)})"
        bench.add(Row(cases["auto"], auto_s, native_s, target=1.0, note=f"{speed(auto_s)}; {vs_native}"))
        bench.add(Row(cases["jet"], jet_s, native_s, note=f"{speed(jet_s)}; {vs_native}"))
        vs_native_len = f"theirs: spark.read.text sum(length), {native_len_s:.2f} s"
        bench.add(Row(cases["auto_len"], auto_len_s, native_len_s, target=1.0, note=vs_native_len))
        bench.add(Row(cases["jet_len"], jet_len_s, native_len_s, note=vs_native_len))
        vs_raw = f"theirs: raw hdfs client, {raw_s:.2f} s ({speed(raw_s)})"
        bench.add(Row(cases["alone"], alone_s, raw_s, note=f"{speed(alone_s)}; {vs_raw}"))
        bench.add(Row(cases["mapper"], mapped_s, raw_s, note=f"{speed(mapped_s)}; {vs_raw}"))

    spark.stop()
    if not args.keep:
        client.delete("/jetconnect-bench", recursive=True)
        if not was_running:
            subprocess.run(["bash", script, "stop"], capture_output=True)


if __name__ == "__main__":
    main()
