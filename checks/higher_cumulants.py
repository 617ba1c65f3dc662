"""§7.2 "Higher cumulants": recompute every number the notebook's prose quotes.

``claims(full)`` returns :class:`checks.claims.Claim` records for

* the Hermite coefficients of ReLU (sigma_2 = 1/sqrt(2 pi), sigma_4 = -1/sqrt(2 pi)), by
  quadrature against the closed form;
* Exercise 7.2.A: kappa_4(v.x) = -200/121, the bump positions and widths, the ~71 % Bayes
  accuracy from v.x alone (exact 1-d quadrature), the cross term c = 1.70;
* Exercise 7.2.D: c20, c11, c04 from an exact quadrature of the ReLU loss L(alpha_u, alpha_v)
  (finite differences / polynomial fits around 0), independent and correlated latents, and
  the growing-mode ratio alpha_v / alpha_u;
* demo 7.2.E's Bayes lines 0.691 / 0.768 / 0.819 (the original course notes printed 0.767;
  exact quadrature over the m, u, v coordinates, in which the class densities factorise);
* the escape-time study of 7.2.C, which the notebook runs on the student's ``escape_times``:
  the numbers quoted are those of the reference solution (its answer cell, read from the
  notebook source by :func:`reference_escape_times`) with the notebook's seeds, and the
  original course notes' slopes "for comparison" (within three bootstrap spreads of ours);
* escape-time slopes from many runs of the exact overlap chain: 400 runs per point quoted, and
  within a stated band of the laws' slopes (CI: 400 runs per point; ``--full``: 4000);
* the step-size sweep (the notebook's seeded run, library simulator);
* demo 7.2.E (the notebook's seeded full-mode run of :func:`td_lib.staircase.train_staircase`):
  the plateau, the onset and the 0.9-crossing of the overlap with v, the late accuracies, and
  the specifics the original course notes gave for their run (plateau near 0.75, jump near step
  1000, about 0.79, rise from about step 100, start near 0.6), each tested on ours.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable

import numpy as np
from scipy import integrate, optimize, stats  # noqa: F401

from checks.claims import REPO, Claim
from checks.grading.higher_cumulants import bayes_accuracy_v, fitted_coefficients
from td_lib import escape, hermite, mixed_cumulant

NB = "course/source/td2_7_learned_first/td2_7_2_higher_cumulants.py"
SQRT2PI = math.sqrt(2 * math.pi)


def _max_over_u(A, B, beta_u: float):
    """Integral over x_u of max(A phi(x_u), B phi(x_u / r_u) / r_u), r_u = sqrt(1 + beta_u).

    The class-+1 density wins where log(B/A) - log(r_u) + k x_u^2 > 0, k = beta_u/(2(1+beta_u)):
    outside |x_u| = b with b = sqrt(max(-c/k, 0)). So the integral is
    A (2 Phi(b) - 1) + 2 B (1 - Phi(b / r_u)), in closed form.
    """
    ru = math.sqrt(1 + beta_u)
    k = beta_u / (2 * (1 + beta_u))
    with np.errstate(divide="ignore"):
        c = np.log(B) - np.log(A) - math.log(ru)
    b = np.sqrt(np.maximum(-c / k, 0.0))
    return A * (2 * stats.norm.cdf(b) - 1) + 2 * B * stats.norm.sf(b / ru)


def bayes_lines(*, beta_m: float = 1.0, beta_u: float = 5.0, beta_v: float = 10.0,
                n: int = 4001) -> tuple[float, float, float]:
    """Bayes accuracies of the test bed (independent latents): means only, means + covariances
    (the Gaussian clone), everything.

    In the coordinates (x_m, x_u, x_v) the class densities factorise: class -1 is N(0, I_3);
    class +1 is N(beta_m, 1) x N(0, 1 + beta_u) x (two-bump mixture along v). Means only:
    Phi(beta_m / 2). For the other two the x_u integral of max(p+, p-) is done in closed form
    (:func:`_max_over_u`); what remains is a 1-d integral over x_m (scipy quad) and a 2-d one
    over (x_m, x_v) (trapezoid on an ``n x n`` grid of [-12, 12] x [-8, 8]; the integrand is
    continuous, so the error is ~1e-6 at the default ``n``).
    """
    means_only = float(stats.norm.cdf(beta_m / 2))
    f = lambda x: float(_max_over_u(stats.norm.pdf(x), stats.norm.pdf(x, beta_m, 1), beta_u))
    two = 0.5 * integrate.quad(f, -20, 20, epsabs=1e-13, limit=200,
                               points=[beta_m / 2 + 0.5 * math.log(1 + beta_u)])[0]
    a, s = math.sqrt(beta_v / (1 + beta_v)), 1 / math.sqrt(1 + beta_v)
    xm = np.linspace(-12, 12, n)[:, None]
    xv = np.linspace(-8, 8, n)[None, :]
    A = stats.norm.pdf(xm) * stats.norm.pdf(xv)
    B = stats.norm.pdf(xm, beta_m, 1) * 0.5 * (stats.norm.pdf(xv, a, s) + stats.norm.pdf(xv, -a, s))
    g = _max_over_u(A, B, beta_u)
    three = 0.5 * np.trapezoid(np.trapezoid(g, xv[0], axis=1), xm[:, 0])
    return means_only, float(two), float(three)


# ------------------------------------------------------------------------ seeded notebook runs
DIMS = (16, 32, 64)


def reference_escape_times() -> Callable[..., np.ndarray]:
    """The reference solution of Exercise 7.2.C: the ``escape_times`` defined in the notebook's
    answer cell ``ex72C_escape_times`` (solution region included), compiled from the notebook
    source with the names that cell uses (``np``, ``math``, ``hermite``). Only the function
    definition is executed, not the cell's demonstration call."""
    src = (REPO / NB).read_text()
    cells = src.split("\n# %%")
    cell = next(c for c in cells if '"grade_id": "ex72C_escape_times"' in c.splitlines()[0])
    tree = ast.parse("\n".join(cell.splitlines()[1:]))
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "escape_times"]
    if len(defs) != 1:
        raise RuntimeError(f"{NB}: the answer cell ex72C_escape_times defines no escape_times")
    ns: dict = {"np": np, "math": math, "hermite": hermite}
    exec(compile(ast.Module(body=defs, type_ignores=[]), f"{NB}:ex72C_escape_times", "exec"), ns)
    return ns["escape_times"]


