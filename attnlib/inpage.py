"""A trained seq2seq model that runs in the reader's browser, on the static website and in Colab alike.

    demo(model, src_vocab, tgt_vocab, "3 mar 19", task="dates")   # a text box, greedy output, alignment map
    inpage_file.export(model, src_vocab, tgt_vocab, "my-dates-model.json", task="dates")  # for that page

The cell's output holds the model's weights (float32, base64) and a small engine, ``inpage.js``, that computes
the same equations as ``attnlib.seq2seq`` for one sentence with greedy decoding, in float64:

    H, s_0 = Encoder(x)                        bidirectional GRU, s_0 = tanh(W_init ←h_1) or [→h_S; ←h_1]
    Bahdanau: α_t from s_{t-1}, s_t = ContextGRUCell(emb(y_{t-1}), c_t, s_{t-1})    (chapter 4)
    Luong:    s_t = GRU([emb(y_{t-1}); s~_{t-1}]), α_t from s_t, s~_t = tanh(W_c [c_t; s_t])   (chapters 5, 8)
    y_t = argmax p(y_t | y_<t, x) until <eos> or 2 S + 10 steps     (``attnlib.seq2seq.decoding.greedy``)

Why not ONNX and onnxruntime-web: its WebAssembly runtime alone weighs several MB per page, more than these
models (tens of thousands of weights) and the whole engine (a few KB) together. The engine is the
equations a second time, so tests hold it to the Python model: the same output tokens and attention weights
within 1e-4 (tests/inpage, in node; tests/site, in the built page). A demo given a ``task`` also reads a
file that ``attnlib.inpage_file.export`` wrote for that task from the reader's disk and runs it instead
(``inpage_load.js``).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import html
import json
import math
import re
from importlib import resources

import torch

from attnlib.data.vocab import SPECIALS

SUPPORTED_LUONG_SCORES = ("dot", "general")
PUNCTUATION = re.compile(r'[.,!?¿¡;:"]')  # inpage.js's PUNCTUATION
MAX_TOKENS = {"chars": 64, "words": 24}  # what the page reads of a long input (the map stays on screen)
ENGINE_FILES = ("inpage.js", "inpage_words.js", "inpage_map.js", "inpage_load.js")


def spec(
    model,
    src_vocab,
    tgt_vocab,
    tokens: str = "chars",
    *,
    lower: bool = True,
    punctuation: str | None = None,
    max_tokens: int | None = None,
    ranges: list[dict] | None = None,
    empty: str = "type something",
    task: str | None = None,
    formats: list[dict] | None = None,
) -> dict:
    """Everything the engine needs: the architecture's switches, both vocabularies and every weight, and how
    the page prepares what the reader types (see :func:`prepare`).

    ``tokens``: ``"chars"`` (the dates task) or ``"words"``. ``lower``: fold to lower case, as the training
    data is. ``punctuation`` (words only): ``"drop"`` (the toy corpus has none; the default for words),
    ``"split"`` (tokens of their own, as Tatoeba's normalisation) or ``"keep"``. ``max_tokens``: how much of
    a long input is read (default ``MAX_TOKENS``). ``ranges``: numbers the page flags, ``[{"pattern": regex,
    "low": …, "high": …, "message": …}]`` (a year outside the trained window). ``empty``: what an empty box
    asks for. ``task``: what the model was trained for (``"dates"``); a page reads only that task's files.
    ``formats``: the layouts the training data was written in, ``[{"example": …, "pattern": regex}]``
    (``attnlib.data.dates.format_pattern``); the page flags text that matches none (:func:`outside_formats`).
    """
    cfg = getattr(model, "config", None)
    if cfg is None:
        raise TypeError("model must be an attnlib Seq2Seq built by attnlib.seq2seq.build_model")
    if tokens not in ("chars", "words"):
        raise ValueError(f"tokens must be 'chars' or 'words', got {tokens!r}")
    punctuation = punctuation or ("drop" if tokens == "words" else "keep")
    if punctuation not in ("drop", "split", "keep") or (tokens == "chars" and punctuation != "keep"):
        raise ValueError(
            f"punctuation must be 'drop', 'split' or 'keep' (words), 'keep' (chars); got {punctuation!r}"
        )
    max_tokens = MAX_TOKENS[tokens] if max_tokens is None else max_tokens
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    for r in ranges or []:
        if set(r) != {"pattern", "low", "high", "message"} or not r["low"] <= r["high"]:
            raise ValueError(f"each range needs pattern, low <= high and message, got {r!r}")
        re.compile(r["pattern"])
    for f in formats or []:
        if set(f) != {"example", "pattern"} or not re.fullmatch(f["pattern"], f["example"]):
            raise ValueError(f"each format needs an example its pattern matches, got {f!r}")
    if cfg.cell != "gru" or not cfg.bidirectional:
        raise ValueError(
            f"the page runs a bidirectional GRU encoder; this model has cell={cfg.cell!r}, "
            f"bidirectional={cfg.bidirectional}"
        )
    if cfg.kind == "luong" and (cfg.local is not None or cfg.score not in SUPPORTED_LUONG_SCORES):
        raise ValueError(
            f"the page runs global Luong attention with a {' or '.join(SUPPORTED_LUONG_SCORES)} "
            f"score; this model has score={cfg.score!r}, local={cfg.local!r}"
        )
    if cfg.kind not in ("bahdanau", "luong"):
        raise ValueError(f"the page runs 'bahdanau' and 'luong' models, not {cfg.kind!r}")
    params = {
        name: {
            "shape": list(p.shape),
            "data": base64.b64encode(p.detach().float().cpu().numpy().tobytes()).decode(),
        }
        for name, p in model.state_dict().items()
        if p.is_floating_point()
    }
    return {
        "config": dataclasses.asdict(cfg),  # the switches the engine reads, and all model_from_spec needs
        "tokens": tokens,
        "lower": lower,
        "punctuation": punctuation,
        "max_tokens": max_tokens,
        "ranges": list(ranges or []),
        "empty": empty,
        "task": task,
        "formats": list(formats or []),
        "src_itos": list(src_vocab.itos),
        "tgt_itos": list(tgt_vocab.itos),
        "params": params,
    }


def prepare(spec: dict, text: str) -> tuple[list[str], int]:
    """``(tokens, cut)``: what the page's model reads of ``text``, as ``inpage.js``'s prepare makes it.

    Lower case (``spec["lower"]``); characters of the stripped text, or words after punctuation was dropped or
    split off (``spec["punctuation"]``); at most ``spec["max_tokens"]`` of them, ``cut`` the number left out.
    """
    text = text.lower() if spec.get("lower", True) else text
    if spec["tokens"] == "chars":
        tokens = list(text.strip())
    else:
        if spec.get("punctuation") == "drop":
            text = PUNCTUATION.sub(" ", text)
        elif spec.get("punctuation") == "split":
            text = PUNCTUATION.sub(lambda m: f" {m[0]} ", text)
        tokens = text.split()
    limit = spec.get("max_tokens") or len(tokens)
    return tokens[:limit], max(0, len(tokens) - limit)


def outside_formats(spec: dict, text: str) -> bool:
    """Whether the page flags ``text`` as written in none of ``spec["formats"]`` (inpage.js's outsideFormats):
    what the model reads of it (:func:`prepare`) matches no format's pattern as a whole. No formats: never."""
    tokens, _ = prepare(spec, text)
    read = ("" if spec["tokens"] == "chars" else " ").join(tokens)
    formats = spec.get("formats") or []
    return bool(formats and read) and not any(re.fullmatch(f["pattern"], read) for f in formats)


def engine() -> str:
    """The page's script, as shipped with the package: the engine, its words in both languages, its map and
    its reader of the learner's model files."""
    files = resources.files("attnlib")
    return "\n".join(files.joinpath(f).read_text(encoding="utf-8") for f in ENGINE_FILES)


class Demo:
    """The cell output: rich HTML in Jupyter, Colab and the book; a one-line summary as plain text."""

    def __init__(self, page: str, summary: str):
        self.page, self.summary = page, summary

    def _repr_html_(self) -> str:
        return self.page

    def __repr__(self) -> str:
        return self.summary


def demo(
    model,
    src_vocab,
    tgt_vocab,
    text: str,
    tokens: str = "chars",
    prompt: str = "Type a source",
    *,
    known: list[str] | None = None,
    known_label: str = "what it learned",
    **preparing,
) -> Demo:
    """Show ``model`` as a text box whose every change re-runs it in the browser: output and alignment map.

    ``text``: what the box holds at first. ``known``: examples of what the model learned, listed under the box
    (default: the examples of ``formats``; for ``tokens="words"``, the vocabulary). ``preparing``: ``lower``,
    ``punctuation``, ``max_tokens``, ``ranges``, ``empty``, ``task``, ``formats``, as :func:`spec` takes them.
    The page needs no kernel, no network. With a ``task``, the page also runs the reader's own model: a file
    ``inpage_file.export`` wrote.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    model_spec = spec(model, src_vocab, tgt_vocab, tokens, **preparing)
    data = json.dumps(model_spec, separators=(",", ":"))
    box = "inpage-" + hashlib.sha256(data.encode()).hexdigest()[:12]  # stable: re-running gives the same page
    safe_json = data.replace("</", "<\\/")  # JSON allows \\/; the page's parser must not see </script>
    said = "known"  # which Korean label the page puts on the list (inpage_words.js)
    if known is None and model_spec["formats"]:  # the formats it learned, one example each
        known, said = [f["example"] for f in model_spec["formats"]], "known-formats"
    if known is None and tokens == "words":  # a reader cannot guess a small vocabulary: show it
        known, said = [t for t in src_vocab.itos if t not in SPECIALS], "known-words"
        known_label = f"the {len(known)} words it knows"
    listed = ""
    if known:
        items = " · ".join(html.escape(t) for t in known)
        summary = f'<span data-say="{said}" data-n="{len(known)}">{html.escape(known_label)}</span>'
        listed = f"\n<details><summary>{summary}</summary>{items}</details>"
    n_weights = sum(math.prod(p["shape"]) for p in model_spec["params"].values())
    own = ""
    if model_spec["task"]:  # the reader's file is read in the browser (FileReader): nothing is uploaded
        own = """\n<p><span class="inpage-which" role="status"></span>
<label><span data-say="load">Load your own model (the file the chapter's export cell wrote; it stays on your
computer):</span> <input type="file" class="inpage-file" accept=".json,application/json"></label>
<button type="button" class="inpage-back" data-say="back" hidden>Back to the course's model</button></p>
<p class="inpage-refused" role="alert" style="font-weight:600"></p>"""
    # The answer is an <output> in the theme's text colour (a <code> was pink on grey in dark mode); the notes
    # below it are announced to screen readers as they change. The script puts the map under them, with a
    # readout of one cell's value (inpage_map.js), and on a Korean page the labels marked data-say in Korean.
    page = f"""<div id="{box}" class="attnlib-inpage">
<label><span data-say="prompt">{html.escape(prompt)}</span>:
<input type="text" value="{html.escape(text, quote=True)}" size="32"></label>
<p><span data-say="greedy">greedy output</span>:
<output class="inpage-output" style="font-weight:600;font-family:monospace"></output>
<span class="inpage-flag" style="font-weight:600"></span></p>
<p class="inpage-note" role="status" aria-live="polite" style="font-size:85%"></p>
<div class="inpage-map" style="overflow-x:auto"></div>{listed}{own}
<p style="font-size:80%"><span data-say="about" data-n="{n_weights:,}">Runs in your browser
({n_weights:,} weights, no server); rows: output steps, columns: source tokens, shade: attention
weight</span> α<sub>t,s</sub>
<span data-say="about-value">(hover over a cell or tap it, or focus the map and use the arrow keys, for its
value).</span></p>
<script type="application/json" class="inpage-spec">{safe_json}</script>
<script>{engine()}
window.attnlibInpage.mount("{box}");</script>
</div>"""
    return Demo(
        page, f"<in-page {model.config.kind} model, {n_weights:,} weights: run the page to type a source>"
    )


@torch.no_grad()
def python_reference(model, src_vocab, text_tokens: list[str]) -> tuple[list[int], torch.Tensor]:
    """The Python side of the agreement: greedy decoding of one sentence, (output ids, weights (steps, S))."""
    from attnlib.seq2seq.decoding import greedy

    ids = torch.tensor([[src_vocab.id(t) for t in text_tokens]])
    decoded = greedy(model, ids, torch.tensor([len(text_tokens)]))
    return decoded.tokens[0], decoded.weights[0]


def model_from_spec(spec: dict):
    """The model a page runs, rebuilt in Python from its spec: ``(model, src_vocab, tgt_vocab)``.

    The tests read a built page's weights back this way and compare its outputs with Python's.
    """
    from attnlib.data.vocab import Vocab
    from attnlib.seq2seq import build_model
    from attnlib.seq2seq.config import LUONG_ONLY

    src_vocab, tgt_vocab = (Vocab(spec[key][len(SPECIALS) :]) for key in ("src_itos", "tgt_itos"))
    options = {k: v for k, v in spec["config"].items() if k not in ("kind", "src_vocab", "tgt_vocab")}
    kind = spec["config"]["kind"]
    if kind != "luong":
        options = {k: v for k, v in options.items() if k not in LUONG_ONLY}
    model = build_model(kind, src_vocab, tgt_vocab, device="cpu", **options)
    state = {
        name: torch.frombuffer(bytearray(base64.b64decode(p["data"])), dtype=torch.float32).reshape(
            p["shape"]
        )
        for name, p in spec["params"].items()
    }
    model.load_state_dict(state)  # every tensor of these models is a float weight, so all of them travel
    return model.eval(), src_vocab, tgt_vocab
