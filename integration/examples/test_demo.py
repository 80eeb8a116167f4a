"""The demo looks as right as it is (#33): its whole output has no ERROR line and no stack trace.

``python -m jetconnect.demo`` (what ``scripts/demo.sh`` runs after setup) on smaller sizes: its
streaming job ends each run with ``Trigger.AvailableNow`` instead of stopping a query mid-batch,
which used to print Spark's ``ERROR FileFormatWriter: Aborting job`` and a Java stack trace.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path


def test_the_demo_prints_one_line_per_step_and_no_error_or_traceback(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "jetconnect.demo", "--orders", "20000", "--backlog", "2", "--work", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # the whole output, as a user sees it
        text=True,
        timeout=600,
    )
    output = result.stdout
    assert result.returncode == 0, output[-5000:]
    noise = [line for line in output.splitlines() if re.search(r"\bERROR\b|Traceback|Exception", line)]
    assert not noise, "the demo printed errors or stack traces:\n" + output[-5000:]
    steps = [line for line in output.splitlines() if line.startswith("demo: ")]
    assert [line.split(":")[1].strip().split(" ")[0] for line in steps] == [
        "spark",
        "batch",
        "stream",
        "stream",
        "check",
    ]
    assert "every item exactly once, nothing lost across the restart" in steps[-1]
