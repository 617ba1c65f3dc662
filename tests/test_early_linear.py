"""Unit tests of td_lib.early_linear (Hu, Xiao, Adlam & Pennington 2020 setting)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import integrate
from scipy.special import expit

from td_lib import early_linear as el

SQ2PI = math.sqrt(2 * math.pi)


def _quad_gauss(h) -> float:
    """Independent check of Gaussian expectations with scipy's adaptive quadrature."""
    f = lambda x: h(x) * math.exp(-0.5 * x * x) / SQ2PI  # noqa: E731
    return sum(integrate.quad(f, a, b, epsabs=1e-14, epsrel=1e-13, limit=200)[0]
               for a, b in ((-np.inf, 0.0), (0.0, np.inf)))


# --- constants of the linear models ----------------------------------------------------

def test_relu_constants_closed_form():
    # ReLU: E phi' = 1/2, E phi'' = p(0) = 1/sqrt(2 pi), E phi = 1/sqrt(2 pi),
    # E[g phi'] = 1/sqrt(2 pi), E[g^2 phi''] = 0, E phi'^2 = 1/2, E phi^2 = 1/2.
    c = el.linear_constants("relu", tr_sigma2_over_d=1.7)
    assert abs(c.zeta - 0.5) < 1e-12
    assert abs(c.nu - math.sqrt(1.7) / SQ2PI) < 1e-12
    assert abs(c.theta0 - 1 / SQ2PI) < 1e-12
    assert abs(c.theta1 - 1 / SQ2PI) < 1e-12
    assert abs(c.theta2) < 1e-12
    assert abs(c.diag1 - 0.25) < 1e-12
    assert abs(c.diag2 - (0.25 - 1 / (2 * math.pi))) < 1e-12


def test_leaky_relu_constants_closed_form():
    a = 0.2
    c = el.linear_constants("leaky_relu")
    assert abs(c.zeta - (1 + a) / 2) < 1e-12
    assert abs(c.nu - (1 - a) / SQ2PI) < 1e-12
    assert abs(c.theta0 - (1 - a) / SQ2PI) < 1e-12


@pytest.mark.parametrize("act", ["gelu", "tanh", "softplus"])
def test_smooth_constants_against_derivative_definitions(act):
    """zeta = E phi', theta1 = E[g phi'] and theta2 = E[g^2 phi'']/2 (Stein forms), by scipy."""
    phi_t, dphi_t = el.activation(act)
    dphi = lambda x: float(dphi_t(torch.tensor(x, dtype=torch.float64)))  # noqa: E731
    phi = lambda x: float(phi_t(torch.tensor(x, dtype=torch.float64)))  # noqa: E731
    d2 = {  # second derivatives written out independently
        "gelu": lambda x: math.exp(-x * x / 2) / SQ2PI * (2 - x * x),
        "tanh": lambda x: -2 * math.tanh(x) * (1 - math.tanh(x) ** 2),
        "softplus": lambda x: expit(x) * expit(-x),
    }[act]
    c = el.linear_constants(act)
    assert abs(c.zeta - _quad_gauss(dphi)) < 1e-11
    assert abs(c.theta0 - _quad_gauss(phi)) < 1e-11
    assert abs(c.theta1 - _quad_gauss(lambda x: x * dphi(x))) < 1e-11
    assert abs(c.nu - _quad_gauss(d2)) < 1e-11
    assert abs(c.theta2 - 0.5 * _quad_gauss(lambda x: x * x * d2(x))) < 1e-11
    assert abs(c.diag1 - (_quad_gauss(lambda x: dphi(x) ** 2) - c.zeta**2)) < 1e-11


@pytest.mark.parametrize("act", ["gelu", "softplus", "relu"])
def test_norm_function_q_is_second_order_taylor(act):
    """q(e) = theta0 + theta1 e + theta2 e^2 is the Taylor polynomial of h(r) = E phi(r g)
    at r = 1 + e: the error shrinks like e^3 (ratio over e^3 stays bounded and settles)."""
    phi = el.activation(act)[0]
    c = el.linear_constants(act)
    ratios = []
    for e in (0.04, 0.02, 0.01):
        h = el.gaussian_expectation(
            lambda x, e=e: phi(torch.as_tensor((1 + e) * x, dtype=torch.float64)).numpy())
        q = c.theta0 + c.theta1 * e + c.theta2 * e**2
        ratios.append(abs(h - q) / e**3)
    assert ratios[-1] < 1.0
    assert abs(ratios[-1] - ratios[-2]) < 0.1 * ratios[-2] + 1e-9


def test_tanh_is_odd_so_only_zeta_survives():
    c = el.linear_constants("tanh")
    for val in (c.nu, c.theta0, c.theta1, c.theta2):
        assert abs(val) < 1e-13
    assert abs(c.zeta - 0.6057055096021536) < 1e-9  # E sech^2(g), also checked above


