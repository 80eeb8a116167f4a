"""Benchmark: the Avro source and sink, jetconnect vs Spark's own Avro connector (``spark-avro``) vs
plain fastavro, in one process on the same data (#35).

Usage: python bench/bench_avro.py [--records 1000000] [--files 4] [--sink-records 1000000]
                                  [--data /tmp/jetconnect-bench-avro] [--cases source,sink] [--repeat 2]

Source: ``--records`` records (id long, name string, score double, tag nullable string, at
timestamp-micros) in ``--files`` uncompressed container files, generated once under ``--data``,
read whole by ``sources.avro(...)`` as users get it (``batch_reader="auto"``: with spark-avro on
the session it hands the read to Spark's reader, #35), by ``sources.avro(...,
batch_reader="jetconnect")`` (jetconnect's own reader in Python workers), by
``spark.read.format("avro")`` and by ``fastavro.reader`` in this one process; each side computes
the same checksum of every value (count, sums of the numbers, of the CRC-32 of the strings, of the
timestamps' microseconds), and the run stops if any differs.
Sink: one cached DataFrame of ``--sink-records`` rows in 2 partitions written uncompressed by
``sinks.avro(...)`` (the default, handed to Spark's writer, and pinned to ``batch_writer="jetconnect"``), by
``df.write.format("avro")`` and, from the same rows already in Python, by
``fastavro.writer`` (one file per partition); every output is read back and checked against the
DataFrame's checksum.

Spark's Avro jar must match PySpark's version exactly, and Maven Central serves ``spark-avro_2.13``
only up to 4.2.0 while the main venv has PySpark 4.3.0: so every row runs in a child process on
PySpark 4.2.0 (``.venv-spark-oldest``, built by ``bash scripts/setup.sh --spark 4.2.0
.venv-spark-oldest`` when missing; jetconnect's and fastavro's sides too, so the three share one
SparkSession and one machine state), with the jar of ``bench/spark-avro/pom.xml`` (cached in
``~/.cache/jetconnect-spark-avro``) given through ``spark.jars``. Rows go to ``bench/results/avro.json``;
a run of some ``--cases`` keeps the other cases' rows of the file's last run (their note says so).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import subprocess
import tempfile
import uuid
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path

import fastavro
from _harness import Bench, Row, bench_parser, bench_spark, best_of_turns
from _maven import OLDEST_VENV, maven_jars, pom_version, spark_venv_python

ROOT = Path(__file__).resolve().parent.parent
#: Spark's own Avro connector: its pom and where its jar is cached.
NATIVE_POM = ROOT / "bench" / "spark-avro" / "pom.xml"
NATIVE_CACHE = Path.home() / ".cache" / "jetconnect-spark-avro"
PARTITIONS = 2  # local[2]

SCHEMA = {
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
#: The first timestamp, as microseconds since the epoch (2024-01-01T00:00:00Z).
START_MICROS = 1_704_067_200_000_000
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
#: The checksum of every value, as Spark computes it; ``checksum`` computes the same in Python.
#: Scores are multiples of 0.5 far below 2**52, so their sum is exact in any order.
CHECKSUM_SQL = [
    "count(*) AS n",
    "sum(id) AS ids",
    "sum(score) AS scores",
    "sum(crc32(name)) AS names",
    "count(tag) AS tags",
    "sum(crc32(tag)) AS tag_crcs",
    f"sum(unix_micros(at) - {START_MICROS}) AS ats",  # from the first: the sum of epoch micros overflows a long
]
Checksum = tuple[int, int, float, int, int, int, int]


def checksum(records: Iterable[dict]) -> Checksum:
    """``CHECKSUM_SQL`` over Python records (fastavro's or Arrow's: timestamps as aware datetimes)."""
    n = ids = names = tags = tag_crcs = ats = 0
    scores = 0.0
    micro = dt.timedelta(microseconds=1)
    for r in records:
        n += 1
        ids += r["id"]
        scores += r["score"]
        names += zlib.crc32(r["name"].encode())
        if r["tag"] is not None:
            tags += 1
            tag_crcs += zlib.crc32(r["tag"].encode())
        ats += (r["at"] - EPOCH) // micro - START_MICROS
    return n, ids, scores, names, tags, tag_crcs, ats


def spark_checksum(df) -> Checksum:  # type: ignore[no-untyped-def]
    row = df.selectExpr(*CHECKSUM_SQL).collect()[0]
    return (row.n, row.ids or 0, row.scores or 0.0, row.names or 0, row.tags, row.tag_crcs or 0, row.ats or 0)


def make_files(directory: Path, records: int, files: int) -> int:
    """``records`` records in ``files`` uncompressed container files (once); returns their bytes."""
    done = directory / "_complete"
    if not done.exists():
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
        parsed = fastavro.parse_schema(SCHEMA)
        bounds = [records * f // files for f in range(files + 1)]
        for f in range(files):
            rows = (
                {
                    "id": i,
                    "name": f"name-{i}",
                    "score": i * 0.5,
                    "tag": None if i % 3 else f"t{i % 10}",
                    "at": START_MICROS + i,
                }
                for i in range(bounds[f], bounds[f + 1])
            )
            with open(directory / f"events-{f}.avro", "wb") as out:
                fastavro.writer(out, parsed, rows, codec="null", sync_interval=64000)
        done.touch()  # a run cut short regenerates the files
    return sum(p.stat().st_size for p in directory.glob("*.avro"))


def fastavro_checksum(directory: Path) -> Checksum:
    """The plain alternative: fastavro reads every file in this one process."""

    def records() -> Iterable[dict]:
        for path in sorted(directory.glob("*.avro")):
            with open(path, "rb") as f:
                yield from fastavro.reader(f)  # type: ignore[misc]

    return checksum(records())


def timed_turns(fns: list[Callable[[], Checksum]], repeat: int, warmup: int) -> tuple[list[float], list[Checksum]]:
    """``best_of_turns`` of ``fns``, keeping each one's last result (the checksum) for comparison."""
    results: list[Checksum | None] = [None] * len(fns)

    def keep(i: int) -> Callable[[], None]:
        def run() -> None:
            results[i] = fns[i]()

        return run

    seconds = best_of_turns([keep(i) for i in range(len(fns))], repeat, warmup)
    return seconds, [r for r in results if r is not None]


