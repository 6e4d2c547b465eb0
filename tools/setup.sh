#!/usr/bin/env bash
# Set up everything the course needs on a fresh machine, and nothing twice:
#   .venv/     the pinned Python environment (requirements-course.txt) with attnlib installed editable
#   _vendor/   MathJax 3 and the ipywidgets HTML manager from npm, served by the site instead of CDNs
# Each part is redone only when the file it was made from changes (a hash stamp beside it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

stamp_ok() {  # stamp_ok STAMPFILE FILES... : true when STAMPFILE holds the hash of FILES
    local stamp="$1"; shift
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(cat "$@" | sha256sum)" ]
}
write_stamp() { local stamp="$1"; shift; cat "$@" | sha256sum > "$stamp"; }

# --- Python ---------------------------------------------------------------------------------------
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    python3 -m venv .venv
fi
if ! stamp_ok .venv/.course-stamp requirements-course.txt pyproject.toml; then
    echo "setup: installing the pinned course environment into .venv"
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -r requirements-course.txt
    .venv/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
    write_stamp .venv/.course-stamp requirements-course.txt pyproject.toml
else
    echo "setup: .venv is up to date"
fi

# --- Front-end assets for offline math and widgets ----------------------------------------------
if ! stamp_ok _vendor/.stamp tools/assets/package.json; then
    echo "setup: installing MathJax and the widget manager from npm"
    rm -rf _vendor .assets
    mkdir -p .assets
    cp tools/assets/package.json .assets/
    (cd .assets && npm install --silent --no-audit --no-fund >/dev/null)
    mkdir -p _vendor/widgets
    cp -r .assets/node_modules/mathjax/es5 _vendor/mathjax
    cp .assets/node_modules/requirejs/require.js _vendor/widgets/require.js
    cp .assets/node_modules/@jupyter-widgets/html-manager/dist/embed-amd.js _vendor/widgets/embed-amd.js
    write_stamp _vendor/.stamp tools/assets/package.json
else
    echo "setup: _vendor assets are up to date"
fi
