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
site=$(mktemp -d)
# not -q: it hides the warnings --strict counts, and the build then passes with them; its output
# is shown when it fails
echo "lint: mkdocs build --strict"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --site-dir "$site" >"$site.log" 2>&1 || {
  grep -v '^INFO ' "$site.log"
  status=1
}
rm -rf "$site" "$site.log"
exit $status
