"""The queue and topic factories are one source and one sink with the kind fixed."""

import inspect

import pytest

from jetconnect import sinks
from jetconnect._factory_calls import call_with_options
from jetconnect._options import Options
from jetconnect.errors import OptionError
from jetconnect_jms.factories import jms_queue_sink, jms_queue_source, jms_topic_sink, jms_topic_source


def test_a_queue_source_takes_every_option_of_a_topic_but_the_subscriptions():
    queue, topic = inspect.signature(jms_queue_source).parameters, inspect.signature(jms_topic_source).parameters
    assert set(topic) - set(queue) == {"subscription", "client_id"} and set(queue) <= set(topic)
    assert inspect.signature(jms_queue_sink) == inspect.signature(jms_topic_sink)


def test_spark_string_options_are_converted_and_a_queue_refuses_a_subscription():
    source = call_with_options(
        jms_queue_source, Options({"destination": "orders", "PARALLELISM": "2", "prefetch": "10"}), "q"
    )
    assert (source.kind, source.destination, source.parallelism, source.config.prefetch) == (
        "queue",
        "/queue/orders",
        2,
        10,
    )
    topic = call_with_options(jms_topic_source, Options({"destination": "prices", "subscription": "audit"}), "t")
    assert (topic.kind, topic.settings.client_id) == ("topic", "jetconnect-audit")
    with pytest.raises(OptionError, match=r"unknown option\(s\) subscription"):
        call_with_options(jms_queue_source, Options({"destination": "orders", "subscription": "audit"}), "q")
    sink = call_with_options(jms_topic_sink, Options({"destination": "prices", "persistent": "false"}), "s")
    assert (sink.name, sink.destination, sink.persistent) == ("jms_topic", "/topic/prices", False)


def test_positional_and_keyword_calls_reach_the_shared_factory():
    sink = jms_queue_sink("orders", "broker.example", 61614, "text")
    assert (sink.settings.host, sink.settings.port, sink.body_column) == ("broker.example", 61614, "text")
    with pytest.raises(TypeError, match="subscription"):
        jms_queue_source("orders", subscription="s")
    assert jms_queue_source.__name__ == "jms_queue_source" and "queue" in jms_queue_source.__doc__


def test_receipt_timeout_is_an_option_of_source_and_sink_checked_as_every_timeout():
    """An option added by one parameter on each class: Spark's text converts, the settings carry
    it, and the rule every timeout shares refuses 0 by its name on every way in."""
    source = call_with_options(jms_queue_source, Options({"destination": "orders", "receipt_timeout": "5"}), "q")
    sink = call_with_options(jms_topic_sink, Options({"destination": "prices", "receipt_timeout": "2.5"}), "s")
    assert (source.settings.receipt_timeout, sink.settings.receipt_timeout) == (5.0, 2.5)
    assert jms_queue_source("orders").settings.receipt_timeout == 120.0
    with pytest.raises(OptionError, match="'receipt_timeout'"):
        call_with_options(jms_queue_source, Options({"destination": "orders", "receipt_timeout": "0"}), "q")
    with pytest.raises(OptionError, match="'receipt_timeout'"):
        sinks.jms_queue("orders", receipt_timeout=-1)
