"""Unit tests of td_lib.early_linear (Hu, Xiao, Adlam & Pennington 2020 setting)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import integrate
from scipy.special import expit

from td_lib import early_linear as el
from td_lib import hermite
from td_lib import kernel_flow as kf
from td_lib.core import activations
from td_lib.core.gaussian import gaussian_expectation

SQ2PI = math.sqrt(2 * math.pi)
KINK = [0.0]  # the kink of ReLU-type activations: split the Gaussian quadrature there


def _ge(h) -> float:
    """E h(g), g ~ N(0, 1), by the library's quadrature split at 0."""
    return float(gaussian_expectation(h, breakpoints=KINK))


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
    a = activations.get(act)
    dphi = lambda x: float(a.df(np.float64(x)))  # noqa: E731
    phi = lambda x: float(a.f(np.float64(x)))  # noqa: E731
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
    phi = activations.get(act).f
    c = el.linear_constants(act)
    ratios = []
    for e in (0.04, 0.02, 0.01):
        h = _ge(lambda x, e=e: phi((1 + e) * x))
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
    X, S = el.make_data(n, d, spectrum="ramp", entries="rademacher", rng=3)
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
    X, S = el.make_data(n, d, rng=5)
    y_lin = el.teacher_labels(X, S, linear=1.0, quadratic=0.0, rng=2)
    y_quad = el.teacher_labels(X, S, linear=0.0, quadratic=1.0, rng=2)
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
    X, S = el.make_data(20, 3, rng=0)
    with pytest.raises(ValueError, match="eta = 50 is too large"):
        el.train_linear_model(X, np.ones(20), el.linear_constants("relu"), eta=1e3,
                              checkpoints=[0, 1])


# --- network, NTK ----------------------------------------------------------------------

def test_symmetric_init_gives_zero_output_and_runs_axis():
    X, _ = el.make_data(30, 7, rng=1)
    W, v = el.symmetric_init(7, 12, runs=3, rng=4)
    assert W.shape == (3, 12, 7) and v.shape == (3, 12)
    assert torch.all(v.abs() == 1)
    f = el.network_output(X, W, v, "gelu")
    assert f.shape == (3, 30) and float(f.abs().max()) < 1e-14  # exactly 0 up to rounding
    assert not torch.equal(W[0], W[1])


@pytest.mark.parametrize("act", ["relu", "gelu", "tanh"])
def test_ntk_matches_autograd_jacobian(act):
    n, d, m = 25, 6, 10
    X, _ = el.make_data(n, d, rng=2)
    X2, _ = el.make_data(9, d, rng=3)
    W, v = el.symmetric_init(d, m, rng=5)
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
    X, S = el.make_data(n, d, rng=0)
    y = el.teacher_labels(X, S)
    W, v = el.symmetric_init(d, m, runs=2, rng=3)
    for layers in ("first", "second", "both"):
        res = el.train_network(X, y, W, v, activation="gelu", eta=0.7, layers=layers,
                               checkpoints=[0, 2, 5], X_test=X[:7])
        assert res.train.shape == (3, 2, n) and res.test.shape == (3, 2, 7)
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
            np.testing.assert_allclose(res.train[-1, r], ref, atol=1e-12, rtol=0)
            np.testing.assert_allclose(res.test[-1, r], ref[:7], atol=1e-12, rtol=0)
            single = el.train_network(X, y, W[r], v[r], activation="gelu", eta=0.7, layers=layers,
                                      checkpoints=[0, 2, 5])
            np.testing.assert_allclose(single.train, res.train[:, r], atol=1e-13)
        # f(0) = 0 at the symmetric init, so the initial loss is 0.5 mean(y^2) -- but torch's mean
        # and numpy's sum in different orders (and f(0) is 0 only to ~1e-16): an ulp or two apart
        np.testing.assert_allclose(res.loss[0], 0.5 * np.mean(y**2), rtol=1e-15, atol=0)


# --- linear models -----------------------------------------------------------------------

