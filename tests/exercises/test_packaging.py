"""The two packages' declared dependencies against what their code imports (fast, no environment built):
the teacher's grader (grader/pyproject.toml) declares everything the grading and bundling commands and the
bundles' test files import, and the learner package (attnlib) pulls neither the grader nor otter-grader.

A fresh environment made with the README's teacher command was graded with once by hand (exercises/teachers.md
says how); this test keeps the declarations from drifting since."""

import ast
import re
import sys
from importlib.metadata import packages_distributions, requires

import pytest
import tomllib
from exercise_helpers import ROOT, exercises

GRADER = ROOT / "grader"
# what the teacher runs
TEACHER_TOOLS = [
    "grade.py",
    "exercises.py",
    *(f"exercise_build/{p.name}" for p in sorted((ROOT / "tools" / "exercise_build").glob("*.py"))),
    "gradescope.py",
    "notebooks.py",
    "numeric_env.py",
]
OWN = {
    "attnlib",
    "attnlib_grader",
    "numeric_env",
    "notebooks",
    "exercises",
    "exercise_build",
    "gradescope",
    "__future__",
}
# Imported by attnlib only inside `try: ... except ImportError` (the book's build tools, absent in Colab).
OPTIONAL_IN_ATTNLIB = {"myst_nb", "google"}  # google: google.colab, only where Colab provides it


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].strip().lower().replace("_", "-")


def imported_modules(source: str) -> set[str]:
    """Top-level names of every absolute import in the source, wherever it is (functions included)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def third_party(modules: set[str]) -> set[str]:
    return {m for m in modules if m not in sys.stdlib_module_names and m not in OWN}


def distributions(modules: set[str]) -> dict[str, set[str]]:
    """import name -> the distributions that provide it in this environment."""
    where = packages_distributions()
    return {m: {_name(d) for d in where.get(m, [])} for m in modules}


def declared(pyproject) -> tuple[set[str], dict[str, set[str]]]:
    project = tomllib.loads(pyproject.read_text())["project"]
    extras = {k: {_name(r) for r in v} for k, v in project.get("optional-dependencies", {}).items()}
    return {_name(r) for r in project["dependencies"]}, extras


def closure(names: set[str]) -> set[str]:
    """The names and, transitively, what they require (as installed here)."""
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            reqs = requires(name) or []
        except Exception:  # noqa: BLE001 - not installed here (e.g. the grader itself, installed by path)
            continue
        todo += [_name(r) for r in reqs if "extra ==" not in r]
    return seen


def grader_imports() -> set[str]:
    sources = [p.read_text() for p in (GRADER / "attnlib_grader").rglob("*.py")]
    sources += [(ROOT / "tools" / name).read_text() for name in TEACHER_TOOLS]
    for master in exercises.masters([]):  # the bundles' test files run in the grader's process
        ex = exercises.parse(master)
        sources += [exercises.TEST_PREAMBLE]
        sources += [cell for q in ex.questions for cell in q.header + q.public + q.hidden]
    return third_party(set().union(*(imported_modules(s) for s in sources)))


def test_the_import_scan_sees_imports_inside_functions():
    found = imported_modules("import os\ndef f():\n    import nbformat\n    from otter.test_files import x\n")
    assert third_party(found) == {"nbformat", "otter"}


def test_the_grader_declares_what_it_imports_directly():
    """Every third-party module the grader, its commands or a bundle's tests import comes from a distribution
    that grader/pyproject.toml names, or that attnlib (one of its dependencies) names."""
    direct, _ = declared(GRADER / "pyproject.toml")
    attnlib_deps, _ = declared(ROOT / "pyproject.toml")
    assert "attnlib" in direct and "otter-grader" in direct
    allowed = direct | attnlib_deps
    missing = {m: d for m, d in distributions(grader_imports()).items() if not d & allowed}
    assert not missing, f"imported by the grader but declared nowhere: {missing}"


def test_every_grader_import_is_installed_by_its_declarations():
    """Transitively, the declared distributions install every module the grader imports (run here, where the
    course environment holds them all)."""
    direct, _ = declared(GRADER / "pyproject.toml")
    attnlib_deps, _ = declared(ROOT / "pyproject.toml")
    reachable = closure(direct | attnlib_deps)
    missing = {m: d for m, d in distributions(grader_imports()).items() if not d & reachable}
    assert not missing, missing


def test_the_learner_package_pulls_neither_the_grader_nor_otter():
    deps, extras = declared(ROOT / "pyproject.toml")
    assert not {"attnlib-grader", "otter-grader"} & closure(deps)
    assert "otter-grader" in extras["exercises"]  # grader.check, what the exercise notebooks install
    assert not {n for names in extras.values() for n in names if "grader" in n and n != "otter-grader"}


def test_the_learner_package_declares_what_it_imports():
    """attnlib imports only its dependencies; otter only from the exercises extra (grader.check)."""
    deps, extras = declared(ROOT / "pyproject.toml")
    sources = [p.read_text() for p in (ROOT / "attnlib").rglob("*.py")]
    modules = third_party(set().union(*(imported_modules(s) for s in sources))) - OPTIONAL_IN_ATTNLIB
    missing = {
        m: d
        for m, d in distributions(modules).items()
        if not d & closure(deps) and not (d & extras["exercises"])
    }
    assert not missing, missing
    otter_users = [
        p.relative_to(ROOT)
        for p in (ROOT / "attnlib").rglob("*.py")
        if "otter" in imported_modules(p.read_text())
    ]
    assert [str(p) for p in otter_users] == ["attnlib/grading/__init__.py"]


def test_optional_imports_of_attnlib_are_guarded():
    """What OPTIONAL_IN_ATTNLIB lets through is imported only inside a try that catches ImportError."""
    for path in (ROOT / "attnlib").rglob("*.py"):
        tree = ast.parse(path.read_text())
        guarded = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Try) and any(
                getattr(h.type, "id", "") in ("ImportError", "ModuleNotFoundError") for h in node.handlers
            ):
                guarded |= {id(n) for part in node.body for n in ast.walk(part)}
        for node in ast.walk(tree):
            if (
                isinstance(node, (ast.Import, ast.ImportFrom))
                and third_party(imported_modules(ast.unparse(node))) & OPTIONAL_IN_ATTNLIB
            ):
                assert id(node) in guarded, f"{path}: {ast.unparse(node)} is not guarded"


@pytest.mark.parametrize("line", ["grader-env/bin/pip install -c requirements-course.txt -e . -e ./grader"])
def test_readme_gives_the_teacher_command_that_was_run(line):
    assert line in (ROOT / "README.md").read_text()
    assert line in (ROOT / "exercises" / "teachers.md").read_text()
