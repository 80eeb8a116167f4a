"""A broker whose high watermark lies: the source names it instead of returning part of a partition.

tansu 0.6 reports the base offset of a partition's last record *batch* + 1 as its high watermark,
so 100 records a default (batching) producer sent in one batch look like 1. A read that trusted
it returned 1 record of 100 without a word. The broker is the test's subject here, so this is
the one place tansu is the right broker (conftest.py).
"""

from __future__ import annotations

import pytest

from jetconnect import sources
from jetconnect_kafka import KafkaWatermarkError

pytestmark = pytest.mark.spark


def test_records_served_past_the_high_watermark_fail_the_read_naming_the_broker(spark, tansu, available_now) -> None:
    topic = tansu.topic()
    n = tansu.produce(topic, (f"v{i}" for i in range(100)))
    [high] = tansu.ends(topic, [0]).values()
    assert 0 < high < n, f"tansu reported high watermark {high} for {n} records: the lie this test needs"
    source = sources.kafka(bootstrap_servers=tansu.bootstrap, topics=[topic], value_format="string")
    named = (
        rf"broker 127\.0\.0\.1:9092 \(id \d+\) served topic '{topic}' partition 0 offset {high}, "
        rf"at or past the high watermark {high} it reports for that partition \(reading offsets 0 to {high}\)"
    )

    with pytest.raises(KafkaWatermarkError, match=named):
        [batch for split in source.splits() for batch in source.read_split(split)]
    with pytest.raises(Exception, match=named):  # a batch read through Spark: not `high` rows of n
        source.read(spark).collect()
    with pytest.raises(Exception, match=named):  # an AvailableNow stream: not `high` rows, then done
        available_now(source.read_stream(spark))
