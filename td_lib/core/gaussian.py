"""Expectations under the standard normal by quadrature (one module for the whole library).

:math:`\\mathbb E[f(Z)]`, :math:`Z\\sim\\mathcal N(0,1)`: Gauss–Hermite nodes for smooth
integrands, Gauss–Legendre pieces split at the kinks of piecewise-smooth ones (ReLU), with a
convergence check that doubles the number of nodes. Every Gaussian expectation in td_lib
(Hermite coefficients, dual activations, the early-time linear constants) goes through
:func:`gaussian_expectation`.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from numpy.polynomial import hermite_e as H

from td_lib.core import validate as V

__all__ = ["QuadratureWarning", "arccos_kernel", "gauss_normal_nodes", "gaussian_expectation", "legendre_nodes"]

_SQRT2PI = math.sqrt(2.0 * math.pi)
_GH_MAX = 320


@functools.lru_cache(maxsize=64)
def _rule(kind: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Hermite (``"hermite"``) or Gauss–Legendre (``"legendre"``) nodes and weights,
    computed once per ``n`` (read-only: the convergence loop asks for the same rules again)."""
    x, w = H.hermegauss(n) if kind == "hermite" else np.polynomial.legendre.leggauss(n)
    x.flags.writeable = w.flags.writeable = False
    return x, w


class QuadratureWarning(RuntimeWarning):
    """Issued when the quadrature has not converged to the requested tolerance."""


