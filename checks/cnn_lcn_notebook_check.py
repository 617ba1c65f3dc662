"""Recompute every number quoted by the CNN/LCN notebooks (assignment ``cnn_lcn``).

Run ``python checks/cnn_lcn_notebook_check.py`` for a table, ``--json`` for records,
``--full`` for the long version (adds the Figure 7 slopes of the larger kernels and the
ordering of the Figure 3 slopes, about a minute). Each claim names the notebook of the
assignment and the sentence in it that quotes it: lesson 2 (``NB2``,
``course/source/cnn_lcn/cnn_lcn_2_specialisation.py``) quotes the specialisation times of
Figures 3 and 7, lesson 3 (``NB3``, ``course/source/cnn_lcn/cnn_lcn_3_noise_floor_phase.py``)
the initial errors, early-time coefficients and noise floors; lesson 1 (``NB1``,
``course/source/cnn_lcn/cnn_lcn_1_exact_odes.py``) the gap of Figure 2a. Claims without a
quote are identities the notebooks rely on (their ``quoted`` is ``None``: ``computed`` must be
within ``tol`` of zero).
"""

from __future__ import annotations

import functools
import sys

import numpy as np

from checks.claims import Claim, run
from td_lib import cnn_lcn as cl

NB1 = "course/source/cnn_lcn/cnn_lcn_1_exact_odes.py"  # §1-3: Figure 2, Result 3.2
NB2 = "course/source/cnn_lcn/cnn_lcn_2_specialisation.py"  # §4: Figures 3, 4 and 7
NB3 = "course/source/cnn_lcn/cnn_lcn_3_noise_floor_phase.py"  # §5: initial errors, A and B, floors
FIG5_C = (0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875)  # Figure 5a's c grid (full mode)


def _eps0_claims() -> list[Claim]:
    out = []
    for kind, c, quoted, quote in (("cnn", 0.5, 6.527, "6.527 against"),
                                   ("lcn", 0.5, 4.597, "4.597 (the starting points"),
                                   ("lcn", 0.0, 2.667, "2.667.")):
        R0, Q0 = cl.leading_order_init(kind, P=4, k_s=3, k_t=2)
        e = float(cl.generalisation_error(kind, R0, Q0, cl.input_covariance(4, c), 1.0))
        out.append(Claim(f"eps0_{kind}_c{c}", f"initial error eq. 28, {kind}, P=4, T=1, c={c} "
                         "(eq. 81 at the leading-order state)", quoted, e, 5e-4, NB3, quote))
    R0, Q0 = cl.leading_order_init("cnn", P=4, k_s=3, k_t=2)
    e_c = float(cl.generalisation_error("cnn", R0, Q0, cl.input_covariance(4, 0.0), 1.0))
    out.append(Claim("eps0_equal_c0", "at c = 0 the CNN and LCN initial errors coincide",
                     None, e_c - 8 / 3, 1e-12))
    return out


