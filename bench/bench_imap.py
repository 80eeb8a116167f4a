"""IMap benchmark: puts and journal reads through Spark, next to each store's raw client doing the same work.

    python bench/bench_imap.py [--rows 100000] [--repeat 2] [--warmup 1]
    python bench/bench_imap.py --stores hazelcast --rows 1000000 --repeat 1 --warmup 0

The second form: a Hazelcast cluster (scripts/servers/hazelcast.sh), see ``hazelcast_main``.

On the embedded store (an SQLite file):

* puts: ``sinks.map(...).write(df)`` of N rows (the Spark job included; each put reads the old
  value and appends a journal event, atomically per partition) vs. the raw client writing the
  same N entries *and* one journal event each, the least a map with a journal must write:
  ``executemany`` into an entries table and a journal table in one transaction;
* journal read: ``sources.map_journal(...)`` read as a stream (``availableNow``, into Spark's
  ``noop`` sink) of the N events the puts made, vs. the raw client fetching those N events (an
  SQLite ``SELECT`` of the journal table), which
  neither decodes nor hands them to anyone. Two rows: the whole query, which includes starting
  a streaming query (its driver-side reader process, the checkpoint), and its one micro-batch
  (Spark's ``triggerExecution``), the part that grows with N.

``--without-spark`` times the connector's own part instead, in this process: one sink task's
``write_partition`` of all N rows and the journal source's ``read_range`` of every range
(writes bench/results/imap-without-spark.json).

Every case is timed as the best of ``--repeat`` runs after ``--warmup``, both sides taking turns.
Writes bench/results/imap.json (bench/_harness.py).
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _harness import Bench, Row, bench_parser, bench_spark, best_of_turns

from jetconnect import sinks, sources
from jetconnect_imap import connect

CHUNK = 10_000


class RawSqlite:
    """The same entries and one journal event each, written and read with the bare sqlite3 module."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = NORMAL")
        self.table = ""

    def put(self, rows: int) -> None:
        self.table = f"t{uuid.uuid4().hex[:8]}"
        self.db.execute(f"CREATE TABLE {self.table}_kv (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID")
        self.db.execute(
            f"CREATE TABLE {self.table}_journal (seq INTEGER PRIMARY KEY, type TEXT, key TEXT, "
            "old_value TEXT, new_value TEXT, ts INTEGER)"
        )
        now = int(time.time() * 1000)
        self.db.execute("BEGIN")
        self.db.executemany(f"INSERT INTO {self.table}_kv VALUES (?, ?)", ((str(i), str(i * 2)) for i in range(rows)))
        self.db.executemany(
            f"INSERT INTO {self.table}_journal VALUES (?, 'ADDED', ?, NULL, ?, ?)",
            ((i, str(i), str(i * 2), now) for i in range(rows)),
        )
        self.db.execute("COMMIT")

    def read(self, rows: int) -> None:
        got = self.db.execute(f"SELECT seq, type, key, old_value, new_value, ts FROM {self.table}_journal").fetchall()
        assert len(got) == rows


def drain_to_noop(stream: Any, workdir: Path, rows: int) -> float:
    """Run a streaming DataFrame to its end (AvailableNow) into Spark's noop sink; check that it
    read ``rows`` rows and return the seconds its micro-batches took."""
    query = (
        stream.writeStream.format("noop")
        .trigger(availableNow=True)
        .option("checkpointLocation", str(workdir / f"cp-{uuid.uuid4().hex[:8]}"))
        .start()
    )
    query.awaitTermination()
    progress = [p for p in query.recentProgress if p["numInputRows"]]
    assert sum(p["numInputRows"] for p in progress) == rows, [p["numInputRows"] for p in query.recentProgress]
    return sum(p["durationMs"]["triggerExecution"] for p in progress) / 1000


