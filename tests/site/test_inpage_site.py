"""The trained models in the pages (attnlib.inpage): typed into the built page in headless Chromium with no
network, each gives the Python model's greedy output and its attention weights within 1e-4."""

import json
import random
import re
import sys
from pathlib import Path

import pytest
import torch

from attnlib import inpage
from attnlib.data.dates import TWO_DIGIT_YEAR_FORMATS, date_formats, make_dates

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import demo_accuracy  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAGES_WITH_MODELS = sorted(  # both sites: a Korean page (ko/chapters) has the English page's code and outputs
    f"{book}chapters/{path.stem}"
    for book in ("", "ko/")
    for path in (ROOT / book / "chapters").glob("*.ipynb")
    if "inpage.demo(" in path.read_text()
)
SPEC = re.compile(
    r'<div id="(inpage-[0-9a-f]+)" class="attnlib-inpage">.*?class="inpage-spec">(.*?)</script>', re.S
)


def _inputs(spec: dict) -> list[str]:
    """20 inputs. Dates: years the training data never has (it draws 1950-2049) and odd strings. Words:
    random sequences of the source vocabulary's words."""
    if spec["tokens"] == "chars":
        four_digit = [fmt for fmt in date_formats() if fmt not in TWO_DIGIT_YEAR_FORMATS]
        novel = [source for source, _ in make_dates(14, seed=2026, formats=four_digit, years=(2050, 2099))]
        return novel + ["3 mar 19", "31 feb 2001", "hello", "1/1/01", "DECEMBER 5 1999", "x"]
    words = [t for t in spec["src_itos"] if not t.startswith("<")]
    rng = random.Random(0)
    typed = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 9))) for _ in range(14)]
    ordinary = [  # as people type: capitals, punctuation, words that name JavaScript properties
        "Are you still at home?",
        "The man sees the red car.",
        "Is the boy still in the park?",
        "the girl is short!",
        "constructor toString __proto__",
        "  ",
    ]
    return typed + ordinary


EMPTY = {"en": "The box is empty", "ko": "입력 칸이 비어 있다"}  # the page speaks its site's language


def _language(page: str) -> str:
    return "ko" if page.startswith("ko/") else "en"


def _type_into_page(
    site: Path, run_in_page, page: str, inputs: dict | None = None
) -> tuple[dict, list[dict]]:
    html = (site / f"{page}.html").read_text()
    boxes = {box: json.loads(spec.replace("<\\/", "</")) for box, spec in SPEC.findall(html)}
    assert boxes, f"{page} has no in-page model"
    inputs = inputs or {box: _inputs(spec) for box, spec in boxes.items()}
    script = f"""<script>
window.addEventListener("load", () => {{
  const inputs = {json.dumps(inputs)}, results = [];
  for (const [id, texts] of Object.entries(inputs)) {{
    const box = document.getElementById(id), field = box.querySelector("input");
    for (const text of texts) {{
      field.value = text;
      field.dispatchEvent(new Event("input"));  // as a reader typing: the page re-runs the model
      results.push({{id, text, result: JSON.parse(box.dataset.result),
                     shown: box.querySelector(".inpage-output").textContent,
                     note: box.querySelector(".inpage-note").textContent,
                     flag: (box.querySelector(".inpage-flag") || {{}}).textContent,
                     legend: (box.querySelector(".inpage-legend") || {{}}).textContent,
                     cells: box.querySelectorAll(".inpage-map td[title]").length}});
    }}
  }}
  const out = document.createElement("div");
  out.id = "inpage-results";
  out.textContent = JSON.stringify(results);
  document.body.appendChild(out);
}});
</script>"""
    copy = site / f"{page}_inpage_test.html"  # beside the page, so that its relative assets load
    return boxes, run_in_page(copy, html, script, "inpage-results")


