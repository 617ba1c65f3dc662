"""§7.1b "Early-time linear learning" (Hu, Xiao, Adlam & Pennington 2020): recompute every
number the notebook's prose quotes.

``claims(full)`` returns :class:`checks.claims.Claim` records for

* the key-lemma sweep (:func:`td_lib.early_linear.lemma_sweep`, GELU, n = m = 2 d^{5/4},
  d = 16 ... 128, seed 0, exactly the notebook's call): relative spectral distances
  ||Theta1 - K1|| / ||K1|| at d = 16 and 128, with the identity part added, with nu = 0, the
  Frobenius version and the fitted exponents of d;
* the agreement demo (:func:`td_lib.early_linear.agreement_run`, ReLU, first layer,
  eta = d/8, n = m = 12 d, t up to 16 T, seed 0, the notebook's call): the relative test
  difference between network and linear model at t ~ T/2 for d = 16 and 32, and the final
  test losses of the network and of the best linear model at d = 32;
* the time scale (issue 13): the linear model's GD relaxes linear direction k at rate
  eta zeta^2 lambda_k / d, so in about d / (eta zeta^2 lambda) = 4d/eta steps for ReLU
  (8d/eta for the demo's smallest lambda = 0.5), and T = d log d / eta is shorter than that at
  the demo's d; in the seeded run the linear model's test loss is still 0.624 (best linear
  0.551) at t = 1.05 T and gets within 0.1 % of the best only at 3.7 T (d = 32);
* the CNN of their §4.1 (Prop. 4.1): the constants of its linear kernel, the kernel sweep
  (:func:`td_lib.early_linear.cnn_kernel_sweep`, the notebook's call) and the Walsh rates of
  the infinite-width NTK (cheap, both modes); the CNN training demo
  (:func:`td_lib.early_linear.cnn_agreement_run`, about 15 s) only with ``full=True``;
* identities behind the prose (no quote): the ReLU constants of the linear models in closed
  form, the first-layer NTK against autograd, the linear model's closed-form GD against
  explicit iteration, and the CNN NTK against autograd.

The seed paper's display equations were lost in the dump, so there are no printed numbers
to correct; every quoted number comes from the notebook's own seeded runs (tolerance: the
rounding of the printed digits plus 0.002 for float32 training across BLAS builds). The
time-scale claims correct earlier versions of this notebook (which said "each linear
direction relaxes in ~d/eta steps" and that the linear model has converged once t >~ T),
not the paper: its Corollary 3.3 is a large-d statement with an unspecified constant.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import torch

from checks.claims import Claim
from td_lib import early_linear as el
from td_lib import hermite, kernel_flow
from td_lib.core import activations

NB = "course/source/td2_7_learned_first/td2_7_1b_early_time_linear.py"


def _c(id_: str, text: str, quoted, computed, tol: float, quote: str | None, note: str = "",
       **extra) -> Claim:
    return Claim(id=f"lf71b_{id_}", text=text, quoted=quoted, computed=float(computed), tol=tol,
                 notebook=NB if quote else None, quote=quote, note=note, extra=extra)


@lru_cache(maxsize=1)
def lemma() -> dict:
    """The notebook's full-mode sweep."""
    return el.lemma_sweep([16, 32, 64, 128], activation="gelu", alpha=0.25, n_factor=2.0, rng=0)


@lru_cache(maxsize=2)
def demo(d: int) -> el.AgreementRun:
    """The notebook's full-mode agreement run at dimension d."""
    return el.agreement_run(d, activation="relu", layers="first", n_per_d=12, t_max=16.0, rng=0)


@lru_cache(maxsize=1)
def cnn_sweep() -> dict:
    """The notebook's full-mode Prop. 4.1 kernel sweep (about 3 s)."""
    return el.cnn_kernel_sweep(CNN_SWEEP_DS, CNN_SWEEP_QS, activation="relu", rng=0)


@lru_cache(maxsize=1)
def cnn_demo() -> el.CNNAgreementRun:
    """The notebook's full-mode CNN agreement run (about 15 s)."""
    return el.cnn_agreement_run(CNN_D, CNN_Q, m=CNN_M, rng=0)


