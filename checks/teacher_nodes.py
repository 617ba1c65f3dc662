"""§7.4 "Which teacher node first" (Tian 2020): every number the notebook's prose quotes.

Deterministic claims (Theorem 6 geometry, escape times of eq. 12 and their constant) are
exact up to the quoted digits; the eq. 10 claims are a seeded Monte Carlo (a few seconds).
Seeded-run claims recompute the notebook's own full-size runs
(:func:`td_lib.teacher_student.demos.node_order_demo` and :func:`~td_lib.teacher_student.demos.focus_demo`,
about 20 s on 2 cores) and compare with the digits the prose prints; their tolerances are
the rounding of the quoted digits (and one evaluation interval for step counts). The deep
teacher run of Demo 7.4.4 (:func:`td_lib.teacher_student.demos.fig8_demo`, 30–60 s) is recomputed
only with ``full=True`` (:func:`deep_claims`); its quotes are listed in :data:`DEEP_QUOTES`
so that the tie between prose and claim is tested cheaply as well. The runs are
deterministic on a given platform; a different BLAS or torch build can change a seeded SGD
trajectory, and then these claims say so.
"""

from __future__ import annotations

import numpy as np
from scipy import integrate

from checks.claims import Claim
from td_lib import teacher_student as ts
from td_lib.teacher_student import demos

NB = "course/source/td2_7_learned_first/td2_7_4_teacher_nodes.py"


def _c(id_: str, text: str, quoted, computed, tol: float, quote: str | None, note: str = "",
       **extra) -> Claim:
    return Claim(id=f"lf74_{id_}", text=text, quoted=quoted, computed=float(computed), tol=tol,
                 notebook=NB if quote else None, quote=quote, note=note, extra=extra)


