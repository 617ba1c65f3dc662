"""Initial conditions for the CNN / LCN ODEs (Mori et al., eqs 19-21 and 23).

* :func:`random_init` -- order parameters of an i.i.d. ``N(0, 1)`` student against a teacher with
  ``w_l . w_l' / D = T delta`` (eq. 7), at dimension ``D``. Sampled *exactly in law* without
  drawing ``D``-dimensional vectors: writing each student vector as its projection ``a`` on the
  (orthonormalised) teacher span plus a component in the ``D - k_t`` dimensional complement,
  ``a ~ N(0, I)`` and the complement Gram matrix is Wishart(``D - k_t``, I) (Bartlett
  decomposition). So ``D = 1e12`` costs the same as ``D = 100``; the fluctuations are the
  ``O(D^-1/2)`` ones of eqs 19-20.
* :func:`leading_order_init` -- ``R = 0``, ``Q = I/k_s`` (CNN), ``Q^{(p,q)} = delta_pq I/k_s`` (LCN).
* :func:`matched_lcn_init` -- the position-symmetric LCN state of eq. 21 built from a CNN state.
* :func:`zero_error_solution` -- the zero-error students of eq. 23 (shift ``s``).

References
----------
Mori et al., *exact online-SGD dynamics of CNN vs LCN students*, eqs 19-21 and 23.

Examples
--------
>>> R, Q = random_init("cnn", D=1e12, P=4, k_s=3, k_t=2, rng=0)  # concentrates on eq. 19
>>> round(float(abs(Q - leading_order_init("cnn", P=4, k_s=3, k_t=2)[1]).max()), 4)
0.0
>>> R, Q = zero_error_solution("cnn", P=4, k_s=3, k_t=2, shift=1)
>>> R.tolist()
[[0.0, 0.0], [0.5, 0.0], [0.0, 0.5]]
"""

from __future__ import annotations

import numpy as np

from td_lib.cnn_lcn.model import KINDS, check_state
from td_lib.core import validate as V
from td_lib.core.runtime import numpy_rng


def _kernel_dims(P, k_s, k_t):
    P = V.positive_int("P", P)
    k_s = V.positive_int("k_s", k_s)
    k_t = V.positive_int("k_t", k_t)
    if k_s < k_t:
        raise ValueError(f"k_s must be >= k_t, got k_s={k_s}, k_t={k_t}")
    if k_s > P:
        raise ValueError(f"k_s must be <= P, got k_s={k_s}, P={P}")
    return P, k_s, k_t


def _wishart_gram(n: int, dof: float, size: tuple, rng: np.random.Generator) -> np.ndarray:
    """``W ~ Wishart(dof, I_n)`` (Bartlett), batch ``size``; works for huge ``dof``."""
    A = np.zeros(size + (n, n))
    i, j = np.tril_indices(n, -1)
    A[..., i, j] = rng.standard_normal(size + (len(i),))
    chi = np.sqrt(rng.chisquare(dof - np.arange(n), size=size + (n,)))
    A[..., np.arange(n), np.arange(n)] = chi
    return A @ np.swapaxes(A, -1, -2)


