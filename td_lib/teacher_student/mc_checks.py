"""Theorem 6 and eq. 10 of Tian (2020) against Monte Carlo, with functions a caller wrote.

:func:`theorem6_scan` compares a closed form of Theorem 6's expectation with a Monte Carlo
estimate along a sweep of angles; :func:`eq10_norm_scan` measures how the pull on a student
node scales with its norm (eq. 10 says ``‖w_k‖``, the gradient says not at all). Both take the
pieces a student writes (the closed form, the Monte Carlo estimate) as arguments; by default
they use the library's (:mod:`~td_lib.teacher_student.theory`).

Examples
--------
>>> from td_lib.teacher_student.theory import relu_cross_moment, relu_cross_moment_mc
>>> mc = lambda a, w, n, rng: relu_cross_moment_mc(a, w, n=n, rng=rng)
>>> r = theorem6_scan(relu_cross_moment, mc, [0.5, 2.0], n=20_000)
>>> r["est"].shape, bool(r["zmax"] < 5)
((2, 4), True)
"""

from __future__ import annotations

import numpy as np

from td_lib.core import validate as V
from td_lib.core.runtime import numpy_rng
from td_lib.core.validate import library_default
from td_lib.teacher_student.theory import (
    pair_at_angle,
    population_gradient,
    population_gradient_mc,  # noqa: F401 - eq10_norm_scan's default (validate.library_default)
)

__all__ = ["eq10_norm_scan", "theorem6_scan"]


def _pulls_mc(monte_carlo, W, Vs, Wt, Vt, n: int, rng: np.random.Generator):
    """Estimate of ``ẇ`` (eq. 7) as the sum of the pulls, each pair's ``M`` by ``monte_carlo``
    on its own samples: returns the mean and the standard error, each (d, n)."""
    d, ns = W.shape
    alpha, beta = Vs @ Vt.T, Vs @ Vs.T
    mean, var = np.zeros((d, ns)), np.zeros((d, ns))
    for k in range(ns):
        for coef, a in [(alpha[k, j], Wt[:, j]) for j in range(Wt.shape[1])] + \
                       [(-beta[k, q], W[:, q]) for q in range(ns)]:
            m, se = (np.asarray(v, dtype=float) for v in monte_carlo(a.copy(), W[:, k].copy(), n, rng))
            mean[:, k] += coef * m
            var[:, k] += (coef * se) ** 2
    return mean, np.sqrt(var)


