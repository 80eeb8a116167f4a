"""How a read is cut into Spark partitions: one query, column ranges, or a user function (Jet's form).

A split is a small picklable value planned on the driver and read on an executor. Range splits
follow Spark's own JDBC source: the bounds only decide the stride, never filter, so the first
split also takes values below the lower bound and NULLs, and the last takes values above the upper.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa


@dataclass(frozen=True)
class WholeSplit:
    """The whole query, read by one task."""

    index: int = 0


@dataclass(frozen=True)
class RangeSplit:
    """``lower <= column < upper``; an open end is None; ``with_nulls`` adds ``column IS NULL``."""

    index: int
    lower: Any
    upper: Any
    with_nulls: bool

    def condition(self, column: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        parts = []
        if self.lower is not None:
            parts.append(column >= self.lower)
        if self.upper is not None:
            parts.append(column < self.upper)
        condition = sa.and_(*parts) if parts else sa.true()
        return sa.or_(condition, column.is_(None)) if self.with_nulls else condition


@dataclass(frozen=True)
class FunctionSplit:
    """Partition ``index`` of ``parallelism``, whose rows come from the user's ``partitions_fn``."""

    index: int
    parallelism: int


Split = WholeSplit | RangeSplit | FunctionSplit


def range_splits(lower: Any, upper: Any, count: int) -> list[RangeSplit]:
    """``count`` splits of equal stride between ``lower`` and ``upper`` (fewer if the range is small)."""
    if count <= 1 or lower is None or upper is None or not lower < upper:
        return [RangeSplit(0, None, None, with_nulls=True)]
    if isinstance(lower, int) and not isinstance(lower, bool):
        count = min(count, upper - lower)
    cuts = [_point(lower, upper, i, count) for i in range(1, count)]
    cuts = sorted({c for c in cuts if lower < c < upper})  # coarse types (dates) collapse neighbours
    bounds: list[Any] = [None, *cuts, None]
    return [RangeSplit(i, bounds[i], bounds[i + 1], with_nulls=(i == 0)) for i in range(len(bounds) - 1)]


def _point(lower: Any, upper: Any, i: int, count: int) -> Any:
    if isinstance(lower, int):
        return lower + (upper - lower) * i // count
    if isinstance(lower, (float, decimal.Decimal)):
        return lower + (upper - lower) * i / count
    if isinstance(lower, datetime.datetime):
        return lower + (upper - lower) * i / count
    if isinstance(lower, datetime.date):
        return lower + datetime.timedelta(days=(upper - lower).days * i // count)
    raise TypeError(f"cannot partition by values of type {type(lower).__name__}")


def function_splits(parallelism: int) -> Sequence[FunctionSplit]:
    return [FunctionSplit(i, parallelism) for i in range(parallelism)]
