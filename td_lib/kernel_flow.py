"""Kernel gradient flow and gradient descent on a Gram matrix, mode by mode (§7.3).

A fixed-feature model ``f(x) = theta . phi(x)`` with kernel ``K(x, x') = phi(x) . phi(x')``,
trained from ``theta = 0`` on ``L = (1/2n) sum_i (f(x_i) - y_i)^2``. With the eigenpairs
``K/n = sum_k lam_k v_k v_k^T`` of the Gram matrix, Exercise 7.3.A gives

* gradient flow (7.3.A.1–2): on the training set ``r(t) = exp(-K t/n) r(0)``, and at any x

      f_t(x) = sum_{k: lam_k > 0} K(x, X) v_k (1 - exp(-lam_k t)) / (n lam_k) (v_k . y);

* gradient descent with step eta (7.3.A.3): the same modes, each with the filter of
  :func:`gd_filter` in place of the gradient-flow filter ``(1 - exp(-lam t))/lam``.

Everything is vectorised over a sequence of times (or step counts). On equispaced points of
the circle, :func:`residual_per_frequency` reads off the residual amplitude per Fourier
frequency, to compare with the population prediction ``exp(-k_hat_l t)``.

:func:`gd_filter` is the library's one gradient-descent filter (the early-time linear models
of §7.1b use it too).

References
----------
Jacot, Gabriel & Hongler, *Neural tangent kernel* (NeurIPS 2018): training a linearised model
is kernel gradient flow. Original course notes §7.3, Exercise 7.3.A (eqs 7.3.A.1–3).

Examples
--------
>>> K = np.array([[2.0, 1.0], [1.0, 2.0]])
>>> f = kernel_flow_predict(K, K, np.array([1.0, -1.0]), [0.0, 1.0, 1e6])
>>> np.round(f, 6).tolist()  # the odd mode (eigenvalue 1/2 of K/n) is fitted at rate 1/2
[[0.0, 0.393469, 1.0], [0.0, -0.393469, -1.0]]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from td_lib.core import validate as v

__all__ = ["GramSpectrum", "gram_spectrum", "flow_filter", "gd_filter", "kernel_flow_predict",
           "kernel_gd_predict", "training_residual", "residual_per_frequency"]


@dataclass(frozen=True)
class GramSpectrum:
    """Eigenpairs of ``K/n`` restricted to its positive part (``lam > tol * lam_max``)."""

    lam: np.ndarray   # (k,) positive eigenvalues of K/n, ascending
    vecs: np.ndarray  # (n, k) orthonormal eigenvectors
    n: int


def gram_spectrum(K, *, rel_tol: float = 1e-13) -> GramSpectrum:
    """Eigendecomposition of ``K/n`` for a symmetric PSD Gram matrix ``K`` (n x n).

    Eigenvalues below ``rel_tol * lam_max`` are treated as the null space (7.3.A.2 sums only
    over the positive spectrum; null-space components of the residual never move).
    """
    K = v.psd("K", K, tol=1e-8)
    if K.ndim != 2:
        raise ValueError(f"K must be a single n x n matrix, got shape {K.shape}")
    rel_tol = v.finite("rel_tol", rel_tol, nonnegative=True)
    n = K.shape[0]
    lam, vecs = np.linalg.eigh(K / n)
    keep = lam > rel_tol * max(lam[-1], 0.0)
    return GramSpectrum(lam=lam[keep], vecs=vecs[:, keep], n=n)


def _times(name: str, t) -> np.ndarray:
    t = v.array(name, t)
    if t.ndim > 1:
        raise ValueError(f"{name} must be a scalar or a 1-d array, got shape {t.shape}")
    if np.any(t < 0):
        raise ValueError(f"{name} must be >= 0")
    return np.atleast_1d(t)


def flow_filter(lam, t) -> np.ndarray:
    """Gradient-flow filter ``(1 - exp(-lam t)) / lam`` (7.3.A.2), shape ``(len(t), len(lam))``.

    Uses ``-expm1(-lam t)/lam``, accurate for ``lam t << 1`` (where it is ~t); lam > 0.

    References
    ----------
    Original course notes §7.3, eq. 7.3.A.2.

    Examples
    --------
    >>> np.round(flow_filter([0.5, 2.0], [1.0]), 6).tolist()
    [[0.786939, 0.432332]]
    """
    lam = v.array("lam", lam, ndim=1)
    if np.any(lam <= 0):
        raise ValueError("lam must be > 0 (restrict to the positive spectrum)")
    t = _times("t", t)
    return -np.expm1(-np.outer(t, lam)) / lam


def gd_filter(lam, steps, *, eta: float) -> np.ndarray:
    """GD filter of each mode after ``steps`` steps of size ``eta`` (7.3.A.3), shape ``(len(steps), len(lam))``.

    The one gradient-descent filter of td_lib: after ``s`` steps of size ``eta`` from zero,
    mode ``k`` of a quadratic loss with curvature ``lam_k`` has moved by this factor times its
    gradient at the start (gradient flow: :func:`flow_filter` with ``t = eta s``).

    Parameters
    ----------
    lam : 1-d array, >= 0
        Curvatures (eigenvalues of ``K/n`` for kernel GD). Entries below ``1e-13 max(1, max lam)``
        are treated as zero and get the limit ``eta s``.
    steps : scalar or 1-d array of whole numbers >= 0
        Step counts s.
    eta : float, > 0
        Step size. A step for which GD diverges on these curvatures raises ``ValueError``.

    Returns
    -------
    ndarray of shape ``(len(steps), len(lam))``.

    Notes
    -----
    The power of the per-step factor is computed with ``expm1``/``log1p`` for modes that decay
    monotonically (accurate for small steps) and directly for oscillating modes.
    For an effective step ``eta/n`` on the eigenvalues of ``K`` itself, pass
    ``gd_filter(lam_K, steps, eta=eta / n)``.

    References
    ----------
    Original course notes §7.3, eq. 7.3.A.3.

    Examples
    --------
    >>> np.round(gd_filter([0.5, 2.0], [1, 3], eta=0.1), 6).tolist()
    [[0.1, 0.1], [0.28525, 0.244]]
    >>> gd_filter([0.0], [4], eta=0.25).tolist()  # a flat mode moves by eta s
    [[1.0]]
    """
    lam = v.array("lam", lam, ndim=1)
    if np.any(lam < 0):
        raise ValueError("lam must be >= 0 (curvatures of a convex quadratic)")
    eta = v.finite("eta", eta, positive=True)
    s = _times("steps", steps)
    if np.any(s != np.round(s)):
        raise ValueError("steps must be whole numbers")
    a = eta * lam
    if np.any(a >= 2):
        raise ValueError(f"eta = {eta:g} is too large for curvatures up to {lam.max():.3g}: GD diverges")
    small = lam <= 1e-13 * max(1.0, float(lam.max(initial=0.0)))
    safe = np.where(small, 1.0, lam)
    mono = a < 1
    tt = s[:, None].astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        smooth = -np.expm1(tt * np.log1p(-np.where(mono, a, 0.0))[None, :])
    osc = 1.0 - (1.0 - a)[None, :] ** tt
    val = np.where(mono[None, :], smooth, osc) / safe[None, :]
    return np.where(small[None, :], s[:, None] * eta, val)


def _predict(spec: GramSpectrum, K_xX, y, filt: np.ndarray) -> np.ndarray:
    y = v.array("y", y, shape=(spec.n,))
    K_xX = v.array("K_xX", K_xX, shape=(None, spec.n))
    coef = filt * (spec.vecs.T @ y)[None, :] / spec.n        # (T, k)
    return (K_xX @ spec.vecs) @ coef.T                       # (m, T)


def kernel_flow_predict(K_XX, K_xX, y, t, *, spectrum: GramSpectrum | None = None) -> np.ndarray:
    """Gradient-flow prediction ``f_t(x)`` from ``theta = 0`` (7.3.A.2), at every time in ``t``.

    Parameters
    ----------
    K_XX : (n, n) training Gram matrix. K_xX : (m, n) kernel between query and training
    points. y : (n,) targets. t : scalar or (T,) times. spectrum : optional precomputed
    :func:`gram_spectrum` of ``K_XX``.

    Returns
    -------
    (m, T) array: column j is ``f_{t_j}`` at the m query points.

    References
    ----------
    Original course notes §7.3, eq. 7.3.A.2.

    Examples
    --------
    >>> K = np.array([[2.0, 1.0], [1.0, 2.0]])   # K/n has eigenvalues 1/2 and 3/2
    >>> np.round(kernel_flow_predict(K, K, np.array([1.0, 1.0]), [1.0, 1e6]), 6).tolist()
    [[0.77687, 1.0], [0.77687, 1.0]]
    """
    spec = spectrum if spectrum is not None else gram_spectrum(K_XX)
    return _predict(spec, K_xX, y, flow_filter(spec.lam, t))


def kernel_gd_predict(K_XX, K_xX, y, steps, *, eta: float,
                      spectrum: GramSpectrum | None = None) -> np.ndarray:
    """GD prediction after ``steps`` steps of size ``eta`` from ``theta = 0`` (7.3.A.3).

    Same shapes as :func:`kernel_flow_predict` (``steps`` in place of ``t``). Stable iff
    ``eta < 2 / lam_max(K/n)`` (a larger ``eta`` raises a ``ValueError``).

    References
    ----------
    Original course notes §7.3, eq. 7.3.A.3.

    Examples
    --------
    >>> K = np.array([[2.0, 1.0], [1.0, 2.0]])
    >>> np.round(kernel_gd_predict(K, K, np.array([1.0, 1.0]), [1, 100], eta=0.5), 6).tolist()
    [[0.75, 1.0], [0.75, 1.0]]
    """
    spec = spectrum if spectrum is not None else gram_spectrum(K_XX)
    return _predict(spec, K_xX, y, gd_filter(spec.lam, steps, eta=eta))


def training_residual(K_XX, r0, t) -> np.ndarray:
    """Training-set residual ``r(t) = exp(-K t/n) r(0)`` (7.3.A.1), shape ``(n, T)``.

    Uses the full spectrum, so null-space components of ``r0`` stay put.

    References
    ----------
    Original course notes §7.3, eq. 7.3.A.1.
    """
    K = v.psd("K_XX", K_XX, tol=1e-8)
    n = K.shape[0]
    r0 = v.array("r0", r0, shape=(n,))
    t = _times("t", t)
    lam, vecs = np.linalg.eigh(K / n)
    lam = np.clip(lam, 0.0, None)
    return vecs @ (np.exp(-np.outer(lam, t)) * (vecs.T @ r0)[:, None])


def residual_per_frequency(values, freqs) -> np.ndarray:
    """Amplitude of frequency l in samples on equispaced angles: ``2 |rfft(values)_l| / n``.

    ``values`` has shape (n,) or (n, T) (time along the last axis; result (len(freqs), T)).
    For ``A sin(l theta) + B cos(l theta)`` the amplitude is ``sqrt(A^2 + B^2)`` when
    ``0 < l < n/2``.
    """
    vals = v.array("values", values)
    if vals.ndim not in (1, 2):
        raise ValueError(f"values must be 1- or 2-dimensional, got shape {vals.shape}")
    n = vals.shape[0]
    fr = np.atleast_1d(np.asarray(freqs))
    if not np.issubdtype(fr.dtype, np.integer) or np.any(fr < 1) or np.any(fr >= n / 2):
        raise ValueError(f"freqs must be integers with 0 < l < n/2 = {n / 2}, got {freqs!r}")
    return np.abs(np.fft.rfft(vals, axis=0))[fr] * 2 / n