def eq10_norm_scan(scales=(0.25, 0.5, 1.0, 2.0, 4.0), *, which: str = "w", n: int = 200_000,
                   rng=10, cross_moment=None, monte_carlo=None) -> dict:
    """Does the pull on ``w_k`` scale with ``‖w_k‖`` (Tian eq. 10) or with ``‖v_k‖``?

    A fixed two-layer configuration (``d = 6``, two teacher nodes with ``‖w*_j‖ = 1`` and
    fan-outs of norm 1 and 0.5, two student nodes, ``C = 2``, no biases, ``x ~ N(0, I)``;
    student node 0 at angle 1 rad from teacher node 0). Node 0's weight (``which="w"``) or
    fan-out (``which="v"``) is multiplied by each of ``scales``, and the component of its
    gradient ``ẇ_0`` orthogonal to ``w_0`` (the part that turns it; the self-term and eq. 10's
    ``−ν w_k`` drop out) is estimated by Monte Carlo of the per-sample gradient
    (:func:`population_gradient_mc`, ``n`` independent samples per scale: seeds ``rng + i``
    for an int ``rng``, successive draws of a Generator otherwise) and computed in closed
    form (:func:`population_gradient`).

    Returns a dict with ``scales``, ``mc`` and ``mc_se`` (norm of the orthogonal part and its
    approximate standard error), ``exact``, ``z`` (largest |MC − closed form| over coordinates
    and scales, in standard errors), and ``slope_mc`` (weighted least squares, standard error
    ``slope_se``) / ``slope_exact``: log–log slopes of the orthogonal part against the scale.
    Eq. 10 (``ẇ_k = ‖w_k‖ r_k``) predicts slope 1 for ``which="w"``; the gradient has 0 (the
    gate ``z_k`` ignores ``‖w_k‖``) and 1 for ``which="v"`` (every pull carries ``α_jk`` or
    ``β_k'k``, linear in ``v_k``; per sample, scaling ``v_k`` by ``c`` gives ``c`` times the
    gradient obtained by scaling ``w_k`` by ``c``, since both scale the node's output).

    With functions the caller wrote: ``cross_moment(w_star, w_k)`` gives the closed form (see
    :func:`population_gradient`), and ``monte_carlo(w_star, w_k, n, rng)`` (mean and standard
    error of ``x 1{w_kᵀx > 0} relu(w_starᵀx)``, ``rng`` a numpy Generator) estimates each pair's
    ``M`` independently; the gradient's estimate is then the same sum of pulls, with the
    standard errors of independent terms combined.

    References
    ----------
    Tian (2020), eq. 10 (``ẇ_k = ‖w_k‖ r_k``) and Theorem 6.
    """
    sc = V.array("scales", scales, ndim=1)
    if sc.size < 2 or np.any(sc <= 0):
        raise ValueError(f"scales must hold at least two positive values, got {sc}")
    V.choice("which", which, ("w", "v"))
    n_samples = V.positive_int("n", n, minimum=2)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        seeds = [V.positive_int("rng", rng, minimum=0) + i for i in range(sc.size)]
    else:
        seeds = [numpy_rng(rng)] * sc.size  # one stream, drawn from in turn
    geo = np.random.default_rng(2020)  # the fixed configuration
    d = 6
    ws0, w0 = pair_at_angle(d=d, theta=1.0, norm_star=1.0, norm_k=1.0, rng=geo)
    ws1 = geo.standard_normal(d)
    Wt = np.stack([ws0, ws1 / np.linalg.norm(ws1)], axis=1)
    Vt = geo.standard_normal((2, 2))
    Vt *= (np.array([1.0, 0.5]) / np.linalg.norm(Vt, axis=1))[:, None]
    W = np.stack([w0, geo.standard_normal(d)], axis=1)
    Vs = 0.5 * geo.standard_normal((2, 2))
    u = W[:, 0] / np.linalg.norm(W[:, 0])
    P = np.eye(d) - np.outer(u, u)
    mc, se, ex, z = [], [], [], 0.0
    for i, c in enumerate(sc):
        Wc, Vc = W.copy(), Vs.copy()
        if which == "w":
            Wc[:, 0] *= c
        else:
            Vc[0] *= c
        gW, _ = population_gradient(Wc, Vc, Wt, Vt, cross_moment=cross_moment)
        if monte_carlo is None:
            mc_lib = library_default("population_gradient_mc", globals(), "monte_carlo")
            mW, _, sW, _ = mc_lib(Wc, Vc, Wt, Vt, n=n_samples, rng=seeds[i])
        else:
            mW, sW = _pulls_mc(monte_carlo, Wc, Vc, Wt, Vt, n_samples, numpy_rng(seeds[i]))
        z = max(z, float(np.max(np.abs(mW[:, 0] - gW[:, 0]) / sW[:, 0])))
        pm, pe = P @ mW[:, 0], P @ gW[:, 0]
        nm = float(np.linalg.norm(pm))
        mc.append(nm)
        se.append(float(np.sqrt(np.sum((P @ (pm / nm)) ** 2 * sW[:, 0] ** 2))))
        ex.append(float(np.linalg.norm(pe)))
    mc, se, ex = map(np.array, (mc, se, ex))
    ls = np.log(sc)
    wt = mc / se                                  # 1 / (standard error of log mc)
    A = np.stack([ls, np.ones_like(ls)], axis=1) * wt[:, None]
    coef, *_ = np.linalg.lstsq(A, np.log(mc) * wt, rcond=None)
    cov = np.linalg.inv(A.T @ A)
    return dict(scales=sc, mc=mc, mc_se=se, exact=ex, z=z, slope_mc=float(coef[0]),
                slope_se=float(np.sqrt(cov[0, 0])),
                slope_exact=float(np.polyfit(ls, np.log(ex), 1)[0]))



def theorem6_scan(closed_form, monte_carlo, thetas, *, n: int, d: int = 4, norm_k: float = 2.0) -> dict:
    """Theorem 6 against Monte Carlo along a sweep of angles, with functions the caller wrote.

    ``w* = e_1`` and ``w_k = norm_k (cos θ, sin θ, 0, ...)`` in ``R^d`` for each ``θ`` of
    ``thetas``; ``closed_form(w_star, w_k)`` and ``monte_carlo(w_star, w_k, n, rng)`` (mean and
    standard error, ``rng = numpy.random.default_rng(int(1000 θ))``) are called once per angle.
    Returns a dict with ``thetas``, ``est``, ``err`` and ``exact`` (each (len(thetas), d)) and
    ``zmax``, the largest ``|est − exact| / err``.

    References
    ----------
    Tian (2020), Theorem 6 (the expectation).
    """
    th = V.array("thetas", thetas, ndim=1)
    n = V.positive_int("n", n, minimum=2)
    d = V.positive_int("d", d, minimum=2)
    norm_k = V.finite("norm_k", norm_k, positive=True)
    ws = np.eye(d)[0]
    est, err, exact = [], [], []
    for t in th:
        wk = norm_k * np.concatenate([[np.cos(t), np.sin(t)], np.zeros(d - 2)])
        draws = np.random.default_rng(int(1000 * t))
        mu, se = (np.asarray(v, dtype=float) for v in monte_carlo(ws.copy(), wk.copy(), n, draws))
        est.append(mu), err.append(se), exact.append(np.asarray(closed_form(ws.copy(), wk.copy()), dtype=float))
    est, err, exact = map(np.array, (est, err, exact))
    return dict(thetas=th, est=est, err=err, exact=exact, zmax=float(np.max(np.abs(est - exact) / err)))
