"""The HDFS connector against a kerberized HDFS whose web endpoints speak HTTPS only
(``scripts/servers/hdfs.sh secured``: a KDC of the script's own realm; the NameNode and DataNode
log in from their keytab, WebHDFS asks for SPNEGO, the DataNode takes block tokens over SASL data
transfer; certificates from the script's CA for ``localhost``), through a real SparkSession.

The connector logs in with ``kerberos=True`` from a keytab (each Spark worker gets its own tickets
in memory) or from a ticket cache ``kinit`` made with the user's password. Files are put and read
on the other side with curl (``--negotiate``), as an operator would. Off the happy path: no
Kerberos at all (simple authentication), a principal the keytab does not hold, no ticket, a CA
that did not sign the certificates, a host name they do not hold, plain HTTP to the HTTPS port:
each fails at once (10 s direct, 30 s through a Spark job) saying which, never retried.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from jetconnect import sinks, sources
from jetconnect.testing import REFUSAL_PROMPT_S as PROMPT
from jetconnect.testing import REFUSAL_THROUGH_SPARK_S as SPARK_JOB
from jetconnect.testing import checkpoint_batches, text_leaks, wait_until
from jetconnect_hdfs import HdfsConnection, WebHdfsFileSystem


@pytest.fixture(scope="module")
def secured(secured_server) -> dict[str, Any]:
    return secured_server("hdfs")


def options(secured: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """The connector's options for the secured HDFS: HTTPS against the script's CA, Kerberos from
    the user's keytab (None drops one)."""
    found = {
        "url": secured["url"],
        "tls_ca_file": secured["ca"],
        "kerberos": True,
        "kerberos_principal": secured["principal"],
        "kerberos_keytab": secured["keytab"],
        "kerberos_config": secured["krb5_conf"],
        **changes,
    }
    return {k: v for k, v in found.items() if v is not None}


@pytest.fixture
def fs(secured) -> WebHdfsFileSystem:
    return WebHdfsFileSystem(HdfsConnection(**options(secured)))


@pytest.fixture
def folder(fs) -> Iterator[str]:
    path = f"/jetconnect-tls/{uuid.uuid4().hex[:12]}"
    fs.mkdirs(path)
    yield path
    fs.delete(path, recursive=True)