def through_spark(
    spark, url: str, rows: int, workdir: Path, made: list[str], batch_s: list[float]
) -> tuple[Callable[[], None], Callable[[], None]]:
    """Our put and our journal read of ``rows`` entries; the maps made go to ``made``, each
    read's micro-batch seconds to ``batch_s``."""
    df = spark.range(0, rows, numPartitions=4).selectExpr("id AS key", "id * 2 AS value")

    def put() -> None:
        name = f"bench-{uuid.uuid4().hex[:8]}"
        # Capacity is split evenly over 271 partitions: leave room for uneven ones, keep every event.
        connect(url).map(name, journal_capacity=rows * 10)
        sinks.map(name, store=url).write(df)
        made.append(name)

    def read() -> None:
        stream = sources.map_journal(made[-1], store=url).read_stream(spark)
        batch_s.append(drain_to_noop(stream, workdir, rows))

    return put, read


def without_spark(url: str, rows: int, made: list[str]) -> tuple[Callable[[], None], Callable[[], None]]:
    """The connector's own part, no Spark: one sink task's ``write_partition`` of all ``rows``
    and the journal source's ``read_range`` of every range, in this process."""
    import pyarrow as pa
    from pyspark.sql.types import StructType

    from jetconnect._connector import WriteContext
    from jetconnect_imap.factories import map_journal, map_sink

    batch = pa.RecordBatch.from_pydict({"key": list(range(rows)), "value": [i * 2 for i in range(rows)]})

    def put() -> None:
        name = f"bench-{uuid.uuid4().hex[:8]}"
        connect(url).map(name, journal_capacity=rows * 10)
        ctx = WriteContext(partition_id=0, attempt=0, batch_id=None, query_id=None, schema=StructType())
        map_sink(name, store=url).write_partition(iter([batch]), ctx)
        made.append(name)

    def read() -> None:
        source = map_journal(made[-1], store=url, parallelism=4)
        start = source.initial_offset()
        end = source.latest_offset(start, None)
        assert sum(b.num_rows for r in source.ranges(start, end) for b in source.read_range(r)) == rows

    return put, read


HAZELCAST = "hazelcast://127.0.0.1:5701,127.0.0.1:5702,127.0.0.1:5703/jetconnect"


