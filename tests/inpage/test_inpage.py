"""The in-page model (attnlib.inpage): the browser's engine computes what the Python model computes.

The engine runs here in node, as the page runs it; tests/site checks the built page in Chromium.
"""

import json
import shutil
import subprocess
from datetime import date

import pytest
import torch

from attnlib import inpage
from attnlib.data import dates_task, render
from attnlib.data.dates import date_formats, format_pattern
from attnlib.seq2seq import build_model

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(
    NODE is None, reason="node is not installed (tools/setup.sh installs it with npm)"
)

TASK = dates_task(n_train=300, n_valid=10, n_test=10, seed=0)
INPUTS = [
    "3 mar 19",
    "the 3rd of march 2019",
    "monday 12 june 1995",
    "31/12/99",
    "x",
    "zzz 99 qq",
    "1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1",
    "Tuesday, 4 July 2023",
    "07.08.1970",
    "  spaced  ",
]

CONFIGS = {
    "bahdanau": {"kind": "bahdanau"},
    "bahdanau-final-bridge": {"kind": "bahdanau", "bridge": "final", "dec_hidden": 48, "hidden": 24},
    "luong-general-feeding": {"kind": "luong", "score": "general", "input_feed": True},
    "luong-dot": {"kind": "luong", "score": "dot"},
}


def _model(name: str):
    torch.manual_seed(0)
    options = dict(CONFIGS[name])
    kind = options.pop("kind")
    options = {"emb": 16, "hidden": 24, "attn": 20, **options}
    return build_model(kind, TASK.src_vocab, TASK.tgt_vocab, **options).eval()


