"""Batched integration of the CNN / LCN ODEs (eqs 17-18).

:func:`integrate` advances a whole batch of parameter sets (learning rates, correlations,
noise levels, initial conditions) in one vectorised loop. Each batch element ``i`` takes
classical RK4 steps of size ``min(dt_i, distance to its next checkpoint)`` with
``dt_i = dt`` or, by default, ``dt_i = dtau / eta_i`` -- a fixed step in the natural time
``tau = eta alpha`` -- so small learning rates are not integrated with needlessly tiny steps.
Finished (and, with ``steady_tol``, stationary) elements drop out of the active set.
``method="solve_ivp"`` hands the flattened batch to :func:`scipy.integrate.solve_ivp`
(adaptive; useful for long horizons and as a cross-check).

The pieces: the batch (``_Batch``: validated, broadcast and flattened parameter sets with the
right-hand side of eqs 17-18), the two drivers (``_run_rk4``, ``_run_solve_ivp``, which return the
same thing), and the generic RK4 engine of :mod:`td_lib.cnn_lcn.rk4` (the step, the stepper, the
checkpoint bookkeeping, the divergence and steady-state tests). The result is a
:class:`Trajectory`, a :class:`~td_lib.core.run.Run` whose time axis ``t`` is ``alpha``.

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

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from td_lib.cnn_lcn.model import KINDS, check_S, check_state, eg_from_covariance
from td_lib.cnn_lcn.model import preactivation_covariance as _cov
from td_lib.cnn_lcn.odes import rhs
from td_lib.cnn_lcn.rk4 import CheckpointRecord, RK4Stepper, is_steady, within_bounds
from td_lib.core import validate as V
from td_lib.core.run import Run, checkpoints, static, ticker


class DivergenceError(RuntimeError):
    """The ODE integration diverged; the message names the parameter sets concerned."""


@dataclass
class Trajectory(Run):
    """Result of :func:`integrate`: a :class:`~td_lib.core.run.Run` in the time ``alpha``.

    Attributes
    ----------
    t : ``(n_ckpt,)`` checkpoint times ``alpha``.
    R, Q : ``(n_ckpt, *batch, ...)`` order parameters at the checkpoints.
    eg : ``(n_ckpt, *batch)`` generalisation error (eq. 81).
    kind : ``"cnn"`` or ``"lcn"`` (static, as the following).
    batch_shape : the broadcast batch shape.
    n_steps : RK4 steps taken by the longest-running element (``0`` for ``solve_ivp``).
    params : the broadcast ``eta``, ``sigma``, ``T`` arrays (batch shape) and ``S``.
    """

    R: np.ndarray
    Q: np.ndarray
    eg: np.ndarray
    kind: str = static()
    batch_shape: tuple = static()
    n_steps: int = static()
    params: dict = static(default_factory=dict)
    time_label: ClassVar[str] = "alpha"


def log_checkpoints(*, alpha_max: float, n: int = 100, alpha_min: float = 1e-2,
                    include_zero: bool = True) -> np.ndarray:
    """``n`` log-spaced checkpoints from ``alpha_min`` to ``alpha_max`` (plus ``0`` if asked):
    :func:`td_lib.core.run.checkpoints` in continuous time.

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
    return checkpoints(alpha_max, num=n, start=alpha_min, zero=include_zero, integer=False)


