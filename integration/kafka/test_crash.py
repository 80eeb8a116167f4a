"""SIGKILL the whole driver mid-stream, or the broker, restart from the checkpoint (and the broker from
its log on disk), count: nothing lost, nothing twice.

Each pipeline runs as its own program (integration/pipelines/kafka_*.py) so that the kill takes
the JVM and the Python workers with it, exactly as a crashed driver machine would.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from jetconnect.testing import checkpoint_batches, start_pipeline, wait_until

PIPELINES = Path(__file__).resolve().parent.parent / "pipelines"
START = 300  # s: a SparkSession on a loaded 2-core machine


def _paused(folder: Path, point: str) -> bool:
    return any(folder.glob(f"paused-{point}-*"))


def _kafka_to_kafka(kafka, tmp_path: Path, kills: list[str]) -> None:
    """Run Kafka → Kafka, SIGKILL it at each pause point in turn, drain, count the output."""
    source, target = kafka.topic(partitions=3, prefix="in"), kafka.topic(partitions=2, prefix="out")
    n = kafka.produce(source, (f"r{i}" for i in range(600)), partitions=3)
    checkpoint, log = tmp_path / "checkpoint", tmp_path / "pipeline.log"
    args = [kafka.bootstrap, source, target, str(checkpoint), "60"]
    script = PIPELINES / "kafka_to_kafka.py"

    for point in kills:
        run = start_pipeline(script, args, log, env={"KAFKA_PAUSE": point, "KAFKA_PAUSE_DIR": str(tmp_path)})
        wait_until(lambda: _paused(tmp_path, point.replace(":", "-")), START, f"the pipeline to pause at {point}", run)
        if point.startswith("commit:"):
            assert int(point.split(":")[1]) not in checkpoint_batches(checkpoint, "commits")
        run.kill()
    start_pipeline(script, [*args, "--until-done"], log).wait(START + 120)

    counts = Counter(value.decode() for *_, value in kafka.read_all(target, read_committed=True))
    assert sorted(counts) == sorted(f"R{i}" for i in range(n)), "records lost"
    assert [v for v, c in counts.items() if c > 1] == [], "records written twice"


@pytest.mark.crash
def test_kafka_to_kafka_exactly_once_when_killed_between_kafka_commit_and_spark_commit(kafka, tmp_path) -> None:
    # Killed after batch 2's transactions committed but before Spark recorded batch 2: Spark
    # re-delivers batch 2 with the same id and the sink must skip it.
    _kafka_to_kafka(kafka, tmp_path, ["commit:2"])


@pytest.mark.crash_matrix
def test_kafka_to_kafka_exactly_once_when_killed_inside_open_transactions(kafka, tmp_path) -> None:
    # Killed while batch 1's transactions are open (restart aborts them and writes batch 1 again),
    # then after batch 3's committed; read_committed must not show the aborted records.
    _kafka_to_kafka(kafka, tmp_path, ["write:1", "commit:3"])


@pytest.mark.crash
def test_kafka_to_kafka_exactly_once_when_the_broker_is_killed_inside_open_transactions(kafka, tmp_path) -> None:
    # The broker dies (SIGKILL) while batch 2's transactions hold rows, and comes back from its log
    # on disk; the driver dies too, more input arrives, and the restarted query drains it all.
    source, target = kafka.topic(partitions=3, prefix="in"), kafka.topic(partitions=2, prefix="out")
    n = kafka.produce(source, (f"r{i}" for i in range(600)), partitions=3)
    checkpoint, log = tmp_path / "checkpoint", tmp_path / "pipeline.log"
    args = [kafka.bootstrap, source, target, str(checkpoint), "60"]
    script = PIPELINES / "kafka_to_kafka.py"

    run = start_pipeline(script, args, log, env={"KAFKA_PAUSE": "write:2", "KAFKA_PAUSE_DIR": str(tmp_path)})
    wait_until(lambda: _paused(tmp_path, "write-2"), START, "the pipeline to pause inside batch 2", run)
    kafka.crash_and_restart()
    run.kill()
    assert sum(kafka.ends(source, range(3)).values()) == n, "the broker lost input records in the crash"
    n += kafka.produce(source, (f"r{i}" for i in range(n, n + 300)), partitions=3)
    start_pipeline(script, [*args, "--until-done"], log).wait(START + 120)

    counts = Counter(value.decode() for *_, value in kafka.read_all(target, read_committed=True))
    assert sorted(counts) == sorted(f"R{i}" for i in range(n)), "records lost"
    assert [v for v, c in counts.items() if c > 1] == [], "records written twice"


@pytest.mark.crash
def test_kafka_to_parquet_exactly_once_across_kills_between_and_inside_batches(spark, kafka, tmp_path) -> None:
    topic = kafka.topic(partitions=3)
    n = kafka.produce(topic, (f"r{i}" for i in range(600)), partitions=3)
    checkpoint, output, log = tmp_path / "checkpoint", tmp_path / "out", tmp_path / "pipeline.log"
    args = [kafka.bootstrap, topic, str(output), str(checkpoint), "50"]
    script = PIPELINES / "kafka_to_parquet.py"

    run = start_pipeline(script, args, log)  # killed somewhere after two batches are done
    wait_until(lambda: len(checkpoint_batches(checkpoint, "commits")) >= 2, START, "two committed batches", run)
    run.kill()

    def mid_batch() -> bool:  # planned (offsets/N written) but not committed
        planned, done = checkpoint_batches(checkpoint, "offsets"), checkpoint_batches(checkpoint, "commits")
        return bool(planned) and planned[-1] >= 5 and planned[-1] not in done

    run = start_pipeline(script, args, log)
    wait_until(mid_batch, START, "a batch planned but not committed", run)
    run.kill()

    start_pipeline(script, [*args, "--until-done"], log).wait(START + 120)

    rows = spark.read.parquet(str(output)).select("partition", "offset", "value").collect()
    counts = Counter((r.partition, r.offset) for r in rows)
    assert sorted(r.value for r in rows if counts[(r.partition, r.offset)] == 1) == sorted(f"r{i}" for i in range(n))
    assert [k for k, c in counts.items() if c > 1] == [], "records written twice"
