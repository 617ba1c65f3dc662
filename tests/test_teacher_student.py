"""Unit tests of td_lib.teacher_student (§7.4, Tian 2020)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

from td_lib import teacher_student as ts
from td_lib.teacher_student import demos


def _pair(d, theta, norm_star, norm_k, rng):
    return ts.pair_at_angle(d=d, theta=theta, norm_star=norm_star, norm_k=norm_k, rng=rng)


# ---------------------------------------------------------------- Theorem 6


@pytest.mark.parametrize("theta", [0.2, 1.0, np.pi / 2, 2.2, 3.0])
def test_theorem6_monte_carlo_gaussian(theta):
    """Closed form vs Monte Carlo within 4.5 standard errors in every coordinate
    (5 angles × 6 coordinates = 30 comparisons: P(any |z| > 4.5) ≈ 2e-4)."""
    rng = np.random.default_rng(11)
    ws, wk = _pair(6, theta, 1.7, 0.6, rng)
    mean, se = ts.relu_cross_moment_mc(ws, wk, n=400_000, rng=int(theta * 1000))
    cf = ts.relu_cross_moment(ws, wk)
    z = np.abs(mean - cf) / se
    assert z.max() < 4.5, (z, mean, cf)


def test_theorem6_monte_carlo_sphere():
    rng = np.random.default_rng(12)
    ws, wk = _pair(5, 1.3, 0.8, 2.0, rng)
    mean, se = ts.relu_cross_moment_mc(ws, wk, n=400_000, rng=3, dist="sphere")
    cf = ts.relu_cross_moment(ws, wk, dist="sphere", radius=1.0)
    assert (np.abs(mean - cf) / se).max() < 4.5


def test_theorem6_quadrature_in_the_plane():
    """2-D Gaussian: polar quadrature of E[x 1{w_k·x>0} relu(w*·x)] vs closed form."""
    for theta in (0.3, 1.4, 2.9):
        ws = np.array([1.0, 0.0])
        wk = np.array([np.cos(theta), np.sin(theta)])

        def comp(i, th=theta):
            # ∫_0^∞ r^3 e^{-r²/2}/(2π) dr = 1/π ; angular part over the joint active arc
            f = lambda ph: (np.cos(ph) if i == 0 else np.sin(ph)) * np.cos(ph)
            return integrate.quad(f, th - np.pi / 2, np.pi / 2)[0] / np.pi

        quad = np.array([comp(0), comp(1)])
        np.testing.assert_allclose(ts.relu_cross_moment(ws, wk), quad, atol=1e-12)


def test_theorem6_special_values_and_homogeneity():
    rng = np.random.default_rng(0)
    ws = rng.standard_normal(7)
    # θ = 0: E[x relu(w·x)] = w/2 ; θ = π: 0
    np.testing.assert_allclose(ts.relu_cross_moment(ws, 3 * ws), ws / 2, atol=1e-12)
    np.testing.assert_allclose(ts.relu_cross_moment(ws, -ws), 0 * ws, atol=1e-12)
    wk = rng.standard_normal(7)
    base = ts.relu_cross_moment(ws, wk)
    # degree 1 in w*, degree 0 in w_k, σ² in the input scale
    np.testing.assert_allclose(ts.relu_cross_moment(2.5 * ws, wk), 2.5 * base, atol=1e-12)
    np.testing.assert_allclose(ts.relu_cross_moment(ws, 7.0 * wk), base, atol=1e-12)
    np.testing.assert_allclose(ts.relu_cross_moment(ws, wk, sigma=3.0), 9 * base, atol=1e-12)
    # vectorised over a batch of pairs
    W = rng.standard_normal((4, 7))
    out = ts.relu_cross_moment(W, wk)
    for i in range(4):
        np.testing.assert_allclose(out[i], ts.relu_cross_moment(W[i], wk), atol=1e-14)


def test_theorem6_bad_input_named():
    with pytest.raises(ValueError, match="w_k"):
        ts.relu_cross_moment(np.ones(3), np.zeros(3))
    with pytest.raises(ValueError, match="w_star and w_k"):
        ts.relu_cross_moment(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="dist"):
        ts.relu_cross_moment(np.ones(3), np.ones(3), dist="laplace")
    with pytest.raises(ValueError, match="n must be >= 2"):
        ts.relu_cross_moment_mc(np.ones(3), np.ones(3), n=1)


# ---------------------------------------------------------------- eq. 12


def test_angle_velocity_limits():
    a = 1.7
    eps = np.array([1e-2, 1e-3, 1e-4])
    v = ts.angle_velocity(np.pi - eps, a)
    np.testing.assert_allclose(v / (-a * eps**2 / (2 * np.pi)), 1.0, atol=2e-5)
    th = np.array([1e-3, 1e-4])
    np.testing.assert_allclose(ts.angle_velocity(th, a) / (-a * th / 2), 1.0, atol=1e-3)
    assert ts.angle_velocity(np.pi / 2, 1.0) == pytest.approx(-0.25, abs=1e-15)


def test_escape_time_matches_integrator_and_asymptotics():
    a = 0.8
    te = np.pi / 2
    eps = np.array([1e-1, 1e-2, 1e-3])
    t = ts.escape_time(theta_start=np.pi - eps, theta_end=te, alpha=a)
    # integrating eq. 12 for exactly that long lands on θ_end
    for e, ti in zip(eps, t):
        th = ts.integrate_angle(np.pi - e, np.array([0.0, ti]), alpha=a)[-1]
        assert th == pytest.approx(te, abs=1e-7)
    # direct quadrature of dθ / (α ψ sinθ)
    for e, ti in zip(eps, t):
        q = integrate.quad(lambda x: -1 / ts.angle_velocity(x, a), te, np.pi - e,
                           limit=200, epsrel=1e-12)[0]
        assert ti == pytest.approx(q, rel=1e-9)
    asym = ts.escape_time_asymptotic(eps=eps, theta_end=te, alpha=a)
    c = ts.escape_time_constant(te, a)
    # exact − asymptotic = c − (2π/α)∫_0^ε (1/(u sin u) − 1/u²) du = c − (2π/α)(ε/6 + O(ε³))
    np.testing.assert_allclose(t - asym - c, -2 * np.pi / a * eps / 6, rtol=1e-3)
    # so ε·t → 2π/α, monotonically here
    gap = np.abs(t * eps - 2 * np.pi / a)
    assert np.all(np.diff(gap) < 0) and gap[-1] < 2e-3 * 2 * np.pi / a


def test_angle_bad_input_named():
    with pytest.raises(ValueError, match="alpha"):
        ts.angle_velocity(1.0, alpha=-1)
    with pytest.raises(ValueError, match="theta_start"):
        ts.escape_time(theta_start=0.5, theta_end=1.0)
    with pytest.raises(ValueError, match="theta0"):
        ts.integrate_angle(np.pi, [0.0, 1.0])
    with pytest.raises(ValueError, match="eps"):
        ts.escape_time_asymptotic(eps=0.0, theta_end=1.0)


# ---------------------------------------------------------------- measures


def test_student_containing_teacher_has_measure_one():
    """A student whose nodes include positive multiples of every teacher node (plus extra
    random nodes, in shuffled order) has best correlation 1 and best cosine 1 per node."""
    rng = np.random.default_rng(5)
    T = ts.make_teacher(d=8, m=4, C=3, p=1.0, runs=2, rng=1)
    extra = rng.standard_normal((2, 9, 6))
    W = np.concatenate([T.W * rng.uniform(0.5, 3.0, size=(2, 1, 4)), extra], axis=2)
    perm = rng.permutation(10)
    S = ts.Net(W[:, :, perm], rng.standard_normal((2, 10, 3)))
    X = rng.standard_normal((3000, 8))
    corr = ts.activation_correlation(ts.hidden(T, X), ts.hidden(S, X))
    best, arg = ts.best_match(corr)
    np.testing.assert_allclose(best, 1.0, atol=1e-12)
    np.testing.assert_array_equal(perm[arg], np.broadcast_to(np.arange(4), (2, 4)))
    bc, _ = ts.best_match(ts.weight_cosine(T.W, S.W))
    np.testing.assert_allclose(bc, 1.0, atol=1e-12)
    np.testing.assert_array_equal(ts.coverage_counts(best), np.full((2, 6), 4))


def test_correlation_matches_numpy_and_dead_nodes():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((500, 3))
    B = np.c_[rng.standard_normal((500, 2)), np.zeros(500)]
    c = ts.activation_correlation(A, B)
    ref = np.corrcoef(A.T, B[:, :2].T)[:3, 3:]
    np.testing.assert_allclose(c[:, :2], ref, atol=1e-12)
    np.testing.assert_array_equal(c[:, 2], 0.0)  # a dead node correlates with nothing


def test_teacher_construction():
    T = ts.make_teacher(d=30, m=6, C=5, p=[0.0, 2.0], runs=2, rng=3, active_range=(0.4, 0.6))
    np.testing.assert_allclose(np.linalg.norm(T.W, axis=1), 1.0, atol=1e-12)
    nv = np.linalg.norm(T.V, axis=2)
    np.testing.assert_allclose(nv[0], 1.0, atol=1e-12)
    np.testing.assert_allclose(nv[1], np.arange(1, 7) ** -2.0, atol=1e-12)
    X = np.random.default_rng(0).standard_normal((100_000, 30))
    frac = (ts.hidden(T, X) > 0).mean(axis=1)
    assert np.all(np.abs(frac - T.info["active_fraction"]) < 5 * 0.5 / np.sqrt(1e5))


def test_first_match_and_coverage():
    t = np.array([0, 10, 20, 30])
    bh = np.array([[0.1, 0.2], [0.96, 0.5], [0.9, 0.94], [0.97, 0.951]])
    np.testing.assert_array_equal(ts.first_match_times(t, bh, 0.95), [10.0, 30.0])
    np.testing.assert_array_equal(ts.first_match_times(t, bh, 0.99), [np.inf, np.inf])
    np.testing.assert_array_equal(ts.coverage_counts(bh[-1], [0.5, 0.96, 0.99]), [2, 1, 0])
    with pytest.raises(ValueError, match="thresholds"):
        ts.coverage_counts(bh[-1], [1.5])
    with pytest.raises(ValueError, match="best_history"):
        ts.first_match_times(t, bh[:3])


def test_make_student_widths_and_zero_nodes_stay_zero():
    T = ts.make_teacher(d=6, m=3, C=2, p=1.0, runs=3, rng=0)
    S = ts.make_student(T, factor=[1, 2, 5], rng=1)
    assert S.width == 15
    alive = (np.abs(S.W).sum(1) > 0)
    np.testing.assert_array_equal(alive.sum(1), [3, 6, 15])
    h = ts.train(T, S, steps=300, eta=0.1, batch=8, eval_every=100, n_eval=200, rng=0)
    dead = ~alive
    assert np.all(h.student.W[:, :, :][np.broadcast_to(dead[:, None, :], h.student.W.shape)] == 0)
    assert np.all(h.vnorm[-1][dead] == 0)
    with pytest.raises(ValueError, match="factor"):
        ts.make_student(T, factor=[1, 2])
    with pytest.raises(TypeError, match="factor"):
        ts.make_student(T, factor=1.5)


def test_train_reduces_loss_online_and_finite():
    T = ts.make_teacher(d=8, m=3, C=3, p=0.0, runs=2, rng=4)
    S = ts.make_student(T, factor=2, rng=5)
    for n_train in (None, 500):
        h = ts.train(T, S, steps=2000, eta=0.1, batch=16, n_train=n_train, eval_every=500,
                     n_eval=500, rng=1)
        assert h.loss.shape == (5, 2) and h.corr.shape == (5, 2, 3, 6)
        assert np.all(h.loss[-1] < 0.1 * h.loss[0])


def test_train_returns_a_run_recorded_at_the_checkpoints():
    from td_lib.core.run import Run, checkpoints

    T = ts.make_teacher(d=5, m=2, C=2, p=1.0, rng=0)
    S = ts.make_student(T, factor=2, rng=1)
    h = ts.train(T, S, steps=250, eta=0.1, eval_every=100, n_eval=50, rng=2)
    assert isinstance(h, Run) and ts.History.time_label == "SGD steps"
    np.testing.assert_array_equal(h.t, [0, 100, 200, 250])
    assert h.at(200) == 2 and h.final("loss").shape == (1,)
    h = ts.train(T, S, steps=300, eta=0.1, n_eval=50, rng=2, log_eval=True)
    np.testing.assert_array_equal(h.t, checkpoints(300, num=60, rounding="round"))
    assert h.corr.shape[0] == h.t.size


def test_train_bad_input_named():
    T = ts.make_teacher(d=5, m=2, C=2, p=1.0, rng=0)
    S = ts.make_student(T, factor=2, rng=0)
    with pytest.raises(ValueError, match="eta"):
        ts.train(T, S, steps=10, eta=0.0)
    with pytest.raises(ValueError, match="steps"):
        ts.train(T, S, steps=0, eta=0.1)
    with pytest.raises(TypeError, match="student"):
        ts.train(T, "student", steps=1, eta=0.1)
    with pytest.raises(ValueError, match="p must"):
        ts.make_teacher(d=5, m=2, C=2, p=-1.0)
    with pytest.raises(ValueError, match="X must"):
        ts.hidden(T, np.ones((4, 3)))


def test_focus_shift_detector():
    T_, m, n = 5, 3, 2
    c = np.zeros((T_, 1, m, n))
    c[:, 0, 0, 0] = [0.1, 0.5, 0.8, 0.5, 0.3]  # node 0 chases teacher 0 ...
    c[:, 0, 1, 0] = [0.0, 0.1, 0.2, 0.7, 0.99]  # ... then shifts to teacher 1
    c[:, 0, 0, 1] = [0.1, 0.5, 0.9, 0.95, 0.99]  # node 1 stays with teacher 0
    ev = ts.focus_shifts(c)
    assert len(ev) == 1
    e = ev[0]
    assert (e["run"], e["node"], e["j1"], e["j2"], e["t_peak"]) == (0, 0, 0, 1, 2)


def test_run_experiment_pairs_draws_across_p_and_width():
    """Same index -> same teacher directions across p, and the ×1 student is the first m
    nodes of the ×5 student at initialisation (checked through a 1-step run with tiny eta)."""
    ex = demos.run_experiment([(0.0, 5, 0), (2.0, 1, 0), (1.0, 5, 1)], d=4, m=2, C=3,
                              steps=1, eta=1e-12, batch=2, eval_every=1, n_eval=50, rng=3)
    W, Vt = ex.teacher.W, ex.teacher.V
    np.testing.assert_array_equal(W[0], W[1])
    u = Vt / np.linalg.norm(Vt, axis=2, keepdims=True)
    np.testing.assert_allclose(u[0], u[1], atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(Vt[1], axis=1), [1.0, 0.25], atol=1e-14)
    assert not np.allclose(W[0], W[2])
    Ws = ex.history.student.W
    np.testing.assert_allclose(Ws[1, :, :2], Ws[0, :, :2], atol=1e-9)
    assert np.all(Ws[1, :, 2:] == 0) and np.all(np.abs(Ws[0, :, 2:]).sum(0) > 0)
    np.testing.assert_array_equal(ex.select(p=1.0), [2])
    np.testing.assert_array_equal(ex.select(factor=5), [0, 2])
    with pytest.raises(ValueError, match="configs"):
        demos.run_experiment([(1.0, 5)], steps=1)


# ------------------------------------------- population gradient flow and eq. 10 (Demo 7.4.5)


def _two_layer(seed=0, d=5, n=3, m=2, C=2):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((d, n)), 0.5 * rng.standard_normal((n, C)),
            rng.standard_normal((d, m)), rng.standard_normal((m, C)))


def test_relu_kernel_closed_form():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(6), rng.standard_normal(6)
    # K(a, b) = bᵀ M(a, b), symmetric, σ² scaling, θ = 0 and θ = π
    k = ts.relu_kernel(a, b)
    assert k == pytest.approx(b @ ts.relu_cross_moment(a, b), rel=1e-12)
    assert k == pytest.approx(ts.relu_kernel(b, a), rel=1e-12)
    assert ts.relu_kernel(a, b, sigma=2.0) == pytest.approx(4 * k, rel=1e-12)
    assert ts.relu_kernel(a, 3 * a) == pytest.approx(3 * (a @ a) / 2, rel=1e-12)
    assert ts.relu_kernel(a, -a) == pytest.approx(0.0, abs=1e-14)
    x = np.random.default_rng(5).standard_normal((400_000, 6))
    v = np.maximum(x @ a, 0) * np.maximum(x @ b, 0)
    assert abs(v.mean() - k) < 4.5 * v.std() / np.sqrt(v.size)
    with pytest.raises(ValueError, match="a and b"):
        ts.relu_kernel(np.ones(3), np.ones(4))


def test_population_gradient_matches_monte_carlo():
    """Closed form vs Monte Carlo of the per-sample gradient, every entry within 4.5 standard
    errors (15 + 6 comparisons: false alarm ≈ 1.5e-4)."""
    W, Vo, Wt, Vt = _two_layer()
    dW, dV = ts.population_gradient(W, Vo, Wt, Vt)
    mW, mV, sW, sV = ts.population_gradient_mc(W, Vo, Wt, Vt, n=400_000, rng=1)
    assert np.abs((mW - dW) / sW).max() < 4.5
    assert np.abs((mV - dV) / sV).max() < 4.5
    # σ: every second moment scales by σ²
    dW2, dV2 = ts.population_gradient(W, Vo, Wt, Vt, sigma=1.5)
    mW2, _, sW2, _ = ts.population_gradient_mc(W, Vo, Wt, Vt, n=400_000, rng=2, sigma=1.5)
    assert np.abs((mW2 - dW2) / sW2).max() < 4.5
    assert not np.allclose(dW2, dW)


def test_pull_independent_of_w_norm_and_linear_in_fan_out():
    """The gate ignores ‖w_k‖: the part of ẇ_k orthogonal to w_k does not change when w_k is
    rescaled; it is proportional to ‖v_k‖ (ẇ_k = ‖v_k‖ r̂_k). Exact identities."""
    W, Vo, Wt, Vt = _two_layer(seed=3)
    u = W[:, 0] / np.linalg.norm(W[:, 0])
    P = np.eye(W.shape[0]) - np.outer(u, u)
    base = P @ ts.population_gradient(W, Vo, Wt, Vt)[0][:, 0]
    for c in (0.1, 3.0, 17.0):
        Wc = W.copy()
        Wc[:, 0] *= c
        np.testing.assert_allclose(P @ ts.population_gradient(Wc, Vo, Wt, Vt)[0][:, 0], base,
                                   atol=1e-13)
        Vc = Vo.copy()
        Vc[0] *= c
        np.testing.assert_allclose(P @ ts.population_gradient(W, Vc, Wt, Vt)[0][:, 0], c * base,
                                   atol=1e-12)
    # the component along w_k: the self-term -‖v_k‖² w_k/2 is the only one linear in ‖w_k‖
    g1 = ts.population_gradient(W, Vo, Wt, Vt)[0][:, 0] @ u
    Wc = W.copy()
    Wc[:, 0] *= 2.0
    g2 = ts.population_gradient(Wc, Vo, Wt, Vt)[0][:, 0] @ u
    assert g2 - g1 == pytest.approx(-(Vo[0] @ Vo[0]) * np.linalg.norm(W[:, 0]) / 2, rel=1e-10)


def test_population_flow_conserves_balance_and_learns():
    W, Vo, Wt, Vt = _two_layer(seed=6)
    t = np.linspace(0, 20, 11)
    Wf, Vf = ts.population_flow(W, Vo, Wt, Vt, t)
    bal = np.linalg.norm(Wf, axis=1) ** 2 - np.linalg.norm(Vf, axis=2) ** 2
    np.testing.assert_allclose(bal, np.broadcast_to(bal[0], bal.shape), atol=1e-7)
    assert Wf.shape == (11,) + W.shape and Vf.shape == (11,) + Vo.shape

    def loss(W_, V_):  # ½E‖f* − f‖² in closed form
        return 0.5 * (Vt.T @ ts.relu_kernel(Wt.T[:, None], Wt.T[None]) @ Vt
                      - 2 * Vt.T @ ts.relu_kernel(Wt.T[:, None], W_.T[None]) @ V_
                      + V_.T @ ts.relu_kernel(W_.T[:, None], W_.T[None]) @ V_).trace()
    losses = [loss(Wf[i], Vf[i]) for i in range(t.size)]
    assert np.all(np.diff(losses) <= 1e-12) and losses[-1] < 0.5 * losses[0]
    Wg, Vg = ts.population_flow(W, Vo, Wt, Vt, t[:3], train_v=False)
    np.testing.assert_array_equal(Vg, np.broadcast_to(Vo, Vg.shape))
    assert not np.allclose(Wg[-1], W)
    with pytest.raises(FloatingPointError, match="collapsed"):  # fixed V: node 2 dies
        ts.population_flow(W, Vo, Wt, Vt, t, train_v=False)
    with pytest.raises(ValueError, match="V0"):
        ts.population_flow(W, Vo[:2], Wt, Vt, t)
    with pytest.raises(ValueError, match="W has a zero column"):
        ts.population_gradient(np.zeros_like(W), Vo, Wt, Vt)
    with pytest.raises(ValueError, match="V_star"):
        ts.population_gradient(W, Vo, Wt, Vt[:, :1])


def test_eq10_norm_scan():
    sw = ts.eq10_norm_scan(which="w", n=50_000)
    sv = ts.eq10_norm_scan(which="v", n=50_000)
    assert sw["slope_exact"] == pytest.approx(0.0, abs=1e-9)
    assert sv["slope_exact"] == pytest.approx(1.0, abs=1e-9)
    for s, want in ((sw, 0.0), (sv, 1.0)):
        assert abs(s["slope_mc"] - want) < 4 * s["slope_se"]
        assert s["z"] < 4.5
    # eq. 10's prediction (slope 1 against ‖w_k‖) is excluded by many standard errors
    assert abs(sw["slope_mc"] - 1.0) > 20 * sw["slope_se"]
    with pytest.raises(ValueError, match="which"):
        ts.eq10_norm_scan(which="x")
    with pytest.raises(ValueError, match="scales"):
        ts.eq10_norm_scan(scales=(1.0,))


def test_escape_time_theorem6_has_the_constant():
    """Integrated from Theorem 6's vector: the eq. 12 time times ‖w_k‖/σ² (for any α)."""
    for eps, te, a, s, nk in ((1e-3, np.pi / 2, 1.0, 1.0, 1.0), (0.05, 1.0, 0.5, 2.0, 3.0),
                              (0.3, 0.2, 2.0, 0.7, 0.4)):
        got = ts.escape_time_theorem6(eps=eps, theta_end=te, alpha=a, sigma=s, norm_k=nk)
        want = float(ts.escape_time(theta_start=np.pi - eps, theta_end=te, alpha=a)) * nk / s**2
        assert got == pytest.approx(want, rel=1e-7)
    # near π: the asymptotic law with the constant 2π‖w_k‖/(ασ²)
    got = ts.escape_time_theorem6(eps=1e-4, theta_end=np.pi / 2, alpha=1.5, sigma=2.0, norm_k=3.0)
    asym = 2 * np.pi * 3.0 / (1.5 * 4.0) * (1e4 - 2 / np.pi)
    assert got / asym == pytest.approx(1.0, abs=1e-3)
    with pytest.raises(ValueError, match="theta_end"):
        ts.escape_time_theorem6(eps=0.1, theta_end=3.1, alpha=1.0)
    with pytest.raises(ValueError, match="norm_k"):
        ts.escape_time_theorem6(eps=0.1, theta_end=1.0, alpha=1.0, norm_k=0.0)


