"""The Kafka sink through the real SparkSession against Apache Kafka (conftest.py)."""

from __future__ import annotations

import gc
import json
import uuid

import pyarrow as pa
import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StructField, StructType

from jetconnect import sinks, sources
from jetconnect._connector import WriteContext
from jetconnect_kafka.errors import KafkaSinkError

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("delivery", ["exactly-once", "at-least-once"])
def test_batch_write_with_key_partition_and_headers_columns(spark, kafka, delivery) -> None:
    topic = kafka.topic(partitions=3)
    df = spark.range(60).select(
        F.col("id").cast("string").alias("key"),
        F.concat(F.lit("v"), F.col("id").cast("string")).alias("value"),
        (F.col("id") % 3).cast("int").alias("partition"),
        F.array(F.struct(F.lit("n").alias("key"), F.col("id").cast("string").cast("binary").alias("value"))).alias(
            "headers"
        ),
    )
    sinks.kafka(bootstrap_servers=kafka.bootstrap, topic=topic, value_format="string", delivery=delivery).write(df)
    records = kafka.read_all(topic)
    assert sorted(v.decode() for _, _, _, v in records) == sorted(f"v{i}" for i in range(60))
    assert all(int(k) % 3 == p for p, _, k, _ in records)  # the partition column was honoured


def test_json_values_written_without_a_schema_read_back_with_one(spark, kafka) -> None:
    topic = kafka.topic(partitions=2)
    df = spark.range(40).select(
        F.struct(F.col("id"), F.concat(F.lit("n"), F.col("id").cast("string")).alias("name")).alias("value")
    )
    sinks.kafka(bootstrap_servers=kafka.bootstrap, topic=topic, value_format="json").write(df)
    back = sources.kafka(
        bootstrap_servers=kafka.bootstrap, topics=[topic], value_format="json", value_schema="id bigint, name string"
    ).read(spark)
    assert sorted((r.value.id, r.value.name) for r in back.collect()) == [(i, f"n{i}") for i in range(40)]


def test_a_re_delivered_micro_batch_partition_is_written_once(kafka) -> None:
    topic = kafka.topic()
    sink = sinks.kafka(bootstrap_servers=kafka.bootstrap, topic=topic)
    query = f"q-{uuid.uuid4()}"
    rows = pa.RecordBatch.from_pydict({"value": [b"a", b"b"]})

    def deliver(batch_id: int):
        ctx = WriteContext(partition_id=0, attempt=0, batch_id=batch_id, query_id=query, schema=None)
        return sink.write_partition(iter([rows]), ctx)

    assert not deliver(0).skipped
    assert deliver(0).skipped  # Spark re-delivers batch 0 after a crash before its own commit
    assert not deliver(1).skipped
    assert sorted(v for *_, v in kafka.read_all(topic)) == [b"a", b"a", b"b", b"b"]


def test_avro_values_round_trip_through_sink_and_source(spark, kafka) -> None:
    schema = json.dumps(
        {
            "type": "record",
            "name": "Order",
            "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": ["null", "string"]}],
        }
    )
    topic = kafka.topic()
    df = spark.range(5).select(
        F.struct(F.col("id"), F.concat(F.lit("pen"), F.col("id").cast("string")).alias("item")).alias("value")
    )
    sinks.kafka(bootstrap_servers=kafka.bootstrap, topic=topic, value_format="avro", avro_schema=schema).write(df)
    kafka.check_stable(topic)
    back = sources.kafka(
        bootstrap_servers=kafka.bootstrap,
        topics=[topic],
        value_format="avro",
        avro_schema=schema,
        isolation_level="read_committed",
    ).read(spark)
    assert sorted((r.value.id, r.value.item) for r in back.collect()) == [(i, f"pen{i}") for i in range(5)]


def test_a_value_that_does_not_fit_the_avro_schema_names_the_row(kafka) -> None:
    schema = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]})
    sink = sinks.kafka(bootstrap_servers=kafka.bootstrap, topic=kafka.topic(), value_format="avro", avro_schema=schema)
    rows = pa.RecordBatch.from_pydict({"value": [{"id": 1}, {"id": None}]})
    ctx = WriteContext(partition_id=4, attempt=0, batch_id=None, query_id=None, schema=None)
    with pytest.raises(KafkaSinkError, match=r"row 1 of partition 4 as avro"):
        sink.write_partition(iter([rows]), ctx)
    with pytest.raises(Exception, match="needs a 'value' column"):
        sink.check_schema(StructType([StructField("id", LongType())]))


