"""Registers the Kafka source and sink with jetconnect (entry point ``jetconnect: kafka``)."""

from __future__ import annotations

from jetconnect.api import hookimpl
from jetconnect_kafka.sink import kafka_sink
from jetconnect_kafka.source import kafka_source


@hookimpl
def register_sources(register):  # type: ignore[no-untyped-def]
    register(kafka_source, name="kafka")


@hookimpl
def register_sinks(register):  # type: ignore[no-untyped-def]
    register(kafka_sink, name="kafka")
