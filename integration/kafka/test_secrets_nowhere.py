"""After a secured run, no password and no private key appears in any file it wrote.

``secured_run.py`` runs a secured pipeline in a Spark of its own (event log on, Spark's INFO log in
a file, every directory under one folder), its stdout and stderr captured to files there: in local
mode the driver's and executors' output and the Python workers' stderr. Then every file under the folder is
scanned for every spelling of every secret (:func:`jetconnect._redaction.secret_forms`: as is,
escaped as JSON, repr and JAAS escape it, percent-encoded) and for the private key's lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jetconnect._redaction import secret_forms

pytestmark = pytest.mark.spark
RUN = Path(__file__).with_name("secured_run.py")


def test_no_secret_in_any_file_a_secured_run_wrote(kafka, secured, tmp_path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    path = Path(json.loads(json.dumps(str(secured.LOG.parent / "secured" / "secured.json"))))
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with open(out / "stdout.txt", "w") as stdout, open(out / "stderr.txt", "w") as stderr:
        done = subprocess.run(
            [sys.executable, str(RUN), str(path), str(out)], stdout=stdout, stderr=stderr, env=env, timeout=600
        )
    printed = (out / "stdout.txt").read_text()
    assert done.returncode == 0, printed + (out / "stderr.txt").read_text()[-5000:]

    # the run did what it says: both reads, the stream twice, the refusal, the doctor's check
    assert "batch read: 100" in printed
    progress = [
        json.loads(line.split(": ", 1)[1]) for line in printed.splitlines() if line.startswith("stream progress:")
    ]
    assert [sum(p) for p in progress] == [100, 100]
    assert "refused: " in printed and "authentication refused" in printed
    assert "[ok] sink kafka: check_connection(): reachable, TLS handshake, authenticated as 'alice'" in printed
    topics = json.loads(next(line for line in printed.splitlines() if line.startswith("topics:")).split(": ", 1)[1])
    kafka.check_stable(topics[1])
    assert len(kafka.read_all(topics[1])) == 200 and len(kafka.read_all(topics[2])) == 100

    # EXPLAIN printed the options, the secret ones redacted (Spark's default regex did not match pem)
    explain = (out / "explain.txt").read_text()
    assert "kafka.ssl.key.pem" in explain.lower() and "redacted" in explain.lower(), explain
    assert list((out / "events").iterdir()), "no event log written"

    forms = {form.encode() for secret in secured.secrets() for form in secret_forms(secret)}
    found = []
    files = [p for p in out.rglob("*") if p.is_file()]
    written = {p.relative_to(out).parts[0] for p in files}
    assert {"events", "checkpoint", "explain.txt", "spark.log", "stdout.txt", "stderr.txt"} <= written, written
    assert (out / "spark.log").stat().st_size > 20_000  # Spark's INFO log: its driver and executors
    for file in files:
        data = file.read_bytes()
        found += [f"{file.relative_to(out)}: {form[:12]!r}..." for form in forms if form in data]
    assert found == []
