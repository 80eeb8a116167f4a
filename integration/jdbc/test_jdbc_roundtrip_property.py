"""Property: what the JDBC sink writes, the JDBC source reads back equal, on SQLite and PostgreSQL.

Every Spark type the sink can declare a column for (:func:`jetconnect_jdbc.sql_types.sql_type_for`),
with nulls, Unicode (astral characters included, NUL excluded: PostgreSQL text cannot hold it),
empty and large strings and bytes, extreme numbers, and hostile table and column names (quotes,
spaces, ``%``, ``;``, reserved words; a table name with a control character is refused, naming the
option). The only accepted difference is a documented type mapping
(a ``tinyint`` reads back as ``smallint``; on SQLite a ``timestamp`` reads back as
``timestamp_ntz`` in UTC); a value SQLite cannot keep (NaN, more decimal digits than a double
holds) must fail the write loudly with nothing written, never read back different.
"""

from __future__ import annotations

import datetime
import decimal
import math
import os
import uuid

import pyarrow as pa
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pyspark.sql import types as T

from jetconnect import sinks, sources
from jetconnect._arrow_schema import to_arrow_schema
from jetconnect._connector import WriteContext
from jetconnect.errors import OptionError, SinkError

POSTGRES = os.environ.get(
    "JETCONNECT_PG_URL", "postgresql+psycopg://jetconnect:pg-Secret-7f3a@127.0.0.1:5432/jetconnect"
)
#: PostgreSQL cuts longer identifiers (NAMEDATALEN - 1 bytes).
MAX_NAME_BYTES = 63

HOSTILE_NAMES = [
    "select",
    "from",
    "order",
    "user",
    "table",
    "group",
    "where",
    "Name With Spaces",
    " lead",
    "trail ",
    'dq"uote',
    "sq'uote",
    "per%cent",
    "%s",
    "%(id)s",
    "semi;colon",
    "-- dash",
    "back\\slash",
    ":colon",
    "a.b",
    "ünïcødé",
    "🙂astral",
    "1digit",
    "MiXeD",
    "tab\there",
    "new\nline",
    "*",
    "?",
    "$1",
]
NAME_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
names = st.one_of(st.sampled_from(HOSTILE_NAMES), st.text(NAME_CHARS, min_size=1, max_size=16)).filter(
    lambda n: len(n.encode()) <= MAX_NAME_BYTES - 10
)

UTC = datetime.UTC
SESSION_ZONES = ["UTC", "Asia/Kolkata", "America/St_Johns", "Pacific/Kiritimati"]


def _decimal_type(precision: int, scale: int) -> T.DecimalType:
    return T.DecimalType(precision, min(scale, precision))


spark_types = st.one_of(
    st.sampled_from(
        [
            T.BooleanType(),
            T.ByteType(),
            T.ShortType(),
            T.IntegerType(),
            T.LongType(),
            T.FloatType(),
            T.DoubleType(),
            T.StringType(),
            T.BinaryType(),
            T.DateType(),
            T.TimestampType(),
            T.TimestampNTZType(),
        ]
    ),
    st.builds(_decimal_type, st.integers(1, 38), st.integers(0, 38)),
)

TRICKY_TEXT = ["", "\\.", "\\N", "NULL", '"', "a,b", "\r\n", "'; drop table x; --", "%s", "%%", "\\", " "]
texts = st.one_of(
    st.text(NAME_CHARS, max_size=40),
    st.sampled_from(TRICKY_TEXT),
    st.builds(lambda part, n: part * n, st.sampled_from(["x", "é", "🙂", "a\nb,"]), st.integers(10_000, 120_000)),
)


