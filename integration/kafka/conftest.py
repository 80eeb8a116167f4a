"""Fixtures for the Kafka tests: the broker from scripts/servers/, fresh topics, producers as users run them.

The broker is Apache Kafka 4 itself (scripts/servers/kafka.sh: one KRaft node, broker and
controller, on 127.0.0.1:9092, data on disk). Test data is produced the way users produce it: by
confluent-kafka producers with librdkafka's defaults (``linger.ms`` 5, several records per batch)
into several partitions, in transactions where a test needs them, and by kcat, the standard
command-line client (Debian's, librdkafka 2.0.2, installed by kafka.sh start as root).

:meth:`Kafka.check_stable` waits, before a read_committed read, for every transaction on the
topic to end: a committed transaction's markers are written after the producer's commit returns,
and a transaction a sink left open would hold read_committed readers back for good, a defect
the check names by partition.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import pytest
from confluent_kafka import Consumer, IsolationLevel, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

BOOTSTRAP = "127.0.0.1:9092"
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "servers" / "kafka.sh"
#: what a broker just back from a SIGKILL answers until it has loaded its partitions again
_RECOVERING = {
    KafkaError.UNKNOWN_LEADER_EPOCH,
    KafkaError.FENCED_LEADER_EPOCH,
    KafkaError.NOT_LEADER_FOR_PARTITION,
    KafkaError.LEADER_NOT_AVAILABLE,
    KafkaError._TRANSPORT,
    KafkaError._TIMED_OUT,
}


class Kafka:
    """A test broker: make topics, produce test records, read a topic back."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.admin = AdminClient({"bootstrap.servers": bootstrap})

    def topic(self, partitions: int = 1, prefix: str = "t") -> str:
        """A new topic with ``partitions`` partitions."""
        name = f"{prefix}-{uuid.uuid4().hex[:10]}"
        for future in self.admin.create_topics([NewTopic(name, partitions, 1)]).values():
            future.result(timeout=30)
        return name

    def produce(
        self,
        topic: str,
        values: Iterable[bytes | str],
        partitions: int = 1,
        key: bool = True,
        headers: Sequence[tuple[str, bytes]] | None = None,
    ) -> int:
        """Record ``i`` goes to partition ``i % partitions``, by a producer with librdkafka's defaults.

        The defaults batch: records produced within ``linger.ms`` (5 ms) of each other share a
        record batch, as in any real application. Returns the count.
        """
        producer = Producer({"bootstrap.servers": self.bootstrap})
        n = 0
        for i, value in enumerate(values):
            value = value.encode() if isinstance(value, str) else value
            producer.produce(
                topic,
                value=value,
                key=str(i).encode() if key else None,
                partition=i % partitions,
                headers=list(headers) if headers else None,
            )
            n += 1
            if n % 1000 == 0:
                producer.poll(0)
        assert producer.flush(30) == 0
        return n

    def kcat(self, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run kcat, the standard Kafka command-line client, against this broker; fail if it fails (``check``)."""
        kcat = shutil.which("kcat") or shutil.which("kafkacat")
        if kcat is None:
            missing = "kcat is not installed (scripts/servers/kafka.sh start installs Debian's kcat as root)"
            if os.environ.get("CI", "").lower() == "true":
                pytest.fail(missing)
            pytest.skip(missing)
        result = subprocess.run(
            [kcat, "-b", self.bootstrap, *args], input=input, capture_output=True, text=True, timeout=120
        )
        assert not check or result.returncode == 0, (
            f"kcat {' '.join(args)} exited {result.returncode}: {result.stderr[-2000:]}"
        )
        return result

    def crash_and_restart(self) -> None:
        """SIGKILL the broker (``kafka.sh kill``) and start it again: it recovers its log from disk."""
        env = {**os.environ, "PYTHON": sys.executable}
        for verb in ("kill", "start"):
            result = subprocess.run(["bash", str(SCRIPT), verb], capture_output=True, text=True, timeout=300, env=env)
            assert result.returncode == 0, f"kafka.sh {verb} exited {result.returncode}: {result.stderr[-3000:]}"

    def check_stable(self, topic: str, timeout: float = 10.0) -> None:
        """Fail, naming the partition, if records of ``topic`` stay behind an unfinished transaction."""
        parts = sorted(self.admin.list_topics(topic, timeout=10).topics[topic].partitions)
        deadline = time.monotonic() + timeout
        while True:
            stable = self.ends(topic, parts, IsolationLevel.READ_COMMITTED)
            high = self.ends(topic, parts)
            behind = {p: (stable[p], high[p]) for p in parts if stable[p] < high[p]}
            if not behind:
                return
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"topic {topic}: records behind a transaction the broker has not finished after {timeout:.0f} s "
                    f"(partition: (last stable offset, high watermark)): {behind}"
                )
            time.sleep(0.2)

    def ends(
        self, topic: str, parts: Sequence[int], isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED
    ) -> dict[int, int]:
        """The end the broker reports for each partition: the high watermark, or the last stable offset.

        Errors of a recovering broker (``_RECOVERING``) are retried for up to a minute.
        """
        deadline = time.monotonic() + 60
        while True:
            futures = self.admin.list_offsets(
                {TopicPartition(topic, p): OffsetSpec.latest() for p in parts},
                isolation_level=isolation,
                request_timeout=10,
            )
            try:
                return {tp.partition: future.result().offset for tp, future in futures.items()}
            except KafkaException as e:
                error = e.args[0]
                recovering = error.retriable() or error.code() in _RECOVERING
                if not recovering or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def read_all(self, topic: str, read_committed: bool = True) -> list[tuple[int, int, bytes | None, bytes | None]]:
        """Every record of ``topic`` as ``(partition, offset, key, value)``, read by a plain consumer.

        A read_committed read first checks that no transaction holds records of the topic back.
        """
        if read_committed:
            self.check_stable(topic)
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": "jetconnect-tests",
                "enable.auto.commit": False,
                "isolation.level": "read_committed" if read_committed else "read_uncommitted",
            }
        )
        try:
            parts = sorted(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
            ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts}
            consumer.assign([TopicPartition(topic, p, 0) for p in parts])
            records = []
            done: set[int] = {p for p, end in ends.items() if end == 0}
            idle = 0
            while len(done) < len(parts) and idle < 50:
                messages = consumer.consume(1000, timeout=0.2)
                idle = 0 if messages else idle + 1
                for m in messages:
                    assert m.error() is None, m.error()
                    records.append((m.partition(), m.offset(), m.key(), m.value()))
                for tp in consumer.position([TopicPartition(topic, p) for p in parts if p not in done]):
                    if tp.offset >= ends[tp.partition]:
                        done.add(tp.partition)
            return records
        finally:
            consumer.close()


@pytest.fixture(scope="session")
def kafka(server) -> Kafka:  # type: ignore[no-untyped-def]
    """Apache Kafka on 127.0.0.1:9092 (scripts/servers/kafka.sh)."""
    server("kafka")
    return Kafka(BOOTSTRAP)


@pytest.fixture
def available_now(spark, tmp_path) -> Callable[[object], tuple[list, list[int]]]:  # type: ignore[no-untyped-def]
    """Run a streaming DataFrame to the end of what is there (AvailableNow) into a memory table.

    Returns its rows and the sizes of its non-empty micro-batches; a failed query raises.
    """

    def run(df):  # type: ignore[no-untyped-def]
        name = f"q_{uuid.uuid4().hex[:8]}"
        query = (
            df.writeStream.format("memory")
            .queryName(name)
            .option("checkpointLocation", str(tmp_path / name))
            .trigger(availableNow=True)
            .start()
        )
        assert query.awaitTermination(240), f"query {name} did not finish in 240 s"
        sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
        return spark.table(name).collect(), sizes

    return run


class Secured:
    """The broker's secured listeners (scripts/servers/kafka.sh): SASL_SSL with SCRAM-SHA-512 logins,
    mTLS, and TLS with an expired certificate; ``info`` is the script's secured.json (endpoints,
    user, passwords, and the CA, client certificates and stores it made)."""

    LOG = Path("/tmp/jetconnect-kafka/kafka.out")

    def __init__(self, info: dict[str, object]) -> None:
        self.info = info

    def __getitem__(self, key: str) -> str:
        return str(self.info[key])

    def sasl(self, **overrides: str) -> dict[str, str]:
        """librdkafka settings of a SCRAM login over TLS, as a Python user passes them."""
        return {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": self["user"],
            "sasl.password": self["password"],
            "ssl.ca.location": self["ca.pem"],
            **overrides,
        }

    def mtls(self, **overrides: str) -> dict[str, str]:
        """librdkafka settings of TLS with the client certificate and key as PEM files."""
        return {
            "security.protocol": "SSL",
            "ssl.ca.location": self["ca.pem"],
            "ssl.certificate.location": self["client.pem"],
            "ssl.key.location": self["client.key"],
            **overrides,
        }

    def secrets(self) -> list[str]:
        """What must never show: every password, and the private key's body."""
        key_lines = [line for line in Path(self["client.key"]).read_text().splitlines() if "-----" not in line]
        return [
            self["password"],
            self["key_password"],
            self["store_password"],
            self["p12_password"],
            *key_lines[1:4],  # a key's base64 lines: any one shown is the key shown
        ]

    def failed_logins(self, port: str = "") -> int:
        """Logins and TLS handshakes the broker refused so far (its Selector logs each at INFO, with
        the listener's address in the channel id), on the listener at ``port`` if given."""
        lines = self.LOG.read_text(errors="replace").splitlines()
        return sum(
            1 for line in lines if "Failed authentication with" in line and f"channelId=127.0.0.1:{port}" in line
        )


@pytest.fixture(scope="session")
def secured(kafka: Kafka) -> Secured:
    out = subprocess.run(["bash", str(SCRIPT), "secured"], capture_output=True, text=True, check=True, timeout=300)
    return Secured(json.loads(Path(out.stdout.strip()).read_text()))
