"""The Kafka source through the real SparkSession against Apache Kafka (see conftest.py)."""

from __future__ import annotations

import io
import json
import time
import uuid

import fastavro
import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import NewTopic
from pyspark.sql import functions as F

from jetconnect import sources
from jetconnect._retry import RetriesExhausted
from jetconnect_kafka.errors import KafkaOffsetError

pytestmark = pytest.mark.spark


def test_batch_read_of_a_multi_partition_topic_gives_every_record_and_column(spark, kafka) -> None:
    topic = kafka.topic(partitions=3)
    kafka.produce(topic, (f"v{i}" for i in range(90)), partitions=3, headers=[("trace", b"abc")])
    df = sources.kafka(bootstrap_servers=kafka.bootstrap, topics=[topic], value_format="string").read(spark)
    rows = df.collect()
    assert sorted(r.value for r in rows) == sorted(f"v{i}" for i in range(90))
    by_partition = {p: sorted(r.offset for r in rows if r.partition == p) for p in range(3)}
    assert by_partition == {p: list(range(30)) for p in range(3)}
    first = next(r for r in rows if r.partition == 1 and r.offset == 0)
    assert (first.key, first.value, first.topic, first.timestamp_type) == (b"1", "v1", topic, 0)
    assert first.timestamp is not None and [(h.key, h.value) for h in first.headers] == [("trace", b"abc")]


def test_every_record_of_a_batching_producer_is_read_by_a_batch_and_by_a_stream(spark, kafka, available_now) -> None:
    # librdkafka's defaults put these records in a few batches of many, as in any application.
    topic = kafka.topic(partitions=2)
    n = kafka.produce(topic, (f"v{i}" for i in range(2000)), partitions=2)
    assert kafka.ends(topic, [0, 1]) == {0: n // 2, 1: n // 2}
    source = sources.kafka(bootstrap_servers=kafka.bootstrap, topics=[topic], value_format="string")
    expected = sorted(f"v{i}" for i in range(n))
    assert sorted(r.value for r in source.read(spark).select("value").collect()) == expected
    rows, _ = available_now(source.read_stream(spark))
    assert sorted(r.value for r in rows) == expected


def test_a_batching_producers_100k_records_in_four_partitions_are_read_back_exactly(spark, kafka) -> None:
    # Default linger and batch sizes: thousands of records per batch. count, distinct count, min and
    # max of the integer values together prove the rows are exactly 0..n-1 (the sum checks it again).
    topic = kafka.topic(partitions=4, prefix="100k")
    n = kafka.produce(topic, (str(i) for i in range(100_000)), partitions=4)
    assert sum(kafka.ends(topic, range(4)).values()) == n
    df = sources.kafka(bootstrap_servers=kafka.bootstrap, topics=[topic], value_format="string").read(spark)
    v = F.col("value").cast("long")
    [got] = df.agg(
        F.count("*").alias("rows"),
        F.countDistinct(v).alias("distinct"),
        F.min(v).alias("lo"),
        F.max(v).alias("hi"),
        F.sum(v).alias("total"),
        F.countDistinct("partition", "offset").alias("positions"),
    ).collect()
    assert got.asDict() == {
        "rows": n,
        "distinct": n,
        "lo": 0,
        "hi": n - 1,
        "total": n * (n - 1) // 2,
        "positions": n,
    }


def test_format_name_and_string_options_read_an_explicit_offset_range(spark, kafka) -> None:
    topic = kafka.topic(partitions=2)
    kafka.produce(topic, (str(i) for i in range(40)), partitions=2)
    df = (
        spark.read.format("jetconnect.kafka")
        .option("bootstrap_servers", kafka.bootstrap)
        .option("topics", topic)
        .option("value_format", "string")
        .option("starting_offsets", json.dumps({f"{topic}:0": 5, f"{topic}:1": -2}))
        .option("ending_offsets", json.dumps({topic: {"0": 8, "1": 2}}))
        .load()
    )
    assert sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect()) == (
        [(0, 5), (0, 6), (0, 7), (1, 0), (1, 1)]
    )


def test_stream_admission_control_caps_every_micro_batch(spark, kafka, available_now) -> None:
    topic = kafka.topic(partitions=3)
    kafka.produce(topic, (str(i) for i in range(150)), partitions=3)
    source = sources.kafka(bootstrap_servers=kafka.bootstrap, topics=[topic], value_format="string")
    rows, sizes = available_now(source.read_stream(spark, max_records_per_batch=40))
    assert sizes and max(sizes) <= 40 and sum(sizes) == 150
    assert sorted(int(r.value) for r in rows) == list(range(150))  # nothing lost, nothing twice


