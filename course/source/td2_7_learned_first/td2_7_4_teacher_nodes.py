# %% [markdown]
# # §7.4 Which teacher node first: specialisation in a teacher–student ReLU network
#
# §7.1–7.3 asked which *statistics* of the data a network uses first. Here the data come
# from another network, a **teacher**, and the question becomes: which of the teacher's
# hidden nodes does a **student** network copy first? The answer (Tian 2020) is the nodes
# with the largest fan-out weights, the ones that contribute most to the teacher's output;
# weak nodes come late, sometimes very late, and spare student nodes help.
#
# **Route.** Readings; the core idea; the paper's precise statements (boxed), two
# corrections to the printed paper and one constant it leaves unstated; four demos (the
# strong-first staircase, the effect of over-realisation, one focus shift, and the paper's
# Fig. 8: in a deep teacher the lowest layer is learned first); Exercise 7.4.A (Theorem 6 by
# Monte Carlo); Demo 7.4.5 (does the dynamics of eq. 10 inherit Theorem 6's misprint?);
# Exercise 7.4.B (the angle dynamics near $\theta=\pi$), autograded like 7.4.A;
# Exercise 7.4.C (Theorem 7, a derivation graded by hand); a comparison of what
# "learned first" means across §7.
#
# ## Readings
#
# **The key paper.** Yuandong Tian, *Student specialization in deep ReLU networks with
# finite width and input dimension*, arXiv:1909.13458 (2019); a revised version appeared at
# ICML 2020 (PMLR 119:9470–9480) as *Student specialization in deep rectified networks with
# finite width and input dimension*. The theorem, equation and figure numbers used here are
# those of the arXiv versions that contain the two-layer dynamics (Section 5). Part one:
# at critical points of SGD (gradient zero on every sample), each teacher node of the lowest
# layer is copied by at least one student node, under mild conditions, for finite width and
# input dimension and any input distribution; student nodes that copy nothing carry zero
# fan-out weight. Part two: a heuristic analysis of the 2-layer dynamics (strong teacher
# nodes first, focus shifting, slow convergence to weak nodes), and experiments.
#
# **Background.** David Saad and Sara A. Solla, *On-line learning in soft committee
# machines*, Phys. Rev. E 52, 4225 (1995): the plateau and the onset of specialisation in
# the thermodynamic limit. Sebastian Goldt, Madhu S. Advani, Andrew M. Saxe, Florent
# Krzakala and Lenka Zdeborová, *Dynamics of stochastic gradient descent for two-layer
# neural networks in the teacher–student setup*, NeurIPS 2019, arXiv:1906.08632: exact ODEs
# for online SGD with large input dimension, specialisation of over-parametrised students.
# Andrew K. Lampinen and Surya Ganguli, *An analytic theory of generalization dynamics and
# transfer learning in deep linear networks*, ICLR 2019, arXiv:1809.10374: in linear
# teacher–student networks, modes with large singular values are learned first, the linear
# analogue of "strong teacher nodes first" (but linear networks do not specialise node by
# node).
#
# **In this course.** The CNN/LCN lessons (`cnn_lcn_2_specialisation`) follow a student specialising
# to a convolutional teacher's filter, with exact ODEs; the time at which it specialises is the
# same phenomenon as here, with weight sharing and locality changing how fast it happens.

# %% [markdown]
# ## Setting and notation
#
# Inputs $x\in\mathbb R^d$, augmented $\tilde x=(x,1)$ so that biases are the last entry of
# the weight vectors (the paper's convention; angles and norms below include the bias).
# The **teacher** is $f^*(x)=\sum_{j=1}^m v^*_j\,\mathrm{relu}(w^{*\top}_j\tilde x)\in\mathbb
# R^C$ with $\|w^*_j\|=1$; the **student** is $f(x)=\sum_{k=1}^n v_k\,\mathrm{relu}(w_k^\top
# \tilde x)$ with $n\ge m$ nodes (*over-realised*: $n=m$ is "×1", $n=5m$ is "×5"). We write
# $f^*_j,f_k$ for the hidden activations, $z_k=\mathbb 1[w_k^\top\tilde x>0]$ for the
# student's gate, and train on the square loss $J=\tfrac12\mathbb E\|f^*(x)-f(x)\|^2$ by SGD.
# Teacher node $j$ is **strong** when its fan-out $\|v^*_j\|$ is large; we use
# $\|v^*_j\|=j^{-p}$ (eq. 13 of the paper: $p=0$ all equal, large $p$ "polarised"). The
# mixing coefficients $\alpha_{jk}=v^{*\top}_j v_k$ and $\beta_{k'k}=v_{k'}^\top v_k$ say how
# much of teacher node $j$ (or student node $k'$) the output error routes back to node $k$.
#
# A student node $k$ **specialises** to (is aligned with) teacher node $j$ when $w_k=\gamma
# w^*_j$ with $\gamma>0$. We measure it two ways, per teacher node and over time: the best
# Pearson correlation over student nodes of the activations $f^*_j(x)$ and $f_k(x)$ over a
# separate evaluation set (the paper's "normalized correlation"), and the best cosine of the
# augmented weights. A teacher node is **matched** when its best correlation exceeds $0.95$,
# the paper's criterion.
#
# ## Core idea
#
# The gradient step of student node $k$ is $\dot w_k=\mathbb E[\tilde x\,z_k\,e^\top v_k]$
# with the residual $e=f^*-f$. Expanding $e$ over nodes,
# $$\dot w_k=\sum_j\alpha_{jk}\,\mathbb E[\tilde x\,z_k f^*_j]-\sum_{k'}\beta_{k'k}\,\mathbb
# E[\tilde x\,z_kf_{k'}] .$$
# Each teacher node pulls every student node, with a strength $\alpha_{jk}$ proportional to
# its fan-out $\|v^*_j\|$. For spherically symmetric inputs the pull points between $w^*_j$
# and $w_k$ (Theorem 6), so it rotates $w_k$ toward $w^*_j$. Hence:
#
# * **strong first**: the strongest teacher node dominates every student's drive, so many
#   student nodes head for it and it is matched first, often by several students at once;
# * **focus shifting**: once it is fitted, its share of the residual disappears, the next
#   teacher nodes dominate, and students that were chasing the strong node turn to them;
# * **slow weak nodes**: a weak node pulls weakly, and a student that starts near the
#   opposite direction ($\theta\approx\pi$) barely moves, because the pull vanishes like
#   $(\pi-\theta)^2$ there (eq. 12, Exercise 7.4.B);
# * **over-realisation helps**: with spare student nodes, some are free to turn to a weak
#   node once the strong ones are covered.
#
# The first half of the paper explains why the end point is specialisation: at a critical
# point of SGD the per-sample gradient vanishes, and since ReLU activations with different
# kinks in the data region are linearly independent, the zero-gradient condition can only
# hold if every observed teacher node is matched by a co-linear student node.

