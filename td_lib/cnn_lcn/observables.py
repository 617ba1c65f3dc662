"""Observables of the CNN / LCN dynamics (seed eqs 24-34, Apps E-H).

* :func:`alignment` -- ``gamma_s`` (eq. 24); :func:`alpha_spec` (eq. 25);
  :func:`specialisation_runs` and :func:`specialisation_time` (Result 3.3 / Figures 3, 4, 7: ODE
  from random inits at dimension D); :func:`log_d_fit` (``a + b ln D`` with its spread).
* :func:`reflect` -- the reflection ``rho`` of eq. 26 (CNN and LCN states).
* :func:`initial_error` -- eq. 28; :func:`early_time_coefficients` -- ``A``, ``B`` of eq. 27
  computed from the ODE itself (directional derivative of eps_g along the RHS at the
  leading-order state); :func:`early_time_coefficients_closed_form` -- the appendix's eqs
  104-115; :func:`optimal_early_eta` (``A / 2B``); :func:`c_star_slope` (eq. 119) and
  :func:`c_star_slope_numeric` (from the numerical ``A``, ``B``).
* :func:`noise_floor` -- eqs 31-32; :func:`error_covariance` (``E[e_p e_q]`` from the order
  parameters) and :func:`error_covariance_prediction` (eq. 34).
* :func:`phase_diagram` -- Figure 6 (optimal-learning-rate comparison at horizon alpha_F).

Seed corrections (evidence in ``checks/cnn_lcn_check.py``):

* eq. 24: at the zero-error solution of eq. 23, ``sum_l R_{s+l,l} / sqrt(Tr Q) = sqrt(T)``, so the
  printed ``gamma_s`` equals 1 only for ``T = 1`` (all the paper's figures). :func:`alignment`
  divides by ``sqrt(T)`` as well, which is the printed formula at ``T = 1``.
"""

from __future__ import annotations

import numpy as np

from td_lib.cnn_lcn.init import leading_order_init, random_init
from td_lib.cnn_lcn.integrate import integrate
from td_lib.cnn_lcn.model import (
    KINDS,
    check_S,
    check_state,
    effective,
    generalisation_error,
    input_covariance,
    preactivation_covariance,
)
from td_lib.cnn_lcn.odes import ode_terms
from td_lib.core import validate as V


