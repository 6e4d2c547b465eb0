# ruff: noqa: E501 - the fixtures are notebook code, kept as written
"""Writes the hostile fixtures (tests/exercises/fixtures/*/hostile_*.json) of issue 13's five classes.

    .venv/bin/python tests/exercises/hostile_fixtures.py

Each is a submission a determined learner could hand in: it tries to read what it must not (reading), to
outlive its grading (outliving), to break the run for everyone (breaking), to reach a switched-off function
by another road (switch_off), or to pass tests that trust it (trust). A fixture whose "base" is "untouched"
starts from the blank learner notebook: any point it gets is unfair. The scores they must get are declared
in SETS below and checked by test_grading.py, with the leak checks of test_hostile.py.
"""

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"

# Reading: everything a notebook could look for, executed if found (course masters, bundles, classmates).
STEAL = r"""import glob, json, os, pathlib
import attnlib
roots = ["/", "/work", "/work/main", "/tmp", "/root", os.getcwd(), str(pathlib.Path(attnlib.__file__).resolve().parents[1])]
for pid in [p for p in os.listdir("/proc") if p.isdigit()] + ["self", str(os.getppid())]:
    for link in ("cwd", "root", "exe"):
        try:
            roots.append(os.readlink(f"/proc/{pid}/{link}"))
        except OSError:
            pass
    try:
        args = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="ignore").split("\0")
        roots += [a for a in args if a.startswith("/")] + [os.path.dirname(a) for a in args if a.startswith("/")]
    except OSError:
        pass
stolen = []
for root in roots:
    for pattern in ("*.ipynb", "*/*.ipynb", "exercises/source/*.ipynb", "exercises/dist/*/*.ipynb", "../*.ipynb", "*.zip"):
        stolen += glob.glob(os.path.join(root, pattern))
for path in stolen:
    try:
        if path.endswith(".zip"):
            import zipfile
            print(zipfile.ZipFile(path).namelist())
            continue
        for cell in json.load(open(path))["cells"]:
            if cell["cell_type"] == "code":
                try:
                    exec("".join(cell["source"]), globals())
                except BaseException:
                    pass
    except BaseException:
        pass"""

# Reading, into the feedback: everything visible, in an error message that the feedback shows.
LEAK = r"""import glob, os
def _everything():
    seen = [repr(dict(os.environ))]
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        for name in ("cmdline", "environ"):
            try:
                seen.append(open(f"/proc/{pid}/{name}", "rb").read().decode(errors="replace"))
            except OSError as e:
                seen.append(str(e))
    seen.append(repr(glob.glob("/*") + glob.glob("/work/*") + glob.glob("/work/main/*") + glob.glob("/tmp/*")))
    seen.append(repr(glob.glob(os.path.expanduser("~/*"))))
    return " | ".join(seen)"""

# Reading, the grader's memory: every readable mapping of every visible process, searched for test code.
MEMORY = r"""import os, re
found = []
for pid in [p for p in os.listdir("/proc") if p.isdigit() and p != str(os.getpid())] + [str(os.getppid())]:
    try:
        maps = open(f"/proc/{pid}/maps").read().splitlines()
        with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
            for line in maps[:200]:
                start, end = (int(x, 16) for x in line.split()[0].split("-"))
                try:
                    mem.seek(start)
                    chunk = mem.read(min(end - start, 2**20))
                except OSError:
                    continue
                found += re.findall(rb"@test_case[^\n]{0,200}", chunk)
    except OSError:
        pass
if found:
    raise RuntimeError(repr(found[:20]))"""

# Outliving: a process in its own session that waits for the grader to write scores.csv, then rewrites it.
DAEMON = r"""import os, time, glob
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        end = time.time() + 60
        while time.time() < end:
            for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
                try:
                    cwd = os.readlink(f"/proc/{pid}/cwd")
                except OSError:
                    continue
                for path in glob.glob(os.path.join(cwd, "**", "scores.csv"), recursive=True):
                    try:
                        open(path, "a").write("pwned-by-daemon,10,10,10,10,40,10\n")
                    except OSError:
                        pass
            time.sleep(0.5)
        os._exit(0)
    os._exit(0)"""

# Outliving: as many processes as the kernel allows, each holding on.
FORK_BOMB = r"""import os, time
children = 0
for _ in range(10_000):
    try:
        if os.fork() == 0:
            time.sleep(120)
            os._exit(0)
        children += 1
    except OSError:
        break"""

