"""``sources.jms_queue(...)``, ``sources.jms_topic(...)``, ``sinks.jms_queue(...)``, ``sinks.jms_topic(...)``.

Each parameter is also a Spark option of ``jetconnect.jms_queue`` / ``jetconnect.jms_topic``
(converted by its annotation); ``projection`` and ``message_fn`` only the Python API can pass. A
queue and a topic differ only in the ``kind`` the one source and the one sink are given
(:class:`~jetconnect_jms.source.JmsSource` and :class:`~jetconnect_jms.sink.JmsSink` declare the
options), and in the options a queue has no use for (``subscription``, ``client_id``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, get_type_hints

from jetconnect_jms.sink import JmsSink
from jetconnect_jms.source import JmsSource, Kind


def _for_kind(
    factory: type[JmsSource | JmsSink], kind: Kind, name: str, doc: str, leave_out: tuple[str, ...] = ()
) -> Callable[..., Any]:
    """The connector class ``factory`` with its ``kind`` fixed: a public factory whose signature is
    the class's less ``kind`` and ``leave_out``. The signature is what the registry reads: the Spark options it
    converts and accepts, and what the plugin README's option table must list."""
    shared = inspect.signature(factory)
    public = shared.replace(parameters=[p for n, p in shared.parameters.items() if n != "kind" and n not in leave_out])

    def made(*args: Any, **kwargs: Any) -> Any:
        return factory(kind, **public.bind(*args, **kwargs).arguments)

    vars(made)["__signature__"] = public  # what inspect.signature reads; typeshed does not declare it
    # resolved here, where the annotations' names are known: the registry reads them off ``made``;
    # what it returns says which connector it makes (its guarantee, in `jetconnect plugins`)
    hints = get_type_hints(vars(factory)["__init__"])
    made.__annotations__ = {**{n: a for n, a in hints.items() if n in public.parameters}, "return": factory}
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
    JmsSink,
    "queue",
    "jms_queue_sink",
    doc="Rows to a queue, one STOMP transaction per partition and batch: a body column and header "
    "columns, or Jet's ``message_fn`` making each message from a row.",
)
jms_topic_sink = _for_kind(
    JmsSink,
    "topic",
    "jms_topic_sink",
    doc="Rows to a topic, one STOMP transaction per partition and batch: a body column and header "
    "columns, or Jet's ``message_fn`` making each message from a row.",
)


__all__ = ["jms_queue_sink", "jms_queue_source", "jms_topic_sink", "jms_topic_source"]
