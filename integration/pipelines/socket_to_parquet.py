"""Crash-test pipeline: lines from a TCP server -> Spark's parquet sink, until killed.

    python socket_to_parquet.py PORT CHECKPOINT OUTPUT

The write-ahead log lives beside the checkpoint (CHECKPOINT + "-wal").
"""

import sys

from jetconnect import sources
from jetconnect.testing import spark_builder

port, checkpoint, output = int(sys.argv[1]), sys.argv[2], sys.argv[3]

spark = spark_builder("socket-crash").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
df = sources.socket("127.0.0.1", port, wal_location=checkpoint + "-wal").read_stream(spark)
query = (
    df.writeStream.format("parquet")
    .option("path", output)
    .option("checkpointLocation", checkpoint)
    .trigger(processingTime="200 milliseconds")
    .start()
)
print("started", flush=True)
query.awaitTermination()
