"""Spark's own Kafka source and sink options (spark-sql-kafka-0-10), as jetconnect's options.

A pipeline moved from ``format("kafka")`` to ``format("jetconnect.kafka")`` keeps its options:
each of Spark's names is an :class:`~jetconnect.api.OptionAlias` of the option that means the same
(``subscribe`` is ``topics``, ``failOnDataLoss=false`` is ``on_offset_out_of_range=earliest``), and
one that cannot carry over is refused with what to give instead. ``kafka.*`` settings pass to
librdkafka, Java client settings translated (:mod:`.java_settings`). The Kafka README's table
"Spark's Kafka options" lists every name here; a test checks it does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jetconnect.api import OptionAlias


def _true_false(value: Any) -> bool:
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"must be true or false, got {value!r}")
    return text == "true"


def _on_data_loss(value: Any) -> str:
    # Spark's failOnDataLoss=false goes on from the earliest offset the broker still holds.
    return "fail" if _true_false(value) else "earliest"


def _milliseconds(value: Any) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        raise ValueError(f"must be epoch milliseconds, got {value!r}") from None


def _seconds_of_ms(value: Any) -> float:
    return _milliseconds(value) / 1000


def _time(value: Any) -> str:
    return str(_milliseconds(value))


_PER_PARTITION_TIMES = (
    "jetconnect starts or ends every partition at one time: give starting_offsets / ending_offsets as epoch "
    "milliseconds or an ISO-8601 time, or as a JSON map of offsets per partition"
)
_MINIMUM = (
    "jetconnect plans each micro-batch from what has arrived; to gather more per micro-batch, give the "
    "query a processingTime trigger (e.g. trigger(processingTime='1 minute'))"
)
_RETRIES = "give broker_timeout_s: a broker that does not answer is retried with backoff for that long"
_SPLITS = "a Spark partition reads one Kafka partition's range; cap a micro-batch with max_records_per_batch"

_BOOTSTRAP = OptionAlias("bootstrap_servers")

#: Spark's Kafka source options, for ``sources.kafka`` (:attr:`KafkaSource.option_aliases`).
SOURCE_ALIASES: Mapping[str, OptionAlias] = {
    "kafka.bootstrap.servers": _BOOTSTRAP,
    "bootstrap.servers": _BOOTSTRAP,
    "subscribe": OptionAlias("topics"),
    "subscribePattern": OptionAlias("pattern"),
    "startingOffsets": OptionAlias("starting_offsets"),
    "endingOffsets": OptionAlias("ending_offsets"),
    "startingTimestamp": OptionAlias("starting_offsets", _time),
    "endingTimestamp": OptionAlias("ending_offsets", _time),
    "startingOffsetsByTimestamp": OptionAlias(None, refusal=_PER_PARTITION_TIMES),
    "endingOffsetsByTimestamp": OptionAlias(None, refusal=_PER_PARTITION_TIMES),
    "startingOffsetsByTimestampStrategy": OptionAlias(
        None, refusal="a partition with no record at or after the starting time starts at its end (Spark's 'latest')"
    ),
    "maxOffsetsPerTrigger": OptionAlias("max_records_per_batch"),
    "minOffsetsPerTrigger": OptionAlias(None, refusal=_MINIMUM),
    "maxTriggerDelay": OptionAlias(None, refusal=_MINIMUM),
    "failOnDataLoss": OptionAlias("on_offset_out_of_range", _on_data_loss),
    "includeHeaders": OptionAlias("include_headers", _true_false),
    "kafkaConsumer.pollTimeoutMs": OptionAlias("broker_timeout_s", _seconds_of_ms),
    "fetchOffset.numRetries": OptionAlias(None, refusal=_RETRIES),
    "fetchOffset.retryIntervalMs": OptionAlias(None, refusal=_RETRIES),
    "minPartitions": OptionAlias(None, refusal=_SPLITS),
    "maxRecordsPerPartition": OptionAlias(None, refusal=_SPLITS),
    "groupIdPrefix": OptionAlias(
        None,
        refusal="jetconnect reads by assigning partitions, in no consumer group; give group_id to commit the "
        "processed offsets to a group for lag monitoring",
    ),
}

#: Spark's Kafka sink options, for ``sinks.kafka`` (:attr:`KafkaSink.option_aliases`).
SINK_ALIASES: Mapping[str, OptionAlias] = {
    "kafka.bootstrap.servers": _BOOTSTRAP,
    "bootstrap.servers": _BOOTSTRAP,
}


def parse_assign(assign: Any) -> dict[str, list[int]]:
    """Spark's ``assign``: ``{"topicA": [0, 1], "topicB": [2]}`` (a dict, or its JSON)."""
    parsed = json.loads(assign) if isinstance(assign, str) else assign
    if not isinstance(parsed, dict) or not parsed:
        raise ValueError('must be a JSON object of topics and partition lists, e.g. {"orders": [0, 1]}')
    out: dict[str, list[int]] = {}
    for topic, partitions in parsed.items():
        if not isinstance(partitions, list) or not partitions:
            raise ValueError(f"topic {topic!r} needs a list of partitions, got {partitions!r}")
        for p in partitions:
            if type(p) is not int or p < 0:
                raise ValueError(f"partition {p!r} of topic {topic!r} is not a partition number")
        out[str(topic)] = sorted(set(partitions))
    return out


__all__ = ["SINK_ALIASES", "SOURCE_ALIASES", "parse_assign"]
