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

__all__ = ["hermite_gram_error", "hermite_report", "cumulant_direction", "bump_densities", "information_exponents",
           "escape_study", "study_slopes", "study_report", "escape_sweep", "sweep_report", "loss_curves",
           "linear_flow_ratio", "staircase_report", "student_value"]


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


def hermite_report(s_relu, s_tanh) -> None:
    """Print the normalised Hermite coefficients ``σ_k = E[σ(Z) He_k(Z)] / k!`` of ReLU
    (``k ≤ 6``, and ``sqrt(2π)·(σ_2, σ_4) = (1, −1)``) and of tanh (``k ≤ 5``: the even ones
    vanish), defined for §7.2 of the course (the information exponent of an activation)."""
    print("ReLU sigma_k, k = 0..6:", np.round(s_relu[:7], 6))
    print("sqrt(2 pi) * (sigma_2, sigma_4):", np.round(math.sqrt(2 * math.pi) * s_relu[[2, 4]], 12))
    print("tanh sigma_k, k = 0..5:", np.round(s_tanh[:6], 6), "(odd function: even k vanish)")


def cumulant_direction(X, y, v) -> tuple[np.ndarray, np.ndarray]:
    """The projections ``v·x`` of the samples ``X`` (n, d) of class +1 and of class −1 (labels
    ``y``), printing the mean, variance and Monte Carlo fourth cumulant
    ``κ_4 = E[t⁴] − 3 E[t²]²`` of class +1 along ``v``: the cumulant direction of the mixed
    cumulant model, same mean and variance as class −1 (Exercise 7.2.A.2, defined for §7.2 of the
    course). Returns ``(v·x in class +1, v·x in class −1)``."""
    xv, xv_minus = (X @ v)[y > 0], (X @ v)[y < 0]
    k4 = np.mean(xv**4) - 3 * np.mean(xv**2) ** 2
    print(f"class +1 along v: mean {xv.mean():+.4f}, variance {xv.var():.4f}, "
          f"kappa_4 {k4:.3f} (Monte Carlo, {xv.size} samples)")
    return xv, xv_minus


def bump_densities(t, beta_v: float) -> tuple[np.ndarray, np.ndarray]:
    """The densities of ``v·x`` at ``t`` in the two classes of the mixed cumulant model, defined
    for §7.2 of the course (Exercise 7.2.A.2): class +1 is the two-bump mixture
    ``½ N(±a, s²)`` with ``a = sqrt(β_v/(1+β_v))``, ``s = 1/sqrt(1+β_v)``; class −1 is
    ``N(0, 1)``. Returns ``(p_+(t), p_−(t))``."""
    from scipy.stats import norm

    a, s = math.sqrt(beta_v / (1 + beta_v)), 1 / math.sqrt(1 + beta_v)
    return 0.5 * (norm.pdf(t, a, s) + norm.pdf(t, -a, s)), norm.pdf(t, 0, 1)


def information_exponents() -> None:
    """Print the information exponent (:func:`td_lib.hermite.information_exponent`, Hermite
    coefficients up to degree 10) of ``h_1``, ``h_3``, ``z²``, ``|z|``, ``h_4 + 0.1 h_6``,
    ``tanh`` and ``z³ = He_3 + 3 He_1``, defined for §7.2 of the course: the degree of the first
    nonzero Hermite coefficient."""
    from td_lib import hermite

    examples = {"h_1 (linear)": lambda t: hermite.h(1, t), "h_3": lambda t: hermite.h(3, t),
                "z^2": lambda t: t**2, "|z|": np.abs,
                "h_4 + 0.1 h_6": lambda t: hermite.h(4, t) + 0.1 * hermite.h(6, t),
                "tanh": np.tanh, "z^3 (= He_3 + 3 He_1)": lambda t: t**3}
    for name, f in examples.items():
        bp = [0.0] if name == "|z|" else None
        print(f"{name:24s} information exponent {hermite.information_exponent(f, 10, breakpoints=bp)}")


