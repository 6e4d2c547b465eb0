"""The standard setup cell: the same first cell in every notebook, derived from _config.yml."""

import subprocess
import sys
import types

import nbformat
import pytest
import sync_setup_cell
from notebooks import ROOT, course_notebooks, repository, setup_cell_in_sync, setup_cell_source


def test_the_course_has_notebooks():
    assert any(p.parent.name == "chapters" for p in course_notebooks())


@pytest.mark.parametrize("path", course_notebooks(), ids=lambda p: p.name)
def test_every_notebook_starts_with_the_current_setup_cell(path):
    nb = nbformat.read(path, as_version=4)
    assert setup_cell_in_sync(nb), f"{path.name}: run python tools/sync_setup_cell.py"


def test_setup_cell_installs_from_the_repository_and_branch_in_config():
    url, branch = repository()
    assert url.startswith("https://github.com/")
    assert f"git+{url}@{branch}" in setup_cell_source()


def test_check_mode_fails_on_a_notebook_without_the_setup_cell(tmp_path, monkeypatch):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A lesson")])
    path = tmp_path / "chapters" / "99_stale.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    monkeypatch.setattr(sync_setup_cell, "course_notebooks", lambda: [path])
    monkeypatch.setattr(sync_setup_cell, "ROOT", tmp_path)
    assert sync_setup_cell.main(["--check"]) == 1
    assert sync_setup_cell.main([]) == 0
    assert sync_setup_cell.main(["--check"]) == 0
    synced = nbformat.read(path, as_version=4)
    assert synced.cells[0].source == setup_cell_source()
    assert synced.cells[1].source == "# A lesson"


def _run_setup_cell(monkeypatch, in_colab: bool) -> list:
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: calls.append(args))
    if in_colab:
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    exec(setup_cell_source(), {})
    return calls


def test_setup_cell_installs_nothing_outside_colab(monkeypatch, capsys):
    assert _run_setup_cell(monkeypatch, in_colab=False) == []
    import attnlib

    assert f"will run on: {attnlib.device()}" in capsys.readouterr().out


def test_setup_cell_pip_installs_attnlib_in_colab(monkeypatch):
    calls = _run_setup_cell(monkeypatch, in_colab=True)
    assert len(calls) == 1
    command = calls[0][0]
    assert command[1:4] == ["-m", "pip", "install"]
    assert command[-1].startswith("attnlib @ git+https://github.com/")


def test_second_setup_run_reinstalls_nothing():
    done = subprocess.run(["bash", "tools/setup.sh"], cwd=ROOT, capture_output=True, text=True, check=True)
    out = done.stdout
    assert ".venv is up to date" in out
    assert "_vendor assets are up to date" in out


# Evidence cells: their metadata follows from their tag and their title line
def _notebook_with_evidence(tmp_path, first_line: str):
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(setup_cell_source(), metadata={"tags": ["setup", "hide-cell"]}),
            nbformat.v4.new_code_cell(f"{first_line}\nclaim(True, 'x')", metadata={"tags": ["evidence"]}),
        ]
    )
    nb.cells[0]["id"] = "setup-cell"
    path = tmp_path / "chapters" / "99_evidence.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    return path


def test_an_evidence_cell_is_folded_everywhere_under_its_title(tmp_path):
    path = _notebook_with_evidence(tmp_path, "#@title How we know: four seeds")
    assert sync_setup_cell.sync(path)
    metadata = nbformat.read(path, as_version=4).cells[1].metadata
    assert metadata["tags"] == ["evidence", "hide-cell"]  # the website folds input and output
    assert metadata["mystnb"]["code_prompt_show"] == "How we know: four seeds"
    assert metadata["jupyter"]["source_hidden"] is True
    assert metadata["cellView"] == "form"  # Colab shows the title and the output
    assert not sync_setup_cell.sync(path)  # in sync now: nothing changes


def test_an_evidence_cell_without_its_title_line_is_refused(tmp_path):
    path = _notebook_with_evidence(tmp_path, "# seeds")
    with pytest.raises(ValueError, match="must start with '#@title How we know"):
        sync_setup_cell.sync(path)
