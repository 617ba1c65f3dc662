"""Rotation-invariant kernels on the circle and their spectra (§7.3).

Inputs are angles ``theta`` with ``x = (cos theta, sin theta)``; a rotation-invariant kernel
is a function ``k(phi)`` of the angle ``phi = theta - theta'`` between two inputs. Writing
``k(phi) = sum_l a_l cos(l phi)`` (the *cosine coefficients* a_l that Basri et al. quote),
the integral operator ``(T_K g)(theta) = E_theta'[k(theta - theta') g(theta')]`` under the
uniform measure has the Fourier modes as eigenfunctions with eigenvalues

    k_hat_0 = a_0,   k_hat_l = a_l / 2   (l >= 1),
    k_hat_l = (1 / 2 pi) int_{-pi}^{pi} k(phi) cos(l phi) dphi.

This module provides

- the von Mises kernel ``exp(kappa (cos phi - 1))`` and its eigenvalues in closed form and at
  large l;
- the first-layer NTK of a two-layer ReLU network without bias,
  ``K_inf(phi) = cos(phi) (pi - |phi|) / (2 pi)``, and with a bias drawn like the
  weights, ``u (pi - arccos u) / (2 pi)`` with ``u = (1 + cos phi) / 2``;
- cosine coefficients by adaptive quadrature and by the FFT of a circulant Gram matrix;
- Basri et al.'s closed form for the bias-free coefficients;
- finite-width Monte Carlo kernels, their cosine coefficients with standard errors, and the
  1/N shrinking of their gap to the infinite-width kernel.

References
----------
Basri, Jacobs, Kasten & Kritchman, *The convergence rate of neural networks for learned
functions of different frequencies* (NeurIPS 2019): the two-layer ReLU NTK on the circle and
its cosine coefficients. Original course notes §7.3, "Spectral bias".

Examples
--------
>>> [round(float(x), 6) for x in von_mises_eigenvalues([1, 8], kappa=4.0)]
[0.178751, 0.00018]
>>> [round(float(x), 6) for x in basri_coefficients([0, 1, 2, 3])]
[0.101321, 0.25, 0.112579, 0.0]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.integrate import quad
from scipy.special import ive

from td_lib.core import activations
from td_lib.core import validate as v
from td_lib.core.gaussian import arccos_kernel
from td_lib.core.runtime import numpy_rng
from td_lib.core.validate import library_default

KernelFn = Callable[[np.ndarray], np.ndarray]

__all__ = [
    "wrap_angle", "von_mises", "von_mises_eigenvalues", "von_mises_eigenvalues_asymptotic",
    "relu_ntk_nobias", "relu_ntk_bias", "basri_coefficients", "cosine_coefficients_quad",
    "cosine_coefficients_fft", "circulant_gram", "circulant_eigenvalues",
    "eigenvalues_from_coefficients", "finite_width_kernel", "finite_width_coefficients",
    "finite_width_gap", "gap_variance", "fit_power_law",
]


def _ells(name: str, ells) -> np.ndarray:
    """Frequencies as a 1-d array of non-negative integers (scalar input allowed)."""
    a = np.atleast_1d(np.asarray(ells))
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} must be a non-negative integer or a 1-d sequence of them")
    if not np.issubdtype(a.dtype, np.integer):
        if not (np.issubdtype(a.dtype, np.floating) and np.all(np.isfinite(a))
                and np.all(a == np.round(a))):
            raise TypeError(f"{name} must hold integers, got {ells!r}")
        a = np.round(a).astype(int)
    if np.any(a < 0):
        raise ValueError(f"{name} must be >= 0, got {ells!r}")
    return a.astype(int)


def wrap_angle(phi) -> np.ndarray:
    """Map angles to [-pi, pi) (the kernels below are 2 pi-periodic in phi).
    """
    phi = v.array("phi", phi)
    return (phi + np.pi) % (2 * np.pi) - np.pi


# --------------------------------------------------------------------------- kernels
def von_mises(phi, kappa: float) -> np.ndarray:
    """The von Mises kernel ``k(phi) = exp(kappa (cos phi - 1))`` of §7.3 ("two cases").

    ``kappa > 0`` sets the width (angular width ~ kappa^{-1/2} for large kappa); k(0) = 1.

    References
    ----------
    Original course notes §7.3, "two cases" (the smooth kernel of Exercise 7.3.B).
    """
    kappa = v.finite("kappa", kappa, positive=True)
    phi = v.array("phi", phi)
    return np.exp(kappa * (np.cos(phi) - 1.0))


def von_mises_eigenvalues(ells, kappa: float) -> np.ndarray:
    """Eigenvalues ``k_hat_l = exp(-kappa) I_l(kappa)`` of the von Mises kernel (7.3.B.2).

    Computed with the exponentially scaled Bessel function ``scipy.special.ive``, which is
    exactly ``exp(-kappa) I_l(kappa)`` for kappa > 0 and does not overflow.

    Parameters
    ----------
    ells : int or 1-d sequence of non-negative ints
        Frequencies l.
    kappa : float
        Concentration of the kernel, > 0.

    Returns
    -------
    ndarray of shape ``(len(ells),)``.

    References
    ----------
    Original course notes §7.3, eq. 7.3.B.2 (Jacobi–Anger expansion of ``exp(kappa cos phi)``).

    Examples
    --------
    >>> lam = von_mises_eigenvalues([1, 4, 8], kappa=4.0)
    >>> [round(float(x), 6) for x in lam]
    [0.178751, 0.02594, 0.00018]
    >>> round(float(lam[0] / lam[2]), 2)  # t8 / t1 under gradient flow
    994.86
    """
    kappa = v.finite("kappa", kappa, positive=True)
    return ive(_ells("ells", ells), kappa)


def von_mises_eigenvalues_asymptotic(ells, kappa: float) -> np.ndarray:
    """Large-l form ``exp(-kappa) (kappa/2)^l / l!`` (first term of the Bessel series, 7.3.B.2).

    Accurate once l >> kappa^2 / 4; evaluated in log space so large l do not overflow.

    References
    ----------
    Original course notes §7.3, eq. 7.3.B.2 (leading term of the series of I_l).
    """
    from scipy.special import gammaln

    kappa = v.finite("kappa", kappa, positive=True)
    ell = _ells("ells", ells)
    return np.exp(-kappa + ell * np.log(kappa / 2) - gammaln(ell + 1))


def relu_ntk_nobias(phi) -> np.ndarray:
    """Infinite-width first-layer NTK of a bias-free two-layer ReLU net on the circle (7.3.C).

    ``K_inf(phi) = cos(phi) (pi - |phi|) / (2 pi)`` for phi in [-pi, pi] (wrapped otherwise):
    ``x . x' = cos phi`` times ``P[w.x > 0, w.x' > 0] = (pi - |phi|) / (2 pi)`` for Gaussian w,
    the arc-cosine kernel of degree 0 at ``cos phi``
    (:func:`td_lib.core.gaussian.arccos_kernel`).

    References
    ----------
    Basri et al. (NeurIPS 2019), the bias-free two-layer ReLU NTK on the circle; original course notes
    §7.3, Exercise 7.3.C.
    """
    c = np.cos(v.array("phi", phi))
    return c * arccos_kernel(c, degree=0)


def relu_ntk_bias(phi) -> np.ndarray:
    """First-layer NTK with a Gaussian bias, inputs ``xbar = (x, 1)/sqrt 2`` (7.3.C).

    ``K_bias(phi) = u (pi - arccos u) / (2 pi)`` with ``u = xbar . xbar' = (1 + cos phi)/2``.
    (The unnormalised input ``(x, 1)`` of demo 7.3.D gives exactly twice this kernel.)

    References
    ----------
    Basri et al. (NeurIPS 2019), the two-layer ReLU NTK with bias; original course notes §7.3,
    Exercise 7.3.C.
    """
    phi = v.array("phi", phi)
    u = (1.0 + np.cos(phi)) / 2.0
    return u * arccos_kernel(u, degree=0)


def basri_coefficients(ells) -> np.ndarray:
    """Basri et al.'s closed form for the cosine coefficients of ``relu_ntk_nobias`` (§7.3).

    ``a_0 = 1/pi^2``, ``a_1 = 1/4``, ``a_l = 2 (l^2 + 1) / (pi^2 (l^2 - 1)^2)`` for even
    ``l >= 2``, and ``a_l = 0`` for odd ``l >= 3``.

    References
    ----------
    Basri et al. (NeurIPS 2019), closed form of the cosine coefficients of the bias-free
    two-layer ReLU NTK on the circle; original course notes §7.3, Exercise 7.3.C.

    Examples
    --------
    >>> [round(float(x), 6) for x in basri_coefficients([0, 1, 2, 3, 4])]
    [0.101321, 0.25, 0.112579, 0.0, 0.015311]
    """
    ell = _ells("ells", ells).astype(float)
    out = np.zeros_like(ell)
    even = (ell % 2 == 0) & (ell >= 2)
    out[even] = 2 * (ell[even] ** 2 + 1) / (np.pi**2 * (ell[even] ** 2 - 1) ** 2)
    out[ell == 0] = 1 / np.pi**2
    out[ell == 1] = 0.25
    return out


# ----------------------------------------------------------------------- coefficients
def cosine_coefficients_quad(kernel: KernelFn, ells, *, limit: int = 200) -> np.ndarray:
    """Cosine coefficients ``a_l = (1/z_l) int_{-pi}^{pi} k(phi) cos(l phi) dphi`` by quadrature.

    ``z_0 = 2 pi`` and ``z_l = pi`` for l >= 1 (7.3.C). ``scipy.integrate.quad`` with a
    break point at phi = 0, where the ReLU kernels have a kink; ``kernel`` must accept
    numpy arrays (it is called with 0-d arrays). Absolute accuracy ~1e-15.

    References
    ----------
    Original course notes §7.3, Exercise 7.3.C (definition of a_l).

    Examples
    --------
    >>> a = cosine_coefficients_quad(relu_ntk_bias, [1, 4, 8])
    >>> [round(float(x), 6) for x in a]
    [0.231539, 0.005022, 0.001149]
    """
    if not callable(kernel):
        raise TypeError(f"kernel must be callable, got {kernel!r}")
    ell = _ells("ells", ells)
    limit = v.positive_int("limit", limit)
    out = np.empty(ell.size)
    for i, l in enumerate(ell):
        val = quad(lambda t, l=l: float(kernel(np.asarray(t))) * np.cos(l * t), -np.pi, np.pi,
                   points=[0.0], limit=limit)[0]
        out[i] = val / (2 * np.pi if l == 0 else np.pi)
    return out


def circulant_gram(kernel: KernelFn, n: int) -> np.ndarray:
    """Gram matrix ``K_ij = k(theta_i - theta_j)`` on n equispaced angles (circulant)."""
    n = v.positive_int("n", n)
    th = 2 * np.pi * np.arange(n) / n
    return np.asarray(kernel(wrap_angle(th[:, None] - th[None, :])), dtype=float)


def circulant_eigenvalues(kernel: KernelFn, n: int) -> np.ndarray:
    """Eigenvalues of ``K/n`` for the circulant Gram matrix on n equispaced angles.

    Entry ``l`` (l = 0..n-1) is the eigenvalue of the Fourier mode ``exp(i l theta)``:
    ``(1/n) sum_j k(2 pi j / n) exp(-2 pi i j l / n)``, the trapezoidal rule for
    ``k_hat_l`` plus the aliases ``sum_{m != 0} k_hat_{l + m n}``. One FFT of the first row.

    References
    ----------
    Original course notes §7.3, Exercise 7.3.B (equispaced inputs: a circulant Gram matrix).
    """
    n = v.positive_int("n", n)
    row = np.asarray(kernel(wrap_angle(2 * np.pi * np.arange(n) / n)), dtype=float)
    if row.shape != (n,):
        raise ValueError(f"kernel must map an array of {n} angles to {n} values")
    return np.fft.fft(row).real / n


def cosine_coefficients_fft(kernel: KernelFn, ells, n: int = 1 << 16) -> np.ndarray:
    """Cosine coefficients from :func:`circulant_eigenvalues` (``a_0 = k_hat_0``, else 2 k_hat_l).

    Aliasing error is ``O(n^-2)`` for kernels with a kink (the ReLU NTKs): ~1e-10 at the
    default ``n = 2^16``. Requires ``max(ells) < n / 2``.
    """
    ell = _ells("ells", ells)
    n = v.positive_int("n", n, minimum=2)
    if ell.max() >= n // 2:
        raise ValueError(f"n must exceed 2 * max(ells) = {2 * ell.max()}, got {n}")
    lam = circulant_eigenvalues(kernel, n)[ell]
    return np.where(ell == 0, lam, 2 * lam)


def eigenvalues_from_coefficients(ells, a) -> np.ndarray:
    """Operator eigenvalues from cosine coefficients: ``k_hat_0 = a_0``, ``k_hat_l = a_l / 2``."""
    ell = _ells("ells", ells)
    a = v.array("a", a, shape=(ell.size,))
    return np.where(ell == 0, a, a / 2)


# ------------------------------------------------------------------------ Monte Carlo
def _unit_inputs(angles: np.ndarray, bias: bool) -> np.ndarray:
    x = np.stack([np.cos(angles), np.sin(angles)], axis=-1)
    if bias:
        x = np.concatenate([x, np.ones_like(angles)[..., None]], axis=-1) / np.sqrt(2)
    return x


def _weights(weights) -> np.ndarray:
    w = v.array("weights", weights, ndim=2)
    if w.shape[1] not in (2, 3) or w.shape[0] == 0:
        raise ValueError(f"weights must have shape (N, 2) (no bias) or (N, 3) (bias), N >= 1, got {w.shape}")
    return w


def finite_width_kernel(angles, angles2, weights) -> np.ndarray:
    """Finite-width first-layer NTK ``(1/N) sum_r x.x' 1[w_r.x > 0] 1[w_r.x' > 0]`` (7.3.C).

    Parameters
    ----------
    angles, angles2 : arrays of shape (n,), (n2,)
        Input angles of the rows and of the columns.
    weights : array of shape (N, 2), or (N, 3) for the bias version
        First-layer weights (Gaussian in 7.3.C). With three columns the third is the bias
        weight and the inputs are ``xbar = (cos, sin, 1)/sqrt 2``; the infinite-width mean is
        then :func:`relu_ntk_bias` instead of :func:`relu_ntk_nobias`.

    Returns
    -------
    (n, n2) Gram matrix; its mean over Gaussian weights is the infinite-width kernel.

    References
    ----------
    Original course notes §7.3, Exercise 7.3.C.3 (the empirical first-layer NTK).

    Examples
    --------
    >>> K = finite_width_kernel([0.0, 1.0], [0.0], [[1.0, 0.0], [0.0, 1.0]])
    >>> [round(float(x), 6) for x in K[:, 0]]
    [0.5, 0.270151]
    """
    a1 = v.array("angles", angles, ndim=1)
    a2 = v.array("angles2", angles2, ndim=1)
    w = _weights(weights)
    bias = w.shape[1] == 3
    x1, x2 = _unit_inputs(a1, bias), _unit_inputs(a2, bias)
    step = activations.get("relu").df            # 1[w.x > 0]
    m1, m2 = step(x1 @ w.T), step(x2 @ w.T)
    return (x1 @ x2.T) * (m1 @ m2.T) / w.shape[0]


def finite_width_coefficients(weights, ells, *, kernel: Callable | None = None, n_grid: int = 256,
                              batches: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Cosine coefficients of a finite-width kernel, with Monte Carlo standard errors (7.3.C).

    The units are split into ``batches`` groups of equal size; for each group the kernel row
    against angle 0 on ``n_grid`` equispaced angles, ``kernel(grid, [0], W_group)``, is
    Fourier-transformed (the circulant FFT of :func:`cosine_coefficients_fft`). The group
    estimates are independent with a common mean, so their average is the coefficient of the
    kernel of all N units and ``std(ddof=1) / sqrt(batches)`` is its standard error.
    ``kernel`` has the signature of :func:`finite_width_kernel` (the default); a student's
    implementation of 7.3.C can be passed instead. Returns ``(a_hat, se)``, each of shape
    ``(len(ells),)``. Aliasing at ``n_grid = 256`` is ~1e-5 (below the MC error at N <= 1e5).

    References
    ----------
    Original course notes §7.3, Exercise 7.3.C.3 (the Monte Carlo check of Basri et al.'s coefficients).
    """
    ell = _ells("ells", ells)
    w = _weights(weights)
    kernel = library_default("finite_width_kernel", globals(), "kernel") if kernel is None else kernel
    if not callable(kernel):
        raise TypeError(f"kernel must be callable, got {kernel!r}")
    n_grid = v.positive_int("n_grid", n_grid, minimum=4)
    if ell.max() >= n_grid // 2:
        raise ValueError(f"n_grid must exceed 2 * max(ells) = {2 * ell.max()}, got {n_grid}")
    batches = v.positive_int("batches", batches, minimum=2)
    if w.shape[0] % batches:
        raise ValueError(f"batches must divide the number of units N = {w.shape[0]}, got {batches}")
    ang = 2 * np.pi * np.arange(n_grid) / n_grid
    rows = np.stack([np.asarray(kernel(ang, np.zeros(1), wb), dtype=float).reshape(n_grid)
                     for wb in np.split(w, batches)])                 # (batches, n_grid)
    c = np.fft.rfft(rows, axis=1).real[:, ell] / n_grid
    c = np.where(ell == 0, c, 2 * c)
    return c.mean(axis=0), c.std(axis=0, ddof=1) / np.sqrt(batches)