def test_linear_kernels_structure():
    X, S = el.make_data(30, 4, rng=1)
    X2, _ = el.make_data(5, 4, rng=2)
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
    X, S = el.make_data(n + 10, d, rng=7)
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
                np.testing.assert_allclose(res.beta[ts.index(t)], beta, atol=1e-12)
            beta = beta - eta / n * psi.T @ (psi @ beta - y)
        K = el.linear_kernel(X[:n], c, layers)
        Kx = el.linear_kernel(X[n:], c, layers, X2=X[:n])
        # kernel GD on the model's kernel (td_lib.kernel_flow, predictions (points, times))
        kg_train = kf.kernel_gd_predict(K, K, y, ts, eta=eta).T
        np.testing.assert_allclose(kg_train, res.train, atol=1e-10)
        np.testing.assert_allclose(kf.kernel_gd_predict(K, Kx, y, ts, eta=eta).T, res.test, atol=1e-10)
        np.testing.assert_allclose(0.5 * np.mean((kg_train - y) ** 2, axis=1), res.loss, atol=1e-12)
        assert isinstance(res, el.GDRun) and res.beta.shape == (len(ts), psi.shape[1]) and res.dW is None


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
    X, S = el.make_data(n, d, rng=11)
    W, v = el.symmetric_init(d, m, rng=12)
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
    X, S = el.make_data(n, d, rng=4)
    y = el.teacher_labels(X, S)
    W, v = el.symmetric_init(d, m, rng=6)
    for layers in ("first", "second", "both"):
        K = el.ntk_at_init(X, W, v, "gelu", layers)
        errs = []
        for eta in (1e-2, 2e-2):
            net = el.train_network(X, y, W, v, activation="gelu", eta=eta, layers=layers,
                                   checkpoints=[1])
            lin = kf.kernel_gd_predict(K, K, y, [1], eta=eta)[:, 0]
            errs.append(np.abs(net.train[0] - lin).max())
        if layers == "second":  # f is linear in v: one step is exactly kernel GD
            assert max(errs) < 1e-14
        else:
            assert 7.2 < errs[1] / errs[0] < 8.8, (layers, errs)


def _kernels_of(constants):
    """A linear_kernels function (X, activation, tr_sigma2_over_d) -> (K1, K2) built on ``constants``."""
    def kernels(X, activation, tr_sigma2_over_d=1.0):
        c = constants(activation, tr_sigma2_over_d)
        return el.linear_kernel(X, c, "first"), el.linear_kernel(X, c, "second")
    return kernels


def test_experiments_take_the_callers_linear_kernels():
    """lemma_sweep and agreement_run build the linear models from ``linear_kernels`` alone (zeta^2 and
    nu^2 read off K1): the library's kernels passed in give the default results; other constants
    give other results; a wrong shape is named."""
    mine = _kernels_of(el.linear_constants)
    a, b = el.lemma_sweep([8, 12], rng=1), el.lemma_sweep([8, 12], rng=1, linear_kernels=mine)
    for k in ("rel1", "rel1_id", "rel1_nonu", "frob1", "rel"):
        np.testing.assert_allclose(b[k], a[k], rtol=1e-10)
    off = _kernels_of(lambda act, t2: el.LinearConstants(**{**el.linear_constants(act, t2).__dict__, "zeta": 0.4}))
    assert not np.allclose(el.lemma_sweep([8], rng=1, linear_kernels=off)["rel1_id"], a["rel1_id"][:1])
    kw = dict(n_per_d=4, n_test=50, t_max=2.0, n_checkpoints=8, rng=2, activation="gelu")
    for layers in ("first", "both"):
        r, s = el.agreement_run(8, layers=layers, **kw), el.agreement_run(8, layers=layers, linear_kernels=mine, **kw)
        for k in ("test_lin", "lin_lin", "loss_lin", "mode_rates"):
            np.testing.assert_allclose(getattr(s, k), getattr(r, k), rtol=1e-9, atol=1e-12)
        assert abs(r.zeta2 - el.linear_constants("gelu").zeta ** 2) < 1e-12
    # the features returned are those of the linear model up to a rotation: the same kernel
    X, S = el.make_data(32 + 50, 8, rng=2)                    # the run's data: n = 4 d, n_test = 50
    c = el.linear_constants("gelu", np.trace(S @ S) / 8)
    psi = el.agreement_run(8, layers="first", **kw).psi_train
    np.testing.assert_allclose(psi @ psi.T, el.linear_kernel(X[:32], c, "first"), atol=1e-12)
    with pytest.raises(ValueError, match="linear_kernels must return two"):
        el.lemma_sweep([8], linear_kernels=lambda X, a, t: (np.eye(2), np.eye(2)))
    with pytest.raises(TypeError, match="linear_kernels must be a function"):
        el.agreement_run(8, linear_kernels=3)


