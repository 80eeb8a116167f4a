"""Secured settings without a broker: Java client settings translated, Spark's option names taken,
librdkafka's reports sorted into refusals. (The broker side: integration/kafka/test_secured.py.)"""

from __future__ import annotations

import datetime
import hashlib
import re
import struct
from pathlib import Path

import pytest
from confluent_kafka import KafkaError
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from jetconnect import sinks, sources
from jetconnect._options import Options
from jetconnect._registry import get_registry
from jetconnect.errors import OptionError
from jetconnect_kafka import spark_options
from jetconnect_kafka.config import client_config
from jetconnect_kafka.java_settings import parse_jaas
from jetconnect_kafka.refusals import (
    AUTHENTICATION,
    CERTIFICATE,
    CLIENT_CERTIFICATE,
    PROTOCOL,
    TlsSettings,
    Watch,
    classify,
)

PASSWORD = "p'w\"@%\\x"  # every character a quoting bug trips on, a backslash too
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
README = Path(__file__).resolve().parents[2] / "plugins" / "kafka" / "README.md"


def _jaas_quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@pytest.mark.parametrize(
    "text",
    [
        f'{SCRAM} required username="alice" password={_jaas_quoted(PASSWORD)};',
        f"  {SCRAM}\n  REQUIRED\n  username = alice   // the user\n  password = {_jaas_quoted(PASSWORD)} ;",
        f"/* Spark */ {SCRAM} required password={_jaas_quoted(PASSWORD)} username='alice';",
    ],
)
def test_a_jaas_login_reads_as_kafkas_parser_reads_it(text: str) -> None:
    assert parse_jaas(text) == (SCRAM, {"username": "alice", "password": PASSWORD})


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (f'{SCRAM} required username="alice"', "not ended by ';'"),
        (f"{SCRAM} username=alice;", "control flag"),
        (f"{SCRAM} required username=;", "no value for key 'username'"),
        (f"{SCRAM} required username=a; {PLAIN} required username=b;", "more than one login module"),
    ],
)
def test_a_broken_jaas_login_is_refused_saying_where(text: str, says: str) -> None:
    with pytest.raises(OptionError, match=re.escape(says)):
        parse_jaas(text)


def test_a_jaas_login_becomes_librdkafkas_username_and_password() -> None:
    jaas = f"{SCRAM} required username=alice password={_jaas_quoted(PASSWORD)};"
    settings = client_config("h:9094", {"kafka.sasl.jaas.config": jaas, "kafka.sasl.mechanism": "SCRAM-SHA-512"})
    assert settings == {
        "bootstrap.servers": "h:9094",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "alice",
        "sasl.password": PASSWORD,
    }
    plain = client_config("h:9094", {"sasl.jaas.config": f'{PLAIN} required username="u" password="p";'})
    assert plain["sasl.mechanism"] == "PLAIN"  # only PLAIN can be meant
    with pytest.raises(OptionError, match="give sasl.mechanism"):
        client_config("h", {"sasl.jaas.config": jaas})
    with pytest.raises(OptionError, match="cannot log in with sasl.mechanism=PLAIN"):
        client_config("h", {"sasl.jaas.config": jaas, "sasl.mechanism": "PLAIN"})
    with pytest.raises(OptionError, match="sasl.kerberos.keytab"):
        client_config("h", {"sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;"})


def test_java_only_settings_are_refused_with_what_to_do_instead() -> None:
    with pytest.raises(OptionError, match="'ssl.protocol' is a Java client setting: librdkafka negotiates"):
        client_config("h", {"kafka.ssl.protocol": "TLSv1.3"})
    with pytest.raises(OptionError, match="value_format"):
        client_config("h", {"kafka.value.deserializer": "org.apache.kafka.common.serialization.StringDeserializer"})


def test_javas_empty_endpoint_identification_means_none() -> None:
    assert (
        client_config("h", {"kafka.ssl.endpoint.identification.algorithm": ""})["ssl.endpoint.identification.algorithm"]
        == "none"
    )
    assert (
        client_config("h", {"ssl.endpoint.identification.algorithm": "HTTPS"})["ssl.endpoint.identification.algorithm"]
        == "https"
    )


