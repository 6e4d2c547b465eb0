"""The two sites, English (the root) and Korean (ko/): the language switcher, hreflang links and the Korean
search (issue 30). The pages are those of both tables of contents (ko/_toc.yml: the complete translations)."""

import json
import re
import sys
from html import unescape
from pathlib import Path

import pytest
import yaml

from .test_site import ROOT, _both_sites, _toc_pages

SWITCH = re.compile(
    r'<a href="([^"]+)"[^>]*class="btn btn-sm btn-language-switch-button[^"]*"[^>]*>(.*?)</a>', re.S
)
HREFLANG = re.compile(r'<link rel="alternate" hreflang="(en|ko)" href="([^"]+)" />')
BASEURL = yaml.safe_load((ROOT / "_config.yml").read_text())["html"]["baseurl"].rstrip("/") + "/"


def switch_problems(site: Path, page: str, html: str) -> list[str]:
    """What is wrong with a page's language switch: none, more than one, a link to a missing page, or (when
    the page has a twin in the other language) a link that is not to the twin."""
    found = SWITCH.findall(html)
    if len(found) != 1:
        return [f"{page}: {len(found)} language links"]
    href, _ = found[0]
    target = ((site / page).parent / href).resolve()
    problems = [] if target.is_file() else [f"{page}: the language link {href} lands on a missing page"]
    korean = page.startswith("ko/")
    twin = site / (page.removeprefix("ko/") if korean else f"ko/{page}")
    if twin.with_suffix(".html").is_file() and target != twin.with_suffix(".html").resolve():
        problems.append(f"{page}: the language link {href} is not the same page in the other language")
    return problems


@pytest.mark.parametrize("page", _both_sites())
def test_the_language_switch_lands_on_the_same_page_in_the_other_language_or_its_home(site, page):
    assert switch_problems(site, page, (site / f"{page}.html").read_text()) == []


@pytest.mark.parametrize("page", _both_sites())
def test_hreflang_links_name_pages_that_exist(site, page):
    html = (site / f"{page}.html").read_text()
    links = dict(HREFLANG.findall(html))
    name = page.removeprefix("ko/")
    notice = name == "intro" and (ROOT / "ko" / "intro.md").read_text().startswith(
        "<!-- korean-edition-notice"
    )
    english_only = notice or not (site / "ko" / f"{name}.html").exists()  # the notice is no translation
    assert set(links) == (set() if english_only else {"en", "ko"})
    for url in links.values():
        assert url.startswith(BASEURL) and (site / url.removeprefix(BASEURL)).is_file(), url


def test_an_english_page_not_yet_in_korean_links_to_the_korean_home_and_says_so(site):
    korean = set(_toc_pages("ko/"))
    untranslated = [page for page in _toc_pages() if f"ko/{page}" not in korean]
    if not untranslated:
        pytest.skip("every English page is in the Korean edition")
    html = (site / f"{untranslated[0]}.html").read_text()
    href, text = SWITCH.findall(html)[0]
    assert ((site / untranslated[0]).parent / href).resolve() == (site / "ko" / "intro.html").resolve()
    assert "번역 중" in unescape(text)


@pytest.mark.parametrize("damage", ["missing page", "other page", "no link"])
def test_control_a_language_switch_to_a_missing_or_wrong_page_is_caught(site, damage):
    page = "chapters/03_dot_product_attention"
    html = (site / f"{page}.html").read_text()
    href, _ = SWITCH.findall(html)[0]
    damaged = {
        "missing page": html.replace(f'href="{href}"', 'href="../ko/chapters/99_missing.html"', 1),
        "other page": html.replace(f'href="{href}"', 'href="../ko/intro.html"', 1),
        "no link": SWITCH.sub("", html),
    }[damage]
    problems = switch_problems(site, page, damaged)
    expected = {
        "missing page": "lands on a missing page",
        "other page": "not the same page",
        "no link": "0 language",
    }
    if damage == "other page" and not (site / "ko" / f"{page}.html").exists():
        assert problems == []  # the Korean home is the right target of an untranslated page
    else:
        assert any(expected[damage] in p for p in problems), problems


# ---------------------------------------------------------------- the Korean search

SEARCH = """<script>
window.addEventListener("load", () => {
  const done = (value) => {
    const out = document.createElement("div");
    out.id = "search-result";
    out.textContent = JSON.stringify(value);
    document.body.appendChild(out);
  };
  const run = () => {
    if (!Search.hasIndex()) return setTimeout(run, 50);
    const parsed = Search._parseQuery(QUERY);
    done(Search._performSearch(...parsed).map((r) => r[0]));
  };
  run();
});
</script>"""


