"""Baked regions of §7.2's escape times and its demos: the reference law of the escape times
that the tests compare a student's ``escape_times`` with, and the demos' reference results
(see :mod:`checks.grading.bake`). The handout's td_lib has no escape-time simulator: these
numbers are what a student sees until their own function runs."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from checks.grading.registry import baked

__all__: list[str] = []

#: runs of the exact overlap chain behind each reference law (sup error of its CDF ~ 1/sqrt(N))
CHAIN_RUNS = 100_000
#: knots of a baked CDF: quantile levels 1/200 apart, so F between two knots moves by <= 1/200
_LEVELS = np.linspace(0.005, 0.995, 199)


def _law(k: int, d: int, delta: float, t_max: int, rng: int) -> dict[str, Any]:
    """The law of the escape time (k, d, delta, t_max) as a test reads it: knots ``x`` (steps)
    with the CDF ``F`` there, from :data:`CHAIN_RUNS` runs of the exact overlap chain, and the
    quartiles (``inf``: more than that share of runs never escapes, written ``None``)."""
    from td_lib import escape

    T = np.sort(escape.reduced_escape_times(k, d, delta=delta, runs=CHAIN_RUNS, t_max=t_max, rng=rng))
    fin = T[np.isfinite(T)]
    x = np.unique(np.quantile(fin, _LEVELS, method="inverted_cdf")) if fin.size else np.zeros(0)
    F = np.searchsorted(T, x, side="right") / T.size
    quart = [float(q) if math.isfinite(q) else None for q in np.quantile(T, [0.25, 0.5, 0.75])]
    return {"x": [int(v) for v in x], "F": [round(float(f), 6) for f in F], "quartiles": quart}


@baked
def escape_laws_visible() -> dict[str, Any]:
    """test_ex72C_distribution, visible part: the laws of its two visible cases."""
    return {"_laws": {"k1_d16": _law(1, 16, 4.0, 10**4, 1021),
                      "k2_d16": _law(2, 16, 1 / math.log(16), 10**5, 1022)}}


@baked
def escape_laws_hidden() -> dict[str, Any]:
    """test_ex72C_distribution, hidden part."""
    return {"_laws_h": {"k2_d32": _law(2, 32, 1 / math.log(32), 10**5, 1023),
                        "k1_d32": _law(1, 32, 1.0, 10**5, 1024)}}


@baked
def escape_laws_sign() -> dict[str, Any]:
    """test_ex72C_sign, visible part (odd k: escape is alpha > 1/2)."""
    return {"_law_k3": _law(3, 16, 2.0, 2 * 10**4, 1031)}


@baked
def escape_laws_sign_hidden() -> dict[str, Any]:
    """test_ex72C_sign, hidden part."""
    return {"_law_k3h": _law(3, 12, 1.0, 2 * 10**4, 1032)}


@baked
def escape_shares_hidden() -> dict[str, Any]:
    """test_ex72C_basic, hidden part: shares of runs escaped after one large step (k = 2, d = 4,
    delta = 8, t_max = 1) and not escaped by t_max = 60 (k = 2, d = 32), exact chain."""
    from td_lib import escape

    one = escape.reduced_escape_times(2, 4, delta=8.0, runs=CHAIN_RUNS, t_max=1, rng=9)
    cen = escape.reduced_escape_times(2, 32, delta=1 / math.log(32), runs=CHAIN_RUNS, t_max=60, rng=6)
    return {"_q_one_step": float(np.isfinite(one).mean()), "_q_censored": float(np.isinf(cen).mean()),
            "_n_chain": CHAIN_RUNS}


def _study(dims) -> dict:
    """The study's escape times per (k, d), from checks.higher_cumulants.notebook_study (the reference
    solution, the notebook's seeds)."""
    from checks import higher_cumulants

    out = {}
    for k, (*_, times) in higher_cumulants.notebook_study(dims=dims).items():
        for d, T in zip(dims, times):
            if not np.all(np.isfinite(T)):
                raise ValueError(f"the study's reference run left runs unescaped at k = {k}, d = {d}")
            out[k, d] = [int(t) for t in T]
    return out


@baked
def escape_study_demo() -> dict[str, Any]:
    """The escape-time study after Exercise 7.2.C with the reference solution's escape_times and
    the notebook's seeds (full and quick dimensions)."""
    return {"_ref_study": {"full": _study([16, 32, 64]), "quick": _study([8, 16])}}


@baked(digits=6)
def escape_sweep_demo() -> dict[str, Any]:
    """The step-size sweep after the study (k = 3, d = 64) with the reference solution: median
    escape time and share of runs not escaped per step parameter (full and quick sizes)."""
    from checks import higher_cumulants

    out = {}
    for mode, (n_delta, runs, t_max) in (("full", (10, 32, 60000)), ("quick", (5, 8, 3000))):
        med, never = higher_cumulants.notebook_sweep(n_delta, runs, t_max)[1:]
        out[mode] = {"med": [float(m) if math.isfinite(m) else None for m in med], "never": never}
    return {"_ref_sweep": out}


