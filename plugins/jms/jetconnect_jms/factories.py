"""``sources.jms_queue(...)``, ``sources.jms_topic(...)``, ``sinks.jms_queue(...)``, ``sinks.jms_topic(...)``.

Each parameter is also a Spark option of ``jetconnect.jms_queue`` / ``jetconnect.jms_topic``
(converted by its annotation); ``projection`` is the one that only the Python API can pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jetconnect_jms.messages import JmsMessage, MessageView
from jetconnect_jms.sink import JmsSink
from jetconnect_jms.source import (
    DEFAULT_DEDUPE_WINDOW,
    DEFAULT_IDLE_POLL_MS,
    DEFAULT_KEEP_ALIVE_MS,
    DEFAULT_LINGER_MS,
    DEFAULT_MAX_BACKLOG,
    DEFAULT_MAX_PULL_MS,
    DEFAULT_PREFETCH,
    JmsSource,
)
from jetconnect_jms.stomp_client import StompSettings, destination_path


def jms_queue_source(
    destination: str,
    host: str = "127.0.0.1",
    port: int = 61613,
    parallelism: int = 1,
    wal_location: str | None = None,
    body_format: str = "string",
    charset: str = "utf-8",
    header_columns: list[str] | None = None,
    projection: Callable[[JmsMessage], Any] | None = None,
    schema: str | None = None,
    prefetch: int = DEFAULT_PREFETCH,
    dedupe_window: int = DEFAULT_DEDUPE_WINDOW,
    max_pull_ms: int = DEFAULT_MAX_PULL_MS,
    linger_ms: int = DEFAULT_LINGER_MS,
    max_backlog: int = DEFAULT_MAX_BACKLOG,
    user: str | None = None,
    password: str | None = None,
    connect_timeout: float = 30.0,
    idle_poll_ms: int = DEFAULT_IDLE_POLL_MS,
    processor_keep_alive_ms: int = DEFAULT_KEEP_ALIVE_MS,
) -> JmsSource:
    """Messages of a queue, consumed by ``parallelism`` connections per executor, exactly once via the spools."""
    return _source("queue", destination, locals())


def jms_topic_source(
    destination: str,
    host: str = "127.0.0.1",
    port: int = 61613,
    subscription: str | None = None,
    client_id: str | None = None,
    wal_location: str | None = None,
    body_format: str = "string",
    charset: str = "utf-8",
    header_columns: list[str] | None = None,
    projection: Callable[[JmsMessage], Any] | None = None,
    schema: str | None = None,
    parallelism: int = 1,
    prefetch: int = DEFAULT_PREFETCH,
    dedupe_window: int = DEFAULT_DEDUPE_WINDOW,
    max_pull_ms: int = DEFAULT_MAX_PULL_MS,
    linger_ms: int = DEFAULT_LINGER_MS,
    max_backlog: int = DEFAULT_MAX_BACKLOG,
    user: str | None = None,
    password: str | None = None,
    connect_timeout: float = 30.0,
    idle_poll_ms: int = DEFAULT_IDLE_POLL_MS,
    processor_keep_alive_ms: int = DEFAULT_KEEP_ALIVE_MS,
) -> JmsSource:
    """Messages of a topic; a durable subscription when ``subscription`` is given."""
    return _source("topic", destination, locals())


def jms_queue_sink(
    destination: str,
    host: str = "127.0.0.1",
    port: int = 61613,
    body_column: str = "body",
    header_columns: list[str] | None = None,
    persistent: bool = True,
    user: str | None = None,
    password: str | None = None,
    connect_timeout: float = 30.0,
    message_fn: Callable[[Any], Any] | None = None,
) -> JmsSink:
    """Rows to a queue, one STOMP transaction per partition and batch: a body column and header
    columns, or Jet's ``message_fn`` making each message from a row."""
    return _sink("queue", destination, locals())


def jms_topic_sink(
    destination: str,
    host: str = "127.0.0.1",
    port: int = 61613,
    body_column: str = "body",
    header_columns: list[str] | None = None,
    persistent: bool = True,
    user: str | None = None,
    password: str | None = None,
    connect_timeout: float = 30.0,
    message_fn: Callable[[Any], Any] | None = None,
) -> JmsSink:
    """Rows to a topic, one STOMP transaction per partition and batch: a body column and header
    columns, or Jet's ``message_fn`` making each message from a row."""
    return _sink("topic", destination, locals())


def _settings(args: dict[str, Any], client_id: str | None = None) -> StompSettings:
    return StompSettings(
        host=args["host"],
        port=args["port"],
        user=args["user"],
        password=args["password"],
        client_id=client_id,
        connect_timeout=args["connect_timeout"],
    )


def _source(kind: str, destination: str, args: dict[str, Any]) -> JmsSource:
    subscription = args.get("subscription")
    # a durable subscription is identified by (client id, name): derive a stable client id
    client_id = args.get("client_id") or (f"jetconnect-{subscription}" if subscription else None)
    view = MessageView(
        owner=f"jms_{kind} source '{destination_path(kind, destination)}'",
        body_format=args["body_format"],
        charset=args["charset"],
        header_columns=tuple(args["header_columns"] or ()),
        projection=args["projection"],
        schema_ddl=args["schema"],
    )
    return JmsSource(
        kind,
        destination,
        _settings(args, client_id),
        view,
        parallelism=args["parallelism"],
        subscription=subscription,
        prefetch=args["prefetch"],
        dedupe_window=args["dedupe_window"],
        max_pull_ms=args["max_pull_ms"],
        linger_ms=args["linger_ms"],
        max_backlog=args["max_backlog"],
        wal_location=args["wal_location"],
        idle_poll_ms=args["idle_poll_ms"],
        processor_keep_alive_ms=args["processor_keep_alive_ms"],
    )


def _sink(kind: str, destination: str, args: dict[str, Any]) -> JmsSink:
    return JmsSink(
        kind,
        destination,
        _settings(args),
        body_column=args["body_column"],
        header_columns=tuple(args["header_columns"] or ()),
        persistent=args["persistent"],
        message_fn=args["message_fn"],
    )


__all__ = ["jms_queue_sink", "jms_queue_source", "jms_topic_sink", "jms_topic_source"]
