"""Crash-test pipeline: an incremental JDBC stream copied into a JDBC table, exactly once.

    python jdbc_stream_to_sink.py SOURCE_URL SOURCE_TABLE TARGET_URL TARGET_TABLE CHECKPOINT MAX_RECORDS

Reads SOURCE_TABLE by its increasing ``id`` (at most MAX_RECORDS per micro-batch) and writes every
row to TARGET_TABLE; runs until everything available has been written (Trigger.AvailableNow), so a
restart from the same CHECKPOINT after a SIGKILL finishes the job.
"""

from __future__ import annotations

from _pipeline import run

from jetconnect import register, sinks, sources


def start(spark, args, trigger):
    register(spark)
    stream = sources.jdbc(args.source_url, table=args.source_table, offset_column="id").read_stream(
        spark, max_records_per_batch=args.max_records
    )
    return sinks.jdbc(args.target_url, table=args.target_table).write_stream(
        stream.repartition(2), checkpoint_location=args.checkpoint, trigger=trigger
    )


if __name__ == "__main__":
    run(
        "jdbc-crash-pipeline",
        start,
        "source_url source_table target_url target_table checkpoint max_records:int",
        __doc__,
        drain=True,
    )
