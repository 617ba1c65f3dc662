# %% [markdown]
# # CNN vs LCN, lesson 2 — locality: O(D) or O(D log D) samples
#
# *Training Dynamics, Iliad Intensive 2026.* CPU only; needs numpy, scipy, matplotlib and the
# course library `td_lib` (its module `td_lib.cnn_lcn` is the theory engine this notebook
# uses).
#
# **Quick mode.** When the notebook is validated or graded (and whenever the environment
# variable `TD_QUICK=1` is set) the demonstration cells run with fewer dimensions $D$, fewer
# initialisations and fewer kernel sizes, so the numbers they print differ from the ones the text
# quotes, which are those of the full run; each such cell says so when it runs in quick mode.
# Graded computations are the same in both modes.
#
# **What this lesson builds on.** Lesson 1 (`cnn_lcn_1_exact_odes`): the convolutional teacher
# with kernel size $k_t$ and the CNN student with kernel size $k_s\ge k_t$ on $P$ positions of
# $D$ features (§1, eqs 4–11), the order parameters $R$ and $Q$ and their exact ODEs in
# $\alpha=t/D$ (§2, eqs 15–18), and the random initial condition of eqs 19–20, whose
# $O(D^{-1/2})$ fluctuations `cl.random_init` samples for any $D$.
#
# **What it covers.** §4: with independent positions the CNN finds the teacher after $O(D)$
# samples when its kernel has the teacher's size, but after $O(D\log D)$ when it is larger
# (Result 3.3), because the dynamics first gets stuck on a symmetric plateau that only the
# asymmetry of the random start lets it leave. Exercise D measures the specialisation time and
# its growth with $\ln D$ (Figures 3 and 4); Figure 7 repeats the measurement for another
# teacher and for correlated positions. Lesson 3 (`cnn_lcn_3_noise_floor_phase`) turns to what
# correlated positions do to weight sharing.

# %% [markdown]
# ## Readings
#
# **The paper of this assignment.** F. Mori et al., on the exact online-SGD dynamics of
# convolutional vs locally connected students (code:
# <https://github.com/francescomori/CNN_theory>): this lesson follows its Result 3.3 and the
# symmetry argument behind it (the reflection $\rho$ and the plateau, App. G; App. F for $c>0$).
#
# - D. Saad and S. A. Solla, *On-line learning in soft committee machines*, Phys. Rev. E 52,
#   4225 (1995): the plateaus caused by the permutation symmetry of hidden units, the ancestor of the
#   $\rho$-symmetric plateau of §4.
# - A. Favero, F. Cagnetta and M. Wyart, *Locality defeats the curse of dimensionality in
#   convolutional teacher-student scenarios*, NeurIPS 2021 (arXiv:2106.08619): locality, not
#   translation invariance, sets the exponent of kernel learning curves — the kernel counterpart
#   of the role locality plays here.

# %%
import time

import numpy as np

from td_lib import cnn_lcn as cl
from td_lib.core.runtime import QUICK, pick, quick_note, progress
from td_lib.own_work import demo_result

_t_start = time.time()


