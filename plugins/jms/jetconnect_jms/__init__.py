"""jetconnect's JMS connector: queues and topics of a STOMP broker (ActiveMQ), via stomp.py.

Sources are exactly-once through jetconnect's write-ahead log (a message is acknowledged only once
it is durable there); sinks send each partition in one STOMP transaction (at-least-once).
"""

from jetconnect_jms.factories import jms_queue_sink, jms_queue_source, jms_topic_sink, jms_topic_source
from jetconnect_jms.messages import JmsMessage
from jetconnect_jms.sink import JmsSink
from jetconnect_jms.source import JmsSource

__all__ = [
    "JmsMessage",
    "JmsSink",
    "JmsSource",
    "jms_queue_sink",
    "jms_queue_source",
    "jms_topic_sink",
    "jms_topic_source",
]
