"""A Schema Registry's Confluent API (``/subjects``, ``/schemas/ids``), through confluent-kafka's client.

What the formats ask: a schema by its id (each executor process asks once per id and keeps the
answer), a subject's latest or given version (the driver, when it plans a read), and registering
or looking up a schema under a subject (the driver, when a write starts). Never once per record.

The client gets a ``timeout`` (its own default is none: a registry that accepts and never answers
would hang a task) and no retries of its own (``max.retries`` 0); a registry that does not answer
or answers 5xx is retried here, with backoff, for ``deadline_s``, then the error says so. Answers
that will not change (an unknown subject or id, refused credentials, an incompatible schema) fail
at once. Subjects are named by the topic-name strategy (``<topic>-value``, ``<topic>-key``): the
client's default strategy for reads asks ``/associations``, which Apicurio's Confluent API lacks.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from confluent_kafka.schema_registry import RegisteredSchema, Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from jetconnect.api import Backoff, RetriesExhausted, redact, redact_url, retry_call, secrets_of, url_secrets
from jetconnect.errors import OptionError
from jetconnect_kafka.errors import KafkaRegistryError

try:  # the HTTP client confluent-kafka uses: httpx2 where it is installed, else httpx
    from httpx2 import TransportError as _TransportError
except ImportError:  # pragma: no cover
    from httpx import TransportError as _TransportError  # type: ignore[no-redef]

T = TypeVar("T")

#: A request's own timeout (seconds) unless ``schema_registry_config`` sets ``timeout``.
REQUEST_TIMEOUT_S = 10.0
#: Spark's string options carry every setting as text; these the client wants as numbers.
_NUMERIC = {
    "timeout",
    "cache.capacity",
    "cache.latest.ttl.sec",
    "max.retries",
    "retries.wait.ms",
    "retries.max.wait.ms",
}
#: Spark option prefix of a registry client setting: ``.option("schema_registry.basic.auth.user.info", ...)``.
OPTION_PREFIX = "schema_registry."
#: Confluent's error codes for "no such subject / version / schema" (HTTP 404).
_NOT_FOUND = 404


class SchemaNotFound(LookupError):
    """The registry answered that there is no such schema id, subject or version."""


@dataclass(frozen=True)
class Registry:
    """Where the registry is and how to talk to it; pickles (the client is made per process)."""

    url: str
    config: Mapping[str, Any] = field(default_factory=dict)
    deadline_s: float = 30.0

    def __post_init__(self) -> None:
        if not isinstance(self.url, str) or not self.url.strip().lower().startswith(("http://", "https://")):
            raise OptionError(
                f"kafka: option 'schema_registry_url' must be an http:// or https:// URL, got {redact_url(str(self.url))!r}"
            )
        if "url" in {k.lower() for k in self.config}:
            raise OptionError(
                "kafka: give the registry's URL as option 'schema_registry_url', not in schema_registry_config"
            )

    def __repr__(self) -> str:
        return f"Registry({redact_url(self.url)!r})"

    @property
    def shown_url(self) -> str:
        return redact_url(self.url)

    def secrets(self) -> tuple[str, ...]:
        """Every secret a message might quote: the URL's password, secret-named settings, and the
        password of ``basic.auth.user.info`` (``user:password``)."""
        found = set(url_secrets(self.url)) | set(secrets_of(self.config))
        for key, value in self.config.items():
            if key.lower() == "basic.auth.user.info" and isinstance(value, str):
                found |= {value, value.partition(":")[2]}
        return tuple(sorted((s for s in found if s), key=len, reverse=True))

    def settings(self) -> dict[str, Any]:
        """The client's configuration: ours, then the user's."""
        settings: dict[str, Any] = {
            "url": self.url,
            "timeout": min(REQUEST_TIMEOUT_S, self.deadline_s),
            "max.retries": 0,
        }
        for key, value in self.config.items():
            name = key.lower()
            if name in _NUMERIC and isinstance(value, str):
                try:
                    value = float(value) if "." in value or name == "timeout" else int(value)
                except ValueError:
                    raise OptionError(
                        f"kafka: schema registry setting '{key}' must be a number, got {value!r}"
                    ) from None
            settings[name] = value
        return settings

    # --- the calls -------------------------------------------------------------------------------

    def schema_by_id(self, schema_id: int) -> Schema:
        """The schema of ``schema_id`` (kept per process: an id never changes its schema)."""
        key = (self.url, schema_id)
        with _LOCK:
            known = _SCHEMAS.get(key)
        if known is not None:
            return known
        schema = self._call(lambda client: client.get_schema(schema_id), f"fetching schema id {schema_id}")
        with _LOCK:
            _SCHEMAS[key] = schema
        return schema

    def subject_version(self, subject: str, version: int | None) -> RegisteredSchema:
        """The subject's latest version, or ``version``; :class:`KafkaRegistryError` if there is none."""
        what = f"the {'latest version' if version is None else f'version {version}'} of subject {subject!r}"
        missing = f"no subject {subject!r}" if version is None else f"no version {version} of subject {subject!r}"
        try:
            if version is None:
                return self._call(lambda client: client.get_latest_version(subject), f"fetching {what}")
            return self._call(lambda client: client.get_version(subject, version), f"fetching {what}")
        except SchemaNotFound:
            subjects = self.subjects()
            raise KafkaRegistryError(
                f"kafka: the schema registry at {self.shown_url} has {missing}"
                + (
                    f" (it has subjects {', '.join(repr(s) for s in subjects[:10])}{', ...' if len(subjects) > 10 else ''})"
                    if subjects
                    else " (it has no subjects at all)"
                )
                + "; register a schema under it, or name another with option 'subject' / 'key_subject'"
            ) from None

    def register(self, subject: str, schema: Schema) -> int:
        """Register ``schema`` under ``subject`` (the id it already has if it is there)."""
        what = f"registering a {schema.schema_type} schema under subject {subject!r}"
        try:
            return self._call(lambda client: client.register_schema(subject, schema), what)
        except SchemaNotFound as exc:  # 404 to a POST: a subject name the registry cannot route ('..')
            raise KafkaRegistryError(
                f"kafka: schema registry at {self.shown_url}: {what} failed: HTTP 404 ({exc}); is the "
                f"subject a name the registry takes, and the URL its Confluent API (Apicurio: .../apis/ccompat/v7)?"
            ) from None

    def lookup(self, subject: str, schema: Schema) -> RegisteredSchema | None:
        """The registered version of ``schema`` under ``subject``, or None if it is not there."""
        try:
            return self._call(
                lambda client: client.lookup_schema(subject, schema), f"looking up a schema under subject {subject!r}"
            )
        except SchemaNotFound:
            return None

    def subjects(self) -> list[str]:
        """The registry's subjects; a :class:`KafkaRegistryError` if the URL answers 404 to
        ``/subjects`` (not a Confluent API: a wrong path, Apicurio without ``/apis/ccompat/v7``)."""
        try:
            return sorted(self._call(lambda client: client.get_subjects(), "listing subjects"))
        except SchemaNotFound:
            raise KafkaRegistryError(
                f"kafka: {self.shown_url} answers HTTP 404 to GET /subjects: it is no Schema Registry's "
                f"Confluent API (option 'schema_registry_url'; Apicurio's is http://host:port/apis/ccompat/v7)"
            ) from None

    def check_unknown_id(self, schema_id: int) -> None:
        """Called when the registry says it has no ``schema_id``: fails unless the URL is a
        registry's Confluent API (a wrong URL must not make every record a bad one)."""
        with _LOCK:
            if self.url in _CONFIRMED_APIS:
                return
        self.subjects()
        with _LOCK:
            _CONFIRMED_APIS.add(self.url)

    def _call(self, call: Callable[[SchemaRegistryClient], T], what: str) -> T:
        """``call`` with this process's client, retried while the registry does not answer."""
        secrets = self.secrets()
        where = f"schema registry at {self.shown_url}: {what}"
        try:
            return retry_call(
                lambda: call(_client(self)),
                retry_on=(Exception,),
                retry_if=_transient,
                what=f"kafka: {where}",
                backoff=Backoff(initial=0.2, maximum=2.0, deadline=self.deadline_s),
                secrets=secrets,
            )
        except RetriesExhausted as exc:
            raise KafkaRegistryError(
                f"{exc} (the registry did not answer for {self.deadline_s:g} s: is it running?)"
            ) from None
        except SchemaRegistryError as exc:
            if exc.http_status_code == _NOT_FOUND:
                raise SchemaNotFound(redact(str(exc), secrets)) from None
            raise KafkaRegistryError(f"kafka: {where} failed: {_refusal(exc, secrets)}") from None
        except (ValueError, TypeError) as exc:  # the client refusing its configuration
            raise OptionError(
                f"kafka: {where}: the client refused option 'schema_registry_config': {redact(str(exc), secrets)}"
            ) from None