def _certificate(name: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _jks(certificates: list[x509.Certificate], password: str) -> bytes:
    """A JKS store of trusted certificates, in the format keytool writes (version 2)."""
    body = b"\xfe\xed\xfe\xed" + struct.pack(">II", 2, len(certificates))
    for i, cert in enumerate(certificates):
        der = cert.public_bytes(serialization.Encoding.DER)
        alias = f"ca{i}".encode()
        body += struct.pack(">IH", 2, len(alias)) + alias + struct.pack(">Q", 0)
        body += struct.pack(">H", 5) + b"X.509" + struct.pack(">I", len(der)) + der
    return body + hashlib.sha1(password.encode("utf-16-be") + b"Mighty Aphrodite" + body).digest()


def test_a_truststore_becomes_the_ca_text_librdkafka_reads_and_a_wrong_password_is_named(tmp_path: Path) -> None:
    (ca1, _), (ca2, key) = _certificate("ca one"), _certificate("ca two")
    pem = "".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in (ca1, ca2))
    jks = tmp_path / "trust.jks"
    jks.write_bytes(_jks([ca1, ca2], PASSWORD))
    p12 = tmp_path / "trust.p12"
    p12.write_bytes(
        pkcs12.serialize_key_and_certificates(
            None, None, None, [ca1, ca2], serialization.BestAvailableEncryption(PASSWORD.encode())
        )
    )
    for store, kind in ((jks, "JKS"), (p12, "PKCS12"), (jks, None), (p12, None)):
        options = {"kafka.ssl.truststore.location": str(store), "kafka.ssl.truststore.password": PASSWORD}
        settings = client_config("h", {**options, **({"kafka.ssl.truststore.type": kind} if kind else {})})
        assert settings == {"bootstrap.servers": "h", "ssl.ca.pem": pem}  # the password gone with the store
        with pytest.raises(OptionError, match="does not open with option 'ssl.truststore.password'") as wrong:
            client_config("h", {**options, "kafka.ssl.truststore.password": "nope"})
        assert PASSWORD not in str(wrong.value)
    with_key = tmp_path / "keystore.p12"
    with_key.write_bytes(
        pkcs12.serialize_key_and_certificates(b"k", key, ca2, None, serialization.BestAvailableEncryption(b"pw"))
    )
    with pytest.raises(OptionError, match="holds a private key"):
        client_config("h", {"ssl.truststore.location": str(with_key), "ssl.truststore.password": "pw"})
    with pytest.raises(OptionError, match="cannot read"):
        client_config("h", {"ssl.truststore.location": str(tmp_path / "missing.jks")})


def test_a_jks_keystore_is_refused_with_the_keytool_line_that_converts_it(tmp_path: Path) -> None:
    store = tmp_path / "client.jks"
    store.write_bytes(_jks([_certificate("x")[0]], "pw"))
    with pytest.raises(OptionError, match="keytool -importkeystore -srckeystore .*client.jks .*-deststoretype PKCS12"):
        client_config("h", {"kafka.ssl.keystore.location": str(store), "kafka.ssl.keystore.password": "pw"})
    p12 = {"ssl.keystore.location": "/k.p12", "ssl.keystore.password": "pw", "ssl.keystore.type": "PKCS12"}
    assert client_config("h", p12) == {
        "bootstrap.servers": "h",
        "ssl.keystore.location": "/k.p12",
        "ssl.keystore.password": "pw",
    }


# --- Spark's option names --------------------------------------------------------------------------


def _from_spark(kind: str, options: dict[str, str]):  # type: ignore[no-untyped-def]
    registry = get_registry()
    spec = (registry.sources if kind == "source" else registry.sinks)["kafka"]
    return spec.create_from_options(Options(options, owner=f"{kind} 'kafka'"))


