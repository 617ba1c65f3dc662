"""Online spherical SGD for a single neuron, and first-passage ("escape") times (§7.2).

Seed §7.2, "The information exponent" and Exercises 7.2.B/7.2.C: a neuron with weight
:math:`w` on the unit sphere sees one fresh sample per step and takes the step

.. math:: w \\leftarrow \\mathrm{normalize}\\Big(w-\\frac{\\delta}{d}\\,(I-ww^\\top)
   \\nabla_w\\ell(w;x_t,y_t)\\Big),\\qquad
   \\ell = 1-y\\,\\sigma(w\\cdot x)\\ \\text{(correlation loss)},

so that :math:`-\\nabla_w\\ell = y\\,\\sigma'(w\\cdot x)\\,x`. We track overlaps
:math:`\\alpha_i=w\\cdot v_i` with given unit directions and record the first step at which
the overlap with the target direction exceeds a threshold (signed, or in absolute value).

Everything is vectorised over independent runs (each run draws its own samples); randomness
comes from one seeded :class:`numpy.random.Generator`, drawn in chunks of steps.

Three entry points:

* :func:`spherical_sgd` — the general simulator (any sampler, any activation derivative,
  several tracked directions, optional traces); used for the mixed cumulant model with two
  spikes via :func:`mcm_sampler`.
* :func:`single_index_escape_times` — the 7.2.C setting: Gaussian inputs, teacher
  :math:`y=h_k(x_0)` (:math:`v=e_0`), student :math:`h_k(w\\cdot x)`, full d-dimensional SGD.
* :func:`reduced_escape_times` — the same process simulated *exactly* through the Markov
  chain of the overlap alone (three random numbers per step whatever d is), for cheap
  reference distributions in checks and tests.

This module is a general simulator; Exercise 7.2.C asks students for their own
``escape_times``, and the tests compare distributions, not code.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from td_lib.core import validate as V
from td_lib.core.runtime import progress

__all__ = [
    "SGDResult", "spherical_sgd", "single_index_teacher", "gaussian_single_index_sampler",
    "random_start", "single_index_escape_times", "reduced_escape_times", "mcm_sampler",
    "relu_derivative", "loglog_slope", "bootstrap_slope", "LAWS", "STEPS",
]

Sampler = Callable[[np.random.Generator, int, int], tuple[np.ndarray, np.ndarray]]

#: The sample-complexity laws of the 7.2.C study (k -> samples as a function of d).
LAWS: dict[int, Callable[[float], float]] = {
    1: lambda d: d,
    2: lambda d: d * math.log(d) ** 2,
    3: lambda d: d**2 * math.log(d),
}
#: The step parameters delta(d) of the 7.2.C study.
STEPS: dict[int, Callable[[float], float]] = {
    1: lambda d: 1.0,
    2: lambda d: 1.0 / math.log(d),
    3: lambda d: d**-0.5 / math.log(d),
}


@dataclass
class SGDResult:
    """Output of :func:`spherical_sgd`.

    Attributes
    ----------
    times : (runs,) float array
        First step at which the target overlap crossed the threshold, ``np.inf`` if never
        (within ``t_max`` steps).
    alpha : (runs, p) array
        Overlaps with the tracked directions at the end.
    trace_t : (n_rec,) int array
        Steps at which overlaps were recorded (empty if ``record_every == 0``).
    trace : (n_rec, runs, p) array
        Recorded overlaps.
    steps : int
        Number of steps simulated.
    """

    times: np.ndarray
    alpha: np.ndarray
    trace_t: np.ndarray
    trace: np.ndarray
    steps: int


def _rng(seed, rng) -> np.random.Generator:
    if rng is not None:
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy Generator, got {type(rng).__name__}")
        return rng
    return np.random.default_rng(seed)


def _deltas(delta, runs: int) -> np.ndarray:
    """``delta`` as a positive array of shape ``(runs,)`` (a scalar is broadcast)."""
    a = np.asarray(delta, dtype=float)
    if a.ndim == 0:
        V.finite("delta", float(a), positive=True)
        return np.full(runs, float(a))
    a = V.array("delta", a, shape=(runs,))
    if np.any(a <= 0):
        raise ValueError("delta must be > 0 (every entry)")
    return a.copy()


def random_start(d: int, runs: int, rng: np.random.Generator, *,
                 direction: np.ndarray | None = None) -> np.ndarray:
    """Uniform random unit vectors ``(runs, d)`` conditioned on a non-negative overlap with
    ``direction`` (default :math:`e_0`): the start "with :math:`\\alpha_0>0`" of 7.2.C."""
    d = V.positive_int("d", d, minimum=2)
    runs = V.positive_int("runs", runs)
    w = rng.standard_normal((runs, d))
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    v = np.eye(d)[0] if direction is None else V.array("direction", direction, shape=(d,))
    a = w @ v
    w -= 2 * np.minimum(a, 0.0)[:, None] * v[None, :] / (v @ v)  # reflect to a >= 0
    return w


def spherical_sgd(sampler: Sampler, dsigma: Callable[[np.ndarray], np.ndarray],
                  w0: np.ndarray, delta: float, t_max: int, *, directions: np.ndarray,
                  target: int = 0, threshold: float = 0.5, signed: bool = True,
                  rng: np.random.Generator | None = None, seed: int | None = None,
                  chunk: int = 128, record_every: int = 0, stop_when_escaped: bool = True,
                  project: bool = True, renormalise: bool = True,
                  desc: str | None = None) -> SGDResult:
    """Online spherical SGD on the correlation loss :math:`1-y\\sigma(w\\cdot x)`, vectorised
    over runs (seed §7.2, Ben Arous et al.'s update with step :math:`\\delta/d`).

    Parameters
    ----------
    sampler
        ``sampler(rng, n, runs) -> (X, y)`` with ``X`` of shape ``(n, runs, d)`` and ``y`` of
        shape ``(n, runs)``: ``n`` steps' worth of fresh samples, one per run and step.
    dsigma
        Derivative :math:`\\sigma'` of the student's activation (vectorised).
    w0 : (runs, d)
        Initial weights (normalised here).
    delta, t_max
        Step parameter (step size :math:`\\delta/d`; a scalar, or one value per run to sweep
        step sizes in one vectorised call) and the cap on the number of steps.
    directions : (p, d)
        Unit directions whose overlaps are tracked; ``directions[target]`` defines escape.
    threshold, signed
        Escape when :math:`\\alpha>` ``threshold`` (``signed=True``, odd information exponent)
        or :math:`|\\alpha|>` ``threshold`` (``signed=False``).
    rng, seed
        Random source (a Generator, or a seed for a new one).
    chunk
        Largest number of steps of samples drawn at once (memory ``chunk * runs * d``
        floats; chunks start at 16 steps and double). Runs that have
        escaped are dropped between chunks (unless traces are recorded), so no samples are
        drawn for them.
    record_every
        Record all overlaps every this many steps (0: no traces). With traces, every run is
        simulated for all ``t_max`` steps.
    stop_when_escaped
        Stop as soon as every run has escaped.
    project, renormalise
        Switches for the tangent projection and the renormalisation (both on for the method of
        the seed; turning one off shows what it is for).
    desc
        If given, show a progress bar with this label.
    """
    w = V.array("w0", w0, ndim=2).copy()
    runs, d = w.shape
    D = V.array("directions", directions, ndim=2)
    if D.shape[1] != d:
        raise ValueError(f"directions must have {d} columns (the dimension of w0), got {D.shape}")
    target = V.positive_int("target", target, minimum=0)
    if target >= D.shape[0]:
        raise ValueError(f"target must index a row of directions (< {D.shape[0]}), got {target}")
    eta = _deltas(delta, runs) / d
    t_max = V.positive_int("t_max", t_max)
    threshold = V.finite("threshold", threshold)
    chunk = V.positive_int("chunk", chunk)
    record_every = V.positive_int("record_every", record_every, minimum=0)
    rng = _rng(seed, rng)
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    times = np.full(runs, np.inf)
    alpha_end = np.zeros((runs, D.shape[0]))
    rec_t, rec = [], []
    if record_every:
        rec_t.append(0)
        rec.append(w @ D.T)
    compact = stop_when_escaped and not record_every
    active = np.arange(runs)  # indices of the runs still simulated (compacted as they escape)
    v_t = D[target]
    t = 0
    bar = progress(range(t_max), desc=desc, total=t_max) if desc else None
    cur = min(16, chunk)
    while t < t_max and active.size:
        n = min(cur, t_max - t)
        cur = min(2 * cur, chunk)  # chunks grow geometrically: short runs draw few samples
        X, Y = sampler(rng, n, active.size)
        A = np.empty((n, active.size))
        for i in range(n):
            x = X[i]
            z = np.einsum("rd,rd->r", w, x)
            ec = eta * Y[i] * dsigma(z)  # step times (-grad of the loss) = ec * x
            if project:
                if renormalise:
                    w += ec[:, None] * (x - z[:, None] * w)
                else:  # projector I - w w^T / |w|^2 for a non-unit w
                    ww = np.einsum("rd,rd->r", w, w)
                    w += ec[:, None] * (x - (z / ww)[:, None] * w)
            else:
                w += ec[:, None] * x
            if renormalise:
                w /= np.sqrt(np.einsum("rd,rd->r", w, w))[:, None]
            A[i] = w @ v_t
            if record_every and (t + i + 1) % record_every == 0:
                rec_t.append(t + i + 1)
                rec.append(w @ D.T)
        hit = (A if signed else np.abs(A)) > threshold
        first = np.argmax(hit, axis=0)
        done = np.where(hit[first, np.arange(active.size)], t + first + 1.0, np.inf)
        t += n
        if bar is not None:
            bar.update(n)
        times[active] = np.where(np.isinf(times[active]), done, times[active])
        if compact:
            keep = np.isinf(done)
            alpha_end[active[~keep]] = w[~keep] @ D.T
            active, w, eta = active[keep], w[keep], eta[keep]
    alpha_end[active] = w @ D.T
    if bar is not None:
        bar.close()
    trace = np.array(rec) if rec else np.zeros((0, runs, D.shape[0]))
    return SGDResult(times=times, alpha=alpha_end, trace_t=np.array(rec_t, dtype=int),
                     trace=trace, steps=t)


def single_index_teacher(k: int) -> tuple[Callable, Callable]:
    """The 7.2.C link :math:`h_k=He_k/\\sqrt{k!}` and its derivative, as fast callables.

    The coefficients come from :mod:`numpy.polynomial.hermite_e` (``hermeder``,
    ``herme2poly``) once; evaluation is a power-series ``polyval`` (this sits in the inner
    loop of the simulators). Agrees with :func:`td_lib.hermite.h` to rounding.
    """
    k = V.positive_int("k", k)
    from numpy.polynomial import hermite_e as He

    c = np.zeros(k + 1)
    c[k] = 1.0 / math.sqrt(math.factorial(k))
    return _horner(He.herme2poly(c)), _horner(He.herme2poly(He.hermeder(c)))


def _horner(coef: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Evaluate a power series (coefficients low to high) with minimal call overhead."""
    coef = [float(a) for a in coef]
    if len(coef) == 1:
        return lambda z: np.full(np.shape(z), coef[0])

    def f(z):
        out = coef[-1] * z + coef[-2]
        for a in coef[-3::-1]:
            out = out * z + a
        return out

    return f


def gaussian_single_index_sampler(k: int) -> Sampler:
    """Sampler for :math:`x\\sim\\mathcal N(0,I_d)`, :math:`y=h_k(x_0)` (teacher :math:`v=e_0`)."""
    hk, _ = single_index_teacher(k)

    def sample(rng: np.random.Generator, n: int, runs: int, d: int) -> tuple:
        X = rng.standard_normal((n, runs, d))
        return X, hk(X[..., 0])

    return sample


def single_index_escape_times(k: int, d: int, delta: float, runs: int = 48,
                              t_max: int = 10**6, *, threshold: float = 0.5,
                              seed: int | None = None, rng: np.random.Generator | None = None,
                              chunk: int = 128, project: bool = True, renormalise: bool = True,
                              signed: bool | None = None, desc: str | None = None) -> np.ndarray:
    """Escape times of online spherical SGD in the 7.2.C setting (full d-dimensional simulation).

    Inputs :math:`x\\sim\\mathcal N(0,I_d)`, labels :math:`y=h_k(x_0)`, student
    :math:`h_k(w\\cdot x)`, loss :math:`1-y\\,h_k(w\\cdot x)` (population loss
    :math:`1-\\alpha^k`, information exponent k), step :math:`\\delta/d`, random start with
    :math:`\\alpha_0=w_0\\ge0`. Returns the first step with :math:`\\alpha>` ``threshold``
    (odd k) or :math:`|\\alpha|>` ``threshold`` (even k), ``np.inf`` if not reached within
    ``t_max`` steps; a float array of shape ``(runs,)``. ``delta`` may be one value per run
    (a step-size sweep in one vectorised call). ``signed`` overrides the parity
    rule (for demonstrations of the wrong convention); ``project``/``renormalise`` as in
    :func:`spherical_sgd`.
    """
    k = V.positive_int("k", k)
    d = V.positive_int("d", d, minimum=2)
    rng = _rng(seed, rng)
    _, dh = single_index_teacher(k)
    base = gaussian_single_index_sampler(k)
    w0 = random_start(d, runs, rng)
    res = spherical_sgd(lambda r, n, m: base(r, n, m, d), dh, w0, delta, t_max,
                        directions=np.eye(d)[:1], threshold=threshold,
                        signed=bool(k % 2) if signed is None else bool(signed),
                        rng=rng, chunk=chunk, project=project, renormalise=renormalise,
                        desc=desc)
    return res.times


def reduced_escape_times(k: int, d: int, delta: float, runs: int = 48, t_max: int = 10**6, *,
                         threshold: float = 0.5, seed: int | None = None,
                         rng: np.random.Generator | None = None, chunk: int = 1024,
                         signed: bool | None = None, desc: str | None = None) -> np.ndarray:
    """Exactly the law of :func:`single_index_escape_times`, simulated through the overlap alone.

    Write :math:`w=\\alpha v+\\sqrt{1-\\alpha^2}\\,e` with :math:`e\\perp v` and split a fresh
    sample as :math:`x=x_v v+x_e e+r`, :math:`r\\perp v,e`. By rotation invariance of
    :math:`\\mathcal N(0,I_d)` about :math:`v`, :math:`x_v,x_e\\sim\\mathcal N(0,1)` and
    :math:`\\|r\\|^2\\sim\\chi^2_{d-2}` are independent of the past, and with
    :math:`z=w\\cdot x=\\alpha x_v+\\sqrt{1-\\alpha^2}x_e`, :math:`c=y\\,h_k'(z)`,
    :math:`y=h_k(x_v)`, one step of the projected, renormalised update gives exactly

    .. math:: \\alpha'=\\frac{\\alpha+\\eta c\\,(x_v-z\\alpha)}
              {\\sqrt{1+\\eta^2c^2(x_v^2+x_e^2+\\|r\\|^2-z^2)}},\\qquad \\eta=\\delta/d.

    So :math:`\\alpha_t` is a Markov chain and costs three random numbers per step, for any d.
    The start is :math:`\\alpha_0=|g_0|/\\|g\\|` for a standard Gaussian ``g`` in
    :math:`\\mathbb R^d` (uniform on the sphere, upper half). ``delta`` may be one value per run.
    """
    k = V.positive_int("k", k)
    d = V.positive_int("d", d, minimum=3)
    runs = V.positive_int("runs", runs)
    eta_all = _deltas(delta, runs) / d
    t_max = V.positive_int("t_max", t_max)
    threshold = V.finite("threshold", threshold)
    rng = _rng(seed, rng)
    hk, dh = single_index_teacher(k)
    g0 = np.abs(rng.standard_normal(runs))
    a = g0 / np.sqrt(g0**2 + rng.chisquare(d - 1, runs))
    times = np.full(runs, np.inf)
    signed = bool(k % 2) if signed is None else bool(signed)
    active = np.arange(runs)
    t = 0
    bar = progress(range(t_max), desc=desc, total=t_max) if desc else None
    cur = min(16, chunk)
    while t < t_max and active.size:
        n = min(cur, t_max - t)
        cur = min(2 * cur, chunk)
        m = active.size
        XV = rng.standard_normal((n, m))
        XE = rng.standard_normal((n, m))
        R2 = rng.chisquare(d - 2, (n, m))
        YV = hk(XV)
        XE2 = XV * XV + XE * XE + R2  # |x|^2
        aa = a[active]
        eta = eta_all[active]
        A = np.empty((n, m))
        for i in range(n):
            xv = XV[i]
            z = aa * xv + np.sqrt(np.maximum(1 - aa * aa, 0.0)) * XE[i]
            ec = eta * YV[i] * dh(z)
            aa = (aa + ec * (xv - z * aa)) / np.sqrt(1 + ec * ec * (XE2[i] - z * z))
            A[i] = aa
        hit = (A if signed else np.abs(A)) > threshold
        first = np.argmax(hit, axis=0)
        done_at = np.where(hit[first, np.arange(m)], t + first + 1.0, np.inf)
        a[active] = aa
        times[active] = done_at
        t += n
        active = active[np.isinf(done_at)]
        if bar is not None:
            bar.update(n)
    if bar is not None:
        bar.close()
    return times


def relu_derivative(z: np.ndarray) -> np.ndarray:
    """:math:`\\mathrm{ReLU}'(z)=\\mathbf 1[z>0]` (as floats)."""
    return (np.asarray(z) > 0).astype(float)


def mcm_sampler(spikes, *, beta_m: float = 0.0, beta_u: float = 5.0, beta_v: float = 10.0,
                correlated: bool = False, seed: int = 0) -> Sampler:
    """Sampler of the mixed cumulant model (``td_lib.mcm.sample``) for :func:`spherical_sgd`.

    Draws ``n * runs`` samples per call from :func:`td_lib.mcm.sample` (its own seeded torch
    generator; the numpy ``rng`` argument is ignored) and reshapes them to ``(n, runs, d)``.
    Default strengths are Bardone and Goldt's single-neuron setting of §7.2 (no mean signal).
    """
    import torch

    from td_lib import mcm

    gen = torch.Generator().manual_seed(int(seed))
    S = torch.as_tensor(np.asarray(spikes), dtype=torch.float64)

    def sample(rng: np.random.Generator, n: int, runs: int) -> tuple[np.ndarray, np.ndarray]:
        X, y = mcm.sample(n * runs, spikes=S, beta_m=beta_m, beta_u=beta_u, beta_v=beta_v,
                          correlated=correlated, gen=gen)
        return X.numpy().reshape(n, runs, -1), y.numpy().reshape(n, runs)

    return sample


def loglog_slope(dims, values) -> float:
    """Least-squares slope of :math:`\\log` ``values`` against :math:`\\log` ``dims``."""
    x = np.log(V.array("dims", dims, ndim=1))
    y = np.log(np.asarray(values, dtype=float))
    if y.shape != x.shape:
        raise ValueError(f"values must have the shape of dims {x.shape}, got {y.shape}")
    return float(np.polyfit(x, y, 1)[0])


def bootstrap_slope(dims, times: list[np.ndarray], n_boot: int = 1000, *,
                    rng: np.random.Generator | None = None, seed: int | None = 0
                    ) -> tuple[float, np.ndarray]:
    """Slope of log median escape time vs log d, and its bootstrap distribution over runs.

    ``times[j]`` holds the escape times of the runs at ``dims[j]`` (``inf`` allowed: the
    median stays finite while fewer than half the runs are censored). Each bootstrap replicate
    resamples the runs at every d with replacement. Returns ``(slope, boot_slopes)``.
    """
    n_boot = V.positive_int("n_boot", n_boot)
    rng = _rng(seed, rng)
    dims = V.array("dims", dims, ndim=1)
    if len(times) != len(dims):
        raise ValueError(f"times must hold one array per dimension ({len(dims)}), got {len(times)}")
    med = [np.median(t) for t in times]
    slope = loglog_slope(dims, med)
    boot_med = np.stack([np.median(rng.choice(t, size=(n_boot, len(t)), replace=True), axis=1)
                         for t in times], axis=1)  # (n_boot, n_dims)
    x = np.log(dims)
    xc = x - x.mean()
    ly = np.log(boot_med)
    boot = (ly - ly.mean(1, keepdims=True)) @ xc / (xc @ xc)
    return slope, boot