def deterministic_claims(full: bool = False) -> list[Claim]:
    """Theorem 6 and eq. 12 numbers (no training)."""
    out: list[Claim] = []
    # Theorem 6 as printed vs the expectation: angle between them, |w*| = 1, |w_k| = 2, θ = 1
    th = 1.0
    ws = np.array([1.0, 0.0, 0.0])
    wk = 2.0 * np.array([np.cos(th), np.sin(th), 0.0])
    true = ts.relu_cross_moment(ws, wk)
    printed = np.linalg.norm(ws) * np.linalg.norm(wk) / 2 * ((np.pi - th) * ws + np.sin(th) * wk)
    ang = np.degrees(np.arccos(true @ printed / np.linalg.norm(true) / np.linalg.norm(printed)))
    out.append(_c("thm6_printed_angle",
                  "angle between Theorem 6 as printed (unnormalised w_k) and the expectation",
                  9.6, ang, 0.05, "off by about 9.6 degrees",
                  note="the original course notes print the prefactor ‖w*‖‖w_k‖/2 with unnormalised vectors in "
                       "the bracket; the expectation is degree 0 in w_k. Correct form: "
                       "(E‖x‖²/d)‖w*‖/(2π)[(π−θ)ŵ* + sinθ ŵ_k]."))
    # closed form vs polar quadrature in the plane (2-D standard Gaussian)
    err = 0.0
    for t in (0.3, 1.0, 2.0, 3.0):
        a = np.array([1.0, 0.0])
        b = np.array([np.cos(t), np.sin(t)])
        quad = [integrate.quad(lambda ph, i=i: (np.cos(ph) if i == 0 else np.sin(ph))
                               * np.cos(ph), t - np.pi / 2, np.pi / 2)[0] / np.pi
                for i in (0, 1)]
        err = max(err, float(np.abs(ts.relu_cross_moment(a, b) - quad).max()))
    out.append(_c("thm6_quadrature", "Theorem 6 closed form vs polar quadrature (max abs error)",
                  None, err, 1e-12, None,
                  note="also fixes the sign of the sin θ term: +, as the theorem states; the "
                       "appendix's substitution θ''=2θ'+π drops a sign"))
    # Monte Carlo, several angles, max |z| over coordinates
    n = 2_000_000 if full else 300_000
    rng = np.random.default_rng(5)
    zmax = 0.0
    for t in (0.3, 1.2, 2.0, 2.9):
        a = rng.standard_normal(6)
        a /= np.linalg.norm(a)
        u = rng.standard_normal(6)
        u -= (u @ a) * a
        u /= np.linalg.norm(u)
        w_star, w_k = 1.3 * a, 0.4 * (np.cos(t) * a + np.sin(t) * u)
        mu, se = ts.relu_cross_moment_mc(w_star, w_k, n=n, rng=int(100 * t))
        zmax = max(zmax, float(np.max(np.abs(mu - ts.relu_cross_moment(w_star, w_k)) / se)))
    out.append(_c("thm6_mc", "Theorem 6 vs Monte Carlo: largest |z| over 4 angles × 6 coords",
                  None, zmax, 4.5, None,
                  note="tolerance 4.5 standard errors (24 comparisons: false alarm ≈ 2e-4)"))
    # eq. 12 escape times, θ_end = π/2, α = 1
    t3 = float(ts.escape_time(theta_start=np.pi - 1e-3, theta_end=np.pi / 2, alpha=1.0))
    a3 = float(ts.escape_time_asymptotic(eps=1e-3, theta_end=np.pi / 2, alpha=1.0))
    c = ts.escape_time_constant(np.pi / 2, 1.0)
    out.append(_c("escape_exact", "eq. 12 escape time from π − 1e-3 to π/2, α = 1 (quadrature)",
                  6281.02, t3, 0.005, "6281.02, against"))
    out.append(_c("escape_asym", "asymptotic escape time 2π(1/ε − 2/π) at ε = 1e-3",
                  6279.19, a3, 0.005, "6279.19 from the asymptotic formula",
                  note="the original course notes print t0 ~ 1/ε − 1/(π−θ0) without the constant 2π/α"))
    out.append(_c("escape_const", "limit of exact − asymptotic escape time as ε → 0",
                  1.833, c, 0.0005, "1.833 as"))
    # the constant the paper's "∼" leaves unstated: 2π‖w_k‖/(ασ²), from Theorem 6's vector
    t_s = ts.escape_time_theorem6(eps=1e-3, theta_end=np.pi / 2, alpha=1.5, sigma=2.0, norm_k=3.0)
    out.append(_c("escape_sigma_ratio",
                  "escape time integrated from Theorem 6's vector at σ = 2, ‖w_k‖ = 3, α = 1.5, "
                  "over the σ = 1, ‖w_k‖ = 1, α = 1 time (2π‖w_k‖/(ασ²) predicts 1/2)",
                  0.5000, t_s / t3, 0.00005, "0.5000 times the time above",
                  note="the original course notes write t0 ~ 1/ε − 1/(π−θ0); '~' hides the constant "
                       "2π‖w_k‖/(ασ²), unstated rather than wrong"))
    # the quadrature itself against an independent integration of the ODE
    th_end = float(ts.integrate_angle(np.pi - 1e-3, np.array([0.0, t3]), alpha=1.0)[-1])
    out.append(_c("escape_ode", "integrating eq. 12 for the quadrature's escape time lands on π/2",
                  None, th_end - np.pi / 2, 1e-7, None))
    return out


