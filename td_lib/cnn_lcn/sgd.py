"""Finite-D online SGD for real CNN and LCN students (torch; seed eqs 1-13, 36, 68).

torch is imported on first use (``_LazyTorch``): importing :mod:`td_lib.cnn_lcn` for the ODE
engine costs no torch start-up (about 1.5 s), which the graded cells of the notebook never need.

* :func:`sample_inputs` -- inputs with ``E[x_{p,a} x_{q,b}] = S_pq delta_ab`` (eq. 2). For the
  default covariance of eq. 3 the cost is O(PD) per sample (``x_p = sqrt(1-c) z_p + sqrt(c) z_0``);
  for a general ``S`` a Cholesky factor is applied (O(P^2 D)).
* :func:`simulate_sgd` -- one-pass SGD (eq. 13) on the squared loss (eq. 12) for ``n_seeds``
  independent runs at once (teacher, student and data all per seed), ``erf`` (``g(z) =
  erf(z/sqrt 2)``) or ``relu``; label noise ``sigma xi`` (eq. 4). Records the order parameters
  (eqs 15-16), eps_g from the order parameters (erf: eq. 81; relu: the arc-cosine kernel) and
  a held-out Monte Carlo estimate of eq. 14 on a fixed test set. The initial order parameters
  are returned, so the ODE can start from the simulation's own initial condition.
* :func:`one_step_drift` -- ``D E[Delta R]``, ``D E[Delta Q]`` over many independent SGD steps from
  one fixed set of weights, with standard errors, next to the ODE right-hand side: the
  decisive numerical check of the appendix derivation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from td_lib.cnn_lcn.model import KINDS, check_S, generalisation_error, input_covariance
from td_lib.core import validate as V
from td_lib.core.runtime import progress as _progress

if TYPE_CHECKING:
    import torch


class _LazyTorch:
    """Stands in for the ``torch`` module until an attribute is first needed, then imports it
    and replaces itself by the real module in this module's globals."""

    def __getattr__(self, name):
        import torch as _t

        globals()["torch"] = _t
        return getattr(_t, name)


if not TYPE_CHECKING:
    torch = _LazyTorch()

ACTIVATIONS = ("erf", "relu")


@dataclass
class SGDResult:
    """Result of :func:`simulate_sgd` (leading axis ``n_ckpt``, then ``n_seeds``).

    Attributes: ``alpha`` (checkpoint times t/D), ``R``, ``Q`` (order parameters, shapes as in
    :mod:`td_lib.cnn_lcn`), ``eg_order`` (eps_g from the order parameters), ``eg_mc``
    (held-out Monte Carlo eps_g, ``None`` if ``n_test = 0``), ``eg_mc_se`` (its standard error),
    ``R0``, ``Q0`` (initial order parameters, ``(n_seeds, ...)``) and ``params``.
    """

    kind: str
    alpha: np.ndarray
    R: np.ndarray
    Q: np.ndarray
    eg_order: np.ndarray
    eg_mc: np.ndarray | None
    eg_mc_se: np.ndarray | None
    R0: np.ndarray
    Q0: np.ndarray
    params: dict = field(default_factory=dict)


def _act(name):
    if name == "erf":
        g = lambda z: torch.erf(z / math.sqrt(2.0))
        gp = lambda z: math.sqrt(2.0 / math.pi) * torch.exp(-0.5 * z * z)
    else:
        g = torch.relu
        gp = lambda z: (z > 0).to(z.dtype)
    return g, gp


def _S_and_factor(P, c, S):
    if S is None:
        c = V.in_interval("c", c, 0.0, 1.0)
        return input_covariance(P, c), c, None
    S = check_S(S, P)
    if S.ndim != 2:
        raise ValueError(f"S must be a single P x P matrix here, got shape {S.shape}")
    w, U = np.linalg.eigh(S)
    L = U * np.sqrt(np.clip(w, 0, None))  # S = L L^T, works for singular S too
    return S, None, L


