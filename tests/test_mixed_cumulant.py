"""Tests of td_lib.mixed_cumulant: the mixed cumulant model sampler against its analytic moments.

Monte Carlo comparisons use Z = 5 standard errors (estimated from the same samples), so a
correct sampler fails a single comparison with probability below 1e-6.
"""

import math

import numpy as np
import pytest
import torch

from td_lib import mixed_cumulant

Z = 5.0


def _page_sample(N, d, spikes, beta_m=1.0, beta_u=5.0, beta_v=10.0, correlated=False, gen=None):
    """The course page's mcm_sample (data branch), with dense whitening, as a reference."""
    m_, u, v = spikes
    g = 1 - 1 / np.sqrt(1 + beta_v)
    y = torch.randint(0, 2, (N,), generator=gen) * 2 - 1
    z = torch.randn(N, d, generator=gen, dtype=torch.float64)
    x_neg = torch.randn(N, d, generator=gen, dtype=torch.float64)
    lam = torch.randn(N, generator=gen, dtype=torch.float64)
    nu = torch.sign(lam) if correlated else (torch.randint(0, 2, (N,), generator=gen) * 2 - 1).double()
    Q = torch.eye(d, dtype=torch.float64) - g * torch.outer(v, v)
    x_pos = beta_m * m_ + np.sqrt(beta_u) * lam[:, None] * u + (z + np.sqrt(beta_v) * nu[:, None] * v) @ Q
    return torch.where((y > 0)[:, None], x_pos, x_neg), y.double()


def _mean_cov_se(X):
    """Empirical mean, covariance and the standard errors of both."""
    n = X.shape[0]
    mu = X.mean(0)
    Xc = X - mu
    prods = Xc[:, :, None] * Xc[:, None, :]
    C = prods.mean(0)
    return mu, C, X.std(0) / math.sqrt(n), prods.std(0) / math.sqrt(n)


def _kappa4_se(t):
    """Fourth cumulant of a centred-by-symmetry sample and its delta-method standard error."""
    t = t - t.mean()
    m2, m4 = (t**2).mean(), (t**4).mean()
    infl = t**4 - 6 * m2 * t**2
    return (m4 - 3 * m2**2).item(), (infl.std() / math.sqrt(len(t))).item()


def test_spikes_orthonormal_and_seeded():
    S = mixed_cumulant.orthonormal_spikes(16)
    assert S.shape == (3, 16) and S.dtype == torch.float64
    assert torch.allclose(S @ S.T, torch.eye(3, dtype=torch.float64), atol=1e-14, rtol=0)
    assert torch.equal(S, mixed_cumulant.orthonormal_spikes(16))
    assert not torch.allclose(S, mixed_cumulant.orthonormal_spikes(16, rng=3))
    assert mixed_cumulant.orthonormal_spikes(5, dtype=torch.float32).dtype == torch.float32


@pytest.mark.parametrize("bv", [0.0, 0.3, 1.0, 10.0, 1e6])
def test_gamma_whitens_v(bv):
    g = mixed_cumulant.gamma(bv)
    assert abs((1 - g) - 1 / math.sqrt(1 + bv)) < 1e-15
    # Q (beta_v v v^T + I) Q = I restricted to v: (1 - g)^2 (1 + beta_v) = 1
    assert abs((1 - g) ** 2 * (1 + bv) - 1) < 1e-12


def test_kappa4_and_cross_term_values():
    assert abs(mixed_cumulant.kappa4_v(10.0) + 200 / 121) < 1e-15
    assert mixed_cumulant.cross_term(5.0, 10.0, False) == 0.0
    c = mixed_cumulant.cross_term(5.0, 10.0, True)
    assert abs(c - math.sqrt(2 / math.pi) * math.sqrt(50 / 11)) < 1e-15
    assert abs(c - 1.70) < 5e-3  # the page's rounded value (Exercise 7.2.A.3)


@pytest.mark.parametrize("correlated", [False, True])
def test_sampler_matches_page_reference(correlated):
    S = mixed_cumulant.orthonormal_spikes(12)
    X0, y0 = _page_sample(500, 12, S, correlated=correlated, gen=torch.Generator().manual_seed(4))
    X1, y1 = mixed_cumulant.sample(500, 12, S, correlated=correlated, rng=torch.Generator().manual_seed(4))
    assert torch.equal(y0, y1)
    assert (X0 - X1).abs().max().item() < 1e-13


@pytest.mark.parametrize("correlated,clone", [(False, False), (True, False), (False, True),
                                              (True, True)])
