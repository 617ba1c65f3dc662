"""Tests of checks/two_moments.py and the exact computations behind it (td_lib.mixed_cumulant.bayes_accuracy)."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from checks import two_moments
from checks.claims import REPO, first_number
from td_lib import mixed_cumulant


def _assert_claims(cs):
    bad = [c for c in cs if not c.ok]
    assert not bad, "\n".join(f"{c.id}: quoted {c.quoted}, computed {c.computed}, tol {c.tol}"
                              for c in bad)
    for c in cs:
        if c.quote is None:
            continue
        text = (REPO / c.notebook).read_text()
        assert c.quote in text, f"[{c.id}] the notebook no longer says {c.quote!r}"
        assert first_number(c.quote) == pytest.approx(c.quoted, rel=1e-12), c.id


def _mu_by_conditioning(bm, bu):
    """Bayes accuracy from (x_m, x_u) by conditioning on x_m: the rule is a threshold on x_u^2."""
    def c(xm):
        return 2 * (1 + bu) / bu * (0.5 * math.log1p(bu) - (bm * xm - bm**2 / 2))

    def p_gt(cc, s):
        return 1.0 if cc <= 0 else 2 * stats.norm.sf(math.sqrt(cc) / s)
    f1 = lambda xm: stats.norm.pdf(xm - bm) * p_gt(c(xm), math.sqrt(1 + bu))
    f2 = lambda xm: stats.norm.pdf(xm) * (1 - p_gt(c(xm), 1.0))
    xk = (0.5 * math.log1p(bu) + bm**2 / 2) / bm  # the kink where c = 0
    q = lambda f: sum(integrate.quad(f, lo, hi, epsabs=1e-14, limit=200)[0]
                      for lo, hi in ((-40, xk), (xk, 40)))
    return 0.5 * (q(f1) + q(f2))


@pytest.mark.parametrize("bm,bu", [(1.0, 5.0), (0.5, 2.0), (2.0, 0.7)])
def test_bayes_means_cov_two_ways(bm, bu):
    got = mixed_cumulant.bayes_accuracy(beta_m=bm, beta_u=bu, beta_v=3.0, use="mu")
    assert abs(got - _mu_by_conditioning(bm, bu)) < 1e-10


def test_bayes_structure():
    assert mixed_cumulant.bayes_accuracy(beta_m=1.3, beta_u=5, beta_v=10, use="m") == pytest.approx(
        stats.norm.cdf(0.65), abs=1e-15)
    a = {u: mixed_cumulant.bayes_accuracy(beta_m=1, beta_u=5, beta_v=10, use=u) for u in ("m", "mu", "muv", "v")}
    assert a["m"] < a["mu"] < a["muv"] and a["v"] < a["muv"]
    # no fourth-cumulant signal: everything = means + covariances; no variance signal: = means
    assert mixed_cumulant.bayes_accuracy(beta_m=1, beta_u=5, beta_v=0.0, use="muv") == pytest.approx(a["mu"], abs=1e-12)
    assert mixed_cumulant.bayes_accuracy(beta_m=1, beta_u=0.0, beta_v=10, use="mu") == pytest.approx(a["m"], abs=1e-12)
    assert mixed_cumulant.bayes_accuracy(beta_m=1, beta_u=5, beta_v=0.0, use="v") == 0.5
    with pytest.raises(ValueError, match="use"):
        mixed_cumulant.bayes_accuracy(use="x")
    with pytest.raises(ValueError, match="beta_m"):
        mixed_cumulant.bayes_accuracy(beta_m=0.0, beta_u=5, beta_v=10, use="mu")


def test_bayes_v_only_two_ways():
    # 1/2 + TV/2 along v with a brute-force fine grid
    t = np.linspace(-12, 12, 400_001)
    av, sv = math.sqrt(10 / 11), 1 / math.sqrt(11)
    pp = 0.5 * (stats.norm.pdf(t, av, sv) + stats.norm.pdf(t, -av, sv))
    pm = stats.norm.pdf(t)
    brute = 0.5 * integrate.simpson(np.maximum(pp, pm), x=t)
    assert abs(mixed_cumulant.bayes_accuracy(beta_m=1, beta_u=5, beta_v=10, use="v") - brute) < 1e-7


def test_fast_claims_hold_and_are_quoted():
    _assert_claims(two_moments.bayes_claims(False) + two_moments.tanh_claims() + two_moments.identity_claims())


def test_page_value_corrected():
    c = {x.id: x for x in two_moments.bayes_claims(False)}["lf71_bayes_means_cov"]
    assert abs(c.computed - 76.7) > 0.05 and "76.7" in c.note  # the page's figure is off


@pytest.mark.slow
def test_slope_claims():
    _assert_claims(two_moments.slope_claims(False))


@pytest.mark.slow
def test_demo_claims():
    _assert_claims(two_moments.demo_claims())


def test_mc_deviations_in_standard_errors():
    acc = {"m": 0.6, "mu": 0.7, "muv": 0.8}
    n = 10_000
    se = np.sqrt(np.array([0.24, 0.21, 0.16]) / n)
    hits = n * (np.array([0.6, 0.7, 0.8]) + np.array([2.0, -1.0, 0.0]) * se)
    np.testing.assert_allclose(two_moments.mc_deviations(hits, n, acc), [2.0, -1.0, 0.0], atol=1e-9)


def test_mc_hits_use_the_exact_bayes_rules():
    """On a large sample the three rules' accuracies agree with the exact quadrature (4 SE),
    and a rule with a wrong threshold (x_m > 0.3 instead of 0.5) is detected as biased."""
    import torch

    S = mixed_cumulant.orthonormal_spikes(3)
    n = 400_000
    X, y = mixed_cumulant.sample(n, 3, S, rng=torch.Generator().manual_seed(5))
    acc = {u: mixed_cumulant.bayes_accuracy(**two_moments.BETA_KW, use=u) for u in ("m", "mu", "muv")}
    z = two_moments.mc_deviations(two_moments._hits(X, y, S), n, acc)
    assert np.all(np.abs(z) < 4), z
    xm = (X @ S[0]).numpy()
    wrong = np.sum(np.sign(xm - 0.3) == y.numpy())
    assert abs(two_moments.mc_deviations([wrong, 0, 0], n, acc)[0]) > 4
