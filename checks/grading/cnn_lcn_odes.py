"""Plain loop-based reference RHS for the CNN / LCN ODEs (the oracle of ``td_lib.cnn_lcn.odes``;
slow by design).

Written straight from the paper's appendix: every field is an explicit linear combination of
single-vector fields ``(vector . x_r)/sqrt(D)``; covariances come from the Gram matrix of the
weight vectors (``w_m.w_m'/D = T delta``, ``w_hat_l.w_m/D = sqrt(k_s k_t) R_lm``,
``w_hat_l.w_hat_l'/D = k_s Q_ll'``) and ``S``; each Saad-Solla integral is evaluated on its
explicit 3x3 / 4x4 block, one at a time, in nested Python loops over positions and taps.

CNN: eqs 54 (=65), 64 (=66, 67). LCN: eqs 73 (=77), 76 (=78, 79).

Used by ``tests/test_cnn_lcn_odes.py`` (the vectorised RHS equals it to 1e-12) and
``benchmarks/bench_cnn_lcn.py`` (its speed-up). Public API of ``td_lib.cnn_lcn`` only.

References
----------
Mori et al., *exact online-SGD dynamics of CNN vs LCN students*, Apps A-B, eqs 54-79.
"""

from __future__ import annotations

import numpy as np

from td_lib.cnn_lcn import I3, I4, J2


class _Fields:
    def __init__(self, kind, R, Q, S, T):
        self.kind = kind
        self.P = P = S.shape[0]
        self.k_s, self.k_t = R.shape[-2], R.shape[-1]
        k_s, k_t = self.k_s, self.k_t
        n_st = k_s if kind == "cnn" else P * k_s
        n = k_t + n_st
        G = np.zeros((n, n))
        G[:k_t, :k_t] = T * np.eye(k_t)
        if kind == "cnn":
            G[k_t:, :k_t] = np.sqrt(k_s * k_t) * R
            G[k_t:, k_t:] = k_s * Q
        else:
            for p in range(P):
                for q in range(P):
                    for l in range(k_s):
                        for l2 in range(k_s):
                            G[k_t + p * k_s + l, k_t + q * k_s + l2] = k_s * Q[p, q, l, l2]
                for l in range(k_s):
                    for m in range(k_t):
                        G[k_t + p * k_s + l, m] = np.sqrt(k_s * k_t) * R[p, l, m]
        G[:k_t, k_t:] = G[k_t:, :k_t].T
        self.n = n
        self.big = np.kron(G, S)  # index (vector, position)

    def single(self, v, r, coef):
        c = np.zeros(self.n * self.P)
        c[v * self.P + r % self.P] = coef
        return c

    def mu(self, r, m):
        return self.single(m, r, 1 / np.sqrt(self.k_t))

    def nu(self, r, l, p=None):
        v = self.k_t + (l if self.kind == "cnn" else p * self.k_s + l)
        return self.single(v, r, 1 / np.sqrt(self.k_s))

    def lam(self, p):
        return sum(self.mu(p + m, m) for m in range(self.k_t))

    def lamhat(self, p):
        if self.kind == "cnn":
            return sum(self.nu(p + l, l) for l in range(self.k_s))
        return sum(self.nu(p + l, l, p) for l in range(self.k_s))

    def cov(self, *fields):
        F = np.stack(fields)
        return F @ self.big @ F.T


