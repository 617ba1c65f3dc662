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

import traceback
from collections.abc import Callable

import numpy as np

from td_lib.core import validate as V

__all__ = ["chebyshev_error", "frequencies_present", "odd_part_error", "circle_facts", "mode_by_mode_errors",
           "mode_by_mode_report", "sine_target", "flow_amplitudes", "flow_snapshots", "flow_gap", "flow_report",
           "random_flow_amplitudes", "run_ungraded", "finite_width_demo", "monte_carlo_report", "basri_run_report"]

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


def circle_facts(rng: np.random.Generator, *, l_max: int = 11, k_max: int = 6, units: int = 50) -> None:
    """Print the three facts of "The link to §7.1–7.2", defined for §7.3 of the course:
    ``cos ℓθ = T_ℓ(cos θ)`` for ``ℓ ≤ l_max`` (:func:`chebyshev_error`), the frequencies present
    in ``(cos φ)^k`` for ``k ≤ k_max`` (:func:`frequencies_present`), and the odd part of a
    bias-free ReLU network of ``units`` units drawn from ``rng`` being linear in ``x``
    (:func:`odd_part_error`)."""
    print(f"max |cos(l theta) - T_l(cos theta)| for l <= {l_max}: {chebyshev_error(l_max):.1e}")
    for kk in range(1, k_max + 1):
        print(f"(cos phi)^{kk}: frequencies present {frequencies_present(kk)}")
    print(f"max |odd part - (x . sum_r a_r w_r)/2|: {odd_part_error(rng, units):.1e}")


def mode_by_mode_errors(f_flow, r_flow, f_gd, Phi, Phi_q, y, *, steps: int, eta: float) -> tuple[float, float]:
    """Two consistency gaps of the kernel-flow formulas with random features, defined for §7.3 of
    the course ("Mode by mode").

    ``Phi`` (n, p) are the training features, ``Phi_q`` the query points' features, ``y`` (n) the
    targets. ``f_flow`` are the training-set predictions at a time ``t`` from one route (e.g.
    :func:`td_lib.kernel_flow.kernel_flow_predict`) and ``r_flow`` the training-set residual at that
    time from another; ``f_gd`` are predictions at the query points after ``steps`` gradient-descent
    steps of size ``eta`` (e.g. :func:`td_lib.kernel_flow.kernel_gd_predict`). Returns
    ``(max |f_flow − (y + r_flow)|, max |f_gd − Φ_q θ_s|)`` (a residual is prediction minus target),
    the second against ``steps`` explicit steps ``θ ← θ − η Φᵀ(Φθ − y)/n`` in parameter space from
    ``θ = 0``."""
    Phi, Phi_q, y = (np.asarray(a, dtype=float) for a in (Phi, Phi_q, y))
    theta = np.zeros(Phi.shape[1])
    for _ in range(V.positive_int("steps", steps, minimum=0)):
        theta -= eta * Phi.T @ (Phi @ theta - y) / len(y)  # one GD step on L = |Φθ − y|² / 2n
    flow_err = np.abs(np.asarray(f_flow) - (y + np.asarray(r_flow))).max()
    return float(flow_err), float(np.abs(np.asarray(f_gd) - Phi_q @ theta).max())


def mode_by_mode_report(f_flow, r_flow, f_gd, Phi, Phi_q, y, *, steps: int, eta: float) -> None:
    """Print :func:`mode_by_mode_errors` and the number ``n − rank K`` of training-set directions
    in the null space of ``K = Φ Φᵀ``, which are never fitted; defined for §7.3 of the course
    ("Mode by mode")."""
    flow_err, gd_err = mode_by_mode_errors(f_flow, r_flow, f_gd, Phi, Phi_q, y, steps=steps, eta=eta)
    n = len(y)
    print(f"flow formula vs exp(-K t/n) on the training set: {flow_err:.1e}")
    print(f"GD filter vs explicit GD at {len(Phi_q)} new points: {gd_err:.1e}")
    print(f"{n - np.linalg.matrix_rank(Phi)} of the {n} training-set directions are in the null space and are "
          "never fitted.")


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


def flow_snapshots(theta_train, times, snap_times, *, kappa: float, freqs, grid) -> tuple[np.ndarray, dict]:
    """:func:`flow_amplitudes` at ``times`` and the fitted function on ``grid`` at
    ``snap_times``, defined for §7.3 of the course (Demo 7.3.B). Returns ``(amplitudes (F, T),
    {t: f_t on the grid})``."""
    amps, _ = flow_amplitudes(theta_train, times, kappa=kappa, freqs=freqs, grid=grid)
    _, F_snap = flow_amplitudes(theta_train, snap_times, kappa=kappa, freqs=freqs, grid=grid)
    return amps, dict(zip(snap_times, F_snap.T))


def flow_gap(rates, ts, amps) -> float:
    """The largest gap ``max |A_ℓ(t) − e^{−k̂_ℓ t}|`` between the measured residual amplitudes
    ``amps`` (F, T) at the times ``ts`` and their population prediction, ``rates`` the eigenvalues
    ``k̂_ℓ`` (one per frequency), defined for §7.3 of the course (Demo 7.3.B: under kernel gradient
    flow the residual along the eigenfunction ``sin ℓθ`` decays like
    ``e^{−k̂_ℓ t} = 1 − k̂_ℓ F(k̂_ℓ, t)``, ``F`` the flow filter :func:`td_lib.kernel_flow.flow_filter`)."""
    from td_lib import kernel_flow as kf

    rates = np.asarray(rates, dtype=float)
    return float(np.abs(np.asarray(amps) - (1 - rates * kf.flow_filter(rates, ts)).T).max())


