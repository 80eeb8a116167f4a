"""Crash-test pipeline: Kafka topic → upper-case values → Kafka topic, exactly-once.

Usage: kafka_to_kafka.py BOOTSTRAP IN_TOPIC OUT_TOPIC CHECKPOINT MAX_RECORDS [BROKER_TIMEOUT_S] [--until-done]

Without ``--until-done`` it streams until killed; with it, it drains what is there
(``availableNow``) and exits. ``BROKER_TIMEOUT_S`` (default 30, the connectors' own) is how long
source and sink retry a broker that does not answer: the chaos soak raises it above the time a
SIGKILLed broker takes to come back on a loaded machine (50-70 s at load 30). ``KAFKA_PAUSE=write:N`` or ``commit:N`` (with ``KAFKA_PAUSE_DIR``)
makes it stop dead at a chosen point of batch N and drop a file saying so, for the test to
SIGKILL it there: ``write`` is inside a task's open transaction, ``commit`` is after every task
committed its transaction but before Spark records the batch as done.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from _pipeline import run
from pyspark.sql import functions as F

from jetconnect import sources
from jetconnect_kafka.sink import KafkaSink

PAUSE = os.environ.get("KAFKA_PAUSE", "")
PAUSE_DIR = Path(os.environ.get("KAFKA_PAUSE_DIR", "/tmp"))


def pause_here(point: str, batch_id: int | None) -> None:
    """Stand still (until SIGKILL) when this is the point the test asked for."""
    if PAUSE != f"{point}:{batch_id}":
        return
    (PAUSE_DIR / f"paused-{point}-{batch_id}-{os.getpid()}").touch()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(0.1)


class PausingKafkaSink(KafkaSink):
    """The real sink, with the test's pause points around its own transaction."""

    def write_partition(self, data, ctx):  # type: ignore[no-untyped-def]
        def rows_then_pause():
            for i, batch in enumerate(data):
                yield batch
                if i == 0:
                    pause_here("write", ctx.batch_id)  # rows are in the open transaction

        return super().write_partition(rows_then_pause(), ctx)

    def commit(self, messages, ctx):  # type: ignore[no-untyped-def]
        pause_here("commit", ctx.batch_id)
        super().commit(messages, ctx)


def start(spark, args, trigger):
    source = sources.kafka(
        bootstrap_servers=args.bootstrap,
        topics=[args.in_topic],
        value_format="string",
        broker_timeout_s=args.broker_timeout_s,
    )
    stream = source.read_stream(spark, max_records_per_batch=args.max_records)
    out = stream.select(F.col("key"), F.upper(F.col("value")).alias("value"))
    sink = PausingKafkaSink(
        bootstrap_servers=args.bootstrap,
        topic=args.out_topic,
        value_format="string",
        broker_timeout_s=args.broker_timeout_s,
    )
    return sink.write_stream(out, checkpoint_location=args.checkpoint, trigger=trigger)


if __name__ == "__main__":
    run(
        "kafka-to-kafka",
        start,
        "bootstrap in_topic out_topic checkpoint max_records:int broker_timeout_s:int=30",
        __doc__,
    )
