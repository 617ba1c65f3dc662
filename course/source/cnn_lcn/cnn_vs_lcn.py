# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # CNN vs LCN — what weight sharing and locality buy in online SGD
#
# *Training Dynamics, Iliad Intensive 2026.* CPU only; needs numpy, scipy, matplotlib and the
# course library `td_lib` (its module `td_lib.cnn_lcn` is the theory engine this notebook
# uses). Exercise solutions are folded under **Solution** on the course page.
#
# A convolutional network does two things a fully connected one does not: it looks at the
# input through **small windows** (locality) and it uses **the same window weights at every
# position** (weight sharing). Which of the two makes it learn faster, by how much, and can
# it hurt? This notebook works through a teacher–student model in which online SGD can be
# solved exactly in the limit of a large feature dimension, so these questions get exact
# answers:
#
# - **weight sharing** (CNN vs locally connected network, LCN) speeds learning up by exactly
#   the number of positions $P$ when positions are independent (Result 3.2), but spatial
#   correlations erode the advantage, and at a fixed learning rate the CNN even ends with the
#   larger noise floor (Results 4.1, 4.2);
# - **locality** (the kernel size $k_s$ of the student against the teacher's $k_t$) decides
#   whether the teacher is found after $O(D)$ or $O(D\log D)$ samples (Result 3.3).
#
# **Route.** Readings first; then the setup (§1), the exact ODEs (§2), weight sharing for
# independent positions (§3), locality (§4), correlated positions (§5), the ReLU checks of
# the appendix (§6) and the limitations (§7). Every figure of the paper is regenerated here
# by your own run, at sizes that fit a laptop in a few minutes; the full-resolution versions
# of the heavy ones come from `scripts/cnn_lcn_figures.py` (`make figures`).

# %% [markdown]
# ## Readings
#
# **The paper of this notebook.** F. Mori and co-author, *exact online-SGD dynamics of
# convolutional vs locally connected students* (code:
# <https://github.com/francescomori/CNN_theory>). A convolutional teacher with kernel size
# $k_t$ on $P$ positions of $D$ features each; CNN and LCN students with kernel size
# $k_s\ge k_t$; closed ODEs for the order parameters as $D\to\infty$; an exact $P$-fold
# speed-up of the CNN for independent positions; $O(D)$ vs $O(D\log D)$ sample complexity
# depending on $k_s=k_t$ or $k_s>k_t$; and a phase diagram of which student wins when
# positions are correlated and the learning rate is tuned to the training budget.
#
# **Where the method comes from.**
# - D. Saad and S. A. Solla, *On-line learning in soft committee machines* (Phys. Rev. E 52,
#   1995): the order-parameter ODEs of two-layer networks, the erf integrals used below, and
#   the plateaus caused by the permutation symmetry of hidden units (the ancestor of the
#   $\rho$-symmetric plateau of §4).
# - M. Biehl and H. Schwarze, *Learning by on-line gradient descent* (J. Phys. A 28, 1995),
#   and S. Goldt et al., *Dynamics of stochastic gradient descent for two-layer neural
#   networks in the teacher–student setup* (NeurIPS 2019): the same ODEs, with a proof of
#   concentration.
# - D. Saad and S. A. Solla, *Learning with noise and regularizers in multilayer neural
#   networks* (NeurIPS 1997), and D. Saad and M. Rattray, *Globally optimal parameters for
#   on-line learning in multilayer neural networks* (PRL 1997): noise floors and optimal
#   learning rates from the ODEs (§5 here).
# - F. Mori and F. Mignacco: early-time expansions of such ODEs around a random initial
#   condition (Result 4.1 here).
#
# **What symmetry buys, elsewhere.** Bietti, Venturi and Bruna (invariant kernels: sample
# complexity divided by the size of the group), Lahoti et al. and Waber et al. (CNN vs LCN vs
# FCN on patch data; a factor of the number of patches), Favero et al. (locality, not
# translation invariance, sets the exponent of kernel learning curves). The paper's Result
# 3.2 is an *exact identity between trajectories*, not a bound.

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
# The first code cell builds this model with `td_lib.cnn_lcn` and checks the symmetry
# numerically.

# %%
# SETUP_CODE_PLACEHOLDER

# %% [markdown]
# ### Exercise A — the two erf integrals
#
# Everything below reduces to Gaussian averages of $g$ and $g'$ over jointly Gaussian
# preactivations. For a centred Gaussian pair $(u_1,u_2)$ with covariance
# $C=\begin{pmatrix}c_{11}&c_{12}\\c_{12}&c_{22}\end{pmatrix}$ the paper uses
# $$I_2(C)=\mathbb E[g(u_1)g(u_2)]=\frac2\pi\arcsin\frac{c_{12}}{\sqrt{(1+c_{11})(1+c_{22})}},\qquad
# J_2(C)=\mathbb E[g'(u_1)g'(u_2)]=\frac2\pi\big[(1+c_{11})(1+c_{22})-c_{12}^2\big]^{-1/2}\qquad\text{(eqs 44–45)}.$$
#
# 1. Derive $J_2$ for $g(z)=\operatorname{erf}(z/\sqrt2)$.
# 2. Derive $I_2$.
# 3. In the code cell, implement `j2_erf(C)` for a single $2\times2$ covariance or a batch of
#    shape `(..., 2, 2)`, returning an array of shape `(...)`, and check it against Monte
#    Carlo in the cell after it.
#
# *Hint.* For 1: $g'(z)=\sqrt{2/\pi}\,e^{-z^2/2}$, so $J_2$ is $\frac2\pi\,\mathbb E[e^{-u^\top u/2}]$, a
# Gaussian integral. For 2: $\operatorname{erf}(z/\sqrt2)=2\Phi(z)-1=\mathbb E_{z'}[\operatorname{sign}(z-z')]$ with
# $z'\sim\mathcal N(0,1)$ independent, and for a centred Gaussian pair with correlation $r$,
# $\mathbb E[\operatorname{sign}a\operatorname{sign}b]=\frac2\pi\arcsin r$.

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