def test_class_moments_against_theory(correlated, clone):
    d, n = 6, 200_000
    S = mixed_cumulant.orthonormal_spikes(d, rng=5)
    kw = dict(beta_m=1.5, beta_u=2.0, beta_v=4.0, correlated=correlated, clone=clone)
    X, y = mixed_cumulant.sample(n, d, S, rng=torch.Generator().manual_seed(1), **kw)
    frac = (y > 0).double().mean().item()
    assert abs(frac - 0.5) < Z * 0.5 / math.sqrt(n), f"label balance {frac}"
    for label in (1, -1):
        mu, C, se_mu, se_C = _mean_cov_se(X[y == label])
        mu_th = mixed_cumulant.class_mean(S, kw["beta_m"], label)
        C_th = mixed_cumulant.class_cov(S, beta_u=kw["beta_u"], beta_v=kw["beta_v"], correlated=correlated,
                             label=label)
        assert ((mu - mu_th).abs() < Z * se_mu).all(), (label, mu - mu_th)
        assert ((C - C_th).abs() < Z * se_C).all(), (label, (C - C_th).abs().max())
    # along v: fourth cumulant -2 bv^2/(1+bv)^2 on the data, 0 on the clone and in class -1
    t = X[y > 0] @ S[2]
    k4, se = _kappa4_se(t)
    want = 0.0 if clone else mixed_cumulant.kappa4_v(kw["beta_v"])
    assert abs(k4 - want) < Z * se, (k4, want, se)
    k4n, sen = _kappa4_se(X[y < 0] @ S[2])
    assert abs(k4n) < Z * sen


def test_clone_off_spike_directions_untouched():
    # orthogonal to m, u, v the clone's class +1 is exactly the standard Gaussian draw z
    d = 10
    S = mixed_cumulant.orthonormal_spikes(d)
    P = torch.eye(d, dtype=torch.float64) - S.T @ S
    Xd, y = mixed_cumulant.sample(300, d, S, rng=torch.Generator().manual_seed(0))
    Xc, yc = mixed_cumulant.sample(300, d, S, clone=True, rng=torch.Generator().manual_seed(0))
    assert torch.equal(y, yc)
    assert ((Xd - Xc) @ P).abs().max().item() < 1e-13


def test_large_d_uses_no_dense_matrix():
    # a dense d x d matrix at d = 40000 would need 12.8 GB; the rank-one updates need none
    d = 40_000
    S = mixed_cumulant.orthonormal_spikes(d)
    X, y = mixed_cumulant.sample(20, spikes=S, correlated=True, clone=True, rng=torch.Generator().manual_seed(0))
    assert X.shape == (20, d) and torch.isfinite(X).all()


def test_million_rows_float32():
    X, y = mixed_cumulant.sample(10**6, 4, rng=torch.Generator().manual_seed(0), dtype=torch.float32)
    assert X.shape == (10**6, 4) and X.dtype == torch.float32 and y.dtype == torch.float32
    assert set(torch.unique(y).tolist()) == {-1.0, 1.0}


def test_bad_arguments_named():
    S = mixed_cumulant.orthonormal_spikes(8)
    with pytest.raises(ValueError, match="n must be"):
        mixed_cumulant.sample(0, 8)
    with pytest.raises(ValueError, match="beta_v"):
        mixed_cumulant.sample(10, 8, beta_v=-1.0)
    with pytest.raises(ValueError, match="beta_u"):
        mixed_cumulant.sample(10, 8, beta_u=float("nan"))
    with pytest.raises(ValueError, match="d is required"):
        mixed_cumulant.sample(10)
    with pytest.raises(ValueError, match="d = 9"):
        mixed_cumulant.sample(10, 9, S)
    with pytest.raises(ValueError, match="spikes must have orthonormal rows"):
        mixed_cumulant.sample(10, spikes=2 * S)
    with pytest.raises(ValueError, match="spikes must have shape"):
        mixed_cumulant.sample(10, spikes=S[:2])
    with pytest.raises(TypeError, match="rng"):
        mixed_cumulant.sample(10, 8, rng="0")
    with pytest.raises(ValueError, match="dtype"):
        mixed_cumulant.sample(10, 8, dtype=torch.int64)
    with pytest.raises(TypeError, match="correlated"):
        mixed_cumulant.sample(10, 8, correlated=1)
    with pytest.raises(ValueError, match="d must be"):
        mixed_cumulant.orthonormal_spikes(2)
    with pytest.raises(ValueError, match="label"):
        mixed_cumulant.class_mean(S, 1.0, 0)
    with pytest.raises(ValueError, match="beta_v"):
        mixed_cumulant.kappa4_v(-0.5)