def eq10_claims() -> list[Claim]:
    """Demo 7.4.5: the pull on w_k does not scale with ‖w_k‖ (eq. 10 says it does)."""
    sc = ts.eq10_norm_scan(which="w", n=200_000)
    note = ("eq. 10 (ẇ_k = ‖w_k‖ r_k) predicts slope 1; the original course notes' factor is the spurious "
            "‖w_k‖ of its printed Theorem 6. Correct prefactor: ‖v_k‖ (ẇ_k = ‖v_k‖ r̂_k)")
    return [
        _c("eq10_slope", "log-log slope of ‖P⊥ ẇ_k‖ against ‖w_k‖, Monte Carlo (200k per point)",
           0.00, sc["slope_mc"], 0.005, "0.00 (± 0.01)", note=note),
        _c("eq10_slope_se", "standard error of that slope", 0.01, sc["slope_se"], 0.005,
           "(± 0.01), where eq. 10 needs 1"),
        _c("eq10_slope_exact", "the same slope from the closed form (population_gradient)", None,
           sc["slope_exact"], 1e-9, None),
        _c("eq10_mc_z", "Monte Carlo vs closed form: largest |z| (5 scales × 6 coordinates)", None,
           sc["z"], 4.5, None, note="30 comparisons: false alarm ≈ 2e-4"),
    ]


def seeded_claims() -> list[Claim]:
    """The notebook's seeded full-size runs, recomputed."""
    out: list[Claim] = []
    S = demos.node_order_summary(demos.node_order_demo(quick=False))
    step = "one evaluation interval (200 steps)"
    out.append(_c("p0_all_within", "p = 0: last first-match step over all teacher nodes and runs",
                  600, float(np.max(S["first"][0.0])), 0.0, "within 600 steps",
                  note=f"step counts live on the evaluation grid; {step}"))
    out.append(_c("p0_spearman", "p = 0: Spearman(index, first-match time)", 0.12,
                  S["spearman"][0.0], 0.005, "first-match time 0.12"))
    out.append(_c("p1_spearman", "p = 1: Spearman(index, first-match time)", 0.89,
                  S["spearman"][1.0], 0.005, "0.89, the two strongest"))
    out.append(_c("p1_matched", "p = 1, ×5: mean number of matched teacher nodes at the end", 8.8,
                  S["matched"][1.0], 0.05, "8.8 of the ten"))
    out.append(_c("p2_matched", "p = 2, ×5: mean number of matched teacher nodes at the end", 2.3,
                  S["matched"][2.0], 0.05, "2.3 per run"))
    out.append(_c("p1_slope", "p = 1: log-log slope of median first-match time vs 1/‖v*_j‖", 1.35,
                  S["slope"][1.0], 0.005, "slope 1.35"))
    out.append(_c("cov_x1", "p = 1: mean matched teacher nodes at the end, ×1", 7.7,
                  S["coverage"][1], 0.05, "7.7 matched teacher nodes",
                  note="the paper's Fig. 9 reports success rates rising with over-realisation"))
    out.append(_c("cov_x2", "p = 1: mean matched teacher nodes at the end, ×2", 9.3,
                  S["coverage"][2], 0.05, "9.3 and with 8.8"))
    out.append(_c("cov_x5", "p = 1: mean matched teacher nodes at the end, ×5", 8.8,
                  S["coverage"][5], 0.05, "with 8.8."))
    out.append(_c("paired_wins", "p = 1: draws where both ×2 and ×5 match more than ×1", 5,
                  S["paired_wins"], 0.0, "in 5 of the 6 draws"))
    out.append(_c("paired_draws", "p = 1: number of paired draws", 6, S["paired_draws"], 0.0,
                  "6 draws"))
    out.append(_c("paired_losses", "p = 1: draws where ×2 or ×5 matches fewer than ×1 "
                  "(prose: 'in no draw with fewer')", None, S["paired_losses"], 0.0, None))
    out.append(_c("vnorm_unspecial", "×5, p = 1: median ‖v_k‖ of nodes with best corr < 0.5",
                  0.0026, S["vnorm_unspecial"], 0.00005, "0.0026 against",
                  note="Theorem 3: unaligned nodes end with zero fan-out"))
    out.append(_c("vnorm_special", "×5, p = 1: median ‖v_k‖ of nodes with best corr ≥ 0.95", 0.24,
                  S["vnorm_special"], 0.005, "0.24 for the specialised"))
    # Demo 7.4.5: Theorem 7's amplification shows up in ‖v_k‖, not in ‖w_k‖
    out.append(_c("wnorm_init", "×5, p = 1: median ‖w_k‖ at initialisation", 0.98,
                  S["wnorm_init"], 0.005, "0.98 at initialisation"))
    out.append(_c("vnorm_init", "×5, p = 1: median ‖v_k‖ at initialisation", 0.030,
                  S["vnorm_init"], 0.0005, "0.030 against"))
    out.append(_c("wnorm_special", "×5, p = 1: median final ‖w_k‖ of nodes with best corr ≥ 0.95",
                  0.89, S["wnorm_special"], 0.005, "0.89 and 0.89",
                  note="Theorem 7 (from eq. 10) has the winners' ‖w_k‖ grow exponentially"))
    out.append(_c("wnorm_unspecial", "×5, p = 1: median final ‖w_k‖ of nodes with best corr < 0.5",
                  0.89, S["wnorm_unspecial"], 0.005, "and 0.89)"))
    out.append(_c("vnorm_ratio", "×5, p = 1: ratio of the median fan-outs, specialised / not", 91,
                  S["vnorm_special"] / S["vnorm_unspecial"], 0.5, "factor 91"))
    F = demos.focus_summary(demos.focus_demo(quick=False))
    if not F:
        out.append(_c("focus_found", "a focus shift exists in the seeded run", 1, 0.0, 0.0,
                      None))
        return out
    out.append(_c("focus_peak", "focus shift: peak correlation with the first teacher", 0.78,
                  F["peak"], 0.005, "peaks at 0.78"))
    out.append(_c("focus_j1", "focus shift: the first teacher node (1-based)", 1, F["j1"] + 1,
                  0.0, "1 is soon covered"))
    out.append(_c("focus_step_peak", "focus shift: step of the peak", 500, F["step_peak"], 0.0,
                  "at step 500"))
    out.append(_c("focus_j2", "focus shift: the teacher node it ends on (1-based)", 7,
                  F["j2"] + 1, 0.0, "7, which it"))
    out.append(_c("focus_step_match", "focus shift: first step above 0.95 with the new teacher",
                  2100, F["step_match"], 0.0, "from step 2100"))
    out.append(_c("focus_end_j2", "focus shift: final correlation with the new teacher", 0.999,
                  F["end_j2"], 0.0005, "(correlation 0.999"))
    out.append(_c("focus_end_j1", "focus shift: final correlation with the first teacher", 0.40,
                  F["end_j1"], 0.005, "falls back to 0.40"))
    return out


