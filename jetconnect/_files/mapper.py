"""Jet's mapping function of a file source (``mapOutputFn``): the user's ``mapper`` of (file, item)
makes each row, called per line, Avro record or whole file in the Spark task.

One rule for every source of the files family (lines, whole files, Avro), as for every mapping
function in jetconnect (:func:`jetconnect._arrow_rows.mapped_rows`): an item the mapper returns None
for is left out. What the mapper raises is a :class:`SourceError`, and a row that does not fit the
declared schema a :class:`SchemaError`, each naming the file and the item (``line 7``, ``record 3
of the block at byte 1024``) rather than quoting the item (the user's data, which may be a
secret); a schema error shows the row the mapper made, shortened, as every schema error does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from jetconnect.errors import SchemaError, SourceError

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    from pyspark.sql.types import StructType

#: Jet's ``mapOutputFn`` of a file source: (the file's name, one item of it) -> a row, or None.
FileMapper = Callable[[str, Any], Any]


def mapped_batch(
    mapper: FileMapper,
    name: str,
    path: str,
    items: Sequence[Any],
    schema: StructType,
    owner: str,
    item_at: Callable[[int], str],
) -> pa.RecordBatch:
    """``mapper(name, item)`` of each of ``items`` (of the file at ``path``) as one batch of ``schema``.

    ``name`` is the file as the mapper is given it (relative to the source's directory, or its
    path); ``item_at(i)`` names item ``i`` in an error (``"line 7"``), asked only on failure.
    """
    from jetconnect._arrow_rows import rows_to_batch  # imports pyspark: only where a mapper runs

    rows, kept = [], []
    for index, item in enumerate(items):
        try:
            row = mapper(name, item)
        except Exception as exc:  # the user's function may raise anything: say where it was
            raise SourceError(
                f"{owner}: the mapper raised {type(exc).__name__} for {item_at(index)} of '{path}': {exc}"
            ) from exc
        if row is not None:  # Jet's rule for mapping functions (mapped_rows): None filters it out
            rows.append(row)
            kept.append(index)
    try:
        return rows_to_batch(rows, schema, f"{owner}: the mapper's rows of '{path}'")
    except SchemaError:
        _raise_for_first_bad(rows, kept, schema, f"{owner}: the mapper's row for {{}} of '{path}'", item_at)
        raise  # no row fails alone (the rows fit no single batch): the error says so


def _raise_for_first_bad(
    rows: list[Any], kept: list[int], schema: StructType, owner: str, item_at: Callable[[int], str]
) -> None:
    """Raise the :class:`SchemaError` of the first row that does not fit ``schema`` alone, naming its item."""
    from jetconnect._arrow_rows import rows_to_batch

    for row, index in zip(rows, kept, strict=True):
        where = owner.format(item_at(index))
        try:
            rows_to_batch([row], schema, where)
        except SchemaError as exc:
            message = str(exc)
            # rows_to_batch names the row by its index in the list it was given: here always #0
            lead = f"{where}: item #0 of the batch, "
            if message.startswith(lead):
                message = f"{where}, {message[len(lead) :]}"
            raise SchemaError(message) from None


__all__ = ["FileMapper", "mapped_batch"]
