"""The Kafka source: exact offset ranges per topic-partition, replayed from Spark's checkpoint.

The driver asks the broker for each partition's watermarks and fixes every micro-batch as
``{"topic:partition": end offset}``; executors assign themselves one partition (no consumer
group, nothing committed to Kafka) and read exactly ``[start, end)``. Reading a range twice gives
the same records, so a restarted query replays what it had not committed: exactly-once.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NoReturn

import pyarrow as pa
import pyarrow.compute as pc
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition
from pyspark.sql.types import StructField, StructType

from jetconnect import BatchSource, Guarantee, Range, StreamSource
from jetconnect.api import (
    Backoff,
    Offset,
    admit_offsets,
    check_function_option,
    check_name,
    describe,
    integer_positions,
    mapped_rows,
    parse_schema,
    redact_hosts,
    rows_to_batch,
    secrets_of,
    to_arrow_schema,
)
from jetconnect.errors import OptionError
from jetconnect_kafka import config, consumers, serde
from jetconnect_kafka.errors import KafkaOffsetError, KafkaSourceError
from jetconnect_kafka.offsets import (
    EARLIEST,
    LATEST,
    StartingOffsets,
    parse_starting_offsets,
    partition_key,
    resolve_starting_offsets,
    split_key,
)
from jetconnect_kafka.ranges import PartitionRange, record_offset
from jetconnect_kafka.records import ConsumerRecord
from jetconnect_kafka.registry_formats import source_bindings
from jetconnect_kafka.schema import record_schema
from jetconnect_kafka.schema_registry import Registry, split_registry_options
from jetconnect_kafka.serde import DecodeError, ValueFormat
from jetconnect_kafka.spark_options import SOURCE_ALIASES, parse_assign

log = logging.getLogger(__name__)

OUT_OF_RANGE = ("fail", "earliest", "latest")
BAD_RECORD = ("fail", "null")
#: The rows of a source with a ``projection`` and no ``schema``: what the function returns, as text.
PROJECTED_SCHEMA = "value string"
#: Records asked of librdkafka per ``consume`` call, and so the most rows of one Arrow batch.
CHUNK = 20_000
#: ``Message.timestamp()``'s ``(type, ms)`` pair as Arrow reads a tuple into a struct.
_STAMP = pa.struct([("type", pa.int32()), ("ms", pa.int64())])


class KafkaSource(StreamSource, BatchSource):
    """Kafka topics as a stream (exact replay from checkpointed offsets) or a batch of a range.

    ``sources.kafka(...)``: its parameters are the connector's options, declared here once (Spark's
    string options are parsed from their annotations). ``topics`` (a list, or names separated by
    commas) or ``pattern`` (a regex over topic names); ``starting_offsets``: earliest, latest, epoch
    milliseconds / ISO time, or a map ``{"topic:partition": offset}`` (or its JSON; default: the
    ``auto_offset_reset`` setting if given, else earliest); ``group_id``: commit the processed
    offsets to that consumer group after each micro-batch, for lag monitoring; ``projection``:
    Jet's function of each :class:`~jetconnect_kafka.records.ConsumerRecord`, returning a row of
    ``schema``; ``value_format``: bytes, string, json (with ``value_schema`` DDL) or avro (with
    ``avro_schema``). Other keyword arguments are librdkafka settings (``security_protocol="SSL"``
    or ``"security.protocol"``).
    """

    name = "kafka"
    guarantee = Guarantee.EXACTLY_ONCE
    #: Spark's own Kafka source's option names (``subscribe``, ``startingOffsets``, ...).
    option_aliases = SOURCE_ALIASES

    def __init__(
        self,
        bootstrap_servers: str,
        topics: list[str] | None = None,
        pattern: str | None = None,
        assign: str | dict[str, list[int]] | None = None,
        starting_offsets: str | None = None,
        ending_offsets: str = "latest",
        key_format: str = "bytes",
        value_format: str = "bytes",
        value_schema: str | None = None,
        avro_schema: str | None = None,
        on_offset_out_of_range: str = "fail",
        max_records_per_batch: int | None = None,
        broker_timeout_s: float = 30.0,
        group_id: str | None = None,
        projection: Callable[[ConsumerRecord], Any] | None = None,
        schema: str | None = None,
        schema_registry_url: str | None = None,
        schema_registry_config: dict[str, Any] | None = None,
        subject: str | None = None,
        key_subject: str | None = None,
        schema_version: int | None = None,
        registry_schema: str | None = None,
        on_bad_record: str = "fail",
        include_headers: bool = True,
        **client_config: Any,
    ) -> None:
        if isinstance(topics, str):
            topics = [t.strip() for t in topics.split(",") if t.strip()]
        #: ``assign``: only these partitions, ``{topic: [partition, ...]}``.
        self.assigned: dict[str, list[int]] | None = None
        if assign is not None:
            try:
                self.assigned = parse_assign(assign)
            except ValueError as exc:
                raise OptionError(f"kafka: option 'assign' {exc}") from None
            if topics or pattern:
                raise OptionError("kafka: give one of options 'topics', 'pattern' and 'assign'")
            topics = sorted(self.assigned)
        for topic in topics or ():  # whole names: "t\n" is no topic, and the broker's refusal names no option
            check_name(topic, "topics", "kafka", config.TOPIC_NAME, config.TOPIC_NAME_IS)
        starting_offsets, ending_offsets = _offsets_text(starting_offsets), str(_offsets_text(ending_offsets))
        if bool(topics) == bool(pattern):
            raise OptionError("kafka: give exactly one of options 'topics' (a list), 'pattern' (a regex) and 'assign'")
        if on_offset_out_of_range not in OUT_OF_RANGE:
            raise OptionError(
                f"kafka: option 'on_offset_out_of_range' must be one of {', '.join(OUT_OF_RANGE)}, "
                f"got {on_offset_out_of_range!r}"
            )
        if on_bad_record not in BAD_RECORD:
            raise OptionError(f"kafka: option 'on_bad_record' must be fail or null, got {on_bad_record!r}")
        registry_config = split_registry_options(client_config, schema_registry_config)
        self.topics = list(topics or [])
        self.pattern = pattern
        try:
            self._regex = re.compile(pattern) if pattern else None
        except re.error as exc:
            raise OptionError(f"kafka: option 'pattern' is not a regular expression: {exc}") from None
        self.config = config.client_config(bootstrap_servers, client_config)
        starting_offsets = resolve_starting_offsets(starting_offsets, self.config.get("auto.offset.reset"))
        self.starting: StartingOffsets = parse_starting_offsets(starting_offsets)
        self.ending = ending_offsets
        if ending_offsets != "latest":
            parse_starting_offsets(ending_offsets, "ending_offsets")
        registry = Registry(schema_registry_url, registry_config, broker_timeout_s) if schema_registry_url else None
        bindings = source_bindings(registry, self.topics, subject, key_subject, schema_version, registry_schema)
        self.key_format: ValueFormat = serde.key_format(key_format, bindings["key"])
        self.value_format: ValueFormat = serde.value_format(value_format, value_schema, avro_schema, bindings["value"])
        self.on_bad_record = on_bad_record
        self.on_out_of_range = on_offset_out_of_range
        self.max_records_per_batch = max_records_per_batch
        self.backoff = Backoff(initial=0.1, maximum=2.0, deadline=broker_timeout_s)
        self.broker_timeout_s = broker_timeout_s
        if group_id is not None and not str(group_id).strip():
            raise OptionError("kafka: option 'group_id' is empty; leave it out to commit no offsets to a group")
        self.group_id = group_id
        check_function_option(projection, "projection", "kafka", "the record", schema=schema, factory="sources.kafka")
        self.projection = projection
        # Without a projection the schema is the formats': a Schema Registry format asks the registry
        # for it, so that waits for the first schema() call (on the driver), never a constructor.
        self._schema = parse_schema(schema or PROJECTED_SCHEMA) if projection is not None else None
        self.include_headers = include_headers
        self._client: consumers.RenewableConsumer | None = None  # driver side, for metadata and watermarks
        self._group_client: Consumer | None = None  # driver side, commits to ``group_id``

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_client"] = state["_group_client"] = None  # a librdkafka handle does not pickle
        return state

    def __repr__(self) -> str:
        what = f"topics={self.topics}" if self.topics else f"pattern={self.pattern!r}"
        what = f"assign={self.assigned}" if self.assigned is not None else what
        servers = redact_hosts(self.config["bootstrap.servers"])  # user:password@ pasted into a host stays hidden
        return f"KafkaSource({what}, bootstrap.servers={servers!r})"

    def bind_schema(self, schema: StructType) -> None:
        # Where the reader is made, before it goes to the tasks: a Schema Registry format fixes its
        # reader schema here, so every task reads with the one the query planned, never asking the
        # registry for a "latest" version of its own.
        self.schema()

    def schema(self) -> StructType:
        if self._schema is None:
            schema = record_schema(
                self.key_format.spark_type(), self.value_format.spark_type(), self.on_bad_record == "null"
            )
            if not self.include_headers:  # Spark's includeHeaders=false: no headers column
                schema = StructType([f for f in schema.fields if f.name != "headers"])
            self._schema = schema
        return self._schema

    # --- the driver: partitions and positions ------------------------------------------------

    def _metadata_client(self) -> consumers.RenewableConsumer:
        if self._client is None:
            self._client = consumers.RenewableConsumer(self.config)
        return self._client

    def partitions(self) -> list[tuple[str, int]]:
        """Every ``(topic, partition)`` this source reads now, sorted."""
        metadata = config.cluster_metadata(self._metadata_client().consumer, f"{self!r}: listing topics", self.backoff)
        found: list[tuple[str, int]] = []
        for topic, info in metadata.topics.items():
            wanted = (
                topic in self.topics
                if self.topics
                else (not topic.startswith("__") and self._regex is not None and self._regex.fullmatch(topic))
            )
            if wanted and info.error is None:
                found.extend((topic, p) for p in info.partitions)
        if self.assigned is not None:
            missing = [f"{t}:{p}" for t, ps in self.assigned.items() for p in ps if (t, p) not in found]
            if missing:
                raise KafkaSourceError(
                    f"kafka: option 'assign' names partitions the broker does not have: {', '.join(missing)}"
                )
            found = [(t, p) for t, p in found if p in self.assigned[t]]
        return sorted(found)

    def _watermarks(self, parts: Sequence[tuple[str, int]]) -> dict[str, tuple[int, int]]:
        client = self._metadata_client()
        return {
            partition_key(t, p): client.watermarks(t, p, f"{self!r}: watermarks of {t}:{p}", self.backoff)
            for t, p in parts
        }

    def initial_offset(self) -> Offset:
        marks = self._watermarks(self.partitions())
        return self._positions(self.starting, marks, "starting_offsets")

    def _positions(self, spec: StartingOffsets, marks: Mapping[str, tuple[int, int]], option: str) -> dict[str, int]:
        by_time = self._offsets_for_time(spec.timestamp_ms, marks) if spec.default == "timestamp" else {}
        positions = {}
        for key, (low, high) in marks.items():
            wanted = (spec.offsets or {}).get(key)
            if wanted is None:
                wanted = by_time.get(key, EARLIEST if spec.default == "earliest" else LATEST)
            if wanted == EARLIEST:
                positions[key] = low
            elif wanted == LATEST:
                positions[key] = high
            elif not low <= wanted <= high:
                raise KafkaOffsetError(
                    f"kafka: option '{option}' asks for offset {wanted} of {key}, which holds offsets {low} to {high}"
                )
            else:
                positions[key] = wanted
        missing = set(spec.offsets or {}) - set(marks)
        if missing:
            raise OptionError(
                f"kafka: option '{option}' names partitions that do not exist: {', '.join(sorted(missing))}"
            )
        return positions

    def _offsets_for_time(self, timestamp_ms: int | None, marks: Mapping[str, tuple[int, int]]) -> dict[str, int]:
        # The first offset whose timestamp is at or after the time; the end if there is none.
        if timestamp_ms is None:  # parse_starting_offsets gives every "timestamp" start its time
            raise OptionError("kafka: starting offsets by time need the time (epoch milliseconds or ISO-8601)")
        asked = [TopicPartition(*split_key(k), timestamp_ms) for k in marks]
        found = self._metadata_client().consumer.offsets_for_times(asked, timeout=self.broker_timeout_s)
        return {partition_key(tp.topic, tp.partition): (tp.offset if tp.offset >= 0 else LATEST) for tp in found}

    @staticmethod
    def _checked(offset: Offset) -> dict[str, int]:
        """A checkpointed offset's entries: ``topic:partition`` keys, non-negative offsets."""

        def check_key(key: str) -> None:
            try:
                split_key(key)
            except OptionError as exc:
                raise KafkaOffsetError(f"{exc} (in the checkpointed offset: was it edited?)") from None

        return integer_positions(offset, "kafka", "topic:partition", check_key)

    def latest_offset(self, start: Offset, max_records: int | None) -> Offset:
        start = self._checked(start)
        marks = self._watermarks(self.partitions())
        end: dict[str, int] = {}
        begin: dict[str, int] = {}
        for key, position in start.items():
            if key not in marks:
                self._out_of_range(key, position, None)
                continue  # reset asked: a deleted topic is dropped
            low, high = marks[key]
            if not low <= position <= high:
                self._out_of_range(key, position, (low, high))
                begin[key] = low if self.on_out_of_range == "earliest" else high
            else:
                begin[key] = position
        for key, (low, high) in marks.items():
            begin.setdefault(key, low)  # a partition that appeared since: from its beginning
            end[key] = high
        limits = [n for n in (max_records, self.max_records_per_batch) if n is not None]
        return admit_offsets(begin, end, min(limits)) if limits else end

    def _out_of_range(self, key: str, position: int, marks: tuple[int, int] | None) -> None:
        if self.on_out_of_range != "fail":
            return
        if marks is None:
            raise KafkaOffsetError(
                f"kafka: the checkpoint reads {key} at offset {position}, but that partition no longer "
                f"exists (topic deleted?); set on_offset_out_of_range=earliest|latest to go on without it"
            )
        low, high = marks
        why = "past the end: the topic was recreated?" if position > high else "before the start: records expired?"
        raise KafkaOffsetError(
            f"kafka: the checkpoint reads {key} at offset {position}, but it holds offsets {low} to {high} "
            f"({why}); set on_offset_out_of_range=earliest|latest to reset"
        )

    def commit(self, end: Offset) -> None:
        """With ``group_id``, tell the consumer group how far Spark has processed, so the lag tools
        of Kafka shops (``kafka-consumer-groups --describe``) see the query. The checkpoint stays
        the truth: a restarted query reads from it, and a failed group commit is only logged."""
        if self.group_id is None:
            return
        offsets = [
            TopicPartition(*split_key(key), int(position)) for key, position in sorted(self._checked(end).items())
        ]
        try:
            if self._group_client is None:
                self._group_client = config.consumer({**self.config, "group.id": self.group_id})
            self._group_client.commit(offsets=offsets, asynchronous=False)
        except KafkaException as exc:
            log.warning(
                "kafka: could not commit offsets to consumer group %r (the checkpoint is unaffected): %s",
                self.group_id,
                describe(exc, secrets_of(self.config)),
            )

    def stop(self) -> None:
        for name in ("_client", "_group_client"):
            client = getattr(self, name)
            if client is not None:
                client.close()
                setattr(self, name, None)

    # --- batch reads: a fixed range ----------------------------------------------------------

    def splits(self) -> list[Range]:
        marks = self._watermarks(self.partitions())
        start = self._positions(self.starting, marks, "starting_offsets")
        if self.ending == "latest":
            end = {k: high for k, (_, high) in marks.items()}
        else:
            end = self._positions(parse_starting_offsets(self.ending, "ending_offsets"), marks, "ending_offsets")
        return [Range(k, start[k], end[k]) for k in sorted(marks) if end[k] > start[k]]

    def read_split(self, split: Range) -> Iterator[pa.RecordBatch]:
        return self.read_range(split)

    # --- executors: one exact range ----------------------------------------------------------

    def ranges(self, start: Offset, end: Offset) -> Sequence[Range]:
        self._checked(start)  # both come back from the checkpoint after a restart
        self._checked(end)
        return super().ranges(start, end)

    def read_range(self, range_: Range) -> Iterator[pa.RecordBatch]:
        topic, partition = split_key(range_.partition)
        for bound in (range_.start, range_.end):
            if bound is not None and (type(bound) is not int or bound < 0):
                raise KafkaOffsetError(
                    f"kafka: range {range_.partition!r} has offset {bound!r}, not a non-negative integer"
                )
        # auto.offset.reset=error: an offset that is gone must be an error here, never a silent jump
        lease = consumers.borrow(self.config, **{"auto.offset.reset": "error"})
        finished = False
        try:
            yield from _RangeReader(self, lease, topic, partition, range_.start, range_.end).batches()
            finished = True
        finally:
            if finished:
                lease.give_back()
            else:  # failed, or left unfinished by its reader: whatever it fetched goes with it
                lease.close()


