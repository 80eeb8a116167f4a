"""How the embedded store keeps keys and values: their canonical JSON text
(:mod:`jetconnect_imap.canonical_json`), whole columns at once, and the partition a key lives in.

The partition is a stable hash (CRC-32) of the serialised key, never Python's ``hash``: it must
be the same in every process and on every machine, or two writers would disagree on where a
key lives.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from typing import cast

import pyarrow as pa
import pyarrow.compute as pc

from jetconnect_imap.backend import DEFAULT_PARTITIONS
from jetconnect_imap.canonical_json import dumps, encode_str
from jetconnect_imap.json_values import json_ready


def dumps_column(column: pa.Array, name: str = "value") -> list[str | None]:
    """``dumps`` of every value of an Arrow column ``name``, None where it is null, a map as a JSON
    object (:func:`~jetconnect_imap.json_values.json_ready`). Integer and string columns, most keys
    and values, are encoded in bulk rather than value by value."""
    kind = column.type
    if pa.types.is_integer(kind):
        return pc.cast(column, pa.string()).to_pylist()  # an integer's JSON is its decimal digits
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return [None if value is None else encode_str(value) for value in column.to_pylist()]
    return [None if value is None else dumps(value) for value in json_ready(column, name)]


def dumps_keys(column: pa.Array, name: str = "key") -> list[str]:
    """``dumps`` of every key of an Arrow column: a null key is the key ``null``, as ``dumps(None)``."""
    texts = dumps_column(column, name)
    return ["null" if text is None else text for text in texts] if column.null_count else cast(list[str], texts)


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


def partitions_of(serialised_keys: Sequence[str], partitions: int = DEFAULT_PARTITIONS) -> list[int]:
    """``partition_of`` each key, in one pass (a sink task hashes every key it writes)."""
    crc32 = zlib.crc32
    return [crc32(key.encode()) % partitions for key in serialised_keys]


__all__ = ["dumps_column", "dumps_keys", "partition_of", "partitions_of", "text_of"]