def test_spark_kafka_source_options_are_taken_as_they_are() -> None:
    source = _from_spark(
        "source",
        {
            "kafka.bootstrap.servers": "h:9092",
            "subscribe": "a,b",
            "startingOffsets": '{"a": {"0": 5}}',
            "endingOffsets": "latest",
            "maxOffsetsPerTrigger": "100",
            "failOnDataLoss": "false",
            "includeHeaders": "false",
            "kafkaConsumer.pollTimeoutMs": "2500",
            "kafka.security.protocol": "SSL",
        },
    )
    assert source.topics == ["a", "b"] and source.config["bootstrap.servers"] == "h:9092"
    assert source.starting.offsets == {"a:0": 5} and source.max_records_per_batch == 100
    assert source.on_out_of_range == "earliest" and source.broker_timeout_s == 2.5
    assert "headers" not in source.schema().fieldNames() and source.config["security.protocol"] == "SSL"
    assert "subscribe" not in source.config  # none of Spark's names reach librdkafka
    pattern = _from_spark(
        "source", {"kafka.bootstrap.servers": "h", "subscribePattern": "t.*", "failOnDataLoss": "true"}
    )
    assert pattern.pattern == "t.*" and pattern.on_out_of_range == "fail"
    assigned = _from_spark("source", {"kafka.bootstrap.servers": "h", "assign": '{"t": [1, 0]}'})
    assert assigned.assigned == {"t": [0, 1]} and assigned.topics == ["t"]
    by_time = _from_spark(
        "source", {"kafka.bootstrap.servers": "h", "subscribe": "t", "startingTimestamp": "1700000000000"}
    )
    assert by_time.starting.timestamp_ms == 1_700_000_000_000


def test_the_python_way_in_takes_spark_names_too() -> None:
    source = sources.kafka(**{"kafka.bootstrap.servers": "h:9092", "subscribe": "t", "failOnDataLoss": False})
    assert source.topics == ["t"] and source.on_out_of_range == "earliest"
    sink = sinks.kafka(**{"kafka.bootstrap.servers": "h:9092", "topic": "t"})
    assert sink.config["bootstrap.servers"] == "h:9092"


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"subscribe": "t", "topics": "u"}, "options 'subscribe' and 'topics' both give 'topics'"),
        (
            {"subscribe": "t", "minOffsetsPerTrigger": "10"},
            "'minOffsetsPerTrigger' cannot carry over: .*processingTime",
        ),
        ({"subscribe": "t", "groupIdPrefix": "g"}, "cannot carry over: .*group_id"),
        ({"subscribe": "t", "startingOffsetsByTimestamp": "{}"}, "cannot carry over: .*starting_offsets"),
        (
            {"subscribe": "t", "failOnDataLoss": "maybe"},
            "'failOnDataLoss' \\(for 'on_offset_out_of_range'\\): must be true or false",
        ),
        ({"assign": '{"t": "0"}'}, "option 'assign' topic 't' needs a list of partitions"),
        ({"assign": '{"t": [0]}', "subscribe": "t"}, "give one of options 'topics', 'pattern' and 'assign'"),
    ],
)
def test_what_cannot_carry_over_is_refused_naming_the_equivalent(options: dict[str, str], says: str) -> None:
    with pytest.raises(OptionError, match=says):
        _from_spark("source", {"kafka.bootstrap.servers": "h", **options})


def test_every_spark_option_name_is_in_the_readmes_table() -> None:
    table = README.read_text().split("## Spark's Kafka options", 1)[1].split("\n## ", 1)[0]
    names = set(re.findall(r"`([A-Za-z.]+)`", table))
    missing = [
        n
        for n in [*spark_options.SOURCE_ALIASES, *spark_options.SINK_ALIASES]
        if n not in names and n != "bootstrap.servers"
    ]
    assert missing == []


# --- librdkafka's reports --------------------------------------------------------------------------

TLS = TlsSettings.of({"security.protocol": "SASL_SSL", "ssl.ca.location": "/ca.pem"})