# %% [markdown]
# > **Precise statements, for reading the paper**
# >
# > *Setting of Theorems 1–5.* Deep ReLU teacher and student of the same depth, biases via
# > augmented weights, square loss, student at least as wide as the teacher in each layer.
# > The "training set" is a region $R_0$ of input space (infinitely many samples); no other
# > assumption on the input distribution. These are statements about **critical points**,
# > not about whether or when SGD reaches them.
# >
# > *Theorem 1 (interpolation).* If the gradient vanishes for every minibatch, then for
# > every sample the back-propagated gradient $g_l(x_i)$ or the activation $f_{l-1}(x_i)$ is
# > zero; with biases, $g_l(x_i)=0$, and at the top layer this is zero training loss.
# >
# > *Assumption 1.* Teacher weights of the layer are pairwise non-co-linear, and every
# > teacher node's boundary $\{w^{*\top}_j\tilde x=0\}$ passes through the training region.
# >
# > *Theorem 2 (two layers).* At an SGD critical point, if teacher node $j$ is **observed**
# > by student node $k$ (its boundary meets $k$'s active half-space inside $R_0$) and
# > $\alpha_{kj}\ne0$, then at least one student node is aligned with $j$.
# > *Theorem 3.* An unaligned student node with $C$ observers whose fan-out vectors are
# > linearly independent has $\sum_{k'\in\text{co-linear}(k)}v_{k'}\|w_{k'}\|=0$; alone in
# > its direction, $v_k=0$: it can be pruned. *Theorem 4* extends Theorem 2 to the lowest
# > layer of a deep network, region by region of constant gating.
# >
# > *Theorem 5 (small gradients).* If $\|g_1(x)\|_\infty\le\epsilon$ on $R_0$, the teacher
# > node is only roughly matched: $\sin\tilde\theta=O(\epsilon^{1-\delta}/|\alpha_{kj}|)$ and
# > the bias error is $O(\epsilon^{1-2\delta}/|\alpha_{kj}|)$ for any $\delta>0$. A weak node
# > (small $|\alpha_{kj}|$) needs a smaller gradient, that is, longer training.
# >
# > *Theorem 6.* For spherically symmetric inputs (no bias), with $\theta$ the angle
# > between $w^*_j$ and $w_k$ and hats denoting unit vectors,
# > $$\mathbb E[x\,z_k\,f^*_j]=\frac{\mathbb E\|x\|^2}{d}\,\frac{\|w^*_j\|}{2\pi}\Big[(\pi-\theta)\,\hat w^*_j+\sin\theta\,\hat w_k\Big],$$
# > a non-negative combination of the two directions (corrected constant, see below).
# >
# > *Section 5 (dynamics).* Under Assumption 2
# > ($\mathbb E[x z_kf_j]=\psi(\theta_{jk})w_j+\psi'(\theta_{jk})w_k$ with $\psi(\pi)=0$)
# > the paper studies $\dot w_k=\|w_k\|r_k$ (eq. 10; Demo 7.4.5 shows that the prefactor
# > should be the fan-out norm $\|v_k\|$). *Theorem 7:*
# > $\frac{d}{dt}\ln\frac{\|w_k\|}{\|w_{k'}\|}=\bar w_k^\top r_k-\bar w_{k'}^\top r_{k'}$.
# > With one teacher and one student, the angle obeys
# > $\dot\theta=-\alpha\,\psi(\theta)\sin\theta$ (eq. 12), so the time to leave
# > $\theta=\pi-\epsilon$ grows like $1/\epsilon$. "Strong first", "focus shifting" and
# > "over-realisation accelerates" are argued from these equations and shown in
# > experiments; they are not theorems.
#
# **Two corrections to the printed paper, and an unstated constant.** (1) Theorem 6 is
# printed with the prefactor $\|w^*_j\|\|w_k\|/2$ in front of
# $[(\pi-\theta)w^*_j+\sin\theta\,w_k]$ and a "$\propto$".
# The expectation is homogeneous of degree one in $w^*_j$ and of degree zero in $w_k$ ($z_k$
# is a gate), so only $\|w^*_j\|$ belongs in front, and the bracket must hold unit vectors:
# with unnormalised vectors the printed bracket is not even parallel to the expectation (for
# $\|w^*_j\|=1$, $\|w_k\|=2$ and $\theta=1$ it is off by about 9.6 degrees).
# The constant is $\mathbb E\|x\|^2/(2\pi d)$, which is $1/(2\pi)$ for $x\sim\mathcal N(0,I_d)$.
# (2) In the appendix proof, the substitution $\theta''=2\theta'+\pi$ turns $\cos2\theta'$
# into $-\cos\theta''$ and $\sin2\theta'$ into $-\sin\theta''$; the printed step drops this
# sign, which taken literally would give $-\sin\theta$ in the theorem. With the sign
# restored the proof gives the theorem's $+\sin\theta$, which Monte Carlo confirms
# (Exercise 7.4.A). (3) Not an error: the escape time after eq. 12 is written
# $t_0\sim\frac1\epsilon-\frac1{\pi-\theta_0}$, and the "$\sim$" leaves a constant unstated.
# With $\psi$ from Theorem 6 for inputs $x\sim\mathcal N(0,\sigma^2I_d)$, i.e.
# $\psi(\theta)=\sigma^2(\pi-\theta)/(2\pi)$, the constant is $2\pi/(\alpha\sigma^2)$ (for a
# student node of unit norm; Demo 7.4.5 explains why a general one has
# $2\pi\|w_k\|/(\alpha\sigma^2)$). Exercise 7.4.B computes it for $\sigma=1$, and the
# plateau demo after it checks the $\sigma^2$ and the $\|w_k\|$ by integrating the angle
# directly from Theorem 6's vector.

# %%
import time

import numpy as np  # (matplotlib is imported by the demo cells that plot)

from td_lib import teacher_student as ts  # trains with torch, one thread (small matrices)
from td_lib.core.runtime import QUICK, pick, quick_note
from td_lib.teacher_student import demos  # the seeded demo runs (Demos 7.4.1-7.4.4)
from td_lib.teacher_student import figures as tsfig  # the demos' figures

np.set_printoptions(precision=3, suppress=True, linewidth=100)
T0 = time.time()
print("quick mode" if QUICK else "full mode", "| demo size:", demos.DEMO_SIZE)


# %% [markdown]
# ## Demo 7.4.1: the strong-first staircase
#
# One batch of online-SGD runs (a fresh minibatch of Gaussian inputs at every step):
# teachers with $m=10$ nodes, $d=20$, $C=10$ outputs, polarity $p\in\{0,1,2\}$, students ×5
# (and ×1, ×2 for $p=1$, used in Demo 7.4.2). Runs with the same draw index share the
# teacher's directions and the student's initialisation across $p$ and widths, so the
# comparisons are paired. For each teacher node we record the first step at which some
# student node's activation correlates with it above $0.95$.
#
# The top row follows one run per $p$; the bottom row plots every run's first-match times
# against the teacher node index $j$ (so fan-out $\|v^*_j\|=j^{-p}$ falls to the right).
# The dashed line is the scaling $t\propto1/\|v^*_j\|=j^{p}$ suggested by eq. 12 (the
# angular speed is proportional to $\alpha_{jk}\propto\|v^*_j\|$), anchored at the median
# time of node 1. It is a reference, not a prediction: the student's fan-outs $v_k$ that
# also enter $\alpha_{jk}$ change during training.

# %% tags=["demo"]
import matplotlib.pyplot as plt

exA = demos.node_order_demo(quick=QUICK, progress=True)
S = demos.node_order_summary(exA)
steps_A, m = exA.history.t, exA.teacher.width
tsfig.node_order_figure(exA, S, bottom_title="p = {p:g}: first-match time vs fan-out")
plt.show()

quick_note(f"{len(exA.select(p=1.0, factor=5))} draw(s) per polarity and width, {steps_A[-1]:.0f} SGD steps")
for p in (0.0, 1.0, 2.0):
    fm = S["first"][p]
    print(f"p = {p:g}: median first-match step per teacher node {S['median_first'][p]}")
    print(f"        teacher nodes matched by the end (mean over runs): {S['matched'][p]:.2f} of {m};"
          f" Spearman(index, first-match time) = {S['spearman'][p]:.2f}"
          + (f"; log-log slope vs 1/|v*_j|: {S['slope'][p]:.2f}" if p in S["slope"] else ""))
    print("        latest first match over all teacher nodes and runs: "
          + (f"step {np.max(fm):.0f}" if np.all(np.isfinite(fm)) else "some nodes never matched"))

# %% [markdown]
# In the full run (printed above): with equal fan-outs ($p=0$) every teacher node is matched
# within 600 steps (the latest first match), in no particular order (rank correlation
# between node index and first-match time 0.12). With $p=1$ the staircase appears: the rank correlation is
# 0.89, the two strongest nodes are matched within a few hundred steps, the weakest ones
# thousands of steps later or not at all, and by the end on average 8.8 of the ten teacher
# nodes are matched. With $p=2$ only the two strongest nodes are reliably matched (on
# average 2.3 per run); the others, with fan-outs $j^{-2}$ for $j\ge3$, are still unmatched.
# For $p=1$ the median first-match times grow somewhat faster than the naive
# $t\propto1/\|v^*_j\|$ (fitted log–log slope 1.35 against $1/\|v^*_j\|$).
#
# For comparison, the paper's Fig. 12 (a larger teacher and input dimension, ×5) shows the same
# rainbow: the strongest nodes reach correlation near 1 first, the weakest only after many
# epochs.

# %% [markdown]
# ## Demo 7.4.2: over-realisation, and the nodes that copy nothing
#
# Same batch, $p=1$: six teacher/student draws, each trained as ×1, ×2 and ×5 (the ×1
# student is the first ten nodes of the ×5 student, so the comparison is paired). Left: the
# number of matched teacher nodes over time. Right, for the ×5 students at the end: each
# student node's best correlation with any teacher node against its fan-out norm $\|v_k\|$
# (the paper's Fig. 7). Theorem 3 predicts that nodes that copy nothing end with $v_k=0$.

# %% tags=["demo"]
import matplotlib.pyplot as plt

tsfig.coverage_figure(exA, S, left_title="p = 1: coverage in a fixed budget")
plt.show()

quick_note(f"{len(exA.select(p=1.0, factor=1))} draw(s) per width, {steps_A[-1]:.0f} SGD steps")
print("mean number of matched teacher nodes at the end (p = 1):",
      {f"x{f}": round(v, 2) for f, v in S["coverage"].items()})
if "paired_wins" in S:
    print(f"paired draws: x2 and x5 both beat x1 in {S['paired_wins']} of {S['paired_draws']}, "
          f"either loses to x1 in {S['paired_losses']}")
print("mean counts above thresholds", ts.THRESHOLDS)
for f, v in S["thresholds"].items():
    print(f"   x{f}: {np.round(v, 2)}")
