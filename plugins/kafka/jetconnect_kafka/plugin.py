"""Registers the Kafka source and sink with jetconnect (entry point ``jetconnect: kafka``)."""

from __future__ import annotations

from collections.abc import Callable

from jetconnect import hookimpl
from jetconnect_kafka.sink import kafka_sink
from jetconnect_kafka.source import kafka_source


@hookimpl
def register_sources(register: Callable[..., None]) -> None:
    register(kafka_source, name="kafka")


@hookimpl
def register_sinks(register: Callable[..., None]) -> None:
    register(kafka_sink, name="kafka")
