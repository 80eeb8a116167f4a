"""jetconnect.testing.secret_leaks finds a secret in any spelling a message gives it, and any piece
of a private key, in every file under a folder; and names neither in what it reports."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest

from jetconnect.testing import secret_leaks, text_leaks

SECRET = "tls-Pg'q\"7@x%41"


@pytest.fixture
def key(tmp_path: Path) -> Path:
    path = tmp_path / "keys" / "client.key"
    path.parent.mkdir()
    made = subprocess.run(
        ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(path)],
        capture_output=True,
    )
    if made.returncode != 0:
        pytest.skip("no openssl")
    return path


@pytest.mark.parametrize(
    "spelled",
    [SECRET, quote(SECRET, safe=""), json.dumps(SECRET)[1:-1], repr(SECRET)[1:-1], SECRET.replace("'", "''")],
    ids=["raw", "percent-encoded", "json", "repr", "sql"],
)
def test_a_secret_is_found_in_any_spelling_deep_in_a_folder(tmp_path: Path, spelled: str) -> None:
    run = tmp_path / "run"
    (run / "checkpoint" / "offsets").mkdir(parents=True)
    (run / "checkpoint" / "offsets" / "0").write_text(f'{{"url": "postgresql://u:{spelled}@h/db"}}')
    (run / "clean.log").write_text("nothing to see")
    leaks = secret_leaks([run], [SECRET])
    assert len(leaks) == 1 and leaks[0].startswith(str(run / "checkpoint" / "offsets" / "0"))
    assert SECRET not in leaks[0] and spelled not in leaks[0]


def test_a_private_key_is_found_by_its_pem_lines_and_its_der_bytes(tmp_path: Path, key: Path) -> None:
    lines = [line for line in key.read_text().splitlines() if not line.startswith("-----")]
    run = tmp_path / "run"
    run.mkdir()
    (run / "pem-line").write_text(f"log line: {lines[0]}")
    (run / "der").write_bytes(b"\x00" + base64.b64decode("".join(lines)) + b"\x00")
    (run / "path-only").write_text(f"sslkey={key}")  # naming the key file is no leak
    found = {Path(leak.split(":")[0]).name for leak in secret_leaks([run], [], [key])}
    assert found == {"pem-line", "der"}
    assert text_leaks({"error": f"failed: {lines[1]}"}, [], [key]) == ["error: private key client.key"]
