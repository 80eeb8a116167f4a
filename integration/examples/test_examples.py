"""Every script in examples/ runs, end to end, against the project's own servers: one test each, so
an example (and the README and docs lines copied from it) cannot rot.

Each script creates what it needs, ends by itself, checks its own output and prints one summary
line ``<name>: ok: ...``; a test runs it as a user would (``.venv/bin/python examples/NAME.py``,
here ``sys.executable``) after starting its servers, and asserts exit 0 and that line.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jetconnect.testing import contains_lines, python_blocks, text_leaks

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DOCS = ROOT / "docs"

#: Every example and the servers (scripts/servers/NAME.sh) it needs.
SERVERS: dict[str, tuple[str, ...]] = {
    "builder_counter": (),
    "builtins": (),
    "custom_stream": (),
    "files_to_avro": (),
    "http_poll_status": (),
    "journal_to_map": (),
    "jms_to_parquet": ("activemq",),
    "kafka_to_jdbc": ("kafka", "postgresql"),
    "quickstart": (),
    "secured_servers": ("postgresql secured", "activemq secured", "hdfs secured"),
    "socket_lines": (),
}


#: examples/secured_servers.py's flags: ``--PREFIX-KEY`` for these keys of what ``NAME.sh secured env``
#: says a client needs of each secured server (its passwords go in the environment).
SECURED_FLAGS = {
    "pg": ("postgresql", ("host", "port", "database", "user", "cert_user", "ca", "client_cert", "client_key")),
    "mq": ("activemq", ("host", "port", "mtls_port", "user", "ca", "client_cert", "client_key")),
    "hdfs": ("hdfs", ("url", "ca", "principal", "keytab", "krb5_conf")),
}


def secured_servers_settings(secured_server: Callable[[str], dict[str, Any]]) -> tuple[list[str], dict[str, str]]:
    found = {prefix: secured_server(name) for prefix, (name, _) in SECURED_FLAGS.items()}
    flags = [f"--{p}-{k.replace('_', '-')}={found[p][k]}" for p, (_, keys) in SECURED_FLAGS.items() for k in keys]
    return flags, {"PGPASSWORD": found["pg"]["password"], "JMS_PASSWORD": found["mq"]["password"]}


#: How an example that needs more than its defaults gets its settings (flags, environment).
SETTINGS = {"secured_servers": secured_servers_settings}


def test_every_example_is_tested_and_listed_in_the_examples_readme() -> None:
    scripts = {p.stem for p in EXAMPLES.glob("*.py")}
    assert scripts == set(SERVERS)
    listed = (EXAMPLES / "README.md").read_text()
    assert not [name for name in scripts if f"examples/{name}.py" not in listed]


#: Examples another test runs: the quickstart, as pasted from the README (test_quickstart.py).
RUN_ELSEWHERE = {"quickstart"}


@pytest.mark.parametrize("name", sorted(set(SERVERS) - RUN_ELSEWHERE))
def test_example_runs_and_checks_its_own_output(name: str, server, secured_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for needed in SERVERS[name]:
        server(needed)
    flags, secrets = SETTINGS[name](secured_server) if name in SETTINGS else ([], {})
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), *flags],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={**os.environ, **secrets},
    )
    log = f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-5000:]}"
    assert not text_leaks({"stdout": result.stdout, "stderr": result.stderr}, secrets.values())
    assert result.returncode == 0, log
    assert re.search(rf"^{name}: ok: .+", result.stdout, re.MULTILINE), log


def blocks_of(text: str) -> list[list[str]]:
    """The ```python blocks of a Markdown text, as lines."""
    return [block for _, block, _ in python_blocks(text)]


def use_section_blocks(readme: str) -> list[list[str]]:
    """The ```python blocks of README.md's "Use" section (up to the next ``## `` heading), as lines."""
    return blocks_of(readme.split("\n## Use\n", 1)[1].split("\n## ", 1)[0])


def docs_blocks() -> dict[str, list[list[str]]]:
    """The ```python blocks of every page under docs/, by page (the docs site's own pages; the
    connector pages are the plugins' READMEs, read at build time)."""
    return {str(page.relative_to(ROOT)): blocks_of(page.read_text()) for page in sorted(DOCS.rglob("*.md"))}


def _stale(blocks: list[list[str]]) -> list[str]:
    sources = {p.name: p.read_text() for p in EXAMPLES.glob("*.py")}
    return ["\n".join(block) for block in blocks if not any(contains_lines(text, block) for text in sources.values())]


def test_every_python_block_of_the_readme_use_section_is_copied_from_an_example() -> None:
    blocks = use_section_blocks((ROOT / "README.md").read_text())
    assert blocks, "the Use section shows no code: this test would check nothing"
    stale = _stale(blocks)
    assert not stale, "README.md's Use section has code that no file under examples/ holds:\n\n" + "\n\n".join(stale)


def test_every_python_block_of_the_docs_pages_is_copied_from_an_example() -> None:
    pages = docs_blocks()
    assert sum(len(blocks) for blocks in pages.values()) >= 3, "the docs show no code: this test would check nothing"
    stale = [f"{page}:\n{block}" for page, blocks in pages.items() for block in _stale(blocks)]
    assert not stale, "docs pages have Python code that no file under examples/ holds:\n\n" + "\n\n".join(stale)


def test_the_readme_check_sees_a_changed_line() -> None:
    text = "a = 1\nb = 2\nc = 3\n"
    assert contains_lines(text, ["a = 1", "b = 2  "]) and contains_lines(text, ["c = 3"])
    assert not contains_lines(text, ["a = 1", "c = 3"]) and not contains_lines(text, ["b = 3"])