@pytest.mark.parametrize("said_by", ["starting_offsets", "a users auto.offset.reset"])
def test_stream_from_latest_sees_only_what_comes_after_the_start(spark, kafka, tmp_path, said_by) -> None:
    topic = kafka.topic(partitions=2)
    kafka.produce(topic, (f"old{i}" for i in range(10)), partitions=2)
    name = f"latest_{uuid.uuid4().hex[:8]}"
    if said_by == "starting_offsets":
        df = sources.kafka(
            bootstrap_servers=kafka.bootstrap, topics=[topic], value_format="string", starting_offsets="latest"
        ).read_stream(spark)
    else:  # a Kafka user's usual way, through Spark's string options
        df = (
            spark.readStream.format("jetconnect.kafka")
            .option("bootstrap_servers", kafka.bootstrap)
            .option("topics", topic)
            .option("value_format", "string")
            .option("kafka.auto.offset.reset", "latest")
            .load()
        )
    query = df.writeStream.format("memory").queryName(name).option("checkpointLocation", str(tmp_path / "ck")).start()
    try:
        query.processAllAvailable()
        kafka.produce(topic, (f"new{i}" for i in range(6)), partitions=2)
        query.processAllAvailable()
    finally:
        query.stop()
    assert sorted(r.value for r in spark.table(name).collect()) == sorted(f"new{i}" for i in range(6))


def test_topics_that_appear_under_a_pattern_are_read_from_their_beginning(spark, kafka, tmp_path) -> None:
    prefix = f"pat-{uuid.uuid4().hex[:6]}"
    first = kafka.topic(partitions=1, prefix=prefix)
    kafka.produce(first, (f"a{i}" for i in range(5)))
    name = f"pattern_{uuid.uuid4().hex[:8]}"
    df = sources.kafka(bootstrap_servers=kafka.bootstrap, pattern=f"{prefix}-.*", value_format="string").read_stream(
        spark
    )
    query = df.writeStream.format("memory").queryName(name).option("checkpointLocation", str(tmp_path / "ck")).start()
    try:
        query.processAllAvailable()
        second = kafka.topic(partitions=2, prefix=prefix)  # new partitions while the query runs
        kafka.produce(second, (f"b{i}" for i in range(8)), partitions=2)
        query.processAllAvailable()
    finally:
        query.stop()
    values = sorted(r.value for r in spark.table(name).collect())
    assert values == sorted([f"a{i}" for i in range(5)] + [f"b{i}" for i in range(8)])


def test_an_undecodable_value_names_topic_partition_and_offset(spark, kafka) -> None:
    topic = kafka.topic(partitions=2)
    kafka.produce(
        topic, [b"ok", b"ok", b"ok", b"ok", b"fine", b"\xff\xfebad"], partitions=2
    )  # bad: partition 1 offset 2
    df = sources.kafka(bootstrap_servers=kafka.bootstrap, topics=[topic], value_format="string").read(spark)
    with pytest.raises(Exception, match=rf"topic '{topic}' partition 1 offset 2.*not UTF-8"):
        df.collect()


AVRO = {
    "type": "record",
    "name": "Order",
    "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"}],
}


def _avro(record: dict, schema: dict) -> bytes:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(schema), record)
    return buffer.getvalue()


def test_avro_values_decode_to_a_struct_and_a_wrong_schema_is_located(spark, kafka) -> None:
    topic = kafka.topic()
    kafka.produce(topic, [_avro({"id": i, "item": f"pen{i}"}, AVRO) for i in range(3)])
    source = sources.kafka(
        bootstrap_servers=kafka.bootstrap, topics=[topic], value_format="avro", avro_schema=json.dumps(AVRO)
    )
    rows = (
        source.read(spark).select("offset", F.col("value.id").alias("id"), F.col("value.item").alias("item")).collect()
    )
    assert sorted((r.offset, r.id, r.item) for r in rows) == [(i, i, f"pen{i}") for i in range(3)]

    wrong = {
        "type": "record",
        "name": "Order",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "price", "type": "double"},
            {"name": "item", "type": "string"},
        ],
    }
    bad = sources.kafka(
        bootstrap_servers=kafka.bootstrap, topics=[topic], value_format="avro", avro_schema=json.dumps(wrong)
    )
    with pytest.raises(Exception, match=rf"topic '{topic}' partition 0 offset 0.*Avro schema"):
        bad.read(spark).collect()


