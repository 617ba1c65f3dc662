"""The figures of the §7.4 notebook's demos, drawn from their runs (not library API).

Defined for §7.4 of the course (teacher nodes, Tian 2020): the notebook explains each figure,
runs the demo (:mod:`td_lib.teacher_student.demos`), calls the function here to draw it, and
prints the numbers it quotes. Each function builds one matplotlib figure (``tight_layout``
applied) and returns it without showing it; the notebook calls ``plt.show()``. The titles the
course site matches a figure by (``site/figures.toml``) are passed in by the notebook.

Examples
--------
>>> import numpy as np
>>> fig = plateau_figure(np.linspace(0, 10, 3), np.pi - np.array([0.1]), np.geomspace(1e-3, 0.1, 3),
...                      {"traj": [[3.0, 2.0, 1.5]], "t_exact": [1e3, 1e2, 10.0], "t_asym": [1e3, 1e2, 10.0]},
...                      titles=("angle", "escape time"))
>>> [ax.get_title() for ax in fig.axes]
['angle', 'escape time']
>>> import matplotlib.pyplot as plt; plt.close(fig)
"""

from __future__ import annotations

import numpy as np

__all__ = ["node_order_figure", "coverage_figure", "focus_figure", "fig8_layers_figure",
           "fig8_snapshots_figure", "eq10_pull_figure", "plateau_figure"]


def node_order_figure(ex, summary: dict, *, bottom_title: str):
    """Demo 7.4.1 (the strong-first staircase), defined for §7.4 of the course: top row, one run
    per polarity ``p``, the best correlation of each teacher node with a student node over SGD
    steps; bottom row, every run's first-match times against the teacher node index ``j``, their
    median and the reference scaling ``t ∝ j^p`` anchored at node 1. ``ex`` is
    :func:`~td_lib.teacher_student.demos.node_order_demo`'s experiment, ``summary`` its
    :func:`~td_lib.teacher_student.demos.node_order_summary`; ``bottom_title`` a format string
    of ``p`` (the bottom panels' title)."""
    import matplotlib.pyplot as plt

    S, hA = summary, ex.history
    steps_A = hA.t
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.2))
    cmap = plt.get_cmap("rainbow")
    m = ex.teacher.width
    j = np.arange(1, m + 1)
    for c, p in enumerate((0.0, 1.0, 2.0)):
        r = ex.select(p=p, factor=5)[0]
        ax = axes[0, c]
        for jj in range(m):
            ax.plot(steps_A, hA.best_corr[:, r, jj], color=cmap(jj / (m - 1)), lw=1.3,
                    label=f"teacher {jj + 1}" if c == 0 or jj in (0, m - 1) else None)
        ax.axhline(0.95, color="k", ls=":", lw=1)
        ax.set(title=f"p = {p:g}: best correlation per teacher node",
               xlabel="SGD step", ylabel="best correlation", ylim=(0, 1.02))
        if c == 0:
            ax.legend(fontsize=7, ncol=2, loc="lower right")
        ax = axes[1, c]
        fm = S["first"][p]
        late = 1.15 * steps_A[-1]
        for row in fm:
            ax.scatter(j, np.where(np.isfinite(row), row, late), s=18, alpha=0.6,
                       c=[cmap(i / (m - 1)) for i in range(m)],
                       marker="o")
        med = S["median_first"][p]
        ok = np.isfinite(med)
        ax.plot(j[ok], med[ok], "k-", lw=1.5, label="median over runs")
        ax.plot(j, med[0] * j**p, "k--", lw=1, label=r"$t\propto 1/\|v^*_j\| = j^{p}$")
        ax.axhline(late, color="gray", ls=":", lw=1)
        ax.text(10, late * 1.06, "not matched by the end", fontsize=7, color="gray", ha="right")
        ax.set(xscale="log", yscale="log", xlabel="teacher node j (fan-out $j^{-p}$)",
               ylabel="first step with correlation > 0.95", ylim=(50, 2.2 * steps_A[-1]),
               title=bottom_title.format(p=p))
        ax.legend(fontsize=7, loc="lower right")
    plt.tight_layout()
    return fig


