"""Checks of the docs that ``mkdocs build --strict`` cannot make; scripts/lint.sh runs them on the site
it built. Each finding names the file (or built page) and line; the exit status is 1 if there is any.

    python scripts/check_docs.py SITE_DIR              # the text and built-site checks
    python scripts/check_docs.py SITE_DIR --browser    # and the site opened in headless Chromium

What is checked:

* **user pages are not a lab notebook** (the Markdown every page is made from, README.md and
  examples/README.md): no machine paths (``/work/...``, ``/tmp/...``, ``/root/...``, ``/home/...``),
  dates or clock times of runs (``2026-11-27``, ``Dec 1``, ``16:16 UTC``), commit hashes or load
  averages. The benchmarks page, ``bench/results/`` and the changelog keep the history of runs, so
  they are not checked. In code blocks only machine paths count (a date or hex there is data);
* **the built pages read as pages**: no table markdown rendered as text (a ``|---|`` row that lost
  its table), no paragraph repeated word for word on a page (or contained whole in a longer one);
* **the code of README.md and docs/getting-started.md runs**: each ```` ```python ```` block is either
  run by a test, said in an HTML comment in the paragraph right above it (``<!-- runs:
  integration/examples/test_quickstart.py -->``, a test file that names the page), or marked as lines
  of an example that runs (that paragraph names it: ``From `examples/kafka_to_jdbc.py`:``), and then
  is consecutive lines of that file (integration/examples/test_examples.py runs every example);
* with ``--browser``, **the site in a real browser**: every page opened in Debian's Chromium
  (headless, over its DevTools protocol, the site served on 127.0.0.1 and nothing else reachable):
  no image that failed to load, no literal table markdown in the rendered text, no link to a page
  or anchor the site does not have, no request that leaves the site; screenshots of the home page
  and the Kafka connector page are written to ``site-screenshots/`` beside the site directory.
"""

from __future__ import annotations

import argparse
import functools
import html.parser
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jetconnect.testing import contains_lines, python_blocks

ROOT = Path(__file__).resolve().parents[1]

#: Pages (repository paths, globs) that keep the history of runs: dates, loads and commits belong there.
HISTORY = ("docs/benchmarks.md", "docs/changelog.md", "CHANGELOG.md", "bench/results/*")
#: The pages whose ```python blocks must run or be lines of an example.
CODE_PAGES = ("README.md", "docs/getting-started.md")


@dataclass(frozen=True, order=True)
class Finding:
    where: str  # a repository path, or a built page as its site path (``/concepts/guarantees/``)
    line: int | None
    check: str
    text: str

    def __str__(self) -> str:
        at = f"{self.where}:{self.line}" if self.line else self.where
        return f"{at}: {self.check}: {self.text}"


# -- the lab-notebook check, on Markdown sources -------------------------------------------------

