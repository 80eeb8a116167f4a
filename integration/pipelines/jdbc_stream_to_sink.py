"""Crash-test pipeline: an incremental JDBC stream copied into a JDBC table, exactly once.

    python jdbc_stream_to_sink.py SOURCE_URL SOURCE_TABLE TARGET_URL TARGET_TABLE CHECKPOINT MAX_RECORDS

Reads SOURCE_TABLE by its increasing ``id`` (at most MAX_RECORDS per micro-batch) and writes every
row to TARGET_TABLE; runs until everything available has been written (Trigger.AvailableNow), so a
restart from the same CHECKPOINT after a SIGKILL finishes the job.
"""

from __future__ import annotations

import sys

from jetconnect import register, sinks, sources
from jetconnect.testing import spark_builder


def main(
    source_url: str, source_table: str, target_url: str, target_table: str, checkpoint: str, max_records: str
) -> None:
    spark = spark_builder("jdbc-crash-pipeline").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    stream = sources.jdbc(source_url, table=source_table, offset_column="id").read_stream(
        spark, max_records_per_batch=int(max_records)
    )
    query = sinks.jdbc(target_url, table=target_table).write_stream(
        stream.repartition(2), checkpoint_location=checkpoint, trigger={"availableNow": True}
    )
    query.awaitTermination()
    if query.exception() is not None:
        raise SystemExit(f"query failed: {query.exception()}")
    print("pipeline finished", flush=True)
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:7])