@pytest.mark.parametrize(
    ("delivery", "bad", "refusal"),
    [
        ("at-least-once", {"partition": 7}, r"Unknown partition"),
        ("at-least-once", {"partition": "1"}, r"partition '1'\): TypeError"),
        ("at-least-once", {"headers": [("h", 5)]}, r"TypeError: expected header value"),
        ("exactly-once", {"partition": 7}, r"Unknown partition"),
    ],
)
def test_a_record_fn_record_the_client_refuses_names_the_option_and_the_row(kafka, delivery, bad, refusal) -> None:
    # Issue #32 item 11: librdkafka's words alone named neither record_fn nor the row. A partition
    # the topic lacks is refused at once when the producer knows the topic, else by its delivery
    # report: both name the row.
    topic = kafka.topic(partitions=2)

    def record_fn(row):  # type: ignore[no-untyped-def]
        return {"value": str(row.id), **(bad if row.id == 3 else {})}

    sink = sinks.kafka(bootstrap_servers=kafka.bootstrap, topic=topic, delivery=delivery, record_fn=record_fn)
    rows = pa.RecordBatch.from_pydict({"id": [0, 1, 2, 3, 4]})
    ctx = WriteContext(partition_id=6, attempt=0, batch_id=None, query_id=None, schema=None)
    named = r"kafka sink: the (Kafka client refused the )?record that record_fn made for row 3 of partition 6\b"
    with pytest.raises(KafkaSinkError, match=named + ".*" + refusal):
        sink.write_partition(iter([rows]), ctx)


@pytest.mark.parametrize("delivery", ["exactly-once", "at-least-once"])
def test_jets_record_fn_and_projection_through_spark(spark, kafka, delivery) -> None:
    """The sink makes each record with Jet's toRecordFn; the source reads it back through a
    projection of each record, both with rows of their own schema."""
    from jetconnect_kafka import ProducerRecord

    topic = kafka.topic(partitions=2)
    df = spark.range(0, 500, numPartitions=3).selectExpr("id", "concat('name-', id) AS name")
    sinks.kafka(
        kafka.bootstrap,
        topic=topic,
        delivery=delivery,
        record_fn=lambda row: ProducerRecord(
            value=json.dumps({"id": row.id, "name": row.name}),
            key=str(row.id),
            partition=row.id % 2,
            headers=[("origin", b"jetconnect")],
        ),
    ).write(df)
    read = sources.kafka(
        kafka.bootstrap,
        topics=[topic],
        key_format="string",
        isolation_level="read_committed",
        projection=lambda r: (int(r.key), json.loads(r.value)["name"], r.partition, dict(r.headers)["origin"]),
        schema="id long, name string, partition int, origin binary",
    ).read(spark)
    rows = read.collect()
    assert sorted((r.id, r.name) for r in rows) == [(i, f"name-{i}") for i in range(500)]
    assert all(r.partition == r.id % 2 and r.origin == b"jetconnect" for r in rows)


def test_a_projection_returning_what_the_schema_cannot_hold_names_the_records(spark, kafka) -> None:
    topic = kafka.topic()
    kafka.produce(topic, ["1", "2", "x"])
    source = sources.kafka(
        kafka.bootstrap,
        topics=[topic],
        value_format="string",
        projection=lambda r: (int(r.value) if r.value.isdigit() else r.value,),
        schema="n long",
    )
    with pytest.raises(Exception, match=r"kafka projection \(records from topic '.*' partition 0 offset 0\): item #2"):
        source.read(spark).collect()


def _live_producers() -> int:
    """The confluent-kafka producers alive in this process."""
    from confluent_kafka import Producer

    return sum(1 for o in gc.get_objects() if isinstance(o, Producer))