def _early_time_claims() -> list[Claim]:
    Ac, Bc = cl.early_time_coefficients("cnn", P=4, k_s=1, k_t=1, T=1.0, sigma=1.0, c=0.0)
    Al, Bl = cl.early_time_coefficients("lcn", P=4, k_s=1, k_t=1, T=1.0, sigma=1.0, c=0.0)
    _, B_printed = cl.early_time_coefficients_closed_form("cnn", P=4, k_s=1, T=1.0, sigma=1.0,
                                                          c=0.0, corrected=False)
    _, B_fixed = cl.early_time_coefficients_closed_form("cnn", P=4, k_s=1, T=1.0, sigma=1.0, c=0.0)
    c0 = cl.c_star_slope_numeric(P=4, k_s=1, k_t=1, T=1.0, sigma=1.0)
    return [
        Claim("A_cnn", "A_CNN at c=0 (Figure 6 parameters), from the ODE", 4.323, Ac, 5e-4, NB3,
              "4.323, which is"),
        Claim("A_ratio", "A_CNN = P A_LCN at c = 0", None, Ac / Al - 4, 1e-8),
        Claim("B_cnn", "B_CNN at c=0, from the ODE", 3.776, Bc, 5e-4, NB3, "3.776, again"),
        Claim("B_ratio", "B_CNN = P B_LCN at c = 0", None, Bc / Bl - 4, 1e-8),
        Claim("B_printed", "B_CNN from eq. 108 as printed", 3.544, B_printed, 5e-4, NB3,
              "3.544 for the CNN",
              note="seed error: eq. 108's V_d misplaces chi in two arcsine arguments; the printed "
                   "form gives B_CNN = 3.544, the ODE (and the corrected closed form) 3.776"),
        Claim("B_corrected", "corrected closed form vs ODE", None, B_fixed - Bc, 1e-8),
        Claim("c0", "c0 (eq. 30) at Figure 6 parameters, from the ODE's A and B", 0.2429, c0,
              5e-5, NB3, "0.2429, comes out"),
        Claim("c0_eq119", "eq. 119 agrees with the ODE's c0", None,
              cl.c_star_slope(P=4, k_s=1, T=1.0, sigma=1.0) - c0, 1e-9),
    ]


def _floor_claims(full: bool) -> list[Claim]:
    ratio = float(cl.noise_floor("cnn", eta=1.0, sigma=1.0, P=6, T=1.0, c=0.5)
                  / cl.noise_floor("lcn", eta=1.0, sigma=1.0, P=6, T=1.0, c=0.5))
    out = [Claim("floor_ratio", "CNN/LCN noise floor, P=6, c=0.5 (eqs 31-32)", 3.236, ratio, 5e-4,
                 NB3, "3.236 times the LCN's")]
    # Figure 5a: the ODE's fixed points at eta = 2e-3 (cl.fixed_point from the zero-error
    # solution, as the notebook plots them) against eqs 31-32, on the notebook's c grid (P = 6).
    eta = 2e-3
    rel, worst_res = [], 0.0
    for kind in ("cnn", "lcn"):
        R0, Q0 = cl.zero_error_solution(kind, P=6, k_s=2, k_t=2)
        for c in FIG5_C:
            fp = cl.fixed_point(kind, R0, Q0, cl.input_covariance(6, c), T=1.0, eta=eta, sigma=1.0)
            rel.append(float(fp["eg"] / cl.noise_floor(kind, eta=eta, sigma=1.0, P=6, T=1.0, c=c) - 1))
            worst_res = max(worst_res, fp["residual"] if fp["eigmax"] < 0 else np.inf)
            if c == 0.5:
                E = cl.error_covariance(kind, fp["R"], fp["Q"], cl.input_covariance(6, c))
                E00 = float(E[0, 0] / (eta / 2))
                if kind == "cnn":
                    out.append(Claim("eq34_cnn_diag", "CNN at the fixed point (P=6, c=0.5): "
                                     "E[e_0^2] / (eta sigma^2 / 2) - 1, in % (eq. 34 says 0)", 12.0,
                                     100 * (E00 - 1), 0.5, NB3, "12 %",
                                     note="eq. 34 is leading order; the O(eta) correction is large "
                                          "for the CNN at c = 0.5 (claims eq34_O_eta_* of "
                                          "checks/cnn_lcn_check.py)"))
                out.append(Claim(f"floor_ode_{kind}", f"{kind} fixed point at eta=2e-3, c=0.5 vs eq. "
                                 f"3{1 + (kind == 'lcn')} (relative difference: the O(eta) correction)",
                                 None, rel[-1], 0.01))
    out += [Claim("floor_fixed_point", "Figure 5's markers are attracting stationary states (largest "
                  "max |RHS|/eta over them; inf if a Jacobian eigenvalue is >= 0)", None, worst_res,
                  1e-10),
            Claim("floor_excess_min", "Figure 5a: smallest excess of the fixed points over eqs 31-32 "
                  "(%, both students, c grid)", 0.2, 100 * min(rel), 0.05, NB3, "0.2 % to"),
            Claim("floor_excess_max", "Figure 5a: largest excess of the fixed points over eqs 31-32 "
                  "(%, both students, c grid)", 1.0, 100 * max(rel), 0.05, NB3, "1.0 % above")]
    return out