def random_init(kind: str, *, D: float, P: int, k_s: int, k_t: int, T: float = 1.0,
                n: int | None = None, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """Order parameters of a random student at dimension ``D`` (eqs 19-20 with fluctuations).

    The student weights are i.i.d. ``N(0, 1)``; the teacher satisfies eq. 7 exactly. Returns
    ``(R, Q)`` with a leading batch axis of length ``n`` if ``n`` is given. ``D`` may be a
    float (e.g. ``1e12``); it must exceed the number of vectors involved. ``rng``: an int
    seed, ``None`` or a numpy Generator (an int gives ``numpy.random.default_rng(rng)``).

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 19-20 (and eq. 7 for the teacher).
    """
    V.choice("kind", kind, KINDS)
    P, k_s, k_t = _kernel_dims(P, k_s, k_t)
    D = V.finite("D", D, positive=True)
    T = V.finite("T", T, positive=True)
    m = k_s if kind == "cnn" else P * k_s
    if D <= m + k_t:
        raise ValueError(f"D must exceed the number of weight vectors ({m + k_t}), got {D}")
    rng = numpy_rng(rng)
    size = () if n is None else (V.positive_int("n", n),)
    a = rng.standard_normal(size + (m, k_t))  # projections on the orthonormal teacher basis
    W = _wishart_gram(m, D - k_t, size, rng)
    gram = a @ np.swapaxes(a, -1, -2) + W  # w_hat . w_hat'
    R = a * np.sqrt(T) / np.sqrt(k_s * k_t * D)  # w_hat.w/(sqrt(k_s k_t) D), w = sqrt(T D) e
    Q = gram / (k_s * D)
    if kind == "lcn":
        R = R.reshape(size + (P, k_s, k_t))
        Q = Q.reshape(size + (P, k_s, P, k_s))
        Q = np.swapaxes(Q, -2, -3)  # (p, q, l, l')
    return R, Q


def leading_order_init(kind: str, *, P: int, k_s: int, k_t: int) -> tuple[np.ndarray, np.ndarray]:
    """Leading-order initial state: ``R = 0``, ``Q = I/k_s`` (CNN) or ``delta_pq I/k_s`` (LCN).

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 19-20 at ``D -> infinity``.
    """
    V.choice("kind", kind, KINDS)
    P, k_s, k_t = _kernel_dims(P, k_s, k_t)
    if kind == "cnn":
        return np.zeros((k_s, k_t)), np.eye(k_s) / k_s
    Q = np.einsum("pq,lm->pqlm", np.eye(P), np.eye(k_s)) / k_s
    return np.zeros((P, k_s, k_t)), Q


def matched_lcn_init(R0, Q0, P: int, fill=None) -> tuple[np.ndarray, np.ndarray]:
    """The matched, position-symmetric LCN state of eq. 21.

    ``R^{(p)} = R0`` and ``Q^{(p, (p+l-l')_P)}_{ll'} = (Q0)_{ll'}`` for all ``p``. The other
    ("irrelevant", eq. 83) entries do not influence the relevant ones when ``S = I``; they are
    taken from ``fill`` (an LCN ``Q``) if given, else set to zero. Batched over leading axes of
    ``R0``, ``Q0``.

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 21.
    """
    P = V.positive_int("P", P)
    R0, Q0, k_s, k_t = check_state("cnn", R0, Q0, P)
    batch = np.broadcast_shapes(R0.shape[:-2], Q0.shape[:-2])
    R = np.broadcast_to(R0[..., None, :, :], batch + (P, k_s, k_t)).copy()
    if fill is None:
        Q = np.zeros(batch + (P, P, k_s, k_s))
    else:
        Q = np.broadcast_to(V.array("fill", fill, shape=(None,) * (len(batch)) + (P, P, k_s, k_s)
                                    if batch else (P, P, k_s, k_s)),
                            batch + (P, P, k_s, k_s)).copy()
    p = np.arange(P)[:, None, None]
    l_ = np.arange(k_s)[None, :, None]
    m = np.arange(k_s)[None, None, :]
    q = (p + l_ - m) % P
    Q[..., p, q, l_, m] = np.broadcast_to(Q0[..., None, :, :], batch + (P, k_s, k_s))
    return R, Q


def zero_error_solution(kind: str, *, P: int, k_s: int, k_t: int, T: float = 1.0, shift=0
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Zero-error student of eq. 23: ``w_hat_l = sqrt(k_s/k_t) w_{l-s}`` on ``s <= l < s+k_t``.

    Gives ``R_{l,m} = (T/k_t) delta_{l-s,m}`` and ``Q_{ll'} = (T/k_t) delta_ll'`` on the window.
    For the LCN every position uses the same kernel (``shift`` an int), or ``shift`` is a
    length-``P`` sequence of per-position shifts such that ``p -> (p + s_p)_P`` is a permutation
    (then the student output is still the teacher's).

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 23.
    """
    V.choice("kind", kind, KINDS)
    P, k_s, k_t = _kernel_dims(P, k_s, k_t)
    T = V.finite("T", T, positive=True)
    shifts = np.atleast_1d(np.asarray(shift))
    if kind == "cnn" and shifts.size != 1:
        raise ValueError("shift must be a single integer for the CNN")
    if not np.issubdtype(shifts.dtype, np.integer):
        raise TypeError(f"shift must be integer(s), got {shift!r}")
    if np.any(shifts < 0) or np.any(shifts > k_s - k_t):
        raise ValueError(f"shift must lie in [0, k_s - k_t] = [0, {k_s - k_t}], got {shift}")
    if kind == "lcn":
        if shifts.size == 1:
            shifts = np.repeat(shifts, P)
        if shifts.size != P:
            raise ValueError(f"shift must be an int or have length P = {P}")
        if len(set(((np.arange(P) + shifts) % P).tolist())) != P:
            raise ValueError("per-position shifts must make p -> (p + s_p) mod P a permutation")
    # u[k, l, m]: coefficient of teacher vector m in w_hat_l / sqrt(k_s/k_t) for kernel k
    u = np.zeros((shifts.size, k_s, k_t))
    for k, s in enumerate(shifts):  # at most P kernels; tiny
        u[k, s + np.arange(k_t), np.arange(k_t)] = 1.0
    R = (T / k_t) * u
    Qall = (T / k_t) * np.einsum("alm,bkm->ablk", u, u)
    if kind == "cnn":
        return R[0], Qall[0, 0]
    return R, Qall