@pytest.mark.parametrize("clone", [False, True])
def test_mixture_components_match_class_moments(clone):
    S = mixed_cumulant.orthonormal_spikes(7, rng=1)
    bm, bu, bv = 1.3, 2.0, 6.0
    comps = mixed_cumulant.mixture_components(S, beta_m=bm, beta_u=bu, beta_v=bv, clone=clone, labels=(1,))
    assert abs(sum(c[0] for c in comps) - 1) < 1e-15 and all(c[1] == 1.0 for c in comps)
    mean = sum(w * mu for w, _, mu, _ in comps)
    second = sum(w * (C + np.outer(mu, mu)) for w, _, mu, C in comps)
    cov = second - np.outer(mean, mean)
    assert np.abs(mean - mixed_cumulant.class_mean(S, bm, 1).numpy()).max() < 1e-14
    ref = mixed_cumulant.class_cov(S, beta_u=bu, beta_v=bv, correlated=False, label=1).numpy()
    assert np.abs(cov - ref).max() < 1e-13
    # fourth moment along v: 3 + kappa_4 for the data, 3 for the clone
    v = S[2].numpy()
    m4 = sum(w * ((mu @ v) ** 4 + 6 * (mu @ v) ** 2 * (v @ C @ v) + 3 * (v @ C @ v) ** 2)
             for w, _, mu, C in comps)
    assert abs(m4 - (3 + (0 if clone else mixed_cumulant.kappa4_v(bv)))) < 1e-13
    both = mixed_cumulant.mixture_components(S, beta_m=bm, beta_u=bu, beta_v=bv, clone=clone)
    assert abs(sum(c[0] for c in both if c[1] < 0) - 0.5) < 1e-15
    with pytest.raises(ValueError, match="labels"):
        mixed_cumulant.mixture_components(S, labels=(2,))


@pytest.mark.parametrize("correlated,clone", [(False, False), (True, False), (False, True)])
def test_numpy_sampler_matches_torch_sampler_exactly_given_the_same_draws(correlated, clone):
    """Both backends build class +1 with the same code from (z, lambda, nu): feed the numpy
    path the torch path's draws through a stub Generator and compare to rounding."""
    d, n = 7, 3000
    S = mixed_cumulant.orthonormal_spikes(d, rng=6)
    Xt, yt = mixed_cumulant.sample(n, d, S, correlated=correlated, clone=clone,
                        rng=torch.Generator().manual_seed(2))
    g = torch.Generator().manual_seed(2)  # replay torch's draws in the same order
    draws = [(torch.randint(0, 2, (n,), generator=g)).numpy(),
             torch.randn(n, d, generator=g, dtype=torch.float64).numpy(),
             torch.randn(n, d, generator=g, dtype=torch.float64).numpy(),
             torch.randn(n, generator=g, dtype=torch.float64).numpy()]
    if not correlated:
        draws.append(torch.randint(0, 2, (n,), generator=g).numpy())

    class Replay(np.random.Generator):
        def __init__(self):
            super().__init__(np.random.PCG64(0))
            self.queue = list(draws)

        def integers(self, *a, **k):
            return self.queue.pop(0)

        def standard_normal(self, *a, **k):
            return self.queue.pop(0).copy()

    Xn, yn = mixed_cumulant.sample(n, spikes=S.numpy(), correlated=correlated, clone=clone, rng=Replay())
    assert isinstance(Xn, np.ndarray) and Xn.dtype == np.float64
    assert np.array_equal(yn, yt.numpy())
    assert np.abs(Xn - Xt.numpy()).max() < 1e-13


@pytest.mark.parametrize("correlated,clone", [(False, False), (True, False), (True, True)])
def test_numpy_sampler_class_moments_against_theory(correlated, clone):
    d, n = 6, 200_000
    S = mixed_cumulant.orthonormal_spikes(d, rng=5).numpy()
    kw = dict(beta_m=1.5, beta_u=2.0, beta_v=4.0, correlated=correlated, clone=clone)
    X, y = mixed_cumulant.sample(n, spikes=S, rng=np.random.default_rng(1), **kw)
    assert abs((y > 0).mean() - 0.5) < Z * 0.5 / math.sqrt(n)
    St = torch.as_tensor(S)
    for label in (1, -1):
        mu, C, se_mu, se_C = _mean_cov_se(torch.as_tensor(X[y == label]))
        C_th = mixed_cumulant.class_cov(St, beta_u=kw["beta_u"], beta_v=kw["beta_v"], correlated=correlated,
                             label=label)
        assert ((mu - mixed_cumulant.class_mean(St, kw["beta_m"], label)).abs() < Z * se_mu).all()
        assert ((C - C_th).abs() < Z * se_C).all(), (label, (C - C_th).abs().max())
    k4, se = _kappa4_se(torch.as_tensor(X[y > 0] @ S[2]))
    want = 0.0 if clone else mixed_cumulant.kappa4_v(kw["beta_v"])
    assert abs(k4 - want) < Z * se, (k4, want, se)