# ------------------------------------------------------------- conventions (rng, progress, threads)


def test_rng_progress_and_threads_conventions(capsys):
    """An int seed and a Generator seeded with it give the same draws; progress=<label> shows
    a bar with that label; train restores torch's thread count; bad values name the argument."""
    import torch

    T = ts.make_teacher(d=4, m=2, C=2, p=1.0, rng=3)
    np.testing.assert_array_equal(T.W, ts.make_teacher(d=4, m=2, C=2, p=1.0, rng=np.random.default_rng(3)).W)
    S = ts.make_student(T, factor=2, rng=4)
    before = torch.get_num_threads()
    h1 = ts.train(T, S, steps=20, eta=0.1, eval_every=10, n_eval=20, rng=5, progress="tiny run")
    assert torch.get_num_threads() == before
    assert "tiny run" in capsys.readouterr().out
    h2 = ts.train(T, S, steps=20, eta=0.1, eval_every=10, n_eval=20, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(h1.corr, h2.corr)
    assert capsys.readouterr().out == ""
    with pytest.raises(TypeError, match="rng"):
        ts.make_teacher(d=4, m=2, C=2, p=1.0, rng="seed")
    with pytest.raises(TypeError, match="progress"):
        ts.train(T, S, steps=2, eta=0.1, progress=3)
    with pytest.raises(TypeError):  # numeric parameters are keyword-only
        ts.make_teacher(4, 2, 2, 1.0)


def _one_pair_closed_form(w_star, w_k):
    """Theorem 6 for one pair at sigma = 1, as a student writes it (no broadcasting)."""
    assert np.ndim(w_star) == 1 and np.ndim(w_k) == 1
    return ts.relu_cross_moment(w_star, w_k)


def _one_pair_mc(w_star, w_k, n, rng):
    return ts.relu_cross_moment_mc(w_star, w_k, n=n, rng=rng)


def test_population_gradient_takes_a_one_pair_cross_moment():
    rng = np.random.default_rng(5)
    W, Vo, Wt, Vt = rng.standard_normal((5, 3)), rng.standard_normal((3, 2)), rng.standard_normal((5, 2)), \
        rng.standard_normal((2, 2))
    for sigma in (1.0, 1.7):
        dW, dV = ts.population_gradient(W, Vo, Wt, Vt, sigma=sigma)
        dW2, dV2 = ts.population_gradient(W, Vo, Wt, Vt, sigma=sigma, cross_moment=_one_pair_closed_form)
        np.testing.assert_allclose(dW2, dW, rtol=1e-12, atol=1e-15)   # M at sigma = sigma^2 M at 1
        np.testing.assert_array_equal(dV2, dV)
    with pytest.raises(TypeError, match="cross_moment must be a function"):
        ts.population_gradient(W, Vo, Wt, Vt, cross_moment=1.0)


def test_eq10_norm_scan_with_functions_a_student_wrote():
    s = ts.eq10_norm_scan(which="w", n=50_000, cross_moment=_one_pair_closed_form, monte_carlo=_one_pair_mc)
    lib = ts.eq10_norm_scan(which="w", n=50_000)
    np.testing.assert_allclose(s["exact"], lib["exact"], rtol=1e-12)
    # the pulls estimated pair by pair: an unbiased estimate of the same gradient, other samples
    assert abs(s["slope_mc"]) < 4 * s["slope_se"] and s["z"] < 4.5
    assert np.all(np.abs(s["mc"] - lib["exact"]) < 4 * s["mc_se"])


def test_theorem6_scan_compares_the_closed_form_with_monte_carlo():
    th = np.linspace(0.1, 3.0, 5)
    r = ts.theorem6_scan(_one_pair_closed_form, _one_pair_mc, th, n=100_000)
    assert r["est"].shape == r["err"].shape == r["exact"].shape == (5, 4)
    want = np.stack([ts.relu_cross_moment(np.eye(4)[0], 2.0 * np.r_[np.cos(t), np.sin(t), 0.0, 0.0]) for t in th])
    np.testing.assert_array_equal(r["exact"], want)
    assert r["zmax"] == pytest.approx(float(np.max(np.abs(r["est"] - want) / r["err"])), rel=1e-15)
    assert r["zmax"] < 5.0   # 20 coordinates (2 of them identically 0): 5 standard errors
    wrong = ts.theorem6_scan(lambda a, w: 2 * _one_pair_closed_form(a, w), _one_pair_mc, th, n=100_000)
    assert wrong["zmax"] > 20