@pytest.mark.parametrize("page", PAGES_WITH_MODELS)
def test_the_page_model_gives_the_python_models_output_and_weights(site, run_in_page, page):
    boxes, results = _type_into_page(site, run_in_page, page)
    models = {box: inpage.model_from_spec(spec) for box, spec in boxes.items()}
    assert len(results) >= 20
    for row in results:
        model, src_vocab, tgt_vocab = models[row["id"]]
        tokens, _ = inpage.prepare(boxes[row["id"]], row["text"])
        if not tokens:  # an empty box: nothing decoded, and the page asks for a source
            assert row["result"]["outputIds"] == [] and row["note"].startswith(EMPTY[_language(page)]), row
            continue
        ids, weights = inpage.python_reference(model, src_vocab, tokens)
        assert row["result"]["outputIds"] == ids, row["text"]
        assert row["shown"] == ("" if boxes[row["id"]]["tokens"] == "chars" else " ").join(
            tgt_vocab.decode(ids)
        )
        page_weights = torch.tensor(row["result"]["weights"], dtype=torch.float64)
        assert page_weights.shape == weights.shape, row["text"]
        assert torch.allclose(page_weights, weights.double(), atol=1e-4, rtol=0), row["text"]
        assert row["cells"] == weights.numel()  # the map the reader sees has one shaded cell per weight
        unknown = [t for t in tokens if t not in src_vocab]
        assert all(f"“{t}”" in row["note"] for t in unknown), row  # named under the answer
        assert row["text"].strip() or row["note"].startswith(EMPTY[_language(page)]), row


CONTRAST = (Path(__file__).parent / "contrast.js").read_text()


@pytest.mark.parametrize("page", PAGES_WITH_MODELS)
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_answer_is_readable_in_light_and_dark_mode(site, run_in_page, page, theme):
    html = (site / f"{page}.html").read_text()
    script = f"""<script>{CONTRAST}
window.addEventListener("load", () => {{
  document.documentElement.dataset.theme = "{theme}";
  const box = document.querySelector(".attnlib-inpage"), output = box.querySelector(".inpage-output");
  const code = document.createElement("code");  // the control: the answer as it was shown before
  code.textContent = "2019-03-03";
  box.appendChild(code);
  const out = document.createElement("div");
  out.id = "contrast-result";
  const result = {{answer: contrast(output), text: output.textContent, code: contrast(code)}};
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
}});
</script>"""
    result = run_in_page(site / f"{page}_contrast_test.html", html, script, "contrast-result")
    assert result["text"]  # the answer was written
    assert result["answer"] >= 4.5, result  # WCAG AA for normal text
    if theme == "dark":
        assert result["code"] < 4.5, result  # the measure sees the old answer's contrast fail


DATES_PAGES = [page for page in PAGES_WITH_MODELS if page.endswith("04_bahdanau_attention")]
SAID_OUTSIDE = {  # the note names what was typed and what the model knows, in the site's language
    "en": (
        "“{}” is written in none of the 16 formats the model learned (such as “3 march 2019”",
        "⚠ outside",
    ),
    "ko": ("입력한 “{}”의 형식은 모델이 학습한 16가지 형식(예: “3 march 2019”", "⚠ 학습한 형식 밖"),
}


@pytest.mark.parametrize("page", DATES_PAGES)
def test_the_dates_page_flags_dates_in_formats_it_never_learned_in_its_language(site, run_in_page, page):
    html = (site / f"{page}.html").read_text()
    [box] = [box for box, _ in SPEC.findall(html)]
    unseen = [typed for typed, _ in demo_accuracy.DATES_NOT_LEARNED]
    learned = [typed for typed, _ in demo_accuracy.DATES_LEARNED]
    _, results = _type_into_page(site, run_in_page, page, {box: unseen + learned})
    sentence, flag = SAID_OUTSIDE[_language(page)]
    for row in results[: len(unseen)]:
        assert sentence.format(row["text"]) in row["note"], row
        assert row["flag"].startswith(flag) and row["shown"] and row["cells"] > 0, row  # the guess, marked
    for row in results[len(unseen) :]:  # control: the 16 learned formats, as people write them
        assert row["note"] == "" and row["flag"] == "", row
    legend = {"en": "colour: attention weight α", "ko": "색: 어텐션 가중치 α"}[_language(page)]
    assert all(row["legend"].startswith(legend) for row in results)  # every map has its colour scale