def test_a_recreated_topic_is_an_offset_error_or_a_reset_when_asked(kafka) -> None:
    topic = kafka.topic()
    kafka.produce(topic, (str(i) for i in range(20)))
    checkpointed = {f"{topic}:0": 20}
    source = sources.kafka(bootstrap_servers=kafka.bootstrap, topics=[topic], broker_timeout_s=2)
    [planned] = source.ranges({f"{topic}:0": 0}, checkpointed)  # a batch planned, then the topic goes
    for future in kafka.admin.delete_topics([topic]).values():
        future.result(timeout=30)
    with pytest.raises(KafkaOffsetError, match=rf"{topic}:0 at offset 20.*no longer exists"):
        source.latest_offset(checkpointed, None)
    for future in kafka.admin.create_topics([NewTopic(topic, 1, 1)]).values():  # same name, fewer records
        future.result(timeout=30)
    kafka.produce(topic, ["x", "y", "z"])
    with pytest.raises(KafkaOffsetError, match=rf"{topic}:0 at offset 20, but it holds offsets 0 to 3.*recreated"):
        source.latest_offset(checkpointed, None)
    with pytest.raises(
        KafkaOffsetError,
        match=rf"{topic}:0 offsets 0 to 20: no record after offset 3 for 2 s, "
        r"and the broker now reports high watermark 3, below the planned end 20",
    ):
        list(source.read_range(planned))  # the planned range cannot be filled: said so, not waited on forever
    resetting = sources.kafka(bootstrap_servers=kafka.bootstrap, topics=[topic], on_offset_out_of_range="earliest")
    end = resetting.latest_offset(checkpointed, None)
    [range_] = resetting.ranges(checkpointed, end) or [None]
    assert range_ is not None and end == {f"{topic}:0": 3}
    assert [r["offset"] for b in resetting.read_range(range_) for r in b.to_pylist()] == [0, 1, 2]


def test_an_unreachable_broker_is_retried_then_named(kafka) -> None:
    source = sources.kafka(bootstrap_servers="127.0.0.1:1", topics=["orders"], broker_timeout_s=2)
    with pytest.raises(RetriesExhausted, match=r"bootstrap.servers='127.0.0.1:1'.*listing topics failed"):
        source.initial_offset()


def test_starting_from_a_timestamp_finds_the_first_record_at_or_after_it(kafka) -> None:
    topic = kafka.topic(partitions=2)
    producer = Producer({"bootstrap.servers": kafka.bootstrap})
    base = int(time.time() * 1000) - 60_000  # recent: older records fall to the broker's retention
    for i in range(20):  # partition i % 2 gets timestamps base, base+2000, ... / base+1000, ...
        producer.produce(topic, value=str(i).encode(), partition=i % 2, timestamp=base + i * 1000)
    producer.flush(30)
    source = sources.kafka(bootstrap_servers=kafka.bootstrap, topics=[topic], starting_offsets=str(base + 9500))
    start = source.initial_offset()
    assert start == {f"{topic}:0": 5, f"{topic}:1": 5}  # i = 10 and i = 11
    later = sources.kafka(bootstrap_servers=kafka.bootstrap, topics=[topic], starting_offsets=str(base + 3_600_000))
    assert later.initial_offset() == {f"{topic}:0": 10, f"{topic}:1": 10}  # nothing that late: the end
    [first] = [r for r in source.ranges(start, source.latest_offset(start, 1)) if r.partition.endswith(":0")] or [None]
    values = [row["value"] for batch in source.read_range(first) for row in batch.to_pylist()]
    assert values == [b"10"]


