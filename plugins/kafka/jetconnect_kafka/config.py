"""librdkafka configuration from jetconnect options, and the one place the plugin makes its clients.

Extra keyword arguments of ``sources.kafka`` / ``sinks.kafka`` are librdkafka settings: dotted
names as Spark options (``.option("security.protocol", "SSL")``, or with Spark's ``kafka.``
prefix), underscores for Python keywords (``security_protocol="SSL"``). Java client settings that
mean the same in other words (a JAAS login, a truststore) are translated by :mod:`.java_settings`.

Every consumer, producer and admin client is made here, with a :class:`~.refusals.Watch` as its
``error_cb`` and logger, and makes first contact before it is handed out: a broker that refuses it
(a wrong password, a certificate not trusted, the wrong protocol) fails it within a second or so,
after one or two logins, never after a retry loop that reads as "unreachable".
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient, ClusterMetadata

from jetconnect.api import Backoff, RetriesExhausted, describe, retry_call, secrets_of
from jetconnect.errors import OptionError
from jetconnect_kafka import java_settings
from jetconnect_kafka.refusals import LIBRDKAFKA_LOG, UNREACHABLE, Watch

#: A legal Kafka topic name (Kafka's ``Topic.validate``: at most 249 of these characters), matched whole.
TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]{1,249}")
TOPIC_NAME_IS = "a Kafka topic name (letters, digits, '.', '_' and '-', at most 249)"

#: How long a client keeps retrying an unreachable broker before the error reaches the user.
DEFAULT_BACKOFF = Backoff(initial=0.1, maximum=2.0, deadline=30.0)
#: The first metadata request of first contact waits this long before the client's reports are
#: read, each next one twice as long up to 1 s: a refusal is seen within about this much after the
#: broker gives it (a SCRAM login takes about 0.3 s, a refused TLS handshake a few ms).
FIRST_CONTACT_SLICE_S = 0.1
#: The topic first contact asks the metadata of: a name no topic can have (a space), so the broker
#: answers "invalid topic" at once, creates nothing whatever ``auto.create.topics.enable`` says,
#: and sends no metadata of the cluster's topics (listing 429 topics costs 60 ms more per client).
CONTACT_TOPIC = "jetconnect contact"
#: How long first contact waits for a broker that neither answers nor refuses; the calls that
#: follow retry it for as long as their backoff says.
FIRST_CONTACT_S = 5.0
#: How long first contact goes on once librdkafka reported a broker out of reach (refused, not
#: resolved): long enough for the other addresses of a name (localhost's ::1, then 127.0.0.1).
FIRST_CONTACT_REFUSED_S = 1.0

Client = TypeVar("Client", "WatchedConsumer", "WatchedProducer", "WatchedAdmin")
T = TypeVar("T")


class WatchedConsumer(Consumer):
    """A confluent-kafka consumer with the :class:`~.refusals.Watch` that is its ``error_cb``."""

    watch: Watch


class WatchedProducer(Producer):
    """A confluent-kafka producer with the :class:`~.refusals.Watch` that is its ``error_cb``."""

    watch: Watch


class WatchedAdmin(AdminClient):
    """A confluent-kafka admin client with the :class:`~.refusals.Watch` that is its ``error_cb``."""

    watch: Watch


def client_config(bootstrap_servers: str, extra: Mapping[str, Any]) -> dict[str, Any]:
    """librdkafka settings: ``bootstrap.servers`` plus the user's extra settings, normalised, with
    Java client settings translated (:func:`.java_settings.translate`)."""
    config: dict[str, Any] = {"bootstrap.servers": bootstrap_servers}
    for key, value in extra.items():
        name = key[len("kafka.") :] if key.lower().startswith("kafka.") else key
        config[name.replace("_", ".")] = value
    return java_settings.translate(config)


def _made(kind: type[Client], settings: dict[str, Any], first_contact: bool = True) -> Client:
    """A client of ``kind`` with a watch, after first contact (:func:`contact`) unless told not to."""
    secrets = secrets_of(settings)
    watch = Watch(settings, secrets, settings.pop("error_cb", None))
    conf: dict[str, Any] = {**settings, "error_cb": watch.error_cb}
    try:
        client = kind(conf, logger=watch)
    except KafkaException as exc:  # a setting librdkafka refuses: name it, never quote a secret
        raise OptionError(
            f"kafka: the client settings were refused: {describe(exc, secrets)} (a key file whose "
            f"ssl.key.password does not open it reads 'bad decrypt')"
        ) from None
    client.watch = watch
    if not first_contact:
        return client
    try:
        contact(client, FIRST_CONTACT_S)
        return client
    except Refused:
        pass
    except BaseException:
        close(client)
        raise
    close(client)
    del client
    watch.raise_if_refused()
    raise AssertionError("first contact saw a refusal its watch does not hold")


class Refused(Exception):
    """A sliced call (:func:`sliced`) saw a refusal: close the client, then ask its watch why
    (``watch.raise_if_refused()``); librdkafka would go on logging in meanwhile."""


def close(client: Any) -> None:
    """Let go of a client: a consumer is closed (the others close when dropped)."""
    if isinstance(client, Consumer):
        try:
            client.close()
        except RuntimeError:
            pass


def sliced(client: WatchedConsumer | WatchedProducer | WatchedAdmin, call: Callable[[float], T], within: float) -> T:
    """``call(timeout)`` in short slices (:data:`FIRST_CONTACT_SLICE_S`, doubling up to 1 s) until
    it succeeds or ``within`` passes (its last ``KafkaException`` raised), the client's reports read
    between slices: :class:`Refused` as soon as they hold a refusal. librdkafka serves no report
    during a blocking call, so one long call would let it log in again and again meanwhile."""
    started = time.monotonic()
    wait = FIRST_CONTACT_SLICE_S
    while True:
        remaining = started + within - time.monotonic()
        try:
            return call(max(0.01, min(wait, remaining)))
        except KafkaException:
            client.poll(0)  # serves error_cb and the log (an unassigned consumer fetches nothing)
            if client.watch.pending():
                raise Refused() from None
            if time.monotonic() - started >= within:
                raise
        wait = min(1.0, wait * 2)  # a slow broker is not asked 50 times; a refusal comes in the first slices


def contact(client: WatchedConsumer | WatchedProducer | WatchedAdmin, within: float) -> ClusterMetadata | None:
    """First contact: metadata requests (of :data:`CONTACT_TOPIC`), sliced (:func:`sliced`).

    Returns the metadata once the broker answers (its brokers; no topic); raises :class:`Refused`
    as soon as a refusal is reported; returns None when ``within`` passes, or a second after
    librdkafka found nothing listening, and leaves retrying to the caller.
    """
    refused_at: list[float] = []

    def metadata(timeout: float) -> ClusterMetadata:
        if client.watch.unreachable is not None and not refused_at:
            refused_at.append(time.monotonic())
        if refused_at and time.monotonic() - refused_at[0] >= FIRST_CONTACT_REFUSED_S:
            raise _GiveUp()
        return client.list_topics(topic=CONTACT_TOPIC, timeout=timeout)

    try:
        return sliced(client, metadata, within)
    except (KafkaException, _GiveUp):
        return None


class _GiveUp(Exception):
    """First contact leaves a broker that refuses connections to the caller's retries."""


