"""Batched classical RK4 with per-element checkpoints (the engine of :func:`~td_lib.cnn_lcn.integrate`).

One responsibility per piece, as in :mod:`scipy.integrate._ivp` (``rk.py``: the step, the
stepper; ``ivp.py``: the driver):

* :func:`rk4_step` -- one classical Runge-Kutta step of a batch of states, each element with
  its own step size;
* :class:`RK4Stepper` -- the state and time of every batch element, advanced by steps capped
  at each element's next checkpoint;
* :class:`CheckpointRecord` -- which checkpoint each element reaches next, the states stored
  there, and the elements that stop early (diverged, stationary, past their horizon);
* :func:`within_bounds` and :func:`is_steady` -- the divergence and steady-state tests.

A state is a tuple of arrays whose first axis runs over the batch elements (for the CNN/LCN
ODEs: ``(R, Q)``); nothing here knows the equations, the driver passes the right-hand side.

References
----------
Mori et al. (CNN vs LCN), eqs 17-18 (the ODEs integrated); Press et al., *Numerical Recipes*,
§17.1 (classical fourth-order Runge-Kutta).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["rk4_step", "RK4Stepper", "CheckpointRecord", "within_bounds", "is_steady"]

State = tuple  # a tuple of arrays, first axis = batch elements


def _per_element(h: np.ndarray, like: np.ndarray) -> np.ndarray:
    """``h`` of shape ``(n,)`` reshaped to broadcast against ``like`` of shape ``(n, ...)``."""
    return h.reshape((-1,) + (1,) * (like.ndim - 1))


def rk4_step(fun: Callable[..., Sequence[np.ndarray]], y: Sequence[np.ndarray],
             h: np.ndarray) -> tuple[State, State]:
    """One classical RK4 step for a batch of states, element ``i`` with step ``h[i]``.

    With ``k1 = f(y)``, ``k2 = f(y + h k1 / 2)``, ``k3 = f(y + h k2 / 2)``, ``k4 = f(y + h k3)``,
    the step is ``y + h s`` with the slope ``s = (k1 + 2 k2 + 2 k3 + k4) / 6`` (per component
    of the state, per batch element).

    Parameters
    ----------
    fun : ``fun(*y) -> slopes``, the right-hand side: one array per component of ``y``, same
        shapes (the time does not enter: the CNN/LCN ODEs are autonomous).
    y : the components of the state, each ``(n, ...)`` (first axis: batch elements).
    h : ``(n,)`` step sizes.

    Returns
    -------
    y_new, slope : tuples with one ``(n, ...)`` array per component.

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 17-18 (the ODEs it integrates); Press et al., *Numerical
    Recipes*, §17.1 (classical fourth-order Runge-Kutta).

    Examples
    --------
    >>> y_new, s = rk4_step(lambda y: (-y,), (np.ones((2, 1)),), np.array([0.1, 0.2]))
    >>> np.round(y_new[0].ravel(), 8).tolist()  # exp(-h) to O(h^5)
    [0.9048375, 0.81873333]
    """
    y = tuple(y)
    hs = tuple(_per_element(h, v) for v in y)

    def stage(k, c):
        return fun(*(v + c * hv * kv for v, hv, kv in zip(y, hs, k)))

    k1 = fun(*y)
    k2 = stage(k1, 0.5)
    k3 = stage(k2, 0.5)
    k4 = tuple(fun(*(v + hv * kv for v, hv, kv in zip(y, hs, k3))))
    slope = tuple((a + 2 * b + 2 * c + d) / 6.0 for a, b, c, d in zip(k1, k2, k3, k4))
    return tuple(v + hv * s for v, hv, s in zip(y, hs, slope)), slope


class RK4Stepper:
    """The states and times of a batch, advanced by RK4 steps capped at each element's target.

    Parameters
    ----------
    fun : ``fun(idx, *y) -> slopes``, the right-hand side for the batch elements ``idx``.
    y0 : initial state components, each ``(B, ...)`` (copied).
    h_max : ``(B,)`` largest step of each element.

    Attributes
    ----------
    y : the current state (list of ``(B, ...)`` arrays); ``time`` : ``(B,)`` current times (from 0);
    n_steps : steps taken (each moves every active element).
    """

    def __init__(self, fun: Callable[..., Sequence[np.ndarray]], y0: Sequence[np.ndarray],
                 h_max: np.ndarray):
        self.fun = fun
        self.y = [np.array(v, dtype=float) for v in y0]
        self.h_max = np.asarray(h_max, float)
        self.time = np.zeros(self.h_max.size)
        self.n_steps = 0

    def propose(self, idx: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, State, State]:
        """A step of the elements ``idx`` towards their times ``target``: ``(h, y_new, slope)``
        with ``h = min(h_max, target - time)`` (the state is not changed; see :meth:`accept`)."""
        h = np.minimum(self.h_max[idx], target - self.time[idx])
        y_new, slope = rk4_step(lambda *y: self.fun(idx, *y), [v[idx] for v in self.y], h)
        return h, y_new, slope

    def accept(self, idx: np.ndarray, h: np.ndarray, target: np.ndarray, y_new: Sequence[np.ndarray]) -> None:
        """Take the step ``h`` of the elements ``idx`` to ``y_new``; an element whose step was
        capped at its target lands on it exactly (no rounding drift in the time)."""
        for v, new in zip(self.y, y_new):
            v[idx] = new
        self.time[idx] = np.where(h == target - self.time[idx], target, self.time[idx] + h)
        self.n_steps += 1


class CheckpointRecord:
    """The checkpoint bookkeeping of a batch: states at the recording times, per element.

    Parameters
    ----------
    grid : ``(n,)`` increasing checkpoint times ``>= 0``.
    y0 : initial state components, each ``(B, ...)``; stored at a checkpoint ``0``.
    limit : optional ``(B,)`` horizons: checkpoints beyond an element's horizon are not
        integrated and hold NaN.

    Attributes
    ----------
    out : one ``(n, B, ...)`` array per state component (NaN where never reached).
    next : ``(B,)`` index of each element's next checkpoint; ``end`` : ``(B,)`` one past its last.
    """

    def __init__(self, grid: np.ndarray, y0: Sequence[np.ndarray], limit: np.ndarray | None = None):
        self.grid = grid
        n, B = grid.size, len(y0[0])
        self.out = [np.empty((n, B) + v.shape[1:]) for v in y0]
        self.next = np.zeros(B, dtype=int)
        if grid[0] == 0.0:
            for o, v in zip(self.out, y0):
                o[0] = v
            self.next[:] = 1
        if limit is None:
            self.end = np.full(B, n)
        else:
            last = np.searchsorted(grid, limit, side="right")  # checkpoints <= limit
            for i in np.flatnonzero(last < n):
                self._fill_nan(i, max(last[i], self.next[i]))
            self.end = np.maximum(last, self.next)

    def _fill_nan(self, i: int, start: int) -> None:
        for o in self.out:
            o[start:, i] = np.nan

    def pending(self, idx: np.ndarray | None = None) -> np.ndarray:
        """The elements of ``idx`` (default: all) with checkpoints still to reach."""
        idx = np.arange(self.next.size) if idx is None else idx
        return idx[self.next[idx] < self.end[idx]]

    def target(self, idx: np.ndarray) -> np.ndarray:
        """The next checkpoint time of each element of ``idx``."""
        return self.grid[self.next[idx]]

    def abandon(self, idx: np.ndarray) -> None:
        """Stop the elements ``idx`` (diverged): NaN at every checkpoint not yet reached."""
        for i in idx:
            self._fill_nan(i, self.next[i])
            self.next[i] = self.grid.size

    def store(self, idx: np.ndarray, y: Sequence[np.ndarray], hit: np.ndarray, steady: np.ndarray) -> None:
        """After a step of the elements ``idx`` (state ``y``, full batch): record those that
        reached their checkpoint (``hit``); a ``steady`` element is frozen, its state repeated at
        every remaining checkpoint up to its horizon."""
        for j in np.flatnonzero(hit | steady):
            i = idx[j]
            if steady[j]:
                for o, v in zip(self.out, y):
                    o[self.next[i]:self.end[i], i] = v[i]
                self.next[i] = self.grid.size
            else:
                for o, v in zip(self.out, y):
                    o[self.next[i], i] = v[i]
                self.next[i] += 1


def within_bounds(y: Sequence[np.ndarray], max_value: float) -> np.ndarray:
    """``(n,)`` mask of the elements whose state components are all finite and at most
    ``max_value`` in absolute value (the rest have diverged).

    Examples
    --------
    >>> within_bounds((np.array([[1.0], [np.nan], [5.0]]),), 2.0).tolist()
    [True, False, False]
    """
    n = len(y[0])
    good = np.ones(n, dtype=bool)
    with np.errstate(invalid="ignore"):
        for v in y:
            flat = v.reshape(n, -1)
            good &= np.isfinite(flat).all(1) & (np.abs(flat).max(1) <= max_value)
    return good


def is_steady(slope: Sequence[np.ndarray], scale: np.ndarray, rate_unit: np.ndarray,
              tol: float | None) -> np.ndarray:
    """``(n,)`` mask of the stationary elements: ``max |slope| / rate_unit / max(1, max |scale|)
    < tol`` (all ``False`` when ``tol`` is ``None``). For the CNN/LCN ODEs ``rate_unit = eta``
    (a rate per unit of ``tau = eta alpha``) and ``scale = Q``.

    Examples
    --------
    >>> is_steady((np.array([[1e-12], [1.0]]),), np.ones((2, 1)), np.ones(2), 1e-9).tolist()
    [True, False]
    """
    n = len(scale)
    if tol is None:
        return np.zeros(n, dtype=bool)
    rate = np.max([np.abs(s).reshape(n, -1).max(1) for s in slope], axis=0) / rate_unit
    rate /= np.maximum(1.0, np.abs(scale).reshape(n, -1).max(1))
    return rate < tol
