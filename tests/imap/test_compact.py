"""jetconnect's Compact reader and writer against hazelcast-python-client's own Compact
serialization, without a cluster: the same schema ids, the same bytes for the same record, every
kind read back exactly; and the Spark type rules (derivation, union of versions, refusals).

(The cluster-side proof, a Java client's records read through Spark and jetconnect's records read
by Java as its own classes, is integration/imap/test_compact_interop.py.)"""

from __future__ import annotations

import datetime as dt
import decimal
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest
from hazelcast.config import Config, IntType
from hazelcast.serialization.api import CompactReader as ClientReader
from hazelcast.serialization.api import CompactSerializer, CompactWriter
from hazelcast.serialization.api import FieldKind as K
from hazelcast.serialization.compact import CompactStreamSerializer
from hazelcast.serialization.data import Data
from hazelcast.serialization.service import SerializationServiceV1
from pyspark.sql import types as T

from jetconnect.api import to_arrow_schema
from jetconnect.errors import OptionError, SchemaError
from jetconnect_imap.hazelcast.compact.reader import CompactData, CompactReader
from jetconnect_imap.hazelcast.compact.schemas import CompactSchemas, derived_type
from jetconnect_imap.hazelcast.compact.writer import CompactPlan, check_type_name, kind_of

UTC = dt.UTC
ADDRESS = T.StructType([T.StructField("city", T.StringType()), T.StructField("zip", T.IntegerType(), False)])
#: A Spark struct with a field of every type Compact holds, nullable and not.
ORDER = T.StructType(
    [
        T.StructField("active", T.BooleanType(), False),
        T.StructField("maybe", T.BooleanType()),
        T.StructField("tiny", T.ByteType(), False),
        T.StructField("small", T.ShortType()),
        T.StructField("count", T.IntegerType(), False),
        T.StructField("id", T.LongType(), False),
        T.StructField("discount", T.LongType()),
        T.StructField("ratio", T.FloatType(), False),
        T.StructField("amount", T.DoubleType()),
        T.StructField("customer", T.StringType()),
        T.StructField("price", T.DecimalType(20, 4)),
        T.StructField("day", T.DateType()),
        T.StructField("at", T.TimeType()),
        T.StructField("local", T.TimestampNTZType()),
        T.StructField("stamp", T.TimestampType()),
        T.StructField("blob", T.BinaryType()),
        T.StructField("address", ADDRESS),
        T.StructField("tags", T.ArrayType(T.StringType())),
        T.StructField("scores", T.ArrayType(T.LongType(), containsNull=False)),
        T.StructField("maybe_scores", T.ArrayType(T.IntegerType())),
        T.StructField("flags", T.ArrayType(T.BooleanType(), containsNull=False)),
        T.StructField("lines", T.ArrayType(ADDRESS)),
        T.StructField("prices", T.ArrayType(T.DecimalType(10, 2))),
    ]
)


def _row(i: int) -> dict[str, Any]:
    return {
        "active": i % 2 == 0,
        "maybe": None if i % 3 == 0 else i % 2 == 1,
        "tiny": -(i % 128),
        "small": None if i % 4 == 0 else 30_000 - i,
        "count": i * 1000,
        "id": 2**40 + i,
        "discount": None if i % 3 else i,
        "ratio": 0.5 * i,
        "amount": None if i == 2 else i * 1.25,
        "customer": None if i == 3 else f'cüstomer {i} "q" \'',
        "price": decimal.Decimal(f"-{i}.0625") if i % 2 else decimal.Decimal("12345678901234.5678"),
        "day": dt.date(1900 + i, 1 + i % 12, 1 + i % 28),
        "at": dt.time(i % 24, 59, 58, 123456),
        "local": dt.datetime(2026, 12, 1, 23, 59, 59, 999999),
        "stamp": dt.datetime(1969, 7, 20, 20, 17, 40, tzinfo=UTC),
        "blob": bytes(range(i % 5)),
        "address": None if i % 5 == 0 else {"city": "Zürich" if i % 2 else None, "zip": 8000 + i},
        "tags": None if i % 2 else ["a", None, "" if i else "z"],
        "scores": [i, -i, 2**62],
        "maybe_scores": [None, i],
        "flags": [True, False, True] * (i % 4),
        "lines": [{"city": f"c{j}", "zip": j} for j in range(i % 3)] + [None],
        "prices": [decimal.Decimal("1.50"), None],
    }


def _service() -> SerializationServiceV1:
    config = Config()
    config.default_int_type = IntType.LONG
    return SerializationServiceV1(config)


def _client(service: SerializationServiceV1) -> Any:
    """What the reader and the schema registry use of a client: its serialization service."""
    return SimpleNamespace(_serialization_service=service)


def _struct_column(rows: list[dict[str, Any] | None], struct: T.StructType = ORDER) -> pa.Array:
    arrow = to_arrow_schema(T.StructType([T.StructField("v", struct)])).field(0).type
    return pa.array(rows, arrow)