# %% nbgrader={"grade": false, "grade_id": "exA_j2_erf", "locked": false, "schema_version": 3, "solution": true, "task": false}
def j2_erf(C):
    """E[g'(u1) g'(u2)] for g(z) = erf(z / sqrt 2) and (u1, u2) ~ N(0, C) (eq. 45).

    Parameters
    ----------
    C : array of shape (2, 2) or (..., 2, 2)
        Covariance matrices of the pair (u1, u2).

    Returns
    -------
    numpy.ndarray of shape C.shape[:-2] (a 0-d array for a single matrix).
    """
    ### BEGIN SOLUTION
    C = np.asarray(C, dtype=float)
    det = (1 + C[..., 0, 0]) * (1 + C[..., 1, 1]) - C[..., 0, 1] ** 2
    return 2 / np.pi / np.sqrt(det)
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "test_exA_j2_erf", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Visible tests: closed form at simple points, batching, and Price's theorem dI2/dc12 = J2.
import numpy as np
from td_lib import cnn_lcn as cl

_v = np.asarray(j2_erf(np.eye(2)), dtype=float)
assert _v.shape == (), f"j2_erf of one 2x2 matrix should return a scalar (0-d array), got shape {_v.shape}"
assert abs(_v - 1 / np.pi) < 1e-12, (
    f"For C = I, det(I + C) = 4, so J2 = (2/pi)/2 = 1/pi = 0.3183; got {float(_v):.6f}. "
    "Check the 2/pi prefactor and that you use det(I + C), not det(C).")
_v = float(j2_erf(np.zeros((2, 2))))
assert abs(_v - 2 / np.pi) < 1e-12, (
    f"For C = 0 both g' equal g'(0) = sqrt(2/pi), so J2 = 2/pi = 0.6366; got {_v:.6f}.")
_rng = np.random.default_rng(1)
_A = _rng.standard_normal((5, 3, 2, 2))
_Cs = _A @ np.swapaxes(_A, -1, -2)
_out = np.asarray(j2_erf(_Cs))
assert _out.shape == (5, 3), f"j2_erf on a batch of shape (5, 3, 2, 2) should return shape (5, 3), got {_out.shape}"
# Price's theorem: d/dc12 of I2 (eq. 44) is J2; central difference on the closed-form I2.
_h = 1e-5
for _C in _Cs.reshape(-1, 2, 2)[:6]:
    _Cp, _Cm = _C.copy(), _C.copy()
    _Cp[0, 1] = _Cp[1, 0] = _C[0, 1] + _h
    _Cm[0, 1] = _Cm[1, 0] = _C[0, 1] - _h
    _i2 = lambda M: 2 / np.pi * np.arcsin(M[0, 1] / np.sqrt((1 + M[0, 0]) * (1 + M[1, 1])))
    _d = (_i2(_Cp) - _i2(_Cm)) / (2 * _h)
    assert abs(_d - float(j2_erf(_C))) < 1e-7, (
        f"Price's theorem says dI2/dc12 = J2; at C = {_C.round(3).tolist()} the derivative of eq. 44 "
        f"is {_d:.8f} but j2_erf gives {float(j2_erf(_C)):.8f}.")
### BEGIN HIDDEN TESTS
# Against the engine's J2 on many random covariances (an exact identity).
_A = np.random.default_rng(7).standard_normal((200, 2, 2)) * 2
_Cs = _A @ np.swapaxes(_A, -1, -2)
assert np.allclose(np.asarray(j2_erf(_Cs)), cl.J2_COVARIANCE_PLACEHOLDER(_Cs), rtol=1e-12, atol=0)
# Monte Carlo within 5 standard errors at a strongly correlated point.
_C = np.array([[2.0, 1.3], [1.3, 1.0]])
_u = np.random.default_rng(11).multivariate_normal([0, 0], _C, size=400_000)
_gp = np.sqrt(2 / np.pi) * np.exp(-_u ** 2 / 2)
_s = _gp[:, 0] * _gp[:, 1]
assert abs(_s.mean() - float(j2_erf(_C))) < 5 * _s.std() / np.sqrt(len(_s))
### END HIDDEN TESTS

# %%
# Monte Carlo check of both integrals at a few covariances (I2 from the engine, J2 yours).
MC_CHECK_PLACEHOLDER
