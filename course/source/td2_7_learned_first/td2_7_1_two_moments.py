# %% [markdown]
# # §7 — What is learned first
#
# *Training Dynamics, Iliad Intensive 2026.* CPU only (numpy, scipy, torch, matplotlib).
#
# Networks trained by gradient descent tend to pick up coarse structure in the data before fine
# structure: class means and covariances before higher-order correlations, the smooth part of a
# target before its wiggles. This assignment works out settings where that order can be
# computed rather than just observed.
#
# | notebook | what it computes |
# |---|---|
# | **7.1 Two moments** (this one) | a model linear in its input sees only means and covariances; a network with small weights sees higher statistics at higher orders in the weight scale |
# | 7.1b Early-time linear learning | at standard initialisation a two-layer network first behaves like a linear model (Hu et al. 2020) |
# | 7.2 Higher cumulants | online SGD needs about $d^{\,k-1}$ samples to find a direction with information exponent $k\ge3$, far fewer when it is correlated with lower-order structure |
# | 7.3 Spectral bias | a fixed kernel fits each eigenfunction at the rate of its eigenvalue; on the circle, low frequencies first |
# | 7.4 Which teacher node first | in a ReLU teacher–student setting, students specialise to the strongest teacher nodes first (Tian 2020) |
#
# ## Readings
#
# The papers of the whole assignment, grouped by section; the summaries are ours.
#
# **§7.1 Two moments** — the key paper of this notebook.
#
# * Refinetti, Ingrosso, Goldt, *Neural networks trained with SGD learn distributions of
#   increasing complexity* (ICML 2023). Networks from two-layer nets to ResNets and vision
#   transformers, trained on Gaussian clones of CIFAR-10, reach the same test accuracy as when
#   trained on the real images early in training, and better generative clones keep up for
#   longer; a single-neuron expansion shows the stages (mean difference, then Fisher's
#   discriminant, then a fourth-cumulant correction).
# * Beside it, notebook **7.1b**: Hu, Xiao, Adlam, Pennington, *The surprising simplicity of the
#   early-time learning dynamics of neural networks* (NeurIPS 2020). At standard
#   initialisation a two-layer network trained by GD stays close to a linear model of its input
#   early in training, so it too learns the linear part of the data first.
#
# **§7.2 Higher cumulants** — how many samples online SGD needs to find a direction hidden in a
# higher cumulant.
#
# * Bardone, Goldt, *Sliding down the stairs: how correlated latent variables accelerate
#   learning with neural networks* (ICML 2024). Introduces the mixed cumulant model (our test
#   bed) and gives nearly sharp sample counts for one neuron: about $d\log^2 d$ for a
#   covariance spike, $d^{\,3}$ for a fourth-cumulant spike, and $d\log^2 d$ for both when the
#   latent variables are correlated.
# * Ben Arous, Gheissari, Jagannath, *Online stochastic gradient descent on non-convex losses
#   from high-dimensional inference* (JMLR 22, 2021). Defines the information exponent $k$ and
#   proves that online SGD needs about $d$, $d\log d$ and $d^{\,k-1}$ samples to leave the
#   uninformative equator for $k=1$, $2$ and $\ge3$.
#
# **§7.3 Spectral bias.**
#
# * Basri, Jacobs, Kasten, Kritchman, *The convergence rate of neural networks for learned
#   functions of different frequencies* (NeurIPS 2019). The NTK spectrum of a two-layer ReLU
#   network for uniform data on the sphere: without biases the odd frequencies $\ge3$ cannot be
#   learned; with biases a frequency $\ell$ takes a time $\propto\ell^2$ in 1D.
# * Rahaman et al., *On the spectral bias of neural networks* (ICML 2019). Deep ReLU networks
#   fit sums of sinusoids low frequencies first, even when the high ones have larger amplitude.
#
# **§7.4 Which teacher node first** (notebook beside the CNN/LCN assignment).
#
# * Tian, *Student specialization in deep ReLU networks with finite width and input dimension*
#   (ICML 2020). Over-realised ReLU students specialise to the teacher's nodes, and the teacher
#   nodes with the largest fan-out weights are learned first.
#
# **Further reading.**
#
# * Székely, Bardone, Gerace, Goldt, *Learning from higher-order correlations, efficiently*
#   (NeurIPS 2024): with a finite data set reused for many epochs, about $d^{\,2}$ samples
#   suffice for low-degree tests and for trained two-layer networks, where random features fail.
# * Damian, Nichani, Ge, Lee, *Smoothing the landscape boosts the signal for SGD* (NeurIPS
#   2023): a smoothed loss brings the online cost down to about $d^{\,k/2}$ samples.
# * Xu et al., *Frequency principle* (2020): networks fit low frequencies before high ones on
#   MNIST and CIFAR-10, too.
# * Related: Kadkhodaie, Guth, Simoncelli, Mallat, *Generalization in diffusion models arises
#   from geometry-adaptive harmonic representations* (ICLR 2024, arXiv:2310.02557).

# %%
import math

import numpy as np
import torch

from td_lib import clone, mixed_cumulant, nets
from td_lib.core.runtime import QUICK, pick, quick_note

torch.set_num_threads(1)  # these matrices are tiny: one thread is fastest
print("quick mode" if QUICK else "full mode")


# %% tags=["demo"]
import matplotlib.pyplot as plt  # the figures (demo cells: the autograder skips them)

from td_lib import two_moments_demos as demos  # the demos' computations and figures

# %% [markdown]
# # 7.1 Two moments are all a linear-in-input model sees
#
# Which statistics of the data does gradient descent use first? A model that is linear in its
# input $x$ sees only the class means and covariances. A network with small weights is close to
# such a model, and the higher statistics of $x$ enter its gradient at higher orders in the
# weight scale.
#
# **Paper.** Refinetti, Ingrosso & Goldt (2023), Section 2. They expand the gradient flow of a
# sigmoidal perceptron order by order in the weights: the weight first lines up with the
# difference of the class means, then turns towards Fisher's discriminant, then picks up a
# correction from the fourth cumulant.
#
# **Core idea.** With the square loss, the loss of a linear model depends on the data only
# through first and second moments. A labelled data set and its *Gaussian clone* (each class
# replaced by the Gaussian with that class's mean and covariance) therefore produce the same
# gradient-flow trajectory. Now take a two-layer network $f(x)=\sum_j a_j\sigma(w_j\cdot x)$ whose
# weights are all of order $\varepsilon$ and expand $\sigma$ in powers of the pre-activation.
# The correlation of the label with a degree-$k$ function of the input, $\mathbb E[y\,x^{\otimes k}]$,
# enters the gradient at order $\varepsilon^k$: first the difference of the class means, then
# the difference of the covariances. This orders the *early* gradient; once the weights have
# grown, all the terms are of comparable size.
#
# ## Walkthrough
#
# **Notation.** Gradient flow $\dot\theta=-\nabla L$ in continuous time $t=k\eta$ ($k$ steps of
# size $\eta$). Inputs $x\in\mathbb R^d$, labels $y$; for classification $y=\pm1$ with probability
# $\tfrac12$ each, class means $\mu_\pm$ and covariances $C_\pm$. $\mathbb E$ averages over the data
# distribution, or over the training set when it is finite. $x^{\otimes k}$ is the $k$-fold outer
# product, so $\mathbb E[x^{\otimes k}]$ is the $k$-th moment tensor.
#
# **Background: deep linear networks** (Saxe, McClelland, Ganguli, *Exact solutions to the
# nonlinear dynamics of learning in deep linear neural networks*, ICLR 2014, arXiv:1312.6120).
# Square loss, whitened inputs $\mathbb E[xx^\top]=I$,
# $\Sigma_{yx}=\mathbb E[yx^\top]=USV^\top$ with singular values $s_\alpha$, and $a_\alpha$ the
# strength learned in mode $\alpha$. A shallow linear model $f=Wx$ obeys
# $\dot a_\alpha=s_\alpha-a_\alpha$: all modes relax at the same rate and $s_\alpha$ only sets
# the end point. A two-layer linear network $f=W_2W_1x$ from a small balanced initialisation obeys
# $\dot a_\alpha=2a_\alpha(s_\alpha-a_\alpha)$, a sigmoid that rises at
# $t\approx\frac1{2s_\alpha}\ln\frac{s_\alpha}{a_\alpha(0)}$: stronger modes are learned first.
# (Saxe et al. write $\tau\dot a$ with a time constant $\tau=1/\eta$ and count steps; with $t=k\eta$
# the $\tau$ drops out.)
#
# **The linear model.** Let $f(x)=Wx+b$ with the square loss. Append a constant to the input,
# $\tilde x=(x,1)$, and set $\tilde W=[W,b]$. Then
# $$L(\tilde W)=\tfrac12\mathbb E\|y-\tilde W\tilde x\|^2
#   =\tfrac12\operatorname{tr}\mathbb E[yy^\top]-\operatorname{tr}\big(\tilde W\,\mathbb E[\tilde xy^\top]\big)
#   +\tfrac12\operatorname{tr}\big(\tilde W\,\mathbb E[\tilde x\tilde x^\top]\,\tilde W^\top\big).$$
# The data enter only through three moment matrices. So a data set and its Gaussian clone give
# identical trajectories — for any data distribution (with empirical moments on a finite training
# set) and any optimiser whose update is a function of the full-batch gradient. Minibatch SGD is
# different in its fluctuations, whose covariance involves fourth moments of $x$ (Exercise 7.1.A).
#
# **Cumulants** measure how far a distribution is from Gaussian at each order. For a random
# vector $x$ with mean $\mu$, covariance $C$ and $\bar x=x-\mu$:
# $$\kappa_1=\mu,\quad \kappa_2=C,\quad \kappa_3=\mathbb E[\bar x^{\otimes3}],\quad
# \kappa_4^{ijkl}=\mathbb E[\bar x^i\bar x^j\bar x^k\bar x^l]-C^{ij}C^{kl}-C^{ik}C^{jl}-C^{il}C^{jk}.$$
# A Gaussian has $\kappa_p=0$ for every $p\ge3$, so the Gaussian clone of a class keeps its
# $\kappa_1,\kappa_2$ and sets all higher cumulants to zero. Cumulants add over independent
# summands and scale as $\kappa_p(aX)=a^p\kappa_p(X)$.
#
# **The test bed.** The demos use Bardone and Goldt's mixed cumulant model (§7.2 derives it;
# `td_lib.mixed_cumulant`) in $d=16$ with $\beta_m=1$, $\beta_u=5$, $\beta_v=10$. Class $-1$ is
# $\mathcal N(0,I)$. Class $+1$ differs from it in its mean along a direction $m$, in its variance
# along $u$, and along $v$ only from the fourth cumulant on (same mean and variance, but
# bimodal). With independent latents the three coordinates $x_m=m\cdot x$, $x_u=u\cdot x$,
# $x_v=v\cdot x$ are independent within each class and everything orthogonal to $m,u,v$ is pure
# noise, so the Bayes accuracies are integrals over at most two dimensions (the $x_m$ integral is
# done in closed form), evaluated below by quadrature:
#
# * **69.1 % from the means alone.** "From the means alone" means: the best classifier that
#   sees $x$ only through its projection on the mean difference $\mu_+-\mu_-=\beta_m m$. Since
#   $x_m\sim\mathcal N(0,1)$ or $\mathcal N(\beta_m,1)$, this is $\Phi(\beta_m/2)$; it is also the
#   Bayes accuracy of two Gaussians with these means and a common covariance.
# * **76.8 % from means and covariances**, the Bayes accuracy of the Gaussian clone (along $v$
#   the two clone classes coincide). The same classifier scores the same on the real data,
#   because $(x_m,x_u)$ has the same law in both. (Errata: an earlier version of these notes
#   printed 76.7 %; exact quadrature gives 76.80 %, and a Monte Carlo run on
#   $4\times10^6$ samples agrees with it.)
# * **81.9 % from everything**, the Bayes accuracy on the data.

