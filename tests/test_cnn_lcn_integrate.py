"""Integration of the ODEs: RK4 order, batching, P-rescaling, divergence, initial conditions."""

import numpy as np
import pytest

from td_lib import cnn_lcn as cl


def test_rk4_is_fourth_order_and_matches_solve_ivp():
    P, k_s, k_t = 4, 2, 1
    S = cl.input_covariance(P, 0.3)
    R0, Q0 = cl.random_init("cnn", D=100, P=P, k_s=k_s, k_t=k_t, rng=0)
    al = np.array([0.0, 1.0, 3.0])
    e = [cl.integrate("cnn", R0, Q0, al, S, eta=0.8, dt=h).eg for h in (0.2, 0.1, 0.05)]
    ratio = np.abs(e[0][-1] - e[1][-1]) / np.abs(e[1][-1] - e[2][-1])
    assert 12 < ratio < 20, ratio  # 2^4 = 16 for a fourth-order method
    ref = cl.integrate("cnn", R0, Q0, al, S, eta=0.8, method="solve_ivp", rtol=1e-11, atol=1e-13)
    richardson = np.max(np.abs(e[1] - e[2])) / 15  # predicted error of the dt = 0.05 run
    assert np.max(np.abs(ref.eg - e[2])) < 1.5 * richardson + 1e-10
    conv = cl.dt_convergence("cnn", R0, Q0, al, S, eta=0.8, dt=0.1)
    assert abs(conv["error_estimate"] - richardson) < 1e-12


def test_batch_over_eta_and_c_equals_separate_runs():
    P, k_s, k_t = 4, 1, 1
    R0, Q0 = cl.leading_order_init("lcn", P=P, k_s=k_s, k_t=k_t)
    cs = np.array([0.0, 0.5])[:, None]
    etas = np.array([0.3, 1.0, 2.0])[None, :]
    al = cl.log_checkpoints(alpha_max=5.0, n=5, alpha_min=0.1)
    kw = dict(sigma=1.0, dtau=0.1)
    tr = cl.integrate("lcn", R0, Q0, al, cl.input_covariance(P, cs), eta=etas, **kw)
    assert tr.eg.shape == (al.size, 2, 3) and tr.Q.shape == (al.size, 2, 3, P, P, 1, 1)
    one = cl.integrate("lcn", R0, Q0, al, cl.input_covariance(P, 0.5), eta=2.0, **kw)
    assert np.max(np.abs(one.eg - tr.eg[:, 1, 2])) < 1e-13


def test_P_rescaling_along_trajectories():
    """Result 3.2: LCN(P alpha) = CNN(alpha) from matched initial conditions at c = 0."""
    P, k_s, k_t = 4, 3, 2
    S = np.eye(P)
    R0, Q0 = cl.random_init("cnn", D=500, P=P, k_s=k_s, k_t=k_t, rng=3)
    Rl, Ql = cl.matched_lcn_init(R0, Q0, P)
    al = np.array([0.0, 0.5, 1.0, 2.0])
    tc = cl.integrate("cnn", R0, Q0, al, S, eta=1.0, dt=0.02)
    tl = cl.integrate("lcn", Rl, Ql, P * al, S, eta=1.0, dt=P * 0.02)
    assert np.max(np.abs(tc.eg - tl.eg)) < 1e-12
    # at c > 0 the rescaling is broken (Figure 2b)
    S = cl.input_covariance(P, 0.5)
    tc = cl.integrate("cnn", R0, Q0, al, S, eta=1.0, dt=0.02)
    tl = cl.integrate("lcn", Rl, Ql, P * al, S, eta=1.0, dt=P * 0.02)
    assert np.max(np.abs(tc.eg - tl.eg)) > 1e-2


def test_reflection_symmetric_init_stays_symmetric():
    P, k_s, k_t = 6, 3, 1
    R, Q = cl.leading_order_init("cnn", P=P, k_s=k_s, k_t=k_t)
    R = R + 0.01  # still rho-symmetric for k_t = 1 and a constant column
    tr = cl.integrate("cnn", R, Q, np.array([0.0, 5.0]), np.eye(P), eta=0.5, dt=0.05)
    Rr, Qr = cl.reflect(tr.R[-1], tr.Q[-1])
    assert np.max(np.abs(Rr - tr.R[-1])) < 1e-13 and np.max(np.abs(Qr - tr.Q[-1])) < 1e-13


