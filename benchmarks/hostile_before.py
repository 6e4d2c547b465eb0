"""Grade issue 26's hostile fixtures with another commit's grader: did each fail before, does it pass now?

    git worktree add --detach /tmp/old ceeaca7
    cp -al .venv /tmp/oldvenv   # then point its attnlib finder at /tmp/old/attnlib (see below)
    nice .venv/bin/python benchmarks/hostile_before.py --tree /tmp/old --python /tmp/oldvenv/bin/python \
        --sets 02,03 --out /tmp/before
    ... --busy    # instead: the solutions beside the set's busy-class fixtures, two busy loops on the cores

The fixtures are today's (tests/exercises/fixtures/<set>/hostile_*.json, written by hostile26.py), made into
notebooks by today's helpers; the bundle, the hidden tests, attnlib and the grader are ``--tree``'s, run by
``--python`` (an environment whose editable attnlib is ``--tree``'s: the sandbox binds the attnlib the grader
imported). ``--tree .`` with ``.venv/bin/python`` measures today's grader with the same criteria.

Each fixture is graded alone in a grader process of its own under a hard timeout (a hang counts as failed);
the six name fixtures of a set are graded together (their hole is between them), and budget_many_cells
beside the solutions at --jobs 2 (its hole is the classmate's score). A fixture passes when it gets its
declared scores and what test_hostile26.py asks of its class beyond them (inert feedback, /dev limits,
labels, the contract's or switch-off's message, no expected value in a hidden message); a fixture that
declares ``grader_memory_mb`` (hostile_object_replies: two 64 MB frames, a frame and what it decodes to) also
keeps the grader's peak memory within that of the control's (hole 13: "grader memory 0.4 -> 1.0 GB"). The
solutions are graded first in the same way, as a control: a tree whose grader does not give them full marks
measures nothing. ``--classes`` grades only those classes. Prints one line per fixture and a table of set x
class; writes <out>/results.json.

``--busy``: the classes whose hole is a classmate's loss (huge replies, colliding hashes, a budget skewed by
the grader's own work, a reply that stops midway) get their own declared scores from an old grader too; what
shows their hole is a solution graded beside them while two ``while True: pass`` loops take both cores
(test_hostile26.py's busy-loop test grades the set's fixtures of those classes together between two
solutions). This mode grades each such fixture with --tree's grader at --jobs 2 between two solutions (the
first graded beside it from the start, the second when the first is done; one grader process, a hard
timeout) and says whether both kept full marks on the questions the control can compare; a fixture "passes"
when they did. Writes <out>/busy.json and prints a table.
"""

import argparse
import csv
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "exercises"))

import nbformat  # noqa: E402
from exercise_helpers import FIXTURES, exercises, fixture_file_name, fixture_notebook  # noqa: E402
from hostile26 import PEAK  # noqa: E402

BUNDLE = """import importlib.util, sys
sys.path.insert(0, "tools")
spec = importlib.util.spec_from_file_location("ex", "tools/exercises.py")
ex = importlib.util.module_from_spec(spec); sys.modules["ex"] = ex; spec.loader.exec_module(ex)
open(sys.argv[1], "wb").write(ex.autograder_zip(ex.parse(ex.SOURCE_DIR / (sys.argv[2] + ".ipynb"))))"""


def grade(
    args, bundle: Path, notebooks: dict[str, nbformat.NotebookNode], work: Path, jobs: int, limit: float
):
    """Grade ``notebooks`` ({file name: notebook}) in one grader process: (scores.csv rows by label or None,
    feedback texts, seconds, how it ended)."""
    shutil.rmtree(work, ignore_errors=True)
    (work / "in").mkdir(parents=True)
    for file_name, nb in notebooks.items():
        nbformat.write(nb, os.path.join(work / "in", file_name))
    command = [
        args.python,
        "-c",
        PEAK,
        "tools/grade.py",
        str(bundle),
        str(work / "in"),
        "--out",
        str(work / "out"),
    ]
    start = time.monotonic()
    try:
        done = subprocess.run(
            ["timeout", "-k", "10", str(int(limit)), *command + ["--jobs", str(jobs)]],
            cwd=args.tree,
            env=dict(os.environ, PEAK_OUT=str(work / "peak_kb")),
            capture_output=True,
            text=True,
            errors="replace",
        )
        ended = "ok" if done.returncode == 0 else f"exit {done.returncode}"
        if done.returncode in (124, 137):
            ended = f"timeout {int(limit)} s"
    finally:
        seconds = time.monotonic() - start
    (work / "stderr.txt").write_text(done.stderr[-20000:])
    rows = None
    if (work / "out" / "scores.csv").is_file():
        lines = (work / "out" / "scores.csv").read_text(encoding="utf-8").splitlines()
        header = next(i for i, line in enumerate(lines) if "auto_score" in line)
        rows = {r["submission"]: r for r in csv.DictReader(lines[header:])}
    feedback = {p.stem: p.read_text(errors="replace") for p in (work / "out" / "feedback").glob("*.md")}
    return rows, feedback, seconds, ended


