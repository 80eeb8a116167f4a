"""The DDL parser against random and hostile schema strings.

Any text either parses to the right StructType or raises a SchemaError that quotes it, in bounded
time: never a RecursionError, IndexError or ValueError from deep inside. "Right" is checked two
ways: schemas drawn at random and written out as DDL in any of Spark's spellings parse back to
themselves, and tricky cases give what Spark 4.3's own parser gave for them.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from jetconnect import SchemaError
from jetconnect._ddl import MAX_NESTING, parse_schema

#: CPU seconds any one parse may take (CPU, not wall time: other tests share the machine).
TIME_BOUND = 2.0

# --- writing DDL ---------------------------------------------------------------------------------

SPELLINGS: dict[type, list[str]] = {
    ByteType: ["tinyint", "byte"],
    ShortType: ["smallint", "short"],
    IntegerType: ["int", "integer"],
    LongType: ["bigint", "long"],
    FloatType: ["float", "real"],
    DoubleType: ["double"],
    StringType: ["string"],
    BinaryType: ["binary"],
    BooleanType: ["boolean"],
    DateType: ["date"],
    TimestampType: ["timestamp", "timestamp_ltz"],
    TimestampNTZType: ["timestamp_ntz"],
    NullType: ["void"],
}


def quoted(name: str, draw: st.DrawFn) -> str:
    plain = name != "" and all(c.isascii() and (c.isalnum() or c == "_") for c in name) and not name.isdigit()
    if plain and draw(st.booleans()):
        return name
    return "`" + name.replace("`", "``") + "`"


def spelled(word: str, draw: st.DrawFn) -> str:
    return draw(st.sampled_from([word, word.upper(), word.capitalize()]))


def space(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(["", " ", "  ", "\n", "\t ", " \r\n "]))


def ddl_of_type(data_type: DataType, draw: st.DrawFn) -> str:
    s = lambda: space(draw)  # noqa: E731 - a fresh bit of whitespace at each call
    if isinstance(data_type, DecimalType):
        word = spelled(draw(st.sampled_from(["decimal", "dec", "numeric"])), draw)
        p, q = data_type.precision, data_type.scale
        forms = [f"{word}{s()}({s()}{p}{s()},{s()}{q}{s()})"]
        if q == 0:
            forms.append(f"{word}({p})")
        if (p, q) == (10, 0):
            forms.append(word)
        return draw(st.sampled_from(forms))
    if isinstance(data_type, ArrayType):
        return f"{spelled('array', draw)}{s()}<{s()}{ddl_of_type(data_type.elementType, draw)}{s()}>"
    if isinstance(data_type, MapType):
        key, value = ddl_of_type(data_type.keyType, draw), ddl_of_type(data_type.valueType, draw)
        return f"{spelled('map', draw)}{s()}<{s()}{key}{s()},{s()}{value}{s()}>"
    if isinstance(data_type, StructType):
        return f"{spelled('struct', draw)}{s()}<{s()}{ddl_of_fields(data_type, draw)}{s()}>"
    return spelled(draw(st.sampled_from(SPELLINGS[type(data_type)])), draw)


def ddl_of_fields(struct: StructType, draw: st.DrawFn) -> str:
    parts = []
    for field in struct.fields:
        colon = draw(st.sampled_from(["", ":", " : ", ": "]))
        not_null = "" if field.nullable else " " + spelled("not", draw) + " " + spelled("null", draw)
        name, data_type = quoted(field.name, draw), ddl_of_type(field.dataType, draw)
        parts.append(f"{name}{colon if colon else ' '}{space(draw)}{data_type}{not_null}")
    return ("," + space(draw)).join(parts)


# --- schemas -------------------------------------------------------------------------------------

NAMES = st.one_of(
    st.sampled_from(["a", "id", "Name", "x1", "1a", "_", "select", "int", "struct", "not"]),
    st.text(min_size=0, max_size=6),  # anything at all, backticks, quotes and newlines included
)
PRIMITIVE = st.one_of(
    st.sampled_from([t() for t in SPELLINGS if t is not NullType]),
    st.integers(1, 38).flatmap(lambda p: st.integers(0, p).map(lambda q: DecimalType(p, q))),
)


@st.composite
def struct_types(draw: st.DrawFn, children: st.SearchStrategy[DataType], min_size: int = 0) -> StructType:
    named = draw(st.lists(st.tuples(NAMES, children, st.booleans()), min_size=min_size, max_size=4))
    return StructType([StructField(n, t, nullable) for n, t, nullable in named])


TYPES = st.recursive(
    PRIMITIVE,
    lambda children: st.one_of(
        children.map(lambda t: ArrayType(t, True)),  # DDL says nothing of element nullability: Spark's default
        st.tuples(children, children).map(lambda kv: MapType(kv[0], kv[1], True)),
        struct_types(children),
    ),
    max_leaves=4,
)


@st.composite
def schemas(draw: st.DrawFn) -> StructType:
    schema = draw(struct_types(TYPES, min_size=1))
    void = draw(st.booleans())  # a void column, nullable as it must be
    return StructType([*schema.fields, StructField("v", NullType(), True)]) if void else schema


def timed_parse(text: str) -> StructType:
    start = time.process_time()
    try:
        return parse_schema(text)
    finally:
        assert time.process_time() - start < TIME_BOUND, f"parsing {len(text)} characters took too long"


# --- properties ----------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_schema_written_in_any_spelling_parses_back_to_itself(data):
    schema = data.draw(schemas())
    body = ddl_of_fields(schema, data.draw)
    text = data.draw(st.sampled_from([body, f"struct<{body}>", f"  {body}\n"]))
    assert timed_parse(text) == schema, text


ALPHABET = st.sampled_from(
    list("<>(),:`'\" \n\t\\-.;*/0123456789abcdeiglmnoprstuyzAN_é\x00")
    + [
        "array<",
        "map<",
        "struct<",
        "int",
        "decimal(",
        "NOT NULL",
        "``",
        "string",
        ", ",
        ">",
        "<<",
        "timestamp_ntz",
    ]
)


def check_either_right_or_typed(text: str) -> None:
    try:
        schema = timed_parse(text)
    except SchemaError as exc:
        message = str(exc)
        assert message.startswith("cannot parse schema "), message
        if len(text) < 100:
            assert repr(text) in message, message  # the DDL, quoted
        assert len(message) < 600, f"a {len(message)}-character message"
        return
    assert isinstance(schema, StructType) and schema.fields
    # whatever was accepted means one schema: writing it out again gives the same one
    assert parse_schema(canonical(schema)) == schema


def canonical(data_type: DataType) -> str:
    """DDL for ``data_type`` in one plain spelling (simpleString() would drop NOT NULL and quotes)."""
    if isinstance(data_type, StructType):
        fields = (
            f"`{f.name.replace('`', '``')}`: {canonical(f.dataType)}{'' if f.nullable else ' NOT NULL'}"
            for f in data_type.fields
        )
        return f"struct<{', '.join(fields)}>"
    if isinstance(data_type, ArrayType):
        return f"array<{canonical(data_type.elementType)}>"
    if isinstance(data_type, MapType):
        return f"map<{canonical(data_type.keyType)}, {canonical(data_type.valueType)}>"
    return data_type.simpleString()


@settings(max_examples=400, deadline=None)
@given(st.lists(ALPHABET, max_size=40).map("".join))
def test_random_text_parses_or_raises_a_schema_error_quoting_it(text):
    check_either_right_or_typed(text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_valid_ddl_cut_or_spliced_anywhere_parses_or_raises_a_schema_error(data):
    schema = data.draw(schemas())
    text = ddl_of_fields(schema, data.draw)
    at = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(at, min(len(text), at + 4)))
    splice = data.draw(st.one_of(st.just(""), ALPHABET, st.text(max_size=3)))
    check_either_right_or_typed(text[:at] + splice + text[end:])


# --- what Spark 4.3's parser gave, and what it refuses ---------------------------------------------

SPARK_SAYS = {  # DDL -> simpleString, from pyspark's _parse_datatype_string on Spark 4.3.0
    "a int, `b``c` string": "struct<a:int,b`c:string>",
    "s struct<a int, b: string>": "struct<s:struct<a:int,b:string>>",
    "struct<a: int>": "struct<a:int>",
    "1a int": "struct<1a:int>",
    "`1` int": "struct<1:int>",
    "a int, a int": "struct<a:int,a:int>",
    "d decimal(5)": "struct<d:decimal(5,0)>",
    "d DECIMAL": "struct<d:decimal(10,0)>",
    "a INT\n,\tb STRING": "struct<a:int,b:string>",
    "`` int": "struct<:int>",
    "m map<array<int>, int>": "struct<m:map<array<int>,int>>",
    "a timestamp_ltz, b real, c dec(3,1), d numeric": "struct<a:timestamp,b:float,c:decimal(3,1),d:decimal(10,0)>",
    "a void": "struct<a:void>",
    "select int": "struct<select:int>",
    "a struct<>": "struct<a:struct<>>",
    "a struct<`x y`: int>": "struct<a:struct<x y:int>>",
    "a: int": "struct<a:int>",
    "a long, b short, c byte": "struct<a:bigint,b:smallint,c:tinyint>",
}


@pytest.mark.parametrize("ddl", SPARK_SAYS)
def test_ddl_parses_as_spark_parses_it(ddl):
    assert parse_schema(ddl).simpleString() == SPARK_SAYS[ddl]


def test_not_null_is_kept_where_spark_keeps_it():
    schema = parse_schema("id bigint NOT NULL, s struct<a: int not null, b int>")
    assert schema["id"].nullable is False
    assert schema["s"].dataType["a"].nullable is False and schema["s"].dataType["b"].nullable is True


@pytest.mark.parametrize(
    "ddl, says",
    [
        ("d decimal(39,1)", "precision must be 1 to 38"),  # Spark: DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION
        ("d decimal(5,6)", "scale 0 to the precision"),  # Spark: ParseException
        ("d decimal(0)", "precision must be 1 to 38"),
        ("d decimal(x)", "expected a small number, found 'x'"),
        ("d decimal(99999999999999999999)", "expected a small number"),
        ("a int,", "expected a column name, found the end"),
        (", a int", "expected a column name, found ','"),
        ("< int", "expected a column name, found '<'"),
        ("a array<int", "expected '>', found the end"),
        ("a array<int>>", "unexpected '>'"),
        ("a map<int>", "expected ',', found '>'"),
        ("a int COMMENT 'x'", "unexpected 'COMMENT' at character 6"),  # comments are not supported
        ("x varchar(3)", "unexpected '('"),
        ("a interval", "unknown type 'interval'"),
        ("a `unclosed int", "an unclosed backtick at character 2"),
        ("a int; drop table t", "unexpected '; drop table t' at character 5"),
        ("a void NOT NULL", "void NOT NULL"),
        ("", "it is empty"),
        ("   \n ", "it is empty"),
        ("struct<>", "it has no columns"),  # a nested struct<> is a column of no fields, as in Spark
    ],
)
def test_bad_ddl_is_a_schema_error_saying_where(ddl, says):
    with pytest.raises(SchemaError, match="cannot parse schema") as caught:
        parse_schema(ddl)
    assert says in str(caught.value)
    assert repr(ddl) in str(caught.value)


def test_a_schema_is_text_or_a_struct_type():
    with pytest.raises(SchemaError, match="DDL text or a StructType, not int"):
        parse_schema(123)  # type: ignore[arg-type]


@pytest.mark.parametrize("opening", ["array<", "map<int, ", "struct<a: ", "struct<a "])
def test_nesting_is_bounded_and_never_a_recursion_error(opening):
    closing = {"array<": ">", "map<int, ": ">", "struct<a: ": ">", "struct<a ": ">"}[opening]
    deepest = f"c {opening * MAX_NESTING}int{closing * MAX_NESTING}"
    assert parse_schema(deepest).fields[0].name == "c"
    too_deep = f"c {opening * (MAX_NESTING + 1)}int{closing * (MAX_NESTING + 1)}"
    with pytest.raises(SchemaError, match=f"nested deeper than {MAX_NESTING} levels"):
        parse_schema(too_deep)
    hostile = f"c {opening * 200_000}"  # unbalanced too: the depth check comes first
    with pytest.raises(SchemaError, match=f"nested deeper than {MAX_NESTING} levels"):
        timed_parse(hostile)


def test_huge_text_is_parsed_or_refused_in_linear_time_and_quoted_short():
    wide = ", ".join(f"c{i} bigint" for i in range(20_000))
    assert len(timed_parse(wide).fields) == 20_000
    for garbage in ["a " + "x" * 1_000_000, "a int" + " " * 1_000_000 + ",", "`" * 1_000_001, "a int, " * 20_000 + "%"]:
        with pytest.raises(SchemaError) as caught:
            timed_parse(garbage)
        assert len(str(caught.value)) < 600
