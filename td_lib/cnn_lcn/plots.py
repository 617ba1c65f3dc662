"""Plot helpers shared by the CNN/LCN notebook and ``scripts/cnn_lcn_figures.py``."""

from __future__ import annotations

import numpy as np


def phase_plot(ax, pd: dict, c0: float, title: str, *, xlabel: str = r"training horizon $\alpha_F$",
               ylabel: str = "correlation $c$"):
    """Draw a CNN-vs-LCN phase diagram (Figures 6 and 9).

    ``pd`` holds ``alpha_F``, ``cs`` and ``log10_ratio`` = log10(ε*_CNN / ε*_LCN) on the
    (c, α_F) grid (as returned by ``phase_diagram``); the zero contour is the boundary and
    the dashed line the early-time prediction c = c0 α_F (eq. 30). Returns the mesh (for a
    colour bar).
    """
    lim = np.nanmax(np.abs(pd["log10_ratio"]))
    m = ax.pcolormesh(pd["alpha_F"], pd["cs"], pd["log10_ratio"], cmap="RdBu_r", vmin=-lim, vmax=lim,
                      shading="nearest")
    ax.contour(pd["alpha_F"], pd["cs"], pd["log10_ratio"], levels=[0.0], colors="k", linewidths=1.5)
    aa = np.geomspace(pd["alpha_F"][0], pd["alpha_F"][-1], 200)
    ax.plot(aa, c0 * aa, "g--", label=r"$c=c_0\alpha_F$ (eq. 30)")
    ax.set(xscale="log", ylim=(pd["cs"][0], pd["cs"][-1]), xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend(fontsize=7, loc="upper right")
    return m