# %% tags=["demo"]
# The three exact accuracies, and a Monte Carlo check of the three Bayes rules on fresh data.
# The rules are the course's own, which Exercise 7.2.A has you build, so this notebook does not
# run them: the numbers below were computed beforehand by the course authors (200,000 fresh
# samples drawn with `mixed_cumulant.sample`, torch seed 11), and are the same in quick and full
# mode.
# BAKED bayes_rules_demo (expected values computed on the instructor's side: checks/grading/baked_values/td2_7_1_two_moments.json)
acc_m, acc_mu, acc_all = demos.bayes_report(_ref_bayes)  # each hit rate ± its standard error

# %% [markdown]
# **The Monte Carlo lines.** Each estimate is the fraction of fresh samples that the exact Bayes
# rule classifies correctly: a mean of independent indicators whose expectation is exactly the
# Bayes accuracy (the rules use the true densities, nothing is fitted), so its deviation from
# the exact value, counted in standard errors, is close to $\mathcal N(0,1)$. In this seeded
# check the means-only estimate lies 2.2 standard errors above the exact
# value, and the other two, computed from the same samples, lie above theirs too (by
# 1.5 and 1.2), so the three deviations are correlated. A deviation at least that large happens
# in about 2.5 % of runs: a fluctuation of this seed, not a bias. We also drew
# 200 independent batches of 20,000 samples (again beforehand, with other seeds): their means-only deviations
# have mean 0.11 and standard deviation 1.01, as $\mathcal N(0,1)$ predicts (standard errors of
# about 0.07 and 0.05).

# %% [markdown]
# **Small weights: the expansion.** Take $f(x)=\sum_{j=1}^N a_j\,\sigma(w_j\cdot x)$, with $W$
# the matrix of rows $w_j$ and an activation analytic at 0, $\sigma(z)=\sum_{k\ge1}c_kz^k$
# ($\tanh$, or GELU $=z\Phi(z)$ with $c_1=\tfrac12$, $c_2=1/\sqrt{2\pi}$, $c_3=0$). If all weights are
# of order $\varepsilon$, the pre-activations are small and
# $$f(x)=c_1\,a^\top Wx\;+\;c_2\sum_ja_j(w_j\cdot x)^2\;+\;c_3\sum_ja_j(w_j\cdot x)^3+\dots$$
# The first term is the two-layer linear network above ($W_2=c_1a^\top$, $W_1=W$). Exercise 7.1.B
# counts the powers of $\varepsilon$ in the gradient. The label-weighted moment
# $\mathbb E[y\,x^{\otimes k}]$ — for balanced $\pm1$ labels half the class difference of $k$-th
# moments — enters at order $\varepsilon^k$. The input moment $\mathbb E[x^{\otimes p}]$ enters at
# $\varepsilon^{p+1}$, because it reaches the gradient only through the output $f$, itself small.
# So the mean difference leads (order $\varepsilon$), the covariance difference follows (order
# $\varepsilon^2$, if $c_2\ne0$), and the linear network's own feedback through
# $\Sigma_{xx}=\mathbb E[xx^\top]$ arrives only at $\varepsilon^3$. This orders the early gradient,
# not the whole of learning: the weights grow and the terms become comparable. Refinetti et al.
# derive the staged order for a single neuron; for wider networks it is observed, not derived.
#
# **Two limits of the expansion.** The NTK linearisation
# $f(x;\theta_0)+\nabla_\theta f(x;\theta_0)\cdot(\theta-\theta_0)$ is linear in the parameters but
# not in $x$: it sees two moments of its *features* $\nabla_\theta f(x;\theta_0)$, which involve all
# moments of $x$ when the pre-activations at initialisation are of order one (Exercise 7.1.C).
# And ReLU is positively homogeneous: small weights do not make $\mathrm{ReLU}(w\cdot x)$ linear in
# $x$, and the expansion does not apply. The staged order is nevertheless observed in ReLU
# networks (demo 7.2.E, and Bardone and Goldt's experiments).

# %% [markdown] nbgrader={"grade": false, "grade_id": "ex71A_statement", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ## Exercise 7.1.A — Linear models see two moments
#
# 1. With $\tilde x=(x,1)$ and $\tilde W=[W,b]$, show that
#    $L=\tfrac12\mathbb E\|y-\tilde W\tilde x\|^2$ depends on the data only through
#    $\mathbb E[yy^\top]$, $\mathbb E[\tilde xy^\top]$ and $\mathbb E[\tilde x\tilde x^\top]$, and derive the
#    gradient flow for $\tilde W$. *Code:* write `loss_from_moments` and `grad_from_moments`,
#    which use the three moment matrices and nothing else.
# 2. Take centred data ($\mathbb E x=0$, $\mathbb E y=0$). Show that $b$ decouples, that
#    $\dot W=\Sigma_{yx}-W\Sigma_{xx}$, and solve this in the eigenbasis of $\Sigma_{xx}$. Check
#    that whitened inputs give the shallow model's $\dot a_\alpha=s_\alpha-a_\alpha$ above. *Code:* write
#    `linear_flow`, the exact solution $W(t)$.
# 3. For balanced $\pm1$ labels, show that a data set and its Gaussian clone have the same
#    $\mathbb E[\tilde x\tilde x^\top]$, $\mathbb E[\tilde xy]$ and $\mathbb E[y^2]$. Conclude that gradient
#    flow on a linear model follows the same trajectory on both.
# 4. Why does the conclusion of 3 fail for the fluctuations of minibatch SGD? Which moment of
#    $x$ enters the covariance of a minibatch gradient?
#
# <details><summary>Hint</summary>
#
# For 2, write $W^*=\Sigma_{yx}\Sigma_{xx}^{-1}$ and $E=W-W^*$; the flow is $\dot E=-E\Sigma_{xx}$.
# For 3, $\mathbb E[xx^\top]=\sum_c\pi_c(C_c+\mu_c\mu_c^\top)$. For 4, the gradient on one example
# is $(\tilde W\tilde x-y)\tilde x^\top$.
# </details>

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex71A_1_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false}
# **7.1.A.1.** For one example, $\|y-\tilde W\tilde x\|^2=y^\top y-2y^\top\tilde W\tilde x+\tilde x^\top\tilde W^\top\tilde W\tilde x$.
# Each term is a scalar, hence its own trace, and the cyclic property moves the data into one
# outer product per term:
# $$\|y-\tilde W\tilde x\|^2=\operatorname{tr}(yy^\top)-2\operatorname{tr}(\tilde W\,\tilde xy^\top)+\operatorname{tr}(\tilde W\,\tilde x\tilde x^\top\,\tilde W^\top).$$
# The expectation is linear and commutes with the trace, so
# $L=\tfrac12\operatorname{tr}\mathbb E[yy^\top]-\operatorname{tr}(\tilde W\,\mathbb E[\tilde xy^\top])+\tfrac12\operatorname{tr}(\tilde W\,\mathbb E[\tilde x\tilde x^\top]\tilde W^\top)$:
# only the three moment matrices appear. Note $\mathbb E[\tilde x\tilde x^\top]$ has blocks
# $\mathbb E[xx^\top]$, $\mathbb E x$ and $1$, and $\mathbb E[\tilde xy^\top]$ stacks $\mathbb E[xy^\top]$ on
# $\mathbb E[y^\top]$. Differentiating ($\partial_{\tilde W}\operatorname{tr}(\tilde WA)=A^\top$,
# $\partial_{\tilde W}\tfrac12\operatorname{tr}(\tilde WB\tilde W^\top)=\tilde WB$ for symmetric $B$):
# $$\nabla_{\tilde W}L=\tilde W\,\mathbb E[\tilde x\tilde x^\top]-\mathbb E[y\tilde x^\top],\qquad
# \dot{\tilde W}=\mathbb E[y\tilde x^\top]-\tilde W\,\mathbb E[\tilde x\tilde x^\top].$$
# This is a linear ODE whose coefficients are the moment matrices, so the whole trajectory from a
# given $\tilde W(0)$ is a function of them. The same holds for full-batch GD, momentum, or any
# rule that sees the data only through $\nabla L$.

