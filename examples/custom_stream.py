"""A connector in a few lines, streaming: a SourceBuilder stream with snapshot functions into
parquet, run twice from one checkpoint (the second run restores the snapshots and finds nothing
new: every number exactly once). No server needed.

    .venv/bin/python examples/custom_stream.py [--count N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile

from jetconnect import SourceBuilder
from jetconnect.testing import spark_builder

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--count", type=int, default=10_000, help="numbers the stream holds (0 .. count-1)")
args = parser.parse_args()
COUNT = args.count
work = tempfile.mkdtemp(prefix="jetconnect-example-")

spark = spark_builder("example-custom-stream").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")


class Counter:
    def __init__(self, ctx):  # ctx: global_processor_index, total_parallelism,
        self.n = ctx.global_processor_index  #      local_processor_index, options, logger
        self.step = ctx.total_parallelism


def fill(state, buf):  # add what is available now, then return
    for _ in range(100):
        if state.n >= COUNT:  # nothing more (AvailableNow stops on an empty fill)
            return
        buf.add(state.n)
        state.n += state.step


counter = (
    SourceBuilder.stream("counter", Counter)
    .fill_buffer_fn(fill)
    .schema("n bigint")
    .distributed(2)  # 2 processors per executor
    .create_snapshot_fn(lambda s: s.n)  # position as JSON, stored in Spark's offset log
    .restore_snapshot_fn(lambda s, n: setattr(s, "n", n))
    .build()
)

for _ in range(2):  # the second run resumes from the first one's checkpoint
    df = counter.read_stream(spark, max_records_per_batch=5_000, wal_location=f"{work}/checkpoint-rounds")
    query = (
        df.writeStream.format("parquet")
        .option("path", f"{work}/out")
        .option("checkpointLocation", f"{work}/checkpoint")
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()

rows = spark.read.parquet(f"{work}/out")
total, distinct = rows.count(), rows.distinct().count()
ok = total == distinct == COUNT
print(
    f"custom_stream: {'ok' if ok else 'FAILED'}: {total} rows, {distinct} distinct of {COUNT}, "
    f"after two runs from one checkpoint in {work}"
)
spark.stop()
sys.exit(0 if ok else 1)