@dataclass
class _Batch:
    """The flattened problem: ``B`` parameter sets with their states and eq. 17/18's inputs."""

    kind: str
    shape: tuple  # the broadcast batch shape
    R: np.ndarray  # (B, *rs)
    Q: np.ndarray  # (B, *qs)
    S: np.ndarray  # (B, P, P)
    eta: np.ndarray  # (B,)
    sigma: np.ndarray
    T: np.ndarray

    def rhs(self, idx, R, Q):
        """eq. 17 (CNN) or 18 (LCN) for the elements ``idx`` at the state ``(R, Q)``."""
        return rhs(self.kind, R, Q, self.S[idx], T=self.T[idx], eta=self.eta[idx], sigma=self.sigma[idx],
                   validate=False)

    def describe(self, idx) -> str:
        """The parameter sets ``idx`` (at most five), for an error message."""
        out = []
        for i in np.atleast_1d(idx)[:5]:
            c = self.S[i][0, 1] if self.S[i].shape[-1] > 1 else 0.0
            out.append(f"(batch index {int(i)}: eta={self.eta[i]:.4g}, c=S[0,1]={c:.4g}, "
                       f"sigma={self.sigma[i]:.4g}, T={self.T[i]:.4g})")
        more = "" if np.size(idx) <= 5 else f" and {np.size(idx) - 5} more"
        return ", ".join(out) + more

    def bad_states(self, R, Q, max_value) -> np.ndarray:
        """``(B,)`` mask: non-finite, beyond ``max_value``, or a preactivation covariance that is
        not positive semi-definite (eqs 43/72)."""
        bad = ~within_bounds((R, Q), max_value)
        ok = ~bad
        if np.any(ok):
            C = _cov(self.kind, R[ok], Q[ok], self.S[ok], self.T[ok], validate=False)
            lo = np.linalg.eigvalsh(C).min(-1)
            scale = np.maximum(1.0, np.abs(C).max((-1, -2)))
            nonpsd = np.zeros(len(R), bool)
            nonpsd[np.flatnonzero(ok)] = lo < -1e-8 * scale
            bad |= nonpsd
        return bad


def _batch(kind, R0, Q0, S, T, eta, sigma) -> _Batch:
    """Validate the state and parameters of :func:`integrate` (``S`` checked already) and broadcast
    them to one batch."""
    P = S.shape[-1]
    R0, Q0, _, _ = check_state(kind, R0, Q0, P)
    eta, sigma, T = (np.asarray(v, float) for v in (eta, sigma, T))
    for name, v, pos in (("eta", eta, True), ("sigma", sigma, False), ("T", T, True)):
        if not np.all(np.isfinite(v)) or np.any(v <= 0 if pos else v < 0):
            raise ValueError(f"{name} must be finite and {'> 0' if pos else '>= 0'}, got {v}")
    nR, nQ = (2, 2) if kind == "cnn" else (3, 4)
    batch = np.broadcast_shapes(R0.shape[:-nR], Q0.shape[:-nQ], S.shape[:-2], eta.shape,
                                sigma.shape, T.shape)
    B = int(np.prod(batch, dtype=int))

    def flat(x, tail):
        return np.broadcast_to(x, batch + tail).reshape((B,) + tail).copy()

    return _Batch(kind, batch, flat(R0, R0.shape[-nR:]), flat(Q0, Q0.shape[-nQ:]),
                  np.broadcast_to(S, batch + (P, P)).reshape(B, P, P), flat(eta, ()), flat(sigma, ()), flat(T, ()))


def _run_rk4(b: _Batch, alphas, *, h_max, limit, max_value, on_divergence, steady_tol, progress):
    """The RK4 stepper over the batch: steps capped at the checkpoints, diverged elements
    stopped (or an error), stationary ones frozen. Returns ``((R_out, Q_out), n_steps)``."""
    record = CheckpointRecord(alphas, (b.R, b.Q), limit)
    stepper = RK4Stepper(b.rhs, (b.R, b.Q), h_max)
    active = record.pending()
    horizon = np.minimum(alphas[-1], alphas[np.maximum(record.end - 1, 0)])
    est = int(np.ceil(np.max(horizon / h_max))) + alphas.size
    with ticker(est, progress, f"{b.kind} ODE") as advance:
        while active.size:
            target = record.target(active)
            h, y_new, slope = stepper.propose(active, target)
            good = within_bounds(y_new, max_value)
            if not np.all(good):
                bad = active[~good]
                if on_divergence == "raise":
                    raise DivergenceError(
                        f"{b.kind.upper()} ODE diverged (NaN/inf, |entries| > {max_value:g}, or the "
                        f"state left the positive semi-definite cone) at alpha ~ "
                        f"{stepper.time[bad[0]]:.4g} for {b.describe(bad)}; reduce eta or dt")
                record.abandon(bad)
                active, h, target = active[good], h[good], target[good]
                y_new, slope = tuple(v[good] for v in y_new), tuple(v[good] for v in slope)
                if active.size == 0:
                    break
            stepper.accept(active, h, target, y_new)
            advance(1)
            hit = stepper.time[active] >= target
            steady = is_steady(slope, y_new[1], b.eta[active], steady_tol)
            record.store(active, stepper.y, hit, steady)
            active = record.pending(active)
    return record.out, stepper.n_steps