# %% nbgrader={"grade": false, "grade_id": "ex71A_moments", "locked": false, "schema_version": 3, "solution": true, "task": false}
def loss_from_moments(Wt: np.ndarray, Eyy: np.ndarray, Exy: np.ndarray, Exx: np.ndarray) -> float:
    """L = (1/2) E||y - Wt x~||^2 computed from the three moment matrices only.

    Wt  : (k, d+1) weights [W, b];  Eyy : (k, k) = E[y y^T];
    Exy : (d+1, k) = E[x~ y^T];     Exx : (d+1, d+1) = E[x~ x~^T], with x~ = (x, 1).
    """
    ### BEGIN SOLUTION
    return float(0.5 * np.trace(Eyy) - np.trace(Wt @ Exy) + 0.5 * np.trace(Wt @ Exx @ Wt.T))
    ### END SOLUTION


def grad_from_moments(Wt: np.ndarray, Exy: np.ndarray, Exx: np.ndarray) -> np.ndarray:
    """The gradient of L with respect to Wt, shape (k, d+1), from the moment matrices only."""
    ### BEGIN SOLUTION
    return Wt @ Exx - Exy.T
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_ex71A_loss", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
import numpy as np
from td_lib.own_work import own_work, passed

_loss = own_work(loss_from_moments, "ex71A_moments")
_rng = np.random.default_rng(0)
_X = _rng.standard_normal((500, 4)) + 0.3
_Y = np.c_[np.sign(_X[:, 0] + _rng.standard_normal(500)), _X[:, 1] ** 2]  # two outputs
_Xt = np.c_[_X, np.ones(500)]
_Wt = _rng.standard_normal((2, 5))
_Eyy, _Exy, _Exx = _Y.T @ _Y / 500, _Xt.T @ _Y / 500, _Xt.T @ _Xt / 500
_L_direct = 0.5 * np.mean(np.sum((_Y - _Xt @ _Wt.T) ** 2, axis=1))
_L = _loss(_Wt, _Eyy, _Exy, _Exx)
assert abs(_L - _L_direct) < 1e-10 * max(1.0, abs(_L_direct)), (
    f"loss_from_moments on a data set of 500 points (k = 2 outputs, d = 4 inputs): expected the "
    f"loss averaged over the examples, {_L_direct:.10g}, got {_L!r}.")
passed("loss_from_moments")
### BEGIN HIDDEN TESTS
for _s in range(3):
    _r = np.random.default_rng(10 + _s)
    _k, _d = 1 + _s, 2 + 2 * _s
    _A = _r.standard_normal((50, _d + 1)) + 0.5 * _r.standard_normal(_d + 1)
    _A[:, -1] = 1
    _B = _r.standard_normal((50, _k)) + 1.0  # E y != 0: the bias column matters
    _W = _r.standard_normal((_k, _d + 1))
    _Ld = 0.5 * np.mean(np.sum((_B - _A @ _W.T) ** 2, axis=1))
    _Lg = _loss(_W, _B.T @ _B / 50, _A.T @ _B / 50, _A.T @ _A / 50)
    assert abs(_Lg - _Ld) < 1e-10 * max(1.0, abs(_Ld)), (
        f"loss_from_moments with k = {_k} outputs, d = {_d} inputs: expected {_Ld:.10g}, got {_Lg!r}.")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_ex71A_grad", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
import numpy as np
from td_lib.own_work import own_work, passed

_grad = own_work(grad_from_moments, "ex71A_moments")
_rng = np.random.default_rng(0)
_X = _rng.standard_normal((500, 4)) + 0.3
_Y = np.c_[np.sign(_X[:, 0] + _rng.standard_normal(500)), _X[:, 1] ** 2]  # two outputs
_Xt = np.c_[_X, np.ones(500)]
_Wt = _rng.standard_normal((2, 5))
_Exy, _Exx = _Xt.T @ _Y / 500, _Xt.T @ _Xt / 500
_G = np.asarray(_grad(_Wt, _Exy, _Exx))
assert _G.shape == _Wt.shape, f"the gradient must have the shape of Wt, {_Wt.shape}; got {_G.shape}"
_G_direct = (_Xt @ _Wt.T - _Y).T @ _Xt / 500  # per-example gradients, averaged
_hint = (" It equals minus the expected gradient: the gradient points uphill, not along the flow."
         if np.abs(_G + _G_direct).max() < 1e-10 else "")
assert np.abs(_G - _G_direct).max() < 1e-10, (
    "grad_from_moments on a data set of 500 points (k = 2 outputs, d = 4 inputs): expected the "
    "average of the per-example gradients, "
    f"max |got - expected| = {np.abs(_G - _G_direct).max():.3e} (expected [0, 0] = "
    f"{_G_direct[0, 0]:.8f}, got {_G[0, 0]:.8f}).{_hint}")
passed("grad_from_moments")
### BEGIN HIDDEN TESTS
import torch as _torch

_Wtt = _torch.tensor(_Wt, requires_grad=True)
_lt = 0.5 * ((_torch.tensor(_Y) - _torch.tensor(_Xt) @ _Wtt.T) ** 2).sum(1).mean()
(_ga,) = _torch.autograd.grad(_lt, _Wtt)
assert np.abs(_G - _ga.numpy()).max() < 1e-10, (
    f"grad_from_moments differs from the autograd gradient of the loss by "
    f"{np.abs(_G - _ga.numpy()).max():.3e}.")
for _s in range(3):
    _r = np.random.default_rng(10 + _s)
    _k, _d = 1 + _s, 2 + 2 * _s
    _A = _r.standard_normal((50, _d + 1)) + 0.5 * _r.standard_normal(_d + 1)
    _A[:, -1] = 1
    _B = _r.standard_normal((50, _k)) + 1.0  # E y != 0: the bias column matters
    _W = _r.standard_normal((_k, _d + 1))
    _Gd = (_A @ _W.T - _B).T @ _A / 50
    _Gg = np.asarray(_grad(_W, _A.T @ _B / 50, _A.T @ _A / 50))
    assert _Gg.shape == _Gd.shape and np.abs(_Gg - _Gd).max() < 1e-10, (
        f"grad_from_moments with k = {_k} outputs, d = {_d} inputs: expected shape {_Gd.shape}, got "
        f"{_Gg.shape}" + (f", max |got - expected| = {np.abs(_Gg - _Gd).max():.3e}"
                          if _Gg.shape == _Gd.shape else "") + ".")
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex71A_2_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false}
# **7.1.A.2.** With $\mathbb E x=0$ the off-diagonal blocks of $\mathbb E[\tilde x\tilde x^\top]$ vanish,
# so the flow splits: $\dot b=\mathbb E y-b=-b$ (hence $b\to0$ and never touches $W$) and
# $\dot W=\Sigma_{yx}-W\Sigma_{xx}$. Assume $\Sigma_{xx}\succ0$, put $W^*=\Sigma_{yx}\Sigma_{xx}^{-1}$
# and $E=W-W^*$. Then $\dot E=\Sigma_{yx}-(E+W^*)\Sigma_{xx}=-E\Sigma_{xx}$, so
# $$W(t)=W^*+\big(W(0)-W^*\big)e^{-\Sigma_{xx}t},\qquad E(t)e_i=e^{-\lambda_it}E(0)e_i$$
# for the eigenpairs $(\lambda_i,e_i)$ of $\Sigma_{xx}$. The error along the input direction $e_i$
# decays at the rate $\lambda_i$, the input variance along it: low-variance directions are learned
# slowly. (This is the linear-model case of §7.3's spectral bias, with kernel $x\cdot x'$.)
#
# Whitened inputs, $\Sigma_{xx}=I$: $\dot W=\Sigma_{yx}-W$. With $u_\alpha,v_\alpha$ the columns of
# $U,V$ in $\Sigma_{yx}=USV^\top$ (Saxe et al.'s notation, not §7.2's spikes) and
# $a_\alpha=u_\alpha^\top Wv_\alpha$, projecting gives $\dot a_\alpha=u_\alpha^\top\Sigma_{yx}v_\alpha-a_\alpha=s_\alpha-a_\alpha$.