# %% [markdown]
# ## 4. Locality: $O(D)$ or $O(D\log D)$ samples (Result 3.3)
#
# **Zero-error solutions (eq. 23).** For $k_s,k_t<P$ the CNN reproduces the teacher exactly
# when its kernel contains the teacher's, shifted by some $s$:
# $\hat w_l=\sqrt{k_s/k_t}\,w_{l-s}$ for $s\le l<s+k_t$ and $\hat w_l=0$ otherwise, with
# $s\in\{0,\dots,k_s-k_t\}$: $k_s-k_t+1$ solutions, one if $k_s=k_t$. The *alignment* with
# solution $s$ is
# $$\gamma_s=\frac{1}{\sqrt{\operatorname{Tr}Q}}\sum_{l=0}^{k_t-1}R_{s+l,l}\qquad\text{(eq. 24)},$$
# equal to 1 at solution $s$ and 0 at the others. (At solution $s$ the sum is
# $\sqrt{T}\sqrt{\operatorname{Tr}Q}$, so eq. 24 is normalised for $T=1$, the value used in all the
# paper's figures; `cl.alignment` divides by $\sqrt T$ as well.) The *specialisation time*
# is the first time some alignment exceeds a threshold $\gamma_{\rm th}=0.99$:
# $$\alpha_{\rm spec}=\inf\{\alpha\ge0:\ \max_s\gamma_s(\alpha)\ge\gamma_{\rm th}\}\qquad\text{(eq. 25)}.$$
#
# **Result 3.3 (numerical).** For $S=I$, $\sigma=0$, $g=\operatorname{erf}$, integrating the CNN
# ODEs from random initial conditions at dimension $D$: (i) $k_s=k_t$ gives
# $\alpha_{\rm spec}=O(1)$, i.e. $O(D)$ samples; (ii) $k_t<k_s\le P-2$ gives
# $\alpha_{\rm spec}=O(\log D)$, i.e. $O(D\log D)$ samples.
#
# **Why.** At $R=0$ the drift of $R$ is not zero (erf has a nonzero first Hermite coefficient,
# $\mathbb E[zg(z)]\ne0$): eq. 104 gives every entry $R_{lm}$ the same initial velocity. So the
# student starts moving towards *all* shifted solutions at once. The ODEs commute with the
# reflection
# $$\rho:\ R_{lm}\mapsto R_{k_s-1-l,\,k_t-1-m},\qquad Q_{ll'}\mapsto Q_{k_s-1-l,\,k_s-1-l'}\qquad\text{(eq. 26)},$$
# which maps solution $s$ to solution $k_s-k_t-s$, and the leading-order initial state
# ($R=0$, $Q=I/k_s$) is $\rho$-symmetric. A $\rho$-symmetric start therefore stays
# $\rho$-symmetric forever (App. G), and cannot pick one of a pair of mirror solutions: it
# gets stuck on a *$\rho$-symmetric plateau*. Only the $O(D^{-1/2})$ asymmetry of the random
# start gets it off, and near the plateau that asymmetry grows like $e^{\kappa\alpha}$; it
# becomes $O(1)$ after $\alpha\approx\kappa^{-1}\ln\sqrt D$. For $k_s=k_t$ the only solution is
# itself $\rho$-symmetric and no symmetry needs breaking. This is the same mechanism as the
# permutation-symmetric plateaus of soft committee machines (Saad and Solla).
#
# ### Exercise D — measuring $\alpha_{\rm spec}$ and its $\log D$ growth
#
# Write `alpha_spec_from_trajectory(alphas, gammas, threshold=0.99)`: `alphas` is an increasing
# array `(n,)` of checkpoint times $\alpha_k$ and `gammas` the alignments `(n, n_s)` at those times
# (one column per shift $s$). Return eq. 25 computed from the maximum over the shifts at each
# checkpoint, $m_k=\max_s\gamma_s(\alpha_k)$:
#
# - let $i$ be the first checkpoint with $m_i\ge$ `threshold` (equality counts as reaching it);
# - if there is none, return `np.inf`; if $i=0$, return `alphas[0]`;
# - otherwise interpolate $m$ linearly between checkpoints $i-1$ and $i$ and return
#   $\alpha_{i-1}+(\alpha_i-\alpha_{i-1})\,\dfrac{\gamma_{\rm th}-m_{i-1}}{m_i-m_{i-1}}$.
#
# It is the maximum $m$ that is interpolated, not each $\gamma_s$: when the leading shift changes
# between the two checkpoints, interpolating every $\gamma_s$ separately and taking the earliest
# of their crossings gives a later time, and the tests check the rule above (also in such a
# case). Then write `fit_log_d(Ds, a_spec)` returning the
# least-squares `(a, b)` of $\alpha_{\rm spec}\approx a+b\ln D$ (natural logarithm).