def test_divergence_names_the_parameters():
    P = 4
    R0, Q0 = cl.leading_order_init("cnn", P=P, k_s=1, k_t=1)
    etas = np.array([0.5, 500.0])
    kw = dict(eta=etas, sigma=1.0, max_value=100.0, dt=0.002)
    with pytest.raises(cl.DivergenceError, match="eta=500"):
        cl.integrate("cnn", R0, Q0, np.array([0.0, 1.0]), np.eye(P), **kw)
    tr = cl.integrate("cnn", R0, Q0, np.array([0.0, 1.0]), np.eye(P), on_divergence="nan", **kw)
    assert np.isfinite(tr.eg[-1, 0]) and np.isnan(tr.eg[-1, 1])


def test_results_are_runs_in_alpha():
    """integrate and specialisation_runs return Runs (td_lib.core.run): time axis t = alpha."""
    from td_lib.core.run import Run

    R0, Q0 = cl.leading_order_init("cnn", P=4, k_s=1, k_t=1)
    tr = cl.integrate("cnn", R0, Q0, np.array([0.0, 1.0, 2.0]), np.eye(4), eta=np.array([0.5, 1.0]))
    assert isinstance(tr, Run) and tr.time_label == "alpha" and tr.t.tolist() == [0.0, 1.0, 2.0]
    assert tr.eg.shape == (3, 2) and tr.R.shape == (3, 2, 1, 1) and tr.at(1.0) == 1
    assert tr.batch_shape == (2,) and tr.params["eta"].tolist() == [0.5, 1.0] and tr.kind == "cnn"
    r = cl.specialisation_runs([1e4], k_s=1, n_init=2, alpha_max=30.0, n_ckpt=20, dtau=1.0)
    assert isinstance(r, cl.SpecialisationRun) and isinstance(r, Run)
    assert r.gamma.shape[:3] == (r.t.size, 1, 2) and r.D.tolist() == [1e4] and r.t[0] == 0.0


def test_steady_freezing_and_horizons():
    """steady_tol freezes a stationary element (its later checkpoints repeat its state);
    alpha_limit leaves the checkpoints beyond an element's horizon NaN."""
    R0, Q0 = cl.zero_error_solution("cnn", P=4, k_s=1, k_t=1)
    fp = cl.fixed_point("cnn", R0, Q0, np.eye(4), T=1.0, eta=0.5, sigma=1.0)
    al = np.array([0.0, 20.0, 40.0, 80.0])
    kw = dict(eta=0.5, sigma=1.0, dtau=0.2)
    free = cl.integrate("cnn", fp["R"], fp["Q"], al, np.eye(4), **kw)
    frozen = cl.integrate("cnn", fp["R"], fp["Q"], al, np.eye(4), steady_tol=1e-9, **kw)
    assert frozen.n_steps == 1 < free.n_steps and np.all(frozen.eg == frozen.eg[-1])
    assert np.max(np.abs(frozen.eg - free.eg)) < 1e-9
    cut = cl.integrate("cnn", R0, Q0, al, np.eye(4), alpha_limit=np.array([30.0, 1e9]), eta=np.array([0.5, 0.5]),
                       sigma=1.0, dtau=0.2)
    whole = cl.integrate("cnn", R0, Q0, al, np.eye(4), **kw)
    assert np.isnan(cut.eg[2:, 0]).all() and np.array_equal(cut.eg[:2, 0], whole.eg[:2])
    assert np.array_equal(cut.eg[:, 1], whole.eg)


def test_random_init_statistics():
    """Eqs 19-20: E[Q_ll] = 1/k_s, Var Q_ll = 2/(k_s^2 D), Var R_lm = T/(k_s k_t D)."""
    D, P, k_s, k_t, T, n = 50, 4, 3, 2, 1.5, 40000
    R, Q = cl.random_init("cnn", D=D, P=P, k_s=k_s, k_t=k_t, T=T, n=n, rng=4)
    q = Q[:, 0, 0]
    assert abs(q.mean() - 1 / k_s) < 5 * q.std() / np.sqrt(n)
    v = q.var()
    assert abs(v - 2 / (k_s**2 * D)) < 5 * v * np.sqrt(2 / n)
    r = R[:, 1, 0]
    assert abs(r.var() - T / (k_s * k_t * D)) < 5 * r.var() * np.sqrt(2 / n)
    off = Q[:, 0, 1]
    assert abs(off.var() - 1 / (k_s**2 * D)) < 5 * off.var() * np.sqrt(2 / n)
    Rl, Ql = cl.random_init("lcn", D=D, P=P, k_s=k_s, k_t=k_t, T=T, n=n, rng=5)
    assert Rl.shape == (n, P, k_s, k_t) and Ql.shape == (n, P, P, k_s, k_s)
    x = Ql[:, 0, 2, 1, 1]  # different positions: mean 0, var 1/(k_s^2 D)
    assert abs(x.mean()) < 5 * x.std() / np.sqrt(n)
    assert abs(x.var() - 1 / (k_s**2 * D)) < 5 * x.var() * np.sqrt(2 / n)
    assert np.allclose(Ql, np.swapaxes(np.swapaxes(Ql, -1, -2), 1, 2))
    # huge D is fine and concentrates on the leading-order state
    R, Q = cl.random_init("cnn", D=1e12, P=6, k_s=3, k_t=1, rng=0)
    assert np.max(np.abs(Q - np.eye(3) / 3)) < 1e-5 and np.max(np.abs(R)) < 1e-5