def finite_width_gap(kernel: Callable, widths, *, bias: bool = False, n_grid: int = 64,
                     repeats: int = 8, rng=0) -> np.ndarray:
    """Mean squared gap between a finite-width kernel and its infinite-width limit, per width.

    For each width N, ``repeats`` independent Gaussian first layers drawn from ``rng`` (an int
    seed, ``None`` or a numpy Generator; the widths are drawn in turn from one stream) give kernel rows
    ``kernel(grid, [0], W)`` on ``n_grid`` equispaced angles; returns, for each N, the average
    over angles and repeats of ``(K_N(phi, 0) - K_inf(phi))^2``. Each entry is a mean of N
    i.i.d. unit terms, so the gap is ``gap_variance(bias) / N`` on average: it shrinks like 1/N.

    References
    ----------
    Original course notes §7.3, Exercise 7.3.C.3 (the 1/N law of the finite-width kernel).
    """
    if not callable(kernel):
        raise TypeError(f"kernel must be callable, got {kernel!r}")
    ns = np.atleast_1d(np.asarray(widths))
    if ns.ndim != 1 or ns.size == 0 or not np.issubdtype(ns.dtype, np.integer) or np.any(ns < 1):
        raise ValueError(f"widths must be a 1-d sequence of positive integers, got {widths!r}")
    n_grid = v.positive_int("n_grid", n_grid, minimum=2)
    repeats = v.positive_int("repeats", repeats)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        v.positive_int("rng", rng, minimum=0)
    rng = numpy_rng(rng)
    ang = 2 * np.pi * np.arange(n_grid) / n_grid
    exact = relu_ntk_bias(ang) if bias else relu_ntk_nobias(ang)
    out = np.empty(ns.size)
    for i, n in enumerate(ns):
        gaps = [np.asarray(kernel(ang, np.zeros(1), rng.standard_normal((int(n), 3 if bias else 2))),
                           dtype=float).reshape(n_grid) - exact for _ in range(repeats)]
        out[i] = float(np.mean(np.square(gaps)))
    return out