def test_cnn_engines_need_only_the_arccos_kernels_for_relu(monkeypatch):
    """Without dual_activation (the student edition cuts it) the CNN kernels, constants and sweeps
    still run for ReLU and leaky ReLU, with the same numbers; a smooth activation is refused by name."""
    from td_lib.early_linear import cnn_kernel

    X = _cube(12, 8, 0)
    want = (el.cnn_ntk_infinite(X, 4, "leaky_relu"), el.cnn_walsh_rates("relu", 4, 8),
            el.cnn_linear_constants("relu", 4), el.cnn_kernel_sweep([8], [2, 4], rng=0))
    monkeypatch.delattr(cnn_kernel, "dual_activation")
    np.testing.assert_array_equal(el.cnn_ntk_infinite(X, 4, "leaky_relu"), want[0])
    assert el.cnn_walsh_rates("relu", 4, 8) == want[1]
    assert cnn_kernel._cnn_constants("relu", 4) == want[2]
    np.testing.assert_array_equal(el.cnn_kernel_sweep([8], [2, 4], rng=0)["rel"], want[3]["rel"])
    with pytest.raises(ValueError, match="activation='gelu'.*relu and leaky_relu only"):
        el.cnn_walsh_rates("gelu", 4, 8)


def test_experiment_helpers_shapes_and_limits():
    lem = el.lemma_sweep([8, 12], activation="relu", rng=1)
    assert list(lem["d"]) == [8, 12] and all(n % 2 == 0 for n in lem["n"])
    assert all(np.isfinite(lem["slope_" + k]) for k in ("rel1", "rel1_id", "frob1", "rel"))
    r = el.agreement_run(8, n_per_d=4, n_test=50, t_max=2.0, n_checkpoints=8, rng=2)
    assert r.t[0] == 0 and np.isnan(r.rel_test[0])
    assert abs(r.T - 8 * math.log(8) / 1.0) < 1e-12  # eta = d/8 = 1
    # GD on a convex quadratic with a stable step: the linear model's training loss decreases
    assert np.all(np.diff(r.loss_lin) < 0)
    # the demo's reference result: every field but the features, rebuilt into a record
    back = el.AgreementRun(**{k: v for k, v in vars(r).items() if k != "psi_train"})
    assert back.psi_train is None and np.array_equal(back.test_lin, r.test_lin) and back.time_label == "GD steps"
    with pytest.raises(ValueError, match="layers"):
        el.agreement_run(8, layers="middle")


# --- the notebook's quoted numbers ----------------------------------------------------------

@pytest.mark.slow
def test_lf_7_1b_claims_hold_and_match_the_prose():  # ~35 s of CPU: the notebook's full runs
    from checks import early_time_linear
    from checks.claims import REPO, first_number

    src = (REPO / early_time_linear.NB).read_text()
    cs = early_time_linear.claims(False)
    assert len(cs) >= 10
    for c in cs:
        assert c.ok, f"{c.id}: quoted {c.quoted}, computed {c.computed}, tol {c.tol}"
        if c.quote is not None:
            assert c.quote in src, f"{c.id}: quote {c.quote!r} not in the notebook"
            assert first_number(c.quote) == pytest.approx(c.quoted, abs=0, rel=1e-12), c.id


# --- time scale of the linear model (issue 13) ----------------------------------------------