# %% nbgrader={"grade": false, "grade_id": "ex71A_flow", "locked": false, "schema_version": 3, "solution": true, "task": false}
from scipy.linalg import expm


def linear_flow(W0: np.ndarray, Syx: np.ndarray, Sxx: np.ndarray, t: float) -> np.ndarray:
    """Exact solution W(t) of the gradient flow dW/dt = Syx - W Sxx from W(0) = W0.

    W0 : (k, d);  Syx : (k, d) = E[y x^T];  Sxx : (d, d) = E[x x^T], positive definite.
    """
    ### BEGIN SOLUTION
    W_star = np.linalg.solve(Sxx.T, Syx.T).T  # Syx Sxx^{-1}
    return W_star + (W0 - W_star) @ expm(-Sxx * t)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_ex71A_flow", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
import numpy as np
from scipy.integrate import solve_ivp

from td_lib.own_work import own_work, passed

_flow = own_work(linear_flow, "ex71A_flow")
_r = np.random.default_rng(1)
_A = _r.standard_normal((3, 3))
_Sxx = _A @ _A.T + 0.5 * np.eye(3)   # not diagonal: the eigenbasis matters
_Syx = _r.standard_normal((2, 3))
_W0 = 0.1 * _r.standard_normal((2, 3))
_sol = solve_ivp(lambda t, w: (_Syx - w.reshape(2, 3) @ _Sxx).ravel(), (0, 1.5), _W0.ravel(),
                 rtol=1e-11, atol=1e-13)
_Wnum = _sol.y[:, -1].reshape(2, 3)
_Wex = np.asarray(_flow(_W0, _Syx, _Sxx, 1.5))
assert _Wex.shape == (2, 3), f"W(t) must have the shape of W0, (2, 3); got {_Wex.shape}"
assert np.abs(_Wex - _Wnum).max() < 1e-8, (
    "linear_flow(W0, Syx, Sxx, t = 1.5) with k = 2, d = 3 and a non-diagonal Sxx: expected a "
    f"high-accuracy numerical solution of the ODE, max |got - expected| = {np.abs(_Wex - _Wnum).max():.2e} "
    f"(expected W[0] = {np.round(_Wnum[0], 6)}, got {np.round(_Wex[0], 6)}).")
_W00 = np.asarray(_flow(_W0, _Syx, _Sxx, 0.0))
assert np.abs(_W00 - _W0).max() < 1e-12, (
    f"linear_flow at t = 0 must return W0; max |W(0) - W0| = {np.abs(_W00 - _W0).max():.2e}.")
passed("linear_flow")
### BEGIN HIDDEN TESTS
_Wst = _Syx @ np.linalg.inv(_Sxx)
_Winf = np.asarray(_flow(_W0, _Syx, _Sxx, 200.0))
assert np.abs(_Winf - _Wst).max() < 1e-8, (
    "linear_flow at t = 200 (long after every mode has relaxed): expected the fixed point of the "
    f"flow, max |got - expected| = {np.abs(_Winf - _Wst).max():.2e}.")
# whitened: a_alpha(t) = s + (a0 - s) e^{-t}
_U, _s, _Vt = np.linalg.svd(_Syx, full_matrices=False)
_Wt3 = np.asarray(_flow(_W0, _Syx, np.eye(3), 0.7))
_a0 = np.einsum("ia,ij,aj->a", _U, _W0, _Vt)
_at = np.einsum("ia,ij,aj->a", _U, _Wt3, _Vt)
_want = _s + (_a0 - _s) * np.exp(-0.7)
assert np.abs(_at - _want).max() < 1e-12, (
    f"linear_flow with whitened inputs (Sxx = I) at t = 0.7: the mode strengths a_alpha should be "
    f"{_want}, got {_at}.")
# a square case (k = d = 4) and a rectangular one with k > d: the multiplication order matters
for _k, _dd, _t in ((4, 4, 0.9), (5, 2, 0.4)):
    _rr = np.random.default_rng(20 + _k)
    _B = _rr.standard_normal((_dd, _dd))
    _Sx = _B @ _B.T + 0.3 * np.eye(_dd)
    _Sy = _rr.standard_normal((_k, _dd))
    _V0 = _rr.standard_normal((_k, _dd))
    _ref = solve_ivp(lambda t, w, Sy=_Sy, Sx=_Sx: (Sy - w.reshape(Sy.shape) @ Sx).ravel(), (0, _t),
                     _V0.ravel(), rtol=1e-12, atol=1e-14).y[:, -1].reshape(_k, _dd)
    _got = np.asarray(_flow(_V0, _Sy, _Sx, _t))
    assert _got.shape == _ref.shape and np.abs(_got - _ref).max() < 1e-8, (
        f"linear_flow with k = {_k}, d = {_dd}, t = {_t}: expected shape {_ref.shape}, got {_got.shape}"
        + (f", max |got - expected| = {np.abs(_got - _ref).max():.2e}" if _got.shape == _ref.shape
           else "") + ".")
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex71A_3_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false}
# **7.1.A.3.** With class probabilities $\tfrac12$ and $y=\pm1$:
# $$\mathbb E[y^2]=1,\quad \mathbb E y=0,\quad \mathbb E x=\tfrac12(\mu_++\mu_-),\quad
# \mathbb E[yx]=\tfrac12(\mu_+-\mu_-),\quad \mathbb E[xx^\top]=\tfrac12\textstyle\sum_\pm(C_\pm+\mu_\pm\mu_\pm^\top).$$
# Every entry of $\mathbb E[\tilde x\tilde x^\top]$, $\mathbb E[\tilde xy]$ and $\mathbb E[y^2]$ is one of these,
# a function of the class means and covariances alone — which the clone matches by
# construction. The three moment matrices agree, so by part 1 the loss functions agree as
# functions of $\tilde W$, and so do the gradient-flow trajectories from the same start. On a finite
# training set the clone has to match the *empirical* class means and covariances; the code
# below builds such a clone and checks it to rounding error.

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex71A_4_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false}
# **7.1.A.4.** A minibatch gradient is the average of $B$ per-example gradients
# $g_i=(\tilde W\tilde x_i-y_i)\tilde x_i^\top$, so its covariance is $\frac1B\operatorname{Cov}(g_i)$. The
# second moment of $g_i$ contains $\mathbb E[(\tilde W\tilde x-y)^2\,\tilde x\tilde x^\top]$, and its part
# $\mathbb E[(\tilde W\tilde x)^2\tilde x\tilde x^\top]$ is a **fourth** moment of $x$ (plus third moments
# through the cross term with $y$). The data and the clone differ in their fourth cumulants, so
# the noise of SGD differs. For a linear model with fresh batches, the *mean* iterate still
# follows full-batch GD exactly (the gradient is linear in $\tilde W$, and the expected update only
# involves second moments), but the fluctuations around it do not.

# %% [markdown]
# **Code check of 7.1.A.3.** An exact empirical clone of the test-bed training set
# (`td_lib.clone.empirical_clone`: Gaussian samples, whitened, then mapped onto each class's
# empirical mean and covariance) and a two-layer *linear* network trained by full-batch GD on
# both (`td_lib.nets.train_two_layer`; width 32, initial weights of size $\varepsilon=0.1$, step
# 0.3, evaluated on 5000 test points from the data distribution).

# %%
torch.set_default_dtype(torch.float64)  # the rest of the notebook in double precision
gen = torch.Generator().manual_seed(0)  # the random stream of the data sets below

# %% tags=["demo"]
d, n = 16, 2000
spikes = mixed_cumulant.orthonormal_spikes(d)
X, Y = mixed_cumulant.sample(n, d, spikes, rng=gen)           # training set
Xt, Yt = mixed_cumulant.sample(5000, d, spikes, rng=gen)      # test set, same distribution
Xc = clone.empirical_clone(X, Y, gen)              # its exact empirical clone
demos.moment_gaps(X, Xc, Y)                        # max |E[xx^T] - E_clone[xx^T]|, max |E[yx] - E_clone[yx]|

T = pick(1500, 150)
lin = nets.train_two_layer(torch.stack([X, Xc]), Y, "linear", 0.1, steps=T, X_test=Xt, y_test=Yt)
print("two-layer linear network: max |f_data - f_clone| on the test set over training:",
      np.abs(lin.out[:, 0] - lin.out[:, 1]).max())

# %% [markdown]
# The empirical moments agree to rounding error, and so do the outputs of the two linear networks
# throughout training. Exercise 7.1.B asks what changes when the network is nonlinear.

