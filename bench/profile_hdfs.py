"""Where the time of an HDFS batch read goes, on both sides: a profile, not a guess (#35).

    python bench/profile_hdfs.py [--seconds 20]

Needs the files of ``python bench/bench_hdfs.py --keep`` (256 MiB of lines in 4 files on the real
HDFS of scripts/servers/hdfs.sh). Prints:

1. the JVM side: Java Flight Recorder's CPU samples of the driver JVM (local mode: it runs the
   tasks too) while ``spark.read.text("hdfs://...").count()`` runs again and again, then while
   ``sources.hdfs(..., batch_reader="jetconnect").count()`` does, each as the share of samples per
   top frame's package (Hadoop's client, Spark's line reader, Arrow, Py4J, ...);
2. the Python side of jetconnect's reader: cProfile of the same splits read in this one process
   (what each Python worker does per split: WebHDFS over HTTP, finding lines, Arrow).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import re
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench_hdfs import DIRECTORY, RPC, URL, USER

#: Java packages, most specific first, named as the README's table names them.
PACKAGES = [
    ("org.apache.hadoop.hdfs", "Hadoop HDFS client (DFSInputStream, checksums)"),
    ("org.apache.hadoop.util.DataChecksum", "Hadoop HDFS client (DFSInputStream, checksums)"),
    ("org.apache.hadoop.util.LineReader", "Hadoop LineReader (finding lines)"),
    ("org.apache.hadoop", "Hadoop, other"),
    ("org.apache.spark.sql.execution.python", "Spark <-> Python worker (Arrow batches in, rows out)"),
    ("org.apache.spark.api.python", "Spark <-> Python worker (Arrow batches in, rows out)"),
    ("org.apache.arrow", "Arrow (JVM)"),
    ("org.apache.spark.sql.execution.datasources", "Spark file scan"),
    ("org.apache.spark", "Spark, other"),
    ("sun.nio", "sockets and files (JDK)"),
    ("java.io", "sockets and files (JDK)"),
    ("sun.security", "JDK, other"),
    ("java.", "JDK, other"),
    ("jdk.", "JDK, other"),
    ("py4j", "Py4J"),
]


def jvm_pid() -> int:
    """The Spark driver JVM started by this Python process."""
    out = subprocess.run(["ps", "-o", "pid=,comm=", "--ppid", str(os.getpid())], capture_output=True, text=True)
    for line in out.stdout.splitlines():
        pid, comm = line.split()
        if comm == "java":
            return int(pid)
    raise RuntimeError("no Spark driver JVM below this process")


def jfr_profile(pid: int, run, seconds: float) -> Counter:  # type: ignore[no-untyped-def]
    """Share of CPU samples per package of the top Java frame while ``run`` repeats ``seconds``."""
    with tempfile.TemporaryDirectory() as tmp:
        recording = Path(tmp) / "profile.jfr"
        subprocess.run(["jcmd", str(pid), "JFR.start", "name=bench", "settings=profile"], capture_output=True)
        deadline = time.monotonic() + seconds
        runs = 0
        while time.monotonic() < deadline:
            run()
            runs += 1
        subprocess.run(
            ["jcmd", str(pid), "JFR.stop", "name=bench", f"filename={recording}"], capture_output=True, check=True
        )
        text = subprocess.run(
            ["jfr", "print", "--events", "jdk.ExecutionSample", str(recording)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    tops = Counter()
    # each event lists its top frame first: "stackTrace = [\n    pkg.Class.method(...) line: N"
    for frames in re.findall(r"stackTrace = \[\n\s+([^\n]+)", text):
        frame = frames.strip()
        label = next((name for prefix, name in PACKAGES if frame.startswith(prefix)), frame.split("(")[0])
        tops[label] += 1
    tops["(runs)"] = runs
    return tops


def show(title: str, tops: Counter, limit: int = 10) -> None:
    runs = tops.pop("(runs)", 0)
    total = sum(tops.values()) or 1
    print(f"\n{title}: {total} CPU samples over {runs} runs")
    for label, n in tops.most_common(limit):
        print(f"  {100 * n / total:5.1f}%  {label}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of each JVM recording")
    args = parser.parse_args()

    from _harness import bench_spark

    from jetconnect import sources

    spark = bench_spark("profile-hdfs")
    native = lambda: spark.read.text(RPC + DIRECTORY).count()  # noqa: E731
    ours = lambda: sources.hdfs(URL, DIRECTORY, user=USER, batch_reader="jetconnect").read(spark).count()  # noqa: E731
    native(), ours()  # warm-up: JIT, Python workers
    pid = jvm_pid()
    show("JVM, spark.read.text(hdfs://).count()", jfr_profile(pid, native, args.seconds))
    show("JVM, sources.hdfs(batch_reader='jetconnect').count()", jfr_profile(pid, ours, args.seconds))
    spark.stop()

    source = sources.hdfs(URL, DIRECTORY, user=USER, batch_reader="jetconnect")
    splits = source.splits()
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.enable()
    rows = sum(batch.num_rows for split in splits for batch in source.read_split(split))
    profile.disable()
    elapsed = time.perf_counter() - started
    print(f"\nPython, jetconnect's splits in one process: {rows:,} lines in {elapsed:.2f} s")
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(12)
    print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:4000])


if __name__ == "__main__":
    main()
