"""Finite-D SGD simulators: input statistics, eps_g estimators, one-step drift vs the ODE,
and (slow) the ODE-SGD gap shrinking with D."""

import numpy as np
import pytest
import torch

from td_lib import cnn_lcn as cl


def test_sample_inputs_covariance():
    P, D, n = 4, 50, 4000
    for S in (None, cl.input_covariance(P, 0.3) * 0.5 + 0.5 * np.diag([1.0, 2, 1, 2]) / 2):
        x = cl.sample_inputs(n=n, P=P, D=D, S=S, rng=torch.Generator().manual_seed(1), c=0.6)
        emp = torch.einsum("npd,nqd->pq", x, x).numpy() / (n * D)
        want = cl.input_covariance(P, 0.6) if S is None else S
        # each entry is a mean of n*D products with variance <= 2 * max S^2
        assert np.max(np.abs(emp - want)) < 5 * np.sqrt(2 * 4 / (n * D))


@pytest.mark.parametrize("kind", ["cnn", "lcn"])
@pytest.mark.parametrize("activation", ["erf_sqrt2", "relu"])
def test_eg_from_order_parameters_matches_test_set(kind, activation):
    res = cl.simulate_sgd(kind, D=60, P=3, k_s=2, k_t=1, c=0.4, eta=0.5, alpha_max=1.0,
                          checkpoints=np.array([0.0, 1.0]), n_seeds=2, activation=activation,
                          n_test=20000, rng=3)
    z = (res.eg_mc - res.eg_order) / res.eg_mc_se
    assert np.max(np.abs(z)) < 5, z
    assert res.R0.shape == (2,) + cl.state_shapes(kind, P=3, k_s=2, k_t=1)[0]


def test_sgd_result_is_a_run_in_alpha():
    """simulate_sgd returns a Run: time axis t = steps / D (the default: 0 and 40 log-spaced alpha
    from ten steps on), series (time, seeds, ...), the initial state and parameters static."""
    from td_lib.core.run import Run

    res = cl.simulate_sgd("cnn", D=20, P=3, k_s=2, k_t=1, alpha_max=10.0, n_seeds=2, n_test=0, rng=0)
    assert isinstance(res, Run) and res.time_label == "alpha"
    assert res.t[0] == 0.0 and res.t[1] == 10 / 20 and res.t[-1] == 10.0 and np.all(np.diff(res.t) > 0)
    assert res.R.shape[:2] == res.eg_order.shape == (res.t.size, 2) and res.eg_mc is None
    assert np.array_equal(res.R0, res.R[0]) and res.params["D"] == 20
    assert np.array_equal(res.final("eg_order"), res.eg_order[-1])


@pytest.mark.parametrize("kind", ["cnn", "lcn"])
def test_one_step_drift_matches_rhs(kind):
    """D E[Delta(R, Q)] over independent SGD steps = the ODE RHS (within 5 s.e. + O(1/D))."""
    o = cl.one_step_drift(kind, D=150, P=3, k_s=2, k_t=1, c=0.5, eta=0.7, sigma=0.5, n=24000,
                          rng=2)
    dR, dQ = cl.rhs(kind, o["R"], o["Q"], o["S"], T=1.0, eta=0.7, sigma=0.5)
    assert np.max(np.abs(o["dR"] - dR) / (5 * o["se_R"] + 0.02 * np.abs(dR).max())) < 1
    assert np.max(np.abs(o["dQ"] - dQ) / (5 * o["se_Q"] + 0.02 * np.abs(dQ).max())) < 1


def test_sgd_bad_arguments():
    with pytest.raises(ValueError, match="activation"):
        cl.simulate_sgd("cnn", D=50, P=3, k_s=2, k_t=1, activation="tanh")
    with pytest.raises(ValueError, match="k_t <= k_s <= P"):
        cl.simulate_sgd("cnn", D=50, P=3, k_s=1, k_t=2)
    with pytest.raises(ValueError, match="c must lie"):
        cl.simulate_sgd("lcn", D=50, P=3, k_s=2, k_t=1, c=1.2)
    # "erf" is erf(z) in the registry; the paper's g is "erf_sqrt2" (no silent reinterpretation)
    with pytest.raises(ValueError, match="activation must be one of"):
        cl.simulate_sgd("cnn", D=50, P=3, k_s=2, k_t=1, activation="erf")
    with pytest.raises(TypeError, match="rng"):
        cl.simulate_sgd("cnn", D=50, P=3, k_s=2, k_t=1, rng="0")


