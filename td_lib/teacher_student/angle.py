"""The angle dynamics of one student node pulled by one teacher node (Tian 2020, eq. 12).

``θ̇ = −α ψ(θ) sin θ`` with ``ψ(θ) = (π − θ)/(2π)`` from Theorem 6 (unit vectors,
``x ~ N(0, I_d)``): its right-hand side, an integrator, exact escape times from near
``θ = π`` by quadrature, their ``1/ε`` asymptotics with the constant the paper's "∼" leaves
unstated, and the same escape time integrated from Theorem 6's vector itself for any ``σ``
and ``‖w_k‖`` (:func:`escape_time_theorem6`).

Examples
--------
>>> import numpy as np
>>> float(angle_velocity(np.pi / 2, 1.0))
-0.25
>>> round(float(escape_time(theta_start=np.pi - 1e-3, theta_end=np.pi / 2)), 2)
6281.02
>>> round(float(escape_time_asymptotic(eps=1e-3, theta_end=np.pi / 2)), 2)
6279.19
"""

from __future__ import annotations

import numpy as np
from scipy import integrate

from td_lib.core import validate as V
from td_lib.teacher_student.theory import relu_cross_moment

__all__ = ["psi_gaussian", "angle_velocity", "integrate_angle", "escape_time",
           "escape_time_asymptotic", "escape_time_constant", "escape_time_theorem6"]


def _regular_part(u: float) -> float:
    """``1/(u sin u) − 1/u²``, smooth on [0, π): its series ``1/6 + 7u²/360`` below 1e-4."""
    return 1.0 / (u * np.sin(u)) - 1.0 / u**2 if u > 1e-4 else 1.0 / 6 + 7 * u * u / 360


def psi_gaussian(theta) -> np.ndarray:
    """``ψ(θ) = (π − θ)/(2π)``: the coefficient of ``w*`` in Theorem 6 (unit vectors, σ = 1).

    Assumption 2's ``ψ`` for Gaussian inputs; ``ψ(π) = 0``.

    References
    ----------
    Tian (2020), Theorem 6 and Assumption 2.
    """
    th = V.array("theta", theta)
    if np.any((th < 0) | (th > np.pi)):
        raise ValueError("theta must lie in [0, π]")
    return (np.pi - th) / (2 * np.pi)


def angle_velocity(theta, alpha: float = 1.0) -> np.ndarray:
    """Right-hand side of eq. 12, ``θ̇ = −α ψ(θ) sin θ`` with ``ψ = psi_gaussian``.

    Near ``θ = π`` it behaves as ``−α (π − θ)²/(2π)``; near 0 as ``−α θ/2``.

    References
    ----------
    Tian (2020), eq. 12.
    """
    alpha = V.finite("alpha", alpha, positive=True)
    th = V.array("theta", theta)
    return -alpha * psi_gaussian(th) * np.sin(th)


def integrate_angle(theta0, t, *, alpha: float = 1.0, rtol: float = 1e-10,
                    atol: float = 1e-12) -> np.ndarray:
    """Integrate eq. 12 from ``theta0`` (scalar or array of starts) to the times ``t``.

    Uses the variable ``u = log(π − θ)``, in which the slow approach away from ``π`` is
    well conditioned: ``u̇ = α sin(π − θ)/(2π)``. Returns shape ``(len(t),) + theta0.shape``.

    References
    ----------
    Tian (2020), eq. 12.
    """
    alpha = V.finite("alpha", alpha, positive=True)
    th0 = V.array("theta0", theta0)
    if np.any((th0 <= 0) | (th0 >= np.pi)):
        raise ValueError("theta0 must lie in (0, π)")
    t = V.array("t", t, ndim=1)
    if t.size == 0 or np.any(np.diff(t) < 0) or t[0] < 0:
        raise ValueError("t must be a non-empty, non-decreasing array of times >= 0")
    shape = th0.shape
    u0 = np.log(np.pi - th0.ravel())

    def rhs(_, u):
        return alpha * np.sin(np.exp(u)) / (2 * np.pi)

    if t[-1] == 0:
        return np.broadcast_to(th0, (t.size,) + shape).copy()
    sol = integrate.solve_ivp(rhs, (0.0, float(t[-1])), u0, t_eval=t, rtol=rtol, atol=atol,
                              method="DOP853")
    if not sol.success:  # pragma: no cover
        raise RuntimeError(sol.message)
    return (np.pi - np.exp(sol.y.T)).reshape((t.size,) + shape)


def escape_time(*, theta_start, theta_end: float, alpha: float = 1.0) -> np.ndarray:
    """Exact time for eq. 12 to go from ``theta_start`` down to ``theta_end`` (quadrature).

    ``t = ∫_{θ_end}^{θ_start} dθ / (α ψ(θ) sin θ) = (2π/α) ∫_{π−θ_start}^{π−θ_end}
    du / (u sin u)``, evaluated as ``(2π/α)[1/ε − 1/u_1 + ∫ (1/(u sin u) − 1/u²) du]`` with
    ``ε = π − θ_start``, ``u_1 = π − θ_end`` (the bracketed integrand is smooth). Vectorised
    over ``theta_start``.

    References
    ----------
    Tian (2020), eq. 12 and the escape time ``t_0`` after it.

    Examples
    --------
    >>> escape_time(theta_start=np.array([2.0, 3.0]), theta_end=1.0, alpha=2.0).round(6).tolist()
    [2.064568, 22.056768]
    """
    alpha = V.finite("alpha", alpha, positive=True)
    ts = V.array("theta_start", theta_start)
    te = V.in_interval("theta_end", theta_end, 0.0, np.pi, closed="neither")
    if np.any((ts <= 0) | (ts >= np.pi)):
        raise ValueError("theta_start must lie in (0, π)")
    if np.any(ts < te):
        raise ValueError("theta_start must be >= theta_end (θ decreases under eq. 12)")
    eps = np.pi - ts
    u1 = np.pi - te

    rest = np.vectorize(lambda e: integrate.quad(_regular_part, e, u1, epsabs=1e-13, epsrel=1e-12)[0])(eps)
    return (2 * np.pi / alpha) * (1.0 / eps - 1.0 / u1 + rest)