class _RangeReader:
    """Reads offsets ``[start, end)`` of one partition into Arrow batches of the source's schema."""

    def __init__(
        self,
        source: KafkaSource,
        lease: consumers.ConsumerLease,
        topic: str,
        partition: int,
        start: int | None,
        end: int,
    ) -> None:
        self.source, self.topic, self.partition, self.end = source, topic, partition, end
        low, high = lease.watermarks(topic, partition, f"{source!r}: watermarks", source.backoff)
        self.consumer = lease.consumer  # the one that answered
        if start is None:  # a partition that appeared after the previous batch was planned
            start = low
        if not low <= start <= high:
            if source.on_out_of_range == "fail":
                raise KafkaOffsetError(
                    f"kafka: cannot read {topic}:{partition} from offset {start}: it holds "
                    f"offsets {low} to {high} (the topic was recreated, or records expired)"
                )
            start = low if source.on_out_of_range == "earliest" else end
        self.start, self.high = start, high
        self.tp = TopicPartition(topic, partition, start)
        self.arrow_schema = to_arrow_schema(source.schema())

    def where(self, offset: int) -> str:
        return f"topic '{self.topic}' partition {self.partition} offset {offset}"

    def batches(self) -> Iterator[pa.RecordBatch]:
        span = PartitionRange(
            self.consumer,
            self.topic,
            self.partition,
            self.start,
            self.end,
            chunk=CHUNK,
            stall_s=self.source.broker_timeout_s,
            on_error=self._fail,
            on_stall=self._stalled,
        )
        for records, offsets in span.chunks_with_offsets():
            yield self._to_batch(records, offsets)

    def _stalled(self, position: int) -> NoReturn:
        """Fail naming why offsets ``[position, end)`` did not come: a broker gone, or a log cut short."""
        where = f"reading {self.topic}:{self.partition} offsets {self.start} to {self.end}"
        idle = f"no record after offset {position} for {self.source.broker_timeout_s:.0f} s"
        try:
            _, high = self.consumer.get_watermark_offsets(self.tp, timeout=min(5.0, self.source.broker_timeout_s))
        except KafkaException as exc:
            raise KafkaSourceError(f"kafka: {where}: {idle} (broker unreachable?): {exc}") from None
        if high < self.end:
            raise KafkaOffsetError(
                f"kafka: {where}: {idle}, and the broker now reports high watermark {high}, below the planned "
                f"end {self.end} (the topic was recreated, or the log truncated by an unclean leader election)"
            )
        raise KafkaSourceError(
            f"kafka: {where}: broker {self._broker()} reports high watermark {high} but served {idle}: "
            f"the planned range cannot be filled"
        )

    def _broker(self) -> str:
        """This partition's leader as ``host:port``, else the bootstrap servers: for errors."""
        try:
            metadata = self.consumer.list_topics(self.topic, timeout=5)
            leader = metadata.topics[self.topic].partitions[self.partition].leader
            broker = metadata.brokers[leader]
            return f"{broker.host}:{broker.port} (id {leader})"
        except (KafkaException, KeyError):
            return f"at bootstrap.servers={self.source.config['bootstrap.servers']!r}"

    def _fail(self, error: KafkaError, position: int) -> NoReturn:
        if error.code() in (KafkaError.OFFSET_OUT_OF_RANGE, KafkaError._AUTO_OFFSET_RESET):
            raise KafkaOffsetError(
                f"kafka: {self.where(position)} is out of range while reading up to offset "
                f"{self.end} (topic recreated, or records expired): {error.str()}"
            )
        raise KafkaSourceError(f"kafka: reading {self.where(position)}: {error.str()}") from KafkaException(error)

    def _to_batch(self, records: list[Message], offsets: list[int]) -> pa.RecordBatch:
        if self.source.projection is not None:
            return self._projected(records, self.source.projection)
        # One comprehension per column, each a C-level pass in Arrow after it: the per-record cost
        # is what the source's speed is made of. Topic and partition are one value repeated.
        n = len(records)
        # (type, ms) pairs straight into a struct array: librdkafka type 0 = none, 1 = create, 2 = append
        stamps = pa.array([m.timestamp() for m in records], _STAMP)
        kind, ms = stamps.field(0), stamps.field(1)
        timestamp = pc.multiply(ms, 1000).cast(self.arrow_schema.field("timestamp").type)
        timestamp_type = pc.subtract(kind, 1)
        none = pc.equal(kind, 0)
        if pc.any(none).as_py():  # a record without a timestamp (a pre-0.10 message format) has null for both
            timestamp, timestamp_type = pc.if_else(none, None, timestamp), pc.if_else(none, None, timestamp_type)
        corrupt: dict[str, list[bytes | None] | None] = {}
        columns = [
            self._decode(self.source.key_format, [m.key() for m in records], records, "key", corrupt),
            self._decode(self.source.value_format, [m.value() for m in records], records, "value", corrupt),
            pa.repeat(pa.scalar(self.topic, pa.string()), n),
            pa.repeat(pa.scalar(self.partition, pa.int32()), n),
            pa.array(offsets, pa.int64()),
            timestamp,
            timestamp_type,
        ]
        if self.source.include_headers:
            columns.append(pa.array([m.headers() for m in records], self.arrow_schema.field("headers").type))
        if self.source.on_bad_record == "null":
            for what in ("key", "value"):
                bad = corrupt.get(what)
                columns.append(pa.nulls(n, pa.binary()) if bad is None else pa.array(bad, pa.binary()))
        return pa.RecordBatch.from_arrays(columns, schema=self.arrow_schema)

    def _projected(self, records: list[Message], project: Callable[[ConsumerRecord], Any]) -> pa.RecordBatch:
        """Jet's projection: each record, decoded, through the user's function, then to the schema."""
        keys = self._decode(self.source.key_format, [m.key() for m in records], records, "key").to_pylist()
        values = self._decode(self.source.value_format, [m.value() for m in records], records, "value").to_pylist()
        rows = [
            project(
                ConsumerRecord(
                    self.topic,
                    self.partition,
                    record_offset(m),
                    ms if kind else None,
                    key,
                    value,
                    # confluent-kafka's stubs give headers() the producer's input type (a dict, str
                    # values); a consumed record's headers are a list of (str, bytes | None) pairs.
                    tuple(m.headers() or ()),  # type: ignore[arg-type]
                )
            )
            for m, key, value, (kind, ms) in zip(records, keys, values, (m.timestamp() for m in records))
        ]
        where = self.where(record_offset(records[0]))
        # a record the projection returns None for is left out (Jet's rule for mapping functions)
        return rows_to_batch(mapped_rows(rows), self.source.schema(), f"kafka projection (records from {where})")

    @staticmethod
    def _arrow_type(fmt: ValueFormat) -> pa.DataType:
        return to_arrow_schema(StructType([StructField("v", fmt.spark_type(), True)])).field("v").type

    def _decode(
        self,
        fmt: ValueFormat,
        raw: list[bytes | None],
        records: list[Message],
        what: str,
        corrupt: dict[str, list[bytes | None] | None] | None = None,
    ) -> pa.Array:
        """``raw`` (the keys or values of ``records``) decoded; an error names the record at fault.

        With ``on_bad_record="null"`` a record that does not decode is null instead, its bytes
        kept in ``corrupt[what]``; a registry that does not answer is still an error (nothing is
        skipped because a server was down).
        """
        try:
            return fmt.decode(raw)
        except DecodeError as exc:
            where = self.where(record_offset(records[exc.index]))
            error = f"kafka: cannot decode the {what} at {where} as {fmt.name}: {exc.reason}"
            if self.source.on_bad_record == "fail":
                raise KafkaSourceError(error) from None
        column, bad = decode_leniently(fmt, raw, self._arrow_type(fmt))
        if corrupt is not None:
            corrupt[what] = bad
        log.warning(
            "%s (and %d more in this batch); set to NULL (on_bad_record=null)",
            error,
            sum(b is not None for b in bad) - 1,
        )
        return column


