"""Baked regions of the CNN vs LCN lessons:
demo reference results and test expectations (see :mod:`checks.grading.bake`).

Where a test cell draws its cases from a seeded generator, the function here draws them the
same way and bakes only the expected values (in the cell's order)."""

from __future__ import annotations

from typing import Any

import numpy as np

from checks.grading.registry import baked

__all__: list[str] = []

KINDS = ("cnn", "lcn")


def _modes(fn) -> dict[str, Any]:
    """``fn(quick)`` for the full-size and the quick (TD_QUICK=1) run of a notebook."""
    return {"full": fn(False), "quick": fn(True)}


# ------------------------------------------------------------------ lesson 1, Exercise A
_K2_VISIBLE = ([[1.0, 0.5], [0.5, 1.0]], [[1.0, 1.0], [1.0, 1.0]])
_K2_SPECIAL = ([[1.0, 1.0], [1.0, 1.0]], [[3.0, -1.5], [-1.5, 0.75]], [[1e6, 1.0], [1.0, 1e-6]],
               [[1e-8, 1e-8], [1e-8, 1e-8]])
_K2_DEMO = ([[1.0, 0.5], [0.5, 1.0]], [[2.0, -1.2], [-1.2, 1.5]], [[0.3, 0.1], [0.1, 4.0]])


@baked
def k2_erf_visible() -> dict[str, Any]:
    """test_exA_j2_erf (visible): K2 = E[g''(u1) g''(u2)] at two covariances (one singular)."""
    from checks.grading.cnn_lcn_odes import k2_erf

    return {"_visible_C": [list(map(list, C)) for C in _K2_VISIBLE],
            "_visible_ref": [float(k2_erf(np.array(C))) for C in _K2_VISIBLE]}


@baked
def k2_erf_hidden() -> dict[str, Any]:
    """test_exA_j2_erf (hidden): K2 at the cell's 200 random covariances (default_rng(7)) and at
    four singular or badly scaled ones."""
    from checks.grading.cnn_lcn_odes import k2_erf

    A = np.random.default_rng(7).standard_normal((200, 2, 2)) * 2
    return {"_ref": k2_erf(A @ np.swapaxes(A, -1, -2)),
            "_special_C": [list(map(list, C)) for C in _K2_SPECIAL],
            "_ref_special": [float(k2_erf(np.array(C))) for C in _K2_SPECIAL]}


@baked
def k2_erf_demo() -> dict[str, Any]:
    """Lesson 1's Monte Carlo demo (reference result): K2 at the demo's three covariances."""
    from checks.grading.cnn_lcn_odes import k2_erf

    return {"_ref_k2": [float(k2_erf(np.array(C))) for C in _K2_DEMO]}


# ------------------------------------------------------------------ lesson 1, Exercise B
@baked(rtol=1e-9)
def lcn_readout_slopes_visible() -> dict[str, Any]:
    """test_exB_lcn_sgd_step, visible part with random readouts: central differences (h = 1e-5)
    of the loss l = (y - sum_p a_p g(lambda_hat_p))^2 / 2 along the cell's random directions v of
    w_hat and u of a, separately, for its three seeded cases (default_rng(5): w_hat, a, x, then
    (v, u) per direction, in the cell's order; y = -0.4). As for the a = 1 slopes (baked.py), a
    central difference loses ~5 digits to cancellation; the cell checks to 1e-7."""
    from scipy.special import erf

    def loss(w_hat, a, x, y):
        P, k_s, D = w_hat.shape
        lam = np.array([sum(w_hat[p, l] @ x[(p + l) % P] for l in range(k_s)) for p in range(P)])
        return 0.5 * (y - a @ erf(lam / np.sqrt(k_s * D) / np.sqrt(2))) ** 2

    rng = np.random.default_rng(5)
    slopes = []
    for (P, ks, D, _eta) in [(4, 3, 20, 0.5), (5, 2, 12, 0.8), (3, 1, 10, 1.3)]:
        w = rng.standard_normal((P, ks, D))
        a = rng.standard_normal(P)
        x = rng.standard_normal((P, D))
        row = []
        for _ in range(3):
            v, u, h = rng.standard_normal(w.shape), rng.standard_normal(P), 1e-5
            row.append([float((loss(w + h * v, a, x, -0.4) - loss(w - h * v, a, x, -0.4)) / (2 * h)),
                        float((loss(w, a + h * u, x, -0.4) - loss(w, a - h * u, x, -0.4)) / (2 * h))])
        slopes.append(row)
    return {"_readout_slopes": slopes}


