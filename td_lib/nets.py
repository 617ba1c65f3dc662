"""Small two-layer networks trained by full-batch gradient descent (§7.1 demos; reusable).

The model is ``f(x) = sum_j a_j sigma(w_j . x)`` with square loss
``L = (1/2) mean_i (f(x_i) - y_i)^2`` and weights initialised at scale ``eps``:
``W = eps * G / sqrt(d)``, ``a = eps * g / sqrt(N)`` with standard Gaussian ``G, g`` drawn from
``torch.Generator().manual_seed(seed)`` (the same numbers as the course page's
``torch.manual_seed(seed)``). Gradients are written out by hand (no autograd), and several
runs (different training sets, same or different seeds) are trained together as one
batched computation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from td_lib import _validate as V

__all__ = ["ACTIVATIONS", "activation", "check_times", "TrainLog", "init_weights", "train_two_layer"]

_SQRT1_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _gelu(z):
    return z * 0.5 * (1.0 + torch.erf(z * _SQRT1_2))


def _dgelu(z):
    return 0.5 * (1.0 + torch.erf(z * _SQRT1_2)) + z * _INV_SQRT_2PI * torch.exp(-0.5 * z * z)


def _dtanh(z):
    return 1.0 - torch.tanh(z) ** 2


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
                    times: Sequence[int] | None = None) -> TrainLog:
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

    Returns
    -------
    TrainLog
    """
    sig, dsig = activation(act)
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
    tset = set(tlist)
    acc, out, rms, loss_log = [], [], [], []
    for t in range(steps + 1):
        pre = torch.bmm(Xb, W.transpose(1, 2))  # (R, n, N)
        h = sig(pre)
        r = torch.bmm(h, a[:, :, None])[..., 0] - yb  # residual f - y, (R, n)
        if t in tset:
            pre_t = torch.einsum("md,rnd->rmn", X_test, W)
            f_t = torch.einsum("rmn,rn->rm", sig(pre_t), a)
            out.append(f_t)
            acc.append(((f_t * y_test) > 0).to(X.dtype).mean(1))
            rms.append(pre_t.pow(2).mean((1, 2)).sqrt())
            loss_log.append(0.5 * r.pow(2).mean(1))
        if t == steps:
            break
        ga = torch.bmm(r[:, None, :], h)[:, 0] / n  # (R, N)
        gW = torch.bmm((r[..., None] * dsig(pre) * a[:, None, :]).transpose(1, 2), Xb) / n
        a = a - lr * ga
        W = W - lr * gW
    return TrainLog(times=tlist, acc=torch.stack(acc, 1), out=torch.stack(out, 1),
                    rms_pre=torch.stack(rms, 1), loss=torch.stack(loss_log, 1), W=W, a=a)
