"""Finite-D online SGD for real CNN and LCN students (torch; Mori et al., eqs 1-13, 36, 68).

torch is imported inside the functions (importing :mod:`td_lib.cnn_lcn` for the ODE engine
costs no torch start-up); the networks themselves are :class:`~td_lib.cnn_lcn.network.Networks`.

* :func:`simulate_sgd` -- one-pass SGD (eq. 13) on the squared loss (eq. 12) for ``n_seeds``
  independent runs at once (teacher, student and data all per seed), ``erf_sqrt2`` (``g(z) =
  erf(z/sqrt 2)``, the paper's "erf") or ``relu``; label noise ``sigma xi`` (eq. 4). Records the
  order parameters (eqs 15-16), eps_g from the order parameters (erf: eq. 81; relu: the
  arc-cosine kernel) and a held-out Monte Carlo estimate of eq. 14 on a fixed test set. The
  initial order parameters are returned, so the ODE can start from the simulation's own
  initial condition.
* :func:`one_step_drift` -- ``D E[Delta R]``, ``D E[Delta Q]`` over many independent SGD steps from
  one fixed set of weights, with standard errors, next to the ODE right-hand side: the
  decisive numerical check of the appendix derivation.

Randomness follows the ``rng`` convention of :mod:`td_lib.core.runtime`: an int seed gives
``torch.Generator().manual_seed(rng)`` for the weights and the training stream, and
``rng + 7919`` for the held-out test set (as before the convention existed).

References
----------
Mori et al., *exact online-SGD dynamics of CNN vs LCN students*, eqs 1-16, 36 and 68.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from td_lib.cnn_lcn.model import KINDS
from td_lib.cnn_lcn.network import ACTIVATIONS, Networks, draw_inputs, eg_from_order, input_factor
from td_lib.core import activations
from td_lib.core import validate as V
from td_lib.core.run import Run, checkpoints, static, ticker
from td_lib.core.runtime import torch_generator, torch_threads

__all__ = ["SGDResult", "simulate_sgd", "one_step_drift", "TEST_SEED_OFFSET"]

TEST_SEED_OFFSET = 7919  #: the held-out test set of an int seed ``rng`` uses ``rng + 7919``


@dataclass
class SGDResult(Run):
    """Result of :func:`simulate_sgd`: a :class:`~td_lib.core.run.Run` whose time axis ``t`` is
    ``alpha`` = SGD steps / D (series ordered ``(n_ckpt, n_seeds, ...)``).

    Attributes: ``t`` (the checkpoint times ``alpha``), ``R``, ``Q`` (order parameters,
    shapes as in :mod:`td_lib.cnn_lcn`), ``eg_order`` (eps_g from the order parameters), ``eg_mc``
    (held-out Monte Carlo eps_g, ``None`` if ``n_test = 0``), ``eg_mc_se`` (its standard error);
    static: ``kind``, ``R0``, ``Q0`` (initial order parameters, ``(n_seeds, ...)``) and ``params``.
    """

    R: np.ndarray
    Q: np.ndarray
    eg_order: np.ndarray
    eg_mc: np.ndarray | None
    eg_mc_se: np.ndarray | None
    kind: str = static()
    R0: np.ndarray = static()
    Q0: np.ndarray = static()
    params: dict = static(default_factory=dict)
    time_label: ClassVar[str] = "alpha"


@dataclass(frozen=True)
class _RunConfig:
    """The validated configuration of one :func:`simulate_sgd` call (what :func:`_run` needs)."""

    kind: str
    steps: np.ndarray  # SGD step counts t of the checkpoints
    D: int
    P: int
    k_s: int
    k_t: int
    c: float | None  # eq. 3 correlation (None: a general S, sampled with the factor L)
    L: np.ndarray | None
    S: np.ndarray
    T: float
    eta: float
    sigma: float
    n_seeds: int
    activation: str
    n_test: int
    test_seed: int
    dtype: object  # torch dtype
    rng: object  # what the caller passed (recorded in SGDResult.params)
    progress: bool | str


def simulate_sgd(kind: str, *, D: int, P: int, k_s: int, k_t: int, c: float = 0.0, S=None,
                 T: float = 1.0, eta: float = 1.0, sigma: float = 0.0, alpha_max: float = 5.0,
                 checkpoints=None, n_seeds: int = 1, activation: str = "erf_sqrt2",
                 dtype: str = "float64", n_test: int = 2000, rng=0,
                 init: str = "random", threads: int | None = 1,
                 progress: bool | str = False) -> SGDResult:
    """Online SGD of a CNN (eqs 8-9) or LCN (eqs 10-11) student at finite ``D``, ``n_seeds`` runs.

    Parameters
    ----------
    kind : ``"cnn"`` or ``"lcn"``; ``D, P, k_s, k_t`` sizes (``k_t <= k_s <= P``).
    c, S : position correlation of eq. 3 (O(PD) sampling) or an explicit covariance ``S``.
    T, eta, sigma : teacher norm (eq. 7), learning rate, label noise (eq. 4).
    alpha_max, checkpoints : run ``alpha_max * D`` steps; record at ``checkpoints`` (times
        ``alpha = t/D``, default 41 log-spaced points plus 0).
    activation : ``"erf_sqrt2"`` (``g(z) = erf(z/sqrt 2)``, default) or ``"relu"``
        (registry names, :data:`~td_lib.cnn_lcn.network.ACTIVATIONS`); dtype ``"float64"`` or
        ``"float32"``.
    n_test : held-out test-set size for the Monte Carlo eps_g (0 disables).
    rng : int seed (default 0), ``None``, numpy Generator or ``torch.Generator`` for the weights
        and the training data; the test set uses the seed ``g.initial_seed() + 7919`` of that
        torch Generator ``g`` (``rng + 7919`` for an int seed), so it draws nothing from the
        training stream.
    init : ``"random"`` (i.i.d. N(0,1) student, eqs 19-20) or ``"zero_error"`` (eq. 23, shift 0:
        ``w_hat_l = sqrt(k_s/k_t) w_l`` for ``l < k_t``, else 0; same kernel at every LCN position).
    threads : torch threads during the run (restored afterwards); the per-step tensors are tiny,
        so one thread is fastest on a shared machine. ``None`` leaves torch's setting alone.
    progress : ``False``, ``True`` (a bar labelled ``"<kind> SGD D=<D>"``) or a label.

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 4-16 (label noise, model, loss, SGD, order parameters).

    Examples
    --------
    >>> import numpy as np
    >>> res = simulate_sgd("cnn", D=20, P=3, k_s=2, k_t=1, alpha_max=1.0, n_test=0, rng=1,
    ...                    checkpoints=np.array([0.0, 1.0]), n_seeds=2)
    >>> res.R.shape, res.eg_order.shape
    ((2, 2, 2, 1), (2, 2))
    >>> np.round(res.eg_order[-1], 4).tolist()
    [0.7676, 1.0727]
    """
    import torch

    V.choice("kind", kind, KINDS)
    activations.get(activation, allowed=ACTIVATIONS)
    V.choice("dtype", dtype, ("float64", "float32"))
    D = V.positive_int("D", D, 2)
    P = V.positive_int("P", P)
    k_s = V.positive_int("k_s", k_s)
    k_t = V.positive_int("k_t", k_t)
    if not k_t <= k_s <= P:
        raise ValueError(f"need k_t <= k_s <= P, got k_t={k_t}, k_s={k_s}, P={P}")
    T = V.finite("T", T, positive=True)
    eta = V.finite("eta", eta, positive=True)
    sigma = V.finite("sigma", sigma, nonnegative=True)
    n_seeds = V.positive_int("n_seeds", n_seeds)
    n_test = V.positive_int("n_test", n_test, 0)
    V.choice("init", init, ("random", "zero_error"))
    S_np, c_, L = input_factor(P, c=c, S=S)
    if checkpoints is None:
        alpha_max = V.finite("alpha_max", alpha_max, positive=True)
        checkpoints = _default_checkpoints(D, alpha_max)
    checkpoints = V.array("checkpoints", checkpoints, ndim=1)
    steps = np.unique(np.round(checkpoints * D).astype(int))
    if steps[0] < 0:
        raise ValueError("checkpoints must be >= 0")
    tdt = torch.float64 if dtype == "float64" else torch.float32
    gen = torch_generator(rng)
    net = Networks(kind, B=n_seeds, D=D, P=P, k_s=k_s, k_t=k_t, T=T, rng=gen, dtype=tdt,
                   activation=activation)
    if init == "zero_error":
        net.zero_error()
    test_seed = int(gen.initial_seed()) + TEST_SEED_OFFSET  # = rng + 7919 for an int seed
    cfg = _RunConfig(kind=kind, steps=steps, D=D, P=P, k_s=k_s, k_t=k_t, c=c_, L=L, S=S_np, T=T,
                     eta=eta, sigma=sigma, n_seeds=n_seeds, activation=activation, n_test=n_test,
                     test_seed=test_seed, dtype=tdt, rng=rng, progress=progress)
    with torch_threads(threads):
        return _run(net, cfg, gen)


def _default_checkpoints(D: int, alpha_max: float) -> np.ndarray:
    """The default recording times of :func:`simulate_sgd`: 0 and 40 log-spaced ``alpha`` from
    ``min(10/D, alpha_max/10)`` (ten steps) to ``alpha_max``."""
    return checkpoints(alpha_max, num=40, start=min(1.0 / D * 10, alpha_max / 10), integer=False)


def _run(net: Networks, cfg: _RunConfig, gen) -> SGDResult:
    """The SGD loop of :func:`simulate_sgd` (checkpoints, test-set eps_g, result)."""
    import torch

    P, D, n_seeds, n_test, tdt = cfg.P, cfg.D, cfg.n_seeds, cfg.n_test, cfg.dtype

    def eg_mc():
        tg = torch_generator(cfg.test_seed)
        acc = torch.zeros(n_seeds, n_test, dtype=tdt)
        chunk = max(1, min(n_test, 2_000_000 // (P * D)))
        for s0 in range(0, n_test, chunk):
            m = min(chunk, n_test - s0)
            x = draw_inputs((n_seeds, m), P=P, D=D, c=cfg.c, L=cfg.L, rng=tg, dtype=tdt)
            lam, lh = net.fields(x)
            acc[:, s0:s0 + m] = (net.g(lam).sum(-1) - net.g(lh).sum(-1)) ** 2
        return acc.mean(1).numpy(), (acc.std(1) / math.sqrt(n_test)).numpy()

    Rs, Qs, mcs, ses = [], [], [], []
    t = 0
    with torch.no_grad(), ticker(int(cfg.steps[-1]), cfg.progress, f"{cfg.kind} SGD D={D}") as advance:
        for target in cfg.steps:
            while t < target:
                n = int(min(target - t, 4096))
                xs = draw_inputs((n_seeds, n), P=P, D=D, c=cfg.c, L=cfg.L, rng=gen, dtype=tdt)
                xis = torch.randn(n_seeds, n, generator=gen, dtype=tdt)
                for j in range(n):
                    net.step(xs[:, j], xis[:, j], cfg.eta, cfg.sigma)
                t += n
                advance(n)
            R, Q = net.order()
            Rs.append(R)
            Qs.append(Q)
            if n_test:
                m, s = eg_mc()
                mcs.append(m)
                ses.append(s)
    R = np.stack(Rs)
    Q = np.stack(Qs)
    eg_o = eg_from_order(cfg.kind, R, Q, cfg.S, cfg.T, cfg.activation)
    return SGDResult(t=cfg.steps / D, kind=cfg.kind, R=R, Q=Q, eg_order=eg_o,
                     eg_mc=np.stack(mcs) if n_test else None,
                     eg_mc_se=np.stack(ses) if n_test else None, R0=R[0], Q0=Q[0],
                     params=dict(D=D, P=P, k_s=cfg.k_s, k_t=cfg.k_t, c=cfg.c, S=cfg.S, T=cfg.T,
                                 eta=cfg.eta, sigma=cfg.sigma, activation=cfg.activation,
                                 rng=cfg.rng))


def one_step_drift(kind: str, *, D: int, P: int, k_s: int, k_t: int, c: float = 0.0, S=None,
                   T: float = 1.0, eta: float = 1.0, sigma: float = 0.0, align: float = 0.6,
                   n: int = 200_000, chunk: int = 4000, rng=0,
                   threads: int | None = 1) -> dict:
    """Monte Carlo ``D E[Delta R]``, ``D E[Delta Q]`` of ONE SGD step from fixed weights.

    The student weights are ``N(0, 1)`` plus ``align * sqrt(k_s/k_t) w_l`` on the first ``k_t`` taps
    (so ``R != 0``). ``n`` independent inputs are each used for one step from the *same*
    weights; the increments of the order parameters are computed exactly from the per-sample
    projections and position Gram matrix. Returns ``R``, ``Q`` (the state), ``dR``, ``dQ``
    (means times ``D``), ``se_R``, ``se_Q`` (standard errors) and ``S``; compare with
    ``rhs(kind, R, Q, S, T=T, eta=eta, sigma=sigma)`` (agreement up to O(1/D) plus Monte Carlo
    error). ``rng``: int seed (default 0), ``None`` or a (numpy or torch) Generator; ``threads``:
    torch threads during the run (``None`` leaves torch's setting alone). g is ``erf_sqrt2``.

    References
    ----------
    Mori et al. (CNN vs LCN), eqs 17-18 as the drift of eqs 36 / 68.
    """
    V.choice("kind", kind, KINDS)
    D = V.positive_int("D", D, 2)
    n = V.positive_int("n", n, 2)
    with torch_threads(threads):
        return _drift(kind, D=D, P=P, k_s=k_s, k_t=k_t, c=c, S=S, T=T, eta=eta, sigma=sigma,
                      align=align, n_samples=n, chunk=chunk, rng=rng)


def _drift(kind, *, D, P, k_s, k_t, c, S, T, eta, sigma, align, n_samples, chunk, rng):
    import torch

    S_np, c_, L = input_factor(P, c=c, S=S)
    gen = torch_generator(rng)
    tdt = torch.float64
    net = Networks(kind, B=1, D=D, P=P, k_s=k_s, k_t=k_t, T=T, rng=gen, dtype=tdt,
                   activation="erf_sqrt2")
    tail = net.w[:, :k_t] * (align * math.sqrt(k_s / k_t))
    if kind == "cnn":
        net.wh[:, :k_t] += tail
    else:
        net.wh[:, :, :k_t] += tail[:, None]
    R, Q = net.order()
    idx = net.idx
    sums = None
    n_done = 0
    with torch.no_grad():
        while n_done < n_samples:
            n = min(chunk, n_samples - n_done)
            x = draw_inputs((1, n), P=P, D=D, c=c_, L=L, rng=gen, dtype=tdt)[0]  # (n, P, D)
            xi = torch.randn(n, generator=gen, dtype=tdt)
            lam, lh = net.fields(x[None])
            coef = net.coef(lam[0], lh[0], xi, eta, sigma)  # (n, P): the update of Networks.step
            pw = torch.einsum("nrd,md->nrm", x, net.w[0])  # x_r . w_m
            G = torch.einsum("nrd,nsd->nrs", x, x)  # x_r . x_s
            if kind == "cnn":
                ph = torch.einsum("nrd,kd->nrk", x, net.wh[0])  # x_r . w_hat_k
                # Delta w_hat_l = sum_p coef_p x_{(p+l)}
                dR = torch.einsum("np,nplm->nlm", coef, pw[:, idx, :]) / (math.sqrt(k_s * k_t) * D)
                cross = torch.einsum("np,nplk->nlk", coef, ph[:, idx, :])  # Dw_l . w_hat_k
                Gg = G[:, idx][:, :, :, idx]  # (n, p, l, q, k): x_{p+l} . x_{q+k}
                dd = torch.einsum("np,nplqk,nq->nlk", coef, Gg, coef)
                dQ = (cross + cross.transpose(1, 2) + dd) / (k_s * D)
            else:
                ph = torch.einsum("nrd,qkd->nrqk", x, net.wh[0])  # x_r . w_hat^{(q)}_k
                xr = idx  # (p, l) -> r
                dR = coef[:, :, None, None] * pw[:, xr, :] / (math.sqrt(k_s * k_t) * D)
                # Dw^{(p)}_l . w_hat^{(q)}_k = coef_p x_{(p+l)} . w_hat^{(q)}_k
                cross = coef[:, :, None, None, None] * ph[:, xr, :, :]  # (n, p, l, q, k)
                cross = cross.permute(0, 1, 3, 2, 4)  # (n, p, q, l, k)
                Gg = G[:, idx][:, :, :, idx]  # (n, p, l, q, k)
                dd = (coef[:, :, None, None, None] * Gg * coef[:, None, None, :, None])
                dd = dd.permute(0, 1, 3, 2, 4)
                dQ = (cross + cross.permute(0, 2, 1, 4, 3) + dd) / (k_s * D)
            vals = [D * dR, D * dQ]
            if sums is None:
                sums = [[v.sum(0), (v * v).sum(0)] for v in vals]
            else:
                for s, v in zip(sums, vals):
                    s[0] += v.sum(0)
                    s[1] += (v * v).sum(0)
            n_done += n
    out = {"R": R[0], "Q": Q[0], "S": S_np}
    for name, (s1, s2) in zip(("R", "Q"), sums):
        mean = s1 / n_done
        var = s2 / n_done - mean**2
        out[f"d{name}"] = mean.numpy()
        out[f"se_{name}"] = np.sqrt(np.clip(var.numpy(), 0, None) / n_done)
    return out
