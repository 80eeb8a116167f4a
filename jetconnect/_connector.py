"""The contracts a connector implements; the Spark adapter turns them into Spark data sources.

Two ways to write a connector:

* the builders (:mod:`jetconnect._builders`), Jet's ``create_fn`` / ``fill_buffer_fn`` model, for a
  source that pulls items or a sink that receives rows;
* these classes directly, for a system that knows its partitions and positions (Kafka, an event
  journal, files): a :class:`BatchSource` lists splits and reads one, a :class:`StreamSource`
  reports the latest position per partition and reads the exact range ``[start, end)`` of one
  partition, and a :class:`Sink` writes one Spark partition and commits a whole batch.

Everything here must pickle: the driver plans, executors read and write, and a streaming commit
runs in yet another Python process (see docs/ARCHITECTURE.md section 4).
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Union

import pyarrow as pa

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, Row, SparkSession
    from pyspark.sql.streaming import StreamingQuery
    from pyspark.sql.types import StructType

#: A JSON value: what a partition's position may be inside an offset.
Json = Any
#: A streaming offset: ``{partition: position}``, stored verbatim by Spark in ``offsets/N``.
Offset = dict[str, Json]
#: What a read yields: Arrow record batches (fast) or rows (tuples, dicts, Rows; converted).
ReadOutput = Iterator[Union[pa.RecordBatch, tuple, dict, "Row"]]


#: The Spark adapter (:mod:`jetconnect.spark`), which plugs itself in when it is imported: the
#: contracts' convenience methods (``source.read(spark)``, ``sink.write(df)``) reach Spark through it
#: without importing the package that imports them. ``import jetconnect`` always loads it.
_adapter: Any = None


def plug_spark_adapter(adapter: Any) -> None:
    """Called once by :mod:`jetconnect.spark`: the module whose ``read``/``write`` functions the methods call."""
    global _adapter
    _adapter = adapter


def _spark_adapter() -> Any:
    if _adapter is None:  # cannot happen after `import jetconnect`, which imports the adapter
        raise RuntimeError("jetconnect's Spark adapter is not loaded: import jetconnect.spark")
    return _adapter


class Guarantee(str, enum.Enum):
    """What a connector promises after a crash and a restart from the checkpoint."""

    EXACTLY_ONCE = "exactly-once"
    AT_LEAST_ONCE = "at-least-once"
    AT_MOST_ONCE = "at-most-once"
    NONE = "none"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class GuaranteeOption:
    """An option that changes a connector's guarantee: its name, what each value gives, the default.

    Declared on the class (``guarantee_option``) so that ``jetconnect plugins`` and the README's
    matrix, which cannot build a connector without its options, list each value's guarantee.
    """

    name: str
    values: Mapping[str, Guarantee]
    default: str

    def __post_init__(self) -> None:
        if self.default not in self.values:
            raise ValueError(f"guarantee option '{self.name}': default {self.default!r} is not one of its values")

    def guarantee(self, value: str) -> Guarantee:
        """The guarantee of a connector built with ``name=value``."""
        return self.values[value]


class Source(ABC):
    """Something Spark can read. Subclass :class:`BatchSource`, :class:`StreamSource` or both."""

    #: Registered name, shown in errors and in ``jetconnect plugins``.
    name: str = "source"
    #: What a restart from the checkpoint gives; ``jetconnect plugins`` reads it here, not at ``register()``.
    guarantee: Guarantee = Guarantee.EXACTLY_ONCE
    #: The option that changes :attr:`guarantee`, if one does (see :class:`GuaranteeOption`).
    guarantee_option: ClassVar[GuaranteeOption | None] = None

    @abstractmethod
    def schema(self) -> StructType:
        """The Spark schema of every row this source produces (called on the driver)."""

    def bind_schema(self, schema: StructType) -> None:
        """Spark settled this read's schema (from :meth:`schema` on the driver, in another process
        perhaps): a source whose :meth:`schema` learns it from the data keeps this one, so that no
        executor learns it again, maybe otherwise. Called where the reader is made, before it is
        sent to the executors; the default ignores it."""

    def with_options(self, options: Mapping[str, str]) -> Source:
        """A copy configured with extra Spark options; the default ignores them."""
        return self

    def read(self, spark: SparkSession, **options: Any) -> DataFrame:
        """A batch DataFrame of this source."""
        return _spark_adapter().read(self, spark, **options)

    def read_stream(self, spark: SparkSession, **options: Any) -> DataFrame:
        """A streaming DataFrame of this source (options: ``max_records_per_batch``)."""
        return _spark_adapter().read_stream(self, spark, **options)


class BatchSource(Source):
    """A bounded source cut into independent splits, each read by one Spark task."""

    @abstractmethod
    def splits(self) -> Sequence[Any]:
        """Picklable descriptions of the parts to read (driver side); one Spark partition each."""

    @abstractmethod
    def read_split(self, split: Any) -> ReadOutput:
        """Read one split (executor side): Arrow batches or rows matching :meth:`schema`."""

    def push_filters(self, filters: list[Any]) -> list[Any]:
        """Take the Spark filters this source can apply itself; return the ones it cannot.

        Called only when ``spark.sql.python.filterPushdown.enabled`` is true. The source must
        remember what it accepted (it is pickled after this call).
        """
        return filters


@dataclass(frozen=True)
class Range:
    """The records of one partition from position ``start`` (inclusive) to ``end`` (exclusive)."""

    partition: str
    start: Json
    end: Json


class StreamSource(Source):
    """An unbounded source whose positions are replayable: the *range form* of docs/ARCHITECTURE.md section 3.

    Contract: reading the same :class:`Range` twice yields the same records in the same order.
    Do not derive the latest offset from state in memory: derive it from ``start`` and from the
    external system (Spark does not check that offsets move forward after a restart).

    Lifecycle, as Spark drives it (facts measured on PySpark 4.x, docs/ARCHITECTURE.md section 3):

    * The driver-side methods run in one Python process per query, kept between micro-batches;
      the object is pickled to it, so memory there is a cache, never the truth.
    * :meth:`read_range` runs in executor tasks, each in whatever Python worker Spark picks: a
      range may be read more than once (a retried task, a micro-batch replayed after a restart,
      a second action on the batch), and a planned range may never be read at all.
    * :meth:`stop` may never be called: Spark skips it now and then (e.g. after replacing the
      reader's process under load) and ``query.stop()`` may end the process with SIGTERM instead.
      Anything that must end with the query needs another sign that the query is gone.
    """

    #: ``(column, delay)`` for ``withWatermark``, e.g. ``("timestamp", "2 seconds")``; or None.
    watermark: tuple[str, str] | None = None

    @abstractmethod
    def initial_offset(self) -> Offset:
        """Where a new query starts (a restarted query starts from its checkpoint instead)."""

    @abstractmethod
    def latest_offset(self, start: Offset, max_records: int | None) -> Offset:
        """How far data goes now, reading at most ``max_records`` past ``start`` when not None."""

    def ranges(self, start: Offset, end: Offset) -> Sequence[Range]:
        """The ranges to read between two offsets; by default one per partition that moved."""
        return [
            Range(partition, start.get(partition), end_pos)
            for partition, end_pos in end.items()
            if start.get(partition) != end_pos
        ]

    @abstractmethod
    def read_range(self, range_: Range) -> ReadOutput:
        """Read exactly the records of ``range_`` (executor side).

        May be called again for the same range, in another worker: it must yield the same records.
        """

    def commit(self, end: Offset) -> None:
        """Spark has processed everything up to ``end``: trim logs, acknowledge upstream."""

    def stop(self) -> None:
        """The query stopped: release connections held by the driver-side reader.

        Spark may never call it (see the class's lifecycle): never the only way something stops.
        """

    def prepare_available_now(self) -> None:
        """Called before a ``Trigger.AvailableNow`` query: pin what 'available now' means."""


@dataclass(frozen=True)
class WriteKey:
    """What makes one streaming write idempotent: a query's micro-batch partition.

    Spark re-delivers a micro-batch under the same ``(query_id, batch_id, partition_id)`` after a
    crash between write and commit, so an exactly-once sink records this key with the data and
    skips a key it finds. :meth:`text` is its one spelling in markers, headers and file names.
    """

    query_id: str
    batch_id: int
    partition_id: int

    def text(self, sep: str = ":") -> str:
        """``query:batch:partition`` (or joined by ``sep``): the key where it must be a string."""
        return sep.join((self.query_id, str(self.batch_id), str(self.partition_id)))

    @property
    def writer(self) -> str:
        """``query/partition``: the writer this key belongs to, the same in every micro-batch."""
        return f"{self.query_id}/{self.partition_id}"


@dataclass(frozen=True)
class WriteContext:
    """What one Spark write task knows about itself."""

    partition_id: int
    attempt: int
    #: Micro-batch id for streaming writes, None for batch writes.
    batch_id: int | None
    #: The streaming query's id: stable across restarts from the same checkpoint. None in batch.
    query_id: str | None
    schema: StructType
    overwrite: bool = False
    options: Mapping[str, str] = field(default_factory=dict)

    @property
    def key(self) -> WriteKey | None:
        """The idempotence key of this write: None outside a streaming query (batch writes)."""
        if self.query_id is None or self.batch_id is None:
            return None
        return WriteKey(self.query_id, self.batch_id, self.partition_id)


@dataclass(frozen=True)
class CommitContext:
    """What the driver knows when it commits or aborts a whole write (batch or micro-batch)."""

    batch_id: int | None
    query_id: str | None
    overwrite: bool = False
    options: Mapping[str, str] = field(default_factory=dict)


class Sink(ABC):
    """Something Spark can write to: tasks write partitions, the driver commits the batch.

    For exactly-once, make the effect of ``(query_id, batch_id, partition_id)`` idempotent: Spark
    re-delivers a micro-batch with the same id after a crash between write and commit, and never
    calls :meth:`abort` after a hard crash, so leftovers of a killed attempt must be found and
    cleaned or ignored. :meth:`commit` runs in a fresh process: only the messages carry state.
    """

    name: str = "sink"
    #: What a restart from the checkpoint gives; ``jetconnect plugins`` reads it here, not at ``register()``.
    guarantee: Guarantee = Guarantee.AT_LEAST_ONCE
    #: The option that changes :attr:`guarantee`, if one does: the Kafka sink's ``delivery``.
    guarantee_option: ClassVar[GuaranteeOption | None] = None
    #: ``"arrow"``: :meth:`write_partition` gets ``pyarrow.RecordBatch`` objects; ``"rows"``: pyspark Rows.
    input_format: str = "arrow"

    def with_options(self, options: Mapping[str, str]) -> Sink:
        """A copy configured with extra Spark options; the default ignores them."""
        return self

    def check_schema(self, schema: StructType) -> None:
        """Raise :class:`~jetconnect.errors.SchemaError` if rows of ``schema`` cannot be written."""

    def check_connection(self) -> str | None:
        """Contact the server as a write would (connect, TLS handshake, log in) without writing
        anything, and say what was checked; raise what a write would raise when it cannot.

        ``jetconnect doctor --sink`` calls it. None (the default) means the sink has no way to
        reach its server without writing, and the doctor says so.
        """
        return None

    @abstractmethod
    def write_partition(self, data: Iterator[Any], ctx: WriteContext) -> Any:
        """Write one partition; return a picklable message for :meth:`commit` (or None)."""

    def commit(self, messages: list[Any], ctx: CommitContext) -> None:
        """Make the whole batch visible; must be idempotent per ``ctx.batch_id``."""

    def abort(self, messages: list[Any], ctx: CommitContext) -> None:
        """Undo what the tasks wrote; a best effort, as Spark skips it after a hard crash."""

    def write(self, df: DataFrame, **options: Any) -> None:
        """Write a batch DataFrame to this sink."""
        _spark_adapter().write(self, df, **options)

    def write_stream(
        self,
        df: DataFrame,
        checkpoint_location: str,
        trigger: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> StreamingQuery:
        """Start a streaming query writing ``df`` here, committed per micro-batch."""
        return _spark_adapter().write_stream(
            self, df, checkpoint_location=checkpoint_location, trigger=trigger, **options
        )


__all__ = [
    "BatchSource",
    "CommitContext",
    "Guarantee",
    "GuaranteeOption",
    "Json",
    "Offset",
    "Range",
    "ReadOutput",
    "Sink",
    "Source",
    "StreamSource",
    "WriteContext",
]