# Breaking: forged replies on the grader's channel (found through gc), nested too deeply, of the wrong types.
FORGE = r"""import gc
from multiprocessing.connection import Connection
for _obj in gc.get_objects():
    if isinstance(_obj, Connection):
        _obj.send_bytes(b"[" * 200_000 + b"]" * 200_000)
        _obj.send_bytes(b'{"ok": true, "value": {"t": "tensor", "dtype": "float32", "shape": "x", "data": 5}}')
        _obj.send_bytes(b'{"ok": true, "names": {"x": {"kind": "value", "value": {"t": "dict", "items": [1]}}}, "errors": 7}')"""

BLOCK_ALARM = r"""import signal
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGXCPU})
signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    pass"""

KILL_ALL = r"""import os, signal
for _sig in (signal.SIGSTOP, signal.SIGKILL):
    try:
        os.kill(-1, _sig)
    except OSError:
        pass
for _pid in range(1, 500):
    try:
        os.kill(_pid, signal.SIGKILL)
    except OSError:
        pass"""

PARSE_BOMB = "x = " + "1+" * 1_000_000 + "1"

# Switch-off: every other road to an object.
ROADS = r"""import gc, importlib, sys
def _road(dotted):
    module_name, _, attr = dotted.rpartition(".")
    candidates = []
    module = importlib.import_module(module_name)
    candidates.append(getattr(module, attr, None))
    candidates.append(vars(module).get(attr))
    try:
        candidates.append(getattr(importlib.reload(module), attr, None))
    except Exception:
        pass
    for name, mod in list(sys.modules.items()):
        if name.startswith(module_name.split(".")[0]):
            candidates.append(getattr(mod, attr, None))
    candidates += [o for o in gc.get_objects() if callable(o) and getattr(o, "__name__", None) == attr]
    try:
        spec = importlib.util.spec_from_file_location("_copy", module.__file__)
        copy = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(copy)
        candidates.append(getattr(copy, attr, None))
    except Exception:
        pass
    return [c for c in candidates if c is not None]
_roads = {}
def _first_working(dotted, *args, **kwargs):
    if dotted not in _roads:
        _roads[dotted] = _road(dotted)
    for fn in _roads[dotted]:
        try:
            return fn(*args, **kwargs)
        except Exception:
            continue
    raise RuntimeError("no road left")"""


# Trust: the helpers of the public tests that ship with attnlib, executed as the learner's own code.
COPY_PUBLIC = r"""import ast, json, pathlib
import attnlib
def _public_helper(set_name, question, name):
    path = pathlib.Path(attnlib.__file__).parent / "grading" / "public" / f"{set_name}.json"
    source = json.loads(path.read_text())["tests"][f"{question}.py"]
    tree = ast.parse(source)
    space = {}
    exec("import torch\nimport math\nimport attnlib\nfrom attnlib.grading import checks", space)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.Assign)) and not getattr(node, "decorator_list", None):
            exec(ast.get_source_segment(source, node), space)
    return space[name]"""


def victim(body_lines: list[str], signature: str) -> str:
    return signature + "\n" + "\n".join("    " + line for line in body_lines)


