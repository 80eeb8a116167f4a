"""Client settings from options: names normalised, secrets never shown."""

from __future__ import annotations

from jetconnect.api import redact_options as redacted
from jetconnect_kafka.config import client_config


def test_python_and_spark_spellings_become_librdkafka_names() -> None:
    config = client_config("h:9092", {"security_protocol": "SSL", "kafka.fetch.max.bytes": "1000"})
    assert config == {"bootstrap.servers": "h:9092", "security.protocol": "SSL", "fetch.max.bytes": "1000"}


def test_secrets_are_redacted() -> None:
    shown = redacted(client_config("h:9092", {"sasl.password": "hunter2", "ssl_key_password": "x"}))
    assert "hunter2" not in repr(shown) and shown["sasl.password"] == "***" and shown["ssl.key.password"] == "***"
