"""How row values become values a Hazelcast member, and every other client, can read, and back.

The Python client serialises ``str``, ``bool``, ``float`` and ``bytearray`` as Java's String,
Boolean, Double and byte[]; ``int`` as a Java long once the client is built with
``default_int_type=IntType.LONG`` (``clients.client_for`` does that); dates, times, timestamps
and decimals as LocalDate, LocalTime, OffsetDateTime and BigDecimal. Anything else (a ``dict``,
``bytes``) it would silently pickle, which no Java member or other client can read. So a value
is mapped here before it reaches the client:

* structs, maps and arrays become a ``HazelcastJsonValue`` of their canonical JSON text, so
  member-side predicates and SQL read their fields (``value.qty > 1``);
* ``bytes`` become ``bytearray`` (byte[]);
* a naive ``datetime`` (Spark's ``timestamp_ntz``) has no time zone to send: an error, as is an
  integer past Java's long range or any other type; the error names the column.

Read back, a ``HazelcastJsonValue`` becomes the Python value of its JSON, a byte[] ``bytes``,
everything else what it is; a ``string`` column shows a non-string as its JSON text.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
from typing import Any

from hazelcast.core import HazelcastJsonValue

from jetconnect.errors import SchemaError
from jetconnect_imap.canonical_json import dumps

_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
#: Types the client writes as the Java type every client reads (with ints as longs).
_AS_IS = (str, bool, float, bytearray, decimal.Decimal, _dt.date, _dt.time)


class ValueMappingError(SchemaError):
    """A value has no Hazelcast type every client can read (names the column and the value)."""


def to_hazelcast(value: Any, column: str) -> Any:
    """``value`` as the Python object the client serialises to a portable Java type.

    ``column`` names where the value came from, for the error when it has no such type.
    """
    kind = type(value)
    if kind is str or kind is bool or kind is float or value is None:
        return value
    if kind is int:
        if not _LONG_MIN <= value <= _LONG_MAX:
            raise ValueMappingError(f"column '{column}': {value} does not fit in a Java long (64 bits)")
        return value
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            raise ValueMappingError(
                f"column '{column}': {value.isoformat()} is a timestamp without a time zone, which no Hazelcast "
                "type carries from Python; cast the column to timestamp (or to string)"
            )
        return value
    if isinstance(value, (bytes, memoryview)):
        return bytearray(value)
    if isinstance(value, _AS_IS):
        return value
    if isinstance(value, (dict, list, tuple)) or hasattr(value, "asDict"):
        try:
            return HazelcastJsonValue(dumps(value))
        except (TypeError, ValueError) as exc:
            raise ValueMappingError(f"column '{column}': {exc}") from None
    if isinstance(value, HazelcastJsonValue):
        return value
    raise ValueMappingError(
        f"column '{column}': a {kind.__name__} ({_brief(value)}) has no Hazelcast type other clients can read; "
        "use strings, numbers, booleans, bytes, dates, decimals, structs, maps or arrays"
    )


def from_hazelcast(value: Any) -> Any:
    """What a member handed over, as a plain Python value: JSON parsed, byte[] as ``bytes``."""
    kind = type(value)
    if kind is int or kind is str or value is None:  # most keys and values: a journal read asks millions
        return value
    if isinstance(value, HazelcastJsonValue):
        return parse_json_text(value.to_string())
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def as_text(value: Any) -> str | None:
    """What a ``string`` column shows of a value read from a member: a string as it is, a JSON
    value as its text, bytes as hex, dates, times and decimals as their ISO and decimal text
    (all as the embedded store shows them), anything else as its JSON text."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, HazelcastJsonValue):
        return value.to_string()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, (_dt.date, _dt.time, decimal.Decimal)):  # as the embedded store shows them
        return value.isoformat() if not isinstance(value, decimal.Decimal) else str(value)
    return dumps(value)


def parse_json_text(text: str) -> Any:
    """A JSON text another client stored as a ``HazelcastJsonValue``, parsed (errors name it)."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueMappingError(f"a HazelcastJsonValue holds invalid JSON ({exc}): {text[:80]!r}") from None


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "..."


__all__ = ["ValueMappingError", "as_text", "from_hazelcast", "parse_json_text", "to_hazelcast"]
