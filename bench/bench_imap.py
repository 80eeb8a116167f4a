"""IMap benchmark: puts/s and journal events/s through Spark, next to each store's raw rate.

    python bench/bench_imap.py [--rows N] [--stores sqlite,redis]

For each store (SQLite file; Redis on 127.0.0.1:6379, started with scripts/servers/redis.sh):

* puts/s: ``sinks.map(...).write(df)`` of N rows (Spark job included) vs. the raw client writing
  the same N key/value pairs (SQLite ``executemany`` in one transaction; a redis-py pipeline of
  ``SET``), which keeps no journal and no partitions;
* journal events/s: ``sources.map_journal(...)`` read as a stream (``availableNow``) of the N
  events the puts made, vs. the raw client reading N rows back (an SQLite ``SELECT``; a
  redis-py pipeline of ``MGET``).

Prints one table; the ratio is jetconnect's rate over the raw rate.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
import uuid
from pathlib import Path

import redis
from jetconnect_imap import connect

from jetconnect import sinks, sources
from jetconnect.testing import shared_spark_session

CHUNK = 10_000


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def raw_sqlite(path: str, rows: int) -> tuple[float, float]:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID")

    def put() -> None:
        db.execute("BEGIN")
        db.executemany("INSERT INTO kv VALUES (?, ?)", ((str(i), str(i * 2)) for i in range(rows)))
        db.execute("COMMIT")

    def read() -> None:
        assert len(db.execute("SELECT key, value FROM kv").fetchall()) == rows

    return timed(put), timed(read)


def raw_redis(url: str, rows: int) -> tuple[float, float]:
    client = redis.Redis.from_url(url)
    prefix = f"bench-raw-{uuid.uuid4().hex[:6]}:"

    def put() -> None:
        for start in range(0, rows, CHUNK):
            pipe = client.pipeline(transaction=False)
            for i in range(start, min(rows, start + CHUNK)):
                pipe.set(f"{prefix}{i}", str(i * 2))
            pipe.execute()

    def read() -> None:
        got = 0
        for start in range(0, rows, CHUNK):
            got += len(client.mget([f"{prefix}{i}" for i in range(start, min(rows, start + CHUNK))]))
        assert got == rows

    times = timed(put), timed(read)
    for start in range(0, rows, CHUNK):
        client.delete(*[f"{prefix}{i}" for i in range(start, min(rows, start + CHUNK))])
    return times


def through_spark(spark, url: str, rows: int, workdir: Path) -> tuple[float, float]:
    name = f"bench-{uuid.uuid4().hex[:6]}"
    # Capacity is split evenly over 271 partitions: leave room for uneven ones, keep every event.
    connect(url).map(name, journal_capacity=rows * 10)
    df = spark.range(0, rows, numPartitions=4).selectExpr("id AS key", "id * 2 AS value")
    put = timed(lambda: sinks.map(name, store=url).write(df))

    def read() -> None:
        stream = sources.map_journal(name, store=url).read_stream(spark)
        query = (stream.writeStream.format("noop").trigger(availableNow=True)
                 .option("checkpointLocation", str(workdir / f"cp-{name}")).start())
        query.awaitTermination()
        assert query.recentProgress and sum(p["numInputRows"] for p in query.recentProgress) == rows

    read_time = timed(read)
    connect(url).map(name).clear()
    return put, read_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--stores", default="sqlite,redis")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    rows = args.rows

    spark = shared_spark_session()
    # Warm up: the first Spark job of a session pays for starting Python workers.
    with tempfile.TemporaryDirectory() as warm:
        through_spark(spark, f"sqlite:///{warm}/warm.db", 1000, Path(warm))

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for store in args.stores.split(","):
            if store == "sqlite":
                url = f"sqlite:///{workdir}/imap.db"
                raw_put, raw_read = raw_sqlite(str(workdir / "raw.db"), rows)
            else:
                url = args.redis
                try:
                    redis.Redis.from_url(url).ping()
                except redis.RedisError as exc:
                    print(f"skipping redis: {exc} (start it with scripts/servers/redis.sh start)", file=sys.stderr)
                    continue
                raw_put, raw_read = raw_redis(url, rows)
            jc_put, jc_read = through_spark(spark, url, rows, workdir)
            results.append((store, "puts/s", rows / jc_put, rows / raw_put))
            results.append((store, "journal events/s", rows / jc_read, rows / raw_read))

    print(f"\nIMap benchmark: {rows:,} entries, {os.cpu_count()} cores, Spark local[2]")
    print(f"{'store':<8} {'measure':<18} {'jetconnect via Spark':>21} {'raw client':>12} {'ratio':>7}")
    for store, measure, jc, raw in results:
        print(f"{store:<8} {measure:<18} {jc:>21,.0f} {raw:>12,.0f} {jc / raw:>7.2f}")
    spark.stop()


if __name__ == "__main__":
    main()
