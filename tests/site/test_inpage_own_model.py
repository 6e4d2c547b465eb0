"""The learner's own model in the built page: a model trained here, exported by attnlib.inpage_file.export,
put into the page's "load your own model" control (as a reader choosing the file would) in headless Chromium,
gives the Python model's greedy output and attention weights within 1e-4; a file that is not such a model is
refused with the reason in words, and the model shown stays the course's."""

import base64
import json
import re
from pathlib import Path

import pytest
import torch

from attnlib import inpage, inpage_file
from attnlib.data import dates_task, make_batches, translation_task
from attnlib.seq2seq import build_model
from attnlib.train import train

from .test_inpage_site import SPEC, _inputs, _language

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = {"dates": "04_bahdanau_attention", "toy-translation": "08_translation"}
PAGES = [(task, f"{book}chapters/{stem}") for task, stem in CHAPTERS.items() for book in ("", "ko/")]
# which model the page shows, and a refusal's frame around its reason, in the site's language
SHOWN = {
    "en": ("Shown: your model, “{}”.", "Shown: the course's model."),
    "ko": ("보이는 모델: 여러분의 모델 “{}”.", "보이는 모델: 강좌의 모델."),
}
REFUSED = {
    "en": ("“{}” was not loaded: ", "The model shown is unchanged."),
    "ko": ("“{}”을(를) 불러오지 않았다: ", "보이는 모델은 그대로다."),
}


def _trained(task_name: str):
    """A small model of the page's task, trained here for a few seconds (seeded): the learner's model."""
    if task_name == "dates":
        task, kind, options, tokens = (
            dates_task(n_train=600, n_valid=10, n_test=10, seed=1),
            "bahdanau",
            {},
            "chars",
        )
    else:
        task, kind, options, tokens = translation_task(seed=1, n=600), "luong", {"input_feed": True}, "words"
    torch.manual_seed(1)
    model = build_model(kind, task.src_vocab, task.tgt_vocab, emb=16, hidden=24, attn=16, **options)
    batches = make_batches(task.train, task.src_vocab, task.tgt_vocab, 32, shuffle=True, seed=1)
    train(model, batches, steps=60, lr=1e-2, seed=1, progress=False)
    return model.eval(), task.src_vocab, task.tgt_vocab, tokens


def _script(box: str, files: list[tuple[str, str]], texts: list[str], big: bool = False) -> str:
    """Load each file (name, text) into the page's control in turn; after each, record which model the page
    shows, its message, and the results of typing ``texts``; then go back to the course's model."""
    payload = json.dumps({"files": files, "texts": texts}).replace("</", "<\\/")
    return f"""<script>
window.addEventListener("load", async () => {{
  const {{files, texts}} = {payload}, box = document.getElementById("{box}");
  const field = box.querySelector("input[type=text]"), chooser = box.querySelector("input[type=file]");
  const settle = () => new Promise((done) => setTimeout(done, 50));
  const answers = () => Number(box.dataset.answers);  // the page counts the files it read or refused
  const typeAll = () => texts.map((text) => {{
    field.value = text;
    field.dispatchEvent(new Event("input"));
    const shown = box.querySelector(".inpage-output").textContent;
    const cells = box.querySelectorAll(".inpage-map td[title]").length;
    return {{text, result: JSON.parse(box.dataset.result), shown, cells}};
  }});
  const state = () => ({{model: box.dataset.model, which: box.querySelector(".inpage-which").textContent,
                        refused: box.querySelector(".inpage-refused").textContent,
                        back: !box.querySelector(".inpage-back").hidden}});
  const out = {{course: typeAll(), before: state(), loads: []}};
  if ({json.dumps(big)}) files.push(["huge.json", "x".repeat({inpage_file.MAX_BYTES} + 1)]);
  for (const [name, text] of files) {{
    const transfer = new DataTransfer();  // as a reader choosing the file: the input's files, then "change"
    transfer.items.add(new File([text], name, {{type: "application/json"}}));
    chooser.files = transfer.files;
    const before = answers();
    chooser.dispatchEvent(new Event("change"));
    for (let i = 0; i < 100 && answers() === before; i++) await settle();  // FileReader is asynchronous
    out.loads.push({{name, ...state(), typed: typeAll()}});
  }}
  box.querySelector(".inpage-back").click();
  out.after = {{...state(), typed: typeAll()}};
  const div = document.createElement("div");
  div.id = "own-model-results";
  div.textContent = JSON.stringify(out);
  document.body.appendChild(div);
}});
</script>"""


def _page(site: Path, page: str) -> tuple[str, str, dict]:
    html = (site / f"{page}.html").read_text()
    [(box, spec)] = SPEC.findall(html)
    return html, box, json.loads(spec.replace("<\\/", "</"))


def _assert_runs_as_python(typed: list[dict], page_spec: dict, model, src_vocab, tgt_vocab) -> float:
    """Each typed text gave ``model``'s greedy output and weights within 1e-4; returns the largest gap."""
    largest = 0.0
    for row in typed:
        tokens, _ = inpage.prepare(page_spec, row["text"])
        if not tokens:
            continue
        ids, weights = inpage.python_reference(model, src_vocab, tokens)
        assert row["result"]["outputIds"] == ids, row["text"]
        joiner = "" if page_spec["tokens"] == "chars" else " "
        assert row["shown"] == joiner.join(tgt_vocab.decode(ids)), row["text"]
        page_weights = torch.tensor(row["result"]["weights"], dtype=torch.float64)
        assert page_weights.shape == weights.shape, row["text"]
        largest = max(largest, (page_weights - weights.double()).abs().max().item())
        assert row["cells"] == weights.numel()  # the map shows the learner's model's weights
    assert largest <= 1e-4
    return largest


