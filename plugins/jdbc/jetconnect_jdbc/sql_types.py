"""SQL types to Spark and Arrow types (reads), and Spark types to SQL types (tables the sink creates).

Each SQL column maps to one :class:`ColumnType`: the Spark type shown to users and the Arrow type
the source builds its batches with (exactly what Spark expects for that Spark type). Types with no
Spark equivalent (JSON, UUID, intervals, arrays, ...) are read as their text form.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import sqlalchemy as sa
from pyspark.sql import types as T

#: Spark's unconstrained decimal, as its own JDBC source uses for NUMERIC without precision.
DEFAULT_DECIMAL = (38, 18)


@dataclass(frozen=True)
class ColumnType:
    """How one SQL column is read: its Spark type, its Arrow type, and whether SQL casts it to text."""

    spark: T.DataType
    arrow: pa.DataType
    as_text: bool = False


STRING = ColumnType(T.StringType(), pa.string())
TEXT_FORM = ColumnType(T.StringType(), pa.string(), as_text=True)


def column_type(sql_type: sa.types.TypeEngine) -> ColumnType:
    """The Spark/Arrow types for a SQLAlchemy column type (reflected or declared)."""
    t = sql_type
    if isinstance(t, sa.Boolean):
        return ColumnType(T.BooleanType(), pa.bool_())
    if isinstance(t, sa.SmallInteger):
        return ColumnType(T.ShortType(), pa.int16())
    if isinstance(t, sa.BigInteger):
        return ColumnType(T.LongType(), pa.int64())
    if isinstance(t, sa.Integer):
        return ColumnType(T.IntegerType(), pa.int32())
    if isinstance(t, sa.Float):  # before Numeric: Float is a Numeric subclass
        if isinstance(t, sa.Double) or type(t).__name__ in ("DOUBLE_PRECISION", "DOUBLE"):
            return ColumnType(T.DoubleType(), pa.float64())
        single = type(t).__name__ == "REAL" or (t.precision is not None and t.precision <= 24)
        return ColumnType(T.FloatType(), pa.float32()) if single else ColumnType(T.DoubleType(), pa.float64())
    if isinstance(t, sa.Numeric):
        precision, scale = t.precision, t.scale
        if precision is None or precision > 38:
            precision, scale = DEFAULT_DECIMAL
        scale = scale or 0
        return ColumnType(T.DecimalType(precision, scale), pa.decimal128(precision, scale))
    if isinstance(t, sa.DateTime):
        if getattr(t, "timezone", False):
            return ColumnType(T.TimestampType(), pa.timestamp("us", tz="UTC"))
        return ColumnType(T.TimestampNTZType(), pa.timestamp("us"))
    if isinstance(t, sa.Date):
        return ColumnType(T.DateType(), pa.date32())
    if isinstance(t, sa.LargeBinary) or isinstance(t, sa.types._Binary):
        return ColumnType(T.BinaryType(), pa.binary())
    if isinstance(t, (sa.JSON, sa.Uuid)) or type(t).__name__ in ("JSONB", "UUID"):
        return TEXT_FORM
    if isinstance(t, (sa.String, sa.Enum)):
        return STRING
    # Time, Interval, ARRAY, network and geometric types, ...: the database's own text form.
    return TEXT_FORM


#: PostgreSQL type names (as psycopg reports them for a query's result) to SQLAlchemy types.
_POSTGRES_NAMES: dict[str, sa.types.TypeEngine] = {
    "bool": sa.Boolean(),
    "int2": sa.SmallInteger(),
    "int4": sa.Integer(),
    "int8": sa.BigInteger(),
    "oid": sa.BigInteger(),
    "float4": sa.REAL(),
    "float8": sa.Double(),
    "text": sa.Text(),
    "varchar": sa.String(),
    "bpchar": sa.String(),
    "name": sa.String(),
    "bytea": sa.LargeBinary(),
    "date": sa.Date(),
    "timestamp": sa.DateTime(),
    "timestamptz": sa.DateTime(timezone=True),
    "json": sa.JSON(),
    "jsonb": sa.JSON(),
    "uuid": sa.Uuid(),
}


def postgres_type(type_name: str, precision: int | None, scale: int | None) -> sa.types.TypeEngine:
    """The SQLAlchemy type of a PostgreSQL result column, from psycopg's description."""
    if type_name == "numeric":
        return sa.Numeric(precision, scale)
    return _POSTGRES_NAMES.get(type_name, sa.types.NullType())


def python_value_type(value: object) -> sa.types.TypeEngine:
    """The type of a sampled value, for databases whose results carry no types (SQLite)."""
    import datetime
    import decimal

    if isinstance(value, bool):
        return sa.Boolean()
    if isinstance(value, int):
        return sa.BigInteger()
    if isinstance(value, float):
        return sa.Double()
    if isinstance(value, decimal.Decimal):
        return sa.Numeric()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return sa.LargeBinary()
    if isinstance(value, datetime.datetime):
        return sa.DateTime(timezone=value.tzinfo is not None)
    if isinstance(value, datetime.date):
        return sa.Date()
    return sa.Text()


def sql_type_for(spark_type: T.DataType) -> sa.types.TypeEngine:
    """The column type the sink declares when it creates a table for a Spark column."""
    mapping: list[tuple[type, sa.types.TypeEngine]] = [
        (T.BooleanType, sa.Boolean()),
        (T.ByteType, sa.SmallInteger()),
        (T.ShortType, sa.SmallInteger()),
        (T.IntegerType, sa.Integer()),
        (T.LongType, sa.BigInteger()),
        (T.FloatType, sa.REAL()),
        (T.DoubleType, sa.Double()),
        (T.StringType, sa.Text()),
        (T.BinaryType, sa.LargeBinary()),
        (T.DateType, sa.Date()),
        (T.TimestampType, sa.DateTime(timezone=True)),
        (T.TimestampNTZType, sa.DateTime()),
    ]
    if isinstance(spark_type, T.DecimalType):
        return sa.Numeric(spark_type.precision, spark_type.scale)
    for spark_class, sql_type in mapping:
        if isinstance(spark_type, spark_class):
            return sql_type
    raise TypeError(f"no SQL column type for Spark type {spark_type.simpleString()}")
