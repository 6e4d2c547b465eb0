"""The public tests ship inside attnlib, so a learner can read and paste anything in them: they must carry
messages and checks, not implementations. For every set and question, every function defined in the public
test file as it ships is called on the inputs the HIDDEN tests give the learner's functions (recorded by
running the hidden tests on the solutions), with what the set switches off switched off; none may reproduce a
learner function there. A helper marked ``@checks.reference`` in a master ships as ``checks.recorded`` (the
values of the public examples only), never as code."""

import ast
import contextlib
import importlib
import io
import os

import pytest
import torch
from attnlib_grader.child import function_sources
from attnlib_grader.switching import resolve_equations
from exercise_helpers import SETS, exercises

from attnlib.grading import checks


@contextlib.contextmanager
def switched_off(dotted_names):
    """The set's switch_off list, by module or class attribute (a method such as
    ``attnlib.layers.AdditiveScore.forward``; the grader's sandbox does more: by identity)."""
    saved = []
    for dotted in dotted_names:
        owner_name, _, attr = dotted.rpartition(".")
        with contextlib.suppress(ImportError, AttributeError):
            try:
                module = importlib.import_module(owner_name)
            except ImportError:  # a method: the owner is a class of a module
                module_name, _, class_name = owner_name.rpartition(".")
                module = getattr(importlib.import_module(module_name), class_name)
            saved.append((module, attr, getattr(module, attr)))

            def off(*args, _dotted=dotted, **kwargs):
                raise RuntimeError(f"{_dotted} is switched off")

            setattr(module, attr, off)
    try:
        yield
    finally:
        for module, attr, original in reversed(saved):
            setattr(module, attr, original)


def solutions_namespace(ex) -> dict:
    namespace = {"__name__": "__main__"}
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        for cell in ex.solutions.cells:
            if cell.cell_type == "code" and not cell.source.startswith("grader.check"):
                exec(compile(cell.source, "<solution cell>", "exec"), namespace)
    return namespace


def hidden_calls(ex, q, solutions) -> dict[str, list[tuple]]:
    """{learner function: [args of each call the hidden tests make]}, the tests run on the solutions."""
    source = q.test_file(ex.name, with_hidden=True, exempt=ex.config.get("contract_exempt"))
    space, cases = exercises._public_cases(source, f"{q.name}.py")
    calls: dict[str, list[tuple]] = {}
    cells = [c.source for c in ex.solutions.cells if c.cell_type == "code"]
    sources = function_sources(cells, ex.config.get("names", []))

    def recording(name, fn):
        def record(*args, **kwargs):
            if not kwargs:
                calls.setdefault(name, []).append(checks.clone_tree(args))
            return fn(*args, **kwargs)

        record.__name__ = name
        record.__source__ = sources.get(name)  # for the checks that read the learner's code
        return record

    for case in cases:
        if not case.hidden:
            continue
        params = case._get_func_params()
        args = [
            recording(p, solutions[p]) if callable(solutions.get(p)) else solutions.get(p) for p in params
        ]
        with contextlib.suppress(Exception):
            case.test_func(*args)
    return calls


def shipped_helpers(source: str) -> dict:
    """The functions a learner gets by executing the public file's top level (test cases left out)."""
    tree = ast.parse(source)
    space: dict = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.Assign, ast.Import, ast.ImportFrom)) and not getattr(
            node, "decorator_list", None
        ):
            with contextlib.suppress(Exception):
                exec(compile(ast.Module([node], []), "<public>", "exec"), space)
    return {
        k: v for k, v in space.items() if callable(v) and not isinstance(v, type) and not k.startswith("__")
    }


def reproduces(helper, fn, calls) -> bool:
    if not calls:
        return False
    for args in calls:
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                got = helper(*checks.clone_tree(args))
        except Exception:  # noqa: BLE001 - a helper that cannot answer this call does not reproduce it
            return False
        expected = fn(*checks.clone_tree(args))
        if not close(got, expected):
            return False
    return True


def close(a, b) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and bool(
            torch.allclose(a.double(), b.double(), atol=1e-5, rtol=1e-4, equal_nan=True)
        )
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.parametrize("name", SETS)
def test_no_public_helper_reproduces_a_learner_function_on_the_hidden_inputs(name):
    import json

    from exercise_helpers import ROOT

    from attnlib.grading import public_tests_dir  # noqa: F401 - the shipped files, as grader.check reads them

    ex = exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb")
    shipped = json.loads((ROOT / "attnlib" / "grading" / "public" / f"{name}.json").read_text())["tests"]
    solutions = solutions_namespace(ex)
    leaks, checked = [], 0
    for q in ex.questions:
        if q.manual:
            continue
        calls = hidden_calls(ex, q, solutions)
        helpers = shipped_helpers(shipped[f"{q.name}.py"])
        with switched_off(resolve_equations(ex.config.get("switch_off", []))[0]):
            for learner, args in calls.items():
                for helper_name, helper in helpers.items():
                    checked += 1
                    if reproduces(helper, solutions[learner], args):
                        leaks.append(f"{q.name}: public {helper_name} reproduces {learner}")
    assert checked, "nothing was audited"
    assert not leaks, leaks


def test_the_audit_finds_a_helper_that_computes_an_answer():
    """Positive control: a helper that computes the answer in plain torch is found."""

    def step_jacobian(W_h, z):
        return (1 - torch.tanh(z) ** 2)[:, None] * W_h

    helpers = shipped_helpers(
        "import torch\n\n\ndef tanh_factor(W_h, z):\n    return (1 - torch.tanh(z) ** 2)[:, None] * W_h\n"
    )
    calls = [(torch.randn(4, 4), torch.randn(4)) for _ in range(3)]
    assert reproduces(helpers["tanh_factor"], step_jacobian, calls)
    assert not reproduces(helpers["tanh_factor"], lambda W_h, z: W_h, calls)


@pytest.mark.parametrize("name", SETS)
def test_marked_references_ship_as_recorded_values_only(name):
    import json

    from exercise_helpers import ROOT

    ex = exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb")
    shipped = json.loads((ROOT / "attnlib" / "grading" / "public" / f"{name}.json").read_text())["tests"]
    for q in ex.questions:
        for ref in q.references():
            source = shipped[f"{q.name}.py"]
            assert f"def {ref}(" not in source and f"{ref} = checks.recorded(" in source, (q.name, ref)