def notebook_study(fn: Callable[..., np.ndarray] | None = None, runs: int = 48, dims=DIMS) -> dict:
    """The notebook's escape-time study with its seeds: {k: (medians, slope, boot_sd, times)}.

    ``fn`` is the escape-time function (default: the reference solution, which the solutions
    notebook runs; the library simulator draws its random numbers in another order); ``dims``
    the dimensions (the notebook's quick mode uses 8 and 16)."""
    fn = fn or reference_escape_times()
    out = {}
    for k in (1, 2, 3):
        times = [np.asarray(fn(k, d, escape.STEPS[k](d), runs=runs, t_max=10**6,
                               seed=7200 + 100 * k + d), dtype=float) for d in dims]
        slope, boot = escape.bootstrap_slope(dims, times, 2000, rng=k)
        out[k] = ([float(np.median(t)) for t in times], slope, float(boot.std()), times)
    return out


def notebook_sweep(n_delta: int = 10, runs: int = 32, t_max: int = 60000
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The notebook's step-size sweep (k = 3, d = 64) with the reference solution's escape_times,
    one seed per step parameter (default: full mode): deltas, medians, fractions not escaped."""
    fn = reference_escape_times()
    deltas = np.geomspace(0.03, 10, n_delta)
    T = np.stack([np.asarray(fn(3, 64, dl, runs=runs, t_max=t_max, seed=7299 + i), dtype=float)
                  for i, dl in enumerate(deltas)])
    return deltas, np.median(T, axis=1), np.isinf(T).mean(axis=1)


def staircase_runs() -> dict:
    """Demo 7.2.E as the notebook runs it in full mode: {correlated: StaircaseRun}."""
    from td_lib import staircase

    return {corr: staircase.train_staircase(corr, steps=12000, n_test=10000, num_records=40)
            for corr in (False, True)}


def chain_slopes(runs: int, rng: int = 0) -> dict[int, float]:
    """Slopes of log median escape time vs log d from the exact overlap chain (the study's
    step parameters; point (k, d) seeded with ``rng + 10 k + d``)."""
    out = {}
    for k in (1, 2, 3):
        med = [np.median(escape.reduced_escape_times(k, d, runs=runs, t_max=10**6,
                                                     rng=rng + 10 * k + d))
               for d in DIMS]
        out[k] = escape.loglog_slope(DIMS, med)
    return out


# ----------------------------------------------------------------------------------- claims
def claims(full: bool = False) -> list[Claim]:
    C: list[Claim] = []
    add = C.append

    # Hermite coefficients of ReLU
    relu = lambda x: np.maximum(x, 0.0)
    sr = hermite.coefficients(relu, 6, breakpoints=[0.0], tol=1e-12)
    add(Claim("7.2.sigma2", "ReLU sigma_2 - 1/sqrt(2 pi) (quadrature)", None,
              sr[2] - 1 / SQRT2PI, 1e-12))
    add(Claim("7.2.sigma4", "ReLU sigma_4 + 1/sqrt(2 pi) (quadrature)", None,
              sr[4] + 1 / SQRT2PI, 1e-12))

    # 7.2.A
    bv, bu = 10.0, 5.0
    k4 = mixed_cumulant.kappa4_v(bv)  # the course's closed form; checked below by Monte Carlo
    rng = np.random.default_rng(72)
    n = 4_000_000 if full else 1_000_000
    t = (math.sqrt(bv) * rng.choice([-1.0, 1.0], n) + rng.standard_normal(n)) / math.sqrt(1 + bv)
    k4_mc = float(np.mean(t**4) - 3 * np.mean(t**2) ** 2)
    add(Claim("7.2.A.kappa4", "kappa_4(v.x) at beta_v = 10 (closed form -200/121)", -1.65,
              k4, 0.005, NB, "\\approx -1.65$ at"))
    add(Claim("7.2.A.kappa4_mc", "kappa_4(v.x): Monte Carlo minus closed form", None,
              k4_mc - k4, 0.01, note=f"{n} samples; SE of kappa_4 about {2.0 / math.sqrt(n):.4f}"))
    add(Claim("7.2.A.bump", "bump position sqrt(beta_v/(1+beta_v))", 0.95,
              math.sqrt(bv / (1 + bv)), 0.005, NB, "\\approx \\pm0.95"))
    add(Claim("7.2.A.width", "bump standard deviation 1/sqrt(1+beta_v)", 0.30,
              1 / math.sqrt(1 + bv), 0.005, NB, "\\approx 0.30"))
    acc_v = bayes_accuracy_v(bv)
    add(Claim("7.2.A.bayes_v", "Bayes accuracy from v.x alone (%)", 71, 100 * acc_v, 0.5, NB,
              "about 71 %", note=f"exact quadrature: {acc_v:.6f}"))
    a, s = math.sqrt(bv / (1 + bv)), 1 / math.sqrt(1 + bv)
    g = lambda x: 0.5 * (stats.norm.pdf(x, a, s) + stats.norm.pdf(x, -a, s)) - stats.norm.pdf(x)
    r1, r2 = optimize.brentq(g, 0.3, 0.8), optimize.brentq(g, 1.2, 2.0)
    add(Claim("7.2.A.band_lo", "inner crossing of the Bayes bands", 0.60, r1, 0.005, NB,
              "0.60<|t|<1.50"))
    add(Claim("7.2.A.band_hi", "outer crossing of the Bayes bands", 1.50, r2, 0.005, NB,
              "1.50$), and"))
    c = mixed_cumulant.cross_term(bu, bv, True)
    add(Claim("7.2.A.c", "cross term c at beta_u = 5, beta_v = 10", 1.70, c, 0.005, NB,
              "= 1.70$. The top"))
    add(Claim("7.2.A.c_f1", "sqrt(2/pi)", 0.798, math.sqrt(2 / math.pi), 5e-4, NB,
              "0.798\\times 2.132"))
    add(Claim("7.2.A.c_f2", "sqrt(beta_u beta_v/(1+beta_v))", 2.132,
              math.sqrt(bu * bv / (1 + bv)), 5e-4, NB, "2.132 = 1.70"))

    # 7.2.D: coefficients against the exact loss
    s2 = 1 / SQRT2PI
    th = {False: (s2 * bu / 4, 0.0, -s2 * k4 / 48), True: (s2 * bu / 4, s2 * c / 2, -s2 * k4 / 48)}
    for corr in (False, True):
        ex = fitted_coefficients(bu, bv, corr)
        tag = "correlated" if corr else "independent"
        for name, e, tv in zip(("c20", "c11", "c04"), ex, th[corr]):
            add(Claim(f"7.2.D.{name}.{tag}", f"{name} ({tag}): exact ReLU loss minus Hermite "
                      "formula", None, e - tv, 2e-6 if name != "c04" else 2e-8,
                      note=f"exact {e:.8f}, formula {tv:.8f}"))
    add(Claim("7.2.D.c20", "c20 = sigma_2 beta_u / 4 (ReLU)", 0.499, th[True][0], 5e-4, NB,
              "0.499$, $c_{04}"))
    add(Claim("7.2.D.c04", "c04 = sigma_4 kappa_4 / 48 (ReLU)", 0.0137, th[True][2], 5e-5, NB,
              "0.0137$, and"))
    add(Claim("7.2.D.c11", "c11 = sigma_2 c / 2 (ReLU, correlated)", 0.339, th[True][1], 5e-4, NB,
              "0.339$ with"))
    add(Claim("7.2.D.c20b", "c20 (solution 7.2.D.3)", 0.499, th[True][0], 5e-4, NB,
              "0.499$, $c_{11}"))
    add(Claim("7.2.D.c11b", "c11 (solution 7.2.D.3)", 0.339, th[True][1], 5e-4, NB,
              "0.339$\n# (correlated)"))
    add(Claim("7.2.D.c04b", "c04 (solution 7.2.D.3)", 0.0137, th[True][2], 5e-5, NB,
              "0.0137$. The"))
    c20, c11 = th[True][0], th[True][1]
    lam = c20 + math.sqrt(c20**2 + c11**2)
    ev, vec = np.linalg.eigh(np.array([[2 * c20, c11], [c11, 0.0]]))
    v = vec[:, np.argmax(ev)]
    add(Claim("7.2.D.ratio_eig", "c11/lambda_+ minus the eigenvector ratio (numpy eigh)", None,
              c11 / lam - v[1] / v[0], 1e-12))
    add(Claim("7.2.D.ratio", "alpha_v/alpha_u along the growing mode", 0.31, c11 / lam, 0.005, NB,
              "about 0.31 for ReLU"))

    # demo 7.2.E: Bayes lines
    b1, b2, b3 = bayes_lines(n=4001 if full else 2001)
    for val, q, quote_, note in [
            (0.691, b1, "means (0.691)", "Phi(1/2)"),
            (0.768, b2, "covariances (0.768", "errata: the original course notes printed 0.767; the u-integral "
             "in closed form and quad over x_m give 0.76802"),
            (0.819, b3, "everything\n# (0.819)", "closed-form u-integral, 2-d trapezoid")]:
        add(Claim(f"7.2.E.bayes{val}", "test-bed Bayes accuracy", val, q, 5e-4 + 1e-5, NB,
                  quote_, note=note + f"; computed {q:.6f}"))

    add(Claim("7.2.E.bayes_exact", "means + covariances Bayes accuracy, 4 digits", 0.7680, b2,
              5e-5, NB, "0.7680) and", note="errata: the original course notes printed 0.767"))
    add(Claim("7.2.C.alpha0", "typical starting overlap d^(-1/2) at d = 16", 0.25, 16**-0.5, 1e-12,
              NB, "0.25 at $d=16$"))

    # 7.2.C: the notebook's seeded study
    law_slopes = {k: escape.loglog_slope(DIMS, [escape.LAWS[k](d) for d in DIMS]) for k in (1, 2, 3)}
    for k, (q, quote_) in zip((1, 2, 3), [(1.00, "1.00, 1.58 and 2.29; the spread"),
                                          (1.58, "1.58 and 2.29; the spread"),
                                          (2.29, "2.29; the spread")]):
        add(Claim(f"7.2.C.law{k}", f"log-log slope of the k = {k} law over d = 16..64", q,
                  law_slopes[k], 0.005, NB, quote_))
    for k, (q, quote_) in zip((1, 2, 3), [(1.00, "1.00, 1.58 and 2.29, and"),
                                          (1.58, "1.58 and 2.29, and the"),
                                          (2.29, "2.29, and the original")]):
        add(Claim(f"7.2.C.law{k}b", f"law slope k = {k} (second mention)", q, law_slopes[k],
                  0.005, NB, quote_))
    study = notebook_study()
    ours = {1: (1.31, "1.31, 1.41 and 2.11"), 2: (1.41, "1.41 and 2.11"), 3: (2.11, "2.11, with")}
    sd_q = {1: (0.10, "0.10, 0.12 and 0.23"), 2: (0.12, "0.12 and 0.23"),
            3: (0.23, "0.23; the\n# laws")}
    for k in (1, 2, 3):
        meds, slope, sd, _ = study[k]
        add(Claim(f"7.2.C.slope{k}", f"fitted slope k = {k} (reference solution, notebook seeds, "
                  "48 runs)", ours[k][0], slope, 0.006, NB, ours[k][1], note=f"medians {meds}"))
        add(Claim(f"7.2.C.sd{k}", f"bootstrap spread of the slope, k = {k}", sd_q[k][0], sd,
                  0.006, NB, sd_q[k][1]))
    page = {1: (1.09, "1.09, 1.58 and 2.39"), 2: (1.58, "1.58 and 2.39 for"),
            3: (2.39, "2.39 for comparison")}
    for k in (1, 2, 3):
        _, slope, sd, _ = study[k]
        add(Claim(f"7.2.C.page{k}", f"original notes' slope k = {k} vs ours (tol: 3 bootstrap spreads)",
                  page[k][0], slope, 3 * sd, NB, page[k][1],
                  note="the original course notes' number comes from their own random run; compared with the "
                       "notebook's run within three bootstrap spreads"))
    dev = {k: (study[k][1] - law_slopes[k]) / study[k][2] for k in (1, 2, 3)}
    add(Claim("7.2.C.dev2", "(law - slope) / bootstrap spread for k = 2", 1.5, -dev[2], 0.05, NB,
              "1.5 and 0.8 bootstrap spreads below"))
    add(Claim("7.2.C.dev3", "(law - slope) / bootstrap spread for k = 3", 0.8, -dev[3], 0.05, NB,
              "0.8 bootstrap spreads below"))
    add(Claim("7.2.C.dev1", "(slope - law) / bootstrap spread for k = 1", 3.0, dev[1], 0.05, NB,
              "3.0 spreads above"))
    cs400 = chain_slopes(400)
    chain_q = {1: (1.06, "1.06, 1.51 and 2.21"), 2: (1.51, "1.51 and 2.21"),
               3: (2.21, "2.21. The ratios")}
    for k, (q, quote_) in chain_q.items():
        add(Claim(f"7.2.C.chain400_{k}", f"slope k = {k} of the exact overlap chain, 400 runs per "
                  "point (seeded)", q, cs400[k], 0.005, NB, quote_))
    spread = max(max(np.array(study[k][0]) / [escape.LAWS[k](d) for d in DIMS])
                 / min(np.array(study[k][0]) / [escape.LAWS[k](d) for d in DIMS]) for k in (1, 2, 3))
    add(Claim("7.2.C.law_ratio_spread", "largest max/min over d of median / law (reference run)",
              1.6, spread, 0.05, NB, "factor 1.6 over the three"))
    add(Claim("7.2.C.study_runs", "runs per point of the study", 48,
              len(study[1][3][0]), 0, NB, "48 runs per point, each"))
    # slopes from many runs of the exact chain, within a band of the laws
    runs = 4000 if full else 400
    band = 0.15 if full else 0.30  # finite-d offset (~0.1) plus 4 standard errors of the slope
    cs = chain_slopes(runs)
    for k in (1, 2, 3):
        add(Claim(f"7.2.C.chain{k}", f"slope k = {k} from {runs} runs of the exact overlap chain "
                  f"minus the law's slope (band {band})", None, cs[k] - law_slopes[k], band,
                  note=f"slope {cs[k]:.3f}, law {law_slopes[k]:.3f}; finite-d corrections and "
                       "logarithms make the slopes differ from the laws' by about 0.1 at "
                       "d = 16..64 (4000 runs: 1.08, 1.52, 2.23)"))

    # step-size sweep
    deltas, med, never = notebook_sweep()
    fin = np.isfinite(med)
    best_i = int(np.argmin(np.where(fin, med, np.inf)))
    add(Claim("7.2.C.sweep_best_lo", "best delta of the sweep >= 0.25 (original notes: fastest near 0.3-1)",
              None, max(0.0, 0.25 - deltas[best_i]), 0.0,
              note=f"best delta {deltas[best_i]:.3f}"))
    add(Claim("7.2.C.sweep_best_hi", "best delta of the sweep <= 1.3", None,
              max(0.0, deltas[best_i] - 1.3), 0.0, note=f"best delta {deltas[best_i]:.3f}"))
    add(Claim("7.2.C.sweep_best", "step parameter with the smallest median (notebook run)", 0.76,
              deltas[best_i], 0.005, NB, "0.76$, within a broad"))
    ratio = med[-1] / med[best_i]
    add(Claim("7.2.C.sweep_ratio", "median at delta = 10 over the best median (notebook run)",
              30, ratio, 0.5, NB, "about 30 times the best",
              note="the original course notes' own sweep gave about 25 (quoted for comparison)"))
    add(Claim("7.2.C.sweep_never", "runs not escaped after 60000 steps at delta = 10 (%)",
              28, 100 * never[-1], 0.5, NB, "28 % of the runs",
              note="the original course notes' own sweep gave 44 % (quoted for comparison)"))
    add(Claim("7.2.C.sweep_page_ratio", "original notes' ratio 25 vs ours (factor-2 band)", 25,
              ratio, 25 - 25 / 2, NB, "about 25 times and 44 %",
              note="32 runs per point: the ratio of medians is uncertain by tens of per cent"))
    add(Claim("7.2.C.sweep_page_never", "original notes' 44 % vs ours (binomial, 32 runs: 3 SE)", 44,
              100 * never[-1], 3 * 100 * math.sqrt(0.44 * 0.56 / 32), NB, "44 % for comparison"))
    C += staircase_claims()
    return C


def staircase_claims() -> list[Claim]:
    """Demo 7.2.E: the notebook's seeded full-mode run (independent and correlated latents).

    The late accuracies of the correlated run move by ~1e-3 with the number of torch threads
    (float32 rounding in the sampler, amplified over 10^4 SGD steps); everything quoted before
    step ~7000 is reproduced exactly, and the late values are quoted to two decimals."""
    from td_lib import staircase

    runs = staircase_runs()
    ind, cor = runs[False], runs[True]
    full, clone = ind.accuracy_on("full data"), ind.accuracy_on("Gaussian clone")
    win = (ind.t >= 100) & (ind.t <= 1000)
    plateau, gap = float(full[win].mean()), float(np.abs(full - clone)[win].mean())
    on_i = staircase.onset_step(ind.t, ind.overlap_v, 0.05)
    on_c = staircase.onset_step(cor.t, cor.overlap_v, 0.05)
    hi_i = staircase.first_above(ind.t, ind.overlap_v, 0.9)
    hi_c = staircase.first_above(cor.t, cor.overlap_v, 0.9)
    late_full = float(np.mean(full[-5:]))
    late_clone = float(np.mean(clone[-5:]))
    start_c = float(cor.overlap_v[0])
    E = "7.2.E."
    return [
        Claim(E + "plateau", "independent: mean full-data accuracy over the records 100..1000",
              0.748, plateau, 5e-4, NB, "averages 0.748"),
        Claim(E + "plateau_near", "... near 0.75", 0.75, plateau, 0.005, NB,
              "0.75 (the full-data accuracy"),
        Claim(E + "plateau_gap", "independent: mean |full - clone| over the same records", 0.01, gap,
              0.005, NB, "within about 0.01"),
        Claim(E + "onset_ind", "independent: onset of the overlap with v (stays > start + 0.05)",
              666, on_i, 0, NB, "good at step 666"),
        Claim(E + "cross_ind", "independent: first record with overlap with v > 0.9", 1747, hi_i, 0,
              NB, "at step 1747. Full"),
        Claim(E + "late_full", "independent: full-data accuracy, mean of the last five records, "
              "minus 0.788 (the seeded run; not quoted: its third decimal moves with the thread count)",
              None, late_full - 0.788, 0.0015,
              note="late values move by ~1e-3 with the thread count (see the docstring); the prose "
                   "quotes two decimals and says so"),
        Claim(E + "late_full_about", "... about 0.79", 0.79, late_full, 0.005, NB,
              "about 0.79 (averaged"),
        Claim(E + "late_clone", "independent: clone accuracy, mean of the last five records", 0.72,
              late_clone, 0.005, NB, "to about 0.72"),
        Claim(E + "start_cor", "correlated: largest overlap with v at step 1", 0.58, start_c, 0.005,
              NB, "start near 0.58"),
        Claim(E + "onset_cor", "correlated: onset of the overlap with v", 76, on_c, 0, NB,
              "at step 76, a"),
        Claim(E + "onset_ratio", "onset step, independent / correlated", 8.8, on_i / on_c, 0.05, NB,
              "factor 8.8 earlier"),
        Claim(E + "cross_cor", "correlated: first record with overlap with v > 0.9", 524, hi_c, 0, NB,
              "step 524, against"),
        Claim(E + "cross_ratio", "0.9-crossing step, independent / correlated", 3.3, hi_i / hi_c,
              0.05, NB, "factor 3.3 earlier"),
        # the original course notes' description of their run, tested on ours
        Claim(E + "page_plateau", "original notes: plateau near 0.75 (ours: the plateau mean)", 0.75,
              plateau, 0.01, NB, "0.75, a jump"),
        Claim(E + "page_jump", "original notes: jump near step 1000 (ours: geometric mean of the "
              "onset and the 0.9-crossing; tolerance a factor 1.5)", 1000, math.sqrt(on_i * hi_i), 500,
              NB, "near step 1000", note=f"onset {on_i}, crossing {hi_i}"),
        Claim(E + "page_late", "original notes: about 0.79 (ours: mean of the last five records)",
              0.79, late_full, 0.005, NB, "about 0.79 with"),
        Claim(E + "page_rise", "original notes: rises from about step 100 (ours: the onset; "
              "tolerance 40 steps)", 100, on_c, 40, NB, "about step 100, and"),
        Claim(E + "page_start", "original notes: dashed curves start near 0.6 (ours, to one "
              "decimal)", 0.6, start_c, 0.05, NB, "near 0.6. All"),
    ]