def test_linear_mode_rates_are_eta_zeta2_lambda_over_d_and_govern_gd():
    """Without the constant feature the rates of GD on (5) are exactly eta zeta^2 lambda_k(Sigma_hat)/d,
    and the residual along an eigenvector shrinks by (1 - rate)^t."""
    n, d, eta = 200, 8, 3.0
    X, S = el.make_data(n, d, rng=9)
    c = el.LinearConstants(**{**el.linear_constants("relu").__dict__, "nu": 0.0})
    psi = el.linear_features(X, c, "first")
    rates = el.linear_mode_rates(psi, eta)
    lam = np.sort(np.linalg.eigvalsh(X.T @ X / n))[::-1]
    np.testing.assert_allclose(rates[:d], eta * c.zeta**2 * lam / d, rtol=1e-12)
    assert abs(rates[d]) < 1e-14 and np.all(np.diff(rates) <= 1e-15)
    # GD from zero: the training residual along each right-singular direction decays geometrically
    y = el.teacher_labels(X, S)
    ts = [0, 5, 17]
    res = el.gd_on_features(psi, y, eta=eta, checkpoints=ts)
    U, sv, _ = np.linalg.svd(psi, full_matrices=False)
    mu = eta * sv**2 / n
    for k, t in enumerate(ts):
        got = U.T @ (y - res.train[k])
        np.testing.assert_allclose(got, (1 - mu) ** t * (U.T @ y), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="psi_test"):
        el.gd_on_features(psi, y, checkpoints=[1], psi_test=np.ones((3, d + 2)))


def test_first_time_within():
    t = np.arange(6)
    v = np.array([5.0, 3.0, 2.05, 2.001, 1.9, 2.0])
    assert el.first_time_within(t, v, target=2.0, rtol=1e-3) == 3.0
    assert el.first_time_within(t, v, target=2.0, rtol=0.05) == 2.0
    assert el.first_time_within(t, v, target=2.0, rtol=0.0) == 4.0          # the first step at or below
    assert math.isnan(el.first_time_within(t, v, target=1.0, rtol=1e-3))
    with pytest.raises(ValueError, match="values"):
        el.first_time_within(t, v[:3], target=2.0, rtol=1e-3)
    with pytest.raises(ValueError, match="target"):
        el.first_time_within(t, v, target=-1.0, rtol=1e-3)


def test_agreement_run_reach_time_is_consistent_with_its_own_curve():
    r = el.agreement_run(8, n_per_d=6, n_test=60, t_max=6.0, n_checkpoints=40, rng=3)
    assert np.isfinite(r.lin_reach_T)
    i = np.flatnonzero(r.t_over_T >= r.lin_reach_T - 1e-12)[0]
    # at the first checkpoint past the reach time the linear model is within 0.1 % of the line
    assert r.test_lin[i] <= 1.001 * r.test_best_lin + 1e-12
    # and at the checkpoints before it, not yet
    assert np.all(r.test_lin[:i] > 1.001 * r.test_best_lin)


# --- the CNN of §4.1 (Prop. 4.1) -------------------------------------------------------------

def _cube(n, d, seed):
    return el.make_data(n, d, spectrum="flat", entries="rademacher", rotate=False, rng=seed)[0]


def _all_cube(d):
    return np.array([[1.0 if (i >> k) & 1 else -1.0 for k in range(d)] for i in range(2**d)])


def test_hypercube_data_and_patches():
    X = _cube(50, 7, 0)
    assert np.all(np.abs(X) == 1)
    P = el.cnn_patches(X, 3)
    assert P.shape == (50, 7, 3)
    for k in range(7):
        np.testing.assert_array_equal(P[:, k], X[:, [(k + j) % 7 for j in range(3)]])
    np.testing.assert_array_equal(el.cnn_patches(torch.as_tensor(X), 3).numpy(), P)
    J = el.local_overlaps(X[:5], 3, X)
    brute = np.array([[[P[i, k] @ P[j, k] for k in range(7)] for j in range(50)] for i in range(5)])
    np.testing.assert_array_equal(J, brute)
    np.testing.assert_array_equal(el.local_overlaps(X, 3, rows=slice(5, 9)), el.local_overlaps(X, 3)[5:9])


def test_cnn_symmetric_init_gives_zero_output():
    X = _cube(20, 9, 1)
    W, V = el.cnn_symmetric_init(d=9, q=4, m=10, rng=3)
    assert W.shape == (10, 4) and V.shape == (10, 9) and torch.all(V.abs() == 1)
    assert float(el.cnn_output(X, W, V, "gelu").abs().max()) < 1e-14