def test_sgd_rng_convention():
    """An int seed is the old torch stream (weights from manual_seed(rng), test set rng + 7919);
    a torch Generator in the same state gives the same training run."""
    kw = dict(D=30, P=3, k_s=2, k_t=1, c=0.3, checkpoints=np.array([0.0, 1.0]), n_seeds=2, n_test=0)
    a = cl.simulate_sgd("cnn", rng=4, **kw)
    b = cl.simulate_sgd("cnn", rng=torch.Generator().manual_seed(4), **kw)
    assert np.array_equal(a.R, b.R) and np.array_equal(a.Q, b.Q)
    c = cl.simulate_sgd("cnn", rng=np.random.default_rng(4), **kw)
    assert c.R.shape == a.R.shape and not np.array_equal(c.R, a.R)
    from td_lib.cnn_lcn.sgd import TEST_SEED_OFFSET

    assert TEST_SEED_OFFSET == 7919


def _gap(kind, D, c, n_seeds, alpha_max):
    P, k_s, k_t = 4, 3, 2  # Figure 2
    cps = np.linspace(0, alpha_max, 11)
    res = cl.simulate_sgd(kind, D=D, P=P, k_s=k_s, k_t=k_t, c=c, eta=1.0, sigma=0.0, checkpoints=cps,
                          n_seeds=n_seeds, n_test=0, rng=D)
    tr = cl.integrate(kind, res.R0, res.Q0, res.t, cl.input_covariance(P, c), eta=1.0,
                      dtau=0.02)
    return np.mean(np.max(np.abs(res.eg_order - tr.eg), axis=0))


@pytest.mark.slow
@pytest.mark.parametrize("c", [0.0, 0.5])
def test_ode_vs_sgd_gap_shrinks_with_D(c):
    """Figure 2 parameters; the SGD-ODE gap (same initial order parameters) ~ D^-1/2."""
    gaps = [_gap("cnn", D, c, 4, 2.0) for D in (250, 1000, 4000)]
    assert gaps[0] > gaps[1] > gaps[2], gaps
    slope = np.polyfit(np.log([250, 1000, 4000]), np.log(gaps), 1)[0]
    assert -0.8 < slope < -0.3, (slope, gaps)


@pytest.mark.parametrize("kind", ["cnn", "lcn"])
def test_sgd_step_matches_plain_numpy(kind):
    """sgd_step (the simulator's code path) against eqs 36 / 68 written with plain loops."""
    from scipy.special import erf

    rng = np.random.default_rng(7)
    P, D, k_s, k_t, eta, sigma = 4, 20, 3, 2, 0.7, 0.3
    wt = rng.standard_normal((k_t, D))
    wh = rng.standard_normal((k_s, D) if kind == "cnn" else (P, k_s, D))
    x = rng.standard_normal((P, D))
    xi = 0.8
    g = lambda z: erf(z / np.sqrt(2))
    gp = lambda z: np.sqrt(2 / np.pi) * np.exp(-z * z / 2)
    ker = (lambda p: wh) if kind == "cnn" else (lambda p: wh[p])
    lam = [sum(wt[m] @ x[(p + m) % P] for m in range(k_t)) / np.sqrt(k_t * D) for p in range(P)]
    lh = [sum(ker(p)[l] @ x[(p + l) % P] for l in range(k_s)) / np.sqrt(k_s * D) for p in range(P)]
    delta = sum(g(v) for v in lam) + sigma * xi - sum(g(v) for v in lh)
    new = wh.copy()
    for p in range(P):
        for l in range(k_s):
            upd = eta * delta / np.sqrt(k_s * D) * gp(lh[p]) * x[(p + l) % P]
            if kind == "cnn":
                new[l] += upd
            else:
                new[p, l] += upd
    out = cl.sgd_step(kind, wh, wt, x, eta, sigma=sigma, xi=xi)
    assert np.max(np.abs(out - new)) < 1e-13
    lam2, lh2 = cl.preactivations(kind, wh, wt, x)
    assert np.max(np.abs(lam2 - np.array(lam))) < 1e-13
    assert np.max(np.abs(lh2 - np.array(lh))) < 1e-13