def hazelcast_main(args) -> None:
    """``--stores hazelcast``: the cluster of scripts/servers/hazelcast.sh, jetconnect through
    Spark (local[2], 2 Spark partitions) next to the raw hazelcast-python-client in this process:

    * ``put_all`` of N long entries (ours: ``sinks.map(...).write(df)``);
    * a whole-map read (raw: ``entry_set()``; ours: ``sources.map`` into Spark's ``noop`` sink),
      and the same against Hazelcast's own SQL engine (``client.sql``: a mapping, then ``SELECT``
      of every entry, run by Jet on the members and streamed to one client);
    * a journal read of the N events the put made (ours: ``sources.map_journal`` as a stream,
      ``availableNow`` into ``noop``, timed whole and its one micro-batch; raw: the Python client
      has no journal API, so the same ``Map.eventJournalRead`` requests through its invocation
      service in this process, with jetconnect's codec (jetconnect_imap.hazelcast.journal.read_ranges),
      every partition's reads in flight at once: the floor of reading and decoding the events).

    Spark's task workers are warmed up first (a 1,000-row write and read), as the raw client is
    connected before its timing starts. Each run writes a fresh ``bench-*`` map (the members give those a large journal) and
    destroys it. Writes bench/results/imap-hazelcast.json."""
    from hazelcast import HazelcastClient
    from hazelcast.config import IntType

    from jetconnect_imap.hazelcast import journal as hz_journal

    rows = args.rows
    # a Python worker started under the shared machine's load may take longer than Spark's 15 s
    spark = bench_spark(
        "bench-imap-hazelcast", master="local[2]", conf={"spark.python.authenticate.socketTimeout": "120s"}
    )
    client = HazelcastClient(
        cluster_name="jetconnect",
        cluster_members=["127.0.0.1:5701", "127.0.0.1:5702", "127.0.0.1:5703"],
        default_int_type=IntType.LONG,
    )
    df = spark.range(0, rows, numPartitions=2).selectExpr("id AS key", "id * 2 AS value")
    entries = {i: i * 2 for i in range(rows)}
    made: list[str] = []
    batch_s: list[float] = []
    workdir = Path(tempfile.mkdtemp(prefix="bench-imap-hz-"))

    def fresh() -> str:
        made.append(f"bench-{uuid.uuid4().hex[:8]}")
        return made[-1]

    def drop_written() -> None:
        """Destroy the maps the puts wrote so far but the last (untimed, between turns)."""
        for name in made[:-1]:
            client.get_map(name).blocking().destroy()
        del made[:-1]

    def ours_put() -> None:
        sinks.map(fresh(), store=HAZELCAST).write(df)

    def raw_put() -> None:
        client.get_map(fresh()).blocking().put_all(entries)

    def ours_read() -> None:
        read = sources.map(made[0], store=HAZELCAST, schema="key long, value long", parallelism=2).read(spark)
        read.write.format("noop").mode("overwrite").save()

    def raw_read() -> None:
        assert len(client.get_map(made[0]).blocking().entry_set()) == rows

    def sql_read() -> None:
        # Hazelcast's own engine (Jet on the members, hazelcast-sql): a mapping, then every row
        # streamed to this client; the rows are turned into Python values as entry_set()'s are
        mapping = made[0].replace('"', '""')
        client.sql.execute(
            f'CREATE OR REPLACE MAPPING "{mapping}" (__key BIGINT, this BIGINT) TYPE IMap '
            "OPTIONS ('keyFormat' = 'bigint', 'valueFormat' = 'bigint')"
        ).result()
        result = client.sql.execute(f'SELECT __key, this FROM "{mapping}"', cursor_buffer_size=65_536).result()
        with result:
            got = sum(1 for row in result if row.get_object_with_index(0) is not None)
        assert got == rows

    def ours_journal() -> None:
        stream = sources.map_journal(
            made[0], store=HAZELCAST, schema="key long, value long", parallelism=2
        ).read_stream(spark)
        batch_s.append(drain_to_noop(stream, workdir, rows))

    def raw_journal() -> None:
        bounds = hz_journal.bounds(client, hz_journal.MAP_JOURNAL, made[0])
        pages = hz_journal.read_ranges(client, hz_journal.MAP_JOURNAL, made[0], dict(enumerate(bounds)))
        assert sum(len(page.events) for page in pages.values()) == rows

    # Spark's task workers start once per application (Python, pyspark, pyarrow, jetconnect and the
    # Hazelcast client imported, the client connected): warm them up as the raw client is connected
    # before its timing starts. Each data source operation's planner processes (lookup, create,
    # plan, commit) still start afresh inside every timed run: that is Spark's, and counted.
    warm = f"bench-warm-{uuid.uuid4().hex[:8]}"
    small = spark.range(0, 1000, numPartitions=2).selectExpr("id AS key", "id * 2 AS value")
    sinks.map(warm, store=HAZELCAST).write(small)
    sources.map(warm, store=HAZELCAST, schema="key long, value long", parallelism=2).read(spark).collect()
    client.get_map(warm).blocking().destroy()

    title = f"{rows:,} entries on a 3-member Hazelcast cluster; Spark local[2], 2 partitions; ratio = raw / ours"
    with Bench("imap-hazelcast", args, results=args.results, title=title) as bench:
        try:
            with bench.measure("hazelcast: put_all"):
                # one written map kept for the reads, the last one; the members' heaps hold two
                # 1M-entry maps with their journals, not one per turn
                ours, raw = best_of_turns([ours_put, raw_put], args.repeat, args.warmup, between=drop_written)
            bench.add(Row("hazelcast: put_all", ours, raw, target=1.0, note="raw: one put_all of a dict, one process"))
            for name in made[1:]:  # the reads read the map jetconnect wrote last
                client.get_map(name).blocking().destroy()
            del made[1:]
            with bench.measure("hazelcast: whole-map read"):
                ours, raw = best_of_turns([ours_read, raw_read], args.repeat, args.warmup)
            bench.add(Row("hazelcast: whole-map read", ours, raw, target=1.0, note="raw: entry_set(); ours: noop sink"))
            with bench.measure("hazelcast: whole-map read vs its SQL engine"):
                ours, sql = best_of_turns([ours_read, sql_read], args.repeat, args.warmup)
            bench.add(
                Row(
                    "hazelcast: whole-map read vs its SQL engine",
                    ours,
                    sql,
                    target=None,  # the issue's targets are against the raw client; this is the members' own bound
                    note="theirs: client.sql SELECT of every entry (Jet on the members), rows iterated in one process",
                )
            )
            journal, micro = "hazelcast: journal read, whole query", "hazelcast: journal read, its micro-batch"
            with bench.measure(journal, micro):
                ours, raw = best_of_turns([ours_journal, raw_journal], args.repeat, args.warmup)
            bench.add(
                Row(
                    journal,
                    ours,
                    raw,
                    target=1.0,
                    note="ours: streaming query start to end (availableNow, noop sink); raw: the client's "
                    "invocations of Map.eventJournalRead (it has no journal API) with our codec, one process",
                )
            )
            bench.add(
                Row(
                    micro,
                    min(batch_s[args.warmup :] or batch_s),
                    raw,
                    target=1.0,
                    note="ours: Spark's triggerExecution of the micro-batch that read the N events",
                )
            )
        finally:
            for name in made:
                client.get_map(name).blocking().destroy()
            client.shutdown()
    spark.stop()


