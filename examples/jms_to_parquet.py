"""JMS queue -> parquet, streaming: messages of an ActiveMQ queue (STOMP) into Spark's parquet
sink, exactly-once for what was received (the consumers spool before they acknowledge).

    bash scripts/servers/activemq.sh start
    .venv/bin/python examples/jms_to_parquet.py [--host HOST] [--port PORT]

It sends --messages messages to a new queue, streams them until all arrived, stops, and counts.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid

from jetconnect import sinks, sources
from jetconnect.testing import spark_builder

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--host", default=os.environ.get("JMS_HOST", "127.0.0.1"))
parser.add_argument("--port", type=int, default=int(os.environ.get("JMS_PORT", "61613")))
parser.add_argument("--messages", type=int, default=2_000)
parser.add_argument("--timeout", type=float, default=120, help="seconds to wait for every message")
args = parser.parse_args()
queue, work = f"orders-{uuid.uuid4().hex[:8]}", tempfile.mkdtemp(prefix="jetconnect-example-")

spark = spark_builder("example-jms-to-parquet").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
sinks.jms_queue(queue, host=args.host, port=args.port).write(
    spark.range(args.messages).selectExpr("CAST(id AS STRING) AS body")
)

orders = sources.jms_queue(
    queue,
    host=args.host,
    port=args.port,
    parallelism=2,  # per executor
    wal_location=f"{work}/checkpoint-wal",
)  # beside the checkpoint
query = (
    orders.read_stream(spark)
    .select("message_id", "body")
    .writeStream.format("parquet")
    .option("path", f"{work}/out")
    .option("checkpointLocation", f"{work}/checkpoint")
    .start()
)

# a queue has no end: stream until every message sent has arrived, then stop
deadline = time.monotonic() + args.timeout
while sum(p["numInputRows"] for p in query.recentProgress) < args.messages and time.monotonic() < deadline:
    time.sleep(1)
query.processAllAvailable()
query.stop()

rows = spark.read.parquet(f"{work}/out")
total, distinct = rows.count(), rows.select("body").distinct().count()
ok = total == distinct == args.messages
print(
    f"jms_to_parquet: {'ok' if ok else 'FAILED'}: {total} messages ({distinct} distinct) of "
    f"{args.messages} sent to queue {queue}, in {work}/out"
)
spark.stop()
sys.exit(0 if ok else 1)
