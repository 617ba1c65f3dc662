"""Early times of the CNN / LCN dynamics (Mori et al., eqs 27-30, App. H, eqs 102-120).

* :func:`initial_error` -- eq. 28 (eps_g at the leading-order initial state);
* :func:`early_time_coefficients` -- ``A``, ``B`` of eq. 27 computed from the ODE itself
  (directional derivative of eps_g along the RHS at the leading-order state);
* :func:`early_time_coefficients_closed_form` -- the appendix's eqs 104-115 (with the
  corrected ``V_d`` of eq. 108, :func:`v_closed_form`);
* :func:`optimal_early_eta` (``A / 2B``), :func:`c_star_slope` (``c0`` of eq. 119) and
  :func:`c_star_slope_numeric` (from the numerical ``A``, ``B``).

References
----------
Mori et al., *exact online-SGD dynamics of CNN vs LCN students*, eqs 27-30 and 102-120.
"""

from __future__ import annotations

import numpy as np

from td_lib.cnn_lcn.init import leading_order_init
from td_lib.cnn_lcn.model import KINDS, check_S, generalisation_error, input_covariance
from td_lib.cnn_lcn.odes import ode_terms
from td_lib.core import validate as V

__all__ = ["initial_error", "early_time_coefficients", "early_time_coefficients_closed_form",
           "v_closed_form", "optimal_early_eta", "c_star_slope", "c_star_slope_numeric"]


def initial_error(kind: str, *, P: int, T: float = 1.0, c: float = 0.0) -> float:
    """Eq. 28: eps_g at the leading-order initial state (eq. 103 with chi = c or 0).

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 28 and 103.

    Examples
    --------
    >>> round(initial_error("cnn", P=4, T=1.0, c=0.0), 12)  # 8 asin(1/2) / pi + 4/3
    2.666666666667
    >>> round(initial_error("cnn", P=4, c=0.5) - initial_error("lcn", P=4, c=0.5), 6)
    1.930335
    """
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


def early_time_coefficients(kind: str, *, P: int, k_s: int, k_t: int, T: float = 1.0,
                            sigma: float = 0.0, c: float = 0.0, S=None, state=None
                            ) -> tuple[float, float]:
    """``(A, B)`` of eq. 27 from the ODE: ``d eps_g / d alpha |_0 = -eta A + eta^2 B``.

    ``A = -grad(eps_g) . (F_R, F_Q) / k_s`` and ``B = grad(eps_g) . (0, G_Q) / k_s^2`` at the
    leading-order state (or ``state=(R, Q)``), with the gradient taken as a Richardson-extrapolated
    central difference along the direction (relative error ~1e-11). ``S`` overrides eq. 3.

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 27 (App. H, eqs 104-115 in closed form).

    Examples
    --------
    >>> A, B = early_time_coefficients("lcn", P=4, k_s=1, k_t=1, T=1.0, sigma=1.0, c=0.0)
    >>> round(A, 6), round(B, 6)
    (1.080759, 0.944096)
    """
    S = input_covariance(P, c) if S is None else check_S(S, P)
    R, Q = leading_order_init(kind, P=P, k_s=k_s, k_t=k_t) if state is None else state
    F_R, F_Q, G_Q = ode_terms(kind, R, Q, S, T, sigma)
    A = -_directional(kind, R, Q, S, T, F_R / k_s, F_Q / k_s)
    B = _directional(kind, R, Q, S, T, np.zeros_like(F_R), G_Q / k_s**2)
    return float(A), float(B)


def _omega(x):
    return 1.0 / np.sqrt(4.0 - x * x)