# ----------------------------------------------------------------------------- alignment
def alignment(R, Q, T: float = 1.0) -> np.ndarray:
    """``gamma_s = sum_{l<k_t} R_{s+l,l} / sqrt(T Tr Q)`` for ``s = 0..k_s-k_t`` (eq. 24, CNN).

    Returns shape ``(..., k_s - k_t + 1)``. Equals 1 at the zero-error solution of shift ``s``
    (eq. 23) for any ``T`` (the printed eq. 24 omits ``T``, i.e. assumes ``T = 1``).
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


def specialisation_runs(D, P: int = 6, k_s: int = 3, k_t: int = 1, eta: float = 0.5,
                        T: float = 1.0, c: float = 0.0, sigma: float = 0.0, n_init: int = 8,
                        seed=0, threshold: float = 0.99, alpha_max: float = 2000.0,
                        n_ckpt: int = 400, dtau: float = 0.05, progress: bool = False) -> dict:
    """The CNN ODE (eq. 17) from ``n_init`` random inits (eq. 19) at each dimension ``D``.

    All ``len(D) * n_init`` runs are integrated in one batch on the checkpoints
    ``[0] + geomspace(1e-2, alpha_max, n_ckpt)``, window by window, until every run has
    specialised (eq. 25) or ``alpha_max`` is reached. The inits at ``D[i]`` are
    ``random_init("cnn", D[i], ..., n=n_init, seed=(seed, i))``. Returns a dict with ``D``,
    ``alpha`` (the checkpoints integrated), ``gamma`` (alignments, eq. 24:
    ``(n_alpha, n_D, n_init, k_s - k_t + 1)``) and ``alpha_spec`` (``(n_D, n_init)``, ``inf``
    where the threshold was not reached). Figure 3/4 parameters are the defaults.
    """
    Ds = np.atleast_1d(np.asarray(D, float))
    n_init = V.positive_int("n_init", n_init)
    n_ckpt = V.positive_int("n_ckpt", n_ckpt, 2)
    alpha_max = V.finite("alpha_max", alpha_max, positive=True)
    inits = [random_init("cnn", d, P, k_s, k_t, T=T, n=n_init, seed=(seed, i))
             for i, d in enumerate(Ds)]
    R = np.stack([r for r, _ in inits])
    Q = np.stack([q for _, q in inits])
    S = input_covariance(P, c)
    grid = np.concatenate([[0.0], np.geomspace(min(1e-2, alpha_max / 10), alpha_max, n_ckpt)])
    gammas = [alignment(R, Q, T)[None]]
    width = max(1, n_ckpt // 40)  # windows of a factor ~ (alpha_max / 1e-2)^(1/40) in alpha
    for lo in range(0, grid.size - 1, width):
        al = grid[lo:lo + width + 1]
        tr = integrate("cnn", R, Q, al - al[0], S, T=T, eta=eta, sigma=sigma, dtau=dtau,
                       progress=progress)
        gammas.append(alignment(tr.R[1:], tr.Q[1:], T))
        R, Q = tr.R[-1], tr.Q[-1]
        done = np.isfinite(alpha_spec(grid[:lo + al.size], np.concatenate(gammas), threshold))
        if done.all():
            break
    gamma = np.concatenate(gammas)
    alpha = grid[:gamma.shape[0]]
    return {"D": Ds, "alpha": alpha, "gamma": gamma,
            "alpha_spec": alpha_spec(alpha, gamma, threshold)}


def specialisation_time(D, P: int = 6, k_s: int = 3, k_t: int = 1, eta: float = 0.5,
                        T: float = 1.0, c: float = 0.0, sigma: float = 0.0, n_init: int = 8,
                        seed=0, threshold: float = 0.99, alpha_max: float = 2000.0,
                        dtau: float = 0.05, progress: bool = False) -> np.ndarray:
    """``alpha_spec`` (eq. 25) of the CNN ODE from ``n_init`` random inits at each dimension ``D``.

    ``D`` may be a scalar or a sequence. Returns ``(n_D, n_init)`` (or ``(n_init,)`` for scalar
    ``D``); ``inf`` where the threshold is not reached before ``alpha_max``. See
    :func:`specialisation_runs` (which also returns the alignment trajectories).
    """
    out = specialisation_runs(D, P, k_s, k_t, eta, T, c, sigma, n_init, seed, threshold,
                              alpha_max, 600, dtau, progress)["alpha_spec"]
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


# ----------------------------------------------------------------------------- early times
def initial_error(kind: str, P: int, T: float = 1.0, c: float = 0.0) -> float:
    """Eq. 28: eps_g at the leading-order initial state (eq. 103 with chi = c or 0)."""
    V.choice("kind", kind, KINDS)
    P = V.positive_int("P", P)
    T = V.finite("T", T, positive=True)
    c = V.in_interval("c", c, 0.0, 1.0)
    e_lcn = 2 * P / np.pi * (np.arcsin(T / (1 + T)) + (P - 1) * np.arcsin(T * c / (1 + T))) + P / 3
    if kind == "lcn":
        return float(e_lcn)
    return float(e_lcn + 2 * P * (P - 1) / np.pi * np.arcsin(c / 2))


def _directional(kind, R, Q, S, T, dR, dQ, h=1e-3):
    """Directional derivative of eps_g along ``(dR, dQ)``: Richardson-extrapolated central
    differences with a step scaled to the direction (error O(h^4), ~1e-11 relative)."""
    scale = max(float(np.abs(dR).max(initial=0.0)), float(np.abs(dQ).max(initial=0.0)), 1e-300)
    hh = h / scale

    def cd(step):
        ep = generalisation_error(kind, R + step * dR, Q + step * dQ, S, T)
        em = generalisation_error(kind, R - step * dR, Q - step * dQ, S, T)
        return (ep - em) / (2 * step)

    return (4 * cd(hh / 2) - cd(hh)) / 3


def early_time_coefficients(kind: str, P: int, k_s: int, k_t: int, T: float = 1.0,
                            sigma: float = 0.0, c: float = 0.0, S=None, state=None
                            ) -> tuple[float, float]:
    """``(A, B)`` of eq. 27 from the ODE: ``d eps_g / d alpha |_0 = -eta A + eta^2 B``.

    ``A = -grad(eps_g) . (F_R, F_Q) / k_s`` and ``B = grad(eps_g) . (0, G_Q) / k_s^2`` at the
    leading-order state (or ``state=(R, Q)``), with the gradient taken as a Richardson-extrapolated
    central difference along the direction (relative error ~1e-11). ``S`` overrides eq. 3.
    """
    S = input_covariance(P, c) if S is None else check_S(S, P)
    R, Q = leading_order_init(kind, P, k_s, k_t) if state is None else state
    F_R, F_Q, G_Q = ode_terms(kind, R, Q, S, T, sigma)
    A = -_directional(kind, R, Q, S, T, F_R / k_s, F_Q / k_s)
    B = _directional(kind, R, Q, S, T, np.zeros_like(F_R), G_Q / k_s**2)
    return float(A), float(B)


def _omega(x):
    return 1.0 / np.sqrt(4.0 - x * x)


def _V_closed(P, T, sigma, chi, c, corrected=True):
    """``(V_d, V_o)`` of eq. 108 at student correlation ``chi`` (teacher correlation ``c``).

    ``corrected=False`` reproduces the printed ``V_d``; the printed version has its factor
    ``chi`` on the wrong arcsine: the ``I4(lh_p, lh_p, lh_p, lh_r)`` terms give
    ``2(P-1) arcsin(chi / (2 sqrt(2(3-chi^2))))`` and the ``I4(lh_p, lh_p, lh_r, lh_r)`` terms
    ``(P-1) arcsin((3-2chi^2) / (2(3-chi^2)))`` (the page prints ``1`` and ``chi(3-2chi^2)`` as the
    numerators). ``V_o`` is correct as printed. ``eps_T`` (eq. 102) always uses the data
    correlation ``c``.
    """
    epsT = 2 * P / np.pi * (np.arcsin(T / (1 + T)) + (P - 1) * np.arcsin(T * c / (1 + T)))
    x = chi
    if corrected:
        t2 = 2 * (P - 1) * np.arcsin(x / (2 * np.sqrt(2 * (3 - x * x))))
        t3 = (P - 1) * np.arcsin((3 - 2 * x * x) / (2 * (3 - x * x)))
    else:
        t2 = 2 * (P - 1) * np.arcsin(1 / (2 * np.sqrt(2 * (3 - x * x))))
        t3 = (P - 1) * np.arcsin(x * (3 - 2 * x * x) / (2 * (3 - x * x)))
    Vd = (2 * (epsT + sigma**2) / (np.pi * np.sqrt(3))
          + 4 / (np.pi**2 * np.sqrt(3)) * (
              np.arcsin(0.25) + t2 + t3
              + (P - 1) * (P - 2) * np.arcsin(x * (3 - 2 * x) / (2 * (3 - x * x)))))
    w = _omega(x)
    Vo = (2 * w * (epsT + sigma**2) / np.pi
          + 4 * w / np.pi**2 * (
              2 * np.arcsin((2 - x * x) / (2 * (3 - x * x))) + 2 * np.arcsin(x / (2 * (3 - x * x)))
              + (P - 2) * np.arcsin((2 + x - 2 * x * x) / (2 * (2 - x) * (1 + x)))
              + 4 * (P - 2) * np.arcsin(x / (2 * np.sqrt((3 - x * x) * (1 + x))))
              + (P - 2) * (P - 3) * np.arcsin(x / (2 * (1 + x)))))
    return Vd, Vo


def early_time_coefficients_closed_form(kind: str, P: int, k_s: int, T: float = 1.0,
                                        sigma: float = 0.0, c: float = 0.0,
                                        corrected: bool = True) -> tuple[float, float]:
    """``(A, B)`` of eq. 27 from the appendix's closed forms (eqs 107-108, 112-115).

    ``corrected=True`` (default) uses the corrected ``V_d`` (see :func:`_V_closed`), which
    agrees with :func:`early_time_coefficients` (exact, from the ODE) to ~1e-9;
    ``corrected=False`` is the page as printed (``B`` off by up to ~7 % at ``c = 0`` for the
    CNN). ``A`` is correct as printed.
    """
    V.choice("kind", kind, KINDS)
    sc = 1 + (P - 1) * c
    if kind == "cnn":
        w = _omega(c)
        Hd = P / np.pi * (1 / np.sqrt(3) + (P - 1) * c * w)
        Ho = P / np.pi * (c / np.sqrt(3) + (2 + 2 * (P - 2) * c - (P - 1) * c * c) * w)
        Vd, Vo = _V_closed(P, T, sigma, c, c, corrected)
        A = 4 * T * P**2 * sc**2 / (np.pi**2 * (1 + T)) + 2 * (Hd**2 / k_s + (1 - 1 / k_s) * Ho**2)
        B = P * (Vd * (Hd / k_s + (1 - 1 / k_s) * c * Ho)
                 + Vo * ((P - 1) * c * Hd / k_s + (1 - 1 / k_s) * (1 + (P - 2) * c) * Ho))
        return float(A), float(B)
    nd = c * c + (1 - c * c) / k_s
    no = (1 - c * c) * (1 - 1 / k_s) + (P - 1) * c * c
    Vd, Vo = _V_closed(P, T, sigma, 0.0, c, corrected)
    A = 4 * T * P * sc**2 / (np.pi**2 * (1 + T)) + 2 * P / np.pi**2 * (nd / 3 + no)
    B = P / np.pi * (nd / np.sqrt(3) * Vd + no * Vo)
    return float(A), float(B)


def optimal_early_eta(A, B):
    """The learning rate ``A / (2 B)`` minimising eq. 27 at small alpha (App. H, eq. 116)."""
    return np.asarray(A, float) / (2.0 * np.asarray(B, float))


def c_star_slope(P: int, k_s: int, T: float = 1.0, sigma: float = 0.0) -> float:
    """``c0`` of eq. 119 (with ``beta`` of eq. 120), as printed."""
    eb = 2 * P / np.pi * np.arcsin(T / (1 + T)) + sigma**2
    beta = (2 / (3 * k_s) * (eb + (P - 1) / 3 + 2 / np.pi * np.arcsin(0.25))
            + (1 - 1 / k_s) * (eb + (P - 2) / 3 + 4 / np.pi * np.arcsin(1 / 3)))
    return float((1 + 2 * T / (1 + T) - 2 / (3 * k_s)) ** 2 / (np.pi * beta))


def c_star_slope_numeric(P: int, k_s: int, k_t: int = 1, T: float = 1.0, sigma: float = 0.0
                         ) -> float:
    """``c0 = pi Delta(0) / (P (P-1))`` from eq. 118 linearised, with ``A``, ``B`` from the ODE."""
    Ac, Bc = early_time_coefficients("cnn", P, k_s, k_t, T, sigma, 0.0)
    Al, Bl = early_time_coefficients("lcn", P, k_s, k_t, T, sigma, 0.0)
    delta = Ac**2 / (4 * Bc) - Al**2 / (4 * Bl)
    return float(np.pi * delta / (P * (P - 1)))


# ----------------------------------------------------------------------------- noise floor
def noise_floor(kind: str, eta, sigma, P: int, T: float = 1.0, c=0.0) -> np.ndarray:
    """Leading-order asymptotic error, eq. 31 (CNN) and eq. 32 (LCN)."""
    V.choice("kind", kind, KINDS)
    P = V.positive_int("P", P)
    eta = V.array_in("eta", eta, 0.0, np.inf)
    sigma = V.array_in("sigma", sigma, 0.0, np.inf)
    c = V.array_in("c", c, 0.0, 1.0)
    T = V.finite("T", T, positive=True)
    lcn = eta * sigma**2 * P / (np.pi * np.sqrt(1 + 2 * T))
    if kind == "lcn":
        return lcn
    return lcn + eta * sigma**2 / np.pi * P * (P - 1) * c / np.sqrt((1 + T) ** 2 - T**2 * c**2)


def error_covariance(kind: str, R, Q, S, T: float = 1.0) -> np.ndarray:
    """``E[e_p e_q]`` with ``e_p = lambda_hat_p - lambda_p`` (eq. 33), from the order parameters."""
    C = preactivation_covariance(kind, R, Q, S, T)
    P = C.shape[-1] // 2
    return C[..., :P, :P] - C[..., :P, P:] - C[..., P:, :P] + C[..., P:, P:]


def error_covariance_prediction(kind: str, eta, sigma, S) -> np.ndarray:
    """Eq. 34: ``eta sigma^2 / 2 * S`` (CNN) or ``* I`` (LCN), leading order in eta."""
    V.choice("kind", kind, KINDS)
    S = check_S(S)
    pref = np.asarray(eta, float) * np.asarray(sigma, float) ** 2 / 2
    M = S if kind == "cnn" else np.broadcast_to(np.eye(S.shape[-1]), S.shape)
    return pref[..., None, None] * M


def noise_floor_from_M(kind: str, M, S, T: float = 1.0) -> np.ndarray:
    """``tr(M Omega)`` (eq. 130) for a CNN ``M = Q - R - R^T + T`` (padded), mainly for tests."""
    P = np.asarray(S).shape[-1]
    W = _W(P, T, np.asarray(S)[..., 0, 1])
    return np.einsum("...pq,...pq->...", W, effective(M, S))


def _W(P, T, c):
    c = np.asarray(c, float)
    off = 2 / (np.pi * np.sqrt((1 + T) ** 2 - T**2 * c**2))
    d = 2 / (np.pi * np.sqrt(1 + 2 * T))
    eye = np.eye(P)
    return off[..., None, None] * (1 - eye) + d * eye


# ----------------------------------------------------------------------------- phase diagram
def _refine_min(x, y):
    """Minimum of ``y(x)`` on a grid, refined by a parabola through the 3 points around it.

    Where one of the three points is not finite (a diverged or cut-off run, ``+inf``) no
    parabola exists: the grid minimum is returned unrefined (the caller flags such entries).
    """
    i = np.argmin(y, axis=-1)
    i = np.clip(i, 1, x.size - 2)
    y0 = np.take_along_axis(y, (i - 1)[..., None], -1)[..., 0]
    y1 = np.take_along_axis(y, i[..., None], -1)[..., 0]
    y2 = np.take_along_axis(y, (i + 1)[..., None], -1)[..., 0]
    h = x[1] - x[0]
    fin = np.isfinite(y0) & np.isfinite(y1) & np.isfinite(y2)
    z0, z1, z2 = (np.where(fin, v, 0.0) for v in (y0, y1, y2))  # no inf - inf below
    den = z0 - 2 * z1 + z2
    ok = fin & (den > 0)
    off = np.where(ok, 0.5 * (z0 - z2) / np.where(ok, den, 1.0), 0.0)
    off = np.clip(off, -1, 1)
    ymin = y1 - 0.25 * (z0 - z2) * off
    ymin = np.minimum(ymin, np.minimum(np.minimum(y0, y1), y2))
    return x[i] + off * h, ymin


def phase_diagram(P: int = 4, k_s: int = 1, k_t: int = 1, T: float = 1.0, sigma: float = 1.0,
                  cs=None, alpha_F=None, etas=None, dtau: float = 0.1, tau_max: float = 400.0,
                  steady_tol: float | None = 1e-9, progress: bool = False) -> dict:
    """Figure 6: CNN vs LCN at their own optimal learning rate for each horizon ``alpha_F``.

    For each student and correlation ``c`` the ODEs are integrated from the leading-order
    initial state for every learning rate of the grid ``etas`` (one batched integration per
    student); ``eps*(alpha_F) = min_eta eps_g(alpha_F)`` is located by a parabola through
    ``log eps_g`` against ``log eta`` around the grid minimum (App. I).

    A learning rate ``eta`` is integrated only up to ``alpha = tau_max / eta`` (natural time
    ``eta alpha <= tau_max``): larger rates are far from optimal at longer horizons. The
    returned ``clipped`` flags ``(n_c, n_F)`` entries whose optimum touches that cut or the
    grid edge (then enlarge ``tau_max`` or the grid).

    Returns a dict with ``cs``, ``alpha_F``, ``etas``, ``eps_cnn``, ``eps_lcn`` (``(n_c, n_F)``),
    ``eta_cnn``, ``eta_lcn`` (optimal eta), ``log10_ratio = log10(eps_cnn / eps_lcn)``,
    ``clipped_cnn``, ``clipped_lcn`` and ``n_steps``.
    Defaults: the paper's c grid (0, 0.025, ..., 0.975), alpha_F = 10^-2..10^4 (25 points),
    eta = 10^-4..3 (41 points).
    """
    cs = np.arange(0, 0.976, 0.025) if cs is None else np.asarray(cs, float)
    alpha_F = np.geomspace(1e-2, 1e4, 25) if alpha_F is None else np.asarray(alpha_F, float)
    etas = np.geomspace(1e-4, 3.0, 41) if etas is None else np.asarray(etas, float)
    S = input_covariance(P, cs)[:, None]  # (n_c, 1, P, P)
    out = {"cs": cs, "alpha_F": alpha_F, "etas": etas}
    for kind in KINDS:
        R0, Q0 = leading_order_init(kind, P, k_s, k_t)
        tr = integrate(kind, R0, Q0, alpha_F, S, T=T, eta=etas[None, :], sigma=sigma,
                       dtau=dtau, steady_tol=steady_tol, on_divergence="nan",
                       alpha_limit=tau_max / etas[None, :], progress=progress)
        with np.errstate(invalid="ignore"):
            le = np.log(np.moveaxis(tr.eg, 0, -1))  # (n_c, n_eta, n_F)
        le = np.moveaxis(le, 1, -1)  # (n_c, n_F, n_eta)
        le = np.where(np.isfinite(le), le, np.inf)
        x, y = _refine_min(np.log(etas), le)
        i = np.argmin(le, axis=-1)
        nb = np.stack([np.take_along_axis(le, np.clip(i + d, 0, etas.size - 1)[..., None], -1)[
            ..., 0] for d in (-1, 1)])
        out[f"clipped_{kind}"] = (i == 0) | (i == etas.size - 1) | ~np.all(np.isfinite(nb), 0)
        out[f"eps_{kind}"] = np.exp(y)
        out[f"eta_{kind}"] = np.exp(x)
        out[f"n_steps_{kind}"] = tr.n_steps
    out["log10_ratio"] = np.log10(out["eps_cnn"] / out["eps_lcn"])
    return out


__all__ = [
    "alignment", "alpha_spec", "specialisation_runs", "specialisation_time", "log_d_fit",
    "reflect", "initial_error",
    "early_time_coefficients", "early_time_coefficients_closed_form", "optimal_early_eta",
    "c_star_slope", "c_star_slope_numeric", "noise_floor", "error_covariance",
    "error_covariance_prediction", "phase_diagram", "check_state",
]