def gap_variance(*, bias: bool = False, n_grid: int = 64) -> float:
    """Per-unit variance of the kernel row, averaged over ``n_grid`` equispaced angles.

    One unit contributes ``(x.x0) B`` with B a Bernoulli variable, ``P[B = 1] = p(phi)`` the
    probability that both inputs are active, so its variance is ``(x.x0)^2 p (1 - p)``; the
    infinite-width kernel is ``(x.x0) p``. Hence ``p = K_inf / (x.x0)``.

    References
    ----------
    Original course notes §7.3, Exercise 7.3.C.3.
    """
    n_grid = v.positive_int("n_grid", n_grid, minimum=2)
    ang = 2 * np.pi * np.arange(n_grid) / n_grid
    u = (1 + np.cos(ang)) / 2 if bias else np.cos(ang)
    p = arccos_kernel(u, degree=0)
    return float(np.mean(u**2 * p * (1 - p)))


def fit_power_law(ells, a) -> float:
    """Least-squares exponent p of ``a_l ~ C l^p`` on log-log axes (7.3.C's decay fit)."""
    ell = _ells("ells", ells)
    a = v.array("a", a, shape=(ell.size,))
    if ell.size < 2 or np.any(ell <= 0) or np.any(a <= 0):
        raise ValueError("fit_power_law needs >= 2 points with ells > 0 and a > 0")
    return float(np.polyfit(np.log(ell), np.log(a), 1)[0])

