"""The mixed cumulant model: spikes, whitening, cumulants, the sampler, the class moments and
the mixture-of-Gaussians form; see :mod:`td_lib.mixed_cumulant`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from td_lib.core import validate as V
from td_lib.core.validate import library_default

if TYPE_CHECKING:
    import torch

__all__ = ["orthonormal_spikes", "gamma", "kappa4_v", "cross_term", "sample", "class_mean",
           "class_cov", "mixture_components"]


def _dtype(dtype) -> torch.dtype:
    """``dtype`` checked against float32/float64 (None means torch.float64)."""
    import torch

    if dtype is None:
        return torch.float64
    V.choice("dtype", dtype, (torch.float32, torch.float64))
    return dtype


def orthonormal_spikes(d: int, *, rng=2, dtype=None) -> torch.Tensor:
    """Three orthonormal spike directions ``m, u, v`` in ``R^d`` (the rows of the result).

    The QR decomposition of a seeded ``d x 3`` standard Gaussian matrix, exactly as the
    original course notes' ``orthonormal_spikes`` (``torch.Generator().manual_seed(seed)``).

    Parameters
    ----------
    d : int
        Input dimension, at least 3.
    rng : int or torch.Generator
        Seed (default 2, the course's spikes) or generator.
    dtype : torch.float32 or torch.float64 (default, also for None)

    Returns
    -------
    torch.Tensor of shape (3, d)
        Rows ``m, u, v`` with ``S @ S.T = I_3``.
    """
    import torch

    from td_lib.core.runtime import torch_generator

    d = V.positive_int("d", d, minimum=3)
    if not isinstance(rng, torch.Generator):
        rng = V.positive_int("rng", rng, minimum=0)
    dtype = _dtype(dtype)
    g = torch_generator(rng)
    q, _ = torch.linalg.qr(torch.randn(d, 3, generator=g, dtype=dtype))
    return q.T.contiguous()


def gamma(beta_v) -> float:
    """Whitening coefficient ``gamma = beta_v / (1 + beta_v + sqrt(1 + beta_v))`` of
    ``Q = I - gamma v v^T``, written in the cancellation-free form.
    """
    b = V.finite("beta_v", beta_v, nonnegative=True)
    return b / (1.0 + b + math.sqrt(1.0 + b))


def kappa4_v(beta_v) -> float:
    """Fourth cumulant of ``v . x`` in class +1: ``-2 beta_v^2 / (1 + beta_v)^2`` (7.2.A.2)."""
    b = V.finite("beta_v", beta_v, nonnegative=True)
    return -2.0 * b * b / (1.0 + b) ** 2


def cross_term(beta_u, beta_v, correlated) -> float:
    """The ``u``-``v`` covariance cross term ``c`` of class +1 (Exercise 7.2.A.3).

    ``Cov_+ = I + beta_u u u^T + c (u v^T + v u^T)`` with
    ``c = E[lambda nu] sqrt(beta_u beta_v / (1 + beta_v))``; ``E[lambda nu] = sqrt(2/pi)``
    for ``nu = sign(lambda)`` and 0 for independent latents.
    """
    bu = V.finite("beta_u", beta_u, nonnegative=True)
    bv = V.finite("beta_v", beta_v, nonnegative=True)
    if not isinstance(correlated, bool):
        raise TypeError(f"correlated must be a bool, got {correlated!r}")
    if not correlated:
        return 0.0
    return math.sqrt(2.0 / math.pi) * math.sqrt(bu * bv / (1.0 + bv))


def _spikes(spikes, d, dtype) -> torch.Tensor:
    import torch

    if spikes is None:
        if d is None:
            raise ValueError("d is required when spikes is None")
        return orthonormal_spikes(d, dtype=dtype)
    if not isinstance(spikes, torch.Tensor):
        spikes = torch.as_tensor(spikes)
    if spikes.ndim != 2 or spikes.shape[0] != 3:
        raise ValueError(f"spikes must have shape (3, d), got {tuple(spikes.shape)}")
    if d is not None and V.positive_int("d", d) != spikes.shape[1]:
        raise ValueError(f"d = {d} does not match spikes of shape {tuple(spikes.shape)}")
    spikes = spikes.to(dtype)
    if not torch.isfinite(spikes).all():
        raise ValueError("spikes contains NaN or infinite entries")
    err = (spikes @ spikes.T - torch.eye(3, dtype=dtype)).abs().max().item()
    if err > (1e-5 if dtype == torch.float32 else 1e-10):
        raise ValueError(f"spikes must have orthonormal rows (max |S S^T - I| = {err:.2e})")
    return spikes


def _betas(beta_m, beta_u, beta_v) -> tuple[float, float, float]:
    return (V.finite("beta_m", beta_m, nonnegative=True),
            V.finite("beta_u", beta_u, nonnegative=True),
            V.finite("beta_v", beta_v, nonnegative=True))


def _spikes_np(spikes, d) -> np.ndarray:
    """Spikes for numpy sampling: a (3, d) float64 array with orthonormal rows."""
    if spikes is None:
        if d is None:
            raise ValueError("d is required when spikes is None")
        return orthonormal_spikes(d).numpy()
    S = np.asarray(spikes.numpy() if hasattr(spikes, "numpy") else spikes, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != 3:
        raise ValueError(f"spikes must have shape (3, d), got {S.shape}")
    if d is not None and V.positive_int("d", d) != S.shape[1]:
        raise ValueError(f"d = {d} does not match spikes of shape {S.shape}")
    if not np.isfinite(S).all():
        raise ValueError("spikes contains NaN or infinite entries")
    err = float(np.abs(S @ S.T - np.eye(3)).max())
    if err > 1e-10:
        raise ValueError(f"spikes must have orthonormal rows (max |S S^T - I| = {err:.2e})")
    return S


def _plus_rows(zp, lam_p, nu_p, S, P, D, bm: float, bu: float, bv: float, clone: bool):
    """Class-+1 inputs from their noise ``zp`` (rows) and latents (torch or numpy alike).

    ``P = [u, v]`` as columns and ``D = L - I_2`` (:func:`_factor_uv`) are used for the clone.
    """
    m_, u, v = S[0], S[1], S[2]
    if clone:
        xp = zp + (zp @ P) @ D.T @ P.T
    else:
        s = zp + math.sqrt(bv) * nu_p[:, None] * v
        s = s - gamma(bv) * (s @ v)[:, None] * v
        xp = s + math.sqrt(bu) * lam_p[:, None] * u
    return xp + bm * m_


def _clone_cross(cross, bu: float, bv: float, correlated: bool) -> float:
    """The clone's cross term: 0 for independent latents, ``cross`` if given, else the library's."""
    if not correlated:
        return 0.0
    if cross is None:
        return library_default("cross_term", globals(), "cross")(bu, bv, True)
    c = V.finite("cross", cross)
    if c * c >= 1.0 + bu:
        raise ValueError(f"cross = {c} makes the clone's covariance indefinite (need c^2 < 1 + beta_u = {1 + bu})")
    return c


def _factor_uv(beta_u: float, c: float) -> list[list[float]]:
    """``L - I_2`` for the Cholesky factor ``L`` of ``[[1 + beta_u, c], [c, 1]]``."""
    l11 = math.sqrt(1.0 + beta_u)
    l21 = c / l11
    l22 = math.sqrt(1.0 - l21 * l21)
    return [[l11 - 1.0, 0.0], [l21, l22 - 1.0]]


def sample(n: int, d: int | None = None, spikes: torch.Tensor | None = None, *,
           beta_m: float = 1.0, beta_u: float = 5.0, beta_v: float = 10.0,
           correlated: bool = False, clone: bool = False,
           rng=None, dtype=None, cross: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw ``n`` labelled examples from the mixed cumulant model (Bardone & Goldt eq. 1).

    Labels are ``±1`` with probability 1/2 each. Class -1 is ``N(0, I_d)``; class +1 is
    ``beta_m m + sqrt(beta_u) lambda u + Q (sqrt(beta_v) nu v + z)`` with ``Q`` applied as
    the rank-one update ``s - gamma (s . v) v``. With ``clone=True`` class +1 is replaced by
    the Gaussian ``N(beta_m m, I + beta_u u u^T + c (u v^T + v u^T))`` (``c`` from
    :func:`cross_term`), sampled as ``z + P (L - I) P^T z`` with ``P = [u, v]`` and ``L``
    the 2x2 Cholesky factor of the covariance restricted to ``span(u, v)``.

    Parameters
    ----------
    n : int
        Number of examples.
    d : int, optional
        Input dimension; required if ``spikes`` is None (then
        ``orthonormal_spikes(d)`` is used), otherwise checked against ``spikes``.
    spikes : torch.Tensor or array of shape (3, d), optional
        Orthonormal rows ``m, u, v``.
    beta_m, beta_u, beta_v : float
        Signal strengths (>= 0) in the mean, the variance and the fourth cumulant.
    correlated : bool
        ``nu = sign(lambda)`` instead of an independent Rademacher ``nu``.
    clone : bool
        Sample the population Gaussian clone of class +1 instead of the data.
    rng : int, torch.Generator or numpy.random.Generator, optional
        Source of randomness: an int seed (``torch.Generator().manual_seed(rng)``), a torch
        Generator, or None (torch's global generator). With a numpy Generator the
        same model is sampled with numpy (draws in the same order: labels, ``z``, class -1
        inputs, ``lambda``, ``nu``) and numpy float64 arrays are returned; pass ``spikes`` as
        an array then, and torch is not needed.
    dtype : torch.float32 or torch.float64 (default, also for None); numpy sampling is float64
    cross : float, optional
        The cross term ``c`` of the clone's covariance with correlated latents (a value the
        caller computed); default: :func:`cross_term`. Only the clone with ``correlated=True``
        needs it (independent latents have ``c = 0``; the data themselves are drawn from the
        latents).

    Returns
    -------
    X : torch.Tensor (numpy array with a numpy ``gen``) of shape (n, d)
    y : torch.Tensor (numpy array) of shape (n,), entries ±1, dtype ``dtype``

    References
    ----------
    Bardone & Goldt (2024), eq. (1).

    Examples
    --------
    >>> S = orthonormal_spikes(6).numpy()
    >>> X, y = sample(5, spikes=S, rng=np.random.default_rng(0))
    >>> X.shape, y.shape
    ((5, 6), (5,))
    """
    n = V.positive_int("n", n)
    bm, bu, bv = _betas(beta_m, beta_u, beta_v)
    for name, flag in (("correlated", correlated), ("clone", clone)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be a bool, got {flag!r}")
    gen = rng
    if isinstance(gen, np.random.Generator):
        if dtype is not None and dtype not in (np.float64, "float64"):
            raise ValueError(f"dtype must be None or float64 for numpy sampling, got {dtype!r}")
        S = _spikes_np(spikes, d)
        d = S.shape[1]
        y = (gen.integers(0, 2, n) * 2 - 1).astype(np.float64)
        z = gen.standard_normal((n, d))
        X = gen.standard_normal((n, d))  # class -1 rows are kept as drawn
        lam = gen.standard_normal(n)
        nu = np.sign(lam) if correlated else (gen.integers(0, 2, n) * 2 - 1).astype(np.float64)
        pos = y > 0
        D = np.array(_factor_uv(bu, _clone_cross(cross, bu, bv, correlated))) if clone else None
        X[pos] = _plus_rows(z[pos], lam[pos], nu[pos], S, S[1:3].T, D, bm, bu, bv, clone)
        return X, y

    import torch

    from td_lib.core.runtime import torch_generator

    dtype = _dtype(dtype)
    if isinstance(gen, (int, np.integer)) and not isinstance(gen, bool):
        gen = torch_generator(int(gen))
    if gen is not None and not isinstance(gen, torch.Generator):
        raise TypeError("rng must be an int seed, a torch.Generator, a numpy.random.Generator or None, "
                        f"got {type(gen).__name__}")
    S = _spikes(spikes, d, dtype)
    d = S.shape[1]

    # Draw in the order of the original notes' mcm_sample, so seeded data sets coincide.
    y = (torch.randint(0, 2, (n,), generator=gen) * 2 - 1).to(dtype)
    z = torch.randn(n, d, generator=gen, dtype=dtype)
    X = torch.randn(n, d, generator=gen, dtype=dtype)  # class -1 rows are kept as drawn
    lam = torch.randn(n, generator=gen, dtype=dtype)
    if correlated:
        nu = torch.sign(lam)
    else:
        nu = (torch.randint(0, 2, (n,), generator=gen) * 2 - 1).to(dtype)

    pos = y > 0
    P = torch.stack([S[1], S[2]], dim=1)  # (d, 2)
    D = torch.tensor(_factor_uv(bu, _clone_cross(cross, bu, bv, correlated)), dtype=dtype) if clone else None
    X[pos] = _plus_rows(z[pos], lam[pos], nu[pos], S, P, D, bm, bu, bv, clone)
    return X, y


def class_mean(spikes: torch.Tensor, beta_m: float, label: int) -> torch.Tensor:
    """Analytic class mean: ``beta_m m`` for ``label = +1``, ``0`` for ``label = -1``."""
    import torch

    S = _spikes(spikes, None, spikes.dtype if isinstance(spikes, torch.Tensor) else torch.float64)
    bm = V.finite("beta_m", beta_m, nonnegative=True)
    V.choice("label", label, (-1, 1))
    return bm * S[0] if label == 1 else torch.zeros_like(S[0])


def class_cov(spikes: torch.Tensor, *, beta_u: float, beta_v: float, correlated: bool,
              label: int) -> torch.Tensor:
    """Analytic class covariance (dense ``d x d``; for tests and small ``d``).

    ``I + beta_u u u^T + c (u v^T + v u^T)`` for ``label = +1`` (7.2.A.3; ``c = 0`` for
    independent latents), ``I`` for ``label = -1``.

    References
    ----------
    Bardone & Goldt (2024), eq. (1); original course notes §7.2, Exercise 7.2.A.3.
    """
    import torch

    S = _spikes(spikes, None, spikes.dtype if isinstance(spikes, torch.Tensor) else torch.float64)
    bu = V.finite("beta_u", beta_u, nonnegative=True)
    c = cross_term(bu, beta_v, correlated)
    V.choice("label", label, (-1, 1))
    eye = torch.eye(S.shape[1], dtype=S.dtype)
    if label == -1:
        return eye
    u, v = S[1], S[2]
    return eye + bu * torch.outer(u, u) + c * (torch.outer(u, v) + torch.outer(v, u))


def mixture_components(spikes: torch.Tensor, *, beta_m: float = 1.0, beta_u: float = 5.0,
                       beta_v: float = 10.0, clone: bool = False,
                       labels: tuple[int, ...] = (-1, 1)) -> list[tuple]:
    """The model with independent latents as a mixture of labelled Gaussians (numpy arrays).

    Class -1 is ``N(0, I)``. Conditioned on ``nu = ±1``, class +1 is Gaussian:
    mean ``beta_m m ± sqrt(beta_v/(1+beta_v)) v`` and covariance
    ``I + beta_u u u^T - beta_v/(1+beta_v) v v^T`` (along ``v``: ``1/(1+beta_v)``). With
    ``clone=True`` class +1 is the single Gaussian ``N(beta_m m, I + beta_u u u^T)``. Returns
    ``[(weight, label, mean (d,), cov (d, d)), ...]`` over the classes in ``labels``, with the
    weights renormalised to sum to 1 (the format of
    :func:`td_lib.nets.mixture_population_gradient`).
    """
    import torch

    S = _spikes(spikes, None, torch.float64).numpy()
    bm, bu, bv = _betas(beta_m, beta_u, beta_v)
    if not labels or any(lab not in (-1, 1) for lab in labels):
        raise ValueError(f"labels must be a non-empty subset of (-1, 1), got {labels!r}")
    m_, u, v = S
    d = S.shape[1]
    eye = np.eye(d)
    comps = []
    if -1 in labels:
        comps.append((0.5, -1.0, np.zeros(d), eye))
    if 1 in labels:
        if clone:
            comps.append((0.5, 1.0, bm * m_, eye + bu * np.outer(u, u)))
        else:
            av = math.sqrt(bv / (1 + bv))
            cov = eye + bu * np.outer(u, u) - bv / (1 + bv) * np.outer(v, v)
            comps += [(0.25, 1.0, bm * m_ + av * v, cov), (0.25, 1.0, bm * m_ - av * v, cov)]
    tot = sum(c[0] for c in comps)
    return [(w / tot, y, mu, C) for w, y, mu, C in comps]