CNN_SWEEP_DS, CNN_SWEEP_QS = (16, 32, 64), (2, 4, 8, 16, 32)
CNN_D, CNN_Q, CNN_M = 32, 8, 256
REACH_RTOL = 1e-3  # agreement_run's default: "within 0.1 % of the best linear model"


def _at(r: el.AgreementRun, x: float) -> int:
    """Index of the checkpoint with t/T closest to x (what the notebook prints)."""
    return int(np.argmin(np.abs(r.t_over_T - x)))


def _half(r: el.AgreementRun) -> float:
    return float(r.rel_test[_at(r, 0.5)])


def lemma_claims() -> list[Claim]:
    r = lemma()
    rnd2 = 0.005 + 0.002
    return [
        _c("rel1_d16", "||Theta1 - K1|| / ||K1|| at d = 16 (GELU, n = m = 64)", 0.36,
           r["rel1"][0], rnd2, "falls from 0.36 at"),
        _c("rel1_d128", "||Theta1 - K1|| / ||K1|| at d = 128 (n = m = 862)", 0.13,
           r["rel1"][-1], rnd2, "0.13 at $d=128$"),
        _c("slope_rel1", "fitted exponent of d of the relative spectral distance", -0.49,
           r["slope_rel1"], rnd2, "about −0.49",
           note="the paper guarantees d^{-alpha} = d^{-0.25} in this regime"),
        _c("rel1_id_d128", "same with the identity part kappa I added, d = 128", 0.07,
           r["rel1_id"][-1], rnd2, "0.07 at $d=128$"),
        _c("slope_rel1_id", "fitted exponent with the identity part added", -0.64,
           r["slope_rel1_id"], rnd2, "exponent about −0.64"),
        _c("rel1_nonu_min", "distance with nu = 0: smallest over d", 0.42,
           r["rel1_nonu"].min(), rnd2, "between 0.42 and 0.46"),
        _c("rel1_nonu_max", "distance with nu = 0: largest over d", 0.46,
           r["rel1_nonu"].max(), rnd2, "0.46 at every $d$"),
        _c("slope_rel1_nonu", "fitted exponent with nu = 0", -0.04, r["slope_rel1_nonu"], rnd2,
           "exponent −0.04"),
        _c("slope_frob1", "fitted exponent of the Frobenius distance / ||K1||", 0.32,
           r["slope_frob1"], rnd2, "exponent +0.32"),
    ]


def demo_claims() -> list[Claim]:
    r16, r32 = demo(16), demo(32)
    pct = 0.5 + 0.2  # percent: rounding of the printed digits + float32 margin
    rnd2 = 0.005 + 0.002
    return [
        _c("rel_half_d16", "relative RMS test difference network vs linear model, t ~ T/2, d=16 (%)",
           18, 100 * _half(r16), pct, "differ by 18 %"),
        _c("rel_half_d32", "same at d = 32 (%)", 11, 100 * _half(r32), pct, "by 11 % at $d=32$"),
        _c("test_net_d32", "network test loss at t = 16 T, d = 32", 0.40, r32.test_net[-1],
           rnd2, "0.40 at $d=32$"),
        _c("test_best_lin_d32", "test loss of the best linear model, d = 32", 0.55,
           r32.test_best_lin, rnd2, "0.55 for the best linear model"),
    ]