@pytest.mark.parametrize("act", ["relu", "gelu", "tanh"])
def test_cnn_ntk_matches_autograd_jacobian(act):
    X = _cube(9, 7, 2)
    X2 = _cube(4, 7, 3)
    W, V = el.cnn_symmetric_init(d=7, q=3, m=6, rng=4)
    W = W + 0.3 * torch.randn(W.shape, generator=torch.Generator().manual_seed(2), dtype=W.dtype)
    V = V * torch.linspace(0.5, 1.5, 7, dtype=V.dtype)   # a generic point
    allX = np.vstack([X, X2])
    J1, J2 = [], []
    for i in range(allX.shape[0]):
        Wp, Vp = W.clone().requires_grad_(True), V.clone().requires_grad_(True)
        gW, gV = torch.autograd.grad(el.cnn_output(allX[i:i + 1], Wp, Vp, act)[0], (Wp, Vp))
        J1.append(gW.flatten().numpy())
        J2.append(gV.flatten().numpy())
    J1, J2 = np.array(J1), np.array(J2)
    for layers, J in (("first", J1), ("second", J2), ("both", np.hstack([J1, J2]))):
        np.testing.assert_allclose(el.cnn_ntk(X, W, V, act, layers), J[:9] @ J[:9].T, atol=1e-12, rtol=0)
        np.testing.assert_allclose(el.cnn_ntk(X2, W, V, act, layers, X2=X), J[9:] @ J[:9].T, atol=1e-12,
                                   rtol=0)


def test_train_cnn_matches_autograd_gd():
    X = _cube(20, 6, 1)
    y = el.cnn_teacher_labels(X)
    W, V = el.cnn_symmetric_init(d=6, q=3, m=8, rng=2)
    for layers in ("first", "second", "both"):
        res = el.train_cnn(X, y, W, V, activation="gelu", eta=0.7, layers=layers, checkpoints=[0, 2, 5],
                           X_test=X[:4])
        assert res.train.shape == (3, 20) and res.test.shape == (3, 4)
        Wp, Vp = W.clone().requires_grad_(True), V.clone().requires_grad_(True)
        for _ in range(5):
            loss = 0.5 * ((el.cnn_output(X, Wp, Vp, "gelu") - torch.as_tensor(y)) ** 2).mean()
            gW, gV = torch.autograd.grad(loss, (Wp, Vp))
            with torch.no_grad():
                if layers != "second":
                    Wp -= 0.7 * gW
                if layers != "first":
                    Vp -= 0.7 * gV
        ref = el.cnn_output(X, Wp, Vp, "gelu").detach().numpy()
        np.testing.assert_allclose(res.train[-1], ref, atol=1e-12, rtol=0)
        np.testing.assert_allclose(res.test[-1], ref[:4], atol=1e-12, rtol=0)
        assert res.loss[0] == pytest.approx(0.5 * np.mean(y**2), abs=1e-14)


@pytest.mark.parametrize("act", ["relu", "leaky_relu", "gelu", "tanh", "softplus"])
def test_dual_activation_limits_price_and_mehler(act):
    phi, dphi = activations.get(act).f, activations.get(act).df
    c = hermite.coefficients(phi, 4, breakpoints=KINK)
    G, F = el.dual_activation(act, np.array([0.0, 1.0, -1.0]))
    assert abs(G[0] - c[0] ** 2) < 1e-11 and abs(F[0] - c[1] ** 2) < 1e-11
    assert abs(G[1] - _ge(lambda z: phi(z) ** 2)) < 1e-10
    assert abs(F[1] - _ge(lambda z: dphi(z) ** 2)) < 1e-10
    assert abs(G[2] - _ge(lambda z: phi(z) * phi(-z))) < 1e-10
    # Price's theorem: dGamma/ds = Phi (central difference, error O(h^2))
    for s0 in (-0.6, 0.2, 0.7):
        h = 1e-4
        dG = (el.dual_activation(act, s0 + h)[0] - el.dual_activation(act, s0 - h)[0]) / (2 * h)
        assert abs(dG - el.dual_activation(act, s0)[1]) < 1e-7
    # Mehler: Gamma(s) = sum_k c_k^2 s^k / k!, truncated at k = 4 (error O(s^5))
    s0 = 0.05
    mehler = sum(c[k] ** 2 * s0**k / math.factorial(k) for k in range(5))
    assert abs(el.dual_activation(act, s0)[0] - mehler) < 2e-7