#: Demo 7.4.4's quoted numbers: claim id -> (quoted value, exact quote). Used by
#: :func:`deep_claims` and, without the run, by the tests that tie quotes to the prose.
DEEP_QUOTES: dict[str, tuple[float, str]] = {
    "deep_l1_cross07": (2.5, "epoch 2.5 and 0.9"),
    "deep_l1_cross09": (8.5, "epoch 8.5 (medians"),
    "deep_l1_final": (0.997, "ends at 0.997"),
    "deep_l1_frac10": (0.18, "a fraction 0.18"),
    "deep_l2_cross07": (8.0, "epoch 8.0 and ends"),
    "deep_l2_final": (0.80, "ends at 0.80"),
    "deep_l3_final": (0.72, "ending at 0.72 and 0.73"),
    "deep_l4_final": (0.73, "and 0.73; the"),
    "deep_upper_first_min": (7, "between 7 and 28"),
    "deep_upper_first_max": (28, "and 28, or never"),
    "deep_lowest_first": (3, "3 of the 3 seeds"),
    "deep_init_l1": (0.41, "scores 0.41, 0.34"),
    "deep_init_l2": (0.34, "0.34, 0.26 and 0.23"),
    "deep_init_l3": (0.26, "0.26 and 0.23"),
    "deep_init_l4": (0.23, "and 0.23 (layers"),
}


