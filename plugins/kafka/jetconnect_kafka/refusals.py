"""Why a Kafka client cannot get in, from librdkafka's own reports: refused, or only not reachable.

librdkafka knows at once when a broker refuses a client (an ``error_cb`` report of
``_AUTHENTICATION`` for a SASL login, ``_SSL`` for a certificate it does not trust, an SSL alert
for a client certificate the broker refused), but its calls only ever fail with "Broker transport
failure", and it logs in again and again: a wrong password made 199 failed logins in one planning
call before the plugin gave up as if the broker were down. Each client the plugin makes therefore
carries a :class:`Watch` (its ``error_cb`` and its logger): what the watch saw sorts a failure into
one of the kinds below, and every kind but :data:`UNREACHABLE` is final: waiting does not make a
password right or a certificate trusted. Only a broker that does not answer is retried.

A certificate librdkafka did not verify is looked at once more with Python's ``ssl`` (one TLS
handshake, no login) to say *why*: expired, issued for other names, or signed by a CA the client
does not hold. A plaintext client on a TLS port only shows as connections the broker closes at the
first request; one handshake confirms the port speaks TLS.
"""

from __future__ import annotations

import logging
import re
import socket
import ssl
import struct
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError

from jetconnect.api import redact
from jetconnect_kafka.errors import KafkaSecurityError

AUTHENTICATION = "authentication refused"
CERTIFICATE = "certificate not trusted"
CLIENT_CERTIFICATE = "client certificate refused"
PROTOCOL = "wrong protocol"
UNREACHABLE = "not reachable"

#: librdkafka's own log lines, at the level it gives them (errors and warnings reach Python's
#: logging as any library's do; configure this logger to silence or widen them).
LIBRDKAFKA_LOG = logging.getLogger("jetconnect_kafka.librdkafka")

#: TLS alerts a broker sends about the client's certificate (RFC 8446 §6.2).
_CLIENT_CERTIFICATE_ALERTS = re.compile(
    r"alert (bad certificate|unsupported certificate|certificate revoked|certificate expired|"
    r"certificate unknown|unknown ca|access denied|certificate required)",
    re.IGNORECASE,
)
#: A connection the broker closed once it was up (librdkafka's words for a read or a write that
#: found it gone), and how long after it came up.
_CLOSED_WHEN_UP = re.compile(
    r"(?:Disconnected|Broken pipe|Connection reset).*\(after (\d+)ms in state UP\)", re.IGNORECASE
)
#: What OpenSSL says when the other side does not speak TLS.
_NOT_TLS = re.compile(r"wrong version number|packet length too long|connecting to a PLAINTEXT", re.IGNORECASE)
#: What OpenSSL says when both sides speak TLS but share no version or cipher.
_NO_COMMON_TLS = re.compile(
    r"unsupported protocol|no protocols available|no shared cipher|alert protocol version", re.I
)
#: A broker address at the start of a librdkafka report: ``sasl_ssl://host:port/1: ...``.
_BROKER = re.compile(r"^(?:(\w+)://)?(\[[^\]]+\]|[^/:\s]+):(\d+)/\S*?:")
#: How long the diagnosis's own TLS handshake may take.
PROBE_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class Refusal:
    """One refusal: its kind, the broker that refused, librdkafka's reason and what to check."""

    kind: str
    broker: str
    reason: str
    check: str

    def error(self) -> KafkaSecurityError:
        return KafkaSecurityError(
            f"kafka: {self.kind} by {self.broker}: {self.reason}. Check {self.check}. (Not retried: "
            f"waiting does not change the answer.)",
            self.kind,
        )


@dataclass(frozen=True)
class TlsSettings:
    """What a diagnosis needs of a client's settings; never a password or a key."""

    protocol: str
    ca_location: str | None
    ca_pem: str | None
    check_hostname: bool
    verify: bool
    client_certificate: str | None

    @classmethod
    def of(cls, settings: Mapping[str, Any]) -> TlsSettings:
        def text(name: str) -> str | None:
            value = settings.get(name)
            return None if value is None or str(value) == "" else str(value)

        cert = text("ssl.certificate.location") or text("ssl.keystore.location")
        if cert is None and text("ssl.certificate.pem"):
            cert = "ssl.certificate.pem"
        return cls(
            protocol=str(settings.get("security.protocol", "plaintext")).lower(),
            ca_location=text("ssl.ca.location"),
            ca_pem=text("ssl.ca.pem"),
            check_hostname=str(settings.get("ssl.endpoint.identification.algorithm", "https")).lower() != "none",
            verify=str(settings.get("enable.ssl.certificate.verification", "true")).lower() not in ("false", "0"),
            client_certificate=cert,
        )


