"""``SinkBuilder``: Jet's fluent sink builder, and the at-least-once sink it builds."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Generic, Literal, TypeVar

from jetconnect._builders._contexts import SinkContext
from jetconnect._connector import Guarantee, Sink, WriteContext
from jetconnect._options import PLAIN_NAME, Options, check_count
from jetconnect.errors import OptionError, SinkError

S = TypeVar("S")


@dataclass(frozen=True)
class _SinkSpec:
    name: str
    create_fn: Callable[[SinkContext], Any]
    receive_fn: Callable[[Any, Any], None] | None = None
    receive_batch_fn: Callable[[Any, Any], None] | None = None
    batch_format: Literal["rows", "arrow"] = "rows"
    batch_size: int = 1024
    flush_fn: Callable[[Any], None] | None = None
    destroy_fn: Callable[[Any], None] | None = None
    preferred_local_parallelism: int | None = None


class SinkBuilder(Generic[S]):
    """Fluent builder of a sink (Jet's ``SinkBuilder``); every method returns a new builder."""

    def __init__(self, spec: _SinkSpec) -> None:
        self._spec = spec

    @staticmethod
    def sink(name: str, create_fn: Callable[[SinkContext], S]) -> SinkBuilder[S]:
        """A sink whose ``create_fn(ctx)`` makes the state of one writing task."""
        if not isinstance(name, str) or not PLAIN_NAME.fullmatch(name):  # whole names: "x\n" is another sink
            raise SinkError(f"a sink needs a non-empty name without control characters, got {name!r}")
        return SinkBuilder(_SinkSpec(name, create_fn))

    def _with(self, **changes: Any) -> SinkBuilder[S]:
        return SinkBuilder(replace(self._spec, **changes))

    def receive_fn(self, fn: Callable[[S, Any], None]) -> SinkBuilder[S]:
        """Called with the state and each pyspark ``Row``."""
        return self._with(receive_fn=fn, receive_batch_fn=None)

    def receive_batch_fn(
        self, fn: Callable[[S, Any], None], *, format: Literal["rows", "arrow"] = "rows", batch_size: int = 1024
    ) -> SinkBuilder[S]:
        """Called with the state and a list of up to ``batch_size`` Rows, or a ``pyarrow.RecordBatch``."""
        if format not in ("rows", "arrow"):
            raise SinkError(
                f"sink '{self._spec.name}': receive_batch_fn format must be 'rows' or 'arrow', got {format!r}"
            )
        batch_size = check_count(batch_size, "batch_size", f"sink '{self._spec.name}': receive_batch_fn")
        return self._with(receive_batch_fn=fn, receive_fn=None, batch_format=format, batch_size=batch_size)

    def flush_fn(self, fn: Callable[[S], None]) -> SinkBuilder[S]:
        """Called at the end of each task; with ``receive_batch_fn`` also after each batch received."""
        return self._with(flush_fn=fn)

    def destroy_fn(self, fn: Callable[[S], None]) -> SinkBuilder[S]:
        """Release the state; called once per task, also after errors."""
        return self._with(destroy_fn=fn)

    def preferred_local_parallelism(self, n: int) -> SinkBuilder[S]:
        """Write with ``n`` tasks per executor: ``sink.write(df)`` repartitions ``df`` to that."""
        try:  # the core's one check of a count (True, 1.5 and "2" are not ints either)
            n = check_count(n, "preferred_local_parallelism", f"sink '{self._spec.name}'")
        except OptionError:
            raise SinkError(
                f"sink '{self._spec.name}': preferred_local_parallelism needs a positive int, got {n!r}"
            ) from None
        return self._with(preferred_local_parallelism=n)

    def build(self) -> BuilderSink:
        if self._spec.receive_fn is None and self._spec.receive_batch_fn is None:
            raise SinkError(f"sink '{self._spec.name}': receive_fn or receive_batch_fn is required")
        return BuilderSink(self._spec)


class BuilderSink(Sink):
    """A sink made by :class:`SinkBuilder`: at-least-once (a re-delivered batch is received again)."""

    guarantee = Guarantee.AT_LEAST_ONCE

    def __init__(self, spec: _SinkSpec, options: Options | None = None) -> None:
        self.spec = spec
        self.name = spec.name
        self.options = options or Options(owner=f"sink '{spec.name}'")
        self.input_format = "arrow" if spec.receive_batch_fn is not None and spec.batch_format == "arrow" else "rows"
        self.preferred_parallelism = spec.preferred_local_parallelism

    def with_options(self, options: Any) -> BuilderSink:
        return BuilderSink(self.spec, self.options.merged(options))

    def _call(self, where: str, what: str, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except SinkError:
            raise
        except Exception as exc:  # user code may raise anything; the error must say where it was
            raise SinkError(f"{where}: {what} raised {type(exc).__name__}: {exc}") from exc

    def write_partition(self, data: Iterator[Any], ctx: WriteContext) -> None:
        spec = self.spec
        where = f"sink '{self.name}' partition {ctx.partition_id}" + (
            f" batch {ctx.batch_id}" if ctx.batch_id is not None else ""
        )
        sink_ctx = SinkContext(
            sink_name=self.name,
            partition_id=ctx.partition_id,
            attempt=ctx.attempt,
            batch_id=ctx.batch_id,
            query_id=ctx.query_id,
            options=self.options,
            logger=logging.getLogger(f"jetconnect.sink.{self.name}"),
        )
        state = self._call(where, "create_fn", spec.create_fn, sink_ctx)
        try:
            if spec.receive_fn is not None:
                receive = spec.receive_fn
                for row in data:
                    self._call(where, "receive_fn", receive, state, row)
            elif self.input_format == "arrow":
                receive_batch = _batch_fn(spec.receive_batch_fn, self.name)
                for batch in data:
                    self._call(where, "receive_batch_fn", receive_batch, state, batch)
                    self._flush(where, state)
            else:
                receive_batch = _batch_fn(spec.receive_batch_fn, self.name)
                chunk: list[Any] = []
                for row in data:
                    chunk.append(row)
                    if len(chunk) >= spec.batch_size:
                        self._call(where, "receive_batch_fn", receive_batch, state, chunk)
                        self._flush(where, state)
                        chunk = []
                if chunk:
                    self._call(where, "receive_batch_fn", receive_batch, state, chunk)
            self._flush(where, state)
        finally:
            if spec.destroy_fn is not None:
                self._call(where, "destroy_fn", spec.destroy_fn, state)

    def _flush(self, where: str, state: Any) -> None:
        if self.spec.flush_fn is not None:
            self._call(where, "flush_fn", self.spec.flush_fn, state)


def _batch_fn(fn: Callable[[Any, Any], None] | None, sink: str) -> Callable[[Any, Any], None]:
    """The sink's ``receive_batch_fn``; ``build()`` already refused a sink with neither receive function."""
    if fn is None:
        raise SinkError(f"sink '{sink}': receive_fn or receive_batch_fn is required")
    return fn