# %% [markdown] nbgrader={"grade": false, "grade_id": "ex71B_statement", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ## Exercise 7.1.B — Counting powers of the weight scale
#
# Take $f(x)=\sum_ja_j\sigma(w_j\cdot x)$, $\sigma(z)=\sum_{k\ge1}c_kz^k$, square loss
# $L=\tfrac12\mathbb E(y-f)^2$, with all $a_j$ and $w_j$ of order $\varepsilon$.
#
# 1. Keep only the terms linear in the pre-activations and show that this gives the gradients of
#    the two-layer linear network $c_1a^\top Wx$. Its leading part is the drive
#    $c_1\mathbb E[yx]$, at order $\varepsilon$. At what order does the linear network's feedback
#    through $\Sigma_{xx}$ enter, compared with the $c_2$ term of the full network? Then take the
#    scalar case: one unit, $d=1$, $\mathbb E[x^2]=1$, $s=\mathbb E[yx]>0$, and a balanced start
#    $a=w$. Write the gradient flow of the learned strength $q=c_1aw$ (the slope of $f=qx$) to
#    leading order in $\varepsilon$, give its initial exponential growth rate ($q\propto e^{rt}$:
#    find $r$), and compare it with the rate $2s$ at which the two-layer linear network's strength
#    grows from a small start, $\dot a=2a(s-a)\approx2sa$.
# 2. Write $\nabla_{w_j}L$ as a double series. Show that $\mathbb E[y\,x^{\otimes k}]$ enters with a
#    prefactor of order $\varepsilon^k$ and the moment $\mathbb E[x^{\otimes p}]$ with a prefactor
#    of order $\varepsilon^{p+1}$. Which activation coefficients must be nonzero for each term to
#    appear? *Code:* write `gradient_orders`, which returns the order table for given $c_k$.
# 3. Take an odd activation and no biases. Show that the gradient then contains only odd
#    label-weighted moments $\mathbb E[y\,x^{\otimes k}]$ and even moments $\mathbb E[x^{\otimes p}]$.
#    Conclude that two centred Gaussian classes that differ only in covariance cannot be told
#    apart by such a network at all.
# 4. Suppose every class-conditional cumulant of order 3 vanishes, as in the test bed. Up to what
#    order in $\varepsilon$ must the gradients on the data and on its Gaussian clone agree? At what
#    order can they first differ, for GELU and for $\tanh$? *Code:* write
#    `first_clone_difference_order`, the general rule of this part for any coefficients $c_k$
#    (its docstring states exactly what to count).
#
# <details><summary>Hint</summary>
#
# $\nabla_{w_j}L=-a_j\,\mathbb E\big[(y-f(x))\,\sigma'(w_j\cdot x)\,x\big]$ with
# $\sigma'(z)=\sum_kkc_kz^{k-1}$; expand $f$ too. For 3, an odd $f$ satisfies $f(-x)=-f(x)$, and a
# centred Gaussian is symmetric under $x\mapsto-x$. For 4, in a class whose third cumulant
# vanishes, the moments up to order 3 are fixed by the mean and the covariance.
# </details>

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex71B_1_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# **7.1.B.1.** To linear order, $\sigma(w_j\cdot x)\approx c_1w_j\cdot x$, $\sigma'\approx c_1$ and
# $f\approx c_1a^\top Wx$, so
# $$\nabla_{a_j}L\approx-c_1\big(\Sigma_{yx}-c_1a^\top W\Sigma_{xx}\big)w_j,\qquad
# \nabla_{w_j}L\approx-c_1a_j\big(\Sigma_{yx}-c_1a^\top W\Sigma_{xx}\big)^\top,$$
# exactly the gradients of $\tfrac12\mathbb E(y-c_1a^\top Wx)^2$. The drive $c_1\Sigma_{yx}$ carries
# one weight: order $\varepsilon$. The feedback $c_1^2a^\top W\Sigma_{xx}$ carries three: order
# $\varepsilon^3$, *smaller* than the order-$\varepsilon^2$ term $2c_2a_j\mathbb E[y(w_j\cdot x)x]$ of
# the full network (part 2). If $\mathbb E[yx]=0$, which term leads depends on the first
# coefficient and statistic that survive; with an odd activation and centrally symmetric classes
# every odd label moment vanishes and the $\varepsilon^3$ feedback can be the leading term.
#
# Scalar, whitened, balanced case: $f=c_1awx$, $s=\mathbb E[yx]$, $a=w$. With $q=c_1aw$:
# $\dot a=c_1w(s-q)$, $\dot w=c_1a(s-q)$, so $\dot q=c_1^2(a^2+w^2)(s-q)=2c_1q(s-q)$. Only the
# start is inside the expansion: $q\propto e^{2c_1st}$, growth rate $2c_1s$ instead of the linear network's $2s$,
# so GELU ($c_1=\tfrac12$) starts this mode half as fast as a linear network with the same
# weights. The saturation of the linear network's sigmoid needs $q\approx s$, i.e. $aw=O(1)$, where the expansion
# has failed. For balanced $\pm1$ labels $\Sigma_{yx}=\tfrac12(\mu_+-\mu_-)^\top$ has rank one, so the
# first direction learned is the mean difference.

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex71B_2_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false}
# **7.1.B.2.** Insert $\sigma'(z)=\sum_kkc_kz^{k-1}$ and $f=\sum_ia_i\sum_lc_l(w_i\cdot x)^l$ into the hint:
# $$\nabla_{w_j}L=-a_j\sum_{k\ge1}kc_k\,\mathbb E\big[y\,(w_j\cdot x)^{k-1}x\big]
# +a_j\sum_{k\ge1}\sum_{l\ge1}kc_kc_l\sum_ia_i\,\mathbb E\big[(w_i\cdot x)^l(w_j\cdot x)^{k-1}x\big].$$
# The first sum contracts $\mathbb E[y\,x^{\otimes k}]$ with $k-1$ copies of $w_j$ and carries
# $a_jw_j^{k-1}$: order $\varepsilon^k$, present only if $c_k\ne0$. The second contracts the input
# moment $\mathbb E[x^{\otimes p}]$ of order $p=k+l$ and carries $a_ja_iw_i^lw_j^{k-1}$: order
# $\varepsilon^{p+1}$, present only if $c_kc_l\ne0$ for some $k+l=p$, $k,l\ge1$. The series for
# $\nabla_aL=-\mathbb E[(y-f)\sigma(w_j\cdot x)]$ gives the same orders ($c_kw_j^k$ against
# $\mathbb E[yx^{\otimes k}]$, and $a_ic_kc_lw_j^kw_i^l$ against $\mathbb E[x^{\otimes(k+l)}]$).
#
# | order | label-weighted statistic | input moment |
# |---|---|---|
# | $\varepsilon$ | $\mathbb E[yx]$ (needs $c_1$) | — |
# | $\varepsilon^2$ | $\mathbb E[y\,x^{\otimes2}]$ (needs $c_2$) | — |
# | $\varepsilon^3$ | $\mathbb E[y\,x^{\otimes3}]$ (needs $c_3$) | $\mathbb E[x^{\otimes2}]$ (needs $c_1^2$) |
# | $\varepsilon^4$ | $\mathbb E[y\,x^{\otimes4}]$ (needs $c_4$) | $\mathbb E[x^{\otimes3}]$ (needs $c_1c_2$) |
# | $\varepsilon^5$ | $\mathbb E[y\,x^{\otimes5}]$ (needs $c_5$) | $\mathbb E[x^{\otimes4}]$ (needs $c_1c_3$ or $c_2^2$) |
#
# These are the earliest orders at which each statistic can appear. What must be small is the
# pre-activation $w\cdot x$, not the weights as such; once it grows, all terms are comparable.

# %% nbgrader={"grade": false, "grade_id": "ex71B_orders", "locked": false, "schema_version": 3, "solution": true, "task": false}
def gradient_orders(c: dict, max_order: int) -> dict:
    """The order table of 7.1.B.2 for sigma(z) = sum_k c[k] z^k (a missing key, or a key whose
    value is 0, means c_k = 0; keys beyond max_order may be present and matter only through the
    entries below).

    Return a dict with keys
      ("label", k) for 1 <= k <= max_order   -- the statistic E[y x^{(x)k}],
      ("input", p) for 2 <= p <= max_order-1 -- the input moment E[x^{(x)p}],
    and as value the power of eps at which that statistic enters the gradient of the loss,
    or None if it never enters (the required coefficients vanish).
    """
    ### BEGIN SOLUTION
    nz = {k for k, v in c.items() if v != 0}
    out = {}
    for k in range(1, max_order + 1):
        out[("label", k)] = k if k in nz else None
    for p in range(2, max_order):
        ok = any(k in nz and (p - k) in nz for k in range(1, p))
        out[("input", p)] = p + 1 if ok else None
    return out
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_ex71B_orders", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
import math
from td_lib.own_work import own_work, passed

_orders = own_work(gradient_orders, "ex71B_orders")
_all = {k: 1.0 for k in range(1, 8)}
_t = _orders(_all, 5)
_keys = {("label", k) for k in range(1, 6)} | {("input", p) for p in range(2, 5)}
assert set(_t) == _keys, (
    f"gradient_orders(c, max_order = 5): expected the keys {sorted(_keys)}, got {sorted(_t)} "
    f"(missing {sorted(_keys - set(_t))}, extra {sorted(set(_t) - _keys)}).")
_lab = [_t[("label", k)] for k in range(1, 6)]
assert _lab == [1, 2, 3, 4, 5], (
    f"all c_k = 1, max_order = 5: expected the orders of ('label', 1..5) to be [1, 2, 3, 4, 5], got {_lab}.")
