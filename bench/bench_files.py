"""Benchmark: the files source vs ``spark.read.text`` (its default reader, which hands plain lines to
Spark's, and ``batch_reader="jetconnect"``), the Avro source vs plain fastavro, and
what Jet's ``to_string_fn`` costs the files sink against its columnar path.

Usage: python bench/bench_files.py [--gb 1.0] [--avro-records 1000000] [--sink-rows 2000000] [--data /tmp/jetconnect-bench-files] [--repeat 2]

Generates the data once under ``--data`` (about ``--gb`` GB of lines, an Avro file), then times each
pair in one run on one SparkSession and prints a table. ``ratio`` is the native time divided by
jetconnect's: 1.0 means as fast, above 1 faster. Each timing is the best of ``--repeat`` runs after
a warm-up, so the page cache is equally warm for both sides. The rows (with the peak memory of the
driver and of the Python workers per case) also go to ``bench/results/files.json``.
"""

from __future__ import annotations

from pathlib import Path

import fastavro
from _harness import Bench, Row, bench_parser, bench_spark, best_of
from bench_avro import make_files  # the same 1M records bench_avro times against spark-avro

from jetconnect import sinks, sources

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


def fastavro_read(directory: Path) -> int:
    """The plain alternative: fastavro reading every record in this one process."""
    total = 0
    for path in sorted(directory.glob("*.avro")):
        with open(path, "rb") as f:
            for record in fastavro.reader(f):
                total += record["id"]
    return total


def main() -> None:
    parser = bench_parser(__doc__, repeat=2)
    parser.add_argument("--gb", type=float, default=1.0)
    parser.add_argument("--avro-records", type=int, default=1_000_000)
    parser.add_argument("--data", default="/tmp/jetconnect-bench-files")
    parser.add_argument("--sink-rows", type=int, default=2_000_000)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    data = Path(args.data)
    lines_dir, avro_dir = data / "lines", data / "avro"
    lines_bytes = make_lines(lines_dir, args.gb)
    avro_bytes = make_files(avro_dir, args.avro_records, files=4)

    spark = bench_spark("bench-files", master=args.master)
    title = (
        f"Spark master {args.master}, {lines_bytes / 1e9:.2f} GB of lines, {args.avro_records:,} Avro records "
        f"({avro_bytes / 1e6:.0f} MB), {args.sink_rows:,} rows to the sink"
    )

    def total_length(df) -> int:  # type: ignore[no-untyped-def]
        return df.selectExpr("sum(length(value)) AS n").collect()[0].n

    def timed(fn) -> tuple[float, object]:  # type: ignore[no-untyped-def]
        """Best of --repeat after --warmup, and what the last run returned (to compare the sides)."""
        result = []
        seconds = best_of(lambda: result.append(fn()), args.repeat, args.warmup)
        return seconds, result[-1]

    with Bench("files", args, results=args.results, title=title) as bench:
        # The files source's default (batch_reader="auto") hands these plain UTF-8 lines to Spark's
        # own text reader (#35); batch_reader="jetconnect" is its Python reader, what "auto" keeps
        # for mappers, file-name columns, other charsets, compressed files and byte order marks.
        def count(df) -> int:  # type: ignore[no-untyped-def]
            return df.count()

        for reader in ("auto", "jetconnect"):
            for measure, what in ((total_length, "sum(length(value))"), (count, "count()")):
                label = "auto: Spark's reader" if reader == "auto" else 'batch_reader="jetconnect"'
                case = f"lines: files source {what} ({label}) vs spark.read.text"
                with bench.measure(case):
                    native_s, native_n = timed(lambda m=measure: m(spark.read.text(str(lines_dir))))
                    ours_s, ours_n = timed(
                        lambda m=measure, r=reader: m(
                            sources.files(directory=str(lines_dir), batch_reader=r).read(spark)
                        )
                    )
                assert native_n == ours_n, (
                    f"files source ({reader}) gave {ours_n} for {what}, spark.read.text {native_n}"
                )
                bench.add(
                    Row(
                        case,
                        ours_s,
                        native_s,
                        target=1.0,  # issues #20 and #35: at least as fast as spark.read.text
                        note=f"{what} of {lines_bytes / 1e9:.2f} GB; batch_reader={reader!r}",
                        extra={"bytes": lines_bytes, "batch_reader": reader},
                    )
                )

        case = "avro: avro source vs fastavro.reader"
        with bench.measure(case):
            raw_s, raw_n = timed(lambda: fastavro_read(avro_dir))
            avro_s, avro_n = timed(
                lambda: sources.avro(directory=str(avro_dir)).read(spark).selectExpr("sum(id) AS n").collect()[0].n
            )
        assert raw_n == avro_n, f"avro source summed {avro_n}, fastavro {raw_n}"
        bench.add(
            Row(
                case,
                avro_s,
                raw_s,
                note=f"sum(id) of {args.avro_records:,} records; fastavro in 1 process",
                extra={"records": args.avro_records, "bytes": avro_bytes},
            )
        )

        # The same lines from Spark's columns (the fast default) and from Jet's to_string_fn per row.
        table = (
            spark.range(args.sink_rows, numPartitions=2).selectExpr("id", "concat('item-', id % 1000) AS name").cache()
        )
        table.count()
        out = data / "sink-out"
        case = "files sink: to_string_fn vs a string column"
        with bench.measure(case):
            columns_s = best_of(
                lambda: sinks.files(directory=str(out), append=False).write(
                    table.selectExpr("concat(id, '|', name) AS value")
                ),
                args.repeat,
                args.warmup,
            )
            columns_lines = sum(1 for p in out.glob("part-*") for _ in p.open())
            function_s = best_of(
                lambda: sinks.files(
                    directory=str(out), to_string_fn=lambda row: f"{row.id}|{row.name}", append=False
                ).write(table),
                args.repeat,
                args.warmup,
            )
        function_lines = sum(1 for p in out.glob("part-*") for _ in p.open())
        assert columns_lines == function_lines == args.sink_rows, (columns_lines, function_lines)
        bench.add(
            Row(
                case,
                function_s,
                columns_s,
                note=f"{args.sink_rows:,} rows; both sides are the files sink",
                extra={"rows": args.sink_rows},
            )
        )
    spark.stop()


if __name__ == "__main__":
    main()
