"""The shared walk from Spark's pushed filters to plain tuples (jetconnect/_pushdown.py)."""

from __future__ import annotations

import pickle

from pyspark.sql import datasource as ds
from pyspark.sql import types as T

from jetconnect.api import filter_operands, plain_filter

COLUMNS = {"k": T.LongType(), "s": T.StringType()}


def _everything(_plain, _type) -> bool:
    return True


def test_each_kind_has_its_plain_form() -> None:
    cases = {
        ds.EqualTo(("k",), 1): ("=", "k", 1),
        ds.GreaterThan(("k",), 1): (">", "k", 1),
        ds.GreaterThanOrEqual(("k",), 1): (">=", "k", 1),
        ds.LessThan(("k",), 1): ("<", "k", 1),
        ds.LessThanOrEqual(("k",), 1): ("<=", "k", 1),
        ds.In(("k",), (1, 2)): ("in", "k", (1, 2)),
        ds.IsNull(("s",)): ("null", "s"),
        ds.IsNotNull(("s",)): ("not null", "s"),
        ds.Not(ds.EqualTo(("k",), 1)): ("not", ("=", "k", 1)),
    }
    for spark_filter, plain in cases.items():
        assert plain_filter(spark_filter, COLUMNS, _everything) == plain
        assert pickle.loads(pickle.dumps(plain)) == plain


def test_nested_unknown_and_unsupported_filters_stay_with_spark() -> None:
    for spark_filter in (
        ds.EqualTo(("k", "inner"), 1),  # a struct field
        ds.EqualTo(("other",), 1),  # not a column of the source
        ds.EqualNullSafe(("k",), 1),
        ds.StringStartsWith(("s",), "a"),
        ds.Not(ds.StringContains(("s",), "a")),
    ):
        assert plain_filter(spark_filter, COLUMNS, _everything) is None


def test_the_sources_rule_decides_and_sees_the_columns_type() -> None:
    seen = []

    def integral_only(plain, spark_type) -> bool:
        seen.append((plain, spark_type))
        return isinstance(spark_type, T.LongType)

    assert plain_filter(ds.EqualTo(("s",), "x"), COLUMNS, integral_only) is None
    assert plain_filter(ds.Not(ds.EqualTo(("k",), 3)), COLUMNS, integral_only) == ("not", ("=", "k", 3))
    assert seen == [(("=", "s", "x"), T.StringType()), (("=", "k", 3), T.LongType())]


def test_the_attribute_names_the_column_in_the_sources_terms() -> None:
    plain = plain_filter(ds.Not(ds.In(("k",), [1])), COLUMNS, _everything, attribute=lambda name: f"__{name}")
    assert plain == ("not", ("in", "__k", (1,)))


def test_operands() -> None:
    assert filter_operands(("in", "k", (1, 2))) == (1, 2)
    assert filter_operands(("<", "k", None)) == (None,)
    assert filter_operands(("null", "k")) == ()
