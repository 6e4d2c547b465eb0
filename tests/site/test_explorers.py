"""Explorers on the static website (attnlib.explorer): moving a control redraws the figure, with no kernel.

Each test loads a page in headless Chromium with no network, with a script injected after the page's own that
moves the explorers' controls the way a reader does (set the value, fire ``input``) and records the figure
shown. The figure must change with the controls and be the frame Python rendered for those values: for a toy
explorer, drawn again here; for the chapters, the frame stored in the notebook's output, which nbval compares
with a fresh rendering whenever the notebook is tested (explorer cells are not tagged nbval-ignore-output). On
the website each frame is a file of its own (_ext/page_weight.py), fetched when a control reaches it.
"""

import base64
import itertools
import json
import math
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from attnlib.explorer import Explorer, Range, nearest  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DATA = re.compile(r'<script type="application/json" class="attnlib-explorer-data">(.*?)</script>', re.S)

DRIVER = """<script>(function () {
  var plan = PLAN, roots = document.querySelectorAll(".attnlib-explorer"), results = [];
  var initial = Array.prototype.map.call(roots, function (root) {
    return root.querySelector(".attnlib-explorer-frame").alt;
  });
  plan.forEach(function (step) {
    var root = roots[step.explorer];
    Object.keys(step.inputs).forEach(function (name) {
      var input = root.querySelector('[name="' + name + '"]');
      input.value = step.inputs[name];
      input.dispatchEvent(new Event("input"));
    });
    results.push({src: root.querySelector(".attnlib-explorer-frame").src,
                  alt: root.querySelector(".attnlib-explorer-frame").alt,
                  note: root.querySelector(".attnlib-explorer-note").textContent,
                  readouts: Array.prototype.map.call(
                    root.querySelectorAll(".attnlib-explorer-controls label > span"),
                    function (span) { return span.textContent; }),
                  spoken: Array.prototype.map.call(
                    root.querySelectorAll(".attnlib-explorer-controls input"),
                    function (input) { return input.getAttribute("aria-valuetext"); })});
  });
  var out = document.createElement("div");
  out.id = "attnlib-explorer-results";
  out.textContent = JSON.stringify({count: roots.length, initial: initial, results: results});
  document.body.appendChild(out);
})();</script>"""


def move_controls(run_in_page, page: Path, html: str, plan: list[dict]) -> dict:
    """Load ``html`` as ``page`` with the driver injected; return the explorer count and each figure shown."""
    return run_in_page(page, html, DRIVER.replace("PLAN", json.dumps(plan)), "attnlib-explorer-results")


def control_input(control: dict, value):
    """What a reader sets on the page's control to choose ``value``: a number, or the option's position."""
    if control["kind"] == "range":
        return value
    return control["frames"].index(str(value) if control["kind"] == "choice" else value)


def frame_index(controls: list[dict], values: dict) -> int:
    """Python's choice of frame for ``values``: the nearest grid point, the last control fastest."""
    index = 0
    for c in controls:
        value = values[c["name"]] if c["kind"] != "choice" else str(values[c["name"]])
        index = index * len(c["frames"]) + c["frames"].index(nearest(c["frames"], value))
    return index


def settings(controls: list[dict]) -> list[dict]:
    """Every control at its first frame, then at its last; then each range whose frames are coarser than its
    step set between its first two frames (nearer the first), as a reader's finer slider would."""
    chosen = [{c["name"]: c["frames"][0] for c in controls}, {c["name"]: c["frames"][-1] for c in controls}]
    for c in controls:
        if (
            c["kind"] == "range"
            and len(c["frames"]) > 1
            and c["frames"][1] - c["frames"][0] > c["step"] * 1.5
        ):
            between = c["frames"][0] + 0.3 * (c["frames"][1] - c["frames"][0])
            chosen.append({**chosen[0], c["name"]: round(between, c["digits"] + 2)})
    return chosen


def readouts(controls: list[dict], values: dict) -> list[str | None]:
    """What each range control's readout must say: the value of the frame shown (None: not a range)."""
    return [
        f"{nearest(c['frames'], values[c['name']]):.{c['digits']}f}" if c["kind"] == "range" else None
        for c in controls
    ]


