"""Hermite tools for §7.2: probabilists' Hermite polynomials, Hermite coefficients of an
activation, expansion and reconstruction, and the information exponent.

Conventions (original course notes §7.2, "Hermite polynomials"): the probabilists' polynomials
:math:`He_0=1, He_1=z, He_2=z^2-1, He_3=z^3-3z, \\dots` are orthogonal under
:math:`Z\\sim\\mathcal N(0,1)` with :math:`\\mathbb E[He_j(Z)He_k(Z)]=k!\\,\\delta_{jk}`; the
normalised polynomials are :math:`h_k=He_k/\\sqrt{k!}`. A function expands as

.. math:: \\sigma(z)=\\sum_k \\frac{\\sigma_k}{k!}He_k(z),\\qquad
   \\sigma_k=\\mathbb E[\\sigma(Z)He_k(Z)].

All polynomial work is delegated to :mod:`numpy.polynomial.hermite_e`; Gaussian expectations
go through :func:`td_lib.core.gaussian.gaussian_expectation`.

References
----------
Seed §7.2, "Hermite polynomials" and "The information exponent"; Ben Arous, Gheissari &
Jagannath (2021), who define the information exponent.

Examples
--------
>>> relu = lambda z: np.maximum(z, 0.0)
>>> [round(float(c), 6) for c in coefficients(relu, 4, breakpoints=[0.0])]
[0.398942, 0.5, 0.398942, 0.0, -0.398942]
>>> information_exponent(lambda z: z**2 - 1)
2
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from numpy.polynomial import hermite_e as H

from td_lib.core import validate as V
from td_lib.core.gaussian import gaussian_expectation

__all__ = [
    "He", "h", "He_deriv", "h_deriv", "coefficients", "normalised_coefficients", "reconstruct",
    "relu_coefficients", "information_exponent", "mcm_relu_loss",
]

_SQRT2PI = math.sqrt(2.0 * math.pi)


def _unit(k: int) -> np.ndarray:
    c = np.zeros(k + 1)
    c[k] = 1.0
    return c


def _he(k: int, z: np.ndarray) -> np.ndarray:
    """:math:`He_k(z)` by the three-term recurrence :math:`He_{n+1}=z\\,He_n-n\\,He_{n-1}`
    (the recurrence ``hermite_e.hermeval`` evaluates through the coefficient vector, without
    its per-call overhead: these polynomials sit in the inner loop of the 7.2.C simulations).
    Always returns a new array."""
    if k == 0:
        return np.ones_like(z)
    if k == 1:
        return z * 1.0
    p0, p1 = 1.0, z  # He_0 as a scalar: broadcasting, and no array to fill
    for n in range(1, k):
        p0, p1 = p1, z * p1 - n * p0
    return p1


def He(k: int, z) -> np.ndarray:
    """Probabilists' Hermite polynomial :math:`He_k(z)` (the recurrence
    :math:`He_{k+1}=zHe_k-kHe_{k-1}`, :math:`He_0=1`, :math:`He_1=z`)."""
    k = V.positive_int("k", k, minimum=0)
    return _he(k, np.asarray(z, dtype=float))


def h(k: int, z) -> np.ndarray:
    """Normalised Hermite polynomial :math:`h_k=He_k/\\sqrt{k!}` (unit norm under N(0,1))."""
    k = V.positive_int("k", k, minimum=0)
    return _he(k, np.asarray(z, dtype=float)) * (1.0 / math.sqrt(math.factorial(k)))


def He_deriv(k: int, z, *, m: int = 1) -> np.ndarray:
    """m-th derivative of :math:`He_k` at ``z``: :math:`k(k-1)\\cdots(k-m+1)He_{k-m}(z)`
    (the Appell property :math:`He_k'=kHe_{k-1}`), zero for :math:`m>k`."""
    k = V.positive_int("k", k, minimum=0)
    m = V.positive_int("m", m, minimum=0)
    z = np.asarray(z, dtype=float)
    if m > k:
        return np.zeros_like(z)
    return _he(k - m, z) * float(math.perm(k, m))


def h_deriv(k: int, z, *, m: int = 1) -> np.ndarray:
    """m-th derivative of the normalised polynomial :math:`h_k`."""
    k = V.positive_int("k", k, minimum=0)
    m = V.positive_int("m", m, minimum=0)
    z = np.asarray(z, dtype=float)
    if m > k:
        return np.zeros_like(z)
    return _he(k - m, z) * (math.perm(k, m) / math.sqrt(math.factorial(k)))


def coefficients(sigma: Callable[[np.ndarray], np.ndarray], kmax: int, *, n: int = 64,
                 n_max: int = 256, tol: float = 1e-10,
                 breakpoints: Sequence[float] | None = None) -> np.ndarray:
    """Hermite coefficients :math:`\\sigma_k=\\mathbb E[\\sigma(Z)He_k(Z)]`, ``k = 0..kmax``.

    Quadrature as in :func:`td_lib.core.gaussian.gaussian_expectation`, with the convergence
    check applied to all ``kmax + 1`` coefficients at once. For ReLU pass ``breakpoints=[0.0]``
    (plain Gauss–Hermite converges only algebraically across a kink).

    References
    ----------
    Seed §7.2, "Hermite polynomials": :math:`\\sigma_k=\\mathbb E[\\sigma(Z)He_k(Z)]`.

    Examples
    --------
    >>> [round(float(c), 6) + 0.0 for c in coefficients(np.tanh, 3)]  # odd: sigma_0 = sigma_2 = 0
    [0.0, 0.605706, 0.0, -0.363595]
    """
    kmax = V.positive_int("kmax", kmax, minimum=0)
    ks = np.arange(kmax + 1)
    val = gaussian_expectation(
        lambda x: np.asarray(sigma(x), float)[:, None] * H.hermevander(x, kmax)[:, ks],
        n=n, n_max=n_max, tol=tol, breakpoints=breakpoints)
    return val


def normalised_coefficients(sigma: Callable[[np.ndarray], np.ndarray], kmax: int,
                            **kw) -> np.ndarray:
    """Coefficients in the orthonormal basis :math:`h_k`: :math:`\\mathbb E[\\sigma(Z)h_k(Z)]
    =\\sigma_k/\\sqrt{k!}` (so that :math:`\\mathbb E[\\sigma^2]=\\sum_k(\\sigma_k^2/k!)`)."""
    c = coefficients(sigma, kmax, **kw)
    return c / np.sqrt([float(math.factorial(k)) for k in range(len(c))])


def reconstruct(coeffs, z) -> np.ndarray:
    """Truncated expansion :math:`\\sum_{k\\le K}\\frac{\\sigma_k}{k!}He_k(z)` from
    ``coeffs = (σ_0, ..., σ_K)`` (``hermite_e.hermeval``)."""
    c = V.array("coeffs", coeffs, ndim=1)
    fact = np.array([float(math.factorial(k)) for k in range(len(c))])
    return H.hermeval(np.asarray(z, dtype=float), c / fact)


def relu_coefficients(kmax: int) -> np.ndarray:
    """Closed-form Hermite coefficients of ReLU (for checks): :math:`\\sigma_0=1/\\sqrt{2\\pi}`,
    :math:`\\sigma_1=1/2`, and for :math:`k\\ge2`
    :math:`\\sigma_k=He_{k-2}(0)/\\sqrt{2\\pi}` (integrate
    :math:`\\int_0^\\infty z\\,He_k(z)\\varphi(z)dz` by parts with
    :math:`He_k\\varphi=(-1)^k\\varphi^{(k)}`), so :math:`\\sigma_2=1/\\sqrt{2\\pi}`,
    :math:`\\sigma_4=-1/\\sqrt{2\\pi}`, odd :math:`k\\ge3` vanish."""
    kmax = V.positive_int("kmax", kmax, minimum=0)
    out = np.zeros(kmax + 1)
    out[0] = 1 / _SQRT2PI
    if kmax >= 1:
        out[1] = 0.5
    for k in range(2, kmax + 1):
        out[k] = float(He(k - 2, 0.0)) / _SQRT2PI
    return out


def information_exponent(target: Callable[[np.ndarray], np.ndarray], kmax: int = 12, *,
                         rtol: float = 1e-8, **kw) -> int | None:
    """Information exponent of a single-index target :math:`y=h(v\\cdot x)`, Gaussian x
    (original course notes §7.2, "The information exponent"): the lowest degree :math:`k\\ge1` with a nonzero
    Hermite coefficient of ``target``. A coefficient counts as zero when
    :math:`|\\sigma_k|/\\sqrt{k!}` is below ``rtol`` times the target's norm
    :math:`\\sqrt{\\mathbb E h(Z)^2}`. Returns ``None`` if no degree up to ``kmax`` qualifies
    (e.g. a constant target).

    References
    ----------
    Ben Arous, Gheissari & Jagannath (2021), the information exponent; original course notes §7.2.

    Examples
    --------
    >>> information_exponent(lambda z: h(3, z)), information_exponent(np.abs, breakpoints=[0.0])
    (3, 2)
    """
    kmax = V.positive_int("kmax", kmax, minimum=0)
    quad = {"n": 64, "n_max": 256, "tol": 1e-10, **kw}
    # E[target(Z) He_k(Z)] / sqrt(k!), k = 0..kmax, by quadrature with one convergence check
    c = gaussian_expectation(lambda x: np.asarray(target(x), float)[:, None] * H.hermevander(x, kmax),
                             **quad) / np.sqrt([float(math.factorial(k)) for k in range(kmax + 1)])
    norm2 = gaussian_expectation(lambda x: np.asarray(target(x), float) ** 2, **kw)
    scale = max(math.sqrt(float(norm2)), 1e-300)
    for k in range(1, len(c)):
        if abs(c[k]) > rtol * scale:
            return k
    return None


def mcm_relu_loss(alpha_u, alpha_v, *, beta_u: float = 5.0, beta_v: float = 10.0,
                  correlated: bool = False, n: int = 64, tol: float = 1e-13) -> np.ndarray:
    """Exact population correlation loss :math:`L=1-\\mathbb E[y\\,\\mathrm{ReLU}(w\\cdot x)]`
    of a ReLU neuron on the mixed cumulant model with :math:`\\beta_m=0` (Exercise 7.2.D).

    With overlaps :math:`\\alpha_u=w\\cdot u`, :math:`\\alpha_v=w\\cdot v` and
    :math:`r=\\sqrt{1+\\beta_v}`, class +1 has
    :math:`X=w\\cdot x=\\sqrt{\\beta_u}\\alpha_u\\lambda+\\frac{\\sqrt{\\beta_v}\\alpha_v}{r}\\nu+G`,
    :math:`G\\sim\\mathcal N(0,s^2)`, :math:`s^2=1-\\alpha_v^2+\\alpha_v^2/r^2`, and class -1 has
    :math:`X\\sim\\mathcal N(0,1)`, so :math:`L=1-\\frac12(\\mathbb E_+\\mathrm{ReLU}(X)-1/\\sqrt{2\\pi})`.
    Given :math:`\\lambda,\\nu`, :math:`\\mathbb E\\,\\mathrm{ReLU}(\\mu+G)=\\mu\\Phi(\\mu/s)+s\\varphi(\\mu/s)`
    in closed form; the average over :math:`\\nu=\\pm1` (independent latents) is a sum, and the
    one over :math:`\\lambda` is a 1-d quadrature (split at 0 when :math:`\\nu=\\mathrm{sign}\\lambda`)
    with the convergence check of :func:`gaussian_expectation`. Accurate to ~1e-14.

    ``alpha_u``, ``alpha_v`` broadcast; each pair needs :math:`\\alpha_u^2+\\alpha_v^2\\le1`.

    References
    ----------
    Bardone & Goldt (2024), eq. (1) (the model); original course notes §7.2, Exercise 7.2.D.

    Examples
    --------
    >>> round(float(mcm_relu_loss(0.0, 0.0)), 12)
    1.0
    """
    from scipy.special import ndtr
    from scipy.stats import norm

    au, av = np.broadcast_arrays(np.asarray(alpha_u, float), np.asarray(alpha_v, float))
    if np.any(au**2 + av**2 > 1 + 1e-12):
        raise ValueError("alpha_u and alpha_v must satisfy alpha_u^2 + alpha_v^2 <= 1")
    bu = V.finite("beta_u", beta_u, nonnegative=True)
    bv = V.finite("beta_v", beta_v, nonnegative=True)
    if not isinstance(correlated, bool):
        raise TypeError(f"correlated must be a bool, got {correlated!r}")
    r = math.sqrt(1 + bv)
    a = (math.sqrt(bu) * au).ravel()
    b = (math.sqrt(bv) * av / r).ravel()
    s = np.sqrt(1 - av**2 + av**2 / r**2).ravel()

    def f(mu):  # E ReLU(mu + s G'), G' ~ N(0,1); mu of shape (nodes, pairs)
        q = mu / s
        return mu * ndtr(q) + s * norm.pdf(q)

    if correlated:
        val = gaussian_expectation(
            lambda lam: f(lam[:, None] * a + np.sign(lam)[:, None] * b),
            n=n, tol=tol, breakpoints=[0.0], n_max=1024)
    else:
        val = gaussian_expectation(
            lambda lam: 0.5 * (f(lam[:, None] * a + b) + f(lam[:, None] * a - b)),
            n=n, tol=tol, n_max=256)
    return (1 - 0.5 * (val - 1 / _SQRT2PI)).reshape(au.shape)
