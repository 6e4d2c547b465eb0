"""The public tests' reference helpers (``@checks.reference``): what each gives for the calls the public
tests make, recorded as a table under the pinned numeric environment, so that the public files shipped in
attnlib carry the values and not the code that computes them."""

from __future__ import annotations

import ast
import functools
import json
import sys
import tempfile
from pathlib import Path

import numeric_env
from notebooks import ROOT

from exercise_build.master import PUBLIC_DIR, SOURCE_DIR, parse


def record_references(name: str) -> dict[str, dict[str, str]]:
    """{question: {reference: table}}: what each ``@checks.reference`` helper gives for the calls the public
    tests make when run on the solutions. Run in a fresh process under the pinned numeric environment (the
    tables are part of a committed file), which also checks that the public tests, with the tables in place of
    the helpers, pass on the solutions. On a machine that cannot reproduce the stored package data
    (``numeric_env.check(kind="data")``: the tables were made on the stored results' machine) the committed
    tables are kept instead of recorded again (this machine's last bits would differ from that machine's),
    and the same check runs with them."""
    import subprocess

    if not any(q.references() for q in parse(SOURCE_DIR / f"{name}.ipynb").questions):
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        out, kept = Path(tmp) / "recorded.json", None
        reason = _machine_verdict()
        if reason is not None:
            kept = Path(tmp) / "committed.json"
            kept.write_text(json.dumps(committed_tables(name)))
            print(f"{name}: the committed reference tables are kept (cannot record here: {reason})")
        code = (
            f"import sys; sys.path.insert(0, {str(ROOT / 'tools')!r}); import numeric_env; "
            "numeric_env.apply(); from exercise_build import references; "
            f"references._record({name!r}, {str(out)!r}, {str(kept) if kept else None!r})"
        )
        run = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp, env=_record_env()
        )
        if run.returncode != 0:
            raise RuntimeError(f"recording the references of {name} failed:\n{run.stderr[-3000:]}")
        return json.loads(out.read_text())


@functools.cache
def _machine_verdict() -> str | None:
    """numeric_env.check(kind="data"), asked once per process: it starts a process that imports torch, and a
    build of every set would otherwise ask it once per set with references."""
    return numeric_env.check(kind="data")


def committed_tables(name: str) -> dict[str, dict[str, str]]:
    """{question: {reference: table}} as the committed public tests of set ``name`` carry them."""
    path = PUBLIC_DIR / f"{name}.json"
    tests = json.loads(path.read_text())["tests"] if path.is_file() else {}
    found: dict[str, dict[str, str]] = {}
    for file, text in tests.items():
        for node in ast.parse(text).body:
            call = node.value if isinstance(node, ast.Assign) else None
            if isinstance(call, ast.Call) and ast.unparse(call.func) == "checks.recorded":
                reference, table = (arg.value for arg in call.args)
                found.setdefault(file.removesuffix(".py"), {})[reference] = table
    return found


def _record_env() -> dict[str, str]:
    import os

    return {**os.environ, "MPLBACKEND": "Agg"}


def _public_cases(source: str, path: str) -> tuple[dict, list]:
    from otter.test_files.exception_test import test_case

    space: dict = {"__name__": path}
    exec(compile(source, path, "exec"), space)
    return space, [v for v in space.values() if isinstance(v, test_case)]


def _record(name: str, out: str, kept: str | None = None) -> None:
    """Record the tables into ``out`` (or, with ``kept``, take those of that file), then run the public tests
    as they ship, with the tables alone, on the solutions."""
    import contextlib
    import os

    from attnlib.grading import checks

    ex = parse(SOURCE_DIR / f"{name}.ipynb")
    solutions: dict = {"__name__": "__main__"}
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        for cell in ex.solutions.cells:
            if cell.cell_type == "code" and not cell.source.startswith("grader.check"):
                exec(compile(cell.source, "<solution cell>", "exec"), solutions)
        result = {}
        committed = json.loads(Path(kept).read_text()) if kept else None
        for q in ex.questions:
            if q.manual or not q.references():
                continue
            if committed is not None:
                missing = set(q.references()) - set(committed.get(q.name, {}))
                if missing:
                    raise RuntimeError(
                        f"{q.name}: no committed table for {sorted(missing)}, and this machine cannot record "
                        "one: build the set on a machine where tools/numeric_env.py --check passes"
                    )
                q.recorded = {ref: committed[q.name][ref] for ref in q.references()}
                result[q.name] = q.recorded
                _run_shipped(q, ex, name, solutions)
                continue
            public = q.test_file(
                name, with_hidden=False, exempt=ex.config.get("contract_exempt"), real_references=True
            )
            space, cases = _public_cases(public, f"{q.name}.py")
            tables: dict[str, list] = {ref: [] for ref in q.references()}

            def recorder(ref, real, tables=tables):
                def record(*args, **kwargs):
                    entry = {
                        "args": [checks.to_data(a) for a in args],
                        "kwargs": {k: checks.to_data(v) for k, v in kwargs.items()},
                    }
                    value = real(*args, **kwargs)
                    entry["value"] = checks.to_data(value)
                    if entry not in tables[ref]:
                        tables[ref].append(entry)
                    return value

                return record

            for ref in tables:
                space[ref] = recorder(ref, space[ref])
            for case in cases:
                case.test_func(*[solutions.get(p) for p in case._get_func_params()])
            q.recorded = {ref: json.dumps(calls, sort_keys=True) for ref, calls in tables.items()}
            result[q.name] = q.recorded
            _run_shipped(q, ex, name, solutions)
    Path(out).write_text(json.dumps(result))


def _run_shipped(q, ex, name: str, solutions: dict) -> None:
    """The public file as it ships: the tables alone must let the solutions pass."""
    shipped = q.test_file(name, with_hidden=False, exempt=ex.config.get("contract_exempt"))
    _, cases = _public_cases(shipped, f"{q.name}.py")
    for case in cases:
        case.test_func(*[solutions.get(p) for p in case._get_func_params()])
