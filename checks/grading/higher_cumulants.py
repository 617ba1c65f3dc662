"""Grading references of §7.2 "Higher cumulants" (notebook ``td2_7_2_higher_cumulants``).

Hidden tests and :mod:`checks.higher_cumulants` import these; students do not have them (the delegation
registry :mod:`checks.grading.exercises` lists them as counterparts).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize
from scipy.stats import norm

from td_lib import hermite

__all__ = ["bayes_accuracy_v", "fitted_coefficients"]

def bayes_accuracy_v(beta_v: float) -> float:
    """Bayes accuracy (equal priors) from t = v.x alone: N(0,1) against the two-bump mixture
    (1/2)[N(a, s^2) + N(-a, s^2)], a = sqrt(beta_v/(1+beta_v)), s^2 = 1/(1+beta_v).

    (1/2) * integral of max(p+, p-) over [-14, 14], by 200-point Gauss–Legendre on each piece
    between the crossings p+ = p- (found by root bracketing), where the integrand is smooth.
    The reference of Exercise 7.2.A.2 (independent of :func:`td_lib.mixed_cumulant.bayes_accuracy`).

    References
    ----------
    Bardone & Goldt (2024), eq. (1) (the law of v.x); original course notes §7.2, Exercise 7.2.A.2.

    Examples
    --------
    >>> round(float(bayes_accuracy_v(10.0)), 5)
    0.71482
    """
    a, s = math.sqrt(beta_v / (1 + beta_v)), 1 / math.sqrt(1 + beta_v)
    p_plus = lambda t: 0.5 * (norm.pdf(t, a, s) + norm.pdf(t, -a, s))
    g = lambda t: p_plus(t) - norm.pdf(t)
    grid = np.linspace(0, 12, 24001)
    gg = g(grid)
    if np.abs(gg).max() < 1e-12:  # beta_v -> 0: identical classes
        return 0.5
    sg = np.sign(gg)
    roots = []
    for i in np.nonzero(sg[:-1] * sg[1:] < 0)[0]:
        lo, hi = grid[i], grid[i + 1]
        if np.sign(g(np.array([lo]))[0]) * np.sign(g(np.array([hi]))[0]) < 0:
            roots.append(optimize.brentq(lambda t: g(np.array([t]))[0], lo, hi, xtol=1e-15))
        else:  # rounding-level sign flicker (beta_v -> 0): not a real crossing
            roots.append(0.5 * (lo + hi))
    edges = np.array(sorted({-14.0, 14.0, *roots, *(-r for r in roots)}))
    x, w = np.polynomial.legendre.leggauss(200)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        t = 0.5 * (hi - lo) * x + 0.5 * (hi + lo)
        total += 0.5 * (hi - lo) * np.dot(w, np.maximum(p_plus(t), norm.pdf(t)))
    return 0.5 * total


def fitted_coefficients(beta_u: float = 5.0, beta_v: float = 10.0,
                        correlated: bool = False) -> tuple[float, float, float]:
    """(c20, c11, c04) read off the exact ReLU loss :func:`td_lib.hermite.mcm_relu_loss`.

    c20 = -(1/2) d^2L/d alpha_u^2 and c11 = -d^2L/(d alpha_u d alpha_v) at 0 by central
    differences with Richardson extrapolation (h = 2e-3, 1e-3); c04 = minus the alpha_v^4
    coefficient of a degree-4 polynomial fit in alpha_v^2 of L(0, alpha_v) - L(0, 0) on
    alpha_v in [0.02, 0.12]. All points in one vectorised call (one set of quadrature nodes
    for all of them, so the differences cancel exactly what they should). The reference of
    Exercise 7.2.D.

    References
    ----------
    Seed §7.2, Exercise 7.2.D (the expansion of the ReLU loss in the overlaps).

    Examples
    --------
    >>> c20, c11, c04 = fitted_coefficients(5.0, 10.0, False)
    >>> round(c20, 4), round(c11, 6) + 0.0
    (0.4987, 0.0)
    """
    hs = (1e-3, 2e-3)
    al = np.linspace(0.02, 0.12, 11)
    pts = [(0.0, 0.0)]
    for h in hs:
        pts += [(h, 0.0), (-h, 0.0), (h, h), (h, -h), (-h, h), (-h, -h)]
    pts += [(0.0, a) for a in al]
    au, av = np.array(pts).T
    L = hermite.mcm_relu_loss(au, av, beta_u=beta_u, beta_v=beta_v, correlated=correlated)
    L0 = L[0]
    d2u, duv = {}, {}
    for j, h in enumerate(hs):
        up, um, pp, pm, mp, mm = L[1 + 6 * j:7 + 6 * j]
        d2u[h] = -(up + um - 2 * L0) / (2 * h * h)
        duv[h] = -(pp - pm - mp + mm) / (4 * h * h)
    c20 = (4 * d2u[1e-3] - d2u[2e-3]) / 3
    c11 = (4 * duv[1e-3] - duv[2e-3]) / 3
    p = np.polyfit(al**2, L[-len(al):] - L0, 4)
    return float(c20), float(c11), float(-p[-3])