_inp = [_t[("input", p)] for p in (2, 3, 4)]
assert _inp == [3, 4, 5], (
    f"all c_k = 1, max_order = 5: expected the orders of ('input', 2..4) to be [3, 4, 5], got {_inp}.")
_gelu_c = {1: 0.5, 2: 1 / math.sqrt(2 * math.pi), 3: 0.0, 4: -1 / (6 * math.sqrt(2 * math.pi))}
_g = _orders(_gelu_c, 5)
assert (_g[("label", 3)], _g[("label", 4)]) == (None, 4), (
    "GELU coefficients (c_3 = 0.0 is given as a key with value zero), max_order = 5: expected "
    f"('label', 3) -> None and ('label', 4) -> 4, got {_g[('label', 3)]} and {_g[('label', 4)]}.")
passed("gradient_orders")
### BEGIN HIDDEN TESTS
_tanh_c = {1: 1.0, 3: -1 / 3, 5: 2 / 15, 7: -17 / 315}
_h = _orders(_tanh_c, 8)
_hl, _hi = [_h.get(("label", k), "missing") for k in range(1, 9)], [_h.get(("input", p), "missing")
                                                                   for p in range(2, 8)]
assert _hl == [1, None, 3, None, 5, None, 7, None], (
    f"tanh coefficients (c_1, c_3, c_5, c_7), max_order = 8: expected ('label', 1..8) -> "
    f"[1, None, 3, None, 5, None, 7, None], got {_hl}.")
assert _hi == [3, None, 5, None, 7, None], (
    f"tanh coefficients, max_order = 8: expected ('input', 2..7) -> [3, None, 5, None, 7, None], got {_hi}.")
_gi = (_g[("input", 3)], _g[("input", 4)], _g[("label", 5)])
assert _gi == (4, 5, None), (
    f"GELU coefficients (c_1..c_4), max_order = 5: expected ('input', 3), ('input', 4), ('label', 5) "
    f"-> (4, 5, None), got {_gi}.")
_q = _orders({2: 1.0}, 6)  # pure quadratic
_ql = [_q.get(("label", k), "missing") for k in range(1, 7)]
_qi = [_q.get(("input", p), "missing") for p in range(2, 6)]
assert (_ql, _qi) == ([None, 2, None, None, None, None], [None, None, 5, None]), (
    f"sigma(z) = z^2 (only c_2 = 1), max_order = 6: expected ('label', 1..6) -> "
    f"[None, 2, None, None, None, None] and ('input', 2..5) -> [None, None, 5, None], got {_ql} and {_qi}.")
_z = _orders({1: 1.0, 2: 0.0, 3: 2.0, 4: 0.0, 9: 1.0}, 4)  # zero values mean c_k = 0; c_9 is beyond reach
_zk = {("label", k) for k in range(1, 5)} | {("input", p) for p in range(2, 4)}
assert set(_z) == _zk and [_z[("label", k)] for k in range(1, 5)] == [1, None, 3, None] \
        and [_z[("input", p)] for p in (2, 3)] == [3, None], (
    "c = {1: 1, 2: 0, 3: 2, 4: 0, 9: 1}, max_order = 4: expected {('label', 1): 1, ('label', 2): None, "
    "('label', 3): 3, ('label', 4): None, ('input', 2): 3, ('input', 3): None}, got "
    f"{dict(sorted(_z.items(), key=str))}.")
### END HIDDEN TESTS

# %% tags=["demo"]
# The order table of your gradient_orders for generic coefficients, for GELU and for tanh
demos.order_table_demo(gradient_orders)

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex71B_3_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# **7.1.B.3.** An odd $\sigma$ has $c_k=0$ for every even $k$. In the first sum only odd $k$
# survive: only odd label-weighted moments appear. In the second both $k$ and $l$ are odd, so
# $p=k+l$ is even. The covariance difference $\mathbb E[y\,x^{\otimes2}]=\tfrac12(C_+-C_-)$ of
# centred classes therefore never appears, at any order.
#
# For the classifier itself: an odd $\sigma$ without biases makes $f$ odd, $f(-x)=-f(x)$. A
# centred Gaussian class is symmetric under $x\mapsto-x$, so
# $P_\pm(f(x)>0)=P_\pm(f(-x)>0)=P_\pm(f(x)<0)$: each class is split evenly by the sign of $f$
# (ties $f=0$ aside), and the accuracy is exactly chance, whatever the weights. This needs the
# symmetry of the class laws; equal means are not enough (a zero-mean but skewed class can be
# partly separated by $\mathrm{sign}(x)$).
#
# To see a covariance difference the network needs an even part. With $c_2\ne0$, as for GELU
# (which is why the demo uses it), it enters at order $\varepsilon^2$; higher even coefficients
# see it later (for centred scalar classes with standard deviations $s_\pm$,
# $\mathbb E[yx^4]=\tfrac32(s_+^4-s_-^4)$ enters through $c_4$ at $\varepsilon^4$). Biases also create
# even terms: a bias of order $\varepsilon$ in $\tanh$ gives a quadratic coefficient
# $\tfrac12\sigma''(b)\approx3c_3b=O(\varepsilon)$, and the covariance term then appears at $\varepsilon^3$.

# %% nbgrader={"grade": false, "grade_id": "ex71B_clone_order", "locked": false, "schema_version": 3, "solution": true, "task": false}
def first_clone_difference_order(c: dict, max_order: int = 12):
    """For data whose class-conditional third cumulants vanish (as in the test bed), the
    lowest power of eps at which the gradient on the data can differ from the gradient on its
    Gaussian clone, for sigma(z) = sum_k c[k] z^k (a missing key or a zero value means c_k = 0).

    What to count (the answer of part 4 in general form): the data and the clone share every
    statistic of the 7.1.B.2 table of order at most 3 and may differ in every statistic of order
    4 or more, namely
      * the label-weighted moments E[y x^{(x)k}] with k >= 4, and
      * the input moments E[x^{(x)p}] with p >= 4,
    each entering at the power of eps given by the table of 7.1.B.2 (and only if the
    coefficients it needs are nonzero). Return the lowest such power if it is <= max_order
    (max_order itself included), None otherwise.
    """
    ### BEGIN SOLUTION
    nz = {k for k, v in c.items() if v != 0}
    # label moments E[y x^k], k >= 4, at eps^k (need c_k); input moments E[x^p], p >= 4,
    # at eps^(p+1) (need c_k c_l != 0 with k + l = p)
    cand = [k for k in nz if 4 <= k <= max_order]
    cand += [p + 1 for p in range(4, max_order)
             if any(k in nz and (p - k) in nz for k in range(1, p))]
    return min(cand) if cand else None
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_ex71B_clone_order", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
import math
from td_lib.own_work import own_work, passed

_first = own_work(first_clone_difference_order, "ex71B_clone_order")
for _c, _want in (({1: 1.0, 3: 0.2, 4: 0.1}, 4), ({1: 1.0, 2: 0.4, 6: 0.1}, 5), ({3: 1.0, 4: 0.0, 6: 0.2}, 6)):
    _got = _first(_c)
    assert _got == _want, (f"first_clone_difference_order({_c}): expected {_want}, got {_got!r} "
                           "(the docstring lists every statistic to count).")
passed("first_clone_difference_order")
### BEGIN HIDDEN TESTS
_gelu_c = {1: 0.5, 2: 1 / math.sqrt(2 * math.pi), 3: 0.0, 4: -1 / (6 * math.sqrt(2 * math.pi))}
for _name, _c, _kw, _want in (
        ("GELU (c_1..c_4)", _gelu_c, {}, 4),
        ("tanh (c_1, c_3, c_5)", {1: 1.0, 3: -1 / 3, 5: 2 / 15}, {}, 5),
        ("sigma(z) = z", {1: 1.0}, {}, None),
        ("sigma(z) = z^2", {2: 1.0}, {}, 5),
        ("c = {1: 1, 7: 1}", {1: 1.0, 7: 1.0}, {}, 7),
        ("c = {1: 1, 7: 1}, max_order = 6", {1: 1.0, 7: 1.0}, {"max_order": 6}, None),
        ("c = {1: 1, 4: 0.0, 5: 0.3} (c_4 = 0 given as a key)", {1: 1.0, 4: 0.0, 5: 0.3}, {}, 5),
        ("c = {2: 1}, max_order = 4", {2: 1.0}, {"max_order": 4}, None),
        # the boundaries the docstring states: max_order included, k >= 4, p >= 4
        ("c = {2: 1}, max_order = 5 (an input moment at exactly max_order)", {2: 1.0}, {"max_order": 5}, 5),
        ("c = {1: 1, 4: 1}, max_order = 4 (a label moment at exactly max_order)", {1: 1.0, 4: 1.0},
         {"max_order": 4}, 4),
        ("c = {3: 1} (a label moment of order 3 is shared with the clone)", {3: 1.0}, {}, 7),
        ("c = {1: 1, 2: 1} (an input moment of order 3 is shared with the clone)", {1: 1.0, 2: 1.0}, {}, 5)):
    _got = _first(_c, **_kw)
    assert _got == _want, f"first_clone_difference_order for {_name}: expected {_want}, got {_got!r}."
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex71B_4_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false}
# **7.1.B.4.** The clone matches each class's mean and covariance. In a class with zero third
# cumulant, $\mathbb E_c[x^{\otimes3}]=\mu_c^{\otimes3}+3\,\mathrm{sym}(\mu_c\otimes C_c)$, the same as
# for the Gaussian with that mean and covariance. So all class-conditional moments up to order 3
# agree, and with them every statistic of the table up to $\mathbb E[y\,x^{\otimes3}]$ and
# $\mathbb E[x^{\otimes3}]$: the two gradients agree through order $\varepsilon^3$, exactly, as
# functions of the weights.
#
# The fourth moments differ by the fourth cumulants. For GELU ($c_4\ne0$) the first possible
# difference is $\mathbb E[y\,x^{\otimes4}]$ at order $\varepsilon^4$. For $\tanh$ ($c_2=c_4=0$) it is
# order $\varepsilon^5$, through $\mathbb E[x^{\otimes4}]$ and $\mathbb E[y\,x^{\otimes5}]$. In the test
# bed, for example, with $x_m=m\cdot x$, $x_v=v\cdot x$ and $\kappa_4=\kappa_4(v\cdot x)$,
# $\mathbb E[y\,x_mx_v^4]=\tfrac12\beta_m(3+\kappa_4)$ on the data and $\tfrac32\beta_m$ on the clone.
# Relative to the leading $O(\varepsilon)$ gradient the difference starts at $O(\varepsilon^3)$ (GELU)
# or $O(\varepsilon^4)$ ($\tanh$).

