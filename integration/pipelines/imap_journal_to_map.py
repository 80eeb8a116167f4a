"""Crash-test pipeline: a map's event journal -> another map, exactly-once, until killed.

    python imap_journal_to_map.py STORE_URL SOURCE_MAP TARGET_MAP CHECKPOINT MAX_RECORDS [--until-done]

Each journal event sets the target entry to the event's new value (a REMOVED event, whose new
value is null, removes it), so the target ends up equal to the source map. Without
``--until-done`` it streams until killed; with it, it drains what is there and exits.
"""

from __future__ import annotations

import sys

from jetconnect import sinks, sources
from jetconnect.testing import spark_builder

store, source_map, target_map, checkpoint, max_records = sys.argv[1:6]
until_done = "--until-done" in sys.argv

spark = spark_builder("imap-crash").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
events = sources.map_journal(source_map, store=store, parallelism=2, full_events=True).read_stream(
    spark, max_records_per_batch=int(max_records)
)
# The journal keeps every change: the target's own journal then shows whether any was applied twice.
# Small chunks (a task gets ~75 of the 150 records of a batch): a kill can land between two
# chunks of a task, the case a re-delivered batch must skip exactly.
sink = sinks.map(target_map, store=store, journal_capacity=10_000_000, chunk_rows=40)
query = sink.write_stream(
    events.selectExpr("key", "new_value AS value"),
    checkpoint_location=checkpoint,
    trigger={"availableNow": True} if until_done else {"processingTime": "300 milliseconds"},
)
print("started", flush=True)
query.awaitTermination()
