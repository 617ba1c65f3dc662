"""Exact empirical Gaussian clones of a labelled data set (Exercise 7.1.A.3, its code check).

The clone of a finite training set replaces each class by Gaussian samples transformed so
that the class's *empirical* mean and covariance (normalised by the class size, i.e.
``correction=0``) are matched to rounding error. Then every moment matrix a linear model
sees, ``E[x x^T]``, ``E[y x]``, ``E[y^2]``, agrees between the data and the clone, and
gradient descent on a linear-in-input model follows the same trajectory on both.

References
----------
Seed §7.1, Exercise 7.1.A.3 (the exact empirical clone).

Examples
--------
>>> X = torch.randn(40, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
>>> y = torch.where(X[:, 0] > 0, 1.0, -1.0).to(torch.float64)
>>> Xc = empirical_clone(X, y, 1)
>>> m, mc = class_moments(X, y), class_moments(Xc, y)
>>> bool(max((m[c][1] - mc[c][1]).abs().max().item() for c in m) < 1e-12)
True
"""

from __future__ import annotations

import torch

from td_lib.core.runtime import torch_generator

__all__ = ["sym_sqrt", "class_moments", "empirical_clone"]


def sym_sqrt(C: torch.Tensor, inv: bool = False) -> torch.Tensor:
    """Symmetric square root ``C^{1/2}`` (or ``C^{-1/2}`` with ``inv=True``) via ``eigh``.

    Raises ``ValueError`` naming ``C`` if it is not square or (for ``inv``) not positive
    definite.
    """
    if not isinstance(C, torch.Tensor) or C.ndim != 2 or C.shape[0] != C.shape[1]:
        raise ValueError(f"C must be a square matrix, got shape {tuple(getattr(C, 'shape', ()))}")
    e, Vec = torch.linalg.eigh(C)
    scale = max(1.0, e.abs().max().item())
    if inv and e.min().item() <= 1e-12 * scale:
        raise ValueError(f"C must be positive definite for inv=True (smallest eigenvalue {e.min().item():.3g})")
    e = e.clamp_min(0.0)
    return Vec @ torch.diag(e.rsqrt() if inv else e.sqrt()) @ Vec.T


def _check_xy(X, y) -> None:
    if not isinstance(X, torch.Tensor) or X.ndim != 2:
        raise ValueError(f"X must be a 2-d tensor (n, d), got {type(X).__name__} "
                         f"of shape {tuple(getattr(X, 'shape', ()))}")
    if not isinstance(y, torch.Tensor) or y.shape != (X.shape[0],):
        raise ValueError(f"y must be a tensor of shape ({X.shape[0]},), got "
                         f"{tuple(getattr(y, 'shape', ()))}")
    if not X.is_floating_point():
        raise TypeError(f"X must be a floating-point tensor, got {X.dtype}")
    if not torch.isfinite(X).all():
        raise ValueError("X contains NaN or infinite entries")


def class_moments(X: torch.Tensor, y: torch.Tensor) -> dict[float, tuple[torch.Tensor, torch.Tensor]]:
    """Empirical mean and covariance (``correction=0``) of each class ``{label: (mean, cov)}``."""
    _check_xy(X, y)
    out = {}
    for c in torch.unique(y).tolist():
        Xi = X[y == c]
        out[c] = (Xi.mean(0), torch.cov(Xi.T, correction=0).reshape(X.shape[1], X.shape[1]))
    return out


def empirical_clone(X: torch.Tensor, y: torch.Tensor, rng=None) -> torch.Tensor:
    """Gaussian clone of ``(X, y)`` matching each class's empirical mean and covariance exactly.

    For each label ``c`` (in increasing order, as the original course notes do) draw
    ``Z ~ N(0, I)`` of the class's shape, centre it, whiten it with its own empirical
    covariance, ``Z <- (Z - mean Z) Cov(Z)^{-1/2}``, and map it to
    ``mean_c + Z Cov_c^{1/2}``. The result has, up to rounding, exactly the empirical class
    means and covariances of ``X`` (both with ``correction=0``).

    Parameters
    ----------
    X : torch.Tensor of shape (n, d)
    y : torch.Tensor of shape (n,)
        Class labels (any values; usually ±1).
    rng : int, torch.Generator or numpy Generator, optional
        Source of the Gaussian draws (:func:`td_lib.core.runtime.torch_generator`); ``None``
        uses torch's global generator.

    Returns
    -------
    torch.Tensor of shape (n, d), row ``i`` belonging to class ``y[i]``.

    Raises
    ------
    ValueError
        If a class has at most ``d`` examples (its whitened Gaussian would be singular).
    """
    _check_xy(X, y)
    gen = None if rng is None else torch_generator(rng)
    d = X.shape[1]
    Xc = torch.empty_like(X)
    for c in torch.unique(y).tolist():
        idx = y == c
        Xi = X[idx]
        if Xi.shape[0] <= d:
            raise ValueError(f"y: class {c} has {Xi.shape[0]} examples; an exact clone needs more "
                             f"than d = {d}")
        Z = torch.randn(Xi.shape, generator=gen, dtype=X.dtype)
        Z = Z - Z.mean(0)
        Z = Z @ sym_sqrt(torch.cov(Z.T, correction=0), inv=True)
        Xc[idx] = Xi.mean(0) + Z @ sym_sqrt(torch.cov(Xi.T, correction=0))
    return Xc
