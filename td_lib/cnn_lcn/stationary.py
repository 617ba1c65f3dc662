"""Stationary states of the CNN / LCN ODEs (eqs 17-18) at finite learning rate.

:func:`fixed_point` solves ``RHS(R, Q) = 0`` near a given state (the zero-error solution of
eq. 23 for the noise floors of eqs 31-32, Figure 5), directly by a root solve and with an RK4
warm-up of :func:`~td_lib.cnn_lcn.integrate.integrate` only if that fails.

References
----------
Mori et al., *exact online-SGD dynamics of CNN vs LCN students*, eqs 17-18, 31-32.

Examples
--------
>>> from td_lib.cnn_lcn.init import zero_error_solution
>>> from td_lib.cnn_lcn.model import input_covariance
>>> R0, Q0 = zero_error_solution("lcn", P=2, k_s=1, k_t=1)
>>> fp = fixed_point("lcn", R0, Q0, input_covariance(2, 0.5), T=1.0, eta=2e-3, sigma=1.0)
>>> fp["success"], fp["direct"], round(fp["eg"] / 2e-3, 4)
(True, True, 0.3678)
"""

from __future__ import annotations

import numpy as np

from td_lib.cnn_lcn.integrate import integrate
from td_lib.cnn_lcn.model import KINDS, check_S, check_state, generalisation_error
from td_lib.cnn_lcn.odes import rhs
from td_lib.core import validate as V

__all__ = ["fixed_point", "SUCCESS_RESIDUAL", "WARMUPS"]


def _pack(kind, R, Q):
    """The independent entries of one state: ``R`` and the upper triangle of ``Q`` (as a matrix)."""
    y, n, iu = _pack_batch(kind, R[None], Q[None])
    return y[0], n, iu


def _pack_batch(kind, R, Q):
    """:func:`_pack` for states with one leading batch axis: ``(m, n_unknowns)``."""
    m = R.shape[0]
    n = Q.shape[-1] if kind == "cnn" else Q.shape[1] * Q.shape[-1]
    M = Q if kind == "cnn" else np.swapaxes(Q, -3, -2).reshape(m, n, n)
    iu = np.triu_indices(n)
    return np.concatenate([R.reshape(m, -1), M[:, iu[0], iu[1]]], axis=1), n, iu


def _unpack(kind, y, rshape, n, iu, P, k_s):
    R, Q = _unpack_batch(kind, y[None], rshape, n, iu, P, k_s)
    return R[0], Q[0]


def _unpack_batch(kind, Y, rshape, n, iu, P, k_s):
    m = Y.shape[0]
    nr = int(np.prod(rshape))
    R = Y[:, :nr].reshape((m,) + tuple(rshape))
    M = np.zeros((m, n, n))
    M[:, iu[0], iu[1]] = Y[:, nr:]
    M = M + np.swapaxes(np.triu(M, 1), -1, -2)
    Q = M if kind == "cnn" else np.swapaxes(M.reshape(m, P, k_s, P, k_s), -3, -2)
    return R, Q


SUCCESS_RESIDUAL = 1e-10  # max |RHS| / eta at which fixed_point calls a root found
WARMUPS = ("auto", "always", "never")