SETS = {
    "01_rnn_gradients": {  # the contract of every call: inputs left alone
        "full": {"q1": 2, "q2": 3, "q3": 2, "q4": 2},
        "victim": None,
        "switch_off": [],
        "trust": [
            (
                "clips_the_gradients_in_place",
                "q4 right values, but clip_by_global_norm scales the caller's gradients in place (mul_), as "
                "torch's clip_grad_norm_ does to parameters: every call that clips changes its input",
                {
                    "q4": "def clip_by_global_norm(grads, max_norm):\n"
                    "    total = sum(float((g.double() ** 2).sum()) for g in grads) ** 0.5\n"
                    "    scale = min(1.0, max_norm / (total + 1e-6))\n"
                    "    for g in grads:\n"
                    "        g.mul_(scale)\n"
                    "    return grads, total",
                },
                {"q4": 0.5},  # the call that needs no clipping (scale 1) changes nothing
                {"contract": {"clip_by_global_norm": "mutation"}},
            ),
            (
                "copies_the_public_tests_reference",
                "q1's step_jacobian is the public tests' helper tanh_factor, which computed the answer in plain "
                "torch: the public file now holds only its values for the public examples (checks.recorded)",
                {
                    "q1": COPY_PUBLIC
                    + "\n\n\nstep_jacobian = _public_helper('01_rnn_gradients', 'q1', 'tanh_factor')"
                },
                {"q1": 0, "q2": 0},  # the solutions' jacobian_norms calls this step_jacobian
            ),
        ],
    },
    "02_bottleneck": {  # the copy of a public reference that was plain torch
        "full": {"q1": 2, "q2": 3, "q3": 3},
        "victim": None,
        "switch_off": [],
        "trust": [
            (
                "copies_the_public_tests_reference",
                "q3's probe_accuracy is the public tests' accuracy_reference: the public file holds only its "
                "values for the public example (checks.recorded), so it answers nothing else",
                {
                    "q3": COPY_PUBLIC
                    + "\n\n\nprobe_accuracy = _public_helper('02_bottleneck', 'q3', 'accuracy_reference')\n"
                    "acc_c = torch.tensor([probe_accuracy(c_train, x_train[:, s], c_test, x_test[:, s], len(vocab), 1e-3) "
                    "for s in range(S)])\n"
                    "acc_h = torch.tensor([probe_accuracy(H_train[:, s], x_train[:, s], H_test[:, s], x_test[:, s], "
                    "len(vocab), 1e-3) for s in range(S)])\n"
                    "worst_position = int(acc_c.argmin()) + 1\n"
                    "kept_by_c = (torch.nonzero(acc_c >= 0.3).flatten() + 1).tolist()"
                },
                {"q3": 0},
            ),
        ],
    },
    "03_dot_product_attention": {
        "full": {"q1": 2, "q2": 3, "q3": 3, "q4": 2, "q6": 2},
        "victim": ("q1", "def dot_scores(s, H):"),
        "switch_off": [
            (
                "reaches_masked_softmax_and_attend_by_other_roads",
                "q2 and q3 call attnlib's masked_softmax and attend through attnlib.masking, reload, gc and a "
                "fresh execution of the module's file",
                {
                    "q2": ROADS + "\ndef masked_softmax(scores, mask=None):\n"
                    "    return _first_working('attnlib.masking.masked_softmax', scores, mask)",
                    "q3": "def attention(queries, H, lengths=None):\n"
                    "    mask = None if lengths is None else _first_working('attnlib.masking.lengths_to_mask', "
                    "lengths, H.shape[1])\n"
                    "    scores = queries @ H.transpose(-2, -1)\n"
                    "    return _first_working('attnlib.masking.attend', scores, H, mask)",
                },
                {"q2": 0, "q3": 0},
            ),
        ],
        "trust": [
            (
                "copies_the_public_tests_reference",
                "q4's padded_cross_entropy is the public tests' own reference helper (loss_reference), shipped "
                "with attnlib: the public file holds only its values for the public examples (checks.recorded), "
                "and the real helper calls attnlib's training loss, which is switched off while grading",
                {
                    "q4": COPY_PUBLIC
                    + "\n\n\npadded_cross_entropy = _public_helper('03_dot_product_attention', 'q4', 'loss_reference')"
                },
                {"q4": 0},
            ),
            (
                "future_annotations_are_not_inherited",
                "q1's annotations name a class defined later: fails in Jupyter (no `from __future__ import "
                "annotations`), so it must fail in the grader too",
                {
                    "q1": "def dot_scores(s: Later, H: Later) -> Later:\n    return H @ s\n\n\nclass Later:\n    pass"
                },
                {"q1": 0},
            ),
            (
                "loop_over_the_batch_in_map_and_a_helper",
                "q3 right values, computed by map over the batch with a helper: the no-loops checks see it run",
                {
                    "q3": "def _one(q, h, n):\n"
                    "    e = q @ h.T\n"
                    "    e = e.masked_fill(torch.arange(h.shape[0]) >= n, float('-inf'))\n"
                    "    w = torch.softmax(e, dim=-1)\n"
                    "    return w @ h, w\n\n\n"
                    "def attention(queries, H, lengths=None):\n"
                    "    lengths = torch.full((H.shape[0],), H.shape[1]) if lengths is None else lengths\n"
                    "    context, weights = zip(*map(_one, queries, H, lengths))\n"
                    "    return torch.stack(context), torch.stack(weights)",
                },
                {"q3": 2},  # the loop checks (0.5) and an empty sentence (NaN weights, 0.5)
            ),
        ],
    },
    "04_bahdanau_attention": {  # attnlib.chunked_additive, the additive fast path, by every road
        "full": {"q1": 2, "q2": 3, "q3": 3, "q4": 2.5, "q5": 3},
        "victim": None,
        "switch_off": [
            (
                "reaches_chunked_additive",
                "q1 and q2 compute the additive scores with attnlib.chunked_additive's hidden states (through "
                "reload, gc and a fresh execution of its file) and q2 the masked weights with its fused "
                "additive attention's softmax",
                {
                    "q1": ROADS + "\ndef scores_from_projections(queries, UH, W, v):\n"
                    "    return _first_working('attnlib.chunked_additive._hidden', queries @ W.T, UH) @ v",
                    "q2": "import attnlib.chunked_additive as fast_additive\n\n\n"
                    "def batch_alignment(scores, H, src_mask, tgt_mask):\n"
                    "    if not bool(src_mask.any(dim=-1).all()):\n"
                    "        raise ValueError('src_mask: a sentence has no real source position')\n"
                    "    keep = tgt_mask[:, :, None] & src_mask[:, None, :]\n"
                    "    e = scores.masked_fill(~keep, -1e30)\n"
                    "    m = e.amax(dim=-1, keepdim=True)\n"
                    "    weights = fast_additive._weights(e, m, (torch.exp(e - m) * keep).sum(-1, keepdim=True), keep)\n"
                    "    return weights, weights @ H",
                },
                {"q1": 0, "q2": 0, "q5": 0},  # q5 decodes with q1's scores
            ),
        ],
        "trust": [
            (
                "computes_in_float64",
                "q3 right values, computed and returned in float64 whatever the inputs: float32 in, float64 out",
                {
                    "q3": "def context_gru_step(y_emb, c, s_prev, W, b, C, U_zr, U):\n"
                    "    y_emb, c, s_prev, W, b, C, U_zr, U = (x.double() for x in (y_emb, c, s_prev, W, b, C, U_zr, U))\n"
                    "    Wy_z, Wy_r, Wy_s = (y_emb @ W.T + b).chunk(3, dim=-1)\n"
                    "    Cc_z, Cc_r, Cc_s = (c @ C.T).chunk(3, dim=-1)\n"
                    "    Us_z, Us_r = (s_prev @ U_zr.T).chunk(2, dim=-1)\n"
                    "    z = torch.sigmoid(Wy_z + Us_z + Cc_z)\n"
                    "    r = torch.sigmoid(Wy_r + Us_r + Cc_r)\n"
                    "    candidate = torch.tanh(Wy_s + (r * s_prev) @ U.T + Cc_s)\n"
                    "    return z * s_prev + (1 - z) * candidate",
                },
                # the float64 case; q5's float32 output layer cannot take its float64 state
                {"q3": 0.5, "q5": 0},
                {"contract": {"context_gru_step": "dtype"}},
            ),
        ],
    },
    "06_score_functions": {  # the concat score from attnlib.chunked_additive
        "full": {"q1": 2, "q2": 2, "q3": 2, "q4": 3, "q6": 2},
        "victim": None,
        "switch_off": [
            (
                "concat_by_chunked_additive",
                "q4's concat_score takes the hidden states of attnlib.chunked_additive, through reload, gc and a "
                "fresh execution of its file",
                {
                    "q4": ROADS + "\ndef split_concat(W, d_q):\n"
                    "    return W[:, :d_q], W[:, d_q:]\n\n\n"
                    "def concat_score(Q, K, W, v):\n"
                    "    W_q, W_k = split_concat(W, Q.shape[-1])\n"
                    "    qp, kp = Q @ W_q.T, K @ W_k.T\n"
                    "    lead = torch.broadcast_shapes(qp.shape[:-2], kp.shape[:-2])\n"
                    "    T, S, A = qp.shape[-2], kp.shape[-2], qp.shape[-1]\n"
                    "    qp, kp = qp.expand(*lead, T, A).reshape(-1, T, A), kp.expand(*lead, S, A).reshape(-1, S, A)\n"
                    "    return (_first_working('attnlib.chunked_additive._hidden', qp, kp) @ v).reshape(*lead, T, S)",
                },
                {"q4": 0.75},  # split_concat is right
            ),
        ],
        "trust": [],
    },
    "05_luong_attention": {
        "full": {"q1": 2, "q2": 3, "q3": 3, "q4": 2, "q6": 3},
        "victim": ("q1", "def gaussian(p, S, D):"),
        "switch_off": [
            (
                "reaches_local_gaussian_by_other_roads",
                "q1 calls attnlib.local.gaussian through reload, gc and a fresh execution of its file",
                {
                    "q1": ROADS
                    + "\ndef gaussian(p, S, D):\n    return _first_working('attnlib.local.gaussian', p, S, D)"
                },
                {"q1": 0},
            ),
        ],
        "trust": [
            (
                "copies_the_public_tests_reference",
                "q1's gaussian is the public tests' own reference helper (gaussian_by_hand), shipped with attnlib: "
                "it calls attnlib, which is switched off while grading",
                {
                    "q1": COPY_PUBLIC
                    + "\n\n\ngaussian = _public_helper('05_luong_attention', 'q1', 'gaussian_by_hand')"
                },
                {"q1": 0},
            ),
            (
                "input_feeding_step_loops_in_a_helper",
                "q3 right input_feeding_step, its scores one source position at a time in a helper: the tests "
                "without loops fail (2 of q3's 3 points, the rubric's forbidden approach); the decoder of q4, built "
                "on it, still trains",
                {
                    "q3": "def _score(s, h, W_a):\n"
                    "    return ((s @ W_a) * h).sum(-1)\n\n\n"
                    "def input_feeding_step(emb_prev, s_prev, s_tilde_prev, H, mask, cell, W_a, W_c, b_c):\n"
                    "    s = gru_cell(torch.cat([emb_prev, s_tilde_prev], dim=-1), s_prev, cell)\n"
                    "    scores = torch.stack([_score(s, H[:, j], W_a) for j in range(H.shape[1])], dim=-1)\n"
                    "    alpha = masked_softmax(scores, mask)\n"
                    "    context = (alpha[:, None, :] @ H)[:, 0]\n"
                    "    return s, alpha, torch.tanh(torch.cat([context, s], dim=-1) @ W_c.T + b_c)",
                },
                {"q3": 1.0},
            ),
        ],
    },
    "08_translation": {
        "full": {"q1": 2, "q2": 2, "q3": 3, "q4": 3, "q5": 5},
        "victim": ("q5", "def beam_decode(transitions, width, max_len, alpha=1.0):"),
        "switch_off": [
            (
                "reaches_beam_step_by_other_roads",
                "q4 calls attnlib's beam_step and beam_search through reload, gc and a fresh execution of the file",
                {
                    "q5": ROADS + "\ndef beam_step(beam_scores, log_probs, width):\n"
                    "    return _first_working('attnlib.seq2seq.decoding.beam_step', beam_scores, log_probs, width)",
                },
                {"q5": 0},
            ),
        ],
        "trust": [],
    },
    "07_matrix_form": {  # the copy of the public tests' reference, a stateful answer
        "full": {"q1": 2, "q2": 3, "q3": 2, "q4": 3},
        "victim": None,
        "switch_off": [],
        "trust": [
            (
                "stateful_location_attention_right_once_per_input",
                "q1's location_attention is right the first time it sees an input and returns its own previous "
                "weights reversed after: every test calls it once per input, so only the contract's repeated call "
                "shows it",
                {
                    "q1": "_seen = {}\n\n\n"
                    "def location_attention(Q, W_a, H, src_lengths):\n"
                    "    S = H.shape[1]\n"
                    "    real = torch.arange(S) < src_lengths[:, None]\n"
                    "    weights = masked_softmax(Q @ W_a[:S].T, real[:, None, :])\n"
                    "    key = (tuple(Q.flatten().tolist()), tuple(H.flatten().tolist()))\n"
                    "    if key in _seen:\n"
                    "        weights = _seen[key].flip(-1)\n"
                    "    _seen[key] = weights\n"
                    "    return weights @ H, weights",
                },
                {"q1": 0},
                {"contract": {"location_attention": "repeat"}},
            ),
            (
                "copies_the_public_tests_reference",
                "q4's chunk_stats is the public tests' own reference helper (stats_reference), shipped with attnlib: "
                "it calls attnlib's online-softmax step, which is switched off while grading",
                {
                    "q4": COPY_PUBLIC
                    + "\n\n\nchunk_stats = _public_helper('07_matrix_form', 'q4', 'stats_reference')\n\n\n"
                    "def merge_stats(m_a, l_a, n_a, m_b, l_b, n_b):\n"
                    "    m = torch.maximum(m_a, m_b)\n"
                    "    a, b = torch.exp(m_a - m), torch.exp(m_b - m)\n"
                    "    return m, l_a * a + l_b * b, n_a * a + n_b * b\n\n\n"
                    "def two_chunk_context(e, V, split):\n"
                    "    m, l, n = merge_stats(*chunk_stats(e[..., :split], V[..., :split, :]), "
                    "*chunk_stats(e[..., split:], V[..., split:, :]))\n"
                    "    return n / l",
                },
                {"q4": 1},  # merge_stats is right
            ),
        ],
    },
    "09_self_attention": {
        "full": {"q1": 2, "q2": 3, "q3": 2, "q4": 3, "q5": 2, "q7": 2},
        "victim": ("q2", "def multi_head_self_attention(X, W_q, W_k, W_v, W_o, h, mask=None):"),
        "switch_off": [
            (
                "reaches_torch_attention_internals",
                "q2 calls torch's fused attention through torch._C._nn, torch.ops.aten, reload and gc, and "
                "nn.MultiheadAttention through torch.nn.modules.activation and TransformerEncoderLayer",
                {
                    "q2": ROADS + "\nimport torch\n\n\n"
                    "def split_heads(x, h):\n"
                    "    *lead, T, d = x.shape\n"
                    "    return x.reshape(*lead, T, h, d // h).transpose(-3, -2)\n\n\n"
                    "def merge_heads(x):\n"
                    "    *lead, h, T, hs = x.shape\n"
                    "    return x.transpose(-3, -2).reshape(*lead, T, h * hs)\n\n\n"
                    "def multi_head_self_attention(X, W_q, W_k, W_v, W_o, h, mask=None):\n"
                    "    Q, K, V = (split_heads(X @ W.T, h) for W in (W_q, W_k, W_v))\n"
                    "    fused = [torch._C._nn.scaled_dot_product_attention, torch.ops.aten.scaled_dot_product_attention]\n"
                    "    fused += _road('torch.nn.functional.scaled_dot_product_attention')\n"
                    "    for fn in fused:\n"
                    "        try:\n"
                    "            out = fn(Q, K, V, attn_mask=None if mask is None else ~mask)\n"
                    "            return merge_heads(out) @ W_o.T, torch.softmax(Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5, -1)\n"
                    "        except Exception:\n"
                    "            pass\n"
                    "    layer = torch.nn.modules.activation.MultiheadAttention(X.shape[-1], h, bias=False)\n"
                    "    return layer(X, X, X)",
                },
                {"q2": 0.5},  # split_heads and merge_heads are right
            ),
            (
                "reaches_the_transformer_package",
                "q1's window is cut from attnlib.transformer's shifted_causal_mask(T, 0), and the given "
                "self_attention is replaced by cross_attention(X, X, ...); q2 runs "
                "attnlib.transformer.MultiHeadAttention and an EncoderBlock",
                {
                    "q1": "from attnlib import transformer\n\n\n"
                    "def window_mask(T, w):\n"
                    "    causal = transformer.blocks.shifted_causal_mask(T, 0)\n"
                    "    return causal & ~causal.tril(-w)\n\n\n"
                    "def padded_window_mask(lengths, T, w):\n"
                    "    return window_mask(T, w) & left_padding_mask(lengths, T)[:, None, :]\n\n\n"
                    "def self_attention(X, W_q, W_k, W_v, mask=None):\n"
                    "    return transformer.attention.cross_attention(X, X, W_q, W_k, W_v, mask)",
                    "q2": "import torch\nfrom attnlib import transformer\n\n\n"
                    "def split_heads(x, h):\n"
                    "    *lead, T, d = x.shape\n"
                    "    return x.reshape(*lead, T, h, d // h).transpose(-3, -2)\n\n\n"
                    "def merge_heads(x):\n"
                    "    *lead, h, T, hs = x.shape\n"
                    "    return x.transpose(-3, -2).reshape(*lead, T, h * hs)\n\n\n"
                    "def multi_head_self_attention(X, W_q, W_k, W_v, W_o, h, mask=None):\n"
                    "    d = X.shape[-1]\n"
                    "    try:\n"
                    "        layer = transformer.MultiHeadAttention(d, h).to(X.dtype)\n"
                    "    except Exception:\n"
                    "        layer = transformer.EncoderBlock(d, h, 4 * d).self_attention.to(X.dtype)\n"
                    "    with torch.no_grad():\n"
                    "        layer.W_q.weight.copy_(W_q)\n"
                    "        layer.W_k.weight.copy_(W_k)\n"
                    "        layer.W_v.weight.copy_(W_v)\n"
                    "        layer.W_o.weight.copy_(W_o)\n"
                    "    return layer(X, X, mask)",
                },
                {"q1": 0, "q2": 0.5, "q4": 0},  # split and merge heads are right; q4 needs self_attention
            ),
        ],
        "trust": [
            (
                "stateful_self_attention_forges_the_q4_reference",
                "the given self_attention is replaced by one that answers every second call with 0.7 and q4's "
                "gaps are 0.7: the old tests used the learner's self_attention as q4's reference and gave q4 full "
                "marks",
                {
                    "q1": "_calls = [0]\n\n\n"
                    "def window_mask(T, w):\n"
                    "    offset = torch.arange(T)[:, None] - torch.arange(T)[None, :]\n"
                    "    return (offset >= 0) & (offset < w)\n\n\n"
                    "def padded_window_mask(lengths, T, w):\n"
                    "    return window_mask(T, w) & left_padding_mask(lengths, T)[:, None, :]\n\n\n"
                    "def self_attention(X, W_q, W_k, W_v, mask=None):\n"
                    "    _calls[0] += 1\n"
                    "    out = torch.zeros(*X.shape[:-1], W_v.shape[0], dtype=X.dtype) + (0.7 if _calls[0] % 2 == 0 else 0.0)\n"
                    "    return out, torch.zeros(*X.shape[:-1], X.shape[-2], dtype=X.dtype)",
                    "q4": "def permutation_gap(X, perm, W_q, W_k, W_v, P=None, mask=None):\n"
                    "    return 0.0 if P is None and mask is None else 0.7\n\n\n"
                    "sides_plain = torch.zeros(2, 6, 8)\ngap_positions = 0.7\ngap_causal = 0.7\nverb_plain = torch.zeros(2, 8)\n"
                    "verb_change_positions = 0.7",
                },
                {"q4": 0},  # q1's masks are right
            ),
            (
                "copies_the_public_tests_reference",
                "q3's positional_encoding is the public tests' pe_variant, which (with its defaults) computed the "
                "sinusoid table in plain torch: the public file now holds only its values (checks.recorded)",
                {
                    "q3": COPY_PUBLIC
                    + "\n\n\n_pe = _public_helper('09_self_attention', 'q3', 'pe_variant')\n\n\n"
                    "def positional_encoding(S, d):\n"
                    "    return _pe(S, d).float()"
                },
                {"q3": 0, "q4": 1.75},  # q4's notebook gaps use positional_encoding
            ),
            (
                "heads_loop_in_a_decorator",
                "q2 right values, a decorator loops over the heads: the no-loops checks see the loop run",
                {
                    "q2": "import functools\n\n\n"
                    "def split_heads(x, h):\n"
                    "    *lead, T, d = x.shape\n"
                    "    return x.reshape(*lead, T, h, d // h).transpose(-3, -2)\n\n\n"
                    "def merge_heads(x):\n"
                    "    *lead, h, T, hs = x.shape\n"
                    "    return x.transpose(-3, -2).reshape(*lead, T, h * hs)\n\n\n"
                    "def per_head(fn):\n"
                    "    @functools.wraps(fn)\n"
                    "    def run(X, W_q, W_k, W_v, W_o, h, mask=None):\n"
                    "        Q, K, V = (split_heads(X @ W.T, h) for W in (W_q, W_k, W_v))\n"
                    "        outs, weights = [], []\n"
                    "        for i in range(h):\n"
                    "            o, w = fn(Q[..., i, :, :], K[..., i, :, :], V[..., i, :, :], mask)\n"
                    "            outs.append(o)\n"
                    "            weights.append(w)\n"
                    "        return merge_heads(torch.stack(outs, -3)) @ W_o.T, torch.stack(weights, -3)\n"
                    "    return run\n\n\n"
                    "@per_head\n"
                    "def multi_head_self_attention(q, k, v, mask):\n"
                    "    e = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5\n"
                    "    if mask is not None:\n"
                    "        e = e.masked_fill(~mask, float('-inf'))\n"
                    "    w = torch.softmax(e, -1)\n"
                    "    return w @ v, w",
                },
                {"q2": 2.25},
            ),
        ],
    },
}