def v_closed_form(*, P, T, sigma, chi, c, corrected: bool = True):
    """``(V_d, V_o)`` of eq. 108 at student correlation ``chi`` (teacher correlation ``c``).

    ``corrected=False`` reproduces the printed ``V_d``; the printed version has its factor
    ``chi`` on the wrong arcsine: the ``I4(lh_p, lh_p, lh_p, lh_r)`` terms give
    ``2(P-1) arcsin(chi / (2 sqrt(2(3-chi^2))))`` and the ``I4(lh_p, lh_p, lh_r, lh_r)`` terms
    ``(P-1) arcsin((3-2chi^2) / (2(3-chi^2)))`` (the page prints ``1`` and ``chi(3-2chi^2)`` as the
    numerators). ``V_o`` is correct as printed. ``eps_T`` (eq. 102) always uses the data
    correlation ``c``.

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 102 and 108 (with the correction above).
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


def early_time_coefficients_closed_form(kind: str, *, P: int, k_s: int, T: float = 1.0,
                                        sigma: float = 0.0, c: float = 0.0,
                                        corrected: bool = True) -> tuple[float, float]:
    """``(A, B)`` of eq. 27 from the appendix's closed forms (eqs 107-108, 112-115).

    ``corrected=True`` (default) uses the corrected ``V_d`` (see :func:`v_closed_form`), which
    agrees with :func:`early_time_coefficients` (exact, from the ODE) to ~1e-9;
    ``corrected=False`` is the page as printed (``B`` off by up to ~7 % at ``c = 0`` for the
    CNN). ``A`` is correct as printed.

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 107-108 and 112-115.

    Examples
    --------
    >>> A, B = early_time_coefficients_closed_form("lcn", P=4, k_s=1, T=1.0, sigma=1.0, c=0.0)
    >>> round(A, 6), round(B, 6)
    (1.080759, 0.944096)
    """
    V.choice("kind", kind, KINDS)
    sc = 1 + (P - 1) * c
    if kind == "cnn":
        w = _omega(c)
        Hd = P / np.pi * (1 / np.sqrt(3) + (P - 1) * c * w)
        Ho = P / np.pi * (c / np.sqrt(3) + (2 + 2 * (P - 2) * c - (P - 1) * c * c) * w)
        Vd, Vo = v_closed_form(P=P, T=T, sigma=sigma, chi=c, c=c, corrected=corrected)
        A = 4 * T * P**2 * sc**2 / (np.pi**2 * (1 + T)) + 2 * (Hd**2 / k_s + (1 - 1 / k_s) * Ho**2)
        B = P * (Vd * (Hd / k_s + (1 - 1 / k_s) * c * Ho)
                 + Vo * ((P - 1) * c * Hd / k_s + (1 - 1 / k_s) * (1 + (P - 2) * c) * Ho))
        return float(A), float(B)
    nd = c * c + (1 - c * c) / k_s
    no = (1 - c * c) * (1 - 1 / k_s) + (P - 1) * c * c
    Vd, Vo = v_closed_form(P=P, T=T, sigma=sigma, chi=0.0, c=c, corrected=corrected)
    A = 4 * T * P * sc**2 / (np.pi**2 * (1 + T)) + 2 * P / np.pi**2 * (nd / 3 + no)
    B = P / np.pi * (nd / np.sqrt(3) * Vd + no * Vo)
    return float(A), float(B)


def optimal_early_eta(A, B):
    """The learning rate ``A / (2 B)`` minimising eq. 27 at small alpha (App. H, eq. 116).

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 116.
    """
    return np.asarray(A, float) / (2.0 * np.asarray(B, float))


def c_star_slope(*, P: int, k_s: int, T: float = 1.0, sigma: float = 0.0) -> float:
    """``c0`` of eq. 119 (with ``beta`` of eq. 120), as printed.

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 119-120.

    Examples
    --------
    >>> round(c_star_slope(P=4, k_s=1, T=1.0, sigma=1.0), 6)
    0.242925
    """
    eb = 2 * P / np.pi * np.arcsin(T / (1 + T)) + sigma**2
    beta = (2 / (3 * k_s) * (eb + (P - 1) / 3 + 2 / np.pi * np.arcsin(0.25))
            + (1 - 1 / k_s) * (eb + (P - 2) / 3 + 4 / np.pi * np.arcsin(1 / 3)))
    return float((1 + 2 * T / (1 + T) - 2 / (3 * k_s)) ** 2 / (np.pi * beta))


def c_star_slope_numeric(*, P: int, k_s: int, k_t: int = 1, T: float = 1.0, sigma: float = 0.0
                         ) -> float:
    """``c0 = pi Delta(0) / (P (P-1))`` from eq. 118 linearised, with ``A``, ``B`` from the ODE.

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 117-118 (the boundary of eq. 117, linearised in eq. 118).
    """
    kw = dict(P=P, k_s=k_s, k_t=k_t, T=T, sigma=sigma, c=0.0)
    Ac, Bc = early_time_coefficients("cnn", **kw)
    Al, Bl = early_time_coefficients("lcn", **kw)
    delta = Ac**2 / (4 * Bc) - Al**2 / (4 * Bl)
    return float(np.pi * delta / (P * (P - 1)))