print(f"x5 student nodes: median |v_k| {S['vnorm_special']:.4f} for best corr >= 0.95, "
      f"{S['vnorm_unspecial']:.4f} for best corr < 0.5 ({S['n_unspecial']} of {S['n_nodes']} nodes)")

# %% [markdown]
# In the full run the ×1 students end with 7.7 matched teacher nodes on average, the ×2
# and ×5 students with 9.3 and with 8.8. Early on the three widths move together (the ×5
# students are not faster at first), and the gap opens late, when the ×1 students have no
# free node left for the weak teacher nodes. The comparison is paired: in 5 of the 6 draws
# both wider students end with more matched teacher nodes than the ×1 student with the same
# teacher and initialisation, and in no draw with fewer. The paper's Fig. 9 reports the same
# direction (success rates rising with over-realisation). Its text adds that weak teacher
# nodes are missed especially when the fan-outs are polarised (large $p$), as our $p=2$ runs
# show, but it does not say that the gain from over-realisation is largest there, and our
# runs (×1 and ×2 students only at $p=1$) cannot tell. Between ×2 and ×5 our small sample
# shows no clear difference. The right panel shows Theorem 3 at
# work before convergence: student nodes that copy no teacher node (best correlation below
# 0.5) keep tiny fan-outs, a median $\|v_k\|$ of 0.0026 against 0.24 for the specialised
# ones (correlation above 0.95), which is why such nodes can be pruned.

# %% [markdown]
# ## Demo 7.4.3: focus shifting
#
# A second batch, this time SGD on a **finite training set** of 5000 inputs (the paper's
# experiments use a fixed training set and many epochs), $p=1$, ×5, two draws. We search all
# student nodes for the clearest focus shift: a node whose correlation with one teacher node
# peaks and then falls, while it ends matched to another (`ts.focus_shifts`).

# %% tags=["demo"]
import matplotlib.pyplot as plt

exB = demos.focus_demo(quick=QUICK, progress=True)
F = demos.focus_summary(exB)
hB = exB.history
quick_note(f"{hB.t[-1]:.0f} SGD steps")
tsfig.focus_figure(exB, F, title="focus shifting (thin: best correlation of each teacher node, rainbow order)")
if F:
    k, j1, j2, r = F["node"], F["j1"], F["j2"], F["run"]
    print(f"run {r}, student node {k}: correlation with teacher {j1 + 1} peaks at "
          f"{F['peak']:.2f} (step {F['step_peak']}) and ends at {F['end_j1']:.2f}; with teacher "
          f"{j2 + 1} it ends at {F['end_j2']:.3f} (above 0.95 from step {F['step_match']:.0f}).")
    print("teacher nodes matched at the end, per run:", F["matched_end"])
else:
    print("no focus shift found in this (quick) run")
plt.show()

# %% [markdown]
# In the full run one student node first follows teacher node 1, the strongest: its
# correlation with it peaks at 0.78 at step 500. Teacher node 1 is soon covered by other
# students, its part of the residual shrinks, and this node turns to teacher node 7, which it
# matches from step 2100 on (correlation 0.999 at the end), while its correlation with
# teacher node 1 falls back to 0.40. This is the paper's Fig. 6(b) and the
# magenta curve of its Fig. 11.

# %% [markdown]
# ## Demo 7.4.4: a deep teacher — the lowest layer is learned first (the paper's Fig. 8)
#
# So far the teacher had one hidden layer, and the question was *which node* is learned
# first. In a deep network one can also ask *which layer*. Tian's Fig. 8 trains a 10×
# over-realised student on a teacher with four hidden layers of widths 50-75-100-125
# ($d=100$, $C=50$ outputs) and reports: "we can also see the lowest layer learns first (the
# 'L-shape' curve was established at epoch 10), then the top layers follow." This is the
# paper's most direct statement about what a network learns first.
#
# We run it at a fifth of the width with the same shape: teacher 10-15-20-25, $d=20$, $C=10$,
# a ×5 student (50-75-100-125 nodes), three seeds (teacher and student) in one batch, online
# SGD (batch 16, learning rate 0.05, fresh Gaussian inputs at every step; one *epoch* is
# 10 000 samples, the paper's epoch), 30 epochs. Each teacher node's bias is set so that it
# is active on 40–60 % of the inputs (the paper: about 50 %), which keeps every kink visible
# in the data.
#
# Per layer $l$ we follow the paper's measure $\rho_{\rm mean}(l)$: each teacher node of
# layer $l$ takes its best activation correlation with the student nodes of the same layer,
# and these are averaged over the layer's teacher nodes. The second figure is Fig. 8 itself
# at epochs 1, 3, 10 and 30: every student node's best correlation with a teacher node of its
# layer (horizontal) against $\sqrt{\mathbb E_x\beta_{kk}(x)}$, the root-mean-square gradient
# of the output with respect to the node's activation (vertical; in a two-layer network this
# is the fan-out norm $\|v_k\|$). An "L" means: the nodes that copy a teacher node carry the
# output, the others carry almost nothing.

# %% tags=["demo"]
import matplotlib.pyplot as plt

teacher8, h8 = demos.fig8_demo(quick=QUICK, progress=True)
S8 = demos.fig8_summary(h8)
tsfig.fig8_layers_figure(teacher8, h8, S8, title="deep teacher 10-15-20-25, student ×5 (thin lines: single seeds)")
plt.show()
quick_note(f"{h8.t[-1]:g} epochs")
print("rho_mean per layer at epoch 0 (runs x layers):\n", S8["initial"])
print("rho_mean per layer at the end:\n", S8["final"])
for tau in S8["cross"]:
    print(f"first epoch with rho_mean >= {tau} (runs x layers; inf = not reached):\n", S8["cross"][tau])
    print(f"   median over runs per layer: {S8['median_cross'][tau]}; layer 1 strictly first in "
          f"{S8['lowest_first'][tau]} of {S8['runs']} runs")
for e, fs in S8["frac_special"].items():
    print(f"epoch {e:g}: fraction of student nodes with best correlation >= 0.9, per layer: {np.round(fs, 3)}")

# %% tags=["demo"]
import matplotlib.pyplot as plt

tsfig.fig8_snapshots_figure(
    h8, S8, suptitle="Fig. 8 at CPU scale: student nodes per layer (dead nodes sit at correlation 0)")
plt.show()

# %% [markdown]
# In the full run (printed above) layer 1 pulls away at once: its $\rho_{\rm mean}$ reaches
# 0.7 at epoch 2.5 and 0.9 at epoch 8.5 (medians over the three seeds) and ends at 0.997. By
# epoch 10 a fraction 0.18 of its student nodes correlate above 0.9 with a teacher node, and
# they are the ones with large $\sqrt{\mathbb E\beta_{kk}}$: the L-shape, at about the epoch
# the paper reports. Layer 2 follows: it reaches 0.7 at epoch 8.0 and ends at 0.80. Layers 3
# and 4 move least and hover around 0.7, ending at 0.72 and 0.73; the epoch at which they
# first touch 0.7 varies from seed to seed (between 7 and 28, or never), so their mutual
# order is not resolved. In 3 of the 3 seeds layer 1 reaches each threshold
# before every other layer, and no upper layer reaches 0.9 within 30 epochs. For comparison:
# at initialisation the random student already scores 0.41, 0.34, 0.26 and 0.23 (layers 1 to
# 4), because ReLU activations of random nodes are correlated.
#
# So the lowest layer is learned first, as the paper says, and the layers above follow, slowly:
# at this budget they are far from specialised. This fits the first half of the paper, whose
# specialisation theorem (Theorem 4) is about the lowest layer only: a teacher node of layer 2
# is a function of layer-1 teacher nodes, and the student can only copy it once it has copies
# of those.

# %% [markdown]
# ## Exercise 7.4.A — Theorem 6 by Monte Carlo
#
# Take $x\sim\mathcal N(0,I_d)$, a teacher weight $w^*\ne0$ and a student weight $w_k\ne0$
# (no biases), $z_k=\mathbb 1[w_k^\top x>0]$ and $f^*=\mathrm{relu}(w^{*\top}x)$.
#
# 1. Write `theorem6_closed_form(w_star, w_k)` returning the vector $\mathbb E[x\,z_k\,f^*]$
#    (shape `(d,)`, any $d\ge2$) from Theorem 6, with the corrected constant of the box above.
#    The formula is printed there, so part 1 is a careful transcription (norms, angles, the
#    degenerate cases $\theta=0$ and $\theta=\pi$, exact to about $10^{-12}$), and its tests
#    check exactly that; the Monte Carlo of part 2 is where the theorem is tested.
# 2. Write `theorem6_monte_carlo(w_star, w_k, n_samples, rng)` returning the sample mean of
#    $x\,z_k\,f^*$ over `n_samples` draws and its standard error per coordinate (the sample
#    standard deviation divided by $\sqrt{n}$), both of shape `(d,)`. Draw every sample from
#    the generator `rng` passed in (two calls with generators of the same seed must return the
#    same numbers).
#
# Write both from the formula and from samples: library functions that compute these moments
# are not available when your work is graded.
#
# The tests compare your Monte Carlo estimate with the closed form coordinate by coordinate,
# in units of your standard errors, for several angles, and check your standard errors
# against the scatter of independent runs. **Time budget:** they draw about 1.1 million
# samples in all, and a graded cell has 90 seconds, so draw the samples as one array of shape
# `(n_samples, d)` rather than one at a time: a call with `n_samples = 200_000` in $d=5$ must
# return within 2 seconds (the visible test times it; vectorised, it takes a few hundredths
# of a second).
#
# *Hint.* By rotational symmetry only the plane of $w^*$ and $w_k$ matters. At $\theta=0$
# the gate is the teacher's own, $\mathbb E[xx^\top\mathbb 1[w^\top x>0]]=I/2$; at
# $\theta=\pi$ the two half-spaces are disjoint. Is the answer allowed to change when $w_k$
# is multiplied by 3?

