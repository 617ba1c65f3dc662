# %% [markdown]
# # CNN vs LCN, lesson 1 — the model, its exact ODEs and the factor P
#
# *Training Dynamics, Iliad Intensive 2026.* CPU only; needs numpy, scipy, matplotlib and the
# course library `td_lib` (its module `td_lib.cnn_lcn` is the theory engine this notebook
# uses).
#
# A convolutional network does two things a fully connected one does not: it looks at the
# input through **small windows** (locality) and it uses **the same window weights at every
# position** (weight sharing). Which of the two makes it learn faster, by how much, and can
# it hurt? The assignment `cnn_lcn` works through a teacher–student model in which online SGD
# can be solved exactly in the limit of a large feature dimension, so these questions get
# exact answers:
#
# - **weight sharing** (CNN vs locally connected network, LCN) speeds learning up by exactly
#   the number of positions $P$ when positions are independent (Result 3.2), but spatial
#   correlations erode the advantage, and at a fixed learning rate the CNN even ends with the
#   larger noise floor (Results 4.1, 4.2);
# - **locality** (the kernel size $k_s$ of the student against the teacher's $k_t$) decides
#   whether the teacher is found after $O(D)$ or $O(D\log D)$ samples (Result 3.3).
#
# **Three lessons, in this order.** Sections and figures are numbered across the assignment,
# figures with the paper's numbers.
#
# 1. **This notebook** (`cnn_lcn_1_exact_odes`): the readings, the setup (§1, with the
#    schematic of Figure 1; Exercises A and B), the exact ODEs (§2, Figure 2) and weight
#    sharing for independent positions (§3, Exercise C).
# 2. `cnn_lcn_2_specialisation`: locality and the time to specialise (§4, Figures 3, 4 and 7;
#    Exercise D).
# 3. `cnn_lcn_3_noise_floor_phase`: correlated positions — early times, the noise floor and the
#    phase diagram (§5, Figures 5, 6, 8 and 9; Exercises E and F) — the ReLU checks of the
#    appendix (§6, Figures 10 and 11) and the limitations (§7).
#
# Every figure of the paper is regenerated, Figure 1 drawn and the others by your own run,
# at sizes that fit a laptop in a few minutes (the paper's own figures use larger sizes and
# more runs).
#
# **Quick mode.** When the notebook is validated or graded (and whenever the environment
# variable `TD_QUICK=1` is set) the demonstration cells run with fewer samples and shorter
# horizons, so the numbers they print differ from the ones the text quotes, which are those of
# the full run; each such cell says so when it runs in quick mode. Graded computations are the
# same in both modes.

# %% [markdown]
# ## Readings
#
# **The paper of this assignment.** F. Mori et al., on the exact online-SGD dynamics of
# convolutional vs locally connected students (code:
# <https://github.com/francescomori/CNN_theory>). A convolutional teacher with kernel size
# $k_t$ on $P$ positions of $D$ features each; CNN and LCN students with kernel size
# $k_s\ge k_t$; closed ODEs for the order parameters as $D\to\infty$; an exact $P$-fold
# speed-up of the CNN for independent positions; $O(D)$ vs $O(D\log D)$ sample complexity
# depending on $k_s=k_t$ or $k_s>k_t$; and a phase diagram of which student wins when
# positions are correlated and the learning rate is tuned to the training budget. This
# lesson follows its setup, the ODEs (Result 3.1) and the factor $P$ (Result 3.2).
#
# **Where the method comes from.**
# - D. Saad and S. A. Solla, *On-line learning in soft committee machines*, Phys. Rev. E 52,
#   4225 (1995): the order-parameter ODEs of two-layer networks, the erf integrals used below,
#   and the plateaus caused by the permutation symmetry of hidden units (the ancestor of the
#   $\rho$-symmetric plateau of §4, lesson 2).
# - M. Biehl and H. Schwarze, *Learning by on-line gradient descent*, J. Phys. A 28, 643
#   (1995), and S. Goldt, M. S. Advani, A. M. Saxe, F. Krzakala and L. Zdeborová, *Dynamics of
#   stochastic gradient descent for two-layer neural networks in the teacher–student setup*,
#   NeurIPS 2019 (arXiv:1906.08632): the same ODEs, with a proof of concentration.
#
# **What symmetry buys, elsewhere.** A. Bietti, L. Venturi and J. Bruna, *On the sample
# complexity of learning under geometric stability*, NeurIPS 2021 (arXiv:2106.07148)
# (invariant kernels: sample complexity divided by the size of the group); A. Lahoti, S. Karp,
# E. Winston, A. Singh and Y. Li, *Role of locality and weight sharing in image-based tasks: a
# sample complexity separation between CNNs, LCNs, and FCNs*, ICLR 2024 (arXiv:2403.15707),
# and Waber et al. (online SGD of a convolutional teacher–student model; CNN vs LCN vs FCN on
# patch data, a factor of the number of patches). The paper's Result 3.2 is an *exact
# identity between trajectories*, not a bound. The readings of lessons 2 and 3 follow the
# methods they use (plateaus and locality; noise floors, optimal learning rates and
# early-time expansions).

# %% [markdown]
# ## 1. Setup
#
# **Data.** An input is $x=(x_0,\dots,x_{P-1})$ with $x_p\in\mathbb R^D$: $P$ *positions*
# (think pixels of a one-dimensional periodic image) carrying $D$ *features* each. The input
# is Gaussian with
# $$\mathbb E[x_{p,a}x_{q,b}]=S_{pq}\,\delta_{ab},\qquad S_{pq}=\begin{cases}1&p=q\\ c&p\neq q\end{cases},\qquad c\in[0,1)\qquad\text{(eqs 2–3)},$$
# so every pair of distinct positions has the same correlation $c$; $c=0$ is $S=I$.
#
# **Teacher (eqs 4–7).** With $(q)_P=q\bmod P$ and a kernel $w_0,\dots,w_{k_t-1}\in\mathbb R^D$,
# $$y=f^\star(x)+\sigma\xi,\qquad f^\star(x)=\sum_{p=0}^{P-1}g(\lambda_p),\qquad
# \lambda_p=\frac1{\sqrt{k_tD}}\sum_{l=0}^{k_t-1}w_l\cdot x_{(p+l)_P},\qquad
# \frac{w_l\cdot w_{l'}}D=T\delta_{ll'},$$
# with $g(z)=\operatorname{erf}(z/\sqrt2)$ and label noise $\xi\sim\mathcal N(0,1)$.
#
# **Students (eqs 8–11)**, kernel size $k_s\ge k_t$:
# $$\hat y_{\rm CNN}=\sum_pg\Big(\tfrac1{\sqrt{k_sD}}\sum_{l<k_s}\hat w_l\cdot x_{(p+l)_P}\Big),\qquad
# \hat y_{\rm LCN}=\sum_pg\Big(\tfrac1{\sqrt{k_sD}}\sum_{l<k_s}\hat w^{(p)}_l\cdot x_{(p+l)_P}\Big).$$
# The CNN shares one kernel across positions; the LCN has its own kernel $\hat w^{(p)}$ at
# each position, i.e. $P$ times as many parameters and the same locality. With $k_s=P$ the
# LCN is the soft committee machine of Saad and Solla.
#
# **Symmetry.** The cyclic shift $(\tau x)_p=x_{(p+1)_P}$ permutes the teacher's
# preactivations, $\lambda_p(\tau x)=\lambda_{(p+1)_P}(x)$, so $f^\star(\tau x)=f^\star(x)$;
# the same holds for the CNN, and $S$ of eq. 3 makes the input law shift-invariant too. The
# LCN is shift-invariant only on the subspace $\hat w^{(p)}=\hat w$ of shared weights — which
# it has to find by itself.
#
# **Training (eqs 12–14).** Online SGD on $\ell=\frac12(y-\hat y)^2$, one fresh sample per
# step, $\theta^{t+1}=\theta^t-\eta\nabla_\theta\ell$, all student weights initialised i.i.d.
# $\mathcal N(0,1)$; performance is the generalisation error against the clean teacher,
# $\varepsilon_g=\mathbb E_x[(f^\star(x)-\hat y(x))^2]$. For the CNN the gradient is
# $$\Delta\hat w_l=\frac{\eta\,\delta}{\sqrt{k_sD}}\sum_{p}g'(\hat\lambda_p)\,x_{(p+l)_P},\qquad \delta=y-\hat y\qquad\text{(eq. 36)},$$
# a sum over positions, because the shared kernel is used at every one of them.
#
# **Figure 1** draws the three networks at the paper's sizes; the cell after it builds the
# model with `td_lib.cnn_lcn` and checks the symmetry numerically.

# %%
import time

import numpy as np
from scipy.special import erf

from td_lib import cnn_lcn as cl
from td_lib.core.runtime import QUICK, pick, progress, quick_note

_t_start = time.time()

# %% tags=["demo"]
# Figure 1: teacher, CNN and LCN students at the paper's sizes P = 4, k_t = 2, k_s = 3.
import matplotlib.pyplot as plt

