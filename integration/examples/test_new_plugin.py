"""``jetconnect new-plugin NAME`` writes a package that installs and passes its own test, unchanged."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark


def test_a_new_plugin_installs_and_passes_its_own_test(tmp_path):
    made = subprocess.run(
        [sys.executable, "-m", "jetconnect.cli", "new-plugin", "tally", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    package = tmp_path / "jetconnect-tally"
    assert str(package) in made.stdout
    # Installed as a user would (its own entry point, its dist-info), into a directory of its own,
    # so the suite's environment does not gain a plugin.
    target = tmp_path / "site"
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",  # its build backend comes from the registry, as for a user (a fresh venv has no wheel)
            "--target",
            str(target),
            str(package),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(target), os.environ.get("PYTHONPATH")]))}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=package,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "4 passed" in run.stdout


def test_it_imports_only_the_public_core(tmp_path):
    from jetconnect._scaffold import new_plugin

    package = new_plugin("audit", tmp_path)
    imports = [
        line.split()[1]
        for path in Path(package).rglob("*.py")
        for line in path.read_text().splitlines()
        if line.startswith(("from jetconnect", "import jetconnect"))
    ]
    assert imports and all(not any(part.startswith("_") for part in name.split(".")) for name in imports), imports
