"""Exact Bayes accuracies of the mixed cumulant model (independent latents) and the Bayes
rules as functions of the data; see :mod:`td_lib.mixed_cumulant`."""

from __future__ import annotations

import math

import numpy as np

from td_lib.core import validate as V
from td_lib.core.gaussian import legendre_nodes
from td_lib.mixed_cumulant.model import _betas, _spikes_np

__all__ = ["bayes_accuracy", "log_likelihood_ratios"]


# --- the class-conditional laws of the informative coordinates (scipy.stats.norm densities) ---

def _log_ratio_u(t, bu: float):
    """``log p_+(x_u) - log p_-(x_u)``: ``N(0, 1 + beta_u)`` against ``N(0, 1)``."""
    from scipy.stats import norm

    return norm.logpdf(t, scale=math.sqrt(1 + bu)) - norm.logpdf(t)


def _log_p_plus_v(t, bv: float):
    """``log p_+(x_v)``: the mixture ``(1/2) sum_± N(±sqrt(beta_v/(1+beta_v)), 1/(1+beta_v))``."""
    from scipy.stats import norm

    av, sv = math.sqrt(bv / (1 + bv)), 1 / math.sqrt(1 + bv)
    return np.logaddexp(norm.logpdf(t, av, sv), norm.logpdf(t, -av, sv)) - math.log(2)


def _log_ratio_v(t, bv: float):
    """``log p_+(x_v) - log p_-(x_v)``, class -1 being ``N(0, 1)``."""
    from scipy.stats import norm

    return _log_p_plus_v(t, bv) - norm.logpdf(t)


def bayes_accuracy(*, beta_m: float = 1.0, beta_u: float = 5.0, beta_v: float = 10.0,
                   use: str = "muv", panels: int = 40) -> float:
    """Exact Bayes accuracy (equal priors, independent latents) from the statistics ``use``.

    The classes differ only along ``m, u, v``, and with independent latents the three
    coordinates ``x_m = m.x``, ``x_u = u.x``, ``x_v = v.x`` are independent in each class:
    ``x_m ~ N(0 or beta_m, 1)``, ``x_u ~ N(0, 1 or 1 + beta_u)``, and ``x_v ~ N(0, 1)`` in class
    -1 but ``(1/2) sum_± N(±sqrt(beta_v/(1+beta_v)), 1/(1+beta_v))`` in class +1. The
    coordinates orthogonal to ``m, u, v`` carry no information. ``use`` selects which of the
    three coordinates the classifier sees:

    * ``"m"`` -- the means alone: the best classifier of the projection on the class-mean
      difference ``mu_+ - mu_- = beta_m m``. Its accuracy is ``Phi(beta_m / 2)``; it is also
      the Bayes accuracy of two Gaussians with the two class means and a common covariance.
    * ``"mu"`` -- means and covariances: the Bayes accuracy of the population Gaussian clone
      (along ``v`` the clone's classes coincide). Because ``(x_m, x_u)`` has the same law in
      the data and the clone, this classifier also scores this on the data.
    * ``"muv"`` -- everything: the Bayes accuracy of the data.
    * ``"v"`` -- the fourth-cumulant direction alone.

    Accuracy is ``1/2 + TV/2``. With ``m`` used, the ``x_m`` integral is done in closed form,
    ``P_±(l_m + r > 0) = Phi((beta_m^2/2 ± r) / beta_m)`` for the other log-likelihood ratios
    ``r``, and the rest by composite Gauss-Legendre quadrature (``panels`` x 2 or 3 panels of
    12 nodes on ±12 standard deviations; the integrand is analytic, and doubling ``panels``
    changes the result by less than 1e-12). For
    ``"v"`` the integral of ``max(p_+, p_-)`` is split at the roots of ``p_+ = p_-``.

    References
    ----------
    Bardone & Goldt (2024), eq. (1) (the model); original course notes §7.1, "Two moments" (the Bayes lines).

    Examples
    --------
    >>> [round(bayes_accuracy(use=u), 4) for u in ("m", "mu", "muv")]
    [0.6915, 0.768, 0.8194]
    """
    from scipy import integrate, optimize
    from scipy.special import ndtr
    from scipy.stats import norm

    bm, bu, bv = _betas(beta_m, beta_u, beta_v)
    V.choice("use", use, ("m", "mu", "muv", "v"))
    panels = V.positive_int("panels", panels, minimum=10)

    def l_v(t):
        return _log_ratio_v(t, bv)

    if use == "v":
        if bv == 0:
            return 0.5
        grid = np.linspace(0, 8, 4001)
        g = l_v(grid)
        roots = [optimize.brentq(l_v, grid[i], grid[i + 1], xtol=1e-15)
                 for i in np.nonzero(np.sign(g[:-1]) * np.sign(g[1:]) < 0)[0]]

        def pmax(t):
            return float(norm.pdf(t)) * max(1.0, math.exp(float(l_v(t))))
        pts = [0.0, *roots, 12.0]
        tot = sum(integrate.quad(pmax, lo, hi, epsabs=1e-14, epsrel=1e-13, limit=200)[0]
                  for lo, hi in zip(pts[:-1], pts[1:]))
        return float(tot)  # = 2 * (1/2) * int_0^inf max(p_+, p_-) by symmetry
    if use == "m":
        return float(ndtr(bm / 2))
    if bm == 0:
        raise ValueError("beta_m must be > 0 when use contains 'm'")
    # composite Gauss-Legendre on truncated ranges (analytic integrands; the truncation at
    # 12 standard deviations costs < 1e-30)
    su = math.sqrt(1 + bu)
    xu, wu = legendre_nodes(-12 * su, 12 * su, panels=panels * 3)
    pu_p = norm.pdf(xu, scale=su)
    pu_m = norm.pdf(xu)
    ru = _log_ratio_u(xu, bu)
    if use == "mu":
        rp, wp, wm = ru, wu * pu_p, wu * pu_m
    else:
        xv, wv = legendre_nodes(-12.0, 12.0, panels=panels * 2)
        pv_m = norm.pdf(xv)
        rv = l_v(xv)
        pv_p = np.exp(_log_p_plus_v(xv, bv))
        rp = (ru[:, None] + rv[None, :]).ravel()
        wp = (wu[:, None] * pu_p[:, None] * (wv * pv_p)[None, :]).ravel()
        wm = (wu[:, None] * pu_m[:, None] * (wv * pv_m)[None, :]).ravel()
    acc_p = np.dot(wp, ndtr((bm**2 / 2 + rp) / bm))
    acc_m = np.dot(wm, ndtr((bm**2 / 2 - rp) / bm))
    return float(0.5 * (acc_p + acc_m))