def sample_inputs(n: int, P: int, D: int, S=None, gen: torch.Generator | None = None, *,
                  c: float = 0.0, batch: tuple = (), dtype=None) -> torch.Tensor:
    """Gaussian inputs ``(*batch, n, P, D)`` with position covariance ``S`` (or eq. 3 with ``c``).

    ``dtype`` is a torch dtype (default ``torch.float64``).
    """
    dtype = torch.float64 if dtype is None else dtype
    n = V.positive_int("n", n)
    P = V.positive_int("P", P)
    D = V.positive_int("D", D)
    S_, c_, L = _S_and_factor(P, c, S)
    return _sample(tuple(batch) + (n,), P, D, c_, L, gen, dtype)


def _sample(lead, P, D, c, L, gen, dtype):
    if L is None:
        z = torch.randn(lead + (P + 1, D), generator=gen, dtype=dtype)
        return math.sqrt(1.0 - c) * z[..., 1:, :] + math.sqrt(c) * z[..., :1, :]
    z = torch.randn(lead + (P, D), generator=gen, dtype=dtype)
    return torch.einsum("pq,...qd->...pd", torch.as_tensor(L, dtype=dtype), z)


class _Net:
    """Teacher + student weights for ``B`` seeds, and the per-sample forward/update."""

    def __init__(self, kind, B, D, P, k_s, k_t, T, gen, dtype, act, weights=None):
        self.kind, self.B, self.D, self.P, self.k_s, self.k_t = kind, B, D, P, k_s, k_t
        if weights is not None:
            self.w, self.wh = weights
        else:
            w = torch.randn(B, D, k_t, generator=gen, dtype=dtype)
            qmat, _ = torch.linalg.qr(w)  # orthonormal columns: eq. 7 holds exactly
            self.w = math.sqrt(T * D) * qmat.transpose(1, 2)  # (B, k_t, D)
            shape = (B, k_s, D) if kind == "cnn" else (B, P, k_s, D)
            self.wh = torch.randn(shape, generator=gen, dtype=dtype)
        self.g, self.gp = _act(act)
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

    def step(self, x, xi, eta, sigma):
        """One online SGD step (eq. 36 CNN / eq. 68 LCN); x ``(B, P, D)``, xi ``(B,)``."""
        lam, lh = self.fields(x[:, None])
        lam, lh = lam[:, 0], lh[:, 0]
        delta = self.g(lam).sum(-1) + sigma * xi - self.g(lh).sum(-1)  # (B,)
        coef = (eta / math.sqrt(self.k_s * self.D)) * delta[:, None] * self.gp(lh)  # (B, P)
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
    th = np.arccos(cos)
    K = nrm / (2 * np.pi) * (np.sin(th) + (np.pi - th) * cos)
    return np.einsum("...ab,a,b->...", K, s, s)


def eg_from_order(kind, R, Q, S, T=1.0, activation="erf"):
    """eps_g from order parameters for ``erf`` (eq. 81) or ``relu`` (arc-cosine kernel)."""
    if activation == "erf":
        return generalisation_error(kind, R, Q, S, T)
    from td_lib.cnn_lcn.model import preactivation_covariance

    return _eg_relu(preactivation_covariance(kind, R, Q, S, T))


