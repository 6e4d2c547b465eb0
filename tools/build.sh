#!/usr/bin/env bash
# Build the website into _build/html, strictly: any warning fails the build.
# Sets up .venv and the offline assets first (tools/setup.sh; nothing is reinstalled when nothing changed).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash tools/setup.sh
# Notebooks are not executed here: the book is built from their stored outputs.
.venv/bin/jupyter-book build . -W -n --keep-going
echo "build: site written to $root/_build/html/index.html"