# %% nbgrader={"grade": false, "grade_id": "exD_alpha_spec", "locked": false, "schema_version": 3, "solution": true, "task": false}
def alpha_spec_from_trajectory(alphas, gammas, threshold=0.99):
    """Specialisation time, eq. 25: first alpha with max_s gamma_s >= threshold (interpolated).

    alphas : (n,) increasing times; gammas : (n, n_s) alignments. Returns a float (inf if never).
    """
    ### BEGIN SOLUTION
    alphas = np.asarray(alphas, dtype=float)
    top = np.asarray(gammas, dtype=float).max(axis=-1)
    above = np.flatnonzero(top >= threshold)
    if above.size == 0:
        return np.inf
    i = above[0]
    if i == 0:
        return float(alphas[0])
    frac = (threshold - top[i - 1]) / (top[i] - top[i - 1])
    return float(alphas[i - 1] + frac * (alphas[i] - alphas[i - 1]))
    ### END SOLUTION


def fit_log_d(Ds, a_spec):
    """Least-squares (a, b) of a_spec = a + b ln D (natural log)."""
    ### BEGIN SOLUTION
    X = np.stack([np.ones(len(Ds)), np.log(np.asarray(Ds, dtype=float))], axis=1)
    (a, b), *_ = np.linalg.lstsq(X, np.asarray(a_spec, dtype=float), rcond=None)
    return float(a), float(b)
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "test_exD_alpha_spec", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Visible tests for alpha_spec_from_trajectory.
import numpy as np
from td_lib.own_work import own_work, passed

_spec = own_work(alpha_spec_from_trajectory, "exD_alpha_spec")
_al = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
_g = np.array([[0.1, 0.2], [0.3, 0.5], [0.4, 0.9], [0.2, 0.995], [0.0, 1.0]])
_v = _spec(_al, _g)
_want = 2 + (0.99 - 0.9) / (0.995 - 0.9)
assert abs(_v - _want) < 1e-12, (
    f"max_s gamma_s crosses 0.99 between alpha = 2 (0.9) and alpha = 3 (0.995): linear interpolation "
    f"gives {_want:.6f}, got {_v}."
    + (" The shift s = 1 reaches the threshold, so eq. 25 (a maximum over s) is finite here." if _v == np.inf else ""))
_v2 = _spec(_al, _g[:, ::-1])
assert abs(_v2 - _v) < 1e-12, (
    f"with the two columns (shifts) swapped you return {_v2} instead of {_v}: eq. 25 does not depend on the order of the shifts")
_v3 = _spec(_al, 0.5 * _g)
assert _v3 == np.inf, f"max_s gamma_s stays below 0.99 here (at most 0.5): expected np.inf, got {_v3}"
_v4 = _spec(_al, np.full((5, 1), 0.999))
assert _v4 == 0.0, f"gamma = 0.999 >= 0.99 from the first checkpoint on: expected alphas[0] = 0.0, got {_v4}"
# First crossing, not the last: the alignment here dips below the threshold again.
_g3 = np.array([[0.0], [0.995], [0.5], [0.999], [1.0]])
_v5 = _spec(_al, _g3)
assert abs(_v5 - 0.99 / 0.995) < 1e-12, (
    f"gamma reaches 0.99 first between alpha = 0 and 1 (interpolated {0.99 / 0.995:.6f}) and again after alpha = 2; "
    f"eq. 25 is the first time, got {_v5}.")
# The leading shift changes between the two checkpoints around the crossing: the maximum over s
# (0.98, then 0.995) is what is interpolated.
_g6 = np.array([[0.0, 0.5], [0.2, 0.98], [0.995, 0.5]])
_v6 = _spec(_al[:3], _g6)
_want6 = 1 + (0.99 - 0.98) / (0.995 - 0.98)
assert abs(_v6 - _want6) < 1e-12, (
    f"max_s gamma_s is 0.5, 0.98, 0.995 at alpha = 0, 1, 2 (shift 1 leads at alpha = 1, shift 0 at alpha = 2): "
    f"interpolating the maximum gives {_want6:.6f}, got {_v6}."
    + (" You interpolated each shift separately: the statement interpolates the maximum over the shifts."
       if abs(_v6 - (1 + 0.79 / 0.795)) < 1e-9 else ""))
