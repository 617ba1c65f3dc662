"""A two-layer ReLU network in Basri et al.'s setting, trained by full-batch GD (demo 7.3.D).

The network on the circle, with inputs ``xb = (cos theta, sin theta, 1)`` (the third weight
is the bias, drawn like the others), is

    f(theta) = scale / sqrt(N) * sum_r a_r ReLU(w_r . xb),      a_r = +-1 fixed,

and only the first layer ``W`` (weights and biases) is trained on
``L = (1/2n) sum_i (f(theta_i) - y_i)^2``. Units come in *twins*: the same initial ``w``
with opposite readouts, so ``f = 0`` at initialisation and the residual starts at ``-y``.

Its first-layer empirical NTK (divided by n) is

    K/n = scale^2 (xb . xb') (1/N) sum_r 1[w_r.xb > 0] 1[w_r.xb' > 0] / n,

whose infinite-width mean is ``2 K_bias`` of 7.3.C (``xb`` is ``sqrt 2`` times the
normalised input), so mode ``sin(l theta)`` has population eigenvalue ``a_l`` (the cosine
coefficient of ``K_bias``). The step is ``eta = 1 / lam_max(K0/n)``; as ``K0`` carries
``scale^2``, ``eta`` falls as ``1/scale^2`` and the function-space step
``eta * scale^2`` is the same at every scale, while the weights move ``scale`` times less
(the lazy limit). The residual of frequency l is then predicted to shrink by
``1 - eta scale^2 a_l`` per step.

The runs of several scales are trained together (batched over scales) in torch, on one
thread (small matrices run fastest single-threaded on a shared machine). torch is imported by
:func:`train_circle_net` only: the rest of the module (used by graded cells and their library
counterparts) is numpy, and importing it costs no torch start-up.

References
----------
Basri, Jacobs, Kasten & Kritchman, *The convergence rate of neural networks for learned
functions of different frequencies* (NeurIPS 2019): a frequency l is learned in a time
proportional to the inverse NTK eigenvalue, ~l^2 on the circle with bias. Original course notes §7.3,
demo 7.3.D (prediction from eq. 7.3.A.3 with the eigenvalues of Exercise 7.3.C).

Examples
--------
>>> th, Xb = circle_inputs(8)
>>> W, a = twin_init(5, rng=0)
>>> round(float(np.abs(circle_network_output(W, a, Xb)).max()), 12)  # twins: f = 0 at initialisation
0.0
>>> round(float(np.linalg.eigvalsh(empirical_ntk(W, Xb))[-1]), 6)
0.529844
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from td_lib import kernels
from td_lib.core import activations
from td_lib.core import validate as v
from td_lib.core.run import Run, checkpoints, static
from td_lib.core.runtime import bar, numpy_rng, torch_threads
from td_lib.core.validate import library_default

__all__ = ["CircleNetRun", "circle_inputs", "twin_init", "empirical_ntk", "circle_network_output",
           "train_circle_net", "run_summary", "steps_to_level", "predicted_steps"]


_RELU = activations.get("relu")


def circle_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` equispaced angles and the inputs ``xb = (cos, sin, 1)``, shape (n, 3)."""
    n = v.positive_int("n", n, minimum=2)
    th = 2 * np.pi * np.arange(n) / n
    return th, np.c_[np.cos(th), np.sin(th), np.ones(n)]