def bench_source(spark, bench: Bench, args, on: str) -> None:  # type: ignore[no-untyped-def]
    from jetconnect import sources

    directory = Path(args.data) / f"source-{args.records}-{args.files}"
    size = make_files(directory, args.records, args.files)
    native, python, raw = (
        f"source: {args.files} files, every value, vs spark.read.format('avro')",
        "source: the same with batch_reader='jetconnect', vs spark.read.format('avro')",
        "source: the same, vs fastavro.reader in 1 process",
    )
    choice = sources.avro(directory=str(directory)).batch_reader_choice(spark)
    if choice.reader != "spark":
        raise RuntimeError(f"{directory}: batch_reader='auto' keeps jetconnect's reader: {choice.reason}")
    with bench.measure(native, python, raw):
        (ours_s, python_s, spark_s, raw_s), sums = timed_turns(
            [
                lambda: spark_checksum(sources.avro(directory=str(directory)).read(spark)),
                lambda: spark_checksum(sources.avro(directory=str(directory), batch_reader="jetconnect").read(spark)),
                lambda: spark_checksum(spark.read.format("avro").load(str(directory))),
                lambda: fastavro_checksum(directory),
            ],
            args.repeat,
            args.warmup,
        )
    if len(set(sums)) != 1 or sums[0][0] != args.records:
        raise RuntimeError(f"{directory}: checksums differ (auto, jetconnect, Spark, fastavro): {sums}")
    extra = {"records": args.records, "files": args.files, "bytes": size, "checksum": list(sums[0])}
    handed = f"{on}; batch_reader='auto' hands the read to Spark's reader ({choice.reason})"
    bench.add(Row(native, ours_s, spark_s, target=1.0, note=handed, extra=extra))
    bench.add(Row(python, python_s, spark_s, note=f"{on}; jetconnect's reader in Python workers", extra=extra))
    bench.add(Row(raw, ours_s, raw_s, note="fastavro decoding and the same checksum in this one process", extra=extra))


def sink_frame(spark, records: int):  # type: ignore[no-untyped-def]
    """The DataFrame the sinks write: the source's columns, cached in ``PARTITIONS`` partitions."""
    from pyspark.sql import functions as F

    df = (
        spark.range(records)
        .select(
            F.col("id"),
            F.concat(F.lit("name-"), F.col("id").cast("string")).alias("name"),
            (F.col("id") * 0.5).alias("score"),
            F.when(F.col("id") % 3 == 0, F.concat(F.lit("t"), (F.col("id") % 10).cast("string"))).alias("tag"),
            F.timestamp_micros(F.col("id") + START_MICROS).alias("at"),
        )
        .repartition(PARTITIONS)
        .cache()
    )
    df.count()
    return df


