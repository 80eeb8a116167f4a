"""``SourceBuilder``: Jet's fluent source builder, and the spec every built source carries."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Generic, TypeVar, cast

from pyspark.sql.types import StructType

from jetconnect._builders._batch_source import BuilderBatchSource
from jetconnect._builders._contexts import ProcessorContext, SourceBuffer
from jetconnect._builders._spec import SourceSpec
from jetconnect._builders._stream_source import BuilderStreamSource
from jetconnect._ddl import parse_schema
from jetconnect._options import PLAIN_NAME, check_count
from jetconnect.errors import OptionError, SourceError

S = TypeVar("S")
#: What ``build()`` gives: chosen by the constructor (``batch`` or ``stream``/``timestamped_stream``).
P = TypeVar("P", bound="BuilderBatchSource | BuilderStreamSource")


class SourceBuilder(Generic[S, P]):
    """Fluent builder of a source; every method returns a new builder (builders can be shared).

    ``S`` is the processor's state (what ``create_fn`` returns), ``P`` the built source's class, so
    ``SourceBuilder.stream(...)...build()`` is typed as a stream source.

    None is never an item, as in Jet (whose buffer refuses a null): ``buf.add(None)`` and a None
    among ``buf.add_all(items)`` are a :class:`SourceError` naming the source, since they are nearly
    always a helper that forgot its ``return``; add ``(None,)`` for a row of NULLs. A *mapping*
    function a connector applies (a lines or whole-file ``mapper``, a JMS or Kafka ``projection``)
    follows Jet's rule instead: returning None leaves the item out
    (:func:`jetconnect.api.mapped_rows`). ``buf.add_all`` of a string, bytes or a mapping, and an
    empty dict as a row, are refused rather than read as characters, bytes, keys or NULLs.
    """

    def __init__(self, spec: SourceSpec) -> None:
        self._spec = spec

    @staticmethod
    def batch(name: str, create_fn: Callable[[ProcessorContext], S]) -> SourceBuilder[S, BuilderBatchSource]:
        """A finite source: ``fill_buffer_fn`` calls ``buf.close()`` when it is done."""
        return SourceBuilder(SourceSpec("batch", _check_name(name), create_fn))

    @staticmethod
    def stream(name: str, create_fn: Callable[[ProcessorContext], S]) -> SourceBuilder[S, BuilderStreamSource]:
        """An infinite source: ``fill_buffer_fn`` adds what is available now and returns."""
        return SourceBuilder(SourceSpec("stream", _check_name(name), create_fn))

    @staticmethod
    def timestamped_stream(
        name: str, create_fn: Callable[[ProcessorContext], S]
    ) -> SourceBuilder[S, BuilderStreamSource]:
        """A stream whose items carry event times: an event-time column and a watermark on it."""
        return SourceBuilder(SourceSpec("timestamped_stream", _check_name(name), create_fn))

    def _with(self, **changes: Any) -> SourceBuilder[S, P]:
        return SourceBuilder(replace(self._spec, token=uuid.uuid4().hex, **changes))

    def fill_buffer_fn(self, fn: Callable[[S, SourceBuffer], None]) -> SourceBuilder[S, P]:
        """Add the items available now to the buffer; called again and again."""
        return self._with(fill_buffer_fn=fn)

    def destroy_fn(self, fn: Callable[[S], None]) -> SourceBuilder[S, P]:
        """Release the state (close connections); called once per processor, also after errors."""
        return self._with(destroy_fn=fn)

    def distributed(self, local_parallelism: int) -> SourceBuilder[S, P]:
        """Run ``local_parallelism`` processors per executor instead of one in the whole job."""
        try:  # the core's one check of a count (True, 1.5 and "2" are not ints either)
            local_parallelism = check_count(local_parallelism, "distributed", f"source '{self._spec.name}'")
        except OptionError:
            raise SourceError(
                f"source '{self._spec.name}': distributed() needs a positive int, got {local_parallelism!r}"
            ) from None
        return self._with(local_parallelism=local_parallelism)

    def schema(self, schema: str | StructType) -> SourceBuilder[S, P]:
        """The items' schema as DDL (``"id bigint, name string"``) or a StructType."""
        return self._with(schema=parse_schema(schema))

    def create_snapshot_fn(self, fn: Callable[[S], Any]) -> SourceBuilder[S, P]:
        """Return the processor's position as a JSON value (stored in Spark's offset log)."""
        return self._with(create_snapshot_fn=fn)

    def restore_snapshot_fn(self, fn: Callable[[S, Any], None]) -> SourceBuilder[S, P]:
        """Move a fresh state to a position taken by ``create_snapshot_fn``, deterministically."""
        return self._with(restore_snapshot_fn=fn)

    def acknowledge_fn(self, fn: Callable[[S], None]) -> SourceBuilder[S, P]:
        """Called in the processor's task once what its fills added is durable in the round log.

        Not in Jet: a message broker acknowledges here, so a message is acknowledged only after
        a restart can replay it (streams without snapshot functions).
        """
        return self._with(acknowledge_fn=fn)

    def allowed_lateness(self, millis: int) -> SourceBuilder[S, P]:
        """How late an event may be, in ms: the watermark delay of the event-time column."""
        if self._spec.kind != "timestamped_stream":
            raise SourceError(f"source '{self._spec.name}': allowed_lateness() is for timestamped streams")
        millis = check_count(millis, "allowed_lateness", f"source '{self._spec.name}'", minimum=0)
        return self._with(allowed_lateness_ms=millis)

    def timestamp_column(self, name: str) -> SourceBuilder[S, P]:
        """Name of the event-time column a timestamped stream adds (default ``event_time``)."""
        if self._spec.kind != "timestamped_stream":
            raise SourceError(f"source '{self._spec.name}': timestamp_column() is for timestamped streams")
        return self._with(timestamp_column=name)

    def build(self) -> P:
        """The source, ready for ``.read(spark)`` (batch) or ``.read_stream(spark)`` (streams)."""
        spec = self._spec
        if spec.fill_buffer_fn is None:
            raise SourceError(f"source '{spec.name}': fill_buffer_fn is required")
        if (spec.create_snapshot_fn is None) != (spec.restore_snapshot_fn is None):
            raise SourceError(f"source '{spec.name}': create_snapshot_fn and restore_snapshot_fn go together")
        if spec.kind == "batch":
            if spec.create_snapshot_fn is not None:
                raise SourceError(f"source '{spec.name}': a batch source is re-read whole; snapshots are for streams")
            return cast(P, BuilderBatchSource(spec))  # P is BuilderBatchSource: batch() made this builder
        if spec.kind == "timestamped_stream" and spec.timestamp_column in spec.schema.fieldNames():
            raise SourceError(
                f"source '{spec.name}': the schema already has a column '{spec.timestamp_column}'; "
                f"choose another with timestamp_column()"
            )
        return cast(P, BuilderStreamSource(spec))  # P is BuilderStreamSource: stream() made this builder


def _check_name(name: str) -> str:
    # whole names only: "orders\n" would be another source (its format, its wal_location folder)
    if not isinstance(name, str) or not PLAIN_NAME.fullmatch(name):
        raise SourceError(f"a source needs a non-empty name without control characters, got {name!r}")
    return name
