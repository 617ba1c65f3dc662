"""Saad-Solla integrals (seed eqs 44-51): closed forms, Monte Carlo, input checks."""

import numpy as np
import pytest

from td_lib.cnn_lcn import I2, I3, I4, J2
from td_lib.cnn_lcn.integrals import monte_carlo


def _random_cov(n, rng):
    A = rng.standard_normal((n, n + 2))
    return A @ A.T / (n + 2)


def test_i2_j2_closed_forms():
    # equal unit-variance fields: E[g(u)^2] = (2/pi) arcsin(1/2) = 1/3
    assert abs(I2(np.ones((2, 2))) - 1 / 3) < 1e-15
    assert abs(I2(np.eye(2))) < 1e-15
    # independent fields: J2 factorises into E[g'(u)]^2 = (2/pi) / sqrt((1+c11)(1+c22))
    C = np.diag([0.5, 2.0])
    assert abs(J2(C) - 2 / np.pi / np.sqrt(1.5 * 3.0)) < 1e-15


def test_i3_linear_slot_stein():
    # If the linear field is u3 itself (c23 = c33, c12 = c13), I3 = E[g'(u1) u3 g(u3)];
    # with u1 independent of u3 this is E[g'(u1)] E[u3 g(u3)] = sqrt(2/pi)/sqrt(1+c11) * c33 * sqrt(2/pi)/sqrt(1+c33)
    c11, c33 = 0.7, 1.3
    C = np.array([[c11, 0, 0], [0, c33, c33], [0, c33, c33]])
    expect = (2 / np.pi) * c33 / np.sqrt((1 + c11) * (1 + c33))
    assert abs(I3(C) - expect) < 1e-14


def test_i4_reduces_to_product_when_independent():
    # (u1, u3) independent of (u2, u4): I4 = E[g'(u1) g(u3)] E[g'(u2) g(u4)] = 0 (odd g)
    C = np.array([[1.0, 0, 0.3, 0], [0, 1.0, 0, 0.2], [0.3, 0, 1.0, 0], [0, 0.2, 0, 1.0]])
    assert abs(I4(C)) < 1e-15
    # u3 = u4 independent of (u1, u2): I4 = J2(u1, u2) * E[g(u3)^2]
    C = np.array([[1.0, 0.4, 0, 0], [0.4, 2.0, 0, 0], [0, 0, 1.5, 1.5], [0, 0, 1.5, 1.5]])
    expect = J2(C[:2, :2]) * I2(C[2:, 2:])
    assert abs(I4(C) - expect) < 1e-14


@pytest.mark.parametrize("kind,n", [("I2", 2), ("J2", 2), ("I3", 3), ("I4", 4)])
def test_integrals_match_monte_carlo(kind, n):
    rng = np.random.default_rng(11)
    f = {"I2": I2, "J2": J2, "I3": I3, "I4": I4}[kind]
    for k in range(3):
        C = _random_cov(n, rng)
        mc, se = monte_carlo(kind, C, n=200_000, rng=k)
        assert abs(f(C) - mc) < 5 * se, (kind, f(C), mc, se)


def test_batched_equals_single():
    rng = np.random.default_rng(2)
    Cs = np.stack([_random_cov(4, rng) for _ in range(6)]).reshape(2, 3, 4, 4)
    batch = I4(Cs)
    assert batch.shape == (2, 3)
    single = np.array([I4(C) for C in Cs.reshape(6, 4, 4)]).reshape(2, 3)
    assert np.max(np.abs(batch - single)) < 1e-15


def test_bad_input_rejected_by_name():
    with pytest.raises(ValueError, match="C must have shape"):
        I3(np.eye(2))
    with pytest.raises(ValueError, match="symmetric"):
        I2(np.array([[1.0, 0.5], [0.1, 1.0]]))
    bad = np.array([[1.0, 0.0, 0.0, 3.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0],
                    [3.0, 0.0, 0.0, 1.0]])  # not PSD, makes Lambda_2 < 0
    with pytest.raises(ValueError, match="Lambda"):
        I4(bad)
    with pytest.raises(ValueError, match="NaN"):
        I2(np.array([[np.nan, 0], [0, 1.0]]))