def simulate_sgd(kind: str, D: int, P: int, k_s: int, k_t: int, *, c: float = 0.0, S=None,
                 T: float = 1.0, eta: float = 1.0, sigma: float = 0.0, alpha_max: float = 5.0,
                 checkpoints=None, n_seeds: int = 1, activation: str = "erf",
                 dtype: str = "float64", n_test: int = 2000, seed: int = 0,
                 init: str = "random", threads: int | None = 1,
                 progress: bool = False) -> SGDResult:
    """Online SGD of a CNN (eqs 8-9) or LCN (eqs 10-11) student at finite ``D``, ``n_seeds`` runs.

    Parameters
    ----------
    kind : ``"cnn"`` or ``"lcn"``; ``D, P, k_s, k_t`` sizes (``k_t <= k_s <= P``).
    c, S : position correlation of eq. 3 (O(PD) sampling) or an explicit covariance ``S``.
    T, eta, sigma : teacher norm (eq. 7), learning rate, label noise (eq. 4).
    alpha_max, checkpoints : run ``alpha_max * D`` steps; record at ``checkpoints`` (times
        ``alpha = t/D``, default 41 log-spaced points plus 0).
    activation : ``"erf"`` or ``"relu"``; dtype ``"float64"`` or ``"float32"``.
    n_test : held-out test-set size for the Monte Carlo eps_g (0 disables).
    init : ``"random"`` (i.i.d. N(0,1) student, eqs 19-20) or ``"zero_error"`` (eq. 23, shift 0:
        ``w_hat_l = sqrt(k_s/k_t) w_l`` for ``l < k_t``, else 0; same kernel at every LCN position).
    threads : torch threads during the run (restored afterwards); the per-step tensors are tiny,
        so one thread is fastest on a shared machine. ``None`` leaves torch's setting alone.
    """
    V.choice("kind", kind, KINDS)
    V.choice("activation", activation, ACTIVATIONS)
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
    S_np, c_, L = _S_and_factor(P, c, S)
    if checkpoints is None:
        alpha_max = V.finite("alpha_max", alpha_max, positive=True)
        checkpoints = np.concatenate([[0.0], np.geomspace(min(1.0 / D * 10, alpha_max / 10),
                                                          alpha_max, 40)])
    checkpoints = V.array("checkpoints", checkpoints, ndim=1)
    steps = np.unique(np.round(checkpoints * D).astype(int))
    if steps[0] < 0:
        raise ValueError("checkpoints must be >= 0")
    tdt = torch.float64 if dtype == "float64" else torch.float32
    gen = torch.Generator().manual_seed(int(seed))
    net = _Net(kind, n_seeds, D, P, k_s, k_t, T, gen, tdt, activation)
    if init == "zero_error":
        net.zero_error()
    test_seed = int(seed) + 7919
    old_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(V.positive_int("threads", threads))
    try:
        return _run(net, kind, steps, D, P, k_s, k_t, c_, L, S_np, T, eta, sigma, n_seeds,
                    activation, n_test, test_seed, gen, tdt, seed, progress)
    finally:
        torch.set_num_threads(old_threads)