# --- data ------------------------------------------------------------------------------

def test_make_data_assumption_3_1():
    n, d = 20000, 12
    X, S = el.make_data(n, d, spectrum="ramp", entries="rademacher", seed=3)
    assert abs(np.trace(S) - d) < 1e-10
    assert np.linalg.eigvalsh(S).max() <= 1.5 + 1e-12
    # sample covariance vs Sigma: each entry has standard error <= sqrt(E x_i^2 x_j^2 / n)
    C = X.T @ X / n
    se = np.sqrt((X**2).T @ (X**2) / n / n)
    assert np.max(np.abs(C - S) / se) < 5.0
    # ||x||^2 / d has mean 1
    r = (X**2).sum(1) / d
    assert abs(r.mean() - 1) < 5 * r.std() / math.sqrt(n)


def test_teacher_label_variances():
    n, d = 40000, 10
    X, S = el.make_data(n, d, seed=5)
    y_lin = el.teacher_labels(X, S, linear=1.0, quadratic=0.0, seed=2)
    y_quad = el.teacher_labels(X, S, linear=0.0, quadratic=1.0, seed=2)
    for y in (y_lin, y_quad):  # unit variance, mean zero, within 5 standard errors
        assert abs(y.mean()) < 5 * y.std() / math.sqrt(n)
        se_var = np.std(y**2) / math.sqrt(n)
        assert abs(y.var() - 1.0) < 5 * se_var


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="entries"):
        el.make_data(10, 3, entries="cauchy")
    with pytest.raises(ValueError, match="m must be even"):
        el.symmetric_init(3, 5)
    with pytest.raises(ValueError, match="act"):
        el.linear_constants("sigmoidish")
    with pytest.raises(ValueError, match="tr_sigma2_over_d"):
        el.linear_constants("relu", tr_sigma2_over_d=-1)
    with pytest.raises(ValueError, match="layers"):
        el.linear_kernel(np.ones((3, 2)), el.linear_constants("relu"), layers="third")
    with pytest.raises(ValueError, match="eta"):
        el.time_scale(10, 0.0)
    with pytest.raises(ValueError, match="checkpoints"):
        el.train_linear_model(np.ones((4, 2)), np.ones(4), el.linear_constants("relu"),
                              checkpoints=[3, 1])
    X, S = el.make_data(20, 3, seed=0)
    with pytest.raises(ValueError, match="eta too large"):
        el.train_linear_model(X, np.ones(20), el.linear_constants("relu"), eta=1e3,
                              checkpoints=[0, 1])


# --- network, NTK ----------------------------------------------------------------------

def test_symmetric_init_gives_zero_output_and_runs_axis():
    X, _ = el.make_data(30, 7, seed=1)
    W, v = el.symmetric_init(7, 12, runs=3, seed=4)
    assert W.shape == (3, 12, 7) and v.shape == (3, 12)
    assert torch.all(v.abs() == 1)
    f = el.network_output(X, W, v, "gelu")
    assert f.shape == (3, 30) and float(f.abs().max()) < 1e-14  # exactly 0 up to rounding
    assert not torch.equal(W[0], W[1])


@pytest.mark.parametrize("act", ["relu", "gelu", "tanh"])
def test_ntk_matches_autograd_jacobian(act):
    n, d, m = 25, 6, 10
    X, _ = el.make_data(n, d, seed=2)
    X2, _ = el.make_data(9, d, seed=3)
    W, v = el.symmetric_init(d, m, seed=5)
    W = W + 0.3 * torch.randn(W.shape, generator=torch.Generator().manual_seed(1),
                              dtype=W.dtype)  # break the symmetry: a generic point
    allX = torch.as_tensor(np.vstack([X, X2]))
    jac = []
    for i in range(allX.shape[0]):
        Wp, vp = W.clone().requires_grad_(True), v.clone().requires_grad_(True)
        f = el.network_output(allX[i:i + 1], Wp, vp, act)[0]
        gW, gv = torch.autograd.grad(f, (Wp, vp))
        jac.append((gW.flatten().numpy(), gv.numpy()))
    J1 = np.array([a for a, _ in jac])
    J2 = np.array([b for _, b in jac])
    for layers, J in (("first", J1), ("second", J2), ("both", np.hstack([J1, J2]))):
        K = el.ntk_at_init(X, W, v, act, layers)
        np.testing.assert_allclose(K, J[:n] @ J[:n].T, atol=1e-12, rtol=0)
        Kx = el.ntk_at_init(X2, W, v, act, layers, X2=X, block=3)
        np.testing.assert_allclose(Kx, J[n:] @ J[:n].T, atol=1e-12, rtol=0)


