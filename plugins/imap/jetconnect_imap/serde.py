"""How keys and values are stored: canonical JSON text, and the partition a key lives in.

The partition is a stable hash (CRC-32) of the serialised key, never Python's ``hash``: it must
be the same in every process and on every machine, or two writers would disagree on where a
key lives.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
import zlib
from typing import Any

#: Jet's (and Hazelcast's) default partition count.
DEFAULT_PARTITIONS = 271


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
_encode_str = json.encoder.encode_basestring  # what _ENCODER does to a str, without its overhead


def dumps(value: Any) -> str:
    """Canonical JSON text of ``value`` (sorted keys, no spaces): equal values, equal text."""
    # Strings and integers are most keys and values: skip the encoder's per-call set-up for them.
    kind = type(value)
    if kind is str:
        return _encode_str(value)
    if kind is int:
        return int.__repr__(value)
    return _ENCODER.encode(value)


def loads(text: str | bytes | None) -> Any:
    """The value stored as ``text`` (None stays None: an absent entry)."""
    return None if text is None else json.loads(text)


def text_of(serialised: str | None) -> str | None:
    """What a STRING column shows of a stored value: the string itself, null for JSON null (a
    null key must not read back as the text 'null', which is another key), or the JSON text of
    anything else (the stored text already is that JSON, so most values need no decoding)."""
    if serialised is None or serialised == "null":
        return None
    if serialised[:1] != '"':
        return serialised
    return json.loads(serialised)


def partition_of(serialised_key: str, partitions: int = DEFAULT_PARTITIONS) -> int:
    """The partition of a serialised key: CRC-32 of its UTF-8 bytes modulo ``partitions``."""
    return zlib.crc32(serialised_key.encode()) % partitions
