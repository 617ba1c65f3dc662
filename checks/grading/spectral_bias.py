"""Grading references of §7.3 "Spectral bias" (instructor-only; see :mod:`checks.grading`).

The hidden tests of ``td2_7_3_spectral_bias`` and the claims of :mod:`checks.spectral_bias` take
these references from here; :mod:`checks.grading.exercises` lists them as counterparts
of Exercises 7.3.B and 7.3.C, so a graded answer cannot call them.

Examples
--------
>>> [round(float(x), 6) for x in von_mises_series([1, 8], 4.0)]
[0.178751, 0.00018]
>>> [round(float(x), 6) for x in bias_coefficients([1, 3])]
[0.231539, 0.009393]
"""

from __future__ import annotations

import numpy as np
from scipy.special import factorial

from td_lib import kernels

__all__ = ["bias_coefficients", "von_mises_series"]


def bias_coefficients(ells) -> np.ndarray:
    """Cosine coefficients ``a_l`` of the first-layer ReLU NTK with bias, ``kernels.relu_ntk_bias``,
    by adaptive quadrature (``kernels.cosine_coefficients_quad``; absolute accuracy ~1e-15).

    Parameters
    ----------
    ells : int or 1-d sequence of non-negative ints
        Frequencies l.

    Returns
    -------
    ndarray of shape ``(len(ells),)``.

    References
    ----------
    Basri et al. (NeurIPS 2019), the two-layer ReLU NTK with bias on the circle; original course notes
    §7.3, Exercise 7.3.C.
    """
    return kernels.cosine_coefficients_quad(kernels.relu_ntk_bias, ells)


def von_mises_series(ells, kappa: float, terms: int = 80) -> np.ndarray:
    """``exp(-kappa) I_l(kappa)`` from the Bessel power series
    ``I_l(kappa) = sum_j (kappa/2)^(2j + l) / (j! (j + l)!)``, truncated after ``terms`` terms
    (a reference independent of ``scipy.special.ive``).

    Parameters
    ----------
    ells : 1-d sequence of non-negative ints
        Frequencies l.
    kappa : float
        Concentration of the von Mises kernel, > 0.
    terms : int
        Number of series terms (80 is far beyond the peak of the terms for kappa <= 10).

    Returns
    -------
    ndarray of shape ``(len(ells),)``: the eigenvalues ``k_hat_l`` of the von Mises kernel.

    References
    ----------
    Original course notes §7.3, eq. 7.3.B.2.
    """
    ells = np.asarray(ells)[None, :]
    j = np.arange(terms)[:, None]
    return np.exp(-kappa) * np.sum((kappa / 2) ** (2 * j + ells)
                                   / (factorial(j) * factorial(j + ells)), axis=0)
