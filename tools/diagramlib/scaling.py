"""Fast attention and the Transformer (chapters 7 and 9)."""

from __future__ import annotations

import matplotlib.pyplot as plt

from diagramlib.canvas import ROLES, Canvas, bottom, left, right, top

# ---------------------------------------------------------------------------------------------------------
# Chapter 9: the encoder-decoder Transformer
# ---------------------------------------------------------------------------------------------------------


def transformer(words: dict[str, str]) -> plt.Figure:
    c = Canvas(9.0, 7.0)
    green, blue, orange = ROLES["attention"][1], ROLES["encoder"][1], ROLES["decoder"][1]
    xe, xd, w = 2.3, 6.5, 2.5

    def sublayer(x, y, text, role, side):
        """A sub-layer, Add & LayerNorm above it, and the residual path around the sub-layer."""
        body = c.box(x, y, w, 0.46, text, role, size=10.5)
        norm = c.box(x, y + 0.55, w, 0.26, words["add and norm"], "plain", size=9)
        c.arrow(top(body), bottom(norm))
        rx = x + side * (w / 2 + 0.2)
        grey = "#64748b"
        c.path(
            [(x, y - 0.38), (rx, y - 0.38), (rx, y + 0.55), (x + side * w / 2, y + 0.55)], color=grey, head=8
        )
        return body, norm

    # encoder
    c.frame(xe - 1.6, 1.35, xe + 1.6, 4.05, "encoder")
    c.text(xe - 1.5, 3.97, words["encoder block"], size=10, color=blue, ha="left", va="top")
    emb_e = c.box(xe, 0.9, w, 0.46, words["embedding"], "encoder", size=10.5)
    c.text(xe, 0.3, r"$x_1, \dots, x_S$", size=12)
    c.arrow((xe, 0.45), bottom(emb_e))
    sa, n1 = sublayer(xe, 1.95, words["self-attention"], "attention", -1)
    ff, n2 = sublayer(xe, 3.15, words["feed-forward"], "encoder", -1)
    c.arrow(top(emb_e), bottom(sa))
    c.arrow(top(n1), bottom(ff))
    mem = c.box(xe, 4.6, 1.9, 0.42, words["memory"], "encoder", size=10.5)
    c.arrow(top(n2), bottom(mem))

    # decoder
    c.frame(xd - 1.6, 1.35, xd + 1.6, 5.25, "decoder")
    c.text(xd + 1.5, 5.17, words["decoder block"], size=10, color=orange, ha="right", va="top")
    emb_d = c.box(xd, 0.9, w, 0.46, words["embedding"], "decoder", size=10.5)
    c.text(xd, 0.3, r"$\langle\mathrm{sos}\rangle, y_1, \dots, y_{t-1}$", size=12)
    c.arrow((xd, 0.45), bottom(emb_d))
    sa_d, m1 = sublayer(xd, 1.95, words["causal self-attention"], "attention", 1)
    ca, m2 = sublayer(xd, 3.15, words["cross-attention"], "attention", 1)
    ff_d, m3 = sublayer(xd, 4.35, words["feed-forward"], "decoder", 1)
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
    c.text(3.85, 4.9, words["keys, values"], size=9.5, color=green)
    c.text(xd - 0.08, 2.79, words["queries"], size=8.5, color=green, ha="right")
    c.text(4.5, 6.78, words["look-up"], size=9.5, color=green)
    return c.fig


# ---------------------------------------------------------------------------------------------------------
# Chapter 7: the online softmax, one chunk of keys at a time
# ---------------------------------------------------------------------------------------------------------


