"""Crash-test pipeline: HDFS source stream -> HDFS sink, exactly-once.

Usage: hdfs_stream_to_hdfs.py WEBHDFS_URL INPUT_DIR OUTPUT_DIR CHECKPOINT FILES_PER_BATCH [--until-done]

Streams until killed; with ``--until-done`` it drains what is there (``availableNow``) and exits.
"""

from __future__ import annotations

import sys

from jetconnect import sinks, sources
from jetconnect.testing import spark_builder


def main() -> None:
    url, input_dir, output_dir, checkpoint, files_per_batch = sys.argv[1:6]
    until_done = "--until-done" in sys.argv
    spark = spark_builder("hdfs-stream-to-hdfs").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    lines = sources.hdfs(url, input_dir, user="root", max_files_per_batch=int(files_per_batch)).read_stream(spark)
    trigger = {"availableNow": True} if until_done else {"processingTime": "0 seconds"}
    sink = sinks.hdfs(url, output_dir, user="root")
    query = sink.write_stream(lines, checkpoint_location=checkpoint, trigger=trigger)
    query.awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main()
