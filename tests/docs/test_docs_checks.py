"""scripts/check_docs.py, the docs checks of the lint step: each check fails on the pages as they were
before issue #47 (commit 7e2f741: the Guarantees page's stray table and repeated paragraphs, the soak
page's run log, the Kafka page's benchmark diary, the README's unmarked code) and passes on a clean page.
"""

from __future__ import annotations

import importlib.util
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
OLD = "7e2f741"  # the commit before issue #47's cleaning


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_docs", ROOT / "scripts" / "check_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_docs"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


check_docs = _load()


def old(path: str) -> str:
    """``path`` as it was at commit 7e2f741."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    shown = subprocess.run(["git", "show", f"{OLD}:{path}"], cwd=ROOT, capture_output=True, text=True)
    if shown.returncode != 0:
        pytest.skip(f"commit {OLD} is not in this clone: {shown.stderr.strip()}")
    return shown.stdout


def render(markdown_text: str) -> str:
    """The page's HTML, as mkdocs.yml's Markdown extensions make it (without the theme)."""
    markdown = pytest.importorskip("markdown")
    return str(markdown.markdown(markdown_text, extensions=["tables", "attr_list", "admonition", "fenced_code"]))


def checks(findings: list) -> set[str]:  # type: ignore[type-arg]
    return {f.check for f in findings}


CLEAN = """\
# kafka

Reads and writes Kafka topics; a restarted query reads from its checkpoint's offsets, so it loses
nothing and reads nothing twice. A payload of 5 MiB, load 2 files, PySpark 4.3.0, Hadoop 3.5.0 and
10,000 rows are none of the things this page must not say.

See below.

| option | type | default | meaning |
|---|---|---|---|
| `topics` | list | required | the topics read |
| `batch_size` | int | 10,000 | records per batch |

See below.

```python
# data, not a run: a date and a hex string in code are fine
spark.createDataFrame([("2024-01-31", "deadbeef12")], "day string, id string")
```

