"""Crash-test pipeline: HDFS source stream -> HDFS sink, exactly-once.

Usage: hdfs_stream_to_hdfs.py WEBHDFS_URL INPUT_DIR OUTPUT_DIR CHECKPOINT FILES_PER_BATCH [--until-done]

Streams until killed; with ``--until-done`` it drains what is there (``availableNow``) and exits.
"""

from __future__ import annotations

from _pipeline import run

from jetconnect import sinks, sources


def start(spark, args, trigger):
    source = sources.hdfs(args.url, args.input_dir, user="root", max_files_per_batch=args.files_per_batch)
    sink = sinks.hdfs(args.url, args.output_dir, user="root")
    return sink.write_stream(source.read_stream(spark), checkpoint_location=args.checkpoint, trigger=trigger)


if __name__ == "__main__":
    run("hdfs-stream-to-hdfs", start, "url input_dir output_dir checkpoint files_per_batch:int", __doc__)
