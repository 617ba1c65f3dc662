"""Saad-Solla Gaussian averages for ``g(z) = erf(z / sqrt 2)`` (Mori et al., eqs 44-51).

``g`` is the registry's ``erf_sqrt2`` (:mod:`td_lib.core.activations`), the paper's "erf".

For a centred Gaussian vector ``u`` with covariance ``C`` (entries ``c_ij``):

* ``I2(C) = E[g(u1) g(u2)] = (2/pi) arcsin(c12 / sqrt((1+c11)(1+c22)))``            (eq. 44)
* ``J2(C) = E[g'(u1) g'(u2)] = (2/pi) [(1+c11)(1+c22) - c12^2]^(-1/2)``               (eq. 45)
* ``I3(C) = E[g'(u1) u2 g(u3)]`` (slots g', linear, g)                                 (eq. 46)
* ``I4(C) = E[g'(u1) g'(u2) g(u3) g(u4)] = 4/(pi^2 sqrt(L4)) arcsin(L0/sqrt(L1 L2))``   (eqs 47-51)

All four were checked against Monte Carlo (``checks/cnn_lcn_check.py``, claims ``integral_*``)
and agree within 5 standard errors; the printed formulas are correct.

Every function takes a batch of covariance blocks ``(..., n, n)`` and returns ``(...)``.
The ``*_entries`` variants take the needed entries as separate broadcastable arrays; the
ODE right-hand sides use them to avoid materialising 4x4 blocks. Arguments of ``arcsin``
are clipped to [-1, 1] (rounding only); a non-positive ``Lambda`` (a covariance that is not
positive semi-definite) raises ``ValueError``.

References
----------
Mori et al., *exact online-SGD dynamics of CNN vs LCN students*, eqs 44-51; D. Saad and
S. A. Solla, Phys. Rev. E 52 (1995), the erf integrals.

Examples
--------
>>> import numpy as np
>>> round(float(I2(np.ones((2, 2)))), 12)  # E[g(u)^2] at unit variance = 1/3
0.333333333333
>>> round(float(J2(np.eye(2))), 12)  # independent fields: (2/pi) / 2
0.318309886184
"""

from __future__ import annotations

import numpy as np

from td_lib.core import validate as V
from td_lib.core.runtime import numpy_rng

_2PI = 2.0 / np.pi
_4PI2 = 4.0 / np.pi**2


def _block(name: str, C, n: int) -> np.ndarray:
    C = V.array(name, C)
    if C.ndim < 2 or C.shape[-2:] != (n, n):
        raise ValueError(f"{name} must have shape (..., {n}, {n}), got {C.shape}")
    if not np.allclose(C, np.swapaxes(C, -1, -2), atol=1e-12 * max(1.0, np.abs(C).max())):
        raise ValueError(f"{name} must be symmetric")
    if np.any(np.diagonal(C, axis1=-2, axis2=-1) < 0):
        raise ValueError(f"{name} has a negative variance on its diagonal")
    return C


def _asin(x: np.ndarray) -> np.ndarray:
    return np.arcsin(np.clip(x, -1.0, 1.0))


def _positive(name: str, x: np.ndarray) -> None:
    if np.any(~(x > 0)):
        raise ValueError(f"{name} <= 0: the covariance block is not positive semi-definite")


# ---------------------------------------------------------------- entry-wise forms
def i2_entries(*, c11, c22, c12) -> np.ndarray:
    """Eq. 44 from the entries ``c11, c22, c12`` of ``C`` (broadcast arrays)."""
    return _2PI * _asin(c12 / np.sqrt((1.0 + c11) * (1.0 + c22)))


def j2_entries(*, c11, c22, c12, check: bool = True) -> np.ndarray:
    """Eq. 45 from the entries of ``C`` (broadcast). ``check=False``: NaN instead of an error."""
    det = (1.0 + c11) * (1.0 + c22) - c12 * c12
    if check:
        _positive("(1+c11)(1+c22)-c12^2", det)
    return _2PI / np.sqrt(det)


def i3_entries(*, c11, c12, c13, c23, c33) -> np.ndarray:
    """Eq. 46 from entries (``c22`` does not enter)."""
    a = 1.0 + c11
    det = a * (1.0 + c33) - c13 * c13
    _positive("(1+c11)(1+c33)-c13^2", det)
    return _2PI * (c23 * a - c12 * c13) / (a * np.sqrt(det))


