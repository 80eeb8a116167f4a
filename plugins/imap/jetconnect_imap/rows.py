"""Shaping stored values into Spark rows: a STRING column takes the JSON text of non-strings.

Stored values are canonical JSON text, so a STRING column can mostly take that text as it is
(:func:`raw_decoder`); only values computed by a projection need encoding (:func:`row_shaper`).
On Hazelcast the values come as the client decoded them (:mod:`jetconnect_imap.hz_values`):
:func:`column_decoder` and :func:`value_decoder` pick the rule of the backend, once for every source.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyspark.sql.types import DataType, StringType, StructType

from jetconnect.errors import SourceError
from jetconnect_imap.hz_values import from_hazelcast, reader_for
from jetconnect_imap.serde import dumps, loads, text_of


def raw_decoder(data_type: DataType) -> Callable[[str | None], Any]:
    """How a stored (serialised) value becomes a value of a column of ``data_type``."""
    return text_of if isinstance(data_type, StringType) else loads


def column_decoder(data_type: DataType, on_hazelcast: bool) -> Callable[[Any], Any]:
    """How a stored key or value fills a column of ``data_type``: on Hazelcast the value the
    client decoded (``hz_values.reader_for``), on the embedded store its JSON text (:func:`raw_decoder`)."""
    return reader_for(isinstance(data_type, StringType)) if on_hazelcast else raw_decoder(data_type)


def value_decoder(on_hazelcast: bool) -> Callable[[Any], Any]:
    """How a stored key or value becomes the plain Python value a predicate or projection gets."""
    return from_hazelcast if on_hazelcast else loads


def row_shaper(schema: StructType, where: str = "source") -> Callable[[Any], Any]:
    """A function turning a tuple, dict or bare value into a row of ``schema``.

    Values bound for a STRING column that are not strings (a dict, a number) become their JSON
    text, so that a ``string`` schema fits whatever a projection returns. A tuple of the wrong
    length, or a dict without one of the columns, is a :class:`SourceError` naming ``where`` and
    the item: a projection's typo must not become a column of nulls or a column cut off. A dict's
    keys beyond the columns are left out, as a projection may choose fields.
    """
    names = schema.fieldNames()
    text = [isinstance(f.dataType, StringType) for f in schema.fields]

    def as_column(value: Any, is_text: bool) -> Any:
        return dumps(value) if is_text and value is not None and not isinstance(value, str) else value

    def shape(item: Any) -> Any:
        if isinstance(item, dict) and len(names) > 1:
            missing = [n for n in names if n not in item]
            if missing:
                raise SourceError(
                    f"{where}: item {_brief(item)} has no {', '.join(repr(n) for n in missing)} for the schema's "
                    f"columns {names}"
                )
            return tuple(as_column(item[n], t) for n, t in zip(names, text))
        if isinstance(item, (tuple, list)) and len(names) > 1:
            if len(item) != len(names):
                raise SourceError(
                    f"{where}: item {_brief(item)} has {len(item)} values for the schema's {len(names)} columns {names}"
                )
            return tuple(as_column(v, t) for v, t in zip(item, text))
        return (as_column(item, text[0]),)

    return shape


def _brief(item: Any) -> str:
    text = repr(item)
    return text if len(text) <= 200 else text[:200] + "..."
