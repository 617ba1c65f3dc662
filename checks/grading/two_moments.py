"""Grading references of §7.1 "Two moments" (notebook ``td2_7_1_two_moments``).

Hidden tests and :mod:`checks.two_moments` import these; students do not have them (the delegation
guard :data:`td_lib.own_work.COUNTERPARTS` switches them off during a graded call).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate
from scipy.stats import norm

__all__ = ["e_tanh2_gauss"]


def e_tanh2_gauss(w: float) -> float:
    """:math:`\\mathbb E[\\tanh^2(wx)]` for :math:`x\\sim\\mathcal N(0,1)` by adaptive quadrature
    (``scipy.integrate.quad`` on :math:`[0,\\infty)`, the integrand being even; accurate to
    ~1e-13). The reference of Exercise 7.1.C.3 (``tanh_sq_moment(w, "gaussian")``).

    References
    ----------
    Seed §7.1, Exercise 7.1.C.3.

    Examples
    --------
    >>> round(e_tanh2_gauss(1.0), 4)
    0.3943
    """
    f = lambda x: math.tanh(w * x) ** 2 * norm.pdf(x)
    return 2 * integrate.quad(f, 0, np.inf, epsabs=1e-16, epsrel=1e-13, limit=200)[0]