def _in_node(tmp_path, spec: dict, texts: list[str], each: str) -> list:
    """Run the page's engine in node: ``each`` (a JavaScript expression of ``a`` = window.attnlibInpage, ``m``
    = the loaded model, ``spec`` and the text ``t``) for every text; returns the results."""
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    (tmp_path / "inputs.json").write_text(json.dumps(texts))
    (tmp_path / "engine.js").write_text(inpage.engine())
    script = f"""
globalThis.window = globalThis;
const fs = require("fs");
require({json.dumps(str(tmp_path / "engine.js"))});
const a = window.attnlibInpage, spec = JSON.parse(fs.readFileSync("spec.json", "utf8")), m = a.load(spec);
const texts = JSON.parse(fs.readFileSync("inputs.json", "utf8"));
console.log(JSON.stringify(texts.map((t) => {each})));
"""
    done = subprocess.run([NODE, "-e", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _run_engine(tmp_path, spec: dict, inputs: list[str]) -> list[dict]:
    return _in_node(tmp_path, spec, inputs, "a.translate(m, t)")


@pytest.mark.parametrize("name", CONFIGS)
def test_the_engine_decodes_as_the_python_model(name, tmp_path):
    model = _model(name)
    results = _run_engine(tmp_path, inpage.spec(model, TASK.src_vocab, TASK.tgt_vocab), INPUTS)
    spec = inpage.spec(model, TASK.src_vocab, TASK.tgt_vocab)
    for text, page in zip(INPUTS, results, strict=True):
        ids, weights = inpage.python_reference(model, TASK.src_vocab, inpage.prepare(spec, text)[0])
        assert page["outputIds"] == ids, text
        page_weights = torch.tensor(page["weights"], dtype=torch.float64)
        assert page_weights.shape == weights.shape, text
        assert torch.allclose(page_weights, weights.double(), atol=1e-4, rtol=0), text


def test_words_are_split_on_spaces_and_unknown_tokens_read_as_unk(tmp_path):
    model = _model("luong-dot")
    spec = inpage.spec(model, TASK.src_vocab, TASK.tgt_vocab, tokens="words")
    [page] = _run_engine(tmp_path, spec, ["3  mar qq"])
    ids, _ = inpage.python_reference(model, TASK.src_vocab, ["3", "mar", "qq"])
    assert page["source"] == ["3", "<unk>", "<unk>"]  # the char vocabulary knows "3" only
    assert page["outputIds"] == ids
    assert page["unknown"] == ["mar", "qq"]


def test_words_that_name_javascript_properties_read_as_unk(tmp_path):
    model = _model("luong-dot")
    spec = inpage.spec(model, TASK.src_vocab, TASK.tgt_vocab, tokens="words")
    words = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "3"]
    [page] = _run_engine(tmp_path, spec, [" ".join(words)])  # a lookup on a plain object threw on these
    ids, weights = inpage.python_reference(model, TASK.src_vocab, inpage.prepare(spec, " ".join(words))[0])
    assert page["source"] == ["<unk>"] * 5 + ["3"]
    assert page["outputIds"] == ids
    assert torch.allclose(torch.tensor(page["weights"], dtype=torch.float64), weights.double(), atol=1e-4)


TYPED = [
    "Is the Man strong?",
    "¿Dónde está?  ¡Hola!",
    "the house, the car; the end:",
    '"quoted" words',
    "  \tleading and trailing  ",
    "ÉCOLE Straße İ",
    "",
    "   ",
    "a " * 40,
    "x" * 100,
]


@pytest.mark.parametrize(
    "tokens, punctuation", [("words", "drop"), ("words", "split"), ("words", "keep"), ("chars", "keep")]
)
def test_the_page_prepares_typed_text_as_python_does(tmp_path, tokens, punctuation):
    spec = inpage.spec(
        _model("luong-dot"), TASK.src_vocab, TASK.tgt_vocab, tokens=tokens, punctuation=punctuation
    )
    prepared = _in_node(tmp_path, spec, TYPED, "a.prepare(spec, t)")
    for text, page in zip(TYPED, prepared, strict=True):
        tokens_py, cut = inpage.prepare(spec, text)
        assert (page["tokens"], page["cut"]) == (tokens_py, cut), text
    assert inpage.prepare(spec, "Is the Man strong?")[0][0] in ("i", "is")  # lower-cased
    assert inpage.prepare(spec, "a " * 40)[1] == (40 - 24 if tokens == "words" else 79 - 64)  # what was cut


def _notes(tmp_path, spec: dict, texts: list[str]) -> list[list[str]]:
    return _in_node(tmp_path, spec, texts, "a.notes(m, t, a.translate(m, t))")


def test_the_page_says_in_words_what_it_could_not_read(tmp_path):
    year = {"pattern": "\\d{4}", "low": 1950, "high": 2049, "message": "a year the model never saw"}
    spec = inpage.spec(_model("bahdanau"), TASK.src_vocab, TASK.tgt_vocab, ranges=[year], empty="type a date")
    empty, fine, unknown, long, out_of_range = _notes(
        tmp_path, spec, ["  ", "3 mar 19", "3 mar 19 ~", "3 " * 35, "3 march 2101"]
    )
    assert empty == ["The box is empty: type a date."]
    assert fine == []
    assert unknown == ["Not in what the model learned, read as <unk>: “~”."]
    assert long == ["Only the first 64 characters are read (5 more were cut)."]  # 69 after the strip
    assert out_of_range == ["2101: a year the model never saw"]


def test_an_empty_source_gives_an_empty_output(tmp_path):
    [page] = _run_engine(tmp_path, inpage.spec(_model("bahdanau"), TASK.src_vocab, TASK.tgt_vocab), [""])
    assert page == {"source": [], "output": [], "outputIds": [], "weights": [], "unknown": [], "cut": 0}


def test_the_demo_holds_the_weights_the_engine_and_a_stable_id():
    model = _model("bahdanau")
    first = inpage.demo(model, TASK.src_vocab, TASK.tgt_vocab, "3 mar 19")._repr_html_()
    again = inpage.demo(model, TASK.src_vocab, TASK.tgt_vocab, "3 mar 19")._repr_html_()
    assert first == again  # re-executing a notebook leaves its stored output unchanged
    assert "window.attnlibInpage.mount(" in first and 'class="inpage-spec"' in first
    assert "</script" not in first.split('class="inpage-spec">')[1].split("</script>")[0]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"kind": "luong", "score": "concat"}, "score='concat'"),
        ({"kind": "luong", "score": "general", "local": "m"}, "local='m'"),
        ({"kind": "bahdanau", "cell": "lstm"}, "cell='lstm'"),
        ({"kind": "plain"}, "not 'plain'"),
    ],
)
def test_models_the_engine_cannot_run_are_refused_by_name(options, message):
    options = dict(options)
    model = build_model(options.pop("kind"), TASK.src_vocab, TASK.tgt_vocab, emb=8, hidden=8, **options)
    with pytest.raises(ValueError, match=message):
        inpage.spec(model, TASK.src_vocab, TASK.tgt_vocab)


