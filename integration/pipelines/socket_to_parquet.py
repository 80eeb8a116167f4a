"""Crash-test pipeline: lines from a TCP server -> Spark's parquet sink, until killed.

    python socket_to_parquet.py PORT CHECKPOINT OUTPUT

The write-ahead log lives beside the checkpoint (CHECKPOINT + "-wal").
"""

from __future__ import annotations

from _pipeline import run

from jetconnect import sources


def start(spark, args, trigger):
    df = sources.socket("127.0.0.1", args.port, wal_location=args.checkpoint + "-wal").read_stream(spark)
    writer = df.writeStream.format("parquet").option("path", args.output)
    return writer.option("checkpointLocation", args.checkpoint).trigger(**trigger).start()


if __name__ == "__main__":
    run("socket-crash", start, "port:int checkpoint output", __doc__, drain=False, interval="200 milliseconds")
