"""The HDFS connector against an HDFS whose web endpoints speak HTTPS only (``swebhdfs``:
``scripts/servers/hdfs.sh secured``), through a real SparkSession.

The NameNode and the DataNode it redirects to both present certificates from the script's CA
for ``localhost``; files are put and read on the other side with the ``hdfs`` client and curl,
as a user would. Off the happy path: a CA that did not sign them, a host name they do not hold,
plain HTTP to the HTTPS port: each fails within 10 s saying which, never retried. (This HDFS
authenticates users the simple way: it has no Kerberos, so no password to get wrong.)
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

import hdfs
import pytest
import requests

from jetconnect import sinks, sources
from jetconnect.testing import checkpoint_batches, text_leaks, wait_until

PROMPT = 10.0
USER = "root"


@pytest.fixture(scope="module")
def secured(secured_server) -> dict[str, Any]:
    return secured_server("hdfs")


@pytest.fixture
def client(secured) -> hdfs.Client:
    """The ``hdfs`` package's own client over HTTPS, verified against the script's CA."""
    session = requests.Session()
    session.trust_env = False  # REQUESTS_CA_BUNDLE would replace the CA given here
    session.verify = secured["ca"]
    return hdfs.InsecureClient(secured["url"], user=USER, session=session)


@pytest.fixture
def folder(client) -> str:
    path = f"/jetconnect-tls/{uuid.uuid4().hex[:12]}"
    client.makedirs(path)
    yield path
    client.delete(path, recursive=True)


def options(secured: dict[str, Any], **changes: Any) -> dict[str, Any]:
    found = {"url": secured["url"], "user": USER, "tls_ca_file": secured["ca"], **changes}
    return {k: v for k, v in found.items() if v is not None}


def test_batch_write_and_read_over_https(spark, secured, client, folder):
    df = spark.createDataFrame([(f"line {i} ' \" @ %",) for i in range(300)], "value string").repartition(3)
    sinks.hdfs(directory=f"{folder}/out", **options(secured)).write(df)
    written = [n for n in client.list(f"{folder}/out") if not n.startswith((".", "_"))]
    assert len(written) == 3
    read = sources.hdfs(path=f"{folder}/out", **options(secured)).read(spark)
    plan = read._jdf.queryExecution().toString()
    # an https:// URL stays on WebHDFS over TLS: Spark's hdfs:// reader would read unencrypted
    assert "BatchScan jetconnect.hdfs" in plan, plan
    assert sorted(r.value for r in read.collect()) == sorted(r.value for r in df.collect())
    by_name = (
        spark.read.format("jetconnect.hdfs")
        .option("path", f"{folder}/out")
        .options(**{k: str(v) for k, v in options(secured).items()})
        .load()
    )
    assert by_name.count() == 300
    # the other side: curl over HTTPS against the same CA reads what the sink wrote
    name = f"{folder}/out/{written[0]}"
    got = subprocess.run(
        ["curl", "-sfL", "--cacert", secured["ca"], f"{secured['url']}/webhdfs/v1{name}?op=OPEN&user.name={USER}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert got.returncode == 0 and got.stdout.count("\n") == 100, got.stderr


def test_a_stream_over_https_restarts_from_its_checkpoint(spark, secured, client, folder, tmp_path):
    """Files put with the ``hdfs`` client, streamed HDFS -> HDFS over HTTPS, stopped, more files,
    restarted from the checkpoint: every line once."""
    client.makedirs(f"{folder}/in")
    for i in range(3):
        client.write(f"{folder}/in/a{i}.txt", data="".join(f"a{i}-{j}\n" for j in range(50)))
    checkpoint = str(tmp_path / "checkpoint")

    def start() -> Any:
        stream = sources.hdfs(path=f"{folder}/in", **options(secured)).read_stream(spark)
        return sinks.hdfs(directory=f"{folder}/out", **options(secured)).write_stream(
            stream, checkpoint_location=checkpoint, trigger={"processingTime": "500 milliseconds"}
        )

    def lines() -> list[str]:
        names = (
            [n for n in client.list(f"{folder}/out") if not n.startswith((".", "_"))]
            if client.status(f"{folder}/out", strict=False)
            else []
        )
        found: list[str] = []
        for name in names:
            with client.read(f"{folder}/out/{name}", encoding="utf-8") as reader:
                found += reader.read().splitlines()
        return found

    query = start()
    try:
        wait_until(lambda: query.exception() is not None or len(lines()) >= 150, 180, "150 lines")
        assert query.exception() is None
    finally:
        query.stop()
    for i in range(2):
        client.write(f"{folder}/in/b{i}.txt", data="".join(f"b{i}-{j}\n" for j in range(50)))
    committed = len(checkpoint_batches(checkpoint))
    query = start()
    try:
        wait_until(lambda: query.exception() is not None or len(lines()) >= 250, 180, "250 lines")
        assert query.exception() is None and len(checkpoint_batches(checkpoint)) > committed
    finally:
        query.stop()
    expected = [f"a{i}-{j}" for i in range(3) for j in range(50)] + [f"b{i}-{j}" for i in range(2) for j in range(50)]
    assert sorted(lines()) == sorted(expected)


# --- off the happy path ----------------------------------------------------------------------------

REFUSALS: dict[str, tuple[dict[str, Any], str, str]] = {
    "untrusted-server-certificate": (
        {"tls_ca_file": "untrusted_ca"},
        "certificate not trusted",
        "certificate verify failed",
    ),
    "system-cas-only": ({"tls_ca_file": None}, "certificate not trusted", "certificate verify failed"),
    "hostname-mismatch": ({"url": "address_url"}, "certificate not trusted", "ip address mismatch"),
    "plaintext-client": ({"url": "plaintext_url", "tls_ca_file": None}, "wrong protocol", "badstatusline"),
}


def refused_options(secured: dict[str, Any], case: str) -> dict[str, Any]:
    changes = {k: (secured[v] if isinstance(v, str) and v in secured else v) for k, v in REFUSALS[case][0].items()}
    return options(secured, **changes)


def timed_failure(fail: Callable[[], Any]) -> tuple[BaseException, float]:
    began = time.monotonic()
    with pytest.raises(Exception) as raised:
        fail()
    return raised.value, time.monotonic() - began


@pytest.mark.parametrize("case", list(REFUSALS))
def test_a_refused_connection_fails_at_once_saying_why(spark, secured, folder, case):
    """With the default retry (60 s for a NameNode that does not answer): the source's planning,
    the sink's tasks through Spark and its check each fail within 10 s naming the kind."""
    found = refused_options(secured, case)
    kind, words = REFUSALS[case][1:]
    df = spark.createDataFrame([("x",)], "value string")
    paths: dict[str, Callable[[], Any]] = {
        "source": lambda: sources.hdfs(path=folder, **found).read(spark).collect(),
        "sink write": lambda: sinks.hdfs(directory=f"{folder}/never", **found).write(df),
        "sink check_connection": lambda: sinks.hdfs(directory=folder, **found).check_connection(),
    }
    shown = {}
    for what, fail in paths.items():
        error, took = timed_failure(fail)
        text = str(error)
        assert took < PROMPT, f"{case}, {what}: failed after {took:.1f} s"
        assert kind in text and words in text.lower(), f"{case}, {what}: {text[-1500:]}"
        shown[what] = text
    assert not text_leaks(shown, [secured["store_password"]], secured["private_keys"])


def test_doctor_says_what_it_checked_of_the_secured_namenode(secured, folder):
    def doctor(found: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        args = [f"--option={k}={v}" for k, v in {"directory": folder, **found}.items()]
        return subprocess.run(
            [sys.executable, "-m", "jetconnect.cli", "doctor", "--skip-spark", "--sink", "hdfs", *args],
            capture_output=True,
            text=True,
            timeout=120,
        )

    ok = doctor(options(secured))
    assert ok.returncode == 0 and "reachable, TLS handshake (certificate verified against" in ok.stdout, ok.stdout
    failed = doctor(refused_options(secured, "untrusted-server-certificate"))
    assert failed.returncode == 1 and "certificate not trusted" in failed.stdout, failed.stdout