# %% nbgrader={"grade": false, "grade_id": "ex74A_closed_form", "locked": false, "schema_version": 3, "solution": true, "task": false}
def theorem6_closed_form(w_star: np.ndarray, w_k: np.ndarray) -> np.ndarray:
    """E[x 1{w_k·x > 0} relu(w_star·x)] for x ~ N(0, I_d) (Theorem 6), shape (d,)."""
    ### BEGIN SOLUTION
    w_star = np.asarray(w_star, float)
    w_k = np.asarray(w_k, float)
    ns, nk = np.linalg.norm(w_star), np.linalg.norm(w_k)
    us, uk = w_star / ns, w_k / nk
    theta = np.arccos(np.clip(us @ uk, -1.0, 1.0))
    return ns / (2 * np.pi) * ((np.pi - theta) * us + np.sin(theta) * uk)
    ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "ex74A_monte_carlo", "locked": false, "schema_version": 3, "solution": true, "task": false}
def theorem6_monte_carlo(w_star: np.ndarray, w_k: np.ndarray, n_samples: int,
                         rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo mean of x 1{w_k·x > 0} relu(w_star·x), x ~ N(0, I_d), and its standard
    error per coordinate; both of shape (d,)."""
    ### BEGIN SOLUTION
    w_star = np.asarray(w_star, float)
    w_k = np.asarray(w_k, float)
    x = rng.standard_normal((n_samples, w_star.size))
    v = x * ((x @ w_k > 0) * np.maximum(x @ w_star, 0.0))[:, None]
    return v.mean(axis=0), v.std(axis=0, ddof=1) / np.sqrt(n_samples)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_ex74A_closed_form", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
import numpy as np
from td_lib.own_work import own_work, passed

_cf = own_work(theorem6_closed_form, "ex74A_closed_form")
_e0, _e1, _e2 = np.eye(3)


def _check_cf(w_star, w_k, want, what, hint=""):
    got = np.asarray(_cf(w_star, w_k), float)
    assert got.shape == np.shape(want), (
        f"theorem6_closed_form({w_star.tolist()}, {w_k.tolist()}) has shape {got.shape}, expected {np.shape(want)} = (d,)")
    ok = np.allclose(got, want, rtol=0, atol=1e-12)
    if not ok and np.all(np.isfinite(got)) and np.linalg.norm(want) > 0:
        c = float(got @ want / (want @ want))
        if np.allclose(got, c * want, atol=1e-12) and abs(c) > 1e-6 and abs(c - 1) > 1e-6:
            hint += f" Your vector is {c:.6g} times the expected one: check the prefactor."
    if not ok and not np.all(np.isfinite(got)):
        hint += (" Your result is not finite: rounding can push the cosine of the angle slightly outside "
                 "[-1, 1] for (anti)parallel vectors.")
    assert ok, (f"theorem6_closed_form({w_star.tolist()}, {w_k.tolist()}) ({what}) returned {got}, "
                f"expected {np.asarray(want)}.{hint}")


_check_cf(2 * _e0, 5 * _e0, _e0, "θ = 0: the gate is the teacher's own, E[x x^T 1{w·x > 0}] = I/2")
_check_cf(_e0, -_e0, np.zeros(3), "θ = π: the active half-spaces of teacher and student are disjoint")
_expect = (np.pi / 2 * _e0 + _e1) / (2 * np.pi)
_got = np.asarray(_cf(_e0, _e1), float)
_check_cf(_e0, _e1, _expect, "θ = π/2, unit vectors",
          " The component along ŵ_k has the wrong sign." if np.allclose(_got, [0.25, -1 / (2 * np.pi), 0], atol=1e-9)
          else (" Teacher and student are swapped: the gate belongs to w_k, the relu to w*."
                if np.allclose(_got, [1 / (2 * np.pi), 0.25, 0], atol=1e-9) else ""))
_check_cf(_e0, 3 * _e1, _expect, "θ = π/2 with ‖w_k‖ = 3: z_k is a gate, so the scale of w_k must not matter")
_check_cf(2.5 * _e0, _e1, 2.5 * _expect, "θ = π/2 with ‖w*‖ = 2.5: relu is positively homogeneous")
_w = np.array([0.1, 0.7])
_check_cf(_w, 3 * _w, _w / 2, "parallel vectors, θ = 0")
passed("theorem6_closed_form")
### BEGIN HIDDEN TESTS
_check_cf(_w, -3 * _w, np.zeros(2), "antiparallel vectors, θ = π")
# 20 random pairs (w*, w_k) in 2 <= d <= 11 and Theorem 6 at each (instructor's side)
# BAKED theorem6_closed_form_hidden (expected values computed on the instructor's side: checks/grading/baked_values/td2_7_4_teacher_nodes.json)
for (_ws, _wk), _want in zip(_cases, _refs):
    _ws, _wk = np.array(_ws), np.array(_wk)
    _check_cf(_ws, _wk, np.array(_want), f"a random pair in d = {_ws.size}")
### END HIDDEN TESTS


# %% nbgrader={"grade": true, "grade_id": "test_ex74A_monte_carlo", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
import time

import numpy as np
from td_lib import teacher_student as ts
from td_lib.own_work import own_work, passed

_mc = own_work(theorem6_monte_carlo, "ex74A_monte_carlo")


def _pair(d, theta, norm_star, norm_k, rng):  # a random (w*, w_k) at a prescribed angle
    return ts.pair_at_angle(d=d, theta=theta, norm_star=norm_star, norm_k=norm_k, rng=rng)


_rng = np.random.default_rng(7)
_ws, _wk = _pair(5, np.pi / 2, 4.0, 0.7, _rng)

# 1. shapes, and all randomness drawn from the generator passed in
_m1, _s1 = (np.asarray(a, float) for a in _mc(_ws, _wk, 1000, np.random.default_rng(5)))
assert _m1.shape == (5,) and _s1.shape == (5,), (
    f"theorem6_monte_carlo must return (mean, se), each of shape (d,) = (5,); got shapes {_m1.shape}, {_s1.shape}")
_m2, _ = (np.asarray(a, float) for a in _mc(_ws, _wk, 1000, np.random.default_rng(5)))
assert np.array_equal(_m1, _m2), (
    f"two calls with np.random.default_rng(5) returned different means ({_m1} and {_m2}): draw every "
    "sample from the generator `rng` passed in")

# 2. standard errors: 40 independent runs of n = 1000; the spread of their means is the true standard error
_runs = [tuple(np.asarray(a, float) for a in _mc(_ws, _wk, 1000, np.random.default_rng(100 + _i)))
         for _i in range(40)]
_means = np.array([r[0] for r in _runs])
_spread = float(np.sqrt(np.mean(np.var(_means, axis=0, ddof=1))))
_reported = float(np.sqrt(np.mean(np.array([r[1] for r in _runs]) ** 2)))
assert _spread > 1e-10, (
    f"your means do not change with the generator: 40 runs with 40 different generators scatter by only "
    f"{_spread:.1e} — the mean must be the average of samples drawn from `rng`")
assert 0.55 < _reported / _spread < 2.0, (
    f"n = 1000: your standard errors are about {_reported:.4g}, but the means of 40 independent runs "
    f"scatter by {_spread:.4g} (ratio {_reported / _spread:.3g}, expected close to 1) — the standard "
    "error is the sample standard deviation divided by √n")

# 3. means against Theorem 6 at angles where it is simple, in units of your (now checked) standard errors
_cases = [(0.0, 4.0, 0.7), (np.pi / 2, 4.0, 0.7), (np.pi / 2, 1.5, 3.0)]
_zs, _secs = [], []
for _theta, _ns, _nk in _cases:
    _ws, _wk = _pair(5, _theta, _ns, _nk, _rng)
    _us, _uk = _ws / _ns, _wk / _nk
    _exact = _ws / 2 if _theta == 0 else _ns * (np.pi / 2 * _us + _uk) / (2 * np.pi)
    _t0 = time.perf_counter()
    _mean, _se = (np.asarray(a, float) for a in _mc(_ws, _wk, 200_000, np.random.default_rng(1)))
    _secs.append(time.perf_counter() - _t0)
    _z = (_mean - _exact) / _se
    _zs.append(_z)
    # 15 coordinates: P(any |z| > 5) < 1e-5 for a correct estimator
    assert np.abs(_z).max() < 5, (
        f"θ = {_theta:.4g}, ‖w*‖ = {_ns}, ‖w_k‖ = {_nk}: your mean {_mean} is {np.abs(_z).max():.1f} "
        f"standard errors from the expected value {_exact}. Your standard errors passed the check above, "
        "so the mean itself is off: the gate uses w_k, the relu uses w*, and x ~ N(0, I_d)")
_chi2 = float(np.sum(np.square(_zs)))
assert _chi2 > 1.2, (
    f"your means sit closer to the exact expectation than sampling noise allows: the sum of the 15 "
    f"squared z-scores is {_chi2:.3g}, while a sample mean gives about 15 (below 1.2 with probability "
    "1e-6). Return the sample mean of the draws, not the closed form")
# 4. the time budget of the statement: 2 s per call with n_samples = 200 000 in d = 5
assert max(_secs) < 2.0, (
    f"theorem6_monte_carlo took {max(_secs):.1f} s for n_samples = 200 000 in d = 5; the budget is 2 s per "
    "such call (the tests draw about 1.1 million samples within the grading time limit): draw the samples "
    "as one array of shape (n_samples, d) instead of one at a time")
passed("theorem6_monte_carlo")
### BEGIN HIDDEN TESTS
# five pairs (w*, w_k) at prescribed angles, dimensions and norms, and Theorem 6 at each (instructor's side)
# BAKED theorem6_monte_carlo_hidden (expected values computed on the instructor's side: checks/grading/baked_values/td2_7_4_teacher_nodes.json)
for _theta, _d, _ws, _wk, _exact in _cases:
    _ws, _wk, _exact = np.array(_ws), np.array(_wk), np.array(_exact)
    _mean, _se = (np.asarray(a, float) for a in _mc(_ws, _wk, 100_000, np.random.default_rng(99)))
    _z = np.abs(_mean - _exact) / _se
    assert _z.max() < 5, (
        f"θ = {_theta}, d = {_d}: your Monte Carlo mean {_mean} is {_z.max():.1f} standard errors from "
        f"Theorem 6's {_exact}")
### END HIDDEN TESTS


# %% [markdown]
# The same comparison, drawn: each component of the expectation along $\hat w^*$ and along
# the in-plane direction orthogonal to it, as a function of $\theta$ (your Monte Carlo with
# two standard errors as bars, your closed form as open circles, the corrected Theorem 6 as
# lines). It prints the largest deviation of the Monte Carlo from the closed form, in
# standard errors, over the 9 angles and 4 coordinates. Until your two functions are written,
# the demo shows the course's reference results.

# %% tags=["demo"]
import matplotlib.pyplot as plt
from td_lib.own_work import demo_result

thetas = np.linspace(0.05, np.pi - 0.05, 9)
# BAKED theorem6_scan_demo (expected values computed on the instructor's side: checks/grading/baked_values/td2_7_4_teacher_nodes.json)
scan6 = demo_result(lambda: ts.theorem6_scan(theorem6_closed_form, theorem6_monte_carlo, thetas,
                                             n=pick(400_000, 60_000)),
                    pick(_ref_scan6["full"], _ref_scan6["quick"]), "theorem6_closed_form and theorem6_monte_carlo")
est, err, exact, zmax = scan6["est"][:, :2], scan6["err"][:, :2], scan6["exact"][:, :2], scan6["zmax"]
fig, ax = plt.subplots(figsize=(6.5, 3.8))
tt = np.linspace(0, np.pi, 200)
ax.plot(tt, ((np.pi - tt) + np.sin(tt) * np.cos(tt)) / (2 * np.pi), "C0-",
        label=r"corrected Theorem 6, along $\hat w^*$")
ax.plot(tt, np.sin(tt) ** 2 / (2 * np.pi), "C1-", label=r"corrected Theorem 6, orthogonal in-plane")
ax.plot(thetas, exact[:, 0], "o", mfc="none", color="C0", ms=9, label="closed form at the sampled angles")
ax.plot(thetas, exact[:, 1], "s", mfc="none", color="C1", ms=9, label="closed form at the sampled angles")
ax.errorbar(thetas, est[:, 0], 2 * err[:, 0], fmt="o", color="C0", ms=4, label="Monte Carlo (±2 s.e.)")
ax.errorbar(thetas, est[:, 1], 2 * err[:, 1], fmt="s", color="C1", ms=4, label="Monte Carlo (±2 s.e.)")
ax.set(xlabel=r"angle $\theta$ between $w^*$ and $w_k$ (rad)", ylabel=r"$E[x\,z_k f^*]$ component",
       title=r"Theorem 6, $x\sim N(0, I_4)$, $\|w^*\|=1$, $\|w_k\|=2$")
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()
print(f"largest deviation over the 9 angles and 4 coordinates: {zmax:.2f} standard errors")

# %% [markdown]
# ## Demo 7.4.5: does eq. 10 inherit Theorem 6's misprint?
#
# Section 5 of the paper builds its dynamics on the simplified form (eq. 10)
# $$\dot w_k=\|w_k\|\,r_k,\qquad r_k=\sum_j\alpha_{jk}\psi(\theta_{jk})\,w^*_j-\sum_{k'}\beta_{k'k}\psi(\theta_{k'k})\,w_{k'}-\nu\,w_k ,$$
# in which the pull of teacher node $j$ on $w_k$, $\|w_k\|\alpha_{jk}\psi(\theta_{jk})w^*_j$,
# is proportional to $\|w_k\|$. The gradient says otherwise. With Theorem 6 as corrected above
# ($x\sim\mathcal N(0,I_d)$, no biases, $\|w^*_j\|=1$) the expected gradient of the core idea is
# $$\dot w_k=\sum_j\frac{\alpha_{jk}}{2\pi}\Big[(\pi-\theta_{jk})\hat w^*_j+\sin\theta_{jk}\,\hat w_k\Big]
# -\sum_{k'\ne k}\frac{\beta_{k'k}\|w_{k'}\|}{2\pi}\Big[(\pi-\theta_{k'k})\hat w_{k'}+\sin\theta_{k'k}\,\hat w_k\Big]
# -\frac{\|v_k\|^2}{2}\,w_k .$$
# The gate $z_k$ does not see the scale of $w_k$, so no pull depends on $\|w_k\|$; only the
# self-term (the last one, along $w_k$) does. Assumption 2 says the same (its $\psi$ depends on
# the angle only), so eq. 10 contradicts it unless $\|w_k\|=1$: the $\|w_k\|$ in front of
# eq. 10 is the spurious $\|w_k\|$ of the printed Theorem 6 (correction 1), carried into the
# dynamics. What does multiply every pull is the fan-out norm: $\alpha_{jk}=\|v_k\|\,v^{*\top}_j
# \hat v_k$ and $\beta_{k'k}=\|v_k\|\,v_{k'}^\top\hat v_k$, so
# $$\dot w_k=\|v_k\|\,\hat r_k ,$$
# with $\hat r_k$ eq. 10's residual written with the unit fan-out $\hat v_k=v_k/\|v_k\|$ (and
# $\nu$ absorbing the terms along $w_k$).
#
# The demo below uses no algebra: a network with two teacher and two student nodes ($d=6$,
# $C=2$), Monte Carlo of the per-sample gradient (200 000 inputs per point), while $w_k$ is
# multiplied by $1/4,\dots,4$ at a fixed direction. We measure the part of $\dot w_k$
# orthogonal to $w_k$. It is the part that turns $w_k$, and eq. 10's $-\nu w_k$ and the
# self-term drop out of it, so eq. 10 predicts it proportional to $\|w_k\|$ whatever $\psi$
# and $\nu$ are.

# %% tags=["demo"]
import matplotlib.pyplot as plt
from td_lib.own_work import demo_result

# BAKED eq10_scan_demo (expected values computed on the instructor's side: checks/grading/baked_values/td2_7_4_teacher_nodes.json)
n_eq10 = pick(200_000, 20_000)  # Monte Carlo inputs per point
scan = demo_result(lambda: ts.eq10_norm_scan(which="w", n=n_eq10, cross_moment=theorem6_closed_form,
                                             monte_carlo=theorem6_monte_carlo),
                   pick(_ref_eq10["full"], _ref_eq10["quick"]), "theorem6_closed_form and theorem6_monte_carlo")
tsfig.eq10_pull_figure(scan, title="does the pull on $w_k$ scale with $\\|w_k\\|$?")
plt.show()
quick_note(f"{n_eq10} Monte Carlo inputs per point, and Demo 7.4.1's quick run for the norms")
print(f"log-log slope against |w_k|: {scan['slope_mc']:.2f} ± {scan['slope_se']:.2f} (Monte Carlo), "
      f"{scan['slope_exact']:.3f} (closed form); eq. 10 needs 1")
print(f"Monte Carlo vs closed form: largest deviation {scan['z']:.2f} standard errors "
      f"(5 scales x 6 coordinates)")
print(f"Demo 7.4.1 (p = 1, x5): median |w_k| {S['wnorm_init']:.2f} and |v_k| {S['vnorm_init']:.3f} at the start; "
      f"at the end |w_k| {S['wnorm_special']:.2f} (best corr >= 0.95) and {S['wnorm_unspecial']:.2f} (< 0.5), "
      f"|v_k| {S['vnorm_special']:.2f} and {S['vnorm_unspecial']:.4f} (ratio {S['vnorm_special'] / S['vnorm_unspecial']:.0f})")

# %% [markdown]
# The measured log–log slope is 0.00 (± 0.01), where eq. 10 needs 1, and the Monte Carlo
# agrees with the closed form. **Eq. 10 inherits the misprint.** Two consequences.
#
# *Eq. 12.* The direction moves as $\frac{d}{dt}\hat w_k=P^\perp_{w_k}\dot w_k/\|w_k\|$, so a
# larger $w_k$ turns more slowly and eq. 12 reads $\dot\theta=-(\alpha/\|w_k\|)\,\psi(\theta)
# \sin\theta$; Exercise 7.4.B takes $\|w_k\|=1$. For a balanced node ($\|v_k\|=\|w_k\|$, see
# below) the effective strength $\alpha/\|w_k\|=v^{*\top}_j\hat v_k$ does not depend on the
# student's scale at all.
#
# *Theorem 7.* Its identity $\frac{d}{dt}\ln\frac{\|w_k\|}{\|w_{k'}\|}=\bar w_k^\top r_k-\bar
# w_{k'}^\top r_{k'}$ is exact algebra for eq. 10 (Exercise 7.4.C), and the paper reads it as
# winner-takes-all: a small advantage in $\bar w_k^\top r_k$ makes $\|w_k\|/\|w_{k'}\|$ grow
# exponentially. For the gradient, $\dot w_k=\|v_k\|\hat r_k$ gives $\frac{d}{dt}\ln\|w_k\|=
# \frac{\|v_k\|}{\|w_k\|}\bar w_k^\top\hat r_k$. With the fan-outs held fixed (the coefficients
# treated as given, as in the proof's $r=w^*-\sum_ka_kw_k$), the pulls change $\|w_k\|$ at a
# rate that does not grow with $\|w_k\|$: a favoured node gains linearly, not exponentially,
# and the exponential separation is lost. It comes back through the fan-outs: gradient flow conserves
# $\|w_k\|^2-\|v_k\|^2$ for every node (the right-hand sides of eqs. 7 and 8 are equal), so a
# node that starts balanced stays balanced, $\dot w_k=\|w_k\|\hat r_k$ is eq. 10 with unit
# fan-outs, and Theorem 7 holds with $\hat r_k$. When the fan-outs start small, as in our demos
# (median $\|v_k\|$ 0.030 against $\|w_k\|$ 0.98 at initialisation), the conservation pins
# $\|w_k\|$ and the amplification happens in $\|v_k\|$ instead: at the end of Demo 7.4.1
# ($p=1$, ×5) the specialised and the unspecialised student nodes have the same median
# $\|w_k\|$ (0.89 and 0.89), while their median fan-outs differ by a factor 91 (Demo 7.4.2).
# SGD with a finite step conserves $\|w_k\|^2-\|v_k\|^2$ only approximately, which is why
# $\|w_k\|$ drifts down a little.

# %% [markdown]
# ## Exercise 7.4.B — The angle dynamics near $\theta=\pi$
#
# With one teacher node and one student node and unit norms ($\|w^*\|=\|w_k\|=1$; for other
# student norms the right-hand side is divided by $\|w_k\|$, Demo 7.4.5), the angle between
# them obeys eq. 12, $\dot\theta=-\alpha\,\psi(\theta)\sin\theta$, where $\psi(\theta)$ is
# the coefficient of $\hat w^*$ in Theorem 6 for $x\sim\mathcal N(0,I_d)$:
# $\psi(\theta)=(\pi-\theta)/(2\pi)$.
#
# 1. Write `angle_rhs(theta, alpha)`, the right-hand side of eq. 12 (vectorised over
#    `theta`: an array of any shape in, the same shape out). Near $\pi$ it behaves as
#    $-\alpha(\pi-\theta)^2/(2\pi)$. Everything it needs is printed here: its tests check the
#    transcription and the vectorisation; parts 2 and 3 are the exercise.
# 2. Write `escape_time_numeric(eps, theta_end, alpha)`: integrate eq. 12 from
#    $\theta(0)=\pi-\epsilon$ and return the time at which $\theta$ reaches `theta_end`
#    ($0<\theta_{end}<\pi-\epsilon$, $\alpha>0$; any accurate method: an ODE solver with an
#    event, or a quadrature of $dt=d\theta/\dot\theta$). Relative accuracy $10^{-5}$ or
#    better is needed. **Time budget:** each call must return within 10 seconds (the visible
#    test times its calls; the longest is $\epsilon=10^{-3}$); an adaptive solver or a
#    quadrature takes well under a second, a fixed small step in a Python loop may not. The
#    plateau demo after the tests calls it 30 times, for $\epsilon$ down to $10^{-4}$.
# 3. Write `escape_time_asymptotic(eps, theta_end, alpha)`: the time from $\pi-\epsilon$ to
#    `theta_end` for the quadratic approximation $\dot\theta=-\alpha(\pi-\theta)^2/(2\pi)$,
#    which is the paper's $t_0\sim\frac1\epsilon-\frac1{\pi-\theta_0}$ with the constant its
#    "$\sim$" leaves unstated. The box above gives that constant; the tests check your time
#    against the exact solution of the quadratic approximation and against part 2 as
#    $\epsilon\to0$.
#
# Write all three yourself: library functions that compute these right-hand sides and times
# are not available when your work is graded.
#
# *Hint.* In $u=\pi-\theta$ the quadratic approximation reads $\dot u=\alpha u^2/(2\pi)$, so
# $1/u$ decreases linearly in time. For the numeric part, the integrand $1/|\dot\theta|$ is
# large but smooth near $\pi-\epsilon$; `scipy.integrate.quad` or `solve_ivp` with
# `rtol=1e-10` are both fine.

# %% nbgrader={"grade": false, "grade_id": "ex74B_rhs", "locked": false, "schema_version": 3, "solution": true, "task": false}
def angle_rhs(theta, alpha: float):
    """dθ/dt = -α ψ(θ) sin θ with ψ(θ) = (π - θ)/(2π) (eq. 12 with Theorem 6)."""
    ### BEGIN SOLUTION
    theta = np.asarray(theta, float)
    return -alpha * (np.pi - theta) / (2 * np.pi) * np.sin(theta)
    ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "ex74B_escape", "locked": false, "schema_version": 3, "solution": true, "task": false}
from scipy import integrate


def escape_time_numeric(eps: float, theta_end: float, alpha: float) -> float:
    """Time for eq. 12 to go from θ = π - eps down to θ = theta_end."""
    ### BEGIN SOLUTION
    hit = lambda t, th: th[0] - theta_end
    hit.terminal, hit.direction = True, -1
    t_guess = 2 * np.pi / alpha * (1 / eps - 1 / (np.pi - theta_end))
    sol = integrate.solve_ivp(lambda t, th: angle_rhs(th, alpha), (0.0, 10 * t_guess + 100),
                              [np.pi - eps], events=hit, rtol=1e-11, atol=1e-13)
    return float(sol.t_events[0][0])
    ### END SOLUTION


def escape_time_asymptotic(eps: float, theta_end: float, alpha: float) -> float:
    """Escape time of the quadratic approximation of eq. 12 near π."""
    ### BEGIN SOLUTION
    return 2 * np.pi / alpha * (1 / eps - 1 / (np.pi - theta_end))
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_ex74B_rhs", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
import numpy as np
from td_lib.own_work import own_work, passed

_rhs = own_work(angle_rhs, "ex74B_rhs")

_v = float(_rhs(np.pi / 2, 1.0))
assert abs(_v + 0.25) < 1e-12, f"angle_rhs(π/2, 1) returned {_v}, expected -ψ(π/2) sin(π/2) = -0.25"
_th = np.pi - np.array([1e-2, 1e-3, 1e-4])
_v = np.asarray(_rhs(_th, 2.0), float)
assert _v.shape == (3,), f"angle_rhs must work on an array of angles: for 3 angles it returned shape {_v.shape}"
_q = -2.0 * (np.pi - _th) ** 2 / (2 * np.pi)
assert np.allclose(_v / _q, 1.0, atol=1e-4), (
    f"near π, dθ/dt ≈ -α(π-θ)²/(2π); at α = 2 and π - θ = 1e-2, 1e-3, 1e-4 your values are {_v / _q} "
    "times that (expected 1)")
_v = float(_rhs(1e-6, 3.0))
assert abs(_v + 1.5e-6) < 1e-10, f"angle_rhs(1e-6, 3) returned {_v}, expected about -1.5e-6 (ψ(0) = 1/2)"
passed("angle_rhs")
### BEGIN HIDDEN TESTS
_g2 = np.linspace(0.2, 3.0, 12).reshape(3, 4)  # an array of another shape: the same shape back
_v2 = np.asarray(_rhs(_g2, 1.3), float)
assert _v2.shape == (3, 4) and np.allclose(_v2, np.asarray(_rhs(_g2.ravel(), 1.3), float).reshape(3, 4),
                                           rtol=1e-14, atol=0), (
    f"angle_rhs on a 3 x 4 array of angles returned shape {_v2.shape}; expected (3, 4), entry by entry "
    "the values of the same angles passed as a flat array")
# eq. 12's right-hand side at 50 angles in (0, π), α = 0.7 (instructor's side)
# BAKED angle_rhs_hidden (expected values computed on the instructor's side: checks/grading/baked_values/td2_7_4_teacher_nodes.json)
_g = np.linspace(0.01, np.pi - 0.01, 50)
_ref = np.array(_ref_rhs)
_v = np.asarray(_rhs(_g, 0.7), float)
assert _v.shape == _g.shape and np.allclose(_v, _ref, rtol=1e-12, atol=1e-15), (
    f"angle_rhs on 50 angles in (0, π) at α = 0.7 is off by up to {np.abs(_v - _ref).max():.2e} "
    f"(at θ = {_g[np.argmax(np.abs(_v - _ref))]:.3f})")
### END HIDDEN TESTS


# %% nbgrader={"grade": true, "grade_id": "test_ex74B_escape_numeric", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
import time

import numpy as np
from td_lib.own_work import own_work, passed

_num = own_work(escape_time_numeric, "ex74B_escape")

# reference times to θ_end = π/2 at α = 1 (an accurate quadrature of eq. 12)
_secs = []
for _eps, _tr in ((0.5, 9.870551142729678), (1e-2, 626.1410105652944), (1e-3, 6281.017211846245)):
    _t0 = time.perf_counter()
    _tn = float(_num(_eps, np.pi / 2, 1.0))
    _secs.append((time.perf_counter() - _t0, _eps))
    assert abs(_tn / _tr - 1) < 1e-5, (
        f"ε = {_eps}: escape_time_numeric returned {_tn:.8g}, expected {_tr:.8g} (relative error "
        f"{abs(_tn / _tr - 1):.1e}, needed < 1e-5)"
        + (" — close: tighten the integration tolerance" if abs(_tn / _tr - 1) < 1e-2 else
           " — integrate eq. 12 from θ = π - ε until θ = θ_end"))
# the time budget of the statement: 10 s per call (the longest here is ε = 1e-3)
_slow, _at = max(_secs)
assert _slow < 10.0, (
    f"escape_time_numeric took {_slow:.1f} s for one call (ε = {_at}, θ_end = π/2, α = 1); the budget is "
    "10 s per call: use an adaptive ODE solver or a quadrature rather than a fixed small step")
passed("escape_time_numeric")
### BEGIN HIDDEN TESTS
# (ε, θ_end, α) and the exact escape time (an accurate quadrature of eq. 12, instructor's side)
# BAKED escape_numeric_hidden (expected values computed on the instructor's side: checks/grading/baked_values/td2_7_4_teacher_nodes.json)
for _eps, _te, _a, _tr in _cases:
    _tn = float(_num(_eps, _te, _a))
    assert abs(_tn / _tr - 1) < 1e-5, (
        f"escape_time_numeric({_eps}, {_te}, {_a}) returned {_tn:.8g}, expected {_tr:.8g}")
### END HIDDEN TESTS


# %% nbgrader={"grade": true, "grade_id": "test_ex74B_escape_asymptotic", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
import numpy as np
from td_lib.own_work import own_work, passed

_asy = own_work(escape_time_asymptotic, "ex74B_escape")

_ta = float(_asy(1e-3, np.pi / 2, 1.0))
assert abs(_ta - 6279.185307179587) < 1e-8, (
    f"escape_time_asymptotic(1e-3, π/2, 1) returned {_ta:.6f}, expected 6279.185307"
    + (" — that is the paper's t0 without the constant its '∼' leaves unstated (box above, item 3)"
       if abs(_ta - (1e3 - 2 / np.pi)) < 1e-6 else ""))
# reference times to θ_end = π/2 at α = 1 (an accurate quadrature of eq. 12), as in the test above
_r = [_tr / float(_asy(e, np.pi / 2, 1.0)) for e, _tr in ((1e-2, 626.1410105652944), (1e-3, 6281.017211846245))]
assert abs(_r[1] - 1) < abs(_r[0] - 1) and abs(_r[1] - 1) < 1e-3, (
    f"exact / asymptotic escape time at ε = 1e-2 and 1e-3: {_r}; expected ratios tending to 1 as ε → 0")
passed("escape_time_asymptotic")
### BEGIN HIDDEN TESTS
# (ε, θ_end, α) and the asymptotic escape time (instructor's side)
# BAKED escape_asymptotic_hidden (expected values computed on the instructor's side: checks/grading/baked_values/td2_7_4_teacher_nodes.json)
for _eps, _te, _a, _ar in _cases:
    _ta = float(_asy(_eps, _te, _a))
    assert abs(_ta - _ar) < 1e-8 * max(1.0, abs(_ar)), (
        f"escape_time_asymptotic({_eps}, {_te}, {_a}) returned {_ta:.8g}, expected {_ar:.8g}")
### END HIDDEN TESTS


# %% [markdown]
# The plateau, drawn with your functions: trajectories of eq. 12 (your `angle_rhs`) from
# starts closer and closer to $\pi$ (left), and the escape time to $\theta=\pi/2$ against
# $\epsilon$ (your `escape_time_numeric`) with the asymptotic law (your
# `escape_time_asymptotic`) beside it (right). Until they are written, the demo shows the
# course's reference results.

# %% tags=["demo"]
import matplotlib.pyplot as plt
from scipy import integrate

from td_lib.own_work import demo_result

tgrid = np.linspace(0, 7000, 71)
starts = np.pi - np.array([1e-1, 1e-2, 3e-3, 1e-3])
eps_grid = np.geomspace(1e-4, 0.5, 30)


def plateau_demo():
    traj = np.stack([integrate.solve_ivp(lambda t, th: angle_rhs(th, 1.0), (0.0, tgrid[-1]), [s0], t_eval=tgrid,
                                         rtol=1e-10, atol=1e-12).y[0] for s0 in starts])   # (start, time)
    t_exact = np.array([float(escape_time_numeric(e, np.pi / 2, 1.0)) for e in eps_grid])
    t_asym = np.array([float(escape_time_asymptotic(e, np.pi / 2, 1.0)) for e in eps_grid])
    t3, a3 = float(escape_time_numeric(1e-3, np.pi / 2, 1.0)), float(escape_time_asymptotic(1e-3, np.pi / 2, 1.0))
    return dict(traj=traj, t_exact=t_exact, t_asym=t_asym, t3=t3, a3=a3, gap3=t3 - a3)


# BAKED plateau_demo_reference (expected values computed on the instructor's side: checks/grading/baked_values/td2_7_4_teacher_nodes.json)
plateau = demo_result(plateau_demo, _ref_plateau, "angle_rhs, escape_time_numeric and escape_time_asymptotic")
tsfig.plateau_figure(tgrid, starts, eps_grid, plateau, titles=(
    "eq. 12: the slower the start, the longer the plateau near π", "escape time diverges like 1/ε"))
plt.show()
t3, a3 = plateau["t3"], plateau["a3"]
print(f"eps = 1e-3: exact {t3:.2f}, asymptotic {a3:.2f}, difference {plateau['gap3']:.4f}; "
      f"limit of the difference as eps -> 0 (course reference): {_ref_theorem6_time['c_inf']:.4f}")
t_s = _ref_theorem6_time["t_s"]
print(f"integrated from Theorem 6's vector with sigma = 2, |w_k| = 3, alpha = 1.5 (course reference): {t_s:.2f} = "
      f"{t_s / _ref_theorem6_time['t3']:.4f} x the time above; the constants 2π|w_k|/(ασ²) and 2π are in the ratio "
      f"{3.0 / (1.5 * 2.0**2):.4f}")

# %% [markdown]
# From $\epsilon=10^{-3}$ the exact time to reach $\pi/2$ (with $\alpha=1$) is
# 6281.02, against 6279.19 from the asymptotic formula; the difference tends to the
# constant 1.833 as $\epsilon\to0$, so the relative error of the asymptotic law vanishes like
# $\epsilon$. Halving $\epsilon$ doubles the time: a student node that sits almost opposite a
# weak teacher node, for instance because it was dragged there while chasing a strong one,
# can take arbitrarily long to turn around.
#
# The constant the paper's "$\sim$" leaves unstated, checked beyond $\sigma=1$: integrating
# the angle directly from Theorem 6's vector (not from $\psi$) for inputs $\mathcal N(0,
# \sigma^2I)$ with $\sigma=2$, a student node of norm $\|w_k\|=3$ and $\alpha=1.5$ gives
# 0.5000 times the time above: the ratio of $2\pi\|w_k\|/(\alpha\sigma^2)=\pi$ to $2\pi$.

# %% [markdown]
# ## Exercise 7.4.C — Theorem 7: the log-ratio identity and winner-takes-all
#
# Take the simplified dynamics $\dot w_k=\|w_k\|\,r_k$ (eq. 10) for student nodes $k$, with
# $\bar w_k=w_k/\|w_k\|$, as the paper states it (Demo 7.4.5: for the true gradient the
# prefactor is $\|v_k\|$, which equals $\|w_k\|$ for balanced nodes, and $r_k$ is then built
# with unit fan-outs).
#
# 1. Show $\frac{d}{dt}\ln\|w_k\|=\bar w_k^\top r_k$, and deduce Theorem 7:
#    $\frac{d}{dt}\ln\frac{\|w_k\|}{\|w_{k'}\|}=\bar w_k^\top r_k-\bar w_{k'}^\top r_{k'}$.
# 2. Show $\frac{d}{dt}\bar w_k=(I-\bar w_k\bar w_k^\top)\,r_k$.
# 3. Suppose all nodes see the same residual $r=w^*-\sum_k a_kw_k$ with constants $a_k>0$,
#    and write $h_k=\bar w_k^\top r$. Show $\dot h_k=\|r\|^2-h_k^2-Sh_k$ with
#    $S=\sum_ka_k\|w_k\|$, and conclude that $h_k-h_{k'}$ decays to 0: the norm ratio
#    $\|w_k\|/\|w_{k'}\|$ settles to a constant.
# 4. Now give node $k$ a small advantage: $\|r_k\|^2=\|r_{k'}\|^2+\epsilon$ with $\epsilon>0$
#    (for instance it starts closer to the strong teacher node), keeping the rest of the
#    computation of part 3. Find where $h_k-h_{k'}$ settles and explain why
#    $\|w_k\|/\|w_{k'}\|$ then grows exponentially. Why does this make "winner takes all"
#    and sensitivity to initialisation plausible?
#
# Write your derivation in the cell below (Markdown, with $\LaTeX$); it is graded by hand.

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex74C_theorem7", "locked": false, "points": 3, "schema_version": 3, "solution": true, "task": false}
# **Solution.**
#
# 1. $\frac{d}{dt}\|w_k\|^2=2w_k^\top\dot w_k=2\|w_k\|\,w_k^\top r_k$, and
#    $\frac{d}{dt}\|w_k\|^2=2\|w_k\|\frac{d}{dt}\|w_k\|$, so $\frac{d}{dt}\|w_k\|=w_k^\top
#    r_k$ and $\frac{d}{dt}\ln\|w_k\|=\frac{w_k^\top r_k}{\|w_k\|}=\bar w_k^\top r_k$.
#    Subtracting the same identity for $k'$ gives Theorem 7, since
#    $\ln\frac{\|w_k\|}{\|w_{k'}\|}=\ln\|w_k\|-\ln\|w_{k'}\|$.
# 2. $\frac{d}{dt}\frac{w_k}{\|w_k\|}=\frac{\dot w_k}{\|w_k\|}-\frac{w_k}{\|w_k\|^2}
#    \frac{d}{dt}\|w_k\|=r_k-\bar w_k(\bar w_k^\top r_k)=(I-\bar w_k\bar w_k^\top)r_k$: the
#    direction moves along the part of the residual orthogonal to it; the norm absorbs the
#    parallel part (part 1).
# 3. $\dot h_k=\dot{\bar w}_k^\top r+\bar w_k^\top\dot r$. By part 2 the first term is
#    $r^\top(I-\bar w_k\bar w_k^\top)r=\|r\|^2-h_k^2$. With constant $a_{k'}$,
#    $\dot r=-\sum_{k'}a_{k'}\dot w_{k'}=-\sum_{k'}a_{k'}\|w_{k'}\|\,r=-S\,r$, so
#    $\bar w_k^\top\dot r=-Sh_k$. Hence $\dot h_k=\|r\|^2-h_k^2-Sh_k$, and
#    $$\frac{d}{dt}(h_k-h_{k'})=-(h_k^2-h_{k'}^2)-S(h_k-h_{k'})=-(h_k-h_{k'})(h_k+h_{k'}+S).$$
#    With $h_k,h_{k'}>0$ and $S>0$ the factor $h_k+h_{k'}+S$ is positive, so the gap decays
#    (exponentially while the factor stays bounded below). Then, by Theorem 7,
#    $\frac{d}{dt}\ln\frac{\|w_k\|}{\|w_{k'}\|}\to0$: after a transient the ratio of norms
#    is constant, and (part 2) all directions are driven toward the common $r$, i.e. toward
#    $w^*$.
# 4. With the advantage, $\frac{d}{dt}(h_k-h_{k'})=-(h_k-h_{k'})(h_k+h_{k'}+S)+\epsilon$,
#    which vanishes at $h_k-h_{k'}=\delta:=\epsilon/(h_k+h_{k'}+S)>0$, and this fixed point is
#    stable (the derivative decreases through it). So $h_k-h_{k'}$ settles at $\delta>0$, and
#    Theorem 7 gives $\ln\frac{\|w_k\|}{\|w_{k'}\|}\approx\delta t+\text{const}$: the ratio
#    grows like $e^{\delta t}$. A small initial advantage is never competed away; it is
#    amplified exponentially, so node $k$ takes over the teacher direction while $k'$ is left
#    small (winner takes all). Because the advantage can come from a tiny difference of
#    initial angles (Theorem 6 makes the pull depend on $\theta$), which student wins is
#    decided early and is sensitive to initialisation.

# %% [markdown]
# ## What "learned first" means, across §7
#
# > | section | what is learned | what orders it | how the time scales |
# > |---|---|---|---|
# > | §7.1 two moments | statistics of the labelled data | the order $k$ of the moment $\mathbb E[y\,x^{\otimes k}]$: it enters the small-weight gradient at order $\varepsilon^k$ | means, then covariances, then higher cumulants |
# > | §7.2 higher cumulants | a hidden direction in the input | the information exponent $k$ of the target | online SGD needs about $d^{\,k-1}$ samples (up to logs) to leave the equator |
# > | §7.3 spectral bias | components of the target function | the kernel eigenvalue $\lambda_k$ of each eigenfunction | residual $\propto e^{-\lambda_kt}$: time $\propto1/\lambda_k$, low frequencies first |
# > | §7.4 teacher nodes | hidden nodes of a teacher network; in a deep one, its layers | the fan-out strength $\|v^*_j\|$ (through $\alpha_{jk}=v^{*\top}_jv_k$); the depth of the layer (lowest first, Demo 7.4.4) | angular speed $\propto\alpha_{jk}/\|w_k\|$; from near $\theta=\pi$ the time grows like $1/\epsilon$ |
# > | CNN/LCN | a convolutional teacher's filter | locality and weight sharing of the student | the specialisation time, computed exactly from the ODEs |
# >
# > In §7.1–7.3 the order is set by the *data* (moments, cumulants, spectrum) seen through a
# > fixed feature map or a small-weight expansion. Here, and in the CNN/LCN notebook, it is
# > set by *which unit* of the target contributes most to the output error, and the learner
# > is a nonlinear network whose nodes compete for teacher nodes (winner takes all, focus
# > shifting), which has no counterpart in a fixed kernel.
#
# ## Summary
#
# * At SGD critical points of an over-realised ReLU student, every observed teacher node of
#   the lowest layer is copied by some student node, and student nodes that copy nothing
#   carry no fan-out (Theorems 2–4); with small but non-zero gradients the copy is rough, the
#   more so for weak teacher nodes (Theorem 5).
# * The dynamics fit strong teacher nodes first (Demo 7.4.1), shift focus once they are
#   covered (Demo 7.4.3), and can stall near $\theta=\pi$ (Exercise 7.4.B). Spare student
#   nodes help cover weak teacher nodes in a fixed budget (Demo 7.4.2).
# * In a deep teacher the lowest layer is learned first and the upper layers follow slowly
#   (Demo 7.4.4, the paper's Fig. 8 at CPU scale).
# * The pull of a teacher node on $w_k$ does not depend on $\|w_k\|$; it is proportional to
#   the fan-out norm $\|v_k\|$. Eq. 10's prefactor $\|w_k\|$ is inherited from the misprint
#   in Theorem 6; it is right only for balanced nodes, and with small initial fan-outs the
#   winner-takes-all of Theorem 7 shows up in $\|v_k\|$, not in $\|w_k\|$ (Demo 7.4.5).

# %% tags=["demo"]
print(f"notebook run time: {time.time() - T0:.1f} s")