def online_softmax(words: dict[str, str]) -> plt.Figure:
    c = Canvas(10.4, 4.6)
    green, blue, grey = ROLES["attention"][1], ROLES["encoder"][1], ROLES["other"][1]
    c.text(5.2, 4.35, words["title"], size=12)
    # the row of scores, cut into chunks
    chunks = [(2.1, "J_1"), (5.05, "J_2"), (8.0, "J_3")]
    for x, name in chunks:
        for i in range(3):
            c.box(x - 0.6 + 0.6 * i, 3.45, 0.52, 0.42, "$e_{t,s}$" if i == 1 else "", "attention", size=9)
        c.text(x, 3.95, words["chunk"].format(chunk=name), size=10, color=green)
        c.text(x + 0.1, 2.95, r"$h_s,\ s \in " + name + "$", size=10, color=blue, ha="left")
    # the running statistics, carried from chunk to chunk
    states = [
        (0.5, r"$m = -\infty$" + "\n" + r"$l = 0$" + "\n" + r"$n = 0$"),
        (3.57, r"$m, l, n$" + "\n" + words["after"].format(chunk="J_1")),
        (6.52, r"$m, l, n$" + "\n" + words["after"].format(chunk="J_2")),
        (9.55, r"$m, l, n$" + "\n" + words["after"].format(chunk="J_3")),
    ]
    y_state = 1.75
    boxes = [c.box(x, y_state, 0.85, 0.8, text, "other", size=9) for x, text in states]
    for (x, _), a, b in zip(chunks, boxes[:-1], boxes[1:], strict=True):
        update = c.box(x, y_state, 2.0, 0.8, None, "attention")
        c.text(x, y_state + 0.23, r"$m' = \max(m,\ \max_J\, e_{t,s})$", size=9)
        c.text(x, y_state, r"$l' = l\, e^{m - m'} + \Sigma_J\, e^{e_{t,s} - m'}$", size=9)
        c.text(x, y_state - 0.24, r"$n' = n\, e^{m - m'} + \Sigma_J\, e^{e_{t,s} - m'} h_s$", size=9)
        c.arrow(right(a), left(update), color=grey)
        c.arrow(right(update), left(b), color=grey)
        c.arrow((x, 3.2), top(update), color=green)
    c.arrow(bottom(boxes[-1]), (9.55, 0.8), color=grey)
    c.text(9.55, 0.6, r"$c_t = n / l$", size=12)
    c.text(
        4.6,
        0.6,
        words["note"],
        size=9,
        color=grey,
    )
    return c.fig


# ---------------------------------------------------------------------------------------------------------
# Chapter 9: decoding with a KV cache
# ---------------------------------------------------------------------------------------------------------


def _rows(c: Canvas, x: float, y_top: float, n: int, label: str, role: str, new: bool = False):
    """``n`` stacked rows (keys or values of n positions), the last one highlighted when ``new``."""
    for i in range(n):
        last = new and i == n - 1
        c.box(x, y_top - 0.24 * i, 0.9, 0.2, "", "attention" if last else role, bold=last, round_=0.03)
    c.text(x, y_top + 0.28, label, size=10)


def kv_cache(words: dict[str, str]) -> plt.Figure:
    c = Canvas(9.8, 5.2)
    green, orange, grey = ROLES["attention"][1], ROLES["decoder"][1], ROLES["other"][1]
    c.text(4.9, 4.95, words["title"], size=12)
    # (a) without a cache: the whole prefix again
    c.text(2.3, 4.45, words["no cache"], size=11)
    for i in range(4):
        c.box(2.3, 3.75 - 0.3 * i, 2.6 - 0.45 * (3 - i), 0.22, "", "decoder", round_=0.03)
    c.text(0.25, 3.75, words["step 1"], size=8.5, color=orange, ha="left")
    c.text(0.25, 2.85, words["step t"], size=8.5, color=orange, ha="left")
    c.text(2.3, 2.4, words["prefix"], size=9, color=orange)
    c.text(2.3, 1.95, words["self cost without"], size=9.5)
    c.text(2.3, 1.6, words["cross cost without"], size=9.5)
    c.text(2.3, 1.25, words["projected again"], size=9, color=grey)
    # (b) with a cache: one new position
    c.text(7.2, 4.45, words["cache"], size=11)
    q = c.box(5.4, 3.1, 0.75, 0.42, "$q_t$", "decoder", size=12)
    c.text(5.4, 3.65, r"$\mathrm{emb}(y_{t-1})$", size=9)
    c.arrow((5.4, 3.5), top(q), color=orange)
    _rows(c, 6.7, 3.75, 4, r"$K^{(t)}$", "encoder", new=True)
    _rows(c, 7.8, 3.75, 4, r"$V^{(t)}$", "encoder", new=True)
    c.text(7.25, 2.5, words["new and kept"], size=8.5, color=green)
    c.arrow(right(q), (6.22, 3.1), color=orange)
    _rows(c, 9.15, 3.75, 6, r"$W_k M, W_v M$", "encoder")
    c.text(9.15, 2.05, words["memory"], size=8.5, color=grey)
    att = c.box(7.25, 1.75, 2.9, 0.48, None, "attention")
    c.text(7.25, 1.75, r"$c_t = \mathrm{softmax}(K^{(t)} q_t / \sqrt{d_k})^\top V^{(t)}$", size=10.5)
    c.arrow((6.7, 2.82), top(att), color=green)
    c.text(7.25, 1.1, words["self cost with"], size=9.5)
    c.text(7.25, 0.75, words["cross cost with"], size=9.5)
    c.text(7.25, 0.3, words["cache size"], size=9, color=grey)
    return c.fig