def deep_claims() -> list[Claim]:
    """Demo 7.4.4 (Tian's Fig. 8 at CPU scale), recomputed: about 30–60 s on 2 cores."""
    _, h = demos.fig8_demo(quick=False)
    S = demos.fig8_summary(h, thresholds=(0.7, 0.9))
    c07, c09 = S["cross"][0.7], S["cross"][0.9]
    upper = c07[:, 2:]
    half = "the evaluation grid is half an epoch (312 or 313 steps of 625)"

    def q(id_, text, computed, tol, note=""):
        quoted, quote = DEEP_QUOTES[id_]
        return _c(id_, text, quoted, computed, tol, quote, note=note)

    out = [
        q("deep_l1_cross07", "layer 1: median first epoch with ρ_mean ≥ 0.7", S["median_cross"][0.7][0],
          0.05, half),
        q("deep_l1_cross09", "layer 1: median first epoch with ρ_mean ≥ 0.9", S["median_cross"][0.9][0],
          0.05, "the paper: the lowest layer's 'L-shape' is established at epoch 10"),
        q("deep_l1_final", "layer 1: mean ρ_mean over seeds at epoch 30", S["final"][:, 0].mean(),
          0.0005),
        q("deep_l1_frac10", "layer 1, epoch 10: fraction of student nodes with best corr ≥ 0.9",
          S["frac_special"][10.0][0], 0.005),
        q("deep_l2_cross07", "layer 2: median first epoch with ρ_mean ≥ 0.7",
          S["median_cross"][0.7][1], 0.05, half),
        q("deep_l2_final", "layer 2: mean ρ_mean at epoch 30", S["final"][:, 1].mean(), 0.005),
        q("deep_l3_final", "layer 3: mean ρ_mean at epoch 30", S["final"][:, 2].mean(), 0.005),
        q("deep_l4_final", "layer 4: mean ρ_mean at epoch 30", S["final"][:, 3].mean(), 0.005),
        q("deep_upper_first_min", "layers 3–4: earliest first epoch with ρ_mean ≥ 0.7 over seeds",
          float(np.min(upper[np.isfinite(upper)])), 0.5, "quoted in whole epochs"),
        q("deep_upper_first_max", "layers 3–4: latest finite first epoch with ρ_mean ≥ 0.7",
          float(np.max(upper[np.isfinite(upper)])), 0.5, "quoted in whole epochs"),
        _c("deep_upper_never", "layers 3–4: some seed never reaches 0.7 in 30 epochs "
           "(prose: 'or never'; 0 = true)", None, float(np.all(np.isfinite(upper))), 0.0, None),
        q("deep_lowest_first", "seeds in which layer 1 reaches 0.7 strictly before every other "
          "layer", S["lowest_first"][0.7], 0.0),
        _c("deep_lowest_first_09", "seeds in which layer 1 is not strictly first at 0.9 "
           "(prose: 'each threshold')", None, S["runs"] - S["lowest_first"][0.9], 0.0, None),
        _c("deep_seeds", "number of seeds (prose: 'the three seeds')", None, S["runs"] - 3, 0.0,
           None),
        _c("deep_no_upper_09", "upper layers reaching 0.9 within 30 epochs (prose: none)", None,
           float(np.isfinite(c09[:, 1:]).sum()), 0.0, None),
    ]
    for i in range(4):
        out.append(q(f"deep_init_l{i + 1}", f"layer {i + 1}: mean ρ_mean at initialisation",
                     S["initial"][:, i].mean(), 0.005,
                     "a random student's activations already correlate with the teacher's"))
    return out


def claims(full: bool = False) -> list[Claim]:
    """All §7.4 claims; ``full`` uses a larger Monte Carlo sample for Theorem 6 and adds the
    deep teacher run (:func:`deep_claims`)."""
    return (deterministic_claims(full) + eq10_claims() + seeded_claims()
            + (deep_claims() if full else []))
