"""IMap event journal -> another IMap, exactly-once: every change of map "orders" applied to
"orders_copy" by a streaming query. The maps live in an SQLite file (no server).

    .venv/bin/python examples/journal_to_map.py [--store sqlite:////abs/path.db]

It puts --entries entries (and updates some), copies the journal until it is drained
(Trigger.AvailableNow), and compares the two maps.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from jetconnect import sinks, sources
from jetconnect.testing import spark_builder

work = tempfile.mkdtemp(prefix="jetconnect-example-")
parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--store", default=os.environ.get("JETCONNECT_IMAP_STORE", f"sqlite:///{work}/imap.db"))
parser.add_argument("--entries", type=int, default=1_000)
args = parser.parse_args()
url = args.store

spark = spark_builder("example-journal-to-map").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
entries = spark.range(args.entries).selectExpr("CAST(id AS STRING) AS key", "'new' AS value")
sinks.map("orders", store=url).write(entries)
sinks.map("orders", store=url).write(entries.where("key % 10 = 0").selectExpr("key", "'updated' AS value"))

# as Jet: ADDED and UPDATED events as (key, value)
events = sources.map_journal("orders", store=url, start="oldest").read_stream(spark, max_records_per_batch=10_000)
query = sinks.map("orders_copy", store=url).write_stream(
    events, checkpoint_location=f"{work}/checkpoint", trigger={"availableNow": True}
)
query.awaitTermination()

original = {r["key"]: r["value"] for r in sources.map("orders", store=url).read(spark).collect()}
copy = {r["key"]: r["value"] for r in sources.map("orders_copy", store=url).read(spark).collect()}
updated = sum(v == "updated" for v in copy.values())
ok = copy == original and len(copy) == args.entries and updated == len(range(0, args.entries, 10))
print(
    f"journal_to_map: {'ok' if ok else 'FAILED'}: orders_copy has {len(copy)} entries ({updated} updated), "
    f"orders {len(original)}, store {url}"
)
spark.stop()
sys.exit(0 if ok else 1)
