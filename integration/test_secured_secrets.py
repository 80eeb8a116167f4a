"""After secured runs, the passwords and the private keys appear in no file the run wrote.

integration/pipelines/secured_everywhere.py is a Spark application that reads and writes,
batch and streaming, through the secured PostgreSQL (TLS, scram-sha-256), ActiveMQ (STOMP over
TLS, login) and HDFS (WebHDFS over HTTPS, Kerberos) of scripts/servers/*.sh secured, and fails against each
with a wrong password or an untrusted CA. Everything it writes goes under one folder: its driver
and executor logs (stdout and stderr, Python logging at DEBUG, Spark's at INFO, every failure's
chained traceback), Spark's event log, its local and temporary directories, the checkpoints and
the JMS source's write-ahead log. ``jetconnect doctor`` runs against each secured sink beside it.
Then every file there is searched for each password, right and wrong, in every spelling a
message may give it (:func:`jetconnect.testing.secret_leaks`), and for the servers' and clients'
private keys (their PEM lines and DER bytes) and Kerberos keytabs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, quote_plus

from jetconnect.testing import secret_leaks

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "integration" / "pipelines" / "secured_everywhere.py"


def test_no_file_a_secured_run_wrote_holds_a_password_or_a_private_key(secured_server, tmp_path):
    servers = {name: secured_server(name) for name in ("postgresql", "activemq", "hdfs")}
    pg, mq, fs = servers["postgresql"], servers["activemq"], servers["hdfs"]
    secrets = [pg["password"], "not-" + pg["password"], mq["password"], "not-" + mq["password"]]
    secrets += [mq["store_password"], fs["store_password"], fs["kerberos_password"]]
    keys = [key for server in servers.values() for key in server["private_keys"]] + fs["keytabs"]
    work = tmp_path / "run"
    work.mkdir()
    env = {**os.environ, "JETCONNECT_SECURED": json.dumps(servers), "TMPDIR": str(work / "tmp")}
    (work / "tmp").mkdir()
    log = work / "app.log"
    with log.open("wb") as out:
        result = subprocess.run(
            [sys.executable, str(APP), str(work)], stdout=out, stderr=subprocess.STDOUT, env=env, timeout=900, cwd=ROOT
        )
    text = log.read_text(errors="replace")
    assert result.returncode == 0 and "done" in text, text[-4000:]
    # what is searched holds what a leak would be next to: failures, plans, reprs, task errors
    for expected in (
        "jdbc ok",
        "jms ok",
        "hdfs ok",
        "password authentication failed",
        f"User name [{mq['user']}] or password is invalid",
        "certificate not trusted",
        "== Physical Plan ==",
        "repr JdbcSource(",
        "failed, as it should",
    ):
        assert expected in text, f"{expected!r} not in the application's log:\n{text[-3000:]}"
    event_log = b"".join(p.read_bytes() for p in (work / "events").rglob("events_*"))
    assert b"SparkListenerApplicationStart" in event_log and b"SparkListenerTaskEnd" in event_log, "no event log"
    assert list((work / "checkpoints").glob("*/offsets/0")), "no checkpoint"
    assert any(p.is_file() for p in (work / "wal").rglob("*")), "no write-ahead log"

    # jetconnect doctor against each secured sink, its output kept beside the run's files
    pg_url = (
        f"postgresql+psycopg://{pg['user']}:{quote_plus(pg['password'])}@{pg['host']}:{pg['port']}/{pg['database']}"
        f"?sslmode=verify-full&sslrootcert={quote(pg['ca'], safe='/')}"
    )
    doctors = {
        "jdbc": {"url": pg_url, "table": "unused"},
        "jms_queue": {k: mq[k] for k in ("host", "port", "user", "password")}
        | {"destination": "q", "tls_ca_file": mq["ca"]},
        "hdfs": {
            "url": fs["url"],
            "directory": "/",
            "tls_ca_file": fs["ca"],
            "kerberos": "true",
            "kerberos_principal": fs["principal"],
            "kerberos_keytab": fs["keytab"],
            "kerberos_config": fs["krb5_conf"],
        },
    }
    for sink, options in doctors.items():
        for label, given in (
            ("right", options),
            ("wrong", {**options, "password": "not-" + str(options.get("password"))}),
        ):
            if sink == "hdfs" and label == "wrong":
                given = {**options, "tls_ca_file": fs["untrusted_ca"]}
            if sink == "jdbc" and label == "wrong":
                given = {
                    **options,
                    "url": pg_url.replace(quote_plus(pg["password"]), quote_plus("not-" + pg["password"])),
                }
            args = [f"--option={k}={v}" for k, v in given.items()]
            done = subprocess.run(
                [sys.executable, "-m", "jetconnect.cli", "doctor", "--skip-spark", "--sink", sink, *args],
                capture_output=True,
                text=True,
                timeout=120,
                env=env,
            )
            (work / f"doctor-{sink}-{label}.txt").write_text(done.stdout + done.stderr)
            assert done.returncode == (0 if label == "right" else 1), done.stdout + done.stderr

    files = [p for p in work.rglob("*") if p.is_file()]
    assert len(files) > 50, f"only {len(files)} files written: not the run this test means to search"
    leaks = secret_leaks([work], secrets, keys)
    assert not leaks, "secrets in the run's files:\n" + "\n".join(leaks)
