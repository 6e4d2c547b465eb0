"""What an explorer's frame shows, in words: the alt text of its image, in English and in Korean.

A reader who cannot see the figure hears, for each frame, the controls' values it was drawn for and what the
figure itself writes: its titles and other text, then each panel, a plot (its axes and legend) or a map (its
rows and columns), and the colour scale's label. The words come from the matplotlib Figure when the frame is
drawn (``attnlib.explorer``); the page's script picks the language by ``<html lang>`` (the Korean site's
notebooks hold the English outputs byte for byte) and swaps the alt text with the frame::

    Figure for ρ(W_h) = 1.10, input drive × s = 1.0: plot “ρ(W_h) = 1.10, tanh drive × 1.0”, ‖∂h_T‖ against k
    ρ(W_h) = 1.10, input drive × s = 1.0일 때의 그림: 그래프 “ρ(W_h) = 1.10, tanh drive × 1.0”, 가로축: k

The figure's own words stay as drawn (the course's plots keep English labels, issue 30).
"""

from __future__ import annotations

import re

WORDS = {
    "en": {
        "figure": "Figure for {values}: {shown}",
        "plot": "plot{title}, {y} against {x}",
        "map": "map{title}, rows: {y}, columns: {x}",
        "legend": "legend: {items}",
        "colour": "colour scale: {label}",
    },
    "ko": {
        "figure": "{values}일 때의 그림: {shown}",
        "plot": "그래프{title}, 가로축: {x}, 세로축: {y}",
        "map": "맵{title}, 행: {y}, 열: {x}",
        "legend": "범례: {items}",
        "colour": "색 막대: {label}",
    },
}


# matplotlib's mathtext ($\alpha_t$) read as plain text: the symbols, no dollars, no backslashes
MATHTEXT = {"\\alpha": "α", "\\rho": "ρ", "\\sigma": "σ", "\\|": "‖", "\\cdot": "·", "\\sqrt": "√"}


def plain(text: str) -> str:
    """``text`` with matplotlib's mathtext as a reader hears it: ``$\\|s_t\\|$`` -> ``‖s_t‖``."""
    for command, symbol in MATHTEXT.items():
        text = text.replace(command, symbol)
    return re.sub(r"\\(?=[A-Za-z{}])", "", text).replace("$", "")


def _words(text: str) -> str:
    """One line: a figure's multi-line text joined by semicolons, runs of spaces as one, mathtext plain."""
    lines = (re.sub(r"\s+", " ", plain(line)).strip() for line in text.splitlines())
    return "; ".join(line for line in lines if line)


def figure_words(figure) -> dict:
    """What ``figure`` writes: its own text (suptitle, ``fig.text``), and per panel its kind (a ``map`` when
    it shows an image, else a ``plot``), title, axis labels and legend; colour bars by their label."""
    panels, colours = [], []
    for ax in figure.axes:
        if not ax.get_visible():
            continue
        if getattr(ax, "_colorbar", None) is not None:  # a colour bar's axes (matplotlib >= 3.6)
            label = _words(ax.get_ylabel() or ax.get_xlabel())
            colours += [label] if label else []
            continue
        legend = ax.get_legend()
        panels.append(
            {
                "kind": "map" if ax.images else "plot",
                "title": _words(" ".join(ax.get_title(loc) for loc in ("left", "center", "right"))),
                "x": _words(ax.get_xlabel()),
                "y": _words(ax.get_ylabel()),
                "legend": [_words(t.get_text()) for t in legend.get_texts()] if legend else [],
            }
        )
    texts = [_words(t.get_text()) for t in figure.texts if t.get_visible()]
    return {"texts": [t for t in texts if t], "panels": panels, "colours": colours}


def alt_text(values: str, words: dict, lang: str) -> str:
    """The alt text of a frame drawn for ``values`` (the controls' labels and values, as the page shows them)
    whose figure wrote ``words`` (:func:`figure_words`), in ``lang`` ("en" or "ko")."""
    say = WORDS[lang]
    parts = list(words["texts"])
    for panel in words["panels"]:
        title = f" “{panel['title']}”" if panel["title"] else ""
        x, y = panel["x"] or "—", panel["y"] or "—"
        parts.append(say[panel["kind"]].format(title=title, x=x, y=y))
        if panel["legend"]:
            parts.append(say["legend"].format(items="; ".join(panel["legend"])))
    parts += [say["colour"].format(label=label) for label in words["colours"]]
    return say["figure"].format(values=values, shown=". ".join(parts)) + "."