def coverage_figure(ex, summary: dict, *, left_title: str):
    """Demo 7.4.2 (over-realisation), defined for §7.4 of the course: left, the mean number of
    matched teacher nodes over SGD steps for students ×1, ×2, ×5 at ``p = 1``; right, each ×5
    student node's best correlation with a teacher node against its fan-out norm ``‖v_k‖``
    (the paper's Fig. 7, Theorem 3's ``v_k = 0``). ``left_title``: the left panel's title."""
    import matplotlib.pyplot as plt

    S, hA = summary, ex.history
    m = ex.teacher.width
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    ax = axes[0]
    for f, col in zip((1, 2, 5), ("C0", "C1", "C2")):
        if f in S["coverage_curve"]:
            ax.plot(hA.t, S["coverage_curve"][f], color=col, lw=2, label=f"student ×{f}")
    ax.set(xlabel="SGD step", ylabel="teacher nodes matched (corr > 0.95), mean over runs",
           title=left_title, ylim=(0, m + 0.3))
    ax.axhline(m, color="k", ls=":", lw=1, label="all teacher nodes")
    ax.legend()
    ax = axes[1]
    sel = ex.select(p=1.0, factor=5)
    spec = hA.corr[-1, sel].max(axis=1).ravel()
    vn = hA.vnorm[-1, sel].ravel()
    ax.scatter(spec, vn, s=12, alpha=0.6, label="student nodes (×5, all runs)")
    ax.axhline(0, color="k", lw=1, ls="--", label="Theorem 3: $v_k=0$ if unaligned")
    ax.set(xlabel="student node: best correlation with a teacher node",
           ylabel=r"fan-out norm $\|v_k\|$", title="specialised nodes carry the output")
    ax.legend(fontsize=8)
    plt.tight_layout()
    return fig


def focus_figure(ex, focus: dict | None, *, title: str):
    """Demo 7.4.3 (focus shifting), defined for §7.4 of the course: the best correlation of
    each teacher node over SGD steps (thin, rainbow order) and, when ``focus`` (from
    :func:`~td_lib.teacher_student.demos.focus_summary`) found a shift, the student node's
    correlations with the two teacher nodes it moves between (thick), run 0 otherwise."""
    import matplotlib.pyplot as plt

    hB, F = ex.history, focus
    m = hB.best_corr.shape[-1]
    cmap = plt.get_cmap("rainbow")
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    r = F["run"] if F else 0  # without a focus shift (quick mode), still show run 0
    for jj in range(m):
        ax.plot(hB.t, hB.best_corr[:, r, jj], color=cmap(jj / (m - 1)), lw=0.8, alpha=0.5)
    if F:
        k, j1, j2 = F["node"], F["j1"], F["j2"]
        ax.plot(hB.t, hB.corr[:, r, j1, k], "k-", lw=2.2,
                label=f"student node {k}: correlation with teacher {j1 + 1}")
        ax.plot(hB.t, hB.corr[:, r, j2, k], "k--", lw=2.2,
                label=f"student node {k}: correlation with teacher {j2 + 1}")
        ax.axvline(F["step_peak"], color="gray", ls=":", lw=1)
        ax.legend(fontsize=8, loc="lower right")  # only the focus-shift curves carry labels
    ax.set(xlabel="SGD step", ylabel="activation correlation", ylim=(0, 1.02), title=title)
    plt.tight_layout()
    return fig


def fig8_layers_figure(teacher, history, summary: dict, *, title: str):
    """Demo 7.4.4 (Tian's Fig. 8 at CPU scale), defined for §7.4 of the course: ``ρ_mean``, the
    mean best correlation of each layer's teacher nodes, over epochs, one colour per layer (thin:
    single seeds, thick: their mean), with the thresholds 0.7 and 0.9."""
    import matplotlib.pyplot as plt

    h8, S8 = history, summary
    L8 = h8.rho_mean.shape[-1]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for layer in range(L8):
        for r in range(S8["runs"]):
            ax.plot(h8.t, h8.rho_mean[:, r, layer], color=f"C{layer}", lw=0.7, alpha=0.5)
        ax.plot(h8.t, h8.rho_mean[:, :, layer].mean(axis=1), color=f"C{layer}", lw=2.2,
                label=f"layer {layer + 1} ({teacher.widths[layer]} teacher nodes): mean of {S8['runs']} seeds")
    for tau in (0.7, 0.9):
        ax.axhline(tau, color="k", ls=":", lw=1)
        ax.text(h8.t[-1], tau + 0.01, f"threshold {tau}", ha="right", fontsize=7)
    ax.set(xlabel="epoch (10 000 online samples)",
           ylabel=r"$\rho_{\rm mean}$: mean best correlation", ylim=(0, 1.02), title=title)
    ax.legend(fontsize=8, loc="lower right")
    plt.tight_layout()
    return fig


