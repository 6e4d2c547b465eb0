"""The learner's model as a file (attnlib.inpage_file): export writes what the page's reader
(inpage_load.js) accepts, runs the same as the Python model, and every other file is refused by name.

The reader runs here in node, as the page runs it; tests/site loads an exported file into the built page.
"""

import base64
import json
import math
import re
import struct
from pathlib import Path

import pytest
import torch

from attnlib import inpage, inpage_file
from attnlib.seq2seq import build_model

from .test_inpage import CONFIGS, INPUTS, TASK, _in_node, _model

PARSE = "(() => { try { return {spec: a.parse(t, spec)}; } catch (e) { return {error: e.message}; } })()"


def _page_spec(**options) -> dict:
    return inpage.spec(_model("bahdanau"), TASK.src_vocab, TASK.tgt_vocab, task="dates", **options)


def _file(tmp_path, name="luong-general-feeding", task="dates", **options) -> dict:
    path = inpage_file.export(
        _model(name), TASK.src_vocab, TASK.tgt_vocab, tmp_path / "m.json", task, **options
    )
    return json.loads(path.read_text())


def _parse(tmp_path, page: dict, texts: list[str]) -> list[dict]:
    return _in_node(tmp_path, page, texts, PARSE)


def test_export_writes_the_spec_with_a_format_marker_version_and_task(tmp_path):
    data = _file(tmp_path)
    assert (data["format"], data["version"], data["task"]) == ("attnlib-inpage-model", 1, "dates")
    assert {k: v for k, v in data.items() if k not in ("format", "version")} == inpage.spec(
        _model("luong-general-feeding"), TASK.src_vocab, TASK.tgt_vocab, task="dates"
    )


def test_an_exported_file_reads_back_in_python_as_the_same_model(tmp_path):
    path = inpage_file.export(
        _model("bahdanau"), TASK.src_vocab, TASK.tgt_vocab, tmp_path / "m.json", "dates"
    )
    model, src_vocab, _ = inpage_file.read(path, task="dates")
    for text in INPUTS:
        tokens = list(text.strip().lower())
        ids, weights = inpage.python_reference(_model("bahdanau"), TASK.src_vocab, tokens)
        assert inpage.python_reference(model, src_vocab, tokens)[0] == ids
        assert torch.equal(inpage.python_reference(model, src_vocab, tokens)[1], weights)


def test_python_refuses_a_file_that_is_not_a_model_for_the_task(tmp_path):
    path = inpage_file.export(
        _model("bahdanau"), TASK.src_vocab, TASK.tgt_vocab, tmp_path / "m.json", "dates"
    )
    inpage_file.read(path, task="dates")  # the control: the file itself is read
    with pytest.raises(ValueError, match="for the task 'dates', not 'toy-translation'"):
        inpage_file.read(path, task="toy-translation")
    (tmp_path / "x.json").write_text("not json")
    with pytest.raises(ValueError, match="is not JSON"):
        inpage_file.read(tmp_path / "x.json")
    (tmp_path / "x.json").write_text(json.dumps({"format": "attnlib-inpage-model", "version": 2}))
    with pytest.raises(ValueError, match="version 2"):
        inpage_file.read(tmp_path / "x.json")


def test_export_needs_a_task_and_refuses_a_file_too_big_for_the_page(tmp_path, monkeypatch):
    model = _model("bahdanau")
    with pytest.raises(ValueError, match="task must name"):
        inpage_file.export(model, TASK.src_vocab, TASK.tgt_vocab, tmp_path / "m.json", task="")
    monkeypatch.setattr(inpage_file, "MAX_BYTES", 1000)
    with pytest.raises(ValueError, match="a page reads at most 1,000"):
        inpage_file.export(model, TASK.src_vocab, TASK.tgt_vocab, tmp_path / "m.json", task="dates")
    assert not (tmp_path / "m.json").exists()


