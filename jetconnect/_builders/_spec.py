"""The spec every built source carries: the builder's functions and settings, immutable and picklable."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pyspark.sql.types import StructField, StructType, TimestampType

from jetconnect._builders._contexts import Kind, ProcessorContext, SourceBuffer
from jetconnect._ddl import parse_schema
from jetconnect._options import Options

#: How many executors the job has (set by the Spark adapter): ``distributed(n)`` means n on each.
MEMBERS = "jetconnect.members"


@dataclass(frozen=True)
class SourceSpec:
    kind: Kind
    name: str
    create_fn: Callable[[ProcessorContext], Any]
    fill_buffer_fn: Callable[[Any, SourceBuffer], None] | None = None
    destroy_fn: Callable[[Any], None] | None = None
    create_snapshot_fn: Callable[[Any], Any] | None = None
    restore_snapshot_fn: Callable[[Any, Any], None] | None = None
    local_parallelism: int | None = None  # None: not distributed, one processor in the whole job
    schema: StructType = field(default_factory=lambda: parse_schema("value string"))
    timestamp_column: str = "event_time"
    allowed_lateness_ms: int = 0
    acknowledge_fn: Callable[[Any], None] | None = None
    #: Identifies the built source in executor caches of live processors (same after pickling).
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    def total_parallelism(self, options: Options) -> int:
        """Processors in the job: ``local_parallelism`` on each member once distributed, else one."""
        if self.local_parallelism is None:
            return 1
        return self.local_parallelism * options.get_int(MEMBERS, 1, minimum=1)

    @cached_property
    def output_schema(self) -> StructType:
        """The items' schema, plus the event-time column for a timestamped stream.

        Cached: converting it to Arrow per batch is keyed by the object, so it must be one object.
        """
        if self.kind != "timestamped_stream":
            return self.schema
        return StructType([*self.schema.fields, StructField(self.timestamp_column, TimestampType(), False)])