def bench_sink(spark, bench: Bench, args, on: str) -> None:  # type: ignore[no-untyped-def]
    from jetconnect import sinks
    from jetconnect.avro_schemas import to_avro_schema

    df = sink_frame(spark, args.sink_records)
    expected = spark_checksum(df)
    # The raw side starts from the rows already in Python, one list per partition, as an
    # application holding its records would (collecting them is not timed).
    table = df.toArrow()
    half = table.num_rows // PARTITIONS
    parts = [table.slice(p * half, half if p < PARTITIONS - 1 else None).to_pylist() for p in range(PARTITIONS)]
    parsed = fastavro.parse_schema(to_avro_schema(df.schema))  # the schema jetconnect's sink derives
    root = Path(tempfile.mkdtemp(prefix="sink-", dir=args.data))
    written: dict[str, Path] = {}

    def target(side: str) -> Path:
        written[side] = root / f"{side}-{uuid.uuid4().hex[:8]}"
        return written[side]

    def ours() -> None:
        sinks.avro(directory=str(target("jetconnect")), codec="null").write(df)

    def ours_in_python() -> None:
        sinks.avro(directory=str(target("jetconnect-python")), codec="null", batch_writer="jetconnect").write(df)

    def theirs() -> None:
        df.write.format("avro").option("compression", "uncompressed").save(str(target("spark")))

    def raw() -> None:
        out = target("fastavro")
        out.mkdir()
        for p, records in enumerate(parts):
            with open(out / f"part-{p}.avro", "wb") as f:
                fastavro.writer(f, parsed, records, codec="null", sync_interval=64000)

    native, python, by_hand = (
        "sink: write, vs df.write.format('avro')",
        "sink: the same with batch_writer='jetconnect', vs df.write.format('avro')",
        "sink: the same, vs fastavro.writer in 1 process",
    )
    choice = sinks.avro(directory=str(root / "probe"), codec="null").batch_writer_choice(df)
    if choice.reader != "spark":
        raise RuntimeError(f"batch_writer='auto' keeps jetconnect's writer: {choice.reason}")
    with bench.measure(native, python, by_hand):
        ours_s, python_s, spark_s, raw_s = best_of_turns([ours, ours_in_python, theirs, raw], args.repeat, args.warmup)
    for side, path in written.items():  # the last output of each side, read back by Spark's reader
        got = spark_checksum(spark.read.format("avro").load(str(path)))
        if got != expected:
            raise RuntimeError(f"{side} wrote {path} with checksum {got}, the DataFrame's is {expected}")
    shutil.rmtree(root)
    extra = {"records": args.sink_records, "partitions": PARTITIONS, "checksum": list(expected)}
    handed = f"{on}; batch_writer='auto' hands the write to Spark's writer"
    bench.add(Row(native, ours_s, spark_s, target=1.0, note=handed, extra=extra))
    bench.add(Row(python, python_s, spark_s, note=f"{on}; jetconnect's writer in Python workers", extra=extra))
    bench.add(
        Row(by_hand, ours_s, raw_s, note="fastavro from rows already in Python, one file per partition", extra=extra)
    )
    df.unpersist()


def native_child(args) -> None:  # type: ignore[no-untyped-def]
    """Every row, in this process (PySpark of ``.venv-spark-oldest``): one SparkSession with the jar."""
    import pyspark

    version = pom_version(NATIVE_POM, "spark-avro_2.13")
    if pyspark.__version__ != version:
        raise SystemExit(f"the rows need PySpark {version} (bench/spark-avro/pom.xml), not {pyspark.__version__}")
    jars = maven_jars(NATIVE_POM, NATIVE_CACHE)
    spark = bench_spark("bench-avro", master="local[2]", conf={"spark.jars": ",".join(map(str, jars))})
    on = f"PySpark {version} ({OLDEST_VENV.name}: Maven Central serves spark-avro_2.13 only up to {version})"
    cases = set(args.cases.split(","))
    Path(args.data).mkdir(parents=True, exist_ok=True)
    with Bench("avro-child", args, results=args.results, title=on) as bench:
        if "source" in cases:
            bench_source(spark, bench, args, on)
        if "sink" in cases:
            bench_sink(spark, bench, args, on)
    spark.stop()


def main() -> None:
    parser = bench_parser(__doc__, repeat=2)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--sink-records", type=int, default=1_000_000)
    parser.add_argument("--data", default="/tmp/jetconnect-bench-avro")
    parser.add_argument("--cases", default="source,sink", help="which groups of rows to run")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        native_child(args)
        return
    version = pom_version(NATIVE_POM, "spark-avro_2.13")
    python = spark_venv_python(version)
    title = (
        f"Spark local[2] on PySpark {version}; {args.records:,} records in {args.files} files read, "
        f"{args.sink_records:,} written, uncompressed"
    )
    with Bench("avro", args, results=args.results, title=title) as bench:
        with tempfile.TemporaryDirectory(prefix="bench-avro-") as out:
            forwarded = {"records", "files", "sink_records", "data", "cases", "repeat", "warmup"}
            options = [f"--{k.replace('_', '-')}={v}" for k, v in vars(args).items() if k in forwarded]
            subprocess.run([str(python), __file__, "--child", "--results", out, *options], check=True)
            rows = json.loads((Path(out) / "avro-child.json").read_text())["rows"]
        fields = set(Row.__dataclass_fields__)
        for row in [*rows, *rows_not_run(args)]:
            bench.add(Row(**{k: v for k, v in row.items() if k in fields}))


def rows_not_run(args) -> list[dict]:  # type: ignore[no-untyped-def]
    """The rows of the cases this run leaves out, from the last run's file, their note dated."""
    cases = set(args.cases.split(","))
    path = Path(args.results) / "avro.json"
    if not path.exists():
        return []
    last = json.loads(path.read_text())
    kept = [dict(row) for row in last["rows"] if row["case"].split(":")[0] not in cases]
    for row in kept:
        if "(kept from the run of" not in (row.get("note") or ""):
            row["note"] = f"{row.get('note') or ''} (kept from the run of {last['date_utc']})".strip()
    return kept


if __name__ == "__main__":
    main()