def test_train_network_matches_autograd_gd_and_runs_are_independent():
    n, d, m = 40, 5, 8
    X, S = el.make_data(n, d, seed=0)
    y = el.teacher_labels(X, S)
    W, v = el.symmetric_init(d, m, runs=2, seed=3)
    for layers in ("first", "second", "both"):
        res = el.train_network(X, y, W, v, act="gelu", eta=0.7, layers=layers,
                               checkpoints=[0, 2, 5], X_test=X[:7])
        assert res["train"].shape == (3, 2, n) and res["test"].shape == (3, 2, 7)
        for r in range(2):
            Wp, vp = W[r].clone().requires_grad_(True), v[r].clone().requires_grad_(True)
            for _ in range(5):
                out = el.network_output(X, Wp, vp, "gelu")
                loss = 0.5 * ((out - torch.as_tensor(y)) ** 2).mean()
                gW, gv = torch.autograd.grad(loss, (Wp, vp))
                with torch.no_grad():
                    if layers != "second":
                        Wp -= 0.7 * gW
                    if layers != "first":
                        vp -= 0.7 * gv
            ref = el.network_output(X, Wp, vp, "gelu").detach().numpy()
            np.testing.assert_allclose(res["train"][-1, r], ref, atol=1e-12, rtol=0)
            np.testing.assert_allclose(res["test"][-1, r], ref[:7], atol=1e-12, rtol=0)
            single = el.train_network(X, y, W[r], v[r], act="gelu", eta=0.7, layers=layers,
                                      checkpoints=[0, 2, 5])
            np.testing.assert_allclose(single["train"], res["train"][:, r], atol=1e-13)
        assert np.all(res["loss"][0] == 0.5 * np.mean(y**2))


# --- linear models -----------------------------------------------------------------------

def test_linear_kernels_structure():
    X, S = el.make_data(30, 4, seed=1)
    X2, _ = el.make_data(5, 4, seed=2)
    c = el.linear_constants("gelu", np.trace(S @ S) / 4)
    d = 4
    sxx = X2 @ X.T / d
    e1 = np.linalg.norm(X2, axis=1) / 2 - 1
    e2 = np.linalg.norm(X, axis=1) / 2 - 1
    q = lambda e: c.theta0 + c.theta1 * e + c.theta2 * e**2  # noqa: E731
    K1 = c.zeta**2 * sxx + c.nu**2 / d
    K2 = c.zeta**2 * sxx + c.nu**2 / (2 * d) + np.outer(q(e1), q(e2))
    np.testing.assert_allclose(el.linear_kernel(X2, c, "first", X2=X), K1, atol=1e-14)
    np.testing.assert_allclose(el.linear_kernel(X2, c, "second", X2=X), K2, atol=1e-14)
    np.testing.assert_allclose(el.linear_kernel(X2, c, "both", X2=X), K1 + K2, atol=1e-14)
    assert el.linear_features(X, c, "first").shape == (30, 5)
    assert el.linear_features(X, c, "both").shape == (30, 2 * 4 + 3)


def test_train_linear_model_matches_explicit_gd_and_kernel_gd():
    n, d, eta = 50, 6, 3.0
    X, S = el.make_data(n + 10, d, seed=7)
    y = el.teacher_labels(X, S)[:n]
    c = el.linear_constants("relu", np.trace(S @ S) / d)
    ts = [0, 1, 7, 40]
    for layers in ("first", "second", "both"):
        res = el.train_linear_model(X[:n], y, c, layers=layers, eta=eta, checkpoints=ts,
                                    X_test=X[n:])
        psi = el.linear_features(X[:n], c, layers)
        beta = np.zeros(psi.shape[1])
        for t in range(41):
            if t in ts:
                np.testing.assert_allclose(res["beta"][ts.index(t)], beta, atol=1e-12)
            beta = beta - eta / n * psi.T @ (psi @ beta - y)
        K = el.linear_kernel(X[:n], c, layers)
        Kx = el.linear_kernel(X[n:], c, layers, X2=X[:n])
        kg = el.kernel_gd_predictions(K, y, eta, ts, Kx)
        np.testing.assert_allclose(kg["train"], res["train"], atol=1e-10)
        np.testing.assert_allclose(kg["test"], res["test"], atol=1e-10)
        np.testing.assert_allclose(kg["loss"], res["loss"], atol=1e-12)


def test_time_scale_and_spectral_norms():
    assert abs(el.time_scale(100, 2.0) - 50 * math.log(100)) < 1e-12
    rng = np.random.default_rng(0)
    A = rng.standard_normal((300, 300))
    A = A + A.T
    dense = np.abs(np.linalg.eigvalsh(A)).max()
    assert abs(el.spectral_norm(A, exact_below=100) - dense) < 1e-8 * dense
    assert abs(el.spectral_norm(A, exact_below=10_000) - dense) < 1e-12 * dense
    B = np.eye(300)
    assert abs(el.spectral_distance(A + B, A) - 1.0) < 1e-8
    assert abs(el.spectral_distance(2 * B, B, relative=True) - 1.0) < 1e-12