def reference_terms(kind: str, R, Q, S, *, T: float = 1.0, sigma: float = 0.0):
    """``(F_R, F_Q, G_Q)`` for ONE unbatched state, by explicit loops over every index."""
    R, Q, S = (np.asarray(a, float) for a in (R, Q, S))
    f = _Fields(kind, R, Q, S, T)
    P, k_s, k_t = f.P, f.k_s, f.k_t
    lam = [f.lam(p) for p in range(P)]
    lh = [f.lamhat(p) for p in range(P)]

    def i3(a, b, c):
        return float(I3(f.cov(a, b, c)))

    def i4(a, b, c, d):
        return float(I4(f.cov(a, b, c, d)))

    # the curly bracket of eq. 64 / 76, for every pair (p, q)
    brace = np.zeros((P, P))
    for p in range(P):
        for q in range(P):
            tot = 0.0
            for r in range(P):
                for s in range(P):
                    tot += (i4(lh[p], lh[q], lam[r], lam[s]) - 2 * i4(lh[p], lh[q], lam[r], lh[s])
                            + i4(lh[p], lh[q], lh[r], lh[s]))
            brace[p, q] = tot + sigma**2 * float(J2(f.cov(lh[p], lh[q])))

    if kind == "cnn":
        F_R = np.zeros((k_s, k_t))
        for l in range(k_s):
            for m in range(k_t):
                for p in range(P):
                    for q in range(P):
                        mu = f.mu(p + l, m)
                        F_R[l, m] += i3(lh[p], mu, lam[q]) - i3(lh[p], mu, lh[q])
        F_Q = np.zeros((k_s, k_s))
        G_Q = np.zeros((k_s, k_s))
        for l in range(k_s):
            for l2 in range(k_s):
                for p in range(P):
                    for q in range(P):
                        a = f.nu(p + l, l2)
                        b = f.nu(p + l2, l)
                        F_Q[l, l2] += (i3(lh[p], a, lam[q]) - i3(lh[p], a, lh[q])
                                       + i3(lh[p], b, lam[q]) - i3(lh[p], b, lh[q]))
                        G_Q[l, l2] += S[(p + l) % P, (q + l2) % P] * brace[p, q]
        return F_R, F_Q, G_Q

    F_R = np.zeros((P, k_s, k_t))
    for p in range(P):
        for l in range(k_s):
            for m in range(k_t):
                mu = f.mu(p + l, m)
                for s in range(P):
                    F_R[p, l, m] += i3(lh[p], mu, lam[s])
                for q in range(P):
                    F_R[p, l, m] -= i3(lh[p], mu, lh[q])
    F_Q = np.zeros((P, P, k_s, k_s))
    G_Q = np.zeros((P, P, k_s, k_s))
    for p in range(P):
        for q in range(P):
            for l in range(k_s):
                for l2 in range(k_s):
                    a = f.nu(p + l, l2, q)   # nu^{(q,l')}_{(p+l)}
                    b = f.nu(q + l2, l, p)   # nu^{(p,l)}_{(q+l')}
                    tot = 0.0
                    for s in range(P):
                        tot += i3(lh[p], a, lam[s]) + i3(lh[q], b, lam[s])
                    for r in range(P):
                        tot -= i3(lh[p], a, lh[r]) + i3(lh[q], b, lh[r])
                    F_Q[p, q, l, l2] = tot
                    G_Q[p, q, l, l2] = S[(p + l) % P, (q + l2) % P] * brace[p, q]
    return F_R, F_Q, G_Q


def reference_rhs(kind: str, R, Q, S, *, T: float = 1.0, eta: float = 1.0, sigma: float = 0.0):
    """``(dR, dQ)`` of eqs 17 / 18 from :func:`reference_terms` (one unbatched state)."""
    F_R, F_Q, G_Q = reference_terms(kind, R, Q, S, T=T, sigma=sigma)
    k_s = np.shape(R)[-2]
    return eta / k_s * F_R, eta / k_s * F_Q + eta**2 / k_s**2 * G_Q


def k2_erf(C):
    """``K2(C) = E[g''(u1) g''(u2)]`` for ``g(z) = erf(z / sqrt 2)``, ``(u1, u2) ~ N(0, C)``
    (lesson 1, Exercise A, part 3; by Price's theorem ``dJ2/dc12``):
    ``(2/pi) c12 [(1+c11)(1+c22) - c12^2]^(-3/2)``. ``C`` of shape ``(..., 2, 2)``; returns ``(...)``.

    References
    ----------
    Mori et al. (CNN vs LCN), eq. 45 (``J2``), differentiated in ``c12``; Price (1958).
    """
    C = np.asarray(C, dtype=float)
    det = (1.0 + C[..., 0, 0]) * (1.0 + C[..., 1, 1]) - C[..., 0, 1] ** 2
    return 2.0 / np.pi * C[..., 0, 1] / det**1.5
