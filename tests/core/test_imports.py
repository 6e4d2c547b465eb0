"""`import attnlib` stays light: the plotting, widget and BLEU libraries are imported where they are used."""

import subprocess
import sys

import pytest

import attnlib

HEAVY = ("ipywidgets", "matplotlib", "sacrebleu", "myst_nb", "IPython")


def test_import_attnlib_imports_no_plotting_widget_or_bleu_library():
    code = f"import sys, attnlib; print([m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("module", ["plotting", "widgets", "metrics", "notebook", "seq2seq", "train"])
def test_every_submodule_is_still_an_attribute_of_the_package(module):
    assert hasattr(attnlib, module)


def test_no_module_of_attnlib_imports_the_package_itself():
    """Modules import the modules they use (``from attnlib.masking import attend``), never ``import attnlib``:
    the package's __init__ imports them, so an arrow back up to it would be a cycle."""
    from pathlib import Path

    package = Path(attnlib.__file__).parent
    offenders = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if path.parent != package or path.name != "__init__.py"
        if "grading" not in path.relative_to(package).parts  # the grader drives attnlib from outside
        if any(line.strip() == "import attnlib" for line in path.read_text(encoding="utf-8").splitlines())
    ]
    assert offenders == []


def test_the_first_attention_call_imports_no_symbolic_algebra():
    """``torch.broadcast_shapes`` imports sympy (0.4 s) on its first call; attnlib's checks broadcast without
    it, so a notebook's first attention call and every grading sandbox are spared that import."""
    code = (
        "import sys, torch, attnlib\n"
        "q, k = torch.randn(2, 3, 4), torch.randn(1, 5, 4)\n"
        "attnlib.attend(attnlib.scores.dot(q, k), torch.randn(1, 5, 6), torch.ones(2, 5, dtype=torch.bool))\n"
        "print('sympy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