@pytest.mark.parametrize(
    ("code", "text", "kind", "check"),
    [
        (
            KafkaError._AUTHENTICATION,
            "sasl_ssl://127.0.0.1:9094/bootstrap: SASL authentication error: Authentication failed during authentication "
            "due to invalid credentials with SASL mechanism SCRAM-SHA-512 (after 313ms in state AUTH_REQ)",
            AUTHENTICATION,
            "sasl.password",
        ),
        (
            KafkaError._TRANSPORT,
            "ssl://127.0.0.1:9095/bootstrap: Receive failed: error:0A000412:SSL routines::ssl/tls alert bad certificate: "
            "SSL alert number 42 (after 0ms in state APIVERSION_QUERY)",
            CLIENT_CERTIFICATE,
            "none was given",
        ),
        (
            KafkaError._TRANSPORT,
            "ssl://127.0.0.1:9092/bootstrap: SSL handshake failed: Disconnected: SSL connection closed by peer: connecting "
            "to a PLAINTEXT broker listener? (after 3ms in state SSL_HANDSHAKE)",
            PROTOCOL,
            "security.protocol=PLAINTEXT",
        ),
        (
            KafkaError._SSL,
            "ssl://127.0.0.1:1/bootstrap: SSL handshake failed: error:0A000086:SSL routines::certificate verify failed: "
            "broker certificate could not be verified (after 3ms in state SSL_HANDSHAKE)",
            CERTIFICATE,
            "ssl.ca.location",
        ),
        (
            KafkaError._SSL,
            "ssl://127.0.0.1:1/bootstrap: SSL handshake failed: error:0A000102:SSL routines::unsupported protocol",
            PROTOCOL,
            "share none",
        ),
        (
            KafkaError._AUTHENTICATION,
            "sasl_plaintext://127.0.0.1:9092/bootstrap: SASL SCRAM-SHA-512 mechanism handshake failed: Broker: Request not "
            "valid in current SASL state: broker's supported mechanisms:  (after 0ms in state AUTH_HANDSHAKE)",
            PROTOCOL,
            "takes no SASL login",
        ),
    ],
)
def test_librdkafkas_reports_sort_into_refusals(code: int, text: str, kind: str, check: str) -> None:
    refusal = classify(code, text, TLS)
    port = text.split("://127.0.0.1:", 1)[1].split("/")[0]
    assert refusal is not None and refusal.kind == kind and check in refusal.check
    assert refusal.broker.endswith(f"127.0.0.1:{port}")  # a second look at port 1 finds nothing listening


@pytest.mark.parametrize(
    ("code", "text"),
    [
        (
            KafkaError._TRANSPORT,
            "127.0.0.1:9/bootstrap: Connect to ipv4#127.0.0.1:9 failed: Connection refused (after 0ms in state CONNECT)",
        ),
        (KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down"),
        (KafkaError._TIMED_OUT, "127.0.0.1:9092/1: Timed out 1 in-flight request(s)"),
        # a broker going down mid-handshake: may pass
        (
            KafkaError._SSL,
            "ssl://127.0.0.1:1/bootstrap: SSL handshake failed: unexpected eof while reading (after 2ms)",
        ),
    ],
)
def test_a_broker_that_does_not_answer_is_no_refusal(code: int, text: str) -> None:
    assert classify(code, text, TLS) is None


class _Report:
    def __init__(self, code: int, text: str) -> None:
        self._code, self._text = code, text

    def code(self) -> int:
        return self._code

    def str(self) -> str:
        return self._text


def test_a_watch_keeps_the_first_refusal_notes_the_last_transport_error_and_masks_secrets() -> None:
    watch = Watch({"security.protocol": "SASL_SSL"}, secrets=[PASSWORD])
    watch.error_cb(_Report(KafkaError._TRANSPORT, f"b:1/bootstrap: Connect failed {PASSWORD}"))
    assert not watch.pending() and watch.unreachable is not None and PASSWORD not in watch.unreachable
    watch.error_cb(_Report(KafkaError._AUTHENTICATION, "sasl_ssl://b:1/bootstrap: SASL authentication error: first"))
    watch.error_cb(_Report(KafkaError._AUTHENTICATION, "sasl_ssl://b:1/bootstrap: SASL authentication error: second"))
    refusal = watch.refusal()
    assert watch.pending() and refusal is not None and "first" in refusal.reason
    with pytest.raises(Exception, match="authentication refused by sasl_ssl://b:1"):
        watch.raise_if_refused()