def escape_time_asymptotic(*, eps, theta_end: float, alpha: float = 1.0) -> np.ndarray:
    """The seed's asymptotic escape time with its constant: ``(2π/α)(1/ε − 1/(π − θ_end))``.

    This is the exact time for the quadratic approximation ``θ̇ = −α(π − θ)²/(2π)`` of eq. 12
    near ``π``; the exact time differs from it by ``O(1)`` as ``ε → 0`` (see
    :func:`escape_time_constant`).

    References
    ----------
    Tian (2020), the escape time ``t_0 ∼ 1/ε − 1/(π − θ_0)`` after eq. 12 (its constant
    ``2π/α`` written out).
    """
    alpha = V.finite("alpha", alpha, positive=True)
    e = V.array("eps", eps)
    if np.any(e <= 0):
        raise ValueError("eps must be > 0")
    te = V.in_interval("theta_end", theta_end, 0.0, np.pi, closed="neither")
    return (2 * np.pi / alpha) * (1.0 / e - 1.0 / (np.pi - te))


def escape_time_constant(theta_end: float, alpha: float = 1.0) -> float:
    """``lim_{ε→0} [escape_time(π − ε) − escape_time_asymptotic(ε)]``
    ``= (2π/α) ∫_0^{π−θ_end} (1/(u sin u) − 1/u²) du``.

    References
    ----------
    Tian (2020), eq. 12 (the ``O(1)`` term its ``t_0 ∼ …`` leaves out).

    Examples
    --------
    >>> round(escape_time_constant(np.pi / 2, 1.0), 4)
    1.833
    """
    alpha = V.finite("alpha", alpha, positive=True)
    te = V.in_interval("theta_end", theta_end, 0.0, np.pi, closed="neither")
    u1 = np.pi - te

    return float(2 * np.pi / alpha * integrate.quad(_regular_part, 0.0, u1, epsabs=1e-13,
                                                    epsrel=1e-12)[0])



def escape_time_theorem6(*, eps: float, theta_end: float, alpha: float = 1.0,
                         sigma: float = 1.0, norm_k: float = 1.0) -> float:
    """Escape time of eq. 12 computed from Theorem 6's vector itself, for any ``σ`` and ``‖w_k‖``.

    One teacher node (``‖w*‖ = 1``) pulls one student node of norm ``norm_k`` with strength
    ``α``; the student's direction moves by ``P⊥ ẇ_k/‖w_k‖`` with ``ẇ_k = α M(w*, w_k)``
    (:func:`relu_cross_moment` with ``sigma``; the self-term is parallel to ``w_k``). The angle
    is integrated numerically from ``π − eps`` to ``theta_end`` (variable ``log(π − θ)``),
    independently of :func:`psi_gaussian`. Near ``π`` the result is
    ``(2π‖w_k‖/(ασ²))(1/ε − 1/(π − θ_end)) + O(1)``: the paper's ``t_0 ∼ 1/ε − 1/(π − θ_0)``
    with its unstated constant.

    References
    ----------
    Tian (2020), Theorem 6 and eq. 12.
    """
    eps = V.in_interval("eps", eps, 0.0, np.pi, closed="neither")
    theta_end = V.in_interval("theta_end", theta_end, 0.0, np.pi - eps, closed="neither")
    alpha = V.finite("alpha", alpha, positive=True)
    sigma = V.finite("sigma", sigma, positive=True)
    norm_k = V.finite("norm_k", norm_k, positive=True)
    ws = np.array([1.0, 0.0])

    def theta_dot(th):
        wk = norm_k * np.array([np.cos(th), np.sin(th)])
        g = alpha * relu_cross_moment(ws, wk, sigma=sigma)
        uk = wk / norm_k
        perp = g - (g @ uk) * uk                      # P⊥ ẇ_k
        # d/dt ŵ_k = P⊥ẇ_k/‖w_k‖; the in-plane unit vector of increasing θ is (−sin θ, cos θ)
        return float(perp @ np.array([-np.sin(th), np.cos(th)])) / norm_k

    def rhs(_, u):  # u = log(π − θ)
        th = np.pi - np.exp(u[0])
        return [-theta_dot(th) / np.exp(u[0])]

    hit = lambda _, u: u[0] - np.log(np.pi - theta_end)  # noqa: E731
    hit.terminal, hit.direction = True, 1
    guess = 2 * np.pi * norm_k / (alpha * sigma**2) * (1 / eps)
    sol = integrate.solve_ivp(rhs, (0.0, 10 * guess + 100), [np.log(eps)], events=hit,
                              rtol=1e-11, atol=1e-13, method="DOP853")
    if not sol.t_events[0].size:  # pragma: no cover
        raise RuntimeError("the angle did not reach theta_end")
    return float(sol.t_events[0][0])

