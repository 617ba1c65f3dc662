"""Tests of td_lib.clone: exact empirical Gaussian clones."""

import math

import pytest
import torch

from td_lib import clone, mixed_cumulant


def _data(n=2000, d=16, seed=0):
    S = mixed_cumulant.orthonormal_spikes(d)
    return mixed_cumulant.sample(n, d, S, rng=torch.Generator().manual_seed(seed))


def test_sym_sqrt_identities():
    A = torch.randn(7, 7, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    C = A @ A.T + 0.1 * torch.eye(7, dtype=torch.float64)
    R, Ri = clone.sym_sqrt(C), clone.sym_sqrt(C, inv=True)
    I7 = torch.eye(7, dtype=torch.float64)
    assert (R @ R - C).abs().max().item() < 1e-12
    assert (R @ Ri - I7).abs().max().item() < 1e-11
    assert (R - R.T).abs().max().item() < 1e-13


@pytest.mark.parametrize("seed", [0, 1])
def test_clone_matches_empirical_class_moments_exactly(seed):
    X, y = _data(seed=seed)
    Xc = clone.empirical_clone(X, y, torch.Generator().manual_seed(10 + seed))
    mom, momc = clone.class_moments(X, y), clone.class_moments(Xc, y)
    for c in (-1.0, 1.0):
        assert (mom[c][0] - momc[c][0]).abs().max().item() < 1e-13
        assert (mom[c][1] - momc[c][1]).abs().max().item() < 1e-12
    n = X.shape[0]
    # the three moment matrices a linear model sees (Exercise 7.1.A.3)
    assert ((X.T @ X - Xc.T @ Xc) / n).abs().max().item() < 1e-13
    assert ((X.T @ y - Xc.T @ y) / n).abs().max().item() < 1e-14
    assert (X.mean(0) - Xc.mean(0)).abs().max().item() < 1e-14
    # ...while the clone is a different sample
    assert (X - Xc).abs().max().item() > 1.0


def test_clone_is_gaussian_along_v():
    # the data's class +1 has kappa_4(v.x) = -200/121 along v; the clone's is ~0
    n, d = 200_000, 4
    S = mixed_cumulant.orthonormal_spikes(d)
    X, y = mixed_cumulant.sample(n, d, S, rng=torch.Generator().manual_seed(3))
    Xc = clone.empirical_clone(X, y, torch.Generator().manual_seed(4))
    for XX, want in ((X, mixed_cumulant.kappa4_v(10.0)), (Xc, 0.0)):
        t = XX[y > 0] @ S[2]
        t = t - t.mean()
        m2, m4 = (t**2).mean(), (t**4).mean()
        se = ((t**4 - 6 * m2 * t**2).std() / math.sqrt(len(t))).item()
        assert abs((m4 - 3 * m2**2).item() - want) < 5 * se


def test_page_order_of_draws():
    # classes are processed in increasing label order, each with one randn of its shape
    X, y = _data(n=300, d=5)
    g1, g2 = torch.Generator().manual_seed(7), torch.Generator().manual_seed(7)
    Xc = clone.empirical_clone(X, y, g1)
    Zneg = torch.randn(int((y < 0).sum()), 5, generator=g2, dtype=torch.float64)
    Zneg = Zneg - Zneg.mean(0)
    Zneg = Zneg @ clone.sym_sqrt(torch.cov(Zneg.T, correction=0), inv=True)
    want = X[y < 0].mean(0) + Zneg @ clone.sym_sqrt(torch.cov(X[y < 0].T, correction=0))
    assert (Xc[y < 0] - want).abs().max().item() < 1e-13


def test_bad_arguments_named():
    X, y = _data(n=100, d=4)
    with pytest.raises(ValueError, match="X must be"):
        clone.empirical_clone(X[0], y)
    with pytest.raises(ValueError, match="y must"):
        clone.empirical_clone(X, y[:-1])
    with pytest.raises(ValueError, match="y: class"):
        clone.empirical_clone(X[:6], y[:6])
    with pytest.raises(TypeError, match="rng"):
        clone.empirical_clone(X, y, rng="3")
    with pytest.raises(ValueError, match="C must be positive definite"):
        clone.sym_sqrt(torch.zeros(3, 3, dtype=torch.float64), inv=True)
    with pytest.raises(ValueError, match="C must be a square"):
        clone.sym_sqrt(torch.zeros(3, 2))
