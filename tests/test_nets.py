"""Tests of td_lib.nets: hand-written GD against autograd, and the linear-model invariance."""

import math

import numpy as np
import pytest
import torch

from td_lib import clone, mixed_cumulant, nets
from td_lib.core.run import Run, checkpoints


def _data(n=400, d=6, seed=0):
    S = mixed_cumulant.orthonormal_spikes(d)
    return mixed_cumulant.sample(n, d, S, rng=torch.Generator().manual_seed(seed))


def test_init_matches_global_seed_stream():
    torch.manual_seed(3)
    W0 = 0.1 * torch.randn(8, 5, dtype=torch.float64) / math.sqrt(5)
    a0 = 0.1 * torch.randn(8, dtype=torch.float64) / math.sqrt(8)
    W, a = nets.init_weights(5, 8, eps=0.1, rng=3)
    assert torch.equal(W, W0) and torch.equal(a, a0)


def test_default_log_times_are_the_page_definition():
    """The course notes log at sorted({0} | set(int(geomspace(1, T, 30)))): the default schedule."""
    for T in (1, 3, 20, 56, 150, 1500, 12000):
        page = sorted(set(np.unique(np.geomspace(1, T, 30).astype(int)).tolist() + [0]))
        assert checkpoints(T, num=30).tolist() == page
    X, y = _data(n=50)
    assert nets.train_two_layer(X, y, "gelu", 0.1, steps=20, width=2).t.tolist() == checkpoints(20, num=30).tolist()
    t = checkpoints(1500, num=30).tolist()
    assert t[:3] == [0, 1, 2] and t[-1] == 1500
    assert [t[i] for i in (1, 10, 20, -1)] == [1, 20, 256, 1500]


@pytest.mark.parametrize("act", ["gelu", "tanh", "linear", "erf", "softplus"])
def test_one_gd_step_equals_autograd(act):
    X, y = _data()
    eps, lr, width = 0.7, 0.3, 5
    log = nets.train_two_layer(X, y, act, eps, width=width, eta=lr, steps=2, rng=1)
    W, a = nets.init_weights(X.shape[1], width, eps=eps, rng=1)
    sig = nets.activation(act)[0]
    for _ in range(2):
        W, a = W.clone().requires_grad_(), a.clone().requires_grad_()
        loss = 0.5 * ((sig(X @ W.T) @ a - y) ** 2).mean()
        gW, ga = torch.autograd.grad(loss, (W, a))
        W, a = (W - lr * gW).detach(), (a - lr * ga).detach()
    assert np.abs(log.W[0] - W.numpy()).max() < 1e-13
    assert np.abs(log.a[0] - a.numpy()).max() < 1e-13


def test_logs_and_batched_runs():
    X, y = _data()
    Xt, yt = _data(n=300, seed=9)
    one = nets.train_two_layer(X, y, "gelu", 0.2, steps=20, X_test=Xt, y_test=yt, width=4)
    two = nets.train_two_layer(torch.stack([X, X]), y, "gelu", 0.2, steps=20, X_test=Xt,
                               y_test=yt, width=4, rng=[0, 1])
    assert isinstance(one, Run) and np.array_equal(one.t, checkpoints(20, num=30))
    assert one.out.shape == (len(one.t), 1, 300) and two.acc.shape == (len(two.t), 2)
    assert all(isinstance(getattr(one, f), np.ndarray) for f in ("acc", "out", "rms_pre", "loss", "W", "a"))
    assert np.abs(two.out[:, 0] - one.out[:, 0]).max() < 1e-14
    assert np.abs(two.out[:, 1] - one.out[:, 0]).max() > 1e-6  # another seed
    f = one.final("out")[0]
    assert abs(one.acc[-1, 0] - ((f * yt.numpy()) > 0).mean()) < 1e-15
    pre = Xt.numpy() @ one.W[0].T
    assert abs(one.rms_pre[-1, 0] - np.sqrt((pre**2).mean())) < 1e-14
    assert one.at(20) == len(one.t) - 1


def test_linear_network_same_on_data_and_clone():
    # Exercise 7.1.A.3: a linear-in-input model sees only the moment matrices
    X, y = _data(n=1000, d=8)
    Xc = clone.empirical_clone(X, y, torch.Generator().manual_seed(1))
    log = nets.train_two_layer(torch.stack([X, Xc]), y, "linear", 0.1, steps=200, X_test=X[:50],
                               y_test=y[:50])
    assert np.abs(log.out[:, 0] - log.out[:, 1]).max() < 1e-13
    # the GELU network is not blind to the difference
    g = nets.train_two_layer(torch.stack([X, Xc]), y, "gelu", 0.1, steps=200, X_test=X[:50],
                             y_test=y[:50])
    assert np.abs(g.out[:, 0] - g.out[:, 1]).max() > 1e-8


