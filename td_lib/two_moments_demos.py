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

__all__ = ["clone_gradient_gaps", "relative_output_gap", "student_value", "order_table",
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