def test_matched_lcn_init_and_leading_order():
    P, k_s, k_t = 4, 2, 1
    R0, Q0 = cl.leading_order_init("cnn", P=P, k_s=k_s, k_t=k_t)
    Rl, Ql = cl.matched_lcn_init(R0, Q0, P)
    Rl2, Ql2 = cl.leading_order_init("lcn", P=P, k_s=k_s, k_t=k_t)
    assert np.array_equal(Rl, Rl2) and np.array_equal(Ql, Ql2)


def test_bad_arguments():
    R0, Q0 = cl.leading_order_init("cnn", P=4, k_s=1, k_t=1)
    with pytest.raises(ValueError, match="alphas"):
        cl.integrate("cnn", R0, Q0, np.array([1.0, 0.5]), np.eye(4))
    with pytest.raises(ValueError, match="eta"):
        cl.integrate("cnn", R0, Q0, np.array([0.0, 1.0]), np.eye(4), eta=0.0)
    with pytest.raises(ValueError, match="k_s must be >= k_t"):
        cl.random_init("cnn", D=100, P=4, k_s=1, k_t=2)
    with pytest.raises(ValueError, match="D must exceed"):
        cl.random_init("lcn", D=5, P=4, k_s=2, k_t=1)


def test_alpha_spec_interpolates_and_flags_never():
    alpha = np.array([0.0, 1.0, 2.0, 3.0])
    gamma = np.array([[0.1, 0.2], [0.5, 0.9], [0.95, 0.3], [1.0, 0.2]])[:, None, :]  # (n, 1, n_s)
    a = cl.alpha_spec(alpha, gamma, threshold=0.92)
    assert abs(a[0] - (1 + (0.92 - 0.9) / (0.95 - 0.9))) < 1e-12
    assert np.isinf(cl.alpha_spec(alpha, 0.5 * gamma, threshold=0.92)[0])


def test_specialisation_time_matched_kernel_is_D_independent():
    """Result 3.3 (i): k_s = k_t gives alpha_spec = O(1) (Figure 3, P=6, k_t=1, eta=0.5)."""
    a = cl.specialisation_time([1e4, 1e12], P=6, k_s=1, k_t=1, eta=0.5, n_init=2, alpha_max=40.0)
    assert np.all(np.isfinite(a)) and np.max(np.abs(a[0] - a[1])) < 0.2
    assert 3 < a.mean() < 15


def test_phase_diagram_small_grid():
    out = cl.phase_diagram(cs=np.array([0.0, 0.75]), alpha_F=np.array([0.01, 100.0]),
                           etas=np.geomspace(3e-3, 3.0, 13), tau_max=60.0)
    assert not out["clipped_cnn"].any() and not out["clipped_lcn"].any()
    r = out["log10_ratio"]
    assert r.shape == (2, 2)
    assert abs(r[0, 0]) < 0.01  # c = 0, tiny horizon: same error (both start at eps_0)
    assert r[1, 0] > 0.1  # strong correlation, short horizon: the LCN wins
    assert r[0, 1] < -0.2 and r[1, 1] < -0.2  # long horizon: the CNN wins


