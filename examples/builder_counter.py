"""A connector in a few lines, batch: a distributed SourceBuilder source of numbers, summed by
Spark, written through a SinkBuilder sink. No server needed.

    .venv/bin/python examples/builder_counter.py [--count N]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from jetconnect import SinkBuilder, SourceBuilder
from jetconnect.testing import spark_builder

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--count", type=int, default=10_000, help="numbers to count (0 .. count-1)")
args = parser.parse_args()
count = args.count
out = Path(tempfile.mkdtemp(prefix="jetconnect-example-"))

spark = spark_builder("example-builder-counter").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")


class Counter:
    def __init__(self, ctx):  # processor i of n counts i, i+n, i+2n, ...
        self.n = ctx.global_processor_index
        self.step = ctx.total_parallelism


def fill(state, buf):  # add what is available now, then return
    for _ in range(1000):
        if state.n >= count:
            buf.close()  # a batch source ends by closing its buffer
            return
        buf.add(state.n)
        state.n += state.step


numbers = SourceBuilder.batch("numbers", Counter).fill_buffer_fn(fill).schema("n bigint").distributed(2).build()
totals = numbers.read(spark).selectExpr("n % 10 AS digit", "n").groupBy("digit").agg({"n": "sum", "*": "count"})

# one JSON line per row, a file per partition
report = (
    SinkBuilder.sink("report", lambda ctx: open(out / f"part-{ctx.partition_id}.jsonl", "w"))
    .receive_fn(lambda f, row: f.write(json.dumps(row.asDict()) + "\n"))
    .destroy_fn(lambda f: f.close())
    .build()
)
report.write(totals)

rows = [json.loads(line) for part in out.glob("*.jsonl") for line in part.read_text().splitlines()]
total, counted = sum(r["sum(n)"] for r in rows), sum(r["count(1)"] for r in rows)
ok = len(rows) == min(10, count) and counted == count and total == count * (count - 1) // 2
print(
    f"builder_counter: {'ok' if ok else 'FAILED'}: {counted} numbers of {count}, sum {total}, "
    f"{len(rows)} digits written to {out}"
)
spark.stop()
sys.exit(0 if ok else 1)
