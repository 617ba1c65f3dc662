"""Batched integration of the CNN / LCN ODEs (eqs 17-18).

:func:`integrate` advances a whole batch of parameter sets (learning rates, correlations,
noise levels, initial conditions) in one vectorised loop. Each batch element ``i`` takes
classical RK4 steps of size ``min(dt_i, distance to its next checkpoint)`` with
``dt_i = dt`` or, by default, ``dt_i = dtau / eta_i`` -- a fixed step in the natural time
``tau = eta alpha`` -- so small learning rates are not integrated with needlessly tiny steps.
Finished (and, with ``steady_tol``, stationary) elements drop out of the active set.
``method="solve_ivp"`` hands the flattened batch to :func:`scipy.integrate.solve_ivp`
(adaptive; useful for long horizons and as a cross-check).

Divergence (NaN/inf, entries above ``max_value``, or a state whose preactivation covariance is
no longer positive semi-definite) raises :class:`DivergenceError` naming the offending
parameter sets (``eta``, ``c = S[0, 1]``, ``sigma``, ``T``). The stationary states of the
same equations (noise floors) are in :mod:`td_lib.cnn_lcn.stationary`.

References
----------
Mori et al., *exact online-SGD dynamics of CNN vs LCN students*, eqs 17-18.

Examples
--------
>>> import numpy as np
>>> from td_lib.cnn_lcn.init import leading_order_init
>>> from td_lib.cnn_lcn.model import input_covariance
>>> R0, Q0 = leading_order_init("cnn", P=4, k_s=1, k_t=1)
>>> tr = integrate("cnn", R0, Q0, np.array([0.0, 1.0, 2.0]), input_covariance(4, 0.25),
...                T=1.0, eta=np.array([0.5, 1.0]), sigma=0.5, dtau=0.05)
>>> tr.eg.shape, tr.R.shape
((3, 2), (3, 2, 1, 1))
>>> np.round(tr.eg[-1], 6).tolist()
[1.412905, 2.275974]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from td_lib.cnn_lcn.model import KINDS, check_S, check_state, eg_from_covariance
from td_lib.cnn_lcn.model import preactivation_covariance as _cov
from td_lib.cnn_lcn.odes import rhs
from td_lib.core import validate as V
from td_lib.core.runtime import bar as _bar


class DivergenceError(RuntimeError):
    """The ODE integration diverged; the message names the parameter sets concerned."""


@dataclass
class Trajectory:
    """Result of :func:`integrate`.

    Attributes
    ----------
    kind : ``"cnn"`` or ``"lcn"``.
    alpha : ``(n_ckpt,)`` checkpoint times.
    R, Q : ``(n_ckpt, *batch, ...)`` order parameters at the checkpoints.
    eg : ``(n_ckpt, *batch)`` generalisation error (eq. 81).
    batch_shape : the broadcast batch shape.
    n_steps : RK4 steps taken by the longest-running element (``0`` for ``solve_ivp``).
    params : the broadcast ``eta``, ``sigma``, ``T`` arrays (batch shape) and ``S``.
    """

    kind: str
    alpha: np.ndarray
    R: np.ndarray
    Q: np.ndarray
    eg: np.ndarray
    batch_shape: tuple
    n_steps: int
    params: dict = field(default_factory=dict)

    def at(self, index) -> tuple[np.ndarray, np.ndarray]:
        """``(R, Q)`` at checkpoint ``index``."""
        return self.R[index], self.Q[index]


def log_checkpoints(*, alpha_max: float, n: int = 100, alpha_min: float = 1e-2,
                    include_zero: bool = True) -> np.ndarray:
    """``n`` log-spaced checkpoints from ``alpha_min`` to ``alpha_max`` (plus ``0`` if asked).

    Examples
    --------
    >>> log_checkpoints(alpha_max=100.0, n=3, alpha_min=1.0).tolist()
    [0.0, 1.0, 10.0, 100.0]
    """
    alpha_max = V.finite("alpha_max", alpha_max, positive=True)
    alpha_min = V.finite("alpha_min", alpha_min, positive=True)
    n = V.positive_int("n", n, 2)
    if alpha_min >= alpha_max:
        raise ValueError(f"alpha_min must be < alpha_max, got {alpha_min} >= {alpha_max}")
    a = np.geomspace(alpha_min, alpha_max, n)
    return np.concatenate([[0.0], a]) if include_zero else a


def _describe(idx, eta, sigma, T, S) -> str:
    out = []
    for i in np.atleast_1d(idx)[:5]:
        c = S[i][0, 1] if S[i].shape[-1] > 1 else 0.0
        out.append(f"(batch index {int(i)}: eta={eta[i]:.4g}, c=S[0,1]={c:.4g}, "
                   f"sigma={sigma[i]:.4g}, T={T[i]:.4g})")
    more = "" if np.size(idx) <= 5 else f" and {np.size(idx) - 5} more"
    return ", ".join(out) + more


def _bad_states(kind, R, Q, S, T, max_value):
    finite = np.isfinite(R).reshape(len(R), -1).all(1) & np.isfinite(Q).reshape(len(Q), -1).all(1)
    big = (np.abs(R).reshape(len(R), -1).max(1) > max_value) | (
        np.abs(Q).reshape(len(Q), -1).max(1) > max_value)
    bad = ~finite | big
    ok = ~bad
    if np.any(ok):
        C = _cov(kind, R[ok], Q[ok], S[ok], T[ok], validate=False)
        lo = np.linalg.eigvalsh(C).min(-1)
        scale = np.maximum(1.0, np.abs(C).max((-1, -2)))
        nonpsd = np.zeros(len(R), bool)
        nonpsd[np.flatnonzero(ok)] = lo < -1e-8 * scale
        bad |= nonpsd
    return bad


def integrate(kind: str, R0, Q0, alphas, S, *, T=1.0, eta=1.0, sigma=0.0,
              dt: float | None = None, dtau: float = 0.02, method: str = "rk4",
              rtol: float = 1e-9, atol: float = 1e-12, steady_tol: float | None = None,
              max_value: float = 1e6, on_divergence: str = "raise", alpha_limit=None,
              progress: bool | str = False) -> Trajectory:
    """Integrate eq. 17 (``kind="cnn"``) or eq. 18 (``kind="lcn"``) for a batch of parameter sets.

    Parameters
    ----------
    R0, Q0 : initial state, leading axes = batch axes (see :mod:`td_lib.cnn_lcn`).
    alphas : increasing checkpoint times ``>= 0`` (e.g. :func:`log_checkpoints`).
    S : ``(..., P, P)`` input covariance(s); ``T``, ``eta``, ``sigma`` scalars or arrays. All
        batch shapes broadcast together.
    dt : fixed RK4 step in ``alpha``; default ``dtau / eta`` per element.
    method : ``"rk4"`` (default) or ``"solve_ivp"`` (scipy ``RK45`` with ``rtol``/``atol``).
    steady_tol : if given, an element whose ``max |d state / d tau| / max(1, max |Q|)`` drops
        below it is frozen (its remaining checkpoints repeat the stationary state).
    on_divergence : ``"raise"`` (default): :class:`DivergenceError` naming the parameter sets;
        ``"nan"``: the diverged elements get NaN from then on (used for learning-rate sweeps).
    alpha_limit : optional per-element horizon (batch-broadcastable); checkpoints beyond it are
        not integrated and hold NaN (used by :func:`~td_lib.cnn_lcn.phase_diagram` so that
        large learning rates are not integrated to horizons where they cannot be optimal).
    progress : ``False`` (default), ``True`` (a bar labelled ``"<kind> ODE"`` over the steps of
        the slowest element) or a label for the bar.

    Returns
    -------
    Trajectory

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 17-18.
    """
    V.choice("kind", kind, KINDS)
    V.choice("method", method, ("rk4", "solve_ivp"))
    V.choice("on_divergence", on_divergence, ("raise", "nan"))
    S = check_S(S)
    P = S.shape[-1]
    R0, Q0, k_s, k_t = check_state(kind, R0, Q0, P)
    alphas = V.array("alphas", alphas, ndim=1)
    if alphas.size == 0 or np.any(alphas < 0) or np.any(np.diff(alphas) <= 0):
        raise ValueError("alphas must be a non-empty, strictly increasing array of times >= 0")
    eta = np.asarray(eta, float)
    sigma = np.asarray(sigma, float)
    T = np.asarray(T, float)
    for name, v, pos in (("eta", eta, True), ("sigma", sigma, False), ("T", T, True)):
        if not np.all(np.isfinite(v)) or np.any(v <= 0 if pos else v < 0):
            raise ValueError(f"{name} must be finite and {'> 0' if pos else '>= 0'}, got {v}")
    if dt is not None:
        dt = V.finite("dt", dt, positive=True)
    dtau = V.finite("dtau", dtau, positive=True)
    nR, nQ = (2, 2) if kind == "cnn" else (3, 4)
    batch = np.broadcast_shapes(R0.shape[:-nR], Q0.shape[:-nQ], S.shape[:-2], eta.shape,
                                sigma.shape, T.shape)
    B = int(np.prod(batch, dtype=int))
    rs, qs = R0.shape[-nR:], Q0.shape[-nQ:]
    R = np.broadcast_to(R0, batch + rs).reshape((B,) + rs).copy()
    Q = np.broadcast_to(Q0, batch + qs).reshape((B,) + qs).copy()
    Sb = np.broadcast_to(S, batch + (P, P)).reshape(B, P, P)
    eb = np.broadcast_to(eta, batch).reshape(B).copy()
    sb = np.broadcast_to(sigma, batch).reshape(B).copy()
    Tb = np.broadcast_to(T, batch).reshape(B).copy()
    n_ck = alphas.size
    Rout = np.empty((n_ck, B) + rs)
    Qout = np.empty((n_ck, B) + qs)
    params = {"eta": eb.reshape(batch), "sigma": sb.reshape(batch), "T": Tb.reshape(batch),
              "S": S}

    def f(idx, Rx, Qx):
        return rhs(kind, Rx, Qx, Sb[idx], T=Tb[idx], eta=eb[idx], sigma=sb[idx], validate=False)

    n_steps = 0
    if method == "solve_ivp":
        from scipy.integrate import solve_ivp

        nr = int(np.prod(rs))
        allidx = np.arange(B)

        def fun(_t, y):
            Rx = y[: B * nr].reshape((B,) + rs)
            Qx = y[B * nr:].reshape((B,) + qs)
            dR, dQ = f(allidx, Rx, Qx)
            if not (np.all(np.isfinite(dR)) and np.all(np.isfinite(dQ))):
                bad = allidx[_bad_states(kind, Rx, Qx, Sb, Tb, max_value)]
                raise DivergenceError(f"{kind.upper()} ODE diverged for "
                                      f"{_describe(bad if bad.size else allidx, eb, sb, Tb, Sb)}")
            return np.concatenate([dR.ravel(), dQ.ravel()])

        y0 = np.concatenate([R.ravel(), Q.ravel()])
        sol = solve_ivp(fun, (0.0, float(alphas[-1])), y0, t_eval=alphas, method="RK45",
                        rtol=rtol, atol=atol)
        if not sol.success:
            raise DivergenceError(f"solve_ivp failed: {sol.message}")
        Rout = sol.y[: B * nr].T.reshape((n_ck, B) + rs)
        Qout = sol.y[B * nr:].T.reshape((n_ck, B) + qs)
    else:
        a = np.zeros(B)
        nxt = np.zeros(B, dtype=int)
        hmax = np.full(B, dt) if dt is not None else dtau / eb
        # checkpoints at alpha = 0
        at0 = alphas[0] == 0.0
        if at0:
            Rout[0], Qout[0] = R, Q
            nxt[:] = 1
        if alpha_limit is not None:
            lim = np.broadcast_to(np.asarray(alpha_limit, float), batch).reshape(B)
            last = np.searchsorted(alphas, lim, side="right")  # checkpoints <= limit
            for i in np.flatnonzero(last < n_ck):
                Rout[max(last[i], nxt[i]):, i] = np.nan
                Qout[max(last[i], nxt[i]):, i] = np.nan
            n_lim = np.maximum(last, nxt)
        else:
            n_lim = np.full(B, n_ck)
        active = np.flatnonzero(nxt < n_lim)
        est = int(np.ceil(np.max(np.minimum(alphas[-1], alphas[np.maximum(n_lim - 1, 0)])
                                  / hmax))) + n_ck
        bar = _bar(range(est), progress, f"{kind} ODE", total=est) if progress else None
        while active.size:
            target = alphas[nxt[active]]
            h = np.minimum(hmax[active], target - a[active])
            Ra, Qa = R[active], Q[active]
            hR = h.reshape((-1,) + (1,) * nR)
            hQ = h.reshape((-1,) + (1,) * nQ)
            k1 = f(active, Ra, Qa)
            k2 = f(active, Ra + 0.5 * hR * k1[0], Qa + 0.5 * hQ * k1[1])
            k3 = f(active, Ra + 0.5 * hR * k2[0], Qa + 0.5 * hQ * k2[1])
            k4 = f(active, Ra + hR * k3[0], Qa + hQ * k3[1])
            dR = (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]) / 6.0
            dQ = (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]) / 6.0
            Rn, Qn = Ra + hR * dR, Qa + hQ * dQ
            fl = len(active)
            with np.errstate(invalid="ignore"):
                good = (np.isfinite(Rn).reshape(fl, -1).all(1) & np.isfinite(Qn).reshape(fl, -1).all(1)
                        & (np.abs(Rn).reshape(fl, -1).max(1) <= max_value)
                        & (np.abs(Qn).reshape(fl, -1).max(1) <= max_value))
            if not np.all(good):
                bad = active[~good]
                if on_divergence == "raise":
                    raise DivergenceError(
                        f"{kind.upper()} ODE diverged (NaN/inf, |entries| > {max_value:g}, or the "
                        f"state left the positive semi-definite cone) at alpha ~ "
                        f"{a[bad[0]]:.4g} for {_describe(bad, eb, sb, Tb, Sb)}; reduce eta or dt")
                for i in bad:
                    Rout[nxt[i]:, i] = np.nan
                    Qout[nxt[i]:, i] = np.nan
                    nxt[i] = n_ck
                Rn, Qn, dR, dQ, h, target = (Rn[good], Qn[good], dR[good], dQ[good], h[good],
                                             target[good])
                active = active[good]
                if active.size == 0:
                    break
            R[active], Q[active] = Rn, Qn
            a[active] = np.where(h == target - a[active], target, a[active] + h)
            n_steps += 1
            if bar is not None:
                bar.update(1)
            hit = a[active] >= target
            if steady_tol is not None:
                na = len(active)
                rate = np.maximum(np.abs(dR).reshape(na, -1).max(1),
                                  np.abs(dQ).reshape(na, -1).max(1)) / eb[active]
                rate /= np.maximum(1.0, np.abs(Qn).reshape(na, -1).max(1))
                steady = rate < steady_tol
            else:
                steady = np.zeros(active.size, bool)
            for j in np.flatnonzero(hit | steady):  # only elements reaching a checkpoint
                i = active[j]
                if steady[j]:
                    Rout[nxt[i]:n_lim[i], i], Qout[nxt[i]:n_lim[i], i] = R[i], Q[i]
                    nxt[i] = n_ck
                else:
                    Rout[nxt[i], i], Qout[nxt[i], i] = R[i], Q[i]
                    nxt[i] += 1
            active = active[nxt[active] < n_lim[active]]
        if bar is not None:
            bar.close()
    Sfull = np.broadcast_to(Sb, (n_ck, B, P, P))
    Tfull = np.broadcast_to(Tb, (n_ck, B))
    with np.errstate(invalid="ignore"):
        eg = eg_from_covariance(_cov(kind, Rout, Qout, Sfull, Tfull, validate=False))
    return Trajectory(kind=kind, alpha=alphas, R=Rout.reshape((n_ck,) + batch + rs),
                      Q=Qout.reshape((n_ck,) + batch + qs), eg=eg.reshape((n_ck,) + batch),
                      batch_shape=batch, n_steps=n_steps, params=params)


def dt_convergence(kind: str, R0, Q0, alphas, S, *, T=1.0, eta=1.0, sigma=0.0,
                   dt: float | None = None, dtau: float = 0.02) -> dict:
    """Richardson check of the RK4 step: integrate with step ``h`` and ``h/2``.

    Returns ``{"eg_h", "eg_h2", "max_abs_diff", "error_estimate"}`` where
    ``error_estimate = max |eg_h - eg_h2| / 15`` estimates the error of the ``h/2`` run
    (RK4 is fourth order). Arguments as for :func:`integrate`.
    """
    kw = dict(S=S, T=T, eta=eta, sigma=sigma)
    t1 = integrate(kind, R0, Q0, alphas, dt=dt, dtau=dtau, **kw)
    t2 = integrate(kind, R0, Q0, alphas, dt=None if dt is None else dt / 2, dtau=dtau / 2, **kw)
    diff = float(np.max(np.abs(t1.eg - t2.eg)))
    return {"eg_h": t1.eg, "eg_h2": t2.eg, "max_abs_diff": diff, "error_estimate": diff / 15.0}
