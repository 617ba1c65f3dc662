"""Input covariance, teacher overlaps, preactivation covariances and eps_g (Mori et al. §2, App. A-C).

Shapes (``...`` = any batch axes, broadcast against each other):

* ``S``: ``(..., P, P)`` input covariance across positions (eq. 2); ``input_covariance``
  builds the paper's default, eq. 3.
* CNN: ``R (..., k_s, k_t)``, ``Q (..., k_s, k_s)``; LCN: ``R (..., P, k_s, k_t)``,
  ``Q (..., P, P, k_s, k_s)``.

The preactivation covariance is returned for the ``2P`` fields
``(lambda_hat_0, ..., lambda_hat_{P-1}, lambda_0, ..., lambda_{P-1})`` (student first).

Seed corrections recorded here (each verified numerically, see ``checks/cnn_lcn_check.py``):

* eq. 15 prints ``Q = w_hat.w_hat / (k_s k_t D)``; the appendix (App. A), eq. 19 (``Q = I/k_s``
  at initialisation) and a direct simulation require ``/(k_s D)``.
* eq. 38 prints ``R = w_hat.w / sqrt(k_s k_t D)``; eq. 15 (and everything downstream) has
  ``sqrt(k_s k_t) D``.
* eq. 40 (second part) prints ``<lambda_q nu_r^(l')> = sum_l R_{l,l'} S``; with the convention
  ``R[student, teacher]`` it is ``sum_l R_{l',l} S_{(q+l)_P, r}`` (as eq. 71 correctly has for the LCN).
"""

from __future__ import annotations

import numpy as np

from td_lib.cnn_lcn.integrals import i2_entries
from td_lib.core import validate as V

KINDS = ("cnn", "lcn")


def input_covariance(P: int, c) -> np.ndarray:
    """The default position covariance of eq. 3: ``S_pp = 1``, ``S_pq = c`` (``c`` in [0, 1)).

    ``c`` may be an array; the result then has shape ``c.shape + (P, P)``.

    References
    ----------
    Mori et al., *exact online-SGD dynamics of CNN vs LCN students*, eq. 3.

    Examples
    --------
    >>> input_covariance(3, 0.5).tolist()
    [[1.0, 0.5, 0.5], [0.5, 1.0, 0.5], [0.5, 0.5, 1.0]]
    """
    P = V.positive_int("P", P)
    c_arr = np.asarray(c, dtype=float)
    if not np.all(np.isfinite(c_arr)):
        raise ValueError("c must be finite")
    if np.any((c_arr < 0) | (c_arr >= 1)):
        raise ValueError(f"c must lie in [0, 1), got {c}")
    eye = np.eye(P)
    return c_arr[..., None, None] * (1.0 - eye) + eye


def teacher_overlap(*, k_s: int, k_t: int, T: float = 1.0) -> np.ndarray:
    """The ``k_s x k_s`` teacher overlap ``T_{ll'} = w_l.w_l'/(k_t D)``, zero-padded (App. A).

    ``T_{ll'} = (T / k_t) delta_ll'`` for ``l, l' < k_t`` (eq. 7) and zero otherwise.

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 7 and App. A.
    """
    k_s = V.positive_int("k_s", k_s)
    k_t = V.positive_int("k_t", k_t)
    if k_t > k_s:
        raise ValueError(f"k_s must be >= k_t, got k_s={k_s}, k_t={k_t}")
    T = V.finite("T", T, positive=True)
    out = np.zeros((k_s, k_s))
    out[np.arange(k_t), np.arange(k_t)] = T / k_t
    return out


