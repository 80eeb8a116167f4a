"""The JMS connector against an ActiveMQ that speaks STOMP over TLS only and requires a login
(``scripts/servers/activemq.sh secured``: stomp+ssl on one port, and on another a connector that
also requires a client certificate), through a real SparkSession.

Messages are produced and consumed on the other side with stomp.py's own TLS (``set_ssl``), the
client a Python user of the broker would pick. Off the happy path: a wrong password, an unknown
user, a server certificate not trusted or not naming the host, no client certificate or one the
broker does not trust, a plaintext client on the TLS port and TLS on the plaintext port: each
fails at once (10 s direct, 30 s through a Spark job) saying which, with one refused connection per try on the broker.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import stomp

from jetconnect import sinks, sources
from jetconnect.testing import REFUSAL_PROMPT_S as PROMPT
from jetconnect.testing import REFUSAL_THROUGH_SPARK_S as SPARK_JOB
from jetconnect.testing import checkpoint_batches, text_leaks, wait_until


@pytest.fixture(scope="module")
def mq(secured_server) -> dict[str, Any]:
    return secured_server("activemq")


def tls_options(mq: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """The connector options of the secured broker (None drops one)."""
    options = {
        "host": mq["host"],
        "port": mq["port"],
        "user": mq["user"],
        "password": mq["password"],
        "tls_ca_file": mq["ca"],
        "connect_timeout": 30.0,
    }
    options.update(changes)
    return {k: v for k, v in options.items() if v is not None}


def stomp_py(mq: dict[str, Any], port: int | None = None, client_cert: bool = False) -> stomp.Connection12:
    """A stomp.py connection over TLS, as a Python user of the broker would make it."""
    port = port or mq["port"]
    conn = stomp.Connection12([(mq["host"], port)], try_loopback_connect=False)
    conn.set_ssl(
        for_hosts=[(mq["host"], port)],
        ca_certs=mq["ca"],
        cert_file=mq["client_cert"] if client_cert else None,
        key_file=mq["client_key"] if client_cert else None,
    )
    conn.connect(mq["user"], mq["password"], wait=True)
    return conn


def produce(mq: dict[str, Any], queue: str, bodies: list[str]) -> None:
    conn = stomp_py(mq)
    try:
        conn.begin("tx")
        for body in bodies:
            conn.send(f"/queue/{queue}", body, transaction="tx", headers={"persistent": "true"})
        conn.commit("tx")
    finally:
        conn.disconnect()


def consume(mq: dict[str, Any], queue: str, expected: int, port: int | None = None, timeout: float = 60) -> list[str]:
    got: list[tuple[str, str]] = []

    class Listener(stomp.ConnectionListener):
        def on_message(self, frame: Any) -> None:
            # acknowledged from the test's thread, not here: over TLS stomp.py's listener runs on its
            # I/O thread, and an ACK sent from it waits for that thread to drain its send queue, which
            # deadlocked once the queue's socket pair filled (hundreds of messages)
            got.append((frame.body, frame.headers["ack"]))

    conn = stomp_py(mq, port, client_cert=port == mq["mtls_port"])
    conn.set_listener("test", Listener())
    conn.subscribe(f"/queue/{queue}", id="test", ack="client-individual")
    deadline = time.monotonic() + timeout
    acked = 0
    while acked < expected and time.monotonic() < deadline:
        for _, ack in got[acked:]:
            conn.ack(ack)
            acked += 1
        time.sleep(0.05)
    time.sleep(0.3)  # one more would show as a duplicate
    for _, ack in got[acked:]:
        conn.ack(ack)
    conn.disconnect()
    return [body for body, _ in got]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_the_sink_writes_over_tls_python_and_spark_options(spark, mq):
    queue = unique("tls-sink")
    df = spark.createDataFrame([(f"m{i}",) for i in range(200)], "body string").repartition(2)
    sinks.jms_queue(queue, **tls_options(mq)).write(df)
    options = {k: str(v) for k, v in tls_options(mq).items()}
    df.write.format("jetconnect.jms_queue").option("destination", queue).options(**options).mode("append").save()
    assert sorted(consume(mq, queue, 400)) == sorted([f"m{i}" for i in range(200)] * 2)


def test_a_client_certificate_port_takes_the_sink_with_its_certificate(spark, mq):
    queue = unique("mtls-sink")
    options = tls_options(mq, port=mq["mtls_port"], tls_cert_file=mq["client_cert"], tls_key_file=mq["client_key"])
    sinks.jms_queue(queue, **options).write(spark.createDataFrame([("a",), ("b",)], "body string"))
    assert sorted(consume(mq, queue, 2, port=mq["mtls_port"])) == ["a", "b"]


def test_a_stream_over_tls_restarts_from_its_checkpoint_exactly_once(spark, mq, tmp_path):
    """Produced with stomp.py over TLS, streamed with Spark's string options, stopped, more produced,
    restarted from the checkpoint with a wrong password (fails, commits nothing), then with the
    right one: every message once."""
    queue = unique("tls-stream")
    produce(mq, queue, [f"a{i}" for i in range(150)])
    options = {k: str(v) for k, v in tls_options(mq).items()}
    checkpoint, output = tmp_path / "checkpoint", tmp_path / "out"

    def start(password: str = mq["password"]) -> Any:
        stream = (
            spark.readStream.format("jetconnect.jms_queue")
            .option("destination", queue)
            .option("wal_location", str(tmp_path / "wal"))
            .options(**{**options, "password": password})
            # a receiver the stopped query left running (logged in with the right password) goes on
            # feeding a query restarted in the same application, whose own login is then never
            # tried (with the default 60 s, a wrong password went unnoticed for 120 s); short, so
            # it is gone before the restart below
            .option("processor_keep_alive_ms", "3000")
            .load()
        )
        return (
            stream.writeStream.format("parquet")
            .option("path", str(output))
            .option("checkpointLocation", str(checkpoint))
            .trigger(processingTime="300 milliseconds")
            .start()
        )

    def rows() -> list[str]:
        from pyspark.errors import AnalysisException

        time.sleep(0.5)  # each look is a Spark job: polling hard starves the query under test
        try:
            return [r.body for r in spark.read.parquet(str(output)).collect()]
        except AnalysisException:  # no file written yet
            return []

    query = start()
    try:
        wait_until(lambda: query.exception() is not None or len(rows()) >= 150, 180, "150 messages")
        assert query.exception() is None
    finally:
        query.stop()
    produce(mq, queue, [f"b{i}" for i in range(150)])
    committed = len(checkpoint_batches(checkpoint))
    # restarted with a wrong password: fails at once, and takes nothing from the queue
    time.sleep(5)  # the first query's receivers outlive it by processor_keep_alive_ms
    failing = start(password=WRONG)
    try:
        failing.awaitTermination(120)
    except Exception:  # noqa: BLE001 - the query's own exception is asserted below
        pass
    finally:
        failing.stop()
    assert "authentication refused" in str(failing.exception())
    # (a micro-batch planned before the stop may commit: it replays what the spools hold)
    assert len(rows()) == 150
    query = start()
    try:
        wait_until(lambda: query.exception() is not None or len(rows()) >= 300, 180, "300 messages")
        assert query.exception() is None
        assert len(checkpoint_batches(checkpoint)) > committed
    finally:
        query.stop()
    assert sorted(rows()) == sorted([f"a{i}" for i in range(150)] + [f"b{i}" for i in range(150)])


# --- off the happy path ----------------------------------------------------------------------------

WRONG = "not-the-password'\"@%"
#: case -> (option changes, the kind the error must name, the underlying words)
REFUSALS: dict[str, tuple[dict[str, Any], str, str]] = {
    "wrong-password": ({"password": WRONG}, "authentication refused", "password is invalid"),
    "unknown-user": ({"user": "nobody_here"}, "authentication refused", "password is invalid"),
    "no-login": ({"user": None, "password": None}, "authentication refused", "password is invalid"),
    "untrusted-server-certificate": (
        {"tls_ca_file": "untrusted_ca"},
        "certificate not trusted",
        "certificate verify failed",
    ),
    "hostname-mismatch": ({"host": "address"}, "certificate not trusted", "ip address mismatch"),
    "no-client-certificate": ({"port": "mtls_port"}, "certificate not trusted", "bad certificate"),
    "untrusted-client-certificate": (
        {"port": "mtls_port", "tls_cert_file": "untrusted_client_cert", "tls_key_file": "untrusted_client_key"},
        "certificate not trusted",
        "certificate unknown",
    ),
    "plaintext-client": ({"tls_ca_file": None}, "wrong protocol", "answered with a tls record"),
    "tls-on-the-plaintext-port": ({"port": "plain_port"}, "wrong protocol", "did not answer the tls handshake"),
}


#: The cases also run through a streaming query's consumer (the same client as the sink's, so one
#: per kind of failure: each query costs ~10 s of Spark start-up).
STREAMED = {"wrong-password", "untrusted-server-certificate", "no-client-certificate", "plaintext-client"}


def refused_options(mq: dict[str, Any], case: str) -> dict[str, Any]:
    changes = {k: (mq[v] if isinstance(v, str) and v in mq else v) for k, v in REFUSALS[case][0].items()}
    return tls_options(mq, **changes)


def refused_connections(mq: dict[str, Any]) -> int:
    log = Path(mq["log"])
    return (
        len(re.findall(r"Transport Connection to: .* failed", log.read_text(errors="replace"))) if log.exists() else 0
    )


def timed_failure(fail: Callable[[], Any]) -> tuple[BaseException, float]:
    began = time.monotonic()
    with pytest.raises(Exception) as raised:
        fail()
    return raised.value, time.monotonic() - began


@pytest.mark.parametrize("case", list(REFUSALS))
def test_a_refused_connection_fails_at_once_saying_why(spark, server, mq, case, tmp_path):
    """With connect_timeout 30 s (the default): the sink's check, its tasks through Spark, and the
    source's consumer in a streaming query each fail at once (10 s direct, 30 s through a Spark job), naming the kind of failure."""
    if case == "tls-on-the-plaintext-port":
        server("activemq")  # the plain broker, whose STOMP port a TLS client meets
    options = refused_options(mq, case)
    kind, words = REFUSALS[case][1:]
    queue = unique("tls-refused")
    before = refused_connections(mq)
    df = spark.createDataFrame([("x",)], "body string")

    def stream() -> None:
        source = sources.jms_queue(queue, wal_location=str(tmp_path / "wal"), **options)
        query = (
            source.read_stream(spark)
            .writeStream.format("memory")
            .queryName(f"refused_{case.replace('-', '_')}")
            .option("checkpointLocation", str(tmp_path / "cp"))
            .start()
        )
        try:
            query.awaitTermination(120)
        finally:
            query.stop()
        raise AssertionError(f"the stream did not fail: {query.exception()}")

    paths: dict[str, tuple[Callable[[], Any], float]] = {
        "sink check_connection": (lambda: sinks.jms_queue(queue, **options).check_connection(), PROMPT),
        "sink write": (lambda: sinks.jms_queue(queue, **options).write(df), SPARK_JOB),
    }
    if case in STREAMED:
        # a streaming query's own start (a fresh Python process, planning) comes on top
        paths["source stream"] = (stream, SPARK_JOB)
    shown = {}
    for what, (fail, within) in paths.items():
        error, took = timed_failure(fail)
        text = str(error)
        assert took < within, f"{case}, {what}: failed after {took:.1f} s"
        assert kind in text and words in text.lower(), f"{case}, {what}: {text[-2000:]}"
        shown[f"{what}: error"] = text
    if case != "tls-on-the-plaintext-port":  # that broker's log is not the secured one's
        # one refused connection per connection made (the stream's consumer may be tried again by
        # Spark's task retries), not connect_timeout's worth of them
        assert refused_connections(mq) - before <= 8, f"{refused_connections(mq) - before} refused connections"
    assert not text_leaks(shown, [mq["password"], WRONG], mq["private_keys"])


