"""CNN / LCN ODE right-hand sides: oracle equality, symmetries, closed forms, input checks."""

import numpy as np
import pytest

from checks.grading.cnn_lcn_odes import reference_rhs, reference_terms
from td_lib import cnn_lcn as cl


def _random_S(P, rng):
    A = rng.standard_normal((P, P + 1))
    S = A @ A.T / (P + 1) + 0.3 * np.eye(P)
    d = np.sqrt(np.diag(S))
    return S / d[:, None] / d[None, :]


@pytest.mark.parametrize("kind", ["cnn", "lcn"])
@pytest.mark.parametrize("P,k_s,k_t", [(4, 3, 2), (3, 2, 1), (3, 3, 3)])
def test_fast_rhs_equals_loop_oracle(kind, P, k_s, k_t):
    rng = np.random.default_rng(P * 10 + k_s)
    S = _random_S(P, rng)
    R, Q = cl.random_init(kind, D=40, P=P, k_s=k_s, k_t=k_t, T=1.4, rng=k_t)
    fast = cl.ode_terms(kind, R, Q, S, T=1.4, sigma=0.6)
    slow = reference_terms(kind, R, Q, S, T=1.4, sigma=0.6)
    for a, b in zip(fast, slow):
        assert a.shape == b.shape
        assert np.max(np.abs(a - b)) < 1e-12 * max(1.0, np.abs(b).max())
    dR, dQ = cl.rhs(kind, R, Q, S, T=1.4, eta=0.7, sigma=0.6)
    rR, rQ = reference_rhs(kind, R, Q, S, T=1.4, eta=0.7, sigma=0.6)
    assert np.max(np.abs(dR - rR)) < 1e-12 and np.max(np.abs(dQ - rQ)) < 1e-12


@pytest.mark.parametrize("kind", ["cnn", "lcn"])
def test_translation_invariant_fast_path_equals_oracle(kind):
    """Eq. 3 (circulant S) with a translation-invariant state takes the V_{0,q} shortcut."""
    P, k_s, k_t = 4, 2, 1
    S = cl.input_covariance(P, 0.45)
    R0, Q0 = cl.random_init("cnn", D=40, P=P, k_s=k_s, k_t=k_t, rng=9)
    R, Q = (R0, Q0) if kind == "cnn" else cl.matched_lcn_init(R0, Q0, P)
    if kind == "lcn":  # fill the irrelevant entries translation-invariantly as well
        Q = Q + 0.01 * np.einsum("pq,lm->pqlm", np.ones((P, P)), np.eye(k_s))
    fast = cl.ode_terms(kind, R, Q, S, T=1.0, sigma=0.3)
    slow = reference_terms(kind, R, Q, S, T=1.0, sigma=0.3)
    for a, b in zip(fast, slow):
        assert np.max(np.abs(a - b)) < 1e-12 * max(1.0, np.abs(b).max())


@pytest.mark.parametrize("kind", ["cnn", "lcn"])
def test_batched_rhs_equals_per_element(kind):
    P, k_s, k_t = 4, 2, 1
    R, Q = cl.random_init(kind, D=30, P=P, k_s=k_s, k_t=k_t, n=3, rng=5)
    cs = np.array([0.0, 0.3, 0.8])
    etas = np.array([0.1, 1.0, 2.0])
    dR, dQ = cl.rhs(kind, R, Q, cl.input_covariance(P, cs), T=1.0, eta=etas, sigma=0.5)
    for i in range(3):
        a, b = cl.rhs(kind, R[i], Q[i], cl.input_covariance(P, cs[i]), T=1.0, eta=etas[i], sigma=0.5)
        assert np.max(np.abs(dR[i] - a)) < 1e-13 * max(1, np.abs(a).max())
        assert np.max(np.abs(dQ[i] - b)) < 1e-13 * max(1, np.abs(b).max())


