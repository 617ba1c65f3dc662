"""The CNN of Hu et al. (2020, §4.1) at infinite width: dual activations, local overlaps, the
infinite-width NTK, the CNN's linear kernel (Prop. 4.1) and the NTK's Walsh eigenvalues.

On hypercube inputs the infinite-width NTK of the CNN (12) is
``(1/d) sum_k [Gamma(s_k) + s_k Phi(s_k)]`` in the local correlations
``s_k = [x]_{k:k+q} . [x']_{k:k+q} / q``; Prop. 4.1 (as reconstructed from App. E) says it is
close in spectral norm to the linear kernel ``2 zeta^2 x.x'/d`` plus a constant. Everything
here is numpy (no torch).

The kernels, constants and rates are built from ``Gamma`` and ``Phi`` alone (``Phi(0) = zeta^2``,
``Gamma(0) = c_0^2``, ``Phi'(0) = c_2^2`` by Mehler's formula): for ReLU and leaky ReLU these are the
arc-cosine kernels of :func:`td_lib.core.gaussian.arccos_kernel`, for the smooth activations
:func:`dual_activation`'s quadrature.

References
----------
Hu, Xiao, Adlam & Pennington (2020), §4.1, Prop. 4.1 and App. E.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from td_lib.core import validate as V
from td_lib.core.activations import LEAKY_SLOPE
from td_lib.core.gaussian import arccos_kernel, gauss_normal_nodes
from td_lib.early_linear._shared import LAYERS, act, hypercube

__all__ = ["dual_activation", "local_overlaps", "cnn_ntk_infinite", "CNNLinearConstants",
           "cnn_linear_constants", "cnn_linear_features", "cnn_linear_kernel", "cnn_walsh_rates"]

_GH_N = 120  # nodes per axis of the 2-d Gauss-Hermite rule of dual_activation


@lru_cache(maxsize=1)
def _gh_nodes() -> tuple[np.ndarray, np.ndarray]:
    """The nodes and normal weights of dual_activation's rule (computed once)."""
    return gauss_normal_nodes(_GH_N)


_PIECEWISE_LINEAR = ("relu", "leaky_relu")  # dual activations in closed form


def _correlation(s) -> np.ndarray:
    """``s`` as a float array of correlations, clipped to [-1, 1] (a ValueError beyond round-off)."""
    s = np.asarray(s, dtype=float)
    if np.any(np.abs(s) > 1 + 1e-12):
        raise ValueError("s must be a correlation in [-1, 1]")
    return np.clip(s, -1.0, 1.0)