def test_cnn_ntk_infinite_is_the_mean_of_the_finite_width_ntk():
    """E_{W,V} Theta(W, V) = Theta*: the average over independent initialisations agrees entrywise
    within 5 standard errors (and the infinite-width kernel is exact: no Monte Carlo inside)."""
    X = _cube(6, 8, 5)
    q, R = 3, 300
    K = np.array([el.cnn_ntk(X, *el.cnn_symmetric_init(d=8, q=q, m=8, rng=100 + r), "relu") for r in range(R)])
    mean, se = K.mean(0), K.std(0, ddof=1) / math.sqrt(R)
    inf = el.cnn_ntk_infinite(X, q, "relu")
    assert np.all(np.abs(mean - inf) < 5 * se + 1e-12)
    # layers add up, and the block size does not matter
    np.testing.assert_allclose(el.cnn_ntk_infinite(X, q, "relu", "first")
                               + el.cnn_ntk_infinite(X, q, "relu", "second"), inf, atol=1e-14)
    np.testing.assert_allclose(el.cnn_ntk_infinite(X, q, "relu", block=17), inf, atol=1e-14)


def test_cnn_linear_constants_exact_means_and_leading_order():
    h = hermite.coefficients(activations.get("relu").f, 2, breakpoints=KINK)
    errs1, errs2 = [], []
    for q in (4, 8, 16, 32, 64):
        c = el.cnn_linear_constants("relu", q)
        # the exact means equal the average of Theta*'s parts over all pairs of one window
        if q <= 8:
            X = _all_cube(q)
            for layers, val in (("first", c.const1), ("second", c.const2)):
                assert abs(el.cnn_ntk_infinite(X, q, "relu", layers).mean() - val) < 1e-12
        errs1.append(abs(q * c.const1 - h[2] ** 2))                 # const1 = c2^2/q + O(q^-2)
        errs2.append(abs(c.const2 - h[0] ** 2 - h[2] ** 2 / (2 * q)))  # + O(q^-2)
        # the identity part makes the diagonal exact: Theta*(x, x) = K_CNN(x, x) + kappa
        Xs = _cube(3, max(q, 8), q)
        Kd = np.diag(el.cnn_linear_kernel(Xs, c, "both")) + c.diag1 + c.diag2
        np.testing.assert_allclose(np.diag(el.cnn_ntk_infinite(Xs, q, "relu")), Kd, atol=1e-12)
    q = np.array([4, 8, 16, 32, 64])
    assert np.all(np.diff(errs1) < 0) and np.all(np.diff(errs2) < 0)
    assert np.all(np.asarray(errs1) * q < 0.2) and np.all(np.asarray(errs2) * q**2 < 0.2)


def test_cnn_walsh_rates_are_the_eigenvalues_on_the_whole_hypercube():
    d, q = 7, 3
    X = _all_cube(d)
    N = X.shape[0]
    for layers in ("first", "second", "both"):
        op = el.cnn_ntk_infinite(X, q, "relu", layers) / N    # the kernel operator on {-1, 1}^d
        r = el.cnn_walsh_rates("relu", q, d, layers)
        lin, loc = X[:, 2], X[:, 2] * X[:, 3]
        np.testing.assert_allclose(op @ lin, r["linear"] * lin, atol=1e-12)
        np.testing.assert_allclose(op @ loc, r["local"] * loc, atol=1e-12)
    c, h = el.cnn_linear_constants("relu", 16), hermite.coefficients(activations.get("relu").f, 2, breakpoints=KINK)
    r = el.cnn_walsh_rates("relu", 16, 64)
    assert abs(r["linear"] - 2 * c.zeta**2 / 64) < 1e-12          # ReLU: c_3 = c_5 = ... = 0
    lead = 3 * h[2] ** 2 * 15 / (64 * 16**2)
    assert 0 < (r["local"] - lead) / lead < 0.25                   # higher powers: O(1/q) more


