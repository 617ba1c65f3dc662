"""The noise floor of the CNN / LCN dynamics at finite learning rate (Mori et al., eqs 31-34, App. J).

* :func:`noise_floor` -- eqs 31-32 (leading order in eta);
* :func:`error_covariance` (``E[e_p e_q]`` from the order parameters) and
  :func:`error_covariance_prediction` (eq. 34);
* :func:`noise_floor_from_M` (``tr(M Omega)``, eq. 130) and :func:`omega_matrix` (``Omega``).

The exact long-time error of the ODE at finite eta is the stationary state of
:func:`td_lib.cnn_lcn.stationary.fixed_point`.

References
----------
Mori et al., *exact online-SGD dynamics of CNN vs LCN students*, eqs 31-34 and 130.
"""

from __future__ import annotations

import numpy as np

from td_lib.cnn_lcn.model import KINDS, check_S, effective, preactivation_covariance
from td_lib.core import validate as V

__all__ = ["noise_floor", "error_covariance", "error_covariance_prediction", "noise_floor_from_M",
           "omega_matrix"]


def noise_floor(kind: str, *, eta, sigma, P: int, T: float = 1.0, c=0.0) -> np.ndarray:
    """Leading-order asymptotic error, eq. 31 (CNN) and eq. 32 (LCN).

    ``eta``, ``sigma`` and ``c`` may be arrays (broadcast).

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 31-32.

    Examples
    --------
    >>> round(float(noise_floor("lcn", eta=1e-3, sigma=1.0, P=6)), 9)  # 6e-3 / (pi sqrt 3)
    0.001102658
    >>> float(noise_floor("cnn", eta=1e-3, sigma=1.0, P=6, c=0.0)) == float(noise_floor(
    ...     "lcn", eta=1e-3, sigma=1.0, P=6))  # equal for independent positions
    True
    """
    V.choice("kind", kind, KINDS)
    P = V.positive_int("P", P)
    eta = V.array_in("eta", eta, 0.0, np.inf)
    sigma = V.array_in("sigma", sigma, 0.0, np.inf)
    c = V.array_in("c", c, 0.0, 1.0)
    T = V.finite("T", T, positive=True)
    lcn = eta * sigma**2 * P / (np.pi * np.sqrt(1 + 2 * T))
    if kind == "lcn":
        return lcn
    return lcn + eta * sigma**2 / np.pi * P * (P - 1) * c / np.sqrt((1 + T) ** 2 - T**2 * c**2)


def error_covariance(kind: str, R, Q, S, T: float = 1.0) -> np.ndarray:
    """``E[e_p e_q]`` with ``e_p = lambda_hat_p - lambda_p`` (eq. 33), from the order parameters.

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 33.
    """
    C = preactivation_covariance(kind, R, Q, S, T)
    P = C.shape[-1] // 2
    return C[..., :P, :P] - C[..., :P, P:] - C[..., P:, :P] + C[..., P:, P:]


def error_covariance_prediction(kind: str, eta, sigma, S) -> np.ndarray:
    """Eq. 34: ``eta sigma^2 / 2 * S`` (CNN) or ``* I`` (LCN), leading order in eta.

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 34.
    """
    V.choice("kind", kind, KINDS)
    S = check_S(S)
    pref = np.asarray(eta, float) * np.asarray(sigma, float) ** 2 / 2
    M = S if kind == "cnn" else np.broadcast_to(np.eye(S.shape[-1]), S.shape)
    return pref[..., None, None] * M


def noise_floor_from_M(kind: str, M, S, T: float = 1.0) -> np.ndarray:
    """``tr(M Omega)`` (eq. 130) for a CNN ``M = Q - R - R^T + T`` (padded), mainly for tests.

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 130.
    """
    P = np.asarray(S).shape[-1]
    W = omega_matrix(P=P, T=T, c=np.asarray(S)[..., 0, 1])
    return np.einsum("...pq,...pq->...", W, effective(M, S))


def omega_matrix(*, P: int, T: float = 1.0, c=0.0) -> np.ndarray:
    """The ``P x P`` matrix ``Omega`` of eq. 130 (Gaussian averages of ``g'(lambda_p) g'(lambda_q)``
    at the zero-error state): ``2 / (pi sqrt(1 + 2T))`` on the diagonal and
    ``2 / (pi sqrt((1+T)^2 - T^2 c^2))`` off it (``c`` may be an array: leading axes).

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 130.
    """
    c = np.asarray(c, float)
    off = 2 / (np.pi * np.sqrt((1 + T) ** 2 - T**2 * c**2))
    d = 2 / (np.pi * np.sqrt(1 + 2 * T))
    eye = np.eye(P)
    return off[..., None, None] * (1 - eye) + d * eye
