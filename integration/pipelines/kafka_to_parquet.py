"""Crash-test pipeline: Kafka topic → Parquet files (Spark's file sink), exactly-once.

Usage: kafka_to_parquet.py BOOTSTRAP TOPIC OUTPUT CHECKPOINT MAX_RECORDS [--until-done]

Streams until killed; with ``--until-done`` it drains what is there (``availableNow``) and exits.
"""

from __future__ import annotations

from _pipeline import run

from jetconnect import sources


def start(spark, args, trigger):
    source = sources.kafka(bootstrap_servers=args.bootstrap, topics=[args.topic], value_format="string")
    stream = source.read_stream(spark, max_records_per_batch=args.max_records)
    writer = stream.select("partition", "offset", "value").writeStream.format("parquet").option("path", args.output)
    return writer.option("checkpointLocation", args.checkpoint).trigger(**trigger).start()


if __name__ == "__main__":
    run("kafka-to-parquet", start, "bootstrap topic output checkpoint max_records:int", __doc__)
