"""Java Kafka client settings (Spark's ``kafka.*`` options) as the librdkafka settings that mean the same.

Most names are the same in both clients and pass through. Where Java says it in other words:

- ``sasl.jaas.config`` with the PLAIN or SCRAM login module becomes ``sasl.username`` and
  ``sasl.password`` (parsed as Kafka's ``JaasConfig`` parses it, quotes and escapes included;
  PLAIN also sets ``sasl.mechanism`` when it is not given, as only PLAIN can be meant);
- ``ssl.truststore.location`` (JKS or PKCS12, with ``ssl.truststore.password``; or PEM) and
  ``ssl.truststore.certificates`` become ``ssl.ca.pem`` (:mod:`.truststores`: read in memory,
  nothing written);
- a PKCS12 keystore passes as it is (librdkafka reads ``ssl.keystore.location`` itself); a PEM one
  (``ssl.keystore.type=PEM``) becomes ``ssl.certificate.*`` and ``ssl.key.*``;
- an empty ``ssl.endpoint.identification.algorithm`` (Java's way to turn the check off) is ``none``.

What cannot carry over is refused with the setting to use instead (:data:`REFUSED`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jetconnect.errors import OptionError
from jetconnect_kafka.truststores import truststore_pem

_PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
_SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
_LOGIN_MODULES = {_PLAIN: "PLAIN", _SCRAM: "SCRAM"}

_TLS_VERSION = (
    "librdkafka negotiates the TLS version with the broker itself (the highest both sides have); leave it out"
)
_JAVA_ONLY = "a Java class of the JVM client; librdkafka has none: leave it out"
#: Java client settings with no librdkafka meaning, and what to do instead.
REFUSED: Mapping[str, str] = {
    "ssl.protocol": _TLS_VERSION,
    "ssl.enabled.protocols": _TLS_VERSION,
    "ssl.keymanager.algorithm": _JAVA_ONLY,
    "ssl.trustmanager.algorithm": _JAVA_ONLY,
    "ssl.secure.random.implementation": _JAVA_ONLY,
    "ssl.provider": _JAVA_ONLY,
    "ssl.engine.factory.class": _JAVA_ONLY,
    "security.providers": _JAVA_ONLY,
    "interceptor.classes": _JAVA_ONLY,
    "sasl.login.class": _JAVA_ONLY,
    "sasl.login.callback.handler.class": _JAVA_ONLY,
    "sasl.client.callback.handler.class": _JAVA_ONLY,
    "key.deserializer": "jetconnect decodes keys itself: give option key_format (bytes or string)",
    "value.deserializer": "jetconnect decodes values itself: give option value_format (bytes, string, json, avro)",
    "key.serializer": "the sink sends the key column as bytes (a string column as UTF-8)",
    "value.serializer": "jetconnect encodes values itself: give option value_format",
}


def translate(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` (librdkafka names, Spark's ``kafka.`` prefix already gone) with every Java
    client setting that has a librdkafka equivalent translated, and the rest refused."""
    out = dict(config)
    for name in list(out):
        if name.lower() in REFUSED:
            raise OptionError(f"kafka: option '{name}' is a Java client setting: {REFUSED[name.lower()]}")
    _jaas(out)
    _truststore(out)
    _keystore(out)
    algorithm = out.get("ssl.endpoint.identification.algorithm")
    if algorithm is not None:
        text = str(algorithm).strip().lower()
        out["ssl.endpoint.identification.algorithm"] = text if text else "none"
    return out


def _jaas(out: dict[str, Any]) -> None:
    text = out.pop("sasl.jaas.config", None)
    if text is None:
        return
    module, options = parse_jaas(str(text))
    kind = _LOGIN_MODULES.get(module)
    if kind is None:
        if module.endswith("OAuthBearerLoginModule"):
            instead = "librdkafka's sasl.oauthbearer.* settings (sasl.oauthbearer.method=oidc, sasl.oauthbearer.client.id, ...)"
        elif module.endswith("Krb5LoginModule"):
            instead = "sasl.kerberos.keytab, sasl.kerberos.principal and sasl.kerberos.service.name"
        else:
            instead = "sasl.username and sasl.password"
        raise OptionError(f"kafka: option 'sasl.jaas.config': login module {module} cannot carry over; give {instead}")
    for java, rdkafka in (("username", "sasl.username"), ("password", "sasl.password")):
        value = options.get(java)
        if value is None:
            raise OptionError(f"kafka: option 'sasl.jaas.config' has no {java}=\"...\" for {module}")
        if out.get(rdkafka) not in (None, value):
            raise OptionError(f"kafka: options 'sasl.jaas.config' and '{rdkafka}' give different values; give one")
        out[rdkafka] = value
    mechanism = out.get("sasl.mechanism") or out.get("sasl.mechanisms")
    if mechanism is None:
        if kind != "PLAIN":
            raise OptionError(
                "kafka: option 'sasl.jaas.config' uses the SCRAM login module: give sasl.mechanism "
                "(SCRAM-SHA-256 or SCRAM-SHA-512) too, as the Java client needs it"
            )
        out["sasl.mechanism"] = "PLAIN"
    elif not str(mechanism).upper().startswith(kind):
        raise OptionError(
            f"kafka: option 'sasl.jaas.config' uses {module}, which cannot log in with sasl.mechanism={mechanism}"
        )