# ------------------------------------------------------------------ lesson 1, Exercise C
def _result32(quick: bool) -> dict[float, dict[str, Any]]:
    """Lesson 1's Result 3.2 demo: from the initial overlaps of Figure 2's CNN run (c = 0), the
    CNN and the matched LCN (eq. 21; shared weights at every position) at c = 0 and 0.5."""
    from td_lib import cnn_lcn as cl

    D2, a_max = (100, 1.0) if quick else (1000, 4.0)
    sim = cl.simulate_sgd("cnn", D=D2, P=4, k_s=3, k_t=2, c=0.0, T=1.0, eta=1.0, checkpoints=np.array([0.0]),
                          n_test=0, rng=1)  # the run's initial state only (drawn first)
    R0c, Q0c = sim.R0[0], sim.Q0[0]
    Rl, _ = cl.matched_lcn_init(R0c, Q0c, 4)
    Ql = np.broadcast_to(Q0c, (4, 4, 3, 3)).copy()
    al = np.linspace(0, a_max, 21)
    out = {}
    for c in (0.0, 0.5):
        Sc = cl.input_covariance(4, c)
        e_cnn = cl.integrate("cnn", R0c, Q0c, al, Sc, eta=1.0, dt=0.05).eg
        e_lcn = cl.integrate("lcn", Rl, Ql, 4 * al, Sc, eta=1.0, dt=4 * 0.05).eg
        out[c] = {"gap": float(np.abs(e_cnn - e_lcn).max()), "eps0": (float(e_cnn[0]), float(e_lcn[0]))}
    return out


@baked(atol=1e-12)
def matched_init_demo() -> dict[str, Any]:
    """Lesson 1's Result 3.2 demo (reference result): per c, the largest gap between
    eps_CNN(alpha) and eps_LCN(4 alpha) and the two initial errors. The gap at c = 0 is the
    integrator's rounding (~1e-15), hence the absolute tolerance."""
    return {"_ref32": _modes(_result32)}


# ------------------------------------------------------------------ lesson 2, Exercise D
@baked
def alpha_spec_hidden() -> dict[str, Any]:
    """test_exD_alpha_spec (hidden): eq. 25 on the cell's 20 random increasing alignments
    (default_rng(9): checkpoints, alignments, threshold, in that order)."""
    from td_lib import cnn_lcn as cl

    rng = np.random.default_rng(9)
    refs = []
    for _ in range(20):
        al = np.cumsum(rng.uniform(0.1, 1.0, 30))
        g = np.clip(np.cumsum(rng.uniform(0, 0.08, (30, 3)), 0), 0, 1)
        thr = float(rng.choice([0.5, 0.9, 0.99]))
        refs.append(float(cl.alpha_spec(al, g, thr)))
    return {"_refs": refs}


# ------------------------------------------------------------------ lesson 3, Exercise E
@baked
def initial_errors_hidden() -> dict[str, Any]:
    """test_exE_initial_errors (hidden): eps_g of eq. 81 at the leading-order initial state for
    the cell's 30 cases (P, k_s, k_t, T, c) (five fixed, 25 from default_rng(17)), (CNN, LCN)."""
    from td_lib import cnn_lcn as cl

    rng = np.random.default_rng(17)
    cases = [(4, 1, 1, 1.0, 0.0), (4, 3, 2, 1.0, 0.5), (6, 2, 1, 2.5, 0.8), (3, 3, 3, 0.25, 0.3), (1, 1, 1, 1.7, 0.4)]
    for _ in range(25):
        P = int(rng.integers(2, 8))
        k_s = int(rng.integers(1, P + 1))
        cases.append((P, k_s, int(rng.integers(1, k_s + 1)), float(rng.uniform(0.2, 5)), float(rng.uniform(0, 0.95))))
    refs = [tuple(float(cl.generalisation_error(k, *cl.leading_order_init(k, P=P, k_s=k_s, k_t=k_t),
                                                cl.input_covariance(P, c), T)) for k in KINDS)
            for (P, k_s, k_t, T, c) in cases]
    return {"_refs": refs}


# ------------------------------------------------------------------ lesson 3, Exercise F
def _parabola_eta(etas, errors) -> float:
    """The learning rate of App. I with the library's parabola (the grid edge when the grid
    minimum is there), as Exercise F's optimal_eta_log_parabola returns it."""
    from td_lib.cnn_lcn import refine_min

    errors = np.asarray(errors, dtype=float)
    fin = np.isfinite(errors)
    i = int(np.nanargmin(np.where(fin, errors, np.nan)))
    if i in (0, len(etas) - 1):
        return float(etas[i])
    return float(np.exp(refine_min(np.log(etas), np.log(np.where(fin, errors, np.inf)))[0]))