@pytest.mark.parametrize(("task", "page"), PAGES)
def test_a_model_trained_and_exported_runs_in_the_built_page_as_in_python(
    site, run_in_page, tmp_path, task, page
):
    html, box, page_spec = _page(site, page)
    assert page_spec["task"] == task
    model, src_vocab, tgt_vocab, tokens = _trained(task)
    path = inpage_file.export(model, src_vocab, tgt_vocab, tmp_path / "my-model.json", task, tokens)
    texts = _inputs(page_spec)
    out = run_in_page(
        site / f"{page}_own_test.html",
        html,
        _script(box, [(path.name, path.read_text())], texts),
        "own-model-results",
    )
    assert out["before"]["model"] == "course" and not out["before"]["back"]
    [loaded] = out["loads"]
    assert (loaded["model"], loaded["refused"], loaded["back"]) == ("file", "", True), loaded
    yours, course = SHOWN[_language(page)]
    assert loaded["which"] == yours.format("my-model.json")
    difference = _assert_runs_as_python(loaded["typed"], page_spec, model, src_vocab, tgt_vocab)
    print(f"{page}: largest weight difference, page vs Python: {difference:.2e}")
    # The control: the course's model gives other weights, and the page goes back to it.
    assert [r["result"] for r in out["course"]] != [r["result"] for r in loaded["typed"]]
    assert out["after"]["model"] == "course" and out["after"]["which"] == course
    assert [r["result"] for r in out["after"]["typed"]] == [r["result"] for r in out["course"]]


def _b64(values: torch.Tensor) -> str:
    return base64.b64encode(values.numpy().tobytes()).decode()


# what the page says is wrong with each bad file, in the site's language (issues 28, 30), and with a file too
# large (its size limit in MB)
WHY = {
    "en": (
        "it is not JSON",
        "encoder.embed.weight holds a value that is not a finite number (at index 0)",
        'it is a model for the task "toy-translation"',
        "more than the {} MB",
    ),
    "ko": (
        "JSON이 아니다",
        "encoder.embed.weight에 유한한 수가 아닌 값이 있다 (인덱스 0)",
        '과제 "toy-translation"의 모델인데',
        "{} MB보다 크다",
    ),
}
# three English words in a row: a reason a Korean page did not translate
ENGLISH_SENTENCE = re.compile(r"\b[a-z]{2,}(?: [a-z]{2,}){2,}\b")


def _bad_files(good: str, language: str) -> dict[str, tuple[str, str]]:
    """name: (file text, what the page must say is wrong, in ``language``)."""
    data = json.loads(good)
    first = "encoder.embed.weight"
    values = torch.frombuffer(bytearray(base64.b64decode(data["params"][first]["data"])), dtype=torch.float32)
    values[0] = float("nan")
    nan = dict(data, params={**data["params"], first: {**data["params"][first], "data": _b64(values)}})
    other = dict(data, task="toy-translation")
    texts = ["a note, not JSON", json.dumps(nan), json.dumps(other)]
    names = ["notes.txt", "nan.json", "other-task.json"]
    return {name: (text, why) for name, text, why in zip(names, texts, WHY[language][:3], strict=True)}


@pytest.mark.parametrize("page", [p for task, p in PAGES if task == "dates"])
def test_a_file_that_is_not_a_model_for_the_page_is_refused_and_the_course_model_stays(
    site, run_in_page, tmp_path, page
):
    html, box, page_spec = _page(site, page)
    _, src_vocab, tgt_vocab = inpage.model_from_spec(page_spec)
    model = build_model("bahdanau", src_vocab, tgt_vocab, emb=8, hidden=8, attn=8)
    good = inpage_file.export(model, src_vocab, tgt_vocab, tmp_path / "m.json", "dates").read_text()
    language = _language(page)
    bad = _bad_files(good, language)
    texts = ["3 mar 19", "the 3rd of march 2019"]
    files = [(name, text) for name, (text, _) in bad.items()]
    out = run_in_page(
        site / f"{page}_refusal_test.html", html, _script(box, files, texts, big=True), "own-model-results"
    )
    expected = [why for _, why in bad.values()] + [WHY[language][3].format(inpage_file.MAX_BYTES // 2**20)]
    assert len(out["loads"]) == len(expected)
    for load, why in zip(out["loads"], expected, strict=True):
        start, end = REFUSED[language]
        assert load["model"] == "course" and load["which"] == SHOWN[language][1], load
        assert load["refused"].startswith(start.format(load["name"])), load
        assert why in load["refused"] and load["refused"].endswith(end), load
        # a Korean page gives the whole reason in Korean; the English page's are sentences (the control)
        assert bool(ENGLISH_SENTENCE.search(load["refused"])) == (language == "en"), load
        assert [r["result"] for r in load["typed"]] == [r["result"] for r in out["course"]]
    assert re.search(r"\d", out["course"][0]["shown"])  # the control: the course's model answered