def time_scale_claims() -> list[Claim]:
    """Issue 13: the relaxation rate eta zeta^2 lambda / d, and what the seeded run shows at T."""
    c = el.linear_constants("relu")
    _, S = el.make_data(12 * 32 + 400, 32, rng=0)        # the demo's Sigma at d = 32
    lam_min = float(np.linalg.eigvalsh(S).min())
    r16, r32 = demo(16), demo(32)
    iT = _at(r32, 1.0)
    rnd2, rnd3 = 0.005 + 0.002, 0.0005 + 0.002
    rates = el.linear_mode_rates(r32.psi_train, r32.eta)   # largest first
    slow = rates[32]                                             # the (d+1)-th, last nonzero one
    left = (1.0 - slow) ** r32.T
    return [
        _c("relu_zeta2", "zeta^2 = (E phi'(g))^2 for ReLU", 0.25, c.zeta**2, 1e-12,
           "0.25 for ReLU"),
        _c("relax_steps", "relaxation time of a linear direction with lambda = 1, in units of d/eta "
           "(1/zeta^2)", 4, 1 / c.zeta**2, 1e-9, r"about $4d/\eta$",
           note="earlier versions of the notebook said ~d/eta: off by 1/zeta^2"),
        _c("relax_slowest", "relaxation time of the slowest direction (lambda_min(Sigma) = 0.5), "
           "units of d/eta", 8, 1 / (c.zeta**2 * lam_min), 1e-9, r"$8d/\eta$ for"),
        _c("T_over_relax_d32", "T / (4d/eta) = zeta^2 log d at d = 32", 0.87,
           r32.T / (r32.d / (r32.eta * c.zeta**2)), 0.005, "only 0.87 of"),
        _c("slowest_left_at_T", "fraction of the slowest direction's residual left at t = T "
           "(d = 32, the demo's sample)", 0.73, left, rnd2, "0.73 of its"),
        _c("t_at_T_d32", "t/T of the checkpoint closest to T (d = 32)", 1.05, r32.t_over_T[iT],
           0.005, r"$t=1.05\,T$"),
        _c("test_lin_T_d32", "test loss of the linear model at t = 1.05 T, d = 32", 0.624,
           r32.test_lin[iT], rnd3, "0.624 against"),
        _c("test_best_lin_d32_3", "test loss of the best linear model, d = 32 (3 digits)", 0.551,
           r32.test_best_lin, rnd3, "0.551 for the best"),
        _c("reach_rtol", "tolerance of 'reaches the best linear model's line' (percent)", 0.1,
           100 * REACH_RTOL, 1e-12, "0.1 % of that line"),
        _c("reach_d32", "first t/T at which the linear model's test loss is within 0.1 % of the "
           "best linear model's (d = 32, every integer step)", 3.7, r32.lin_reach_T, 0.05 + 0.005,
           r"$t\approx3.7\,T$"),
        _c("reach_d16", "the same at d = 16", 3.0, r16.lin_reach_T, 0.05 + 0.005, r"3.0\,T$ at $d=16"),
    ]


