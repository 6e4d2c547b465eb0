"""attnlib.plotting.png: the PNG the book stores of a figure, with DENSITY times the pixels of the size it is
shown at (issue 28: figures sharp on high-density screens)."""

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import PIL.Image  # noqa: E402
import pytest  # noqa: E402

from attnlib.plotting import DENSITY, png  # noqa: E402


def figure(dpi=100):
    fig, ax = plt.subplots(figsize=(4, 3), dpi=dpi)
    ax.imshow([[0.1, 0.9], [0.5, 0.3]])
    return fig


def test_the_png_has_density_times_the_pixels_of_the_size_to_show_it_at():
    fig = figure()
    data, width, height = png(fig)
    image = PIL.Image.open(io.BytesIO(data))
    assert (width, height) == (400, 300)  # 4 x 3 inches at the figure's 100 dpi
    assert image.size == (DENSITY * 400, DENSITY * 300)
    assert png(fig, dpi=72)[1:] == (288, 216)
    assert png(fig, density=1)[1:] == (400, 300) and PIL.Image.open(
        io.BytesIO(png(fig, density=1)[0])
    ).size == (400, 300)
    plt.close(fig)


def test_the_same_figure_gives_the_same_bytes_without_a_software_stamp():
    fig = figure()
    first, again = png(fig, tight=True)[0], png(fig, tight=True)[0]
    assert first == again and first.startswith(b"\x89PNG\r\n\x1a\n") and b"Software" not in first
    plt.close(fig)


def test_tight_crops_to_what_is_drawn():
    fig = figure()
    _, width, height = png(fig, tight=True)
    assert width < 400 and height < 300
    plt.close(fig)


@pytest.mark.parametrize("density", [0, 1.5, "2", None])
def test_a_density_that_is_not_a_whole_number_of_pixels_is_refused_by_name(density):
    fig = plt.figure(figsize=(1, 1))
    with pytest.raises(ValueError, match="density must be a whole number"):
        png(fig, density=density)
    plt.close(fig)