def study_report(rows: dict) -> None:
    """Print, for each information exponent ``k`` of :func:`study_slopes`' ``rows``, the median
    escape times, their ratio to the law (``d``, ``d ln² d``, ``d² ln d``), the fitted log-log
    slope with its bootstrap spread and 90 % interval, and the law's slope (the escape-time study
    of Exercise 7.2.C, defined for §7.2 of the course)."""
    for k, r in rows.items():
        med, law, boot = r["med"], r["law"], r["boot"]
        lo, hi = np.quantile(boot, [0.05, 0.95])
        print(f"k={k}: medians {med.tolist()}, ratio to the law {np.round(med / law, 2).tolist()}, "
              f"slope {r['slope']:.2f} ± {boot.std():.2f} (bootstrap 90% interval "
              f"{lo:.2f}–{hi:.2f}); law's slope {r['slope_law']:.2f}")


def sweep_report(deltas, med, never, t_max: int) -> None:
    """Print, for each step parameter ``δ`` of :func:`escape_sweep`, the median escape time and
    the share of runs not escaped after ``t_max`` steps (the step-size window of Exercise 7.2.C,
    defined for §7.2 of the course)."""
    for dl, m, f in zip(deltas, med, never):
        print(f"delta = {dl:6.3f}: median escape time {m:9.1f}, not escaped after {t_max} steps: {f:.0%}")


def loss_curves(loss_coefficients: Callable, sigma2: float, sigma4: float, *, beta_u: float = 5.0,
                beta_v: float = 10.0):
    """The student's ``loss_coefficients`` (Exercise 7.2.D.3) at ``β_u``, ``β_v`` for
    independent and correlated latents, ``{correlated: (c20, c11, c04)}``, or None with a note
    while it is not written or fails (:func:`student_value`), defined for §7.2 of the course:
    the dotted Hermite approximations of the exact ReLU loss in its figure."""
    return student_value(
        lambda: {corr: loss_coefficients(beta_u, beta_v, corr, sigma2, sigma4) for corr in (False, True)},
        "loss_coefficients is not written yet (7.2.D.3): the figure shows the exact loss without the dotted "
        "Hermite approximations.", "loss_coefficients failed ({exc}): the figure shows the exact loss without "
        "the dotted Hermite approximations.")


def linear_flow_ratio(c20: float, c11: float, *, t: float = 12.0, start=(0.01, 0.004)) -> None:
    """Print ``α_v/α_u`` at time ``t`` of the linearised flow ``α̇ = Mα``,
    ``M = [[2c20, c11], [c11, 0]]``, integrated from the small start ``start`` (Exercise 7.2.D.4,
    defined for §7.2 of the course): it tends to the ratio of the growing mode."""
    from scipy.integrate import solve_ivp

    M = np.array([[2 * c20, c11], [c11, 0.0]])
    sol = solve_ivp(lambda t, a: M @ a, (0, t), list(start), rtol=1e-10, atol=1e-14)
    print(f"linear flow at t = {t:g}: alpha_v / alpha_u = {sol.y[1, -1] / sol.y[0, -1]:.4f}")


def staircase_report(runs: dict) -> None:
    """Print, for the staircase runs ``{correlated: run}`` (:func:`td_lib.staircase.train_staircase`),
    the test accuracy over the last five records on the full data, on the Gaussian clone and on
    the mean only, and when the overlap with ``v`` leaves its start (more than 0.05 above its
    first value, :func:`td_lib.staircase.onset_step`) and first exceeds 0.9 (demo 7.2.E, defined
    for §7.2 of the course)."""
    from td_lib import staircase

    for corr in (False, True):
        r = runs[corr]
        late = slice(-5, None)  # the last five records
        print(("correlated " if corr else "independent") +
              f": accuracy over the last five records: full {np.mean(r.accuracy_on('full data')[late]):.3f}, "
              f"clone {np.mean(r.accuracy_on('Gaussian clone')[late]):.3f}, "
              f"mean only {np.mean(r.accuracy_on('mean only')[late]):.3f}")
        print(f"    largest overlap with v: {r.overlap_v[0]:.2f} at step {r.t[0]}; stays more than 0.05 "
              f"above that from step {staircase.onset_step(r.t, r.overlap_v, 0.05)} on; "
              f"first > 0.9 at step {staircase.first_above(r.t, r.overlap_v, 0.9)}")
