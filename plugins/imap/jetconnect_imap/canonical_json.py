"""Canonical JSON text of values: sorted keys, no spaces, so equal values have equal text.

The embedded store keeps every key and value as this text; the Hazelcast backend sends structs,
maps and arrays as a ``HazelcastJsonValue`` of it; a string column shows a non-string value as it.
Spark's dates, timestamps and decimals become ISO and decimal text, bytes hex.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
from typing import Any


def _default(value: Any) -> Any:
    # Spark hands us dates, timestamps and decimals; JSON has none of them.
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if hasattr(value, "asDict"):  # a pyspark Row
        return value.asDict(recursive=True)
    raise TypeError(f"cannot store a {type(value).__name__} in a map: {value!r}")


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_default)
#: What the encoder does to a str, without its overhead.
encode_str = json.encoder.encode_basestring


def dumps(value: Any) -> str:
    """Canonical JSON text of ``value`` (sorted keys, no spaces): equal values, equal text."""
    # Strings and integers are most keys and values: skip the encoder's per-call set-up for them.
    kind = type(value)
    if kind is str:
        return encode_str(value)
    if kind is int:
        return int.__repr__(value)
    return _ENCODER.encode(value)


def loads(text: str | bytes | None) -> Any:
    """The value stored as ``text`` (None stays None: an absent entry)."""
    return None if text is None else json.loads(text)


__all__ = ["dumps", "encode_str", "loads"]
