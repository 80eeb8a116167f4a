"""Crash-test pipeline: a JMS queue -> Spark's parquet sink, until killed.

    python jms_queue_to_parquet.py QUEUE CHECKPOINT OUTPUT [MAX_RECORDS_PER_BATCH]

The consumers' spools live beside the checkpoint (CHECKPOINT + "-wal"), as the docs advise;
``parallelism=2`` is two consumers per executor.
"""

import sys

from jetconnect import sources
from jetconnect.testing import spark_builder

queue, checkpoint, output = sys.argv[1:4]
max_records = int(sys.argv[4]) if len(sys.argv) > 4 else 300

spark = spark_builder("jms-crash").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
df = sources.jms_queue(queue, parallelism=2, wal_location=checkpoint + "-wal").read_stream(
    spark, max_records_per_batch=max_records
)
query = (
    df.select("message_id", "body")
    .writeStream.format("parquet")
    .option("path", output)
    .option("checkpointLocation", checkpoint)
    .trigger(processingTime="200 milliseconds")
    .start()
)
print("started", flush=True)
query.awaitTermination()