# The map's values without a mouse (issue 28): the map takes the focus, the arrow keys move a current cell, a
# tap makes the tapped cell current; the readout under the map says the cell's output and source tokens and α
# to the title's three places, in the site's language, politely announced.
READOUT = {
    "en": "output “{o}” (step {t}), source “{s}” (token {j}): α = {a:.3f}",
    "ko": "출력 “{o}” ({t}번째 시점), 소스 “{s}” ({j}번째 토큰): α = {a:.3f}",
}
WITHOUT_A_MOUSE = """<script>
window.addEventListener("load", () => {
  const results = [];
  for (const box of document.querySelectorAll(".attnlib-inpage")) {
    const map = box.querySelector(".inpage-map"), readout = () => box.querySelector(".inpage-readout") || {};
    const said = [];
    map.focus();  // as Tab reaches it
    said.push({how: "focus", focused: document.activeElement === map, text: readout().textContent});
    for (const key of ["ArrowRight", "ArrowDown", "ArrowLeft"]) {
      map.dispatchEvent(new KeyboardEvent("keydown", {key, bubbles: true, cancelable: true}));
      said.push({how: key, text: readout().textContent});
    }
    const cell = map.querySelector("table").rows[2].cells[2];  // t = 1, s = 1 (after the headers)
    map.blur();
    const tap = {pointerType: "touch", isPrimary: true, bubbles: true};
    cell.dispatchEvent(new PointerEvent("pointerdown", tap));
    said.push({how: "tap", text: readout().textContent});
    results.push({id: box.id, said, result: JSON.parse(box.dataset.result),
                  label: map.getAttribute("aria-label"),
                  live: map.nextElementSibling.getAttribute("aria-live"),  // the readout, beside the map
                  shown: Boolean(readout().getClientRects && readout().getClientRects().length)});
  }
  const out = document.createElement("div");
  out.id = "readout-results";
  out.textContent = JSON.stringify(results);
  document.body.appendChild(out);
});
</script>"""


def _read_without_a_mouse(site: Path, run_in_page, page: str) -> list[dict]:
    html = (site / f"{page}.html").read_text()
    return run_in_page(site / f"{page}_readout_test.html", html, WITHOUT_A_MOUSE, "readout-results")


def _readout(page: str, result: dict, spec: dict, t: int, s: int) -> str:
    """What the readout must say for cell (t, s) of the map of ``result`` (the page's own data)."""
    rows = [spec["tgt_itos"][y] for y in result["outputIds"]] + ["<eos>"]
    shown = lambda token: token.replace(" ", "␣")  # noqa: E731  (as the map's headers show a space)
    return READOUT[_language(page)].format(
        o=shown(rows[t]), t=t + 1, s=shown(result["source"][s]), j=s + 1, a=result["weights"][t][s]
    )


@pytest.mark.parametrize("page", PAGES_WITH_MODELS)
def test_the_arrow_keys_read_out_each_cell_of_the_map_in_the_sites_language(site, run_in_page, page):
    specs = dict(SPEC.findall((site / f"{page}.html").read_text()))
    for box in _read_without_a_mouse(site, run_in_page, page):
        spec, result = json.loads(specs[box["id"]].replace("<\\/", "</")), box["result"]
        focus, right, down, left = box["said"][:4]
        assert focus["focused"], box["id"]  # the map takes the keyboard's focus
        assert box["live"] == "polite" and box["shown"] and box["label"], box
        assert focus["text"] == _readout(page, result, spec, 0, 0)
        # the next cell, its α from the page's data
        assert right["text"] == _readout(page, result, spec, 0, 1)
        assert down["text"] == _readout(page, result, spec, 1, 1)
        assert left["text"] == _readout(page, result, spec, 1, 0)


@pytest.mark.parametrize("page", PAGES_WITH_MODELS)
def test_a_tap_on_a_cell_reads_out_its_value(site, run_in_page, page):
    specs = dict(SPEC.findall((site / f"{page}.html").read_text()))
    for box in _read_without_a_mouse(site, run_in_page, page):
        spec, result = json.loads(specs[box["id"]].replace("<\\/", "</")), box["result"]
        tap = box["said"][4]
        assert tap["how"] == "tap" and tap["text"] == _readout(page, result, spec, 1, 1), box