def _text(html: str) -> str:
    main = re.search(r'<article class="bd-article"[^>]*>(.*?)</article>', html, re.S)
    body = re.sub(r"<(script|style|pre)[^>]*>.*?</\1>", " ", main[1] if main else html, flags=re.S)
    return unescape(re.sub(r"<[^>]+>", " ", body))


def test_searching_the_korean_site_for_a_word_finds_every_page_that_uses_it_with_a_particle(
    site, run_in_page
):
    """어텐션 finds the pages that write it, with or without a particle glued to it (어텐션은, 어텐션의)."""
    word = "어텐션"
    pages = [p for p in _toc_pages("ko/") if word in _text((site / f"{p}.html").read_text())]
    if not pages:
        pytest.skip(f"no Korean page uses {word} yet")
    script = SEARCH.replace("QUERY", json.dumps(word))
    found = run_in_page(
        site / "ko" / "search_test.html", (site / "ko" / "search.html").read_text(), script, "search-result"
    )
    print(f"{word}: {sorted(set(found))}")
    assert set(found) >= {p.removeprefix("ko/") for p in pages}, found


def test_control_the_english_splitter_indexes_a_korean_word_only_with_its_particle():
    sys.path.insert(0, str(ROOT / "_ext"))
    from korean_search import SearchKorean
    from sphinx.search.en import SearchEnglish

    assert SearchEnglish({}).split("어텐션은 가중합이다") == ["어텐션은", "가중합이다"]
    assert SearchKorean({}).split("어텐션은 가중합이다") == ["어텐션은", "어텐션", "가중합이다", "가중합"]


# ---------------------------------------------------------------- what both sites' pages show

RAW_MYST = re.compile(r"\{(glue(:\w+)?|numref|doc|ref|eq)\}`|```\{|:::\{|\*\*")
LOCAL_LINK = re.compile(r'<a [^>]*href="(?!https?:|mailto:|#|javascript:)([^"#?]+)[^"]*"')


def raw_markup(html: str) -> list[str]:
    """MyST roles, directive fences or unclosed ** left in a page's text (code blocks left out)."""
    text = _text(re.sub(r"<(code|pre)[^>]*>.*?</\1>", " ", html, flags=re.S))
    return [text[max(0, m.start() - 30) : m.end() + 30] for m in RAW_MYST.finditer(text)]


ENGLISH_PROMPT = re.compile(r"(Show|Hide) code cell")


@pytest.mark.parametrize("page", _toc_pages("ko/"))
def test_a_korean_page_folds_its_code_cells_with_korean_prompts(site, page):
    """myst-nb's "Show code cell source" comes from ko/_config.yml in Korean (the evidence cells' own titles,
    "How we know: ...", are the English code's: the glossary keeps them)."""
    assert ENGLISH_PROMPT.findall((site / f"{page}.html").read_text()) == []


def test_control_the_english_chapters_fold_code_cells_with_the_english_prompt(site):
    assert ENGLISH_PROMPT.search((site / "chapters" / "01_rnn_gradients.html").read_text())


@pytest.mark.parametrize("page", _both_sites())
def test_a_page_shows_no_raw_myst_or_unclosed_emphasis(site, page):
    assert raw_markup((site / f"{page}.html").read_text()) == []


def test_control_raw_myst_and_an_unclosed_emphasis_are_caught():
    html = "<p>**어텐션(attention)**은 {glue:text}`x`</p><p><code>**in code**</code></p>"
    found = raw_markup(f'<article class="bd-article">{html}</article>')
    assert len(found) == 3 and not any("in code" in f for f in found), found  # two ** and the role


@pytest.mark.parametrize("page", _both_sites())
def test_every_link_of_a_page_to_the_site_lands_on_a_file(site, page):
    path = site / f"{page}.html"
    missing = [
        href for href in LOCAL_LINK.findall(path.read_text()) if not (path.parent / unescape(href)).exists()
    ]
    assert missing == []


def test_control_a_link_to_a_missing_page_is_caught(site):
    html = '<a class="reference" href="../ko/chapters/99_missing.html">x</a>'
    path = site / "chapters" / "x.html"
    assert [h for h in LOCAL_LINK.findall(html) if not (path.parent / h).exists()] == [
        "../ko/chapters/99_missing.html"
    ]


def test_the_korean_colab_editions_number_figures_as_the_korean_site_does(site):
    sys.path.insert(0, str(ROOT / "tools"))
    from colab_edition import figure_labels

    if not (ROOT / "ko" / "_toc.yml").exists():
        pytest.skip("no Korean edition")
    for label, (number, page) in figure_labels("ko/").items():
        html = (site / f"{page}.html").read_text()
        found = re.search(rf'id="{re.escape(label)}".*?caption-number">그림 (\d+)', html, re.S)
        assert found, f"{label} not found on {page}.html"
        assert int(found[1]) == number, f"{label}: website 그림 {found[1]}, Colab edition 그림 {number}"
