"""What tansu gets wrong, on noida-db: starting from a timestamp needs a working offsets_for_times."""

from __future__ import annotations

import time

from confluent_kafka import Producer

from jetconnect import sources


def test_starting_from_a_timestamp_finds_the_first_record_at_or_after_it(noida_kafka) -> None:
    topic = noida_kafka.topic(partitions=2)
    producer = Producer({"bootstrap.servers": noida_kafka.bootstrap, "linger.ms": 0})
    base = int(time.time() * 1000) - 60_000  # recent: older records fall to the broker's retention
    for i in range(20):  # partition i % 2 gets timestamps base, base+2000, ... / base+1000, ...
        producer.produce(topic, value=str(i).encode(), partition=i % 2, timestamp=base + i * 1000)
    producer.flush(30)
    source = sources.kafka(bootstrap_servers=noida_kafka.bootstrap, topics=[topic], starting_offsets=str(base + 9500))
    start = source.initial_offset()
    assert start == {f"{topic}:0": 5, f"{topic}:1": 5}  # i = 10 and i = 11
    later = sources.kafka(bootstrap_servers=noida_kafka.bootstrap, topics=[topic], starting_offsets=str(base + 3_600_000))
    assert later.initial_offset() == {f"{topic}:0": 10, f"{topic}:1": 10}  # nothing that late: the end
    [first] = [r for r in source.ranges(start, source.latest_offset(start, 1)) if r.partition.endswith(":0")] or [None]
    values = [row["value"] for batch in source.read_range(first) for row in batch.to_pylist()]
    assert values == [b"10"]
