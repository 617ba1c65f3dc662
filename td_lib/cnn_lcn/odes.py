"""Right-hand sides of the exact ODEs of Result 3.1 (Mori et al., eqs 17-18, Apps A-B), vectorised.

CNN (eq. 17, functions of eqs 65-67)::

    dR/dalpha = eta/k_s F_R,   dQ/dalpha = eta/k_s F_Q + eta^2/k_s^2 G_Q

    [F_R]_{l,m}  = sum_{p} sum_b s_b I3(lh_p, mu^{(m)}_{(p+l)_P}, b)
    [F_Q]_{l,l'} = sum_{p} sum_b s_b I3(lh_p, nu^{(l')}_{(p+l)_P}, b) + (l <-> l')
    [G_Q]_{l,l'} = sum_{p,q} S_{(p+l)_P,(q+l')_P} V_{pq}
    V_{pq}       = sum_{b,b'} s_b s_b' I4(lh_p, lh_q, b, b') + sigma^2 J2(lh_p, lh_q)

where ``b`` runs over the ``2P`` preactivations (teacher ``lambda_q`` with ``s_b = +1``, student
``lh_q`` with ``s_b = -1``), so ``sum_b s_b I3(., ., b)`` is the paper's
``sum_q [I3(., ., lambda_q) - I3(., ., lh_q)]`` and the ``I4`` double sum is eq. 63.
LCN (eq. 18, eqs 77-79): the same with per-position kernels and no sum over ``p`` in F_R::

    [F_R]^{(p)}_{l,m}      = sum_b s_b I3(lh_p, mu^{(m)}_{(p+l)_P}, b)
    [F_Q]^{(p,q)}_{l,l'}   = sum_b s_b I3(lh_p, nu^{(q,l')}_{(p+l)_P}, b) + (p <-> q, l <-> l')
    [G_Q]^{(p,q)}_{l,l'}   = S_{(p+l)_P,(q+l')_P} V_{pq}

Implementation: ``I3`` is linear in its middle field, so with
``K_pb = s_b (2/pi) / ((1+C_pp) sqrt((1+C_pp)(1+C_bb) - C_pb^2))`` and
``kappa_p = sum_b K_pb C_pb`` one has
``sum_b s_b I3(lh_p, phi, b) = (1+C_pp) sum_b K_pb <phi b> - <phi lh_p> kappa_p``; the
cross-covariances ``<phi b>`` of all single-vector fields (eqs 39-40, 70-71) are built with one
einsum each. The ``I4`` sum is evaluated on the pairs ``p <= q`` only (``I4`` is symmetric in
slots 1-2), and only on the row ``p = 0`` when the statistics are translation invariant; for
each pair all ``(b, b')`` come from one ``2P x 2P`` matrix (``_v_block``), and a batch is cut
into cache-sized blocks. No Python loop over positions or kernel taps.

Equality with a plain loop-based implementation written straight from eqs 54-67 / 73-78
(``checks/grading/cnn_lcn_odes.py``) is asserted to 1e-12 in ``tests/test_cnn_lcn_odes.py``,
and the RHS matches ``D E[Delta order parameters]`` of real SGD steps (one-step Monte Carlo,
``checks/cnn_lcn_check.py``).

Seed notes: eq. 75 prints ``<(Delta y)^2> g'(lh_p) g'(lh_q)`` with the average closed too early;
the correct term (eq. 76) averages the whole product, which is what is implemented. Eq. 90
prints ``nu^{(l')}_{(p+l')_P}`` in its first I3; it should be ``nu^{(l')}_{(p+l)_P}`` (as in eq. 66).

References
----------
Mori et al., *exact online-SGD dynamics of CNN vs LCN students*, Result 3.1, eqs 17-18,
54-67 (CNN) and 68-79 (LCN).

Examples
--------
>>> import numpy as np
>>> from td_lib.cnn_lcn.model import input_covariance
>>> R, Q = np.zeros((1, 1)), np.eye(1)  # CNN, k_s = k_t = 1, orthogonal student
>>> dR, dQ = rhs("cnn", R, Q, input_covariance(4, 0.0), T=1.0, eta=0.5, sigma=0.0)
>>> round(float(dR[0, 0]), 10), round(float(dQ[0, 0]), 10)
(0.6366197724, 0.1816425012)
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from td_lib.cnn_lcn.integrals import j2_entries
from td_lib.cnn_lcn.model import (
    KINDS,
    check_S,
    check_state,
    preactivation_covariance,
    shifted_S,
    signs,
)
from td_lib.core import validate as V

_2PI = 2.0 / np.pi
_4PI2 = 4.0 / np.pi**2


@lru_cache(maxsize=64)
def _pairs(P: int):
    """The position pairs ``p <= q``."""
    return np.triu_indices(P)


def _i3_kernel(C: np.ndarray, P: int):
    """``a_p = 1 + C_pp``, ``K_pb`` and ``kappa_p`` (see module docstring)."""
    d = np.diagonal(C, axis1=-2, axis2=-1)  # (..., 2P)
    a = 1.0 + d[..., :P]  # (..., P)
    Cpb = C[..., :P, :]  # (..., P, 2P)
    det = a[..., :, None] * (1.0 + d[..., None, :]) - Cpb**2
    det = np.where(det > 0, det, np.nan)  # NaN marks a state that left the PSD cone
    K = _2PI * signs(P) / (a[..., :, None] * np.sqrt(det))
    kappa = np.einsum("...pb,...pb->...p", K, Cpb)
    return a, K, kappa


def _is_circulant(C: np.ndarray, P: int) -> bool:
    """True if every ``P x P`` block of ``C`` is circulant (translation-invariant statistics)."""
    if P < 3:
        return False
    blocks = C.reshape(C.shape[:-2] + (2, P, 2, P))
    rolled = np.roll(np.roll(blocks, 1, axis=-1), 1, axis=-3)
    return bool(np.max(np.abs(rolled - blocks), initial=0.0)
                <= 1e-13 * max(1.0, float(np.max(np.abs(blocks), initial=0.0))))


_CHUNK = 1 << 16  # entries of the (pair, b, b') array per block: a few hundred kB, cache-sized


def _v_block(C: np.ndarray, p: np.ndarray, q: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``sum_{bb'} s_b s_b' I4(lh_p, lh_q, b, b')`` on the pairs ``(p, q)`` for a flat batch ``C``.

    Eqs 47-51 in matrix form: with ``A = [[1+C_pp, C_pq], [C_pq, 1+C_qq]]``, ``L4 = det A`` and
    ``v_b = (C_pb, C_qb)``, ``Lambda_0 = L4 C_bb' - v_b . adj(A) v_b'`` and
    ``Lambda_{1,2} = L4 (1 + C_bb) - v_b . adj(A) v_b`` (its diagonal), so all ``(b, b')`` of a
    pair come from one ``2P x 2P`` matrix ``N = L4 C - X W1^T - Y W2^T`` (``X_b = C_pb``,
    ``Y_b = C_qb``, ``W = adj(A) v``): three operations per entry instead of the ~30 of the
    entry-wise formula, in place, on cache-sized blocks.
    """
    d = np.diagonal(C, axis1=-2, axis2=-1)
    a1 = 1.0 + d[:, p]
    a2 = 1.0 + d[:, q]
    c12 = C[:, p, q]
    L4 = a1 * a2 - c12 * c12  # (n, npairs)
    X = C[:, p, :]  # (n, npairs, 2P): <lh_p b>
    Y = C[:, q, :]
    W1 = a2[..., None] * X - c12[..., None] * Y
    W2 = a1[..., None] * Y - c12[..., None] * X
    N = L4[..., None, None] * C[:, None, :, :]
    N -= X[..., :, None] * W1[..., None, :]
    N -= Y[..., :, None] * W2[..., None, :]
    r = 1.0 / np.sqrt(np.diagonal(N, axis1=-2, axis2=-1) + L4[..., None])  # 1/sqrt(Lambda_b)
    N *= r[..., :, None]
    N *= r[..., None, :]
    np.clip(N, -1.0, 1.0, out=N)  # rounding only
    np.arcsin(N, out=N)
    return _4PI2 / np.sqrt(L4) * ((N @ s) @ s)