from td_lib.cnn_lcn.plots import architecture_schematic

architecture_schematic(P=4, k_s=3, k_t=2)
plt.show()

# %% [markdown]
# Each line is one weight vector of $\mathbb R^D$ acting on one input position: the teacher's
# and the CNN's colours repeat from position to position (one kernel, used $P$ times), the
# LCN's do not ($P$ kernels, one per position). The dashed lines are the windows that wrap
# around the periodic boundary, $x_{(p+l)_P}$ with $p+l\ge P$.

# %% tags=["demo"]
# A small instance of the model (eqs 1-11), built from explicit weights, and its symmetry.
rng = np.random.default_rng(0)
P, k_t, k_s, D, T, c = 4, 2, 3, 200, 1.0, 0.5
S = cl.input_covariance(P, c)
x = np.einsum("pq,nqd->npd", np.linalg.cholesky(S), rng.standard_normal((5, P, D)))  # eq. 2: (5, P, D)
w = np.linalg.qr(rng.standard_normal((D, k_t)))[0].T * np.sqrt(T * D)  # teacher, eq. 7 exact
w_cnn = rng.standard_normal((k_s, D))
w_lcn = rng.standard_normal((P, k_s, D))

def outputs(x):
    """f*(x), y_CNN(x), y_LCN(x) for a batch x of shape (n, P, D) (eqs 5-11)."""
    win = lambda k: (np.arange(P)[:, None] + np.arange(k)[None, :]) % P  # (p, l) -> (p+l)_P
    g = lambda z: erf(z / np.sqrt(2))
    lam = np.einsum("npld,ld->np", x[:, win(k_t)], w) / np.sqrt(k_t * D)
    lam_cnn = np.einsum("npld,ld->np", x[:, win(k_s)], w_cnn) / np.sqrt(k_s * D)
    lam_lcn = np.einsum("npld,pld->np", x[:, win(k_s)], w_lcn) / np.sqrt(k_s * D)
    return g(lam).sum(1), g(lam_cnn).sum(1), g(lam_lcn).sum(1)

shifted = np.roll(x, -1, axis=1)  # (tau x)_p = x_{(p+1)_P}
for name, a, b in zip(["teacher", "CNN", "LCN"], outputs(x), outputs(shifted)):
    print(f"{name:8s} max |f(tau x) - f(x)| = {np.abs(a - b).max():.2e}")
print("empirical position covariance of x (should be close to S):")
print(np.einsum("npd,nqd->pq", x, x).round(0) / (5 * D))

# %% [markdown]
# ### Exercise A — the erf integrals, and one the library does not have
#
# Everything below reduces to Gaussian averages of $g$ and $g'$ over jointly Gaussian
# preactivations. For a centred Gaussian pair $(u_1,u_2)$ with covariance
# $C=\begin{pmatrix}c_{11}&c_{12}\\c_{12}&c_{22}\end{pmatrix}$ the paper uses
# $$I_2(C)=\mathbb E[g(u_1)g(u_2)]=\frac2\pi\arcsin\frac{c_{12}}{\sqrt{(1+c_{11})(1+c_{22})}},\qquad
# J_2(C)=\mathbb E[g'(u_1)g'(u_2)]=\frac2\pi\big[(1+c_{11})(1+c_{22})-c_{12}^2\big]^{-1/2}\qquad\text{(eqs 44–45)}.$$
#
# 1. Derive $J_2$ for $g(z)=\operatorname{erf}(z/\sqrt2)$.
# 2. Derive $I_2$.
# 3. Derive the closed form of the next integral of the family, which the paper does not need
#    and the course's library does not contain,
#    $$K_2(C)=\mathbb E[g''(u_1)\,g''(u_2)],$$
#    and implement it in the code cell as `k2_erf(C)`, for a single $2\times2$ covariance or a
#    batch of shape `(..., 2, 2)`, returning an array of shape `(...)` (a 0-d array for a single
#    matrix). $C$ may be any covariance matrix, singular ones included (e.g. $u_1=u_2$).
#    The cell after the tests compares it with Monte Carlo.
#
# Parts 1 and 2 are graded by hand (eqs 44–45 are printed, so only the derivation counts).
# Part 3 is graded by the tests: they compare `k2_erf` with the exact $K_2$ to a relative
# $10^{-12}$ on random, singular and badly scaled covariances (so a Monte Carlo or
# finite-difference estimate does not pass), and check batching. The library's $J_2$
# (`cl.J2`, which the ODEs of all three lessons use) is switched off while your work is
# graded: if `k2_erf` needs $J_2$, compute it in your own code.
#
# *Hint.* For 1: $g'(z)=\sqrt{2/\pi}\,e^{-z^2/2}$, so $J_2$ is $\frac2\pi\,\mathbb E[e^{-u^\top u/2}]$, a
# Gaussian integral. For 2: $\operatorname{erf}(z/\sqrt2)=2\Phi(z)-1=\mathbb E_{z'}[\operatorname{sign}(z-z')]$ with
# $z'\sim\mathcal N(0,1)$ independent, and for a centred Gaussian pair with correlation $r$,
# $\mathbb E[\operatorname{sign}a\operatorname{sign}b]=\frac2\pi\arcsin r$. For 3, two routes: *Price's theorem*
# (for a centred Gaussian pair and smooth $f_1,f_2$ of moderate growth,
# $\partial_{c_{12}}\mathbb E[f_1(u_1)f_2(u_2)]=\mathbb E[f_1'(u_1)f_2'(u_2)]$ at fixed $c_{11},c_{22}$), or
# $g''(z)=-z\,g'(z)$ and the Gaussian integral of part 1 with $u_1u_2$ inserted.

# %% [markdown] nbgrader={"grade": true, "grade_id": "exA_erf_integrals_derivation", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# **Solution.**
#
# 1. With $g'(z)=\sqrt{2/\pi}\,e^{-z^2/2}$,
# $$J_2=\frac2\pi\int\frac{e^{-\frac12u^\top C^{-1}u}}{2\pi\sqrt{\det C}}\,e^{-\frac12u^\top u}\,du
# =\frac2\pi\,\frac{\det(C^{-1}+I)^{-1/2}}{\sqrt{\det C}}=\frac2\pi\det(I+C)^{-1/2},$$
# and $\det(I+C)=(1+c_{11})(1+c_{22})-c_{12}^2$. (For a singular $C$ take the limit; the
# result is continuous.)
#
# 2. Write $g(u)=2\Phi(u)-1=\mathbb P(z'<u)-\mathbb P(z'>u)=\mathbb E_{z'}[\operatorname{sign}(u-z')]$
# with $z'\sim\mathcal N(0,1)$. With two independent $z_1',z_2'$,
# $I_2=\mathbb E[\operatorname{sign}(u_1-z_1')\operatorname{sign}(u_2-z_2')]$, and
# $(a,b)=(u_1-z_1',u_2-z_2')$ is a centred Gaussian pair with variances $1+c_{11}$,
# $1+c_{22}$ and covariance $c_{12}$. For such a pair with correlation $r$, the signs agree
# with probability $1-\theta/\pi$ where $\cos\theta=r$ (the angle between the two directions
# in the plane of a rotation-invariant Gaussian), so
# $\mathbb E[\operatorname{sign}a\operatorname{sign}b]=1-2\theta/\pi=\frac2\pi\arcsin r$, with
# $r=c_{12}/\sqrt{(1+c_{11})(1+c_{22})}$.
#
# As checks: $I_2$ at $c_{11}=c_{22}=c_{12}=1$ gives $\frac2\pi\arcsin\frac12=\frac13$, the
# value used for the student's self-term in eq. 28; and differentiating eq. 44 in $c_{12}$,
# $$\frac{\partial I_2}{\partial c_{12}}=\frac2\pi\,\frac{1}{\sqrt{(1+c_{11})(1+c_{22})-c_{12}^2}}=J_2,$$
# as Price's theorem requires ($\partial_{c_{12}}\mathbb E[g(u_1)g(u_2)]=\mathbb E[g'(u_1)g'(u_2)]$).
#
# 3. (Graded by the tests of `k2_erf`.) By Price's theorem once more,
# $$K_2=\frac{\partial J_2}{\partial c_{12}}=\frac2\pi\,\frac{c_{12}}{\big[(1+c_{11})(1+c_{22})-c_{12}^2\big]^{3/2}}.$$
# Directly: $g''(u_1)g''(u_2)=u_1u_2\,g'(u_1)g'(u_2)$, and the Gaussian integral of part 1 with
# $u_1u_2$ inserted is $\frac2\pi\det(I+C)^{-1/2}\,[(C^{-1}+I)^{-1}]_{12}$, with
# $(C^{-1}+I)^{-1}=C(I+C)^{-1}=I-(I+C)^{-1}$, whose off-diagonal entry is $c_{12}/\det(I+C)$.
# $K_2$ is odd in $c_{12}$ ($g''$ is odd) and vanishes for independent fields.

