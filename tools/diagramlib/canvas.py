"""A canvas for the course's diagrams: boxes and arrows placed by hand in inch coordinates.

One colour per role, the same in every diagram: encoder (blue), decoder (orange), attention (green),
everything else (grey). Labels use the course's notation (notation.md) as matplotlib mathtext. ``style``
gives the matplotlib settings of each language: the Korean ones add a pinned font with Hangul.
"""

from __future__ import annotations

import hashlib
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

STYLE = {
    "svg.hashsalt": "attention-course",
    "svg.fonttype": "path",  # glyphs as paths: the same drawing in every browser, whatever fonts it has
    "mathtext.fontset": "cm",  # the look of the chapters' MathJax
    "font.family": "DejaVu Sans",
    "font.size": 11,
}
# The Korean diagrams: Hangul from NanumGothic 3.021, the file of the pinned PyPI package koreanize-matplotlib
# (requirements-course.txt; found on disk, never imported: importing it changes matplotlib's settings). The
# glyphs become paths in the SVG, so --check holds only with this very file: its hash is checked. Maths stays
# in the "cm" fontset; a character NanumGothic lacks falls back to DejaVu Sans. The font is NAVER's, under the
# SIL Open Font License 1.1; Debian's fonts-nanum 20200506-1 ships the same file (same sha256).
KOREAN_FONT = ("koreanize-matplotlib", "koreanize_matplotlib/fonts/NanumGothic.ttf")
KOREAN_FONT_SHA256 = "48a28e97b34fc8e5b157657633670cd1b7de126cfc414da65ce9c3d5bc8be733"


def korean_font() -> Path:
    """NanumGothic.ttf, registered with matplotlib; a clear error when it is missing or another file."""
    package, name = KOREAN_FONT
    try:
        path = Path(distribution(package).locate_file(name))
    except PackageNotFoundError:
        path = None
    if path is None or not path.is_file():
        raise RuntimeError(
            f"the Korean diagrams need {name.rsplit('/', 1)[-1]} from the PyPI package {package}, pinned in "
            "requirements-course.txt: run bash tools/setup.sh"
        )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != KOREAN_FONT_SHA256:
        raise RuntimeError(
            f"{path} is not the pinned NanumGothic (sha256 {digest}, expected {KOREAN_FONT_SHA256}): "
            "install the version of requirements-course.txt (bash tools/setup.sh)"
        )
    fonts = font_manager.fontManager
    if str(path) not in {font.fname for font in fonts.ttflist}:
        # another NanumGothic (a system one, say Debian's fonts-nanum) must not stand in for the pinned file
        fonts.ttflist = [font for font in fonts.ttflist if font.name != "NanumGothic"]
        fonts.addfont(str(path))
    found = font_manager.findfont(
        font_manager.FontProperties(family="NanumGothic"), fallback_to_default=False
    )
    if found != str(path):
        raise RuntimeError(f"matplotlib finds NanumGothic at {found}, not at the pinned {path}")
    return path


def style(language: str) -> dict:
    """The matplotlib settings that draw the diagrams of ``language`` ("en" or "ko")."""
    if language == "en":
        return STYLE
    if language == "ko":
        korean_font()
        return {**STYLE, "font.family": ["NanumGothic", "DejaVu Sans"]}
    raise ValueError(f"language must be 'en' or 'ko', not {language!r}")


# role -> (fill, edge)
ROLES = {
    "encoder": ("#dbeafe", "#1d4ed8"),
    "decoder": ("#ffedd5", "#c2410c"),
    "attention": ("#dcfce7", "#15803d"),
    "other": ("#f1f5f9", "#475569"),
    "plain": ("#ffffff", "#475569"),
}
INK = "#1e293b"


class Canvas:
    """A figure whose data coordinates are inches, with boxes and arrows placed by their centres."""

    def __init__(self, width: float, height: float):
        self.fig = plt.figure(figsize=(width, height))
        self.ax = self.fig.add_axes((0, 0, 1, 1))
        self.ax.set_xlim(0, width)
        self.ax.set_ylim(0, height)
        self.ax.axis("off")

    def box(self, x, y, w, h, text, role="other", size=None, bold=False, dashed=False, round_=0.08):
        fill, edge = ROLES[role]
        patch = FancyBboxPatch(
            (x - w / 2, y - h / 2),
            w,
            h,
            boxstyle=f"round,pad=0,rounding_size={round_}",
            facecolor=fill,
            edgecolor=edge,
            linewidth=2.0 if bold else 1.2,
            linestyle="--" if dashed else "-",
        )
        self.ax.add_patch(patch)
        if text:
            self.text(x, y, text, size=size)
        return (x, y, w, h)

    def text(self, x, y, text, size=None, color=INK, ha="center", va="center", style="normal"):
        self.ax.text(x, y, text, ha=ha, va=va, fontsize=size, color=color, fontstyle=style)

    def frame(self, x0, y0, x1, y1, role, label=None, label_at=None):
        """A dashed frame around a group of boxes, its label at the top left (or centred on ``label_at``)."""
        _, edge = ROLES[role]
        patch = FancyBboxPatch(
            (x0, y0),
            x1 - x0,
            y1 - y0,
            boxstyle="round,pad=0,rounding_size=0.12",
            facecolor="none",
            edgecolor=edge,
            linewidth=1.0,
            linestyle=(0, (4, 3)),
        )
        self.ax.add_patch(patch)
        if label and label_at is None:
            self.text(x0 + 0.1, y1 - 0.08, label, size=10, color=edge, ha="left", va="top")
        elif label:
            self.text(*label_at, label, size=10, color=edge)

    def arrow(self, start, end, color=INK, width=1.2, style="-|>", bend=0.0, alpha=1.0, head=11):
        patch = FancyArrowPatch(
            start,
            end,
            arrowstyle=style,
            mutation_scale=head,
            color=color,
            linewidth=width,
            alpha=alpha,
            shrinkA=0,
            shrinkB=0,
            connectionstyle=f"arc3,rad={bend}",
        )
        self.ax.add_patch(patch)

    def path(self, points, color=INK, width=1.2, head=11):
        """A polyline through ``points`` with an arrow head at the end."""
        xs, ys = zip(*points, strict=True)
        self.ax.plot(xs[:-1], ys[:-1], color=color, linewidth=width, solid_capstyle="butt")
        self.arrow(points[-2], points[-1], color=color, width=width, head=head)


def top(b):
    return (b[0], b[1] + b[3] / 2)


def bottom(b):
    return (b[0], b[1] - b[3] / 2)


def left(b):
    return (b[0] - b[2] / 2, b[1])


def right(b):
    return (b[0] + b[2] / 2, b[1])
