"""The columns of a Kafka record as Spark sees them (the same names as Spark's own Kafka source)."""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

HEADERS = ArrayType(
    StructType([StructField("key", StringType(), True), StructField("value", BinaryType(), True)]), True
)


def record_schema(key_type: DataType, value_type: DataType) -> StructType:
    """key, value, topic, partition, offset, timestamp, timestamp_type, headers."""
    return StructType(
        [
            StructField("key", key_type, True),
            StructField("value", value_type, True),
            StructField("topic", StringType(), False),
            StructField("partition", IntegerType(), False),
            StructField("offset", LongType(), False),
            StructField("timestamp", TimestampType(), True),
            # 0 = CreateTime (set by the producer), 1 = LogAppendTime (set by the broker)
            StructField("timestamp_type", IntegerType(), True),
            StructField("headers", HEADERS, True),
        ]
    )


__all__ = ["HEADERS", "record_schema"]