def test_cnn_teacher_labels_exact_moments():
    X = _all_cube(6)
    y_lin = el.cnn_teacher_labels(X, linear=1.0, local=0.0, rng=3)
    y_loc = el.cnn_teacher_labels(X, linear=0.0, local=1.0, rng=3)
    for y in (y_lin, y_loc):
        assert abs(y.mean()) < 1e-12 and abs((y**2).mean() - 1) < 1e-12
    assert abs((y_lin * y_loc).mean()) < 1e-12
    assert np.abs(X.T @ y_loc).max() < 1e-10      # no linear function correlates with y_loc


def test_cnn_kernel_distance_shrinks_with_q_and_leading_constant_fails_with_d():
    r = el.cnn_kernel_sweep([16, 32], [2, 4, 16, 32], rng=1)
    assert r["rel"].shape == (2, 4) and np.isnan(r["rel"][0, 3]) and list(r["n"]) == [64, 152]
    assert r["rel"][1, 2] < 0.5 * r["rel"][1, 0]               # larger filters: closer to K_CNN
    assert r["rel_lead"][1, 0] > 1.5 * r["rel_lead"][0, 0]     # q = 2: the leading constant is off by O(d)
    assert np.all(r["rel"][:, :3] <= r["rel_noid"][:, :3])     # the identity part helps


@pytest.mark.parametrize("d, eta, t_max, n_checkpoints", [(16, 2.0, 16.0, 30), (32, 4.0, 16.0, 30),
                                                           (16, 2.0, 2.0, 30), (32, 4.0, 8.0, 30), (8, 1.0, 2.0, 8)])
def test_agreement_checkpoints_are_the_log_spaced_schedule(d, eta, t_max, n_checkpoints):
    """The agreement runs record at td_lib.core.run.checkpoints: the times of the former
    ``0, unique(round(logspace(0, log10 t_end, k)))``, the same for the sizes the course uses."""
    from td_lib.early_linear.experiments import _log_checkpoints

    T = el.time_scale(d, eta)
    t_end, ts = _log_checkpoints(T, t_max, n_checkpoints)
    old = np.unique(np.round(np.logspace(0, math.log10(t_end), n_checkpoints)))
    np.testing.assert_array_equal(ts, np.concatenate([[0], old.astype(int)]))


def test_cnn_agreement_run_small():
    r = el.cnn_agreement_run(8, 3, m=16, n_per_d=4, n_test=40, t_max=3.0, n_checkpoints=10, rng=1)
    assert r.t[0] == 0 and np.isnan(r.rel_test[0]) and r.m == 16
    assert abs(r.T - 8 * math.log(8) / 4.0) < 1e-12
    assert np.all(np.diff(r.loss_lin) < 0) and r.eta_K_over_n < 2
    assert 0 < r.rate_local < r.rate_linear


def test_cnn_bad_arguments_are_named():
    X = _cube(5, 6, 0)
    with pytest.raises(ValueError, match="q"):
        el.cnn_patches(X, 7)
    with pytest.raises(ValueError, match="m must be even"):
        el.cnn_symmetric_init(d=6, q=3, m=5)
    with pytest.raises(ValueError, match="X must lie on the hypercube"):
        el.local_overlaps(X * 1.5, 3)
    with pytest.raises(ValueError, match="X2"):
        el.cnn_ntk_infinite(X, 3, X2=X[:, :4])
    with pytest.raises(ValueError, match="s must be a correlation"):
        el.dual_activation("relu", 1.5)
    with pytest.raises(ValueError, match="d must be >= 3"):
        el.cnn_teacher_labels(X[:, :2])
    W, V = el.cnn_symmetric_init(d=6, q=3, m=4)
    with pytest.raises(ValueError, match="X must have shape"):
        el.cnn_output(X[:, :5], W, V)
    with pytest.raises(ValueError, match="layers"):
        el.cnn_ntk(X, W, V, layers="third")


