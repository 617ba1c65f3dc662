"""Tests of td_lib.kernel_flow: the mode-by-mode solution of Exercise 7.3.A."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm

from td_lib import kernel_flow as kf
from td_lib import kernels as k


def _features(n: int, p: int, m: int, seed: int):
    rng = np.random.default_rng(seed)
    Phi, Phi_q = rng.standard_normal((n, p)), rng.standard_normal((m, p))
    return Phi, Phi_q, rng.standard_normal(n)


@pytest.mark.parametrize("p", [12, 3])  # full-rank and rank-deficient Gram matrices
def test_gd_formula_equals_explicit_gd_iteration(p):
    n, m, eta = 7, 5, 0.3
    Phi, Phi_q, y = _features(n, p, m, seed=p)
    K = Phi @ Phi.T
    eta = eta / np.linalg.eigvalsh(K / n)[-1]
    theta, out = np.zeros(p), []
    for _ in range(40):
        out.append(Phi_q @ theta)
        theta -= eta * Phi.T @ (Phi @ theta - y) / n  # gradient of (1/2n)|Phi theta - y|^2
    out.append(Phi_q @ theta)
    pred = kf.kernel_gd_predict(K, Phi_q @ Phi.T, y, np.arange(41), eta=eta)
    assert np.abs(pred - np.array(out).T).max() < 1e-12


@pytest.mark.parametrize("p", [12, 3])
def test_flow_formula_on_training_set_is_matrix_exponential(p):
    # 7.3.A.1-2: f_t(X) = y + r(t) with r(t) = exp(-K t/n) r(0), r(0) = -y; null-space parts
    # of y are never fitted (rank-deficient case).
    n = 7
    Phi, _, y = _features(n, p, 1, seed=10 + p)
    K = Phi @ Phi.T
    ts = np.array([0.0, 0.1, 1.0, 7.0, 50.0])
    F = kf.kernel_flow_predict(K, K, y, ts)
    R = kf.training_residual(K, -y, ts)
    for j, t in enumerate(ts):
        r = expm(-K * t / n) @ (-y)
        assert np.abs(R[:, j] - r).max() < 1e-12
        assert np.abs(F[:, j] - (y + r)).max() < 1e-11


def test_gd_converges_to_flow_at_rate_eta():
    # GD with s = t/eta steps approaches the flow with an O(eta) error.
    n, p, m, t = 6, 9, 4, 3.0
    Phi, Phi_q, y = _features(n, p, m, seed=5)
    K, KxX = Phi @ Phi.T, Phi_q @ Phi.T
    flow = kf.kernel_flow_predict(K, KxX, y, t)[:, 0]
    errs = [np.abs(kf.kernel_gd_predict(K, KxX, y, round(t / eta), eta=eta)[:, 0] - flow).max()
            for eta in (0.02, 0.01, 0.005)]
    assert errs[0] > errs[1] > errs[2] and 1.8 < errs[0] / errs[1] < 2.2


def test_long_time_limit_is_min_norm_least_squares():
    n, p, m = 8, 3, 5
    Phi, Phi_q, y = _features(n, p, m, seed=2)
    K = Phi @ Phi.T
    f_inf = kf.kernel_flow_predict(K, Phi_q @ Phi.T, y, 1e9)[:, 0]
    assert np.abs(f_inf - Phi_q @ np.linalg.pinv(Phi) @ y).max() < 1e-9


def test_filters():
    lam = np.array([1e-9, 0.5, 3.0])
    F = kf.flow_filter(lam, [0.0, 2.0])
    assert np.all(F[0] == 0)
    assert abs(F[1, 0] - 2.0) < 1e-8  # ~t when lam t << 1
    assert abs(F[1, 2] - (1 - np.exp(-6.0)) / 3.0) < 1e-15
    G = kf.gd_filter(lam, [3], eta=0.1)
    assert abs(G[0, 1] - (1 - 0.95**3) / 0.5) < 1e-14


def test_gd_filter_flat_oscillating_and_divergent_modes():
    # a flat mode (lam = 0) moves by eta s; 1 <= eta lam < 2 oscillates but stays bounded;
    # eta lam >= 2 diverges and is refused
    s = np.arange(6)
    G = kf.gd_filter([0.0, 0.75], s, eta=2.0)
    assert np.array_equal(G[:, 0], 2.0 * s)
    assert np.allclose(G[:, 1], (1 - (1 - 1.5) ** s) / 0.75, rtol=1e-15, atol=0)
    # small eta lam: expm1/log1p keeps the relative accuracy of s eta (1 - (s - 1) eta lam / 2)
    g = kf.gd_filter([1e-9], [10], eta=1e-3)[0, 0]
    # numpy's SIMD expm1/log1p and libm's differ by an ulp or two: 1e-14 (the naive 1 - (1 - a)^s is off by 2e-5)
    assert abs(g / (10e-3 * (1 - 9 * 1e-12 / 2)) - 1) < 1e-14
    with pytest.raises(ValueError, match="is too large for curvatures"):
        kf.gd_filter([1.0, 4.0], [1], eta=0.5)
    with pytest.raises(ValueError, match="lam must be >= 0"):
        kf.gd_filter([-1.0], [1], eta=0.1)


def test_circle_residual_per_frequency_follows_circulant_eigenvalues():
    # Equispaced inputs: the Gram matrix is circulant, its eigenvectors are Fourier modes, and
    # the residual of frequency l decays exactly as exp(-lam_l t), lam_l the FFT eigenvalue.
    n, kappa, freqs = 64, 4.0, np.array([1, 4, 8])
    th = 2 * np.pi * np.arange(n) / n
    K = k.von_mises(th[:, None] - th[None, :], kappa)
    y = np.sin(np.outer(th, freqs)).sum(axis=1)
    ts = np.array([0.0, 1.0, 10.0, 100.0])
    A = kf.residual_per_frequency(kf.kernel_flow_predict(K, K, y, ts) - y[:, None], freqs)
    lam = k.circulant_eigenvalues(lambda p: k.von_mises(p, kappa), n)[freqs]
    assert np.abs(A - np.exp(-np.outer(lam, ts))).max() < 1e-10
    # and those equal the population eigenvalues up to aliases (~1e-40 here)
    assert np.abs(lam - k.von_mises_eigenvalues(freqs, kappa)).max() < 1e-15


def test_residual_per_frequency_amplitude():
    n = 128
    th = 2 * np.pi * np.arange(n) / n
    vals = 0.3 * np.sin(3 * th) - 0.4 * np.cos(3 * th) + 2.0 * np.cos(7 * th) + 1.0
    assert np.allclose(kf.residual_per_frequency(vals, [3, 7, 5]), [0.5, 2.0, 0.0], atol=1e-13)


def test_bad_input_is_rejected_by_name():
    K = np.eye(3)
    with pytest.raises(ValueError, match="K must be symmetric"):
        kf.gram_spectrum(np.array([[1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="positive semi-definite"):
        kf.gram_spectrum(-np.eye(2))
    with pytest.raises(ValueError, match="lam"):
        kf.flow_filter([-1.0], 1.0)
    with pytest.raises(ValueError, match="eta"):
        kf.gd_filter([1.0], [1], eta=0.0)
    with pytest.raises(ValueError, match="t must be >= 0"):
        kf.kernel_flow_predict(K, K, np.ones(3), -1.0)
    with pytest.raises(ValueError, match="y must have shape"):
        kf.kernel_flow_predict(K, K, np.ones(4), 1.0)
    with pytest.raises(ValueError, match="freqs"):
        kf.residual_per_frequency(np.ones(16), [8])
