"""The 7.2.C setting: single-index Gaussian teacher, full d-dimensional SGD and the exact
overlap chain; see :mod:`td_lib.escape`."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from td_lib.core import validate as V
from td_lib.core.run import ticker
from td_lib.core.runtime import numpy_rng
from td_lib.escape.sgd import Sampler, _deltas, random_start, spherical_sgd

__all__ = ["LAWS", "STEPS", "single_index_teacher", "gaussian_single_index_sampler",
           "single_index_escape_times", "reduced_escape_times"]

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


def gaussian_single_index_sampler(k: int, d: int) -> Sampler:
    """:data:`Sampler` for :math:`x\\sim\\mathcal N(0,I_d)`, :math:`y=h_k(x_0)` (teacher
    :math:`v=e_0`)."""
    hk, _ = single_index_teacher(k)
    d = V.positive_int("d", d)

    def sample(rng: np.random.Generator, n: int, runs: int) -> tuple[np.ndarray, np.ndarray]:
        X = rng.standard_normal((n, runs, d))
        return X, hk(X[..., 0])

    return sample


def single_index_escape_times(k: int, d: int, *, delta: float | np.ndarray | None = None,
                              runs: int = 48, t_max: int = 10**6, threshold: float = 0.5,
                              rng=None, chunk: int = 128, signed: bool | None = None,
                              progress: bool | str = False) -> np.ndarray:
    """Escape times of online spherical SGD in the 7.2.C setting (full d-dimensional simulation).

    Inputs :math:`x\\sim\\mathcal N(0,I_d)`, labels :math:`y=h_k(x_0)`, student
    :math:`h_k(w\\cdot x)`, loss :math:`1-y\\,h_k(w\\cdot x)` (population loss
    :math:`1-\\alpha^k`, information exponent k), step :math:`\\delta/d`, random start with
    :math:`\\alpha_0=w_0\\ge0`. Returns the first step with :math:`\\alpha>` ``threshold``
    (odd k) or :math:`|\\alpha|>` ``threshold`` (even k), ``np.inf`` if not reached within
    ``t_max`` steps; a float array of shape ``(runs,)``. ``delta`` defaults to the study's step
    parameter ``STEPS[k](d)``; pass it only to override (it may be one value per run: a step-size
    sweep in one vectorised call). ``rng``: an int seed or a numpy Generator. ``signed``
    overrides the parity rule (for demonstrations of the wrong convention).

    References
    ----------
    Ben Arous, Gheissari & Jagannath (2021), Section 1 (escape after :math:`d`,
    :math:`d\\log^2 d`, :math:`d^{k-1}\\log d` samples for k = 1, 2, k >= 3: :data:`LAWS`);
    original course notes §7.2, Exercise 7.2.C.

    Examples
    --------
    >>> T = single_index_escape_times(2, 16, runs=4, t_max=10**5, rng=3)
    >>> T.shape, bool(np.all(T >= 1))
    ((4,), True)
    """
    k = V.positive_int("k", k)
    d = V.positive_int("d", d, minimum=2)
    rng = numpy_rng(rng)
    _, dh = single_index_teacher(k)
    w0 = random_start(d, runs, rng)
    res = spherical_sgd(gaussian_single_index_sampler(k, d), dh, w0, _delta(delta, k, d), t_max,
                        directions=np.eye(d)[:1], threshold=threshold,
                        signed=bool(k % 2) if signed is None else bool(signed),
                        rng=rng, chunk=chunk, progress=progress)
    return res.escape_time


def _delta(delta, k: int, d: int):
    """The step parameter: ``delta`` if given, else the study's ``STEPS[k](d)``."""
    if delta is not None:
        return delta
    if k not in STEPS:
        raise ValueError(f"delta is required for k = {k} (STEPS has defaults for k in {sorted(STEPS)})")
    return STEPS[k](d)


def reduced_escape_times(k: int, d: int, *, delta: float | np.ndarray | None = None,
                         runs: int = 48, t_max: int = 10**6, threshold: float = 0.5, rng=None,
                         chunk: int = 1024, signed: bool | None = None,
                         progress: bool | str = False) -> np.ndarray:
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
    :math:`\\mathbb R^d` (uniform on the sphere, upper half). ``delta`` (default ``STEPS[k](d)``)
    may be one value per run; ``rng`` an int seed or a numpy Generator.

    References
    ----------
    Ben Arous, Gheissari & Jagannath (2021), Section 1 (the update), reduced to the overlap by
    rotation invariance (the formula above); original course notes §7.2, Exercise 7.2.C.

    Examples
    --------
    >>> T = reduced_escape_times(3, 16, runs=5, t_max=10**6, rng=0)
    >>> T.shape, bool(np.isfinite(T).all())
    ((5,), True)
    """
    k = V.positive_int("k", k)
    d = V.positive_int("d", d, minimum=3)
    runs = V.positive_int("runs", runs)
    eta_all = _deltas(_delta(delta, k, d), runs) / d
    t_max = V.positive_int("t_max", t_max)
    threshold = V.finite("threshold", threshold)
    rng = numpy_rng(rng)
    hk, dh = single_index_teacher(k)
    g0 = np.abs(rng.standard_normal(runs))
    a = g0 / np.sqrt(g0**2 + rng.chisquare(d - 1, runs))
    times = np.full(runs, np.inf)
    signed = bool(k % 2) if signed is None else bool(signed)
    active = np.arange(runs)
    t = 0
    cur = min(16, chunk)
    with ticker(t_max, progress, "overlap chain") as advance:
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
            advance(n)
    return times
