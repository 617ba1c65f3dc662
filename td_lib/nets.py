"""Small two-layer networks trained by full-batch gradient descent (§7.1 demos; reusable).

The model is :math:`f(x)=\\sum_j a_j\\,\\sigma(w_j\\cdot x)` with square loss
:math:`L=\\frac12\\,\\mathrm{mean}_i\\,(f(x_i)-y_i)^2` and weights initialised at scale
:math:`\\varepsilon`: :math:`W=\\varepsilon G/\\sqrt d`, :math:`a=\\varepsilon g/\\sqrt N` with
standard Gaussian :math:`G, g` drawn from ``torch.Generator().manual_seed(rng)`` (the same
numbers as the original course notes' ``torch.manual_seed(seed)``). Gradients are written out by
hand (no autograd), and several runs (different training sets, same or different seeds) are
trained together as one batched computation. Activations come from the registry
:mod:`td_lib.core.activations`.

:func:`mixture_population_gradient` gives the exact gradient of the same loss when the inputs are a
mixture of labelled Gaussians (the test bed and its clone), by 1-d and 2-d Gauss-Hermite
quadrature (Exercise 7.1.B.4's check).

References
----------
Seed §7.1, "Two moments" (the GELU and linear demos, Exercise 7.1.B).

Examples
--------
>>> X = torch.randn(50, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
>>> y = torch.sign(X[:, 0])
>>> log = train_two_layer(X, y, "tanh", 0.5, width=8, steps=20, rng=0)
>>> int(log.t[-1]), log.acc.shape
(20, (17, 1))
>>> sig, dsig = activation("gelu")
>>> round(float(dsig(torch.tensor(0.0))), 6)
0.5
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from td_lib.core import activations
from td_lib.core import validate as V
from td_lib.core.gaussian import gauss_normal_nodes
from td_lib.core.run import Run, checkpoints, static
from td_lib.core.runtime import bar, torch_generator, torch_threads

__all__ = ["activation", "TrainLog", "init_weights", "train_two_layer", "mixture_population_gradient"]

#: Activations with a second derivative, which :func:`mixture_population_gradient` needs (the
#: registry's smooth ones).
SMOOTH = tuple(n for n in activations.names() if activations.get(n).smooth)


def activation(act: str) -> tuple[Callable, Callable]:
    """``(sigma, sigma')`` of the registered activation ``act`` (:func:`td_lib.core.activations.get`;
    names in :func:`td_lib.core.activations.names`), for numpy arrays and torch tensors alike.

    Examples
    --------
    >>> sig, dsig = activation("tanh")
    >>> round(float(dsig(torch.tensor(0.0))), 6)
    1.0
    """
    a = _registered(act)
    return a.f, a.df


def _registered(act) -> activations.Activation:
    if not isinstance(act, str):
        raise TypeError(f"activation must be a registered name {list(activations.names())}, got {act!r}")
    return activations.get(act)


@dataclass
class TrainLog(Run):
    """What :func:`train_two_layer` records at each logged GD step (a :class:`td_lib.core.run.Run`).

    Attributes
    ----------
    t : ndarray (T_c,)
        The logged GD steps.
    acc : ndarray (T_c, R)
        Test accuracy, the fraction of ``sign(f(x)) == y`` on the test set.
    out : ndarray (T_c, R, n_test)
        Network outputs on the test set.
    rms_pre : ndarray (T_c, R)
        Root-mean-square pre-activation ``w_j . x`` over units and test inputs.
    loss : ndarray (T_c, R)
        Training loss ``(1/2) mean (f - y)^2``.
    W, a : ndarray (R, N, d), (R, N)
        Final weights (static).
    """

    acc: np.ndarray
    out: np.ndarray
    rms_pre: np.ndarray
    loss: np.ndarray
    W: np.ndarray = static()
    a: np.ndarray = static()
    time_label: ClassVar[str] = "GD steps"


def init_weights(d: int, width: int, *, eps: float, rng=0,
                 dtype=torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    """:math:`W=\\varepsilon G/\\sqrt d` (width x d) and :math:`a=\\varepsilon g/\\sqrt N`,
    drawn in that order from ``rng`` (an int seed, default 0, or a torch Generator).

    Examples
    --------
    >>> W, a = init_weights(3, 2, eps=0.1, rng=0)
    >>> tuple(W.shape), tuple(a.shape)
    ((2, 3), (2,))
    """
    d = V.positive_int("d", d)
    width = V.positive_int("width", width)
    eps = V.finite("eps", eps, positive=True)
    if not isinstance(rng, torch.Generator):
        rng = V.positive_int("rng", rng, minimum=0)
    g = torch_generator(rng)
    W = eps * torch.randn(width, d, generator=g, dtype=dtype) / math.sqrt(d)
    a = eps * torch.randn(width, generator=g, dtype=dtype) / math.sqrt(width)
    return W, a


def train_two_layer(X: torch.Tensor, y: torch.Tensor, activation, eps: float, *, width: int = 32,
                    eta: float = 0.3, steps: int = 1500, rng: int | Sequence[int] | torch.Generator = 0,
                    X_test: torch.Tensor | None = None, y_test: torch.Tensor | None = None,
                    times: Sequence[int] | None = None, threads: int | None = 1,
                    progress: bool | str = False) -> TrainLog:
    """Full-batch GD on :math:`\\frac12\\,\\mathrm{mean}\\,(\\sum_j a_j\\sigma(w_j\\cdot x)-y)^2`
    from weights of size :math:`\\varepsilon`.

    Parameters
    ----------
    X : torch.Tensor (n, d) or (R, n, d)
        Training inputs; a leading axis trains ``R`` runs together.
    y : torch.Tensor (n,) or (R, n)
        Training targets.
    activation : str
        A registered activation (:func:`td_lib.core.activations.names`).
    eps : float
        Initial weight scale (:func:`init_weights`).
    width, eta, steps : int, float, int
        Hidden units ``N``, step size, number of GD steps.
    rng : int, sequence of R ints, or torch.Generator
        Initialisation seed(s); one int gives every run the same initial weights, a Generator
        draws the runs' initial weights one after the other.
    X_test, y_test : torch.Tensor (m, d), (m,), optional
        Test set for the logs (defaults to the training set of run 0).
    times : sequence of int, optional
        Steps at which to log (default ``checkpoints(steps, num=30)``: step 0 and 30
        log-spaced integer steps in ``[1, steps]``, :func:`td_lib.core.run.checkpoints`).
    threads : int or None
        Torch intra-op threads during training (restored afterwards). The default 1 is
        fastest for these small matrices, and much faster on a shared, loaded machine;
        ``None`` keeps the current setting.
    progress : bool or str
        ``True`` or a label: show a progress bar over the steps.

    Returns
    -------
    TrainLog

    References
    ----------
    Seed §7.1, "Two moments" (the small-initialisation GD demo).
    """
    act = _registered(activation)
    eps = V.finite("eps", eps, positive=True)
    eta = V.finite("eta", eta, positive=True)
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
    if isinstance(rng, (int, np.integer, torch.Generator)):
        seeds = [rng] * R
    else:
        seeds = list(rng)
    if len(seeds) != R:
        raise ValueError(f"rng must be an int, a torch.Generator or a sequence of {R} ints, got {len(seeds)}")
    inits = [init_weights(d, width, eps=eps, rng=s, dtype=X.dtype) for s in seeds]
    W = torch.stack([w for w, _ in inits])  # (R, N, d)
    a = torch.stack([b for _, b in inits])  # (R, N)
    if times is None:
        tlist = checkpoints(steps, num=30) if steps > 0 else np.zeros(1, dtype=np.int64)
    else:
        tlist = np.unique(np.array([int(t) for t in times], dtype=np.int64))
    if tlist.size == 0 or tlist[0] < 0 or tlist[-1] > steps:
        raise ValueError(f"times must be a non-empty sequence of steps in [0, steps={steps}]")
    loop = bar(range(steps + 1), progress, "two-layer GD")
    with torch_threads(threads):
        return _gd_loop(Xb, yb, X_test, y_test, W, a, sig=act.f, vd=act.f_df, eta=eta, steps=steps,
                        tlist=tlist, loop=loop)


def _gd_loop(Xb, yb, X_test, y_test, W, a, *, sig, vd, eta, steps, tlist, loop) -> TrainLog:
    n = Xb.shape[1]
    tset = set(tlist.tolist())
    acc, out, rms, loss_log = [], [], [], []
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
        a = a - eta * ga
        W = W - eta * gW
    return TrainLog(t=tlist, acc=torch.stack(acc), out=torch.stack(out), rms_pre=torch.stack(rms),
                    loss=torch.stack(loss_log), W=W.numpy(), a=a.numpy())


# --- population gradients under Gaussian-mixture inputs (exact quadrature) ---------------

def mixture_population_gradient(W, a, activation: str, components, *, nodes: int = 40) -> tuple[np.ndarray, np.ndarray]:
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
    activation : str
        A smooth registered activation (:data:`SMOOTH`: the formula needs :math:`\\sigma''`).
    components : list of (pi, y, mu (d,), Sigma (d, d))
    nodes : int
        Gauss-Hermite nodes per dimension.

    Returns
    -------
    gW : ndarray (N, d), ga : ndarray (N,)

    References
    ----------
    Seed §7.1, Exercise 7.1.B.4 (the gradient of the square loss); Stein's lemma for the
    factor :math:`x`.

    Examples
    --------
    >>> comps = [(0.5, -1.0, np.zeros(2), np.eye(2)), (0.5, 1.0, np.ones(2), np.eye(2))]
    >>> gW, ga = mixture_population_gradient(np.eye(2), np.ones(2), "linear", comps, nodes=4)
    >>> [round(float(g), 6) for g in ga]
    [1.5, 1.5]
    """
    act = activations.get(activation, allowed=SMOOTH)
    sig, dsig, ddsig = act.f, act.df, act.d2f
    W = V.array("W", W, ndim=2)
    N, d = W.shape
    a = V.array("a", a, shape=(N,))
    nodes = V.positive_int("nodes", nodes, minimum=2)
    xi, wq = gauss_normal_nodes(nodes)  # weights of the standard normal, summing to 1
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