@baked
def optimal_eta_hidden() -> dict[str, Any]:
    """test_exF_optimal_eta (hidden): the vertex of the log-log parabola for the cell's random
    error curves (default_rng(4); curves whose grid minimum is at an edge are skipped)."""
    from td_lib.cnn_lcn import refine_min

    rng = np.random.default_rng(4)
    refs = []
    for _ in range(20):
        etas = np.geomspace(10 ** rng.uniform(-4, -2), 10 ** rng.uniform(0, 1), int(rng.integers(9, 30)))
        y = np.exp(np.cos(np.log(etas) * 0.3 + rng.uniform(0, 3)) + 0.1 * np.log(etas) ** 2)
        if np.argmin(y) in (0, len(y) - 1):
            continue
        refs.append(float(np.exp(refine_min(np.log(etas), np.log(y))[0])))
    return {"_refs": refs}


TAU_MAX = 40.0  # lesson 3: natural time eta * alpha up to which a learning rate is integrated


def _eta_star(quick: bool) -> dict[str, list[float]]:
    """Lesson 3's learning-rate demo: eta*(alpha_F) of each student at c = 0.5 (Figure 6's
    parameters), from eps_g on the learning-rate grid."""
    from td_lib import cnn_lcn as cl

    etas = np.geomspace(1e-3, 2.0, 9 if quick else 25)
    alF = np.array([0.0, 0.01, 0.1, 1.0] if quick else [0.0, 0.01, 0.1, 1.0, 10.0, 100.0])
    out = {}
    for kind in KINDS:
        R0, Q0 = cl.leading_order_init(kind, P=4, k_s=1, k_t=1)
        tr = cl.integrate(kind, R0, Q0, alF, cl.input_covariance(4, 0.5), T=1.0, eta=etas, sigma=1.0, dtau=0.1,
                          steady_tol=1e-9, on_divergence="nan", alpha_limit=TAU_MAX / etas)
        out[kind] = [_parabola_eta(etas, tr.eg[i]) for i in range(1, alF.size)]
    return out


@baked(digits=8)
def optimal_eta_demo() -> dict[str, Any]:
    """Lesson 3's learning-rate demo (reference result): eta* at each horizon, per student."""
    return {"_ref_eta": _modes(_eta_star)}


@baked(digits=8)
def noise_floor_demo() -> dict[str, Any]:
    """Lesson 3's Figure 5 (reference result): eqs 31-32 per unit eta sigma^2 (T = 1) on the
    curve of panel (a) (P = 6), at the markers' correlations, and against P (panel b)."""
    from td_lib import cnn_lcn as cl

    def floor(kind, P, c):
        return float(cl.noise_floor(kind, eta=1.0, sigma=1.0, P=P, T=1.0, c=c))

    c_curve = np.linspace(0, 0.95, 39)
    c_marks = (0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875)
    return {"_ref_floor": {
        "curve": {kind: [floor(kind, 6, c) for c in c_curve] for kind in KINDS},
        "at": {kind: {c: floor(kind, 6, c) for c in c_marks} for kind in KINDS},
        "vs_P": {kind: {c: [floor(kind, P, c) for P in range(2, 7)] for c in (0.0, 0.5)} for kind in KINDS}}}


_PD_KEYS = ("eta_cnn", "eta_lcn", "eps_cnn", "eps_lcn", "log10_ratio", "clipped_cnn", "clipped_lcn")


def _figure6(quick: bool) -> dict[str, Any]:
    """Lesson 3's Figure 6 (and 8): the phase diagram on the notebook's grids."""
    from td_lib import cnn_lcn as cl

    cs = np.array([0.0, 0.5] if quick else [0.0, 0.15, 0.3, 0.45, 0.6, 0.75, 0.9])
    pd = cl.phase_diagram(P=4, k_s=1, k_t=1, T=1.0, sigma=1.0, cs=cs,
                          alpha_F=np.geomspace(1e-2, 1.0 if quick else 1e3, 3 if quick else 11),
                          etas=np.geomspace(1e-2 if quick else 3e-4, 2.0, 6 if quick else 16), dtau=0.1,
                          tau_max=TAU_MAX)
    return {k: pd[k] for k in _PD_KEYS}


