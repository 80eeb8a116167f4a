"""The core's built-in connectors, no server needed: Jet's test sources (items, item_stream) and
its logger and no-op sinks.

    .venv/bin/python examples/builtins.py

A batch of items is shown and logged (one console line per row); Jet's item_stream, a replayable
timestamped stream, goes into parquet twice from one checkpoint (Trigger.AvailableNow): every
sequence number once; the same kind of stream goes into noop, which reads every row and keeps none.
"""

from __future__ import annotations

import sys
import tempfile
import time

from jetconnect import sinks, sources
from jetconnect.testing import spark_builder

work = tempfile.mkdtemp(prefix="jetconnect-example-")
spark = spark_builder("example-builtins").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")

# a batch of items (Jet's TestSources.items), logged row by row (Jet's Sinks.logger)
orders = sources.items([("o-1", 2), ("o-2", 1), ("o-3", 5)], schema="id string, qty int").read(spark)
orders.show()
sinks.logger(prefix="order ").write(orders)  # console: ... INFO jetconnect.sink.logger: order Row(id='o-1', qty=2)

# an endless stream (Jet's TestSources.itemStream): 100 items a second, from 10 s ago
start_ms = int(time.time() * 1000) - 10_000
for _ in range(2):  # two runs: the second resumes from the first one's checkpoint
    items = sources.item_stream(items_per_second=100, start_ms=start_ms)
    query = (
        items.read_stream(spark, wal_location=f"{work}/checkpoint-wal")
        .writeStream.format("parquet")
        .option("path", f"{work}/out")
        .option("checkpointLocation", f"{work}/checkpoint")
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()  # AvailableNow: what is due now, then the query ends
    time.sleep(1)  # more items come due meanwhile

# noop reads every row and writes nothing: what a source delivers, without a sink's cost
stream = sources.item_stream(items_per_second=1_000, start_ms=start_ms).read_stream(spark, wal_location=f"{work}/n-wal")
query = sinks.noop().write_stream(stream, checkpoint_location=f"{work}/n-checkpoint", trigger={"availableNow": True})
query.awaitTermination()
dropped = sum(p["numInputRows"] for p in query.recentProgress)

seen = sorted(r.sequence for r in spark.read.parquet(f"{work}/out").collect())
ok = orders.count() == 3 and len(seen) >= 1_000 and seen == list(range(len(seen))) and dropped >= 10_000
print(
    f"builtins: {'ok' if ok else 'FAILED'}: 3 items shown and logged; {len(seen)} stream items in two runs, each once; "
    f"{dropped} items into noop"
)
spark.stop()
sys.exit(0 if ok else 1)