def test_group_id_commits_what_spark_processed_so_lag_tools_see_the_query(spark, kafka, tmp_path) -> None:
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

    topic, group = kafka.topic(partitions=3), f"jc-{uuid.uuid4().hex[:8]}"
    kafka.produce(topic, (f"v{i}" for i in range(300)), partitions=3)
    df = sources.kafka(
        bootstrap_servers=kafka.bootstrap, topics=[topic], group_id=group, max_records_per_batch=100
    ).read_stream(spark)
    query = (
        df.writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(240)
    ends = [json.loads(p["sources"][0]["endOffset"]) for p in query.recentProgress if p["numInputRows"]]
    assert len(ends) == 3 and sum(ends[-1].values()) == 300
    # what `kafka-consumer-groups --describe --group <group>` reads: the group's committed offsets.
    # Spark tells a source that a micro-batch is committed when it plans the next one, so the
    # group shows the end of the last micro-batch but one.
    wanted = [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in range(3)])]
    committed = kafka.admin.list_consumer_group_offsets(wanted)[group].result()
    assert {f"{topic}:{tp.partition}": tp.offset for tp in committed.topic_partitions} == ends[-2]


def test_a_range_read_lends_its_consumer_to_the_next_and_a_failed_or_abandoned_one_closes_it(
    kafka, monkeypatch
) -> None:
    """A Python worker keeps its consumers between range reads (consumers.py): a new one's first request
    could wait 0.7 s for librdkafka's retry timer. A consumer goes back to the pool, unassigned, only
    after a read that ended; a read that failed or was left unfinished closes its consumer."""
    from jetconnect_kafka import config, consumers

    consumers.drop_idle()
    made = []
    new_consumer = config.consumer
    monkeypatch.setattr(config, "consumer", lambda *a, **kw: made.append(1) or new_consumer(*a, **kw))
    topic = kafka.topic(partitions=2)
    kafka.produce(topic, (str(i) for i in range(10)), partitions=2)
    source = sources.kafka(bootstrap_servers=kafka.bootstrap, topics=[topic])
    ranges = source.ranges({f"{topic}:0": 0, f"{topic}:1": 0}, {f"{topic}:0": 5, f"{topic}:1": 5})
    read = [
        (r["partition"], r["offset"], r["value"])
        for range_ in ranges
        for b in source.read_range(range_)
        for r in b.to_pylist()
    ]
    assert read == [(p, o, str(2 * o + p).encode()) for p in (0, 1) for o in range(5)]
    assert len(made) == 1 and consumers.idle_count() == 1  # the second range read the first one's consumer
    [(_, idle)] = consumers._POOL.take_where(lambda lease: True)
    assert idle.consumer.assignment() == []  # an idle consumer fetches nothing
    idle.give_back()

    abandoned = source.read_range(ranges[0])
    next(abandoned)
    abandoned.close()  # the reader stopped early (a limit): what the consumer fetched goes with it
    assert consumers.idle_count() == 0
    with pytest.raises(RuntimeError):
        idle.consumer.assignment()  # closed

    [gone] = source.ranges({f"{topic}:0": 0}, {f"{topic}:0": 5})
    for future in kafka.admin.delete_records([TopicPartition(topic, 0, 3)]).values():
        future.result(timeout=30)
    with pytest.raises(KafkaOffsetError, match=rf"{topic}:0 from offset 0: it holds offsets 3 to 5"):
        list(source.read_range(gone))
    assert consumers.idle_count() == 0  # a failed read's consumer is not lent again
    assert [r["offset"] for b in source.read_range(ranges[1]) for r in b.to_pylist()] == list(range(5))
    assert len(made) == 3 and consumers.idle_count() == 1


def test_a_watermark_query_that_fails_on_the_consumers_own_view_retries_on_a_new_consumer(kafka) -> None:
    """A kept consumer once answered "Unknown partition" for 240 s after a broker restart (the chaos
    soak of 2026-11-27): a retry after such an answer asks a new consumer. Asked for a partition the
    topic lacks, each retry renews; the error names the query; the lease then answers again."""
    from jetconnect.api import Backoff, RetriesExhausted
    from jetconnect_kafka import consumers

    topic = kafka.topic(partitions=1)
    kafka.produce(topic, ["a", "b"], partitions=1)
    lease = consumers.borrow({"bootstrap.servers": kafka.bootstrap})
    first = lease.consumer
    with pytest.raises(RetriesExhausted, match=rf"watermarks of {topic}:5 failed .*Unknown partition"):
        lease.watermarks(topic, 5, f"watermarks of {topic}:5", Backoff(initial=0.05, maximum=0.2, deadline=1.0))
    assert lease.renewals >= 2 and lease.consumer is not first
    with pytest.raises(RuntimeError):
        first.assignment()  # the consumer that failed was closed, not kept
    assert lease.watermarks(topic, 0, "watermarks") == (0, 2)
    lease.close()
