"""Registers the JMS sources and sinks with jetconnect."""

from jetconnect import hookimpl
from jetconnect_jms.factories import jms_queue_sink, jms_queue_source, jms_topic_sink, jms_topic_source


@hookimpl
def register_sources(register):
    register(jms_queue_source, name="jms_queue")
    register(jms_topic_source, name="jms_topic")


@hookimpl
def register_sinks(register):
    register(jms_queue_sink, name="jms_queue")
    register(jms_topic_sink, name="jms_topic")