def test_a_record_written_is_read_back_exactly_every_kind() -> None:
    service = _service()
    plan = CompactPlan.of(ORDER, "com.acme.Order", {"address": "com.acme.Address", "lines": "com.acme.Address"})
    rows: list[dict[str, Any] | None] = [_row(i) for i in range(12)] + [None]
    written = plan.encode(_struct_column(rows), "value")
    assert written[-1] is None
    registry: CompactStreamSerializer = service.compact_stream_serializer
    for schema in plan.schemas.values():
        registry.register_schema_to_id(schema)
    reader = CompactReader(CompactSchemas(_client(service)))
    values = [None if raw is None else CompactData(raw) for raw in written]
    column = reader.column(values, ORDER, lambda i: f"entry {i}")
    assert column.to_pylist() == rows  # a column at a time
    assert [reader.plain(v) for v in values[:-1]] == [_plain(r) for r in rows[:-1]]  # and one by one


def _plain(row: dict[str, Any] | None) -> Any:
    """A row as the one-by-one reader gives it: nested dicts with every field, bytes as bytes."""
    return row


class _DictSerializer(CompactSerializer[dict]):
    """The official client writing a dict of ``fields`` (name -> kind) with its own writer."""

    def __init__(self, type_name: str, fields: dict[str, K]) -> None:
        self.type_name, self.fields = type_name, fields

    def write(self, writer: CompactWriter, obj: dict) -> None:
        for name in sorted(self.fields):  # the order jetconnect writes variable-size fields in
            getattr(writer, f"write_{self.fields[name].name.lower()}")(name, obj[name])

    def read(self, reader: ClientReader) -> dict:
        return {name: getattr(reader, f"read_{kind.name.lower()}")(name) for name, kind in self.fields.items()}

    def get_type_name(self) -> str:
        return self.type_name

    def get_class(self) -> type:
        return dict


FLAT = T.StructType(
    [
        T.StructField("id", T.LongType(), False),
        T.StructField("discount", T.LongType()),
        T.StructField("name", T.StringType()),
        T.StructField("paid", T.BooleanType(), False),
        T.StructField("price", T.DecimalType(12, 2)),
        T.StructField("day", T.DateType()),
        T.StructField("stamp", T.TimestampType()),
        T.StructField("tags", T.ArrayType(T.StringType())),
        T.StructField("scores", T.ArrayType(T.IntegerType(), containsNull=False)),
    ]
)
FLAT_ROW = {
    "id": 7,
    "discount": None,
    "name": "ünïcode",
    "paid": True,
    "price": decimal.Decimal("-10.25"),
    "day": dt.date(2026, 12, 1),
    "stamp": dt.datetime(2026, 12, 1, 21, 42, 12, 5000, tzinfo=UTC),
    "tags": ["x", None],
    "scores": [1, 2, 3],
}


def test_the_bytes_are_the_official_clients_for_the_same_record() -> None:
    plan = CompactPlan.of(FLAT, "com.acme.Flat")
    schema = plan.schemas[""]
    kinds = {f.name: f.kind for f in schema.fields}
    config = Config()
    config.default_int_type = IntType.LONG
    config.compact_serializers = [_DictSerializer("com.acme.Flat", kinds)]
    official = SerializationServiceV1(config)
    official.compact_stream_serializer.register_schema_to_type(schema, dict)
    theirs = bytes(official.to_data(dict(FLAT_ROW)).buffer)
    ours = plan.encode(_struct_column([FLAT_ROW], FLAT), "value")[0]
    assert ours == theirs
    assert official.to_object(Data(ours)) == FLAT_ROW  # and the official reader reads ours


def test_schema_ids_are_the_clients_and_nullable_columns_take_nullable_kinds() -> None:
    plan = CompactPlan.of(FLAT, "com.acme.Flat")
    kinds = {f.name: f.kind for f in plan.schemas[""].fields}
    assert kinds["id"] == K.INT64 and kinds["discount"] == K.NULLABLE_INT64 and kinds["paid"] == K.BOOLEAN
    assert kinds["scores"] == K.ARRAY_OF_INT32 and kinds["tags"] == K.ARRAY_OF_STRING
    again = CompactPlan.of(FLAT, "com.acme.Flat").schemas[""]
    assert again.schema_id == plan.schemas[""].schema_id != CompactPlan.of(FLAT, "com.acme.Other").schemas[""].schema_id


def test_a_derived_schema_is_the_union_of_a_types_versions() -> None:
    service = _service()
    v1 = T.StructType([T.StructField("id", T.LongType(), False), T.StructField("name", T.StringType())])
    v2 = T.StructType([*v1.fields, T.StructField("note", T.StringType()), T.StructField("n", T.IntegerType(), False)])
    plans = [CompactPlan.of(v, "com.acme.V") for v in (v1, v2)]
    values = []
    for plan, struct, row in (
        (plans[0], v1, {"id": 1, "name": "a"}),
        (plans[1], v2, {"id": 2, "name": "b", "note": "x", "n": 3}),
    ):
        service.compact_stream_serializer.register_schema_to_id(plan.schemas[""])
        values.append(CompactData(plan.encode(_struct_column([row], struct), "v")[0] or b""))
    reader = CompactReader(CompactSchemas(_client(service)))
    derived = derived_type(reader.schemas_by_path(values))
    assert derived == T.StructType(
        [
            T.StructField("id", T.LongType(), False),
            T.StructField("n", T.IntegerType(), True),  # version 1 lacks it: null there
            T.StructField("name", T.StringType()),
            T.StructField("note", T.StringType()),
        ]
    )
    assert reader.column(values, derived, str).to_pylist() == [
        {"id": 1, "n": None, "name": "a", "note": None},
        {"id": 2, "n": 3, "name": "b", "note": "x"},
    ]


