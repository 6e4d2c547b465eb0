"""attnlib.plotting.heatmap: one fixed colour scale, so that maps compare across panels and a local row that
sums to less than 1 looks dimmer than a global one."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from attnlib.plotting import heatmap  # noqa: E402


def colour_limits(weights, **kwargs):
    ax = heatmap(weights, **kwargs)
    limits = ax.images[0].get_clim()
    plt.close(ax.figure)
    return limits


def test_the_scale_is_zero_to_one_whatever_the_map():
    assert colour_limits(torch.tensor([[0.2, 0.1], [0.05, 0.3]])) == (0.0, 1.0)
    assert colour_limits(torch.tensor([[1.0, 0.0], [0.0, 1.0]])) == (0.0, 1.0)


def test_a_row_summing_to_less_than_one_looks_dimmer():
    ax = heatmap(torch.tensor([[0.5, 0.5], [0.25, 0.25]]))
    image = ax.images[0]
    full, half = image.to_rgba(0.5), image.to_rgba(0.25)
    plt.close(ax.figure)
    assert full != half


def test_vmax_none_stretches_to_the_largest_weight():
    assert colour_limits(torch.tensor([[0.2, 0.1], [0.05, 0.4]]), vmax=None) == (0.0, pytest.approx(0.4))


@pytest.mark.parametrize("vmax", [0.0, -1.0])
def test_a_bad_vmax_is_refused_by_name(vmax):
    with pytest.raises(ValueError, match="vmax must be a positive number"):
        heatmap(torch.eye(2), vmax=vmax)
