"""Plot helpers of the CNN/LCN notebook: the Figure 1 schematic."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from td_lib.cnn_lcn.plots import architecture_schematic  # noqa: E402


def _edges(ax):
    """The weight lines (two points, from a preactivation at y = 1.5 to an input at y = 0.2)."""
    return [ln for ln in ax.get_lines() if len(ln.get_ydata()) == 2 and ln.get_ydata()[0] == 1.5]


@pytest.mark.parametrize("P,k_s,k_t", [(4, 3, 2), (6, 4, 1)])
def test_schematic_draws_every_window_and_shares_colours_as_the_models_do(P, k_s, k_t):
    fig = architecture_schematic(P=P, k_s=k_s, k_t=k_t)
    teacher, cnn, lcn = fig.axes[:3]
    for ax, k in ((teacher, k_t), (cnn, k_s), (lcn, k_s)):
        edges = _edges(ax)
        assert len(edges) == P * k  # one weight vector per (position, tap)
        assert ax.get_legend() is not None and ax.get_title()
        # the dashed edges are exactly the windows that wrap around, (p + l) >= P
        assert sum(ln.get_linestyle() == "--" for ln in edges) == sum(
            p + l >= P for p in range(P) for l in range(k))
    colours = {ax: [tuple(np.round(matplotlib.colors.to_rgba(ln.get_color()), 6)) for ln in _edges(ax)]
               for ax in (teacher, cnn, lcn)}
    assert len(set(colours[cnn])) == k_s and len(set(colours[teacher])) == k_t  # shared kernels
    assert len(set(colours[lcn])) == P * k_s  # one kernel per position
    plt.close(fig)


def test_schematic_rejects_inconsistent_sizes():
    with pytest.raises(ValueError, match="k_t <= k_s <= P"):
        architecture_schematic(P=4, k_s=2, k_t=3)
    with pytest.raises(ValueError, match="k_s"):
        architecture_schematic(P=4, k_s=0, k_t=1)
