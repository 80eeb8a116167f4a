#!/usr/bin/env bash
# Lint, format and type checks (settings in pyproject.toml): the README test command runs this first.
set -uo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/ruff ] || bash scripts/setup.sh
status=0
echo "lint: ruff check";          .venv/bin/ruff check . || status=1
echo "lint: ruff format --check"; .venv/bin/ruff format --check . || status=1
echo "lint: mypy";                .venv/bin/mypy || status=1
# the docs site, offline (mkdocs.yml: no web fonts, no analytics); a broken link or include fails it
[ -x .venv/bin/mkdocs ] || bash scripts/setup.sh
site=build/site  # kept, with build/site-screenshots/ beside it, for a person to look at
mkdir -p build
# not -q: it hides the warnings --strict counts, and the build then passes with them; its output
# is shown when it fails
echo "lint: mkdocs build --strict"
if NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --site-dir "$site" >build/mkdocs.log 2>&1; then
  # what --strict cannot see: run logs in user pages, table markdown shown as text, repeated
  # paragraphs, README and getting-started code that nothing runs, and the site in a real browser
  # (Debian's Chromium, headless): broken images, dead links, screenshots
  command -v chromium >/dev/null 2>&1 || bash scripts/setup.sh
  echo "lint: docs checks (scripts/check_docs.py --browser)"
  .venv/bin/python scripts/check_docs.py "$site" --browser || status=1
else
  grep -v '^INFO ' build/mkdocs.log
  status=1
fi
exit $status