# %% nbgrader={"grade": false, "grade_id": "exA_j2_erf", "locked": false, "schema_version": 3, "solution": true, "task": false}
def k2_erf(C):
    """E[g''(u1) g''(u2)] for g(z) = erf(z / sqrt 2) and (u1, u2) ~ N(0, C) (part 3).

    Parameters
    ----------
    C : array of shape (2, 2) or (..., 2, 2)
        Covariance matrices of the pair (u1, u2) (singular ones allowed).

    Returns
    -------
    numpy.ndarray of shape C.shape[:-2] (a 0-d array for a single matrix).
    """
    ### BEGIN SOLUTION
    C = np.asarray(C, dtype=float)
    det = (1 + C[..., 0, 0]) * (1 + C[..., 1, 1]) - C[..., 0, 1] ** 2
    return 2 / np.pi * C[..., 0, 1] / det ** 1.5
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "test_exA_j2_erf", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Visible tests: independent fields, batching, the symmetries of K2, two exact values, and a
# Monte Carlo average within 5 standard errors.
import numpy as np
from td_lib.own_work import own_work, passed

_k2 = own_work(k2_erf, "exA_j2_erf")
# BAKED k2_erf_visible (expected values computed on the instructor's side: checks/grading/baked_values/cnn_lcn_1_exact_odes.json)
_v = np.asarray(_k2(np.eye(2)), dtype=float)
assert _v.shape == (), f"k2_erf of one 2x2 matrix should return a 0-d array (shape ()), got shape {_v.shape}"
assert abs(float(_v)) < 1e-12, (
    f"C = I: u1 and u2 are independent and E[g''(u)] = 0 (g'' is odd), so K2 = 0; your k2_erf gives {float(_v):.6g}.")
_rng = np.random.default_rng(1)
_A = _rng.standard_normal((5, 3, 2, 2))
_Cs = _A @ np.swapaxes(_A, -1, -2)
_out = np.asarray(_k2(_Cs), dtype=float)
assert _out.shape == (5, 3), f"k2_erf on a batch of shape (5, 3, 2, 2) should return shape (5, 3), got {_out.shape}"
for _k, _C in enumerate(_Cs.reshape(-1, 2, 2)[:6]):
    _mine = float(_k2(_C))
    assert abs(_mine - _out.reshape(-1)[_k]) < 1e-12 * max(1.0, abs(_mine)), (
        f"k2_erf of the batch and of its element {_k} disagree ({_out.reshape(-1)[_k]:.10g} vs {_mine:.10g}): "
        "each batch entry must be computed from its own matrix.")
    _swap = float(_k2(_C[::-1, ::-1]))  # (u1, u2) -> (u2, u1)
    assert abs(_swap - _mine) < 1e-12 * max(1.0, abs(_mine)), (
        f"swapping u1 and u2 (c11 <-> c22) cannot change E[g''(u1) g''(u2)]; at C = {_C.round(3).tolist()} "
        f"your k2_erf gives {_mine:.10g} and {_swap:.10g}.")
    _flip = float(_k2(_C * np.array([[1, -1], [-1, 1]])))  # (u1, u2) -> (u1, -u2)
    assert abs(_flip + _mine) < 1e-12 * max(1.0, abs(_mine)), (
        f"u2 -> -u2 flips the sign of c12 and of g''(u2) (g'' is odd), so K2 must change sign; at "
        f"C = {_C.round(3).tolist()} your k2_erf gives {_mine:.10g}, and {_flip:.10g} with c12 -> -c12.")
for _C, _ref_v in zip(_visible_C, _visible_ref):
    _C = np.asarray(_C, dtype=float)
    _got_v = float(np.asarray(_k2(_C), dtype=float))
    assert np.isfinite(_got_v) and abs(_got_v - _ref_v) <= 1e-12 * abs(_ref_v), (
        f"C = {_C.tolist()}: the exact K2 is {_ref_v:.12f}, your k2_erf gives {_got_v:.12f}.")
_C = np.array([[2.0, 1.3], [1.3, 1.0]])
_u = np.random.default_rng(11).multivariate_normal([0, 0], _C, size=400_000)
_g2 = -_u * np.sqrt(2 / np.pi) * np.exp(-_u ** 2 / 2)  # g''(u) = -u g'(u)
_s = _g2[:, 0] * _g2[:, 1]
_se = _s.std() / np.sqrt(len(_s))
_got_v = float(_k2(_C))
assert abs(_s.mean() - _got_v) < 5 * _se, (
    f"C = {_C.tolist()}: a Monte Carlo average of g''(u1) g''(u2) over 400000 samples gives "
    f"{_s.mean():.5f} ± {_se:.5f}, your k2_erf gives {_got_v:.5f} (more than 5 standard errors away).")
passed("k2_erf")
### BEGIN HIDDEN TESTS
# K2 at 200 random covariances (drawn below) and at four singular or badly scaled ones.
# BAKED k2_erf_hidden (expected values computed on the instructor's side: checks/grading/baked_values/cnn_lcn_1_exact_odes.json)
_ref = np.asarray(_ref)
_A = np.random.default_rng(7).standard_normal((200, 2, 2)) * 2
_Cs = _A @ np.swapaxes(_A, -1, -2)
_got = np.asarray(_k2(_Cs), dtype=float)
assert _got.shape == _ref.shape, f"batch of shape (200, 2, 2): expected an output of shape (200,), got {_got.shape}"
_k = int(np.argmax(np.abs(_got - _ref) / np.abs(_ref)))
assert np.all(np.isfinite(_got)) and np.allclose(_got, _ref, rtol=1e-12, atol=0), (
    f"200 random covariances: at C = {_Cs[_k].round(4).tolist()} the exact K2 is {_ref[_k]:.12g}, "
    f"your k2_erf gives {_got[_k]:.12g}.")
for _C, _ref_v in zip(_special_C, _ref_special):
    _C = np.asarray(_C, dtype=float)
    _got_v = float(np.asarray(_k2(_C), dtype=float))
    assert np.isfinite(_got_v) and abs(_got_v - _ref_v) <= 1e-12 * abs(_ref_v), (
        f"C = {_C.tolist()} (singular or badly scaled, still a valid covariance): the exact K2 is "
        f"{_ref_v:.12g}, your k2_erf gives {_got_v:.12g}.")
_got_v = float(np.asarray(_k2(np.array([[4.0, 0.0], [0.0, 0.0]])), dtype=float))
assert _got_v == 0.0 or abs(_got_v) < 1e-15, (
    f"C = [[4, 0], [0, 0]] (u2 = 0 exactly, so g''(u2) = 0): K2 = 0, your k2_erf gives {_got_v:.6g}.")
### END HIDDEN TESTS

# %% tags=["demo"]
# Monte Carlo check of the three integrals at a few covariances (I2 and J2 from the engine, K2 yours).
from td_lib.own_work import demo_result

_Cs = np.array([[[1.0, 0.5], [0.5, 1.0]], [[2.0, -1.2], [-1.2, 1.5]], [[0.3, 0.1], [0.1, 4.0]]])
# k2_erf of the course's solution at these three matrices
# BAKED k2_erf_demo (expected values computed on the instructor's side: checks/grading/baked_values/cnn_lcn_1_exact_odes.json)
k2_vals = demo_result(lambda: [float(k2_erf(_C)) for _C in _Cs], _ref_k2, "Exercise A's k2_erf", rtol=1e-9)
n_mc = pick(400_000, 50_000)
quick_note(f"{n_mc} Monte Carlo samples per integral instead of 400000")
for _C, k2_v in zip(_Cs, k2_vals):
    mc_i2, se_i2 = cl.integrals.monte_carlo("I2", _C, n=n_mc, rng=1)
    mc_j2, se_j2 = cl.integrals.monte_carlo("J2", _C, n=n_mc, rng=2)
    _u = np.random.default_rng(3).multivariate_normal([0, 0], _C, size=n_mc)
    _s = np.prod(-_u * np.sqrt(2 / np.pi) * np.exp(-_u ** 2 / 2), axis=1)  # g''(u1) g''(u2)
    print(f"C = {_C.tolist()}:  I2 {float(cl.I2(_C)):.5f} vs MC {float(mc_i2):.5f} ± {float(se_i2):.5f};"
          f"  J2 {float(cl.J2(_C)):.5f} vs MC {float(mc_j2):.5f} ± {float(se_j2):.5f};"
          f"  K2 {float(k2_v):.5f} vs MC {_s.mean():.5f} ± {_s.std() / np.sqrt(n_mc):.5f}")

