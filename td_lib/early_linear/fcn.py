"""The two-layer network of Hu et al. (2020, §3): data, teacher, symmetric initialisation,
network, NTK at initialisation, full-batch GD.

* (1) the network ``f(x; W, v) = m^{-1/2} sum_r v_r phi(w_r . x / sqrt(d))``;
* (2) the loss ``L = (1/2n) sum_i (f(x_i) - y_i)^2``;
* (3) the symmetric initialisation: ``w_r ~ N(0, I_d)``, ``v_r`` uniform on ``{+-1}`` for
  ``r <= m/2``, and ``w_{r+m/2} = w_r``, ``v_{r+m/2} = -v_r`` (so ``f = 0`` at ``t = 0``);
* (4) full-batch gradient descent with step ``eta1`` on ``W`` and ``eta2`` on ``v``;
* Assumption 3.1: ``x = Sigma^{1/2} xbar``, ``xbar`` with independent, zero-mean,
  unit-variance subgaussian entries, ``tr Sigma = d`` and ``||Sigma|| = O(1)``.

Weights are torch tensors (torch is imported when a function needs it); data are numpy
arrays. Activations come from :mod:`td_lib.core.activations` (names in
:data:`td_lib.early_linear.ACTIVATION_NAMES`).

References
----------
Hu, Xiao, Adlam & Pennington (2020), "The surprising simplicity of the early-time learning
dynamics of neural networks", §3, eqs. (1)-(4), Assumption 3.1, App. D.2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from td_lib.core import validate as V
from td_lib.core.runtime import bar, numpy_rng, torch_generator
from td_lib.early_linear._shared import LAYERS, GDRun, act, check_checkpoints

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["make_data", "teacher_labels", "symmetric_init", "network_output", "ntk_at_init",
           "train_network"]


def make_data(n: int, d: int, *, spectrum: Sequence[float] | np.ndarray | str = "ramp",
              entries: str = "gaussian", rotate: bool = True,
              rng: int | np.random.Generator | None = 0) -> tuple[np.ndarray, np.ndarray]:
    """Inputs satisfying Assumption 3.1: ``x = Sigma^{1/2} xbar``.

    Parameters
    ----------
    n, d : int
        Number of points and input dimension.
    spectrum : array of length ``d``, ``"flat"`` or ``"ramp"``
        Eigenvalues of ``Sigma`` before normalisation to ``tr Sigma = d``. ``"ramp"`` spaces
        them linearly in ``[0.5, 1.5]`` (so ``||Sigma|| <= 1.5``), ``"flat"`` gives ``I``.
    entries : ``"gaussian"`` or ``"rademacher"``
        Law of the independent unit-variance entries of ``xbar``.
    rotate : bool
        Use ``Sigma = U diag(lambda) U^T`` with a random orthogonal ``U`` (otherwise diagonal).
    rng : int seed, None or numpy Generator

    Returns
    -------
    X : (n, d) array
    Sigma : (d, d) array, the covariance (``tr Sigma = d``).

    References
    ----------
    Hu et al. (2020), Assumption 3.1.

    Examples
    --------
    >>> X, S = make_data(5, 3, rng=0)
    >>> X.shape, round(float(np.trace(S)), 12)
    ((5, 3), 3.0)
    """
    n = V.positive_int("n", n)
    d = V.positive_int("d", d)
    V.choice("entries", entries, ["gaussian", "rademacher"])
    gen = numpy_rng(rng)
    if isinstance(spectrum, str):
        V.choice("spectrum", spectrum, ["flat", "ramp"])
        lam = np.ones(d) if spectrum == "flat" or d == 1 else np.linspace(0.5, 1.5, d)
    else:
        lam = V.array("spectrum", spectrum, shape=(d,))
        if np.any(lam <= 0):
            raise ValueError("spectrum must be positive")
    lam = lam * d / lam.sum()
    if entries == "gaussian":
        xbar = gen.standard_normal((n, d))
    else:
        xbar = gen.choice(np.array([-1.0, 1.0]), size=(n, d))
    if rotate:
        u, _ = np.linalg.qr(gen.standard_normal((d, d)))
    else:
        u = np.eye(d)
    root = (u * np.sqrt(lam)) @ u.T
    return xbar @ root, (u * lam) @ u.T


def teacher_labels(X: np.ndarray, Sigma: np.ndarray, *, linear: float = 1.0,
                   quadratic: float = 1.0, rng: int | np.random.Generator | None = 1) -> np.ndarray:
    """Labels ``y = a_1 b.x / s_b + a_2 ((u.x)^2 - s_u^2) / (sqrt(2) s_u^2)``.

    ``b`` and ``u`` are random orthonormal directions, ``s_b^2 = b' Sigma b``,
    ``s_u^2 = u' Sigma u``; for Gaussian inputs each part has unit variance, so ``linear`` and
    ``quadratic`` set how much of the label a linear model can explain
    (``a_1^2 / (a_1^2 + a_2^2)``). ``Sigma`` is the input covariance of :func:`make_data`.

    Examples
    --------
    >>> X, S = make_data(20000, 4, rng=0)
    >>> y = teacher_labels(X, S, linear=1.0, quadratic=0.0)
    >>> round(float(np.var(y)), 1)       # unit variance (a sample of 20000)
    1.0
    """
    X = V.array("X", X, ndim=2)
    d = X.shape[1]
    Sigma = V.array("Sigma", Sigma, shape=(d, d))
    a1 = V.finite("linear", linear)
    a2 = V.finite("quadratic", quadratic)
    q, _ = np.linalg.qr(numpy_rng(rng).standard_normal((d, 2)))
    b, u = q[:, 0], q[:, 1]
    sb2, su2 = b @ Sigma @ b, u @ Sigma @ u
    return a1 * (X @ b) / math.sqrt(sb2) + a2 * ((X @ u) ** 2 - su2) / (math.sqrt(2) * su2)


def symmetric_init(d: int, m: int, *, runs: int | None = None, rng=0,
                   dtype: torch.dtype | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric initialisation (3): ``W`` of shape ``(m, d)``, ``v`` of shape ``(m,)``.

    Rows ``r < m/2`` have ``w_r ~ N(0, I_d)`` and ``v_r = +-1``; row ``r + m/2`` copies ``w_r``
    with ``v_{r+m/2} = -v_r``, so the network output is exactly 0 at initialisation. With
    ``runs`` an integer, a leading axis of independent initialisations is added. ``rng`` is an
    int seed, a torch or numpy Generator, or None (:func:`td_lib.core.runtime.torch_generator`);
    ``dtype`` defaults to ``torch.float64``.

    References
    ----------
    Hu et al. (2020), eq. (3).

    Examples
    --------
    >>> W, v = symmetric_init(3, 4, rng=0)
    >>> tuple(W.shape), bool((W[:2] == W[2:]).all()), v.tolist()[:2] == (-v[2:]).tolist()
    ((4, 3), True, True)
    """
    import torch

    d = V.positive_int("d", d)
    m = V.positive_int("m", m, minimum=2)
    if m % 2:
        raise ValueError(f"m must be even for the symmetric initialisation, got {m}")
    r = 1 if runs is None else V.positive_int("runs", runs)
    dtype = torch.float64 if dtype is None else dtype
    gen = torch_generator(rng)
    w = torch.randn(r, m // 2, d, generator=gen, dtype=dtype)
    s = torch.randint(0, 2, (r, m // 2), generator=gen).to(dtype) * 2 - 1
    W = torch.cat([w, w], dim=1)
    v = torch.cat([s, -s], dim=1)
    return (W[0], v[0]) if runs is None else (W, v)


def network_output(X, W: torch.Tensor, v: torch.Tensor, activation: str = "relu") -> torch.Tensor:
    """Network (1): ``f(x) = m^{-1/2} sum_r v_r phi(w_r . x / sqrt(d))``.

    ``W`` is ``(m, d)`` or ``(R, m, d)`` with ``v`` of matching shape ``(m,)`` / ``(R, m)``;
    returns ``(n,)`` or ``(R, n)``.

    References
    ----------
    Hu et al. (2020), eq. (1).
    """
    import torch

    phi = act(activation).f
    X = torch.as_tensor(X, dtype=W.dtype)
    if X.ndim != 2 or X.shape[1] != W.shape[-1]:
        raise ValueError(f"X must have shape (n, {W.shape[-1]}), got {tuple(X.shape)}")
    if v.shape != W.shape[:-1]:
        raise ValueError(f"v must have shape {tuple(W.shape[:-1])}, got {tuple(v.shape)}")
    d, m = W.shape[-1], W.shape[-2]
    z = torch.matmul(X, W.transpose(-1, -2)) / math.sqrt(d)
    return torch.matmul(phi(z), v.unsqueeze(-1)).squeeze(-1) / math.sqrt(m)


def ntk_at_init(X, W: torch.Tensor, v: torch.Tensor, activation: str = "relu",
                layers: str = "both", *, X2=None, block: int = 4096) -> np.ndarray:
    """Empirical NTK of network (1), ``Theta(X, X2)`` as a numpy array.

    ``Theta1(x, x') = (x.x'/d) (1/m) sum_r v_r^2 phi'(w_r.x/sqrt d) phi'(w_r.x'/sqrt d)``,
    ``Theta2(x, x') = (1/m) sum_r phi(w_r.x/sqrt d) phi(w_r.x'/sqrt d)``, and
    ``Theta = Theta1 + Theta2`` for ``layers="both"``. Neurons are summed in blocks of
    ``block`` to bound memory.

    References
    ----------
    Hu et al. (2020), App. D.2 (the NTK of network (1); Prop. 3.4 compares it with ``K1``).

    Examples
    --------
    >>> X, _ = make_data(4, 3, rng=1)
    >>> W, v = symmetric_init(3, 6, rng=2)
    >>> K = ntk_at_init(X, W, v, "relu", "first")
    >>> K.shape, bool(np.allclose(K, K.T))
    ((4, 4), True)
    """
    import torch

    V.choice("layers", layers, LAYERS)
    if W.ndim != 2:
        raise ValueError(f"W must have shape (m, d), got {tuple(W.shape)}")
    a = act(activation)
    Xa = torch.as_tensor(X, dtype=W.dtype)
    Xb = Xa if X2 is None else torch.as_tensor(X2, dtype=W.dtype)
    m, d = W.shape
    for name, A in (("X", Xa), ("X2", Xb)):
        if A.ndim != 2 or A.shape[1] != d:
            raise ValueError(f"{name} must have shape (n, {d}), got {tuple(A.shape)}")
    K1 = torch.zeros(Xa.shape[0], Xb.shape[0], dtype=W.dtype)
    K2 = torch.zeros_like(K1)
    for s in range(0, m, block):
        Wb, vb = W[s:s + block], v[s:s + block]
        za, zb = Xa @ Wb.T / math.sqrt(d), Xb @ Wb.T / math.sqrt(d)
        if layers in ("first", "both"):
            K1 += (a.df(za) * vb**2) @ a.df(zb).T
        if layers in ("second", "both"):
            K2 += a.f(za) @ a.f(zb).T
    K1 = K1 / m * (Xa @ Xb.T) / d
    K2 = K2 / m
    out = {"first": K1, "second": K2, "both": K1 + K2}[layers]
    return out.numpy()


def train_network(X: np.ndarray, y: np.ndarray, W0: torch.Tensor, v0: torch.Tensor, *,
                  activation: str = "relu", eta: float = 1.0, layers: str = "both",
                  checkpoints: Sequence[int] = (0, 1, 10, 100),
                  X_test: np.ndarray | None = None, progress: bool | str = False) -> GDRun:
    """Full-batch GD (4) on loss (2) for network (1), vectorised over runs.

    ``W0`` is ``(m, d)`` or ``(R, m, d)`` (independent runs on the same data), ``v0`` matches.
    ``layers`` selects which layers move (``eta1 = eta`` and/or ``eta2 = eta``). Gradients are
    written out: ``dL/dv_r = (1/n) sum_i r_i phi(z_ir)/sqrt m`` and
    ``dL/dw_r = (1/n) sum_i r_i v_r phi'(z_ir) x_i / sqrt(m d)``, ``r_i = f(x_i) - y_i``.
    ``progress`` shows a bar over the steps (``True``: labelled "GD").

    Returns
    -------
    GDRun
        ``t`` (the checkpoints), ``train`` (``(T, n)`` or ``(T, R, n)`` predictions), ``test``
        (the same on ``X_test``, if given), ``loss`` (train loss (2)) and ``dW``
        (``||W(t) - W(0)||_F``).

    References
    ----------
    Hu et al. (2020), eqs. (2) and (4).
    """
    import torch

    V.choice("layers", layers, LAYERS)
    eta = V.finite("eta", eta, positive=True)
    ts = check_checkpoints(checkpoints)
    a_ = act(activation)
    phi, dphi = a_.f, a_.df
    dt = W0.dtype
    single = W0.ndim == 2
    W = (W0.unsqueeze(0) if single else W0).clone()
    v = (v0.unsqueeze(0) if single else v0).clone()
    if W.ndim != 3 or v.shape != W.shape[:2]:
        raise ValueError(f"W0/v0 shapes do not match: {tuple(W0.shape)}, {tuple(v0.shape)}")
    Xt = torch.as_tensor(V.array("X", X, ndim=2), dtype=dt)
    n, d = Xt.shape
    if d != W.shape[2]:
        raise ValueError(f"X must have {W.shape[2]} columns, got {d}")
    yt = torch.as_tensor(V.array("y", y, shape=(n,)), dtype=dt)
    Xs = None if X_test is None else torch.as_tensor(V.array("X_test", X_test, ndim=2), dtype=dt)
    m = W.shape[1]
    sm, sd = math.sqrt(m), math.sqrt(d)
    W_init = W.clone()
    out: dict[str, list] = {"train": [], "test": [], "loss": [], "dW": []}

    def record(f_train: torch.Tensor) -> None:
        out["train"].append(f_train.clone())
        out["loss"].append(0.5 * ((f_train - yt) ** 2).mean(-1))
        out["dW"].append(torch.linalg.norm((W - W_init).flatten(1), dim=1))
        if Xs is not None:
            zs = torch.matmul(Xs, W.transpose(1, 2)) / sd
            out["test"].append(torch.matmul(phi(zs), v.unsqueeze(-1)).squeeze(-1) / sm)

    k = 0
    for step in bar(range(int(ts[-1]) + 1), progress, "GD"):
        z = torch.matmul(Xt, W.transpose(1, 2)) / sd            # (R, n, m)
        a = phi(z)
        f = torch.matmul(a, v.unsqueeze(-1)).squeeze(-1) / sm   # (R, n)
        if k < len(ts) and step == ts[k]:
            record(f)
            k += 1
            if k == len(ts):
                continue  # last checkpoint recorded: no further update needed
        r = (f - yt) / n                                        # (R, n)
        if layers in ("first", "both"):
            g = dphi(z) * r.unsqueeze(-1) * (v / sm).unsqueeze(1)   # (R, n, m)
            gW = torch.matmul(g.transpose(1, 2), Xt) / sd
        if layers in ("second", "both"):
            gv = torch.matmul(a.transpose(1, 2), r.unsqueeze(-1)).squeeze(-1) / sm
            v = v - eta * gv
        if layers in ("first", "both"):
            W = W - eta * gW
    res = {key: torch.stack(val)[:, 0] if single else torch.stack(val) for key, val in out.items() if val}
    return GDRun(t=ts, **res)
