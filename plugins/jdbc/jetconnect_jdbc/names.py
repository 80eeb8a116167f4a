"""Table names as users write them, split for SQLAlchemy, which quotes each part itself."""

from __future__ import annotations


def split_table_name(table: str) -> tuple[str, str | None]:
    """``"schema.table"`` -> ``("table", "schema")``; a plain name has no schema."""
    schema, _, name = table.rpartition(".")
    return name, (schema or None)
