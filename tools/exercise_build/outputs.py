"""What a build writes for a set: the executed learner notebook, the public tests shipped in attnlib, the
teacher's bundle (autograder.zip, the solutions, the Gradescope autograder); and submissions made from the
master for tests and benchmarks."""

from __future__ import annotations

import io
import json
import shutil
import tempfile
import zipfile
from pathlib import Path

import gradescope
import nbformat
import numeric_env
from nbclient import NotebookClient
from notebooks import ROOT, joined_streams

from exercise_build.learner import OTTER_VERSION, withheld
from exercise_build.master import DIST_DIR, LEARNER_DIR, PUBLIC_DIR, SOURCE_DIR, ExerciseSet, parse
from exercise_build.references import record_references


def execute(nb: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """Run the (untouched) learner notebook alone in an empty folder, as a learner would."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    with tempfile.TemporaryDirectory() as tmp:
        numeric_env.apply()  # the kernel inherits it: the stored outputs are made under it
        NotebookClient(
            nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": tmp}}, record_timing=False
        ).execute()
    for cell in nb.cells:
        cell.get("metadata", {}).pop("execution", None)
        if withheld(cell):  # it ran (an error would stop the build) but what it printed is not stored
            cell.outputs, cell.execution_count = [], None
    nb.metadata["language_info"] = {"name": "python"}  # no interpreter version: the file stays the same
    return joined_streams(nb)


def public_tests_json(ex: ExerciseSet) -> str:
    exempt = ex.config.get("contract_exempt")
    tests = {
        f"{q.name}.py": q.test_file(ex.name, with_hidden=False, exempt=exempt)
        for q in ex.questions
        if not q.manual
    }
    return (
        json.dumps({"set": ex.name, "otter_grader": OTTER_VERSION, "tests": tests}, indent=1, sort_keys=True)
        + "\n"
    )


def autograder_zip(ex: ExerciseSet) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:

        def add(name: str, text: str) -> None:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, text)

        add("set.json", json.dumps(ex.config, indent=1, sort_keys=True) + "\n")
        for q in ex.questions:
            if not q.manual:
                add(f"tests/{q.name}.py", q.test_file(ex.name, True, ex.config.get("contract_exempt")))
        # the reference solution: the grader's self-check grades it in the sandbox before every run
        add("solutions.ipynb", nbformat.writes(ex.solutions))
    return buffer.getvalue()


def _cells(text: str) -> list[tuple[str, str, dict]]:
    """What a learner notebook says, without what running it printed."""
    return [(c.cell_type, c.source, c.get("metadata", {})) for c in nbformat.reads(text, 4).cells]


def build(master: Path, check: bool = False) -> list[str]:
    """Write (or with check=True, compare) every output of one set; returns the paths that differ."""
    ex = parse(master)
    recorded = record_references(ex.name)
    for q in ex.questions:
        q.recorded = recorded.get(q.name, {})
    outputs = {PUBLIC_DIR / f"{ex.name}.json": public_tests_json(ex)}
    differ = [p for p, text in outputs.items() if not p.is_file() or p.read_text() != text]
    if not check:
        for path, text in outputs.items():
            path.write_text(text)
    learner_path = LEARNER_DIR / f"{ex.name}.ipynb"
    if check:  # the cells only: nbval re-executes the committed notebook and compares its outputs
        built = _cells(nbformat.writes(ex.learner))
        if not learner_path.is_file() or _cells(learner_path.read_text()) != built:
            differ.append(learner_path)
    else:
        learner_text = nbformat.writes(execute(ex.learner, ex.name)) + "\n"
        if not learner_path.is_file() or learner_path.read_text() != learner_text:
            differ.append(learner_path)
            learner_path.write_text(learner_text)
    if not check:
        write_dist(ex)
    return [str(p.relative_to(ROOT)) for p in differ]


def write_dist(ex: ExerciseSet) -> Path:
    """exercises/dist/<set>/: the bundle that tools/grade.py reads, the solutions notebook and the bundle as a
    Gradescope autograder."""
    dist = DIST_DIR / ex.name
    shutil.rmtree(dist, ignore_errors=True)
    dist.mkdir(parents=True)
    bundle = autograder_zip(ex)
    (dist / "autograder.zip").write_bytes(bundle)
    (dist / "gradescope.zip").write_bytes(gradescope.gradescope_zip(bundle))
    nbformat.write(ex.solutions, dist / "solutions.ipynb")
    return dist


def submission(
    set_name: str,
    answers: dict[str, str] | None = None,
    cells_before: list[str] = (),
    cells_after: list[str] = (),
    untouched: bool = False,
) -> nbformat.NotebookNode:
    """A submission for tests and benchmarks: the solutions (or the untouched learner notebook) with some
    answer
    cells replaced, and extra code cells before the first answer and at the end."""
    ex = parse(SOURCE_DIR / f"{set_name}.ipynb")
    nb = ex.learner if untouched else ex.solutions
    first = next(i for i, c in enumerate(nb.cells) if c.metadata.get("exercise"))
    for cell in nb.cells:
        question = cell.metadata.get("exercise", {}).get("answer")
        if cell.cell_type == "code" and question in (answers or {}):
            cell.source = answers[question]
    nb.cells[first:first] = [nbformat.v4.new_code_cell(c) for c in cells_before]
    nb.cells += [nbformat.v4.new_code_cell(c) for c in cells_after]
    return nb