def shown_png(src: str) -> bytes:
    """The PNG an explorer's image shows: base64 in a notebook's output, a file of its own on the website."""
    if src.startswith("data:image/png;base64,"):
        return base64.b64decode(src.split(",", 1)[1])
    path = Path(unquote(urlparse(src).path))
    return path.read_bytes() if src.startswith("file:") and path.is_file() else b""


def check(
    shown: list[dict], expected: list[bytes], labels: list[list[str | None]] | None = None
) -> list[str]:
    """The mismatches between what the page showed and the expected frames and readouts (empty when all
    agree). The note must never say a value snapped: the sliders only stop on values that have a frame."""
    problems = []
    labels = labels or [[] for _ in shown]
    for i, (result, frame, label) in enumerate(zip(shown, expected, labels, strict=True)):
        if shown_png(result["src"]) != frame:
            problems.append(f"setting {i}: the page shows another figure than Python's")
        if result["note"].startswith("Snapped to the nearest precomputed value"):
            problems.append(f"setting {i}: the note says {result['note']!r}")
        for want, got in zip(label, result["readouts"], strict=False):
            if want is not None and want != got:
                problems.append(f"setting {i}: the readout says {got!r} under the figure of {want}")
        sliders = [r for r in result["readouts"] if r]  # a menu has no readout; every slider has one
        heard = result["spoken"]
        if heard != sliders:
            problems.append(f"setting {i}: a screen reader hears {heard}, the page shows {sliders}")
    if len({r["src"] for r in shown}) < 2:
        problems.append("the figure does not change when the controls move")
    return problems


def explore_page(run_in_page, page: Path, html: str, payloads: list[dict]) -> list[str]:
    plan, expected, labels = [], [], []
    for k, data in enumerate(payloads):
        for values in settings(data["controls"]):
            inputs = {c["name"]: control_input(c, values[c["name"]]) for c in data["controls"]}
            plan.append({"explorer": k, "inputs": inputs})
            expected.append(base64.b64decode(data["frames"][frame_index(data["controls"], values)]))
            labels.append(readouts(data["controls"], values))
    moved = move_controls(run_in_page, page, html, plan)
    assert moved["count"] == len(payloads), "the page and the notebook hold different explorers"
    return check(moved["results"], expected, labels)


def draw(a: float, kind: str):
    """Softmax weights of fixed scores at inverse temperature ``a``, as bars or as a line."""
    scores = [2.0, 0.5, 1.5, -1.0]
    exps = [math.exp(a * e) for e in scores]
    fig, ax = plt.subplots(figsize=(3, 2))
    (ax.bar if kind == "line" else ax.plot)(range(4), [x / sum(exps) for x in exps])
    ax.set_ylim(0, 1)
    return fig


@pytest.fixture(scope="module")
def toy():
    return Explorer(draw, a=Range(0.5, 1.5, 0.05, value=1.0, frame_step=0.25), kind=["line", "square"])


def _page(body: str) -> str:
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{body}</body></html>"


def test_a_static_explorer_shows_the_figure_python_draws_for_the_values_set(toy, run_in_page, tmp_path):
    tries = [{"a": 1.5, "kind": "square"}, {"a": 0.75, "kind": "line"}, {"a": 0.8, "kind": "line"}]
    plan = [
        {"explorer": 0, "inputs": {"a": v["a"], "kind": ["line", "square"].index(v["kind"])}} for v in tries
    ]
    moved = move_controls(run_in_page, tmp_path / "toy.html", _page(toy.static_html()), plan)
    # drawn again here, not read from the page; 0.8 lies between the frames 0.75 and 1.0: the slider stops on
    # 0.75, and its readout says 0.75 under the figure of 0.75
    expected = [
        toy.frame(a=1.5, kind="square"),
        toy.frame(a=0.75, kind="line"),
        toy.frame(a=0.75, kind="line"),
    ]
    assert check(moved["results"], expected, [["1.50"], ["0.75"], ["0.75"]]) == []


