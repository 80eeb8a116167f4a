"""What a source reads: its columns with their SQL, Spark and Arrow types, found once on the driver.

A table's columns come from SQLAlchemy reflection; a query's from PostgreSQL's result description,
or, for databases whose results carry no types (SQLite), from the first rows' values. A schema the
user gives wins over both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import pyarrow as pa
import sqlalchemy as sa
from pyspark.sql import types as T

from jetconnect_jdbc.pg_copy import inline_sql
from jetconnect_jdbc.sql_types import ColumnType, column_type, postgres_type, python_value_type, sql_type_for

if TYPE_CHECKING:
    import psycopg

_SAMPLE_ROWS = 100


@dataclass(frozen=True)
class Column:
    """One column read by the source."""

    name: str
    sql_type: sa.types.TypeEngine
    type: ColumnType


def reflect_table(conn: sa.Connection, table: str, schema: str | None) -> list[Column]:
    columns = sa.inspect(conn).get_columns(table, schema=schema)
    return [Column(c["name"], c["type"], column_type(c["type"])) for c in columns]


def describe_query(conn: sa.Connection, query: sa.Select) -> list[Column]:
    """The columns of a query's result, without reading it (PostgreSQL) or from a sample (others)."""
    if conn.dialect.name == "postgresql":
        dbapi = conn.connection.dbapi_connection
        # conn.connection is checked out and valid (SQLAlchemy reconnects an invalidated one)
        assert dbapi is not None, "a checked-out connection has its DB-API connection"
        # cast: SQLAlchemy types it as a bare PEP 249 cursor; on PostgreSQL it is psycopg's, whose
        # description columns have names and whose connection has the type adapters
        cursor = cast("psycopg.Cursor[Any]", dbapi.cursor())
        try:
            cursor.execute(inline_sql(query.limit(0)))  # no parameters: psycopg sends it verbatim
            types = cursor.connection.adapters.types
            columns = []
            assert cursor.description is not None, "a SELECT describes its result columns"
            for d in cursor.description:
                info = types.get(d.type_code)
                sql_type = postgres_type(info.name if info else "", d.precision, d.scale)
                columns.append(Column(d.name, sql_type, column_type(sql_type)))
            return columns
        finally:
            cursor.close()
    result = conn.execute(query.limit(_SAMPLE_ROWS))
    names = list(result.keys())
    rows = result.fetchall()
    columns = []
    for i, name in enumerate(names):
        sample = next((row[i] for row in rows if row[i] is not None), None)
        sql_type = python_value_type(sample)
        columns.append(Column(name, sql_type, column_type(sql_type)))
    return columns


def from_spark_schema(schema: T.StructType) -> list[Column]:
    """Columns as the user declared them; the matching SQL type lets SQLAlchemy convert values that a
    database stores loosely (SQLite keeps dates as text)."""
    from jetconnect.api import to_arrow_schema

    arrow = to_arrow_schema(schema)
    return [
        Column(field.name, _sql_type_or_null(field.dataType), ColumnType(field.dataType, arrow.field(field.name).type))
        for field in schema.fields
    ]


def _sql_type_or_null(spark_type: T.DataType) -> sa.types.TypeEngine:
    try:
        return sql_type_for(spark_type)
    except TypeError:
        return sa.types.NullType()


def spark_schema(columns: Sequence[Column]) -> T.StructType:
    return T.StructType([T.StructField(c.name, c.type.spark, True) for c in columns])


def arrow_schema(columns: Sequence[Column]) -> pa.Schema:
    return pa.schema([pa.field(c.name, c.type.arrow, nullable=True) for c in columns])