def _run(net, kind, steps, D, P, k_s, k_t, c_, L, S_np, T, eta, sigma, n_seeds, activation,
         n_test, test_seed, gen, tdt, seed, progress):

    def eg_mc():
        tg = torch.Generator().manual_seed(test_seed)
        acc = torch.zeros(n_seeds, n_test, dtype=tdt)
        chunk = max(1, min(n_test, 2_000_000 // (P * D)))
        for s0 in range(0, n_test, chunk):
            m = min(chunk, n_test - s0)
            x = _sample((n_seeds, m), P, D, c_, L, tg, tdt)
            lam, lh = net.fields(x)
            acc[:, s0:s0 + m] = (net.g(lam).sum(-1) - net.g(lh).sum(-1)) ** 2
        return acc.mean(1).numpy(), (acc.std(1) / math.sqrt(n_test)).numpy()

    Rs, Qs, mcs, ses = [], [], [], []
    t = 0
    total = int(steps[-1])
    bar = _progress(range(total), desc=f"{kind} SGD D={D}", total=total) if progress else None
    with torch.no_grad():
        for target in steps:
            while t < target:
                n = int(min(target - t, 4096))
                xs = _sample((n_seeds, n), P, D, c_, L, gen, tdt)
                xis = torch.randn(n_seeds, n, generator=gen, dtype=tdt)
                for j in range(n):
                    net.step(xs[:, j], xis[:, j], eta, sigma)
                t += n
                if bar is not None:
                    bar.update(n)
            R, Q = net.order()
            Rs.append(R)
            Qs.append(Q)
            if n_test:
                m, s = eg_mc()
                mcs.append(m)
                ses.append(s)
    if bar is not None:
        bar.close()
    R = np.stack(Rs)
    Q = np.stack(Qs)
    eg_o = eg_from_order(kind, R, Q, S_np, T, activation)
    return SGDResult(kind=kind, alpha=steps / D, R=R, Q=Q, eg_order=eg_o,
                     eg_mc=np.stack(mcs) if n_test else None,
                     eg_mc_se=np.stack(ses) if n_test else None, R0=R[0], Q0=Q[0],
                     params=dict(D=D, P=P, k_s=k_s, k_t=k_t, c=c_, S=S_np, T=T, eta=eta,
                                 sigma=sigma, activation=activation, seed=seed))


def _to_torch(a):
    return torch.as_tensor(np.asarray(a, dtype=float))


def preactivations(kind: str, w_hat, w_teacher, x) -> tuple[np.ndarray, np.ndarray]:
    """Teacher and student preactivations ``(lambda, lambda_hat)``, each ``(..., P)`` (eqs 6, 9, 11).

    ``w_hat``: CNN ``(..., k_s, D)``, LCN ``(..., P, k_s, D)``; ``w_teacher`` ``(..., k_t, D)``;
    ``x`` ``(..., P, D)``. Same code path as :func:`simulate_sgd`.
    """
    net, xt, lead = _wrap(kind, w_hat, w_teacher, x)
    lam, lh = net.fields(xt[:, None])
    return lam[:, 0].numpy().reshape(lead + (-1,)), lh[:, 0].numpy().reshape(lead + (-1,))


def _wrap(kind, w_hat, w_teacher, x, activation="erf"):
    V.choice("kind", kind, KINDS)
    V.choice("activation", activation, ACTIVATIONS)
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
    net = _Net(kind, B, D, P, k_s, k_t, 1.0, None, torch.float64, activation,
               weights=(wtt, wht))
    return net, xt, tuple(lead)


def sgd_step(kind: str, w_hat, w_teacher, x, eta: float, sigma: float = 0.0, xi=None,
             activation: str = "erf") -> np.ndarray:
    """One online SGD step (eq. 36 CNN / eq. 68 LCN) on given inputs; numpy in, numpy out.

    ``w_hat``: CNN ``(..., k_s, D)``, LCN ``(..., P, k_s, D)`` (not modified);
    ``w_teacher``: ``(..., k_t, D)``; ``x``: ``(..., P, D)``; label
    ``y = sum_p g(lambda_p) + sigma xi`` (``xi`` ``(...)``, default 0). Returns the updated
    student kernels. This is the code path of :func:`simulate_sgd`.
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


def one_step_drift(kind: str, D: int, P: int, k_s: int, k_t: int, *, c: float = 0.0, S=None,
                   T: float = 1.0, eta: float = 1.0, sigma: float = 0.0, align: float = 0.6,
                   n_samples: int = 200_000, chunk: int = 4000, seed: int = 0) -> dict:
    """Monte Carlo ``D E[Delta R]``, ``D E[Delta Q]`` of ONE SGD step from fixed weights.

    The student weights are ``N(0, 1)`` plus ``align * sqrt(k_s/k_t) w_l`` on the first ``k_t`` taps
    (so ``R != 0``). ``n_samples`` independent inputs are each used for one step from the *same*
    weights; the increments of the order parameters are computed exactly from the per-sample
    projections and position Gram matrix. Returns ``R``, ``Q`` (the state), ``dR``, ``dQ``
    (means times ``D``), ``se_R``, ``se_Q`` (standard errors) and ``S``; compare with
    ``rhs(kind, R, Q, S, T, eta, sigma)`` (agreement up to O(1/D) plus Monte Carlo error).
    """
    V.choice("kind", kind, KINDS)
    D = V.positive_int("D", D, 2)
    n_samples = V.positive_int("n_samples", n_samples, 2)
    old_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _drift(kind, D, P, k_s, k_t, c, S, T, eta, sigma, align, n_samples, chunk, seed)
    finally:
        torch.set_num_threads(old_threads)


def _drift(kind, D, P, k_s, k_t, c, S, T, eta, sigma, align, n_samples, chunk, seed):
    S_np, c_, L = _S_and_factor(P, c, S)
    gen = torch.Generator().manual_seed(int(seed))
    tdt = torch.float64
    net = _Net(kind, 1, D, P, k_s, k_t, T, gen, tdt, "erf")
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
            x = _sample((1, n), P, D, c_, L, gen, tdt)[0]  # (n, P, D)
            xi = torch.randn(n, generator=gen, dtype=tdt)
            lam, lh = net.fields(x[None])
            lam, lh = lam[0], lh[0]
            delta = net.g(lam).sum(-1) + sigma * xi - net.g(lh).sum(-1)
            coef = (eta / math.sqrt(k_s * D)) * delta[:, None] * net.gp(lh)  # (n, P)
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