def gauss_normal_nodes(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Hermite nodes and weights for the standard normal weight
    (``hermite_e.hermegauss`` with weights divided by :math:`\\sqrt{2\\pi}`, so they sum to 1).
    Exact for polynomials of degree up to 2n-1."""
    n = V.positive_int("n", n)
    x, w = _rule("hermite", n)
    return x.copy(), w / _SQRT2PI


def legendre_nodes(lo: float, hi: float, *, panels: int = 1, order: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss–Legendre nodes and weights on ``[lo, hi]`` (``panels`` equal panels of
    ``order`` nodes each; plain Lebesgue weight, so ``w @ f(x)`` approximates the integral of f).

    Examples
    --------
    >>> x, w = legendre_nodes(0.0, 2.0, panels=4)
    >>> round(float(w @ x**3), 12)  # integral of x^3 over [0, 2]
    4.0
    """
    lo, hi = V.finite("lo", lo), V.finite("hi", hi)
    if not hi > lo:
        raise ValueError(f"need lo < hi, got lo={lo}, hi={hi}")
    panels = V.positive_int("panels", panels)
    order = V.positive_int("order", order)
    x, w = _rule("legendre", order)
    edges = np.linspace(lo, hi, panels + 1)
    h = np.diff(edges) / 2
    mid = (edges[:-1] + edges[1:]) / 2
    return (mid[:, None] + h[:, None] * x[None, :]).ravel(), (h[:, None] * w[None, :]).ravel()


def _legendre_pieces(breakpoints: Sequence[float], n: int, cut: float = 14.0):
    """Gauss–Legendre nodes/weights (times the normal density) on the pieces of [-cut, cut]
    separated by ``breakpoints`` (for kinked activations)."""
    edges = np.unique(np.clip(np.concatenate([[-cut], np.asarray(breakpoints, float), [cut]]),
                              -cut, cut))
    t, wt = _rule("legendre", n)
    xs, ws = [], []
    for a, b in zip(edges[:-1], edges[1:]):
        xs.append(0.5 * (b - a) * t + 0.5 * (b + a))
        ws.append(0.5 * (b - a) * wt)
    x, w = np.concatenate(xs), np.concatenate(ws)
    return x, w * np.exp(-0.5 * x * x) / _SQRT2PI


def gaussian_expectation(f: Callable[[np.ndarray], np.ndarray], *, n: int = 64,
                         n_max: int = 256, tol: float = 1e-10,
                         breakpoints: Sequence[float] | None = None,
                         full_output: bool = False) -> np.ndarray | tuple[np.ndarray, int]:
    """:math:`\\mathbb E[f(Z)]`, :math:`Z\\sim\\mathcal N(0,1)`, by quadrature with a
    convergence check.

    ``f`` maps an array of nodes ``(n,)`` to values ``(n,)`` or ``(n, m)``. The number of nodes
    doubles from ``n`` until two successive estimates agree within ``tol`` (per entry;
    absolute where :math:`\\mathbb E|f(Z)|\\le1`, relative to :math:`\\mathbb E|f(Z)|` above); a
    :class:`QuadratureWarning` is issued if ``n_max`` is reached first. Gauss–Hermite
    is used by default; with ``breakpoints`` (points where ``f`` has a kink, e.g. ``[0.0]`` for
    ReLU) the integral is split there and done by Gauss–Legendre on each piece of [-14, 14]
    (the normal tail beyond 14 is below 1e-43), which restores fast convergence. Plain
    Gauss–Hermite is limited to ``n_max <= 320`` nodes (``hermegauss`` overflows beyond);
    across a kink it converges only like 1/n, which the check reports.

    Returns the value (a float array of ``f``'s value shape); with ``full_output`` the pair
    ``(value, nodes_used)``.

    References
    ----------
    Gauss–Hermite rule: :func:`numpy.polynomial.hermite_e.hermegauss`; Gauss–Legendre:
    :func:`numpy.polynomial.legendre.leggauss`.

    Examples
    --------
    >>> round(float(gaussian_expectation(lambda z: z**4)), 12)  # E Z^4 = 3
    3.0
    >>> relu = lambda z: np.maximum(z, 0.0)
    >>> round(float(gaussian_expectation(relu, breakpoints=[0.0])), 12)  # 1/sqrt(2 pi)
    0.398942280401
    """
    n = V.positive_int("n", n)
    n_max = V.positive_int("n_max", n_max, minimum=n)
    tol = V.finite("tol", tol, positive=True)
    if breakpoints is None and n_max > _GH_MAX:
        raise ValueError(f"n_max must be <= {_GH_MAX} for Gauss–Hermite nodes (hermegauss "
                         f"overflows beyond), got {n_max}; use breakpoints for kinks")

    def est(m):
        x, w = gauss_normal_nodes(m) if breakpoints is None else _legendre_pieces(breakpoints, m)
        fx = np.asarray(f(x), dtype=float)
        if fx.shape[0] != x.shape[0]:
            raise ValueError(f"f must return one value (or row) per node; got shape {fx.shape}")
        return np.tensordot(w, fx, axes=(0, 0)), np.tensordot(np.abs(w), np.abs(fx), axes=(0, 0))

    (prev, _), err = est(n), math.inf
    while True:
        if 2 * n > n_max:
            warnings.warn(f"quadrature not converged: successive estimates differ by {err:.2e} "
                          f"> tol={tol:.1e} with {n} nodes; pass breakpoints=[...] at kinks of "
                          "the function or raise n_max", QuadratureWarning, stacklevel=2)
            return (prev, n) if full_output else prev
        n *= 2
        cur, scale = est(n)
        # absolute error for entries of size <= 1, relative to E|f| for larger ones
        err = float(np.max(np.abs(cur - prev) / np.maximum(1.0, scale)))
        if err <= tol:
            return (cur, n) if full_output else cur
        prev = cur


def arccos_kernel(s, *, degree: int) -> np.ndarray:
    """The ReLU Gaussian expectations in closed form (arc-cosine kernels of degree 0 and 1).

    For :math:`(u, v)` standard normal with correlation :math:`s` and
    :math:`\\theta=\\arccos s`:

    - ``degree=0``: :math:`\\mathbb E[\\mathbf 1(u>0)\\mathbf 1(v>0)]=(\\pi-\\theta)/(2\\pi)`;
    - ``degree=1``: :math:`\\mathbb E[\\mathrm{relu}(u)\\,\\mathrm{relu}(v)]
      =(\\sqrt{1-s^2}+(\\pi-\\theta)s)/(2\\pi)`.

    For variances :math:`a^2, b^2` multiply by :math:`a b` (degree 1; degree 0 is scale free).
    Every ReLU kernel of td_lib (the NTK with bias of §7.3, Tian's ReLU kernel of §7.4, the
    dual activation of §7.1b, the ReLU error of the CNN/LCN appendix) is built from these two.

    References
    ----------
    Cho & Saul (2009), arc-cosine kernels (here normalised as expectations).

    Examples
    --------
    >>> round(float(arccos_kernel(0.0, degree=1)), 12)  # 1/(2 pi)
    0.159154943092
    >>> float(arccos_kernel(1.0, degree=0)), float(arccos_kernel(1.0, degree=1))  # P(u>0), E relu(u)^2
    (0.5, 0.5)
    """
    s = V.array_in("s", s, -1.0 - 1e-12, 1.0 + 1e-12, closed="both")
    s = np.clip(s, -1.0, 1.0)
    V.choice("degree", degree, (0, 1))
    k0 = (np.pi - np.arccos(s)) / (2 * np.pi)
    if degree == 0:
        return k0
    return np.sqrt(1.0 - s * s) / (2 * np.pi) + k0 * s