def test_bad_arguments_are_named():
    model = _model("bahdanau")
    with pytest.raises(ValueError, match="tokens must be"):
        inpage.spec(model, TASK.src_vocab, TASK.tgt_vocab, tokens="bytes")
    with pytest.raises(TypeError, match="text must be a string"):
        inpage.demo(model, TASK.src_vocab, TASK.tgt_vocab, 42)
    with pytest.raises(TypeError, match="model must be"):
        inpage.spec(torch.nn.Linear(2, 2), TASK.src_vocab, TASK.tgt_vocab)
    with pytest.raises(ValueError, match="punctuation must be"):
        inpage.spec(model, TASK.src_vocab, TASK.tgt_vocab, punctuation="split")  # characters keep it
    with pytest.raises(ValueError, match="max_tokens must be"):
        inpage.spec(model, TASK.src_vocab, TASK.tgt_vocab, max_tokens=0)
    with pytest.raises(ValueError, match="each range needs"):
        inpage.spec(model, TASK.src_vocab, TASK.tgt_vocab, ranges=[{"pattern": "x", "low": 2, "high": 1}])


def test_a_pages_model_rebuilds_in_python_with_the_same_outputs():
    model = _model("luong-general-feeding")
    rebuilt, src_vocab, tgt_vocab = inpage.model_from_spec(inpage.spec(model, TASK.src_vocab, TASK.tgt_vocab))
    assert src_vocab == TASK.src_vocab and tgt_vocab == TASK.tgt_vocab
    for text in INPUTS:
        tokens = list(text.strip().lower())
        ids, weights = inpage.python_reference(model, TASK.src_vocab, tokens)
        ids_again, weights_again = inpage.python_reference(rebuilt, src_vocab, tokens)
        assert ids_again == ids and torch.equal(weights_again, weights)


def test_a_word_model_lists_the_words_it_knows_and_a_character_model_does_not():
    model = _model("luong-dot")
    words = inpage.demo(model, TASK.src_vocab, TASK.tgt_vocab, "3", tokens="words")._repr_html_()
    known = [t for t in TASK.src_vocab.itos if not t.startswith("<")]
    summary = f'<span data-say="known-words" data-n="{len(known)}">the {len(known)} words it knows</span>'
    assert f"<summary>{summary}</summary>{' · '.join(known)}</details>" in words
    assert "<details>" not in inpage.demo(model, TASK.src_vocab, TASK.tgt_vocab, "3")._repr_html_()


FORMATS = [
    {"example": render(date(2019, 3, 3), fmt), "pattern": format_pattern(fmt)} for fmt in date_formats()
]
NOT_LEARNED = ["2019-12-25", "12/25/2019", "Dec. 25, 2019", "25 dec, 2019", "25th December 2019"]
LEARNED = ["3 mar 19", "The 25th of December 2019", "  25/12/2019 ", "19690720", "Sun 3 Mar 2019"]


def _dates_spec(**options):
    return inpage.spec(_model("bahdanau"), TASK.src_vocab, TASK.tgt_vocab, formats=FORMATS, **options)