def _figure2a_claims() -> list[Claim]:
    """Lesson 1, Figure 2a (c = 0): the two ODE curves start from their own simulation's random
    initial overlaps (D = 1000, rng = 1, as the notebook's full run), so they do not coincide."""
    P, k_s, k_t = 4, 3, 2
    S = cl.input_covariance(P, 0.0)
    eg = {}
    for kind, a_max in (("cnn", 3.0), ("lcn", P * 3.0)):
        ck = np.linspace(0, a_max, 41)
        sim = cl.simulate_sgd(kind, D=1000, P=P, k_s=k_s, k_t=k_t, c=0.0, T=1.0, eta=1.0,
                              checkpoints=np.array([0.0]), n_test=0, rng=1)  # the initial state only
        eg[kind] = cl.integrate(kind, sim.R0[0], sim.Q0[0], ck, S, T=1.0, eta=1.0, dtau=0.05).eg
    gap = np.abs(eg["cnn"] - eg["lcn"])
    return [Claim("fig2a_gap", "Figure 2a: max |eps_CNN(alpha) - eps_LCN(P alpha)| along the ODE curves "
                  "from the simulations' own random starts (D = 1000)", 0.161, float(gap.max()), 5e-4,
                  NB1, "0.161 between"),
            Claim("fig2a_gap_at_0", "Figure 2a: the largest gap is at alpha = 0 (index of the maximum)",
                  None, float(np.argmax(gap)), 0.0),
            Claim("fig2a_gap_shrinks", "Figure 2a: the gap at the end of the run is below a tenth of the "
                  "initial one (max(0, last / first - 0.1))", None, max(0.0, gap[-1] / gap[0] - 0.1), 0.0)]


def _rescaling_claims() -> list[Claim]:
    R0, Q0 = cl.random_init("cnn", D=30, P=4, k_s=3, k_t=2, rng=4)
    Rl, Ql = cl.matched_lcn_init(R0, Q0, 4)
    al = np.linspace(0, 2.0, 5)
    e_c = cl.integrate("cnn", R0, Q0, al, np.eye(4), eta=0.8, dt=0.05).eg
    e_l = cl.integrate("lcn", Rl, Ql, 4 * al, np.eye(4), eta=0.8, dt=0.2).eg
    return [Claim("result_3_2", "eps_CNN(alpha) = eps_LCN(P alpha) from the matched state (S = I)",
                  None, float(np.abs(e_c - e_l).max()), 1e-10)]


# Lesson 2's Figures 3, 4 and 7: its runs, in full and in quick (TD_QUICK=1) mode, held here once.
# The notebook writes them as literals pick(full, quick) (it is released to students and cannot
# import checks); tests/test_cnn_lcn_notebook.py checks that they equal lesson2_values(quick).
D_GRID = np.array([1e2, 1e4, 1e6, 1e8, 1e10, 1e12])
N_INIT = 8
N_CKPT = 400
D_MIN = 1e4  # the fits use D >= 1e4 (D = 100 is plotted, not fitted)
FIG3 = dict(P=6, k_t=1, eta=0.5, c=0.0, rng=3, dtau=0.5)
AMAX3 = {1: 40.0, 2: 400.0, 3: 800.0, 4: 1500.0}
KS3 = (1, 2, 3, 4)
FIG7 = {"a": dict(P=6, k_t=2, eta=0.5, c=0.0, rng=7, dtau=0.5),
        "b": dict(P=6, k_t=1, eta=0.2, c=0.5, rng=7, dtau=0.25)}
AMAX7 = {("a", 2): 150.0, ("a", 3): 800.0, ("a", 4): 1500.0, ("b", 1): 60.0, ("b", 2): 2500.0,
         ("b", 3): 3500.0}
