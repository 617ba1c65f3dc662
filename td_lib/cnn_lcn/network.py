"""Finite-D CNN and LCN networks in torch: inputs, preactivations, one SGD step (Mori et al., eqs 1-13,
36, 68).

torch is imported on first use (``_LazyTorch``): importing :mod:`td_lib.cnn_lcn` for the ODE
engine costs no torch start-up (about 1.5 s), which the graded cells of the notebook never need.

* :func:`sample_inputs` -- inputs with ``E[x_{p,a} x_{q,b}] = S_pq delta_ab`` (eq. 2). For the
  default covariance of eq. 3 the cost is O(PD) per sample (``x_p = sqrt(1-c) z_p + sqrt(c) z_0``);
  for a general ``S`` a Cholesky factor is applied (O(P^2 D)).
* :class:`Networks` -- teacher and student weights of ``B`` runs with the forward pass and the
  SGD update; :func:`preactivations` and :func:`sgd_step` expose them on numpy arrays.
* :func:`eg_from_order` -- eps_g from the order parameters (erf: eq. 81; relu: arc-cosine kernel).

The activation is a name of :mod:`td_lib.core.activations`: ``"erf_sqrt2"`` (``g(z) =
erf(z/sqrt 2)``, the paper's "erf") or ``"relu"`` (:data:`ACTIVATIONS`). The simulators built on
these are in :mod:`td_lib.cnn_lcn.sgd`.

References
----------
Mori et al., *exact online-SGD dynamics of CNN vs LCN students*, eqs 1-13, 36 and 68.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from td_lib.cnn_lcn.model import (
    KINDS,
    check_S,
    generalisation_error,
    input_covariance,
    preactivation_covariance,
)
from td_lib.core import activations
from td_lib.core import validate as V
from td_lib.core.gaussian import arccos_kernel
from td_lib.core.runtime import torch_generator

if TYPE_CHECKING:
    import torch

__all__ = ["ACTIVATIONS", "Networks", "sample_inputs", "input_factor", "draw_inputs", "preactivations",
           "sgd_step", "eg_from_order"]


class _LazyTorch:
    """Stands in for the ``torch`` module until an attribute is first needed, then imports it
    and replaces itself by the real module in this module's globals."""

    def __getattr__(self, name):
        import torch as _t

        globals()["torch"] = _t
        return getattr(_t, name)


if not TYPE_CHECKING:
    torch = _LazyTorch()

#: the activations (registry names) the CNN/LCN formulas support: the paper's g and ReLU
ACTIVATIONS = ("erf_sqrt2", "relu")


def input_factor(P: int, *, c: float = 0.0, S=None):
    """``(S, c, L)`` for drawing inputs: eq. 3 with correlation ``c`` (``L = None``: O(PD)
    sampling) or the given covariance ``S`` with a factor ``S = L L^T`` (``c = None``)."""
    if S is None:
        c = V.in_interval("c", c, 0.0, 1.0)
        return input_covariance(P, c), c, None
    S = check_S(S, P)
    if S.ndim != 2:
        raise ValueError(f"S must be a single P x P matrix here, got shape {S.shape}")
    w, U = np.linalg.eigh(S)
    L = U * np.sqrt(np.clip(w, 0, None))  # S = L L^T, works for singular S too
    return S, None, L


def sample_inputs(*, n: int, P: int, D: int, S=None, c: float = 0.0, rng=None, batch: tuple = (),
                  dtype=None) -> torch.Tensor:
    """Gaussian inputs ``(*batch, n, P, D)`` with position covariance ``S`` (or eq. 3 with ``c``).

    ``rng``: an int seed, ``None``, a numpy Generator or a ``torch.Generator`` (an int gives
    ``torch.Generator().manual_seed(rng)``); ``dtype`` is a torch dtype (default
    ``torch.float64``).

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 2-3.

    Examples
    --------
    >>> x = sample_inputs(n=2000, P=3, D=50, c=0.5, rng=0)
    >>> tuple(x.shape), round(float((x[:, 0] * x[:, 1]).mean()), 1)  # E x_0a x_1a = c
    ((2000, 3, 50), 0.5)
    """
    dtype = torch.float64 if dtype is None else dtype
    n = V.positive_int("n", n)
    P = V.positive_int("P", P)
    D = V.positive_int("D", D)
    S_, c_, L = input_factor(P, c=c, S=S)
    return draw_inputs(tuple(batch) + (n,), P=P, D=D, c=c_, L=L, rng=torch_generator(rng), dtype=dtype)


