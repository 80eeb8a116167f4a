"""Crash-test pipeline: file watcher -> files sink, exactly-once.

Usage: files_watcher_to_files.py INPUT OUTPUT CHECKPOINT MAX_RECORDS [--until-done]

Streams until killed; with ``--until-done`` it drains what is there (``availableNow``) and exits.
"""

from __future__ import annotations

from _pipeline import run

from jetconnect import sinks, sources


def start(spark, args, trigger):
    lines = sources.file_watcher(directory=args.input, read_existing=True).read_stream(
        spark, max_records_per_batch=args.max_records
    )
    return sinks.files(directory=args.output).write_stream(lines, checkpoint_location=args.checkpoint, trigger=trigger)


if __name__ == "__main__":
    run("files-watcher-to-files", start, "input output checkpoint max_records:int", __doc__)