def v_matrix(C, sigma=0.0) -> np.ndarray:
    """``V_pq = sum_{bb'} s_b s_b' I4(lh_p, lh_q, b, b') + sigma^2 J2(lh_p, lh_q)`` (eqs 61-63).

    ``C`` is the ``(..., 2P, 2P)`` preactivation covariance
    (:func:`~td_lib.cnn_lcn.model.preactivation_covariance`, student fields first), ``sigma``
    the label noise (scalar or batch array); returns ``(..., P, P)``. Not validated (the caller
    passes a covariance it built).

    Evaluated on the pairs ``p <= q``; if the preactivation statistics are translation invariant
    (circulant blocks, e.g. eq. 3 with a CNN or a position-symmetric LCN state) only the row
    ``p = 0`` is computed and ``V_pq = V_{0,(q-p)_P}``. A batch is processed in blocks of
    about :data:`_CHUNK` entries (see :func:`_v_block`), so its cost per parameter set is
    below that of a single call (``benchmarks/bench_cnn_lcn.py`` prints the ratio).

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 61-63 (CNN) and 76 (LCN).
    """
    C = np.asarray(C, dtype=float)
    P = C.shape[-1] // 2
    circ = _is_circulant(C, P)
    if circ:
        p = np.zeros(P, dtype=int)
        q = np.arange(P)
    else:
        p, q = _pairs(P)
    batch = C.shape[:-2]
    Cf = C.reshape((-1, 2 * P, 2 * P))
    n = Cf.shape[0]
    step = max(1, _CHUNK // (p.size * 4 * P * P))
    s = signs(P)
    v = np.empty((n, p.size))
    for i in range(0, n, step):
        v[i:i + step] = _v_block(Cf[i:i + step], p, q, s)
    v = v.reshape(batch + (p.size,))
    d = np.diagonal(C, axis1=-2, axis2=-1)
    sig2 = np.asarray(sigma, dtype=float) ** 2
    v = v + sig2[..., None] * j2_entries(c11=d[..., p], c22=d[..., q], c12=C[..., p, q], check=False)
    if circ:
        idx = (np.arange(P)[None, :] - np.arange(P)[:, None]) % P
        return v[..., idx]
    out = np.empty(v.shape[:-1] + (P, P))
    out[..., p, q] = v
    out[..., q, p] = v
    return out


def _terms(kind: str, R: np.ndarray, Q: np.ndarray, S: np.ndarray, T, sigma):
    """Unvalidated ``(F_R, F_Q, G_Q)``; all inputs already broadcast-compatible arrays."""
    P = S.shape[-1]
    k_s, k_t = R.shape[-2], R.shape[-1]
    C = preactivation_covariance(kind, R, Q, S, T, validate=False)
    a, K, kappa = _i3_kernel(C, P)
    Tk = np.asarray(T, dtype=float)[..., None, None, None] / k_t
    # Sr[..., q, l, r] = S[(q+l)_P, r]
    qi = (np.arange(P)[:, None] + np.arange(k_s)[None, :]) % P
    Sr = S[..., qi, :]  # (..., P, k_s, P)
    Sr_t = Sr[..., :, :k_t, :]  # (..., P, k_t, P)
    pl = qi  # (p + l)_P, shape (P, k_s)
    pidx = np.arange(P)

    # mu fields: Xmu[..., r, m, b] = <mu_r^{(m)} b>
    mu_teacher = Tk * np.einsum("...qmr->...rmq", Sr_t)  # <mu_r^m lambda_q> = (T/k_t) S_{q+m, r}
    if kind == "cnn":
        mu_student = np.einsum("...lm,...qlr->...rmq", R, Sr)  # sum_l R_{l m} S_{q+l, r}
    else:
        mu_student = np.einsum("...qlm,...qlr->...rmq", R, Sr)  # sum_l R^{(q)}_{l m} S_{q+l, r}
    Xmu = np.concatenate(np.broadcast_arrays(mu_student, mu_teacher), axis=-1)  # (..., P, k_t, 2P)
    Gmu = np.einsum("...pb,...rmb->...prm", K, Xmu)  # (..., P, P_r, k_t)
    G_sel = Gmu[..., pidx[:, None], pl, :]  # (..., P, k_s, k_t): r = (p+l)_P
    X_sel = np.swapaxes(Xmu, -1, -2)[..., pl, pidx[:, None], :]  # <mu_{(p+l)}^m lh_p>
    FR_p = a[..., :, None, None] * G_sel - kappa[..., :, None, None] * X_sel

    if kind == "cnn":
        F_R = FR_p.sum(axis=-3)
        # nu fields: Xnu[..., r, l', b] = <nu_r^{(l')} b>
        nu_teacher = np.einsum("...lm,...qmr->...rlq", R, Sr_t)  # sum_m R_{l' m} S_{q+m, r}
        nu_student = np.einsum("...lk,...qlr->...rkq", Q, Sr)  # sum_l Q_{l l'} S_{q+l, r}
        Xnu = np.concatenate(np.broadcast_arrays(nu_student, nu_teacher), axis=-1)
        Gnu = np.einsum("...pb,...rkb->...prk", K, Xnu)
        F1 = (a[..., :, None, None] * Gnu[..., pidx[:, None], pl, :]
              - kappa[..., :, None, None] * np.swapaxes(Xnu, -1, -2)[..., pl, pidx[:, None], :]).sum(-3)
        F_Q = F1 + np.swapaxes(F1, -1, -2)
        Vpq = v_matrix(C, sigma)
        G_Q = np.einsum("...plqm,...pq->...lm", shifted_S(S, k_s, k_s), Vpq)
        return F_R, F_Q, G_Q

    F_R = FR_p
    # LCN nu fields: Xnu[..., q', l', r, b] = <nu_r^{(q', l')} b>
    # (matmul rather than einsum: these two contractions dominate a batched LCN call)
    nu_teacher = np.matmul(R.reshape(R.shape[:-3] + (P * k_s, k_t)),  # sum_m R^{(q')}_{l' m} S_{s+m, r}
                     np.moveaxis(Sr_t, -3, -1).reshape(Sr_t.shape[:-3] + (k_t, P * P))
                     ).reshape(R.shape[:-3] + (P, k_s, P, P))
    nu_student = np.einsum("...sqkl,...skr->...qlrs", Q, Sr)  # sum_k Q^{(s,q')}_{k l'} S_{s+k, r}
    Xnu = np.concatenate(np.broadcast_arrays(nu_student, nu_teacher), axis=-1)  # (...,P,k_s,P,2P)
    Gnu = np.matmul(K, np.swapaxes(Xnu.reshape(Xnu.shape[:-4] + (P * k_s * P, 2 * P)), -1, -2)
              ).reshape(Xnu.shape[:-4] + (P, P, k_s, P))  # (..., p, q', l', r)
    pI = pidx[:, None, None, None]
    qI = pidx[None, :, None, None]
    lpI = np.arange(k_s)[None, None, None, :]
    rI = pl[:, None, :, None]  # (P, 1, k_s, 1) -> indexes (p, q, l, l')
    G_sel = Gnu[..., pI, qI, lpI, rI]  # (..., P, P, k_s, k_s)
    X_sel = Xnu[..., qI, lpI, rI, pI]
    F1 = a[..., :, None, None, None] * G_sel - kappa[..., :, None, None, None] * X_sel
    F_Q = F1 + np.swapaxes(np.swapaxes(F1, -1, -2), -3, -4)
    Vpq = v_matrix(C, sigma)
    Sh = shifted_S(S, k_s, k_s)  # (..., p, l, q, l')
    G_Q = np.swapaxes(Sh, -2, -3) * Vpq[..., :, :, None, None]
    return F_R, F_Q, G_Q


def _prepare(kind, R, Q, S, T, sigma):
    S = check_S(S)
    R, Q, _, _ = check_state(kind, R, Q, S.shape[-1])
    T = np.asarray(T, dtype=float)
    if not np.all(np.isfinite(T)) or np.any(T <= 0):
        raise ValueError(f"T must be finite and > 0, got {T}")
    sigma = np.asarray(sigma, dtype=float)
    if not np.all(np.isfinite(sigma)) or np.any(sigma < 0):
        raise ValueError(f"sigma must be finite and >= 0, got {sigma}")
    return R, Q, S, T, sigma


def ode_terms(kind: str, R, Q, S, T: float = 1.0, sigma: float = 0.0
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The functions ``(F_R, F_Q, G_Q)`` of Result 3.1 (eqs 65-67 CNN, 77-79 LCN).

    Parameters
    ----------
    kind : ``"cnn"`` or ``"lcn"``.
    R, Q : state (see :mod:`td_lib.cnn_lcn`); leading axes are batch axes.
    S : ``(..., P, P)`` input covariance (any symmetric PSD matrix), broadcast over the batch.
    T, sigma : teacher norm (eq. 7) and label-noise level (eq. 4); scalars or batch arrays
        (shape = batch shape).

    Returns
    -------
    F_R, F_Q, G_Q with the shapes of ``R``, ``Q``, ``Q`` (broadcast batch shape).

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 65-67 (CNN) and 77-79 (LCN).
    """
    R, Q, S, T, sigma = _prepare(kind, R, Q, S, T, sigma)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        out = _terms(kind, R, Q, S, T, sigma)
    _finite_or_raise(out)
    return out


def _finite_or_raise(arrays) -> None:
    if not all(np.all(np.isfinite(a)) for a in arrays):
        raise ValueError("R, Q: the state does not define a valid (positive semi-definite) "
                         "covariance of the preactivations; the ODE terms are undefined")


def rhs(kind: str, R, Q, S, *, T=1.0, eta=1.0, sigma=0.0, validate: bool = True
        ) -> tuple[np.ndarray, np.ndarray]:
    """``(dR/dalpha, dQ/dalpha)`` of eq. 17 (CNN) or eq. 18 (LCN).

    ``dR = eta/k_s F_R``, ``dQ = eta/k_s F_Q + eta^2/k_s^2 G_Q``. ``eta``, ``sigma`` and ``T``
    may be arrays with the batch shape (a learning-rate sweep is one call).
    ``validate=False`` skips every check (the integrator's inner loop; the inputs must then
    be float arrays that broadcast, and a state outside the PSD cone gives NaN instead of an
    error).

    References
    ----------
    Mori et al. (CNN vs LCN), Result 3.1, eqs 17-18.
    """
    if not validate:
        return _rhs(kind, R, Q, S, T, eta, sigma)
    V.choice("kind", kind, KINDS)
    eta = np.asarray(eta, dtype=float)
    if not np.all(np.isfinite(eta)) or np.any(eta <= 0):
        raise ValueError(f"eta must be finite and > 0, got {eta}")
    R, Q, S, T, sigma = _prepare(kind, R, Q, S, T, sigma)
    out = _rhs(kind, R, Q, S, T, eta, sigma)
    _finite_or_raise(out)
    return out


def _rhs(kind, R, Q, S, T, eta, sigma):
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        F_R, F_Q, G_Q = _terms(kind, R, Q, S, T, sigma)
    k_s = R.shape[-2]
    nR = 2 if kind == "cnn" else 3
    nQ = 2 if kind == "cnn" else 4
    eR = np.asarray(eta, dtype=float).reshape(np.shape(eta) + (1,) * nR)
    eQ = np.asarray(eta, dtype=float).reshape(np.shape(eta) + (1,) * nQ)
    return eR / k_s * F_R, eQ / k_s * F_Q + eQ**2 / k_s**2 * G_Q