def test_the_readout_names_the_value_of_the_figure_shown_for_every_slider_position(
    toy, run_in_page, tmp_path
):
    """Every position a reader can reach (0.5 to 1.5 in the page's steps) shows the frame its readout names:
    with the live kernel's step of 0.05 on frames 0.25 apart, four positions in five showed another value."""
    positions = [round(0.5 + 0.05 * i, 2) for i in range(21)]
    plan = [{"explorer": 0, "inputs": {"a": a, "kind": 0}} for a in positions]
    moved = move_controls(run_in_page, tmp_path / "positions.html", _page(toy.static_html()), plan)
    for a, result in zip(positions, moved["results"], strict=True):
        shown = float(result["readouts"][0])
        assert (
            result["src"]
            == "data:image/png;base64," + base64.b64encode(toy.frame(a=shown, kind="line")).decode()
        )
        assert shown in (0.5, 0.75, 1.0, 1.25, 1.5), f"{a} reads {shown}, a value with no figure"


def test_a_korean_page_shows_each_frames_korean_alt_text(toy, run_in_page, tmp_path):
    """The page's language picks the alt texts: <html lang="ko"> (the Korean site), Korean ones."""
    html = _page(toy.static_html()).replace("<html>", '<html lang="ko">')
    alts = json.loads(DATA.search(html)[1])["alts"]["ko"]
    plan = [{"explorer": 0, "inputs": {"a": 1.5, "kind": 1}}]
    moved = move_controls(run_in_page, tmp_path / "korean.html", html, plan)
    grid = toy.grid()
    assert moved["initial"] == [alts[grid.index({"a": 1.0, "kind": "line"})]]
    assert moved["results"][0]["alt"] == alts[grid.index({"a": 1.5, "kind": "square"})]
    assert alts[0].startswith("a = 0.50, kind = line일 때의 그림: ")


def test_control_a_slider_that_stops_between_frames_is_caught(toy, run_in_page, tmp_path):
    """Positive control: given the kernel's finer step again, the page reads 0.80 under 0.75's figure."""
    html = toy.static_html().replace('input.step = c.kind === "range" ? between : 1;', "input.step = c.step;")
    html = html.replace('input.min = c.kind === "range" ? c.frames[0] : 0;', "input.min = c.low;")
    assert html != toy.static_html()
    plan = [
        {"explorer": 0, "inputs": {"a": 0.8, "kind": 0}},
        {"explorer": 0, "inputs": {"a": 1.5, "kind": 0}},
    ]
    moved = move_controls(run_in_page, tmp_path / "fine.html", _page(html), plan)
    expected = [toy.frame(a=0.75, kind="line"), toy.frame(a=1.5, kind="line")]
    problems = check(moved["results"], expected, [["0.75"], ["1.50"]])
    assert any("readout says '0.80'" in p for p in problems), problems


def test_every_grid_point_of_a_static_explorer_shows_its_own_frame(toy, run_in_page, tmp_path):
    data = json.loads(DATA.search(toy.static_html())[1])
    grid = [
        dict(zip(("a", "kind"), p, strict=True))
        for p in itertools.product([0.5, 0.75, 1.0, 1.25, 1.5], ["line", "square"])
    ]
    plan = [
        {"explorer": 0, "inputs": {c["name"]: control_input(c, v[c["name"]]) for c in data["controls"]}}
        for v in grid
    ]
    moved = move_controls(run_in_page, tmp_path / "grid.html", _page(toy.static_html()), plan)
    labels = [[f"{v['a']:.2f}"] for v in grid]
    assert check(moved["results"], [toy.frame(**v) for v in grid], labels) == []


def test_a_page_that_shows_the_wrong_frames_is_caught(toy, run_in_page, tmp_path):
    """Positive control: the same explorer with its frames stored in reverse order fails the check."""
    html = toy.static_html()
    data = json.loads(DATA.search(html)[1])
    broken = html.replace(
        json.dumps(data["frames"], separators=(",", ":")),
        json.dumps(data["frames"][::-1], separators=(",", ":")),
    )
    assert broken != html
    problems = explore_page(run_in_page, tmp_path / "broken.html", _page(broken), [data])
    assert any("another figure" in p for p in problems)