def _transient(exc: BaseException) -> bool:
    """A registry that did not answer (connection refused, timed out) or answered 5xx / 408 / 429."""
    if isinstance(exc, SchemaRegistryError):
        return exc.http_status_code >= 500 or exc.http_status_code in (408, 429) or exc.http_status_code == -1
    return isinstance(exc, (_TransportError, OSError))


def _refusal(exc: SchemaRegistryError, secrets: tuple[str, ...]) -> str:
    status = exc.http_status_code
    said = redact(str(exc.error_message), secrets)
    if status in (401, 403):
        return f"HTTP {status}: the registry refused the credentials (schema_registry_config basic.auth.* / bearer.auth.*): {said}"
    if status == 409:
        return (
            f"HTTP 409: the schema is not compatible with the subject's versions under its compatibility rule: {said}"
        )
    if status == 422:
        return f"HTTP 422: the registry refused the schema as invalid: {said}"
    return f"HTTP {status}, error code {exc.error_code}: {said}"


# --- per process: one client per registry configuration, and the schemas fetched by id -----------

_LOCK = threading.Lock()
_CLIENTS: dict[str, SchemaRegistryClient] = {}
_SCHEMAS: dict[tuple[str, int], Schema] = {}
#: registry URLs whose /subjects answered: an unknown id there is the record's fault, not the URL's
_CONFIRMED_APIS: set[str] = set()


