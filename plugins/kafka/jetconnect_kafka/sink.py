"""The Kafka sink: each micro-batch partition in one Kafka transaction, skipped if already in.

Exactly-once (the default): the task of ``(query, batch N, partition p)`` uses the transactional
id ``jetconnect-<query>-<p>``. ``init_transactions`` fences any older attempt and aborts what it
left open; the task then asks the :class:`~jetconnect_kafka.ledger.Ledger` whether N/p is already
committed (Spark re-delivers a batch after a crash between our commit and its own), and if not
writes a marker and the rows in one transaction. Readers must use ``isolation.level=read_committed``.
The worker keeps the producer (:mod:`~jetconnect_kafka.producers`): batch N+1 of the same writer
on the same worker skips both steps, safely (:meth:`KafkaSink._resume` says why).
At-least-once: an idempotent producer, kept by the worker too, flushed at the end of the task:
faster, duplicates after a crash. See plugins/kafka/README.md for the design and its limits.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import pyarrow as pa
from confluent_kafka import KafkaException, Producer
from pyspark.sql.types import ArrayType, BinaryType, DataType, IntegerType, LongType, ShortType, StringType, StructType

from jetconnect import CommitContext, Guarantee, Sink, WriteContext
from jetconnect.api import (
    Backoff,
    GuaranteeOption,
    WriteKey,
    check_function_option,
    check_name,
    redact_hosts,
    spark_rows,
)
from jetconnect.errors import OptionError, SchemaError
from jetconnect_kafka import config, producers, serde
from jetconnect_kafka.errors import KafkaSinkError
from jetconnect_kafka.ledger import DEFAULT_TOPIC, Ledger, marker
from jetconnect_kafka.records import ProducerRecord, as_producer_record, wire_bytes
from jetconnect_kafka.refusals import UNREACHABLE
from jetconnect_kafka.registry_formats import RegistryFormat, sink_bindings
from jetconnect_kafka.schema_registry import Registry, split_registry_options
from jetconnect_kafka.serde import ValueFormat
from jetconnect_kafka.spark_options import SINK_ALIASES

DELIVERY = ("exactly-once", "at-least-once")
COLUMNS = ("key", "value", "topic", "partition", "headers")


@dataclass(frozen=True)
class WriteReport:
    """What one task wrote (the commit message): enough to log and to test the skip path."""

    partition_id: int
    batch_id: int | None
    records: int
    skipped: bool = False


class KafkaSink(Sink):
    """Write a ``value`` column (plus optional key, topic, partition, headers columns) to Kafka.

    ``sinks.kafka(...)``: its parameters are the connector's options, declared here once (Spark's
    string options are parsed from their annotations). ``delivery="exactly-once"`` (default)
    writes each micro-batch partition in one transaction and skips a re-delivered one (read with
    ``isolation.level=read_committed``); ``"at-least-once"`` is faster and may duplicate after a
    crash. ``record_fn``: Jet's function making each record from a row (of any schema): a
    :class:`~jetconnect_kafka.records.ProducerRecord`, a mapping with ``value`` (and key, topic,
    partition, headers) or a ``(key, value)`` pair. Other keyword arguments are librdkafka settings.
    """

    name = "kafka"
    input_format = "arrow"
    guarantee = Guarantee.EXACTLY_ONCE
    #: Spark's own Kafka sink's option names (``kafka.bootstrap.servers``).
    option_aliases = SINK_ALIASES
    #: ``jetconnect plugins`` and the README's matrix list each delivery's guarantee from this.
    guarantee_option = GuaranteeOption(
        "delivery",
        {"exactly-once": Guarantee.EXACTLY_ONCE, "at-least-once": Guarantee.AT_LEAST_ONCE},
        default="exactly-once",
    )

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str | None = None,
        value_format: str = "bytes",
        value_schema: str | None = None,
        avro_schema: str | None = None,
        delivery: str = "exactly-once",
        commit_topic: str = DEFAULT_TOPIC,
        broker_timeout_s: float = 30.0,
        record_fn: Callable[[Any], Any] | None = None,
        key_format: str = "bytes",
        schema_registry_url: str | None = None,
        schema_registry_config: dict[str, Any] | None = None,
        subject: str | None = None,
        key_subject: str | None = None,
        registry_schema: str | None = None,
        auto_register: bool = True,
        **client_config: Any,
    ) -> None:
        if delivery not in DELIVERY:
            raise OptionError(f"kafka sink: option 'delivery' must be one of {', '.join(DELIVERY)}, got {delivery!r}")
        if topic is not None:  # whole names: "t\n" is no topic, and the broker's refusal names no option
            check_name(topic, "topic", "kafka sink", config.TOPIC_NAME, config.TOPIC_NAME_IS)
        self.topic = topic
        registry_config = split_registry_options(client_config, schema_registry_config)
        registry = Registry(schema_registry_url, registry_config, broker_timeout_s) if schema_registry_url else None
        bindings = sink_bindings(registry, topic, subject, key_subject, registry_schema, auto_register)
        self.key_format: ValueFormat = serde.key_format(key_format, bindings["key"])
        self.value_format: ValueFormat = serde.value_format(
            value_format, value_schema, avro_schema, bindings["value"], writing=True
        )
        if record_fn is not None and (
            type(self.key_format) is not ValueFormat or self.value_format.name not in serde.FORMATS
        ):
            raise OptionError(
                "kafka sink: record_fn makes each record's bytes itself; options 'key_format' and a value_format "
                f"other than {', '.join(serde.FORMATS)} apply to the key and value columns, without record_fn"
            )
        self.delivery = delivery
        self.guarantee = self.guarantee_option.guarantee(delivery)
        self.backoff = Backoff(initial=0.1, maximum=2.0, deadline=broker_timeout_s)
        self.config = config.client_config(bootstrap_servers, client_config)
        check_name(commit_topic, "commit_topic", "kafka sink", config.TOPIC_NAME, config.TOPIC_NAME_IS)
        self.commit_topic = commit_topic
        check_function_option(record_fn, "record_fn", "kafka sink", "the row", factory="sinks.kafka")
        self.record_fn = record_fn

    def __repr__(self) -> str:
        servers = redact_hosts(self.config["bootstrap.servers"])  # user:password@ pasted into a host stays hidden
        return f"KafkaSink(topic={self.topic!r}, delivery={self.delivery!r}, bootstrap.servers={servers!r})"

    def check_connection(self) -> str:
        """A metadata request over the sink's own settings: connect, TLS handshake and login, as a
        write's first request does, and nothing written (``jetconnect doctor --sink kafka``)."""
        return config.check_connection(self.config, self.backoff)

    def check_schema(self, schema: StructType) -> None:
        if self.record_fn is not None:
            return  # the function makes each record from rows of any schema
        names = {f.name.lower(): f.dataType for f in schema.fields}
        if "value" not in names:
            raise SchemaError(
                f"kafka sink: the DataFrame needs a 'value' column; it has {', '.join(schema.fieldNames())}"
            )
        if self.topic is None and "topic" not in names:
            raise SchemaError("kafka sink: give option 'topic' or a 'topic' column")
        allowed: dict[str, tuple[type[DataType], ...]] = {
            "key": (BinaryType, StringType),
            "topic": (StringType,),
            "partition": (IntegerType, LongType, ShortType),
            "headers": (ArrayType,),
        }
        if type(self.key_format) is not ValueFormat:
            del allowed["key"]  # the key format says what a key column may be
        for name, types in allowed.items():
            if name in names and not isinstance(names[name], types):
                raise SchemaError(
                    f"kafka sink: column '{name}' is {names[name].simpleString()}, "
                    f"expected {' or '.join(t.typeName() for t in types)}"
                )
        self.prepare_formats(schema)

    def prepare_formats(self, schema: StructType | None) -> None:
        """Fix the Schema Registry formats' schemas for the key and value columns of ``schema``:
        registered (or looked up) on the driver in :meth:`check_schema`; a task whose copy of the
        sink has them asks the registry nothing."""
        formats = [
            (r, f) for r, f in (("key", self.key_format), ("value", self.value_format)) if isinstance(f, RegistryFormat)
        ]
        if not formats:
            return
        if schema is None:
            raise KafkaSinkError("kafka sink: a Schema Registry format needs the DataFrame's schema to derive its own")
        names = {f.name.lower(): f.dataType for f in schema.fields}
        for role, fmt in formats:
            if role in names:
                fmt.prepare(names[role])

    # --- executors ------------------------------------------------------------------------------

    def write_partition(self, data: Iterator[Any], ctx: WriteContext) -> WriteReport:
        if self.delivery == "at-least-once":
            return self._write_at_least_once(data, ctx)
        return self._write_transaction(data, ctx)

    def _write_at_least_once(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> WriteReport:
        lease = producers.borrow({**self.config, "enable.idempotence": True, "linger.ms": 5})
        try:
            writer = _RowWriter(self, ctx, lease)
            records = writer.write_all(data)
            remaining = lease.producer.flush(self.backoff.deadline)
            lease.producer.poll(0)  # the producer's last reports: a refusal is the cause of anything undelivered
            lease.producer.watch.raise_if_refused()
            writer.raise_failure()
            if remaining:
                raise KafkaSinkError(
                    f"kafka sink: {remaining} record(s) of partition {ctx.partition_id} "
                    f"not delivered within {self.backoff.deadline:.0f} s: {_undelivered_cause(lease)}"
                )
        except BaseException:
            lease.close()
            raise
        lease.give_back()  # only a producer with nothing pending and no failure goes back
        return WriteReport(ctx.partition_id, ctx.batch_id, records)

    def _write_transaction(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> WriteReport:
        ledger = Ledger(self.config, self.commit_topic, self.backoff)
        ledger.ensure_topic()
        key = ctx.key
        # Streaming: one transactional id per (query, Spark partition), stable across restarts, so
        # a new attempt fences the old one. A batch write has no batch id to re-deliver: any
        # unique id will do, and its producer is of no use to another write.
        streaming = key is not None
        if key is None:
            key = WriteKey(f"write-{uuid.uuid4()}", 0, ctx.partition_id)
        settings = {**self.config, "transactional.id": f"jetconnect-{key.query_id}-{key.partition_id}", "linger.ms": 5}
        lease = producers.borrow(settings) if streaming else producers.Lease(settings)
        if not lease.fresh and (lease.superseded() or not self._resume(lease, ledger, key)):
            lease.close()  # fenced, or of no use to this batch: a new producer takes the id
            lease = producers.Lease(settings)
        deadline = self.backoff.deadline
        failure: BaseException | None = None
        try:
            if lease.fresh:
                lease.producer.init_transactions(deadline)  # fences every older attempt, aborts what it left open
                if streaming:
                    lease.took_over()
                if streaming and ledger.committed(key):
                    lease.committed_batch = key.batch_id
                    lease.give_back()
                    return WriteReport(ctx.partition_id, ctx.batch_id, 0, skipped=True)
                lease.producer.begin_transaction()
                self._produce_marker(lease, ledger, key)
            records = _RowWriter(self, ctx, lease).write_all(data)
            lease.producer.flush(deadline)
            _RowWriter.raise_failure_of(lease, ctx)
            lease.producer.commit_transaction(deadline)
        except BaseException as exc:  # aborted below, outside this block: see _abort_quietly
            failure = exc
        if failure is not None:
            _abort_quietly(lease.producer, deadline)
            refusal = lease.producer.watch.refusal()  # the cause of a failed transaction, when a broker refused
            lease.close()
            if refusal is not None:
                raise refusal.error() from None
            if isinstance(failure, KafkaException):
                raise KafkaSinkError(
                    f"kafka sink: the transaction of batch {ctx.batch_id} partition "
                    f"{ctx.partition_id} failed: {failure.args[0].str() if failure.args else failure}"
                ) from failure
            raise failure
        lease.committed_batch = key.batch_id
        if streaming:
            lease.give_back()
        return WriteReport(ctx.partition_id, ctx.batch_id, records)

    def _resume(self, lease: producers.Lease, ledger: Ledger, key: WriteKey) -> bool:
        """Begin ``key``'s transaction on a producer the pool lent again, with no ledger lookup and no
        ``init_transactions``; False (nothing left open) if this producer must not write it.

        It may if it committed an earlier batch of this writer: a producer that committed a batch
        since would have fenced it, and the marker, sent and flushed first, shows that before any
        row is read. A batch at or before its last one (a re-delivery) takes the safe path.
        """
        if lease.committed_batch is None or key.batch_id <= lease.committed_batch:
            return False
        try:
            lease.producer.begin_transaction()
            self._produce_marker(lease, ledger, key)
            lease.producer.flush(self.backoff.deadline)
            usable = lease.failure is None
        except Exception:  # noqa: BLE001 - whatever it is, this producer must not write; a new one will
            # Fenced by another attempt (its init_transactions bumped the epoch): librdkafka's fatal
            # error surfaces as KafkaException, or from flush as a SystemError (confluent-kafka runs
            # the delivery callback with the fatal exception already set).
            usable = False
        if not usable:
            _abort_quietly(lease.producer, self.backoff.deadline)
        return usable

    def _produce_marker(self, lease: producers.Lease, ledger: Ledger, key: WriteKey) -> None:
        """The record that says ``key`` is committed, in the same transaction as its rows (before them)."""
        marker_key, value = marker(key)
        lease.producer.produce(self.commit_topic, value=value, key=marker_key, partition=ledger.partition_for(key))

    # --- driver -----------------------------------------------------------------------------------

    def commit(self, messages: list[Any], ctx: CommitContext) -> None:
        # Every task committed its own transaction; there is nothing left to make visible.
        return None


def _undelivered_cause(lease: producers.Lease) -> str:
    """Why records were not delivered in time, as librdkafka last said it (a refusal is raised before)."""
    last = lease.producer.watch.unreachable
    if last is not None:
        return f"{UNREACHABLE} (librdkafka: {last})"
    return (
        "the broker accepted the connection but did not acknowledge them (overloaded, or a partition without a leader?)"
    )


def _abort_quietly(producer: Producer, timeout_s: float) -> None:
    """Abort the producer's transaction, if it has one, as long as the broker may take: a transaction
    left open holds back read_committed readers.

    Call it outside any ``except`` block: when ``abort_transaction`` raises (no transaction open)
    while another exception is being handled, confluent-kafka 2.16.1 keeps that exception alive for
    good (measured: one per call, with its traceback's frames and all they hold, the task's rows
    included).
    """
    try:
        producer.abort_transaction(timeout_s)
    except KafkaException:
        pass  # no transaction in progress, or fenced: the next attempt's init_transactions aborts it


class _RowWriter:
    """Writes Arrow batches row by row with a borrowed producer."""

    def __init__(self, sink: KafkaSink, ctx: WriteContext, lease: producers.Lease) -> None:
        self.sink, self.ctx, self.lease = sink, ctx, lease
        self.producer = lease.producer
        if sink.record_fn is None:
            sink.prepare_formats(ctx.schema)
        self.written = 0

    @staticmethod
    def raise_failure_of(lease: producers.Lease, ctx: WriteContext) -> None:
        if lease.failure is not None and lease.failure_where is not None:
            raise KafkaSinkError(
                f"kafka sink: the record that record_fn made for {lease.failure_where} was not delivered: "
                f"{lease.failure_text()}"
            )
        if lease.failure is not None:
            raise KafkaSinkError(
                f"kafka sink: a record of partition {ctx.partition_id} was not delivered: {lease.failure_text()}"
            )

    def raise_failure(self) -> None:
        self.raise_failure_of(self.lease, self.ctx)

    def write_all(self, batches: Iterator[pa.RecordBatch]) -> int:
        for batch in batches:
            self.write(batch)
        return self.written

    def write(self, batch: pa.RecordBatch) -> None:
        if self.sink.record_fn is not None:
            self._write_made(batch, self.sink.record_fn)
            return
        names = {name.lower(): i for i, name in enumerate(batch.schema.names)}
        n = batch.num_rows
        try:
            values = self.sink.value_format.encode(batch.column(names["value"]))
        except Exception as exc:  # fastavro/json raise many types; the row at fault is named below
            raise self._bad_value(batch.column(names["value"]), exc) from None
        keys = None
        if "key" in names:
            try:
                keys = self.sink.key_format.encode(batch.column(names["key"]))
            except Exception as exc:  # noqa: BLE001 - as for values: the row at fault is named
                raise self._bad_value(batch.column(names["key"]), exc, "key") from None
        topics = _column(batch, names, "topic", n)
        partitions = _column(batch, names, "partition", n)
        headers = _column(batch, names, "headers", n)
        produce = self.producer.produce
        if topics is None and partitions is None and headers is None:
            # The common case, and the hot loop: one call per record, nothing else.
            topic = self.sink.topic
            if topic is None:  # check_schema refuses this on the driver; a direct write is told too
                raise KafkaSinkError(
                    f"kafka sink: partition {self.ctx.partition_id} has no 'topic' column and option 'topic' is not set"
                )
            for value, key in zip(values, keys if keys is not None else repeat(None)):
                try:
                    produce(topic, value, key)
                except BufferError:
                    self._produce(topic, value, key, {})
        else:
            for i in range(n):
                topic = topics[i] if topics is not None and topics[i] is not None else self.sink.topic
                if topic is None:
                    raise KafkaSinkError(
                        f"kafka sink: row {self.written + i} of partition {self.ctx.partition_id} "
                        f"has a null topic and option 'topic' is not set"
                    )
                extra: dict[str, Any] = {}
                if partitions is not None and partitions[i] is not None:
                    extra["partition"] = partitions[i]
                if headers is not None and headers[i]:
                    extra["headers"] = [(h["key"], h["value"]) for h in headers[i]]
                value, key = values[i], keys[i] if keys is not None else None
                try:
                    produce(topic, value, key, **extra)
                except BufferError:
                    self._produce(topic, value, key, extra)
        self.producer.poll(0)
        self.written += n

    def _write_made(self, batch: pa.RecordBatch, record_fn: Callable[[Any], Any]) -> None:
        """Jet's ``toRecordFn``: each row, as a pyspark ``Row``, made into its record by the user's function."""
        for i, row in enumerate(spark_rows(batch)):
            where = f"row {self.written + i} of partition {self.ctx.partition_id}"
            record = as_producer_record(record_fn(row), where)
            topic = record.topic or self.sink.topic
            if topic is None:
                raise KafkaSinkError(f"kafka sink: record_fn gave no topic for {where} and option 'topic' is not set")
            extra: dict[str, Any] = {}
            if record.partition is not None:
                extra["partition"] = record.partition
            if record.headers:
                extra["headers"] = list(record.headers)
            value, key = wire_bytes(record.value, "value", where), wire_bytes(record.key, "key", where)
            # What the client refuses at once is raised here; what the broker refuses later
            # (a partition of a topic librdkafka did not know yet) comes back naming the row.
            extra["on_delivery"] = self.lease.named(where)
            try:
                self._produce(topic, value, key, extra)
            except (TypeError, ValueError, KafkaException) as exc:
                raise _refused(exc, where, topic, record) from None
        self.producer.poll(0)
        self.written += batch.num_rows

    def _produce(self, topic: str, value: bytes | None, key: bytes | None, extra: Mapping[str, Any]) -> None:
        """Produce one record, waiting while librdkafka's local queue is full."""
        while True:
            try:
                self.producer.produce(topic, value, key, **extra)
                return
            except BufferError:  # the local queue is full: let librdkafka send some
                self.producer.poll(0.05)

    def _bad_value(self, column: pa.Array, exc: Exception, what: str = "value") -> KafkaSinkError:
        if isinstance(exc, KafkaSinkError):  # the registry's answer, say: no row is at fault
            return exc
        fmt = self.sink.key_format if what == "key" else self.sink.value_format
        for i in range(len(column)):
            try:
                fmt.encode(column.slice(i, 1))
            except Exception as row_exc:
                return KafkaSinkError(
                    f"kafka sink: cannot encode the {what} of row {self.written + i} of partition "
                    f"{self.ctx.partition_id} as {fmt.name}: {type(row_exc).__name__}: {row_exc}"
                )
        return KafkaSinkError(f"kafka sink: cannot encode {what}s as {fmt.name}: {exc}")


def _refused(exc: Exception, where: str, topic: Any, record: ProducerRecord) -> KafkaSinkError:
    """The client refused a record a ``record_fn`` made (a partition the topic lacks or not an int,
    headers not ``(str, bytes|str|None)`` pairs, a value over the size limit): name the option and the
    row, not only librdkafka's words. The record's key and value stay out: they may be anyone's data."""
    reason = exc.args[0].str() if isinstance(exc, KafkaException) and exc.args else str(exc)
    return KafkaSinkError(
        f"kafka sink: the Kafka client refused the record that record_fn made for {where} "
        f"(topic {topic!r}, partition {record.partition!r}): {type(exc).__name__}: {reason}"
    )


def _column(batch: pa.RecordBatch, names: Mapping[str, int], name: str, n: int) -> list[Any] | None:
    return batch.column(names[name]).to_pylist() if name in names else None


#: ``sinks.kafka``: the class is the factory, so its parameters are written once.
kafka_sink = KafkaSink


__all__ = ["KafkaSink", "WriteReport", "kafka_sink"]
