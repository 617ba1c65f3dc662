"""Specialisation of the CNN / LCN students (Mori et al., eqs 24-26, Result 3.3, Apps E-G).

* :func:`alignment` -- ``gamma_s`` (eq. 24); :func:`alpha_spec` (eq. 25);
  :func:`specialisation_runs` and :func:`specialisation_time` (Result 3.3 / Figures 3, 4, 7: ODE
  from random inits at dimension D); :func:`log_d_fit` (``a + b ln D`` with its spread).
* :func:`reflect` -- the reflection ``rho`` of eq. 26 (CNN and LCN states).

The other observables have modules of their own: early times (eqs 27-30) in
:mod:`~td_lib.cnn_lcn.early_times`, the noise floor (eqs 31-34) in :mod:`~td_lib.cnn_lcn.noise`,
the phase diagram (Figure 6) in :mod:`~td_lib.cnn_lcn.phase`.

Seed corrections (evidence in ``checks/cnn_lcn_check.py``):

* eq. 24: at the zero-error solution of eq. 23, ``sum_l R_{s+l,l} / sqrt(Tr Q) = sqrt(T)``, so the
  printed ``gamma_s`` equals 1 only for ``T = 1`` (all the paper's figures). :func:`alignment`
  divides by ``sqrt(T)`` as well, which is the printed formula at ``T = 1``.

References
----------
Mori et al., *exact online-SGD dynamics of CNN vs LCN students*, eqs 24-26, Result 3.3,
Figures 3, 4 and 7.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from td_lib.cnn_lcn.init import random_init
from td_lib.cnn_lcn.integrate import integrate
from td_lib.cnn_lcn.model import KINDS, input_covariance
from td_lib.core import validate as V
from td_lib.core.run import Run, checkpoints, static
from td_lib.core.runtime import numpy_rng
from td_lib.core.validate import library_default

__all__ = ["alignment", "alpha_spec", "SpecialisationRun", "specialisation_runs", "specialisation_time",
           "log_d_fit", "reflect"]


# ----------------------------------------------------------------------------- alignment
def alignment(R, Q, T: float = 1.0) -> np.ndarray:
    """``gamma_s = sum_{l<k_t} R_{s+l,l} / sqrt(T Tr Q)`` for ``s = 0..k_s-k_t`` (eq. 24, CNN).

    Returns shape ``(..., k_s - k_t + 1)``. Equals 1 at the zero-error solution of shift ``s``
    (eq. 23) for any ``T`` (the printed eq. 24 omits ``T``, i.e. assumes ``T = 1``).

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 24.

    Examples
    --------
    >>> from td_lib.cnn_lcn.init import zero_error_solution
    >>> R, Q = zero_error_solution("cnn", P=6, k_s=3, k_t=1, T=2.0, shift=1)
    >>> alignment(R, Q, T=2.0).round(12).tolist()
    [0.0, 1.0, 0.0]
    """
    R = V.array("R", R)
    Q = V.array("Q", Q)
    if R.ndim < 2 or Q.shape[-2:] != (R.shape[-2],) * 2:
        raise ValueError(f"need CNN R (..., k_s, k_t) and Q (..., k_s, k_s); got {R.shape}, "
                         f"{Q.shape}")
    T = V.finite("T", T, positive=True)
    k_s, k_t = R.shape[-2:]
    s = np.arange(k_s - k_t + 1)[:, None]
    l_ = np.arange(k_t)[None, :]
    num = R[..., s + l_, l_].sum(-1)
    tr = np.trace(Q, axis1=-2, axis2=-1)
    return num / np.sqrt(T * tr)[..., None]


def alpha_spec(alpha, gamma, threshold: float = 0.99) -> np.ndarray:
    """Eq. 25: first ``alpha`` with ``max_s gamma_s(alpha) >= threshold`` (``inf`` if never).

    ``alpha``: ``(n,)``; ``gamma``: ``(n, ..., n_s)``. Linear interpolation between checkpoints.

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 25.

    Examples
    --------
    >>> import numpy as np
    >>> gamma = np.array([[0.1, 0.2], [0.5, 0.9], [0.95, 0.3]])  # (n_alpha, n_s)
    >>> round(float(alpha_spec(np.array([0.0, 1.0, 2.0]), gamma, threshold=0.92)), 12)
    1.4
    """
    alpha = V.array("alpha", alpha, ndim=1)
    gamma = np.asarray(gamma, float)
    threshold = V.in_interval("threshold", threshold, 0.0, 1.0, closed="neither")
    g = gamma.max(-1)  # (n, ...)
    above = g >= threshold
    first = np.argmax(above, axis=0)
    ok = above.any(0)
    i1 = np.maximum(first, 1)
    g0 = np.take_along_axis(g, (i1 - 1)[None], 0)[0]
    g1 = np.take_along_axis(g, i1[None], 0)[0]
    a0, a1 = alpha[i1 - 1], alpha[i1]
    frac = np.clip((threshold - g0) / np.where(g1 != g0, g1 - g0, 1.0), 0, 1)
    out = np.where(first == 0, alpha[0], a0 + frac * (a1 - a0))
    return np.where(ok, out, np.inf)


@dataclass
class SpecialisationRun(Run):
    """Result of :func:`specialisation_runs`: the alignments along the CNN ODE in the time ``alpha``.

    Attributes
    ----------
    t : ``(n_alpha,)`` the checkpoints ``alpha`` integrated.
    gamma : ``(n_alpha, n_D, n_init, k_s - k_t + 1)`` alignments (eq. 24).
    D : ``(n_D,)`` the dimensions (static).
    """

    gamma: np.ndarray
    D: np.ndarray = static()
    time_label: ClassVar[str] = "alpha"


def specialisation_runs(D, *, P: int = 6, k_s: int = 3, k_t: int = 1, eta: float = 0.5,
                        T: float = 1.0, c: float = 0.0, sigma: float = 0.0, n_init: int = 8,
                        rng=0, threshold: float = 0.99, alpha_max: float = 2000.0,
                        n_ckpt: int = 400, dtau: float = 0.05, progress: bool | str = False) -> SpecialisationRun:
    """The CNN ODE (eq. 17) from ``n_init`` random inits (eq. 19) at each dimension ``D``.

    All ``len(D) * n_init`` runs are integrated in one batch on the checkpoints
    ``[0] + geomspace(1e-2, alpha_max, n_ckpt)``, window by window, until every run has
    specialised (eq. 25) or ``alpha_max`` is reached. For an int seed ``rng`` the inits at
    ``D[i]`` are ``random_init("cnn", D=D[i], ..., n=n_init, rng=default_rng((rng, i)))``; a
    numpy Generator (or ``None``, fresh entropy) draws them one dimension after the other.
    Returns a :class:`SpecialisationRun` with ``t`` (the checkpoints ``alpha`` integrated), ``gamma``
    (alignments, eq. 24: ``(n_alpha, n_D, n_init, k_s - k_t + 1)``) and ``D``; :func:`alpha_spec` of
    ``t`` and ``gamma`` gives the specialisation times. Figure 3/4 parameters are the defaults.
    ``progress``: ``True`` or a label shows a bar per integration window.

    References
    ----------
    Mori et al. (CNN vs LCN), Result 3.3, eqs 19, 24-25, Figures 3, 4, 7.

    Examples
    --------
    >>> r = specialisation_runs([1e4], k_s=1, n_init=2, alpha_max=30.0, n_ckpt=20, dtau=1.0, rng=0)
    >>> r.gamma.shape[1:], bool((r.gamma.max(-1) >= 0.99).any(0).all())  # every run specialised
    ((1, 2, 1), True)
    """
    Ds = np.atleast_1d(np.asarray(D, float))
    n_init = V.positive_int("n_init", n_init)
    n_ckpt = V.positive_int("n_ckpt", n_ckpt, 2)
    alpha_max = V.finite("alpha_max", alpha_max, positive=True)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        gens = [np.random.default_rng((int(rng), i)) for i in range(Ds.size)]
    else:
        gens = [numpy_rng(rng)] * Ds.size
    inits = [random_init("cnn", D=d, P=P, k_s=k_s, k_t=k_t, T=T, n=n_init, rng=g)
             for d, g in zip(Ds, gens)]
    R = np.stack([r for r, _ in inits])
    Q = np.stack([q for _, q in inits])
    S = input_covariance(P, c)
    grid = checkpoints(alpha_max, num=n_ckpt, start=min(1e-2, alpha_max / 10), integer=False)
    gammas = [alignment(R, Q, T)[None]]
    width = max(1, n_ckpt // 40)  # windows of a factor ~ (alpha_max / 1e-2)^(1/40) in alpha
    for lo in range(0, grid.size - 1, width):
        al = grid[lo:lo + width + 1]
        tr = integrate("cnn", R, Q, al - al[0], S, T=T, eta=eta, sigma=sigma, dtau=dtau,
                       progress=progress)
        gammas.append(alignment(tr.R[1:], tr.Q[1:], T))
        R, Q = tr.R[-1], tr.Q[-1]
        if (np.concatenate(gammas).max(-1) >= threshold).any(0).all():  # every run has specialised
            break
    gamma = np.concatenate(gammas)
    return SpecialisationRun(t=grid[:gamma.shape[0]], gamma=gamma, D=Ds)


def specialisation_time(D, *, P: int = 6, k_s: int = 3, k_t: int = 1, eta: float = 0.5,
                        T: float = 1.0, c: float = 0.0, sigma: float = 0.0, n_init: int = 8,
                        rng=0, threshold: float = 0.99, alpha_max: float = 2000.0,
                        dtau: float = 0.05, progress: bool | str = False, spec=None) -> np.ndarray:
    """``alpha_spec`` (eq. 25) of the CNN ODE from ``n_init`` random inits at each dimension ``D``.

    ``D`` may be a scalar or a sequence. Returns ``(n_D, n_init)`` (or ``(n_init,)`` for scalar
    ``D``); ``inf`` where the threshold is not reached before ``alpha_max``. See
    :func:`specialisation_runs` (which also returns the alignment trajectories; this uses
    600 checkpoints). ``spec(alpha, gamma, threshold)``: the function of eq. 25 to apply (default
    :func:`alpha_spec`; the students' edition of td_lib asks for one).

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 25, Result 3.3.
    """
    spec = library_default("alpha_spec", globals(), "spec") if spec is None else spec
    r = specialisation_runs(D, P=P, k_s=k_s, k_t=k_t, eta=eta, T=T, c=c, sigma=sigma,
                            n_init=n_init, rng=rng, threshold=threshold, alpha_max=alpha_max,
                            n_ckpt=600, dtau=dtau, progress=progress)
    g = r.gamma
    out = np.array([[float(spec(r.t, g[:, i, j], threshold)) for j in range(g.shape[2])]
                    for i in range(g.shape[1])])
    return out if np.ndim(D) else out[0]


def log_d_fit(Ds, a_spec, D_min: float = 0.0) -> dict:
    """Least-squares ``alpha_spec = a + b ln D`` through the means over initialisations.

    ``a_spec`` is ``(n_D, n_init)`` (e.g. :func:`specialisation_runs`); dimensions below
    ``D_min`` are left out of the fit. The spread is the standard error of ``a`` and ``b``
    that the seed-to-seed scatter of the means implies (``b = sum_D w_D mean_D`` with the
    least-squares weights ``w_D``, so ``se_b^2 = sum_D w_D^2 s_D^2 / n_init``, ``s_D`` the sample
    standard deviation at ``D``), and ``sd`` the scatter of ``alpha_spec`` itself (the root mean
    square of the ``s_D``). Returns ``a``, ``b``, ``se_a``, ``se_b``, ``sd``, ``mean`` (per D),
    ``D`` (the dimensions used).

    References
    ----------
    Mori et al. (CNN vs LCN), Result 3.3 (``alpha_spec ~ a + b ln D`` for
    ``k_s > k_t``, Figures 3 and 7).
    """
    Ds = V.array("Ds", Ds, ndim=1)
    a_spec = np.asarray(a_spec, dtype=float)
    if a_spec.ndim != 2 or a_spec.shape[0] != Ds.size:
        raise ValueError(f"a_spec must have shape (len(Ds), n_init) = ({Ds.size}, any), got {a_spec.shape}")
    keep = Ds >= D_min
    if keep.sum() < 2:
        raise ValueError(f"D_min = {D_min:g} leaves fewer than two dimensions to fit")
    if not np.all(np.isfinite(a_spec[keep])):
        raise ValueError("a_spec: every run used in the fit must have specialised (finite values)")
    x, y = np.log(Ds[keep]), a_spec[keep]
    n = y.shape[1]
    mean = y.mean(1)
    X = np.stack([np.ones(x.size), x], 1)
    W = np.linalg.pinv(X)  # (2, n_D): (a, b) = W @ mean
    a, b = W @ mean
    var = y.var(1, ddof=1) / n if n > 1 else np.zeros(x.size)
    se_a, se_b = np.sqrt((W**2) @ var)
    sd = float(np.sqrt(np.mean(y.var(1, ddof=1)))) if n > 1 else 0.0
    return {"a": float(a), "b": float(b), "se_a": float(se_a), "se_b": float(se_b), "sd": sd,
            "mean": mean, "D": Ds[keep]}


# ----------------------------------------------------------------------------- reflection
def reflect(R, Q, kind: str = "cnn", P: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The reflection ``rho`` of eq. 26: ``R_{l,m} -> R_{k_s-1-l, k_t-1-m}``, ``Q_{ll'} -> Q_{..}``.

    For the LCN (``kind="lcn"``) positions are reflected as well,
    ``p -> (-p - k_s + 1)_P``, which is the map under which eq. 18 is equivariant
    (the LCN analogue of App. G).

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 26 and App. G (eq. 98).
    """
    V.choice("kind", kind, KINDS)
    R = np.asarray(R, float)
    Q = np.asarray(Q, float)
    Rr = R[..., ::-1, ::-1]
    Qr = Q[..., ::-1, ::-1]
    if kind == "cnn":
        return Rr.copy(), Qr.copy()
    P = R.shape[-3]
    k_s = R.shape[-2]
    ph = (-np.arange(P) - k_s + 1) % P
    return Rr[..., ph, :, :].copy(), Qr[..., ph[:, None], ph[None, :], :, :].copy()
