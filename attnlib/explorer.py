"""Explorers that work in a live kernel and on the static website: one figure, a few controls.

A chapter writes its drawing once, as a function of the controls' values that returns a matplotlib Figure,
and hands it to ``explore`` with a small grid for each control::

    from attnlib.explorer import Range, explore

    def draw(radius: float, nonlinearity: str):
        fig, ax = plt.subplots(figsize=(7, 4))
        ...                                    # plot for these values
        return fig

    explore(draw, radius=Range(0.5, 1.5, 0.05, value=1.1, frame_step=0.1, label="ρ(W_h)"),
            nonlinearity=["linear", "tanh"])

``explore`` displays one output that carries both worlds:

- in Jupyter or Colab (ipywidgets 7.7 or 8), a widget: moving a control calls ``draw`` again;
- for the website (``text/html``), the figure precomputed at every point of the controls' frame grid as PNG
  frames, and a small script that swaps them when a control moves, with no kernel and no network. A value
  between two frames snaps to the nearest one and the page says so. Each frame's image has an alt text that
  names the controls' values and what the figure writes (``attnlib.explorer_alt``), in the page's language.

A control is a ``Range`` (a numeric slider; ``frame_step`` a multiple of ``step`` keeps the frames few), a
``Choice``, a list of values (a ``Choice``) or a ``range`` of integers. The frames are deterministic PNG bytes
(fixed dpi, no software stamp): nbval compares a stored explorer with a fresh one (do not tag its cell
nbval-ignore-output), and tests/site/test_explorers.py checks that the page shows those frames. Keep a
page light and a chapter quick: ~100 frames of ~10 kB at most, drawn without ``tight_layout`` (it costs a
second draw; ``subplots_adjust`` does not). ipywidgets and matplotlib are imported when an explorer is
made. Frames are not computed in Colab (it shows the widget) or when ``ATTNLIB_EXPLORER_FRAMES=0``.
"""

from __future__ import annotations

import itertools
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from attnlib import explorer_alt, explorer_page
from attnlib.plotting import png


@dataclass(frozen=True)
class Range:
    """A numeric slider from ``low`` to ``high`` in steps of ``step``; frames every ``frame_step``."""

    low: float
    high: float
    step: float
    value: float | None = None
    frame_step: float | None = None
    label: str | None = None


@dataclass(frozen=True)
class Choice:
    """A control that takes one of ``options`` (strings: a menu; numbers: a slider over them)."""

    options: Sequence
    value: object = None
    label: str | None = None


@dataclass(frozen=True)
class _Control:
    name: str
    label: str
    kind: str  # "range" (slider over low..high), "choice" (menu) or "options" (slider over numbers)
    frames: tuple  # the values at which frames are precomputed
    value: object
    low: float = 0.0
    high: float = 0.0
    step: float = 1.0
    digits: int = 0

    def shown(self, value) -> str:
        """``value`` as the page's readout writes it (explorer_page.SCRIPT's fmt): a range with its digits, a
        number of a slider over numbers without trailing zeros, an option as it prints."""
        if self.kind == "range":
            return f"{value:.{self.digits}f}"
        if self.kind == "options" and self.digits:
            return f"{value:.{self.digits}f}".rstrip("0").rstrip(".")
        return str(value)

    def spec(self) -> dict:
        """What the static page's script needs (a menu's options as their labels)."""
        keys = ("name", "label", "kind", "low", "high", "step", "digits")
        spec = {k: getattr(self, k) for k in keys}
        if self.kind == "choice":
            return {**spec, "frames": [str(o) for o in self.frames], "value": str(self.value)}
        return {**spec, "frames": list(self.frames), "value": self.value}


def _decimals(x: float) -> int:
    text = f"{x:.10f}".rstrip("0")
    return len(text.split(".")[1]) if "." in text else 0


def nearest(frames: Sequence, value) -> object:
    """The frame value closest to ``value`` (the first of two equally close); strings must match exactly."""
    if value in frames:
        return value
    if isinstance(value, str) or any(isinstance(f, str) for f in frames):
        raise ValueError(f"value {value!r} is not one of {list(frames)}")
    return min(frames, key=lambda f: abs(f - value))