def test_bad_arguments_named():
    X, y = _data()
    with pytest.raises(ValueError, match="act"):
        nets.train_two_layer(X, y, "swish", 0.1)
    with pytest.raises(ValueError, match="eps"):
        nets.train_two_layer(X, y, "gelu", 0.0)
    with pytest.raises(ValueError, match="y must"):
        nets.train_two_layer(X, y[:-1], "gelu", 0.1)
    with pytest.raises(ValueError, match="X_test"):
        nets.train_two_layer(X, y, "gelu", 0.1, X_test=X[:, :2], y_test=y)
    with pytest.raises(ValueError, match="rng"):
        nets.train_two_layer(torch.stack([X, X]), y, "gelu", 0.1, rng=[0, 1, 2])
    with pytest.raises(ValueError, match="times"):
        nets.train_two_layer(X, y, "gelu", 0.1, steps=5, times=[0, 9])
    with pytest.raises(TypeError, match="activation"):
        nets.train_two_layer(X, y, torch.sin, 0.1)
    with pytest.raises(ValueError, match="times"):
        nets.train_two_layer(X, y, "gelu", 0.1, steps=5, times=[])
    with pytest.raises(TypeError, match="width"):
        nets.init_weights(4, 2.5, eps=0.1)
    assert np.isfinite(nets.train_two_layer(X, y, "relu", 0.1, steps=3).loss).all()
    assert nets.train_two_layer(X, y, "relu", 0.1, steps=0).t.tolist() == [0]


def _mixture(d=4, seed=0):
    r = np.random.default_rng(seed)
    mu = 0.5 * r.normal(size=d)
    A = 0.4 * r.normal(size=(d, d))
    return [(0.5, -1.0, np.zeros(d), np.eye(d)), (0.3, 1.0, mu, np.eye(d) + A @ A.T),
            (0.2, 1.0, -mu, 0.5 * np.eye(d))]


def test_mixture_population_gradient_linear_closed_form():
    # sigma(z) = z: dL/da_j = -(E[y x] - E[x x^T] W^T a) . w_j, dL/dw_j = -a_j (E[y x] - E[xx^T] W^T a)
    comps = _mixture()
    r = np.random.default_rng(1)
    W, a = r.normal(size=(3, 4)), r.normal(size=3)
    Eyx = sum(p * y * mu for p, y, mu, _ in comps)
    Exx = sum(p * (S + np.outer(mu, mu)) for p, _, mu, S in comps)
    resid = Eyx - Exx @ W.T @ a
    gW, ga = nets.mixture_population_gradient(W, a, "linear", comps, nodes=4)
    assert np.abs(ga + W @ resid).max() < 1e-12
    assert np.abs(gW + np.outer(a, resid)).max() < 1e-12


@pytest.mark.slow
@pytest.mark.parametrize("act", ["gelu", "tanh"])
def test_mixture_population_gradient_against_monte_carlo(act):
    # 20 batches of 50k samples; every entry within 5 standard errors of the exact value
    comps = _mixture()
    r = np.random.default_rng(0)
    W, a = 0.6 * r.normal(size=(3, 4)), 0.8 * r.normal(size=3)
    exact = np.concatenate([x.ravel() for x in nets.mixture_population_gradient(W, a, act, comps, nodes=120)])
    g = torch.Generator().manual_seed(5)
    sig = nets.activation(act)[0]
    Ls = [np.linalg.cholesky(S) for _, _, _, S in comps]
    est = []
    for _ in range(20):
        n = 50_000
        k = torch.multinomial(torch.tensor([p for p, *_ in comps], dtype=torch.float64), n, True,
                              generator=g).numpy()
        Z = torch.randn(n, 4, generator=g, dtype=torch.float64).numpy()
        X = np.empty((n, 4))
        y = np.empty(n)
        for c, (_, yc, mu, _S) in enumerate(comps):
            X[k == c] = mu + Z[k == c] @ Ls[c].T
            y[k == c] = yc
        Wt, at = torch.tensor(W, requires_grad=True), torch.tensor(a, requires_grad=True)
        loss = 0.5 * ((sig(torch.tensor(X) @ Wt.T) @ at - torch.tensor(y)) ** 2).mean()
        gw, ga = torch.autograd.grad(loss, (Wt, at))
        est.append(np.concatenate([gw.numpy().ravel(), ga.numpy()]))
    est = np.array(est)
    se = est.std(0, ddof=1) / math.sqrt(len(est))
    assert (np.abs(est.mean(0) - exact) < 5 * se).all(), np.abs(est.mean(0) - exact) / se


def test_mixture_population_gradient_bad_arguments():
    comps = _mixture()
    W, a = np.ones((2, 4)), np.ones(2)
    with pytest.raises(ValueError, match="components"):
        nets.mixture_population_gradient(W, a, "gelu", comps[:2])
    with pytest.raises(ValueError, match="a must have shape"):
        nets.mixture_population_gradient(W, np.ones(3), "gelu", comps)
    with pytest.raises(ValueError, match="mu must have shape"):
        nets.mixture_population_gradient(W, a, "gelu", [(1.0, 1.0, np.zeros(3), np.eye(4))])
    with pytest.raises(ValueError, match="act"):
        nets.mixture_population_gradient(W, a, "relu", comps)
