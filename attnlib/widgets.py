"""The lessons' explorers that are worth a function of their own (attnlib.explorer draws them in both worlds:
a widget in a live kernel, precomputed frames on the website).

matplotlib and ipywidgets are imported when an explorer is drawn, so that ``import attnlib`` (a training
script, a test) does not pay for them.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from attnlib import plotting, scores
from attnlib.explorer import Range, explore
from attnlib.masking import attend


def _check(H: torch.Tensor, labels: Sequence[str], query: Sequence[float]) -> None:
    if H.dim() != 2 or H.shape[1] != 2:
        raise ValueError(f"H must be (S, 2) to be drawn in the plane, got shape {tuple(H.shape)}")
    if len(labels) != H.shape[0]:
        raise ValueError(f"labels has {len(labels)} names but H has {H.shape[0]} rows")
    if len(query) != 2:
        raise ValueError(f"query must have 2 coordinates, got {len(query)}")


def query_figure(H: torch.Tensor, labels: Sequence[str], query: Sequence[float]):
    """The figure of one query ``s_t`` against the keys ``H``: the plane, left, and the weights, right.

    e_t = H s_t,   alpha_t = softmax(e_t),   c_t = Hᵀ alpha_t       (chapter 3)
    """
    import matplotlib.pyplot as plt

    _check(H, labels, query)
    s_t = torch.tensor([list(query)], dtype=H.dtype)  # (1, 2)
    e = scores.dot(s_t, H)  # (1, S)
    context, alpha = attend(e, H)  # (1, 2), (1, S)
    reach = float(H.abs().max()) * 1.3 + 0.5
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.8))
    left.scatter(H[:, 0], H[:, 1], s=80, color="tab:blue", label="keys = values $h_s$")
    for (x, y), name in zip(H.tolist(), labels, strict=True):
        left.annotate(name, (x, y), textcoords="offset points", xytext=(6, 6))
    if float(s_t.norm()) > 0:
        left.annotate("", xy=s_t[0].tolist(), xytext=(0, 0), arrowprops={"color": "tab:red", "width": 2})
    left.plot([], [], color="tab:red", lw=3, label="query $s_t$")
    left.scatter(
        *context[0].tolist(), s=150, marker="*", color="tab:green", label="context $c_t = H^T \\alpha_t$"
    )
    left.set_xlim(-reach, reach)
    left.set_ylim(-reach, reach)
    left.set_aspect("equal")
    left.axhline(0, color="grey", lw=0.5)
    left.axvline(0, color="grey", lw=0.5)
    left.set_xlabel("dimension 1")
    left.set_ylabel("dimension 2")
    left.set_title(f"$s_t$ = ({s_t[0, 0]:.2f}, {s_t[0, 1]:.2f}),  $\\|s_t\\|$ = {float(s_t.norm()):.3f}")
    left.legend(loc="lower left", fontsize=8)
    plotting.bars(alpha[0], labels, ax=right, title="weights $\\alpha_t$ = softmax($H s_t$)")
    for s, (a, score) in enumerate(zip(alpha[0].tolist(), e[0].tolist(), strict=True)):
        right.text(s, a + 0.02, f"e={score:.2f}", ha="center", fontsize=8)
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.14, top=0.9, wspace=0.25)  # tight_layout costs a draw
    return fig


def query_explorer(H: torch.Tensor, labels: Sequence[str], *, query: Sequence[float] = (1.0, 0.5)) -> None:
    """Move a 2-d query s_t around the keys h_1..h_S and watch scores, weights and context change.

    The two controls are the query's coordinates, from -2 to 2 in steps of 0.1 in a live kernel; the website
    holds the figures every 0.5 (81 frames) and snaps to them. ``query`` is the starting point and must lie
    on that half-unit grid, so that the page starts on a figure Python drew for exactly that query.
    """
    _check(H, labels, query)
    for name, value in zip(("first", "second"), query, strict=True):
        if abs(value * 2 - round(value * 2)) > 1e-9 or abs(value) > 2:
            raise ValueError(f"query's {name} coordinate {value} is not one of -2, -1.5, ..., 2")

    def draw(x: float, y: float):
        return query_figure(H, labels, (x, y))

    explore(
        draw,
        x=Range(-2.0, 2.0, 0.1, value=float(query[0]), frame_step=0.5, label="s_t, dimension 1"),
        y=Range(-2.0, 2.0, 0.1, value=float(query[1]), frame_step=0.5, label="s_t, dimension 2"),
    )