def _control(name: str, spec) -> _Control:
    if isinstance(spec, range):
        spec = Range(spec.start, spec[-1] if len(spec) else spec.start, spec.step)
    elif isinstance(spec, (list, tuple)):
        spec = Choice(spec)
    if isinstance(spec, Choice):
        options = tuple(spec.options)
        if not options:
            raise ValueError(f"control {name!r} has no options")
        value = options[0] if spec.value is None else spec.value
        if value not in options:
            raise ValueError(f"control {name!r}: value {value!r} is not one of its options {list(options)}")
        numeric = all(isinstance(o, (int, float)) and not isinstance(o, bool) for o in options)
        if len({str(o) for o in options}) < len(options):
            raise ValueError(f"control {name!r}: options must differ in how they print, got {list(options)}")
        digits = min(3, max(_decimals(o) for o in options)) if numeric else 0
        kind = "options" if numeric else "choice"
        return _Control(name, spec.label or name, kind, options, value, digits=digits)
    if not isinstance(spec, Range):
        raise TypeError(
            f"control {name!r} must be a Range, a Choice, a list of values or a range, "
            f"got {type(spec).__name__}"
        )
    low, high, step = spec.low, spec.high, spec.step
    if not all(isinstance(x, (int, float)) for x in (low, high, step)) or not step > 0 or high < low:
        raise ValueError(f"control {name!r}: need low <= high and step > 0, got {low}, {high}, {step}")
    digits = max(_decimals(x) for x in (low, step))
    count = round((high - low) / step)
    if not math.isclose(low + count * step, high, abs_tol=step * 1e-6):
        raise ValueError(f"control {name!r}: high - low = {high - low:g} is not a multiple of step {step:g}")
    every = round((spec.frame_step or step) / step)
    if every < 1 or not math.isclose(every * step, spec.frame_step or step, rel_tol=1e-6):
        raise ValueError(f"control {name!r}: frame_step {spec.frame_step} is not a multiple of step {step}")
    grid = [round(low + i * step, digits) for i in range(count + 1)]
    cast = int if all(isinstance(x, int) for x in (low, high, step)) else float
    frames = tuple(cast(v) for v in grid[::every])
    value = low if spec.value is None else spec.value
    if not low - 1e-9 <= value <= high + 1e-9:
        raise ValueError(f"control {name!r}: value {value} is outside [{low}, {high}]")
    if not math.isclose(value, nearest(grid, value), abs_tol=step * 1e-6):
        raise ValueError(f"control {name!r}: value {value} is not on its grid {low} + k·{step}")
    return _Control(name, spec.label or name, "range", frames, cast(value), low, high, step, digits)