def _arccos_duals(activation: str, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(Gamma, Phi)`` of ReLU or leaky ReLU from the arc-cosine kernels."""
    g_relu, f_relu = arccos_kernel(s, degree=1), arccos_kernel(s, degree=0)
    if activation == "relu":
        return g_relu, f_relu
    sl = LEAKY_SLOPE  # phi = sl z + (1 - sl) relu(z); E[u relu(u')] = s/2
    return (sl * sl * s + sl * (1 - sl) * s + (1 - sl) ** 2 * g_relu,
            sl * sl + sl * (1 - sl) + (1 - sl) ** 2 * f_relu)


def _duals(activation: str, s) -> tuple[np.ndarray, np.ndarray]:
    """``(Gamma(s), Phi(s))`` for the kernels below: the arc-cosine kernels for ReLU and leaky ReLU,
    :func:`dual_activation` for the smooth activations (where this copy of td_lib has it)."""
    act(activation)
    s = _correlation(s)
    if activation in _PIECEWISE_LINEAR:
        return _arccos_duals(activation, s)
    dual = globals().get("dual_activation")
    if dual is None:
        raise ValueError(f"activation={activation!r}: this copy of td_lib has the CNN kernels of "
                         f"{' and '.join(_PIECEWISE_LINEAR)} only")
    return dual(activation, s)


def _low_order(activation: str) -> tuple[float, float, float]:
    """``(c_0^2, c_1^2, c_2^2)`` of ``activation`` from its dual activations: ``Gamma(0)``,
    ``Phi(0)`` and ``Phi'(0)`` (Mehler: ``Phi(s) = sum_k c_{k+1}^2 s^k / k!``); the derivative by
    the five-point central difference with step 1e-3 (error ~1e-13)."""
    h = 1e-3
    G, F = _duals(activation, np.array([0.0, -2 * h, -h, h, 2 * h]))
    return float(G[0]), float(F[0]), float((F[1] - 8 * F[2] + 8 * F[3] - F[4]) / (12 * h))


def dual_activation(activation: str, s) -> tuple[np.ndarray, np.ndarray]:
    """``(Gamma(s), Phi(s)) = (E[phi(u) phi(u')], E[phi'(u) phi'(u')])`` for a standard
    Gaussian pair of correlation ``s`` (unit variances: patches of hypercube inputs).

    ReLU and leaky ReLU in closed form (arc-cosine kernels:
    ``Gamma = (sqrt(1-s^2) + (pi - arccos s) s) / (2 pi)``, ``Phi = (pi - arccos s) / (2 pi)``
    for ReLU; leaky ``a z + (1-a) relu(z)`` adds ``a s + ...``); the smooth activations by a
    120 x 120-node Gauss-Hermite rule. ``Gamma(s) = sum_k c_k^2 s^k / k!`` (Mehler) and
    ``Gamma'(s) = Phi(s)`` (Price's theorem).

    References
    ----------
    Hu et al. (2020), App. E (``Gamma``, ``Phi`` at unit variances); Cho & Saul (2009) for the
    arc-cosine kernels.

    Examples
    --------
    >>> G, F = dual_activation("relu", np.array([0.0, 1.0]))
    >>> np.round(G, 6), np.round(F, 6)      # 1/(2 pi), 1/2 and 1/4, 1/2
    (array([0.159155, 0.5     ]), array([0.25, 0.5 ]))
    """
    a = act(activation)
    s = _correlation(s)
    if activation in _PIECEWISE_LINEAR:
        return _arccos_duals(activation, s)
    x, w = _gh_nodes()
    u = x[:, None]
    wts = w[:, None] * w[None, :]
    flat = s.reshape(-1)
    G, F = np.empty(flat.size), np.empty(flat.size)
    for i, si in enumerate(flat):
        up = si * u + math.sqrt(max(0.0, 1.0 - si * si)) * x[None, :]
        G[i] = float(np.sum(wts * a.f(u) * a.f(up)))
        F[i] = float(np.sum(wts * a.df(u) * a.df(up)))
    return G.reshape(s.shape), F.reshape(s.shape)


def local_overlaps(X: np.ndarray, q: int, X2: np.ndarray | None = None,
                   rows: slice | None = None) -> np.ndarray:
    """Integer patch overlaps ``J[i, j, k] = [x_i]_{k:k+q} . [x_j]_{k:k+q}`` for hypercube inputs.

    The local correlations of App. E are ``s_k = J / q``; on ``{-1, 1}^d`` ``J`` takes the
    values ``-q, -q+2, ..., q``. ``rows`` restricts ``i`` (to build big kernels in blocks).
    Returns an int16 array ``(n_rows, n2, d)``.

    References
    ----------
    Hu et al. (2020), App. E.
    """
    X = hypercube("X", X)
    X2 = X if X2 is None else hypercube("X2", X2)
    d = X.shape[1]
    if X2.shape[1] != d:
        raise ValueError(f"X2 must have {d} columns, got {X2.shape[1]}")
    q = V.positive_int("q", q)
    if q > d:
        raise ValueError(f"q (filter size) must be <= d = {d}, got {q}")
    A = X[rows if rows is not None else slice(None)].astype(np.int8)
    P = (A[:, None, :] * X2.astype(np.int8)[None, :, :]).astype(np.int16)
    C = np.cumsum(np.concatenate([P, P[..., :q]], axis=-1), axis=-1, dtype=np.int16)
    C = np.concatenate([np.zeros(C.shape[:2] + (1,), np.int16), C], axis=-1)
    return C[..., q:q + d] - C[..., :d]


def cnn_ntk_infinite(X: np.ndarray, q: int, activation: str = "relu", layers: str = "both", *,
                     X2: np.ndarray | None = None, block: int = 2_000_000) -> np.ndarray:
    """Infinite-width NTK of the CNN (12) on hypercube inputs.

    ``Theta^(2)*(x, x') = (1/d) sum_k Gamma(s_k)``, ``Theta^(1)*(x, x') = (1/d) sum_k s_k Phi(s_k)``,
    ``s_k = [x]_{k:k+q} . [x']_{k:k+q} / q`` (patches of norm ``sqrt(q)``, so unit variances:
    see :func:`dual_activation`). ``Theta* = Theta^(1)* + Theta^(2)*`` for ``layers="both"``.
    The kernel is built in row blocks of about ``block`` overlaps.

    References
    ----------
    Hu et al. (2020), App. E.

    Examples
    --------
    >>> X = np.array([[1.0, 1.0, -1.0], [1.0, -1.0, 1.0]])
    >>> K = cnn_ntk_infinite(X, 3)      # s = 1 on the diagonal: E phi^2 + E phi'^2 = 1 for ReLU
    >>> np.round(K, 6).tolist()          # off the diagonal every s_k = -1/3
    [[1.0, 0.019444], [0.019444, 1.0]]
    """
    V.choice("layers", layers, LAYERS)
    X = hypercube("X", X)
    X2 = X if X2 is None else hypercube("X2", X2)
    q = V.positive_int("q", q)
    s = np.arange(-q, q + 1) / q
    G, F = _duals(activation, s)
    tab = {"first": s * F, "second": G, "both": s * F + G}[layers]
    n, n2, d = X.shape[0], X2.shape[0], X.shape[1]
    out = np.empty((n, n2))
    step = max(1, int(block) // max(1, n2 * d))
    for a in range(0, n, step):
        J = local_overlaps(X, q, X2, rows=slice(a, a + step))
        out[a:a + step] = tab[J + q].mean(axis=-1)
    return out


@dataclass(frozen=True)
class CNNLinearConstants:
    """Constants of the CNN's linear kernel (Prop. 4.1, as reconstructed) for one ``q``.

    ``const1 = E[s Phi(s)]`` and ``const2 = E[Gamma(s)]`` are the exact means of the filter and
    read-out kernels between two independent hypercube points (``s`` = local correlation of
    two independent patches, ``q s ~ 2 Bin(q, 1/2) - q``): to leading order
    ``const1 = c_2^2 / q`` and ``const2 = c_0^2 + c_2^2 / (2q)``. ``diag1 = E phi'(g)^2 - zeta^2 -
    const1``, ``diag2 = E phi(g)^2 - zeta^2 - const2`` are the identity parts left out.
    """

    zeta: float
    q: int
    const1: float
    const2: float
    diag1: float
    diag2: float


def _window_sum_law(q: int) -> tuple[np.ndarray, np.ndarray]:
    """Values ``j = -q..q`` of the sum of ``q`` independent signs and their probabilities."""
    j = np.arange(-q, q + 1)
    p = np.zeros(j.size)
    even = (j + q) % 2 == 0
    p[even] = [math.comb(q, int(k)) for k in (j[even] + q) // 2]
    return j, p / 2.0**q


def cnn_linear_constants(activation: str, q: int) -> CNNLinearConstants:
    """:class:`CNNLinearConstants` of ``activation`` and filter size ``q``.

    References
    ----------
    Hu et al. (2020), Prop. 4.1 (as reconstructed from App. E).

    Examples
    --------
    >>> c = cnn_linear_constants("relu", 8)
    >>> round(c.zeta, 12), round(c.const1 + c.const2, 3)
    (0.5, 0.191)
    """
    return _cnn_constants(activation, q)


def _cnn_constants(activation: str, q: int) -> CNNLinearConstants:
    """:class:`CNNLinearConstants` from the dual activations: ``zeta = sqrt(Phi(0))`` (``Phi(0) =
    (E phi')^2``; the features' sign does not change the kernel), the binomial means, and
    ``Gamma(1) = E phi^2``, ``Phi(1) = E phi'^2`` for the identity parts."""
    q = V.positive_int("q", q)
    j, p = _window_sum_law(q)
    s = j / q
    G, F = _duals(activation, np.concatenate([s, [0.0, 1.0]]))
    c1 = float(p @ (s * F[:-2]))
    c2 = float(p @ G[:-2])
    zeta2, e_phi2, e_dphi2 = float(F[-2]), float(G[-1]), float(F[-1])
    return CNNLinearConstants(zeta=math.sqrt(zeta2), q=q, const1=c1, const2=c2,
                              diag1=e_dphi2 - zeta2 - c1, diag2=e_phi2 - zeta2 - c2)


def cnn_linear_features(X: np.ndarray, c: CNNLinearConstants, layers: str = "both") -> np.ndarray:
    """Features of the CNN's linear model: ``(zeta x / sqrt(d), sqrt(const))`` per trained layer.

    ``layers="first"``: constant ``sqrt(const1)``; ``"second"``: ``sqrt(const2)``; ``"both"``:
    the two stacked, so that the kernel is ``2 zeta^2 x.x'/d + const1 + const2``.

    References
    ----------
    Hu et al. (2020), Prop. 4.1 (as reconstructed).
    """
    V.choice("layers", layers, LAYERS)
    X = V.array("X", X, ndim=2)
    n, d = X.shape
    one = np.ones((n, 1))
    f1 = np.hstack([c.zeta * X / math.sqrt(d), math.sqrt(max(c.const1, 0.0)) * one])
    f2 = np.hstack([c.zeta * X / math.sqrt(d), math.sqrt(max(c.const2, 0.0)) * one])
    return {"first": f1, "second": f2, "both": np.hstack([f1, f2])}[layers]


def cnn_linear_kernel(X: np.ndarray, c: CNNLinearConstants, layers: str = "both",
                      X2: np.ndarray | None = None) -> np.ndarray:
    """The CNN's linear kernel ``K_CNN(x, x') = 2 zeta^2 x.x'/d + const1 + const2`` (both layers).

    References
    ----------
    Hu et al. (2020), Prop. 4.1 (as reconstructed).
    """
    A = cnn_linear_features(X, c, layers)
    B = A if X2 is None else cnn_linear_features(X2, c, layers)
    return A @ B.T


def cnn_walsh_rates(activation: str, q: int, d: int, layers: str = "both") -> dict:
    """Eigenvalues of the infinite-width CNN NTK as an operator on ``{-1, 1}^d``.

    The kernel is a function of ``x * x'`` (entrywise), so the Walsh functions
    ``chi_S(x) = prod_{l in S} x_l`` are its eigenfunctions, with eigenvalue
    ``E_p[Theta*(p) chi_S(p)]`` for ``p`` uniform on the hypercube. With ``h = s Phi + Gamma``
    (both layers; ``s Phi`` or ``Gamma`` for one), ``S_q`` the sum of ``q`` signs and
    ``E[p_l | S_q] = S_q/q``, ``E[p_l p_l' | S_q] = (S_q^2 - q)/(q(q-1))``:

    * ``linear`` (``S = {l}``, a linear feature): ``(q/d) E[h(S_q/q) S_q/q]``, to leading order
      ``2 zeta^2 / d`` (both layers) -- the linear model's rate;
    * ``local`` (``S = {l, l+1}``, a product of neighbours): ``((q-1)/d) E[h(S_q/q)(S_q^2-q)] /
      (q(q-1))``, to leading order ``3 c_2^2 (q-1) / (d q^2)`` (both layers).

    GD with step ``eta`` on the population loss in the kernel regime relaxes the component of
    the target along ``chi_S`` by ``1 - eta * rate`` per step.

    References
    ----------
    Hu et al. (2020), App. E; Exercise 7.1b.E of the notebook.

    Examples
    --------
    >>> r = cnn_walsh_rates("relu", 8, 32)
    >>> round(r["linear"] / r["local"], 2)
    8.14
    """
    V.choice("layers", layers, LAYERS)
    q = V.positive_int("q", q, minimum=2)
    d = V.positive_int("d", d, minimum=q)
    j, p = _window_sum_law(q)
    s = j / q
    G, F = _duals(activation, s)
    h = {"first": s * F, "second": G, "both": s * F + G}[layers]
    return {"linear": float(q / d * (p @ (h * s))),
            "local": float((q - 1) / d * (p @ (h * (j**2 - q))) / (q * (q - 1)))}
