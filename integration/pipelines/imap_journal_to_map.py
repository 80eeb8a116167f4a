"""Crash-test pipeline: a map's event journal -> another map, exactly-once, until killed.

    python imap_journal_to_map.py STORE_URL SOURCE_MAP TARGET_MAP CHECKPOINT MAX_RECORDS [--until-done]

Each journal event sets the target entry to the event's new value (a REMOVED event, whose new
value is null, removes it), so the target ends up equal to the source map. Without
``--until-done`` it streams until killed; with it, it drains what is there and exits.
"""

from __future__ import annotations

from _pipeline import run

from jetconnect import sinks, sources


def start(spark, args, trigger):
    events = sources.map_journal(args.source_map, store=args.store, parallelism=2, full_events=True).read_stream(
        spark, max_records_per_batch=args.max_records
    )
    # Embedded store: the journal keeps every change, so the target's own journal shows whether any
    # was applied twice. On Hazelcast the journal is the members' configuration (no layout options).
    # Small chunks (a task gets ~75 of the 150 records of a batch): a kill can land between two
    # chunks of a task, the case a re-delivered batch must skip exactly (or, on Hazelcast, put again).
    layout = {} if args.store.startswith("hazelcast:") else {"journal_capacity": 10_000_000}
    sink = sinks.map(args.target_map, store=args.store, chunk_rows=40, **layout)
    return sink.write_stream(
        events.selectExpr("key", "new_value AS value"), checkpoint_location=args.checkpoint, trigger=trigger
    )


if __name__ == "__main__":
    run(
        "imap-crash",
        start,
        "store source_map target_map checkpoint max_records:int",
        __doc__,
        interval="300 milliseconds",
    )