def curl(secured: dict[str, Any], *args: str, cache: str) -> subprocess.CompletedProcess[str]:
    """curl over HTTPS with SPNEGO from ``cache``, as an operator checks WebHDFS by hand."""
    env = {**os.environ, "KRB5_CONFIG": secured["krb5_conf"], "KRB5CCNAME": f"FILE:{cache}"}
    return subprocess.run(
        ["curl", "-sf", "--negotiate", "-u", ":", "--cacert", secured["ca"], *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def kinit(secured: dict[str, Any], cache: str, password: str) -> subprocess.CompletedProcess[str]:
    """The user's own login: kinit reads the password from its prompt (stdin), into ``cache``."""
    env = {**os.environ, "KRB5_CONFIG": secured["krb5_conf"], "KRB5CCNAME": f"FILE:{cache}"}
    return subprocess.run(
        ["kinit", secured["principal"]], input=password + "\n", text=True, capture_output=True, timeout=30, env=env
    )


def test_batch_write_and_read_over_https_with_kerberos(spark, secured, fs, folder, tmp_path):
    df = spark.createDataFrame([(f"line {i} ' \" @ %",) for i in range(300)], "value string").repartition(3)
    sinks.hdfs(directory=f"{folder}/out", **options(secured)).write(df)
    written = [f.path for f in fs.list_files(f"{folder}/out")]
    assert len(written) == 3, written
    read = sources.hdfs(path=f"{folder}/out", **options(secured)).read(spark)
    plan = read._jdf.queryExecution().toString()
    # Kerberos and TLS stay on WebHDFS: Spark's hdfs:// reader would have neither here
    assert "BatchScan jetconnect.hdfs" in plan, plan
    assert sorted(r.value for r in read.collect()) == sorted(r.value for r in df.collect())
    by_name = (
        spark.read.format("jetconnect.hdfs")
        .option("path", f"{folder}/out")
        .options(**{k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in options(secured).items()})
        .load()
    )
    assert by_name.count() == 300
    # the other side: curl with SPNEGO, from a ticket kinit made with the user's password
    cache = str(tmp_path / "ccache")
    assert kinit(secured, cache, secured["kerberos_password"]).returncode == 0
    got = curl(secured, "-L", f"{secured['url']}/webhdfs/v1{written[0]}?op=OPEN", cache=cache)
    assert got.returncode == 0 and got.stdout.count("\n") == 100, got.stderr


def test_a_stream_over_https_with_kerberos_restarts_from_its_checkpoint(spark, secured, fs, folder, tmp_path):
    """Files put with curl (SPNEGO), streamed HDFS -> HDFS, stopped, more files, restarted from
    the checkpoint: every line once."""
    cache = str(tmp_path / "ccache")
    assert kinit(secured, cache, secured["kerberos_password"]).returncode == 0
    fs.mkdirs(f"{folder}/in")

    def put(name: str, text: str) -> None:
        url = f"{secured['url']}/webhdfs/v1{folder}/in/{name}?op=CREATE&overwrite=false"
        made = curl(
            secured,
            "-L",
            "-X",
            "PUT",
            "-H",
            "Content-Type: application/octet-stream",
            "--data-binary",
            text,
            url,
            cache=cache,
        )
        assert made.returncode == 0, made.stderr

    for i in range(3):
        put(f"a{i}.txt", "".join(f"a{i}-{j}\n" for j in range(50)))
    checkpoint = str(tmp_path / "checkpoint")

    def start() -> Any:
        stream = sources.hdfs(path=f"{folder}/in", **options(secured)).read_stream(spark)
        return sinks.hdfs(directory=f"{folder}/out", **options(secured)).write_stream(
            stream, checkpoint_location=checkpoint, trigger={"processingTime": "500 milliseconds"}
        )

    def lines() -> list[str]:
        time.sleep(0.5)
        if not fs.exists(f"{folder}/out"):
            return []
        found: list[str] = []
        for info in fs.list_files(f"{folder}/out"):
            found += fs.read_range(info.path, 0, info.size).decode().splitlines()
        return found

    query = start()
    try:
        wait_until(lambda: query.exception() is not None or len(lines()) >= 150, 180, "150 lines")
        assert query.exception() is None
    finally:
        query.stop()
    for i in range(2):
        put(f"b{i}.txt", "".join(f"b{i}-{j}\n" for j in range(50)))
    committed = len(checkpoint_batches(checkpoint))
    query = start()
    try:
        wait_until(lambda: query.exception() is not None or len(lines()) >= 250, 180, "250 lines")
        assert query.exception() is None and len(checkpoint_batches(checkpoint)) > committed
    finally:
        query.stop()
    expected = [f"a{i}-{j}" for i in range(3) for j in range(50)] + [f"b{i}-{j}" for i in range(2) for j in range(50)]
    assert sorted(lines()) == sorted(expected)


def test_a_ticket_cache_made_with_the_password_logs_the_doctor_in(secured, folder, tmp_path):
    """No keytab: the user's own kinit (the password, ' " @ % and all, typed at its prompt) and
    KRB5CCNAME, as a Hadoop user works; a wrong password gets no ticket, and then no login."""
    cache = str(tmp_path / "ccache")
    assert kinit(secured, cache, "not-" + secured["kerberos_password"]).returncode != 0
    assert kinit(secured, cache, secured["kerberos_password"]).returncode == 0
    found = options(secured, kerberos_keytab=None)
    env = {**os.environ, "KRB5CCNAME": f"FILE:{cache}"}
    ok = doctor(found, folder, env)
    assert ok.returncode == 0 and "authenticated by Kerberos (SPNEGO) as jetconnect" in ok.stdout, ok.stdout
    gone = doctor(found, folder, {**os.environ, "KRB5CCNAME": f"FILE:{tmp_path / 'none'}"})
    assert gone.returncode == 1 and "authentication refused" in gone.stdout, gone.stdout


def doctor(found: dict[str, Any], folder: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    args = [
        f"--option={k}={str(v).lower() if isinstance(v, bool) else v}"
        for k, v in {"directory": folder, **found}.items()
    ]
    return subprocess.run(
        [sys.executable, "-m", "jetconnect.cli", "doctor", "--skip-spark", "--sink", "hdfs", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


# --- off the happy path ----------------------------------------------------------------------------

REFUSALS: dict[str, tuple[dict[str, Any], str, str]] = {
    "no-kerberos": (
        {
            "kerberos": None,
            "kerberos_principal": None,
            "kerberos_keytab": None,
            "kerberos_config": None,
            "user": "root",
        },
        "authentication refused",
        "authentication failure",
    ),
    "principal-not-in-the-keytab": (
        {"kerberos_principal": "nobody@JETCONNECT.TEST"},
        "authentication refused",
        "no kerberos credentials",
    ),
    "a-service-keytab-for-another-principal": (
        {"kerberos_keytab": "service_keytab"},
        "authentication refused",
        "no kerberos credentials",
    ),
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
    the sink's tasks through Spark and its check each fail at once (10 s direct, 30 s through a Spark job) naming the kind."""
    found = refused_options(secured, case)
    kind, words = REFUSALS[case][1:]
    df = spark.createDataFrame([("x",)], "value string")
    paths: dict[str, tuple[Callable[[], Any], float]] = {
        "source": (lambda: sources.hdfs(path=folder, **found).read(spark).collect(), PROMPT),  # planning fails
        "sink write": (lambda: sinks.hdfs(directory=f"{folder}/never", **found).write(df), SPARK_JOB),
        "sink check_connection": (lambda: sinks.hdfs(directory=folder, **found).check_connection(), PROMPT),
    }
    shown = {}
    for what, (fail, within) in paths.items():
        error, took = timed_failure(fail)
        text = str(error)
        assert took < within, f"{case}, {what}: failed after {took:.1f} s"
        assert kind in text and words in text.lower(), f"{case}, {what}: {text[-1500:]}"
        shown[what] = text
    assert not text_leaks(
        shown, [secured["store_password"], secured["kerberos_password"]], secured["private_keys"] + secured["keytabs"]
    )


def test_doctor_says_what_it_checked_of_the_secured_namenode(secured, folder):
    ok = doctor(options(secured), folder)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    for said in (
        "reachable, TLS handshake (certificate verified against",
        "authenticated by Kerberos (SPNEGO) as jetconnect",
    ):
        assert said in ok.stdout, ok.stdout
    failed = doctor(refused_options(secured, "untrusted-server-certificate"), folder)
    assert failed.returncode == 1 and "certificate not trusted" in failed.stdout, failed.stdout
