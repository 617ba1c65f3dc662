"""The CNN of Hu et al. (2020, §4.1, eq. (12)) at finite width: patches, symmetric
initialisation, output, NTK, labels on the hypercube and full-batch GD.

A 1-d CNN with one convolutional layer and no pooling,
``f(x) = (md)^{-1/2} sum_r sum_k V_rk phi(w_r . [x]_{k:k+q} / sqrt(q))`` (``m`` filters of size
``q``, circular padding), on inputs uniform on the hypercube ``{-1, 1}^d``. The display
equations of §4.1 are lost in the text of the paper we had: the CNN and its initialisation are
reconstructed from App. E. Its infinite-width NTK and linear kernel are in
:mod:`td_lib.early_linear.cnn_kernel`.

References
----------
Hu, Xiao, Adlam & Pennington (2020), §4.1, eq. (12), Prop. 4.1 and App. E.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from td_lib.core import validate as V
from td_lib.core.runtime import bar, numpy_rng, torch_generator
from td_lib.early_linear._shared import LAYERS, GDRun, act, check_checkpoints, hypercube

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["cnn_patches", "cnn_symmetric_init", "cnn_output", "cnn_ntk", "cnn_teacher_labels",
           "train_cnn"]


def _patch_index(d: int, q: int) -> np.ndarray:
    return (np.arange(d)[:, None] + np.arange(q)[None, :]) % d


def cnn_patches(X, q: int):
    """Circular patches ``[x]_{k:k+q} = (x_k, ..., x_{k+q-1})`` (indices mod ``d``): ``(n, d, q)``.

    Works on numpy arrays and torch tensors alike (same type out).

    References
    ----------
    Hu et al. (2020), eq. (12) (as reconstructed from App. E).

    Examples
    --------
    >>> cnn_patches(np.array([[1.0, 2.0, 3.0]]), 2)[0].tolist()
    [[1.0, 2.0], [2.0, 3.0], [3.0, 1.0]]
    """
    if X.ndim != 2:
        raise ValueError(f"X must have shape (n, d), got {tuple(X.shape)}")
    d = X.shape[1]
    q = V.positive_int("q", q)
    if q > d:
        raise ValueError(f"q (filter size) must be <= d = {d}, got {q}")
    idx = _patch_index(d, q)
    if isinstance(X, np.ndarray):
        return X[:, idx]
    import torch

    return X[:, torch.as_tensor(idx)]


def cnn_symmetric_init(*, d: int, q: int, m: int, rng=0,
                       dtype: torch.dtype | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric initialisation of the CNN (12): filters ``W`` (m, q), read-out ``V`` (m, d).

    For ``r < m/2``: ``w_r ~ N(0, I_q)`` and ``V_r`` has independent entries uniform on
    ``{+-1}``; filter ``r + m/2`` copies ``w_r`` with ``V_{r+m/2} = -V_r``, so the output is
    exactly 0 at ``t = 0`` (as (3) for the two-layer network). Any law of ``V`` with
    ``E V_rk V_rk' = delta_kk'`` gives the same infinite-width NTK. ``rng``: int seed, torch or
    numpy Generator, or None; ``dtype`` defaults to ``torch.float64``.

    References
    ----------
    Hu et al. (2020), App. E (as reconstructed), after eq. (3).

    Examples
    --------
    >>> W, V_ = cnn_symmetric_init(d=5, q=3, m=4, rng=0)
    >>> tuple(W.shape), tuple(V_.shape), bool((V_[:2] == -V_[2:]).all())
    ((4, 3), (4, 5), True)
    """
    import torch

    d = V.positive_int("d", d)
    q = V.positive_int("q", q)
    if q > d:
        raise ValueError(f"q (filter size) must be <= d = {d}, got {q}")
    m = V.positive_int("m", m, minimum=2)
    if m % 2:
        raise ValueError(f"m must be even for the symmetric initialisation, got {m}")
    dtype = torch.float64 if dtype is None else dtype
    gen = torch_generator(rng)
    w = torch.randn(m // 2, q, generator=gen, dtype=dtype)
    s = torch.randint(0, 2, (m // 2, d), generator=gen).to(dtype) * 2 - 1
    return torch.cat([w, w]), torch.cat([s, -s])


def _cnn_check(X, W: torch.Tensor, Vr: torch.Tensor) -> torch.Tensor:
    import torch

    if W.ndim != 2 or Vr.ndim != 2 or W.shape[0] != Vr.shape[0]:
        raise ValueError(f"W must be (m, q) and V (m, d) with the same m, got {tuple(W.shape)} "
                         f"and {tuple(Vr.shape)}")
    X = torch.as_tensor(X, dtype=W.dtype)
    if X.ndim != 2 or X.shape[1] != Vr.shape[1]:
        raise ValueError(f"X must have shape (n, {Vr.shape[1]}), got {tuple(X.shape)}")
    return X


def cnn_output(X, W: torch.Tensor, V_: torch.Tensor, activation: str = "relu") -> torch.Tensor:
    """The CNN (12): ``f(x) = (md)^{-1/2} sum_{r<=m} sum_{k<=d} V_rk phi(w_r . [x]_{k:k+q} / sqrt(q))``.

    One convolutional layer (``m`` filters ``w_r`` of size ``q``, stride 1, circular padding),
    no pooling, a linear read-out ``V`` over filters and positions. Returns ``(n,)``.

    References
    ----------
    Hu et al. (2020), eq. (12) (as reconstructed from App. E).
    """
    import torch

    phi = act(activation).f
    X = _cnn_check(X, W, V_)
    m, q = W.shape
    d = X.shape[1]
    z = torch.einsum("nkq,rq->nkr", cnn_patches(X, q), W) / math.sqrt(q)
    return torch.einsum("nkr,rk->n", phi(z), V_) / math.sqrt(m * d)


def cnn_ntk(X, W: torch.Tensor, V_: torch.Tensor, activation: str = "relu",
            layers: str = "both", *, X2=None) -> np.ndarray:
    """Finite-width NTK of the CNN (12): ``Theta^(1)`` (filters), ``Theta^(2)`` (read-out).

    ``Theta^(2)(x, x') = (1/(md)) sum_r sum_k phi(z_rk(x)) phi(z_rk(x'))`` and
    ``Theta^(1)(x, x') = (1/(mdq)) sum_r g_r(x) . g_r(x')`` with
    ``g_r(x) = sum_k V_rk phi'(z_rk(x)) [x]_{k:k+q}``, ``z_rk(x) = w_r . [x]_{k:k+q} / sqrt(q)``.

    References
    ----------
    Hu et al. (2020), App. E.
    """
    import torch

    V.choice("layers", layers, LAYERS)
    a = act(activation)
    Xa = _cnn_check(X, W, V_)
    Xb = Xa if X2 is None else _cnn_check(X2, W, V_)
    m, q = W.shape
    d = Xa.shape[1]
    out = torch.zeros(Xa.shape[0], Xb.shape[0], dtype=W.dtype)
    Pa, Pb = cnn_patches(Xa, q), cnn_patches(Xb, q)
    Za = torch.einsum("nkq,rq->nkr", Pa, W) / math.sqrt(q)
    Zb = Za if X2 is None else torch.einsum("nkq,rq->nkr", Pb, W) / math.sqrt(q)
    if layers in ("second", "both"):
        Aa, Ab = a.f(Za).flatten(1), a.f(Zb).flatten(1)
        out += Aa @ Ab.T / (m * d)
    if layers in ("first", "both"):
        Ga = torch.bmm((a.df(Za) * V_.T).transpose(1, 2), Pa).flatten(1)    # (n, m q)
        Gb = torch.bmm((a.df(Zb) * V_.T).transpose(1, 2), Pb).flatten(1)
        out += Ga @ Gb.T / (m * d * q)
    return out.numpy()


def cnn_teacher_labels(X: np.ndarray, *, linear: float = 1.0, local: float = 1.0,
                       rng: int | np.random.Generator | None = 1) -> np.ndarray:
    """Labels ``y = a_1 b.x + a_2 d^{-1/2} sum_k x_k x_{k+1}`` on hypercube inputs.

    ``b`` is a random unit vector; the second part is a translation-invariant local quadratic
    (indices mod ``d``). On ``{-1, 1}^d`` (``d >= 3``) both parts have mean 0 and variance 1 and
    are uncorrelated, and no linear function of ``x`` correlates with the second.
    """
    X = hypercube("X", X)
    a1 = V.finite("linear", linear)
    a2 = V.finite("local", local)
    d = X.shape[1]
    if d < 3:
        raise ValueError(f"d must be >= 3 for the local quadratic part, got {d}")
    b = numpy_rng(rng).standard_normal(d)
    b /= np.linalg.norm(b)
    return a1 * (X @ b) + a2 * (X * np.roll(X, -1, axis=1)).sum(1) / math.sqrt(d)


def train_cnn(X: np.ndarray, y: np.ndarray, W0: torch.Tensor, V0: torch.Tensor, *,
              activation: str = "relu", eta: float = 1.0, layers: str = "both",
              checkpoints: Sequence[int] = (0, 1, 10, 100), X_test: np.ndarray | None = None,
              progress: bool | str = False) -> GDRun:
    """Full-batch GD on loss (2) for the CNN (12), with step ``eta`` on the layers selected.

    Gradients written out (``r_i = (f(x_i) - y_i)/n``):
    ``dL/dV_rk = sum_i r_i phi(z_irk) / sqrt(md)`` and
    ``dL/dw_r = sum_i r_i sum_k V_rk phi'(z_irk) [x_i]_{k:k+q} / sqrt(mdq)``.
    ``progress`` shows a bar over the steps (``True``: labelled "GD, CNN").

    Returns
    -------
    GDRun
        ``t`` (the checkpoints), ``train`` (``(T, n)``), ``test`` (if ``X_test``) and ``loss``.

    References
    ----------
    Hu et al. (2020), eq. (12) with the loss (2).
    """
    import torch

    V.choice("layers", layers, LAYERS)
    eta = V.finite("eta", eta, positive=True)
    ts = check_checkpoints(checkpoints)
    a_ = act(activation)
    phi, dphi = a_.f, a_.df
    W, Vr = W0.clone(), V0.clone()
    Xt = _cnn_check(V.array("X", X, ndim=2), W, Vr)
    n, d = Xt.shape
    m, q = W.shape
    yt = torch.as_tensor(V.array("y", y, shape=(n,)), dtype=W.dtype)
    Pt = cnn_patches(Xt, q).reshape(n * d, q)                  # rows (i, k)
    Ps = None if X_test is None else cnn_patches(
        _cnn_check(V.array("X_test", X_test, ndim=2), W, Vr), q).reshape(-1, q)
    sq, smd = math.sqrt(q), math.sqrt(m * d)
    out: dict[str, list] = {"train": [], "test": [], "loss": []}

    def forward(P: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        z = (P @ W.T / sq).reshape(-1, d, m)                   # (n, d, m)
        a = phi(z)
        return z, a, a.reshape(a.shape[0], -1) @ Vr.T.reshape(-1) / smd

    k = 0
    for step in bar(range(int(ts[-1]) + 1), progress, "GD, CNN"):
        z, a, f = forward(Pt)
        if k < len(ts) and step == ts[k]:
            out["train"].append(f.clone())
            out["loss"].append(0.5 * ((f - yt) ** 2).mean())
            if Ps is not None:
                out["test"].append(forward(Ps)[2])
            k += 1
            if k == len(ts):
                break
        r = (f - yt) / n
        gV = gW = None
        if layers in ("second", "both"):
            gV = (r @ a.reshape(n, -1)).reshape(d, m).T / smd
        if layers in ("first", "both"):
            B = dphi(z) * (r[:, None, None] * Vr.T[None])         # (n, d, m)
            gW = B.reshape(n * d, m).T @ Pt / (smd * sq)
        if gV is not None:
            Vr = Vr - eta * gV
        if gW is not None:
            W = W - eta * gW
    return GDRun(t=ts, **{key: torch.stack(val) for key, val in out.items() if val})
