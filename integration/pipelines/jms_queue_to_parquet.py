"""Crash-test pipeline: a JMS queue -> Spark's parquet sink, until killed.

    python jms_queue_to_parquet.py QUEUE CHECKPOINT OUTPUT [MAX_RECORDS_PER_BATCH]

The consumers' spools live beside the checkpoint (CHECKPOINT + "-wal"), as the docs advise;
``parallelism=2`` is two consumers per executor.
"""

from __future__ import annotations

from _pipeline import run

from jetconnect import sources


def start(spark, args, trigger):
    df = sources.jms_queue(args.queue, parallelism=2, wal_location=args.checkpoint + "-wal").read_stream(
        spark, max_records_per_batch=args.max_records
    )
    writer = df.select("message_id", "body").writeStream.format("parquet").option("path", args.output)
    return writer.option("checkpointLocation", args.checkpoint).trigger(**trigger).start()


if __name__ == "__main__":
    run(
        "jms-crash",
        start,
        "queue checkpoint output max_records:int=300",
        __doc__,
        drain=False,
        interval="200 milliseconds",
    )
