"""A Java client's truststore (JKS or PKCS12, with its password) as the PEM CA text librdkafka reads.

A truststore holds certificates only, nothing secret; its password guards its integrity. The
certificates become ``ssl.ca.pem``, which librdkafka reads from memory: nothing is written to disk,
and executors need no copy of the file. A keystore entry (a private key) in a truststore is refused
rather than carried along: a truststore is no place for a key.
"""

from __future__ import annotations

import hashlib
import hmac
import ssl
import struct
from pathlib import Path

from jetconnect.errors import OptionError

_JKS_MAGIC = b"\xfe\xed\xfe\xed"
_JCEKS_MAGIC = b"\xce\xce\xce\xce"
_TRUSTED_CERT, _PRIVATE_KEY = 2, 1


def truststore_pem(location: str, password: str | None, kind: str | None) -> str:
    """The CA certificates of the truststore at ``location``, as PEM text.

    ``kind`` is Java's ``ssl.truststore.type`` (JKS, PKCS12 or PEM; None: told by the file's first
    bytes). A wrong password, a damaged file or a store with no certificate is an OptionError naming
    the option, never quoting the password.
    """
    try:
        data = Path(location).read_bytes()
    except OSError as exc:
        raise OptionError(
            f"kafka: option 'ssl.truststore.location': cannot read {location!r}: {exc.strerror}"
        ) from None
    found = (kind or _kind_of(data)).upper()
    if found == "PEM":
        text = data.decode("ascii", errors="replace")
        if "-----BEGIN CERTIFICATE-----" not in text:
            raise OptionError(f"kafka: option 'ssl.truststore.location': {location!r} holds no PEM certificate")
        return text
    if found == "JKS":
        pems = _jks_certificates(data, password, location)
    elif found == "PKCS12":
        pems = _pkcs12_certificates(data, password, location)
    else:
        raise OptionError(f"kafka: option 'ssl.truststore.type' must be JKS, PKCS12 or PEM, got {kind!r}")
    if not pems:
        raise OptionError(f"kafka: the truststore {location!r} holds no certificate")
    return "".join(pems)


def _kind_of(data: bytes) -> str:
    if data.startswith(_JKS_MAGIC) or data.startswith(_JCEKS_MAGIC):
        return "JKS"
    if data.lstrip().startswith(b"-----BEGIN"):
        return "PEM"
    return "PKCS12"


def _jks_certificates(data: bytes, password: str | None, location: str) -> list[str]:
    """Trusted-certificate entries of a JKS store, its integrity checked with ``password`` (JKS's
    SHA-1 over the password as UTF-16BE, the words "Mighty Aphrodite" and the store)."""
    where = f"kafka: the JKS truststore {location!r}"
    if not data.startswith(_JKS_MAGIC):
        raise OptionError(f"{where} is not a JKS store (JCEKS and other types: convert it with keytool to PKCS12)")
    try:
        body, digest = data[:-20], data[-20:]
        if password is not None:
            expected = hashlib.sha1(password.encode("utf-16-be") + b"Mighty Aphrodite" + body).digest()
            if not hmac.compare_digest(expected, digest):
                raise OptionError(f"{where} does not open with option 'ssl.truststore.password' (or is damaged)")
        version, count = struct.unpack(">II", body[4:12])
        at, pems = 12, []
        for _ in range(count):
            (tag,) = struct.unpack(">I", body[at : at + 4])
            at += 4
            at += 2 + struct.unpack(">H", body[at : at + 2])[0] + 8  # alias, then the date it was added
            if tag == _PRIVATE_KEY:
                raise OptionError(f"{where} holds a private key: give a truststore of CA certificates only")
            if tag != _TRUSTED_CERT:
                raise OptionError(f"{where} holds an entry of unknown type {tag}")
            if version == 2:  # the certificate's type, "X.509"
                at += 2 + struct.unpack(">H", body[at : at + 2])[0]
            (length,) = struct.unpack(">I", body[at : at + 4])
            pems.append(ssl.DER_cert_to_PEM_cert(body[at + 4 : at + 4 + length]))
            at += 4 + length
    except (struct.error, ValueError) as exc:
        if isinstance(exc, OptionError):
            raise
        raise OptionError(f"{where} is damaged: {exc}") from None
    return pems


def _pkcs12_certificates(data: bytes, password: str | None, location: str) -> list[str]:
    from cryptography.hazmat.primitives.serialization import Encoding, pkcs12

    where = f"kafka: the PKCS12 truststore {location!r}"
    try:
        store = pkcs12.load_pkcs12(data, password.encode() if password is not None else None)
    except ValueError:
        raise OptionError(f"{where} does not open with option 'ssl.truststore.password' (or is damaged)") from None
    if store.key is not None:
        raise OptionError(f"{where} holds a private key: give a truststore of CA certificates only")
    return [c.certificate.public_bytes(Encoding.PEM).decode() for c in store.additional_certs]


__all__ = ["truststore_pem"]