def values_of(spark_type: T.DataType) -> st.SearchStrategy:
    """Values of one Spark type as the Arrow batch Spark hands the sink holds them (or None)."""
    if isinstance(spark_type, T.DecimalType):
        p, s = spark_type.precision, spark_type.scale
        # from the digits as text: decimal arithmetic (Hypothesis' decimals() too) rounds to 28 digits
        return st.integers(-(10**p) + 1, 10**p - 1).map(lambda digits: decimal.Decimal(f"{digits}E-{s}"))
    integers = {T.ByteType: 7, T.ShortType: 15, T.IntegerType: 31, T.LongType: 63}
    for kind, bits in integers.items():
        if isinstance(spark_type, kind):
            return st.integers(-(2**bits), 2**bits - 1)
    simple = {
        T.BooleanType: st.booleans(),
        T.FloatType: st.floats(width=32),
        T.DoubleType: st.floats(),
        T.StringType: texts,
        T.BinaryType: st.one_of(
            st.binary(max_size=64),
            st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=4), st.integers(5_000, 50_000)),
        ),
        T.DateType: st.dates(),
        # a day's margin at the ends: the session time zone must not push them out of range
        T.TimestampNTZType: st.datetimes(
            min_value=datetime.datetime(1, 1, 2), max_value=datetime.datetime(9999, 12, 30)
        ),
        T.TimestampType: st.datetimes(
            min_value=datetime.datetime(1, 1, 2), max_value=datetime.datetime(9999, 12, 30), timezones=st.just(UTC)
        ),
    }
    return simple[type(spark_type)]


@st.composite
def tables(draw):
    column_names = draw(st.lists(names, min_size=1, max_size=5, unique_by=str.lower))
    schema = T.StructType([T.StructField(n, draw(spark_types)) for n in column_names])
    rows = draw(st.lists(st.tuples(*[st.one_of(st.none(), values_of(f.dataType)) for f in schema.fields]), max_size=12))
    table = draw(names) + "_" + uuid.uuid4().hex[:8]
    assume("." not in table)  # "schema.table" is how a table in another schema is named
    return table, schema, rows, draw(st.sampled_from(SESSION_ZONES))


def arrow_batch(schema: T.StructType, rows: list[tuple], zone: str) -> pa.RecordBatch:
    """The batch Spark would hand over: timestamps labelled with the session's time zone."""
    arrow = to_arrow_schema(schema)
    fields = [
        pa.field(f.name, pa.timestamp("us", tz=zone)) if pa.types.is_timestamp(f.type) and f.type.tz is not None else f
        for f in arrow
    ]
    columns = [pa.array([row[i] for row in rows], type=f.type) for i, f in enumerate(fields)]
    return pa.RecordBatch.from_arrays(columns, schema=pa.schema(fields))


def expected_type(spark_type: T.DataType, dialect: str) -> T.DataType:
    if isinstance(spark_type, T.ByteType):
        return T.ShortType()
    if isinstance(spark_type, T.TimestampType) and dialect == "sqlite":
        return T.TimestampNTZType()
    return spark_type


def expected_value(value: object, spark_type: T.DataType, dialect: str) -> object:
    if value is not None and isinstance(spark_type, T.TimestampType):
        return value.replace(tzinfo=None) if dialect == "sqlite" else value
    if value is not None and isinstance(spark_type, T.FloatType):
        return pa.scalar(value, pa.float32()).as_py()  # what a float32 holds
    return value


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, datetime.datetime) and isinstance(b, datetime.datetime) and a.tzinfo and b.tzinfo:
        return a.astimezone(UTC) == b.astimezone(UTC)
    return a == b and type(a) is type(b)


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, server, tmp_path_factory):
    if request.param == "postgresql":
        server("postgresql")
        return POSTGRES
    return f"sqlite:///{tmp_path_factory.mktemp('roundtrip') / 'db.sqlite'}"


def drop(url: str, table: str) -> None:
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        sa.Table(table, sa.MetaData()).drop(conn, checkfirst=True)
    engine.dispose()


@settings(
    max_examples=40,
    deadline=datetime.timedelta(seconds=30),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=tables())
