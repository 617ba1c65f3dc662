"""The §7.1 notebook's demo computations and figures (two moments; not library API).

Defined for §7.1 of the course: the notebook explains each demo, calls the function here that
computes it (the exact population gradients of :func:`td_lib.nets.mixture_population_gradient`,
the networks of :func:`td_lib.nets.train_two_layer`) or draws it, and prints the numbers it
quotes. The figure functions build one matplotlib figure (``tight_layout`` applied) and return
it without showing it; the notebook calls ``plt.show()``. The titles the course site matches a
figure by (``site/figures.toml``) are passed in by the notebook. Nothing here computes an
exercise's answer: where a demo needs one, the notebook calls the student's function itself
(:func:`student_value`).

Examples
--------
>>> print(order_table({"generic": {("label", 1): 1, ("input", 2): 3}}, [("label", 1), ("input", 2)]))
statistic      generic
E[y x^1]         eps^1
E[x^2]           eps^3
>>> student_value(lambda: 1 / 0, "(write f above)", "(f raised {exc}; run its test cell to see why)")
(f raised ZeroDivisionError: division by zero; run its test cell to see why)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from td_lib.core import validate as V

__all__ = ["clone_gradient_gaps", "clone_gradient_fits", "relative_output_gap", "student_value", "order_table",
           "order_table_demo", "bayes_report", "moment_gaps", "clone_run_report", "tanh_moment_demo",
           "gradient_gap_figure", "clone_training_figure"]


def clone_gradient_gaps(spikes, activation: str, eps_grid, *, width: int = 32, nodes: int = 16,
                        rng=0) -> np.ndarray:
    """The gap ``‖∇L_data − ∇L_clone‖`` between the exact population gradients on the test bed
    and on its Gaussian clone, at the weight scales ``eps_grid`` (the check of 7.1.B.4's
    prediction, ``∝ ε⁴`` for GELU and ``∝ ε⁵`` for tanh), defined for §7.1 of the course.

    The weights are :func:`td_lib.nets.init_weights` ``(d, width, eps=1, rng=rng)`` scaled by
    each ``ε``; the data are the mixed cumulant model (``β = (1, 5, 10)``, independent latents,
    :func:`td_lib.mixed_cumulant.mixture_components`) with the spikes ``spikes`` (3, d), whose
    class +1 is two Gaussian bumps along ``v`` and the clone's one Gaussian. Class −1 is the same
    in both, so the gap is half the class-+1 difference. ``nodes``: Gauss–Hermite nodes per
    dimension. Returns the gaps, shape ``(len(eps_grid),)``.
    """
    from td_lib import mixed_cumulant, nets

    eps_grid = V.array("eps_grid", eps_grid, ndim=1)
    if np.shape(spikes)[0] != 3:
        raise ValueError(f"spikes must have the three spikes m, u, v as rows, got shape {tuple(np.shape(spikes))}")
    nodes = V.positive_int("nodes", nodes)
    plus_data = mixed_cumulant.mixture_components(spikes, beta_m=1.0, beta_u=5.0, beta_v=10.0, labels=(1,))
    plus_clone = mixed_cumulant.mixture_components(spikes, beta_m=1.0, beta_u=5.0, beta_v=10.0, clone=True,
                                                   labels=(1,))
    W1, a1 = (t.numpy() for t in nets.init_weights(int(np.shape(spikes)[1]), width, eps=1.0, rng=rng))

    def gap(eps):
        g_d = nets.mixture_population_gradient(eps * W1, eps * a1, activation, plus_data, nodes=nodes)
        g_c = nets.mixture_population_gradient(eps * W1, eps * a1, activation, plus_clone, nodes=nodes)
        return 0.5 * math.sqrt(sum(((p - q) ** 2).sum() for p, q in zip(g_d, g_c)))

    return np.array([gap(e) for e in eps_grid])


def clone_gradient_fits(spikes, theory: dict, eps_grid, *, nodes: int = 16, width: int = 32,
                        rng=0) -> tuple[dict, dict]:
    """The gaps of :func:`clone_gradient_gaps` for each activation of ``theory`` and the slope of
    their log-log fit, printed beside the predicted power (the check of 7.1.B.4, defined for §7.1
    of the course: ``‖∇L_data − ∇L_clone‖ ∝ εᵖ`` with ``p = theory[activation]``).

    Returns ``(gaps, fits)``: ``{activation: gaps}`` and ``{activation: fitted exponent}``.
    """
    gaps, fits = {}, {}
    for act, p_th in theory.items():
        gaps[act] = clone_gradient_gaps(spikes, act, eps_grid, width=width, nodes=nodes, rng=rng)
        fits[act] = np.polyfit(np.log(eps_grid), np.log(gaps[act]), 1)[0]
        print(f"{act}: fitted exponent {fits[act]:.3f} (theory {p_th})")
    return gaps, fits


def relative_output_gap(out) -> np.ndarray:
    """The relative gap between two networks' test outputs at each logged step, defined for §7.1
    of the course (the demo of a GELU network trained on the data and on its clone):
    ``mean|f_data − f_clone| / mean|f_data|`` over the test set, from ``out`` of shape
    ``(T, 2, n_test)`` (:class:`td_lib.nets.TrainLog`'s ``out``; run 0 on the data, run 1 on the
    clone)."""
    out = V.array("out", out, ndim=3)
    if out.shape[1] != 2:
        raise ValueError(f"out must hold two runs (data, clone) on axis 1, got shape {out.shape}")
    return np.abs(out[:, 0] - out[:, 1]).mean(1) / np.maximum(np.abs(out[:, 0]).mean(1), 1e-12)


def student_value(compute: Callable[[], Any], not_written: str, failed: str) -> Any:
    """``compute()``, which calls a student's function, or None when it is not written (printing
    ``not_written``) or fails (printing ``failed`` formatted with ``exc``, the exception's
    ``"Name: message"``), defined for §7.1 of the course (and used by §7.2's demos) so that a
    demo never stops Run All."""
    try:
        return compute()
    except NotImplementedError:
        print(not_written)
    except Exception as exc:  # noqa: BLE001 - any failure of the student's code: the demo goes on
        print(failed.format(exc=f"{type(exc).__name__}: {exc}"))
    return None


def order_table(tables: dict, keys: Sequence[tuple[str, int]]) -> str:
    """The order table of 7.1.B.2 as text, one column per activation, defined for §7.1 of the
    course: ``tables`` maps a name to the student's ``gradient_orders`` result, ``keys`` are the
    rows (``("label", k)`` for ``E[y x^k]``, ``("input", p)`` for ``E[x^p]``); ``eps^n`` is the
    order at which the statistic enters the gradient, ``-`` that it never does."""
    if not isinstance(tables, dict) or not tables:
        raise ValueError(f"tables must be a non-empty dict name -> order table, got {tables!r}")
    fmt = lambda o: "  -  " if o is None else f"eps^{o}"
    lines = [f"{'statistic':12s}" + "".join(f"{nm:>10s}" for nm in tables)]
    for key in keys:
        lab = f"E[y x^{key[1]}]" if key[0] == "label" else f"E[x^{key[1]}]"
        lines.append(f"{lab:12s}" + "".join(f"{fmt(t[key]):>10s}" for t in tables.values()))
    return "\n".join(lines)


def order_table_demo(gradient_orders: Callable[[dict, int], dict]) -> None:
    """Print the order table of 7.1.B.2 (:func:`order_table`) that the student's
    ``gradient_orders`` gives for generic coefficients (every ``c_k = 1``), for GELU and for tanh,
    up to order 5, defined for §7.1 of the course; a note instead while it is not written or
    fails (:func:`student_value`)."""
    s2pi = math.sqrt(2 * math.pi)
    gelu_c = {1: 0.5, 2: 1 / s2pi, 3: 0.0, 4: -1 / (6 * s2pi), 5: 0.0, 6: 1 / (40 * s2pi)}
    tanh_c = {1: 1.0, 3: -1 / 3, 5: 2 / 15}
    tables = student_value(lambda: {name: gradient_orders(cc, 5) for name, cc in [
        ("generic", {k: 1.0 for k in range(1, 6)}), ("GELU", gelu_c), ("tanh", tanh_c)]},
        "(write gradient_orders above to see the table)",
        "(gradient_orders raised {exc}; run its test cell to see why)")
    if tables:
        print(order_table(tables, [("label", k) for k in range(1, 6)] + [("input", p) for p in range(2, 5)]))


def bayes_report(ref: dict) -> tuple[float, float, float]:
    """Print the three exact Bayes accuracies of the test bed (``β = (1, 5, 10)``, ``d = 16``:
    from the means only, from means and covariances, from everything) and the Monte Carlo check
    of the three Bayes rules computed beforehand, each hit rate with its standard error
    ``sqrt(acc (1 − acc) / n)`` and its deviation from the exact value in standard errors,
    defined for §7.1 of the course.

    ``ref``: the baked ``{"exact": (3 accuracies), "hits": (3 hit rates), "n": samples, "seed":
    torch seed}``. Returns the three exact accuracies.
    """
    acc_m, acc_mu, acc_all = ref["exact"]
    print(f"Bayes accuracy, beta = (1, 5, 10), d = 16:  means only {100 * acc_m:.3f} %,  "
          f"means + covariances {100 * acc_mu:.3f} %,  everything {100 * acc_all:.3f} %")
    n_mc = ref["n"]
    print(f"Monte Carlo check computed beforehand ({n_mc:,} fresh samples, seed {ref['seed']}; "
          "± one standard error):")
    for name, hit, exact in zip(("means only", "means + covariances", "everything"), ref["hits"],
                                (acc_m, acc_mu, acc_all)):
        se = math.sqrt(exact * (1 - exact) / n_mc)
        print(f"  {name:20s}: {100 * hit:.2f} % ± {100 * se:.2f} %  "
              f"(exact {100 * exact:.3f} %: {(hit - exact) / se:+.1f} standard errors)")
    return acc_m, acc_mu, acc_all


def moment_gaps(X, Xc, Y) -> None:
    """Print how far the empirical moments ``E[xxᵀ]`` and ``E[yx]`` of a data set ``X`` (n, d)
    with labels ``Y`` are from those of its clone ``Xc`` (largest entry), the check of 7.1.A.3
    defined for §7.1 of the course (zero up to rounding for an exact empirical clone)."""
    n = X.shape[0]
    print("max |E[xx^T] - E_clone[xx^T]|:", (X.T @ X - Xc.T @ Xc).abs().max().item() / n)
    print("max |E[yx] - E_clone[yx]|    :", (X.T @ Y - Xc.T @ Y).abs().max().item() / n)


def clone_run_report(g, gap, steps: Sequence[int]) -> None:
    """Print, at the logged ``steps`` among ``steps`` (those ``g.t`` holds), the test accuracies
    of the networks trained on the data and on the clone, the relative output gap ``gap``
    (:func:`relative_output_gap`) and the RMS pre-activation of the run on the data; defined for
    §7.1 of the course (the GELU demo after Exercise 7.1.B). ``g``: a
    :class:`td_lib.nets.TrainLog` of the two runs."""
    show = [t for t in steps if t in g.t]
    idx = [g.at(t) for t in show]
    print("step                      :", show)
    print("test accuracy, data       :", [round(float(g.acc[i, 0]), 4) for i in idx])
    print("test accuracy, clone      :", [round(float(g.acc[i, 1]), 4) for i in idx])
    print("relative output gap       :", [f"{gap[i]:.1e}" for i in idx])
    print("RMS pre-activation (data) :", [round(float(g.rms_pre[i, 0]), 3) for i in idx])


def tanh_moment_demo(tanh_sq_moment: Callable[[float, str], float]) -> None:
    """Print ``E[tanh²(wx)]`` for Gaussian and Rademacher ``x`` at ``w = 1`` and ``0.1`` from the
    student's ``tanh_sq_moment`` (a note instead while it is not written or fails), and the
    small-``w`` series of their difference at ``w = 0.1`` through ``w⁴``, ``w⁶``, ``w⁸``:
    ``−(4/3)w⁴ + (17/45)·14 w⁶ − (62/315)·104 w⁸`` (Exercise 7.1.C.3, defined for §7.1 of the
    course)."""
    vals = student_value(lambda: [(w_, tanh_sq_moment(w_, "gaussian"), tanh_sq_moment(w_, "rademacher"))
                                  for w_ in (1.0, 0.1)], "(write tanh_sq_moment above to see the exact values)",
                         "(tanh_sq_moment raised {exc}; run its test cell to see why)")
    for w_, g_, r_ in vals or []:
        print(f"w = {w_}: Gaussian {g_:.6f}, Rademacher {r_:.6f}, difference {g_ - r_:.4e}")
    w_ = 0.1
    print("series through w^4, w^6, w^8:",
          [f"{s:.4e}" for s in np.cumsum([-4 / 3 * w_**4, 17 / 45 * 14 * w_**6, -62 / 315 * 104 * w_**8])])


def gradient_gap_figure(eps_grid, gaps: dict, fits: dict, theory: dict, *, title: str):
    """The check of 7.1.B.4 by exact population gradients, defined for §7.1 of the course: the
    gap ``‖∇L_data − ∇L_clone‖`` against the weight scale (``gaps``: ``{activation: gaps}``,
    log-log) with the fitted slopes ``fits`` in the legend, beside the predicted power
    ``theory[activation]`` anchored at the first point (dotted)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    for (act, gp), col in zip(gaps.items(), ("C0", "C1")):
        p_th = theory[act]
        ax.loglog(eps_grid, gp, "o", color=col, label=f"{act}: exact quadrature, slope {fits[act]:.2f}")
        ax.loglog(eps_grid, gp[0] * (eps_grid / eps_grid[0]) ** p_th, ":", color=col,
                  label=rf"theory $\propto\varepsilon^{p_th}$")
    ax.set(xlabel=r"weight scale $\varepsilon$",
           ylabel=r"$\|\nabla L_{\rm data}-\nabla L_{\rm clone}\|$",
           title=title)
    ax.legend(fontsize=8)
    plt.tight_layout()
    return fig


def clone_training_figure(g, gap, levels: dict, *, title: str):
    """A small-initialisation network trained on the data and on its clone, defined for §7.1 of
    the course: left, the test accuracy of both over GD steps (``g``: a
    :class:`td_lib.nets.TrainLog` of the two runs) with the Bayes accuracies ``levels``
    (``{name: accuracy}``, dotted); right, the relative output gap ``gap``
    (:func:`relative_output_gap`) and the RMS pre-activation of the run on the data.
    ``title``: the left panel's title."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    ax[0].semilogx(g.t[1:], g.acc[1:, 0], label="trained on data")
    ax[0].semilogx(g.t[1:], g.acc[1:, 1], "--", label="trained on clone")
    for name, level in levels.items():
        ax[0].axhline(level, color="gray", lw=0.8, ls=":")
        ax[0].text(1.2, level + 0.004, f"{name} ({level:.3f})", fontsize=8)
    ax[0].set(xlabel="GD step", ylabel="test accuracy (real data)", title=title)
    ax[0].legend(fontsize=8, loc="lower right")
    ax[1].loglog(g.t[1:], gap[1:], label="relative output gap, data vs clone")
    ax[1].loglog(g.t[1:], g.rms_pre[1:, 0], label="RMS pre-activation (trained on data)")
    ax[1].set(xlabel="GD step", ylabel="relative gap; RMS pre-activation",
              title="the gap opens as the pre-activations grow")
    ax[1].legend(fontsize=8)
    plt.tight_layout()
    return fig