def i4_entries(*, c11, c22, c33, c44, c12, c13, c14, c23, c24, c34, check: bool = True
               ) -> np.ndarray:
    """Eqs 47-51 from entries (broadcast). ``check=False``: NaN instead of an error."""
    a1, a2 = 1.0 + c11, 1.0 + c22
    L4 = a1 * a2 - c12 * c12
    L1 = L4 * (1.0 + c33) - c23 * c23 * a1 - c13 * c13 * a2 + 2.0 * c12 * c13 * c23
    L2 = L4 * (1.0 + c44) - c24 * c24 * a1 - c14 * c14 * a2 + 2.0 * c12 * c14 * c24
    L0 = L4 * c34 - c23 * c24 * a1 - c13 * c14 * a2 + c12 * c13 * c24 + c12 * c14 * c23
    if check:
        _positive("Lambda_4", L4)
        _positive("Lambda_1 * Lambda_2", L1 * L2)
    return _4PI2 / np.sqrt(L4) * _asin(L0 / np.sqrt(L1 * L2))


# ---------------------------------------------------------------- block forms
def I2(C) -> np.ndarray:
    """``E[g(u1) g(u2)]`` for ``u ~ N(0, C)``, ``C`` of shape ``(..., 2, 2)`` (eq. 44).

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 44; Saad & Solla (1995).
    """
    C = _block("C", C, 2)
    return i2_entries(c11=C[..., 0, 0], c22=C[..., 1, 1], c12=C[..., 0, 1])


def J2(C) -> np.ndarray:
    """``E[g'(u1) g'(u2)]`` for ``u ~ N(0, C)``, ``C`` of shape ``(..., 2, 2)`` (eq. 45).

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 45; Saad & Solla (1995).

    Examples
    --------
    >>> import numpy as np
    >>> round(float(J2(np.array([[1.0, 0.5], [0.5, 1.0]]))), 12)  # (2/pi) / sqrt(4 - 1/4)
    0.328749036833
    """
    C = _block("C", C, 2)
    return j2_entries(c11=C[..., 0, 0], c22=C[..., 1, 1], c12=C[..., 0, 1])


def I3(C) -> np.ndarray:
    """``E[g'(u1) u2 g(u3)]`` for ``u ~ N(0, C)``, ``C`` of shape ``(..., 3, 3)`` (eq. 46).

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 46; Saad & Solla (1995).
    """
    C = _block("C", C, 3)
    return i3_entries(c11=C[..., 0, 0], c12=C[..., 0, 1], c13=C[..., 0, 2], c23=C[..., 1, 2],
                      c33=C[..., 2, 2])


def I4(C) -> np.ndarray:
    """``E[g'(u1) g'(u2) g(u3) g(u4)]`` for ``u ~ N(0, C)``, ``C`` ``(..., 4, 4)`` (eqs 47-51).

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 47-51; Saad & Solla (1995).
    """
    C = _block("C", C, 4)
    c = lambda i, j: C[..., i, j]
    return i4_entries(c11=c(0, 0), c22=c(1, 1), c33=c(2, 2), c44=c(3, 3), c12=c(0, 1), c13=c(0, 2),
                      c14=c(0, 3), c23=c(1, 2), c24=c(1, 3), c34=c(2, 3))


def monte_carlo(kind: str, C, n: int = 200_000, rng=0) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo estimate and standard error of ``I2``/``J2``/``I3``/``I4`` at one block ``C``.

    ``n`` Gaussian samples drawn from ``rng`` (an int seed, ``None`` or a numpy Generator).
    Used by the checks and tests (the paper's formulas are verified against it).
    """
    from td_lib.core.activations import get

    V.choice("kind", kind, ("I2", "J2", "I3", "I4"))
    nn = {"I2": 2, "J2": 2, "I3": 3, "I4": 4}[kind]
    C = _block("C", C, nn)
    n = V.positive_int("n", n, 2)
    rng = numpy_rng(rng)
    L = np.linalg.cholesky(C + 1e-15 * np.eye(nn))
    u = rng.standard_normal((n, nn)) @ L.T
    g, gp = get("erf_sqrt2").f_df(u)
    f = {"I2": lambda: g[:, 0] * g[:, 1], "J2": lambda: gp[:, 0] * gp[:, 1],
         "I3": lambda: gp[:, 0] * u[:, 1] * g[:, 2],
         "I4": lambda: gp[:, 0] * gp[:, 1] * g[:, 2] * g[:, 3]}[kind]()
    return f.mean(), f.std(ddof=1) / np.sqrt(n)