def test_phase_diagram_with_a_students_optimal_eta():
    """optimal_eta (lesson 3's optimal_eta_log_parabola) in place of refine_min: the same optima
    where they are inside the grid; eps* is the parabola through the grid points at eta*."""
    def vertex(etas, errors):  # the parabola's vertex in (ln eta, ln error), as the exercise asks
        x, y = np.log(etas), np.log(errors)
        i = int(np.nanargmin(y))
        d = 0.5 * (y[i - 1] - y[i + 1]) / (y[i - 1] - 2 * y[i] + y[i + 1])
        return float(np.exp(x[i] + d * (x[1] - x[0])))

    kw = dict(cs=np.array([0.0, 0.75]), alpha_F=np.array([0.01, 100.0]), etas=np.geomspace(3e-3, 3.0, 13),
              tau_max=60.0)
    ref = cl.phase_diagram(**kw)
    seen = []
    mine = cl.phase_diagram(**kw, optimal_eta=lambda e, err: seen.append(err) or vertex(e, err))
    assert len(seen) == 2 * 4 and all(err.shape == (13,) for err in seen)  # one call per (student, c, alpha_F)
    for k in ("eta_cnn", "eta_lcn", "eps_cnn", "eps_lcn"):
        np.testing.assert_allclose(mine[k], ref[k], rtol=1e-12)
    # an optimum moved by a third of a grid step: eps* follows the parabola, eta* is the one given
    third = cl.phase_diagram(**kw, optimal_eta=lambda e, err: vertex(e, err) * (e[1] / e[0]) ** (1 / 3))
    np.testing.assert_allclose(third["eta_cnn"], ref["eta_cnn"] * (3.0 / 3e-3) ** (1 / 36), rtol=1e-12)
    assert np.all(third["eps_cnn"] > ref["eps_cnn"])
    with pytest.raises(TypeError, match="optimal_eta must be callable"):
        cl.phase_diagram(**kw, optimal_eta=0.5)


@pytest.mark.parametrize("kind", ["cnn", "lcn"])
def test_fixed_point_direct_solve_equals_warmup(kind):
    """From the zero-error state the direct solve needs no warm-up and finds the same state."""
    P, k = 4, 2
    S = cl.input_covariance(P, 0.5)
    R0, Q0 = cl.zero_error_solution(kind, P=P, k_s=k, k_t=k)
    auto = cl.fixed_point(kind, R0, Q0, S, T=1.0, eta=2e-3, sigma=1.0)
    warm = cl.fixed_point(kind, R0, Q0, S, T=1.0, eta=2e-3, sigma=1.0, warmup="always")
    assert auto["direct"] and auto["warmup_tau"] == 0.0 and "directly" in auto["note"]
    assert not warm["direct"] and warm["warmup_tau"] == 50.0
    for fp in (auto, warm):
        assert fp["success"] and fp["residual"] < 1e-12 and fp["eigmax"] < 0
    assert abs(auto["eg"] / warm["eg"] - 1) < 1e-10
    assert np.max(np.abs(auto["R"] - warm["R"])) < 1e-10
    assert np.max(np.abs(auto["Q"] - warm["Q"])) < 1e-10
    # a stationary state of the ODE: integrating from it changes nothing
    tr = cl.integrate(kind, auto["R"], auto["Q"], np.array([0.0, 5.0 / 2e-3]), S, eta=2e-3,
                      sigma=1.0, dtau=0.05)
    assert abs(tr.eg[-1] / auto["eg"] - 1) < 1e-9


def test_fixed_point_falls_back_to_the_warmup_and_says_so():
    """From R = 0, Q = I (P = 4, k = 1, eta = 0.5) the direct solve does not converge."""
    R0, Q0 = cl.leading_order_init("cnn", P=4, k_s=1, k_t=1)
    S = np.eye(4)
    never = cl.fixed_point("cnn", R0, Q0, S, T=1.0, eta=0.5, sigma=0.5, warmup="never")
    assert not never["success"] and never["warmup_tau"] == 0.0 and "failed" in never["note"]
    auto = cl.fixed_point("cnn", R0, Q0, S, T=1.0, eta=0.5, sigma=0.5)
    assert auto["success"] and auto["eigmax"] < 0
    assert not auto["direct"] and auto["warmup_tau"] == 50.0
    assert "failed" in auto["note"] and "warm-up" in auto["note"]
    warm = cl.fixed_point("cnn", R0, Q0, S, T=1.0, eta=0.5, sigma=0.5, warmup="always")
    assert abs(auto["eg"] - warm["eg"]) < 1e-12
    # a saddle is not accepted: from this random start the direct root is unstable
    R1, Q1 = cl.random_init("cnn", D=50, P=4, k_s=2, k_t=2, rng=0)
    S1 = cl.input_covariance(4, 0.3)
    saddle = cl.fixed_point("cnn", R1, Q1, S1, T=1.0, eta=0.2, sigma=0.5, warmup="never")
    assert saddle["success"] and saddle["eigmax"] > 0  # a root, but not an attracting one
    fp = cl.fixed_point("cnn", R1, Q1, S1, T=1.0, eta=0.2, sigma=0.5)
    assert not fp["direct"] and fp["eigmax"] < 0 and fp["eg"] < saddle["eg"]
    with pytest.raises(ValueError, match="warmup"):
        cl.fixed_point("cnn", R0, Q0, S, T=1.0, eta=0.5, sigma=0.5, warmup="sometimes")


