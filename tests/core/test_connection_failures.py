"""Telling why a connection failed from the words of the clients and servers jetconnect talks to
(the messages below are as libpq, Python's ssl and ActiveMQ word them against the suite's secured
servers, scripts/servers/*.sh secured): only a server not reached is worth retrying."""

from __future__ import annotations

import pytest

from jetconnect.api import ConnectionFailure, connection_failure, explain_connection_failure

AUTHENTICATION, CERTIFICATE, PROTOCOL, UNREACHABLE = (
    ConnectionFailure.AUTHENTICATION,
    ConnectionFailure.CERTIFICATE,
    ConnectionFailure.PROTOCOL,
    ConnectionFailure.UNREACHABLE,
)
PG = 'connection failed: connection to server at "127.0.0.1", port 5433 failed: '

MESSAGES = [
    (PG + 'FATAL:  password authentication failed for user "jetconnect_tls"', AUTHENTICATION),
    (PG + 'FATAL:  no pg_hba.conf entry for host "127.0.0.1", user "x", database "y", no encryption', PROTOCOL),
    (PG + 'FATAL:  no pg_hba.conf entry for host "127.0.0.1", user "x", database "y", SSL encryption', AUTHENTICATION),
    (PG + "SSL error: certificate verify failed", CERTIFICATE),
    (PG + 'server certificate for "localhost" does not match host name "127.0.0.1"', CERTIFICATE),
    (PG + "SSL error: tlsv1 alert unknown ca", CERTIFICATE),
    (PG + "FATAL:  connection requires a valid client certificate", CERTIFICATE),
    (PG + 'root certificate file "/nope.pem" does not exist', CERTIFICATE),
    (PG + "server does not support SSL, but SSL was required", PROTOCOL),
    (PG + "Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?", UNREACHABLE),
    (
        "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate in certificate chain",
        CERTIFICATE,
    ),
    (
        "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: IP address mismatch, certificate is not valid for '127.0.0.1'. (_ssl.c:1006)",
        CERTIFICATE,
    ),
    ("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: certificate has expired (_ssl.c:1006)", CERTIFICATE),
    ("[SSL: WRONG_VERSION_NUMBER] wrong version number (_ssl.c:1006)", PROTOCOL),
    ("User name [jetconnect] or password is invalid.", AUTHENTICATION),
    ("timed out", UNREACHABLE),
    ('syntax error at or near "selec"', None),
]


@pytest.mark.parametrize(("message", "kind"), MESSAGES)
def test_each_message_tells_its_kind(message: str, kind: ConnectionFailure | None) -> None:
    assert connection_failure(message) is kind
    # quoted inside a retry's last error, it still counts
    assert connection_failure(f"RetriesExhausted: connecting failed 3 time(s); last error: {message}") is kind


def test_only_a_server_not_reached_is_worth_retrying() -> None:
    assert [k for k in ConnectionFailure if not k.permanent] == [UNREACHABLE]


def test_the_explanation_leads_with_the_kind_and_what_to_check() -> None:
    assert explain_connection_failure(PG + "SSL error: certificate verify failed").startswith(
        "certificate not trusted (check the CA"
    )
    assert explain_connection_failure("a syntax error") == ""
