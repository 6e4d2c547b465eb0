"""A Gradescope autograder for one exercise set: ``exercises/dist/NN_slug/gradescope.zip`` (written by
``tools/exercises.py bundle`` and ``build`` beside ``autograder.zip``).

Its root holds what Gradescope's specification asks for (https://gradescope-autograders.readthedocs.io/en/
latest/specs/), unpacked into ``/autograder/source``:
    setup.sh            run once as root when Gradescope builds the image: Debian's python3-venv and
                        bubblewrap, a venv with the pinned torch CPU build (PyTorch's CPU index) and the
                        course's attnlib and grader from the source below (PyPI for their dependencies,
                        pinned by constraints.txt)
    run_autograder      run once per submission: attnlib_grader.gradescope grades the notebook in
                        /autograder/submission and writes /autograder/results/results.json
    autograder.zip      the set's bundle (the same bytes as exercises/dist/NN_slug/autograder.zip)
    attnlib/            attnlib's source (pyproject.toml, README.md, the package): not on PyPI
    grader/             the grader's source (pyproject.toml, attnlib_grader)
    tools/numeric_env.py  the numeric settings every grading run uses
    constraints.txt     requirements-course.txt: the versions the course is tested with

``AUTOGRADER_ROOT`` replaces ``/autograder`` in both scripts. ``ATTNLIB_GRADESCOPE_PYTHON=/path/to/python``
makes ``setup.sh`` skip every install and use that Python's environment instead (the course's test does);
that is the only difference (tests/exercises/test_gradescope.py). The zip is deterministic: sorted entries,
fixed timestamps and modes.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
SKIP_INSTALL = "ATTNLIB_GRADESCOPE_PYTHON"
DATE = (2020, 1, 1, 0, 0, 0)

SETUP_SH = f"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (base image: Ubuntu 24.04, whose
# python3 is 3.12; the pinned numpy needs Python >= 3.11). It installs from Debian and PyPI, and torch's CPU
# build from PyTorch's own index (PyPI's Linux torch is a CUDA build of several GB).
set -euo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
SOURCE="$ROOT/source"
if [ -z "${{{SKIP_INSTALL}:-}}" ]; then
    # --- the installs: the only lines that {SKIP_INSTALL} skips ---
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv bubblewrap
    python3 -m venv "$ROOT/venv"
    TORCH="$(grep '^torch==' "$SOURCE/constraints.txt" | cut -d= -f3)"
    "$ROOT/venv/bin/pip" install --no-cache-dir -c "$SOURCE/constraints.txt" "torch==$TORCH+cpu" \
        --index-url {TORCH_INDEX} --extra-index-url https://pypi.org/simple
    "$ROOT/venv/bin/pip" install --no-cache-dir -c "$SOURCE/constraints.txt" \
        "$SOURCE/attnlib" "$SOURCE/grader"
    PYTHON="$ROOT/venv/bin/python"
    # --- end of the installs ---
else
    PYTHON="${{{SKIP_INSTALL}}}"
fi
echo "$PYTHON" > "$SOURCE/python"
# Learner code never reads the tests or the results: the sandbox does not show /autograder at all; these
# permissions are a second wall should it ever run outside it.
chmod -R go-rwx "$SOURCE"
mkdir -p "$ROOT/results"
chmod go-rwx "$ROOT/results"
# The environment must import what grading needs (a broken install fails here, at build time).
PYTHONPATH="$SOURCE/grader:$SOURCE/tools" "$PYTHON" -c \
    "import numeric_env, torch, otter, attnlib, attnlib_grader.gradescope"
echo "setup.sh: ready ($("$PYTHON" -c 'import sys, torch; print(sys.version.split()[0], torch.__version__)'))"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this once per submission, as root, in /autograder: it writes results/results.json.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PYTHON="$(cat "$ROOT/source/python")"
export PYTHONPATH="$ROOT/source/grader:$ROOT/source/tools"
exec "$PYTHON" -c \
    'import numeric_env; numeric_env.apply(); from attnlib_grader.gradescope import main; main()'
"""

# What of the repository the zip carries besides the set's bundle: zip path -> repository path.
SOURCES = {
    "attnlib/pyproject.toml": "pyproject.toml",
    "attnlib/README.md": "README.md",
    "grader/pyproject.toml": "grader/pyproject.toml",
    "tools/numeric_env.py": "tools/numeric_env.py",
    "constraints.txt": "requirements-course.txt",
}
PACKAGES = {"attnlib/attnlib": "attnlib", "grader/attnlib_grader": "grader/attnlib_grader"}
PACKAGE_SUFFIXES = (".py", ".json", ".txt", ".js", ".pt")  # attnlib's package data (pyproject.toml)


def _files() -> dict[str, Path]:
    files = {name: ROOT / path for name, path in SOURCES.items()}
    for into, folder in PACKAGES.items():
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in PACKAGE_SUFFIXES and "__pycache__" not in path.parts:
                files[f"{into}/{path.relative_to(ROOT / folder).as_posix()}"] = path
    return files


def gradescope_zip(bundle: bytes) -> bytes:
    """The Gradescope autograder of a set whose bundle (``exercises.autograder_zip``) is ``bundle``."""
    entries = {
        "setup.sh": SETUP_SH.encode(),
        "run_autograder": RUN_AUTOGRADER.encode(),
        "autograder.zip": bundle,
    }
    entries.update({name: path.read_bytes() for name, path in _files().items()})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            executable = name in ("setup.sh", "run_autograder")
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            zf.writestr(info, entries[name])
    return buffer.getvalue()