def test_what_the_sink_writes_reads_back_equal(database, case):
    table, schema, rows, zone = case
    dialect = sa.make_url(database).get_backend_name()
    if any(ord(c) < 0x20 or c == "\x7f" for c in table):
        # a control character in a table name ("orders\n") is a careless name, refused naming the
        # option on both sides (#32); column names keep them, quoted, below
        for build in (lambda: sinks.jdbc(database, table=table), lambda: sources.jdbc(database, table=table)):
            with pytest.raises(OptionError, match="option 'table'"):
                build()
        return
    sink = sinks.jdbc(database, table=table)
    try:
        sink.check_schema(schema)
        try:
            sink.write_partition(iter([arrow_batch(schema, rows, zone)]), WriteContext(0, 0, None, None, schema))
        except SinkError as refused:
            # only SQLite, only for a value it cannot keep, and then nothing is written
            assert dialect == "sqlite" and ("NaN" in str(refused) or "15 significant digits" in str(refused)), str(
                refused
            )
            rows = []
        for use_copy in [True, False] if dialect == "postgresql" else [True]:
            source = sources.jdbc(database, table=table, use_copy=use_copy)
            read_schema = source.schema()
            assert read_schema.fieldNames() == schema.fieldNames()
            assert [f.dataType for f in read_schema.fields] == [
                expected_type(f.dataType, dialect) for f in schema.fields
            ]
            got = [
                tuple(r.values()) for split in source.splits() for b in source.read_split(split) for r in b.to_pylist()
            ]
            expected = [
                tuple(expected_value(v, f.dataType, dialect) for v, f in zip(row, schema.fields)) for row in rows
            ]
            assert len(got) == len(expected)
            unmatched = list(got)
            for row in expected:  # the order is the database's: match rows as a multiset
                match = next((i for i, g in enumerate(unmatched) if all(same(a, b) for a, b in zip(g, row))), None)
                assert match is not None, f"row {row!r} not read back (use_copy={use_copy}); read: {got!r}"[:3000]
                unmatched.pop(match)
    finally:
        drop(database, table)


# --- the same through Spark, once per database -----------------------------------------------------

SPARK_SCHEMA = T.StructType(
    [
        T.StructField("select", T.LongType()),
        T.StructField('dq"uote', T.StringType()),
        T.StructField("sq'uote %s;", T.DoubleType()),
        T.StructField("Name With Spaces", T.DecimalType(12, 3)),
        T.StructField("🙂astral", T.BinaryType()),
        T.StructField("order", T.DateType()),
        T.StructField("at", T.TimestampType()),
        T.StructField("ntz", T.TimestampNTZType()),
        T.StructField("ok", T.BooleanType()),
        T.StructField("tiny", T.ByteType()),
    ]
)
SPARK_ROWS = [
    (
        1,
        "🙂 astral, \"quoted\"\n'line'",
        -0.5,
        decimal.Decimal("-123456789.125"),
        b"\x00\xff",
        datetime.date(1, 1, 1),
        datetime.datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=UTC),
        datetime.datetime(9999, 12, 31, 23, 59, 59),
        True,
        -128,
    ),
    (
        2,
        "",
        float("inf"),
        decimal.Decimal("0.001"),
        b"",
        datetime.date(9999, 12, 31),
        datetime.datetime(1970, 1, 1, tzinfo=UTC),
        datetime.datetime(1, 1, 1),
        False,
        127,
    ),
    (3, None, None, None, None, None, None, None, None, None),
    (
        4,
        "x" * 100_000,
        1e308,
        decimal.Decimal("999999999.999"),
        bytes(range(256)) * 100,
        datetime.date(2000, 2, 29),
        datetime.datetime(1900, 1, 1, 12, tzinfo=UTC),
        datetime.datetime(2024, 1, 1, 0, 0, 0, 1),
        None,
        0,
    ),
]


def test_hostile_names_and_every_type_round_trip_through_spark(spark, database):
    table = f'\'; drop table x; -- %s "{uuid.uuid4().hex[:8]}"'
    dialect = sa.make_url(database).get_backend_name()
    df = spark.createDataFrame(SPARK_ROWS, SPARK_SCHEMA)
    try:
        sinks.jdbc(database, table=table).write(df)
        back = sources.jdbc(database, table=table).read(spark)
        assert back.schema.fieldNames() == SPARK_SCHEMA.fieldNames()
        got = sorted(back.collect(), key=lambda r: r[0])
        for row, expected in zip(got, SPARK_ROWS):
            for value, want, field in zip(row, expected, SPARK_SCHEMA.fields):
                want = expected_value(want, field.dataType, dialect)
                if isinstance(want, datetime.datetime) and want.tzinfo is not None:
                    want = want.astimezone().replace(tzinfo=None)  # PySpark shows timestamps in local time
                if isinstance(value, bytearray):
                    value = bytes(value)
                assert same(value, want), (field.name, value, want)
        assert len(got) == len(SPARK_ROWS)
    finally:
        drop(database, table)