# %% [markdown]
# **Check of 7.1.B.4 by exact population gradients.** On the test bed the data differ from the
# clone only along $v$, and there class $+1$ is a mixture of two Gaussians, so both losses are
# expectations over Gaussian mixtures. The gradient of $f=\sum_ja_j\sigma(w_j\cdot x)$ involves
# at most two pre-activations at a time ($f$ is a sum over units), and the factor $x$ in
# $\nabla_{w_j}L$ is removed by Gaussian integration by parts, so every expectation is a
# two-dimensional Gauss–Hermite integral (`td_lib.nets.mixture_population_gradient`). We take the demo's
# initial weights (width 32, seed 0) scaled to size $\varepsilon$ and fit
# $\|\nabla L_{\rm data}-\nabla L_{\rm clone}\|\propto\varepsilon^p$ over
# $\varepsilon\in[0.01,0.1]$. On nine points, with 20 quadrature nodes (our computation, done
# beforehand), the fitted exponent is ≈ 4.00 for GELU
# and ≈ 4.97 for $\tanh$, as predicted; the cell below fits five points with 16 nodes (three
# points and 10 nodes in the quick run), which gives slightly different slopes.
# The local exponent tends to exactly 4 and 5 as $\varepsilon\to0$;
# at $\varepsilon=0.1$ the local GELU exponent is 3.96.
# (Errata: an earlier version of these notes printed 3.97 and 4.98 without stating
# the range of $\varepsilon$ of the fit.)
# We also compared the GELU coefficient of $\varepsilon^4$ with the prediction of 7.1.B.4, and they
# agree: the only difference at that order is $c_4\,\mathbb E[y\,x^{\otimes4}]$, which differs by
# $\tfrac12\kappa_4\,v^{\otimes4}$.

# %% tags=["demo"]
# the demo's initial weights (width 32, seed 0) scaled to size eps; the gap between the exact
# population gradients on the data (class +1: two Gaussian bumps along v) and on the clone
eps_grid, NODES, theory = np.geomspace(0.01, 0.1, pick(5, 3)), pick(16, 10), {"gelu": 4, "tanh": 5}
quick_note(f"{len(eps_grid)} values of eps and {NODES} quadrature nodes")
gaps, fits = demos.clone_gradient_fits(spikes, theory, eps_grid, nodes=NODES, width=32, rng=0)  # and the slopes
demos.gradient_gap_figure(eps_grid, gaps, fits, theory, title="population gradients, data vs clone")
plt.show()

# %% [markdown]
# ### Demo: a small-initialisation GELU network on the data and on its clone
#
# The same training set, clone and trainer as in the check of 7.1.A, now with GELU. Both networks
# are evaluated on real test data.

# %% tags=["demo"]
g = nets.train_two_layer(torch.stack([X, Xc]), Y, "gelu", 0.1, steps=T, X_test=Xt, y_test=Yt,
                         progress="GELU on data and clone")
gap = demos.relative_output_gap(g.out)
demos.clone_training_figure(g, gap, {"Bayes, means only": acc_m, "Bayes, means + covariances": acc_mu},
                            title="GELU net, small init")
plt.show()

quick_note(f"{T} GD steps instead of 1500, recorded at fewer steps, so most steps below are missing")
demos.clone_run_report(g, gap, steps=(1, 20, 56, 256, 1500))  # accuracies, output gap, pre-activations

# %% [markdown]
# **Reading the plot** (numbers from this seeded run, full mode; quick mode stops at step 150).
# Left: a two-stage staircase.
# The accuracy reaches 0.68 by step 56 (the mean difference), stalls,
# and climbs again to 0.73 at step 256,
# above the 0.691 that the means alone allow:
# the network now uses the variance difference along $u$, through the even part of GELU. The
# data- and clone-trained curves stay together, so in these GD steps the $v$ signal brings no
# advantage (§7.2 computes how long online SGD needs). Right: while the pre-activations stay near
# their initial size, the outputs of the two networks differ only by
# $1.2\times10^{-4}$ relative at step 1
# and $1.8\times10^{-3}$ at step 20
# (consistent with 7.1.B.4; on a finite sample the empirical clone also differs from the data
# in every moment beyond the second). Once the pre-activations grow, the gap reaches
# 0.23 at step 256
# and 0.45 at step 1500, while the accuracies stay together.

# %% [markdown] nbgrader={"grade": false, "grade_id": "ex71C_statement", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ## Exercise 7.1.C — What a linearised network sees: two moments of its features
#
# This checks that a linearised (NTK) network is *not* limited to two moments of $x$.
#
# 1. For $f(x)=\sum_ja_j\sigma(w_j\cdot x)$ with parameters $\theta=(a_j,w_j)_j$ at their initial
#    values $\theta_0$, write down the tangent features $\phi(x)=\nabla_\theta f(x;\theta_0)$ and the
#    empirical NTK $K(x,x')=\phi(x)\cdot\phi(x')$. *Code:* write `empirical_ntk`.
# 2. Show that the square loss of the linearised model
#    $f_{\rm lin}(x;\theta)=f(x;\theta_0)+\phi(x)\cdot(\theta-\theta_0)$ depends on the data through
#    $\mathbb E[\phi\phi^\top]$, $\mathbb E[\phi\,(y-f_0)]$ and $\mathbb E[(y-f_0)^2]$.
# 3. One input dimension, one unit, $\sigma=\tanh$, feature $\phi_a(x)=\tanh(wx)$. Compare
#    $x\sim\mathcal N(0,1)$ with $x$ uniform on $\{-1,+1\}$ (same mean and variance). Compute
#    $\mathbb E[\tanh^2(wx)]$ for both at $w=1$, and expand in small $w$ to find the order at
#    which they first differ. *Code:* write `tanh_sq_moment`.
#
# <details><summary>Hint</summary>
#
# $\tanh u=u-\tfrac{u^3}3+\tfrac{2u^5}{15}-\dots$, so
# $\tanh^2u=u^2-\tfrac23u^4+\tfrac{17}{45}u^6-\dots$ The Gaussian value at $w=1$ needs a
# numerical integral.
# </details>

# %% nbgrader={"grade": false, "grade_id": "ex71C_ntk", "locked": false, "schema_version": 3, "solution": true, "task": false}
def empirical_ntk(X1: torch.Tensor, X2: torch.Tensor, W: torch.Tensor, a: torch.Tensor,
                  act: str) -> torch.Tensor:
    """Empirical NTK K(x, x') = grad_theta f(x) . grad_theta f(x') of f(x) = sum_j a_j sigma(w_j.x),
    theta = (a, W), for all pairs of rows of X1 (n1, d) and X2 (n2, d); returns (n1, n2).
    act is an activation name ("tanh", "gelu", ...): nets.activation(act) is the pair
    (sigma, sigma')."""
    ### BEGIN SOLUTION
    sig, dsig = nets.activation(act)
    P1, P2 = X1 @ W.T, X2 @ W.T
    K_a = sig(P1) @ sig(P2).T
    K_w = ((dsig(P1) * a**2) @ dsig(P2).T) * (X1 @ X2.T)
    return K_a + K_w
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_ex71C_ntk", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
import torch
from td_lib.own_work import own_work, passed

_ntk = own_work(empirical_ntk, "ex71C_ntk")
_gn = torch.Generator().manual_seed(0)
_W, _a, _X1, _X2 = (torch.randn(*_s, generator=_gn, dtype=torch.float64) for _s in ((5, 3), (5,), (4, 3), (6, 3)))
# K = J(X1) J(X2)^T of this network (tanh), with the Jacobian rows from autograd
# BAKED two_layer_ntk_visible (expected values computed on the instructor's side: checks/grading/baked_values/td2_7_1_two_moments.json)
_Kref = torch.tensor(_Kref, dtype=torch.float64)
_K = torch.as_tensor(_ntk(_X1, _X2, _W, _a, "tanh"))
assert tuple(_K.shape) == (4, 6), f"K must have shape (n1, n2) = (4, 6), got {tuple(_K.shape)}"
_err = (_K - _Kref).abs().max().item()
assert _err < 1e-12, (
    "empirical_ntk for tanh, N = 5 units, d = 3, n1 = 4, n2 = 6: expected the product of the "
    f"autograd Jacobians, max |got - expected| = {_err:.2e} (expected K[0, 0] = {_Kref[0, 0].item():.10f}, "
    f"got {_K[0, 0].item():.10f}).")
