#!/usr/bin/env bash
# Run every test of the course: lint, attnlib's tests, the notebooks against their stored outputs (nbval),
# the strict book build, and the built site in a headless browser with no network.
# Sets up everything it needs first; a second run with nothing changed reinstalls nothing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash tools/setup.sh

# The site test opens the book in headless Chromium (Debian's package).
if ! command -v chromium >/dev/null 2>&1; then
    echo "test: installing chromium (Debian package) for the site test"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq chromium >/dev/null
fi

export PYTHONHASHSEED=0
export ATTNLIB_STRICT_CLAIMS=1  # a claim of the prose that fails stops the notebook (attnlib.notebook.claim)
echo "test: ruff"
.venv/bin/ruff check .
echo "test: strict book build"
.venv/bin/jupyter-book build . -W -n --keep-going --quiet
# Unit tests, tooling tests, the site test (ATTNLIB_REQUIRE_SITE: fail rather than skip without a site)
# and every notebook re-executed and compared with its stored outputs (nbval).
ATTNLIB_REQUIRE_SITE=1 .venv/bin/python -m pytest tests chapters exercises \
    --nbval --nbval-sanitize-with tools/nbval-sanitize.cfg --nbval-cell-timeout=600 -q
