"""What kind of Python value an item holds, the unit the exact conversion's rules are written in.

A column of a given Spark type takes values of a few kinds only (an integer column: ints and None;
a timestamp column: datetimes and None), whatever their class: numpy's integers are ints, pandas'
``NaT`` is no datetime. :func:`require` checks a column's values against the kinds it takes and
raises :class:`Mismatch`, the error the conversion passes up until it knows the item and column.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pyspark.sql.types import Row

from jetconnect._short_repr import short_repr

try:  # numpy scalars are numbers too (pandas, which jetconnect depends on, brings numpy)
    import numpy as _np

    _NP_BOOL: tuple[type, ...] = (_np.bool_,)
    _NP_INT: tuple[type, ...] = (_np.integer,)
    _NP_FLOAT: tuple[type, ...] = (_np.floating,)
except ImportError:  # pragma: no cover
    _NP_BOOL = _NP_INT = _NP_FLOAT = ()


@enum.unique
class ValueKind(enum.IntEnum):
    """The kind of value a class holds.

    An ``IntEnum`` because rows are sorted by kind one by one: its members hash and compare in C,
    where a plain ``Enum``'s ``__hash__`` is Python code (measured 3x slower in a set). Looking a
    member up (``ValueKind.DICT``) costs ~0.2 µs on Python 3.11, so loops over items bind the
    members they compare with before the loop.
    """

    NONE = enum.auto()
    BOOL = enum.auto()
    INT = enum.auto()
    FLOAT = enum.auto()
    DECIMAL = enum.auto()
    STR = enum.auto()
    BYTES = enum.auto()
    DATE = enum.auto()
    DATETIME = enum.auto()
    SEQUENCE = enum.auto()  # a tuple or list: a row by position
    DICT = enum.auto()  # any Mapping: a row by name
    NAMED = enum.auto()  # a namedtuple: a row by name
    ROW = enum.auto()  # a pyspark Row: by name when it has field names (Row(a=1)), else by position (Row(1))
    OTHER = enum.auto()


#: The kinds that are rows, which a struct column (and the item of a schema) is made of.
ROW_KINDS = frozenset({ValueKind.SEQUENCE, ValueKind.DICT, ValueKind.NAMED, ValueKind.ROW})

_kinds: dict[type, ValueKind] = {}


def kind_of(cls: type) -> ValueKind:
    """The kind of the values of class ``cls`` (kept per class: this runs once per item for rows)."""
    kind = _kinds.get(cls)
    if kind is None:
        kind = _classify(cls)
        if len(_kinds) < 4096:  # classes made on the fly must not grow this without end
            _kinds[cls] = kind
    return kind


def _classify(cls: type) -> ValueKind:  # noqa: PLR0911 - one answer per kind
    if cls is type(None):
        return ValueKind.NONE
    if issubclass(cls, (bool, *_NP_BOOL)):  # before int: bool is an int to Python
        return ValueKind.BOOL
    if issubclass(cls, (int, *_NP_INT)):
        return ValueKind.INT
    if issubclass(cls, (float, *_NP_FLOAT)):
        return ValueKind.FLOAT
    if issubclass(cls, Decimal):
        return ValueKind.DECIMAL
    if issubclass(cls, str):
        return ValueKind.STR
    if issubclass(cls, (bytes, bytearray, memoryview)):
        return ValueKind.BYTES
    if cls.__name__ == "NaTType":  # pandas' missing datetime is a datetime whose methods raise: no value
        return ValueKind.OTHER
    if issubclass(cls, dt.datetime):  # before date: a datetime is a date to Python
        return ValueKind.DATETIME
    if issubclass(cls, dt.date):
        return ValueKind.DATE
    if issubclass(cls, Row):
        return ValueKind.ROW
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return ValueKind.NAMED
    if issubclass(cls, (tuple, list)):
        return ValueKind.SEQUENCE
    if issubclass(cls, Mapping):
        return ValueKind.DICT
    return ValueKind.OTHER


class Mismatch(Exception):
    """Values that do not fit a type: ``path`` names the nested field, ``index`` the item when known."""

    def __init__(self, reason: str, path: tuple[str, ...] = (), index: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path
        self.index = index

    def under(self, step: str) -> Mismatch:
        return Mismatch(self.reason, (step, *self.path), self.index)


def require(values: list[Any], expected: str, *kinds: ValueKind) -> None:
    """Raise naming the first value that is neither None nor of one of ``kinds``; cheap: one pass in C.

    ``expected`` says what the column takes, as in "is not {expected}".
    """
    allowed = {ValueKind.NONE, *kinds}
    classes = set(map(type, values))
    bad = [cls for cls in classes if kind_of(cls) not in allowed]
    if bad:
        value = next(v for v in values if type(v) in bad)
        raise Mismatch(f"{short_repr(value, 80)} ({type(value).__name__}) is not {expected}")


__all__ = ["ROW_KINDS", "Mismatch", "ValueKind", "kind_of", "require"]