def _client(registry: Registry) -> SchemaRegistryClient:
    settings = registry.settings()
    key = json.dumps(settings, sort_keys=True, default=str)
    with _LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            client = _CLIENTS[key] = SchemaRegistryClient(settings)
        return client


def forget_schemas() -> None:
    """Drop what this process keeps (tests: a registry restarted with in-memory storage)."""
    with _LOCK:
        _SCHEMAS.clear()
        _CONFIRMED_APIS.clear()
        for client in _CLIENTS.values():
            client.close()
        _CLIENTS.clear()


def split_registry_options(client_config: dict[str, Any], registry_config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The registry client's settings: ``schema_registry_config``, plus the Spark options spelled
    ``schema_registry.<setting>``, which leave ``client_config`` (they are no librdkafka settings)."""
    settings = dict(registry_config or {})
    if not isinstance(registry_config, (Mapping, type(None))):
        raise OptionError(
            f"kafka: option 'schema_registry_config' must be a dict of SchemaRegistryClient settings, got {type(registry_config).__name__}"
        )
    for key in [k for k in client_config if k.lower().startswith(OPTION_PREFIX)]:
        settings[key[len(OPTION_PREFIX) :]] = client_config.pop(key)
    return settings


__all__ = ["OPTION_PREFIX", "Registry", "SchemaNotFound", "forget_schemas", "split_registry_options"]
