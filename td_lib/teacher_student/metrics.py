"""Specialisation measures: how well each teacher node is copied by some student node (Tian 2020, §6–7).

Per teacher node ``j`` and over time:

* the best Pearson correlation over student nodes of the activations ``f*_j(x)`` and
  ``f_k(x)`` over an evaluation set (the paper's "normalized correlation", §6 and §7);
* the best cosine between augmented weights ``w*_j`` and ``w_k`` (Definition 3: node ``k``
  is aligned with ``j`` when ``w_k = γ w*_j`` with ``γ > 0``, i.e. cosine 1).

A teacher node is *matched* when its best correlation exceeds 0.95, the paper's criterion.

Examples
--------
>>> import numpy as np
>>> F = np.random.default_rng(0).standard_normal((50, 2))
>>> best, who = best_match(activation_correlation(F, F[:, ::-1]))
>>> best.round(6).tolist(), who.tolist()
([1.0, 1.0], [1, 0])
>>> first_match_times([0, 10, 20], [[0.2], [0.97], [0.99]]).tolist()
[10.0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from td_lib.core import validate as V

__all__ = ["THRESHOLDS", "activation_correlation", "weight_cosine", "best_match", "coverage_counts",
           "first_match_times", "focus_shifts"]

#: Correlation thresholds of the coverage counts (the paper's Fig. 9 uses 0.95).
THRESHOLDS: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


def activation_correlation(F_teacher, F_student, eps: float = 1e-12) -> np.ndarray:
    """Pearson correlation between every teacher and student node over evaluation points.

    Parameters
    ----------
    F_teacher : array, shape (..., N, m)
    F_student : array, shape (..., N, n)
        Activations over the same ``N`` evaluation inputs.
    eps : float
        A node whose activation is constant over the set (a dead ReLU) has correlation 0.

    Returns
    -------
    ndarray, shape (..., m, n)
        ``ρ_jk = f̃*_jᵀ f̃_k``, ``f̃`` the centred activation vector normalised to unit length
        (the paper's normalized correlation, §7).

    References
    ----------
    Tian (2020), §6–7 ("normalized correlation" between teacher and student activations).
    """
    A = V.array("F_teacher", F_teacher)
    B = V.array("F_student", F_student)
    if A.ndim < 2 or B.ndim < 2 or A.shape[:-1] != B.shape[:-1]:
        raise ValueError(f"F_teacher and F_student must share all axes but the last, got "
                         f"{A.shape} and {B.shape}")
    if A.shape[-2] < 2:
        raise ValueError(f"need at least 2 evaluation points, got {A.shape[-2]}")

    def unit(F):
        Fc = F - F.mean(axis=-2, keepdims=True)
        nrm = np.linalg.norm(Fc, axis=-2, keepdims=True)
        scale = np.maximum(np.abs(F).max(axis=-2, keepdims=True), 1.0)
        return np.where(nrm > eps * scale, Fc / np.where(nrm > 0, nrm, 1.0), 0.0)

    return np.swapaxes(unit(A), -1, -2) @ unit(B)


def weight_cosine(W_teacher, W_student) -> np.ndarray:
    """Cosines between augmented weights, shape (..., m, n), from (..., d+1, m) and (..., d+1, n).

    References
    ----------
    Tian (2020), Definition 3 (node ``k`` aligned with ``j``: ``w_k = γ w*_j``, ``γ > 0``).
    """
    A = V.array("W_teacher", W_teacher)
    B = V.array("W_student", W_student)
    if A.ndim < 2 or A.shape[:-1] != B.shape[:-1]:
        raise ValueError(f"W_teacher and W_student must share all axes but the last, got "
                         f"{A.shape} and {B.shape}")
    na = np.linalg.norm(A, axis=-2, keepdims=True)
    nb = np.linalg.norm(B, axis=-2, keepdims=True)
    if np.any(na == 0):
        raise ValueError("W_teacher has a zero column")
    Bn = B / np.where(nb > 0, nb, 1.0)
    return np.swapaxes(A / na, -1, -2) @ Bn


def best_match(M) -> tuple[np.ndarray, np.ndarray]:
    """Per teacher node, the best value over student nodes and the student achieving it.

    ``M`` has shape (..., m, n); returns ``(best, argbest)`` of shape (..., m).
    """
    M = V.array("M", M)
    if M.ndim < 2:
        raise ValueError(f"M must be at least 2-dimensional (..., m, n), got {M.shape}")
    return M.max(axis=-1), M.argmax(axis=-1)


def coverage_counts(best, thresholds: Sequence[float] = THRESHOLDS) -> np.ndarray:
    """Number of teacher nodes whose best match exceeds each threshold.

    ``best`` has shape (..., m); returns shape (..., len(thresholds)) of ints.
    """
    best = V.array("best", best)
    th = V.array("thresholds", thresholds, ndim=1)
    if th.size == 0 or np.any(np.abs(th) > 1):
        raise ValueError(f"thresholds must be a non-empty list of values in [-1, 1], got {th}")
    return (best[..., None, :] > th[:, None]).sum(axis=-1)


def first_match_times(times, best_history, threshold: float = 0.95) -> np.ndarray:
    """First time each teacher node's best match exceeds ``threshold`` (``inf`` if never).

    ``times`` shape (T,), ``best_history`` shape (T, ..., m); returns shape (..., m).
    """
    t = V.array("times", times, ndim=1)
    bh = V.array("best_history", best_history)
    if bh.ndim < 2 or bh.shape[0] != t.size:
        raise ValueError(f"best_history must have shape (T={t.size}, ..., m), got {bh.shape}")
    threshold = V.in_interval("threshold", threshold, -1.0, 1.0, closed="both")
    hit = bh > threshold
    first = np.argmax(hit, axis=0)
    out = t[first].astype(float)
    out[~hit.any(axis=0)] = np.inf
    return out


def focus_shifts(corr, *, peak: float = 0.6, drop: float = 0.25, final: float = 0.9) -> list[dict]:
    """Student nodes that chase one teacher node, then shift to another (Tian §5.3, Fig. 6b).

    Parameters
    ----------
    corr : array, shape (T, R, m, n)
        Correlation history (``History.corr``).
    peak : float
        The node's correlation with its first teacher ``j1`` must reach at least ``peak``...
    drop : float
        ...then fall by at least ``drop`` below that peak by the end, while...
    final : float
        ...its final correlation with another teacher ``j2`` is at least ``final``.

    Returns
    -------
    list of dict
        One record per event with keys ``run``, ``node``, ``j1``, ``j2``, ``t_peak`` (index
        into the time axis of the peak with ``j1``), ``peak``, ``end_j1``, ``end_j2``;
        sorted by decreasing ``peak − end_j1`` (the clearest shift first).

    References
    ----------
    Tian (2020), §5.3 and Fig. 6(b) (focus shifting).
    """
    C = V.array("corr", corr, ndim=4)
    peak = V.in_interval("peak", peak, -1.0, 1.0, closed="both")
    drop = V.finite("drop", drop, positive=True)
    final = V.in_interval("final", final, -1.0, 1.0, closed="both")
    _, R, m, n = C.shape
    out = []
    for r in range(R):
        for k in range(n):
            ck = C[:, r, :, k]  # (T, m)
            j2 = int(np.argmax(ck[-1]))
            if ck[-1, j2] < final:
                continue
            others = [j for j in range(m) if j != j2]
            pk = ck[:, others].max(axis=0)
            i = int(np.argmax(pk))
            j1 = others[i]
            if pk[i] >= peak and pk[i] - ck[-1, j1] >= drop:
                t_pk = int(np.argmax(ck[:, j1]))
                out.append(dict(run=r, node=k, j1=j1, j2=j2, t_peak=t_pk, peak=float(pk[i]),
                                end_j1=float(ck[-1, j1]), end_j2=float(ck[-1, j2])))
    return sorted(out, key=lambda e: e["end_j1"] - e["peak"])