def draw_inputs(lead: tuple, *, P: int, D: int, c, L, rng, dtype):
    """Inputs ``(*lead, P, D)`` from the factors of :func:`input_factor`, drawn from the
    ``torch.Generator`` ``rng`` (the simulator's inner loop: no checks)."""
    gen = rng
    if L is None:
        z = torch.randn(lead + (P + 1, D), generator=gen, dtype=dtype)
        return math.sqrt(1.0 - c) * z[..., 1:, :] + math.sqrt(c) * z[..., :1, :]
    z = torch.randn(lead + (P, D), generator=gen, dtype=dtype)
    return torch.einsum("pq,...qd->...pd", torch.as_tensor(L, dtype=dtype), z)


class Networks:
    """Teacher and student weights of ``B`` independent runs, and the per-sample forward pass
    and SGD update (eqs 6, 9, 11, 36, 68): the code path of :func:`simulate_sgd` and
    :func:`sgd_step`.

    ``rng`` is a ``torch.Generator`` (the caller's stream: the weights are drawn from it, teacher
    first, orthonormalised so that eq. 7 holds exactly, then the i.i.d. ``N(0, 1)`` student);
    ``weights=(w, w_hat)`` uses given tensors instead. ``activation`` is a registry name
    (``"erf_sqrt2"`` or ``"relu"``). Attributes ``w`` ``(B, k_t, D)``, ``wh`` (CNN
    ``(B, k_s, D)``, LCN ``(B, P, k_s, D)``), ``g``, ``gp`` (σ and σ′).

    References
    ----------
    Mori et al., *exact online-SGD dynamics of CNN vs LCN students*, eqs 6-11, 36, 68.
    """

    def __init__(self, kind, *, B, D, P, k_s, k_t, T=1.0, rng=None, dtype=None,
                 activation="erf_sqrt2", weights=None):
        self.kind, self.B, self.D, self.P, self.k_s, self.k_t = kind, B, D, P, k_s, k_t
        dtype = torch.float64 if dtype is None else dtype
        if weights is not None:
            self.w, self.wh = weights
        else:
            gen = rng
            w = torch.randn(B, D, k_t, generator=gen, dtype=dtype)
            qmat, _ = torch.linalg.qr(w)  # orthonormal columns: eq. 7 holds exactly
            self.w = math.sqrt(T * D) * qmat.transpose(1, 2)  # (B, k_t, D)
            shape = (B, k_s, D) if kind == "cnn" else (B, P, k_s, D)
            self.wh = torch.randn(shape, generator=gen, dtype=dtype)
        act = activations.get(activation, allowed=ACTIVATIONS)
        self.g, self.gp = act.f, act.df
        idx = (torch.arange(P)[:, None] + torch.arange(k_s)[None, :]) % P  # (p, l) -> (p+l)_P
        self.idx = idx
        self.idx_t = idx[:, :k_t]

    def fields(self, x):
        """Teacher and student preactivations for x ``(B, n, P, D)`` -> ``(B, n, P)`` each."""
        D, k_s, k_t = self.D, self.k_s, self.k_t
        pw = torch.einsum("bnrd,bmd->bnrm", x, self.w)  # w_m . x_r
        lam = pw[:, :, self.idx_t, torch.arange(k_t)].sum(-1) / math.sqrt(k_t * D)
        if self.kind == "cnn":
            ph = torch.einsum("bnrd,bld->bnrl", x, self.wh)  # w_hat_l . x_r
            lh = ph[:, :, self.idx, torch.arange(k_s)].sum(-1) / math.sqrt(k_s * D)
        else:
            xg = x[:, :, self.idx, :]  # (B, n, P, k_s, D): x_{(p+l)}
            lh = torch.einsum("bnpld,bpld->bnp", xg, self.wh) / math.sqrt(k_s * D)
        return lam, lh

    def order(self):
        """The order parameters ``(R, Q)`` of every run (eqs 15-16), numpy arrays."""
        D, k_s, k_t = self.D, self.k_s, self.k_t
        if self.kind == "cnn":
            R = torch.einsum("bld,bmd->blm", self.wh, self.w) / (math.sqrt(k_s * k_t) * D)
            Q = torch.einsum("bld,bkd->blk", self.wh, self.wh) / (k_s * D)
        else:
            R = torch.einsum("bpld,bmd->bplm", self.wh, self.w) / (math.sqrt(k_s * k_t) * D)
            Q = torch.einsum("bpld,bqkd->bpqlk", self.wh, self.wh) / (k_s * D)
        return R.cpu().numpy(), Q.cpu().numpy()

    def zero_error(self):
        """Put every student on the zero-error solution of eq. 23 with shift 0."""
        k_s, k_t = self.k_s, self.k_t
        self.wh.zero_()
        tail = math.sqrt(k_s / k_t) * self.w
        if self.kind == "cnn":
            self.wh[:, :k_t] = tail
        else:
            self.wh[:, :, :k_t] = tail[:, None]

    def coef(self, lam, lh, xi, eta, sigma):
        """The SGD update's per-position coefficient (eqs 36, 68): ``Delta w_hat_l = sum_p coef_p
        x_{(p+l)}`` (CNN; LCN: ``Delta w_hat^{(p)}_l = coef_p x_{(p+l)}``), with
        ``coef_p = eta / sqrt(k_s D) (y - y_hat) g'(lambda_hat_p)``, ``y = sum_p g(lambda_p) + sigma xi``.

        ``lam``, ``lh`` ``(n, P)`` (teacher and student preactivations of ``n`` samples), ``xi``
        ``(n,)``; returns ``(n, P)``. The one place of the update: :meth:`step` applies it, and
        :func:`td_lib.cnn_lcn.sgd.one_step_drift` projects it on the order parameters.
        """
        delta = self.g(lam).sum(-1) + sigma * xi - self.g(lh).sum(-1)  # (n,)
        return (eta / math.sqrt(self.k_s * self.D)) * delta[:, None] * self.gp(lh)  # (n, P)

    def step(self, x, xi, eta, sigma):
        """One online SGD step (eq. 36 CNN / eq. 68 LCN); x ``(B, P, D)``, xi ``(B,)``."""
        lam, lh = self.fields(x[:, None])
        coef = self.coef(lam[:, 0], lh[:, 0], xi, eta, sigma)  # (B, P)
        xg = x[:, self.idx, :]  # (B, P, k_s, D)
        if self.kind == "cnn":
            self.wh += torch.einsum("bp,bpld->bld", coef, xg)
        else:
            self.wh += coef[:, :, None, None] * xg