def cnn_claims() -> list[Claim]:
    """Prop. 4.1: the CNN's linear kernel, the kernel sweep and the Walsh rates (cheap)."""
    h = hermite.coefficients(activations.get("relu").f, 2, breakpoints=[0.0])
    sw = cnn_sweep()
    iq = {q: j for j, q in enumerate(sw["q"])}
    i64 = list(sw["d"]).index(64)
    w8 = el.cnn_walsh_rates("relu", 8, 32)
    pop = {q: el.cnn_walsh_rates("relu", q, 64) for q in (2, 32)}
    c8 = el.cnn_linear_constants("relu", 8)
    fc = el.linear_constants("relu")
    slope = float(np.polyfit(np.log(sw["q"]), np.log(sw["rel"][i64]), 1)[0])
    rnd2, rnd3 = 0.005 + 0.002, 0.0005 + 0.001
    return [
        _c("cnn_const_q8", "const1 + const2 of the CNN linear kernel, ReLU, q = 8 (exact)", 0.191,
           c8.const1 + c8.const2, rnd3, "0.191 at $q=8$"),
        _c("cnn_const_lead_q8", "leading order c0^2 + 3 c2^2/(2q), ReLU, q = 8", 0.189,
           h[0] ** 2 + 1.5 * h[2] ** 2 / 8, rnd3, "0.189 to leading order"),
        _c("cnn_rel_q2_d64", "||Theta* - K_CNN - kappa I|| / ||L||, q = 2, d = 64", 0.32,
           sw["rel"][i64, iq[2]], rnd2, "from 0.32 at $q=2$"),
        _c("cnn_rel_q32_d64", "the same at q = 32, d = 64", 0.055, sw["rel"][i64, iq[32]], rnd3,
           "0.055 at $q=32$"),
        _c("cnn_slope_q", "fitted exponent of q of the relative distance, d = 64", -0.66, slope,
           rnd2, "exponent about −0.66"),
        _c("cnn_rel_q8_min", "relative distance at q = 8, smallest over d = 16, 32, 64", 0.13,
           np.nanmin(sw["rel"][:, iq[8]]), rnd2, "between 0.13 and"),
        _c("cnn_rel_q8_max", "the same, largest over d", 0.16, np.nanmax(sw["rel"][:, iq[8]]), rnd2,
           "0.16 for $d=16,32,64$"),
        _c("cnn_pop_q2", "population ratio mu_local / mu_linear at q = 2", 0.34,
           pop[2]["local"] / pop[2]["linear"], rnd2, "0.34 at $q=2$"),
        _c("cnn_pop_q32", "population ratio mu_local / mu_linear at q = 32", 0.030,
           pop[32]["local"] / pop[32]["linear"], rnd3, "0.030 at $q=32$"),
        _c("cnn_lead_q2_d16", "distance with the leading-order constant, q = 2, d = 16", 0.82,
           sw["rel_lead"][0, iq[2]], rnd2, "0.82 at $d=16$"),
        _c("cnn_lead_q2_d64", "the same at d = 64", 3.4, sw["rel_lead"][i64, iq[2]], 0.05 + 0.005,
           "3.4 at $d=64$"),
        _c("cnn_rate_ratio_q8", "mu_linear / mu_local for the CNN, q = 8 (exact, any d)", 8.1,
           w8["linear"] / w8["local"], 0.05 + 0.001, "8.1 times slower"),
        _c("cnn_rate_ratio_lead_q8", "the same to leading order, 2 zeta^2 q^2 / (3 c2^2 (q - 1))",
           9.6, 2 * h[1] ** 2 * 64 / (3 * h[2] ** 2 * 7), 0.05 + 0.001, "9.6 to leading order"),
        _c("fcn_rate_ratio_d32", "FCN first layer: linear vs quadratic rate, zeta^2 d / (2 c2^2), "
           "d = 32 (leading order, isotropic inputs)", 25, fc.zeta**2 * 32 / (2 * h[2] ** 2), 0.5 + 0.01,
           "about 25 at $d=32$"),
    ]


def cnn_demo_claims() -> list[Claim]:
    """The CNN training demo (full mode only: about 15 s)."""
    r = cnn_demo()
    iT = _at(r, 1.0)
    th_loc = r.rate_local * kernel_flow.gd_filter([r.rate_local], [r.t[iT]], eta=r.eta)[0, 0]  # 1 - (1 - eta rate)^t
    pct = 0.5 + 0.2
    rnd2 = 0.005 + 0.002
    return [
        _c("cnn_eta_K", "eta ||K_CNN|| / n in the CNN demo", 0.77, r.eta_K_over_n, rnd2,
           "0.77, below"),
        _c("cnn_ntk_rel_finite", "||Theta(0) - K_CNN - kappa I|| / ||L||, m = 256 filters", 0.23,
           r.ntk_rel, rnd2, "0.23 for the network"),
        _c("cnn_ntk_rel_inf", "the same for the infinite-width NTK on the training set", 0.13,
           r.ntk_rel_inf, rnd2, "0.13 for its infinite-width"),
        _c("cnn_rel_half", "relative RMS test difference CNN vs its linear model at t ~ T/2 (%)",
           24, 100 * _half(r), pct, "differ by 24 %"),
        _c("cnn_reach", "first t/T at which the CNN's linear model is within 0.1 % of the best "
           "linear model", 0.54, r.lin_reach_T, 0.005 + 0.01, r"0.54\,T$"),
        _c("cnn_loc_T", "overlap of the CNN's test predictions with y_loc at t = 1.05 T", 0.20,
           r.quad_net[iT], rnd2, "0.20 of the local part"),
        _c("cnn_loc_T_theory", "population kernel-regime prediction 1 - (1 - eta mu_loc)^t there",
           0.20, th_loc, rnd2, "0.20 predicted"),
        _c("cnn_test_net_end", "CNN test loss at t = 8 T", 0.11, r.test_net[-1], rnd2,
           r"0.11 at $t=8\,T$"),
        _c("cnn_best_lin", "test loss of the best linear model (CNN demo data)", 0.60,
           r.test_best_lin, rnd2, "0.60 for the best linear"),
    ]