passed("alpha_spec_from_trajectory")
### BEGIN HIDDEN TESTS
# Eq. 25 for 20 random increasing alignments (drawn below, in this order)
# BAKED alpha_spec_hidden (expected values computed on the instructor's side: checks/grading/baked_values/cnn_lcn_2_specialisation.json)
_rng = np.random.default_rng(9)
for _ref in _refs:
    _al = np.cumsum(_rng.uniform(0.1, 1.0, 30))
    _g = np.clip(np.cumsum(_rng.uniform(0, 0.08, (30, 3)), 0), 0, 1)
    _thr = float(_rng.choice([0.5, 0.9, 0.99]))
    _mine = _spec(_al, _g, _thr)
    assert (_mine == _ref) or abs(_mine - _ref) < 1e-10, (
        f"random increasing alignments (3 shifts, 30 checkpoints from alpha = {_al[0]:.3f}), threshold = {_thr}: "
        f"expected {_ref}, got {_mine}.")
# Reaching the threshold exactly counts ("at or above"), also when gamma never exceeds it.
_al = np.array([0.5, 1.5, 2.5, 3.5])
for _g, _want in ((np.array([[0.2], [0.9], [0.9], [0.9]]), 1.5), (np.array([[0.2, 0.1], [0.5, 0.9], [0.7, 0.95], [0.8, 0.9]]), 1.5)):
    _mine = _spec(_al, _g, 0.9)
    assert abs(_mine - _want) < 1e-12, (
        f"alphas = {_al.tolist()}, max_s gamma = {_g.max(1).tolist()}, threshold 0.9: the threshold is reached "
        f"(with equality) at alpha = {_want}; got {_mine}.")
_g = np.array([[0.3], [0.98], [0.991], [0.995]])
_mine = _spec(_al, _g)
_want = 1.5 + (0.99 - 0.98) / (0.991 - 0.98)
assert abs(_mine - _want) < 1e-12, (
    f"default threshold: gamma = {_g[:, 0].tolist()} at alphas = {_al.tolist()} reaches 0.99 at {_want:.6f}, got {_mine}.")
# Three shifts, the leader changing between the checkpoints around the crossing (s = 2, then s = 0):
# the maximum over the shifts is interpolated (interpolating each shift would give a later time).
_g = np.array([[0.1, 0.0, 0.3], [0.4, 0.2, 0.6], [0.5, 0.3, 0.85], [0.97, 0.1, 0.8]])
_mine = _spec(_al, _g, 0.9)
_want = 2.5 + (0.9 - 0.85) / (0.97 - 0.85)
assert abs(_mine - _want) < 1e-12, (
    f"alphas = {_al.tolist()}, gammas (rows: checkpoints, columns: shifts) = {_g.tolist()}, threshold 0.9: "
    f"max_s gamma_s is {_g.max(1).tolist()}; interpolating it gives {_want:.6f}, got {_mine}.")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_exD_fit_log_d", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Visible tests for fit_log_d.
import numpy as np
from td_lib.own_work import own_work, passed

_fit = own_work(fit_log_d, "exD_alpha_spec")
_D = np.array([1e2, 1e4, 1e6, 1e8])
_a, _b = _fit(_D, 3.0 + 2.5 * np.log(_D))
assert abs(_a - 3.0) < 1e-9 and abs(_b - 2.5) < 1e-10, (
    f"exact data a + b ln D with a = 3, b = 2.5 should be fitted exactly; got a = {_a}, b = {_b}."
    + (" Your slope is ln(10) times too large: the fit is in the natural log of D." if abs(_b - 2.5 * np.log(10)) < 1e-6
       else "") + (" Your (a, b) look swapped." if abs(_a - 2.5) < 1e-6 and abs(_b - 3.0) < 1e-6 else ""))