def twin_init(pairs: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian first layer of ``2 * pairs`` twin units and readouts ``(+1,...,+1,-1,...,-1)``.

    ``rng`` is an int seed (the stream of ``numpy.random.default_rng(seed)``), ``None`` or a
    numpy Generator. Returns ``W`` (2 pairs, 3) and ``a`` (2 pairs,); unit r and r + pairs share
    their weights.
    """
    pairs = v.positive_int("pairs", pairs)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        v.positive_int("rng", rng, minimum=0)
    w = numpy_rng(rng).standard_normal((pairs, 3))
    return np.r_[w, w], np.r_[np.ones(pairs), -np.ones(pairs)]


def empirical_ntk(W, Xb, scale: float = 1.0) -> np.ndarray:
    """First-layer empirical NTK divided by n: ``scale^2 (Xb Xb^T) * (M M^T) / N / n``.

    ``M_ir = 1[w_r . xb_i > 0]``. ``Xb`` are the inputs ``(cos theta, sin theta, 1)`` of
    :func:`circle_inputs`, ``sqrt 2`` times those of :func:`td_lib.kernels.finite_width_kernel`,
    so this is ``2 scale^2 finite_width_kernel(theta, theta, W) / n`` (computed so). ``W`` is
    (N, 3) or a batch (S, N, 3) (then ``scale`` may be an array of S scales); returns (n, n) or
    (S, n, n).

    References
    ----------
    Jacot, Gabriel & Hongler (NeurIPS 2018), the empirical NTK ``J J^T``; original course notes §7.3,
    demo 7.3.D and Exercise 7.3.C.3.
    """
    W = v.array("W", W)
    Xb = v.array("Xb", Xb, shape=(None, 3))
    if W.shape[-1] != 3 or W.ndim not in (2, 3):
        raise ValueError(f"W must have shape (N, 3) or (S, N, 3), got {W.shape}")
    if not (np.all(Xb[:, 2] == 1.0) and np.allclose(Xb[:, 0] ** 2 + Xb[:, 1] ** 2, 1.0, rtol=0, atol=1e-12)):
        raise ValueError("Xb must hold the inputs (cos theta, sin theta, 1) of circle_inputs")
    sc = np.asarray(scale, dtype=float)
    if not np.all(np.isfinite(sc)) or np.any(sc <= 0):
        raise ValueError(f"scale must be > 0, got {scale!r}")
    th = np.arctan2(Xb[:, 1], Xb[:, 0])
    K = np.stack([2.0 * kernels.finite_width_kernel(th, th, Wi) / th.size for Wi in W.reshape(-1, *W.shape[-2:])])
    return (sc[..., None, None] ** 2) * K if W.ndim == 3 else float(sc) ** 2 * K[0]


def circle_network_output(W, a, Xb, scale: float = 1.0) -> np.ndarray:
    """``f = scale / sqrt(N) * ReLU(Xb W^T) a`` at the inputs (N units), shape (n,)."""
    W = v.array("W", W, shape=(None, 3))
    a = v.array("a", a, shape=(W.shape[0],))
    Xb = v.array("Xb", Xb, shape=(None, 3))
    scale = v.finite("scale", scale, positive=True)
    return scale * _RELU.f(Xb @ W.T) @ a / np.sqrt(W.shape[0])


@dataclass
class CircleNetRun(Run):
    """What :func:`train_circle_net` returns: ``t`` the GD steps recorded (every step, or the
    log-spaced steps of :func:`run_summary`), ``amps`` (time, scales, freqs) the residual
    amplitude per frequency on the training angles (:func:`circle_inputs`); per scale (statics):
    the step size, the eNTK change, the Rayleigh quotients, the steps to ``1/e`` and the final
    weights.

    References
    ----------
    Original course notes §7.3, demo 7.3.D (the frozen-kernel prediction of eq. 7.3.A.3).
    """

    amps: np.ndarray                    # (T, S, F) residual amplitude per frequency
    scales: np.ndarray = static()       # (S,)
    freqs: np.ndarray = static()        # (F,)
    eta: np.ndarray = static()          # (S,) step size 1/lam_max(K0/n)
    rate_unit: np.ndarray = static()    # (S,) function-space step eta * scale^2
    ntk_change: np.ndarray = static()   # (S,) ||K_end - K_0||_F / ||K_0||_F
    rayleigh: np.ndarray = static()     # (S, 2) eta v.(K/n)v / v.v on sin(max(freqs) theta), init / end
    t_fit: np.ndarray = static()        # (S, F) first step with amplitude < 1/e, every step read (NaN: never)
    W_final: np.ndarray | None = static(default=None)   # (S, N, 3); None in a summary
    time_label: ClassVar[str] = "GD steps"


def _entk(ntk, th: np.ndarray, Xb: np.ndarray):
    """``K(W, scales)``: the eNTK / n of a batch of weights (S, N, 3), one scale each."""
    if ntk is None:
        lib = library_default("empirical_ntk", globals(), "ntk")
        return lambda W, sc: lib(W, Xb, sc)
    if not callable(ntk):
        raise TypeError(f"ntk must be a function (theta1, theta2, W) -> (n1, n2), got {ntk!r}")
    n = th.size

    def K(W, sc):
        out = [s**2 * 2.0 * np.asarray(ntk(th.copy(), th.copy(), np.array(Wi)), dtype=float) / n
               for Wi, s in zip(W, sc)]
        if any(k.shape != (n, n) for k in out):
            raise ValueError(f"ntk(theta, theta, W) must have shape ({n}, {n}), got {out[0].shape}")
        return np.stack(out)

    return K


def train_circle_net(freqs: Sequence[int] = (1, 4, 8), *, scales: Sequence[float] = (1.0, 10.0),
                     n_train: int = 128, pairs: int = 1000, steps: int = 2000, rng=7,
                     progress: bool | str = False, ntk=None) -> CircleNetRun:
    """Full-batch GD of the first layer on the target ``sum_{l in freqs} sin(l theta)`` (7.3.D).

    One run per output scale, all from the same twin initialisation (:func:`twin_init` with
    ``rng``), each with step ``eta = 1/lam_max(K0/n)`` of its own initial eNTK. Records the
    residual amplitude of each frequency after every step, the relative Frobenius change of
    the eNTK, and ``eta`` times its Rayleigh quotient on the slowest mode
    ``sin(max(freqs) theta)`` at the start and at the end. Training is in float32 on one torch
    thread.

    Parameters
    ----------
    freqs : sequence of ints, 0 < l < n_train / 2
        Frequencies of the target.
    scales : sequence of floats > 0
        Output scales, one run each (trained together).
    n_train : int
        Number of equispaced training angles.
    pairs : int
        Number of twin pairs (N = 2 pairs units).
    steps : int
        Number of GD steps.
    rng : int seed, None or numpy Generator
        Draws the initial weights (an int gives ``numpy.random.default_rng(rng)``).
    progress : bool or str
        ``True``: a progress bar labelled "GD steps"; a string: a bar with that label.
    ntk : callable, optional
        The finite-width first-layer NTK as a function ``ntk(theta1, theta2, W)`` of two sets
        of angles and weights ``W`` (N, 3), on the inputs ``(cos, sin, 1) / sqrt 2`` (a kernel
        the caller wrote); the eNTK here is then ``2 ntk(theta, theta, W) / n``. Default: the
        library's :func:`empirical_ntk`.

    Returns
    -------
    CircleNetRun
        ``t = 0, 1, ..., steps``; ``amps[s]`` the amplitudes after ``s`` steps.

    References
    ----------
    Basri et al. (NeurIPS 2019); original course notes §7.3, demo 7.3.D and eq. 7.3.A.3.

    Examples
    --------
    >>> run = train_circle_net((1, 4), scales=(1.0, 10.0), n_train=16, pairs=20, steps=5, rng=0)
    >>> run.amps.shape, np.round(run.final("amps"), 3).tolist()
    ((6, 2, 2), [[0.039, 0.938], [0.024, 0.924]])
    """
    fq = np.asarray(freqs)
    n_train = v.positive_int("n_train", n_train, minimum=4)
    if (fq.ndim != 1 or fq.size == 0 or not np.issubdtype(fq.dtype, np.integer)
            or np.any(fq < 1) or np.any(fq >= n_train / 2)):
        raise ValueError(f"freqs must be integers with 0 < l < n_train/2, got {freqs!r}")
    sc = v.array("scales", scales, ndim=1)
    if sc.size == 0 or np.any(sc <= 0):
        raise ValueError(f"scales must be a non-empty sequence of positive numbers, got {scales!r}")
    steps = v.positive_int("steps", steps, minimum=0)
    th, Xb = circle_inputs(n_train)
    y = np.sum(np.sin(np.outer(th, fq)), axis=1)
    W0, a = twin_init(pairs, rng)
    N, S = W0.shape[0], sc.size
    entk = _entk(ntk, th, Xb)
    K0 = sc[:, None, None] ** 2 * entk(W0[None], np.ones(1))  # every scale starts from W0: one eNTK
    eta = 1.0 / np.linalg.eigvalsh(K0)[:, -1]

    import torch

    dt = torch.float32  # as in the original course notes; the analyses below are in float64
    with torch_threads(1), torch.no_grad():
        X_t, y_t, a_t = (torch.as_tensor(z, dtype=dt) for z in (Xb, y, a))
        W = torch.as_tensor(np.broadcast_to(W0, (S, *W0.shape)).copy(), dtype=dt)
        coef_t = torch.as_tensor(sc / np.sqrt(N), dtype=dt)[:, None]           # (S, 1)
        step_t = torch.as_tensor(eta * sc / np.sqrt(N) / n_train, dtype=dt)[:, None, None]
        resid = torch.empty((S, steps + 1, n_train), dtype=dt)
        for s in bar(range(steps + 1), progress, "GD steps"):
            pre = torch.matmul(X_t, W.transpose(1, 2))                 # (S, n, N)
            mask = _RELU.df(pre)                                       # ReLU'(pre)
            r = coef_t * ((mask * pre) @ a_t) - y_t                    # (S, n) residual; ReLU = z ReLU'(z)
            resid[:, s] = r
            if s == steps:
                break
            # dL/dw_m = coef a_m sum_i 1[pre_im > 0] r_i xb_i / n
            W -= step_t * a_t[:, None] * torch.matmul(mask.transpose(1, 2), r[:, :, None] * X_t)
        W_end = W.numpy().astype(float)
        resid = resid.numpy().astype(float)

    amps = np.moveaxis(np.abs(np.fft.rfft(resid, axis=-1))[..., fq] * 2 / n_train, 1, 0)   # (T, S, F)
    K1 = entk(W_end, sc)
    dK = np.linalg.norm(K1 - K0, axis=(1, 2)) / np.linalg.norm(K0, axis=(1, 2))
    slow = np.sin(fq.max() * th)
    rq = np.stack([eta * np.einsum("i,sij,j->s", slow, K, slow) / (slow @ slow)
                   for K in (K0, K1)], axis=1)
    return CircleNetRun(t=np.arange(steps + 1), amps=amps, scales=sc, freqs=fq, eta=eta,
                        rate_unit=eta * sc**2, ntk_change=dK, rayleigh=rq, t_fit=steps_to_level(amps),
                        W_final=W_end)


def steps_to_level(amps, *, level: float = float(np.exp(-1))) -> np.ndarray:
    """First step at which each amplitude curve is below ``level`` (NaN if never).

    ``amps`` has the time axis first, one entry per step: shape (steps + 1, ...); returns the
    shape of the rest, (...).

    Examples
    --------
    >>> steps_to_level(np.array([[1.0, 1.0], [0.5, 0.9], [0.3, 0.8]])).tolist()
    [2.0, nan]
    """
    A = v.array("amps", amps)
    if A.ndim < 1 or A.shape[0] == 0:
        raise ValueError(f"amps must have a non-empty time axis first (steps + 1, ...), got {A.shape}")
    level = v.finite("level", level, positive=True)
    below = A < level
    first = np.argmax(below, axis=0).astype(float)
    return np.where(below.any(axis=0), first, np.nan)


def predicted_steps(rate_unit: float, a_l, *, level: float = float(np.exp(-1))) -> np.ndarray:
    """Frozen-kernel prediction: first s with ``(1 - rate_unit a_l)^s < level`` (7.3.A.3).

    ``= floor(ln(level) / ln(1 - rate_unit a_l)) + 1`` (the original course notes' ``ceil`` of the same
    ratio, except when the ratio is an exact integer); requires ``0 < rate_unit a_l < 1``.

    References
    ----------
    Original course notes §7.3, eq. 7.3.A.3 (the GD filter of one mode).

    Examples
    --------
    >>> predicted_steps(1.0, [0.5, 0.01]).tolist()
    [2.0, 100.0]
    """
    rate_unit = v.finite("rate_unit", rate_unit, positive=True)
    a = v.array("a_l", a_l, ndim=1)
    level = v.in_interval("level", level, 0.0, 1.0, closed="neither")
    q = rate_unit * a
    if np.any(q <= 0) or np.any(q >= 1):
        raise ValueError("rate_unit * a_l must lie in (0, 1) for a monotone decay")
    return np.floor(np.log(level) / np.log1p(-q)) + 1


def run_summary(run: CircleNetRun, points: int = 40) -> CircleNetRun:
    """What demo 7.3.D shows of a run, small enough to ship as a reference result: the run at
    about ``points`` log-spaced steps (:func:`td_lib.core.run.checkpoints`; the first and the
    last step included), without the final weights. The statics are the run's: ``t_fit`` was
    read off every step.

    Examples
    --------
    >>> s = run_summary(train_circle_net((1, 4), n_train=16, pairs=20, steps=30, rng=0), points=10)
    >>> s.t.tolist(), s.amps.shape, s.W_final is None
    ([0, 1, 2, 3, 5, 8, 13, 20, 30], (9, 2, 2), True)
    """
    if not isinstance(run, CircleNetRun):
        raise TypeError(f"run must be a CircleNetRun (of train_circle_net), got {type(run).__name__}")
    points = v.positive_int("points", points, minimum=2)
    idx = checkpoints(run.t.size, num=points, zero=False) - 1     # 0 .. T - 1, log-spaced
    return dataclasses.replace(run, t=run.t[idx], amps=run.amps[idx], W_final=None)