def _eg_relu(C):
    """eps_g (eq. 81) for g = relu from the preactivation covariance (arc-cosine kernel)."""
    P = C.shape[-1] // 2
    s = np.concatenate([-np.ones(P), np.ones(P)])
    d = np.sqrt(np.diagonal(C, axis1=-2, axis2=-1))
    nrm = d[..., :, None] * d[..., None, :]
    cos = np.clip(C / np.where(nrm > 0, nrm, 1.0), -1, 1)
    K = nrm * arccos_kernel(cos, degree=1)
    return np.einsum("...ab,a,b->...", K, s, s)


def eg_from_order(kind, R, Q, S, T=1.0, activation="erf_sqrt2"):
    """eps_g from order parameters for ``erf_sqrt2`` (eq. 81) or ``relu`` (arc-cosine kernel).

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 81; the ReLU kernel of Cho & Saul (2009).
    """
    activations.get(activation, allowed=ACTIVATIONS)
    if activation == "erf_sqrt2":
        return generalisation_error(kind, R, Q, S, T)
    return _eg_relu(preactivation_covariance(kind, R, Q, S, T))


def _to_torch(a):
    return torch.as_tensor(np.asarray(a, dtype=float))


def preactivations(kind: str, w_hat, w_teacher, x) -> tuple[np.ndarray, np.ndarray]:
    """Teacher and student preactivations ``(lambda, lambda_hat)``, each ``(..., P)`` (eqs 6, 9, 11).

    ``w_hat``: CNN ``(..., k_s, D)``, LCN ``(..., P, k_s, D)``; ``w_teacher`` ``(..., k_t, D)``;
    ``x`` ``(..., P, D)``. Same code path as :func:`~td_lib.cnn_lcn.sgd.simulate_sgd`.

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 6, 9, 11.
    """
    net, xt, lead = _wrap(kind, w_hat, w_teacher, x)
    lam, lh = net.fields(xt[:, None])
    return lam[:, 0].numpy().reshape(lead + (-1,)), lh[:, 0].numpy().reshape(lead + (-1,))


