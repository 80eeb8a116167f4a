"""bench/_maven.py: the venv of the native rows is built when it is missing (a fresh clone)."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path
from typing import Any

import pytest

_PATH = Path(__file__).resolve().parents[2] / "bench" / "_maven.py"
_spec = importlib.util.spec_from_file_location("bench_maven", _PATH)
maven = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(maven)


def test_a_missing_venv_is_built_with_its_pyspark_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    venv = tmp_path / ".venv-spark-oldest"
    commands: list[list[str]] = []

    def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        commands.append(command)
        if command[0] != "bash" and not Path(command[0]).exists():
            raise FileNotFoundError(2, "No such file or directory", command[0])  # as Popen does
        return subprocess.CompletedProcess(command, 0, stdout="", stderr="")

    monkeypatch.setattr(maven.subprocess, "run", run)
    python = maven.spark_venv_python("4.2.0", venv)
    assert python == venv / "bin" / "python"
    assert commands == [["bash", str(maven.ROOT / "scripts" / "setup.sh"), "--spark", "4.2.0", str(venv)]]


def test_setup_takes_an_absolute_venv_path_as_it_is() -> None:
    # scripts/setup.sh resolves the venv's python under the project only for a relative path: the
    # bench hands it an absolute one (OLDEST_VENV), which once became <root>/<root>/...
    script = (maven.ROOT / "scripts" / "setup.sh").read_text()
    line = next(line for line in script.splitlines() if line.lstrip().startswith('case "$VENV" in'))
    resolve = line.split("  #")[0]
    for venv, expected in (("/abs/venv", "/abs/venv/bin/python"), (".venv", "/root-of-project/.venv/bin/python")):
        out = subprocess.run(
            ["bash", "-c", f'ROOT=/root-of-project; VENV={venv}; {resolve}; echo "$VPY"'],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        assert out == expected
