"""The general online spherical SGD simulator (any sampler, any activation derivative) and
the mixed-cumulant-model sampler; see :mod:`td_lib.escape`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from td_lib.core import validate as V
from td_lib.core.run import Run, static, ticker
from td_lib.core.runtime import numpy_rng

__all__ = ["Sampler", "SphericalSGDRun", "random_start", "spherical_sgd", "mcm_sampler"]

#: A sampler is called ``sampler(rng, n, runs)`` (a numpy Generator, the number of steps, the
#: number of runs) and returns ``(X, y)`` with ``X`` of shape ``(n, runs, d)`` and ``y`` of
#: shape ``(n, runs)``: one fresh sample per run and step.
Sampler = Callable[[np.random.Generator, int, int], tuple[np.ndarray, np.ndarray]]


@dataclass
class SphericalSGDRun(Run):
    """Output of :func:`spherical_sgd` (one batch of runs of online spherical SGD), a
    :class:`td_lib.core.run.Run` whose time axis ``t`` holds the recording steps.

    Attributes
    ----------
    t : (n_rec,) int array
        Steps at which the overlaps were recorded: 0 and every ``record_every``-th step (only 0
        when ``record_every == 0``).
    overlap : (n_rec, runs, p) array
        The overlaps :math:`w\\cdot v_i` with the tracked directions at the steps ``t``.
    escape_time : (runs,) float array, static
        First step at which the target overlap crossed the threshold, ``np.inf`` if never
        (within ``t_max`` steps).
    end_overlap : (runs, p) array, static
        The overlaps where each run's simulation ended: at step ``n_steps``, or (without
        traces) at the end of the chunk of steps in which the run escaped.
    n_steps : int, static
        Number of steps simulated.
    """

    overlap: np.ndarray
    escape_time: np.ndarray = static()
    end_overlap: np.ndarray = static()
    n_steps: int = static()


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


def random_start(d: int, runs: int, rng=None, *,
                 direction: np.ndarray | None = None) -> np.ndarray:
    """Uniform random unit vectors ``(runs, d)`` conditioned on a non-negative overlap with
    ``direction`` (default :math:`e_0`): the start "with :math:`\\alpha_0>0`" of 7.2.C.
    ``rng``: an int seed or a numpy Generator (drawn from in place)."""
    d = V.positive_int("d", d, minimum=2)
    runs = V.positive_int("runs", runs)
    rng = numpy_rng(rng)
    w = rng.standard_normal((runs, d))
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    v = np.eye(d)[0] if direction is None else V.array("direction", direction, shape=(d,))
    a = w @ v
    w -= 2 * np.minimum(a, 0.0)[:, None] * v[None, :] / (v @ v)  # reflect to a >= 0
    return w


def spherical_sgd(sampler: Sampler, dsigma: Callable[[np.ndarray], np.ndarray],
                  w0: np.ndarray, delta: float, t_max: int, *, directions: np.ndarray,
                  target: int = 0, threshold: float = 0.5, signed: bool = True,
                  rng=None, chunk: int = 128, record_every: int = 0,
                  progress: bool | str = False) -> SphericalSGDRun:
    """Online spherical SGD on the correlation loss :math:`1-y\\sigma(w\\cdot x)`, vectorised
    over runs (original course notes §7.2, Ben Arous et al.'s update with step :math:`\\delta/d`):
    the gradient projected on the tangent space, the step, then renormalisation.

    Parameters
    ----------
    sampler : Sampler
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
    rng
        Random source: an int seed or a numpy Generator (passed to ``sampler``).
    chunk
        Largest number of steps of samples drawn at once (memory ``chunk * runs * d``
        floats; chunks start at 16 steps and double). Without traces, runs that have
        escaped are dropped between chunks (no samples are drawn for them), and the simulation
        stops when every run has escaped.
    record_every
        Record all overlaps every this many steps (0: only the start). With traces, every run
        is simulated for all ``t_max`` steps.
    progress
        ``True`` or a label: show a progress bar over the steps.

    Returns
    -------
    SphericalSGDRun

    References
    ----------
    Ben Arous, Gheissari & Jagannath (2021), Section 1 (spherical online SGD); original course notes §7.2, the
    update in the module docstring.

    Examples
    --------
    >>> from td_lib.core import activations
    >>> from td_lib.escape import gaussian_single_index_sampler
    >>> run = spherical_sgd(gaussian_single_index_sampler(1, 8), activations.get("linear").df,
    ...                     random_start(8, 4, 0), 1.0, 200, directions=np.eye(8)[:1], rng=0)
    >>> run.escape_time.shape, run.end_overlap.shape, run.overlap.shape
    ((4,), (4, 1), (1, 4, 1))
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
    rng = numpy_rng(rng)
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    escaped_at = np.full(runs, np.inf)
    end = np.zeros((runs, D.shape[0]))
    rec_t, rec = [0], [w @ D.T]
    active = np.arange(runs)  # indices of the runs still simulated (compacted as they escape)
    v_t = D[target]
    t = 0
    cur = min(16, chunk)
    with ticker(t_max, progress, "spherical SGD") as advance:
        while t < t_max and active.size:
            n = min(cur, t_max - t)
            cur = min(2 * cur, chunk)  # chunks grow geometrically: short runs draw few samples
            X, Y = sampler(rng, n, active.size)
            A = np.empty((n, active.size))
            for i in range(n):
                x = X[i]
                z = np.einsum("rd,rd->r", w, x)
                ec = eta * Y[i] * dsigma(z)  # step times (-grad of the loss) = ec * x
                w += ec[:, None] * (x - z[:, None] * w)  # the step along the tangent part
                w /= np.sqrt(np.einsum("rd,rd->r", w, w))[:, None]  # back to the sphere
                A[i] = w @ v_t
                if record_every and (t + i + 1) % record_every == 0:
                    rec_t.append(t + i + 1)
                    rec.append(w @ D.T)
            hit = (A if signed else np.abs(A)) > threshold
            first = np.argmax(hit, axis=0)
            done = np.where(hit[first, np.arange(active.size)], t + first + 1.0, np.inf)
            t += n
            advance(n)
            escaped_at[active] = np.where(np.isinf(escaped_at[active]), done, escaped_at[active])
            if not record_every:  # drop the escaped runs
                keep = np.isinf(done)
                end[active[~keep]] = w[~keep] @ D.T
                active, w, eta = active[keep], w[keep], eta[keep]
    end[active] = w @ D.T
    return SphericalSGDRun(t=np.array(rec_t, dtype=int), overlap=np.array(rec), escape_time=escaped_at,
                           end_overlap=end, n_steps=t)


def mcm_sampler(spikes, *, beta_m: float = 0.0, beta_u: float = 5.0, beta_v: float = 10.0,
                correlated: bool = False, rng=0) -> Sampler:
    """:data:`Sampler` of the mixed cumulant model (``td_lib.mixed_cumulant.sample``) for :func:`spherical_sgd`.

    Draws ``n * runs`` samples per call from :func:`td_lib.mixed_cumulant.sample` with its own torch
    generator (``rng``: an int seed or a torch Generator,
    :func:`td_lib.core.runtime.torch_generator`; the numpy ``rng`` the simulator passes to the
    sampler is ignored) and reshapes them to ``(n, runs, d)``. Default strengths are Bardone and
    Goldt's single-neuron setting of §7.2 (no mean signal).

    References
    ----------
    Bardone & Goldt (2024), eq. (1) (the mixed cumulant model).
    """
    import torch

    from td_lib import mixed_cumulant
    from td_lib.core.runtime import torch_generator

    gen = torch_generator(rng)
    S = torch.as_tensor(np.asarray(spikes), dtype=torch.float64)

    def sample(rng: np.random.Generator, n: int, runs: int) -> tuple[np.ndarray, np.ndarray]:
        X, y = mixed_cumulant.sample(n * runs, spikes=S, beta_m=beta_m, beta_u=beta_u, beta_v=beta_v,
                          correlated=correlated, rng=gen)
        return X.numpy().reshape(n, runs, -1), y.numpy().reshape(n, runs)

    return sample