def test_a_kept_producer_fenced_by_another_attempt_gives_way_and_nothing_is_written_twice(kafka) -> None:
    """The worker keeps a writer's transactional producer between micro-batches (producers.py). Another
    attempt of the same writer (as on another worker) fences it and commits batch 1; the kept
    producer, asked batch 2, must notice before writing and start over, and a re-delivered batch 1
    must be skipped."""
    from confluent_kafka import Producer

    from jetconnect._connector import WriteKey
    from jetconnect_kafka.ledger import DEFAULT_TOPIC, Ledger, marker
    from jetconnect_kafka.producers import drop_idle, idle_count

    drop_idle()
    gc.collect()
    before = _live_producers()
    topic = kafka.topic()
    sink = sinks.kafka(bootstrap_servers=kafka.bootstrap, topic=topic)
    query = f"q-{uuid.uuid4()}"

    def deliver(batch_id: int, values: list[bytes]):
        ctx = WriteContext(partition_id=0, attempt=0, batch_id=batch_id, query_id=query, schema=None)
        return sink.write_partition(iter([pa.RecordBatch.from_pydict({"value": values})]), ctx)

    kept = idle_count()
    assert not deliver(0, [b"a"]).skipped
    assert idle_count() == kept + 1  # the producer went back to the worker's pool

    other = Producer({"bootstrap.servers": kafka.bootstrap, "transactional.id": f"jetconnect-{query}-0"})
    other.init_transactions(30)  # fences the kept producer
    other.begin_transaction()
    other.produce(topic, b"b")
    ledger = Ledger({"bootstrap.servers": kafka.bootstrap}, DEFAULT_TOPIC, sink.backoff)
    ledger.ensure_topic()
    key, value = marker(WriteKey(query, 1, 0))
    other.produce(DEFAULT_TOPIC, value, key, partition=ledger.partition_for(WriteKey(query, 1, 0)))
    other.commit_transaction(30)

    assert not deliver(2, [b"c"]).skipped
    assert deliver(1, [b"b"]).skipped  # a re-delivery of what the other attempt committed
    assert sorted(v for *_, v in kafka.read_all(topic)) == [b"a", b"b", b"c"]

    # The fenced producer, dropped for a new one, must really go: a producer kept alive by a
    # reference cycle keeps its librdkafka threads and broker connections until the worker exits.
    del other
    drop_idle()
    gc.collect()
    assert _live_producers() == before


def test_a_kept_producer_whose_id_another_worker_took_gives_way_without_a_round_trip(kafka, monkeypatch) -> None:
    """Spark hands a writer's tasks to any idle Python worker, so two workers of a host keep producers
    of the same transactional id and fence each other in turn. The one that takes the id notes it
    (producers.Lease.took_over); the other, lent again, must see the note and start over without
    trying its fenced producer (a failing round trip), and nothing may be lost or doubled."""
    from jetconnect._connector import WriteKey
    from jetconnect_kafka import producers
    from jetconnect_kafka.ledger import DEFAULT_TOPIC, Ledger, marker
    from jetconnect_kafka.sink import KafkaSink

    topic = kafka.topic()
    sink = sinks.kafka(bootstrap_servers=kafka.bootstrap, topic=topic)
    query = f"q-{uuid.uuid4()}"

    def deliver(batch_id: int, values: list[bytes]):
        ctx = WriteContext(partition_id=0, attempt=0, batch_id=batch_id, query_id=query, schema=None)
        return sink.write_partition(iter([pa.RecordBatch.from_pydict({"value": values})]), ctx)

    tried = []
    resume = KafkaSink._resume
    monkeypatch.setattr(
        KafkaSink, "_resume", lambda self, *args: tried.append(args[-1].batch_id) or resume(self, *args)
    )
    assert not deliver(0, [b"a"]).skipped

    # another worker of this host writes batch 1 of the same writer with its own producer
    other = producers.Lease({**sink.config, "transactional.id": f"jetconnect-{query}-0", "linger.ms": 5})
    other.producer.init_transactions(30)
    other.took_over()
    other.producer.begin_transaction()
    ledger = Ledger({"bootstrap.servers": kafka.bootstrap}, DEFAULT_TOPIC, sink.backoff)
    ledger.ensure_topic()
    key, value = marker(WriteKey(query, 1, 0))
    other.producer.produce(DEFAULT_TOPIC, value, key, partition=ledger.partition_for(WriteKey(query, 1, 0)))
    other.producer.produce(topic, b"b")
    other.producer.commit_transaction(30)

    assert not deliver(2, [b"c"]).skipped
    assert tried == []  # the kept producer of batch 0 gave way at once
    assert not deliver(3, [b"d"]).skipped
    assert tried == [3]  # the producer of batch 2 was not taken over since: it goes on
    assert deliver(1, [b"b"]).skipped  # a re-delivery of what the other worker committed
    assert sorted(v for *_, v in kafka.read_all(topic)) == [b"a", b"b", b"c", b"d"]