def test_the_pages_reader_has_the_same_format_version_and_size_cap_as_export(tmp_path):
    [consts] = _in_node(tmp_path, _page_spec(), [""], "[a.FORMAT, a.VERSION, a.MAX_BYTES]")
    assert consts == [inpage_file.FORMAT, inpage_file.VERSION, inpage_file.MAX_BYTES]


SHAPE_CONFIGS = [
    *CONFIGS.values(),
    {"kind": "bahdanau", "dec_hidden": 40},
    {"kind": "luong", "score": "general", "dec_hidden": 40, "input_feed": True},
    {"kind": "luong", "score": "dot", "input_feed": True},
    {"kind": "luong", "score": "general", "bridge": "final"},
]


@pytest.mark.parametrize("options", SHAPE_CONFIGS, ids=[str(o) for o in SHAPE_CONFIGS])
def test_the_reader_expects_the_parameters_and_shapes_torch_builds(tmp_path, options):
    options = dict(options)
    kind = options.pop("kind")
    model = build_model(
        kind, TASK.src_vocab, TASK.tgt_vocab, **{"emb": 16, "hidden": 24, "attn": 20, **options}
    )
    [shapes] = _in_node(
        tmp_path, inpage.spec(model, TASK.src_vocab, TASK.tgt_vocab), [""], "a.expectedShapes(spec.config)"
    )
    assert shapes == {name: list(p.shape) for name, p in model.state_dict().items()}


def test_the_page_runs_a_loaded_file_as_the_python_model_runs_it(tmp_path):
    page = _page_spec()
    learner = _model("luong-general-feeding")  # another kind than the page's own model
    text = json.dumps(_file(tmp_path))
    script = (
        "(() => { const own = a.load(a.parse(t, spec)); return inputs.map((x) => a.translate(own, x)); })()"
    )
    (tmp_path / "file.txt").write_text(json.dumps(INPUTS))
    [results] = _in_node(
        tmp_path, page, [text], script.replace("inputs", 'JSON.parse(fs.readFileSync("file.txt", "utf8"))')
    )
    [course] = _in_node(tmp_path, page, [INPUTS[0]], "a.translate(m, t)")
    assert course["weights"] != results[0]["weights"]  # the control: the file's model is another model
    for text, result in zip(INPUTS, results, strict=True):
        ids, weights = inpage.python_reference(learner, TASK.src_vocab, inpage.prepare(page, text)[0])
        assert result["outputIds"] == ids, text
        assert torch.allclose(
            torch.tensor(result["weights"], dtype=torch.float64), weights.double(), atol=1e-4
        )


def _floats(values) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


def _broken(data: dict, how: str) -> str:
    """``data`` (an exported file) broken in one way; returns the file's text."""
    data = json.loads(json.dumps(data))
    params, first = data["params"], "encoder.embed.weight"
    n = math.prod(params[first]["shape"])
    if how == "not json":
        return "PK\x03\x04 a zip file"
    if how == "no marker":
        del data["format"]
    if how == "version":
        data["version"] = 2
    if how == "task":
        data["task"] = "toy-translation"
    if how == "tokens":
        data["tokens"] = "words"
    if how == "shape":
        params[first]["shape"][1] += 1
    if how == "missing":
        del params["decoder.W_s.bias"]
    if how == "extra":
        params["decoder.extra"] = {"shape": [1], "data": _floats([0.0])}
    if how == "short data":
        params[first]["data"] = params[first]["data"][:-8]
    if how == "nan":
        params[first]["data"] = _floats([float("nan")] + [0.0] * (n - 1))
    if how == "infinity":
        params[first]["data"] = _floats([0.0] * (n - 1) + [float("inf")])
    if how == "vocab size":
        data["src_itos"].append("é")
    if how == "specials":
        data["tgt_itos"][0] = "x"
    if how == "kind":
        data["config"]["kind"] = "plain"
    if how == "cell":
        data["config"]["cell"] = "lstm"
    if how == "size":
        data["config"]["emb"] = 0
    if how == "params":
        data["params"] = None
    return json.dumps(data)