def test_the_page_says_what_was_typed_is_in_none_of_the_formats_the_model_learned(tmp_path):
    said = _notes(tmp_path, _dates_spec(), ["2019-12-25", "12/25/2019", *LEARNED])
    examples = "“3 march 2019”, “the 3rd of march 2019”, “3 mar 19”, “20190303”"
    assert said[0] == [
        f"“2019-12-25” is written in none of the 16 formats the model learned (such as {examples}; all are "
        "listed under the box): the answer above is its guess at a layout it never saw, and may be wrong."
    ]
    assert "“12/25/2019” is written in none of the 16 formats" in said[1][0]
    assert said[2:] == [[]] * len(LEARNED)  # control: its own formats, as people write them, are not flagged


def test_the_korean_page_says_it_in_korean(tmp_path):
    spec = _dates_spec()
    outside, unknown, empty = _in_node(
        tmp_path, spec, ["2019-12-25", "3 mar 19 ~", " "], "a.notes(m, t, a.translate(m, t), 'ko')"
    )
    assert outside[0].startswith("입력한 “2019-12-25”의 형식은 모델이 학습한 16가지 형식(예: “3 march 2019”")
    assert "추측이라 틀릴 수 있다" in outside[0]
    assert unknown[0] == "모델이 학습한 어휘에 없어 <unk>로 읽는다: “~”."  # then: no format has a "~"
    assert unknown[1].startswith("입력한 “3 mar 19 ~”의 형식은")
    assert empty == ["입력 칸이 비어 있다: 무엇이든 입력하라."]


def test_the_page_flags_exactly_what_python_flags(tmp_path):
    spec = _dates_spec()
    typed = [*NOT_LEARNED, *LEARNED, *INPUTS, "3 mar 19 " * 10, ""]
    in_page = _in_node(tmp_path, spec, typed, "a.outsideFormats(spec, t)")
    assert in_page == [inpage.outside_formats(spec, t) for t in typed]
    assert all(in_page[: len(NOT_LEARNED)]) and not any(
        in_page[len(NOT_LEARNED) : len(NOT_LEARNED) + len(LEARNED)]
    )


def test_a_page_without_formats_flags_no_layout(tmp_path):
    spec = inpage.spec(_model("bahdanau"), TASK.src_vocab, TASK.tgt_vocab)
    assert _in_node(tmp_path, spec, NOT_LEARNED, "a.outsideFormats(spec, t)") == [False] * len(NOT_LEARNED)


def test_a_format_whose_example_its_pattern_does_not_match_is_refused():
    with pytest.raises(ValueError, match="each format needs an example its pattern matches"):
        inpage.spec(
            _model("bahdanau"),
            TASK.src_vocab,
            TASK.tgt_vocab,
            formats=[{"example": "3-3", "pattern": "\\d+"}],
        )


def test_the_demo_lists_the_formats_examples_under_the_box():
    page = inpage.demo(
        _model("bahdanau"), TASK.src_vocab, TASK.tgt_vocab, "3 mar 19", formats=FORMATS
    )._repr_html_()
    assert "3 march 2019 · march 3, 2019 · " in page and 'class="inpage-flag"' in page


def test_the_maps_legend_runs_from_weight_0_to_1_in_the_cells_colour_in_both_languages(tmp_path):
    spec = inpage.spec(_model("bahdanau"), TASK.src_vocab, TASK.tgt_vocab)
    english, korean = _in_node(tmp_path, spec, ["en", "ko"], "a.legend(t)")
    for legend, label in ((english, "colour: attention weight α"), (korean, "색: 어텐션 가중치 α")):
        assert label in legend
        assert "0 <span" in legend and "</span> 1</p>" in legend
        assert (
            "linear-gradient(to right,rgba(31,119,180,0),rgba(31,119,180,0.5),rgba(31,119,180,1))" in legend
        )
    engine = inpage.engine()
    assert "background:${shade(w.toFixed(3))}" in engine  # the cells use the legend's colour