def test_a_fenced_idle_producer_is_replaced_by_a_connected_spare_that_fences_nobody(kafka) -> None:
    """While a worker is idle, its kept producer that another worker of the host has fenced is
    replaced (producers.renew_fenced, on a background thread) by a new, connected one that has not
    called init_transactions: it must not fence the writer's current producer, and the next batch
    given to this worker initialises it and writes; nothing lost or doubled."""
    import time

    from jetconnect._connector import WriteKey
    from jetconnect_kafka import producers
    from jetconnect_kafka.ledger import DEFAULT_TOPIC, Ledger, marker

    producers.drop_idle()
    topic = kafka.topic()
    sink = sinks.kafka(bootstrap_servers=kafka.bootstrap, topic=topic)
    query = f"q-{uuid.uuid4()}"
    writer = f"jetconnect-{query}-0"

    def deliver(batch_id: int, values: list[bytes]):
        ctx = WriteContext(partition_id=0, attempt=0, batch_id=batch_id, query_id=query, schema=None)
        return sink.write_partition(iter([pa.RecordBatch.from_pydict({"value": values})]), ctx)

    def idle_of_writer() -> list[producers.Lease]:
        taken = producers._POOL.take_where(lambda lease: lease.transactional_id == writer)
        for key, lease in taken:
            producers._POOL.keep(key, lease)
        return [lease for _, lease in taken]

    assert not deliver(0, [b"a"]).skipped
    [kept] = idle_of_writer()

    other = producers.Lease({**sink.config, "transactional.id": writer, "linger.ms": 5})
    other.producer.init_transactions(30)
    other.took_over()  # another worker of this host takes the writer's id for batch 1
    deadline = time.monotonic() + 10
    while (idle := idle_of_writer()) in ([kept], []) and time.monotonic() < deadline:
        time.sleep(0.02)  # [] while the spare is being made
    [spare] = idle
    assert spare is not kept and spare.fresh and spare.committed_batch is None

    ledger = Ledger({"bootstrap.servers": kafka.bootstrap}, DEFAULT_TOPIC, sink.backoff)
    ledger.ensure_topic()
    other.producer.begin_transaction()  # after the spare was made: it fenced nobody
    key, value = marker(WriteKey(query, 1, 0))
    other.producer.produce(DEFAULT_TOPIC, value, key, partition=ledger.partition_for(WriteKey(query, 1, 0)))
    other.producer.produce(topic, b"b")
    other.producer.commit_transaction(30)

    assert not deliver(2, [b"c"]).skipped  # the spare, initialised now
    assert idle_of_writer() == [spare]
    assert deliver(1, [b"b"]).skipped  # a re-delivery of what the other worker committed
    assert sorted(v for *_, v in kafka.read_all(topic)) == [b"a", b"b", b"c"]
    other.close()


@pytest.mark.parametrize("foreign", [b"not json", b'{"query": "q"}', None], ids=["text", "partial", "no-value"])
def test_a_control_topic_shared_with_another_use_is_named_not_misread(kafka, foreign) -> None:
    """The ledger decides whether a re-delivered batch is already in: a record of the control topic
    that is not a marker (someone else's data) must stop the write with the topic, partition and
    offset named, never be read as a marker or skipped over silently."""
    from confluent_kafka import Producer

    from jetconnect._connector import WriteKey
    from jetconnect_kafka.ledger import Ledger

    control_topic = kafka.topic(prefix="commits")
    sink = sinks.kafka(bootstrap_servers=kafka.bootstrap, topic=kafka.topic(), commit_topic=control_topic)
    query = f"q-{uuid.uuid4()}"
    ledger = Ledger({"bootstrap.servers": kafka.bootstrap}, control_topic, sink.backoff)
    ledger.ensure_topic()
    producer = Producer({"bootstrap.servers": kafka.bootstrap})
    producer.produce(control_topic, foreign, b"k", partition=ledger.partition_for(WriteKey(query, 0, 0)))
    producer.flush(30)
    ctx = WriteContext(partition_id=0, attempt=0, batch_id=0, query_id=query, schema=None)
    with pytest.raises(
        KafkaSinkError,
        match=rf"control topic '{control_topic}' holds a record with .* at partition \d+ offset 0: is the topic shared.*commit_topic",
    ):
        sink.write_partition(iter([pa.RecordBatch.from_pydict({"value": [b"a"]})]), ctx)
    # Nothing of the failed write is kept: confluent-kafka keeps an exception alive when
    # abort_transaction raises while it is being handled, and with it the task's frames and rows.
    gc.collect()
    assert not [e for e in gc.get_objects() if isinstance(e, KafkaSinkError) and control_topic in str(e)]