class Watch:
    """One client's ``error_cb`` and logger: keeps the first report that a broker refused the client
    and the last sign of a broker out of reach. It never raises from a callback (librdkafka serves
    them from calls that must not fail halfway) and does no network I/O there; the plugin asks
    :meth:`pending` after a call failed, closes the client, then asks :meth:`refusal` why."""

    def __init__(self, settings: Mapping[str, Any], secrets: Sequence[str] = (), user_error_cb: Any = None) -> None:
        self.tls = TlsSettings.of(settings)
        self.secrets = tuple(secrets)
        self.user_error_cb = user_error_cb
        self._first: tuple[int, str] | None = None  # the first report that is a refusal
        #: ``(what, host, port)`` of a broker that closed the connection at the first request: "tls" for a
        #: plaintext client (a TLS port?), "sasl" for a client without a login (a SASL port?)
        self._suspect: tuple[str, str, str] | None = None
        self._cleared: set[tuple[str, str, str]] = set()
        self._refusal: Refusal | None = None
        #: librdkafka's last report of a broker it could not reach (for "not reachable" errors).
        self.unreachable: str | None = None
        self._lock = threading.Lock()

    # --- librdkafka's callbacks ------------------------------------------------------------------

    def error_cb(self, error: KafkaError) -> None:
        """librdkafka's ``error_cb``: a refusal is kept (the first one), a transport error noted."""
        try:
            code, text = error.code(), self._redacted(error.str())
            with self._lock:
                if refusal_kind(code, text) is not None:
                    self._first = self._first or (code, text)
                elif code in (KafkaError._TRANSPORT, KafkaError._RESOLVE):
                    self.unreachable = text
        except Exception:  # noqa: BLE001 - a callback must not fail inside librdkafka's poll
            pass
        if self.user_error_cb is not None:
            self.user_error_cb(error)

    def log(self, level: int, fmt: str, *args: Any) -> None:
        """librdkafka's log (confluent-kafka calls ``logger.log(level, "%s [%s] %s", fac, name, text)``):
        to :data:`LIBRDKAFKA_LOG`; a plaintext connection closed at its first request is noted."""
        message = _without_thread(str(args[-1])) if args else ""
        what = None
        if "APIVERSION_QUERY" in message and "Disconnected" in message and "ssl" not in self.tls.protocol:
            what = "tls"
        elif (up := _CLOSED_WHEN_UP.search(message)) and int(up.group(1)) < 5000 and "sasl" not in self.tls.protocol:
            what = "sasl"  # closed within seconds of the first requests, not an idle connection let go
        broker = _broker_of(message) if what is not None else None
        if what is not None and broker is not None and self._suspect is None:
            suspect = (what, broker[1], broker[2])
            if suspect not in self._cleared:
                self._suspect = suspect
        if LIBRDKAFKA_LOG.isEnabledFor(level):
            LIBRDKAFKA_LOG.log(level, "%s", self._redacted(fmt % args if args else fmt))

    # --- what the plugin asks --------------------------------------------------------------------

    def pending(self) -> bool:
        """Whether a refusal was reported. A connection the broker closed at the first request counts
        once one more look confirms why: a TLS handshake on the port (a plaintext client), or a
        SaslHandshake request the listener answers with its mechanisms (a client without a login)."""
        if self._first is not None or self._refusal is not None:
            return True
        suspect = self._suspect
        if suspect is None:
            return False
        what, host, port = suspect
        where = f"{host}:{port}"
        if what == "tls" and speaks_tls(host, port):
            self._refusal = Refusal(
                PROTOCOL,
                where,
                f"{where} speaks TLS, and this client (security.protocol={self.tls.protocol}) sent it a "
                f"plaintext request; the broker closed the connection",
                "the listener's protocol: security.protocol=SSL (or SASL_SSL with a SASL login) for this port, "
                "or the broker's PLAINTEXT port",
            )
            return True
        mechanisms = sasl_mechanisms(host, port, "ssl" in self.tls.protocol) if what == "sasl" else None
        if mechanisms is not None:
            self._refusal = Refusal(
                PROTOCOL,
                where,
                f"{where} requires a SASL login ({', '.join(mechanisms) or 'no mechanism named'}), and this client "
                f"(security.protocol={self.tls.protocol}) sent none; the broker closed the connection",
                "the listener's protocol: security.protocol=SASL_SSL (or SASL_PLAINTEXT) with sasl.mechanism, "
                "sasl.username and sasl.password",
            )
            return True
        self._cleared.add(suspect)
        self._suspect = None
        return False

    def refusal(self) -> Refusal | None:
        """Why the client was refused (a certificate looked at once more: best after the client is
        closed, so it does not go on logging in meanwhile), or None."""
        if self._refusal is None and self.pending() and self._first is not None:
            self._refusal = classify(*self._first, self.tls)
        return self._refusal

    def raise_if_refused(self) -> None:
        refusal = self.refusal() if self.pending() else None
        if refusal is not None:
            raise refusal.error()

    def _redacted(self, text: str) -> str:
        return redact(text, self.secrets) if self.secrets else text


