"""The figures of the §7.2 notebook's demos (higher cumulants; not library API).

Defined for §7.2 of the course: the notebook explains each figure, computes what it shows (with
the student's functions where an exercise asks for them, or the course's numbers until they
run), calls the function here to draw it, and prints the numbers it quotes. Each function builds
one matplotlib figure (``tight_layout`` applied) and returns it without showing it; the notebook
calls ``plt.show()``. The titles the course site matches a figure by (``site/figures.toml``) are
passed in by the notebook.

Examples
--------
>>> import numpy as np
>>> fig = hermite_figure(np.r_[0.4, 0.5, 0.2, 0.0, -0.03, 0.0, 0.01, 0.0, -0.003, 0.0, 0.001],
...                      title="Hermite")
>>> [ax.get_title() for ax in fig.axes]
['Hermite', 'ReLU and its truncated Hermite expansion']
>>> import matplotlib.pyplot as plt; plt.close(fig)
"""

from __future__ import annotations

import numpy as np

__all__ = ["hermite_figure", "cumulant_direction_figure", "overlaps_figure", "escape_study_figure",
           "step_window_figure", "exact_loss_figure", "staircase_figure"]


def hermite_figure(s_relu, *, title: str):
    """The Hermite basis (§7.2's tool), defined for §7.2 of the course: left, the normalised
    Hermite polynomials ``h_0 .. h_4``; right, the ReLU beside its Hermite expansion truncated
    at degrees 2, 4 and 10 (``s_relu``: its coefficients ``σ_0 .. σ_10``). ``title``: the left
    panel's title."""
    import matplotlib.pyplot as plt

    from td_lib import hermite

    relu = lambda x: np.maximum(x, 0.0)
    zz = np.linspace(-3, 3, 301)
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.4))
    for k in range(5):
        ax[0].plot(zz, hermite.h(k, zz), label=f"$h_{k}$")
    ax[0].set(xlabel="z", ylabel="$h_k(z)=He_k(z)/\\sqrt{k!}$", ylim=(-4, 6), title=title)
    ax[0].legend(fontsize=8, ncol=2)
    ax[1].plot(zz, relu(zz), "k", lw=2, label="ReLU")
    for K in (2, 4, 10):
        ax[1].plot(zz, hermite.reconstruct(s_relu[:K + 1], zz), "--", label=f"expansion to degree {K}")
    ax[1].set(xlabel="z", ylabel="$\\sigma(z)$", title="ReLU and its truncated Hermite expansion")
    ax[1].legend(fontsize=8)
    plt.tight_layout()
    return fig


def cumulant_direction_figure(xv, xv_minus, tt, plus_density, minus_density, *, title: str):
    """The cumulant direction of the mixed cumulant model, defined for §7.2 of the course: the
    histograms of ``v·x`` for the samples of class +1 (``xv``) and class −1 (``xv_minus``) beside
    their exact densities on ``tt`` (same mean and variance, different fourth cumulant)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    ax.hist(xv, bins=120, range=(-4, 4), density=True, alpha=0.4, color="C1", label="class +1, samples")
    ax.hist(xv_minus, bins=120, range=(-4, 4), density=True, alpha=0.4, color="C0", label="class −1, samples")
    ax.plot(tt, plus_density, "C1", label="class +1, exact")
    ax.plot(tt, minus_density, "C0", label="class −1, exact")
    ax.set(xlabel="$v\\cdot x$", ylabel="density", title=title)
    ax.legend(fontsize=8)
    plt.tight_layout()
    return fig


def overlaps_figure(ref: dict, *, xlabel: str):
    """One ReLU neuron trained by online spherical SGD on the mixed cumulant model, defined for
    §7.2 of the course: the overlaps ``α_u`` and ``α_v`` of every run (thin) and their medians
    (thick) over SGD steps, for independent and correlated latents (``ref``: the course's runs,
    ``{"t": steps, "independent" | "correlated": {"alpha_u", "alpha_v": (time, run)}}``).
    ``xlabel``: both panels' x label."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), sharey=True)
    for ax, latents in zip(axes, ["independent", "correlated"]):
        for key, name, col in [("alpha_u", "$\\alpha_u$", "C0"), ("alpha_v", "$\\alpha_v$", "C3")]:
            trace = np.array(ref[latents][key])  # (time, run)
            ax.plot(ref["t"], np.median(trace, axis=1), color=col, lw=2, label=f"median {name}")
            ax.plot(ref["t"], trace, color=col, lw=0.4, alpha=0.4)
        ax.set(xscale="symlog", xlabel=xlabel, title=f"{latents} latents, d = 32")
    axes[0].set_ylabel("overlap")
    axes[0].legend(fontsize=8)
    plt.tight_layout()
    return fig


