"""Tests of td_lib.circle_net: the two-layer ReLU trainer on the circle (Basri et al.'s setting) of demo 7.3.D."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from td_lib import circle_net as cn
from td_lib import kernel_flow as kf
from td_lib import kernels as k


def test_twin_init_starts_at_zero():
    th, Xb = cn.circle_inputs(32)
    W, a = cn.twin_init(50, rng=1)
    assert np.array_equal(W[:50], W[50:]) and a.sum() == 0
    assert np.abs(cn.circle_network_output(W, a, Xb, 3.0)).max() < 1e-12


def _jacobian(W, a, Xb, scale):
    Wt = torch.tensor(W, requires_grad=True)
    def f(Wv):
        return scale * torch.relu(torch.tensor(Xb) @ Wv.T) @ torch.tensor(a) / np.sqrt(len(a))
    return torch.autograd.functional.jacobian(f, Wt).reshape(len(Xb), -1).numpy()


def test_empirical_ntk_is_gradient_gram_matrix():
    # eNTK = J J^T / n with J the Jacobian of f w.r.t. all first-layer weights and biases.
    th, Xb = cn.circle_inputs(16)
    W, a = cn.twin_init(20, rng=2)
    W = W + 0.1 * np.random.default_rng(0).standard_normal(W.shape)
    J = _jacobian(W, a, Xb, 2.5)
    assert np.abs(cn.empirical_ntk(W, Xb, 2.5) - J @ J.T / 16).max() < 1e-12
    batch = cn.empirical_ntk(np.stack([W, W]), Xb, np.array([1.0, 2.5]))
    assert np.allclose(batch[1], J @ J.T / 16, atol=1e-12) and np.allclose(batch[1], 6.25 * batch[0])


def test_empirical_ntk_averages_to_twice_bias_kernel():
    # The unnormalised input (cos, sin, 1) is sqrt(2) xbar, so E[eNTK * n] = 2 K_bias.
    th, Xb = cn.circle_inputs(8)
    W = np.random.default_rng(4).standard_normal((100000, 3))
    Kn = cn.empirical_ntk(W, Xb) * 8
    exact = 2 * k.relu_ntk_bias(th[:, None] - th[None, :])
    # entries are means of terms bounded by |xb.xb'| <= 2: SE <= 1/sqrt(N) ~ 0.0032
    assert np.abs(Kn - exact).max() < 5 / np.sqrt(100000)


def test_one_step_matches_autograd():
    n, pairs, scale = 16, 30, 2.0
    run = cn.train_circle_net((1, 3), scales=(scale,), n_train=n, pairs=pairs, steps=1, rng=3)
    th, Xb = cn.circle_inputs(n)
    W0, a = cn.twin_init(pairs, rng=3)
    y = np.sin(th) + np.sin(3 * th)
    Wt = torch.tensor(W0, requires_grad=True)
    f = scale * torch.relu(torch.tensor(Xb) @ Wt.T) @ torch.tensor(a) / np.sqrt(2 * pairs)
    loss = 0.5 * ((f - torch.tensor(y)) ** 2).mean()
    loss.backward()
    W1 = W0 - run.eta[0] * Wt.grad.numpy()
    assert np.abs(run.W_final[0] - W1).max() < 1e-5  # float32 training
    assert abs(run.eta[0] - 1 / np.linalg.eigvalsh(cn.empirical_ntk(W0, Xb, scale))[-1]) < 1e-12


def test_lazy_limit_follows_frozen_kernel_gd():
    # At a large output scale the residual follows GD on the initial eNTK, mode by mode.
    n, freqs, steps = 32, (1, 4), 150
    run = cn.train_circle_net(freqs, scales=(1.0, 100.0), n_train=n, pairs=400, steps=steps, rng=5)
    assert np.allclose(run.rate_unit[0], run.rate_unit[1], rtol=1e-10)
    assert np.all(run.amps[0] > 0.999) and np.all(run.amps[0] < 1.001)   # at t = 0, every scale
    th, Xb = cn.circle_inputs(n)
    W0, _ = cn.twin_init(400, rng=5)
    K0 = cn.empirical_ntk(W0, Xb, 1.0) * n
    y = np.sin(th) + np.sin(4 * th)
    frozen = kf.kernel_gd_predict(K0, K0, y, np.arange(steps + 1), eta=run.rate_unit[1])
    A_frozen = kf.residual_per_frequency(frozen - y[:, None], list(freqs)).T
    dev = np.abs(run.amps - A_frozen[:, None]).max(axis=(0, 2))
    assert dev[1] < 0.01 < dev[0]   # scale 100 is lazy, scale 1 is not
    # weights move 100x less; the eNTK (a count of activation-pattern flips at N = 800)
    # changes at least 10x less
    assert run.ntk_change[1] < run.ntk_change[0] / 10


def test_steps_to_level_and_prediction():
    A = np.array([[1.0, 1.0], [0.5, 0.9], [0.3, 0.8]])      # (steps + 1, freqs): time first
    assert np.array_equal(cn.steps_to_level(A), [2.0, np.nan], equal_nan=True)
    assert np.array_equal(cn.steps_to_level(np.stack([A, A], axis=1)), [[2.0, np.nan]] * 2, equal_nan=True)
    q = np.array([0.9, 0.1, 0.003])
    s = cn.predicted_steps(1.0, q)
    assert np.all((1 - q) ** s < np.exp(-1)) and np.all((1 - q) ** (s - 1) >= np.exp(-1))


def test_bad_input_is_rejected_by_name():
    with pytest.raises(ValueError, match="freqs"):
        cn.train_circle_net((0, 2), steps=1)
    with pytest.raises(ValueError, match="scales"):
        cn.train_circle_net((1,), scales=(-1.0,), steps=1)
    with pytest.raises(ValueError, match="pairs"):
        cn.twin_init(0, 1)
    with pytest.raises(ValueError, match="rng"):
        cn.twin_init(3, -1)
    with pytest.raises(TypeError, match="progress"):
        cn.train_circle_net((1,), n_train=8, pairs=2, steps=1, progress=1)
    with pytest.raises(ValueError, match="rate_unit"):
        cn.predicted_steps(1.0, [2.0])
    with pytest.raises(ValueError, match="W must have shape"):
        cn.empirical_ntk(np.ones((4, 2)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="Xb must hold the inputs"):
        cn.empirical_ntk(np.ones((4, 3)), np.ones((3, 3)))


def test_rng_and_progress_conventions(capsys):
    # an int seed and the Generator it names give the same run; the bar is off by default,
    # progress=True labels it "GD steps" and a string labels it with the string
    kw = dict(freqs=(1, 2), scales=(1.0,), n_train=8, pairs=4, steps=3)
    threads = torch.get_num_threads()
    r1 = cn.train_circle_net(**kw, rng=11)
    assert torch.get_num_threads() == threads  # trained on one thread, the setting restored
    r2 = cn.train_circle_net(**kw, rng=np.random.default_rng(11), progress=True)
    assert np.array_equal(r1.amps, r2.amps) and np.array_equal(r1.W_final, r2.W_final)
    cn.train_circle_net(**kw, rng=11, progress="demo 7.3.D")
    out = capsys.readouterr().out
    assert "GD steps" in out and "demo 7.3.D" in out
    cn.train_circle_net(**kw, rng=11)
    assert capsys.readouterr().out == ""


def test_importing_the_module_does_not_import_torch():
    # Graded cells of §7.3 (and own_work's counterpart list) import td_lib.circle_net; torch, ~2 s per
    # kernel, is needed by train_circle_net alone and imported there.
    import subprocess
    import sys

    code = "import sys; import td_lib.circle_net; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stdout + out.stderr


def test_train_circle_net_takes_a_finite_width_kernel_and_summarises():
    """With ``ntk`` (a kernel of finite_width_kernel's signature) the run is the library's, and
    run_summary keeps what demo 7.3.D shows."""
    a = cn.train_circle_net((1, 4), n_train=16, pairs=20, steps=30, rng=0)
    c = cn.train_circle_net((1, 4), n_train=16, pairs=20, steps=30, rng=0, ntk=k.finite_width_kernel)
    np.testing.assert_allclose(c.rayleigh, a.rayleigh, rtol=1e-12)
    np.testing.assert_allclose(c.ntk_change, a.ntk_change, rtol=1e-9)
    np.testing.assert_array_equal(c.amps, a.amps)
    np.testing.assert_array_equal(a.t, np.arange(31))
    np.testing.assert_array_equal(a.t_fit, cn.steps_to_level(a.amps))
    s = cn.run_summary(a, points=10)
    assert isinstance(s, cn.CircleNetRun) and s.W_final is None and s.time_label == "GD steps"
    assert s.t[0] == 0 and s.t[-1] == 30 and np.all(np.diff(s.t) > 0)
    assert s.amps.shape == (s.t.size, 2, 2)
    np.testing.assert_array_equal(s.amps, a.amps[s.t])
    np.testing.assert_array_equal(s.final("amps"), a.final("amps"))
    np.testing.assert_array_equal(s.t_fit, a.t_fit)
    for steps in (30, 200, 2000):     # the log-spaced steps of the former summary, as the course runs it
        T = steps + 1
        old = np.unique(np.r_[0, np.geomspace(1, T, 40).astype(int) - 1])
        fake = dataclasses.replace(a, t=np.arange(T), amps=np.zeros((T, 2, 2)))
        np.testing.assert_array_equal(cn.run_summary(fake).t, old)
    with pytest.raises(TypeError, match="run must be a CircleNetRun"):
        cn.run_summary({"amps": a.amps})
    with pytest.raises(ValueError, match=r"ntk\(theta, theta, W\) must have shape"):
        cn.train_circle_net((1, 4), n_train=16, pairs=20, steps=1, rng=0, ntk=lambda t1, t2, W: np.zeros((2, 2)))
    with pytest.raises(TypeError, match="ntk must be a function"):
        cn.train_circle_net((1, 4), n_train=16, pairs=20, steps=1, rng=0, ntk=3)
