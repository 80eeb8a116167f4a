"""``sources.jms_queue(...)``, ``sources.jms_topic(...)``, ``sinks.jms_queue(...)``, ``sinks.jms_topic(...)``.

Each parameter is also a Spark option of ``jetconnect.jms_queue`` / ``jetconnect.jms_topic``
(converted by its annotation); ``projection`` is the one that only the Python API can pass. A queue
and a topic differ only in the ``kind`` the one source (:class:`~jetconnect_jms.source.JmsSource`,
which declares its options) and the one sink are given, and in the options a queue has no use for
(``subscription``, ``client_id``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, get_type_hints

from jetconnect_jms.sink import JmsSink
from jetconnect_jms.source import JmsSource, Kind
from jetconnect_jms.stomp_client import StompSettings


def _jms_sink(
    kind: Kind,
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
    """The one JMS sink, for a queue or a topic alike."""
    settings = StompSettings(host=host, port=port, user=user, password=password, connect_timeout=connect_timeout)
    return JmsSink(
        kind,
        destination,
        settings,
        body_column=body_column,
        header_columns=tuple(header_columns or ()),
        persistent=persistent,
        message_fn=message_fn,
    )


def _for_kind(
    factory: Callable[..., Any], kind: Kind, name: str, doc: str, leave_out: tuple[str, ...] = ()
) -> Callable[..., Any]:
    """``factory`` with its ``kind`` fixed: a public factory whose signature is the shared one less
    ``kind`` and ``leave_out``. The signature is what the registry reads: the Spark options it
    converts and accepts, and what the plugin README's option table must list."""
    shared = inspect.signature(factory)
    public = shared.replace(parameters=[p for n, p in shared.parameters.items() if n != "kind" and n not in leave_out])

    def made(*args: Any, **kwargs: Any) -> Any:
        return factory(kind, **public.bind(*args, **kwargs).arguments)

    made.__signature__ = public  # type: ignore[attr-defined]  # typeshed: functions lack __signature__
    # resolved here, where the annotations' names are known: the registry reads them off ``made``
    hints = get_type_hints(vars(factory)["__init__"] if isinstance(factory, type) else factory)
    made.__annotations__ = {n: a for n, a in hints.items() if n in public.parameters or n == "return"}
    made.__name__ = made.__qualname__ = name
    made.__module__ = factory.__module__
    made.__doc__ = doc
    return made


jms_queue_source = _for_kind(
    JmsSource,
    "queue",
    "jms_queue_source",
    leave_out=("subscription", "client_id"),
    doc="Messages of a queue, consumed by ``parallelism`` connections per executor, exactly once via the spools.",
)
jms_topic_source = _for_kind(
    JmsSource,
    "topic",
    "jms_topic_source",
    doc="Messages of a topic; a durable subscription when ``subscription`` is given.",
)
jms_queue_sink = _for_kind(
    _jms_sink,
    "queue",
    "jms_queue_sink",
    doc="Rows to a queue, one STOMP transaction per partition and batch: a body column and header "
    "columns, or Jet's ``message_fn`` making each message from a row.",
)
jms_topic_sink = _for_kind(
    _jms_sink,
    "topic",
    "jms_topic_sink",
    doc="Rows to a topic, one STOMP transaction per partition and batch: a body column and header "
    "columns, or Jet's ``message_fn`` making each message from a row.",
)


__all__ = ["jms_queue_sink", "jms_queue_source", "jms_topic_sink", "jms_topic_source"]
