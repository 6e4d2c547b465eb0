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