def test_numpy_sampling_needs_no_torch_and_names_bad_arguments():
    import subprocess
    import sys

    code = ("import sys, numpy as np; from td_lib import mixed_cumulant; "
            "S = np.linalg.qr(np.random.default_rng(0).standard_normal((5, 3)))[0].T; "
            "X, y = mixed_cumulant.sample(50, spikes=S, rng=np.random.default_rng(1)); "
            "print(mixed_cumulant.cross_term(5.0, 10.0, True), mixed_cumulant.kappa4_v(10.0), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "False", out.stdout
    S = mixed_cumulant.orthonormal_spikes(5).numpy()
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="spikes must have orthonormal rows"):
        mixed_cumulant.sample(10, spikes=2 * S, rng=rng)
    with pytest.raises(ValueError, match="spikes must have shape"):
        mixed_cumulant.sample(10, spikes=S[:2], rng=rng)
    with pytest.raises(ValueError, match="dtype"):
        mixed_cumulant.sample(10, spikes=S, rng=rng, dtype=torch.float32)
    with pytest.raises(ValueError, match="d = 6"):
        mixed_cumulant.sample(10, 6, S, rng=rng)


def test_log_likelihood_ratios_against_the_class_densities():
    """The three ratios add up to log p+(x) - log p-(x) of the full model (the coordinates are
    independent within each class), computed here from the mixture components."""
    from scipy.stats import multivariate_normal

    S = mixed_cumulant.orthonormal_spikes(5, rng=3)
    X, _ = mixed_cumulant.sample(40, 5, S, beta_m=0.7, beta_u=2.0, beta_v=3.0, rng=torch.Generator().manual_seed(0))
    l_m, l_u, l_v = mixed_cumulant.log_likelihood_ratios(X, S, beta_m=0.7, beta_u=2.0, beta_v=3.0)
    comps = mixed_cumulant.mixture_components(S, beta_m=0.7, beta_u=2.0, beta_v=3.0)
    dens = {lab: sum(w * multivariate_normal(mu, C).pdf(X.numpy()) for w, y, mu, C in comps if y == lab)
            for lab in (-1.0, 1.0)}
    np.testing.assert_allclose(l_m + l_u + l_v, np.log(dens[1.0] / dens[-1.0]), atol=1e-10)
    # the clone (means and covariances only) has log-likelihood ratio l_m + l_u
    cl = mixed_cumulant.mixture_components(S, beta_m=0.7, beta_u=2.0, beta_v=3.0, clone=True)
    dc = {lab: sum(w * multivariate_normal(mu, C).pdf(X.numpy()) for w, y, mu, C in cl if y == lab)
          for lab in (-1.0, 1.0)}
    np.testing.assert_allclose(l_m + l_u, np.log(dc[1.0] / dc[-1.0]), atol=1e-10)
    with pytest.raises(ValueError, match="X must have shape"):
        mixed_cumulant.log_likelihood_ratios(X[:, :4], S)


def test_sample_takes_the_clones_cross_term_and_needs_it_only_for_the_correlated_clone():
    S = mixed_cumulant.orthonormal_spikes(6).numpy()
    c = mixed_cumulant.cross_term(5.0, 10.0, True)
    for corr, clone in ((True, True), (False, True), (True, False)):
        a = mixed_cumulant.sample(50, spikes=S, correlated=corr, clone=clone, rng=np.random.default_rng(1))
        b = mixed_cumulant.sample(50, spikes=S, correlated=corr, clone=clone, rng=np.random.default_rng(1), cross=c)
        np.testing.assert_array_equal(a[0], b[0])
    with pytest.raises(ValueError, match="cross = 3.0 makes the clone's covariance indefinite"):
        mixed_cumulant.sample(5, spikes=S, correlated=True, clone=True, rng=np.random.default_rng(1), cross=3.0)
