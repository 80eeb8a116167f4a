"""Fuzzing what a stream source is handed back from a checkpoint (for jetconnect's tests and yours).

Spark keeps a stream's offsets as JSON in ``checkpoint/offsets/N``, a file anyone can edit or a
disk can damage. :func:`exercise` hands a source such an offset in every call that takes one;
the contract is that each call works or raises a :class:`~jetconnect.errors.JetconnectError`
(an ``OffsetError`` naming the entry), never a bare ``KeyError``/``TypeError``/``ValueError``.
Use it with Hypothesis (``pip install jetconnect[test]``)::

    @given(data=st.data())
    def test_my_source_offsets(data):
        exercise(source, start, end, data.draw(edited(end)))
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

from jetconnect._connector import StreamSource
from jetconnect.errors import JetconnectError

#: Any JSON value Spark could read back, with the strings hostile offsets use.
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["..", "../../etc/passwd", "/", "%00", "id", "0", "run"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def edited(valid: dict) -> st.SearchStrategy:
    """``valid`` with one entry removed, replaced or added, or one value deep inside it replaced."""

    def paths(value, prefix=()):
        yield prefix
        if isinstance(value, dict):
            for key, inner in value.items():
                yield from paths(inner, (*prefix, key))

    def parent(offset, path):
        """The dict holding the last key of ``path`` inside ``offset``."""
        for key in path[:-1]:
            offset = offset[key]
        return offset

    def replace(path, new):
        if not path:
            return new
        offset = copy.deepcopy(valid)
        parent(offset, path)[path[-1]] = new
        return offset

    def remove(path):
        offset = copy.deepcopy(valid)
        del parent(offset, path)[path[-1]]
        return offset

    every = list(paths(valid))
    return st.one_of(
        st.tuples(st.sampled_from(every), JSON).map(lambda pair: replace(*pair)),
        st.sampled_from([p for p in every if p]).map(remove) if len(every) > 1 else st.nothing(),
        st.tuples(st.text(max_size=6), JSON).map(lambda pair: {**copy.deepcopy(valid), pair[0]: pair[1]}),
    )


def exercise(source: StreamSource, valid_start: dict, valid_end: dict, offset: Any) -> None:
    """Every driver and executor call that takes a checkpointed offset, with ``offset`` in it."""
    calls = [
        lambda: source.latest_offset(offset, None),
        lambda: source.latest_offset(offset, 5),
        lambda: source.ranges(offset, valid_end),
        lambda: [list(source.read_range(r)) for r in source.ranges(valid_start, offset)],
        lambda: [list(source.read_range(r)) for r in source.ranges(offset, copy.deepcopy(offset))],
    ]
    for call in calls:
        try:
            call()
        except JetconnectError:
            pass  # a typed error is a right answer (its text is checked by each source's own tests)


__all__ = ["JSON", "edited", "exercise"]