REFUSALS = {
    "not json": "it is not JSON",
    "no marker": "it is not a model file written by attnlib.inpage.export",
    "version": "its version 2 is not 1",
    "task": 'it is a model for the task "toy-translation", and this page\'s model is for "dates"',
    "tokens": 'it is a model for the task "dates"',
    "shape": "encoder.embed.weight has shape [41,17], but the config needs [41,16]",
    "missing": "parameter decoder.W_s.bias is missing",
    "extra": "parameter decoder.extra is not one of this model's",
    "short data": "encoder.embed.weight does not hold 656 float32 values in base64",
    "nan": "encoder.embed.weight holds a value that is not a finite number (at index 0)",
    "infinity": "encoder.embed.weight holds a value that is not a finite number (at index 655)",
    "vocab size": "src_itos does not hold the 41 tokens its config says",
    "specials": "tgt_itos is not a list of tokens starting with <pad> <sos> <eos> <unk>",
    "kind": 'its kind "plain" is not one the page runs',
    "cell": "the page runs a bidirectional GRU encoder only",
    "size": "config.emb is not a size from 1 to 4096",
    "params": "it has no parameters",
}


def test_the_page_refuses_every_file_that_is_not_a_model_for_it_and_says_why(tmp_path):
    data = _file(tmp_path)
    texts = [json.dumps(data)] + [_broken(data, how) for how in REFUSALS]
    accepted, *refused = _parse(tmp_path, _page_spec(), texts)
    assert "spec" in accepted and accepted["spec"]["params"] == data["params"]  # the control: intact is read
    for (how, message), result in zip(REFUSALS.items(), refused, strict=True):
        assert "error" in result, how
        assert result["error"].startswith(message), (how, result["error"])


# The page's language, as the Korean site sets it (<html lang="ko">), for the reader in node.
ON_A_KOREAN_PAGE = "globalThis.document = {documentElement: {lang: 'ko'}};"
# three English words in a row: a reason the Korean page did not translate
ENGLISH_SENTENCE = re.compile(r"\b[a-z]{2,}(?: [a-z]{2,}){2,}\b")


def test_on_a_korean_page_every_refusal_gives_its_reason_in_korean(tmp_path):
    """The same files are refused on a Korean page (issues 28, 30), each with a reason that holds no English
    sentence and names the same thing (the parameter, the number) as the English one."""
    data = _file(tmp_path)
    texts = [_broken(data, how) for how in REFUSALS]
    english = _parse(tmp_path, _page_spec(), texts)
    korean = _in_node(tmp_path, _page_spec(), texts, PARSE.replace("try {", ON_A_KOREAN_PAGE + " try {", 1))
    for how, en, ko in zip(REFUSALS, english, korean, strict=True):
        assert "error" in ko and ko["error"] != en["error"], how
        assert not ENGLISH_SENTENCE.search(ko["error"]), (how, ko["error"])
        assert _named(en["error"]) <= _named(ko["error"]), (how, en["error"], ko["error"])
    # the control: the English reasons are sentences ("its version 2 is not 1" has no three words in a row)
    plain = [e["error"] for e in english if not ENGLISH_SENTENCE.search(e["error"])]
    assert plain == ["its version 2 is not 1"]


def _named(reason: str) -> set[str]:
    """The numbers and dotted names a reason gives (a parameter, a count, an index)."""
    return set(re.findall(r"\[[\d,]*\]|[\w.]*\d[\w.]*|\w+(?:\.\w+)+", reason, re.ASCII))


def test_both_languages_give_every_reason_the_reader_can_refuse_for(tmp_path):
    keys = "[Object.keys(a.SAID.en.why).sort(), Object.keys(a.SAID.ko.why).sort()]"
    [(en, ko)] = _in_node(tmp_path, _page_spec(), ["x"], keys)
    reader = (Path(inpage.__file__).parent / "inpage_load.js").read_text()
    used = set(re.findall(r'\b(?:fail|said)\("(\w+)"', reader))
    assert en == ko and used == set(en), (en, ko, used)
