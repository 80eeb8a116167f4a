"""Option checks and the pieces of the source and sink that need no broker."""

import pickle
import socket

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jetconnect._arrow_rows import rows_to_batch
from jetconnect._ddl import parse_schema
from jetconnect._retry import RetriesExhausted
from jetconnect.errors import OptionError
from jetconnect_jms import jms_queue_sink, jms_queue_source, jms_topic_source
from jetconnect_jms.consumer import SPOOL_SCHEMA, RecentIds, spool_rows, spooled_to_raw
from jetconnect_jms.messages import frames_to_batch
from jetconnect_jms.sink import _bodies
from jetconnect_jms.source import DEFAULT_DEDUPE_WINDOW, DEFAULT_MAX_BACKLOG, JmsSource
from jetconnect_jms.stomp_client import StompClient, StompSettings, destination_path


def test_destinations_get_their_kind_prefix_unless_given_a_path():
    assert destination_path("queue", "orders") == "/queue/orders"
    assert destination_path("topic", "/topic/x.y") == "/topic/x.y"


def test_a_topic_is_read_by_exactly_one_processor():
    with pytest.raises(OptionError, match="'parallelism' must be 1 for a topic, got 3"):
        jms_topic_source("prices", parallelism=3)
    with pytest.raises(OptionError, match="'subscription'"):
        JmsSource("queue", "q", subscription="s")


@pytest.mark.parametrize(
    "option, value, rule",
    [
        ("prefetch", 0, "be at least 1"),
        ("max_backlog", 0, "be at least 1"),
        ("dedupe_window", 0, "be at least 1"),
        ("max_pull_ms", -1, "not be negative"),
        ("linger_ms", -1, "not be negative"),
        ("idle_poll_ms", -1, "not be negative"),
        ("processor_keep_alive_ms", 0, "be positive for a broker connection"),
    ],
)
def test_tuning_options_out_of_range_are_named(option, value, rule):
    with pytest.raises(OptionError, match=f"jms_queue source '/queue/orders': option '{option}' must {rule}"):
        jms_queue_source("orders", **{option: value})


def test_durable_subscription_gets_a_stable_client_id():
    assert jms_topic_source("prices", subscription="audit").settings.client_id == "jetconnect-audit"
    assert jms_topic_source("prices", subscription="audit", client_id="me").settings.client_id == "me"


def test_streaming_needs_a_wal_location_and_says_where_to_put_it():
    with pytest.raises(OptionError, match="option 'wal_location' is required"):
        jms_queue_source("orders").initial_offset()


def test_source_pickles_without_connections_and_takes_wal_location_from_spark_options():
    source = jms_queue_source("orders", parallelism=2).with_options(
        {"WAL_LOCATION": "/tmp/w", "jetconnect.members": "1"}
    )
    assert source.wal_location == "/tmp/w" and source._stream.options["wal_location"] == "/tmp/w"
    assert pickle.loads(pickle.dumps(source)).destination == "/queue/orders"


def test_a_queue_has_parallelism_consumers_per_executor_and_a_topic_one_in_the_whole_job():
    assert (
        jms_queue_source("orders", parallelism=2).with_options({"jetconnect.members": "3"})._stream.total_parallelism
        == 6
    )
    assert jms_topic_source("prices").with_options({"jetconnect.members": "3"})._stream.total_parallelism == 1


def test_the_core_stream_gets_the_tuning_options_and_room_for_the_dedupe_window():
    options = jms_queue_source("orders", max_pull_ms=0, idle_poll_ms=200, processor_keep_alive_ms=5000)._stream.options
    # a receiver counts every row its spool holds, and commits leave dedupe_window rows there
    assert options.get_int("max_backlog") == DEFAULT_MAX_BACKLOG + DEFAULT_DEDUPE_WINDOW
    assert (options.get_int("max_pull_ms"), options.get_int("idle_poll_ms")) == (1, 200)
    assert options.get_int("processor_keep_alive_ms") == 5000


def test_password_never_shows_in_repr_or_in_a_connection_error():
    settings = StompSettings(port=free_port(), user="u", password="s3cret", connect_timeout=0.3)
    assert "s3cret" not in repr(settings)
    with pytest.raises(RetriesExhausted) as failure:
        StompClient(settings, "jms_queue source '/queue/q'").connect()
    assert "s3cret" not in str(failure.value) and "connecting to the STOMP broker at 127.0.0.1" in str(failure.value)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_recent_ids_forget_the_oldest_past_capacity():
    seen = RecentIds(3)
    seen.add(["a", "b", "c", "d"])
    assert "a" not in seen and {"b", "c", "d"} == {i for i in "bcd" if i in seen}


def test_sink_bodies_strings_and_bytes_as_is_others_as_json():
    assert _bodies(pa.array(["a", None])) == ["a", ""]
    assert _bodies(pa.array([b"\x00"])) == [b"\x00"]
    assert _bodies(pa.array([{"id": 1, "tags": ["x"]}])) == ['{"id":1,"tags":["x"]}']
    assert _bodies(pa.array([1.5])) == ["1.5"]


def test_sink_names_missing_columns():
    from pyspark.sql.types import StringType, StructField, StructType

    sink = jms_queue_sink("q", body_column="payload", header_columns=["kind"])
    with pytest.raises(Exception, match="column\\(s\\) payload, kind not in the DataFrame"):
        sink.check_schema(StructType([StructField("body", StringType())]))


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    messages=st.lists(
        st.tuples(st.dictionaries(_text, _text, max_size=5), st.binary(max_size=20)), min_size=1, max_size=8
    ),
    cut=st.tuples(st.integers(0, 8), st.integers(0, 8)),
)
def test_spooled_messages_read_back_exactly_as_received_also_from_a_slice(messages, cut):
    frames = [({**headers, "message-id": f"ID:{i}"}, body) for i, (headers, body) in enumerate(messages)]
    spooled = rows_to_batch(spool_rows(frames), parse_schema(SPOOL_SCHEMA), "test")
    start = min(cut[0], len(frames))
    part = spooled.slice(start, cut[1])  # a round may take part of a segment
    assert spooled_to_raw(part).to_pylist() == frames_to_batch(frames[start : start + cut[1]]).to_pylist()
