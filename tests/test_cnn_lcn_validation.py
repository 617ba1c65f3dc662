"""Bad input to the CNN/LCN observables gets a clear error naming the argument; the
fixed-point solver's success flag says whether a root was found."""

from __future__ import annotations

import numpy as np
import pytest

from td_lib import cnn_lcn as cl
from td_lib.core import validate as V


@pytest.mark.parametrize("bad, match", [
    ({"c": 1.5}, r"c must lie in \[0.0, 1.0\), got 1.5"),
    ({"c": [0.2, 1.0]}, r"c must lie in \[0.0, 1.0\), got 1"),
    ({"eta": -0.1}, r"eta must lie in \[0.0, inf\), got -0.1"),
    ({"eta": np.nan}, "eta contains NaN"),
    ({"sigma": [1.0, -1.0]}, r"sigma must lie in \[0.0, inf\), got -1"),
    ({"T": 0.0}, "T must be > 0"),
])
def test_noise_floor_rejects_bad_input(bad, match):
    kw = {"kind": "cnn", "eta": 0.1, "sigma": 1.0, "P": 6, "T": 1.0, "c": 0.3, **bad}
    with pytest.raises(ValueError, match=match):
        cl.noise_floor(**kw)


def test_noise_floor_values_unchanged_and_broadcast():
    # eq. 32 and eq. 31 at their definitions, elementwise over a batch
    eta, sigma, P, T = np.array([0.1, 0.2]), 1.5, 6, 1.0
    c = np.array([0.0, 0.5])
    lcn = eta * sigma**2 * P / (np.pi * np.sqrt(1 + 2 * T))
    cnn = lcn + eta * sigma**2 / np.pi * P * (P - 1) * c / np.sqrt((1 + T) ** 2 - T**2 * c**2)
    np.testing.assert_allclose(cl.noise_floor("lcn", eta=eta, sigma=sigma, P=P, T=T, c=c), lcn, rtol=1e-15, atol=0)
    np.testing.assert_allclose(cl.noise_floor("cnn", eta=eta, sigma=sigma, P=P, T=T, c=c), cnn, rtol=1e-15, atol=0)


@pytest.mark.parametrize("args, match", [
    ((6, 1, 2), "k_s .* must be >= k_t"),
    ((3, 4, 2), "k_s must be <= P = 3"),
    ((6, 2, 0), "k_t must be >= 1"),
])
def test_state_shapes_rejects_inconsistent_sizes(args, match):
    with pytest.raises(ValueError, match=match):
        cl.state_shapes("lcn", **dict(zip(("P", "k_s", "k_t"), args)))


def test_array_in_names_the_argument_and_counts_the_offenders():
    with pytest.raises(ValueError, match=r"x must lie in \(0, 1\], got 0 \(and 1 more entries\)"):
        V.array_in("x", [0.5, 0.0, 2.0], 0, 1, closed="right")
    assert V.array_in("x", [0.0, 1.0], 0, 1, closed="both").tolist() == [0.0, 1.0]


def test_fixed_point_success_reflects_the_residual():
    P, ks, kt, T = 4, 2, 2, 1.0
    S = cl.input_covariance(P, 0.25)
    R0, Q0 = cl.zero_error_solution("cnn", P=P, k_s=ks, k_t=kt, T=T)
    fp = cl.fixed_point("cnn", R0, Q0, S, T=T, eta=2e-3, sigma=1.0, tau_warmup=5.0)
    assert fp["residual"] < 1e-12 and fp["success"] is True, fp
    assert "solver_success" in fp and isinstance(fp["message"], str)
    from td_lib.cnn_lcn.stationary import SUCCESS_RESIDUAL

    assert fp["success"] == (fp["residual"] <= SUCCESS_RESIDUAL)


def test_alpha_spec_interpolates_the_maximum_over_the_shifts():
    """Lesson 2, Exercise D's rule: max_s gamma_s is interpolated, not each shift (they differ when
    the leading shift changes between the two checkpoints around the crossing)."""
    g = np.array([[0.0, 0.5], [0.2, 0.98], [0.995, 0.5]])
    assert float(cl.alpha_spec(np.array([0.0, 1.0, 2.0]), g, 0.99)) == pytest.approx(1 + 0.01 / 0.015, abs=1e-12)


def test_optimal_eta_reference_follows_exercise_F_rules():
    """Lesson 3, Exercise F's rules, which the baked references of Figure 9 and the learning-rate demo
    follow: the edge at an edge minimum, the grid point next to a NaN, else the log-log vertex."""
    from checks.grading.baked_cnn_lcn import _parabola_eta

    etas = np.geomspace(1e-2, 1.0, 9)
    x, h = np.log(etas), np.log(etas[1] / etas[0])

    def curve(x0):
        return np.exp(0.8 * (x - x0) ** 2 - 1.0)

    assert _parabola_eta(etas, curve(x[0] - 0.7 * h)) == pytest.approx(etas[0], rel=1e-12)
    assert _parabola_eta(etas, curve(x[8] + 0.2 * h)) == pytest.approx(etas[8], rel=1e-12)
    assert _parabola_eta(etas, curve(x[1] - 0.3 * h)) == pytest.approx(np.exp(x[1] - 0.3 * h), rel=1e-10)
    y = curve(x[4] + 0.3 * h)
    y[3] = np.nan
    assert _parabola_eta(etas, y) == pytest.approx(etas[4], rel=1e-12)
    y = curve(x[4] + 0.3 * h)
    y[2] = np.nan
    assert _parabola_eta(etas, y) == pytest.approx(np.exp(x[4] + 0.3 * h), rel=1e-10)