JOBS7 = (("a", 2), ("a", 3), ("a", 4), ("b", 1), ("b", 2), ("b", 3))
#: quick mode: what replaces the full-mode values above
QUICK3 = dict(Ds=(1e2, 1e4, 1e8), n_init=2, ks=(1, 2), dtau=1.0, n_ckpt=100)
QUICK7 = dict(Ds=(1e4, 1e8), n_init=1, jobs=(("a", 2), ("b", 1)), dtau={"a": 1.0, "b": 0.5}, n_ckpt=100)


def lesson2_values(quick: bool) -> dict:
    """Lesson 2's variables of Figures 3 and 7 in full or quick mode, by the notebook's names."""
    if not quick:
        return {"FIG3": FIG3, "Ds3": D_GRID, "n_init3": N_INIT, "amax3": AMAX3, "ks3": KS3, "n_ckpt": N_CKPT,
                "FIG7": FIG7, "Ds7": D_GRID, "n_init7": N_INIT, "amax7": AMAX7, "jobs7": JOBS7}
    q3, q7 = QUICK3, QUICK7
    return {"FIG3": {**FIG3, "dtau": q3["dtau"]}, "Ds3": np.array(q3["Ds"]), "n_init3": q3["n_init"],
            "amax3": AMAX3, "ks3": q3["ks"], "n_ckpt": q3["n_ckpt"],
            "FIG7": {p: {**FIG7[p], "dtau": q7["dtau"][p]} for p in FIG7}, "Ds7": np.array(q7["Ds"]),
            "n_init7": q7["n_init"], "amax7": AMAX7, "jobs7": q7["jobs"]}


def figure3_runs(k_s: int, quick: bool = False) -> cl.SpecialisationRun:
    """The notebook's Figure 3 runs for student kernel ``k_s`` (computed once per process: the
    claims, the baked demo references and the figure script share them)."""
    return _runs("3", k_s, bool(quick))


def figure7_runs(panel: str, k_s: int, quick: bool = False) -> cl.SpecialisationRun:
    """The notebook's Figure 7 runs, panel ``"a"`` or ``"b"`` (computed once per process)."""
    return _runs("7" + panel, k_s, bool(quick))


@functools.cache
def _runs(fig: str, k_s: int, quick: bool) -> cl.SpecialisationRun:
    v = lesson2_values(quick)
    if fig == "3":
        return cl.specialisation_runs(v["Ds3"], k_s=k_s, n_init=v["n_init3"], alpha_max=v["amax3"][k_s],
                                      n_ckpt=v["n_ckpt"], **v["FIG3"])
    panel = fig[1]
    return cl.specialisation_runs(v["Ds7"], k_s=k_s, n_init=v["n_init7"], alpha_max=v["amax7"][panel, k_s],
                                  n_ckpt=v["n_ckpt"], **v["FIG7"][panel])


def figure3_alpha_spec(k_s: int) -> np.ndarray:
    """alpha_spec ``(n_D, n_init)`` of the notebook's Figure 3 for student kernel ``k_s``."""
    r = figure3_runs(k_s)
    return cl.alpha_spec(r.t, r.gamma, 0.99)


def figure7_alpha_spec(panel: str, k_s: int) -> np.ndarray:
    """alpha_spec ``(n_D, n_init)`` of the notebook's Figure 7, panel ``"a"`` or ``"b"``."""
    r = figure7_runs(panel, k_s)
    return cl.alpha_spec(r.t, r.gamma, 0.99)


def _flat(name: str, a_sp: np.ndarray, quoted: float, quote: str, what: str,
          D_flat: float = 1e8) -> list[Claim]:
    big = a_sp[D_GRID >= D_flat]
    return [Claim(name, f"{what}: alpha_spec, mean over D >= {D_flat:.0e} and {N_INIT} inits",
                  quoted, float(big.mean()), 0.005, NB2, quote,
                  note="tolerance: rounding to 2 decimals"),
            Claim(f"{name}_flat", f"{what}: the same alpha_spec to two decimals for every D >= "
                  f"{D_flat:.0e} and every initialisation (max - min over those runs)", None,
                  float(np.ptp(big)), 0.005)]