def flow_report(rates, freqs, ts, amps) -> None:
    """Print the population eigenvalues ``k̂_ℓ`` (``rates``, one per frequency of ``freqs``, to 6
    decimals) and :func:`flow_gap`, defined for §7.3 of the course (Demo 7.3.B)."""
    print("population eigenvalues k_l:", dict(zip(np.asarray(freqs).tolist(), np.round(rates, 6).tolist())))
    print("max |measured amplitude - exp(-k_l t)|:", f"{flow_gap(rates, ts, amps):.1e}")


def random_flow_amplitudes(thetas: dict, ts, t_print: float, *, kappa: float, freqs, grid) -> dict:
    """Demo 7.3.B with random training inputs, defined for §7.3 of the course: for each
    training-set size ``n`` of ``thetas`` (``{n: angles}``) the residual amplitude of each
    frequency under the kernel flow (:func:`flow_amplitudes`) at the times ``ts``, printing the
    amplitudes at ``t_print``. Returns ``{n: (freqs, times) amplitudes}``."""
    amps = {}
    for n, theta in thetas.items():
        A_r, _ = flow_amplitudes(theta, np.r_[ts, t_print], kappa=kappa, freqs=freqs, grid=grid)  # last: t_print
        print(f"random inputs, n = {n}: residual amplitudes at t = {t_print:g} for l = {np.asarray(freqs).tolist()}:",
              np.round(A_r[:, -1], 4).tolist())
        amps[n] = A_r[:, :-1]
    return amps


def run_ungraded(fn: Callable[[], None], what: str, note: str) -> None:
    """Run the student's free-form (ungraded) code ``fn()`` so that Run All goes on, defined for
    §7.3 of the course (the comparison of Exercise 7.3.C): while it is the stub, say so; if it
    raises, print the traceback and say so; ``what`` names it, ``note`` ends both messages."""
    try:
        fn()
    except NotImplementedError as exc:
        print(f"{what} skipped, not written yet ({str(exc) or f'{fn.__name__} is still the stub'}); {note}.")
    except Exception:  # noqa: BLE001 - a bug in the free-form cell must not stop Run All
        traceback.print_exc()
        print(f"{what}: your code above raised (traceback printed); {note}.")


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


def monte_carlo_report(fw: dict) -> None:
    """Print the Monte Carlo cosine coefficients ``a_ℓ``, ``ℓ ≤ 6``, of :func:`finite_width_demo`
    (``fw``) beside Basri's closed form, the deviation in standard errors at ``ℓ = 0, 1, 2, 4, 6``
    and the largest ``|a_ℓ|`` at the odd ``ℓ = 3, 5``, which vanish (Exercise 7.3.C.3, defined
    for §7.3 of the course)."""
    a_mc, se_mc, basri = fw["a_mc"], fw["se_mc"], fw["basri"]
    print("Monte Carlo a_l, l <= 6:", np.round(a_mc, 4))
    print("closed form   l <= 6:   ", np.round(basri, 4))
    even = np.array([0, 1, 2, 4, 6])
    print("deviation / standard error for l = 0, 1, 2, 4, 6:",
          np.round((a_mc[even] - basri[even]) / se_mc[even], 2))
    print(f"odd l = 3, 5: |a_l| <= {np.abs(a_mc[[3, 5]]).max():.1e} (zero up to rounding)")


def basri_run_report(run, freqs, a_bias: dict, t_pred, steps: int) -> None:
    """Print Demo 7.3.D, defined for §7.3 of the course: for each output scale of ``run`` (a
    :class:`td_lib.circle_net.CircleNetRun`) the relative change of its eNTK, the steps to bring
    the residual of each frequency of ``freqs`` below ``1/e`` (None if never within ``steps``)
    and the Rayleigh quotient ``η vᵀ(K/n)v / vᵀv`` on ``sin(8θ)`` at initialisation and at the
    end; the frozen-kernel prediction ``t_pred`` (:func:`td_lib.circle_net.predicted_steps`); the
    final residual amplitudes at scale 1; and the inverse eigenvalues ``a_1/a_ℓ`` (``a_bias``:
    ``{ℓ: a_ℓ}``, the cosine coefficients of ``K_bias``)."""
    freqs = np.asarray(freqs).tolist()
    for i, scale in enumerate(run.scales):
        print(f"scale {scale:>4}: eNTK change {run.ntk_change[i]:.4f}; steps to residual 1/e at "
              f"l = {freqs}: {[None if np.isnan(t) else int(t) for t in run.t_fit[i]]}; "
              f"eta*K on sin(8 theta): {run.rayleigh[i, 0]:.5f} at init, {run.rayleigh[i, 1]:.5f} at the end")
    print("prediction from the infinite-width kernel:", t_pred.astype(int).tolist())
    print(f"scale 1, residual amplitudes after {steps} steps:", np.round(run.final("amps")[0], 3).tolist())
    print("inverse eigenvalues a_1/a_l for l = 1, 4, 8:", np.round([a_bias[1] / a_bias[l] for l in freqs], 1).tolist())
