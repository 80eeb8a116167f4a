"""Kafka for jetconnect: a replayable source and an exactly-once sink, on confluent-kafka.

``sources.kafka(...)`` reads exact offset ranges per topic-partition (offsets live in Spark's
checkpoint); ``sinks.kafka(...)`` writes each micro-batch partition in one Kafka transaction.
"""

from __future__ import annotations

from jetconnect_kafka.errors import KafkaOffsetError, KafkaSecurityError, KafkaSinkError, KafkaSourceError
from jetconnect_kafka.records import ConsumerRecord, ProducerRecord
from jetconnect_kafka.sink import KafkaSink, kafka_sink
from jetconnect_kafka.source import KafkaSource, kafka_source

__all__ = [
    "ConsumerRecord",
    "ProducerRecord",
    "KafkaOffsetError",
    "KafkaSecurityError",
    "KafkaSink",
    "KafkaSinkError",
    "KafkaSource",
    "KafkaSourceError",
    "kafka_sink",
    "kafka_source",
]