def _without_thread(message: str) -> str:
    """A log line without librdkafka's ``[thrd:...]: `` prefix."""
    return message.split("]: ", 1)[1] if message.startswith("[thrd:") and "]: " in message else message


def refusal_kind(code: int, text: str) -> str | None:
    """The kind of refusal a librdkafka error report is, without looking further; None if none."""
    if code == KafkaError._AUTHENTICATION:
        # a SASL handshake on a listener without SASL: the broker names no mechanism
        return PROTOCOL if "not valid in current SASL state" in text else AUTHENTICATION
    if code in (KafkaError._SSL, KafkaError._TRANSPORT):
        if _CLIENT_CERTIFICATE_ALERTS.search(text):
            return CLIENT_CERTIFICATE
        if _NOT_TLS.search(text) or _NO_COMMON_TLS.search(text):
            return PROTOCOL
        if code == KafkaError._SSL and "certificate verify failed" in text:
            return CERTIFICATE
    # Any other TLS error (an unexpected EOF, a reset, a bad record from a broker going down
    # mid-handshake) may pass: retried as a broker out of reach.
    return None


def classify(code: int, text: str, tls: TlsSettings) -> Refusal | None:
    """The refusal a librdkafka error report stands for, with what to check, or None (a broker out
    of reach, or an error that is not about getting in). A certificate not trusted is looked at
    once more (:func:`diagnose_certificate`) to say why."""
    kind = refusal_kind(code, text)
    if kind is None:
        return None
    found = _broker_of(text)
    broker = "the broker" if found is None else (f"{found[0]}://" if found[0] else "") + f"{found[1]}:{found[2]}"
    reason = text.split(": ", 1)[1] if found and ": " in text else text
    if kind == AUTHENTICATION:
        check = "the credentials (sasl.username, sasl.password) and sasl.mechanism this listener enables"
    elif kind == CLIENT_CERTIFICATE and tls.client_certificate is None:
        check = (
            "the client certificate: this listener requires one, and none was given (ssl.certificate.location "
            "and ssl.key.location, ssl.certificate.pem and ssl.key.pem, or ssl.keystore.location)"
        )
    elif kind == CLIENT_CERTIFICATE:
        check = (
            f"the client certificate ({tls.client_certificate}): the broker's truststore must hold the CA that "
            f"signed it, and it must not be expired"
        )
    elif kind == PROTOCOL and code == KafkaError._AUTHENTICATION:
        check = (
            "the listener's protocol: it takes no SASL login; use security.protocol=PLAINTEXT (or SSL) there, "
            "or the broker's SASL port"
        )
    elif kind == PROTOCOL and _NO_COMMON_TLS.search(text):
        check = "the TLS versions and ciphers: the broker and this client share none (ssl.cipher.suites, the broker's ssl.enabled.protocols)"
    elif kind == PROTOCOL:
        check = (
            f"the listener's protocol: this client speaks TLS (security.protocol={tls.protocol}) and the listener "
            f"does not; use security.protocol=PLAINTEXT or SASL_PLAINTEXT there, or the broker's TLS port"
        )
    else:
        verdict, facts = (None, None)
        if "certificate verify failed" in text and found is not None:
            verdict, facts = diagnose_certificate(found[1], int(found[2]), tls)
        if verdict is not None:
            reason = f"{reason}; verified again: {verdict}" + (f" ({facts})" if facts else "")
        check = _certificate_check(verdict or "", found[1] if found else "")
    return Refusal(kind, broker, reason, check)


def _certificate_check(verdict: str, host: str) -> str:
    """What to check for a broker certificate OpenSSL refused with ``verdict``."""
    lowered = verdict.lower()
    if "expired" in lowered or "not yet valid" in lowered:
        return "the broker's certificate: it is out of its validity period, and must be renewed on the broker"
    if "mismatch" in lowered:
        return (
            f"the certificate's names: bootstrap.servers must name the broker as its certificate does, not "
            f"{host!r} (or set ssl.endpoint.identification.algorithm=none to skip the check)"
        )
    return (
        "ssl.ca.location (or ssl.ca.pem): it must hold the CA that signed the broker's certificate; the "
        "certificate's names must include the host in bootstrap.servers, and it must not be expired"
    )