def fig8_snapshots_figure(history, summary: dict, *, suptitle: str):
    """Demo 7.4.4's snapshots, defined for §7.4 of the course: per layer (lowest at the bottom)
    and snapshot epoch, each student node's best correlation with a teacher node against its
    contribution ``sqrt(E_x β_kk(x))``, one colour per seed (dead nodes sit at correlation 0)."""
    import matplotlib.pyplot as plt

    h8, S8 = history, summary
    L8 = h8.rho_mean.shape[-1]
    snaps = sorted(h8.snapshots)
    fig, axes = plt.subplots(L8, len(snaps), figsize=(3.2 * len(snaps) + 0.5, 2.3 * L8), sharex=True,
                             squeeze=False)
    for c, e in enumerate(snaps):
        sn = h8.snapshots[e]
        for layer in range(L8):
            ax = axes[L8 - 1 - layer, c]  # lowest layer at the bottom, as in a network diagram
            for r in range(S8["runs"]):
                ax.scatter(sn["node_corr"][layer][r], sn["fanout"][layer][r], s=5, alpha=0.5,
                           color=f"C{r}", label=f"seed {r}" if (layer, c) == (0, 0) else None)
            ax.set(xlim=(-0.02, 1.02), title=f"layer {layer + 1}, epoch {e:g}")
            if c == 0:
                ax.set_ylabel(r"$\sqrt{E_x\,\beta_{kk}(x)}$")
            if layer == 0:
                ax.set_xlabel("best correlation with a teacher node")
    axes[-1, 0].legend(fontsize=7, loc="upper left")
    fig.suptitle(suptitle, y=1.0)
    plt.tight_layout()
    return fig


def eq10_pull_figure(scan: dict, *, title: str):
    """The check of the paper's norm scaling (Demo 7.4.5), defined for §7.4 of the course: the
    part of the gradient that turns ``w_k`` against ``‖w_k‖`` (direction and fan-outs fixed),
    Monte Carlo with two standard errors, the corrected closed form (flat) and the paper's
    ``∝ ‖w_k‖`` anchored at ``‖w_k‖ = 1``, on log axes. ``scan``:
    :func:`td_lib.teacher_student.eq10_norm_scan`'s result."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    c_w = scan["scales"]
    anchor = scan["exact"][np.argmin(np.abs(np.log(c_w)))]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.errorbar(c_w, scan["mc"], 2 * scan["mc_se"], fmt="o", ms=5, label="Monte Carlo of the gradient (±2 s.e.)")
    ax.plot(c_w, scan["exact"], "k-", label="closed form (corrected Theorem 6): flat")
    ax.plot(c_w, anchor * c_w, "C3--", label=r"eq. 10: $\propto\|w_k\|$ (anchored at $\|w_k\|=1$)")
    ax.set(xscale="log", yscale="log", xlabel=r"$\|w_k\|$ (direction and fan-outs fixed)",
           ylabel=r"$\|P^\perp_{w_k}\dot w_k\|$: the part that turns $w_k$",
           title=title)
    ax.set_xticks(c_w, [f"{c:g}" for c in c_w])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.legend(fontsize=8)
    plt.tight_layout()
    return fig


def plateau_figure(tgrid, starts, eps_grid, plateau: dict, *, titles: tuple[str, str]):
    """The plateau near ``θ = π`` of the angle dynamics (Demo 7.4.6), defined for §7.4 of the
    course: left, ``θ(t)`` from starts ``π − θ(0)`` closer and closer to 0; right, the time to
    reach ``π/2`` against ``ε = π − θ(0)``, integrated and asymptotic (``∝ 1/ε``), log-log.
    ``plateau``: the demo's result (``traj``, ``t_exact``, ``t_asym``); ``titles``: the two
    panels' titles."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for i, s0 in enumerate(starts):
        axes[0].plot(tgrid, plateau["traj"][i], label=rf"$\pi-\theta(0)$ = {np.pi - s0:.0e}")
    axes[0].axhline(np.pi / 2, color="k", ls=":", lw=1)
    axes[0].set(xlabel=r"time $t$ ($\alpha = 1$)", ylabel=r"angle $\theta$ (rad)",
                title=titles[0])
    axes[0].legend(fontsize=8)
    axes[1].loglog(eps_grid, plateau["t_exact"], "o", ms=4, label="eq. 12, integrated")
    axes[1].loglog(eps_grid, plateau["t_asym"], "-",
                   label=r"$\frac{2\pi}{\alpha}\left(\frac{1}{\epsilon}-\frac{1}{\pi-\theta_{end}}\right)$")
    axes[1].set(xlabel=r"$\epsilon = \pi - \theta(0)$", ylabel=r"time to reach $\theta=\pi/2$",
                title=titles[1])
    axes[1].legend(fontsize=8)
    plt.tight_layout()
    return fig