def escape_study_figure(dims, rows: dict, *, title: str):
    """The escape-time study (Exercise 7.2.C), defined for §7.2 of the course: left, the median
    escape time against ``d`` for each information exponent ``k`` with its law (dotted, anchored
    at the first ``d``); right, the bootstrap distributions of the fitted slopes with the laws'
    slopes (dotted). ``rows``: :func:`td_lib.higher_cumulants_demos.study_slopes`; ``title``: the
    left panel's title."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(10.5, 3.6))
    for k, r in rows.items():
        med, law, boot = r["med"], r["law"], r["boot"]
        l, = ax[0].loglog(dims, med, "o-", label=f"k = {k}: slope {r['slope']:.2f} ± {boot.std():.2f}")
        ax[0].loglog(dims, law * med[0] / law[0], ":", color=l.get_color(),
                     label=f"law, slope {r['slope_law']:.2f}")
        ax[1].hist(boot, bins=40, alpha=0.5, color=l.get_color(), label=f"k = {k}")
        ax[1].axvline(r["slope_law"], color=l.get_color(), ls=":")
    ax[0].set(xlabel="dimension d", ylabel="median samples to reach $\\alpha>1/2$", title=title)
    ax[0].legend(fontsize=7)
    ax[1].set(xlabel="log–log slope (bootstrap over runs)", ylabel="count",
              title="slope spread; dotted: the laws' slopes")
    ax[1].legend(fontsize=8)
    plt.tight_layout()
    return fig


def step_window_figure(deltas, med_sweep, never, *, t_max: float, delta_mark: float, title: str):
    """The step-size sweep of the escape times (Exercise 7.2.C's demo), defined for §7.2 of the
    course: the median escape time against the step parameter ``δ`` (log-log, infinite medians
    left out) with the cap ``t_max`` and the step ``delta_mark`` of 7.2.C, and on a second axis
    the fraction of runs not escaped."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    ax.loglog(deltas, np.where(np.isfinite(med_sweep), med_sweep, np.nan), "o-", label="median escape time")
    ax.axhline(t_max, color="gray", ls=":", label="cap t_max")
    ax.axvline(delta_mark, color="C2", ls="--", label="$\\delta=d^{-1/2}/\\ln d$ (7.2.C)")
    ax2 = ax.twinx()
    ax2.plot(deltas, never, "s--", color="C3", label="fraction not escaped")
    ax2.set_ylabel("fraction not escaped", color="C3")
    ax2.set_ylim(0, 1)
    ax.set(xlabel="step parameter $\\delta$ (step $\\delta/d$)", ylabel="median samples to $\\alpha>1/2$",
           title=title)
    ax.legend(fontsize=8, loc="upper center")
    plt.tight_layout()
    return fig


def exact_loss_figure(al, exact_loss: dict, coef: dict | None, *, title: str):
    """The exact ReLU loss against its Hermite coefficients (Exercise 7.2.D's demo), defined for
    §7.2 of the course: the loss along the variance direction, the cross term and the cumulant
    direction on the grid ``al``, for independent and correlated latents (``exact_loss``: the
    course's numbers, ``{"independent" | "correlated": {"u", "cross", "v": values}}``), with the
    student's quadratic and quartic approximations dotted when ``coef`` (``{corr: (c20, c11,
    c04)}``) is given. ``title``: the first panel's title."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(12, 3.3))
    for corr, ls in ((False, "-"), (True, "--")):
        tag = "correlated" if corr else "independent"
        exact = {k: np.asarray(v) for k, v in exact_loss[tag].items()}
        ax[0].plot(al, exact["u"], ls, label=f"exact, {tag}")
        ax[1].plot(al, exact["cross"], ls, label=f"exact, {tag}")
        if coef:
            ax[1].plot(al, -2 * coef[corr][1] * al**2, ":", color="k")
        ax[2].plot(al, exact["v"], ls, label=f"exact, {tag}")
    if coef:
        c20, _, c04 = coef[True]
        ax[0].plot(al, -c20 * al**2, "k:", label="$-c_{20}\\alpha_u^2$")
        ax[2].plot(al, -c04 * al**4, "k:", label="$-c_{04}\\alpha_v^4$")
    ax[0].set(xlabel="$\\alpha_u$ ($\\alpha_v=0$)", ylabel="$L-L_0$", title=title)
    ax[1].set(xlabel="$\\alpha$", ylabel="$L(\\alpha,\\alpha)-L(\\alpha,-\\alpha)$",
              title="cross term; dotted: $-2c_{11}\\alpha^2$")
    ax[2].set(xlabel="$\\alpha_v$ ($\\alpha_u=0$)", ylabel="$L-L_0$", title="cumulant direction")
    for a_ in ax:
        a_.legend(fontsize=7)
    plt.tight_layout()
    return fig


def staircase_figure(runs: dict, *, xlabel: str):
    """The two-layer ReLU staircase (Demo 7.2.E), defined for §7.2 of the course: for independent
    and correlated latents (``runs``: ``{corr: a staircase run}``, :mod:`td_lib.staircase`), the
    test accuracy on each test set over SGD steps and the largest overlap with ``v`` (dashed),
    with the Bayes accuracies of the independent case dotted. ``xlabel``: both panels' x label."""
    import matplotlib.pyplot as plt

    from td_lib import staircase

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for ax, corr in zip(axes, (False, True)):
        r = runs[corr]
        for name, col in zip(staircase.TEST_SETS, ["C3", "C0", "C1"]):
            ax.semilogx(r.t, r.accuracy_on(name), color=col, label=name)
        ax.semilogx(r.t, r.overlap_v, color="gray", lw=1, ls="--", label="max$_j|\\cos(w_j,v)|$")
        if not corr:
            for level, name in [(0.691, "Bayes: means"), (0.768, "means + covariances"), (0.819, "everything")]:
                ax.axhline(level, color="gray", lw=0.7, ls=":")
                ax.text(1.1, level + 0.004, name, fontsize=7)
        ax.set(xlabel=xlabel, title=("correlated" if corr else "independent") + " latents")
    axes[0].set_ylabel("test accuracy / overlap")
    axes[0].legend(fontsize=8, loc="lower right")
    plt.tight_layout()
    return fig