passed("fit_log_d")
### BEGIN HIDDEN TESTS
_rng = np.random.default_rng(2)
for _n, _a0, _b0 in ((15, -4.0, 7.0), (2, 1.5, 0.0), (6, 0.3, -2.0)):
    _D = 10.0 ** _rng.uniform(1, 12, _n)
    _y = _a0 + _b0 * np.log(_D) + (_rng.normal(0, 0.1, _n) if _n > 2 else 0.0)
    _X = np.stack([np.ones(_n), np.log(_D)], 1)
    _ref = np.linalg.lstsq(_X, _y, rcond=None)[0]
    _a, _b = _fit(_D, _y)
    assert abs(_a - _ref[0]) < 1e-8 and abs(_b - _ref[1]) < 1e-9, (
        f"{_n} noisy points: the least-squares fit gives (a, b) = ({_ref[0]:.6f}, {_ref[1]:.6f}), "
        f"you return ({_a:.6f}, {_b:.6f}).")
### END HIDDEN TESTS

# %% tags=["demo"]
# Figures 3 and 4: the CNN ODE (eq. 17) from random initial order parameters at dimension D,
# several random initialisations per D (the paper's markers are averages over initialisations).
# Paper: g = erf, k_t = 1, P = 6, S = I, eta = 0.5, T = 1, sigma = 0, gamma_th = 0.99.
import matplotlib.pyplot as plt

FIG3 = dict(P=6, k_t=1, eta=0.5, c=0.0, rng=3, dtau=pick(0.5, 1.0))  # dtau: RK4 step in eta * alpha
Ds3 = np.array(pick([1e2, 1e4, 1e6, 1e8, 1e10, 1e12], [1e2, 1e4, 1e8]))
n_init3 = pick(8, 2)
amax3 = {1: 40.0, 2: 400.0, 3: 800.0, 4: 1500.0}  # horizons: every run has specialised before
runs3 = {k: cl.specialisation_runs(Ds3, k_s=k, n_init=n_init3, alpha_max=amax3[k],
                                   n_ckpt=pick(400, 100), **FIG3)
         for k in progress(pick([1, 2, 3, 4], [1, 2]), desc="Figure 3 (one batch per k_s)")}


def specialisation_analysis(runs, alpha_spec_fn, fit_fn, D_min=1e4):
    """For each k_s: alpha_spec of every run (eq. 25) and the fit a + b ln D through the means
    over the initialisations at D >= D_min, with the given functions (yours of Exercise D)."""
    out = {}
    for k, r in runs.items():
        g = r.gamma
        a_sp = np.array([[float(alpha_spec_fn(r.t, g[:, i, j])) for j in range(g.shape[2])]
                         for i in range(g.shape[1])])
        fit = r.D >= D_min
        ok = fit.sum() >= 2 and np.all(np.isfinite(a_sp[fit]))
        out[k] = {"a_sp": a_sp, "fit": tuple(float(v) for v in fit_fn(r.D[fit], a_sp[fit].mean(1))) if ok else None}
    return out


def spec_plot(ax, runs, analysis, title, D_min=1e4):
    """Markers: mean alpha_spec over the initialisations (error bar: standard error), small dots:
    single runs, open marker: D < D_min (not fitted); dashed: a + b ln D fitted to the means."""
    for k, r in runs.items():
        a_sp, Dk = np.asarray(analysis[k]["a_sp"], dtype=float), r.D
        mean = a_sp.mean(1)
        se = a_sp.std(1, ddof=1) / np.sqrt(a_sp.shape[1]) if a_sp.shape[1] > 1 else 0 * mean
        fit = Dk >= D_min
        col = f"C{k}"
        ax.semilogx(np.repeat(Dk, a_sp.shape[1]), a_sp.ravel(), ".", color=col, ms=3, alpha=0.4)
        ax.errorbar(Dk[fit], mean[fit], se[fit], fmt="o", color=col, ms=5, capsize=2, label=f"$k_s={k}$")
        ax.errorbar(Dk[~fit], mean[~fit], se[~fit], fmt="o", mfc="none", color=col, ms=5, capsize=2)
        if analysis[k]["fit"] is not None:
            a, b = analysis[k]["fit"]
            dd = np.geomspace(Dk.min(), Dk.max(), 50)
            ax.semilogx(dd, a + b * np.log(dd), "--", color=col, lw=1)
    ax.set(xlabel="feature dimension $D$", ylabel=r"$\alpha_{\rm spec}$ (eq. 25, $\gamma_{\rm th}=0.99$)", title=title)
    ax.legend(title="markers: ODE, mean over inits; dashed: $a+b\\ln D$", fontsize=8, title_fontsize=8)


