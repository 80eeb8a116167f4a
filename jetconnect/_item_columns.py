"""Items split into columns: one list of values per field of a schema or struct.

An item is a row: a tuple or list (by position), a dict, a ``Row`` with field names or a namedtuple
(by name). Splitting checks the shape only (the width, the names, a NOT NULL column present); the
values are checked column by column afterwards, by the rules of each column's type.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from operator import countOf, itemgetter
from typing import Any

import pyarrow as pa

from jetconnect._short_repr import short_repr
from jetconnect._value_kinds import ROW_KINDS, Mismatch, ValueKind, kind_of

_PLAIN_ROWS = frozenset({tuple, list})


def split_items(records: list[Any], fields: list[pa.Field], top: bool) -> tuple[list[list[Any]], list[bool] | None]:
    """Records as one list of values per field, and which records are None (a null struct).

    At the top (``top``) a record that is not a row is a bare value, allowed for one column only.
    """
    width = len(fields)
    # the common case, checked and split in C: all tuples (counted: cheaper than a set of types), or lists
    if countOf(map(type, records), tuple) == len(records) or set(map(type, records)) <= _PLAIN_ROWS:
        try:
            if width == 1:
                return [[v for (v,) in records]], None  # unpacking checks the width too
            if set(map(len, records)) - {width}:
                raise ValueError
        except ValueError:
            index = next(i for i, r in enumerate(records) if len(r) != width)
            raise Mismatch(_count(len(records[index]), width), index=index) from None
        return _transpose(records, width), None
    names = [f.name for f in fields]
    resolve = _Resolver(names, [f.name for f in fields if not f.nullable])
    rows: list[Sequence[Any]] = []
    mask: list[bool] | None = None
    dict_kind = ValueKind.DICT  # looked up once: see ValueKind
    for index, record in enumerate(records):
        kind = kind_of(type(record))
        try:
            if kind in ROW_KINDS:
                if top and kind is dict_kind and not record:
                    # it would be a row of NULLs: nearly always a function that built nothing
                    raise Mismatch("an empty dict is not a row: it names none of the columns")
                rows.append(_resolved(resolve, record, kind))
            elif top and width == 1:
                rows.append((record,))
            elif record is None and not top:
                rows.append((None,) * width)
                if mask is None:
                    mask = [False] * index
                mask.append(True)
                continue
            else:
                what = "item" if top else "struct value"
                raise Mismatch(
                    f"{short_repr(record, 80)} ({type(record).__name__}) is not a row: "
                    f"an {what} for {width} columns is a tuple, list, dict or Row"
                )
        except Mismatch as exc:
            exc.index = index
            raise
        if mask is not None:
            mask.append(False)
    return _transpose(rows, width), mask


def _resolved(resolve: _Resolver, record: Any, kind: ValueKind) -> Sequence[Any]:
    try:
        return resolve(record, kind)
    except (Mismatch, MemoryError):
        raise
    except Exception as exc:  # a Mapping or sequence of the user's that fails to be read: name it
        raise Mismatch(f"{type(exc).__name__}: {exc}") from None


def _transpose(rows: list[Sequence[Any]], width: int) -> list[list[Any]]:
    # One pass in C per column; faster than zip(*rows) or slicing a flattened list (measured).
    return [list(map(itemgetter(i), rows)) for i in range(width)]


def _count(values: int, columns: int) -> str:
    return f"{values} value{'' if values == 1 else 's'} for {columns} column{'' if columns == 1 else 's'}"


class _Resolver:
    """One row as a tuple in schema order: by position for tuples, by name for dicts and named rows."""

    def __init__(self, names: list[str], required: list[str]) -> None:
        self.names = names
        self.known = set(names)
        self.required = required
        # one reader per row kind, found by a dict lookup per row (see ValueKind)
        self.readers: dict[ValueKind, Callable[[Any], Sequence[Any]]] = {
            ValueKind.DICT: self.by_name,
            ValueKind.NAMED: self.by_namedtuple,
            ValueKind.ROW: self.by_row,
            ValueKind.SEQUENCE: self.by_position,
        }

    def __call__(self, record: Any, kind: ValueKind) -> Sequence[Any]:
        return self.readers[kind](record)

    def by_namedtuple(self, record: Any) -> Sequence[Any]:
        return self.by_name(record._asdict())

    def by_row(self, record: Any) -> Sequence[Any]:
        if not hasattr(record, "__fields__"):  # Row(1, 2): by position
            return self.by_position(record)
        fields = record.__fields__
        if len(set(fields)) != len(fields):
            twice = next(f for f in fields if fields.count(f) > 1)
            raise Mismatch(f"the Row has the field '{twice}' twice; which one is meant is unclear", path=(str(twice),))
        if fields == self.names:  # same names, same order: nothing to move
            return record
        return self.by_name(dict(zip(fields, record)))

    def by_position(self, record: Any) -> Sequence[Any]:
        if len(record) != len(self.names):  # a tuple, list or Row(1, 2)
            raise Mismatch(_count(len(record), len(self.names)))
        return record

    def by_name(self, record: Mapping[Any, Any]) -> tuple[Any, ...]:
        if len(self.names) != len(self.known):
            raise Mismatch("the schema has two columns of the same name, so items cannot be matched by name")
        for key in record:
            if key not in self.known:
                close = difflib.get_close_matches(str(key), self.names, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise Mismatch(
                    f"{short_repr(key, 80, text=True)!r} is not a column of the schema{hint}; "
                    "nothing in an item may be left behind",
                    path=(str(key),),
                )
        for name in self.required:
            if name not in record:
                raise Mismatch(f"the item has no '{name}', a NOT NULL column", path=(name,))
        return tuple(map(record.get, self.names))


__all__ = ["split_items"]