def test_specialisation_runs_trajectories_and_early_stop():
    Ds = [1e4, 1e8]
    r = cl.specialisation_runs(Ds, P=6, k_s=2, k_t=1, eta=0.5, n_init=3, rng=5, alpha_max=600.0,
                               dtau=0.5)
    n_a = r.t.size
    a_sp = cl.alpha_spec(r.t, r.gamma, 0.99)
    assert r.gamma.shape == (n_a, 2, 3, 2) and a_sp.shape == (2, 3)
    assert np.all(np.isfinite(a_sp)), "the runs stop only once every one has specialised"
    # the first checkpoint is the random init of eq. 19 drawn with seed (seed, i) at D[i]
    R0, Q0 = cl.random_init("cnn", D=1e8, P=6, k_s=2, k_t=1, n=3, rng=np.random.default_rng((5, 1)))
    assert np.max(np.abs(r.gamma[0, 1] - cl.alignment(R0, Q0))) < 1e-15
    # the integration stopped early, in the window where the last run specialised
    assert a_sp.max() <= r.t[-1] < 600.0
    last = np.flatnonzero(r.t >= a_sp.max())[0]
    assert r.t.size - 1 - last <= max(1, 400 // 40), "integrated more than one window past the last run"
    # the windows are one integration: a single run over the same checkpoints gives the same gammas
    R1, Q1 = cl.random_init("cnn", D=1e4, P=6, k_s=2, k_t=1, n=3, rng=np.random.default_rng((5, 0)))
    tr = cl.integrate("cnn", R1, Q1, r.t, np.eye(6), eta=0.5, dtau=0.5)
    assert np.max(np.abs(cl.alignment(tr.R, tr.Q) - r.gamma[:, 0])) < 1e-10
    # specialisation_time is the same computation
    t = cl.specialisation_time(Ds, P=6, k_s=2, k_t=1, eta=0.5, n_init=3, rng=5, alpha_max=600.0,
                               dtau=0.5)
    assert np.max(np.abs(t - a_sp)) < 0.05 * a_sp.mean()  # other checkpoints
    # with a function of eq. 25 given (a student's), the same values
    mine = lambda a, g, th: float(cl.alpha_spec(a, g, th))  # noqa: E731
    assert np.array_equal(cl.specialisation_time(Ds, P=6, k_s=2, k_t=1, eta=0.5, n_init=3, rng=5, alpha_max=600.0,
                                                 dtau=0.5, spec=mine), t)


def test_log_d_fit_recovers_the_line_and_its_standard_error():
    Ds = np.geomspace(1e2, 1e12, 6)
    exact = 3.0 + 2.5 * np.log(Ds)
    f = cl.log_d_fit(Ds, np.repeat(exact[:, None], 4, 1))
    assert abs(f["a"] - 3.0) < 1e-10 and abs(f["b"] - 2.5) < 1e-12 and f["se_b"] == 0.0
    f = cl.log_d_fit(Ds, np.repeat(exact[:, None], 4, 1), D_min=1e4)
    assert f["D"].size == 5
    # the standard error is the spread of b over independent replicas of the initialisations
    rng = np.random.default_rng(0)
    sd = np.linspace(1.0, 6.0, Ds.size)  # scatter growing with D, as for the plateaus
    fits = [cl.log_d_fit(Ds, exact[:, None] + sd[:, None] * rng.standard_normal((Ds.size, 8)))
            for _ in range(4000)]
    b = np.array([f["b"] for f in fits])
    se = np.sqrt(np.mean([f["se_b"] ** 2 for f in fits]))
    assert abs(b.mean() - 2.5) < 4 * b.std() / np.sqrt(b.size)
    assert abs(b.std() / se - 1) < 0.05, (b.std(), se)
    assert abs(np.mean([f["sd"] ** 2 for f in fits]) / np.mean(sd**2) - 1) < 0.02
    with pytest.raises(ValueError, match="D_min"):
        cl.log_d_fit(Ds, np.repeat(exact[:, None], 4, 1), D_min=1e11)
    with pytest.raises(ValueError, match="a_spec"):
        cl.log_d_fit(Ds, exact)
    with pytest.raises(ValueError, match="a_spec"):
        cl.log_d_fit(Ds, np.full((6, 2), np.inf))
