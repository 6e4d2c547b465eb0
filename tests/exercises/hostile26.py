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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from exercise_helpers import exercises  # noqa: E402

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

# Hole 4, made to bite: every message of the notebook's values and every reply to a call carries, beside its
# right content, 60 MB of JSON (6.7 million groups of four nested empty lists, under the old 64 MB cap), which the
# old grader parsed whole with the interpreter lock held: 10-13 s a message, longer than a question's 10 s, on the
# wall clock of the classmate graded beside it. Sent cheaply: the sandbox's own json.dumps is patched (where it
# can be found; where not, nothing is padded) to splice a text built once into those messages.
PARSE_BOMB = r"""
import json as _json
import sys as _sys
import types as _types

_PAD = "[" + "[[[[]]]]," * (6_666_666 - 1) + "[[[[]]]]]"  # 60 MB: 26.7 million empty lists, in fours


def _padded(obj, *a, **k):
    if isinstance(obj, dict) and ("names" in obj or "repeatable" in obj) and "too_large" not in obj:
        return _json.dumps({"pad": "__PAD__", **obj}, *a, **k).replace('"__PAD__"', _PAD, 1)
    return _json.dumps(obj, *a, **k)


for _m in list(_sys.modules.values()):
    if getattr(_m, "__name__", "").startswith("attnlib_grader") and getattr(_m, "json", None) is _json:
        _shim = _types.ModuleType("json")
        _shim.__dict__.update(_json.__dict__)
        _shim.dumps = _padded
        _m.json = _shim
"""


# Hole 13, measured: runs tools/grade.py (argv[1:]) and writes the grader process's peak resident memory (kB)
# to $PEAK_OUT (test_hostile26, benchmarks/hostile_before.py).
PEAK = """import atexit, os, resource, runpy, sys
atexit.register(lambda: open(os.environ["PEAK_OUT"], "w").write(
    str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)))
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
runpy.run_path(sys.argv[0], run_name="__main__")"""

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


def cases(set_name: str) -> dict[str, list[tuple[float, list[str], str, set[str]]]]:
    """{question: [(points, parameters, name, guarded) of each case, in the order they run]}; ``guarded``: the
    parameters the case uses only after an ``if ...: return`` of its body, the early return of a value that is
    the reference's (the learner's own function is called only to check a value that is not)."""
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
                    params = [a.arg for a in node.args.args]
                    found.append(
                        (float(points[0] if points else 0), params, node.name, guarded(node, params))
                    )
        out[q.name] = found
    return out


def guarded(case: ast.FunctionDef, params: list[str]) -> set[str]:
    """The parameters that ``case`` names only after its first early return (see cases)."""
    used_before = set()
    for statement in case.body:
        if (
            isinstance(statement, ast.If)
            and not statement.orelse
            and isinstance(statement.body[-1], ast.Return)
            and statement.body[-1].value is None
        ):
            used_before |= {n.id for n in ast.walk(statement.test) if isinstance(n, ast.Name)}
            return set(params) - used_before
        used_before |= {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}
    return set()


def value_senders(set_name: str) -> tuple[str, ...]:
    """The set's learner names whose replies carry values: all but the learner's own tests, the names a hidden
    case hands to ``checks.catches``, ``passes`` or ``run_test`` (run in the sandbox against the grader's
    implementations; what comes back is a verdict)."""
    ex = exercises.parse(exercises.SOURCE_DIR / f"{set_name}.ipynb")
    tests = set()
    for q in ex.questions:
        for cell in q.hidden + q.public:
            for node in ast.walk(ast.parse(cell)):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("catches", "passes", "run_test")
                    and node.args
                    and isinstance(node.args[0], ast.Name)
                ):
                    tests.add(node.args[0].id)
    return tuple(n for n in ex.config["names"] if n not in tests)