def identity_claims() -> list[Claim]:
    c = el.linear_constants("relu", 1.7)
    r = 1 / math.sqrt(2 * math.pi)
    err_c = max(abs(c.zeta - 0.5), abs(c.nu - math.sqrt(1.7) * r), abs(c.theta0 - r),
                abs(c.theta1 - r), abs(c.theta2), abs(c.diag1 - 0.25))
    X, S = el.make_data(10, 4, rng=1)
    W, v = el.symmetric_init(4, 6, rng=2)
    Xt = torch.as_tensor(X)
    rows = []
    for i in range(10):
        Wp = W.clone().requires_grad_(True)
        f = el.network_output(Xt[i:i + 1], Wp, v, "gelu")[0]
        rows.append(torch.autograd.grad(f, Wp)[0].flatten().numpy())
    J = np.array(rows)
    err_ntk = np.abs(el.ntk_at_init(X, W, v, "gelu", "first") - J @ J.T).max()
    y = el.teacher_labels(X, S)
    cg = el.linear_constants("gelu")
    res = el.train_linear_model(X, y, cg, layers="both", eta=0.5, checkpoints=[25])
    psi = el.linear_features(X, cg, "both")
    b = np.zeros(psi.shape[1])
    for _ in range(25):
        b -= 0.5 / 10 * psi.T @ (psi @ b - y)
    err_gd = np.abs(res.beta[0] - b).max()
    Xc, _ = el.make_data(6, 7, spectrum="flat", entries="rademacher", rotate=False, rng=3)
    Wc, Vc = el.cnn_symmetric_init(d=7, q=3, m=6, rng=4)
    rows = []
    for i in range(6):
        Wp, Vp = Wc.clone().requires_grad_(True), Vc.clone().requires_grad_(True)
        f = el.cnn_output(Xc[i:i + 1], Wp, Vp, "relu")[0]
        rows.append(np.concatenate([g.flatten().numpy() for g in torch.autograd.grad(f, (Wp, Vp))]))
    Jc = np.array(rows)
    err_cnn = np.abs(el.cnn_ntk(Xc, Wc, Vc, "relu", "both") - Jc @ Jc.T).max()
    return [
        _c("cnn_ntk_autograd", "CNN (12) NTK, both layers, vs autograd Jacobian (max abs error)",
           None, err_cnn, 1e-12, None),
        _c("relu_constants", "ReLU constants (zeta, nu, theta0, theta1, theta2, kappa) vs closed "
           "form", None, err_c, 1e-12, None),
        _c("ntk_autograd", "first-layer NTK vs autograd Jacobian (max abs error)", None, err_ntk,
           1e-12, None),
        _c("linear_gd_closed_form", "closed-form GD of the linear model vs 25 explicit steps",
           None, err_gd, 1e-12, None),
    ]


def claims(full: bool = False) -> list[Claim]:
    # The quoted numbers come from the notebook's full-mode runs, so both modes recompute the
    # two-layer network's runs (about 35 s of CPU) and the CNN kernel sweep (about 3 s); the
    # CNN training demo (about 15 s more) only with ``full``.
    out = identity_claims() + lemma_claims() + demo_claims() + time_scale_claims() + cnn_claims()
    return out + (cnn_demo_claims() if full else [])


if __name__ == "__main__":  # pragma: no cover
    import sys

    from checks.claims import run as _run

    sys.exit(_run(claims, "§7.1b early-time linear learning claims"))