The docs site is at [the project](https://example.org/tmp/docs/) and `http://127.0.0.1:8000`.
<!-- a comment may say 2026-11-27: nobody sees it -->
"""


# -- the lab notebook -----------------------------------------------------------------------------


def test_the_old_soak_page_is_a_run_log_with_dates_paths_hashes_and_loads() -> None:
    findings = check_docs.notebook_findings("docs/soak.md", old("docs/soak.md"))
    assert checks(findings) == {"machine path", "date of a run", "commit hash", "load average"}
    found = {(f.line, f.check, f.text) for f in findings}
    assert (45, "machine path", "/tmp/soak-tree") in found
    assert (47, "machine path", "/work/main/.venv/bin/python") in found
    assert (54, "date of a run", "2026-11-27") in found
    assert (64, "date of a run", "2026-11-27") in found
    assert (66, "commit hash", "export of `6739731") in found  # digits only: known by "export of"
    assert (66, "load average", "load 2-4") in found
    assert "e22a42e" in {f.text for f in findings if f.check == "commit hash"}
    assert str(next(f for f in findings if f.line == 45)) == "docs/soak.md:45: machine path: /tmp/soak-tree"


def test_the_old_kafka_page_carries_a_benchmark_diary() -> None:
    findings = check_docs.notebook_findings("plugins/kafka/README.md", old("plugins/kafka/README.md"))
    assert checks(findings) == {"machine path", "date of a run", "commit hash", "load average"}
    found = {(f.line, f.check, f.text) for f in findings}
    assert (216, "date of a run", "2026-12-01") in found and (216, "load average", "load 10-15") in found
    assert (509, "machine path", "/tmp/jetconnect-kafka/kafka.out") in found
    # the benchmark diary, from its heading to the end of the page: flagged all along
    diary = old("plugins/kafka/README.md").splitlines().index("## Benchmark") + 1
    assert len({f.line for f in findings if f.line > diary}) >= 15


def test_a_clean_page_passes_every_text_check() -> None:
    assert check_docs.notebook_findings("plugins/kafka/README.md", CLEAN) == []
    assert check_docs.page_findings("connectors/kafka/", render(CLEAN)) == []


@pytest.mark.parametrize(
    ("text", "check"),
    [
        ("run from `/work/main/.venv/bin/python`", "machine path"),
        ("data under /tmp/jetconnect-kafka/data", "machine path"),
        ("open file:///home/me/site", "machine path"),
        ("copied to /root/.ivy2", "machine path"),
        ("the run of 2026-11-27", "date of a run"),
        ("measured in 2026-12", "date of a run"),
        ("on Dec 1 the broker", "date of a run"),
        ("on 27 November", "date of a run"),
        ("from 16:16-16:25 UTC", "date of a run"),
        ("as of commit ca0bf45", "commit hash"),
        ("fresh clone of e22a42e, then", "commit hash"),
        ("at load average 23", "load average"),
        ("(load 2.8-2.6)", "load average"),
        ("load ~25", "load average"),
        ("at load 13", "load average"),
    ],
)
def test_each_pattern_flags_what_it_is_for(text: str, check: str) -> None:
    assert checks(check_docs.notebook_findings("page.md", text)) == {check}


@pytest.mark.parametrize(
    "text",
    [
        "see https://example.org/tmp/x and ../tmp/notes.md",
        "PySpark 4.3.0, Kafka 4.4, 10,000 rows, 1,000,000 records, port 5701",
        "a payload of 2 MiB; load 2 files; offloaded",
        "the decimal 10 and December",
        "0x7fffffff, #abcdef1, a UUID 123e4567-e89b-12d3-a456-426614174000",
        "facade and deadbeef have no digit",
        "<!-- 2026-11-27 in a comment -->",
        "```\n2026-11-27 ca0bf45 load 2-4\n```",
    ],
)
def test_what_is_not_a_run_log_passes(text: str) -> None:
    assert check_docs.notebook_findings("page.md", text) == []


def test_the_benchmarks_page_the_results_and_the_changelog_keep_history() -> None:
    pages = {str(p.relative_to(ROOT)) for p in check_docs.user_pages()}
    assert "docs/getting-started.md" in pages and "README.md" in pages and "plugins/kafka/README.md" in pages
    assert not pages & {"docs/benchmarks.md", "docs/changelog.md", "CHANGELOG.md"}
    assert check_docs.is_history("bench/results/kafka.md")


# -- the built pages ------------------------------------------------------------------------------


def test_the_old_guarantees_page_shows_a_stray_table_and_repeats_two_paragraphs(tmp_path: Path) -> None:
    source = tmp_path / "guarantees.md"
    source.write_text(old("docs/concepts/guarantees.md"))
    findings = check_docs.page_findings("concepts/guarantees/", render(source.read_text()), [source])
    rows = [f for f in findings if f.check == "table markdown shown as text"]
    assert [(f.where, f.line) for f in rows] == [(str(source), 25), (str(source), 26)]
    assert rows[0].text == "|---|---|---|"
    repeats = sorted((f.line, f.check) for f in findings if f.check.startswith("paragraph repeated"))
    assert repeats == [
        (29, "paragraph repeated word for word"),  # lines 11-18 again
        (38, "paragraph repeated (contained whole in another)"),  # lines 20-23 without the soak
    ]


def test_table_markdown_inside_code_and_real_tables_pass() -> None:
    page = "Write a table as `| a | b |` then `|---|---|`.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    assert check_docs.page_findings("p/", render(page)) == []
    assert checks(check_docs.page_findings("p/", render("Text\n|---|---|\n| 1 | 2 |\n"))) == {
        "table markdown shown as text"
    }


def test_a_page_names_the_files_it_is_made_from() -> None:
    assert check_docs.page_sources("connectors/kafka/") == [ROOT / "plugins" / "kafka" / "README.md"]
    assert check_docs.page_sources("changelog/") == [ROOT / "docs" / "changelog.md", ROOT / "CHANGELOG.md"]
    assert ROOT / "README.md" in check_docs.page_sources("concepts/guarantees/")  # the matrix's copy
    assert check_docs.page_sources("") == [ROOT / "docs" / "index.md"]


# -- the code of README.md and getting started ----------------------------------------------------


def test_the_old_readme_shows_code_that_nothing_runs() -> None:
    findings = check_docs.code_findings("README.md", old("README.md"))
    assert [(f.line, f.check) for f in findings] == [(164, "code block")]
    assert "neither runs in a test" in findings[0].text


def test_a_block_is_run_by_a_test_or_is_lines_of_an_example(tmp_path: Path) -> None:
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "demo.py").write_text("import x\n\nrows = x.read()\nprint(rows)\n")
    (tmp_path / "test_quickstart.py").write_text('BLOCK = first_python_block("README.md")\n')
    (tmp_path / "test_other.py").write_text("pass\n")
    page = """\
From `examples/demo.py`:

```python
rows = x.read()
print(rows)
```

and from examples/demo.py, one line changed:

```python
rows = x.read(1)
```

The quickstart (run as pasted):
<!-- runs: test_quickstart.py -->

```python
print("hello")
```

<!-- runs: test_other.py -->
```python
print("not read by that test")
```

<!-- runs: test_missing.py -->
```python
print(1)
```

From `examples/gone.py`:

```python
print(2)
```

```python
print("no word about it")
```
"""
    findings = check_docs.code_findings("README.md", page, tmp_path)
    assert [(f.line, f.text.split(":")[0].split(" (")[0]) for f in findings] == [
        (10, "is not consecutive lines of examples/demo.py"),
        (22, "test_other.py does not read README.md"),
        (27, "the test that runs it, test_missing.py, is missing"),
        (33, "examples/gone.py does not exist"),
        (37, "neither runs in a test"),
    ]


# -- the browser ------------------------------------------------------------------------------------


def test_dead_links_are_named(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "a").mkdir(parents=True)
    (site / "a" / "index.html").write_text("<p id='x'>a</p>")
    (site / "index.html").write_text("<p>home</p>")
    ids = {"a/": {"x"}}
    origin = "http://127.0.0.1:1/"
    assert check_docs._dead(site, origin, origin + "a/#x", ids) is None
    assert check_docs._dead(site, origin, origin + "a#x", ids) is None
    assert check_docs._dead(site, origin, origin, ids) is None
    assert check_docs._dead(site, origin, origin + "a/#y", ids) == "page /a/ has no anchor #y"
    assert check_docs._dead(site, origin, origin + "b/", ids) == "no such page or file in the site"


def _png() -> bytes:
    """A 1x1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0\0\0\0")) + chunk(b"IEND", b"")
    )