@pytest.mark.parametrize("kind", ["cnn", "lcn"])
def test_batched_rhs_P8_equals_per_set(kind):
    """64 parameter sets at P = 8 in one call equal 64 single calls to 1e-12 (issue 13).

    The states are random (not translation-symmetric) and every set has its own random S, eta,
    sigma and T, so the batch takes the general pair-by-pair I4 path in several cache-sized
    blocks; one set is also compared with the loop oracle.
    """
    from td_lib.cnn_lcn.odes import _CHUNK, _is_circulant

    P, k_s, k_t, n = 8, 2, 2, 64
    rng = np.random.default_rng(8)
    S = np.stack([_random_S(P, rng) for _ in range(n)])
    R, Q = cl.random_init(kind, D=100, P=P, k_s=k_s, k_t=k_t, n=n, rng=11)
    eta, sigma, T = np.geomspace(0.05, 2.0, n), np.linspace(0.0, 1.0, n), np.linspace(0.5, 2.0, n)
    C = cl.preactivation_covariance(kind, R, Q, S, T, validate=False)
    assert not _is_circulant(C, P)
    assert n * (P * (P + 1) // 2) * (2 * P) ** 2 > 2 * _CHUNK  # the batch spans several blocks
    dR, dQ = cl.rhs(kind, R, Q, S, T=T, eta=eta, sigma=sigma)
    for i in range(n):
        a, b = cl.rhs(kind, R[i], Q[i], S[i], T=T[i], eta=eta[i], sigma=sigma[i])
        assert np.max(np.abs(dR[i] - a)) <= 1e-12 * max(1.0, np.abs(a).max()), i
        assert np.max(np.abs(dQ[i] - b)) <= 1e-12 * max(1.0, np.abs(b).max()), i
    rR, rQ = reference_rhs(kind, R[5], Q[5], S[5], T=T[5], eta=eta[5], sigma=sigma[5])
    assert np.max(np.abs(dR[5] - rR)) < 1e-12 * max(1.0, np.abs(rR).max())
    assert np.max(np.abs(dQ[5] - rQ)) < 1e-12 * max(1.0, np.abs(rQ).max())


@pytest.mark.parametrize("kind", ["cnn", "lcn"])
def test_reflection_equivariance(kind):
    """F(rho y) = rho F(y) (eq. 98) and eps_g(rho y) = eps_g(y), for a reflection-symmetric S."""
    P, k_s, k_t = 6, 3, 2
    S = cl.input_covariance(P, 0.35)
    R, Q = cl.random_init(kind, D=25, P=P, k_s=k_s, k_t=k_t, rng=1)
    Rr, Qr = cl.reflect(R, Q, kind)
    a = cl.rhs(kind, Rr, Qr, S, T=1.0, eta=0.9, sigma=0.4)
    b = cl.reflect(*cl.rhs(kind, R, Q, S, T=1.0, eta=0.9, sigma=0.4), kind)
    assert np.max(np.abs(a[0] - b[0])) < 1e-13 and np.max(np.abs(a[1] - b[1])) < 1e-13
    e1 = cl.generalisation_error(kind, R, Q, S)
    e2 = cl.generalisation_error(kind, Rr, Qr, S)
    assert abs(e1 - e2) < 1e-13
    # and the RHS is NOT trivially reflection-symmetric: a generic state is moved
    assert np.max(np.abs(Rr - R)) > 1e-3


@pytest.mark.parametrize("P,k_s,k_t", [(4, 3, 2), (5, 2, 2), (4, 4, 1)])
def test_P_rescaling_instantaneous(P, k_s, k_t):
    """Result 3.2 at the level of the RHS: at S = I the matched LCN moves P times slower."""
    S = np.eye(P)
    R0, Q0 = cl.random_init("cnn", D=30, P=P, k_s=k_s, k_t=k_t, rng=2)
    Rl, Ql = cl.matched_lcn_init(R0, Q0, P)
    dRc, dQc = cl.rhs("cnn", R0, Q0, S, T=1.0, eta=0.8, sigma=0.7)
    dRl, dQl = cl.rhs("lcn", Rl, Ql, S, T=1.0, eta=0.8, sigma=0.7)
    assert np.max(np.abs(dRl - dRc[None] / P)) < 1e-13
    p = np.arange(P)[:, None, None]
    l_ = np.arange(k_s)[None, :, None]
    m = np.arange(k_s)[None, None, :]
    rel = dQl[p, (p + l_ - m) % P, l_, m]
    assert np.max(np.abs(rel - dQc[None] / P)) < 1e-13
    assert abs(cl.generalisation_error("cnn", R0, Q0, S)
               - cl.generalisation_error("lcn", Rl, Ql, S)) < 1e-13


@pytest.mark.parametrize("kind", ["cnn", "lcn"])
@pytest.mark.parametrize("c", [0.0, 0.6])
def test_zero_error_solutions_are_fixed_points(kind, c):
    P, k_s, k_t = 5, 3, 2
    S = cl.input_covariance(P, c)
    for s in range(k_s - k_t + 1):
        R, Q = cl.zero_error_solution(kind, P=P, k_s=k_s, k_t=k_t, T=1.3, shift=s)
        assert abs(cl.generalisation_error(kind, R, Q, S, 1.3)) < 1e-13
        F_R, F_Q, G_Q = cl.ode_terms(kind, R, Q, S, 1.3, sigma=0.0)
        assert np.max(np.abs(F_R)) < 1e-13 and np.max(np.abs(F_Q)) < 1e-13
        assert np.max(np.abs(G_Q)) < 1e-13
        _, _, G_noise = cl.ode_terms(kind, R, Q, S, 1.3, sigma=1.0)
        assert np.max(np.abs(G_noise)) > 1e-2  # label noise kicks the student off the solution
    if kind == "cnn":
        R, Q = cl.zero_error_solution("cnn", P=P, k_s=k_s, k_t=k_t, T=1.3, shift=1)
        g = cl.alignment(R, Q, T=1.3)
        assert abs(g[1] - 1) < 1e-14 and np.max(np.abs(g[[0]])) < 1e-14


def test_lcn_permutation_shifts_zero_error():
    P, k_s, k_t = 4, 3, 2
    R, Q = cl.zero_error_solution("lcn", P=P, k_s=k_s, k_t=k_t, shift=[1, 1, 1, 1])
    assert abs(cl.generalisation_error("lcn", R, Q, cl.input_covariance(P, 0.3))) < 1e-13
    with pytest.raises(ValueError, match="permutation"):
        cl.zero_error_solution("lcn", P=P, k_s=k_s, k_t=k_t, shift=[0, 1, 0, 0])


@pytest.mark.parametrize("c", [0.0, 0.4, 0.9])
@pytest.mark.parametrize("kind", ["cnn", "lcn"])
def test_initial_error_eq28(kind, c):
    P = 5
    R, Q = cl.leading_order_init(kind, P=P, k_s=3, k_t=2)
    eg = cl.generalisation_error(kind, R, Q, cl.input_covariance(P, c), T=1.7)
    assert abs(eg - cl.initial_error(kind, P=P, T=1.7, c=c)) < 1e-12


@pytest.mark.parametrize("kind", ["cnn", "lcn"])
@pytest.mark.parametrize("P,k_s,T,sigma,c", [(4, 1, 1.0, 1.0, 0.0), (4, 2, 1.0, 1.0, 0.5),
                                            (6, 3, 2.0, 0.5, 0.8)])
def test_early_time_closed_forms(kind, P, k_s, T, sigma, c):
    A, B = cl.early_time_coefficients(kind, P=P, k_s=k_s, k_t=1, T=T, sigma=sigma, c=c)
    Ac, Bc = cl.early_time_coefficients_closed_form(kind, P=P, k_s=k_s, T=T, sigma=sigma, c=c)
    assert abs(A - Ac) < 1e-9 * A and abs(B - Bc) < 1e-9 * B
    # k_t does not enter (App. H)
    A2, B2 = cl.early_time_coefficients(kind, P=P, k_s=k_s, k_t=k_s, T=T, sigma=sigma, c=c)
    assert abs(A2 - A) < 1e-7 * A and abs(B2 - B) < 1e-7 * B


def test_printed_V_d_is_wrong():
    """The page's eq. 108 V_d (corrected=False) misses the ODE's B by ~6 % (CNN, c = 0)."""
    A, B = cl.early_time_coefficients("cnn", P=4, k_s=1, k_t=1, T=1.0, sigma=1.0, c=0.0)
    _, Bp = cl.early_time_coefficients_closed_form("cnn", P=4, k_s=1, T=1.0, sigma=1.0, c=0.0, corrected=False)
    assert abs(Bp - B) / B > 0.05


@pytest.mark.parametrize("P,k_s,T,sigma", [(4, 1, 1.0, 1.0), (8, 2, 2.0, 2.0)])
def test_c0_closed_form(P, k_s, T, sigma):
    num = cl.c_star_slope_numeric(P=P, k_s=k_s, k_t=1, T=T, sigma=sigma)
    assert abs(cl.c_star_slope(P=P, k_s=k_s, T=T, sigma=sigma) - num) < 1e-7 * num


def test_A_B_P_scaling_at_c0():
    A_c, B_c = cl.early_time_coefficients("cnn", P=5, k_s=2, k_t=1, T=1.0, sigma=1.0, c=0.0)
    A_l, B_l = cl.early_time_coefficients("lcn", P=5, k_s=2, k_t=1, T=1.0, sigma=1.0, c=0.0)
    assert abs(A_c - 5 * A_l) < 1e-7 * A_c and abs(B_c - 5 * B_l) < 1e-7 * B_c


def test_error_covariance_at_solution_is_zero():
    P = 4
    S = cl.input_covariance(P, 0.5)
    R, Q = cl.zero_error_solution("cnn", P=P, k_s=2, k_t=2)
    assert np.max(np.abs(cl.error_covariance("cnn", R, Q, S))) < 1e-14
    pred = cl.error_covariance_prediction("cnn", 0.01, 1.0, S)
    assert np.allclose(pred, 0.005 * S, atol=0, rtol=1e-15)


def test_bad_input_rejected_by_name():
    with pytest.raises(ValueError, match="c must lie"):
        cl.input_covariance(4, 1.0)
    with pytest.raises(ValueError, match="c must lie"):
        cl.input_covariance(4, -0.1)
    with pytest.raises(ValueError, match="k_s must be >= k_t"):
        cl.rhs("cnn", np.zeros((2, 3)), np.eye(2) / 2, np.eye(4))
    with pytest.raises(ValueError, match="k_s must be <= P"):
        cl.rhs("cnn", np.zeros((4, 1)), np.eye(4) / 4, np.eye(3))
    S_bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(ValueError, match="S must be positive semi-definite"):
        cl.rhs("cnn", np.zeros((1, 1)), np.eye(1), S_bad)
    with pytest.raises(ValueError, match="Q must be"):
        cl.rhs("cnn", np.zeros((2, 1)), np.eye(3), np.eye(4))
    with pytest.raises(ValueError, match="LCN state"):
        cl.rhs("lcn", np.zeros((3, 2, 1)), np.zeros((3, 3, 2, 2)), np.eye(4))
    with pytest.raises(ValueError, match="eta"):
        cl.rhs("cnn", np.zeros((1, 1)), np.eye(1), np.eye(2), eta=-1.0)
    with pytest.raises(ValueError, match="kind"):
        cl.rhs("fcn", np.zeros((1, 1)), np.eye(1), np.eye(2))
    with pytest.raises(ValueError, match="sigma"):
        cl.rhs("cnn", np.zeros((1, 1)), np.eye(1), np.eye(2), sigma=-1.0)