def _truststore(out: dict[str, Any]) -> None:
    location = out.pop("ssl.truststore.location", None)
    password = out.pop("ssl.truststore.password", None)
    kind = out.pop("ssl.truststore.type", None)
    inline = out.pop("ssl.truststore.certificates", None)
    if location is None and inline is None:
        if password is not None:
            raise OptionError("kafka: option 'ssl.truststore.password' is given without ssl.truststore.location")
        return
    if out.get("ssl.ca.location") is not None:
        raise OptionError(
            "kafka: give either ssl.truststore.location (Java's) or ssl.ca.location (librdkafka's), not both"
        )
    pems = [str(inline)] if inline is not None else []
    if location is not None:
        pems.append(
            truststore_pem(
                str(location), None if password is None else str(password), None if kind is None else str(kind)
            )
        )
    if out.get("ssl.ca.pem"):
        pems.insert(0, str(out["ssl.ca.pem"]))
    out["ssl.ca.pem"] = "".join(p if p.endswith("\n") else p + "\n" for p in pems)


def _keystore(out: dict[str, Any]) -> None:
    kind = out.pop("ssl.keystore.type", None)
    kind = None if kind is None else str(kind).upper()
    chain, key = out.pop("ssl.keystore.certificate.chain", None), out.pop("ssl.keystore.key", None)
    if chain is not None or key is not None:  # Java's inline PEM keystore
        out["ssl.certificate.pem"], out["ssl.key.pem"] = chain, key
        return
    location = out.get("ssl.keystore.location")
    if location is None or kind in (None, "PKCS12"):
        if location is not None and kind is None and _is_jks(str(location)):
            kind = "JKS"
        else:
            return  # librdkafka reads a PKCS12 keystore itself
    if kind == "PEM":
        out.pop("ssl.keystore.location")
        out["ssl.certificate.location"] = out["ssl.key.location"] = location
        return
    raise OptionError(
        f"kafka: option 'ssl.keystore.location' is a {kind} keystore, which librdkafka cannot read: convert it "
        f"once with `keytool -importkeystore -srckeystore {location} -destkeystore keystore.p12 -deststoretype PKCS12` "
        f"and give the .p12 (ssl.keystore.location, ssl.keystore.password), or give ssl.certificate.location "
        f"and ssl.key.location (PEM)"
    )


def _is_jks(location: str) -> bool:
    try:
        with open(location, "rb") as f:
            return f.read(4) in (b"\xfe\xed\xfe\xed", b"\xce\xce\xce\xce")
    except OSError:
        return False


# --- JAAS: the grammar of Kafka's JaasConfig (a java.io.StreamTokenizer) ------------------------

_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def parse_jaas(text: str) -> tuple[str, dict[str, str]]:
    """``(login module, {option: value})`` of a one-entry JAAS configuration, as Kafka reads it:
    ``Module required key="value" key2=value2;``, values quoted with ``"`` or ``'`` (backslash
    escapes as Java's StreamTokenizer reads them) or bare words; ``//`` and ``/* */`` comments."""
    tokens = _tokens(text)
    if not tokens or tokens[0][0] != "word":
        raise OptionError("kafka: option 'sasl.jaas.config' names no login module")
    module = tokens[0][1]
    if len(tokens) < 2 or tokens[1][1].lower() not in ("required", "requisite", "sufficient", "optional"):
        raise OptionError("kafka: option 'sasl.jaas.config' needs a control flag (required) after the login module")
    options: dict[str, str] = {}
    at = 2
    while at < len(tokens) and tokens[at] != ("char", ";"):
        key = tokens[at][1]
        if at + 2 >= len(tokens) or tokens[at + 1] != ("char", "=") or tokens[at + 2][0] == "char":
            raise OptionError(f"kafka: option 'sasl.jaas.config': no value for key '{key}'")
        options[key] = tokens[at + 2][1]
        at += 3
    if at >= len(tokens):
        raise OptionError("kafka: option 'sasl.jaas.config' is not ended by ';'")
    if at + 1 < len(tokens):
        raise OptionError("kafka: option 'sasl.jaas.config' holds more than one login module; give one")
    return module, options


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c <= " ":
            i += 1
        elif text.startswith("//", i):
            while i < n and text[i] not in "\r\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c in "\"'":
            value, i = _quoted(text, i + 1, c)
            tokens.append(("quoted", value))
        elif c.isalnum() or c in "-_$.":
            start = i
            while i < n and (text[i].isalnum() or text[i] in "-_$."):
                i += 1
            tokens.append(("word", text[start:i]))
        else:
            tokens.append(("char", c))
            i += 1
    return tokens


def _quoted(text: str, i: int, quote: str) -> tuple[str, int]:
    """A quoted value from ``i`` (after the opening quote) to the closing one, escapes read."""
    out: list[str] = []
    n = len(text)
    while i < n and text[i] != quote:
        c = text[i]
        if c in "\r\n":
            break  # StreamTokenizer ends a quoted string at a line's end
        if c == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt in "01234567":
                j = i + 1
                limit = 3 if nxt <= "3" else 2
                while j < n and j - (i + 1) < limit and text[j] in "01234567":
                    j += 1
                out.append(chr(int(text[i + 1 : j], 8)))
                i = j
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out), i + 1


__all__ = ["REFUSED", "parse_jaas", "translate"]