@baked(digits=6, atol=1e-9)
def phase_fig6_demo() -> dict[str, Any]:
    """Lesson 3's Figures 6 and 8 (reference result): optimal learning rates and errors of both
    students, their log ratio and the optima clipped by the grid. At c = 0 the log ratio is
    rounding (~1e-16), hence the absolute tolerance."""
    return {"_ref6": _modes(_figure6)}


VARIANTS9 = ({"P": 8}, {"k_s": 2, "k_t": 2}, {"T": 2.0}, {"sigma": 2.0})


def _figure9(quick: bool) -> list[dict[str, Any]]:
    """Lesson 3's Figure 9: log10(eps*_CNN / eps*_LCN) of the four variants of Figure 6, with the
    optimal learning rate located by Exercise F's rules (the grid edge where the grid minimum is
    there: some optima of these coarse grids are)."""
    from td_lib import cnn_lcn as cl

    out = []
    for kw in VARIANTS9:
        pd = cl.phase_diagram(**(dict(P=4, k_s=1, k_t=1, T=1.0, sigma=1.0) | kw),
                              cs=np.array([0.0, 0.6] if quick else [0.0, 0.45, 0.9]),
                              alpha_F=np.geomspace(1e-2, 1.0 if quick else 1e2, 3 if quick else 5),
                              etas=np.geomspace(1e-2 if quick else 1e-3, 2.0, 4 if quick else 9), dtau=0.1,
                              tau_max=TAU_MAX, optimal_eta=_parabola_eta)
        out.append({"log10_ratio": pd["log10_ratio"]})
    return out


@baked(digits=6, atol=1e-9)
def phase_fig9_demo() -> dict[str, Any]:
    """Lesson 3's Figure 9 (reference result): the log ratio of each variant."""
    return {"_ref9": _modes(_figure9)}


@baked
def initial_errors_demo() -> dict[str, Any]:
    """Lesson 3, the early-time demo: (eps0_CNN, eps0_LCN) of eq. 28 at P = 4, T = 1, c = 0.5."""
    from td_lib import cnn_lcn as cl

    return {"_ref_eps0": tuple(float(cl.initial_error(k, P=4, T=1.0, c=0.5)) for k in ("cnn", "lcn"))}


# ------------------------------------------------- lesson 2: Figures 3, 4 and 7 (eq. 25 and its fits)
def _analysis(runs: dict, D_min: float = 1e4) -> tuple[dict, dict]:
    """(analysis, spread) as the notebook's specialisation_analysis computes it with the course's
    answers, and the standard errors it prints (observables.log_d_fit)."""
    from td_lib import cnn_lcn as cl

    analysis, spread = {}, {}
    for k, r in runs.items():
        a_sp = cl.alpha_spec(r.t, r.gamma, 0.99)
        keep = r.D >= D_min
        if keep.sum() < 2 or not np.all(np.isfinite(a_sp[keep])):
            raise ValueError(f"k_s = {k}: a reference run did not specialise; raise its alpha_max")
        fit = cl.log_d_fit(r.D, a_sp, D_min)
        analysis[k] = {"a_sp": a_sp, "fit": (fit["a"], fit["b"])}
        spread[k] = {key: fit[key] for key in ("se_a", "se_b", "sd")}
    return analysis, spread


@baked(digits=10)
def specialisation_fig3_demo() -> dict[str, Any]:
    """Lesson 2, Figures 3 and 4: alpha_spec of every run, the fits a + b ln D and their spread
    (the runs of checks.cnn_lcn_notebook_check, which holds the notebook's parameters of both modes)."""
    from checks import cnn_lcn_notebook_check as nbc

    full, quick = (_analysis({k: nbc.figure3_runs(k, q) for k in nbc.lesson2_values(q)["ks3"]})
                   for q in (False, True))
    return {"_ref_fig3": {mode: {"analysis": a, "spread": s} for mode, (a, s) in (("full", full), ("quick", quick))}}


@baked(digits=10)
def specialisation_fig7_demo() -> dict[str, Any]:
    """Lesson 2, Figure 7 (panels a and b): as Figure 3."""
    from checks import cnn_lcn_notebook_check as nbc

    out = {}
    for mode in ("full", "quick"):
        quick = mode == "quick"
        analysis, spread = {}, {}
        for panel in "ab":
            runs = {k: nbc.figure7_runs(panel, k, quick) for p, k in nbc.lesson2_values(quick)["jobs7"] if p == panel}
            analysis[panel], spread[panel] = _analysis(runs)
        out[mode] = {"analysis": analysis, "spread": spread}
    return {"_ref_fig7": out}
