"""Tests of td_lib.hermite: polynomials, coefficients, reconstruction, information exponent,
and the exact ReLU loss on the mixed cumulant model."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

from td_lib import hermite, mixed_cumulant
from td_lib.core import gaussian

SQ2PI = math.sqrt(2 * math.pi)


def test_low_degree_polynomials_match_closed_forms():
    z = np.linspace(-3, 3, 13)
    closed = [np.ones_like(z), z, z**2 - 1, z**3 - 3 * z, z**4 - 6 * z**2 + 3]
    for k, c in enumerate(closed):
        np.testing.assert_allclose(hermite.He(k, z), c, atol=1e-12)
        np.testing.assert_allclose(hermite.h(k, z), c / math.sqrt(math.factorial(k)), atol=1e-12)


def test_recurrence_matches_hermeval_and_returns_new_arrays():
    """He_k by the three-term recurrence agrees with numpy's hermeval to rounding (relative to
    max(1, |He_k|)) for k <= 12 on [-25, 25]; derivatives follow the Appell property; scalars
    give scalars; the input is never returned or modified."""
    from numpy.polynomial import hermite_e as H

    z = np.linspace(-25, 25, 1001)
    z0 = z.copy()
    for k in range(13):
        c = np.zeros(k + 1)
        c[k] = 1.0
        ref = H.hermeval(z, c)
        got = hermite.He(k, z)
        assert got is not z and np.max(np.abs(got - ref) / np.maximum(1.0, np.abs(ref))) < 1e-13, k
        for m in range(0, 4):
            ref_m = H.hermeval(z, H.hermeder(c, m)) if m <= k else np.zeros_like(z)
            err = np.abs(hermite.He_deriv(k, z, m=m) - ref_m) / np.maximum(1.0, np.abs(ref_m))
            assert err.max() < 1e-13, (k, m)
            err = np.abs(hermite.h_deriv(k, z, m=m) * math.sqrt(math.factorial(k)) - ref_m)
            assert (err / np.maximum(1.0, np.abs(ref_m))).max() < 1e-13, (k, m)
    assert np.array_equal(z, z0)
    assert np.ndim(hermite.He(3, 0.5)) == 0 and float(hermite.He(3, 0.5)) == pytest.approx(0.125 - 1.5)
    assert np.array_equal(hermite.He(0, [1, 2]), [1.0, 1.0])
    # the quadrature lives in td_lib.core.gaussian only
    assert not {"gaussian_expectation", "gauss_normal_nodes", "QuadratureWarning"} & set(hermite.__all__)


def test_orthogonality_by_quadrature():
    gram = np.array([[gaussian.gaussian_expectation(
        lambda x, j=j, k=k: hermite.He(j, x) * hermite.He(k, x)) for k in range(8)]
        for j in range(8)])
    np.testing.assert_allclose(gram, np.diag([math.factorial(k) for k in range(8)]), atol=1e-9)


def test_derivatives_against_finite_differences_and_identity():
    z = np.linspace(-2, 2, 9)
    eps = 1e-6
    for k in range(1, 7):
        fd = (hermite.He(k, z + eps) - hermite.He(k, z - eps)) / (2 * eps)
        np.testing.assert_allclose(hermite.He_deriv(k, z), fd, rtol=1e-7, atol=1e-6)
        # He_k' = k He_{k-1}
        np.testing.assert_allclose(hermite.He_deriv(k, z), k * hermite.He(k - 1, z), atol=1e-10)
        np.testing.assert_allclose(hermite.h_deriv(k, z),
                                   hermite.He_deriv(k, z) / math.sqrt(math.factorial(k)), atol=1e-12)
    np.testing.assert_allclose(hermite.He_deriv(4, z, m=2), 12 * hermite.He(2, z), atol=1e-10)


def test_relu_coefficients_closed_form_and_quadrature():
    relu = lambda x: np.maximum(x, 0.0)
    closed = hermite.relu_coefficients(10)
    assert closed[2] == pytest.approx(1 / SQ2PI, abs=1e-15)
    assert closed[4] == pytest.approx(-1 / SQ2PI, abs=1e-15)
    assert np.all(closed[3::2] == 0)
    quad = hermite.coefficients(relu, 10, breakpoints=[0.0], tol=1e-11)
    np.testing.assert_allclose(quad, closed, atol=1e-11)


def test_plain_gauss_hermite_on_a_kink_warns():
    relu = lambda x: np.maximum(x, 0.0)
    with pytest.warns(gaussian.QuadratureWarning, match="not converged"):
        c = hermite.coefficients(relu, 4)
    # still roughly right (error ~ 1/n), but not to the tolerance
    assert abs(c[2] - 1 / SQ2PI) < 5e-3


def test_smooth_activation_converges_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = hermite.coefficients(np.tanh, 7)
    assert np.all(np.abs(c[0::2]) < 1e-14)  # odd function
    # sigma_1 = E[tanh'(Z)] (Stein); independent quadrature of tanh' = 1 - tanh^2
    s1 = gaussian.gaussian_expectation(lambda x: 1 - np.tanh(x) ** 2, tol=1e-12)
    assert c[1] == pytest.approx(float(s1), abs=1e-11)


def test_polynomial_is_reconstructed_exactly():
    f = lambda x: 2 * x**3 - x + 0.5
    c = hermite.coefficients(f, 5)
    z = np.linspace(-4, 4, 17)
    np.testing.assert_allclose(hermite.reconstruct(c, z), f(z), atol=1e-10)
    assert abs(c[4]) < 1e-12 and abs(c[5]) < 1e-12


def test_parseval_for_normalised_coefficients():
    sig = lambda x: np.maximum(x, 0.0)
    c = hermite.normalised_coefficients(sig, 40, breakpoints=[0.0], tol=1e-10, n_max=1024)
    closed = hermite.relu_coefficients(40) / np.sqrt([float(math.factorial(k)) for k in range(41)])
    np.testing.assert_allclose(c, closed, atol=1e-10)
    # E[ReLU(Z)^2] = 1/2; the missing tail beyond degree 40 is positive and small (~K^(-3/2))
    assert 0 < 0.5 - np.sum(c**2) < 2e-4


@pytest.mark.parametrize("f, k", [
    (lambda t: hermite.h(1, t), 1), (lambda t: hermite.h(2, t), 2), (lambda t: hermite.h(3, t), 3),
    (lambda t: hermite.h(4, t) + 0.3 * hermite.h(6, t), 4), (lambda t: t**3, 1),
    (lambda t: t**2, 2), (np.cos, 2), (lambda t: np.ones_like(t), None)])
def test_information_exponent(f, k):
    assert hermite.information_exponent(f, 10) == k


def test_information_exponent_does_not_need_coefficients(monkeypatch):
    """The student edition of td_lib cuts hermite.coefficients (an exercise's counterpart): the
    information exponent must not call it."""
    def cut(*args, **kwargs):
        raise AssertionError("information_exponent called hermite.coefficients")

    monkeypatch.setattr(hermite, "coefficients", cut)
    assert hermite.information_exponent(np.abs, 10, breakpoints=[0.0]) == 2
    assert hermite.information_exponent(lambda t: hermite.h(3, t)) == 3


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="k must be"):
        hermite.He(-1, 0.0)
    with pytest.raises(TypeError, match="kmax"):
        hermite.coefficients(np.tanh, 2.5)
    with pytest.raises(ValueError, match="n_max"):
        gaussian.gaussian_expectation(np.cos, n_max=1000)


def test_mcm_relu_loss_on_axes_in_closed_form():
    # alpha_v = 0: X Gaussian with variance 1 + beta_u a^2, E ReLU = sqrt(var)/sqrt(2 pi)
    a = np.linspace(-0.9, 0.9, 7)
    for corr in (False, True):
        L = hermite.mcm_relu_loss(a, 0.0, correlated=corr)
        np.testing.assert_allclose(L, 1 - 0.5 * (np.sqrt(1 + 5 * a**2) - 1) / SQ2PI, atol=1e-12)
    assert hermite.mcm_relu_loss(0.0, 0.0) == pytest.approx(1.0, abs=1e-13)
    with pytest.raises(ValueError, match="alpha_u"):
        hermite.mcm_relu_loss(0.8, 0.8)


@pytest.mark.parametrize("corr", [False, True])
def test_mcm_relu_loss_against_monte_carlo(corr):
    S = mixed_cumulant.orthonormal_spikes(6, rng=3)
    au, av = 0.5, 0.6
    w = au * S[1] + av * S[2] + math.sqrt(1 - au**2 - av**2) * S[0]
    X, y = mixed_cumulant.sample(400_000, spikes=S, beta_m=0.0, correlated=corr,
                      rng=torch.Generator().manual_seed(1))
    vals = (y * torch.relu(X @ w)).numpy()
    mc = 1 - vals.mean()
    se = vals.std() / math.sqrt(vals.size)
    exact = float(hermite.mcm_relu_loss(au, av, correlated=corr))
    assert abs(mc - exact) < 5 * se
