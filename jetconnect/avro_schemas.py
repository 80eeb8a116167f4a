"""Avro schemas and Spark schemas, mapped both ways as Spark's own Avro source maps them.

For plugins that carry Avro: the files plugin's Avro files and the Kafka plugin's Avro serde read
and write through this one mapping, so an Avro value reads back the same wherever it was stored.
"""

from __future__ import annotations

from jetconnect._files.avro_records import avro_data, avro_records
from jetconnect._files.avro_schema import (
    avro_type,
    load_avro_schema,
    may_be_empty,
    needs_fixing,
    to_avro_schema,
    to_spark_schema,
    value_fixer,
)

__all__ = [
    "avro_data",
    "avro_records",
    "avro_type",
    "load_avro_schema",
    "may_be_empty",
    "needs_fixing",
    "to_avro_schema",
    "to_spark_schema",
    "value_fixer",
]
