"""Baked regions of §7.4's tests (teacher nodes):
demo reference results and test expectations (see :mod:`checks.grading.bake`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from checks.grading.registry import baked

__all__: list[str] = []


# ---------------------------------------------------------------------- Exercise 7.4.A tests
@baked
def theorem6_closed_form_hidden() -> dict[str, Any]:
    """test_ex74A_closed_form (hidden): Theorem 6 at 20 random pairs (w*, w_k) in 2 <= d <= 11,
    drawn from default_rng(2024)."""
    from td_lib import teacher_student as ts

    rng = np.random.default_rng(2024)
    cases, refs = [], []
    for _ in range(20):
        d = int(rng.integers(2, 12))
        ws, wk = rng.standard_normal(d) * rng.uniform(0.1, 5), rng.standard_normal(d)
        wk *= rng.uniform(0.1, 5)
        cases.append((ws, wk))
        refs.append(ts.relu_cross_moment(ws, wk))
    return {"_cases": cases, "_refs": refs}


@baked
def theorem6_monte_carlo_hidden() -> dict[str, Any]:
    """test_ex74A_monte_carlo (hidden): five pairs (w*, w_k) at prescribed angles, dimensions and
    norms, drawn by teacher_student.pair_at_angle from default_rng(7) after the visible part's
    four pairs (as the cell used to draw them), and Theorem 6's expectation at each."""
    from td_lib import teacher_student as ts

    rng = np.random.default_rng(7)
    for theta, ns, nk in ((np.pi / 2, 4.0, 0.7), (0.0, 4.0, 0.7), (np.pi / 2, 4.0, 0.7), (np.pi / 2, 1.5, 3.0)):
        ts.pair_at_angle(d=5, theta=theta, norm_star=ns, norm_k=nk, rng=rng)   # the visible part's draws
    cases = []
    for theta, d, ns, nk in ((0.4, 5, 1.5, 0.7), (1.6, 5, 1.5, 0.7), (2.8, 5, 1.5, 0.7), (0.05, 2, 0.3, 4.0),
                             (3.0, 8, 0.3, 4.0)):
        ws, wk = ts.pair_at_angle(d=d, theta=theta, norm_star=ns, norm_k=nk, rng=rng)
        cases.append((theta, d, ws, wk, ts.relu_cross_moment(ws, wk)))
    return {"_cases": cases}


# ---------------------------------------------------------------------- Exercise 7.4.B tests
@baked
def angle_rhs_hidden() -> dict[str, Any]:
    """test_ex74B_rhs (hidden): eq. 12's right-hand side at 50 angles in (0, pi), alpha = 0.7."""
    from td_lib import teacher_student as ts

    return {"_ref_rhs": ts.angle_velocity(np.linspace(0.01, np.pi - 0.01, 50), 0.7)}


#: (eps, theta_end, alpha) of the hidden escape-time tests; the last two sit near the ends of the
#: range the statement gives, 0 < theta_end < pi - eps (an end just below the start, an end near 0).
ESCAPE_HIDDEN_CASES = ((0.05, 1.0, 0.5), (2e-3, 2.5, 3.0), (0.3, 0.2, 2.0), (1e-2, 3.13, 1.0), (0.05, 0.01, 1.5))


@baked
def escape_numeric_hidden() -> dict[str, Any]:
    """test_ex74B_escape_numeric (hidden): exact escape times (eps, theta_end, alpha) -> time."""
    from td_lib import teacher_student as ts

    return {"_cases": [(e, te, a, float(ts.escape_time(theta_start=np.pi - e, theta_end=te, alpha=a)))
                       for e, te, a in ESCAPE_HIDDEN_CASES]}


@baked
def escape_asymptotic_hidden() -> dict[str, Any]:
    """test_ex74B_escape_asymptotic (hidden): asymptotic escape times (eps, theta_end, alpha) -> time."""
    from td_lib import teacher_student as ts

    return {"_cases": [(e, te, a, float(ts.escape_time_asymptotic(eps=e, theta_end=te, alpha=a)))
                       for e, te, a in ESCAPE_HIDDEN_CASES]}