def print_fits(analysis, spread, n_init):
    """The fits a + b ln D; their standard errors from the scatter of the initialisations and the
    scatter of single runs are the course's reference run's (``spread``)."""
    for k, res in analysis.items():
        if res["fit"] is None:
            continue
        (a, b), s = res["fit"], spread[k]
        print(f"k_s = {k}: alpha_spec = {a:.2f} + {b:.3f} ln D  (means over {n_init} inits at D >= 1e4; "
              f"standard errors {s['se_a']:.2f} and {s['se_b']:.3f}; single runs scatter by {s['sd']:.2f})")


# BAKED specialisation_fig3_demo (expected values computed on the instructor's side: checks/grading/baked_values/cnn_lcn_2_specialisation.json)
fig3 = pick(_ref_fig3["full"], _ref_fig3["quick"])
analysis3 = demo_result(lambda: specialisation_analysis(runs3, alpha_spec_from_trajectory, fit_log_d), fig3["analysis"],
                        "alpha_spec_from_trajectory and fit_log_d", rtol=1e-9)
fig, ax = plt.subplots(figsize=(6.5, 4.3))
spec_plot(ax, runs3, analysis3, "Figure 3: specialisation time of the CNN, $k_t=1$, $P=6$, $\\eta=0.5$")
plt.tight_layout()
plt.show()
print_fits(analysis3, fig3["spread"], n_init3)
quick_note("D = 1e2, 1e4, 1e8, two initialisations each, k_s = 1 and 2 only")

# %% [markdown]
# With the teacher's kernel size, $k_s=k_t=1$, the student specialises at
# $\alpha_{\rm spec}\approx$ 6.98 for every $D\ge10^8$, where all eight initialisations give the
# same value to two decimals. At smaller $D$ the $O(D^{-1/2})$ fluctuations of the start still
# move it (standard deviation over the initialisations 0.81 at $D=100$ and 0.06 at $D=10^4$;
# the average at $D=100$ is 7.23), but the limit is $D$-independent: $O(D)$ samples. With
# $k_s>k_t$ single runs scatter much more, by about 13 (standard deviation for $k_s=2$),
# because the time to leave the plateau depends on the random projection of the start on the
# unstable direction (see the question below); their averages lie on straight lines in $\ln D$.
# For $k_s=2$ the fit to the means at $D\ge10^4$ gives $\alpha_{\rm spec}=a+b\ln D$ with
# $a=$ 33.8 and slope $b=$ 6.89 per unit of $\ln D$, with standard errors
# 6.0 and 0.39 from the scatter of the initialisations. So the number of samples
# $t=\alpha D$ grows like $D\ln D$, and larger $k_s$ means longer plateaus (the slopes printed
# above grow with $k_s$). (These numbers are from the full-mode run; $D=100$ is plotted with
# open markers and left out of the fits, it is not yet in the asymptotic regime.)

# %% tags=["demo"]
# Figure 4: the alignments gamma_s(alpha) at the largest dimension (first initialisation), k_s = 3, 4.
panels = [k for k in (3, 4) if k in runs3] or [2]
fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 3.8), squeeze=False)
for ax, k_s3 in zip(axes[0], panels):
    r = runs3[k_s3]
    gam4 = r.gamma[:, -1, 0]  # (n_alpha, n_s) at D = Ds3[-1], first initialisation
    for s_ in range(gam4.shape[-1]):
        ax.semilogx(r.t[1:], gam4[1:, s_], label=f"$s={s_}$")
    a_sp = np.asarray(analysis3[k_s3]["a_sp"], dtype=float)[-1, 0]
    if np.isfinite(a_sp):
        ax.axvline(a_sp, color="k", ls=":", lw=1, label=r"$\alpha_{\rm spec}$")
    ax.axhline(0, color="gray", lw=0.5)
    ax.set(xlabel=r"$\alpha$", ylabel=r"$\gamma_s$ (eq. 24)", title=f"$k_s={k_s3}$, $D=${r.D[-1]:.0e}")
    ax.legend(fontsize=8)
