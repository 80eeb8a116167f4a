"""The batch source a :class:`SourceBuilder` builds: one Spark task per processor."""

from __future__ import annotations

from typing import Any

from pyspark.sql.types import StructType

from jetconnect.arrow import DEFAULT_BATCH_ROWS
from jetconnect.builders._processor import Idle, Items, Processor
from jetconnect.builders._source_builder import SourceSpec
from jetconnect.connector import BatchSource, Guarantee, ReadOutput
from jetconnect.options import Options


class BuilderBatchSource(BatchSource):
    """A batch source made by :class:`SourceBuilder`: one split per processor."""

    guarantee = Guarantee.EXACTLY_ONCE

    def __init__(self, spec: SourceSpec, options: Options | None = None) -> None:
        self.spec = spec
        self.name = spec.name
        self.options = options or Options(owner=f"source '{spec.name}'")

    def with_options(self, options: Any) -> "BuilderBatchSource":
        return BuilderBatchSource(self.spec, self.options.merged(options))

    def schema(self) -> StructType:
        return self.spec.schema

    @property
    def total_parallelism(self) -> int:
        return self.spec.total_parallelism(self.options)

    def splits(self) -> list[int]:
        return list(range(self.total_parallelism))

    def read_split(self, split: int) -> ReadOutput:
        processor = Processor(self.spec, split, self.total_parallelism, self.options)
        items = Items(self.spec)
        idle = Idle()
        try:
            while True:
                buf = processor.fill()
                items.extend(buf)
                if len(items) >= DEFAULT_BATCH_ROWS:
                    yield items.take_batch()
                if buf.closed:
                    break
                idle.after(len(buf))
            if len(items):
                yield items.take_batch()
        finally:
            processor.destroy()
