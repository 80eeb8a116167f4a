"""Crash-test pipeline: file watcher -> files sink, exactly-once.

Usage: files_watcher_to_files.py INPUT OUTPUT CHECKPOINT MAX_RECORDS [--until-done]

Streams until killed; with ``--until-done`` it drains what is there (``availableNow``) and exits.
"""

from __future__ import annotations

import sys

from jetconnect import sinks, sources
from jetconnect.testing import spark_builder


def main() -> None:
    input_dir, output_dir, checkpoint, max_records = sys.argv[1:5]
    until_done = "--until-done" in sys.argv
    spark = spark_builder("files-watcher-to-files").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    lines = sources.file_watcher(directory=input_dir, read_existing=True).read_stream(
        spark, max_records_per_batch=int(max_records)
    )
    trigger = {"availableNow": True} if until_done else {"processingTime": "0 seconds"}
    query = sinks.files(directory=output_dir).write_stream(lines, checkpoint_location=checkpoint, trigger=trigger)
    query.awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main()
