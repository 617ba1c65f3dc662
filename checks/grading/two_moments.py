"""Grading references of §7.1 "Two moments" (notebook ``td2_7_1_two_moments``).

Hidden tests and :mod:`checks.two_moments` import these; students do not have them (the delegation
registry :mod:`checks.grading.exercises` lists them as counterparts).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate
from scipy.stats import norm

__all__ = ["bayes_monte_carlo", "e_tanh2_gauss", "MC_N", "MC_SEED"]

MC_N, MC_SEED = 200_000, 11  # the Monte Carlo check of the Bayes rules that §7.1 prints


def e_tanh2_gauss(w: float) -> float:
    """:math:`\\mathbb E[\\tanh^2(wx)]` for :math:`x\\sim\\mathcal N(0,1)` by adaptive quadrature
    (``scipy.integrate.quad`` on :math:`[0,\\infty)`, the integrand being even; accurate to
    ~1e-13). The reference of Exercise 7.1.C.3 (``tanh_sq_moment(w, "gaussian")``).

    References
    ----------
    Seed §7.1, Exercise 7.1.C.3.

    Examples
    --------
    >>> round(e_tanh2_gauss(1.0), 4)
    0.3943
    """
    f = lambda x: math.tanh(w * x) ** 2 * norm.pdf(x)
    return 2 * integrate.quad(f, 0, np.inf, epsabs=1e-16, epsrel=1e-13, limit=200)[0]


def bayes_monte_carlo(n: int = MC_N, seed: int = MC_SEED) -> dict:
    """The Monte Carlo check of the three Bayes rules of the §7.1 test bed (beta = (1, 5, 10),
    d = 16), as the notebook prints it: ``exact``, the three Bayes accuracies by quadrature
    (means only; means + covariances; everything), and ``hits``, the fraction of ``n`` fresh
    samples (torch generator seeded with ``seed``) that each exact rule classifies correctly
    (:func:`td_lib.mixed_cumulant.log_likelihood_ratios`, the rules Exercise 7.2.A builds).
    Students do not have these rules before 7.2.A, so the notebook ships the numbers.

    References
    ----------
    Bardone & Goldt (2024), the mixed cumulant model; §7.1 opening demo.
    """
    import torch

    from td_lib import mixed_cumulant

    kw = dict(beta_m=1.0, beta_u=5.0, beta_v=10.0)
    exact = [mixed_cumulant.bayes_accuracy(**kw, use=u) for u in ("m", "mu", "muv")]
    S = mixed_cumulant.orthonormal_spikes(16)
    X, y = mixed_cumulant.sample(n, 16, S, rng=torch.Generator().manual_seed(seed))
    l_m, l_u, l_v = mixed_cumulant.log_likelihood_ratios(X, S, **kw)
    yy = np.asarray(y)
    hits = [float(np.mean(np.sign(r) == yy)) for r in (l_m, l_m + l_u, l_m + l_u + l_v)]
    return {"exact": exact, "hits": hits, "n": n, "seed": seed}
