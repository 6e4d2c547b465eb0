"""Part II: the attention function, Bahdanau and Luong (chapters 3 to 5)."""

from __future__ import annotations

from itertools import pairwise

import matplotlib.pyplot as plt

from diagramlib.canvas import ROLES, Canvas, bottom, left, right, top
from diagramlib.recurrent import _encoder_row

# ---------------------------------------------------------------------------------------------------------
# Chapter 3: dot-product attention in five steps
# ---------------------------------------------------------------------------------------------------------


def dot_product(words: dict[str, str]) -> plt.Figure:
    c = Canvas(9.7, 3.3)
    green, blue, orange = ROLES["attention"][1], ROLES["encoder"][1], ROLES["decoder"][1]
    y = 1.95
    query = c.box(0.5, y, 0.7, 0.5, "$s_t$", "decoder", size=14)
    c.text(0.5, y - 0.4, words["query"], size=9, color=orange)
    keys = c.box(0.5, 0.55, 0.7, 0.5, "$H$", "encoder", size=14)
    c.text(0.5, 0.15, r"$h_1, \dots, h_S$", size=10, color=blue)
    steps = [  # centre, width, title, formula lines, role
        (1.78, 1.25, words["scores"], [r"$e_t = H s_t$"], "attention"),
        (3.4, 1.5, words["weights"], [r"$\alpha_t = \mathrm{softmax}(e_t)$"], "attention"),
        (5.07, 1.35, words["context"], [r"$c_t = H^{\top} \alpha_t$"], "attention"),
        (6.6, 1.3, words["concatenate"], [r"$[c_t; s_t]$"], "other"),
        (
            8.55,
            2.1,
            words["output"],
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
    c.text(1.2, 0.68, words["keys"], size=9, color=blue)
    c.path([(boxes[0][0], 0.55), (boxes[2][0], 0.55), bottom(boxes[2])], color=blue)
    c.text(3.4, 0.68, words["values"], size=9, color=blue)
    c.path([top(query), (0.5, 3.05), (boxes[3][0], 3.05), top(boxes[3])], color=orange)
    c.text(3.4, 3.17, words["query again"], size=9, color=orange)
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


def bahdanau_luong(words: dict[str, str]) -> plt.Figure:
    c = Canvas(9.4, 6.1)
    green, blue, orange, grey = (ROLES[r][1] for r in ("attention", "encoder", "decoder", "other"))
    x_b, x_l, x_hb, x_hl = 2.35, 6.95, 0.55, 5.15
    w, h = 2.75, 0.5
    ys = [5.45, 4.65, 3.85, 3.05, 2.25, 1.45, 0.55]
    c.text(2.35, 5.95, words["bahdanau"], size=12)
    c.text(6.95, 5.95, words["luong"], size=12)

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
    c.text(x_b, ys[3] + 0.05, words["gates"], size=10)
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
    c.text(x_b + 0.08, ys[0] - 0.4, words["query"], size=9, color=orange, ha="left")
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
    c.text(x_l + 0.08, ly[2] - 0.4, words["query"], size=9, color=orange, ha="left")
    hl = c.box(x_hl, ly[3] - 0.4, 0.62, 1.7, "$H$", "encoder", size=14)
    c.arrow((right(hl)[0], ly[3]), left(lu[3]), color=blue)
    c.arrow((right(hl)[0], ly[4]), left(lu[4]), color=blue)
    c.text(x_hl, ly[3] + 0.72, r"$h_1, \dots, h_S$", size=9, color=blue)
    del grey, green
    return c.fig


# ---------------------------------------------------------------------------------------------------------
# Chapter 4: Bahdanau's model unrolled over three decoder steps
# ---------------------------------------------------------------------------------------------------------


def bahdanau_unrolled(words: dict[str, str]) -> plt.Figure:
    c = Canvas(10.0, 6.0)
    green, blue, orange = ROLES["attention"][1], ROLES["encoder"][1], ROLES["decoder"][1]
    y_enc, y_ctx, y_dec, y_out = 0.95, 2.55, 3.75, 5.05
    c.text(5.0, 5.8, words["title"], size=12)
    c.frame(0.15, 0.12, 4.15, 1.5, "encoder", words["bidirectional encoder"], label_at=(2.15, 1.62))
    enc = _encoder_row(c, 0.8, y_enc, 0.95)
    hs = [box for box in enc if box is not None]
    s0 = c.box(0.75, y_dec, 0.62, 0.44, "$s_0$", "decoder", size=12)
    c.text(
        0.75, y_dec - 0.75, r"$s_0 = \tanh(W_{\mathrm{init}} \overleftarrow{h}_1)$", size=8.5, color=orange
    )
    xs = [3.0, 5.6, 8.2]
    previous = s0
    for t, x in enumerate(xs, start=1):
        ctx = c.box(x, y_ctx, 1.35, 0.46, f"$\\alpha_{t},\\ c_{t}$", "attention", size=11)
        for h in hs:  # every encoder state is a key and a value
            c.arrow(top(h), (x - 0.2, y_ctx - 0.23), color=green, width=0.7, alpha=0.45, head=6)
        gru = c.box(x, y_dec, 1.35, 0.5, f"GRU: $s_{t}$", "decoder", size=11)
        out = c.box(x, y_out, 1.6, 0.5, f"$p(y_{t} \\mid y_{{<{t}}}, x)$", "other", size=10)
        # the query is the previous state: it reaches down to this step's attention
        c.path([right(previous), (x - 0.95, y_dec), (x - 0.95, y_ctx), left(ctx)], color=orange, head=8)
        c.arrow(right(previous), left(gru), color=orange)  # ... and is the recurrence's state
        c.arrow(top(ctx), bottom(gru), color=green, width=1.6)  # c_t enters the GRU's gates
        c.path(
            [right(ctx), (x + 0.88, y_ctx), (x + 0.88, y_out - 0.1), (x + 0.8, y_out - 0.1)],
            color=green,
            head=8,
        )
        c.arrow(top(gru), bottom(out), color=orange)
        c.text(x, y_out + 0.5, f"$y_{t}$", size=12)
        c.arrow(top(out), (x, y_out + 0.37), color="#475569", head=8)
        prev_y = "y_0 = \\langle\\mathrm{sos}\\rangle" if t == 1 else f"y_{t - 1}"
        c.text(x - 0.5, y_dec + 0.62, f"$\\mathrm{{emb}}({prev_y})$", size=8.5, ha="right")
        c.arrow((x - 0.6, y_dec + 0.52), (x - 0.45, y_dec + 0.25), color="#475569", head=7)
        previous = gru
    c.text(9.3, y_dec, r"$\cdots$", size=14)
    c.text(3.0 - 0.95 + 0.08, y_ctx + 0.45, words["query"], size=8.5, color=orange, ha="left")
    c.text(3.0 + 0.95, y_ctx + 0.75, words["to the output"], size=8, color=green, ha="left")
    c.text(7.2, 1.0, words["keys and values"], size=9.5, color=green)
    del blue
    return c.fig