def state_shapes(kind: str, *, P: int, k_s: int, k_t: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Shapes ``(R.shape, Q.shape)`` of one (unbatched) state of the ``kind`` student.

    Requires ``1 <= k_t <= k_s <= P``, as :func:`check_state` does.

    Examples
    --------
    >>> state_shapes("lcn", P=4, k_s=3, k_t=2)
    ((4, 3, 2), (4, 4, 3, 3))
    """
    V.choice("kind", kind, KINDS)
    P = V.positive_int("P", P)
    k_t = V.positive_int("k_t", k_t)
    k_s = V.positive_int("k_s", k_s)
    if k_s < k_t:
        raise ValueError("k_s (student filter size) must be >= k_t (teacher filter size), "
                         f"got k_s = {k_s} < k_t = {k_t}")
    if k_s > P:
        raise ValueError(f"k_s must be <= P = {P}, got k_s = {k_s}")
    if kind == "cnn":
        return (k_s, k_t), (k_s, k_s)
    return (P, k_s, k_t), (P, P, k_s, k_s)


def check_S(S, P: int | None = None) -> np.ndarray:
    """Validate an input covariance (or a batch of them): square, symmetric, PSD (eq. 2)."""
    S = V.array("S", S)
    if S.ndim < 2 or S.shape[-1] != S.shape[-2]:
        raise ValueError(f"S must have shape (..., P, P), got {S.shape}")
    if P is not None and S.shape[-1] != P:
        raise ValueError(f"S must be {P} x {P} (P = {P}), got {S.shape}")
    V.psd("S", S)
    return S


def check_state(kind: str, R, Q, P: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Validate a state; return ``(R, Q, k_s, k_t)``.

    Requires ``k_t <= k_s <= P`` and symmetric ``Q``.
    """
    V.choice("kind", kind, KINDS)
    R = V.array("R", R)
    Q = V.array("Q", Q)
    if kind == "cnn":
        if R.ndim < 2 or Q.ndim < 2 or Q.shape[-1] != Q.shape[-2]:
            raise ValueError(f"CNN state needs R (..., k_s, k_t) and Q (..., k_s, k_s); got "
                             f"R {R.shape}, Q {Q.shape}")
        k_s, k_t = R.shape[-2], R.shape[-1]
        if Q.shape[-1] != k_s:
            raise ValueError(f"Q must be (..., {k_s}, {k_s}) to match R {R.shape}; got {Q.shape}")
    else:
        if (R.ndim < 3 or Q.ndim < 4 or R.shape[-3] != P or Q.shape[-4:-2] != (P, P)
                or Q.shape[-1] != Q.shape[-2]):
            raise ValueError(f"LCN state needs R (..., P, k_s, k_t) and Q (..., P, P, k_s, k_s) "
                             f"with P = {P}; got R {R.shape}, Q {Q.shape}")
        k_s, k_t = R.shape[-2], R.shape[-1]
        if Q.shape[-1] != k_s:
            raise ValueError(f"Q must have last axes ({k_s}, {k_s}) to match R {R.shape}; "
                             f"got {Q.shape}")
    if k_s < k_t:
        raise ValueError(f"k_s must be >= k_t (student kernel at least the teacher's); "
                         f"got k_s={k_s}, k_t={k_t}")
    if k_s > P:
        raise ValueError(f"k_s must be <= P; got k_s={k_s}, P={P}")
    Qt = np.swapaxes(Q, -1, -2)
    if kind == "lcn":
        Qt = np.swapaxes(Qt, -3, -4)
    if not np.allclose(Q, Qt, atol=1e-10 * max(1.0, float(np.abs(Q).max(initial=0.0)))):
        raise ValueError("Q must be symmetric (Q[p,q,l,l'] = Q[q,p,l',l] for the LCN)")
    return R, Q, k_s, k_t


def shifted_S(S: np.ndarray, n1: int, n2: int) -> np.ndarray:
    """``Sh[..., p, l, q, m] = S[..., (p+l)_P, (q+m)_P]`` for ``l < n1``, ``m < n2``."""
    P = S.shape[-1]
    i = (np.arange(P)[:, None] + np.arange(n1)[None, :]) % P  # (P, n1)
    j = (np.arange(P)[:, None] + np.arange(n2)[None, :]) % P  # (P, n2)
    return S[..., i[:, :, None, None], j[None, None, :, :]]


def effective(M, S) -> np.ndarray:
    """Eq. 42: ``M^eff_{pq} = sum_{l,l'} M_{l,l'} S_{(p+l)_P, (q+l')_P}`` (``M`` may be rectangular).

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 42.
    """
    M = np.asarray(M, dtype=float)
    S = np.asarray(S, dtype=float)
    Sh = shifted_S(S, M.shape[-2], M.shape[-1])
    return np.einsum("...lm,...plqm->...pq", M, Sh)


def preactivation_covariance(kind: str, R, Q, S, T: float = 1.0, *, validate: bool = True
                             ) -> np.ndarray:
    """Covariance ``(..., 2P, 2P)`` of ``(lambda_hat, lambda)`` (eqs 41-43 for the CNN, 72 for the LCN).

    ``validate=False`` skips the argument checks (for callers that already made them).

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 41-43 and 70-72.
    """
    if validate:
        S = check_S(S)
        R, Q, k_s, k_t = check_state(kind, R, Q, S.shape[-1])
        T = V.finite("T", T, positive=True)
    R = np.asarray(R, dtype=float)
    Q = np.asarray(Q, dtype=float)
    S = np.asarray(S, dtype=float)
    k_s, k_t = R.shape[-2], R.shape[-1]
    Tm = np.asarray(T, dtype=float)[..., None, None] * np.eye(k_t) / k_t
    Teff = effective(Tm, S)
    if kind == "cnn":
        Qeff = effective(Q, S)
        Reff = effective(R, S)
    else:
        Qeff = np.einsum("...pqlm,...plqm->...pq", Q, shifted_S(S, k_s, k_s))
        Reff = np.einsum("...plm,...plqm->...pq", R, shifted_S(S, k_s, k_t))
    batch = np.broadcast_shapes(Qeff.shape[:-2], Reff.shape[:-2], Teff.shape[:-2])
    P = S.shape[-1]
    out = np.empty(batch + (2 * P, 2 * P))
    out[..., :P, :P] = Qeff
    out[..., :P, P:] = Reff
    out[..., P:, :P] = np.swapaxes(Reff, -1, -2)
    out[..., P:, P:] = Teff
    return out


def signs(P: int) -> np.ndarray:
    """``-1`` for the ``P`` student fields, ``+1`` for the ``P`` teacher fields (residual signs)."""
    return np.concatenate([-np.ones(P), np.ones(P)])


def eg_from_covariance(C: np.ndarray) -> np.ndarray:
    """Eq. 81 from the ``(..., 2P, 2P)`` preactivation covariance.

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 81.
    """
    P = C.shape[-1] // 2
    s = signs(P)
    d = np.diagonal(C, axis1=-2, axis2=-1)
    I = i2_entries(c11=d[..., :, None], c22=d[..., None, :], c12=C)
    return np.einsum("...ab,a,b->...", I, s, s)


def generalisation_error(kind: str, R, Q, S, T: float = 1.0) -> np.ndarray:
    """Generalisation error ``eps_g = E[(f*(x) - y_hat(x))^2]`` in order parameters (eq. 81).

    ``eps_g = sum_pq I2(l_p, l_q) - 2 sum_pr I2(l_p, lh_r) + sum_rs I2(lh_r, lh_s)`` with the
    covariances of eqs 43 (CNN) / 72 (LCN). Batched over leading axes.

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 81 with eqs 43 / 72.

    Examples
    --------
    >>> import numpy as np
    >>> R, Q = np.zeros((1, 1)), np.eye(1)  # CNN, k_s = k_t = 1, an orthogonal student
    >>> round(float(generalisation_error("cnn", R, Q, input_covariance(4, 0.0))), 12)
    2.666666666667
    """
    return eg_from_covariance(preactivation_covariance(kind, R, Q, S, T))
