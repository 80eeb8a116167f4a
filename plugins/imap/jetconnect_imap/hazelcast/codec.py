"""How the Hazelcast backend's keys and values fill Spark columns and reach Python functions.

Keys and values come as the client decoded them (:mod:`.values`), or, for Compact records, as
their bytes (:class:`~.compact.reader.CompactData`), read by their schemas here: a struct column
a whole column at a time, a string column as the record's JSON text, a predicate or projection as
a dict. A string column shows any other non-string as its JSON text (bytes as hex, dates and
decimals as ISO and decimal text), as the embedded store shows them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.types import DataType, StringType, StructType

from jetconnect.errors import SchemaError
from jetconnect_imap.canonical_json import dumps
from jetconnect_imap.hazelcast.compact.reader import CompactData, CompactReader, Describe
from jetconnect_imap.hazelcast.compact.schemas import CompactSchemas
from jetconnect_imap.hazelcast.values import as_text, from_hazelcast
from jetconnect_imap.json_values import needs_typing, typed


class HazelcastCodec:
    """The codec of one cluster's values (``client_of()`` gives the process's client, for the
    Compact schemas it knows or fetches)."""

    def __init__(self, client_of: Callable[[], Any]) -> None:
        self._client_of = client_of
        self._reader: CompactReader | None = None

    @property
    def compact(self) -> CompactReader:
        if self._reader is None:
            client = self._client_of()
            big_endian = getattr(client._serialization_service, "_is_big_endian", True)
            self._reader = CompactReader(CompactSchemas(client), big_endian)
        return self._reader

    def column(self, data_type: DataType) -> Callable[[Any], Any]:
        if isinstance(data_type, StringType):
            return self._text
        if needs_typing(data_type):  # JSON's text of bytes, dates, decimals: the values again
            return lambda stored: typed(self.plain(stored), data_type)
        return self.plain

    def _text(self, value: Any) -> str | None:
        if type(value) is CompactData:
            return dumps(self.compact.plain(value))
        return as_text(value)

    def plain(self, stored: Any) -> Any:
        if type(stored) is CompactData:
            return self.compact.plain(stored)
        return from_hazelcast(stored)

    def column_values(self, data_type: DataType, values: Sequence[Any], describe: Describe) -> list[Any] | pa.Array:
        """A column of stored values: Compact records into a struct column at once, every other
        value one by one; a Compact record in a column that is neither a struct nor a string is
        a SchemaError naming its entry."""
        if isinstance(data_type, StructType) and any(type(v) is CompactData for v in values):
            return self.compact.column(values, data_type, describe)
        if not isinstance(data_type, (StructType, StringType)):
            for index, value in enumerate(values):
                if type(value) is CompactData:
                    raise SchemaError(
                        f"{describe(index)}: a Compact record of {self.compact.schemas.get(value.schema_id).type_name!r} "
                        f"cannot fill a column of type {data_type.simpleString()}: read it into a struct (or a string)"
                    )
        read = self.column(data_type)
        return [read(v) for v in values]

    def derived_type(self, values: Sequence[Any]) -> StructType | None:
        """The struct a sample of stored values reads as, when they are Compact records (None: not)."""
        if not values or not all(type(v) is CompactData for v in values if v is not None):
            return None
        if all(v is None for v in values):
            return None
        from jetconnect_imap.hazelcast.compact.schemas import derived_type

        return derived_type(self.compact.schemas_by_path(values))


__all__ = ["HazelcastCodec"]
