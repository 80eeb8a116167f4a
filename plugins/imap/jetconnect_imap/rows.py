"""Shaping stored values into Spark rows: a STRING column takes the JSON text of non-strings.

Stored values are canonical JSON text, so a STRING column can mostly take that text as it is
(:func:`raw_decoder`); only values computed by a projection need encoding (:func:`row_shaper`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyspark.sql.types import DataType, StringType, StructType

from jetconnect_imap.serde import dumps, loads, text_of


def raw_decoder(data_type: DataType) -> Callable[[str | None], Any]:
    """How a stored (serialised) value becomes a value of a column of ``data_type``."""
    return text_of if isinstance(data_type, StringType) else loads


def row_shaper(schema: StructType) -> Callable[[Any], Any]:
    """A function turning a tuple, dict or bare value into a row of ``schema``.

    Values bound for a STRING column that are not strings (a dict, a number) become their JSON
    text, so that a ``string`` schema fits whatever a projection returns.
    """
    names = schema.fieldNames()
    text = [isinstance(f.dataType, StringType) for f in schema.fields]

    def as_column(value: Any, is_text: bool) -> Any:
        return dumps(value) if is_text and value is not None and not isinstance(value, str) else value

    def shape(item: Any) -> Any:
        if isinstance(item, dict) and len(names) > 1:
            return tuple(as_column(item.get(n), t) for n, t in zip(names, text))
        if isinstance(item, (tuple, list)) and len(names) > 1:
            return tuple(as_column(v, t) for v, t in zip(item, text))
        return (as_column(item, text[0]),)

    return shape