@baked(digits=2)
def mcm_overlaps_demo() -> dict[str, Any]:
    """The demo before Exercise 7.2.A: online spherical SGD of one ReLU neuron on the mixed cumulant
    model (d = 32, 8 runs, 8000 steps), overlaps with u and v at 40 log-spaced record times."""
    from td_lib import escape, mixed_cumulant
    from td_lib.core import activations
    from td_lib.core.run import checkpoints

    d, runs, t_max, every = 32, 8, 8000, 40
    sp = mixed_cumulant.orthonormal_spikes(d).numpy()
    keep = checkpoints(t_max // every, num=40, rounding="round")  # record indices: 0 and 40 log-spaced
    out: dict[str, Any] = {}
    for corr in (False, True):
        rng = np.random.default_rng(5)
        w0 = rng.standard_normal((runs, d))
        w0 /= np.linalg.norm(w0, axis=1, keepdims=True)
        for row in (1, 2):  # alpha_u, alpha_v >= 0 at the start
            a0 = w0 @ sp[row]
            w0 -= 2 * np.minimum(a0, 0)[:, None] * sp[row]
        res = escape.spherical_sgd(escape.mcm_sampler(sp, correlated=corr, rng=6), activations.get("relu").df, w0,
                                   delta=1 / math.log(d), t_max=t_max, directions=sp[1:], rng=rng,
                                   record_every=every)
        out["correlated" if corr else "independent"] = {"alpha_u": res.overlap[keep, :, 0],
                                                        "alpha_v": res.overlap[keep, :, 1]}  # (time, run)
        out["t"] = res.t[keep]
    return {"_ref_overlaps": out}


@baked
def cross_term_hidden() -> dict[str, Any]:
    """test_ex72A_cross_term, hidden part: c at six (beta_u, beta_v), and the empirical u-v covariance
    of class +1 from the sampler (2e5 samples, beta = (0, 2, 3), correlated latents)."""
    from td_lib import mixed_cumulant

    cases = [(1.0, 1.0), (2.0, 0.5), (5.0, 10.0), (0.0, 3.0), (3.0, 0.0), (0.5, 40.0)]
    S = np.linalg.qr(np.random.default_rng(4).standard_normal((8, 3)))[0].T  # orthonormal m, u, v
    X, y = mixed_cumulant.sample(200000, spikes=S, beta_m=0.0, beta_u=2.0, beta_v=3.0, correlated=True,
                      rng=np.random.default_rng(4))
    Xp = X[y > 0]
    return {"_cases": cases, "_refs": [float(mixed_cumulant.cross_term(bu, bv, True)) for bu, bv in cases],
            "_cuv": float(((Xp @ S[1]) * (Xp @ S[2])).mean()), "_n_plus": int(Xp.shape[0])}


@baked
def var_x_hidden() -> dict[str, Any]:
    """test_ex72D_var, hidden part: Var(w.x) in class +1 at five cases (eq. of 7.2.D.2 with the
    cross term), and the empirical variance from the sampler for both latents (2e5 samples)."""
    from td_lib import mixed_cumulant

    cases = [(-0.2, 0.7, 3.0, 1.5, True), (0.6, 0.5, 2.0, 4.0, False), (0.1, -0.9, 0.5, 20.0, True),
             (0.0, 1.0, 2.0, 3.0, True), (0.8, 0.0, 7.0, 0.5, True)]
    refs = [1 + bu * au**2 + 2 * float(mixed_cumulant.cross_term(bu, bv, corr)) * au * av
            for au, av, bu, bv, corr in cases]
    S = np.linalg.qr(np.random.default_rng(8).standard_normal((6, 3)))[0].T  # m, u, v
    au, av = 0.5, -0.6
    w = au * S[1] + av * S[2] + math.sqrt(1 - au**2 - av**2) * S[0]
    mc = {}
    for corr in (False, True):
        X, y = mixed_cumulant.sample(200000, spikes=S, beta_m=0.0, beta_u=2.0, beta_v=4.0, correlated=corr,
                          rng=np.random.default_rng(9))
        Xw = X[y > 0] @ w
        mc[corr] = (float(Xw.var()), int(Xw.size))
    return {"_cases": cases, "_refs": refs, "_mc": mc}


@baked
def hermite_demo() -> dict[str, Any]:
    """The Hermite demo of §7.2: ReLU's and tanh's coefficients sigma_0..sigma_10 (quadrature)."""
    from td_lib import hermite

    return {"_s_relu": hermite.coefficients(lambda x: np.maximum(x, 0.0), 10, breakpoints=[0.0]),
            "_s_tanh": hermite.coefficients(np.tanh, 10)}