def main() -> None:
    parser = bench_parser(__doc__.split("\n\n")[0], repeat=2)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--stores", default="sqlite", help="sqlite, or hazelcast (its own run and results file)")
    parser.add_argument(
        "--without-spark",
        action="store_true",
        help="time the connector's store path in this process instead (no Spark job or query)",
    )
    args = parser.parse_args()
    if args.stores == "hazelcast":
        hazelcast_main(args)
        return
    rows = args.rows

    spark = None if args.without_spark else bench_spark("bench-imap", master="local[2]")
    title = (
        f"{rows:,} entries, "
        + ("no Spark: one sink task, the source's read_range" if spark is None else "Spark local[2]")
        + "; ratio = raw client seconds / jetconnect seconds"
    )
    name = "imap-without-spark" if spark is None else "imap"
    with tempfile.TemporaryDirectory() as tmp, Bench(name, args, results=args.results, title=title) as bench:
        workdir = Path(tmp)
        for store in args.stores.split(","):
            if store != "sqlite":
                raise SystemExit(f"unknown store {store!r}: sqlite")
            url = f"sqlite:///{workdir}/imap.db"
            raw = RawSqlite(workdir / "raw.db")
            made: list[str] = []
            batch_s: list[float] = []
            if spark is None:
                put, read = without_spark(url, rows, made)
            else:
                put, read = through_spark(spark, url, rows, workdir, made, batch_s)
            puts, journal, micro = (
                f"{store}: puts",
                f"{store}: journal read, whole query",
                f"{store}: journal read, its micro-batch",
            )
            with bench.measure(puts):
                ours_put, raw_put = best_of_turns([put, lambda raw=raw: raw.put(rows)], args.repeat, args.warmup)
            with bench.measure(journal, micro, f"{store}: journal read"):
                ours_read, raw_read = best_of_turns([read, lambda raw=raw: raw.read(rows)], args.repeat, args.warmup)
            for name in made:
                connect(url).map(name).clear()
            target = 0.5
            bench.add(
                Row(
                    puts,
                    ours_put,
                    raw_put,
                    target=target,
                    note="raw: the entries and one journal event each, same data, one client, no Spark",
                )
            )
            if spark is None:
                bench.add(
                    Row(
                        f"{store}: journal read",
                        ours_read,
                        raw_read,
                        target=0.5,
                        note="ours: read_range of every range, Arrow out; raw: fetch only",
                    )
                )
                continue
            bench.add(
                Row(
                    journal,
                    ours_read,
                    raw_read,
                    target=0.5,
                    note="ours: streaming query start to end (availableNow, noop sink); raw: fetch only",
                )
            )
            bench.add(
                Row(
                    micro,
                    min(batch_s[args.warmup :] or batch_s),
                    raw_read,
                    target=0.5,
                    note="ours: Spark's triggerExecution of the micro-batch that read the N events",
                )
            )
    if spark is not None:
        spark.stop()


if __name__ == "__main__":
    main()
