"""Where the start of a streaming query goes, for any Python stream reader.

Runs the least hand-written stream reader (one offset, one partition, one row) with
``Trigger.AvailableNow`` into Spark's ``noop`` sink a few times, and prints when each of its
methods was called (seconds after ``start()``, and in which process), then times the import of
PySpark's streaming-source runner from ``pyspark.zip`` (what Spark puts first on the path of the
fresh Python process it starts per query) against the same import from site-packages.

    python bench/stream_start.py [--runs 4]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

LOG = Path(tempfile.gettempdir()) / f"jetconnect-stream-start-{os.getpid()}.log"


def mark(what: str) -> None:
    with open(LOG, "a") as handle:
        handle.write(f"{time.time():.3f} {os.getpid()} {what}\n")


class Reader(DataSourceStreamReader):
    def __init__(self) -> None:
        mark("stream reader created")

    def initialOffset(self) -> dict:
        mark("initialOffset")
        return {"n": 0}

    def latestOffset(self, start: dict | None = None, limit: object = None) -> dict:
        mark("latestOffset")
        return {"n": 1}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        mark("partitions")
        return [InputPartition(0)] if end["n"] > start["n"] else []

    def read(self, partition: InputPartition):  # type: ignore[no-untyped-def]
        mark("read (executor task)")
        yield (1,)


class Probe(DataSource):
    @classmethod
    def name(cls) -> str:
        return "stream_start_probe"

    def schema(self) -> str:
        return "n bigint"

    def streamReader(self, schema):  # type: ignore[no-untyped-def]
        return Reader()


def import_seconds(pythonpath: str | None) -> float:
    env = dict(os.environ)
    if pythonpath is None:
        env.pop("PYTHONPATH", None)
    else:
        env["PYTHONPATH"] = pythonpath
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "import pyspark.sql.streaming.python_streaming_source_runner"], env=env, check=True
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=4)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from jetconnect.testing import spark_builder

    spark = spark_builder("stream-start").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(Probe)
    for run in range(args.runs):
        LOG.unlink(missing_ok=True)
        started = time.time()
        query = (
            spark.readStream.format("stream_start_probe")
            .load()
            .writeStream.format("noop")
            .option("checkpointLocation", tempfile.mkdtemp())
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        print(f"run {run + 1}{' (warm-up)' if run == 0 else ''}: query ended after {time.time() - started:.2f} s")
        for line in LOG.read_text().splitlines():
            at, pid, what = line.split(" ", 2)
            print(f"  {float(at) - started:6.2f} s  pid {pid:>7}  {what}")
    LOG.unlink(missing_ok=True)
    spark.stop()

    lib = Path(__import__("pyspark").__file__).parent / "python" / "lib"
    zips = ":".join(str(p) for p in [lib / "pyspark.zip", *lib.glob("py4j-*.zip")])
    print("import of pyspark's streaming-source runner in a fresh Python process, best of 3:")
    print(f"  from pyspark.zip (Spark's worker path): {min(import_seconds(zips) for _ in range(3)):.2f} s")
    print(f"  from site-packages:                     {min(import_seconds(None) for _ in range(3)):.2f} s")


if __name__ == "__main__":
    main()
