"""Stored results (attnlib.stored, tools/stored_results.py): what a chapter reads instead of recomputing is
package data, recomputed bit for bit from its recipe under the pinned environment."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from attnlib import stored

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
spec = importlib.util.spec_from_file_location("stored_results", ROOT / "tools" / "stored_results.py")
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)

RECIPE = """
import torch
DESCRIPTION = "a tiny recipe: three draws of the seeded generator"
SEEDS = [0, 1]
def run(seed):
    return {"seed": seed, "draws": torch.randn(3).tolist()}
"""


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    recipes, results = tmp_path / "recipes", tmp_path / "results"
    recipes.mkdir()
    results.mkdir()
    (recipes / "tiny.py").write_text(RECIPE)
    monkeypatch.setattr(tool, "RECIPES", recipes)
    monkeypatch.setattr(tool, "RESULTS", results)
    monkeypatch.setattr(tool, "ROOT", tmp_path)
    return results


@pytest.mark.slow  # runs the tiny recipe in child processes that import torch (5 s)
def test_make_writes_every_seed_with_how_it_was_made(scratch):
    tool.make("tiny", None)
    data = json.loads((scratch / "tiny.json").read_text())
    assert sorted(data["seeds"]) == ["0", "1"] and data["recipe"] == "tools/recipes/tiny.py"
    assert data["environment"]["threads"] == 1 and data["environment"]["torch"]
    assert data["seeds"]["0"]["draws"] != data["seeds"]["1"]["draws"]


@pytest.mark.slow  # runs the tiny recipe in child processes that import torch (5 s)
def test_check_recomputes_equal_results(scratch):
    tool.make("tiny", None)
    assert tool.check("tiny", [1])


@pytest.mark.slow  # runs the tiny recipe in child processes that import torch (5 s)
def test_check_fails_when_a_stored_number_differs(scratch):
    tool.make("tiny", None)
    data = json.loads((scratch / "tiny.json").read_text())
    data["seeds"]["1"]["draws"][0] += 1e-7
    (scratch / "tiny.json").write_text(json.dumps(data))
    assert not tool.check("tiny", [1])
    assert tool.check("tiny", [0])


def test_load_refuses_a_name_that_is_not_shipped():
    with pytest.raises(ValueError, match="no stored results named 'nothing_here'"):
        stored.load("nothing_here")
    with pytest.raises(ValueError, match="name must be lower-case"):
        stored.load("../secrets")


@pytest.mark.parametrize("name", stored.available())
def test_every_shipped_file_says_how_it_was_made(name):
    data = stored.load(name)
    assert data["description"] and data["environment"]["torch"]
    assert ("seeds" in data) != ("table" in data)
    if "seeds" in data:
        assert (ROOT / data["recipe"]).is_file()


@pytest.mark.slow
@pytest.mark.usefixtures("reproducing_machine")
@pytest.mark.parametrize("name", tool.recipe_names())
def test_one_seed_of_each_recipe_recomputes_exactly(name):
    assert tool.check(name, [tool.rotating_seed(name)])  # another seed on every commit


def test_available_is_empty_when_attnlib_ships_no_results_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(stored.resources, "files", lambda package: tmp_path)
    assert stored.available() == []
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "one.json").write_text("{}")
    assert stored.available() == ["one"]
