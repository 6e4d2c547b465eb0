"""Part I: recurrent networks and the seq2seq bottleneck (chapters 1 and 2)."""

from __future__ import annotations

import matplotlib.pyplot as plt

from diagramlib.canvas import INK, ROLES, Canvas, bottom, left, right, top

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


def seq2seq(words: dict[str, str]) -> plt.Figure:
    c = Canvas(9.4, 5.0)
    dx, y_enc, y_dec = 0.95, 0.95, 3.45
    green = ROLES["attention"][1]
    panels = [
        (0.35, words["without"]),
        (4.95, words["with"]),
    ]
    for k, (x_left, title) in enumerate(panels):
        x0 = x_left + 0.65
        c.text(x_left + 2.05, 4.75, title, size=12)
        c.frame(
            x_left, 0.12, x_left + 4.1, 1.5, "encoder", words["encoder"], label_at=(x0 + 2 * dx, y_enc - 0.62)
        )
        c.frame(x_left, 2.95, x_left + 4.1, 3.98, "decoder", words["decoder"], label_at=(x0 + 2.5 * dx, 3.83))
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
# Chapter 1: the RNN rolled and unrolled, the Jacobian product; the GRU cell
# ---------------------------------------------------------------------------------------------------------


def rnn_unrolled(words: dict[str, str]) -> plt.Figure:
    c = Canvas(9.6, 3.9)
    blue, red = ROLES["encoder"][1], "#b91c1c"
    y = 1.6
    # (a) rolled: one cell and its loop
    c.text(1.3, 3.65, words["rolled"], size=12)
    cell = c.box(1.05, y, 1.3, 0.62, r"$h_t = \varphi(z_t)$", "encoder", size=12)
    c.text(1.05, 0.45, "$x_t$", size=13)
    c.arrow((1.05, 0.63), bottom(cell), color=blue)
    c.text(1.15, 0.95, "$W_x$", size=10, color=blue, ha="left")
    c.arrow(top(cell), (1.05, 2.75), color=blue)
    c.text(1.05, 2.9, "$h_t$", size=13)
    c.arrow((1.7, y + 0.22), (1.7, y - 0.22), color=blue, bend=-2.4, head=9)
    c.text(2.25, y + 0.3, "$W_h$", size=11, color=blue, ha="left")
    c.text(1.3, 0.05, r"$z_t = W_h h_{t-1} + W_x x_t + b$", size=9.5)
    c.text(2.85, y, "$=$", size=18)
    # (b) unrolled: a deep network whose layers share W_h
    c.text(6.3, 3.65, words["unrolled"], size=12)
    xs = [4.0, 5.55, 7.05, 8.6]
    names = ["t-k", "t-k+1", None, "t"]
    boxes = []
    for x, name in zip(xs, names, strict=True):
        if name is None:
            c.text(x, y, r"$\cdots$", size=14)
            boxes.append(None)
            continue
        box = c.box(x, y, 0.95, 0.5, f"$h_{{{name}}}$", "encoder", size=12)
        boxes.append(box)
        c.text(x, 0.45, f"$x_{{{name}}}$", size=12)
        c.arrow((x, 0.63), bottom(box), color=blue)
    c.arrow((3.15, y), left(boxes[0]), color=blue)
    for a, b in ((0, 1), (1, 2), (2, 3)):
        x0 = right(boxes[a])[0] if boxes[a] else xs[a] + 0.3
        x1 = left(boxes[b])[0] if boxes[b] else xs[b] - 0.3
        c.arrow((x0, y), (x1, y), color=blue)
        c.text((x0 + x1) / 2, y + 0.15, "$W_h$", size=9.5, color=blue)
    # the backward path: one Jacobian factor per step
    c.arrow((xs[3], y + 0.3), (xs[0], y + 0.3), color=red, bend=0.18, width=1.4)
    c.text(
        6.3,
        3.05,
        r"$\partial h_t / \partial h_{t-k} = \prod_{i=t-k+1}^{t} \mathrm{diag}(\varphi'(z_i))\, W_h$",
        size=11,
        color=red,
    )
    c.text(6.3, 2.62, words["backwards"], size=9, color=red)
    return c.fig


def gru_cell(words: dict[str, str]) -> plt.Figure:
    c = Canvas(9.2, 4.4)
    blue, grey = ROLES["encoder"][1], ROLES["other"][1]
    path = INK  # the additive path: the course keeps green for attention
    y_top = 3.55
    c.text(4.6, 4.2, words["title"], size=11)
    c.text(0.35, y_top, "$h_{t-1}$", size=13)
    keep = c.box(4.55, y_top, 1.15, 0.44, r"$\odot\, u_t$", "other", size=12)
    plus = c.box(7.6, y_top, 0.5, 0.44, "$+$", "plain", size=14, round_=0.2)
    c.text(8.85, y_top, "$h_t$", size=13)
    c.arrow((0.65, y_top), left(keep), color=path, width=2.0)
    c.arrow(right(keep), left(plus), color=path, width=2.0)
    c.arrow(right(plus), (8.6, y_top), color=path, width=2.0)
    c.text(2.6, y_top + 0.18, words["additive path"], size=9, color=path)
    # the gates and the candidate, fed by x_t and h_{t-1}
    gates = [
        (1.7, words["reset"]),
        (4.55, words["update"]),
    ]
    y_gate = 2.35
    boxes = [c.box(x, y_gate, 2.6, 0.5, text, "encoder", size=9.5) for x, text in gates]
    cand = c.box(3.85, 1.3, 5.4, 0.5, None, "encoder")
    c.text(3.85, 1.3, words["candidate"], size=10)
    mix = c.box(7.6, 2.35, 1.15, 0.44, r"$\odot\, (1 - u_t)$", "other", size=11)
    c.arrow(bottom(boxes[0]), (boxes[0][0], 1.55), color=blue)  # r_t into the candidate
    c.arrow(top(boxes[1]), bottom(keep), color=blue)  # u_t scales the old state ...
    c.path([right(boxes[1]), (6.55, y_gate), (6.55, 2.1), (7.0, 2.1)], color=blue, head=8)  # ... and 1 - u_t
    c.path([right(cand), (7.6, 1.3), bottom(mix)], color=blue)
    c.arrow(top(mix), bottom(plus), color=blue)
    c.text(4.6, 0.6, r"$h_t = (1 - u_t) \odot n_t + u_t \odot h_{t-1}$", size=12)
    c.text(4.6, 0.2, words["note"], size=9, color=grey)
    return c.fig