# %% [markdown]
# ### Exercise B — one online SGD step of an LCN with a trained readout
#
# The paper's students have their second-layer weights fixed to 1 (eqs 10–11), and their
# online SGD step (eq. 13) is then
# $$\Delta\hat w^{(p)}_l=\frac{\eta\,\delta}{\sqrt{k_sD}}\,g'(\hat\lambda_p)\,x_{(p+l)_P},\qquad\delta=y-\hat y\qquad\text{(eq. 68)}.$$
# Here you write the step of an LCN whose **readout is trained too**, a case that neither the
# paper nor the course's SGD simulator covers:
# $$\hat y=\sum_{p=0}^{P-1}a_p\,g(\hat\lambda_p),\qquad \hat\lambda_p=\frac1{\sqrt{k_sD}}\sum_{l<k_s}\hat w^{(p)}_l\cdot x_{(p+l)_P},\qquad
# g(z)=\operatorname{erf}(z/\sqrt2),$$
# with one SGD step $\theta\leftarrow\theta-\eta\nabla_\theta\ell$ on $\ell=\frac12(y-\hat y)^2$, for all
# parameters $\theta=(\hat w,a)$ at once and with the same learning rate $\eta$: both updates
# use the gradient at the current $(\hat w,a)$.
#
# Implement `lcn_sgd_step(w_hat, a, x, y, eta)`. Shapes: `w_hat` is `(P, k_s, D)`
# (`w_hat[p, l]` $=\hat w^{(p)}_l$), `a` is `(P,)`, `x` is `(P, D)`, `y` and `eta` floats.
# Return the pair `(w_new, a_new)` of new arrays (do not modify the arguments). Differentiate
# the loss yourself; with $a_p=1$ for all $p$ your $\hat w$ update must be eq. 68. The tests
# compare your step with exact derivatives of the loss on fixed inputs (random weights,
# readouts — some of them zero or negative — and labels, and labels of a teacher with label
# noise), for $P$ from 1 to 6, $k_s$ from 1 to $P$ and learning rates from 0.3 to 2.
#
# *Hint.* Build the index array `idx[p, l] = (p + l) % P` once; `x[idx]` then has shape
# `(P, k_s, D)` and holds $x_{(p+l)_P}$.

# %% nbgrader={"grade": false, "grade_id": "exB_lcn_sgd_step", "locked": false, "schema_version": 3, "solution": true, "task": false}
def lcn_sgd_step(w_hat, a, x, y, eta):
    """One online SGD step of the LCN student with a trained readout, g = erf(z / sqrt 2).

    Parameters
    ----------
    w_hat : array (P, k_s, D), the per-position kernels w_hat[p, l] = w_hat^{(p)}_l.
    a : array (P,), the readout weights a_p.
    x : array (P, D), one input.  y : float, its label.  eta : float, learning rate.

    Returns
    -------
    (w_new, a_new) : numpy arrays of shapes (P, k_s, D) and (P,), the parameters after one step
    on the loss (y - sum_p a_p g(lambda_hat_p))^2 / 2.
    """
    ### BEGIN SOLUTION
    w_hat = np.asarray(w_hat, dtype=float)
    a = np.asarray(a, dtype=float)
    x = np.asarray(x, dtype=float)
    P, k_s, D = w_hat.shape
    idx = (np.arange(P)[:, None] + np.arange(k_s)[None, :]) % P  # (p, l) -> (p + l) mod P
    xg = x[idx]  # (P, k_s, D): x_{(p+l)_P}
    lam_hat = np.einsum("pld,pld->p", w_hat, xg) / np.sqrt(k_s * D)
    g = erf(lam_hat / np.sqrt(2))
    delta = y - a @ g
    gprime = np.sqrt(2 / np.pi) * np.exp(-lam_hat ** 2 / 2)
    w_new = w_hat + eta * delta / np.sqrt(k_s * D) * (a * gprime)[:, None, None] * xg
    return w_new, a + eta * delta * g
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "test_exB_lcn_sgd_step", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Visible tests: shapes, no in-place change, linearity in eta, and the step against numerical
# derivatives of the loss l = (y - y_hat)^2 / 2, first with a = 1 (the paper's LCN), then with
# random readouts.
import numpy as np
from td_lib.own_work import own_work, passed

_step = own_work(lcn_sgd_step, "exB_lcn_sgd_step")
# For each case below, the rate of change of the loss l = (y - y_hat(x))^2 / 2 with a = 1 along
# each of its three random directions v of w_hat (central differences, h = 1e-5)
# BAKED lcn_loss_slopes_visible (expected values computed on the instructor's side: checks/grading/baked_values/cnn_lcn_1_exact_odes.json)
# For each case below, the rate of change of the loss with random readouts a along each of its
# three random directions (v, u) of (w_hat, a) (central differences, h = 1e-5)
# BAKED lcn_readout_slopes_visible (expected values computed on the instructor's side: checks/grading/baked_values/cnn_lcn_1_exact_odes.json)


def _run(w, a, x, y, eta, case):
    """The student's step as arrays, after the checks that do not need a reference."""
    w0, a0 = w.copy(), a.copy()
    out = _step(w, a, x, y, eta)
    assert isinstance(out, (tuple, list)) and len(out) == 2, (
        f"{case}: lcn_sgd_step should return the pair (w_new, a_new), got {type(out).__name__}")
    new_w, new_a = (np.asarray(o, dtype=float) for o in out)
    assert np.array_equal(w, w0) and np.array_equal(a, a0), (
        "lcn_sgd_step must not modify its arguments w_hat and a in place (return new arrays)")
    assert new_w.shape == w.shape and new_a.shape == a.shape, (
        f"{case}: expected outputs of shapes {w.shape} and {a.shape}, got {new_w.shape} and {new_a.shape}")
    return new_w, new_a


_rng = np.random.default_rng(3)
for _k, (_P, _ks, _D, _eta) in enumerate([(4, 3, 20, 0.5), (5, 2, 12, 0.8), (3, 3, 10, 1.3)]):
    _case = f"a = 1, (P, k_s, D) = {(_P, _ks, _D)}, eta = {_eta}"
    _w = _rng.standard_normal((_P, _ks, _D))
    _x = _rng.standard_normal((_P, _D))
    _a = np.ones(_P)
    _nw, _na = _run(_w, _a, _x, 0.7, _eta, _case)
    _hw, _ha = _run(_w, _a, _x, 0.7, _eta / 2, _case)
    _lin = max(np.abs((_nw - _w) - 2 * (_hw - _w)).max(), np.abs((_na - _a) - 2 * (_ha - _a)).max())
    assert _lin < 1e-12, (
        f"{_case}: halving eta should halve the updates w_new - w_hat and a_new - a, "
        f"but they differ from that by {_lin:.2e}.")
    # Directional derivatives: (l(w + h v) - l(w - h v)) / 2h = grad l . v = -(w_new - w_hat) . v / eta.
    for _fd in _slopes[_k]:
        _vdir = _rng.standard_normal(_w.shape)
        _mine = -np.sum((_nw - _w) * _vdir) / _eta
        assert abs(_fd - _mine) < 1e-7 * (1 + abs(_fd)), (
            f"{_case}: along a random direction v of w_hat the loss changes at rate {_fd:.8f} "
            f"(central difference), but your update gives -(w_new - w_hat).v / eta = {_mine:.8f}. "
            "With a = 1 the w_hat update must be minus eta times the gradient of (y - y_hat)^2 / 2.")
_rng = np.random.default_rng(5)
for _k, (_P, _ks, _D, _eta) in enumerate([(4, 3, 20, 0.5), (5, 2, 12, 0.8), (3, 1, 10, 1.3)]):
    _case = f"random a, (P, k_s, D) = {(_P, _ks, _D)}, eta = {_eta}"
    _w = _rng.standard_normal((_P, _ks, _D))
    _a = _rng.standard_normal(_P)
    _x = _rng.standard_normal((_P, _D))
    _nw, _na = _run(_w, _a, _x, -0.4, _eta, _case)
    for _fd in _readout_slopes[_k]:
        _vdir, _udir = _rng.standard_normal(_w.shape), _rng.standard_normal(_P)
        _mine_w = -np.sum((_nw - _w) * _vdir) / _eta
        _mine_a = -np.sum((_na - _a) * _udir) / _eta
        assert abs(_fd[0] - _mine_w) < 1e-7 * (1 + abs(_fd[0])), (
            f"{_case}: along a random direction v of w_hat the loss changes at rate {_fd[0]:.8f}, but "
            f"your w_hat update gives -(w_new - w_hat).v / eta = {_mine_w:.8f}. Differentiate y_hat, "
            "readout included, with respect to w_hat.")
        assert abs(_fd[1] - _mine_a) < 1e-7 * (1 + abs(_fd[1])), (
            f"{_case}: along a random direction u of a the loss changes at rate {_fd[1]:.8f}, but "
            f"your a update gives -(a_new - a).u / eta = {_mine_a:.8f}. The a update must be minus eta "
            "times the gradient of (y - y_hat)^2 / 2 with respect to a, at the current parameters.")
passed("lcn_sgd_step")
### BEGIN HIDDEN TESTS
from scipy.special import erf