def decode_leniently(
    fmt: ValueFormat, raw: list[bytes | None], arrow_type: pa.DataType
) -> tuple[pa.Array, list[bytes | None]]:
    """``raw`` decoded with null for each record that does not decode, and those records' bytes
    (None elsewhere): decoded in runs between the bad records, not one by one."""
    parts: list[pa.Array] = []
    bad: list[bytes | None] = [None] * len(raw)
    start = 0
    while start < len(raw):
        try:
            parts.append(fmt.decode(raw[start:]))
            break
        except DecodeError as exc:
            at = start + exc.index
        if at > start:
            parts.append(fmt.decode(raw[start:at]))
        parts.append(pa.nulls(1, arrow_type))
        bad[at] = raw[at]
        start = at + 1
    return pa.concat_arrays([p.cast(arrow_type) if p.type != arrow_type else p for p in parts]), bad


def _offsets_text(offsets: Any) -> Any:
    """An offsets option as its text: a ``{"topic:partition": offset}`` map as JSON, None as None."""
    if isinstance(offsets, dict):
        return json.dumps(offsets)
    return offsets if offsets is None else str(offsets)


#: ``sources.kafka``: the class is the factory, so its parameters are written once.
kafka_source = KafkaSource


__all__ = ["KafkaSource", "kafka_source"]
