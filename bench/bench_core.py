"""Builder batch source vs a hand-written Arrow DataSource doing the same work vs ``spark.range``.

All three produce the same N longs in the same number of partitions and are consumed by the same
aggregation; the builder and the hand-written source both build Python tuples and convert them
to Arrow, so the ratio measures what the builder machinery costs. Prints rows/s and ratios.

    python bench/bench_core.py --rows 20000000 --partitions 2 --repeat 3
"""

from __future__ import annotations

import argparse
import statistics
import time
from itertools import islice

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from jetconnect import SourceBuilder
from jetconnect.testing import spark_builder

CHUNK = 8192


def row_chunks(start: int, stop: int, step: int):
    """The work both sources do: make the rows, CHUNK at a time, as Python tuples."""
    numbers = iter(range(start, stop, step))
    while chunk := [(n,) for n in islice(numbers, CHUNK)]:
        yield chunk


class HandWrittenReader(DataSourceReader):
    def __init__(self, rows: int, partitions: int) -> None:
        self.rows, self.parts = rows, partitions

    def partitions(self):
        return [InputPartition(i) for i in range(self.parts)]

    def read(self, partition):
        schema = pa.schema([pa.field("n", pa.int64())])
        for rows in row_chunks(partition.value, self.rows, self.parts):
            yield pa.RecordBatch.from_arrays([pa.array([r[0] for r in rows], pa.int64())], schema=schema)


class HandWritten(DataSource):
    @classmethod
    def name(cls):
        return "bench_handwritten"

    def schema(self):
        return "n bigint"

    def reader(self, schema):
        return HandWrittenReader(int(self.options["rows"]), int(self.options["partitions"]))


def builder_source(rows: int, partitions: int):
    def create(ctx):
        return row_chunks(ctx.global_processor_index, rows, ctx.total_parallelism)

    def fill(chunks, buf):
        chunk = next(chunks, None)
        if chunk is None:
            buf.close()
        else:
            buf.add_all(chunk)

    return SourceBuilder.batch("bench", create).fill_buffer_fn(fill).schema("n bigint").distributed(partitions).build()


def timed(df, repeat: int) -> float:
    df.agg({"n": "sum"}).collect()  # warm-up: Python workers, JIT
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        df.agg({"n": "sum"}).collect()
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    spark = spark_builder("bench-core").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(HandWritten)
    candidates = {
        "jetconnect builder source": builder_source(args.rows, args.partitions).read(spark),
        "hand-written Arrow DataSource": spark.read.format("bench_handwritten").option("rows", args.rows).option("partitions", args.partitions).load(),
        "spark.range (native JVM)": spark.range(0, args.rows, numPartitions=args.partitions).withColumnRenamed("id", "n"),
    }
    seconds = {name: timed(df, args.repeat) for name, df in candidates.items()}
    base = seconds["hand-written Arrow DataSource"]
    print(f"\n{args.rows:,} rows, {args.partitions} partitions, median of {args.repeat}")
    print(f"{'reader':<32} {'seconds':>8} {'rows/s':>14} {'vs hand-written':>16}")
    for name, s in seconds.items():
        print(f"{name:<32} {s:>8.2f} {args.rows / s:>14,.0f} {base / s:>15.2f}x")


if __name__ == "__main__":
    main()
