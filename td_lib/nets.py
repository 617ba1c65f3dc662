"""Small two-layer networks trained by full-batch gradient descent (§7.1 demos; reusable).

The model is ``f(x) = sum_j a_j sigma(w_j . x)`` with square loss
``L = (1/2) mean_i (f(x_i) - y_i)^2`` and weights initialised at scale ``eps``:
``W = eps * G / sqrt(d)``, ``a = eps * g / sqrt(N)`` with standard Gaussian ``G, g`` drawn from
``torch.Generator().manual_seed(seed)`` (the same numbers as the course page's
``torch.manual_seed(seed)``). Gradients are written out by hand (no autograd), and several
runs (different training sets, same or different seeds) are trained together as one
batched computation.

:func:`population_gradient` gives the exact gradient of the same loss when the inputs are a
mixture of labelled Gaussians (the test bed and its clone), by 1-d and 2-d Gauss-Hermite
quadrature (Exercise 7.1.B.4's check).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from td_lib.core import validate as V
from td_lib.core.runtime import progress

__all__ = ["ACTIVATIONS", "activation", "check_times", "TrainLog", "init_weights", "train_two_layer"]

_SQRT1_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _gelu(z):
    return z * 0.5 * (1.0 + torch.erf(z * _SQRT1_2))


def _dgelu(z):
    return 0.5 * (1.0 + torch.erf(z * _SQRT1_2)) + z * _INV_SQRT_2PI * torch.exp(-0.5 * z * z)


def _dtanh(z):
    return 1.0 - torch.tanh(z) ** 2


def _gelu_vd(z):
    phi_cdf = 0.5 * (1.0 + torch.erf(z * _SQRT1_2))
    return z * phi_cdf, phi_cdf + z * _INV_SQRT_2PI * torch.exp(-0.5 * z * z)


def _tanh_vd(z):
    t = torch.tanh(z)
    return t, 1.0 - t * t


_FUSED = {"gelu": _gelu_vd, "tanh": _tanh_vd}


#: name -> (sigma, sigma'); GELU is the exact (erf) form, ``z Phi(z)``.
ACTIVATIONS: dict[str, tuple[Callable, Callable]] = {
    "linear": (lambda z: z, torch.ones_like),
    "gelu": (_gelu, _dgelu),
    "tanh": (torch.tanh, _dtanh),
    "relu": (torch.relu, lambda z: (z > 0).to(z.dtype)),
    "erf": (torch.erf, lambda z: (2.0 / math.sqrt(math.pi)) * torch.exp(-z * z)),
}


def activation(act) -> tuple[Callable, Callable]:
    """``(sigma, sigma')`` for a name in :data:`ACTIVATIONS`, a ``(sigma, sigma')`` pair, or
    a single elementwise callable (its derivative is then taken by autograd)."""
    if isinstance(act, str):
        V.choice("act", act, list(ACTIVATIONS))
        return ACTIVATIONS[act]
    if isinstance(act, tuple) and len(act) == 2 and all(callable(f) for f in act):
        return act
    if callable(act):
        def dact(z):
            with torch.enable_grad():
                zz = z.detach().requires_grad_()
                (g,) = torch.autograd.grad(act(zz).sum(), zz)
            return g
        return act, dact
    raise TypeError(f"act must be a name {list(ACTIVATIONS)}, a callable or a (sigma, dsigma) pair, "
                    f"got {act!r}")


def check_times(T: int, num: int = 30) -> list[int]:
    """Step 0 plus ``num`` geometrically spaced integer steps in ``[1, T]`` (duplicates merged),
    as on the course page: ``sorted({0} | set(int(geomspace(1, T, num))))``."""
    T = V.positive_int("T", T)
    num = V.positive_int("num", num)
    return sorted(set(np.unique(np.geomspace(1, T, num).astype(int)).tolist() + [0]))


@dataclass
class TrainLog:
    """What :func:`train_two_layer` records at each check time (runs along axis 0).

    Attributes
    ----------
    times : list[int]
        The logged GD steps.
    acc : torch.Tensor (R, T_c)
        Test accuracy, the fraction of ``sign(f(x)) == y`` on the test set.
    out : torch.Tensor (R, T_c, n_test)
        Network outputs on the test set.
    rms_pre : torch.Tensor (R, T_c)
        Root-mean-square pre-activation ``w_j . x`` over units and test inputs.
    loss : torch.Tensor (R, T_c)
        Training loss ``(1/2) mean (f - y)^2``.
    W, a : torch.Tensor (R, N, d), (R, N)
        Final weights.
    """

    times: list[int]
    acc: torch.Tensor
    out: torch.Tensor
    rms_pre: torch.Tensor
    loss: torch.Tensor
    W: torch.Tensor
    a: torch.Tensor


def init_weights(d: int, width: int, eps: float, seed: int = 0,
                 dtype=torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    """``W = eps G / sqrt(d)`` (width x d) and ``a = eps g / sqrt(width)``, seeded."""
    d = V.positive_int("d", d)
    width = V.positive_int("width", width)
    eps = V.finite("eps", eps, positive=True)
    seed = V.positive_int("seed", seed, minimum=0)
    g = torch.Generator().manual_seed(seed)
    W = eps * torch.randn(width, d, generator=g, dtype=dtype) / math.sqrt(d)
    a = eps * torch.randn(width, generator=g, dtype=dtype) / math.sqrt(width)
    return W, a


def train_two_layer(X: torch.Tensor, y: torch.Tensor, act, eps: float, *, width: int = 32,
                    lr: float = 0.3, steps: int = 1500, seed: int | Sequence[int] = 0,
                    X_test: torch.Tensor | None = None, y_test: torch.Tensor | None = None,
                    times: Sequence[int] | None = None, num_threads: int | None = 1,
                    desc: str | None = None) -> TrainLog:
    """Full-batch GD on ``(1/2) mean (sum_j a_j sigma(w_j . x) - y)^2`` from weights of size eps.

    Parameters
    ----------
    X : torch.Tensor (n, d) or (R, n, d)
        Training inputs; a leading axis trains ``R`` runs together.
    y : torch.Tensor (n,) or (R, n)
        Training targets.
    act : str, callable or (sigma, dsigma)
        Activation (see :func:`activation`).
    eps : float
        Initial weight scale (:func:`init_weights`).
    width, lr, steps : int, float, int
        Hidden units ``N``, step size, number of GD steps.
    seed : int or sequence of R ints
        Initialisation seed(s); one int gives every run the same initial weights.
    X_test, y_test : torch.Tensor (m, d), (m,), optional
        Test set for the logs (defaults to the training set of run 0).
    times : sequence of int, optional
        Steps at which to log (default :func:`check_times` ``(steps)``).
    num_threads : int or None
        Torch intra-op threads during training (restored afterwards). The default 1 is
        fastest for these small matrices, and much faster on a shared, loaded machine;
        ``None`` keeps the current setting.
    desc : str, optional
        Show a progress bar (:func:`td_lib.core.runtime.progress`) with this label.

    Returns
    -------
    TrainLog
    """
    sig, dsig = activation(act)
    vd = _FUSED.get(act) if isinstance(act, str) else None
    vd = vd or (lambda z: (sig(z), dsig(z)))
    eps = V.finite("eps", eps, positive=True)
    lr = V.finite("lr", lr, positive=True)
    steps = V.positive_int("steps", steps, minimum=0)
    if not isinstance(X, torch.Tensor) or X.ndim not in (2, 3) or not X.is_floating_point():
        raise ValueError(f"X must be a float tensor of shape (n, d) or (R, n, d), got "
                         f"{tuple(getattr(X, 'shape', ()))}")
    Xb = X if X.ndim == 3 else X[None]
    R, n, d = Xb.shape
    if not isinstance(y, torch.Tensor) or y.shape not in ((n,), (R, n)):
        raise ValueError(f"y must have shape ({n},) or ({R}, {n}), got {tuple(getattr(y, 'shape', ()))}")
    yb = (y if y.ndim == 2 else y.expand(R, n)).to(X.dtype)
    if X_test is None:
        X_test, y_test = Xb[0], yb[0]
    if X_test.ndim != 2 or X_test.shape[1] != d:
        raise ValueError(f"X_test must have shape (m, {d}), got {tuple(X_test.shape)}")
    if y_test is None or y_test.shape != (X_test.shape[0],):
        raise ValueError(f"y_test must have shape ({X_test.shape[0]},)")
    X_test = X_test.to(X.dtype)
    y_test = y_test.to(X.dtype)
    seeds = [seed] * R if isinstance(seed, (int, np.integer)) else list(seed)
    if len(seeds) != R:
        raise ValueError(f"seed must be an int or a sequence of {R} ints, got {len(seeds)}")
    inits = [init_weights(d, width, eps, s, dtype=X.dtype) for s in seeds]
    W = torch.stack([w for w, _ in inits])  # (R, N, d)
    a = torch.stack([b for _, b in inits])  # (R, N)
    tlist = sorted(set(int(t) for t in (check_times(steps) if times is None and steps > 0 else
                                        (times if times is not None else [0]))))
    if tlist and (tlist[0] < 0 or tlist[-1] > steps):
        raise ValueError(f"times must lie in [0, steps={steps}]")
    old_threads = torch.get_num_threads()
    if num_threads is not None:
        torch.set_num_threads(V.positive_int("num_threads", num_threads))
    try:
        return _gd_loop(Xb, yb, X_test, y_test, W, a, sig, vd, lr, steps, tlist, desc)
    finally:
        torch.set_num_threads(old_threads)


def _gd_loop(Xb, yb, X_test, y_test, W, a, sig, vd, lr, steps, tlist, desc) -> TrainLog:
    n = Xb.shape[1]
    tset = set(tlist)
    acc, out, rms, loss_log = [], [], [], []
    loop = range(steps + 1) if desc is None else progress(range(steps + 1), desc=desc)
    for t in loop:
        pre = torch.bmm(Xb, W.transpose(1, 2))  # (R, n, N)
        h, dh = vd(pre) if t < steps else (sig(pre), None)
        r = torch.bmm(h, a[:, :, None])[..., 0] - yb  # residual f - y, (R, n)
        if t in tset:
            pre_t = torch.einsum("md,rnd->rmn", X_test, W)
            f_t = torch.einsum("rmn,rn->rm", sig(pre_t), a)
            out.append(f_t)
            acc.append(((f_t * y_test) > 0).to(Xb.dtype).mean(1))
            rms.append(pre_t.pow(2).mean((1, 2)).sqrt())
            loss_log.append(0.5 * r.pow(2).mean(1))
        if t == steps:
            break
        ga = torch.bmm(r[:, None, :], h)[:, 0] / n  # (R, N)
        gW = torch.bmm((r[..., None] * dh * a[:, None, :]).transpose(1, 2), Xb) / n
        a = a - lr * ga
        W = W - lr * gW
    return TrainLog(times=tlist, acc=torch.stack(acc, 1), out=torch.stack(out, 1),
                    rms_pre=torch.stack(rms, 1), loss=torch.stack(loss_log, 1), W=W, a=a)


# --- population gradients under Gaussian-mixture inputs (exact quadrature) ---------------

def _np_act(name: str):
    """numpy ``(sigma, sigma', sigma'')`` for the analytic activations."""
    from scipy.special import erf

    s2 = math.sqrt(2.0)

    def gelu(z):
        return z * 0.5 * (1 + erf(z / s2))

    def dgelu(z):
        return 0.5 * (1 + erf(z / s2)) + z * np.exp(-z * z / 2) * _INV_SQRT_2PI

    def ddgelu(z):
        return (2 - z * z) * np.exp(-z * z / 2) * _INV_SQRT_2PI

    def dtanh(z):
        return 1 - np.tanh(z) ** 2

    def ddtanh(z):
        t = np.tanh(z)
        return -2 * t * (1 - t * t)

    table = {
        "gelu": (gelu, dgelu, ddgelu),
        "tanh": (np.tanh, dtanh, ddtanh),
        "linear": (lambda z: z, np.ones_like, np.zeros_like),
        "erf": (erf, lambda z: 2 / math.sqrt(math.pi) * np.exp(-z * z),
                lambda z: -4 * z / math.sqrt(math.pi) * np.exp(-z * z)),
    }
    V.choice("act", name, list(table))
    return table[name]


def population_gradient(W, a, act: str, components, nodes: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Exact gradient of ``L = (1/2) E (y - sum_j a_j sigma(w_j . x))^2`` for a Gaussian mixture.

    The data are a mixture of labelled Gaussians, ``components = [(pi_c, y_c, mu_c, Sigma_c)]``
    (weights ``pi_c`` summing to 1, a fixed label ``y_c`` per component). With
    ``s_j = w_j . x`` the gradients are (7.1.B, hint)

    ``dL/da_j = -E[(y - f) sigma(s_j)]``,  ``dL/dw_j = -a_j E[(y - f) sigma'(s_j) x]``,

    and since ``f`` is a sum over units every expectation involves at most two
    pre-activations: ``E[sigma(s_i) sigma(s_j)]``, ``E[sigma(s_i) sigma'(s_j)]``, ... The factor
    ``x`` is removed by Gaussian integration by parts (Stein's lemma),
    ``E[h(Wx)(x - mu)] = Sigma W^T E[grad_s h]``, which needs ``sigma''``. Each 2-d Gaussian
    expectation is a tensor Gauss-Hermite rule with ``nodes^2`` points on the Cholesky factor
    of the pair's 2x2 covariance (exact for polynomials of degree < 2 ``nodes``; for the small
    pre-activations of interest the error is at rounding level).

    Parameters
    ----------
    W : array (N, d)
    a : array (N,)
    act : {"gelu", "tanh", "linear", "erf"}
    components : list of (pi, y, mu (d,), Sigma (d, d))
    nodes : int
        Gauss-Hermite nodes per dimension.

    Returns
    -------
    gW : ndarray (N, d), ga : ndarray (N,)
    """
    sig, dsig, ddsig = _np_act(act)
    W = V.array("W", W, ndim=2)
    N, d = W.shape
    a = V.array("a", a, shape=(N,))
    nodes = V.positive_int("nodes", nodes, minimum=2)
    xi, wq = np.polynomial.hermite_e.hermegauss(nodes)
    wq = wq / wq.sum()
    if not components:
        raise ValueError("components must be a non-empty list of (pi, y, mu, Sigma)")
    tot = sum(float(c[0]) for c in components)
    if abs(tot - 1) > 1e-12:
        raise ValueError(f"components: the weights pi must sum to 1, got {tot}")
    gW = np.zeros((N, d))
    ga = np.zeros(N)
    for pi, yc, mu, Sig in components:
        mu = V.array("mu", mu, shape=(d,))
        Sig = V.array("Sigma", Sig, shape=(d, d))
        m = W @ mu
        K = W @ Sig @ W.T
        sd = np.sqrt(np.clip(np.diag(K), 0, None))
        s1 = m[:, None] + sd[:, None] * xi[None, :]  # (N, q) 1-d nodes
        A1 = sig(s1) @ wq
        B1 = dsig(s1) @ wq
        C1 = ddsig(s1) @ wq
        # pairs (i, j): s_i = m_i + L11 xi1, s_j = m_j + L21 xi1 + L22 xi2
        L11 = np.where(sd > 0, sd, 1.0)
        L21 = np.where(sd[:, None] > 0, K / L11[:, None], 0.0)  # [i, j] = K_ij / sd_i
        L22 = np.sqrt(np.clip(np.diag(K)[None, :] - L21**2, 0, None))
        si = m[:, None, None, None] + sd[:, None, None, None] * xi[None, None, :, None]
        sj = (m[None, :, None, None] + L21[:, :, None, None] * xi[None, None, :, None]
              + L22[:, :, None, None] * xi[None, None, None, :])
        w2 = wq[:, None] * wq[None, :]
        sig_i, dsig_i = sig(si), dsig(si)
        P = np.einsum("ijab,ab->ij", sig_i * sig(sj), w2)
        dsj = dsig(sj)
        Q = np.einsum("ijab,ab->ij", sig_i * dsj, w2)
        R = np.einsum("ijab,ab->ij", dsig_i * dsj, w2)
        T = np.einsum("ijab,ab->ij", sig_i * ddsig(sj), w2)
        # E[(y - f) sigma(s_j)] and E[(y - f) sigma'(s_j) x]
        e_a = yc * A1 - a @ P
        SW = W @ Sig  # rows Sigma w_j
        e_w = (yc * (B1[:, None] * mu[None, :] + C1[:, None] * SW)
               - (a @ Q)[:, None] * mu[None, :] - (a[:, None] * R).T @ SW - (a @ T)[:, None] * SW)
        ga -= pi * e_a
        gW -= pi * a[:, None] * e_w
    return gW, ga
