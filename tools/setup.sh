#!/usr/bin/env bash
# Set up everything the course needs on a fresh machine, and nothing twice:
#   .venv/     the pinned Python environment (requirements-course.txt) with attnlib installed editable, and
#              NanumGothic for the Korean diagrams (the font files of the pinned koreanize-matplotlib;
#              tools/diagramlib/canvas.py checks the file's hash and never imports the package)
#   _vendor/   MathJax 3 from npm, served by the site instead of a CDN
#   chromium   Debian's headless browser for the site test, and bubblewrap for the grading sandbox
#              (installed with apt where this user may; otherwise it says what is missing)
# `setup.sh --python` does the first part only (what a learner needs to run the lessons: no npm, no apt).
# Each part is redone only when the file it was made from changes (a hash stamp beside it). It prints a line
# per part; the installers' own output goes to .venv/setup.log and is shown only when something fails.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

stamp_ok() {  # stamp_ok STAMPFILE FILES... : true when STAMPFILE holds the hash of FILES
    local stamp="$1"; shift
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(cat "$@" | sha256sum)" ]
}
write_stamp() { local stamp="$1"; shift; cat "$@" | sha256sum > "$stamp"; }
log="$root/.venv/setup.log"
quietly() {  # run a command with its output in $log; show the end of it if the command fails
    if ! "$@" >>"$log" 2>&1; then
        echo "setup: FAILED: $*" >&2
        tail -n 40 "$log" >&2
        exit 1
    fi
}

# --- Python ---------------------------------------------------------------------------------------
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    python3 -m venv .venv
fi
if ! stamp_ok .venv/.course-stamp requirements-course.txt pyproject.toml; then
    echo "setup: installing the pinned course environment into .venv (about 2 minutes)"
    : >"$log"
    export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_WARN_SCRIPT_LOCATION=1 PYTHONWARNINGS=ignore
    quietly .venv/bin/python -m pip install --upgrade pip
    quietly .venv/bin/python -m pip install -r requirements-course.txt
    quietly .venv/bin/python -m pip install --no-deps --no-build-isolation -e .
    write_stamp .venv/.course-stamp requirements-course.txt pyproject.toml
    echo "setup: .venv ready (torch $(.venv/bin/python -c 'import torch; print(torch.__version__)'))"
else
    echo "setup: .venv is up to date"
fi

if [ "${1:-}" = "--python" ]; then
    exit 0
fi

# --- Front-end assets for offline math ------------------------------------------------------------
if ! stamp_ok _vendor/.stamp tools/assets/package.json; then
    echo "setup: installing MathJax from npm"
    rm -rf _vendor .assets
    mkdir -p .assets
    cp tools/assets/package.json .assets/
    (cd .assets && quietly npm install --silent --no-audit --no-fund)
    mkdir -p _vendor
    cp -r .assets/node_modules/mathjax/es5 _vendor/mathjax
    write_stamp _vendor/.stamp tools/assets/package.json
else
    echo "setup: _vendor assets are up to date"
fi

# --- System tools: the site test's browser and the grader's sandbox -------------------------------
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: installing ${missing[*]} (Debian packages, about a minute)"
        export DEBIAN_FRONTEND=noninteractive
        quietly apt-get update -qq
        quietly apt-get install -y -qq "${missing[@]}"
    else
        echo "setup: not installed: ${missing[*]} (Debian: apt-get install ${missing[*]}, as root);" \
            "the site test needs chromium and the grader bubblewrap"
    fi
else
    echo "setup: chromium and bubblewrap are installed"
fi