def _broker_of(text: str) -> tuple[str, str, str] | None:
    """``(scheme, host, port)`` of the broker a librdkafka report starts with, if it names one."""
    match = _BROKER.match(text.strip())
    if match is None:
        return None
    return match.group(1) or "", match.group(2).strip("[]"), match.group(3)


def sasl_mechanisms(host: str, port: str | int, tls: bool) -> list[str] | None:
    """The SASL mechanisms the listener at ``host:port`` enables, from one SaslHandshake request (v1,
    which every broker since Kafka 1.0 answers before a login), or None if it takes no SASL login
    (``ILLEGAL_SASL_STATE``) or does not answer."""
    client = b"jetconnect"
    request = struct.pack(">hhih", 17, 1, 1, len(client)) + client + struct.pack(">h", 5) + b"PLAIN"
    try:
        with socket.create_connection((host, int(port)), timeout=PROBE_TIMEOUT_S) as raw:
            conn = raw
            if tls:
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
                conn = context.wrap_socket(raw, server_hostname=host)
            conn.sendall(struct.pack(">i", len(request)) + request)
            (size,) = struct.unpack(">i", _read_exactly(conn, 4))
            body = _read_exactly(conn, min(size, 1 << 16))
    except (OSError, ValueError, struct.error):
        return None
    _, error, count = struct.unpack(">ihi", body[:10])
    if error not in (0, 33):  # none, or UNSUPPORTED_SASL_MECHANISM (then with the list): a SASL listener
        return None
    mechanisms, at = [], 10
    for _ in range(max(0, min(count, 16))):
        (length,) = struct.unpack(">h", body[at : at + 2])
        mechanisms.append(body[at + 2 : at + 2 + length].decode(errors="replace"))
        at += 2 + length
    return mechanisms


def _read_exactly(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise OSError("closed")
        data += chunk
    return data


def speaks_tls(host: str, port: str | int) -> bool:
    """Whether ``host:port`` completes a TLS handshake (certificate not checked, nothing sent after)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, int(port)), timeout=PROBE_TIMEOUT_S) as raw:
            with context.wrap_socket(raw, server_hostname=host):
                return True
    except (OSError, ValueError):
        return False


def diagnose_certificate(host: str, port: int, tls: TlsSettings) -> tuple[str | None, str | None]:
    """Why the broker's certificate fails verification, in OpenSSL's words, and the certificate's
    facts (names, issuer, validity): one TLS handshake checked as librdkafka checks it, one not."""
    context = ssl.create_default_context()
    try:
        if tls.ca_location or tls.ca_pem:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            if tls.ca_location and tls.ca_location != "probe":
                where = Path(tls.ca_location)
                context.load_verify_locations(capath=where) if where.is_dir() else context.load_verify_locations(where)
            else:
                context.load_default_certs()
            if tls.ca_pem:
                context.load_verify_locations(cadata=tls.ca_pem)
    except (OSError, ssl.SSLError, ValueError) as exc:
        return f"the CA given could not be read: {exc}", None
    context.check_hostname = tls.check_hostname
    context.verify_mode = ssl.CERT_REQUIRED
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S) as raw:
            with context.wrap_socket(raw, server_hostname=host):
                return None, None  # verifies now: the broker's certificate changed since
    except ssl.SSLCertVerificationError as exc:
        verdict = exc.verify_message or str(exc)
    except (OSError, ValueError):
        return None, None
    return verdict, _certificate_facts(host, port)


def _certificate_facts(host: str, port: int) -> str | None:
    """The broker's certificate as a user checks it: subject, names, issuer and validity."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S) as raw:
            with context.wrap_socket(raw, server_hostname=host) as tls:
                der = tls.getpeercert(binary_form=True)
    except (OSError, ValueError):
        return None
    if not der:
        return None
    from cryptography import x509

    cert = x509.load_der_x509_certificate(der)
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names = [str(n.value) for n in san]
    except x509.ExtensionNotFound:
        names = []
    return (
        f"the broker's certificate: {cert.subject.rfc4514_string()}"
        + (f" (names {', '.join(names)})" if names else "")
        + f", issued by {cert.issuer.rfc4514_string()}, valid {cert.not_valid_before_utc:%Y-%m-%d} "
        f"to {cert.not_valid_after_utc:%Y-%m-%d}"
    )


__all__ = [
    "AUTHENTICATION",
    "CERTIFICATE",
    "CLIENT_CERTIFICATE",
    "LIBRDKAFKA_LOG",
    "PROTOCOL",
    "UNREACHABLE",
    "Refusal",
    "TlsSettings",
    "Watch",
    "classify",
    "refusal_kind",
    "sasl_mechanisms",
    "diagnose_certificate",
    "speaks_tls",
]