def test_closed_form_gd_with_oscillating_modes():
    """1 <= eta mu < 2: the mode oscillates but converges; the closed form must follow explicit GD."""
    rng = np.random.default_rng(0)
    psi = rng.standard_normal((12, 3))
    y = rng.standard_normal(12)
    mu_max = np.linalg.eigvalsh(psi.T @ psi / 12).max()
    eta = 1.6 / mu_max                                  # top mode has eta mu = 1.6
    res = el.gd_on_features(psi, y, eta=eta, checkpoints=[0, 1, 2, 7, 30])
    b = np.zeros(3)
    for t in range(31):
        if t in (0, 1, 2, 7, 30):
            np.testing.assert_allclose(res.beta[[0, 1, 2, 7, 30].index(t)], b, atol=1e-10)
        b = b - eta / 12 * psi.T @ (psi @ b - y)


# --- the td_lib.core conventions (rng, progress, activation names) ---------------------------

def test_rng_accepts_a_seed_or_a_generator_with_the_same_stream():
    X0, S0 = el.make_data(6, 3, rng=5)
    X1, S1 = el.make_data(6, 3, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(X0, X1)
    np.testing.assert_array_equal(S0, S1)
    W0, v0 = el.symmetric_init(3, 4, rng=7)
    W1, v1 = el.symmetric_init(3, 4, rng=torch.Generator().manual_seed(7))
    assert torch.equal(W0, W1) and torch.equal(v0, v1)
    Wc0, Vc0 = el.cnn_symmetric_init(d=5, q=2, m=4, rng=3)
    Wc1, Vc1 = el.cnn_symmetric_init(d=5, q=2, m=4, rng=torch.Generator().manual_seed(3))
    assert torch.equal(Wc0, Wc1) and torch.equal(Vc0, Vc1)
    with pytest.raises(TypeError, match="rng"):
        el.make_data(4, 2, rng="zero")


def test_progress_bar_is_optional_and_labelled(capsys):
    quiet = el.cnn_kernel_sweep([8], [2], rng=0)
    assert capsys.readouterr().out == ""
    loud = el.cnn_kernel_sweep([8], [2], rng=0, progress="CNN sweep")
    assert "CNN sweep" in capsys.readouterr().out
    np.testing.assert_array_equal(quiet["rel"], loud["rel"])
    with pytest.raises(TypeError, match="progress"):
        el.cnn_kernel_sweep([8], [2], progress=1)


def test_activations_are_the_registry_ones_and_errors_name_the_argument():
    assert el.ACTIVATION_NAMES == ("relu", "leaky_relu", "gelu", "tanh", "softplus")
    for name in el.ACTIVATION_NAMES:
        assert name in activations.names()
    with pytest.raises(ValueError, match="activation"):
        el.dual_activation("erf_sqrt2", 0.5)
    with pytest.raises(ValueError, match="activation"):
        el.network_output(np.ones((2, 3)), *el.symmetric_init(3, 2), activation="sigmoidish")


def test_lemma_sweep_takes_an_ntk_the_student_wrote():
    def my_ntk(X, W, v, phi, dphi):  # numpy in, (Theta1, Theta2) out, as Exercise 7.1b.B asks
        n, d = X.shape
        Z = X @ W.T / np.sqrt(d)
        return (X @ X.T / d) * ((dphi(Z) * v**2) @ dphi(Z).T) / W.shape[0], phi(Z) @ phi(Z).T / W.shape[0]

    a = el.lemma_sweep([8, 12], activation="relu", rng=2)
    b = el.lemma_sweep([8, 12], activation="relu", rng=2, ntk=my_ntk)
    for k in ("rel1", "rel1_id", "rel1_nonu", "frob1", "rel"):
        np.testing.assert_allclose(b[k], a[k], rtol=1e-12, err_msg=k)
    with pytest.raises(ValueError, match=r"ntk must return two \(26, 26\) matrices"):
        el.lemma_sweep([8], rng=2, ntk=lambda X, W, v, phi, dphi: (np.eye(3), np.eye(3)))
    with pytest.raises(TypeError, match="ntk must be a function"):
        el.lemma_sweep([8], rng=2, ntk="relu")
