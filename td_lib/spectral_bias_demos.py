"""The §7.3 notebook's demo computations (spectral bias on the circle; not library API).

Defined for §7.3 of the course: the notebook explains each demo, calls the function here that
computes it and prints the numbers it quotes; the figures are drawn by
:mod:`td_lib.spectral_bias_figures`. The kernel flow is :mod:`td_lib.kernel_flow`'s, the
finite-width kernels :mod:`td_lib.kernels`'. :func:`finite_width_demo` is an engine that takes
the student's ``finite_width_ntk`` and ``basri`` (Exercise 7.3.C) as arguments: the notebook
passes them in (through :func:`td_lib.own_work.demo_result`, which shows the course's reference
results until they run). Nothing here computes an exercise's answer.

Examples
--------
>>> bool(chebyshev_error(11) < 1e-12), frequencies_present(3)
(True, [1, 3])
>>> amps, F = flow_amplitudes(np.linspace(0, 2 * np.pi, 16, endpoint=False), [0.0], kappa=4.0, freqs=[1, 2],
...                           grid=np.linspace(0, 2 * np.pi, 64, endpoint=False))
>>> amps.shape, F.shape
((2, 1), (64, 1))
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from td_lib.core import validate as V

__all__ = ["chebyshev_error", "frequencies_present", "odd_part_error", "sine_target", "flow_amplitudes",
           "finite_width_demo"]

_THETA = np.linspace(0, 2 * np.pi, 257)  # the angles the checks of "Mode by mode" use


def chebyshev_error(l_max: int = 11) -> float:
    """``max |cos(ℓθ) − T_ℓ(cos θ)|`` over ``ℓ ≤ l_max`` and 257 angles, defined for §7.3 of the
    course (a dot-product kernel on the circle is a function of ``cos θ``, and ``cos ℓθ`` is the
    Chebyshev polynomial ``T_ℓ`` of it)."""
    from numpy.polynomial import chebyshev as C

    l_max = V.positive_int("l_max", l_max, minimum=0)
    return max(np.abs(np.cos(l * _THETA) - C.chebval(np.cos(_THETA), [0] * l + [1])).max()
               for l in range(l_max + 1))


def frequencies_present(k: int) -> list[int]:
    """The frequencies ``ℓ ≤ 8`` present in ``(cos φ)^k`` (its FFT on 64 angles), defined for §7.3
    of the course: only ``ℓ ≤ k`` of the parity of ``k``."""
    k = V.positive_int("k", k, minimum=0)
    phi_grid = 2 * np.pi * np.arange(64) / 64
    amp = np.abs(np.fft.rfft(np.cos(phi_grid) ** k))[:9] / 64
    return np.nonzero(amp > 1e-12)[0].tolist()


def odd_part_error(rng: np.random.Generator, units: int = 50) -> float:
    """``max |(f(x) − f(−x))/2 − x·Σ_r a_r w_r / 2|`` on the circle for a bias-free ReLU network
    ``f(x) = Σ_r a_r ReLU(w_r·x)`` with ``units`` units drawn from ``rng`` (``W`` then ``a``,
    standard normal), defined for §7.3 of the course: its odd part is linear in ``x``
    (``ReLU(z) − ReLU(−z) = z``), so no odd frequency ``ℓ ≥ 3`` can be fitted without biases."""
    units = V.positive_int("units", units)
    W = rng.standard_normal((units, 2))
    a = rng.standard_normal(units)
    f = lambda th: np.maximum(np.c_[np.cos(th), np.sin(th)] @ W.T, 0) @ a
    odd = (f(_THETA) - f(_THETA + np.pi)) / 2
    lin = np.c_[np.cos(_THETA), np.sin(_THETA)] @ (W.T @ a) / 2
    return np.abs(odd - lin).max()


def sine_target(theta, freqs) -> np.ndarray:
    """The target ``Σ_ℓ sin(ℓθ)`` over the frequencies ``freqs`` at the angles ``theta``, defined
    for §7.3 of the course (Demo 7.3.B)."""
    return np.sin(np.outer(theta, freqs)).sum(axis=1)


def flow_amplitudes(theta_train, times, *, kappa: float, freqs, grid) -> tuple[np.ndarray, np.ndarray]:
    """Kernel gradient flow with the von Mises kernel of concentration ``kappa`` on the training
    angles ``theta_train`` toward :func:`sine_target` (Demo 7.3.B), defined for §7.3 of the
    course: the fitted function ``f_t`` on ``grid`` at ``times``
    (:func:`td_lib.kernel_flow.kernel_flow_predict`) and the residual amplitude of each frequency
    of ``f_t − target`` (:func:`td_lib.kernel_flow.residual_per_frequency`). Returns
    ``(amplitudes (F, T), f_t on the grid (G, T))``."""
    from td_lib import kernel_flow as kf
    from td_lib import kernels

    kappa = V.finite("kappa", kappa, positive=True)
    vm = lambda a, b: kernels.von_mises(a[:, None] - b[None, :], kappa)
    F = kf.kernel_flow_predict(vm(theta_train, theta_train), vm(grid, theta_train),
                               sine_target(theta_train, freqs), times)
    return kf.residual_per_frequency(F - sine_target(grid, freqs)[:, None], freqs), F


def finite_width_demo(finite_width_ntk: Callable, basri: Callable, W, phi, widths, *, repeats: int) -> dict:
    """The finite-width demo of Exercise 7.3.C, defined for §7.3 of the course, run on the
    student's ``finite_width_ntk(phi, phi2, W)`` and ``basri(l)``: the Monte Carlo cosine
    coefficients ``a_ℓ``, ``ℓ ≤ 6``, of the kernel with the units ``W`` (N, 2) and their standard
    errors (:func:`td_lib.kernels.finite_width_coefficients`, 100 batches), the rows
    ``K_N(φ, 0)`` on ``phi`` for N = 20, 200, 20000, the mean squared gaps to the infinite width
    over ``widths`` without and with bias (:func:`td_lib.kernels.finite_width_gap`, ``repeats``
    draws, seed 7325), and Basri's closed form for ``ℓ ≤ 6``."""
    from td_lib import kernels

    repeats = V.positive_int("repeats", repeats)
    a_mc, se_mc = kernels.finite_width_coefficients(W, np.arange(7), kernel=finite_width_ntk, n_grid=256,
                                                    batches=100)
    rows = np.stack([np.asarray(finite_width_ntk(phi, np.zeros(1), W[:N]), dtype=float)[:, 0]
                     for N in (20, 200, 20000)])
    gaps = np.stack([kernels.finite_width_gap(finite_width_ntk, widths, bias=bias, repeats=repeats, rng=7325)
                     for bias in (False, True)])
    return dict(a_mc=a_mc, se_mc=se_mc, rows=rows, gaps=gaps, basri=np.array([float(basri(l)) for l in range(7)]))
