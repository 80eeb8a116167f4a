"""Why a connection failed, told from the client's or the server's own words: the credentials were
refused, the server's certificate is not trusted, the two sides speak different protocols (a
plaintext client on a TLS-only port), or the server was not reached at all.

Only the last is worth retrying: a password does not become right and a certificate does not
become trusted by waiting, and retrying a refused login for a minute hides the reason and makes
hundreds of failed logins on the server (enough to lock an account). Connectors ask
:func:`connection_failure` before retrying and put :func:`explain_connection_failure` in their errors; ``jetconnect
doctor`` says the same words.

The patterns are the messages of the clients jetconnect uses and of the servers behind them:
libpq (PostgreSQL), OpenSSL through Python's ``ssl`` and ``requests``, ActiveMQ's STOMP errors,
Hadoop's WebHDFS answers. Matching is on lower-cased text, so a message quoted inside another
(``RetriesExhausted: ... last error: ...``) counts too.
"""

from __future__ import annotations

import enum


class ConnectionFailure(enum.Enum):
    """What kind of failure a connection attempt met; the value is what a user reads."""

    AUTHENTICATION = "authentication refused"
    CERTIFICATE = "certificate not trusted"
    PROTOCOL = "wrong protocol"
    UNREACHABLE = "not reachable"

    @property
    def permanent(self) -> bool:
        """Whether trying again cannot help (everything but a server not reached)."""
        return self is not ConnectionFailure.UNREACHABLE

    @property
    def advice(self) -> str:
        """What to check, in a few words."""
        return _ADVICE[self]


_ADVICE = {
    ConnectionFailure.AUTHENTICATION: (
        "check the user and its credentials: password, client certificate, Kerberos ticket or keytab"
    ),
    ConnectionFailure.CERTIFICATE: (
        "check the CA given to the client, the host name against the certificate's names, its dates, "
        "and the client's own certificate"
    ),
    ConnectionFailure.PROTOCOL: "the client and the port do not speak the same protocol: TLS on one side only?",
    ConnectionFailure.UNREACHABLE: "check the host and port, and that the server runs",
}

# Checked in this order: a TLS failure is often also worded as "connection ... failed", and a
# server that refuses a plaintext client does so in words close to a refused login.
_PATTERNS: tuple[tuple[ConnectionFailure, tuple[str, ...]], ...] = (
    (
        ConnectionFailure.CERTIFICATE,
        (
            "certificate verify failed",  # OpenSSL, libpq, Python's ssl, requests
            "certificate_verify_failed",
            "does not match host name",  # libpq
            "hostname mismatch",  # Python's ssl
            "ip address mismatch",
            "certificate is not valid for",
            "certificate has expired",
            "certificate is not yet valid",
            "self-signed certificate",
            "self signed certificate",
            "unable to get local issuer certificate",
            "alert unknown ca",  # the server refused the client's certificate
            "alert bad certificate",
            "alert certificate unknown",
            "alert certificate required",
            "alert certificate expired",
            "requires a valid client certificate",  # libpq, a cert-only pg_hba line
            "root certificate file",  # libpq: sslrootcert names no file
            "pkix path",  # a Java peer
        ),
    ),
    (
        ConnectionFailure.PROTOCOL,
        (
            "no encryption",  # PostgreSQL: no pg_hba line admits a plaintext client
            "server does not support ssl",  # libpq: sslmode=require against a plaintext server
            "wrong version number",  # OpenSSL: TLS spoken to a plaintext port
            "http_request",  # OpenSSL: an HTTP request where TLS was expected
            "http request to an https server",
            "plain http request was sent to https port",
            "packet length too long",
            "record layer failure",
            "not an ssl/tls record",
            "unsupported protocol",
            "tls handshake",  # jetconnect's own words: a server that never answered the handshake
            "wrong protocol",  # ... and a TLS port answering a plaintext client
            r"badstatusline('\x15\x03",  # http.client: a TLS alert where an HTTP status line was due
            r"badstatusline('\x16\x03",
        ),
    ),
    (
        ConnectionFailure.AUTHENTICATION,
        (
            "authentication failed",  # libpq
            "authentication failure",  # the hdfs client, on WebHDFS's 401
            "password is invalid",  # ActiveMQ: "User name [x] or password is invalid."
            "invalid password",
            "invalid credentials",
            "authentication refused",
            "authentication required",
            "unauthorized",
            "401 client error",
            "no pg_hba.conf entry",  # an access rule refused this user, database or host
            "not authorized",
            "access denied",
            "gssexception",
        ),
    ),
    (
        ConnectionFailure.UNREACHABLE,
        (
            "connection refused",
            "timed out",
            "timeout expired",
            "could not translate host name",
            "name or service not known",
            "temporary failure in name resolution",
            "no route to host",
            "network is unreachable",
            "connection reset",
            "broken pipe",
            "max retries exceeded",
            "server closed the connection",
        ),
    ),
)


def connection_failure(text: str) -> ConnectionFailure | None:
    """The kind of connection failure ``text`` (an error's message) tells, or None if it tells none."""
    lowered = text.lower()
    for kind, patterns in _PATTERNS:
        if any(pattern in lowered for pattern in patterns):
            return kind
    return None


def is_permanent_connection_failure(text: str) -> bool:
    """Whether ``text`` tells a failure that retrying cannot cure (credentials, certificate, protocol)."""
    kind = connection_failure(text)
    return kind is not None and kind.permanent


def explain_connection_failure(text: str) -> str:
    """``"certificate not trusted (check ...): "`` for a message that tells a kind, else ``""``:
    the words an error puts before the driver's own message."""
    kind = connection_failure(text)
    return f"{kind.value} ({kind.advice}): " if kind is not None else ""


__all__ = ["ConnectionFailure", "connection_failure", "explain_connection_failure", "is_permanent_connection_failure"]