def fixed_point(kind: str, R0, Q0, S, *, T: float = 1.0, eta: float = 1.0, sigma: float = 0.0,
                warmup: str = "auto", tau_warmup: float = 50.0, dtau: float = 0.05,
                tol: float = 1e-13) -> dict:
    """Attracting stationary state of eq. 17 / 18 near ``(R0, Q0)`` (one parameter set).

    Solves ``RHS(R, Q) = 0`` with :func:`scipy.optimize.root` (``hybr``) over the independent
    entries (``R`` and the upper triangle of the symmetric ``Q``), with the Jacobian from
    central differences of the RHS evaluated as one batch. Used for the noise floors (eqs
    31-32): the long-time error of the ODE at finite learning rate, solved from the zero-error
    solution of eq. 23.

    ``warmup="auto"`` (default) solves directly from ``(R0, Q0)``; only if that fails (residual
    above :data:`SUCCESS_RESIDUAL`, or a root that is not attracting, ``eigmax >= 0``) does it
    integrate for a natural time ``eta alpha = tau_warmup`` (RK4, step ``dtau``) and solve from
    there. ``"always"`` does the warm-up first (the slower way, kept for comparison),
    ``"never"`` only the direct solve.

    Returns ``R``, ``Q``, ``eg``, ``residual`` (max |RHS| / eta at the solution), ``eigmax``
    (largest real part of the Jacobian's eigenvalues, < 0 for an attracting fixed point),
    ``success`` (``residual <=`` :data:`SUCCESS_RESIDUAL`), ``warmup_tau`` (the natural time
    integrated before the final solve: ``0.0`` when the direct solve was used), ``direct``
    (``warmup_tau == 0``), ``note`` (what was done and why), and hybr's own ``solver_success``
    and ``message``.

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 17-18 (stationary), 31-32 (the noise floor
    it gives to leading order in eta).
    """
    from scipy.optimize import root

    V.choice("kind", kind, KINDS)
    V.choice("warmup", warmup, WARMUPS)
    S = check_S(S)
    P = S.shape[-1]
    R0, Q0, k_s, k_t = check_state(kind, R0, Q0, P)
    eta = V.finite("eta", eta, positive=True)
    tau_warmup = V.finite("tau_warmup", tau_warmup, positive=True)
    Ts, es, ss = np.asarray(T, float), np.asarray(eta, float), np.asarray(sigma, float)
    _, n, iu = _pack(kind, R0, Q0)

    def F_batch(Y):
        R, Q = _unpack_batch(kind, Y, R0.shape, n, iu, P, k_s)
        with np.errstate(invalid="ignore"):
            dR, dQ = rhs(kind, R, Q, S, T=Ts, eta=es, sigma=ss, validate=False)
        return _pack_batch(kind, dR, dQ)[0] / eta

    def F(y):
        return F_batch(y[None])[0]

    def jac(y, h=1e-7):
        E = h * np.eye(y.size)
        Fs = F_batch(np.concatenate([y + E, y - E]))
        return (Fs[:y.size] - Fs[y.size:]).T / (2 * h)

    def solve(R, Q):
        sol = root(F, _pack(kind, R, Q)[0], jac=jac, method="hybr", tol=tol)
        res = float(np.abs(F(sol.x)).max())
        J = jac(sol.x)
        eig = float(np.linalg.eigvals(J).real.max()) if np.all(np.isfinite(J)) else np.nan
        return sol, res, eig

    def good(res, eig):
        return bool(np.isfinite(res) and res <= SUCCESS_RESIDUAL and eig < 0)

    note = ""
    tau = 0.0
    if warmup != "always":
        sol, res, eig = solve(R0, Q0)
        if good(res, eig):
            note = "solved directly from (R0, Q0)"
        elif warmup == "never":
            note = (f"direct solve from (R0, Q0) failed (residual {res:.3g}, eigmax {eig:.3g}); "
                    "no warm-up (warmup='never')")
        else:
            note = (f"direct solve from (R0, Q0) failed (residual {res:.3g}, eigmax {eig:.3g}); "
                    f"solved after an RK4 warm-up of eta alpha = {tau_warmup:g}")
    if warmup == "always" or (warmup == "auto" and not good(res, eig)):
        tr = integrate(kind, R0, Q0, np.array([0.0, tau_warmup / eta]), S, T=T, eta=eta,
                       sigma=sigma, dtau=dtau)
        sol, res, eig = solve(tr.R[-1], tr.Q[-1])
        tau = tau_warmup
        note = note or f"solved after an RK4 warm-up of eta alpha = {tau_warmup:g} (warmup='always')"
    R, Q = _unpack(kind, sol.x, R0.shape, n, iu, P, k_s)
    # hybr may stop with "not making good progress" at a root it cannot improve (a residual of
    # 1e-17): success is judged by the residual itself, the solver's own flag is kept apart.
    with np.errstate(invalid="ignore"):
        eg = float(generalisation_error(kind, R, Q, S, T)) if np.all(np.isfinite(sol.x)) else np.nan
    return {"R": R, "Q": Q, "eg": eg, "residual": res, "eigmax": eig,
            "success": bool(np.isfinite(res) and res <= SUCCESS_RESIDUAL),
            "warmup_tau": tau, "direct": tau == 0.0, "note": note,
            "solver_success": bool(sol.success), "message": str(sol.message)}
