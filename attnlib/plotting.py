"""Plots every chapter draws: attention weights as a heatmap (an alignment map) and weights as bars; and the
PNG the book stores of a figure (``png``).

Each drawing function draws on an existing matplotlib ``Axes`` when given one, and returns the ``Axes`` it
drew on, so that a lesson can lay out several plots in one figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # matplotlib is imported where a plot is drawn: `import attnlib` does not need it
    from matplotlib.axes import Axes


# Device pixels per CSS pixel that the stored figures carry (high-density screens, phones and most laptops,
# have 2 or 3): sharp at 2, close to it at 3, for about the bytes of a full-colour image at 1.
DENSITY = 2


def png(
    figure, *, dpi: float | None = None, tight: bool = False, density: int = DENSITY
) -> tuple[bytes, int, int]:
    """``(png, width, height)``: ``figure`` drawn at ``density`` times its size (``dpi``, default the figure's
    own), and the size in CSS pixels to show it at, so that a high-density screen gets a pixel of the image
    per pixel of its own. ``tight``: cropped to what is drawn (``bbox_inches="tight"``, as Jupyter shows
    figures). 256 colours (the deterministic median cut, PIL's method 0) and an optimised PNG keep it about
    as small as a full-colour PNG of the plain size; no software stamp, so the same figure gives the same
    bytes (nbval compares them)."""
    import io

    import PIL.Image

    if not isinstance(density, int) or density < 1:
        raise ValueError(f"density must be a whole number of device pixels per CSS pixel, got {density!r}")
    drawn = io.BytesIO()
    dpi = figure.dpi if dpi is None else dpi
    figure.savefig(
        drawn,
        format="png",
        dpi=dpi * density,
        bbox_inches="tight" if tight else None,
        metadata={"Software": None},
    )
    image = PIL.Image.open(drawn).convert("RGB")
    if image.width % density or image.height % density:  # a cropped figure: pad to whole CSS pixels
        fill = tuple(round(255 * c) for c in figure.get_facecolor()[:3])
        padded = PIL.Image.new(
            "RGB", (-(-image.width // density) * density, -(-image.height // density) * density), fill
        )
        padded.paste(image)
        image = padded
    image = image.quantize(256, method=0)
    out = io.BytesIO()
    image.save(out, format="png", optimize=True)
    return out.getvalue(), image.width // density, image.height // density


def _numpy(x):
    return x.detach().to("cpu", torch.float32).numpy() if isinstance(x, torch.Tensor) else x


def heatmap(
    weights,
    source: Sequence[str] | None = None,
    target: Sequence[str] | None = None,
    *,
    ax: Axes | None = None,
    title: str = "attention weights",
    annotate: bool = False,
    colorbar: bool = True,
    vmax: float | None = 1.0,
) -> Axes:
    """Draw weights ``(T, S)`` with target steps as rows and source positions as columns.

    Row t is alpha_t, the distribution over source positions used at target step t (Bahdanau et al. 2015,
    Figure 3, draws its alignment matrices this way: source words across, target words down). ``annotate``
    writes each weight in its cell.
    The colour scale is fixed, 0 to ``vmax`` = 1 (weights are probabilities), so that maps drawn side by side
    compare, and a row that sums to less than 1 (local attention, Luong et al. 2015, §3.2) looks it;
    ``vmax=None`` stretches the scale to this map's largest weight (say so in the title).
    """
    w = _numpy(weights)
    if w.ndim != 2:
        raise ValueError(f"weights must be (T, S) for a heatmap, got shape {tuple(w.shape)}")
    T, S = w.shape
    for name, labels, size in (("source", source, S), ("target", target, T)):
        if labels is not None and len(labels) != size:
            raise ValueError(f"{name} has {len(labels)} labels but weights have {size} {name} positions")
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(0.5 * S + 2.5, 0.45 * T + 1.5))
    if vmax is not None and not vmax > 0:
        raise ValueError(f"vmax must be a positive number or None, got {vmax!r}")
    top = max(1e-9, float(w.max())) if vmax is None else float(vmax)
    image = ax.imshow(w, cmap="viridis", vmin=0.0, vmax=top, aspect="auto")
    ax.set_xticks(range(S), source if source is not None else [str(s + 1) for s in range(S)], rotation=60)
    ax.set_yticks(range(T), target if target is not None else [str(t + 1) for t in range(T)])
    ax.set_xlabel("source position s (keys)")
    ax.set_ylabel("target step t (queries)")
    ax.set_title(title)
    if annotate:
        for t in range(T):
            for s in range(S):
                color = "black" if w[t, s] > 0.6 * top else "white"
                ax.text(s, t, f"{w[t, s]:.2f}", ha="center", va="center", color=color, fontsize=8)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, label="weight α")
    return ax


def bars(
    weights,
    labels: Sequence[str] | None = None,
    *,
    ax: Axes | None = None,
    title: str = "attention weights α",
    ylim: tuple[float, float] = (0.0, 1.0),
) -> Axes:
    """Draw one distribution over source positions ``(S,)`` as bars."""
    w = _numpy(weights)
    if w.ndim != 1:
        raise ValueError(f"weights must be (S,) for bars, got shape {tuple(w.shape)}")
    if labels is not None and len(labels) != len(w):
        raise ValueError(f"labels has {len(labels)} entries but weights has {len(w)}")
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(4, 3))
    names = list(labels) if labels is not None else [str(s + 1) for s in range(len(w))]
    ax.bar(names, w, color="tab:blue")
    ax.set_ylim(*ylim)
    ax.set_xlabel("source position s")
    ax.set_ylabel("weight")
    ax.set_title(title)
    return ax