def _wrap(kind, w_hat, w_teacher, x, activation="erf_sqrt2"):
    V.choice("kind", kind, KINDS)
    activations.get(activation, allowed=ACTIVATIONS)
    x = _to_torch(x)
    wt = _to_torch(w_teacher)
    wh = _to_torch(w_hat)
    if x.ndim < 2 or wt.ndim < 2:
        raise ValueError(f"x must be (..., P, D) and w_teacher (..., k_t, D); got {tuple(x.shape)}, "
                         f"{tuple(wt.shape)}")
    P, D = x.shape[-2:]
    k_t = wt.shape[-2]
    nwh = 2 if kind == "cnn" else 3
    if wh.ndim < nwh or wh.shape[-1] != D or (kind == "lcn" and wh.shape[-3] != P):
        want = "(..., k_s, D)" if kind == "cnn" else "(..., P, k_s, D)"
        raise ValueError(f"w_hat must have shape {want} with P={P}, D={D}; got {tuple(wh.shape)}")
    k_s = wh.shape[-2]
    if not k_t <= k_s <= P:
        raise ValueError(f"need k_t <= k_s <= P, got k_t={k_t}, k_s={k_s}, P={P}")
    lead = torch.broadcast_shapes(x.shape[:-2], wt.shape[:-2], wh.shape[:-nwh])
    B = int(np.prod(lead, dtype=int))
    xt = x.expand(lead + (P, D)).reshape(B, P, D)
    wtt = wt.expand(lead + (k_t, D)).reshape(B, k_t, D)
    wht = wh.expand(lead + wh.shape[-nwh:]).reshape((B,) + wh.shape[-nwh:]).clone()
    net = Networks(kind, B=B, D=D, P=P, k_s=k_s, k_t=k_t, dtype=torch.float64,
                   activation=activation, weights=(wtt, wht))
    return net, xt, tuple(lead)


def sgd_step(kind: str, w_hat, w_teacher, x, eta: float, sigma: float = 0.0, xi=None,
             activation: str = "erf_sqrt2") -> np.ndarray:
    """One online SGD step (eq. 36 CNN / eq. 68 LCN) on given inputs; numpy in, numpy out.

    ``w_hat``: CNN ``(..., k_s, D)``, LCN ``(..., P, k_s, D)`` (not modified);
    ``w_teacher``: ``(..., k_t, D)``; ``x``: ``(..., P, D)``; label
    ``y = sum_p g(lambda_p) + sigma xi`` (``xi`` ``(...)``, default 0). Returns the updated
    student kernels. This is the code path of :func:`~td_lib.cnn_lcn.sgd.simulate_sgd`.
    ``activation``: ``"erf_sqrt2"`` (the paper's g, default) or ``"relu"``.

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 36 (CNN) and eq. 68 (LCN).

    Examples
    --------
    >>> import numpy as np
    >>> w_hat, w, x = np.zeros((1, 4)), np.ones((1, 4)), np.ones((2, 4))  # CNN, P=2, k=1, D=4
    >>> sgd_step("cnn", w_hat, w, x, eta=0.5).round(6).tolist()
    [[0.761581, 0.761581, 0.761581, 0.761581]]
    """
    eta = V.finite("eta", eta, positive=True)
    sigma = V.finite("sigma", sigma, nonnegative=True)
    net, xt, lead = _wrap(kind, w_hat, w_teacher, x, activation)
    B = xt.shape[0]
    xi_t = torch.zeros(B, dtype=torch.float64) if xi is None else \
        _to_torch(xi).expand(lead).reshape(B)
    with torch.no_grad():
        net.step(xt, xi_t, eta, sigma)
    return net.wh.numpy().reshape(lead + tuple(net.wh.shape[1:]))
