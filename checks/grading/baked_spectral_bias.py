"""Baked regions of §7.3's tests (spectral bias):
demo reference results and test expectations (see :mod:`checks.grading.bake`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from checks.grading.registry import baked

__all__: list[str] = []


# ---------------------------------------------------------------------- Exercise 7.3.C tests
@baked
def basri_hidden() -> dict[str, Any]:
    """test_ex73C_basri (hidden): the quadrature of K_nobias at 11 <= l <= 40, and the closed form
    at four large l (where a numerical integral is no longer exact)."""
    from td_lib import kernels

    quad = kernels.cosine_coefficients_quad(kernels.relu_ntk_nobias, np.arange(11, 41))
    return {"_ref_quad": [float(x) for x in quad],
            "_ref_large": [float(x) for x in kernels.basri_coefficients(np.array([500, 1001, 2000, 4096]))]}


FW_HIDDEN_CASES = ((1, 1, 2, 7, 3), (2, 17, 3, 5, 9), (3, 500, 2, 12, 4), (4, 500, 3, 4, 12), (5, 2, 2, 1, 1))


@baked
def finite_width_hidden() -> dict[str, Any]:
    """test_ex73C_finite_width (hidden): the finite-width kernel at five random cases (seed, N, d,
    n1, n2); the cell draws the same angles and weights from default_rng(7330 + seed), as here."""
    from td_lib import kernels

    want = []
    for seed, N, d, n1, n2 in FW_HIDDEN_CASES:
        r = np.random.default_rng(7330 + seed)
        a1, a2 = r.uniform(-np.pi, 3 * np.pi, n1), r.uniform(-np.pi, 3 * np.pi, n2)
        W = r.standard_normal((N, d)) * r.uniform(0.5, 2.0)
        want.append(kernels.finite_width_kernel(a1, a2, W))
    return {"_fw_cases": list(FW_HIDDEN_CASES), "_fw_want": want}