class Explorer:
    """The figure ``draw(**values)`` under controls; ``explore`` builds and displays one."""

    def __init__(self, draw: Callable, *, dpi: int = 72, max_frames: int = 120, **controls):
        if not callable(draw):
            raise TypeError(f"draw must be a function of the controls' values, got {type(draw).__name__}")
        if not controls:
            raise ValueError("explore needs at least one control, e.g. explore(draw, radius=[0.5, 1.0])")
        self.draw, self.dpi = draw, dpi
        self.controls = [_control(name, spec) for name, spec in controls.items()]
        count = math.prod(len(c.frames) for c in self.controls)
        if count > max_frames:
            sizes = " × ".join(f"{c.name} {len(c.frames)}" for c in self.controls)
            raise ValueError(f"the controls give {count} frames ({sizes}), over max_frames={max_frames}")

    def values(self) -> dict:
        """The controls' initial values."""
        return {c.name: c.value for c in self.controls}

    def frame(self, **values) -> bytes:
        """The PNG bytes of ``draw(**values)``: the same bytes the widget and the static page show."""
        return self._drawn(values)[0]

    def _drawn(self, values: dict) -> tuple[bytes, dict, int]:
        """The frame of ``values``, what its figure writes (``explorer_alt.figure_words``) and its width in
        CSS pixels (the PNG has ``attnlib.plotting.DENSITY`` times as many)."""
        import matplotlib.pyplot as plt
        from matplotlib.figure import Figure

        figure = self.draw(**values)
        if not isinstance(figure, Figure):
            raise TypeError(f"draw must return a matplotlib Figure, got {type(figure).__name__}")
        words = explorer_alt.figure_words(figure)
        frame, width, _ = png(figure, dpi=self.dpi)  # DENSITY times the pixels, shown at the size of dpi
        plt.close(figure)
        return frame, words, width

    def grid(self) -> list[dict]:
        """Every point of the frame grid, in the order of the stored frames (the last control fastest)."""
        names = [c.name for c in self.controls]
        return [
            dict(zip(names, point, strict=True))
            for point in itertools.product(*(c.frames for c in self.controls))
        ]

    def static_html(self) -> str:
        """The self-contained HTML of the static explorer: controls, frames, each frame's alt text in English
        and Korean (``explorer_alt``), and the script that swaps them."""
        frames, alts, widths = [], {"en": [], "ko": []}, set()
        for point in self.grid():
            frame, words, width = self._drawn(point)
            frames.append(frame)
            widths.add(width)
            values = ", ".join(f"{c.label} = {c.shown(point[c.name])}" for c in self.controls)
            for lang, said in alts.items():
                said.append(explorer_alt.alt_text(values, words, lang))
        shown = {c.name: nearest(c.frames, c.value) for c in self.controls}
        first = self.grid().index(shown)
        return explorer_page.html([c.spec() for c in self.controls], frames, first, alts, max(widths))

    def widget(self):
        """The live ipywidgets explorer: every change of a control calls ``draw`` again."""
        import ipywidgets as widgets

        inputs = {}
        for c in self.controls:
            common = {"description": c.label, "style": {"description_width": "initial"}}
            if c.kind == "choice":
                options = [(str(o), o) for o in c.frames]
                inputs[c.name] = widgets.Dropdown(options=options, value=c.value, **common)
                continue
            common["continuous_update"] = False  # a redraw takes a moment: draw where the slider stops
            if c.kind == "options":
                labels = [
                    (f"{o:.{c.digits}f}".rstrip("0").rstrip(".") if c.digits else str(o), o) for o in c.frames
                ]
                inputs[c.name] = widgets.SelectionSlider(options=labels, value=c.value, **common)
            else:
                kind, form = (
                    (widgets.IntSlider, {}) if isinstance(c.value, int) else (widgets.FloatSlider, {})
                )
                if kind is widgets.FloatSlider:
                    form = {"readout_format": f".{c.digits}f"}
                inputs[c.name] = kind(value=c.value, min=c.low, max=c.high, step=c.step, **form, **common)
        frame, _, width = self._drawn(self.values())
        image = widgets.Image(value=frame, format="png", width=width)

        def redraw(_change=None) -> None:
            image.value = self.frame(**{name: w.value for name, w in inputs.items()})

        for w in inputs.values():
            w.observe(redraw, names="value")
        return widgets.VBox([widgets.HBox(list(inputs.values())), image])

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        sizes = " × ".join(f"{c.name} ({len(c.frames)} values)" for c in self.controls)
        bundle = {"text/plain": f"explorer over {sizes}"}
        if os.environ.get("ATTNLIB_EXPLORER_FRAMES", "1") != "0" and "google.colab" not in sys.modules:
            bundle["text/html"] = self.static_html()
        try:
            box = self.widget()
        except ImportError:  # no ipywidgets: the static explorer alone
            return bundle
        view = {"version_major": 2, "version_minor": 0, "model_id": box.model_id}
        return {**bundle, "application/vnd.jupyter.widget-view+json": view}


def explore(draw: Callable, *, dpi: int = 72, max_frames: int = 120, **controls) -> None:
    """Display the explorer of ``draw`` under ``controls`` (see the module's docstring)."""
    from IPython.display import display

    display(Explorer(draw, dpi=dpi, max_frames=max_frames, **controls))