def test_a_broker_that_is_down_is_still_retried_for_connect_timeout(mq):
    error, took = timed_failure(
        lambda: sinks.jms_queue("q", **tls_options(mq, port=1, connect_timeout=2)).check_connection()
    )
    assert took >= 2 and "connecting to the STOMP broker at localhost:1 failed" in str(error), str(error)


def test_doctor_says_what_it_checked_of_the_secured_broker(mq):
    import subprocess
    import sys

    def doctor(**options: Any) -> subprocess.CompletedProcess[str]:
        args = [f"--option={k}={v}" for k, v in {"destination": "q", **options}.items()]
        return subprocess.run(
            [sys.executable, "-m", "jetconnect.cli", "doctor", "--skip-spark", "--sink", "jms_queue", *args],
            capture_output=True,
            text=True,
            timeout=120,
        )

    ok = doctor(**tls_options(mq))
    assert ok.returncode == 0 and "reachable, TLSv1.3 handshake, logged in as 'jetconnect_tls'" in ok.stdout, ok.stdout
    for case, said in (
        ("wrong-password", "authentication refused"),
        ("untrusted-server-certificate", "certificate not trusted"),
    ):
        failed = doctor(**refused_options(mq, case))
        assert failed.returncode == 1 and said in failed.stdout, failed.stdout
        assert not text_leaks({"doctor": failed.stdout + failed.stderr + ok.stdout}, [mq["password"], WRONG])
