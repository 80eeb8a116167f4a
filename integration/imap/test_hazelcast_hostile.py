"""Careless inputs to the Hazelcast connectors, on the shared cluster: each is refused before an
entry leaves, naming what is wrong, or written so that nothing is half done."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql.types import StructType

from jetconnect._connector import WriteContext
from jetconnect.errors import OptionError, SchemaError, SinkError
from jetconnect_imap.errors import StructureNameError
from jetconnect_imap.factories import map_journal, map_sink, map_source

from .conftest import HAZELCAST_URL

BATCH = WriteContext(partition_id=0, attempt=0, batch_id=None, query_id=None, schema=StructType())


@pytest.mark.parametrize("store_url", ["sqlite", "hazelcast"], indirect=True)
def test_a_value_column_that_names_no_column_is_an_error_not_the_other_columns(spark, store_url, name, hz) -> None:
    target = name("typo")
    df = spark.range(3).selectExpr("id AS key", "id AS amount", "'x' AS note")
    with pytest.raises(Exception, match="no column 'amont' named by value_column"):
        map_sink(target, store=store_url, value_column="amont").write(df)
    assert map_source(target, store=store_url).read(spark).count() == 0
    map_sink(target, store=store_url).write(df)  # unset: the other columns as one value, as documented
    assert (
        sorted(r["value"] for r in map_source(target, store=store_url).read(spark).collect())[0]
        == '{"amount":0,"note":"x"}'
    )


def test_a_null_key_fails_before_its_chunk_leaves_and_never_half_a_chunk(hz, name) -> None:
    target = name("nullkey")
    keys = [f"k{i}" for i in range(15_000)]
    keys[12_345] = None
    batch = pa.RecordBatch.from_arrays([pa.array(keys), pa.array(range(15_000), pa.int64())], names=["key", "value"])
    with pytest.raises(
        SinkError, match=r"null key \(row 12345 of this task\).*the 10000 row\(s\) before this chunk were written"
    ):
        map_sink(target, store=HAZELCAST_URL, chunk_rows=10_000).write_partition(iter([batch]), BATCH)
    imap = hz.get_map(target).blocking()
    assert imap.size() == 10_000  # the first chunk whole, nothing of the second
    assert imap.get("k9999") == 9999 and imap.get("k10000") is None


def test_names_and_functions_hazelcast_would_take_but_nobody_could_read_are_refused(name) -> None:
    for bad in ("", "orders\n", "a\tb", None):
        with pytest.raises(StructureNameError, match="must be a non-empty string of printable characters"):
            map_sink(bad, store=HAZELCAST_URL)
        with pytest.raises(StructureNameError):
            map_source(bad, store=HAZELCAST_URL)
        with pytest.raises(StructureNameError):
            map_journal(bad, store=HAZELCAST_URL)
    with pytest.raises(OptionError, match="option 'predicate' must be a Hazelcast predicate .* got str"):
        map_source(name("m"), store=HAZELCAST_URL, predicate="amount > 1")
    with pytest.raises(OptionError, match="option 'projection' must be a Python function of the event"):
        map_journal(name("m"), store=HAZELCAST_URL, projection="key")
    with pytest.raises(SchemaError):
        map_source(name("m"), store=HAZELCAST_URL, schema="a string, b string, c string")