def _slope(name: str, a_sp: np.ndarray, what: str, b_quote: tuple, se_quote: tuple) -> list[Claim]:
    f = cl.log_d_fit(D_GRID, a_sp, D_MIN)
    (b, qb), (se, qse) = b_quote, se_quote
    return [Claim(f"{name}_b", f"{what}: slope b of a + b ln D through the means (D >= 1e4)", b,
                  f["b"], 0.005, NB2, qb, note="tolerance: rounding to 2 decimals",
                  extra={k: f[k] for k in ("a", "se_a", "sd")}),
            Claim(f"{name}_se_b", f"{what}: standard error of b from the scatter of the "
                  f"{N_INIT} initialisations", se, f["se_b"], 0.005, NB2, qse),
            Claim(f"{name}_b_positive", f"{what}: b > 3 se_b (alpha_spec grows with ln D)", None,
                  float(f["b"] < 3 * f["se_b"]), 0.0)]


def _figure3_claims(full: bool) -> list[Claim]:
    a1, a2 = figure3_alpha_spec(1), figure3_alpha_spec(2)
    f2 = cl.log_d_fit(D_GRID, a2, D_MIN)
    out = _flat("alpha_spec_ks1", a1, 6.98, "6.98 for every", "Figure 3, k_s = k_t = 1")
    sd1 = a1.std(1, ddof=1)
    out += [Claim("alpha_spec_ks1_D100", "Figure 3, k_s = 1: mean alpha_spec at D = 100",
                  7.23, float(a1[0].mean()), 0.005, NB2, "7.23)"),
            Claim("alpha_spec_ks1_sd_D100", "Figure 3, k_s = 1: standard deviation over the "
                  "initialisations at D = 100", 0.81, float(sd1[0]), 0.005, NB2, "0.81 at"),
            Claim("alpha_spec_ks1_sd_D1e4", "Figure 3, k_s = 1: standard deviation over the "
                  "initialisations at D = 1e4", 0.06, float(sd1[1]), 0.005, NB2, "0.06 at")]
    out += _slope("alpha_spec_ks2", a2, "Figure 3, k_s = 2, k_t = 1",
                  (6.89, "6.89 per unit"), (0.39, "0.39 from the scatter"))
    out += [Claim("alpha_spec_ks2_a", "Figure 3, k_s = 2: intercept a of the fit", 33.8, f2["a"],
                  0.05, NB2, "33.8 and slope", note="tolerance: rounding to 1 decimal"),
            Claim("alpha_spec_ks2_se_a", "Figure 3, k_s = 2: standard error of a", 6.0, f2["se_a"],
                  0.05, NB2, "6.0 and 0.39"),
            Claim("alpha_spec_ks2_sd", "Figure 3, k_s = 2: scatter of single runs (rms over D of "
                  "the standard deviation over initialisations)", 13.0, f2["sd"], 0.5, NB2,
                  "about 13 (standard", note="tolerance: rounding to the unit")]
    if full:
        b = [cl.log_d_fit(D_GRID, figure3_alpha_spec(k), D_MIN)["b"] for k in (3, 4)]
        out.append(Claim("alpha_spec_slopes_grow", "Figure 3: b(k_s=2) < b(3) < b(4) (printed by "
                         "the notebook)", None, float(not f2["b"] < b[0] < b[1]), 0.0,
                         extra={"b3": b[0], "b4": b[1]}))
    return out


def _figure7_claims(full: bool) -> list[Claim]:
    out = _flat("fig7a_ks2", figure7_alpha_spec("a", 2), 60.49, "60.49 for every",
                "Figure 7a, k_s = k_t = 2", D_flat=1e10)
    out += _flat("fig7b_ks1", figure7_alpha_spec("b", 1), 9.76, "9.76 for every",
                 "Figure 7b, k_s = k_t = 1, c = 0.5, eta = 0.2")
    if full:
        out += _slope("fig7a_ks3", figure7_alpha_spec("a", 3), "Figure 7a, k_s = 3, k_t = 2",
                      (10.03, "10.03 per unit"), (0.77, "0.77). (b)"))
        out += _slope("fig7b_ks2", figure7_alpha_spec("b", 2), "Figure 7b, k_s = 2, c = 0.5",
                      (42.73, "42.73 (standard"), (2.42, "2.42). So"))
    return out


