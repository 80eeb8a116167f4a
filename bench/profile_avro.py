"""Where the time of an Avro read and write goes, on both sides: CPU by process, and py-spy (#35).

    .venv-spark-oldest/bin/python bench/profile_avro.py [--rounds 3] [--py-spy .venv/bin/py-spy]

Needs the source files of ``bench/bench_avro.py`` (``--data``, 1M records in 4 files by default)
and PySpark 4.2.0 (the version of bench/spark-avro/pom.xml). For each of jetconnect's source,
Spark's Avro source, jetconnect's sink and Spark's Avro sink, run ``--rounds`` times in one
SparkSession, it prints the wall seconds and the CPU seconds spent meanwhile by the driver's JVM
(which runs the tasks in local mode) and by Spark's Python workers, from /proc. With ``--py-spy``
it also samples the Python workers during jetconnect's rounds (``py-spy record --subprocesses``)
and prints the share of samples per function of the connector's hot path.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from _harness import bench_spark
from _maven import maven_jars
from bench_avro import NATIVE_CACHE, NATIVE_POM, sink_frame, spark_checksum

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_by_kind() -> dict[str, float]:
    """CPU seconds used so far by this process's descendants, by kind ('java', 'python')."""
    mine, todo = Counter[str](), [os.getpid()]
    while todo:
        pid = todo.pop()
        for task in os.listdir(f"/proc/{pid}/task") if os.path.isdir(f"/proc/{pid}/task") else []:
            try:
                todo.extend(int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split())
            except OSError:
                continue
        if pid == os.getpid():
            continue
        try:
            exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kind = "java" if exe.startswith("java") else "python" if exe.startswith("python") else "other"
        mine[kind] += (int(fields[11]) + int(fields[12])) / _TICK  # utime + stime
    return dict(mine)


def measure(label: str, fn: Callable[[], object], rounds: int) -> None:
    fn()  # warm-up: Python workers started, page cache and JIT warm
    before, started = cpu_by_kind(), time.perf_counter()
    for _ in range(rounds):
        fn()
    wall = (time.perf_counter() - started) / rounds
    after = cpu_by_kind()
    used = {k: (after.get(k, 0.0) - before.get(k, 0.0)) / rounds for k in ("java", "python")}
    print(f"{label:<42} wall {wall:6.2f} s  JVM cpu {used['java']:6.2f} s  Python workers cpu {used['python']:6.2f} s")


def py_spy(py_spy_bin: str, fn: Callable[[], object], rounds: int) -> None:
    """Sample this process's Python children (Spark's workers) while ``fn`` runs ``rounds`` times."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "profile.txt"
        spy = subprocess.Popen(
            [py_spy_bin, "record", "--subprocesses", "--nonblocking", "--format", "raw", "--rate", "50"]
            + ["-o", str(out), "--pid", str(os.getpid())],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(2)
        for _ in range(rounds):
            fn()
        spy.send_signal(2)  # SIGINT: py-spy writes what it sampled
        spy.wait(60)
        leaves, total = Counter[str](), 0
        for line in out.read_text().splitlines() if out.exists() else []:
            stack, _, count = line.rpartition(" ")
            frames = stack.split(";")
            if not any("jetconnect" in f for f in frames):  # this driver and idle workers
                continue
            total += int(count)
            hot = next((f for f in reversed(frames) if _ours_or_library(f)), frames[-1])
            leaves[hot.split(" (")[0] + " (" + hot.split(" (")[-1].split(":")[0].rsplit("/", 1)[-1]] += int(count)
    print(f"  py-spy, {total} samples of the connector's Python on the workers; innermost known frame:")
    for frame, count in leaves.most_common(12):
        print(f"    {100 * count / max(total, 1):5.1f}%  {frame}")


def _ours_or_library(frame: str) -> bool:
    return any(k in frame for k in ("fastavro", "pyarrow", "jetconnect", "pyspark/sql/worker", "serializers"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="/tmp/jetconnect-bench-avro/source-1000000-4")
    parser.add_argument("--sink-records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--py-spy", default="", help="path of py-spy: also sample jetconnect's workers")
    args = parser.parse_args()
    from jetconnect import sinks, sources

    spark = bench_spark(
        "profile-avro", master="local[2]", conf={"spark.jars": ",".join(map(str, maven_jars(NATIVE_POM, NATIVE_CACHE)))}
    )
    ours = lambda: spark_checksum(sources.avro(directory=args.data).read(spark))  # noqa: E731
    theirs = lambda: spark_checksum(spark.read.format("avro").load(args.data))  # noqa: E731
    measure("source: jetconnect", ours, args.rounds)
    measure("source: spark.read.format('avro')", theirs, args.rounds)
    if args.py_spy:
        py_spy(args.py_spy, ours, args.rounds)
    df = sink_frame(spark, args.sink_records)
    out = Path(tempfile.mkdtemp(prefix="profile-avro-"))

    def our_sink() -> None:
        sinks.avro(directory=str(out / os.urandom(4).hex()), codec="null").write(df)

    def their_sink() -> None:
        df.write.format("avro").option("compression", "uncompressed").save(str(out / os.urandom(4).hex()))

    measure("sink: jetconnect", our_sink, args.rounds)
    measure("sink: df.write.format('avro')", their_sink, args.rounds)
    if args.py_spy:
        py_spy(args.py_spy, our_sink, args.rounds)
    shutil.rmtree(out)
    spark.stop()


if __name__ == "__main__":
    main()
