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


#: With ``on_bad_record="null"``: the bytes of a key or value that did not decode (else null).
CORRUPT_COLUMNS = ("_corrupt_key", "_corrupt_value")


def record_schema(key_type: DataType, value_type: DataType, corrupt_columns: bool = False) -> StructType:
    """key, value, topic, partition, offset, timestamp, timestamp_type, headers (and, with
    ``corrupt_columns``, :data:`CORRUPT_COLUMNS`, as Spark's ``_corrupt_record``)."""
    schema = StructType(
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
    for name in CORRUPT_COLUMNS if corrupt_columns else ():
        schema = schema.add(StructField(name, BinaryType(), True))
    return schema


__all__ = ["CORRUPT_COLUMNS", "HEADERS", "record_schema"]