fig.suptitle(r"Figure 4: alignment with each zero-error solution; erf, $k_t=1$, $P=6$, $S=I$, "
             r"$\eta=0.5$, $T=1$, $\sigma=0$", fontsize=10)
plt.tight_layout()
plt.show()

# %% [markdown] nbgrader={"grade": false, "grade_id": "exD_plateau_statement", "locked": true, "schema_version": 3, "solution": false, "task": false}
# **Question (manually graded; answer in the cell below).** Near the $\rho$-symmetric plateau,
# write the state as
# $y=y_{\rm sym}+\epsilon\,v$ with $v$ antisymmetric under $\rho$. Explain why
# $\alpha_{\rm spec}\approx a+b\ln D$ and express $b$ through the growth rate $\kappa$ of
# $\epsilon$. Why is there no such term for $k_s=k_t$?

# %% [markdown] nbgrader={"grade": true, "grade_id": "exD_plateau_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# **Solution.** Linearise $\dot y=F(y)$ around the plateau state $y^\ast\in\operatorname{Fix}(\rho)$. Since
# $F(\rho y)=\rho F(y)$ (eq. 98), the Jacobian commutes with $\rho$ and splits into the
# symmetric and the antisymmetric subspaces. The symmetric part is attracting (that is why
# $y^\ast$ is a plateau), the antisymmetric part has an unstable direction with rate $\kappa>0$.
# A random start has $\epsilon(0)=O(D^{-1/2})$ (the fluctuations of eq. 19), and
# $\epsilon(\alpha)\approx\epsilon(0)e^{\kappa\alpha}$ reaches $O(1)$ at
# $\alpha\approx\alpha_0+\kappa^{-1}\ln(1/\epsilon(0))=\alpha_0+\frac{1}{2\kappa}\ln D+O(1)$, after which the
# student falls to one of the mirror solutions in $O(1)$ time. So $b=1/(2\kappa)$, and the
# time spent *reaching* the plateau and *leaving* it once $\epsilon=O(1)$ both go into $a$.
# With $k_s=k_t$ the only zero-error solution is $\rho$-symmetric, so the symmetric dynamics
# reaches it directly and nothing has to grow from $D^{-1/2}$: $b=0$. Because the argument only
# uses the symmetry, the same holds for $c>0$ (App. F) and mirrors the permutation-symmetric
# plateaus of committee machines.

# %% [markdown]
# Figure 4 shows the mechanism. Early on all alignments grow together (the uniform drift of
# eq. 104). Mirror-image solutions ($s$ and $k_s-k_t-s$) then keep *exactly* equal
# alignments for a long time: the state is $\rho$-symmetric up to the $10^{-6}$ asymmetry of
# the random start at $D=10^{12}$. The symmetric dynamics even moves on — for $k_s=3$ the middle
# solution $s=1$ (itself $\rho$-symmetric) is abandoned and the pair $s=0,2$ grows together
# — but it cannot choose between mirror images. Only when the exponentially growing
# asymmetry becomes visible does one member of the pair go to 1 and the other to 0: that
# moment is $\alpha_{\rm spec}$, and it is the part that grows like $\ln D$.
#
# ### 4.1 Other teachers and correlated positions (Figure 7)
#
# Result 3.3 is a statement about $k_s$ against $k_t$, and the mechanism only uses the
# reflection symmetry, which survives input correlations of the form of eq. 3. Figure 7
# repeats the measurement of Figure 3 in two further settings: (a) a teacher of kernel size
# $k_t=2$ with students $k_s=2,3,4$ (independent positions, $\eta=0.5$), and (b) the teacher of
# Figure 3, $k_t=1$, with correlated positions, $c=0.5$ (students $k_s=1,2,3$, $\eta=0.2$).

