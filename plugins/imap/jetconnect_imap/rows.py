"""Shaping what a predicate-and-projection read makes into Spark rows: a STRING column takes the
JSON text of non-strings. (Entries read as they are go a column at a time through the backend's
:class:`~jetconnect_imap.backend.ValueCodec` instead.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyspark.sql.types import StringType, StructType

from jetconnect.errors import SourceError
from jetconnect_imap.canonical_json import dumps


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
