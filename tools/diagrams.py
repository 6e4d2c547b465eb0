"""Draw the course's architecture diagrams: figures/diagrams/<name>.svg (the website) and <name>.png (Colab).

    python tools/diagrams.py           # (re)draw every diagram
    python tools/diagrams.py --check   # exit 1 and list the diagrams that are missing or out of date

Each diagram is a few boxes and arrows placed by hand in inch coordinates, with the course's notation
(notation.md) as matplotlib mathtext. One colour per role, the same in every diagram: encoder (blue),
decoder (orange), attention (green), everything else (grey). The files are byte-for-byte reproducible
(fixed ``svg.hashsalt``, no date or software metadata), so ``--check`` can compare them. The PNG twin
exists because Colab shows no SVG image in Markdown (googlecolab/colabtools#2092);
tools/colab_edition.py inlines it there.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import generated
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "figures" / "diagrams"
PNG_DPI = 130

STYLE = {
    "svg.hashsalt": "attention-course",
    "svg.fonttype": "path",  # glyphs as paths: the same drawing in every browser, whatever fonts it has
    "mathtext.fontset": "cm",  # the look of the chapters' MathJax
    "font.family": "DejaVu Sans",
    "font.size": 11,
}
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


# ---------------------------------------------------------------------------------------------------------
# Chapter 2: seq2seq without and with attention
# ---------------------------------------------------------------------------------------------------------


def _row(c: Canvas, x0: float, y: float, dx: float, letter: str, last: str, role: str):
    """Four slots at x0, x0 + dx, ...: the states 1, 2, ..., last (the third slot is an ellipsis)."""
    boxes = []
    for i, name in enumerate(["1", "2", None, last]):
        x = x0 + i * dx
        if name is None:
            c.text(x, y, r"$\cdots$", size=13)
            boxes.append(None)
        else:
            boxes.append(c.box(x, y, 0.62, 0.42, f"${letter}_{{{name}}}$", role, size=13))
    gaps = []
    for i in range(3):
        a = x0 + i * dx + (0.33 if boxes[i] else 0.2)
        b = x0 + (i + 1) * dx - (0.33 if boxes[i + 1] else 0.2)
        gaps.append((a, b))
    return boxes, gaps


def _encoder_row(c: Canvas, x0: float, y: float, dx: float):
    """x_1 .. x_S under h_1 .. h_S, linked both ways (a bidirectional GRU); returns the state boxes."""
    blue = ROLES["encoder"][1]
    boxes, gaps = _row(c, x0, y, dx, "h", "S", "encoder")
    for box, name in zip(boxes, ["1", "2", None, "S"], strict=True):
        if box is not None:
            c.text(box[0], y - 0.62, f"$x_{{{name}}}$", size=13)
            c.arrow((box[0], y - 0.48), bottom(box), color=blue)
    for a, b in gaps:
        c.arrow((a, y + 0.07), (b, y + 0.07), color=blue, head=8)
        c.arrow((b, y - 0.07), (a, y - 0.07), color=blue, head=8)
    return boxes


def _decoder_row(c: Canvas, x0: float, y: float, dx: float):
    """s_1 .. s_T with their outputs y_1 .. y_T above; returns the state boxes."""
    orange = ROLES["decoder"][1]
    boxes, gaps = _row(c, x0, y, dx, "s", "T", "decoder")
    for box, name in zip(boxes, ["1", "2", None, "T"], strict=True):
        if box is not None:
            c.arrow(top(box), (box[0], y + 0.62), color=orange)
            c.text(box[0], y + 0.78, f"$y_{{{name}}}$", size=13)
    for a, b in gaps:
        c.arrow((a, y), (b, y), color=orange, head=8)
    return boxes


def seq2seq() -> plt.Figure:
    c = Canvas(9.4, 5.0)
    dx, y_enc, y_dec = 0.95, 0.95, 3.45
    green = ROLES["attention"][1]
    panels = [
        (0.35, "(a) without attention: one $c$ for all steps"),
        (4.95, r"(b) with attention: $c_t = \sum_s \alpha_{t,s} h_s$ at every step"),
    ]
    for k, (x_left, title) in enumerate(panels):
        x0 = x_left + 0.65
        c.text(x_left + 2.05, 4.75, title, size=12)
        c.frame(x_left, 0.12, x_left + 4.1, 1.5, "encoder", "encoder", label_at=(x0 + 2 * dx, y_enc - 0.62))
        c.frame(x_left, 2.95, x_left + 4.1, 3.98, "decoder", "decoder", label_at=(x0 + 2.5 * dx, 3.83))
        enc = _encoder_row(c, x0, y_enc, dx)
        dec = _decoder_row(c, x0, y_dec, dx)
        if k == 0:
            # c = [forward h_S; backward h_1]: the ends of the two passes, then every decoder step
            ctx = c.box(x0 + 1.5 * dx, 2.2, 0.5, 0.4, "$c$", "other", size=14, bold=True)
            c.arrow(top(enc[3]), (ctx[0] + 0.25, ctx[1] - 0.12), color=INK)
            c.arrow(top(enc[0]), (ctx[0] - 0.25, ctx[1] - 0.12), color=INK)
            for box in dec:
                if box is not None:
                    c.arrow((ctx[0], ctx[1] + 0.2), bottom(box), color=INK)
            label = r"$c = [\overrightarrow{h}_S; \overleftarrow{h}_1]$"
            c.text(ctx[0] + 0.4, ctx[1] - 0.05, label, size=11, ha="left")
        else:
            for box, name in zip(dec, ["1", "2", None, "T"], strict=True):
                if box is None:
                    continue
                ct = c.box(box[0], 2.42, 0.46, 0.34, f"$c_{{{name}}}$", "attention", size=12)
                for h in enc:
                    if h is not None:
                        c.arrow(top(h), bottom(ct), color=green, width=0.8, alpha=0.55, head=7)
                c.arrow(top(ct), bottom(box), color=green)
    return c.fig


# ---------------------------------------------------------------------------------------------------------
# Chapter 3: dot-product attention in five steps
# ---------------------------------------------------------------------------------------------------------


def dot_product() -> plt.Figure:
    c = Canvas(9.7, 3.3)
    green, blue, orange = ROLES["attention"][1], ROLES["encoder"][1], ROLES["decoder"][1]
    y = 1.95
    query = c.box(0.5, y, 0.7, 0.5, "$s_t$", "decoder", size=14)
    c.text(0.5, y - 0.4, "query", size=9, color=orange)
    keys = c.box(0.5, 0.55, 0.7, 0.5, "$H$", "encoder", size=14)
    c.text(0.5, 0.15, r"$h_1, \dots, h_S$", size=10, color=blue)
    steps = [  # centre, width, title, formula lines, role
        (1.78, 1.25, "1. scores", [r"$e_t = H s_t$"], "attention"),
        (3.4, 1.5, "2. weights", [r"$\alpha_t = \mathrm{softmax}(e_t)$"], "attention"),
        (5.07, 1.35, "3. context", [r"$c_t = H^{\top} \alpha_t$"], "attention"),
        (6.6, 1.3, "4. concatenate", [r"$[c_t; s_t]$"], "other"),
        (
            8.55,
            2.1,
            "5. output",
            [
                r"$\tilde{s}_t = \tanh(W_c [c_t; s_t] + b_c)$",
                r"$\hat{y}_t = \mathrm{softmax}(W_y \tilde{s}_t + b_y)$",
            ],
            "other",
        ),
    ]
    boxes = []
    for x, w, title, lines, role in steps:
        height = 0.8 if len(lines) == 1 else 1.1
        b = c.box(x, y, w, height, None, role)
        c.text(x, y + height / 2 - 0.2, title, size=10, color=ROLES[role][1])
        for i, line in enumerate(lines):
            c.text(x, y - 0.12 - 0.3 * i + 0.15 * (len(lines) - 1), line, size=11 if len(lines) == 1 else 10)
        boxes.append(b)
    c.arrow(right(query), left(boxes[0]), color=orange)
    for (a, b), name in zip(pairwise(boxes), [r"$e_t$", r"$\alpha_t$", "$c_t$", None], strict=True):
        c.arrow(right(a), left(b))
        if name:
            c.text((right(a)[0] + left(b)[0]) / 2, y + 0.17, name, size=10)
    # keys into step 1, values into step 3, the query again into step 4
    c.path([right(keys), (boxes[0][0], 0.55), bottom(boxes[0])], color=blue)
    c.text(1.2, 0.68, "keys", size=9, color=blue)
    c.path([(boxes[0][0], 0.55), (boxes[2][0], 0.55), bottom(boxes[2])], color=blue)
    c.text(3.4, 0.68, r"values $h_s$ (the same $H$)", size=9, color=blue)
    c.path([top(query), (0.5, 3.05), (boxes[3][0], 3.05), top(boxes[3])], color=orange)
    c.text(3.4, 3.17, r"the query $s_t$ again", size=9, color=orange)
    # a hint of the weights of chapter 3's worked example: positive, summing to one
    for i, a in enumerate([0.57, 0.13, 0.26, 0.04]):
        c.ax.add_patch(
            plt.Rectangle((3.0 + i * 0.2, 1.05), 0.13, 0.42 * a / 0.57, color=green, alpha=0.7, lw=0)
        )
    c.text(3.85, 1.17, r"$\sum_s \alpha_{t,s} = 1$", size=9, color=green, ha="left")
    return c.fig


# ---------------------------------------------------------------------------------------------------------
# Chapters 4 and 5: one decoder step, Bahdanau beside Luong
# ---------------------------------------------------------------------------------------------------------


def bahdanau_luong() -> plt.Figure:
    c = Canvas(9.4, 6.1)
    green, blue, orange, grey = (ROLES[r][1] for r in ("attention", "encoder", "decoder", "other"))
    x_b, x_l, x_hb, x_hl = 2.35, 6.95, 0.55, 5.15
    w, h = 2.75, 0.5
    ys = [5.45, 4.65, 3.85, 3.05, 2.25, 1.45, 0.55]
    c.text(2.35, 5.95, "(a) Bahdanau et al. (chapter 4): look, then step", size=12)
    c.text(6.95, 5.95, "(b) Luong et al. (chapter 5): step, then look", size=12)

    # (a) Bahdanau: s_{t-1} -> alpha_t -> c_t -> GRU -> s_t -> p(y_t)
    b = [
        c.box(x_b, ys[0], 1.0, h, "$s_{t-1}$", "decoder", size=13),
        c.box(x_b, ys[1], w, 0.62, None, "attention"),
        c.box(x_b, ys[2], w, h, r"$c_t = \sum_s \alpha_{t,s} h_s$", "attention", size=11),
        c.box(x_b, ys[3] - 0.2, w, 0.9, None, "decoder"),
        c.box(x_b, ys[5], 1.0, h, "$s_t$", "decoder", size=13),
        c.box(x_b, ys[6], w + 0.55, 0.62, None, "other"),
    ]
    c.text(x_b, ys[1] + 0.13, r"$e_{t,s} = v^{\top} \tanh(W s_{t-1} + U h_s)$", size=10.5)
    c.text(x_b, ys[1] - 0.15, r"$\alpha_t = \mathrm{softmax}(e_t)$", size=10.5)
    c.text(x_b, ys[3] + 0.05, r"GRU: $c_t$ enters the gates $z_t, r_t, n_t$", size=10)
    c.text(x_b, ys[3] - 0.28, r"$s_t = f(s_{t-1}, \mathrm{emb}(y_{t-1}), c_t)$", size=10.5)
    c.text(x_b, ys[6] + 0.12, r"$p(y_t \mid y_{<t}, x) =$", size=10.5)
    c.text(
        x_b, ys[6] - 0.15, r"$\mathrm{softmax}(W_y \tanh(W_o [s_t; c_t; \mathrm{emb}(y_{t-1})]))$", size=10
    )
    for a, bb in pairwise(b):
        c.arrow(bottom(a), top(bb))
    c.path(
        [right(b[0]), (x_b + 1.6, ys[0]), (x_b + 1.6, ys[3] - 0.05), (x_b + 1.375, ys[3] - 0.05)],
        color=orange,
    )
    c.text(x_b + 1.68, ys[2] + 0.4, "$s_{t-1}$", size=10, color=orange, ha="left")
    c.text(x_b + 0.08, ys[0] - 0.4, "query", size=9, color=orange, ha="left")
    c.text(x_b + 0.08, ys[2] - 0.45, "$c_t$", size=10, ha="left")
    hb = c.box(x_hb, ys[1] - 0.4, 0.62, 1.7, "$H$", "encoder", size=14)
    c.arrow((right(hb)[0], ys[1]), left(b[1]), color=blue)
    c.arrow((right(hb)[0], ys[2]), left(b[2]), color=blue)
    c.text(x_hb, ys[1] + 0.72, r"$h_1, \dots, h_S$", size=9, color=blue)

    # (b) Luong: s_{t-1} -> GRU -> s_t -> alpha_t -> c_t -> s~_t -> p(y_t)
    ly = [5.45, 4.65, 3.85, 3.05, 2.25, 1.45, 0.55]
    lu = [
        c.box(x_l, ly[0], 1.0, h, "$s_{t-1}$", "decoder", size=13),
        c.box(x_l, ly[1], w, h, r"GRU: $s_t = f(s_{t-1}, \mathrm{emb}(y_{t-1}))$", "decoder", size=10.5),
        c.box(x_l, ly[2], 1.0, h, "$s_t$", "decoder", size=13),
        c.box(x_l, ly[3], w, 0.62, None, "attention"),
        c.box(x_l, ly[4], w, h, r"$c_t = \sum_s \alpha_{t,s} h_s$", "attention", size=11),
        c.box(x_l, ly[5], w, h, r"$\tilde{s}_t = \tanh(W_c [c_t; s_t])$", "other", size=11),
        c.box(x_l, ly[6], w, 0.62, None, "other"),
    ]
    c.text(x_l, ly[3] + 0.13, r"$e_t = \mathrm{score}(s_t, H)$", size=10.5)
    c.text(x_l, ly[3] - 0.15, r"$\alpha_t = \mathrm{softmax}(e_t)$", size=10.5)
    c.text(x_l, ly[6] + 0.12, r"$p(y_t \mid y_{<t}, x) =$", size=10.5)
    c.text(x_l, ly[6] - 0.15, r"$\mathrm{softmax}(W_y \tilde{s}_t)$", size=10.5)
    for a, bb in pairwise(lu):
        c.arrow(bottom(a), top(bb))
    c.path([right(lu[2]), (x_l + 1.6, ly[2]), (x_l + 1.6, ly[5]), right(lu[5])], color=orange)
    c.text(x_l + 1.68, ly[4] + 0.4, "$s_t$", size=10, color=orange, ha="left")
    c.text(x_l + 0.08, ly[2] - 0.4, "query", size=9, color=orange, ha="left")
    hl = c.box(x_hl, ly[3] - 0.4, 0.62, 1.7, "$H$", "encoder", size=14)
    c.arrow((right(hl)[0], ly[3]), left(lu[3]), color=blue)
    c.arrow((right(hl)[0], ly[4]), left(lu[4]), color=blue)
    c.text(x_hl, ly[3] + 0.72, r"$h_1, \dots, h_S$", size=9, color=blue)
    del grey, green
    return c.fig


# ---------------------------------------------------------------------------------------------------------
# Chapter 9: the encoder-decoder Transformer
# ---------------------------------------------------------------------------------------------------------


def transformer() -> plt.Figure:
    c = Canvas(9.0, 7.0)
    green, blue, orange = ROLES["attention"][1], ROLES["encoder"][1], ROLES["decoder"][1]
    xe, xd, w = 2.3, 6.5, 2.5

    def sublayer(x, y, text, role, side):
        """A sub-layer, Add & LayerNorm above it, and the residual path around the sub-layer."""
        body = c.box(x, y, w, 0.46, text, role, size=10.5)
        norm = c.box(x, y + 0.55, w, 0.26, r"Add & LayerNorm: $\mathrm{LN}(y + \cdot)$", "plain", size=9)
        c.arrow(top(body), bottom(norm))
        rx = x + side * (w / 2 + 0.2)
        grey = "#64748b"
        c.path(
            [(x, y - 0.38), (rx, y - 0.38), (rx, y + 0.55), (x + side * w / 2, y + 0.55)], color=grey, head=8
        )
        return body, norm

    # encoder
    c.frame(xe - 1.6, 1.35, xe + 1.6, 4.05, "encoder")
    c.text(xe - 1.5, 3.97, r"encoder block, $\times N$", size=10, color=blue, ha="left", va="top")
    emb_e = c.box(xe, 0.9, w, 0.46, "embedding + positions", "encoder", size=10.5)
    c.text(xe, 0.3, r"$x_1, \dots, x_S$", size=12)
    c.arrow((xe, 0.45), bottom(emb_e))
    sa, n1 = sublayer(xe, 1.95, "self-attention (multi-head)", "attention", -1)
    ff, n2 = sublayer(xe, 3.15, "feed-forward", "encoder", -1)
    c.arrow(top(emb_e), bottom(sa))
    c.arrow(top(n1), bottom(ff))
    mem = c.box(xe, 4.6, 1.9, 0.42, r"memory $M = [m_1, \dots, m_S]$", "encoder", size=10.5)
    c.arrow(top(n2), bottom(mem))

    # decoder
    c.frame(xd - 1.6, 1.35, xd + 1.6, 5.25, "decoder")
    c.text(xd + 1.5, 5.17, r"decoder block, $\times N$", size=10, color=orange, ha="right", va="top")
    emb_d = c.box(xd, 0.9, w, 0.46, "embedding + positions", "decoder", size=10.5)
    c.text(xd, 0.3, r"$\langle\mathrm{sos}\rangle, y_1, \dots, y_{t-1}$", size=12)
    c.arrow((xd, 0.45), bottom(emb_d))
    sa_d, m1 = sublayer(xd, 1.95, "causal self-attention (multi-head)", "attention", 1)
    ca, m2 = sublayer(xd, 3.15, "cross-attention (multi-head)", "attention", 1)
    ff_d, m3 = sublayer(xd, 4.35, "feed-forward", "decoder", 1)
    c.arrow(top(emb_d), bottom(sa_d))
    c.arrow(top(m1), bottom(ca))
    c.arrow(top(m2), bottom(ff_d))
    out = c.box(
        xd,
        5.8,
        w,
        0.46,
        r"$p(y_t \mid y_{<t}, x) = \mathrm{softmax}(W_{\mathrm{out}}\, y_t)$",
        "other",
        size=10,
    )
    c.arrow(top(m3), bottom(out))
    c.arrow(top(out), (xd, 6.3))
    c.text(xd, 6.43, "$y_t$", size=12)

    # the bridge: keys and values from the memory, queries from the decoder below
    c.path([right(mem), (4.45, 4.6), (4.45, 3.15), left(ca)], color=green, width=1.6)
    c.text(3.85, 4.9, r"keys, values: $M$", size=9.5, color=green)
    c.text(xd - 0.08, 2.79, "queries from the decoder", size=8.5, color=green, ha="right")
    c.text(
        4.5,
        6.78,
        r"cross-attention is chapter 5's look-up: the decoder's state ($s_t$) queries the encoder's ($h_s$)",
        size=9.5,
        color=green,
    )
    return c.fig


DIAGRAMS: dict[str, Callable[[], plt.Figure]] = {
    "seq2seq": seq2seq,
    "dot-product": dot_product,
    "bahdanau-luong": bahdanau_luong,
    "transformer": transformer,
}


def compact(svg: bytes) -> bytes:
    """The SVG without indentation, its coordinates rounded to 1/100 (of a point, or of a glyph unit)."""
    text = re.sub(r"\n +", "\n", svg.decode())
    # scales (below 1) keep 4 decimals: a glyph's size must not drift against its position
    text = re.sub(
        r"(?<![\w.])(-?\d+\.\d{3,})", lambda m: f"{float(m[1]):.{2 if abs(float(m[1])) >= 1 else 4}f}", text
    )
    return text.encode()


def render(name: str) -> dict[str, bytes]:
    """{".svg": bytes, ".png": bytes} of one diagram."""
    with matplotlib.rc_context(STYLE):
        fig = DIAGRAMS[name]()
        files = {}
        for suffix, options in (
            (".svg", {"metadata": {"Date": None}}),
            (".png", {"dpi": PNG_DPI, "metadata": {"Software": None}}),
        ):
            buffer = io.BytesIO()
            fig.savefig(buffer, format=suffix[1:], **options)
            files[suffix] = compact(buffer.getvalue()) if suffix == ".svg" else buffer.getvalue()
        plt.close(fig)
    return files


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def write(check: bool = False, names: list[str] | None = None) -> list[Path]:
    """Draw (or with ``check`` only find) the diagram files that are missing or out of date; return them."""
    stale = []
    for name in names or DIAGRAMS:
        for suffix, data in render(name).items():
            target = OUT / f"{name}{suffix}"
            if generated.update(target, data, check):
                stale.append(target)
                if not check:
                    print(f"written: {_shown(target)} ({len(data) / 1024:.1f} kB)")
    return stale


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = write(check=check, names=[a for a in argv if not a.startswith("--")] or None)
    if check:
        return generated.report([_shown(t) for t in stale], "python tools/diagrams.py")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
