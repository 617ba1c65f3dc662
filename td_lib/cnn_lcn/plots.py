"""Plot helpers shared by the CNN/LCN notebooks and ``scripts/cnn_lcn_figures.py``.

References
----------
Mori et al., *exact online-SGD dynamics of CNN vs LCN students*, Figures 1, 6 and 9.
"""

from __future__ import annotations

import numpy as np


def phase_plot(ax, pd: dict, c0: float, title: str, *, xlabel: str = r"training horizon $\alpha_F$",
               ylabel: str = "correlation $c$"):
    """Draw a CNN-vs-LCN phase diagram (Figures 6 and 9).

    ``pd`` holds ``alpha_F``, ``cs`` and ``log10_ratio`` = log10(ε*_CNN / ε*_LCN) on the
    (c, α_F) grid (as returned by ``phase_diagram``); the zero contour is the boundary and
    the dashed line the early-time prediction c = c0 α_F (eq. 30). Returns the mesh (for a
    colour bar).

    References
    ----------
    Mori et al. (CNN vs LCN), Figures 6 and 9, eq. 30.
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


def architecture_schematic(*, P: int = 4, k_s: int = 3, k_t: int = 2, axes=None):
    """Figure 1: the teacher, the CNN student and the LCN student on ``P`` periodic positions.

    Bottom row: the input positions ``x_0 .. x_{P-1}`` (each a vector in R^D), followed by
    faded copies ``x_0, x_1, ...`` that make the periodic boundary ``(p + l)_P`` visible. Middle
    row: the preactivations ``lambda_p`` (teacher, kernel size ``k_t``) or ``lambda_hat_p``
    (students, ``k_s``), each connected to its window ``x_p, ..., x_{(p+k-1)_P}``. Top: the
    output ``sum_p g(lambda_p)``. Edge colours are weights: the teacher and the CNN use the
    same colour for tap ``l`` at every position (one shared kernel), the LCN a different
    colour for every position ``p`` (shade = tap). Returns the figure.

    References
    ----------
    Mori et al. (CNN vs LCN), Figure 1 (eqs 5-11).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> fig = architecture_schematic(P=4, k_s=3, k_t=2)
    >>> len(fig.axes), fig.axes[1].get_title()
    (3, 'CNN student (shared kernel), kernel size 3')
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from td_lib.core import validate as V

    P = V.positive_int("P", P)
    k_s = V.positive_int("k_s", k_s)
    k_t = V.positive_int("k_t", k_t)
    if not k_t <= k_s <= P:
        raise ValueError(f"need k_t <= k_s <= P, got k_t={k_t}, k_s={k_s}, P={P}")
    if axes is None:
        fig, axes = plt.subplots(1, 3, figsize=(13, 4.8))
    else:
        fig = axes[0].figure
    tap_colours = plt.get_cmap("tab10")
    pos_maps = [plt.get_cmap(m) for m in ("Blues", "Oranges", "Greens", "Purples", "Reds", "Greys")]
    panels = [("Teacher $f^\\star$", "teacher", k_t, r"\lambda", r"w"),
              ("CNN student (shared kernel)", "cnn", k_s, r"\hat\lambda", r"\hat w"),
              ("LCN student (one kernel per position)", "lcn", k_s, r"\hat\lambda", r"\hat w^{(p)}")]
    for ax, (title, kind, k, lam, wname) in zip(axes, panels):
        n_in = P + k - 1  # real positions, then the periodic copies
        xs = np.arange(n_in, dtype=float)
        hid = np.arange(P) + (k - 1) / 2  # each unit above the middle of its window
        for i in range(n_in):
            ghost = i >= P
            ax.add_patch(plt.Rectangle((xs[i] - 0.35, -0.2), 0.7, 0.4, fill=True,
                                       fc="0.93" if ghost else "0.8", ec="0.6" if ghost else "k",
                                       ls="--" if ghost else "-", zorder=3))
            ax.text(xs[i], 0.0, f"$x_{{{i % P}}}$", ha="center", va="center", zorder=4,
                    color="0.5" if ghost else "k", fontsize=10)
        for p in range(P):
            for l in range(k):
                if kind == "lcn":
                    col = pos_maps[p % len(pos_maps)](0.45 + 0.5 * l / max(1, k - 1))
                else:
                    col = tap_colours(l)
                ax.plot([hid[p], xs[p + l]], [1.5, 0.2], color=col, lw=2.2, zorder=2,
                        ls="--" if p + l >= P else "-")
            ax.add_patch(plt.Circle((hid[p], 1.6), 0.22, fc="white", ec="k", zorder=3))
            ax.text(hid[p], 1.6, f"${lam}_{{{p}}}$", ha="center", va="center", fontsize=9, zorder=4)
            ax.plot([hid[p], hid.mean()], [1.82, 2.75], color="0.4", lw=1, zorder=1)
        ax.add_patch(plt.Circle((hid.mean(), 2.95), 0.25, fc="0.95", ec="k", zorder=3))
        ax.text(hid.mean(), 2.95, r"$\Sigma$", ha="center", va="center", fontsize=11, zorder=4)
        out = r"$f^\star(x)=\sum_p g(\lambda_p)$" if kind == "teacher" else \
            r"$\hat y(x)=\sum_p g(\hat\lambda_p)$"
        ax.text(hid.mean(), 3.4, out, ha="center", va="bottom", fontsize=10)
        if kind == "lcn":
            handles = [Line2D([], [], color=pos_maps[p % len(pos_maps)](0.7), lw=2.2,
                              label=f"${wname.replace('(p)', '(' + str(p) + ')')}$") for p in range(P)]
        else:
            handles = [Line2D([], [], color=tap_colours(l), lw=2.2, label=f"${wname}_{{{l}}}$")
                       for l in range(k)]
        handles.append(Line2D([], [], color="0.5", lw=2, ls="--", label="periodic wrap $(p+l)_P$"))
        ax.legend(handles=handles, fontsize=8, loc="lower center", ncol=3, frameon=False,
                  title="edge colour = weight vector" + (" (shade = tap $l$)" if kind == "lcn" else ""),
                  title_fontsize=8, handlelength=1.6,
                  columnspacing=1.0)
        ax.set_title(f"{title}, kernel size {k}", fontsize=10)
        width = P + max(k_s, k_t) - 1
        ax.set_xlim((n_in - 1) / 2 - width / 2 - 0.2, (n_in - 1) / 2 + width / 2 + 0.2)
        ax.set_ylim(-1.75, 3.9)
        ax.set_aspect("equal")
        ax.axis("off")
    fig.suptitle(f"Figure 1: teacher and the two students, $P={P}$ positions, $k_t={k_t}$, $k_s={k_s}$ "
                 "(inputs bottom, preactivations middle, output top)", fontsize=11)
    fig.tight_layout()
    return fig
