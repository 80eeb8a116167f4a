"""The Kafka source handed an edited or damaged checkpointed offset: it works or raises a typed error.

The same contract as ``tests/core/test_offsets_fuzz.py`` (the sources that need no server), on a
real broker: ``latest_offset``, ``ranges`` and ``read_range`` with random JSON or a real offset
changed in one place either work or raise a :class:`~jetconnect.errors.JetconnectError`.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jetconnect import sources
from jetconnect.fuzzing import JSON, edited, exercise

FUZZ = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


@pytest.fixture(scope="module")
def topic_source(kafka):
    topic = kafka.topic(partitions=2)
    kafka.produce(topic, [f"v{i}" for i in range(20)], partitions=2)
    source = sources.kafka(bootstrap_servers=kafka.bootstrap, topics=[topic], value_format="string")
    start = source.initial_offset()
    end = source.latest_offset(start, None)
    yield source, start, end
    source.stop()


@FUZZ
@given(data=st.data())
def test_any_json_or_an_edited_offset_works_or_is_a_typed_error(topic_source, data):
    source, start, end = topic_source
    fuzzed = data.draw(st.one_of(JSON, edited(start), edited(end)), label="offset")
    exercise(source, start, end, fuzzed)