def peak_mb(work: Path) -> float | None:
    """The peak resident memory of the grader process of ``grade(..., work, ...)``, in MB."""
    found = work / "peak_kb"
    return int(found.read_text()) / 1024 if found.is_file() else None


def scores_of(row: dict, declared: dict) -> dict:
    return {q: float(row[q]) if row.get(q) not in (None, "") else None for q in declared}


def expected_patterns(set_name: str, names: list[str]) -> set[str]:
    """How a message could show the solution's values of ``names`` (test_hostile26's secrets)."""
    spec = importlib.util.spec_from_file_location("t26", ROOT / "tests" / "exercises" / "test_hostile26.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    values = module.expected_values(set_name, names)
    return set().union(*(module.secrets(v) for v in values.values()))


def plain(text: str) -> str:
    """Feedback text with Markdown's backslash escapes (report.inert) undone."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)


def marked(owner: str, text: str) -> bool:
    """The feedback ends a line with this marker (a name's marker may begin another's)."""
    return re.search(re.escape(owner) + "$", plain(text), re.M) is not None


def class_check(kind: str, spec: dict, text: str, set_name: str) -> str | None:
    """What test_hostile26.py asks of the class beyond the scores, in one feedback file: None if it holds."""
    if (
        kind == "markup"
    ):  # as test_hostile26: no HTML, link or code span, no control character, one score line
        from markdown_it import MarkdownIt

        tokens = MarkdownIt("commonmark").parse(text)
        kinds = {t.type for t in tokens + [c for t in tokens if t.children for c in t.children]}
        raw = sorted(kinds & {"html_block", "html_inline", "link_open", "code_inline"})
        bad = re.search(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]", text)
        if bad or raw or text.count("Automatic score:") != 1:
            return f"feedback not inert: {raw} control={bool(bad)} scores={text.count('Automatic score:')}"
    elif kind == "dev_shm":
        found = re.search(r"/dev/shm=(\d+)MB /dev=(\d+)MB", plain(text))
        if not found:
            return "no /dev report in the feedback"
        shm, dev = (int(n) for n in found.groups())
        if shm > spec["dev_limits"]["shm"] or dev > spec["dev_limits"]["dev"]:
            return f"wrote /dev/shm {shm} MB, /dev {dev} MB"
    elif kind == "mutation" and "in place" not in text:
        return "the change to a list argument is not reported"
    elif kind == "road" and "is switched off while grading" not in text:
        return "the road is not switched off"
    elif kind == "answer_leak":
        shown = [p for p in expected_patterns(set_name, spec["secrets_of"]) if re.search(p, text)]
        if shown or "largest error" in text:
            largest = " and the largest error" if "largest error" in text else ""
            return f"expected values shown: {shown[:4]}{largest}"
    return None


def _control(args, set_name: str, out: Path, folder: str, limit: float):
    """--tree's bundle of the set, its full marks, and the control: today's solutions graded by --tree's
    grader (rows, seconds, how it ended), with the questions where they get full marks there: a score
    elsewhere measures nothing (a master changed since: a function renamed, a signature changed)."""
    bundle = out / f"{set_name}.zip"
    subprocess.run([args.python, "-c", BUNDLE, str(bundle), set_name], cwd=args.tree, check=True)
    full = {q: sum(p for p, *_ in found) for q, found in _cases(set_name).items()}
    solutions = {"solutions.ipynb": exercises.submission(set_name)}
    rows, _, seconds, ended = grade(args, bundle, solutions, out / set_name / folder, 1, limit)
    scores = scores_of(next(iter(rows.values())), full) if rows else {}
    return bundle, full, rows, seconds, ended, {q for q, v in scores.items() if v == full[q]}


def measure_set(args, set_name: str, out: Path) -> list[dict]:
    bundle, full, rows, seconds, ended, usable = _control(args, set_name, out, "control", 900)
    control_mb = peak_mb(out / set_name / "control")
    control = exercises.submission(set_name)
    ok = rows is not None and scores_of(next(iter(rows.values())), full) == full
    report = [
        {
            "set": set_name,
            "fixture": "solutions (control)",
            "class": "control",
            "seconds": seconds,
            "peak_mb": control_mb,
            "ended": ended,
            "passes": ok,
            "why": "" if ok else f"{rows and next(iter(rows.values()))}",
        }
    ]
    print(json.dumps(report[-1]), flush=True)
    limit = max(args.min_timeout, 5 * seconds)
    specs = {p.stem: json.loads(p.read_text()) for p in sorted((FIXTURES / set_name).glob("hostile_*.json"))}
    names = {f: s for f, s in specs.items() if s["class"] == "name_collision"}
    for fixture, spec in specs.items():
        if spec["class"] == "name_collision" or args.classes and spec["class"] not in args.classes.split(","):
            continue
        notebooks = {fixture_file_name(fixture, spec): fixture_notebook(set_name, spec)}
        beside = spec["class"] == "budget_skew"
        if beside:
            notebooks["solutions.ipynb"] = control
        rows, feedback, seconds, ended = grade(args, bundle, notebooks, out / set_name / fixture, 2, limit)
        peak = peak_mb(out / set_name / fixture)
        why = []
        if rows is None:
            why.append(f"no scores.csv ({ended})")
        else:
            mine = [r for label, r in rows.items() if label != "solutions"]
            got = scores_of(mine[0], spec["scores"]) if mine else None
            wrong = [q for q in usable if got is None or got[q] != spec["scores"][q]]
            if wrong:
                why.append(f"scores {got} declared {spec['scores']} (compared on {sorted(usable)})")
            beside_got = scores_of(rows.get("solutions", {}), full)
            if beside and any(beside_got[q] != full[q] for q in usable):
                why.append(f"the solutions beside it got {beside_got} (compared on {sorted(usable)})")
            text = next((t for label, t in feedback.items() if label != "solutions"), "")
            problem = class_check(spec["class"], spec, text, set_name)
            if problem:
                why.append(problem)
            if "grader_memory_mb" in spec:  # hole 13
                if peak is None or control_mb is None:
                    why.append("the grader's peak memory was not measured")
                elif peak - control_mb > spec["grader_memory_mb"]:
                    grew = peak - control_mb
                    why.append(
                        f"the grader's memory grew by {grew:.0f} MB, more than {spec['grader_memory_mb']} MB"
                    )
        report.append(
            {
                "set": set_name,
                "fixture": fixture,
                "class": spec["class"],
                "seconds": round(seconds, 1),
                "peak_mb": peak and round(peak),
                "ended": ended,
                "passes": not why,
                "why": "; ".join(why),
            }
        )
        print(json.dumps(report[-1]), flush=True)
    if names and (not args.classes or "name_collision" in args.classes.split(",")):
        notebooks = {fixture_file_name(f, s): fixture_notebook(set_name, s) for f, s in names.items()}
        rows, feedback, seconds, ended = grade(args, bundle, notebooks, out / set_name / "names", 2, limit)
        why = []
        if rows is None:
            why.append(f"no scores.csv ({ended})")
        else:
            if len(rows) != len(names) or len(feedback) != len(names):
                why.append(f"{len(names)} names got {len(rows)} rows and {len(feedback)} feedback files")
            for fixture, spec in names.items():
                owner = f"owner={spec['owner']}"
                files = [label for label, t in feedback.items() if marked(owner, t)]
                if len(files) != 1 or any(
                    marked(f"owner={o['owner']}", feedback[files[0]]) for o in names.values() if o is not spec
                ):
                    why.append(f"{fixture}: its marker is in {len(files)} feedback files")
                    continue
                row = rows.get(files[0]) or rows.get("'" + files[0])
                if row is None or scores_of(row, spec["scores"]) != spec["scores"]:
                    why.append(f"{fixture}: row {row and scores_of(row, spec['scores'])}")
        report.append(
            {
                "set": set_name,
                "fixture": "the six name fixtures",
                "class": "name_collision",
                "seconds": round(seconds, 1),
                "ended": ended,
                "passes": not why,
                "why": "; ".join(why),
            }
        )
        print(json.dumps(report[-1]), flush=True)
    return report


BUSY = ("huge_reply", "hash_collision", "budget_skew", "partial_reply")  # test_hostile26.BUSY


def measure_busy(args, set_name: str, out: Path) -> list[dict]:
    """One grading per busy-class fixture: a solution graded beside it from the start, a second after that
    one (beside what is left of it), two busy loops on the cores."""
    bundle, full, _, _, _, usable = _control(args, set_name, out, "busy_control", args.min_timeout)
    specs = {p.stem: json.loads(p.read_text()) for p in sorted((FIXTURES / set_name).glob("hostile_*.json"))}
    report = []
    for fixture, spec in specs.items():
        if spec["class"] not in args.classes.split(","):
            continue
        notebooks = {"a_solutions.ipynb": exercises.submission(set_name)}
        notebooks[fixture_file_name(fixture, spec)] = fixture_notebook(set_name, spec)
        notebooks["z_solutions.ipynb"] = exercises.submission(set_name)
        loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
        try:
            work = out / set_name / f"busy_{fixture}"
            rows, _, seconds, ended = grade(args, bundle, notebooks, work, 2, args.min_timeout)
        finally:
            for loop in loops:
                loop.kill()
                loop.wait()
        got = {k: scores_of(r, full) for k, r in (rows or {}).items() if k.endswith("solutions")}
        kept = len(got) == 2 and all(scores[q] == full[q] for scores in got.values() for q in usable)
        report.append(
            {
                "set": set_name,
                "fixture": fixture,
                "class": spec["class"],
                "seconds": round(seconds, 1),
                "ended": ended,
                "passes": kept,
                "solutions": got,
                "compared": sorted(usable),
            }
        )
        print(json.dumps(report[-1]), flush=True)
    return report


def _cases(set_name):
    spec = importlib.util.spec_from_file_location("h26", ROOT / "tests" / "exercises" / "hostile26.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.cases(set_name)


def table(report: list[dict]) -> str:
    sets = sorted({r["set"] for r in report})
    classes = sorted({r["class"] for r in report} - {"control"})
    lines = ["| class | " + " | ".join(s[:2] for s in sets) + " |", "|---" * (len(sets) + 1) + "|"]
    for kind in classes:
        cells = []
        for s in sets:
            mine = [r for r in report if r["set"] == s and r["class"] == kind]
            cells.append("n.a." if not mine else "pass" if all(r["passes"] for r in mine) else "FAIL")
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", required=True, help="the checkout whose grader, bundle and attnlib grade")
    parser.add_argument("--python", required=True, help="a python whose editable attnlib is --tree's")
    parser.add_argument("--sets", required=True, help="comma-separated set numbers, e.g. 02,03")
    parser.add_argument("--out", required=True)
    parser.add_argument("--min-timeout", type=float, default=120, help="seconds per grader process, at least")
    parser.add_argument("--busy", action="store_true", help="the busy-loop scenario instead (see above)")
    parser.add_argument("--classes", help=f"only these classes, comma-separated (--busy: {','.join(BUSY)})")
    args = parser.parse_args()
    args.tree = str(Path(args.tree).resolve())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.busy:
        args.classes = args.classes or ",".join(BUSY)
        busy = [r for p in exercises.masters(args.sets.split(",")) for r in measure_busy(args, p.stem, out)]
        (out / "busy.json").write_text(json.dumps(busy, indent=1))
        print(table(busy))
        return
    done = out / "results.json"
    report = json.loads(done.read_text()) if done.is_file() else []
    for number in args.sets.split(","):
        (set_name,) = [p.stem for p in exercises.masters([number])]
        report = [r for r in report if r["set"] != set_name] + measure_set(args, set_name, out)
        done.write_text(json.dumps(report, indent=1))
    print(table(report))


if __name__ == "__main__":
    main()