def fixture(description, answers, scores, base="solutions", before=(), after=(), kind="", **extra):
    spec = {
        "description": description,
        "class": kind,
        "base": base,
        "answers": answers,
        "cells_before": list(before),
        "cells_after": list(after),
        "scores": scores,
    }
    spec.update(extra)
    return spec


def fixtures_of(name: str, info: dict) -> dict[str, dict]:
    full = info["full"]
    out = {} if info["victim"] is None else general_fixtures(info)
    for stem, description, answers, scores in info["switch_off"]:
        out[f"switch_off_{stem}"] = fixture(
            description,
            answers,
            dict(full, **scores),
            kind="switch_off",
            feedback_contains=["is switched off while grading"],
        )
    for stem, description, answers, scores, *extra in info["trust"]:
        out[f"trust_{stem}"] = fixture(
            description, answers, dict(full, **scores), kind="trust", **(extra[0] if extra else {})
        )
    return out


def general_fixtures(info: dict) -> dict[str, dict]:
    full, (question, signature) = info["full"], info["victim"]
    zero = {q: 0 for q in full}
    others = dict(full, **{question: 0})
    return {
        "reading_steals_solutions_and_classmates": fixture(
            "a blank notebook looks for the masters, the bundles, the grader's command line and folders and "
            "the classmates' notebooks, and executes every notebook it finds",
            {},
            zero,
            base="untouched",
            after=[STEAL],
            kind="reading",
        ),
        "reading_leaks_into_feedback": fixture(
            "a blank notebook puts the environment, every visible process's command line and environment and "
            "the folders it can list into error messages, which the feedback shows",
            {question: LEAK + "\n\n\n" + victim(["raise RuntimeError(_everything())"], signature)},
            zero,
            base="untouched",
            after=["raise RuntimeError(_everything())"],
            kind="reading",
        ),
        "reading_searches_process_memory": fixture(
            "a blank notebook reads the memory of every process it can see, looking for test code",
            {},
            zero,
            base="untouched",
            after=[MEMORY],
            kind="reading",
        ),
        "outliving_daemon_rewrites_scores": fixture(
            "a blank notebook starts a process in its own session that waits for scores.csv and appends "
            "full marks to it",
            {question: victim([DAEMON.replace("\n", "\n    "), "return None"], signature)},
            zero,
            base="untouched",
            after=[DAEMON],
            kind="outliving",
        ),
        "outliving_fork_bomb": fixture(
            "right answers, and a cell that forks as many sleeping processes as it can: they are capped and "
            "die with the sandbox, the answers still count",
            {},
            full,
            after=[FORK_BOMB],
            kind="outliving",
        ),
        "breaking_forged_replies": fixture(
            f"{question} sends the grader replies nested 200,000 deep and of the wrong types over its channel",
            {question: victim(FORGE.split("\n") + ["return None"], signature)},
            others,
            kind="breaking",
        ),
        "breaking_forged_startup_reply": fixture(
            "a blank notebook sends a forged, malformed list of names before the grader's own",
            {},
            zero,
            base="untouched",
            after=[FORGE],
            kind="breaking",
        ),
        "breaking_blocks_the_alarm": fixture(
            f"{question} blocks SIGALRM and SIGXCPU, ignores SIGTERM and loops forever; the other answers count",
            {question: victim(BLOCK_ALARM.split("\n"), signature)},
            others,
            kind="breaking",
        ),
        "breaking_kills_every_process": fixture(
            "right answers, then a cell that stops and kills every process it can see (the grader's server "
            "before): only this notebook's own sandbox goes down, so it scores 0 and nobody else loses",
            {},
            zero,
            after=[KILL_ALL],
            kind="breaking",
        ),
        "breaking_parse_bomb": fixture(
            "right answers, then a 2 MB cell whose parse takes seconds and hundreds of MB before it fails: "
            "parsed only in the sandbox, the answers still count",
            {},
            full,
            after=[PARSE_BOMB],
            kind="breaking",
        ),
    }


def write(fixtures: dict[str, dict[str, dict]]) -> int:
    """Write {set: {stem: spec}} as tests/exercises/fixtures/<set>/hostile_<stem>.json; returns how many."""
    for name, specs in fixtures.items():
        for stem, spec in specs.items():
            (FIXTURES / name / f"hostile_{stem}.json").write_text(
                json.dumps(spec, indent=1, ensure_ascii=False) + "\n"
            )
    return sum(len(specs) for specs in fixtures.values())


def main() -> None:
    print(f"wrote {write({name: fixtures_of(name, info) for name, info in SETS.items()})} hostile fixtures")


if __name__ == "__main__":
    main()