# %% tags=["demo"]
# Figure 7: alpha_spec against D as in Figure 3. Paper: g = erf, P = 6, T = 1, sigma = 0,
# gamma_th = 0.99; (a) k_t = 2, c = 0, eta = 0.5; (b) k_t = 1, c = 0.5, eta = 0.2.
FIG7 = {"a": dict(P=6, k_t=2, eta=0.5, c=0.0, rng=7, dtau=pick(0.5, 1.0)),
        "b": dict(P=6, k_t=1, eta=0.2, c=0.5, rng=7, dtau=pick(0.25, 0.5))}  # c = 0.5 is stiffer: a smaller step
Ds7 = np.array(pick([1e2, 1e4, 1e6, 1e8, 1e10, 1e12], [1e4, 1e8]))
n_init7 = pick(8, 1)
amax7 = {("a", 2): 150.0, ("a", 3): 800.0, ("a", 4): 1500.0, ("b", 1): 60.0, ("b", 2): 2500.0, ("b", 3): 3500.0}
jobs7 = pick([("a", 2), ("a", 3), ("a", 4), ("b", 1), ("b", 2), ("b", 3)], [("a", 2), ("b", 1)])
runs7 = {"a": {}, "b": {}}
for panel, k in progress(jobs7, desc="Figure 7 (one batch per panel and k_s)"):
    runs7[panel][k] = cl.specialisation_runs(Ds7, k_s=k, n_init=n_init7, alpha_max=amax7[panel, k],
                                             n_ckpt=pick(400, 100), **FIG7[panel])
# BAKED specialisation_fig7_demo (expected values computed on the instructor's side: checks/grading/baked_values/cnn_lcn_2_specialisation.json)
fig7 = pick(_ref_fig7["full"], _ref_fig7["quick"])
analysis7 = demo_result(lambda: {panel: specialisation_analysis(runs7[panel], alpha_spec_from_trajectory, fit_log_d)
                                 for panel in "ab"}, fig7["analysis"], "alpha_spec_from_trajectory and fit_log_d",
                        rtol=1e-9)
fig, axes = plt.subplots(1, 2, figsize=(12, 4.3))
for panel, ax, title in (("a", axes[0], "(a) $k_t=2$, $c=0$, $\\eta=0.5$"),
                         ("b", axes[1], "(b) $k_t=1$, $c=0.5$, $\\eta=0.2$")):
    spec_plot(ax, runs7[panel], analysis7[panel], title)
fig.suptitle("Figure 7: specialisation time of the CNN against $D$ (as Figure 3); erf, $P=6$, $T=1$, "
             "$\\sigma=0$", fontsize=10)
plt.tight_layout()
plt.show()
for panel in "ab":
    print(f"panel ({panel}):")
    print_fits(analysis7[panel], fig7["spread"][panel], n_init7)
quick_note("D = 1e4 and 1e8, one initialisation each, only the students with k_s = k_t")

# %% [markdown]
# Both panels repeat Figure 3. (a) The student that matches the teacher, $k_s=k_t=2$,
# specialises after $\alpha_{\rm spec}\approx$ 60.49 for every $D\ge10^{10}$ (every initialisation;
# at smaller $D$ the fluctuations of the start move it, as in Figure 3); the larger kernels
# $k_s=3,4$ sit on a plateau whose length grows like $\ln D$ (for $k_s=3$ the slope is
# 10.03 per unit of $\ln D$, with a standard error of 0.77). (b) With correlated positions the
# matched student $k_s=k_t=1$ is again $D$-independent, $\alpha_{\rm spec}\approx$ 9.76 for every
# $D\ge10^8$, and $k_s=2$ grows like $\ln D$ with slope 42.73 (standard error 2.42). So
# Result 3.3 holds beyond the setting it was stated in: $O(D)$ samples when the kernel sizes
# match, $O(D\log D)$ when the student's kernel is larger. The times in (b) are longer, both
# because $\eta$ is smaller (up to the $\eta^2$ term, eqs 17–18 depend on $\alpha$ only through
# $\eta\alpha$) and because the correlations change the escape rate $\kappa$ of the plateau,
# hence $b=1/(2\kappa)$; the figure does not separate the two. (Numbers from the full-mode
# run, eight initialisations per $D$.)

# %% tags=["demo"]
print(f"notebook executed in {time.time() - _t_start:.0f} s (quick mode: {QUICK})")
