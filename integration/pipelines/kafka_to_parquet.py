"""Crash-test pipeline: Kafka topic → Parquet files (Spark's file sink), exactly-once.

Usage: kafka_to_parquet.py BOOTSTRAP TOPIC OUTPUT CHECKPOINT MAX_RECORDS [--until-done]

Streams until killed; with ``--until-done`` it drains what is there (``availableNow``) and exits.
"""

from __future__ import annotations

import sys

from jetconnect import sources
from jetconnect.testing import spark_builder


def main() -> None:
    bootstrap, topic, output, checkpoint, max_records = sys.argv[1:6]
    until_done = "--until-done" in sys.argv
    spark = spark_builder("kafka-to-parquet").config("spark.ui.showConsoleProgress", "false").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    source = sources.kafka(bootstrap_servers=bootstrap, topics=[topic], value_format="string")
    stream = source.read_stream(spark, max_records_per_batch=int(max_records))
    writer = (
        stream.select("partition", "offset", "value")
        .writeStream.format("parquet")
        .option("path", output)
        .option("checkpointLocation", checkpoint)
    )
    writer = writer.trigger(availableNow=True) if until_done else writer.trigger(processingTime="0 seconds")
    writer.start().awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main()