def _complex_step(w_hat, a, x, y, eta, h=1e-30):
    """(w_hat, a) - eta grad l, every component of grad l from complex-step differentiation of the
    loss (Im l(theta + i h e) / h: exact to rounding, no step-size error)."""
    P, k_s, D = w_hat.shape
    win = x[(np.arange(P)[:, None] + np.arange(k_s)[None, :]) % P]  # x_{(p+l)_P}
    lam = np.einsum("pld,pld->p", w_hat, win) / np.sqrt(k_s * D)
    g = erf(lam / np.sqrt(2))
    yh = a @ g
    # w_hat[p, l, d] + i h moves lambda_hat_p (and no other preactivation) by i h x_{(p+l)_P, d} / sqrt(k_s D)
    out_w = yh - (a * g)[:, None, None] + a[:, None, None] * erf(
        (lam[:, None, None] + 1j * h * win / np.sqrt(k_s * D)) / np.sqrt(2))
    out_a = yh + 1j * h * g  # a_p + i h
    return (w_hat - eta * np.imag(0.5 * (y - out_w) ** 2) / h,
            a - eta * np.imag(0.5 * (y - out_a) ** 2) / h)


# References first (random weights, readouts and labels; labels of a teacher with label noise),
# then your function.
_rng = np.random.default_rng(123)
_cases = []
for (_P, _ks, _D, _eta, _scale) in [(4, 3, 50, 0.5, 1.0), (5, 2, 40, 0.8, 1.0), (3, 3, 30, 2.0, 1.0),
                                    (1, 1, 7, 0.7, 1.0), (6, 6, 9, 0.3, 1.0), (4, 2, 25, 1.0, 30.0)]:
    _w = _scale * _rng.standard_normal((_P, _ks, _D))
    _a = _rng.normal(0, 1.5, _P)
    _a[0] = 0.0  # a readout at zero: its kernel gets no gradient, the readout does
    _x = _rng.standard_normal((_P, _D))
    _y = float(_rng.normal(0, 2))
    _cases.append(("random label", _P, _ks, _D, _eta, _w, _a, _x, _y, _complex_step(_w, _a, _x, _y, _eta)))
for (_P, _ks, _kt, _D, _eta) in [(6, 4, 1, 80, 0.3), (4, 4, 2, 25, 2.0), (2, 1, 1, 10, 1.0)]:
    _w = 2 * _rng.standard_normal((_P, _ks, _D))
    _a = np.ones(_P) + 0.3 * _rng.standard_normal(_P)
    _wt = _rng.standard_normal((_kt, _D))
    _x = _rng.standard_normal((_P, _D))
    _lam = np.array([sum(_wt[l] @ _x[(p + l) % _P] for l in range(_kt)) for p in range(_P)]) / np.sqrt(_kt * _D)
    _y = float(erf(_lam / np.sqrt(2)).sum() + 0.4)
    _cases.append(("teacher label with noise", _P, _ks, _D, _eta, _w, _a, _x, _y,
                   _complex_step(_w, _a, _x, _y, _eta)))
del _complex_step
for (_src, _P, _ks, _D, _eta, _w, _a, _x, _y, (_rw, _ra)) in _cases:
    _case = f"(P, k_s, D) = {(_P, _ks, _D)}, eta = {_eta}, y = {_y:.3f} ({_src})"
    _nw, _na = _run(_w, _a, _x, _y, _eta, _case)
    _err_w = np.abs(_nw - _rw).max()
    assert np.all(np.isfinite(_nw)) and _err_w < 1e-11 * max(1.0, np.abs(_rw).max()), (
        f"{_case}: your w_hat update differs from an exact gradient step (complex-step derivatives "
        f"of the loss) by up to {_err_w:.2e}.")
    _err_a = np.abs(_na - _ra).max()
    assert np.all(np.isfinite(_na)) and _err_a < 1e-11 * max(1.0, np.abs(_ra).max()), (
        f"{_case}: your readout update differs from an exact gradient step (complex-step derivatives "
        f"of the loss) by up to {_err_a:.2e}.")
### END HIDDEN TESTS

# %% [markdown]
# ## 2. Exact ODEs for the order parameters (Result 3.1)
#
# **Order parameters (eqs 15–16).** The student enters every average only through the overlaps
# $$Q_{ll'}=\frac{\hat w_l\cdot\hat w_{l'}}{k_sD},\qquad R_{lm}=\frac{\hat w_l\cdot w_m}{\sqrt{k_sk_t}\,D}\qquad\text{(CNN)},$$
# $$Q^{(p,q)}_{ll'}=\frac{\hat w^{(p)}_l\cdot\hat w^{(q)}_{l'}}{k_sD},\qquad R^{(p)}_{lm}=\frac{\hat w^{(p)}_l\cdot w_m}{\sqrt{k_sk_t}\,D}\qquad\text{(LCN)}.$$
# (The paper's eq. 15 prints $k_sk_tD$ under $Q$; its appendix, the initial condition
# $Q=I/k_s$ of eq. 19, and the simulation all need $k_sD$, which is what `td_lib` uses.)
#
# **Why the equations close.** Split each preactivation into single-tap fields,
# $\hat\lambda_p=\sum_l\nu^{(l)}_{(p+l)_P}$ with $\nu^{(l)}_r=\hat w_l\cdot x_r/\sqrt{k_sD}$,
# and similarly $\lambda_p=\sum_l\mu^{(l)}_{(p+l)_P}$. These fields are jointly Gaussian with
# $\langle\nu^{(l)}_r\nu^{(l')}_q\rangle=S_{rq}Q_{ll'}$, $\langle\mu\nu\rangle=S\,R$,
# $\langle\mu\mu\rangle=S\,T/k_t$ (eq. 38), so every preactivation covariance is an
# "effective" matrix $M^{\rm eff}_{pq}=\sum_{ll'}M_{ll'}S_{(p+l)_P,(q+l')_P}$ built from $Q$,
# $R$ or $T$ (eqs 41–43). One SGD step changes $R$ and $Q$ by $O(1/D)$ (eq. 52); averaging
# over the fresh sample gives a drift that is a Gaussian average of $g,g'$ over those
# covariances, while the fluctuations are $O(D^{-1})$ per step and average out over the
# $D\,d\alpha$ steps in a time $d\alpha$. The term quadratic in $\eta$ needs
# $x_r\cdot x_q\approx DS_{rq}$ (eq. 59). The result:
# $$\frac{dR}{d\alpha}=\frac\eta{k_s}F_R,\qquad\frac{dQ}{d\alpha}=\frac\eta{k_s}F_Q+\frac{\eta^2}{k_s^2}G_Q\qquad(\alpha=t/D,\ \text{eqs 17–18}),$$
# with $F_R,F_Q$ sums of $I_3$ averages (eqs 65–66, 77–78) and $G_Q$ sums of $I_4$ and
# $\sigma^2J_2$ (eqs 67, 79). The CNN's right-hand sides carry an extra sum over positions
# (the shared kernel collects gradient from all of them); that sum is the whole story of §3.
# The error is a sum of $I_2$'s (eq. 81).
#
# **Initial conditions (eqs 19–20).** With i.i.d. $\mathcal N(0,1)$ weights,
# $Q=I/k_s$, $R=0$ (CNN) and $Q^{(p,q)}=\delta_{pq}I/k_s$, $R^{(p)}=0$ (LCN), up to
# $O(D^{-1/2})$ fluctuations. `cl.random_init` samples those fluctuations exactly for any
# $D$ (even $10^{12}$), which is how §4 (lesson 2) measures $D$-dependence with $D$-free ODEs.
#
# **Figure 2** puts the ODE beside online SGD at $D=1000$, starting the ODE from the
# simulation's own initial overlaps; the LCN is plotted against $P\alpha$.

# %% tags=["demo"]
# Figure 2: ODE vs finite-D SGD, CNN at alpha, LCN at P * alpha.
# Paper: g = erf, k_t = 2, k_s = 3, P = 4, eta = 1, sigma = 0, T = 1, D = 1000.
P, k_t, k_s, eta2, T = 4, 2, 3, 1.0, 1.0
D2 = pick(1000, 100)
a_max = pick(3.0, 1.0)  # CNN horizon; the LCN runs to P * a_max
fig2 = {}
for c in (0.0, 0.5):
    for kind, amax in (("cnn", a_max), ("lcn", P * a_max)):
        ck = np.linspace(0, amax, pick(41, 11))
        sim = cl.simulate_sgd(kind, D=D2, P=P, k_s=k_s, k_t=k_t, c=c, T=T, eta=eta2, checkpoints=ck,
                              n_test=0, rng=1, progress=True)
        ode = cl.integrate(kind, sim.R0[0], sim.Q0[0], ck, cl.input_covariance(P, c), T=T,
                           eta=eta2, dtau=0.05)
        fig2[c, kind] = (sim, ode)

fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for ax, c in zip(axes, (0.0, 0.5)):
    for kind, col, scale in (("cnn", "C0", 1), ("lcn", "C3", P)):
        sim, ode = fig2[c, kind]
        ax.plot(ode.t / scale, ode.eg, color=col, label=f"{kind.upper()} ODE")
        ax.plot(sim.t / scale, sim.eg_order[:, 0], "o", ms=3, color=col,
                label=f"{kind.upper()} SGD, D={D2}")
    ax.set(xlabel=r"$\alpha$ (CNN) and $\alpha_{\rm LCN}/P$ (LCN)", ylabel=r"$\varepsilon_g$",
           title=f"({'ab'[c > 0]}) c = {c}")
    ax.legend(fontsize=8)
    ins = ax.inset_axes([0.55, 0.35, 0.4, 0.3])
    for kind, col in (("cnn", "C0"), ("lcn", "C3")):
        ins.plot(fig2[c, kind][1].t, fig2[c, kind][1].eg, color=col)
    ins.set_xlim(0, a_max)
    ins.set_title(r"raw $\alpha$", fontsize=8)
    ins.tick_params(labelsize=7)
fig.suptitle(r"Figure 2: $\varepsilon_g^{\rm CNN}(\alpha)$ and $\varepsilon_g^{\rm LCN}(P\alpha)$; erf, "
             r"$k_t=2$, $k_s=3$, $P=4$, $\eta=1$, $\sigma=0$, $T=1$", fontsize=10)
plt.tight_layout()
plt.show()
quick_note(f"D = {D2} and alpha up to {a_max}, instead of D = 1000 and alpha up to 3")
for c in (0.0, 0.5):
    (sc, oc), (sl, ol) = fig2[c, "cnn"], fig2[c, "lcn"]
    gap_ode = np.abs(oc.eg - ol.eg)
    print(f"c = {c}: max |eps_CNN(alpha) - eps_LCN(P alpha)| along the ODE curves = {gap_ode.max():.3f}"
          f" (at alpha = {oc.t[np.argmax(gap_ode)]:.2f}; {gap_ode[-1]:.3f} at the end);"
          f"  max |SGD - ODE| (CNN) = {np.abs(sc.eg_order[:, 0] - oc.eg).max():.3f}")

# %% [markdown]
# The SGD markers follow the ODE lines, with run-to-run deviations of order $D^{-1/2}$. In
# panel (a) ($c=0$) the two students' curves come together once the LCN's time is divided by
# $P$, but they do not coincide: the cell prints a largest gap of 0.161 between the two ODE
# curves, at $\alpha=0$, shrinking along the run. Each ODE starts from its own simulation's
# random initial overlaps, and two independent random students at $D=1000$ start with errors
# that differ by fluctuations of order $D^{-1/2}$ (eq. 20); §3 shows that from a *matched*
# start the two curves agree exactly. In panel (b) ($c=0.5$) they stay far apart: the CNN
# starts higher (eq. 28 of lesson 3) and the rescaled LCN is far ahead. In raw time (insets)
# the CNN wins at $c=0$; at $c=0.5$ and this large learning rate the LCN is ahead even
# without rescaling, and the CNN's error first *rises*: $\eta=1$ is above the CNN's $A/B$ of
# eq. 27 (lesson 3) at $c=0.5$, so the $\eta^2$ term wins at first. §3 explains (a), §5 (lesson 3) explains (b).
#
# ## 3. Weight sharing with independent positions: an exact factor $P$ (Result 3.2)
#
# **Result 3.2.** Let $S=I$ and $k_t\le k_s\le P$. If $(R,Q)(\alpha)$ solves the CNN
# equations from $(R_0,Q_0)$, then the LCN equations started from the *matched,
# position-symmetric* state
# $$R^{(p)}(0)=R_0,\qquad Q^{(p,(p+l-l')_P)}_{ll'}(0)=(Q_0)_{ll'}\quad\text{for all }p\qquad\text{(eq. 21)}$$
# are solved by $R^{(p)}(P\alpha)=R(\alpha)$, $Q^{(p,(p+l-l')_P)}_{ll'}(P\alpha)=Q_{ll'}(\alpha)$,
# and $\varepsilon_g^{\rm LCN}(P\alpha)=\varepsilon_g^{\rm CNN}(\alpha)$ (eq. 22).
#
# This is an identity between whole trajectories, not a bound: the shared kernel receives
# the gradient of all $P$ positions at every step, the LCN's kernel at position $p$ only its
# own, and with independent positions nothing else distinguishes the two. The random
# initialisation of eq. 20 is position-symmetric, and equal for the two students, only up to
# $O(D^{-1/2})$, which is why the curves of Figure 2a agree only up to finite-size effects.


# %% [markdown]
# **The equations Exercise C works from** (the paper's Appendices A, B and D, in the form the
# course's ODE integrator implements them).
#
# *Fields.* Single-tap fields of the teacher and of the LCN student (the CNN's are the same
# with one kernel, $\hat w^{(q)}_l=\hat w_l$, $\nu^{(q,l)}_r=\nu^{(l)}_r$):
# $$\mu^{(m)}_r=\frac{w_m\cdot x_r}{\sqrt{k_tD}},\qquad \nu^{(q,l)}_r=\frac{\hat w^{(q)}_l\cdot x_r}{\sqrt{k_sD}},\qquad
# \lambda_p=\sum_{m<k_t}\mu^{(m)}_{(p+m)_P},\qquad \hat\lambda_p=\sum_{l<k_s}\nu^{(p,l)}_{(p+l)_P}.$$
# They are jointly Gaussian, centred, with (from the definitions of $Q$ and $R$ in §2 and eq. 7)
# $$\langle\nu^{(p,l)}_r\nu^{(q,l')}_s\rangle=Q^{(p,q)}_{ll'}S_{rs},\qquad
# \langle\nu^{(p,l)}_r\mu^{(m)}_s\rangle=R^{(p)}_{lm}S_{rs},\qquad
# \langle\mu^{(m)}_r\mu^{(m')}_s\rangle=\frac T{k_t}\delta_{mm'}S_{rs},$$
# hence the preactivation covariances (eqs 70–72)
# $$\langle\hat\lambda_p\hat\lambda_q\rangle=\sum_{l,l'<k_s}Q^{(p,q)}_{ll'}S_{(p+l)_P,(q+l')_P},\qquad
# \langle\hat\lambda_p\lambda_q\rangle=\sum_{l<k_s,\,m<k_t}R^{(p)}_{lm}S_{(p+l)_P,(q+m)_P},\qquad
# \langle\hat\lambda_p\,\nu^{(q,l')}_r\rangle=\sum_{l''<k_s}Q^{(p,q)}_{l''l'}S_{(p+l'')_P,r}.$$
#
# *Gaussian averages* (eqs 44–51; $g=\operatorname{erf}(\cdot/\sqrt2)$). Besides $I_2$ and $J_2$ of
# Exercise A, with $C$ the covariance of the arguments,
# $$I_3(a,b,c)=\mathbb E[g'(a)\,b\,g(c)]=\frac2\pi\,\frac{C_{bc}(1+C_{aa})-C_{ab}C_{ac}}{(1+C_{aa})\sqrt{(1+C_{aa})(1+C_{cc})-C_{ac}^2}},
# \qquad I_4(a,b,c,d)=\mathbb E[g'(a)g'(b)g(c)g(d)].$$
# Exercise C needs only that each of them is a function of the covariance matrix of its
# arguments ($I_4$ has a closed form too, eqs 47–51, not needed here).
#
# *Error (eq. 81).*
# $\varepsilon_g=\sum_{p,q}\big[I_2(\lambda_p,\lambda_q)-2I_2(\hat\lambda_p,\lambda_q)+I_2(\hat\lambda_p,\hat\lambda_q)\big]$.
#
# *CNN (eq. 17 with eqs 65–67).* $\dot R=\frac\eta{k_s}F_R$, $\dot Q=\frac\eta{k_s}F_Q+\frac{\eta^2}{k_s^2}G_Q$ with
# $$[F_R]_{lm}=\sum_{p,q}\Big[I_3\big(\hat\lambda_p,\mu^{(m)}_{(p+l)_P},\lambda_q\big)-I_3\big(\hat\lambda_p,\mu^{(m)}_{(p+l)_P},\hat\lambda_q\big)\Big],$$
# $$[F_Q]_{ll'}=\sum_{p,q}\Big[I_3\big(\hat\lambda_p,\nu^{(l')}_{(p+l)_P},\lambda_q\big)-I_3\big(\hat\lambda_p,\nu^{(l')}_{(p+l)_P},\hat\lambda_q\big)\Big]+(l\leftrightarrow l'),$$
# $$[G_Q]_{ll'}=\sum_{p,q}S_{(p+l)_P,(q+l')_P}\,V_{pq},\qquad
# V_{pq}=\sum_{r,s}\Big[I_4(\hat\lambda_p,\hat\lambda_q,\lambda_r,\lambda_s)-2I_4(\hat\lambda_p,\hat\lambda_q,\lambda_r,\hat\lambda_s)+I_4(\hat\lambda_p,\hat\lambda_q,\hat\lambda_r,\hat\lambda_s)\Big]+\sigma^2J_2(\hat\lambda_p,\hat\lambda_q).$$
#
# *LCN (eq. 18 with eqs 77–79).* $\dot R^{(p)}=\frac\eta{k_s}F_R^{(p)}$, $\dot Q^{(p,q)}=\frac\eta{k_s}F_Q^{(p,q)}+\frac{\eta^2}{k_s^2}G_Q^{(p,q)}$ with
# $$[F_R]^{(p)}_{lm}=\sum_{s}I_3\big(\hat\lambda_p,\mu^{(m)}_{(p+l)_P},\lambda_s\big)-\sum_{q}I_3\big(\hat\lambda_p,\mu^{(m)}_{(p+l)_P},\hat\lambda_q\big),$$
# $$[F_Q]^{(p,q)}_{ll'}=\sum_{s}I_3\big(\hat\lambda_p,\nu^{(q,l')}_{(p+l)_P},\lambda_s\big)-\sum_{r}I_3\big(\hat\lambda_p,\nu^{(q,l')}_{(p+l)_P},\hat\lambda_r\big)+(p\leftrightarrow q,\ l\leftrightarrow l'),$$
# $$[G_Q]^{(p,q)}_{ll'}=S_{(p+l)_P,(q+l')_P}\,V_{pq}\qquad(V_{pq}\text{ as for the CNN, with the LCN's }\hat\lambda).$$
# All sums over positions run over $0,\dots,P-1$.
#
# *Relevant entries and the matched state (eqs 83–86).* With $S=I$, an entry $Q^{(p,q)}_{ll'}$ is
# *relevant* if $(p+l)_P=(q+l')_P$, i.e. $q=(p+l-l')_P$ (eq. 83). The two cross-covariances that
# enter $I_3(\hat\lambda_p,\nu^{(q,l')}_{(p+l)_P},\cdot)$ are $\langle\hat\lambda_p\,\nu^{(q,l')}_{(p+l)_P}\rangle$
# (eq. 84) and $\langle\nu^{(q,l')}_{(p+l)_P}\,\hat\lambda_r\rangle$ (eq. 85), both from the last formula of
# the covariances above. The position-symmetric state of eq. 86 is $R^{(p)}=\tilde R$ and
# $Q^{(p,(p+l-l')_P)}_{ll'}=\tilde Q_{ll'}$ for every $p$ (the same as eq. 21).