# --- the key lemma, numerically ----------------------------------------------------------

def test_first_layer_ntk_close_to_linear_kernel_in_spectral_norm():
    """Prop. 3.4: ||Theta1(W(0)) - K1|| is a small fraction of ||K1|| = Theta(n/d), and the
    nu constant is needed (dropping it leaves an O(n/d) rank-one error)."""
    d = 64
    n = m = 2 * int(round(d**1.25))
    X, S = el.make_data(n, d, seed=11)
    W, v = el.symmetric_init(d, m, seed=12)
    c = el.linear_constants("gelu", np.trace(S @ S) / d)
    T1 = el.ntk_at_init(X, W, v, "gelu", "first")
    K1 = el.linear_kernel(X, c, "first")
    rel = el.spectral_distance(T1, K1, relative=True)
    rel_id = el.spectral_distance(T1 - c.diag1 * np.eye(n), K1, relative=True)
    c0 = el.LinearConstants(**{**c.__dict__, "nu": 0.0})
    rel_nonu = el.spectral_distance(T1, el.linear_kernel(X, c0, "first"), relative=True)
    assert rel < 0.25 and rel_id < rel and rel_nonu > 1.5 * rel
    # the Frobenius distance is not small: it is comparable to ||K1||_2 itself
    assert np.linalg.norm(T1 - K1) / el.spectral_norm(K1) > 1.0


def test_one_gd_step_is_kernel_gd_with_the_ntk_to_first_order():
    """f_1(X) = (eta/n) Theta(0) y + remainder. With the symmetric initialisation the
    second-order remainder cancels between the twin neurons r and r + m/2 (their v_r, hence
    their first-layer steps, have opposite signs, and their second-layer steps are equal), so
    the remainder is O(eta^3): it grows 8-fold when eta doubles. Training only the second layer,
    f is linear in v and one step is exactly kernel GD."""
    n, d, m = 30, 5, 40
    X, S = el.make_data(n, d, seed=4)
    y = el.teacher_labels(X, S)
    W, v = el.symmetric_init(d, m, seed=6)
    for layers in ("first", "second", "both"):
        K = el.ntk_at_init(X, W, v, "gelu", layers)
        errs = []
        for eta in (1e-2, 2e-2):
            net = el.train_network(X, y, W, v, act="gelu", eta=eta, layers=layers,
                                   checkpoints=[1])
            lin = el.kernel_gd_predictions(K, y, eta, [1])
            errs.append(np.abs(net["train"][0] - lin["train"][0]).max())
        if layers == "second":  # f is linear in v: one step is exactly kernel GD
            assert max(errs) < 1e-14
        else:
            assert 7.2 < errs[1] / errs[0] < 8.8, (layers, errs)


def test_experiment_helpers_shapes_and_limits():
    lem = el.lemma_sweep([8, 12], act="relu", seed=1)
    assert list(lem["d"]) == [8, 12] and all(n % 2 == 0 for n in lem["n"])
    assert all(np.isfinite(lem["slope_" + k]) for k in ("rel1", "rel1_id", "frob1", "rel"))
    r = el.agreement_run(8, n_per_d=4, n_test=50, t_max=2.0, n_checkpoints=8, seed=2)
    assert r["t"][0] == 0 and np.isnan(r["rel_test"][0])
    assert abs(r["T"] - 8 * math.log(8) / 1.0) < 1e-12  # eta = d/8 = 1
    # GD on a convex quadratic with a stable step: the linear model's training loss decreases
    assert np.all(np.diff(r["loss_lin"]) < 0)
    with pytest.raises(ValueError, match="layers"):
        el.agreement_run(8, layers="middle")


# --- the notebook's quoted numbers ----------------------------------------------------------

@pytest.mark.slow
def test_lf_7_1b_claims_hold_and_match_the_prose():  # ~35 s of CPU: the notebook's full runs
    from checks import lf_7_1b
    from checks.claims import REPO, first_number

    src = (REPO / lf_7_1b.NB).read_text()
    cs = lf_7_1b.claims(False)
    assert len(cs) >= 10
    for c in cs:
        assert c.ok, f"{c.id}: quoted {c.quoted}, computed {c.computed}, tol {c.tol}"
        if c.quote is not None:
            assert c.quote in src, f"{c.id}: quote {c.quote!r} not in the notebook"
            assert first_number(c.quote) == pytest.approx(c.quoted, abs=0, rel=1e-12), c.id