# Lesson 3's Figure 10: the ReLU noise floor by SGD, as the notebook's relu_floor_sgd runs it (full mode).
D10, ETA10, A10 = 200, 0.1, 25.0


@functools.cache
def relu_floor_ratio(kind: str, P: int, c: float) -> float:
    """Figure 10: the SGD floor over the eq. 34 line with ReLU W (the notebook's full run: D = 200,
    eta = 0.1, from the zero-error solution to alpha = 25 (CNN) or 25 P (LCN), the mean over the
    second half of the run and two seeds, rng = 10)."""
    a_end = A10 * (P if kind == "lcn" else 1)
    sim = cl.simulate_sgd(kind, D=D10, P=P, k_s=2, k_t=2, c=c, eta=ETA10, sigma=1.0,
                          checkpoints=np.linspace(0, a_end, 31), activation="relu", init="zero_error",
                          n_seeds=2, n_test=0, rng=10)
    floor = float(sim.eg_order[sim.t >= a_end / 2].mean(0).mean()) / ETA10
    W = np.full((P, P), 0.25 + np.arcsin(c) / (2 * np.pi))
    np.fill_diagonal(W, 0.5)
    theory = float((W * (cl.input_covariance(P, c) if kind == "cnn" else np.eye(P))).sum() / 2)
    return floor / theory


def _relu_floor_claims(full: bool) -> list[Claim]:
    """Figure 10's ratios quoted by lesson 3 (tolerance: rounding to 2 decimals and the run-to-run
    rounding of torch). The CNN's runs are short (alpha = 25); the LCN's (alpha = 25 P) only with
    ``--full``."""
    out = [Claim(f"relu_floor_cnn_{name}", f"Figure 10: CNN SGD floor / eq. 34 (ReLU), {what}", quoted,
                 relu_floor_ratio("cnn", P, c), 0.01, NB3, quote)
           for name, P, c, quoted, quote, what in (
               ("c0", 4, 0.0, 1.06, "1.06 for the CNN", "P = 4, c = 0"),
               ("c05", 4, 0.5, 1.59, "1.59 times the line", "P = 4, c = 0.5"),
               ("c09", 4, 0.9, 2.99, "2.99 times at", "P = 4, c = 0.9"),
               ("P6", 6, 0.5, 3.75, "3.75 at", "P = 6, c = 0.5"))]
    if full:
        lcn = [relu_floor_ratio("lcn", P, c) for P, c in ((4, 0.0), (4, 0.5), (4, 0.9), (2, 0.5), (6, 0.5))]
        out += [Claim("relu_floor_lcn_c0", "Figure 10: LCN SGD floor / eq. 34 (ReLU), P = 4, c = 0 (run to "
                      "alpha = 100)", 1.11, lcn[0], 0.01, NB3, "1.11 for the LCN"),
                Claim("relu_floor_lcn_min", "Figure 10: smallest LCN SGD floor / eq. 34 over its markers",
                      0.92, min(lcn), 0.01, NB3, "0.92 to"),
                Claim("relu_floor_lcn_max", "Figure 10: largest LCN SGD floor / eq. 34 over its markers",
                      1.23, max(lcn), 0.01, NB3, "1.23)")]
    return out


def collect(full: bool = False) -> list[Claim]:
    out: list[Claim] = []
    out += _figure2a_claims()
    out += _eps0_claims()
    out += _early_time_claims()
    out += _floor_claims(full)
    out += _relu_floor_claims(full)
    out += _rescaling_claims()
    out += _figure3_claims(full)
    out += _figure7_claims(full)
    return out


if __name__ == "__main__":
    sys.exit(run(collect, __doc__.splitlines()[0]))