# %% [markdown]
# ### Exercise C — Result 3.2 by inspection of the ODEs
#
# Work from the equations printed in the cell above.
#
# 1. *(Relevant entries.)* With $S=I$, show that $\langle\hat\lambda_p\hat\lambda_q\rangle$ of the
#    LCN involves only the entries $Q^{(p,q)}_{ll'}$ with $q=(p+l-l')_P$ (eq. 83), and that
#    $\varepsilon_g^{\rm LCN}$ depends only on $R$ and these entries.
# 2. *(Closure.)* Show that the right-hand sides of the LCN equations for $R^{(p)}$ and for the
#    relevant entries of $Q$ involve only $R$ and relevant entries. (Look at the two kinds of
#    covariance that enter $I_3(\hat\lambda_p,\nu^{(q,l')}_{(p+l)_P},\cdot)$, eqs 84–85; assume
#    $k_s\le P$, as Result 3.2 does.)
# 3. *(Matching, term by term.)* Assume the position-symmetric form of eq. 86. For each of the
#    three kinds of terms — $F_R$, $F_Q$ and $G_Q$ — say which CNN term it maps to, and where
#    the factor $P$ comes from in each.
# 4. *(Why $c>0$ breaks it.)* Give two distinct reasons why the argument fails for $c>0$.
#
# *Hint.* For 3, use the invariance of all CNN covariances under $p\mapsto p+1$ to replace
# the CNN's sum over $p$ by $P$ times one term; for the $G_Q$ term, $S_{(p+l)_P,(q+l')_P}=\delta$
# selects $q=(p+l-l')_P$ in the CNN's double sum.

# %% [markdown] nbgrader={"grade": true, "grade_id": "exC_rescaling_derivation", "locked": false, "points": 3, "schema_version": 3, "solution": true, "task": false}
# **Solution.**
#
# 1. By eq. 72, $\langle\hat\lambda_p\hat\lambda_q\rangle=\sum_{ll'}Q^{(p,q)}_{ll'}S_{(p+l)_P,(q+l')_P}$; with
# $S=I$ only the entries with $(p+l)_P=(q+l')_P$, i.e. $q=(p+l-l')_P$, survive. The cross
# covariance $\langle\hat\lambda_p\lambda_q\rangle=\sum_{ll'}R^{(p)}_{ll'}\delta_{(p+l)_P,(q+l')_P}$ involves
# $R$ only. Eq. 81 writes $\varepsilon_g$ through these covariances and the teacher's, so it
# depends on $R$ and the $Pk_s^2$ relevant entries of $Q$ only (out of $P^2k_s^2$).
#
# 2. The $Q^{(p,q)}_{ll'}$ equation (eq. 18 with eqs 78–79) contains $I_3(\hat\lambda_p,\nu^{(q,l')}_{(p+l)_P},\cdot)$
# and the symmetric term. Its 3×3 covariance needs (i) covariances of preactivations (relevant
# entries, by 1), (ii) $\langle\hat\lambda_p\,\nu^{(q,l')}_{(p+l)_P}\rangle=\sum_{l''}Q^{(p,q)}_{l''l'}\delta_{(p+l'')_P,(p+l)_P}=Q^{(p,q)}_{ll'}$,
# the entry itself, relevant when $q=(p+l-l')_P$ (eq. 84), and (iii)
# $\langle\nu^{(q,l')}_{(p+l)_P}\hat\lambda_r\rangle=Q^{(q,r)}_{l'l''^\star}$ with $l''^\star=(p+l-r)_P$, and
# $r=(q+l'-l''^\star)_P$ holds because $q=(p+l-l')_P$, so it is relevant too (eq. 85); if
# $l''^\star\ge k_s$ the covariance is zero. The variance $\langle\nu\nu\rangle=Q^{(q,q)}_{l'l'}$ is a
# relevant (diagonal) entry. The $G_Q$ term only has preactivation covariances. The $R^{(p)}$
# equation is the same with $\mu$ in place of $\nu$. So the relevant block evolves on its own.
#
# 3. Insert $R^{(p)}=\tilde R$, $Q^{(p,(p+l-l')_P)}_{ll'}=\tilde Q_{ll'}$. Then every LCN covariance
# equals the CNN covariance with $(R,Q)=(\tilde R,\tilde Q)$ (the same sums with
# $\delta_{(p+l)_P,(q+l')_P}$), the LCN state stays position-symmetric, and term by term:
# - $F_R$: the CNN has $\sum_{p}\sum_q[\dots]$; shift invariance makes all $P$ values of $p$
#   equal, $=P\sum_q[\dots]_{p}$; the LCN's $F_R^{(p)}$ is the single $\sum_q[\dots]_p$.
# - $F_Q$: the same, for each of the two $I_3$ sums: a factor $P$.
# - $G_Q$: the CNN's $\sum_{p,q}S_{(p+l)_P,(q+l')_P}\{\dots\}_{pq}$ keeps the $P$ pairs with
#   $q=(p+l-l')_P$, all equal by shift invariance: $P\{\dots\}$. The LCN's $G_Q^{(p,q)}$ at that
#   $q$ is one copy $\{\dots\}$.
# Hence $d(\tilde R,\tilde Q)/d\alpha|_{\rm LCN}=\frac1P\,d(R,Q)/d\alpha|_{\rm CNN}$ at equal states, the
# time change $\alpha_{\rm LCN}=P\alpha_{\rm CNN}$ maps solutions to solutions, and with the matched
# initial condition and uniqueness of ODE solutions eq. 22 follows; $\varepsilon_g$ agrees because
# the covariances agree.
#
# 4. (i) With $c>0$, $S_{(p+l)_P,(q+l')_P}=c\neq0$ for the irrelevant entries too, so every entry of
# $Q^{(p,q)}$ enters $\langle\hat\lambda_p\hat\lambda_q\rangle$: the relevant block no longer closes, and the
# LCN's $P^2k_s^2$ entries cannot be matched to the CNN's $k_s^2$. (ii) Even the starting points
# differ: at random initialisation $\langle\hat\lambda_p\hat\lambda_q\rangle=S_{pq}$ for the CNN (one kernel
# sees correlated inputs) but $\delta_{pq}$ for the LCN (independent kernels), so the initial
# errors differ (eq. 28) and no matched initial condition exists among the random ones.

# %% [markdown]
# Now check Result 3.2 numerically. Write `matched_lcn_init(R0, Q0, P)` returning the LCN
# state `(R, Q)` of eq. 21 in `td_lib`'s layout: `R` of shape `(P, k_s, k_t)` with `R[p]` $=R^{(p)}$
# and `Q` of shape `(P, P, k_s, k_s)` with `Q[p, q]` $=Q^{(p,q)}$. Entries that eq. 21 leaves free
# may be anything that keeps `Q` symmetric (`Q[p, q, l, m] == Q[q, p, m, l]`); the simplest
# choices are zero, or the shared-weight state $Q^{(p,q)}=Q_0$ for all $p,q$. The tests
# integrate both students with `cl.integrate` and check eq. 22.