def log_likelihood_ratios(X, spikes, *, beta_m: float = 1.0, beta_u: float = 5.0,
                          beta_v: float = 10.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Bayes rules of :func:`bayes_accuracy` as functions of the data (independent latents).

    Returns the log-likelihood ratios :math:`\\log p_+/p_-` of the three coordinates
    ``x_m = m.x``, ``x_u = u.x``, ``x_v = v.x`` of the rows of ``X`` (torch or numpy, shape
    ``(n, d)``): ``l_m = beta_m x_m - beta_m^2/2``,
    ``l_u = -log(1 + beta_u)/2 + x_u^2 beta_u / (2 (1 + beta_u))`` and, with ``a =
    sqrt(beta_v/(1+beta_v))`` and ``s = 1/sqrt(1+beta_v)``, ``l_v = log[(N(x_v; a, s^2) +
    N(x_v; -a, s^2)) / 2] - log N(x_v; 0, 1)``. The coordinates are independent within each
    class, so the Bayes rule from the means is ``l_m > 0``, from means and covariances
    ``l_m + l_u > 0``, and from everything ``l_m + l_u + l_v > 0``; their accuracies on fresh
    samples estimate ``bayes_accuracy(use="m" / "mu" / "muv")`` without bias.
    """
    bm, bu, bv = _betas(beta_m, beta_u, beta_v)
    S = _spikes_np(spikes, None)
    X = np.asarray(X.numpy() if hasattr(X, "numpy") else X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != S.shape[1]:
        raise ValueError(f"X must have shape (n, {S.shape[1]}) to match the spikes, got {X.shape}")
    xm, xu, xv = (X @ S.T).T
    l_m = bm * xm - 0.5 * bm * bm
    return l_m, _log_ratio_u(xu, bu), _log_ratio_v(xv, bv)
