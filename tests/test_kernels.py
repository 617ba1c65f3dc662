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
    # QUADPACK's Gauss-Kronrod sums and scipy's Bessel function are different computations:
    # they agree to quadrature rounding, ~1e-15 (8.9e-16 = 32 ulps at l = 0), not to a few ulps
    assert np.abs(quad - exact).max() < 4e-15
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
    assert np.abs(a).max() < 1e-14 and np.all(se < 1e-14)


@pytest.mark.parametrize("bias", [False, True])
def test_monte_carlo_coefficients_within_standard_errors(bias):
    rng = np.random.default_rng(1 + bias)
    ells = np.array([0, 1, 2, 4, 6]) if not bias else np.arange(7)
    W = rng.standard_normal((20000, 3 if bias else 2))
    a, se = k.finite_width_coefficients(W, ells)
    exact = (k.cosine_coefficients_quad(k.relu_ntk_bias, ells) if bias
             else k.basri_coefficients(ells))
    assert np.all(se > 0)
    # batch means of 100 batches: t-distributed with 99 d.o.f., P(|t| > 4.5) ~ 2e-5 per entry
    assert np.all(np.abs(a - exact) < 4.5 * se), (a - exact) / se


def test_batch_coefficients_are_those_of_the_whole_kernel_and_their_spread():
    # Equal batches: the mean of the batch estimates is the coefficient of the kernel of all N
    # units (an identity), and the standard error is the spread of the batch estimates.
    rng = np.random.default_rng(5)
    W = rng.standard_normal((600, 3))
    ells = np.arange(5)
    a, se = k.finite_width_coefficients(W, ells, n_grid=64, batches=6)
    grid = 2 * np.pi * np.arange(64) / 64
    row = k.finite_width_kernel(grid, [0.0], W)[:, 0]
    whole = np.fft.rfft(row).real[ells] / 64 * np.where(ells == 0, 1, 2)
    assert np.abs(a - whole).max() < 1e-15
    per_batch = [np.fft.rfft(k.finite_width_kernel(grid, [0.0], w)[:, 0]).real[ells] / 64
                 * np.where(ells == 0, 1, 2) for w in np.split(W, 6)]
    assert np.allclose(se, np.std(per_batch, axis=0, ddof=1) / np.sqrt(6), rtol=1e-12, atol=1e-17)
    # any kernel with the signature of finite_width_kernel can be passed (a student's)
    a2, se2 = k.finite_width_coefficients(W, ells, n_grid=64, batches=6,
                                          kernel=lambda t1, t2, w: k.finite_width_kernel(t1, t2, w) * 2)
    assert np.allclose(a2, 2 * a, rtol=1e-14, atol=1e-17) and np.allclose(se2, 2 * se, rtol=1e-12, atol=1e-17)


def test_finite_width_kernel_mean():
    rng = np.random.default_rng(3)
    ang = np.linspace(-np.pi, np.pi, 9)
    K = k.finite_width_kernel(ang, np.array([0.0]), rng.standard_normal((40000, 2)))[:, 0]
    # each entry is a mean of N terms bounded by |cos phi| <= 1: SE <= 0.5/sqrt(N) = 0.0025
    assert np.abs(K - k.relu_ntk_nobias(ang)).max() < 5 * 0.0025
    Kb = k.finite_width_kernel(ang, ang, rng.standard_normal((40000, 3)))
    # with the bias, xbar . xbar = 1 and a unit is active with probability 1/2
    assert np.allclose(Kb, Kb.T) and np.abs(np.diag(Kb) - 0.5).max() < 5 * 0.0025


def test_finite_width_kernel_by_hand():
    # one unit w = (1, 0): active for cos(theta) > 0; the entry is cos(theta - theta') there
    t1, t2 = np.array([0.2, 1.0, 2.0, -1.3]), np.array([0.5, 3.0])
    K = k.finite_width_kernel(t1, t2, [[1.0, 0.0]])
    want = np.cos(t1[:, None] - t2[None, :]) * (np.cos(t1)[:, None] > 0) * (np.cos(t2)[None, :] > 0)
    # the library's BLAS dot cos t cos t' + sin t sin t' vs cos(t - t') here: a few ulps of 1 apart,
    # how many depends on the BLAS kernel (FMA or not) and on the rounding of t - t'
    assert K.shape == (4, 2) and np.abs(K - want).max() < 1e-14
    # with a bias weight: xbar = (cos, sin, 1)/sqrt 2, so xbar . xbar' = (1 + cos(theta - theta'))/2;
    # the unit (0, 0, 1) is active everywhere
    Kb = k.finite_width_kernel(t1, t2, [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    assert np.abs(Kb - (1 + np.cos(t1[:, None] - t2[None, :])) / 2).max() < 1e-14  # as above


@pytest.mark.parametrize("bias", [False, True])
def test_gap_shrinks_like_one_over_n_at_the_per_unit_variance(bias):
    # each kernel entry is a mean of N i.i.d. unit terms: E (K_N - K_inf)^2 = variance / N
    ns = np.array([10, 100, 1000])
    gap = k.finite_width_gap(k.finite_width_kernel, ns, bias=bias, repeats=800, rng=11)
    ratio = gap * ns / k.gap_variance(bias=bias)
    # 800 draws: each ratio has a relative spread ~0.035 (measured over seeds); 0.2 is > 5 spreads
    assert np.abs(ratio - 1).max() < 0.2, ratio
    assert -1.1 < np.polyfit(np.log(ns), np.log(gap), 1)[0] < -0.9
    # the per-unit variance by Monte Carlo over single units (N = 1, 4000 draws)
    one = k.finite_width_gap(k.finite_width_kernel, [1], bias=bias, repeats=4000, rng=12)[0]
    assert abs(one / k.gap_variance(bias=bias) - 1) < 0.05


def test_gap_variance_closed_form():
    # no bias: mean over phi of cos^2 phi p (1 - p), p = (pi - |phi|)/(2 pi); by quadrature
    from scipy.integrate import quad

    f = lambda t: np.cos(t) ** 2 * (np.pi - abs(t)) / (2 * np.pi) * (1 - (np.pi - abs(t)) / (2 * np.pi))
    exact = quad(f, -np.pi, np.pi, points=[0])[0] / (2 * np.pi)
    assert abs(k.gap_variance(n_grid=1 << 14) - exact) < 1e-8


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
        k.finite_width_kernel([0.0, 1.0], [0.0], np.ones((5, 4)))
    with pytest.raises(ValueError, match="angles2"):
        k.finite_width_kernel([0.0, 1.0], np.zeros((2, 2)), np.ones((5, 2)))
    with pytest.raises(ValueError, match="batches"):
        k.finite_width_coefficients(np.ones((10, 2)), [0, 1], batches=3)
    with pytest.raises(TypeError, match="kernel"):
        k.finite_width_coefficients(np.ones((10, 2)), [0, 1], batches=2, kernel=1.0)
    with pytest.raises(ValueError, match="widths"):
        k.finite_width_gap(k.finite_width_kernel, [0, 10])


def test_gap_rng_convention():
    # rng: an int seed gives the stream of numpy.random.default_rng(seed); a Generator is used as is
    a = k.finite_width_gap(k.finite_width_kernel, [5, 20], repeats=3, rng=4)
    b = k.finite_width_gap(k.finite_width_kernel, [5, 20], repeats=3, rng=np.random.default_rng(4))
    assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="rng"):
        k.finite_width_gap(k.finite_width_kernel, [5], rng=-1)