# %% nbgrader={"grade": false, "grade_id": "exC_matched_init", "locked": false, "schema_version": 3, "solution": true, "task": false}
def matched_lcn_init(R0, Q0, P):
    """LCN order parameters matched to a CNN state (R0, Q0), eq. 21.

    Parameters
    ----------
    R0 : array (k_s, k_t); Q0 : symmetric array (k_s, k_s); P : int, number of positions.

    Returns
    -------
    R : array (P, k_s, k_t) with R[p] = R0.
    Q : array (P, P, k_s, k_s) with Q[p, (p + l - m) % P, l, m] = Q0[l, m] for all p, l, m.
    """
    ### BEGIN SOLUTION
    R0 = np.asarray(R0, dtype=float)
    Q0 = np.asarray(Q0, dtype=float)
    k_s = Q0.shape[0]
    R = np.repeat(R0[None], P, axis=0)
    Q = np.zeros((P, P, k_s, k_s))
    for p in range(P):
        for l in range(k_s):
            for m in range(k_s):
                Q[p, (p + l - m) % P, l, m] = Q0[l, m]
    return R, Q
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "test_exC_matched_init", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Visible tests: the entries of eq. 21, then eq. 22 along an ODE trajectory.
import numpy as np
from td_lib import cnn_lcn as cl
from td_lib.own_work import own_work, passed

_init = own_work(matched_lcn_init, "exC_matched_init")
_P, _ks, _kt = 4, 3, 2
_R0, _Q0 = cl.random_init("cnn", D=30, P=_P, k_s=_ks, k_t=_kt, rng=4)  # small D: clearly non-diagonal Q0
_R, _Q = (np.asarray(a, dtype=float) for a in _init(_R0, _Q0, _P))
assert _R.shape == (_P, _ks, _kt) and _Q.shape == (_P, _P, _ks, _ks), (
    f"expected shapes {(_P, _ks, _kt)} and {(_P, _P, _ks, _ks)}, got {_R.shape} and {_Q.shape}")
_same_block = all(np.allclose(_Q[_p, _p], _Q0) for _p in range(_P))
for _p in range(_P):
    assert np.allclose(_R[_p], _R0, atol=1e-14), (
        f"R[{_p}] should equal R0 (eq. 21); the largest difference is {np.abs(_R[_p] - _R0).max():.3g}")
    for _l in range(_ks):
        for _m in range(_ks):
            _q = (_p + _l - _m) % _P
            assert abs(_Q[_p, _q, _l, _m] - _Q0[_l, _m]) < 1e-14, (
                f"Q[{_p}, {_q}, {_l}, {_m}] should be Q0[{_l}, {_m}] = {_Q0[_l, _m]:.4f} (eq. 21 with q = (p + l - l') mod P), "
                f"got {_Q[_p, _q, _l, _m]:.4f}."
                + (" Your Q^(p,p) equals Q0 for every p, which puts the off-diagonal entries of Q0 at the wrong "
                   "pair of positions." if _same_block else ""))
_asym = np.abs(_Q - np.transpose(_Q, (1, 0, 3, 2))).max()
assert _asym < 1e-14, f"Q must satisfy Q[p, q, l, m] == Q[q, p, m, l] (a Gram matrix); the largest violation is {_asym:.3g}"
_al = np.linspace(0, 2.0, 5)
# The LCN's time step is P times the CNN's, so both RK4 discretisations are the same map.
_cnn = cl.integrate("cnn", _R0, _Q0, _al, np.eye(_P), T=1.0, eta=0.8, dt=0.05)
_lcn = cl.integrate("lcn", _R, _Q, _P * _al, np.eye(_P), T=1.0, eta=0.8, dt=_P * 0.05)
_gap = np.abs(_cnn.eg - _lcn.eg).max()
assert _gap < 1e-9, f"eq. 22 fails from your state: max |eps_CNN(alpha) - eps_LCN(P alpha)| = {_gap:.2e} (should be ~1e-12)"
passed("matched_lcn_init")
### BEGIN HIDDEN TESTS
for (_P, _ks, _kt, _eta, _seed) in [(5, 2, 1, 0.5, 1), (3, 3, 3, 1.5, 2), (6, 4, 2, 0.3, 3), (2, 1, 1, 1.0, 4)]:
    _R0, _Q0 = cl.random_init("cnn", D=40, P=_P, k_s=_ks, k_t=_kt, rng=_seed)
    _R, _Q = (np.asarray(a, dtype=float) for a in _init(_R0, _Q0, _P))
    _case = f"(P, k_s, k_t) = {(_P, _ks, _kt)}"
    assert _R.shape == (_P, _ks, _kt) and _Q.shape == (_P, _P, _ks, _ks), (
        f"{_case}: expected shapes {(_P, _ks, _kt)} and {(_P, _P, _ks, _ks)}, got {_R.shape} and {_Q.shape}")
    _asym = np.abs(_Q - np.transpose(_Q, (1, 0, 3, 2))).max()
    assert _asym < 1e-14, f"{_case}: Q[p, q, l, m] == Q[q, p, m, l] is violated by {_asym:.3g}"
    _al = np.linspace(0, 1.5, 4)
    _cnn = cl.integrate("cnn", _R0, _Q0, _al, np.eye(_P), T=1.3, eta=_eta, sigma=0.5, dt=0.05)
    _lcn = cl.integrate("lcn", _R, _Q, _P * _al, np.eye(_P), T=1.3, eta=_eta, sigma=0.5, dt=_P * 0.05)
    _gap = np.abs(_cnn.eg - _lcn.eg).max()
    assert _gap < 1e-9, f"{_case}: eq. 22 fails from your state, max |eps_CNN(alpha) - eps_LCN(P alpha)| = {_gap:.2e}"
    for _p in range(_P):
        _gr = np.abs(_lcn.R[:, _p] - _cnn.R).max()
        assert _gr < 1e-9, f"{_case}: R^({_p})(P alpha) should follow the CNN's R(alpha) (Result 3.2); off by {_gr:.2e}"
        for _l in range(_ks):
            for _m in range(_ks):
                _gq = np.abs(_lcn.Q[:, _p, (_p + _l - _m) % _P, _l, _m] - _cnn.Q[:, _l, _m]).max()
                assert _gq < 1e-9, (
                    f"{_case}: Q^({_p},{(_p + _l - _m) % _P})_{_l}{_m}(P alpha) should follow the CNN's Q_{_l}{_m}(alpha) "
                    f"(Result 3.2); off by {_gq:.2e}")
### END HIDDEN TESTS

# %% tags=["demo"]
# Result 3.2 at Figure 2's parameters, from an LCN that starts with the CNN's kernel at every
# position (a matched state, eq. 21, R from your matched_lcn_init), and what the same start gives at c = 0.5.
from td_lib.own_work import demo_result

R0c, Q0c = fig2[0.0, "cnn"][0].R0[0], fig2[0.0, "cnn"][0].Q0[0]
al = np.linspace(0, pick(4.0, 1.0), 21)


def result32_demo():
    """Per c: the largest gap between eps_CNN(alpha) and eps_LCN(4 alpha), and both errors at alpha = 0."""
    Rl, _ = matched_lcn_init(R0c, Q0c, 4)
    Ql = np.broadcast_to(Q0c, (4, 4, 3, 3)).copy()  # shared weights at every position: satisfies eq. 21
    out = {}
    for c in (0.0, 0.5):
        Sc = cl.input_covariance(4, c)
        e_cnn = cl.integrate("cnn", R0c, Q0c, al, Sc, eta=1.0, dt=0.05).eg
        e_lcn = cl.integrate("lcn", np.asarray(Rl, dtype=float), Ql, 4 * al, Sc, eta=1.0, dt=4 * 0.05).eg
        out[c] = {"gap": float(np.abs(e_cnn - e_lcn).max()), "eps0": (float(e_cnn[0]), float(e_lcn[0]))}
    return out


# The same computation with the course's matched_lcn_init, for the full and the quick run
# BAKED matched_init_demo (expected values computed on the instructor's side: checks/grading/baked_values/cnn_lcn_1_exact_odes.json)
res32 = demo_result(result32_demo, pick(_ref32["full"], _ref32["quick"]), "Exercise C's matched_lcn_init")
quick_note(f"alpha up to {al[-1]} instead of 4")
for c in (0.0, 0.5):
    print(f"c = {c}: matched start, max |eps_CNN(alpha) - eps_LCN(4 alpha)| = {res32[c]['gap']:.2e}"
          f"  (eps at alpha = 0: CNN {res32[c]['eps0'][0]:.3f}, LCN {res32[c]['eps0'][1]:.3f})")

# %% [markdown]
# At $c=0$ the two curves agree to the integrator's rounding error. At $c=0.5$ the same
# start (identical networks at $\alpha=0$, so identical errors) is followed by different
# trajectories: the exact rescaling is special to independent positions.

# %% tags=["demo"]
print(f"notebook executed in {time.time() - _t_start:.0f} s (quick mode: {QUICK})")
