"""The quickstart of README.md and of docs/getting-started.md runs as pasted.

Each page's quickstart block (the first ```python block of README's "Use" section, and of the
getting-started page's "Quickstart" section) is ``examples/quickstart.py`` without its docstring,
character for character; README's is written to a file of its own and run, as a user who pastes it
would, in a fresh process (``sys.executable``) from an empty directory: it must exit 0 and print
what its batch and streaming jobs did. No server is needed. (One run stands for the three texts,
which are the same: test_examples.py does not run this example again.)
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from jetconnect.testing import python_blocks

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"README.md": "Use", "docs/getting-started.md": "Quickstart"}


def quickstart_block(page: str) -> str:
    """The first ```python block under the page's ``## `` heading of its quickstart."""
    text = (ROOT / page).read_text()
    section = text.split(f"\n## {PAGES[page]}\n", 1)[1].split("\n## ", 1)[0]
    _, block, _ = next(python_blocks(section))
    return "\n".join(block) + "\n"


def test_both_quickstarts_are_the_whole_example_script() -> None:
    script = (ROOT / "examples" / "quickstart.py").read_text()
    body = script.split('"""\n', 1)[1].lstrip("\n")  # without the docstring
    for page in PAGES:
        assert quickstart_block(page) == body, (
            f"{page}'s quickstart is not examples/quickstart.py (from its imports on)"
        )


def test_the_quickstart_runs_as_pasted(tmp_path: Path) -> None:
    pasted = tmp_path / "pasted.py"
    pasted.write_text(quickstart_block("README.md"))
    result = subprocess.run([sys.executable, str(pasted)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    log = f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-5000:]}"
    assert result.returncode == 0, log
    # the batch job's totals, printed and logged by the logger sink (on the workers' stderr)
    assert re.findall(r"^batch: (\w+): (\d+)$", result.stdout, re.MULTILINE) == [
        ("apples", "5"),
        ("bread", "1"),
        ("coffee", "5"),
    ], log
    assert "total Row(product='apples', quantity=5)" in result.stderr, log
    # the streaming job: two runs from one checkpoint, each with items, every item once
    runs = [int(n) for n in re.findall(r"^stream: run \d: (\d+) items$", result.stdout, re.MULTILINE)]
    assert len(runs) == 2 and all(runs), log
    done = re.search(r"^quickstart: ok: (\d+) items streamed, (\d+) distinct", result.stdout, re.MULTILINE)
    assert done and int(done.group(1)) == int(done.group(2)) == sum(runs), log
