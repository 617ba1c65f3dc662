"""Tests of td_lib.kernels: spectra of rotation-invariant kernels on the circle (§7.3)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import factorial

from td_lib import kernels as k

ELLS = np.arange(21)


def test_basri_closed_form_matches_quadrature():
    # Basri et al.'s closed form vs adaptive quadrature: an identity, quadrature precision.
    ells = np.arange(31)
    err = np.abs(k.cosine_coefficients_quad(k.relu_ntk_nobias, ells) - k.basri_coefficients(ells))
    assert err.max() < 1e-14


def test_circulant_fft_eigenvalues_equal_quadrature_coefficients():
    # FFT of the circulant Gram row = trapezoid rule + aliases a_{mn +- l}. Both kernels have
    # a kink, so a_j <= C / j^2 with C = 2/pi^2 (no bias, see the next tests) and the alias
    # error on a_l is <= 2 C zeta(2) / (n - l)^2, i.e. 1.0e-8 at n = 2^13 (0.35e-8 with bias).
    n = 1 << 13
    for kern, C in ((k.relu_ntk_nobias, 2 / np.pi**2), (k.relu_ntk_bias, 0.0717)):
        a_fft = k.cosine_coefficients_fft(kern, ELLS, n=n)
        a_quad = k.cosine_coefficients_quad(kern, ELLS)
        bound = 2 * C * np.pi**2 / 6 / (n - ELLS.max()) ** 2
        assert np.abs(a_fft - a_quad).max() < bound
        # and the alias error really is O(n^-2): a 4x larger n gives a ~16x smaller error
        err4 = np.abs(k.cosine_coefficients_fft(kern, ELLS, n=4 * n) - a_quad).max()
        assert err4 < bound / 12


def test_circulant_eigenvalues_are_the_gram_spectrum():
    # The circulant Gram matrix K/n has exactly the FFT values as eigenvalues (identity).
    n = 64
    for kern in (k.relu_ntk_bias, lambda p: k.von_mises(p, 3.0)):
        ev = np.sort(np.linalg.eigvalsh(k.circulant_gram(kern, n) / n))
        assert np.abs(ev - np.sort(k.circulant_eigenvalues(kern, n))).max() < 1e-13


def test_von_mises_eigenvalues_three_ways():
    ells = np.arange(13)
    exact = k.von_mises_eigenvalues(ells, 4.0)
    # Jacobi-Anger series for I_l, truncated far beyond its peak.
    j = np.arange(60)[:, None]
    series = np.exp(-4.0) * np.sum(2.0 ** (2 * j + ells) / (factorial(j) * factorial(j + ells)),
                                   axis=0)
    assert np.allclose(exact, series, rtol=1e-13, atol=0)
    quad = k.eigenvalues_from_coefficients(
        ells, k.cosine_coefficients_quad(lambda p: k.von_mises(p, 4.0), ells))
    assert np.abs(quad - exact).max() < 1e-15
    # Aliases k_hat_{l + 256} are ~1e-300: the FFT is exact to rounding.
    assert np.abs(k.circulant_eigenvalues(lambda p: k.von_mises(p, 4.0), 256)[ells]
                  - exact).max() < 1e-15
    assert abs(exact[1] - 0.178751) < 5e-7 and abs(exact[8] - 1.797e-4) < 1e-7


def test_von_mises_large_l_asymptotics():
    # I_l(kappa) / first series term = sum_j (kappa^2/4)^j l!/(j!(j+l)!) lies in
    # [1, exp(kappa^2 / (4 (l + 1)))]: the asymptotic form of 7.3.B.2 with its error bound.
    kappa, ells = 4.0, np.array([10, 20, 40, 80])
    ratio = k.von_mises_eigenvalues(ells, kappa) / k.von_mises_eigenvalues_asymptotic(ells, kappa)
    assert np.all(ratio >= 1 + kappa**2 / (4 * (ells + 1)))  # first two series terms
    assert np.all(ratio <= np.exp(kappa**2 / (4 * (ells + 1))))


def test_bias_coefficients_asymptotic_l_minus_two():
    # The bias kernel has a kink at phi = 0 with slope -1/(2 pi sqrt 2), so
    # l^2 a_l -> 1/(sqrt(2) pi^2) = 0.0716 (corrections O(l^-2)).
    a = k.cosine_coefficients_fft(k.relu_ntk_bias, [100, 200], n=1 << 16)
    lim = 1 / (np.sqrt(2) * np.pi**2)
    assert np.allclose(a * np.array([100, 200]) ** 2, lim, rtol=2e-3)
    # no bias: kinks at 0 and pi, so l^2 a_l -> 2/pi^2 for even l (Basri's closed form)
    a = k.cosine_coefficients_fft(k.relu_ntk_nobias, [100, 200], n=1 << 16)
    assert np.allclose(a * np.array([100, 200]) ** 2, 2 / np.pi**2, rtol=2e-3)
    ab = k.cosine_coefficients_quad(k.relu_ntk_bias, ELLS)
    assert np.all(ab > 0)
    assert -2.1 < k.fit_power_law(ELLS[4:], ab[4:]) < -2.0


def test_odd_coefficients_vanish_without_bias_even_at_finite_width():
    # Parity: ReLU(z) = z/2 + |z|/2 makes every unit's kernel row even-frequency plus l = 1.
    rng = np.random.default_rng(0)
    a, se = k.finite_width_coefficients(rng.standard_normal((500, 2)), [3, 5, 7, 9])
    assert np.abs(a).max() < 1e-14


@pytest.mark.parametrize("bias", [False, True])
def test_monte_carlo_coefficients_within_standard_errors(bias):
    rng = np.random.default_rng(1 + bias)
    ells = np.array([0, 1, 2, 4, 6]) if not bias else np.arange(7)
    W = rng.standard_normal((20000, 3 if bias else 2))
    a, se = k.finite_width_coefficients(W, ells, bias=bias)
    exact = (k.cosine_coefficients_quad(k.relu_ntk_bias, ells) if bias
             else k.basri_coefficients(ells))
    assert np.all(se > 0)
    assert np.all(np.abs(a - exact) < 4.5 * se), (a - exact) / se  # 4.5 SE: p ~ 1e-5 per entry


def test_finite_width_kernel_mean():
    rng = np.random.default_rng(3)
    ang = np.linspace(-np.pi, np.pi, 9)
    K = k.finite_width_kernel(ang, rng.standard_normal((40000, 2)), angles2=np.array([0.0]))[:, 0]
    # each entry is a mean of N terms bounded by |cos phi| <= 1: SE <= 0.5/sqrt(N) = 0.0025
    assert np.abs(K - k.relu_ntk_nobias(ang)).max() < 5 * 0.0025
    Kb = k.finite_width_kernel(ang, rng.standard_normal((40000, 3)), bias=True)
    assert np.allclose(Kb, Kb.T) and np.abs(np.diag(Kb) - 0.5).max() < 5 * 0.0025


def test_bad_input_is_rejected_by_name():
    with pytest.raises(ValueError, match="kappa"):
        k.von_mises_eigenvalues(1, -1.0)
    with pytest.raises(ValueError, match="ells"):
        k.basri_coefficients([-1, 2])
    with pytest.raises(TypeError, match="ells"):
        k.basri_coefficients([1.5])
    with pytest.raises(TypeError, match="kernel"):
        k.cosine_coefficients_quad(3.0, [1])
    with pytest.raises(ValueError, match="n must exceed"):
        k.cosine_coefficients_fft(k.relu_ntk_bias, [40], n=64)
    with pytest.raises(ValueError, match="weights"):
        k.finite_width_kernel([0.0, 1.0], np.ones((5, 2)), bias=True)
