"""An application that logs rows with ``sinks.logger``, for a test to read its console (stderr).

    python logger_console.py TAG CHECKPOINT

A batch write of five rows ``(id, text)``; then a stream of Jet's ``item_stream`` (every item due
at once, 100 a micro-batch) into the logger from CHECKPOINT, stopped after three committed
micro-batches and started again from the checkpoint for three more, with
``spark.sql.pyspark.worker.logging.enabled`` set. Every row is logged at INFO
as ``TAG`` + ``batch| `` / ``run1| `` / ``run2| `` + the row. Prints how many rows of the second
run Spark's collection holds (``collected by Spark: N``).
"""

from __future__ import annotations

import sys
import time

from jetconnect import sinks, sources
from jetconnect.testing import checkpoint_batches, spark_builder


def stream(spark, prefix: str, checkpoint: str) -> None:
    """Log the stream from ``checkpoint`` until three more micro-batches are committed."""
    rows = sources.item_stream(start_ms=0).read_stream(
        spark, max_records_per_batch=100, wal_location=checkpoint + "-wal"
    )
    done = len(checkpoint_batches(checkpoint)) + 3
    query = sinks.logger(prefix=prefix).write_stream(
        rows, checkpoint_location=checkpoint, trigger={"processingTime": "200 milliseconds"}
    )
    deadline = time.monotonic() + 300
    while len(checkpoint_batches(checkpoint)) < done:
        if not query.isActive or time.monotonic() > deadline:
            raise SystemExit(f"the query stopped or took too long: {query.exception()}")
        time.sleep(0.2)
    query.stop()


def main(tag: str, checkpoint: str) -> None:
    spark = spark_builder("logger-console", master="local[1]").getOrCreate()
    sinks.logger(prefix=f"{tag}batch| ").write(
        spark.range(0, 5, numPartitions=1).selectExpr("id", "concat('v', id) AS text")
    )
    stream(spark, f"{tag}run1| ", checkpoint)
    # restarted from the first run's checkpoint, with Spark collecting the workers' logs, which
    # loses a stream's records: the console still shows them
    spark.conf.set("spark.sql.pyspark.worker.logging.enabled", "true")
    stream(spark, f"{tag}run2| ", checkpoint)
    collected = spark.tvf.python_worker_logs().where(f"startswith(msg, '{tag}run2| ')").count()
    print(f"collected by Spark: {collected}", flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