# The demo's fixed labels (issue 30): Python writes them in English (the Korean site's outputs are the English
# ones byte for byte); on a Korean page the script puts them in Korean, an English page keeps them.
ENGLISH_LABELS = [
    "greedy output",
    "Load your own model",
    "Back to the course's model",
    "Runs in your browser",
    "rows: output steps",
    "hover over a cell",
    "Shown: the course's model",
    "colour: attention weight",
    "Type a date",
    "Type a sentence",
    "formats it learned",
    "words it knows",
    "Attention map",
]
LABELS = """<script>
window.addEventListener("load", () => {
  const boxes = Array.from(document.querySelectorAll(".attnlib-inpage"), (box) => ({
    visible: box.innerText,  // what a reader sees (not the scripts, not the closed list of what it learned)
    back: box.querySelector(".inpage-back").textContent,  // hidden until a file is loaded
    map: box.querySelector(".inpage-map").getAttribute("aria-label"),  // what a screen reader says
  }));
  const out = document.createElement("div");
  out.id = "label-results";
  out.textContent = JSON.stringify(boxes);
  document.body.appendChild(out);
});
</script>"""


def _labels(site: Path, run_in_page, page: str) -> list[dict]:
    html = (site / f"{page}.html").read_text()
    return run_in_page(site / f"{page}_labels_test.html", html, LABELS, "label-results")


@pytest.mark.parametrize("page", [p for p in PAGES_WITH_MODELS if p.startswith("ko/")])
def test_no_label_of_the_demo_on_a_korean_page_is_english(site, run_in_page, page):
    for box in _labels(site, run_in_page, page):
        shown = "\n".join(text or "" for text in box.values())
        assert [label for label in ENGLISH_LABELS if label in shown] == [], shown
        assert "그리디 출력" in box["visible"] and "내 모델 불러오기" in box["visible"], box
        assert box["back"] == "강좌의 모델로 돌아가기" and box["map"].startswith("어텐션 맵"), box


@pytest.mark.parametrize("page", [p for p in PAGES_WITH_MODELS if not p.startswith("ko/")])
def test_the_english_page_keeps_the_demos_english_labels(site, run_in_page, page):
    chapter = page.split("/")[-1]
    prompt = {"04_bahdanau_attention": "Type a date", "08_translation": "Type a sentence"}[chapter]
    listed = {"04_bahdanau_attention": "formats it learned", "08_translation": "words it knows"}[chapter]
    for box in _labels(site, run_in_page, page):
        for label in ("greedy output", "Load your own model", "Shown: the course's model", prompt, listed):
            assert label in box["visible"], label
        assert "colour: attention weight" in box["visible"]
        assert box["back"] == "Back to the course's model" and box["map"].startswith("Attention map"), box


@pytest.mark.parametrize("page", DATES_PAGES)
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_readout_the_legend_and_the_flag_are_readable_in_light_and_dark_mode(
    site, run_in_page, page, theme
):
    html = (site / f"{page}.html").read_text()
    script = f"""<script>{CONTRAST}
window.addEventListener("load", () => {{
  document.documentElement.dataset.theme = "{theme}";
  const box = document.querySelector(".attnlib-inpage"), field = box.querySelector("input[type=text]");
  field.value = "2019-12-25";  // a format it never learned: the flag shows
  field.dispatchEvent(new Event("input"));
  box.querySelector(".inpage-map").focus();  // the readout shows
  const measured = {{}};
  for (const name of ["readout", "legend", "flag"]) {{
    const element = box.querySelector(".inpage-" + name);
    measured[name] = {{text: element.textContent, ratio: contrast(element)}};
  }}
  const out = document.createElement("div");
  out.id = "contrast-result";
  out.textContent = JSON.stringify(measured);
  document.body.appendChild(out);
}});
</script>"""
    measured = run_in_page(site / f"{page}_readout_contrast_test.html", html, script, "contrast-result")
    for name, found in measured.items():
        assert found["text"], name  # the element was written, so its contrast is the one a reader sees
        assert found["ratio"] >= 4.5, (name, found)  # WCAG AA for normal text