def _records(
    service: SerializationServiceV1, struct: T.StructType, type_name: str, rows: list[dict]
) -> list[CompactData]:
    plan = CompactPlan.of(struct, type_name)
    for schema in plan.schemas.values():
        service.compact_stream_serializer.register_schema_to_id(schema)
    return [CompactData(raw or b"") for raw in plan.encode(_struct_column(rows, struct), "v")]


def test_versions_that_cannot_be_merged_say_so() -> None:
    service = _service()
    reader = CompactReader(CompactSchemas(_client(service)))
    a = _records(service, T.StructType([T.StructField("x", T.LongType())]), "t.A", [{"x": 1}])
    b = _records(service, T.StructType([T.StructField("x", T.StringType())]), "t.A", [{"x": "1"}])
    c = _records(service, T.StructType([T.StructField("y", T.LongType())]), "t.C", [{"y": 1}])
    with pytest.raises(SchemaError, match="disagree on field 'x' \\(bigint and string\\)"):
        derived_type(reader.schemas_by_path(a + b))
    with pytest.raises(SchemaError, match="2 type names \\('t.A', 't.C'\\)"):
        derived_type(reader.schemas_by_path(a + c))


def test_an_explicit_schema_matches_fields_by_name_and_names_a_mismatch() -> None:
    service = _service()
    reader = CompactReader(CompactSchemas(_client(service)))
    records = _records(service, FLAT, "com.acme.Flat", [FLAT_ROW])
    narrow = T.StructType([T.StructField("name", T.StringType()), T.StructField("absent", T.LongType())])
    assert reader.column(records, narrow, str).to_pylist() == [{"name": "ünïcode", "absent": None}]
    wider = T.StructType([T.StructField("scores", T.ArrayType(T.LongType()))])  # int32 items into longs
    assert reader.column(records, wider, str).to_pylist() == [{"scores": [1, 2, 3]}]
    as_text = T.StructType([T.StructField("day", T.StringType()), T.StructField("tags", T.StringType())])
    assert reader.column(records, as_text, str).to_pylist() == [{"day": "2026-12-01", "tags": '["x",null]'}]
    wrong = T.StructType([T.StructField("name", T.LongType())])
    with pytest.raises(SchemaError, match="entry 'k0'.*field 'name' of 'com.acme.Flat' is STRING.*bigint"):
        reader.column(records, wrong, lambda i: f"entry 'k{i}'")
    too_small = T.StructType([T.StructField("price", T.DecimalType(3, 1))])
    with pytest.raises(SchemaError, match="entry 'k0'.*'price' holds Decimal\\('-10.25'\\)"):
        reader.column(records, too_small, lambda i: f"entry 'k{i}'")
    with pytest.raises(SchemaError, match="entry 'k1'.*is a str, not a Compact record"):
        reader.column([records[0], "plain"], narrow, lambda i: f"entry 'k{i}'")


def test_what_has_no_compact_kind_is_refused_naming_the_field() -> None:
    with pytest.raises(SchemaError, match="column 'value.totals' of type map<string,bigint> has no Compact kind"):
        kind_of(T.MapType(T.StringType(), T.LongType()), True, "value.totals")
    with pytest.raises(SchemaError, match="'m' of type array<array<int>>"):
        CompactPlan.of(T.StructType([T.StructField("m", T.ArrayType(T.ArrayType(T.IntegerType())))]), "t")
    for bad in ("", " com.acme.Order", "com.acme.Order\n", None, 7):
        with pytest.raises(OptionError, match="value_compact_type_name"):
            check_type_name("value_compact_type_name", bad)
    with pytest.raises(OptionError, match="'nope', which is no struct field"):
        CompactPlan.of(FLAT, "t", {"nope": "t.Nope"})


def test_field_names_with_dots_spaces_and_accents_round_trip() -> None:
    service = _service()
    struct = T.StructType(
        [
            T.StructField("a.b", T.LongType()),
            T.StructField("with space", T.StringType()),
            T.StructField("ñame", T.IntegerType()),
        ]
    )
    records = _records(service, struct, "t.Odd", [{"a.b": 1, "with space": "x", "ñame": 3}])
    reader = CompactReader(CompactSchemas(_client(service)))
    assert reader.column(records, struct, str).to_pylist() == [{"a.b": 1, "with space": "x", "ñame": 3}]
    assert derived_type(reader.schemas_by_path(records)).fieldNames() == ["a.b", "with space", "ñame"]
