"""Interactive widgets of the lessons (ipywidgets). On the website they show their saved state; run the
notebook (locally or in Colab) to move them for real.

ipywidgets and matplotlib are imported when a widget is made, so that ``import attnlib`` (a training script,
a test) does not pay for them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from attnlib import plotting, scores
from attnlib.masking import attend


def query_explorer(H: torch.Tensor, labels: Sequence[str], *, angle: float = 30.0, length: float = 1.0):
    """Move a 2-d query s_t around the keys h_1..h_S and watch scores, weights and context change.

        e_t = H s_t,   alpha_t = softmax(e_t),   c_t = Hᵀ alpha_t       (chapter 3)

    Args:
        H: ``(S, 2)`` encoder states (keys = values), in the plane so that they can be drawn.
        labels: S names for the source positions.
        angle, length: the initial query, in degrees and as its norm.
    """
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    if H.dim() != 2 or H.shape[1] != 2:
        raise ValueError(f"H must be (S, 2) to be drawn in the plane, got shape {tuple(H.shape)}")
    if len(labels) != H.shape[0]:
        raise ValueError(f"labels has {len(labels)} names but H has {H.shape[0]} rows")
    reach = float(H.abs().max()) * 1.3 + 0.5

    def draw(angle: float, length: float) -> None:
        theta = math.radians(angle)
        query = torch.tensor([[length * math.cos(theta), length * math.sin(theta)]], dtype=H.dtype)  # (1, 2)
        e = scores.dot(query, H)  # (1, S)
        context, alpha = attend(e, H)  # (1, 2), (1, S)
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
        left.scatter(H[:, 0], H[:, 1], s=80, color="tab:blue", label="keys = values h_s")
        for (x, y), name in zip(H.tolist(), labels, strict=True):
            left.annotate(name, (x, y), textcoords="offset points", xytext=(6, 6))
        left.annotate("", xy=query[0].tolist(), xytext=(0, 0), arrowprops={"color": "tab:red", "width": 2})
        left.scatter([], [], color="tab:red", marker=r"$\rightarrow$", s=120, label="query s_t")
        left.scatter(*context[0].tolist(), s=120, marker="*", color="tab:green", label="context c_t = Hᵀα")
        left.set_xlim(-reach, reach)
        left.set_ylim(-reach, reach)
        left.set_aspect("equal")
        left.axhline(0, color="grey", lw=0.5)
        left.axvline(0, color="grey", lw=0.5)
        left.set_xlabel("dimension 1")
        left.set_ylabel("dimension 2")
        left.set_title("query, keys and context")
        left.legend(loc="lower left", fontsize=8)
        plotting.bars(alpha[0], labels, ax=right, title="weights α_t = softmax(H s_t)")
        for s, (a, score) in enumerate(zip(alpha[0].tolist(), e[0].tolist(), strict=True)):
            right.text(s, a + 0.02, f"e={score:.2f}", ha="center", fontsize=8)
        fig.tight_layout()
        plt.show()

    return widgets.interact(
        draw,
        angle=widgets.FloatSlider(value=angle, min=-180.0, max=180.0, step=5.0, description="angle (°)"),
        length=widgets.FloatSlider(value=length, min=0.0, max=3.0, step=0.1, description="‖s_t‖"),
    )