def _run_solve_ivp(b: _Batch, alphas, *, rtol, atol, max_value):
    """The batch flattened into one system for :func:`scipy.integrate.solve_ivp` (``RK45``).
    Returns ``((R_out, Q_out), 0)``."""
    from scipy.integrate import solve_ivp

    B, rs, qs = len(b.R), b.R.shape[1:], b.Q.shape[1:]
    nr = int(np.prod(rs))
    allidx = np.arange(B)

    def fun(_t, y):
        Rx = y[: B * nr].reshape((B,) + rs)
        Qx = y[B * nr:].reshape((B,) + qs)
        dR, dQ = b.rhs(allidx, Rx, Qx)
        if not (np.all(np.isfinite(dR)) and np.all(np.isfinite(dQ))):
            bad = allidx[b.bad_states(Rx, Qx, max_value)]
            raise DivergenceError(f"{b.kind.upper()} ODE diverged for {b.describe(bad if bad.size else allidx)}")
        return np.concatenate([dR.ravel(), dQ.ravel()])

    y0 = np.concatenate([b.R.ravel(), b.Q.ravel()])
    sol = solve_ivp(fun, (0.0, float(alphas[-1])), y0, t_eval=alphas, method="RK45", rtol=rtol, atol=atol)
    if not sol.success:
        raise DivergenceError(f"solve_ivp failed: {sol.message}")
    n_ck = alphas.size
    return (sol.y[: B * nr].T.reshape((n_ck, B) + rs), sol.y[B * nr:].T.reshape((n_ck, B) + qs)), 0


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
    b = _batch(kind, R0, Q0, S, T, eta, sigma)
    alphas = V.array("alphas", alphas, ndim=1)
    if alphas.size == 0 or np.any(alphas < 0) or np.any(np.diff(alphas) <= 0):
        raise ValueError("alphas must be a non-empty, strictly increasing array of times >= 0")
    if dt is not None:
        dt = V.finite("dt", dt, positive=True)
    dtau = V.finite("dtau", dtau, positive=True)
    if method == "solve_ivp":
        (R, Q), n_steps = _run_solve_ivp(b, alphas, rtol=rtol, atol=atol, max_value=max_value)
    else:
        limit = None if alpha_limit is None else np.broadcast_to(
            np.asarray(alpha_limit, float), b.shape).reshape(-1)
        h_max = np.full(len(b.eta), dt) if dt is not None else dtau / b.eta
        (R, Q), n_steps = _run_rk4(b, alphas, h_max=h_max, limit=limit, max_value=max_value,
                                   on_divergence=on_divergence, steady_tol=steady_tol, progress=progress)
    n_ck, B, P = alphas.size, len(b.eta), b.S.shape[-1]
    with np.errstate(invalid="ignore"):
        eg = eg_from_covariance(_cov(kind, R, Q, np.broadcast_to(b.S, (n_ck, B, P, P)),
                                     np.broadcast_to(b.T, (n_ck, B)), validate=False))
    params = {"eta": b.eta.reshape(b.shape), "sigma": b.sigma.reshape(b.shape), "T": b.T.reshape(b.shape),
              "S": S}
    return Trajectory(t=alphas, R=R.reshape((n_ck,) + b.shape + R.shape[2:]),
                      Q=Q.reshape((n_ck,) + b.shape + Q.shape[2:]), eg=eg.reshape((n_ck,) + b.shape),
                      kind=kind, batch_shape=b.shape, n_steps=n_steps, params=params)


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
