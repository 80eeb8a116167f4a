"""A streaming pipeline for the core crash tests: a builder stream into Spark's parquet sink.

``--mode snapshot``: a deterministic counter per processor with snapshot functions.
``--mode wal``: a destructive "ticket dispenser" (a file that hands out each number once, like a
queue without redelivery), so only the write-ahead log can make a restart exact.
The program stops by itself once every item has been committed to the sink.
"""

from __future__ import annotations

import fcntl
import os

from _pipeline import run

from jetconnect import SourceBuilder
from jetconnect.testing import counter_stream


def dispenser_source(path: str, total: int):
    def fill(state, buf):
        # like a queue: taking is atomic, so a process killed mid-take (an orphaned Python worker
        # gets SIGHUP at any point) hands nothing out twice; the count is replaced, never truncated
        with open(path + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                with open(path) as handle:
                    taken = int(handle.read())
            except FileNotFoundError:
                taken = 0
            upto = min(total, taken + 7)
            if upto > taken:
                scratch = f"{path}.{os.getpid()}"
                with open(scratch, "w") as handle:
                    handle.write(str(upto))
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(scratch, path)
        for n in range(taken, upto):
            buf.add(n)

    return SourceBuilder.stream("dispenser", lambda ctx: None).fill_buffer_fn(fill).schema("n bigint").build()


def options(parser):
    parser.add_argument("--mode", choices=["snapshot", "wal"], required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--total", type=int, required=True)
    parser.add_argument(
        "--work", required=True, help="folder for the dispenser file and the round records (wal_location)"
    )


def start(spark, args, trigger):
    source = (
        counter_stream(args.total)
        if args.mode == "snapshot"
        else dispenser_source(os.path.join(args.work, "dispenser"), args.total)
    )
    df = source.read_stream(spark, wal_location=os.path.join(args.work, "wal"), max_records_per_batch=40)
    # AvailableNow ends once a round of every processor finds nothing more: both sources run dry at `total`
    writer = df.writeStream.format("parquet").option("path", args.out).option("checkpointLocation", args.checkpoint)
    return writer.trigger(**trigger).start()


if __name__ == "__main__":
    run(
        "core-crash-pipeline",
        start,
        "",
        __doc__,
        drain=True,
        options=options,
        conf={"spark.sql.shuffle.partitions": "1"},
    )