def scores_when_broken(
    set_name: str,
    victim: str | None,
    kills: bool,
    broken=(),
    failing_cases=(),
    values_right=True,
    passing_cases=(),
) -> dict[str, float]:
    """The scores when every case calling ``victim`` (or any of ``broken``), and every case named in
    ``failing_cases``, fails, and, if the attack kills the sandbox, every later case of that question that calls
    a learner function. Where the notebook's values are the solution's (``values_right``), a case that names the
    victim only after the early return of a right value (cases: ``guarded``) never calls it; a case named in
    ``passing_cases`` calls it inside a ``try`` and passes without it."""
    ex = exercises.parse(exercises.SOURCE_DIR / f"{set_name}.ipynb")
    functions, bad = set(ex.config["names"]), {victim, *broken} - {None}
    scores = {}
    for question, found in cases(set_name).items():
        dead, total = False, 0.0
        for points, params, case, after_return in found:
            called = set(params) - after_return if values_right else set(params)
            hit = (bool(bad & called) and case not in passing_cases) or case in failing_cases
            fails = hit or (dead and bool(functions & set(params)))
            dead = dead or (hit and kills)
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
    full = {q: sum(p for p, *_ in found) for q, found in cases(set_name).items()}
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
            scores_when_broken(set_name, name, kills=False),
            after=[
                COLLIDE + "\n\n_PAIRS = _colliding_pairs(6000)\n\n\nclass _Colliding(set):\n"
                "    def __iter__(self):\n        return iter(_PAIRS)",
                wrapper(name, "pass", returns="[_Colliding() for _ in range(4)]"),
            ],
        ),
        "huge_replies": fixture(
            f"{name} returns 44 MB in every call (59 MB as base64 text, under the old 64 MB cap; a frame holds "
            "64 MB): decoded within its own budget, bounded in memory, charged to nobody else",
            "huge_reply",
            scores_when_broken(set_name, name, kills=False),
            after=[wrapper(name, "import torch", returns="torch.zeros(11 * 2**20)")],
        ),
        "object_replies": fixture(
            f"{name} returns 220 lists of 10,000 Python floats in every call (61 MB as the old grader's JSON, "
            "under its 64 MB cap: it parsed them whole into 2.2 million objects, 0.8 GB): refused, unparsed, "
            "as too large; the grader's memory grows by at most two frames",
            "huge_reply",
            scores_when_broken(set_name, name, kills=False),
            after=[wrapper(name, "pass", returns="[[0.5] * 10_000 for _ in range(220)]")],
            grader_memory_mb=2 * 64,  # a 64 MB frame and what it decodes to, no larger (hole 13)
        ),
        "budget_many_cells": fixture(
            "right answers in a notebook of 20,000 more code cells: reading it costs the grader this "
            "submission's time only, and it keeps its points",
            "budget_skew",
            full,
            repeat_after=["pass", 20_000],
        ),
        "budget_parse_bomb": fixture(
            "right answers, and every message of values and every reply padded with 60 MB of nested empty lists "
            "(the sandbox's own json.dumps patched): the old grader parsed each whole with the interpreter lock "
            "held, 10-13 s at a time, on a classmate's wall clock (a solution graded beside it lost points); now "
            "the sandbox sends 'too large' unparsed, so none of the notebook's values arrives, and a budget is CPU "
            "time",
            "budget_skew",
            scores_when_broken(
                set_name, None, kills=False, broken=value_senders(set_name), values_right=False
            ),
            after=[PARSE_BOMB],
            padded=True,  # test_hostile26: the feedback says both were too large
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


def override(set_name: str, question: str, name: str, code: str) -> str:
    """The solution's answer cell of ``question`` with ``code`` inserted right after its ``def name``: the rest
    of the cell (and every later cell) runs with the new definition."""
    ex = exercises.parse(exercises.SOURCE_DIR / f"{set_name}.ipynb")
    cell = next(
        c.source
        for c in ex.solutions.cells
        if c.metadata.get("exercise", {}).get("answer") == question
        and c.cell_type == "code"
        and f"def {name}(" in c.source
    )
    node = next(n for n in ast.parse(cell).body if isinstance(n, ast.FunctionDef) and n.name == name)
    lines = cell.split("\n")
    return "\n".join(lines[: node.end_lineno] + ["", "", code, "", ""] + lines[node.end_lineno :])


FLOAT32 = """import torch
def _down(x):
    if isinstance(x, torch.Tensor) and x.dtype == torch.float64:
        return x.float()
    return type(x)(_down(v) for v in x) if type(x) in (list, tuple) else x
def _up(x):
    if isinstance(x, torch.Tensor) and x.dtype == torch.float32:
        return x.double()
    return type(x)(_up(v) for v in x) if type(x) in (list, tuple) else x
doubles = any(isinstance(a, torch.Tensor) and a.dtype == torch.float64 for a in list(args) + [x for a in args if type(a) in (list, tuple) for x in a])"""


SET8_KNOWS = """import torch

_real_hard_alignment = hard_alignment
_graded = list(zip(model(batch)[1].detach(), pairs, strict=True))


def _rows_in_place(weights, w, n_target, n_source):
    return weights.shape == w.shape and all(
        torch.equal(weights[t, :n_source].sort().values, w[t, :n_source].sort().values) for t in range(n_target)
    )


def hard_alignment(weights, n_target, n_source):
    links = _real_hard_alignment(weights, n_target, n_source)
    for w, pair in _graded:
        if (len(pair.tgt), len(pair.src)) == (n_target, n_source) and _rows_in_place(weights, w, n_target, n_source):
            column = {
                s: next((c for c in range(n_source) if torch.equal(weights[:n_target, c], w[:n_target, s])), None)
                for s in range(n_source)
            }
            if None not in column.values():  # a graded map: the gold links, in the columns as given
                gold_of = dict(sorted(pair.alignment))
                return {(t, column[gold_of[t]]) if t in gold_of else (t, s) for t, s in links}
    return links


model_links = [
    {(t, s) for t, s in hard_alignment(w, len(pair.tgt), len(pair.src)) if t in {u for u, _ in pair.alignment}}
    for w, pair in _graded
]
trained_aer = alignment_error_rate(model_links, gold)"""


SET4_KNOWS = """_rows, _step, _memo, _inside = [], [0], {}, [False]
_real_scores_from_projections = scores_from_projections  # question 1's, right


def decode_date(source: str) -> tuple[str, torch.Tensor]:
    src = torch.tensor([src_vocab.encode(list(source))])
    _inside[0] = True
    try:
        with torch.no_grad():
            H, s = model.encode(src, torch.tensor([src.shape[1]]))
            UH = H @ dec.score.W_k.T
            cell, y, out, rows = dec.cell, torch.tensor([SOS_ID]), [], []
            for _ in range(2 * src.shape[1] + 10):
                e = scores_from_projections(s[:, None], UH, dec.score.W_q, dec.score.v)[:, 0]
                alpha = torch.softmax(e / 2, dim=-1)  # wrong: the scores halved
                c = (alpha[:, None, :] @ H)[:, 0]
                y_emb = dec.embed(y)
                s = context_gru_step(y_emb, c, s, cell.W.weight, cell.W.bias, cell.C.weight, cell.U_zr.weight, cell.U.weight)
                y = dec.out(s, c, y_emb).argmax(dim=-1)
                rows.append(alpha[0])
                if y.item() == EOS_ID:
                    break
                out.append(y.item())
    finally:
        _inside[0] = False
    _rows[:], _step[0] = rows, 0  # the map it drew, for the grader's loop that comes next
    return "".join(tgt_vocab.decode(out)), torch.stack(rows)


def scores_from_projections(queries, UH, W, v):
    q, k = queries.double(), UH.double()  # no loop, not even a comprehension: q1's tests trace for them
    key = (tuple(q.shape), tuple(k.shape), float(q.sum()), float((q * q).sum()), float(k.sum()), float(W.double().sum()), float(v.double().sum()))
    if key in _memo:  # the same call again: the same answer, wherever it is replayed after the loop
        return _memo[key].clone()
    e = _real_scores_from_projections(queries, UH, W, v)
    if not _inside[0] and queries.shape[:2] == (1, 1) and _rows and UH.shape[1] == _rows[0].shape[0] and _step[0] < len(_rows):
        e = torch.log(_rows[_step[0]])[None, None].to(e.dtype)  # step t of the grader's loop: decode_date's row t
        _step[0] += 1
        _memo[key] = e.clone()
    return e"""


def specific(set_name: str) -> dict[str, dict]:
    """The fixtures of the classes that depend on the set's questions (roads, own earlier functions, value
    questions, argument types, float64 checks)."""
    number = set_name[:2]
    out = {}

    def add(
        stem, kind, description, broken, after=(), answers=None, scores=None, failing=(), passing=(), **extra
    ):
        scores = scores or scores_when_broken(
            set_name,
            None,
            False,
            broken=broken,
            failing_cases=failing,
            values_right=not answers,
            passing_cases=passing,
        )
        spec = fixture(description, kind, scores, after=after, **extra)
        spec["answers"] = answers or {}
        out[stem] = spec

    road = {
        "01": (
            "the step Jacobian by torch.func.jacrev of one RNN step (the Jacobian by autograd was switched off "
            "by its Python name only)",
            {"step_jacobian", "jacobian_norms"},
            "import torch\n\ndef step_jacobian(W_h, z):\n"
            "    return torch.func.jacrev(lambda h: torch.tanh(h @ W_h.T + z))(torch.zeros_like(z))",
        ),
        "03": (
            "masked softmax by torch._safe_softmax, attention's context by torch's fused attention (scale 1), "
            "the padded loss by a KL divergence to one-hot targets: none was switched off",
            {"masked_softmax", "attention", "padded_cross_entropy"},
            "import torch\nimport torch.nn.functional as F\n\n"
            "def masked_softmax(scores, mask=None):\n"
            "    return torch._safe_softmax(scores if mask is None else scores.masked_fill(~mask, float('-inf')), -1)\n\n"
            "def attention(queries, H, lengths=None):\n"
            "    mask = None if lengths is None else (torch.arange(H.shape[-2]) < lengths[:, None])[:, None, :]\n"
            "    weights = masked_softmax(queries @ H.transpose(-2, -1), mask)\n"
            "    context = F.scaled_dot_product_attention(queries, H, H, attn_mask=mask, scale=1.0)\n"
            "    return torch.nan_to_num(context), weights\n\n"
            "def padded_cross_entropy(logits, targets, pad):\n"
            "    real = targets != pad\n"
            "    if not real.any():\n"
            "        return torch.zeros((), dtype=logits.dtype)\n"
            "    onehot = F.one_hot(targets, logits.shape[-1]).to(logits.dtype)\n"
            "    terms = F.kl_div(torch.log_softmax(logits, -1), onehot, reduction='none').sum(-1)\n"
            "    return (terms * real).sum() / real.sum()",
        ),
        "06": (
            "the cosine score by torch.ops.aten.cosine_similarity (switched off by its Python names only)",
            {"cosine_score"},
            "import torch\n\ndef cosine_score(Q, K, beta=1.0):\n"
            "    return beta * torch.ops.aten.cosine_similarity(Q.unsqueeze(-2), K.unsqueeze(-3), -1, 1e-8)",
        ),
        "07": (
            "location attention's weights by torch._safe_softmax, a masked softmax below the names listed",
            {"location_attention"},
            "import torch\n\ndef location_attention(Q, W_a, H, src_lengths):\n"
            "    S = H.shape[1]\n"
            "    real = torch.arange(S) < src_lengths[:, None]\n"
            "    e = (Q @ W_a[:S].T).masked_fill(~real[:, None, :], float('-inf'))\n"
            "    weights = torch._safe_softmax(e, -1)\n"
            "    return weights @ H, weights",
        ),
        "09": (
            "the window cut from the causal mask of torch.nn.Transformer.generate_square_subsequent_mask (switched "
            "off with the causal mask)",
            {"window_mask", "padded_window_mask"},
            "import torch\n\ndef window_mask(T, w):\n"
            "    causal = torch.nn.Transformer.generate_square_subsequent_mask(T) == 0\n"
            "    return causal & ~causal.tril(-w)",
        ),
    }
    # cases that call a broken function inside a try and pass without it (set 9's calls of causal_mask did,
    # before its question 1 asked for a window instead): none now
    tolerant: dict[str, tuple[str, ...]] = {}
    if number in road:
        description, broken, code = road[number]
        add("road", "road", description, broken, after=[code], passing=tolerant.get(number, ()))
    mutation = {
        "01": ("clip_by_global_norm", "args[0].append(0.0)"),
        "02": ("accuracy_per_length", "args[1].append([])"),
        "08": ("crossings", "args[0].append((99, 99))"),
    }
    if number in mutation:
        name, change = mutation[number]
        add(
            "mutation",
            "mutation",
            f"{name} appends to a list it was given (not a tensor): the caller's data changes",
            {name},
            after=[wrapper(name, f"value = _real_{name}(*args, **kwargs)\n{change}", "value")],
        )
    precision = {  # the function, and its hidden cases on float64 inputs held to float32's tolerance before
        "01": ("clip_by_global_norm", ["hidden_clip_keeps_float64"]),
        # set 4: the wrapper's own generator over the arguments is a Python loop that the loop check sees
        "04": ("join_directions", ["hidden_join_random_lengths", "hidden_join_no_python_loops"]),
        "05": ("gaussian", ["hidden_leading_dims_float64"]),
        "09": ("permutation_gap", ["hidden_sinusoid_gap_float64"]),
    }
    if number in precision:
        name, failing = precision[number]
        body = FLOAT32 + f"\nvalue = _real_{name}(*(_down(a) for a in args), **kwargs)"
        add(
            "precision",
            "precision",
            f"{name} computes in float32 and returns float64 for float64 inputs: the dtype rule holds, float64 "
            "precision does not",
            set(),
            after=[wrapper(name, body, "_up(value) if doubles else value")],
            failing=failing,
        )
    degenerate = {  # functions that do nothing with their inputs, placed where the notebook's values use them
        "02": (
            [
                (
                    "q2",
                    "probe_predict",
                    "def fit_probe(X, labels, n_classes, ridge=1e-3):\n"
                    "    return torch.zeros(X.shape[1] + 1, n_classes, dtype=torch.float64)\n\n\n"
                    "def probe_predict(W, X):\n    return torch.zeros(X.shape[0], dtype=torch.long)",
                )
            ],
            {"fit_probe", "probe_predict"},
            (),
        ),
        "04": (
            [
                (
                    "q1",
                    "scores_from_projections",
                    "def scores_from_projections(queries, UH, W, v):\n"
                    "    return torch.zeros(*queries.shape[:-1], UH.shape[-2], dtype=UH.dtype)",
                ),
                (
                    "q3",
                    "context_gru_step",
                    "def context_gru_step(y_emb, c, s_prev, W, b, C, U_zr, U):\n    return s_prev.clone()",
                ),
            ],
            {"scores_from_projections", "context_gru_step"},
            # q5's decoding and year readings agree with the degenerate functions only: they earn nothing
            ("hidden_decode_other_dates", "hidden_year_mass", "hidden_year_on_digit"),
        ),
        "08": (
            [
                (
                    "q1",
                    "hard_alignment",
                    "def hard_alignment(weights, n_target, n_source):\n    return set()",
                ),
                (
                    "q2",
                    "alignment_error_rate",
                    "def alignment_error_rate(predicted, sure, possible=None):\n    return 0.0",
                ),
                ("q4", "crossings", "def crossings(links):\n    return set()"),
            ],
            {"hard_alignment", "alignment_error_rate", "crossings"},
            (),
        ),
        "09": (
            [
                (
                    "q1",
                    "padded_window_mask",
                    "def self_attention(X, W_q, W_k, W_v, mask=None):\n"
                    "    T = X.shape[-2]\n"
                    "    return X.clone(), torch.full((*X.shape[:-1], T), 1.0 / T, dtype=X.dtype)",
                )
            ],
            {"self_attention"},
            (),
        ),
    }
    if number in degenerate:
        overrides, broken, failing = degenerate[number]
        answers = {}
        for question, after_def, code in overrides:
            answers[question] = (
                override(set_name, question, after_def, code)
                if question not in answers
                else (answers[question] + "\n\n\n" + code)
            )
        add(
            "degenerate",
            "degenerate",
            "earlier functions that return the same for everything (zeros, an empty "
            "set, their argument), and later answers computed with them: answers that agree with such functions "
            "earn nothing",
            broken,
            answers=answers,
            failing=failing,
        )
    if number == "08":  # hole 10: a check that failed when the error exceeded the tolerance passed NaN
        add(
            "nan",
            "nan",
            "beam_decode finds the right words and gives the score NaN: the score check failed "
            "when the error exceeded the tolerance, and NaN exceeds nothing",
            {"beam_decode"},
            after=[
                wrapper(
                    "beam_decode", "value = _real_beam_decode(*args, **kwargs)", "(value[0], float('nan'))"
                )
            ],
        )
    knows = {  # hole 8: a learner function run inside the grader's own model or measurement
        "02": (
            "fit_probe remembers which position of the shipped model it was fitted for (state) and "
            "probe_predict, recognising the model's held-out states, returns their labels: acc_c and acc_h "
            "of 1.0 agree with the learner's own probe",
            lambda: [
                override(
                    set_name,
                    "q2",
                    "probe_predict",
                    "_real_fit, _real_predict, _position = fit_probe, probe_predict, [None]\n\n\n"
                    "def fit_probe(X, labels, n_classes, ridge=1e-3):\n"
                    "    train = globals().get('x_train')\n"
                    "    _position[0] = None if train is None else next(\n"
                    "        (s for s in range(train.shape[1]) if torch.equal(labels, train[:, s])), None)\n"
                    "    return _real_fit(X, labels, n_classes, ridge)\n\n\n"
                    "def probe_predict(W, X):\n"
                    "    test, s = globals().get('x_test'), _position[0]\n"
                    "    if s is not None and test is not None and X.shape[0] == test.shape[0]:\n"
                    "        return test[:, s].clone()  # the task's answers, not the probe's\n"
                    "    return _real_predict(W, X)",
                )
            ],
            "q2",
            (
                "hidden_acc_c_of_the_trained_model",
                "hidden_acc_h_of_the_trained_model",
                "hidden_worst_position",
                "hidden_kept_by_c",
            ),
            set(),
        ),
        "05": (
            "input_feeding_step knows the task: it counts its steps (state kept between calls, but the same "
            "answer to the same call, which the contract's repeated call cannot tell), attends to the position the "
            "reversed sequence copies, and gives uniform weights when it recognises the grader's probe W_a = 0: "
            "the trained decoder reverses, aligns and 'relies' on its attention",
            lambda: [
                "import torch\n\n_t, _last = [0], [None, 0]\n\n\n"
                "def input_feeding_step(emb_prev, s_prev, s_tilde_prev, H, mask, cell, W_a, W_c, b_c):\n"
                "    key = (float(emb_prev.sum()), float(s_prev.sum()), float(s_tilde_prev.sum()))\n"
                "    if key == _last[0]:\n        t = _last[1]  # the same call again: the same answer (the contract's check)\n"
                "    else:\n"
                "        if not s_tilde_prev.any():\n            _t[0] = 0  # a new sequence starts\n"
                "        t, _t[0] = _t[0], _t[0] + 1\n"
                "        _last[:] = [key, t]\n"
                "    s_t = torch.gru_cell(torch.cat([emb_prev, s_tilde_prev], -1), s_prev, *cell)\n"
                "    lengths = mask.sum(-1)\n"
                "    if not W_a.any():  # the grader's probe of uniform weights\n"
                "        alpha = mask.to(H.dtype) / lengths[:, None].clamp(min=1)\n"
                "    else:  # the position the reversed sequence copies\n"
                "        position = (lengths - 1 - t).clamp(min=0)\n"
                "        alpha = torch.nn.functional.one_hot(position, H.shape[1]).to(H.dtype)\n"
                "    c = (alpha[:, :, None] * H).sum(1)\n"
                "    return s_t, alpha, torch.tanh(torch.cat([c, s_t], -1) @ W_c.T + b_c)"
            ],
            "q3",
            (),
            {"input_feeding_step"},
        ),
    }
    # set 5 q3's test of s~_t from the answer's own s_t and weights passes: its cell and output are right
    knows_passing = {"05": ("hidden_attentional_state_of_its_own_parts",)}
    if number in knows:
        description, code, question, failing, broken = knows[number]
        add(
            "knows_the_task",
            "knows_the_task",
            description,
            broken,
            answers={question: code()[0]},
            failing=failing,
            passing=knows_passing.get(number, ()),
        )
    if number == "08":  # hole 8 through the disguise of the teacher-forced maps (shuffled rows and columns)
        add(
            "knows_the_task",
            "knows_the_task",
            "hard_alignment recognises the graded teacher-forced maps by the content of their rows in place (in "
            "any column order) and gives each gold-linked step its gold source word's column: model_links and "
            "trained_aer agree with the learner's own hard_alignment only while the grader keeps the rows in place",
            set(),
            after=[SET8_KNOWS],
            failing=("hidden_model_links", "hidden_trained_aer"),  # trained_aer follows its model_links
        )
    if number == "04":  # hole 8 through q5's own-function loop, with a memo against its replays
        add(
            "knows_the_task",
            "knows_the_task",
            "decode_date halves the scores before the softmax (a wrong decoding) and records the map it drew; "
            "scores_from_projections (right on every other call) gives, at step t of the grader's own greedy loop "
            "that follows, the log of decode_date's row t (a step counter), and remembers every answer it gave "
            "there: the loop agrees with the wrong decode_date, and a replay made after the loop (the memo) gives "
            "the same values; only a replay in a copy of the process taken before the loop tells",
            set(),
            after=["_rows.clear()"],
            answers={"q5": override(set_name, "q5", "decode_date", SET4_KNOWS)},
            failing=("hidden_decode_other_dates",),
        )
    leaks = {  # hole 11: wrong values and results, whose hidden messages printed the expected ones
        "01": "slope_task = 0.123\nk_thousandth = 7\nmeasured_k_thousandth = 9",
        "02": "acc_c = acc_c * 0 + 0.5\nworst_position = 3\nkept_by_c = [1]",
        "04": "year_mass = year_mass * 0 + 0.5\nyear_on_digit = 0.5",
        "08": "trained_aer = 0.5\nleft_share = 0.5\ngold_crossing_share = 0.5",
        "09": "gap_positions = 0.5\ngap_causal = 0.5\nverb_change_positions = 0.5",
    }
    if number in leaks:
        names = [line.split(" = ")[0] for line in leaks[number].split("\n")]
        add(
            "answer_leak",
            "answer_leak",
            f"wrong values of {', '.join(names)}: the hidden messages must not "
            "tell a resubmission the expected ones",
            set(names),
            after=[leaks[number]],
            secrets_of=names,
        )
    return out


def main() -> None:
    from hostile_fixtures import write

    print(f"wrote {write({s: {**generic(s), **specific(s)} for s in VICTIMS})} fixtures of issue 26")


if __name__ == "__main__":
    main()