def _notebook_explorers(chapter: str) -> list[dict]:
    notebook = json.loads((ROOT / "chapters" / f"{chapter}.ipynb").read_text())
    payloads = []
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            html = "".join(output.get("data", {}).get("text/html", []))
            payloads += [json.loads(found) for found in DATA.findall(html)]
    return payloads


# both sites: a Korean chapter (ko/chapters, a complete translation) has the English one's explorers
PAGES = sorted(
    f"{book}chapters/{p.stem}" for book in ("", "ko/") for p in (ROOT / book / "chapters").glob("*.ipynb")
)


@pytest.mark.parametrize("page", PAGES)
def test_every_explorer_of_a_chapter_page_redraws_offline_as_python_drew_it(site, run_in_page, page):
    book, chapter = page.rsplit("chapters/", 1)
    payloads = _notebook_explorers(chapter)
    if not payloads:
        source = (ROOT / "chapters" / f"{chapter}.ipynb").read_text()
        assert not re.search(r"\bexplore\(|_explorer\(", source), "an explorer was stored without its frames"
        pytest.skip(f"{chapter} has no explorer")
    html = (site / f"{page}.html").read_text()
    problems = explore_page(
        run_in_page, site / book / "chapters" / f"_explorer_check_{chapter}.html", html, payloads
    )
    assert problems == []


# The alt text of an explorer's image (issue 28): the values of the frame shown, in the site's language, then
# what the figure writes (attnlib.explorer_alt); never the one sentence every frame once had.
GENERIC_ALT = "the figure for the values of the controls"
ALT_OPENING = {"en": "Figure for {}: ", "ko": "{}일 때의 그림: "}


def shown_values(controls: list[dict], values: dict) -> str:
    """The controls' labels and the values of the frame shown for ``values``, as the page writes them."""
    parts = []
    for c in controls:
        if c["kind"] == "choice":
            parts.append(f"{c['label']} = {values[c['name']]}")
            continue
        value = nearest(c["frames"], values[c["name"]])
        text = f"{value:.{c['digits']}f}"
        if c["kind"] == "options":  # a slider over numbers says 1, not 1.0
            text = text.rstrip("0").rstrip(".") if c["digits"] else str(value)
        parts.append(f"{c['label']} = {text}")
    return ", ".join(parts)


@pytest.mark.parametrize("page", PAGES)
def test_every_explorer_frame_says_in_its_alt_text_the_values_it_shows_in_the_sites_language(
    site, run_in_page, page
):
    book, chapter = page.rsplit("chapters/", 1)
    html = (site / f"{page}.html").read_text()
    payloads = [json.loads(found) for found in DATA.findall(html)]
    if not payloads:
        pytest.skip(f"{chapter} has no explorer")
    opening = ALT_OPENING["ko" if book == "ko/" else "en"]
    plan, expected = [], []
    for k, data in enumerate(payloads):
        for values in settings(data["controls"]):
            inputs = {c["name"]: control_input(c, values[c["name"]]) for c in data["controls"]}
            plan.append({"explorer": k, "inputs": inputs})
            expected.append(opening.format(shown_values(data["controls"], values)))
    moved = move_controls(run_in_page, site / book / "chapters" / f"_alt_check_{chapter}.html", html, plan)
    for data, alt in zip(payloads, moved["initial"], strict=True):
        initial = {c["name"]: c["value"] for c in data["controls"]}
        assert alt.startswith(opening.format(shown_values(data["controls"], initial))), alt
    for step, result, want in zip(plan, moved["results"], expected, strict=True):
        assert result["alt"].startswith(want), (step, result["alt"])  # the new value, once a control moved
    for data in payloads:  # every frame of the book, in both languages, says what it shows
        alts = data.get("alts", {})
        assert [len(alts.get(lang, [])) for lang in ("en", "ko")] == [len(data["frames"])] * 2
        assert GENERIC_ALT not in json.dumps(alts, ensure_ascii=False)
    assert GENERIC_ALT not in html