def consumer(config: Mapping[str, Any], *, first_contact: bool = True, **overrides: Any) -> WatchedConsumer:
    """A consumer for manual assignment: no group membership, nothing committed to the broker.

    ``first_contact=False`` for a consumer whose first request is itself sliced (the range readers'
    watermark query, :meth:`.consumers.RenewableConsumer.watermarks`): a fresh client's first
    metadata request takes about 54 ms, its first watermark query 4 ms."""
    settings = {
        "group.id": "jetconnect",  # required by librdkafka, unused: partitions are assigned by hand
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": False,
        **config,
        **overrides,
    }
    return _made(WatchedConsumer, settings, first_contact)


def producer(config: Mapping[str, Any], **overrides: Any) -> WatchedProducer:
    """A producer after first contact: also the broker connection an idempotent or transactional
    producer needs up before it asks for its producer id (see :mod:`.producers`)."""
    return _made(WatchedProducer, {**config, **overrides})


def admin(config: Mapping[str, Any]) -> WatchedAdmin:
    return _made(WatchedAdmin, dict(config))


def cluster_metadata(
    client: WatchedAdmin | WatchedConsumer | WatchedProducer, what: str, backoff: Backoff = DEFAULT_BACKOFF
) -> ClusterMetadata:
    """Topic metadata, retried with backoff while the broker does not answer; a refusal at once."""
    return retried(client, lambda: client.list_topics(timeout=min(5.0, backoff.deadline)), what, backoff)


def retried(client: Any, call: Any, what: str, backoff: Backoff) -> Any:
    """``call()`` retried on ``KafkaException`` while ``client``'s broker does not answer: after each
    failure the client's reports are read, and a refusal ends it at once (:class:`~.refusals.Watch`).
    Giving up says ``not reachable`` and librdkafka's last word about the connection."""
    watch: Watch | None = getattr(client, "watch", None)

    def attempt() -> Any:
        try:
            return call()
        except KafkaException:
            if watch is not None:
                client.poll(0)
                watch.raise_if_refused()
            raise

    try:
        return retry_call(attempt, retry_on=(KafkaException,), what=what, backoff=backoff)
    except RetriesExhausted as exc:
        last = f" (librdkafka: {watch.unreachable})" if watch is not None and watch.unreachable else ""
        raise RetriesExhausted(f"kafka: {UNREACHABLE}: {exc}{last}") from exc.__cause__


def check_connection(config: Mapping[str, Any], backoff: Backoff = DEFAULT_BACKOFF) -> str:
    """What a write's first request proves, without writing: the broker answers a metadata request
    over this client's protocol, TLS handshake and login included. Says what was checked."""
    client = admin(config)
    metadata = cluster_metadata(
        client, f"kafka: metadata from bootstrap.servers={config['bootstrap.servers']!r}", backoff
    )
    protocol = str(config.get("security.protocol", "plaintext")).lower()
    steps = ["reachable"]
    if "ssl" in protocol:
        steps.append("TLS handshake" + (" with a client certificate" if client.watch.tls.client_certificate else ""))
    if "sasl" in protocol:
        steps.append(f"authenticated as {config.get('sasl.username')!r} ({config.get('sasl.mechanism', 'GSSAPI')})")
    return f"{', '.join(steps)}: {len(metadata.brokers)} broker(s), {len(metadata.topics)} topic(s) (metadata request, nothing written)"


__all__ = [
    "DEFAULT_BACKOFF",
    "LIBRDKAFKA_LOG",
    "WatchedAdmin",
    "WatchedConsumer",
    "WatchedProducer",
    "admin",
    "check_connection",
    "client_config",
    "cluster_metadata",
    "consumer",
    "close",
    "contact",
    "producer",
    "retried",
    "sliced",
    "Refused",
]