passed("empirical_ntk")
### BEGIN HIDDEN TESTS
_gm = torch.Generator().manual_seed(5)
_W4 = 0.7 * torch.randn(4, 4, generator=_gm, dtype=torch.float64)
_a4 = torch.rand(4, generator=_gm, dtype=torch.float64) + 0.5
_X4 = torch.randn(3, 4, generator=_gm, dtype=torch.float64)
# the autograd NTK for other activations at the same point, and at (X4, W4, a4) for GELU
# BAKED two_layer_ntk_hidden (expected values computed on the instructor's side: checks/grading/baked_values/td2_7_1_two_moments.json)
_Krefs = {_act: torch.tensor(_Kr, dtype=torch.float64) for _act, _Kr in _Krefs.items()}
_Kr4 = torch.tensor(_Kr4, dtype=torch.float64)
_cases = [(f"empirical_ntk for act = {_act!r} (same W, a, X1, X2)", (_X1, _X2, _W, _a, _act), _Kr, (4, 6))
          for _act, _Kr in _Krefs.items()]
# another point: a square W (d = N = 4), positive readouts, X2 = X1
_cases.append(("empirical_ntk(X, X, W, a, 'gelu') with d = N = 4", (_X4, _X4, _W4, _a4, "gelu"), _Kr4, (3, 3)))
for _what, _args, _Kr, _shape in _cases:
    _Kg = torch.as_tensor(_ntk(*_args))
    _e = (_Kg - _Kr).abs().max().item() if tuple(_Kg.shape) == _shape else float("inf")
    assert _e < 1e-12, (f"{_what}: expected the product of the autograd Jacobians, got shape {tuple(_Kg.shape)}, "
                        f"max |got - expected| = {_e:.2e}.")
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex71C_12_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false}
# **7.1.C.1.** $\partial f/\partial a_j=\sigma(w_j\cdot x)$ and $\partial f/\partial w_j=a_j\sigma'(w_j\cdot x)\,x$, so
# $$K(x,x')=\sum_j\sigma(w_j\cdot x)\,\sigma(w_j\cdot x')+\Big(\sum_ja_j^2\,\sigma'(w_j\cdot x)\,\sigma'(w_j\cdot x')\Big)\,x\cdot x',$$
# with all weights at their initial values.
#
# **7.1.C.2.** $f_{\rm lin}$ is linear in $\theta$, with features $\phi(x)$ and offset
# $f_0(x)=f(x;\theta_0)$. With $\Delta=\theta-\theta_0$ and $r_0=y-f_0(x)$,
# $$\tfrac12\mathbb E(y-f_{\rm lin})^2=\tfrac12\mathbb E[r_0^2]-\Delta^\top\mathbb E[\phi\,r_0]+\tfrac12\Delta^\top\mathbb E[\phi\phi^\top]\Delta.$$
# This is 7.1.A with $x$ replaced by $\phi(x)$ and $y$ by $r_0$: the linearised model sees the
# first two moments *of its features*. These are not two moments of $x$: for instance
# $\mathbb E[\phi_{a_i}\phi_{a_j}]=\mathbb E[\sigma(w_i\cdot x)\sigma(w_j\cdot x)]$ depends on the whole
# joint law of $(w_i\cdot x,w_j\cdot x)$.

# %% nbgrader={"grade": false, "grade_id": "ex71C_tanh", "locked": false, "schema_version": 3, "solution": true, "task": false}
def tanh_sq_moment(w: float, kind: str) -> float:
    """E[tanh(w x)^2] for x ~ N(0, 1) (kind = "gaussian") or x uniform on {-1, +1}
    (kind = "rademacher"), accurate to 1e-12."""
    ### BEGIN SOLUTION
    from scipy.integrate import quad

    if kind == "rademacher":
        return math.tanh(w) ** 2
    if kind == "gaussian":
        f = lambda x: math.tanh(w * x) ** 2 * math.exp(-x * x / 2)
        return 2 * quad(f, 0, np.inf, epsabs=1e-15, epsrel=1e-13, limit=200)[0] / math.sqrt(2 * math.pi)
    raise ValueError(f"kind must be 'gaussian' or 'rademacher', got {kind!r}")
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_ex71C_tanh", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
import numpy as np
import math
from td_lib.own_work import own_work, passed

_tsq = own_work(tanh_sq_moment, "ex71C_tanh")
_v = _tsq(0.5, "rademacher")
assert abs(_v - 0.21355226703407) < 1e-12, (
    f"tanh_sq_moment(0.5, 'rademacher'): expected 0.21355226703407, got {_v!r}.")
_v = _tsq(0.8, "gaussian")
assert abs(_v - 0.31498492072347) < 1e-11, (
    f"tanh_sq_moment(0.8, 'gaussian'): expected 0.31498492072347, got {_v!r}"
    + (" (that is within 1e-3: is the integral accurate to 1e-12?)" if abs(_v - 0.31498492072347) < 1e-3
       else "") + ".")
_d15 = _tsq(0.15, "gaussian") - _tsq(0.15, "rademacher")
assert abs(_d15 + 6.1952722313e-4) < 1e-10, (
    f"at w = 0.15, Gaussian minus Rademacher: expected -6.1952722313e-04, got {_d15:.10e}; the two "
    "values must each be accurate to ~1e-12 for their difference to be right.")
passed("tanh_sq_moment")
### BEGIN HIDDEN TESTS
from scipy.integrate import quad as _quad


def _gauss_ref(w):
    return _quad(lambda x: np.tanh(w * x) ** 2 * np.exp(-x * x / 2), -40, 40, epsabs=1e-14,
                 epsrel=1e-13, limit=400, points=[0.0])[0] / math.sqrt(2 * math.pi)


_cases = [(1.0, "rademacher", math.tanh(1.0) ** 2), (1.0, "gaussian", _gauss_ref(1.0)),
          (0.7, "gaussian", _gauss_ref(0.7)), (2.5, "gaussian", _gauss_ref(2.5)),
          (-0.7, "gaussian", _gauss_ref(0.7)), (-1.3, "rademacher", math.tanh(1.3) ** 2)]
_diffs = {_w: _gauss_ref(_w) - math.tanh(_w) ** 2 for _w in (0.02, 0.03)}
del _gauss_ref  # references computed before the graded calls
_v0 = _tsq(0.0, "gaussian")
assert abs(_v0) < 1e-15, f"tanh_sq_moment(0.0, 'gaussian'): expected 0, got {_v0!r}."
for _w, _kind, _want in _cases:
    _v = _tsq(_w, _kind)
    assert abs(_v - _want) < 1e-11, (
        f"tanh_sq_moment({_w}, {_kind!r}): expected {_want:.13f}, got {_v!r}.")
for _w, _want in _diffs.items():
    _dd = _tsq(_w, "gaussian") - _tsq(_w, "rademacher")
    assert abs(_dd - _want) < 1e-12, (
        f"at w = {_w}, Gaussian minus Rademacher: expected {_want:.6e} to within 1e-12, got {_dd:.6e} "
        f"(off by {abs(_dd - _want):.1e}).")
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex71C_3_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false}
# **7.1.C.3.** For $x=\pm1$, $\mathbb E\tanh^2(wx)=\tanh^2w$, which is 0.5800 at $w=1$. For
# $x\sim\mathcal N(0,1)$ a numerical integral gives 0.3943. The same first two moments of $x$ give
# feature second moments 47 % apart at an ordinary weight scale. For small $w$,
# $$\mathbb E\tanh^2(wx)=w^2\,\mathbb Ex^2-\tfrac23w^4\,\mathbb Ex^4+\tfrac{17}{45}w^6\,\mathbb Ex^6-\tfrac{62}{315}w^8\,\mathbb Ex^8+\dots$$
# with $\mathbb Ex^2=1$ for both, $\mathbb Ex^4=3$ against $1$, $\mathbb Ex^6=15$ against $1$. The two agree
# at order $w^2$ and first differ at order $w^4$, by $-\tfrac43w^4$ (Gaussian minus Rademacher).
# At $w=0.1$ the exact difference is −1.282e-4; the series through $w^6$ gives −1.280e-4 (through
# $w^4$ alone, −1.333e-4; through $w^8$, −1.2825e-4).
#
# So what limits a model to two moments of $x$ is small pre-activations, not linearity in the
# parameters. A lazy network at standard initialisation has pre-activations of order one and
# uses higher moments from the start. With small initialisation its features are nearly linear
# in $x$, and 7.1.B and this exercise give the same ordering.

# %% tags=["demo"]
# your tanh_sq_moment at w = 1 and 0.1, and the small-w series of the difference at w = 0.1
demos.tanh_moment_demo(tanh_sq_moment)

# %%
torch.set_default_dtype(torch.float32)  # back to torch's default
