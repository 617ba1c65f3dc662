"""The §7.2 notebook's demo computations (higher cumulants; not library API).

Defined for §7.2 of the course: the notebook explains each demo, calls the function here that
computes it and prints the numbers it quotes; the figures are drawn by
:mod:`td_lib.higher_cumulants_figures`. The escape-time study and the step-size sweep are
engines that take the student's ``escape_times`` (Exercise 7.2.C) as an argument: the notebook
passes it in (through :func:`td_lib.own_work.demo_result`, which shows the course's reference
results until it runs). Nothing here computes an exercise's answer.

Examples
--------
>>> bool(hermite_gram_error(6) < 1e-12)
True
>>> fake = lambda k, d, delta, runs, t_max, seed: np.full(runs, float(d) ** k)
>>> rows = study_slopes(escape_study(fake, [8, 16], runs=3), [8, 16], n_boot=20)
>>> [round(r["slope"], 6) for r in rows.values()]
[1.0, 2.0, 3.0]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from td_lib.core import validate as V
from td_lib.two_moments_demos import student_value  # re-exported: the §7.2 demos use it too

__all__ = ["hermite_gram_error", "escape_study", "study_slopes", "escape_sweep", "student_value"]


def hermite_gram_error(n: int = 6) -> float:
    """``max |E[He_j(Z) He_k(Z)] / k! − δ_jk|`` over ``j, k < n`` by Gaussian quadrature, defined
    for §7.2 of the course (the orthogonality ``E[He_j He_k] = k! δ_jk`` of the Hermite basis)."""
    from td_lib.core import gaussian

    n = V.positive_int("n", n)
    V6 = lambda x: np.polynomial.hermite_e.hermevander(x, n - 1)  # columns He_0..He_{n-1}
    gram = gaussian.gaussian_expectation(lambda x: (V6(x)[:, :, None] * V6(x)[:, None, :]).reshape(len(x), -1)
                                         ).reshape(n, n)
    return np.abs(gram / [math.factorial(k) for k in range(n)] - np.eye(n)).max()


def escape_study(escape_times: Callable, dims: Sequence[int], *, runs: int = 48, t_max: int = 10**6,
                 progress: bool | str = False) -> dict:
    """The escape-time study of Exercise 7.2.C, defined for §7.2 of the course: the student's
    ``escape_times(k, d, delta, runs=, t_max=, seed=)`` for ``k = 1, 2, 3`` and each ``d`` in
    ``dims``, at the theory's step ``δ = escape.STEPS[k](d)`` (``1``, ``1/ln d``,
    ``d^{-1/2}/ln d``), one seed per point (``7200 + 100 k + d``). Returns
    ``{(k, d): escape times}``. ``progress``: a bar over the points (``True`` or its label)."""
    from td_lib import escape
    from td_lib.core.runtime import bar

    runs = V.positive_int("runs", runs)
    t_max = V.positive_int("t_max", t_max)
    cases = [(k, d) for k in (1, 2, 3) for d in dims]
    it = bar(cases, progress, "escape-time study")
    return {(k, d): np.asarray(escape_times(k, d, escape.STEPS[k](d), runs=runs, t_max=t_max,
                                            seed=7200 + 100 * k + d), dtype=float)
            for k, d in it}


def study_slopes(study: dict, dims: Sequence[int], *, n_boot: int = 2000) -> dict:
    """What the notebook quotes of the escape-time study, defined for §7.2 of the course: for
    each ``k``, the medians over ``dims``, the laws ``d``, ``d ln² d``, ``d² ln d``
    (``escape.LAWS``), the fitted log–log slope of the medians with its bootstrap distribution
    over runs (:func:`td_lib.escape.bootstrap_slope`, ``n_boot`` replicates, seed ``k``), and the
    law's slope. Returns ``{k: {"med", "law", "slope", "boot", "slope_law"}}``."""
    from td_lib import escape

    n_boot = V.positive_int("n_boot", n_boot)
    rows = {}
    for k in (1, 2, 3):
        med = np.array([np.median(study[k, d]) for d in dims])
        law = np.array([escape.LAWS[k](d) for d in dims])
        slope, boot = escape.bootstrap_slope(dims, [study[k, d] for d in dims], n_boot, rng=k)
        rows[k] = {"med": med, "law": law, "slope": slope, "boot": boot,
                   "slope_law": escape.loglog_slope(dims, law)}
    return rows


def escape_sweep(escape_times: Callable, deltas, *, runs: int, t_max: int, k: int = 3, d: int = 64,
                 progress: bool | str = False) -> dict:
    """The step-size sweep of Exercise 7.2.C's demo, defined for §7.2 of the course: the
    student's ``escape_times`` for information exponent ``k`` in ``d`` dimensions at each step
    parameter of ``deltas`` (seed ``7299 + i`` for the i-th), ``runs`` runs of at most ``t_max``
    steps. Returns ``{"med": median escape times, "never": fraction not escaped}``. ``progress``: a
    bar over the step parameters (``True`` or its label)."""
    from td_lib.core.runtime import bar

    runs = V.positive_int("runs", runs)
    t_max = V.positive_int("t_max", t_max)
    T = np.stack([np.asarray(escape_times(k, d, dl, runs=runs, t_max=t_max, seed=7299 + i), dtype=float)
                  for i, dl in enumerate(bar(deltas, progress, "step-size sweep"))])
    return {"med": np.median(T, axis=1), "never": np.isinf(T).mean(axis=1)}
