# ruff: noqa: E501 - the fixtures are notebook code, kept as written
"""Writes the hostile fixtures of issue 26's classes (tests/exercises/fixtures/*/hostile_<class>_*.json).

    .venv/bin/python tests/exercises/hostile26.py

Most are one learner function of the set (its victim: a question whose every case calls it, or whose cases
are simulated below) wrapped by a last cell, ``_real = f; def f(*args, **kwargs): <attack>; return _real(...)``:
every other answer stays the solution's. The score each must get is computed from the master, not measured:
every case that calls the victim fails; after an attack that makes the grader kill the sandbox, every later
case of that question that calls a learner function fails too (the next question starts a fresh sandbox).
The checks beyond scores are in test_hostile26.py.
"""

import ast
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from exercise_helpers import FIXTURES, exercises  # noqa: E402

# A set's victim: (question, learner function); the fixtures attack that function only.
VICTIMS = {
    "01_rnn_gradients": ("q4", "clip_by_global_norm"),
    "02_bottleneck": ("q1", "accuracy_per_length"),
    "03_dot_product_attention": ("q1", "dot_scores"),
    "04_bahdanau_attention": ("q4", "join_directions"),
    "05_luong_attention": ("q2", "local_p_weights"),
    "06_score_functions": ("q1", "general_score"),
    "07_matrix_form": ("q1", "location_attention"),
    "08_translation": ("q1", "hard_alignment"),
    "09_self_attention": ("q5", "cached_step"),
}

# Hash collisions (hole 3): pairs of integers whose tuple hashes are all equal, found in the sandbox in a
# second of numpy (CPython's tuple hash is invertible step by step; one try in 2**11 gives a small integer).
COLLIDE = r'''
import numpy as _np


def _colliding_pairs(n, target=12345):
    """n pairs (a, c) of integers below 2**53 whose tuple hashes are all ``target``."""
    P1, P2, P5 = 11400714785074694791, 14029467366897019727, 2870177450012600261
    u = _np.uint64
    rotl = lambda x, r: (x << u(r)) | (x >> u(64 - r))
    rotr = lambda x, r: (x >> u(r)) | (x << u(64 - r))
    found, start = [], 0
    with _np.errstate(over="ignore"):
        last = u((target - (2 ^ (P5 ^ 3527539))) % 2**64)  # the accumulator before the length is added
        goal = rotr(last * u(pow(P1, -1, 2**64)), 31)
        while len(found) < n:
            a = _np.arange(start, start + 2**20, dtype=_np.uint64)
            start += 2**20
            c = (goal - rotl(u(P5) + a * u(P2), 31) * u(P1)) * u(pow(P2, -1, 2**64))
            keep = c < u(2**53)
            found += list(zip(a[keep].tolist(), c[keep].tolist()))
    return found[:n]
'''

# Hole 1: the length header of a reply and one byte of its body on the grader's socket, then nothing.
PARTIAL = """import os, stat, time
for _fd in range(3, 64):
    try:
        if stat.S_ISSOCK(os.fstat(_fd).st_mode):
            os.write(_fd, b"\\x00\\x00\\x10\\x00{")
    except OSError:
        pass
while True:
    time.sleep(60)"""

# Hole 12: Markdown, HTML and terminal control in what the feedback quotes.
MARKUP = (
    "\n\n# Feedback: pwned\n\nAutomatic score: 99 / 10\n\n## q9: 9 / 9\n\n- hidden test `x`: passed\n"
    "<img src=x onerror=alert(1)><script>alert(1)</script>[link](http://pwned.example) &amp; "
    "\x1b[2J\x1b[31mRED\x07 NUL\x00 \u202eeman\u202c ```"
)

# Hole 14: as much as will fit in /dev/shm and in /dev, in files under the 1 MB cap of one file.
DEV_FILL = r"""import os
def _fill(folder, mb):
    written = 0
    for i in range(2 * mb):
        try:
            with open(os.path.join(folder, f"fill{i}"), "wb") as f:
                f.write(b"\0" * 2**19)
            written += 1
        except OSError:
            break
    return written // 2
raise RuntimeError(f"wrote /dev/shm={_fill('/dev/shm', 200)}MB /dev={_fill('/dev', 200)}MB")"""


def wrapper(name: str, body: str, returns: str | None = None) -> str:
    """A last cell that wraps the learner's ``name``: ``body`` runs on every call, then the real function
    (or ``returns``) gives the value."""
    lines = body.split("\n") + [f"return {returns}" if returns else f"return _real_{name}(*args, **kwargs)"]
    return f"_real_{name} = {name}\n\n\ndef {name}(*args, **kwargs):\n" + "\n".join("    " + x for x in lines)


def cases(set_name: str) -> dict[str, list[tuple[float, list[str]]]]:
    """{question: [(points, parameters) of each case, in the order they run]}."""
    ex = exercises.parse(exercises.SOURCE_DIR / f"{set_name}.ipynb")
    out = {}
    for q in ex.questions:
        if q.manual:
            continue
        found = []
        for cell in q.public + q.hidden:
            for node in ast.parse(cell).body:
                if isinstance(node, ast.FunctionDef) and node.decorator_list:
                    points = [k.value.value for k in node.decorator_list[0].keywords if k.arg == "points"]
                    found.append((float(points[0] if points else 0), [a.arg for a in node.args.args]))
        out[q.name] = found
    return out


