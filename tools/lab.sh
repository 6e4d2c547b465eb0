#!/usr/bin/env bash
# Open the lessons in JupyterLab on your own machine: one command, no npm, no book build.
#   bash tools/lab.sh            # set up .venv (the course's pinned environment), add JupyterLab, start it
#   bash tools/lab.sh --no-start # the same set-up, then print how to start it
# JupyterLab is installed with the course's versions as constraints, so it changes none of the packages the
# stored outputs were made with. The notebooks are the website's sources; Colab's editions (colab/) read the
# same in Jupyter, with the numbers of the text filled in.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash tools/setup.sh --python
if ! .venv/bin/python -c "import jupyterlab" 2>/dev/null; then
    echo "lab: installing JupyterLab into .venv (constrained by requirements-course.txt)"
    if ! .venv/bin/python -m pip install --quiet --disable-pip-version-check jupyterlab \
        -c requirements-course.txt >.venv/lab.log 2>&1; then
        tail -n 40 .venv/lab.log
        echo "lab: installing JupyterLab failed (the whole log: .venv/lab.log)"
        exit 1
    fi
fi
if [ "${1:-}" = "--no-start" ]; then
    echo "lab: ready; start it with: .venv/bin/python -m jupyter lab chapters/"
    exit 0
fi
exec .venv/bin/python -m jupyter lab chapters/