#: A machine's own directories: a user has none of them (a URL's path, ``host/tmp/x``, is not one).
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|tmp|root|home|Users|var/tmp|var/folders)/[^\s`'\")\]|,;]*")
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)"
_MONTH_LONG = r"(?:uary|ruary|ch|il|e|y|ust|tember|ober|ember)?"
#: A day or a time something ran: an ISO date (or year-month), "Dec 1" / "1 Dec", a clock time in UTC.
RUN_DATE = re.compile(
    rf"\b(?:19|20)\d\d-(?:0[1-9]|1[0-2])(?:-[0-3]\d)?\b"
    rf"|\b{_MONTH}{_MONTH_LONG}\.? [0-3]?\d\b(?!\.\d|,\d{{3}})"
    rf"|\b[0-3]?\d {_MONTH}{_MONTH_LONG}\b"
    rf"|\b[0-2]?\d:[0-5]\d(?:[-–][0-2]?\d:[0-5]\d)? ?UTC\b"
)
#: A commit: 7 to 40 hex digits with a letter and a digit among them, or all digits after "commit".
COMMIT = re.compile(
    r"(?<![\w/#.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w/-])"
    r"|\b(?:commit|export of|clone of)\s+`?\d{7,40}\b",
    re.IGNORECASE,
)
#: A load average: "load average 23", "load 2-4", "load ~25", "load 2.8".
_NUMBER = r"[~≈]?\s*\d+(?:\.\d+)?(?:\s*[-–]\s*\d+(?:\.\d+)?)?"
LOAD = re.compile(
    rf"\bload averages?\b(?:\s+(?:of\s+)?{_NUMBER})?"
    rf"|\bload\s*[~≈]\s*{_NUMBER}|\bload\s+(?:of\s+)?\d+(?:\.\d+)?\s*[-–]\s*\d+(?:\.\d+)?"
    rf"|\bload\s+(?:of\s+)?\d+\.\d+|\bat load \d+",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^\s*(```|~~~)")


def is_history(path: str) -> bool:
    return any(Path(path).match(pattern) for pattern in HISTORY)


def notebook_findings(where: str, text: str) -> list[Finding]:
    """Machine paths, run dates, commit hashes and load averages in the Markdown ``text`` of
    ``where``. In fenced code only machine paths count; HTML comments are not shown, so not read."""
    findings: list[Finding] = []
    fence: str | None = None
    in_comment = False
    for number, line in enumerate(text.splitlines(), 1):
        opening = _FENCE.match(line)
        if opening and (fence is None or opening.group(1) == fence):
            fence = opening.group(1) if fence is None else None
            continue
        shown = line
        if fence is None:
            shown, in_comment = _outside_comments(line, in_comment)
        for match in MACHINE_PATH.finditer(shown):
            findings.append(Finding(where, number, "machine path", match.group(0)))
        if fence is not None:
            continue
        for pattern, check in ((RUN_DATE, "date of a run"), (COMMIT, "commit hash"), (LOAD, "load average")):
            for match in pattern.finditer(shown):
                findings.append(Finding(where, number, check, match.group(0)))
    return findings


def _outside_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """The part of ``line`` outside HTML comments, and whether a comment is still open after it."""
    out: list[str] = []
    while line:
        if in_comment:
            end = line.find("-->")
            if end < 0:
                return "".join(out), True
            line, in_comment = line[end + 3 :], False
        else:
            start = line.find("<!--")
            if start < 0:
                out.append(line)
                break
            out.append(line[:start])
            line, in_comment = line[start + 4 :], True
    return "".join(out), in_comment


def user_pages(root: Path = ROOT) -> list[Path]:
    """Every Markdown file a user reads: the site's pages and what they are made from."""
    pages = [root / "README.md", root / "examples" / "README.md"]
    pages += sorted(p for p in (root / "docs").rglob("*.md") if "hooks" not in p.relative_to(root / "docs").parts)
    pages += sorted([*root.glob("plugins/*/README.md"), *root.glob("contrib/*/README.md")])
    return [p for p in pages if p.is_file() and not is_history(str(p.relative_to(root)))]


# -- the built pages: orphan table rows, repeated paragraphs -----------------------------------

#: A line of table markdown: a delimiter row, or a row of cells between pipes.
TABLE_LINE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$|^\s*\|.*\|.*\|\s*$")
#: Shorter paragraphs may repeat ("See below.", a caption): a repeat is this many words or more.
REPEAT_WORDS = 12


@dataclass
class Paragraph:
    text: str  # as shown, inline code included
    prose: str  # without inline code: literal markdown there is an example, not a defect


class _Paragraphs(html.parser.HTMLParser):
    """The ``<p>`` elements of a page's content (its ``<article>``, or the whole body if none)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[Paragraph] = []
        self._has_article = False
        self._article = 0
        self._p: list[str] | None = None
        self._prose: list[str] = []
        self._code = 0

    def feed_page(self, page: str) -> list[Paragraph]:
        self._has_article = "<article" in page
        self.feed(page)
        self.close()
        return self.found

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "article":
            self._article += 1
        elif tag == "p" and (self._article or not self._has_article):
            self._end_p()
            self._p, self._prose = [], []
        elif tag in ("code", "pre", "kbd"):
            self._code += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "article":
            self._article -= 1
        elif tag == "p":
            self._end_p()
        elif tag in ("code", "pre", "kbd"):
            self._code = max(0, self._code - 1)

    def handle_data(self, data: str) -> None:
        if self._p is not None:
            self._p.append(data)
            if not self._code:
                self._prose.append(data)

    def _end_p(self) -> None:
        if self._p is not None:
            self.found.append(Paragraph("".join(self._p), "".join(self._prose)))
        self._p = None


def paragraphs(page_html: str) -> list[Paragraph]:
    return _Paragraphs().feed_page(page_html)


def table_lines(text: str) -> list[str]:
    """The lines of rendered ``text`` that are table markdown."""
    return [line.strip() for line in text.splitlines() if TABLE_LINE.match(line)]


def _words(text: str) -> list[str]:
    return re.findall(r"\w+(?:[.'’-]\w+)*", text.lower())


def page_findings(page: str, page_html: str, sources: list[Path] | None = None) -> list[Finding]:
    """Orphan table rows and repeated paragraphs of one built page (``page``: its site path),
    each named by the line of ``sources`` (the Markdown the page was made from) it comes from."""
    sources = sources or []
    findings: list[Finding] = []
    paras = paragraphs(page_html)
    shown_page = "/" + page
    for para in paras:
        for row in table_lines(para.prose):
            where, line = _locate_line(row, sources, shown_page)
            shown = _read(ROOT / where).splitlines()[line - 1].strip() if line else row
            findings.append(Finding(where, line, "table markdown shown as text", _short(shown)))
    seen: list[tuple[str, list[str]]] = []
    # an API reference documents each object: two of them may well say the same sentence
    for para in paras if not page.startswith("reference/") else []:
        words = _words(para.text)
        if len(words) < REPEAT_WORDS:
            continue
        joined = " ".join(words)
        for earlier, _ in seen:
            if joined == earlier:
                check = "paragraph repeated word for word"
            elif f" {joined} " in f" {earlier} " or f" {earlier} " in f" {joined} ":
                check = "paragraph repeated (contained whole in another)"
            else:
                continue
            where, line = _locate_paragraph(words, sources, shown_page, nth=_count(seen, words) + 1)
            findings.append(Finding(where, line, check, _short(" ".join(para.text.split()))))
            break
        seen.append((joined, words))
    return findings


def _count(seen: list[tuple[str, list[str]]], words: list[str]) -> int:
    """How many paragraphs in ``seen`` start as ``words`` do (which occurrence the next is)."""
    head = words[:REPEAT_WORDS]
    return sum(1 for _, w in seen if w[:REPEAT_WORDS] == head)


def _short(text: str, width: int = 100) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _locate_line(row: str, sources: list[Path], page: str) -> tuple[str, int | None]:
    """Where the table row ``row`` (as rendered, inline code gone) is in the sources."""
    want = _words(row)
    for source in sources:
        for number, line in enumerate(_read(source).splitlines(), 1):
            if TABLE_LINE.match(line) and _words(_strip_code(line)) == want and _not_in_a_table(source, number):
                return _name(source), number
    return page, None


def _not_in_a_table(source: Path, number: int) -> bool:
    """Whether line ``number`` of ``source`` is outside a real table: a table is a block (blank
    line or start of file above it) of a header row, a delimiter row, then rows."""
    lines = _read(source).splitlines()
    first = number - 1
    while first > 0 and TABLE_LINE.match(lines[first - 1]):
        first -= 1
    if first > 0 and lines[first - 1].strip():
        return True  # rows that go on from a paragraph: no table
    delimiter = re.compile(r"^\s*\|?\s*:?-{3,}")
    header, second = lines[first], lines[first + 1] if first + 1 < len(lines) else ""
    return not (TABLE_LINE.match(second) and delimiter.match(second) and not delimiter.match(header))


def _strip_code(line: str) -> str:
    return re.sub(r"`[^`]*`", "", line)


def _locate_paragraph(words: list[str], sources: list[Path], page: str, nth: int) -> tuple[str, int | None]:
    """The line where the ``nth`` paragraph starting with ``words`` begins in the sources."""
    head = words[: min(len(words), REPEAT_WORDS)]
    hits: list[tuple[str, int]] = []
    for source in sources:
        lines = _read(source).splitlines()
        tokens: list[tuple[str, int]] = []  # each word of the source, with its line
        for number, line in enumerate(lines, 1):
            line = re.sub(r"\]\([^)]*\)", "]", line)  # a link's target is not shown
            tokens += [(w, number) for w in _words(line)]
        flat = [w for w, _ in tokens]
        for i in range(len(flat) - len(head) + 1):
            if flat[i : i + len(head)] == head:
                hits.append((_name(source), tokens[i][1]))
    if len(hits) >= nth:
        return hits[nth - 1]
    return hits[-1] if hits else (page, None)


@functools.cache
def _read(path: Path) -> str:
    return path.read_text()


def _name(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def site_pages(site: Path) -> list[tuple[str, Path]]:
    """(site path, file) of every built page: ``concepts/guarantees/`` and its index.html."""
    pages = []
    for path in sorted(site.rglob("*.html")):
        rel = path.relative_to(site).as_posix()
        if rel == "404.html":
            continue
        pages.append((rel[: -len("index.html")] if rel.endswith("index.html") else rel, path))
    return pages


def page_sources(page: str, root: Path = ROOT) -> list[Path]:
    """The Markdown files built page ``page`` is made from (docs/hooks/jetconnect_docs.py's rules)."""
    stem = page.rstrip("/") or "index"
    found: list[Path] = []
    parts = stem.split("/")
    if len(parts) == 2 and parts[0] == "connectors":
        found += [p for p in (root / "plugins" / parts[1] / "README.md", root / "contrib" / parts[1] / "README.md")]
    found += [root / "docs" / f"{stem}.md", root / "docs" / stem / "index.md"]
    found = [p for p in found if p.is_file()]
    for doc in list(found):
        text = _read(doc)
        found += [root / m for m in re.findall(r"^<!-- include: (\S+) -->$", text, re.MULTILINE)]
        if "<!-- guarantee matrix -->" in text:
            found.append(root / "README.md")
    return [p for p in found if p.is_file()]


# -- the code of README.md and getting started ---------------------------------------------------

RUNS_MARK = re.compile(r"<!--\s*runs:\s*(\S+)\s*-->")
#: An example named in the paragraph above a block: "From `examples/kafka_to_jdbc.py`:", or
#: "`examples/quickstart.py`, whole (from its imports on):".
FROM_EXAMPLE = re.compile(r"(?<![\w/.-])(examples/[\w./-]+\.py)\b")


def code_findings(where: str, text: str, root: Path = ROOT) -> list[Finding]:
    """Each ```python block of page ``where``: run by a test, or lines of a named example."""
    findings = []
    page_name = Path(where).name
    for number, block, above in python_blocks(text):
        runs = RUNS_MARK.search(above)
        examples = FROM_EXAMPLE.findall(above)
        if runs:
            test = root / runs.group(1)
            if not test.is_file():
                findings.append(
                    Finding(where, number, "code block", f"the test that runs it, {runs.group(1)}, is missing")
                )
            elif page_name not in test.read_text():
                findings.append(
                    Finding(
                        where,
                        number,
                        "code block",
                        f"{runs.group(1)} does not read {page_name}: it runs no block of it",
                    )
                )
        elif examples:
            present = [e for e in examples if (root / e).is_file()]
            if not present:
                findings.append(Finding(where, number, "code block", f"{', '.join(examples)} does not exist"))
            elif not any(contains_lines((root / e).read_text(), block) for e in present):
                findings.append(
                    Finding(
                        where,
                        number,
                        "code block",
                        f"is not consecutive lines of {' or '.join(present)} (copy it again)",
                    )
                )
        else:
            findings.append(
                Finding(
                    where,
                    number,
                    "code block",
                    "neither runs in a test (<!-- runs: TEST_FILE --> above it) nor is marked as lines of an "
                    "example (From `examples/NAME.py`: in the paragraph above it)",
                )
            )
    return findings


# -- all but the browser ---------------------------------------------------------------------------


def check(site: Path | None, root: Path = ROOT) -> list[Finding]:
    findings: list[Finding] = []
    for markdown in user_pages(root):
        findings += notebook_findings(_name(markdown), _read(markdown))
    for name in CODE_PAGES:
        if (root / name).is_file():
            findings += code_findings(name, _read(root / name), root)
    if site is not None:
        for page, path in site_pages(site):
            findings += page_findings(page, path.read_text(), page_sources(page, root))
            if page.startswith("reference/"):  # made from docstrings: the built text is the one to read
                text = "\n".join(p.text for p in paragraphs(path.read_text()))
                findings += [
                    Finding("/" + page, None, f.check, f.text)
                    for f in notebook_findings(page, text)
                    if f.check != "commit hash"
                ]
    return sorted(set(findings))


# -- the site in a real browser ---------------------------------------------------------------------

#: The pages screenshotted for a person to look at: the home page and one connector page.
SCREENSHOTS = {"": "index.png", "connectors/kafka/": "connectors-kafka.png"}
_PAGE_FACTS = r"""
(async () => {
  const images = [...document.images];
  for (const img of images) img.loading = "eager";
  await Promise.all(images.map(img => img.complete ? null : new Promise(done => {
    img.addEventListener("load", done); img.addEventListener("error", done); setTimeout(done, 5000);
  })));
  // the text as laid out (a line per block), code left out: a copy, rendered off the screen
  const content = (document.querySelector("article") || document.body).cloneNode(true);
  content.querySelectorAll("pre, code, kbd, script, style").forEach(e => e.remove());
  content.style.cssText = "position: absolute; left: -100000px; top: 0; width: 1000px";
  document.body.appendChild(content);
  const text = content.innerText;
  content.remove();
  return {
    broken: images.filter(img => !img.complete || img.naturalWidth === 0).map(img => img.getAttribute("src")),
    text,
    links: [...document.querySelectorAll("a[href]")].map(a => a.href),
    ids: [...document.querySelectorAll("[id], a[name]")].map(e => e.id || e.getAttribute("name")),
  };
})()
"""


class DevTools:
    """A page of a headless Chromium, driven over the DevTools protocol (websocket-client)."""

    def __init__(self, url: str) -> None:
        import websocket  # websocket-client: the docs extra

        self._ws = websocket.create_connection(url, timeout=60, suppress_origin=True)
        self._id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        self._ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv())
            if message.get("id") == self._id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            self.events.append(message)

    def wait_for(self, event: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == event for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {event} within {timeout} s")
            self._ws.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                self.events.append(json.loads(self._ws.recv()))
            finally:
                self._ws.settimeout(60)

    def close(self) -> None:
        self._ws.close()


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    raise SystemExit("check_docs: no Chromium (bash scripts/setup.sh installs Debian's)")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def browser_findings(site: Path, screenshots: Path) -> list[Finding]:
    """Every page of ``site`` opened in headless Chromium: broken images, table markdown in the
    rendered text, dead internal links, requests that leave the site; screenshots to ``screenshots``."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origin = f"http://127.0.0.1:{server.server_address[1]}/"
    profile = Path(tempfile.mkdtemp(prefix="check-docs-chromium-"))
    browser = subprocess.Popen(
        [
            chromium(),
            "--headless",
            "--no-sandbox",  # root, in a container: Chromium's sandbox needs user namespaces
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--disable-dev-shm-usage",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",  # no name resolves: nothing leaves
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            "--window-size=1280,900",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        return _visit(site, origin, _devtools_page(profile, browser), screenshots)
    finally:
        browser.terminate()
        try:
            browser.wait(10)
        except subprocess.TimeoutExpired:
            browser.kill()
        server.shutdown()
        shutil.rmtree(profile, ignore_errors=True)


def _devtools_page(profile: Path, browser: subprocess.Popen[bytes]) -> DevTools:
    """The DevTools connection to a new page of the browser that writes its port into ``profile``."""
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + 60
    while not port_file.is_file() or len(port_file.read_text().splitlines()) < 2:
        if browser.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"check_docs: Chromium did not start (exit {browser.poll()})")
        time.sleep(0.1)
    port = port_file.read_text().split()[0]
    request = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
    with urllib.request.urlopen(request, timeout=30) as response:
        target = json.load(response)
    return DevTools(target["webSocketDebuggerUrl"])


def _visit(site: Path, origin: str, tab: DevTools, screenshots: Path) -> list[Finding]:
    findings: list[Finding] = []
    tab.call("Page.enable")
    tab.call("Network.enable")
    tab.call("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
    links: dict[str, list[str]] = {}
    ids: dict[str, set[str]] = {}
    for page, _ in site_pages(site):
        tab.events.clear()
        tab.call("Page.navigate", url=origin + page)
        try:
            tab.wait_for("Page.loadEventFired")
        except TimeoutError:
            findings.append(Finding("/" + page, None, "browser", "the page did not finish loading within 30 s"))
            continue
        facts = tab.call("Runtime.evaluate", expression=_PAGE_FACTS, awaitPromise=True, returnByValue=True)
        value = facts["result"].get("value") or {}
        for src in value.get("broken", []):
            findings.append(Finding("/" + page, None, "broken image", str(src)))
        for row in table_lines(value.get("text", "")):
            findings.append(Finding("/" + page, None, "table markdown in the rendered page", _short(row)))
        for event in tab.events:
            if event.get("method") == "Network.requestWillBeSent":
                url = event["params"]["request"]["url"]
                if not url.startswith((origin, "data:", "about:", "blob:")):
                    findings.append(Finding("/" + page, None, "request outside the site", url))
        links[page] = list(value.get("links", []))
        ids[page] = set(value.get("ids", []))
        if page in SCREENSHOTS:
            screenshots.mkdir(parents=True, exist_ok=True)
            _screenshot(tab, screenshots / SCREENSHOTS[page])
    for page, hrefs in links.items():
        for href in sorted(set(hrefs)):
            if not href.startswith(origin):
                continue
            problem = _dead(site, origin, href, ids)
            if problem:
                findings.append(Finding("/" + page, None, "dead link", f"{href[len(origin) - 1 :]}: {problem}"))
    tab.close()
    return sorted(set(findings), key=findings.index)


def _dead(site: Path, origin: str, href: str, ids: dict[str, set[str]]) -> str | None:
    """Why internal link ``href`` leads nowhere, or None."""
    parsed = urllib.parse.urlsplit(href)
    path = urllib.parse.unquote(parsed.path).lstrip("/")
    target = site / path
    if target.is_dir():
        if not (target / "index.html").is_file():
            return "no page there"
        page = path if path.endswith("/") or not path else path + "/"
    elif target.is_file():
        page = path[: -len("index.html")] if path.endswith("index.html") else path
    else:
        return "no such page or file in the site"
    anchor = urllib.parse.unquote(parsed.fragment)
    if anchor and page in ids and anchor not in ids[page]:
        return f"page /{page} has no anchor #{anchor}"
    return None


def _screenshot(tab: DevTools, path: Path, max_height: int = 12000) -> None:
    import base64

    size = tab.call("Page.getLayoutMetrics")["cssContentSize"]
    height = min(max_height, int(size["height"]) + 1)
    shot = tab.call(
        "Page.captureScreenshot",
        format="png",
        captureBeyondViewport=True,
        clip={"x": 0, "y": 0, "width": 1280, "height": height, "scale": 1},
    )
    path.write_bytes(base64.b64decode(shot["data"]))


# -- the command ------------------------------------------------------------------------------------


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("site", type=Path, nargs="?", help="the built site (mkdocs build --site-dir)")
    parser.add_argument("--browser", action="store_true", help="also open every page in headless Chromium")
    parser.add_argument(
        "--screenshots", type=Path, help="where the screenshots go (default: site-screenshots/ beside the site)"
    )
    args = parser.parse_args(list(argv) if argv is not None else None)
    site = args.site.resolve() if args.site else None
    if site is not None and not (site / "index.html").is_file():
        parser.error(f"{site} holds no built site (no index.html)")
    findings = check(site)
    if args.browser:
        if site is None:
            parser.error("--browser needs the built site")
        screenshots = args.screenshots or site.parent / "site-screenshots"
        findings += browser_findings(site, screenshots)
        print(f"check_docs: screenshots in {screenshots}")
    for finding in findings:
        print(finding)
    pages = len(site_pages(site)) if site else 0
    print(f"check_docs: {len(findings)} finding(s) in {len(user_pages())} Markdown files, {pages} built pages")
    return 1 if findings else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
