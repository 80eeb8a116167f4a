"""Crash-test pipeline: Kafka topic → Parquet files (Spark's file sink), exactly-once.

Usage: kafka_to_parquet.py BOOTSTRAP TOPIC OUTPUT CHECKPOINT MAX_RECORDS [BROKER_TIMEOUT_S] [--until-done]

Streams until killed; with ``--until-done`` it drains what is there (``availableNow``) and exits.
``BROKER_TIMEOUT_S`` (default 30, the source's own) is how long an unanswering broker is retried:
the chaos soak raises it above the time a SIGKILLed broker takes to come back on a loaded machine.
"""

from __future__ import annotations

from _pipeline import run

from jetconnect import sources


def start(spark, args, trigger):
    source = sources.kafka(
        bootstrap_servers=args.bootstrap,
        topics=[args.topic],
        value_format="string",
        broker_timeout_s=args.broker_timeout_s,
    )
    stream = source.read_stream(spark, max_records_per_batch=args.max_records)
    writer = stream.select("partition", "offset", "value").writeStream.format("parquet").option("path", args.output)
    return writer.option("checkpointLocation", args.checkpoint).trigger(**trigger).start()


if __name__ == "__main__":
    run("kafka-to-parquet", start, "bootstrap topic output checkpoint max_records:int broker_timeout_s:int=30", __doc__)