def test_the_browser_sees_broken_images_dead_links_table_text_and_outside_requests(tmp_path: Path) -> None:
    if not any(shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")):
        pytest.skip("no Chromium (bash scripts/setup.sh installs Debian's)")
    pytest.importorskip("websocket")
    site = tmp_path / "site"
    (site / "connectors" / "kafka").mkdir(parents=True)
    (site / "ok.png").write_bytes(_png())
    (site / "index.html").write_text(
        "<html><body><article><h1 id='top'>home</h1><img src='ok.png'><img src='missing.png'>"
        "<img src='https://example.org/x.png'><p>|---|---|</p><p><code>| a | b |</code></p>"
        "<a href='connectors/kafka/#top'>ok</a><a href='connectors/kafka/#nope'>no anchor</a>"
        "<a href='nowhere/'>no page</a><a href='https://example.org/'>outside, not followed</a>"
        "</article></body></html>"
    )
    (site / "connectors" / "kafka" / "index.html").write_text("<html><body><h1 id='top'>kafka</h1></body></html>")
    screenshots = tmp_path / "shots"
    findings = [str(f) for f in check_docs.browser_findings(site, screenshots)]
    assert sorted(findings) == sorted(
        [
            "/: broken image: missing.png",
            "/: broken image: https://example.org/x.png",
            "/: request outside the site: https://example.org/x.png",
            "/: table markdown in the rendered page: |---|---|",
            "/: dead link: /connectors/kafka/#nope: page /connectors/kafka/ has no anchor #nope",
            "/: dead link: /nowhere/: no such page or file in the site",
        ]
    )
    assert {p.name for p in screenshots.iterdir()} == {"index.png", "connectors-kafka.png"}
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in screenshots.iterdir())
