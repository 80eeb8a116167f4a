"""Map columns through the batch conformance check (the JMS source's headers are a map<string,string>)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from jetconnect._arrow_conform import conform_batch
from jetconnect.errors import JetconnectError

HEADERS = pa.map_(pa.string(), pa.string())


def _batch(maps: list) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(maps, HEADERS)], names=["headers"])


def test_a_map_column_with_null_maps_and_null_values_conforms():
    batch = _batch([[("a", "1")], None, [("b", None)]])
    schema = pa.schema([pa.field("headers", HEADERS)])
    assert conform_batch(batch, schema, "source 'jms'").column(0).to_pylist() == [[("a", "1")], None, [("b", None)]]
    assert conform_batch(batch.slice(1), schema, "source 'jms'").num_rows == 2


def test_a_null_value_in_a_not_null_map_value_names_the_path():
    strict = pa.schema([pa.field("headers", pa.map_(pa.string(), pa.field("value", pa.string(), nullable=False)))])
    with pytest.raises(JetconnectError, match=r"headers\[value\]"):
        conform_batch(_batch([[("a", "1")], [("b", None)]]), strict, "source 'jms'")
    assert conform_batch(_batch([[("a", "1")], [("b", None)]]).slice(0, 1), strict, "source 'jms'").num_rows == 1
