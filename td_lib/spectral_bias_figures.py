"""The figures of the §7.3 notebook's demos (spectral bias on the circle; not library API).

Defined for §7.3 of the course: the notebook explains each figure, computes what it shows (the
kernel flow of :mod:`td_lib.kernel_flow`, the finite-width kernels of :mod:`td_lib.kernels`,
the network runs of :mod:`td_lib.circle_net`, with the student's functions where an exercise
asks for them), calls the function here to draw it, and prints the numbers it quotes. Each
function builds one matplotlib figure (``tight_layout`` applied) and returns it without showing
it; the notebook calls ``plt.show()``. The titles the course site matches a figure by
(``site/figures.toml``) are passed in by the notebook.

Examples
--------
>>> import numpy as np
>>> ts = np.geomspace(0.3, 30.0, 5)
>>> fig = random_inputs_figure(ts, {16: np.ones((1, 5))}, np.array([0.1]), np.array([1]), title="plateau")
>>> fig.axes[0].get_title()
'plateau'
>>> import matplotlib.pyplot as plt; plt.close(fig)
"""

from __future__ import annotations

import numpy as np

__all__ = ["kernel_flow_figure", "random_inputs_figure", "relu_spectrum_figure", "finite_width_figure",
           "basri_run_figure"]


def kernel_flow_figure(ts, amps, pred_rate, freqs, grid, snaps: dict, target_grid, *, title: str):
    """Demo 7.3.B (kernel gradient flow with a von Mises kernel, equispaced inputs), defined for
    §7.3 of the course: left, the residual amplitude of each frequency over time ``ts`` against
    the theory ``exp(-k̂_ℓ t)`` (``pred_rate``: the population eigenvalues); right, the fitted
    function on ``grid`` at the times of ``snaps`` (``{t: f_t on the grid}``) beside the target.
    ``title``: the left panel's title."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    for j, l in enumerate(freqs):
        ax[0].semilogx(ts, amps[j], color=f"C{j}", label=f"frequency {l}")
        ax[0].semilogx(ts, np.exp(-pred_rate[j] * ts), color="k", ls=":", lw=1)
    ax[0].plot([], [], "k:", lw=1, label=r"theory $e^{-\hat k_\ell t}$")
    ax[0].set(xlabel="time t", ylabel="residual amplitude", title=title)
    ax[0].legend(fontsize=8)
    for (t, f_t), c in zip(snaps.items(), ["C3", "C4", "C5"]):
        ax[1].plot(grid, f_t, color=c, label=f"t = {t:g}")
    ax[1].plot(grid, target_grid, "k", lw=0.8, label="target")
    ax[1].set(xlabel=r"$\vartheta$", ylabel=r"$f_t(\vartheta)$",
              title="fitted function: low frequencies first")
    ax[1].legend(fontsize=8)
    plt.tight_layout()
    return fig


def random_inputs_figure(ts, amps: dict, pred_rate, freqs, *, title: str):
    """Demo 7.3.B with random training inputs, defined for §7.3 of the course: the residual
    amplitude of each frequency over time, one line style per training-set size ``n`` (``amps``:
    ``{n: (freqs, times) amplitudes}``), against ``exp(-k̂_ℓ t)``, log-log."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for (n, A_r), ls_ in zip(amps.items(), ["-", "--"]):
        for j, l in enumerate(freqs):
            ax.loglog(ts, A_r[j], color=f"C{j}", ls=ls_, label=f"l = {l}, n = {n}")
    for j in range(len(freqs)):
        ax.loglog(ts, np.exp(-pred_rate[j] * ts), color="k", ls=":", lw=1)
    ax.plot([], [], "k:", lw=1, label=r"$e^{-\hat k_\ell t}$")
    ax.set(xlabel="time t", ylabel="residual amplitude", ylim=(1e-4, 1.5), title=title)
    ax.legend(fontsize=7, ncol=2)
    plt.tight_layout()
    return fig


def relu_spectrum_figure(ls, even, spectra: dict, *, title: str):
    """The cosine coefficients of the two-layer ReLU NTK on the circle (Exercise 7.3.C, parts 1
    and 2), defined for §7.3 of the course: without bias by quadrature on the frequencies ``ls``
    (``spectra["no_bias"]``; the odd ``ℓ ≥ 3`` vanish and are drawn at 1e-12) and in Basri's
    closed form on ``even`` (``spectra["basri"]``), with bias (``spectra["bias"]``), beside the
    bias kernel's asymptote ``ℓ^{-2}/(√2 π²)``."""
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(5.4, 3.6))
    plt.loglog(ls, np.maximum(spectra["no_bias"], 1e-12), "o", label="no bias, numerical (odd l >= 3: 0)")
    plt.loglog(even, spectra["basri"], "k+", ms=9, label="no bias, closed form (Basri)")
    plt.loglog(ls, spectra["bias"], "s", mfc="none", label="with bias, numerical")
    plt.loglog(ls[1:], 1 / (np.sqrt(2) * np.pi**2) / ls[1:] ** 2, "k--", lw=0.8,
               label=r"$\ell^{-2}/(\sqrt{2}\pi^2)$ (bias asymptote)")
    plt.ylim(1e-5, 1)
    plt.xlabel(r"frequency $\ell$")
    plt.ylabel(r"cosine coefficient $a_\ell$")
    plt.legend(fontsize=8)
    plt.title(title)
    plt.tight_layout()
    return fig