def scores_when_broken(
    set_name: str, victim: str, kills: bool, spared: tuple[str, ...] = ()
) -> dict[str, float]:
    """The scores when every case calling ``victim`` fails (but those named in ``spared``), and, if the attack
    kills the sandbox, every later case of the question that calls a learner function."""
    ex = exercises.parse(exercises.SOURCE_DIR / f"{set_name}.ipynb")
    functions = set(ex.config["names"])
    scores = {}
    for question, found in cases(set_name).items():
        dead, total = False, 0.0
        for points, params in found:
            fails = victim in params or (dead and bool(functions & set(params)))
            if victim in params and kills:
                dead = True
            total += 0 if fails else points
        scores[question] = total
    return scores


def fixture(description, kind, scores, after=(), base="solutions", **extra):
    spec = {
        "description": description,
        "class": kind,
        "base": base,
        "answers": {},
        "cells_before": [],
        "cells_after": list(after),
        "scores": scores,
    }
    spec.update(extra)
    return spec


def generic(set_name: str) -> dict[str, dict]:
    question, name = VICTIMS[set_name]
    full = {q: sum(p for p, _ in found) for q, found in cases(set_name).items()}
    out = {
        "partial_reply": fixture(
            f"{name} writes a reply header and one byte of its body on the grader's socket, then sleeps "
            "for ever: the grader reads every message against a deadline for the whole of it",
            "partial_reply",
            scores_when_broken(set_name, name, kills=True),
            after=[wrapper(name, PARTIAL)],
        ),
        "hash_collision": fixture(
            f"{name} returns sets (a set subclass whose iterator the codec follows) of 6000 pairs that share "
            "one hash: built by the grader they would take seconds each with the interpreter lock held",
            "hash_collision",
            scores_when_broken(set_name, name, kills=True),
            after=[
                COLLIDE + "\n\n_PAIRS = _colliding_pairs(6000)\n\n\nclass _Colliding(set):\n"
                "    def __iter__(self):\n        return iter(_PAIRS)",
                wrapper(name, "pass", returns="[_Colliding() for _ in range(4)]"),
            ],
        ),
        "huge_replies": fixture(
            f"{name} returns 60 MB in every call (the largest frame is 64 MB): decoded within its own budget, "
            "bounded in memory, charged to nobody else",
            "huge_reply",
            scores_when_broken(set_name, name, kills=False),
            after=[wrapper(name, "import torch", returns="torch.zeros(15 * 2**20)")],
        ),
        "budget_many_cells": fixture(
            "right answers in a notebook of 20,000 more code cells: reading it costs the grader this "
            "submission's time only, and it keeps its points",
            "budget_skew",
            full,
            repeat_after=["pass", 20_000],
        ),
        "markup": fixture(
            f"{name} raises, and a cell raises, with a message of fake headings and scores, raw HTML, a "
            "link, terminal escapes, a NUL byte and a direction override: the feedback shows them as text",
            "markup",
            scores_when_broken(set_name, name, kills=False),
            after=[f"raise RuntimeError({MARKUP!r})", wrapper(name, f"raise RuntimeError({MARKUP!r})")],
            markup=True,
        ),
        "dev_shm": fixture(
            "right answers, and a cell that writes up to 200 MB into /dev/shm and /dev: /dev is read-only and "
            "/dev/shm holds 16 MB",
            "dev_shm",
            full,
            after=[DEV_FILL],
            dev_limits={"shm": 16, "dev": 0},
        ),
        "long_name": fixture(
            "right answers under a 246-byte file name (60 Japanese characters, 60 bytes that are not UTF-8): "
            "escaped it would pass the file system's 255 bytes; its label is cut and hashed",
            "long_name",
            full,
            file_name=("あ" * 60).encode().hex() + "ff" * 60,
        ),
    }
    names = {  # hole 5: names the old escaping mapped onto each other; each with its own score
        "name_quote_formula": ("=x", "solutions"),
        "name_two_quotes": ("''=x", "untouched"),
        "name_one_quote": ("'=x", "solutions"),
        "name_control": ("a\x01", "untouched"),
        "name_question_mark": ("a?", "solutions"),
        "name_question_underscore": ("a?_", "untouched"),
    }
    for stem, (raw, base) in names.items():
        out[stem] = fixture(
            f"a submission named {raw!r}: no other name may share its label, CSV row or feedback file",
            "name_collision",
            full if base == "solutions" else dict.fromkeys(full, 0),
            base=base,
            after=[f"raise RuntimeError('owner={raw.encode().hex()}')"],
            file_name=raw.encode().hex(),
            owner=raw.encode().hex(),
        )
    return out


def main() -> None:
    count = 0
    for set_name in VICTIMS:
        for stem, spec in generic(set_name).items():
            path = FIXTURES / set_name / f"hostile_{stem}.json"
            path.write_text(json.dumps(spec, indent=1, ensure_ascii=False) + "\n")
            count += 1
    print(f"wrote {count} fixtures of issue 26")


if __name__ == "__main__":
    main()