def finite_width_figure(phi, rows, k_infinite, widths, gaps, *, titles: tuple[str, str]):
    """The finite-width kernel of a two-layer ReLU network (Exercise 7.3.C's demo), defined for
    §7.3 of the course: left, ``K_N(φ, 0)`` for N = 20, 200, 20000 units (``rows``) beside the
    closed-form infinite-width kernel ``k_infinite`` on the angles ``phi``; right, the mean
    squared gap to the infinite width against the width (``gaps``: without and with bias)
    beside the per-unit variance over ``N`` (:func:`td_lib.kernels.gap_variance`)."""
    import matplotlib.pyplot as plt

    from td_lib import kernels

    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    for row, N, c in zip(rows, (20, 200, 20000), ("C0", "C1", "C2")):
        ax[0].plot(phi, row, color=c, lw=0.9, label=f"N = {N}")
    ax[0].plot(phi, k_infinite, "k--", lw=1, label=r"$K^\infty$ (closed form)")
    ax[0].set(xlabel=r"angle $\varphi$ between the inputs (rad)", ylabel=r"kernel $K_N(\varphi, 0)$",
              title=titles[0])
    ax[0].legend(fontsize=8)
    for gap, bias, mark, ls_ in zip(gaps, (False, True), ("o", "s"), (":", "--")):
        name = "with bias" if bias else "no bias"
        ax[1].loglog(widths, gap, mark, mfc="none", label=f"measured, {name}")
        ax[1].loglog(widths, kernels.gap_variance(bias=bias) / widths, "k" + ls_, lw=0.8,
                     label=f"per-unit variance / N, {name}")
    ax[1].set(xlabel="width N (units)", ylabel=r"mean of $(K_N-K^\infty)^2$ over 64 angles",
              title=titles[1])
    ax[1].legend(fontsize=8)
    plt.tight_layout()
    return fig


def basri_run_figure(run, freqs, *, rate_unit: float, a_bias: dict, t_pred, title: str):
    """Demo 7.3.D (a two-layer ReLU network on the circle, Basri et al.'s setting), defined for
    §7.3 of the course: left, the residual amplitude of each frequency over gradient-descent
    steps at both output scales of ``run`` (a :class:`td_lib.circle_net.CircleNetRun`) beside
    the frozen-kernel theory ``(1 - rate_unit·a_ℓ)^t``; right, the steps until the residual falls
    below ``1/e`` against the frequency, with the infinite-width prediction ``t_pred`` and
    ``∝ ℓ²``. ``title``: the left panel's title."""
    import matplotlib.pyplot as plt

    t_fit, ts_D = run.t_fit, run.t
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    for i, ls_ in enumerate(["-", "--"]):
        for j, l in enumerate(freqs):
            ax[0].semilogx(ts_D + 1, run.amps[:, i, j], color=f"C{j}", ls=ls_,
                           label=rf"$\ell$ = {l}" if i == 0 else None)
        ax[1].loglog(freqs, t_fit[i], "o" if i == 0 else "s", mfc="none",
                     label=f"network, scale {run.scales[i]:g}")
    for l in freqs:
        ax[0].semilogx(ts_D + 1, (1 - rate_unit * a_bias[l]) ** ts_D, color="k", ls=":", lw=1)
    ax[0].plot([], [], "k:", lw=1, label="frozen kernel (7.3.C)")
    ax[0].set(xlabel="GD step + 1", ylabel="residual amplitude", title=title)
    ax[0].legend(fontsize=8)
    ax[1].loglog(freqs, t_pred, "k+", ms=10, label="infinite-width prediction")
    ax[1].loglog(freqs, t_pred[0] * freqs**2.0, "k:", lw=0.8, label=r"$\propto\ell^2$")
    ax[1].set(xlabel=r"frequency $\ell$", ylabel=r"steps until residual $<e^{-1}$")
    ax[1].set_xticks(freqs, [str(l) for l in freqs])
    ax[1].minorticks_off()
    ax[1].legend(fontsize=8)
    plt.tight_layout()
    return fig
