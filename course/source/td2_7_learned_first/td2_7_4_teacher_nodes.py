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
hA = exA.history
steps_A = hA.t

fig, axes = plt.subplots(2, 3, figsize=(13, 7.2))
cmap = plt.get_cmap("rainbow")
m = exA.teacher.width
j = np.arange(1, m + 1)
for c, p in enumerate((0.0, 1.0, 2.0)):
    r = exA.select(p=p, factor=5)[0]
    ax = axes[0, c]
    for jj in range(m):
        ax.plot(steps_A, hA.best_corr[:, r, jj], color=cmap(jj / (m - 1)), lw=1.3,
                label=f"teacher {jj + 1}" if c == 0 or jj in (0, m - 1) else None)
    ax.axhline(0.95, color="k", ls=":", lw=1)
    ax.set(title=f"p = {p:g}: best correlation per teacher node",
           xlabel="SGD step", ylabel="best correlation", ylim=(0, 1.02))
    if c == 0:
        ax.legend(fontsize=7, ncol=2, loc="lower right")
    ax = axes[1, c]
    fm = S["first"][p]
    late = 1.15 * steps_A[-1]
    for row in fm:
        ax.scatter(j, np.where(np.isfinite(row), row, late), s=18, alpha=0.6,
                   c=[cmap(i / (m - 1)) for i in range(m)],
                   marker="o")
    med = S["median_first"][p]
    ok = np.isfinite(med)
    ax.plot(j[ok], med[ok], "k-", lw=1.5, label="median over runs")
    ax.plot(j, med[0] * j**p, "k--", lw=1, label=r"$t\propto 1/\|v^*_j\| = j^{p}$")
    ax.axhline(late, color="gray", ls=":", lw=1)
    ax.text(10, late * 1.06, "not matched by the end", fontsize=7, color="gray", ha="right")
    ax.set(xscale="log", yscale="log", xlabel="teacher node j (fan-out $j^{-p}$)",
           ylabel="first step with correlation > 0.95", ylim=(50, 2.2 * steps_A[-1]),
           title=f"p = {p:g}: first-match time vs fan-out")
    ax.legend(fontsize=7, loc="lower right")
plt.tight_layout()
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

fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
ax = axes[0]
for f, col in zip((1, 2, 5), ("C0", "C1", "C2")):
    if f in S["coverage_curve"]:
        ax.plot(steps_A, S["coverage_curve"][f], color=col, lw=2, label=f"student ×{f}")
ax.set(xlabel="SGD step", ylabel="teacher nodes matched (corr > 0.95), mean over runs",
       title="p = 1: coverage in a fixed budget", ylim=(0, m + 0.3))
ax.axhline(m, color="k", ls=":", lw=1, label="all teacher nodes")
ax.legend()
ax = axes[1]
sel = exA.select(p=1.0, factor=5)
spec = hA.corr[-1, sel].max(axis=1).ravel()
vn = hA.vnorm[-1, sel].ravel()
ax.scatter(spec, vn, s=12, alpha=0.6, label="student nodes (×5, all runs)")
ax.axhline(0, color="k", lw=1, ls="--", label="Theorem 3: $v_k=0$ if unaligned")
ax.set(xlabel="student node: best correlation with a teacher node",
       ylabel=r"fan-out norm $\|v_k\|$", title="specialised nodes carry the output")
ax.legend(fontsize=8)
plt.tight_layout()
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
fig, ax = plt.subplots(figsize=(7.5, 4.2))
r = F["run"] if F else 0  # without a focus shift (quick mode), still show run 0
for jj in range(m):
    ax.plot(hB.t, hB.best_corr[:, r, jj], color=cmap(jj / (m - 1)), lw=0.8, alpha=0.5)
if F:
    k, j1, j2 = F["node"], F["j1"], F["j2"]
    ax.plot(hB.t, hB.corr[:, r, j1, k], "k-", lw=2.2,
            label=f"student node {k}: correlation with teacher {j1 + 1}")
    ax.plot(hB.t, hB.corr[:, r, j2, k], "k--", lw=2.2,
            label=f"student node {k}: correlation with teacher {j2 + 1}")
    ax.axvline(F["step_peak"], color="gray", ls=":", lw=1)
    print(f"run {r}, student node {k}: correlation with teacher {j1 + 1} peaks at "
          f"{F['peak']:.2f} (step {F['step_peak']}) and ends at {F['end_j1']:.2f}; with teacher "
          f"{j2 + 1} it ends at {F['end_j2']:.3f} (above 0.95 from step {F['step_match']:.0f}).")
    print("teacher nodes matched at the end, per run:", F["matched_end"])
    ax.legend(fontsize=8, loc="lower right")  # only the focus-shift curves carry labels
else:
    print("no focus shift found in this (quick) run")
ax.set(xlabel="SGD step", ylabel="activation correlation", ylim=(0, 1.02),
       title="focus shifting (thin: best correlation of each teacher node, rainbow order)")
plt.tight_layout()
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
L8 = h8.rho_mean.shape[-1]
fig, ax = plt.subplots(figsize=(8, 4.5))
for layer in range(L8):
    for r in range(S8["runs"]):
        ax.plot(h8.t, h8.rho_mean[:, r, layer], color=f"C{layer}", lw=0.7, alpha=0.5)
    ax.plot(h8.t, h8.rho_mean[:, :, layer].mean(axis=1), color=f"C{layer}", lw=2.2,
            label=f"layer {layer + 1} ({teacher8.widths[layer]} teacher nodes): mean of {S8['runs']} seeds")
for tau in (0.7, 0.9):
    ax.axhline(tau, color="k", ls=":", lw=1)
    ax.text(h8.t[-1], tau + 0.01, f"threshold {tau}", ha="right", fontsize=7)
ax.set(xlabel="epoch (10 000 online samples)",
       ylabel=r"$\rho_{\rm mean}$: mean best correlation", ylim=(0, 1.02),
       title="deep teacher 10-15-20-25, student ×5 (thin lines: single seeds)")
ax.legend(fontsize=8, loc="lower right")
plt.tight_layout()
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

snaps = sorted(h8.snapshots)
fig, axes = plt.subplots(L8, len(snaps), figsize=(3.2 * len(snaps) + 0.5, 2.3 * L8), sharex=True,
                         squeeze=False)
for c, e in enumerate(snaps):
    sn = h8.snapshots[e]
    for layer in range(L8):
        ax = axes[L8 - 1 - layer, c]  # lowest layer at the bottom, as in a network diagram
        for r in range(S8["runs"]):
            ax.scatter(sn["node_corr"][layer][r], sn["fanout"][layer][r], s=5, alpha=0.5,
                       color=f"C{r}", label=f"seed {r}" if (layer, c) == (0, 0) else None)
        ax.set(xlim=(-0.02, 1.02), title=f"layer {layer + 1}, epoch {e:g}")
        if c == 0:
            ax.set_ylabel(r"$\sqrt{E_x\,\beta_{kk}(x)}$")
        if layer == 0:
            ax.set_xlabel("best correlation with a teacher node")
axes[-1, 0].legend(fontsize=7, loc="upper left")
fig.suptitle("Fig. 8 at CPU scale: student nodes per layer (dead nodes sit at correlation 0)", y=1.0)
plt.tight_layout()
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
# BEGIN BAKED theorem6_closed_form_hidden (expected values computed on the instructor's side; do not edit)
_cases = [([1.3085050169209504, 0.9138619544865673, -0.7755616880360693, -1.109972391184261],
           [2.5710641385360486, 1.5198821886188112, 5.403558786131867, 2.241208185040108]),
          ([-1.239016349300122, -1.8767089445214984, 2.5148997005631597, 0.08286804429985957,
            1.3748881834460938, -2.331953895542623, -0.7393051087147033, -2.187384629525598],
           [2.1577095516484697, -3.537587291212118, -1.2761203824449496, 0.39134383344731416,
            -1.59719159985306, -0.6028017727534436, -0.5300989240851425, 0.9990681803214663]),
          ([0.1598765458009238, 1.1946432107599292, 0.6329405332016208, 4.6643532791856375, -1.867436464282008,
            3.3742452735551898, -1.1328615882073712, -2.6953906398518224, 3.408031148767838,
            -1.236671607100288, -1.0907209029098828],
           [-6.071168274131103, 1.835360615058746, -3.3717181785335244, 2.251946198097388, 5.347703656484807,
            -0.3321698183567996, -3.259880055924759, 1.140622047351601, 2.2040743481442617,
            -0.7574949352522734, 0.050533802721301355]),
          ([3.756364378689953, 2.1074975352751024, -2.57182212185246, -0.15933042633310232],
           [-0.35969773035766445, -1.0356649989947082, -1.2994475579693106, -1.0730002875070253]),
          ([0.19022208847007094, -0.13293429012822566, 0.1472564516825013, 0.06933351207261447,
            0.02320328635071546, -0.1373773556898265, -0.07582705181271654, 0.32767851838472867],
           [0.7413858313211186, 0.9133318142343115, 1.4541553657439374, -0.32718084704829403,
            -0.8405524381954312, -0.08211876582873293, -0.3592809596197868, 1.0891640217252296]),
          ([0.6676953513868754, 0.4046556279370488, 3.427817245817704, -1.514226430232734, -1.3348750473689517,
            2.4699987276748563, -0.2969423700466731],
           [-0.8195245845354011, 0.026228699950558373, 0.48546516299977976, -1.492296771981224,
            -0.7812409742000047, 0.47560456153476544, 2.5280973997880394]),
          ([-2.0964168760946613, 0.9713681003876067, -6.204356017925109, -0.12284984361216784,
            -0.8188732089960068, -1.2883241122891655, 5.755280867365415],
           [-0.10101330819141044, 0.3128108381224064, 2.119277837522356, -7.263497135700836,
            -2.116070779293884, -6.781657262507153, -0.5787338208886931]),
          ([0.11844008312459912, -0.1425783179476804, 0.13388949029992597, 0.12771048626550052,
            0.2916722846092989],
           [-3.5976166942046284, -1.643979353339017, 0.6973252695013346, -1.836934581011704,
            -1.6111245444204148]),
          ([1.2229608226231308, 0.7003494306769272, -0.5953763979126285],
           [-3.5177531319967046, -0.9811889449083058, -0.1814121098595806]),
          ([-0.2770771196679833, 0.21623572994450677, 0.8893386628957907],
           [1.4887695212528365, 1.2072531529886477, -1.2913227644262006]),
          ([0.37545286726946986, -2.3452679377283863, 2.4995090643803195, 3.0508211910969636,
            -6.2416679131759345, 3.8712120328001287, -2.6516427818258514, 4.325442998629634],
           [-0.12831128786421475, 1.9544416022907245, 0.8750051720968202, 0.031769605889751355,
            0.24471169273963453, 2.373919637292481, 1.3929591117523725, 0.9334903526630309]),
          ([1.717038585058368, 0.45301412096956917, -4.6551610446313125, 2.7021703913762494,
            1.2654562419777375, -4.120675633098851, -1.9597277531157606, -0.7565358572338555,
            0.9937462716523546],
           [0.06036784670153035, -6.611930350602491, 2.213251540781263, -0.5725531314211831,
            -5.935920836728807, -7.771576132661867, -3.6251650647846985, 1.2884732426463115,
            -2.582975263129177]),
          ([0.273909746953143, 1.0481289509706928], [-5.197098068488503, 9.520774105389105]),
          ([-0.9090326202203127, -4.940222049836269, 5.75543967187443, -6.337446668229301, -5.000863156471822,
            -5.508046681019803, -6.665037718589444],
           [0.734959097504765, -3.954647326943364, -6.909133706776046, -1.1465735369315537,
            -0.18647126619542134, 2.8415190503596657, -3.3632485379359065]),
          ([-4.852805001627361, -0.5338968371267451, -1.8037798009615331, -7.010305454231563,
            -0.6266535476834647, 5.34217035343151, 10.744360008515834, -7.017557100842453],
           [3.6473288839379743, 3.989778932677132, -1.4720161974144663, 1.0125652717250766,
            -2.0493286968086295, 1.8263040665607684, 3.9366145257613083, -0.8471423899155343]),
          ([1.3745917784515558, 1.1455122753507905, -1.081458449688726, 2.1999546401934, 0.7698530279705061,
            0.23673289370541933, 0.05298441526293852],
           [0.40845745835080205, -0.508928241130169, -0.34887782329822176, -0.6908320469823642,
            0.17569187408620057, 0.15272007248838387, -0.14051028392230688]),
          ([2.2166910483140634, 2.1874841129809535, 0.0676152830102247, 0.193359097789998, 0.19022736962484108],
           [-0.972251314142458, -0.48019392213187045, 0.6452816251262922, -0.0023906828917826988,
            -0.3773726220753013]),
          ([4.1984296239842696, 3.568348405214122, 2.6448309497893487, 0.42355009798730314, -2.904018411760681,
            0.46570827204944215, -0.774167467940914, 1.4868918307308963, 2.45602636069301, -1.6377852910550066],
           [0.0889017719200939, 0.13824803130246702, -0.8577595559485377, -0.2858668187389532,
            0.14364165522490493, -0.3068552908402601, -0.48665870593555427, -0.6058284316288507,
            3.1307626141677356, -0.3157905363774527]),
          ([-6.552193252798012, 7.002495248605457, 0.0032039164213953355, -1.2374188483613902,
            2.9502814393712913, 3.330598828184357, -1.279271551326075],
           [-4.099863429519738, 1.6179103269159019, 0.7550510707486214, 3.626129909940721, -0.5266293911375365,
            -2.3701616188794126, 0.5513881248141987]),
          ([2.960664909507815, 1.8699561383874257, 2.4947871367069587, 2.0290116419285233],
           [-4.386650490143016, 3.22613486511964, 2.761983860118202, -1.8933292842359424])]
_refs = [[0.4269762691278598, 0.28435344529758044, 0.0948023882955625, -0.14012550978699315],
         [0.054293592601427874, -1.0186683210605523, 0.39181798786935496, 0.08301615189301924,
          0.06869657398725992, -0.6522323796289872, -0.2616138705528405, -0.35872475140841015],
         [-0.7010584724067976, 0.5413836527655147, -0.24511764414832224, 1.5120362539744279,
          0.15988229851017008, 0.8536623986530191, -0.6994453870067873, -0.5747357084702581,
          1.1731882808201943, -0.4205351941533188, -0.28290558767767804],
         [0.794932674412195, 0.11467575308647383, -1.1584205354277153, -0.4661182475576118],
         [0.08404433509976791, -0.02134688550915338, 0.08805098532252478, 0.015029985254143199,
          -0.014063837862906759, -0.04885688716634746, -0.03516701808402044, 0.13986661804900316],
         [0.018427017306605634, 0.12778937169843194, 1.1412169556464458, -0.7891244919645027,
          -0.576492638926786, 0.8503870847833667, 0.47435697453357173],
         [-0.5212674756183271, 0.27773356373199926, -1.213550827691499, -1.0183688774252442,
          -0.4862564430548705, -1.2349341101821831, 1.3145169673085895],
         [-0.02186117743292255, -0.045053612633575046, 0.03219677261000719, 0.0008230624959201135,
          0.032748167317730136],
         [-0.015092496974532904, 0.02497015114741759, -0.054262256960158836],
         [0.03774768968687098, 0.09671551002009962, 0.06456238310770132],
         [0.04724066453010702, 0.20772799318988736, 1.068633227211998, 0.8524220551810228, -1.6088993630947277,
          2.0993674823471515, -0.12135523241106831, 1.5960265699900127],
         [0.47266116276909553, -0.4825848021479999, -1.0636692487617894, 0.6826792211329487,
          -0.19961485945408017, -1.8331370123576212, -0.8653169384379515, -0.08776113038243065,
          0.03368450177372001],
         [0.04739995580264651, 0.5018133655030587],
         [-0.04179156052666709, -2.1613339669214104, -0.28431603342146156, -1.8171582273524403,
          -1.2591323781486072, -0.645422214517448, -2.4360568548488186],
         [-0.21602014488831936, 1.176449826491458, -1.026057644463243, -1.735635011577036, -0.8708430890194201,
          2.19153738235387, 4.495823146921428, -2.359780682154893],
         [0.461679494210307, -0.0011022402987601397, -0.37573005588998953, 0.12806835181010204,
          0.23445903090484116, 0.11693356316304915, -0.053190304413840865],
         [0.008089798907136948, 0.12008350206648713, 0.15812095818533656, 0.019983882761467467,
          -0.0680605597314618],
         [1.227221192018815, 1.0648932805853397, 0.4546353448027289, 0.02105079803964505, -0.7773659573032649,
          0.025747893326631265, -0.39018807636873426, 0.21251162973405457, 1.790904636078761,
          -0.5767040511068373],
         [-3.055820639563825, 2.5616830707396314, 0.1933581079104446, 0.5440439238923481, 0.7714334586001036,
          0.4184727935335033, -0.2521968961843507],
         [0.164509111177285, 0.8078408529774248, 0.8967481983081074, 0.24338638413184938]]
# END BAKED theorem6_closed_form_hidden
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
# BEGIN BAKED theorem6_monte_carlo_hidden (expected values computed on the instructor's side; do not edit)
_cases = [(0.4, 5,
           [0.09027078444906103, 0.052122169476785774, -1.0011099275432793, 0.0622214423801007,
            1.1104241847179008],
           [-0.14461972551066057, 0.11420234482174724, -0.3181181093043886, -0.05174956804882499,
            0.5934355990078426],
           [0.02018167506623156, 0.037910062085080645, -0.4790714929984333, 0.020276737187172305,
            0.5633342895706623]),
          (1.6, 5,
           [0.739118661184747, -1.1628803065997908, 0.07225402887353385, 0.5591821609406102,
            -0.1830509858159083],
           [0.06776423502192971, 0.35221870463545996, 0.2799818581384838, 0.47092344376332, -0.247368675834731],
           [0.2044451967833487, -0.1652434465624705, 0.11317374043940615, 0.29773473145622764,
            -0.1292401427806258]),
          (2.8, 5,
           [0.21454380046050725, -0.48931991836537364, 0.13441387912712197, -1.2538494055973677,
            -0.6118264070436915],
           [-0.14376980654074142, 0.3882752122757754, 0.07957618036241844, 0.5097762917694566,
            0.22884135580823012],
           [-0.004761270645576071, 0.01775662827308355, 0.016398864182320026, -0.009926834051676374,
            -0.007118334529877789]),
          (0.05, 2, [0.09264382466322693, -0.2853368566304908],
           [1.0435619326624657, -3.861473616729471],
           [0.04620724686940513, -0.1427014769080661]),
          (3.0, 8,
           [0.1693684946156481, 0.09288934732810453, -0.04408829282264448, -0.04966141650123134,
            -0.033710989217442804, 0.205278286830677, -0.057671500731032596, -0.040917484000585334],
           [-2.084922963656822, -1.2404317559707407, 0.510161436037537, 0.29936970551158376,
            0.43308713659324166, -2.795795611956252, 1.1069349179389878, 0.7315708432741546],
           [0.00030470351993145507, 3.7749520709207433e-06, -0.00013417230025508848, -0.0006148414236521654,
            -3.0149342041279366e-05, -8.352532427360685e-05, 0.0005649903420050929, 0.0003102456818124904])]
# END BAKED theorem6_monte_carlo_hidden
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
# BEGIN BAKED theorem6_scan_demo (expected values computed on the instructor's side; do not edit)
_ref_scan6 = {'full': {'est': [[0.499858, 0.000737721],
                               [0.491776, 0.0274502],
                               [0.45226, 0.0821809],
                               [0.36677, 0.138444],
                               [0.250153, 0.158901],
                               [0.134807, 0.137486],
                               [0.0492656, 0.0831897],
                               [0.00810755, 0.0275436],
                               [1.33525e-05, 0.000402731]],
                       'err': [[0.00176874, 0.00111864],
                               [0.00177258, 0.00108126],
                               [0.00175551, 0.000947151],
                               [0.00162772, 0.000801553],
                               [0.00131517, 0.000746711],
                               [0.000849188, 0.000725479],
                               [0.000392584, 0.000556863],
                               [9.08105e-05, 0.000263388],
                               [4.40823e-07, 1.14622e-05]],
                       'exact': [[0.499987, 0.000397556],
                                 [0.49186, 0.0276822],
                                 [0.450499, 0.0835547],
                                 [0.365356, 0.137236],
                                 [0.25, 0.159155],
                                 [0.134644, 0.137236],
                                 [0.0495009, 0.0835547],
                                 [0.00814045, 0.0276822],
                                 [1.32563e-05, 0.000397556]],
                       'zmax': 1.52515},
              'quick': {'est': [[0.508671, 0.000752798],
                                [0.497085, 0.0256367],
                                [0.450612, 0.0793177],
                                [0.366297, 0.133908],
                                [0.247039, 0.1585],
                                [0.135772, 0.138493],
                                [0.0487703, 0.0824028],
                                [0.00790368, 0.0268494],
                                [1.34351e-05, 0.000401366]],
                        'err': [[0.00460618, 0.00292475],
                                [0.00464905, 0.00284939],
                                [0.0045302, 0.00244495],
                                [0.00422242, 0.00204082],
                                [0.00336805, 0.00190854],
                                [0.0021947, 0.00188072],
                                [0.000997538, 0.00141048],
                                [0.000226821, 0.000662428],
                                [1.09802e-06, 2.86807e-05]],
                        'exact': [[0.499987, 0.000397556],
                                  [0.49186, 0.0276822],
                                  [0.450499, 0.0835547],
                                  [0.365356, 0.137236],
                                  [0.25, 0.159155],
                                  [0.134644, 0.137236],
                                  [0.0495009, 0.0835547],
                                  [0.00814045, 0.0276822],
                                  [1.32563e-05, 0.000397556]],
                        'zmax': 2.92336}}
# END BAKED theorem6_scan_demo
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
from matplotlib.ticker import NullFormatter

from td_lib.own_work import demo_result

# BEGIN BAKED eq10_scan_demo (expected values computed on the instructor's side; do not edit)
_ref_eq10 = {'full': {'scales': [0.25, 0.5, 1.0, 2.0, 4.0],
                      'mc': [0.149331, 0.147513, 0.148707, 0.149466, 0.15251],
                      'mc_se': [0.00117459, 0.00127436, 0.00152427, 0.00210003, 0.00336693],
                      'exact': [0.148282, 0.148282, 0.148282, 0.148282, 0.148282],
                      'z': 2.91923, 'slope_mc': 0.00304111, 'slope_se': 0.00577552, 'slope_exact': 0.0},
             'quick': {'scales': [0.25, 0.5, 1.0, 2.0, 4.0],
                       'mc': [0.144522, 0.143978, 0.152101, 0.153185, 0.173486],
                       'mc_se': [0.00364605, 0.00406604, 0.00488101, 0.00666164, 0.0109719],
                       'exact': [0.148282, 0.148282, 0.148282, 0.148282, 0.148282],
                       'z': 2.30048, 'slope_mc': 0.0473358, 'slope_se': 0.0177735, 'slope_exact': 0.0}}
# END BAKED eq10_scan_demo
n_eq10 = pick(200_000, 20_000)  # Monte Carlo inputs per point
scan = demo_result(lambda: ts.eq10_norm_scan(which="w", n=n_eq10, cross_moment=theorem6_closed_form,
                                             monte_carlo=theorem6_monte_carlo),
                   pick(_ref_eq10["full"], _ref_eq10["quick"]), "theorem6_closed_form and theorem6_monte_carlo")
c_w = scan["scales"]
anchor = scan["exact"][np.argmin(np.abs(np.log(c_w)))]
fig, ax = plt.subplots(figsize=(6.5, 4))
ax.errorbar(c_w, scan["mc"], 2 * scan["mc_se"], fmt="o", ms=5, label="Monte Carlo of the gradient (±2 s.e.)")
ax.plot(c_w, scan["exact"], "k-", label="closed form (corrected Theorem 6): flat")
ax.plot(c_w, anchor * c_w, "C3--", label=r"eq. 10: $\propto\|w_k\|$ (anchored at $\|w_k\|=1$)")
ax.set(xscale="log", yscale="log", xlabel=r"$\|w_k\|$ (direction and fan-outs fixed)",
       ylabel=r"$\|P^\perp_{w_k}\dot w_k\|$: the part that turns $w_k$",
       title="does the pull on $w_k$ scale with $\\|w_k\\|$?")
ax.set_xticks(c_w, [f"{c:g}" for c in c_w])
ax.xaxis.set_minor_formatter(NullFormatter())
ax.yaxis.set_minor_formatter(NullFormatter())
ax.legend(fontsize=8)
plt.tight_layout()
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
# BEGIN BAKED angle_rhs_hidden (expected values computed on the instructor's side; do not edit)
_ref_rhs = [-0.0034888010066217385, -0.02516905285441144, -0.045845965427358734, -0.0654417155716796,
            -0.08388649823597925, -0.10111877033658521, -0.11708544652877055, -0.13174204630834055,
            -0.14505279212375669, -0.15699065843484414, -0.16753737190890808, -0.1766833631975036,
            -0.1844276709859282, -0.1907777992515042, -0.19574952890470257, -0.19936668521796816,
            -0.2016608626696119, -0.20267110904327015, -0.202443570826155, -0.20103110214066824,
            -0.19849283962300376, -0.19489374582826663, -0.19030412389360946, -0.18479910632820967,
            -0.17845812092094349, -0.17136433686279437, -0.16360409427087252, -0.15526632037402124,
            -0.1464419356760252, -0.13722325345117106, -0.12770337594820877, -0.1179755906825423,
            -0.10813277018277756, -0.09826677852667656, -0.08846788795330722, -0.07882420877301657,
            -0.06942113571515734, -0.060340813755703035, -0.05166162635352338, -0.04345770889575382,
            -0.03579849001005692, -0.028748263245380493, -0.022365791453874437, -0.016703946025808904,
            -0.011809382937568787, -0.007722257371064694, -0.004475978452231356, -0.0020970054377540824,
            -0.0006046864538857581, -1.1140660336593797e-05]
# END BAKED angle_rhs_hidden
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
# BEGIN BAKED escape_numeric_hidden (expected values computed on the instructor's side; do not edit)
_cases = [(0.05, 1.0, 0.5, 250.99637861966198), (0.002, 2.5, 3.0, 1044.1601237084633),
          (0.3, 0.2, 2.0, 12.29488635727609), (0.01, 3.13, 1.0, 86.32303988793235),
          (0.05, 0.01, 1.5, 90.46402482131266)]
# END BAKED escape_numeric_hidden
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
# BEGIN BAKED escape_asymptotic_hidden (expected values computed on the instructor's side; do not edit)
_cases = [(0.05, 1.0, 0.5, 245.45964345948641), (0.002, 2.5, 3.0, 1043.9331823004222),
          (0.3, 0.2, 2.0, 9.40398513275561), (0.01, 3.13, 1.0, 86.3213720422581),
          (0.05, 0.01, 1.5, 82.43821307794818)]
# END BAKED escape_asymptotic_hidden
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


# BEGIN BAKED plateau_demo_reference (expected values computed on the instructor's side; do not edit)
_ref_plateau = {'traj': [[3.04159, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                          0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                          0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                          0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                          0.0, 0.0, 0.0, 0.0],
                         [3.13159, 3.1297, 3.12692, 3.12246, 3.11408, 3.09264, 2.92143, 0.0, 0.0, 0.0, 0.0,
                          0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                          0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                          0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                          0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                         [3.13859, 3.13844, 3.13828, 3.13809, 3.13788, 3.13765, 3.13739, 3.13709, 3.13674,
                          3.13633, 3.13585, 3.13527, 3.13457, 3.13368, 3.13254, 3.13102, 3.12888, 3.12566,
                          3.12025, 3.10928, 3.07508, 0.0912786, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                          0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                          0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                          0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                         [3.14059, 3.14058, 3.14056, 3.14054, 3.14052, 3.14051, 3.14049, 3.14047, 3.14045,
                          3.14043, 3.1404, 3.14038, 3.14036, 3.14033, 3.14031, 3.14028, 3.14025, 3.14022,
                          3.14019, 3.14016, 3.14013, 3.14009, 3.14005, 3.14002, 3.13997, 3.13993, 3.13989,
                          3.13984, 3.13979, 3.13974, 3.13968, 3.13962, 3.13955, 3.13949, 3.13941, 3.13934,
                          3.13925, 3.13916, 3.13906, 3.13896, 3.13884, 3.13871, 3.13858, 3.13842, 3.13826,
                          3.13807, 3.13786, 3.13762, 3.13736, 3.13705, 3.1367, 3.13628, 3.13579, 3.1352,
                          3.13448, 3.13357, 3.1324, 3.13082, 3.12859, 3.1252, 3.11941, 3.1073, 3.06613,
                          0.000346508, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]],
                't_exact': [62829.7, 46839.2, 34918.2, 26031.0, 19405.7, 14466.4, 10784.2, 8039.11, 5992.63,
                            4466.97, 3329.59, 2481.66, 1849.53, 1378.28, 1026.96, 765.044, 569.786, 424.218,
                            315.695, 234.788, 174.467, 129.492, 95.9554, 70.9435, 52.2835, 38.354, 27.9449,
                            20.1516, 14.2967, 9.87055],
                't_asym': [62827.9, 46837.3, 34916.3, 26029.2, 19403.8, 14464.6, 10782.4, 8037.28, 5990.8,
                           4465.14, 3327.75, 2479.83, 1847.7, 1376.45, 1025.13, 763.219, 567.964, 422.401,
                           313.883, 232.983, 172.671, 127.709, 94.1894, 69.2005, 50.5712, 36.683, 26.3293,
                           18.6106, 12.8562, 8.56637],
                't3': 6281.02, 'a3': 6279.19, 'gap3': 1.8319}
_ref_theorem6_time = {'c_inf': 1.83295, 't3': 6281.02, 't_s': 3140.51}
# END BAKED plateau_demo_reference
plateau = demo_result(plateau_demo, _ref_plateau, "angle_rhs, escape_time_numeric and escape_time_asymptotic")
fig, axes = plt.subplots(1, 2, figsize=(12, 4))
for i, s0 in enumerate(starts):
    axes[0].plot(tgrid, plateau["traj"][i], label=rf"$\pi-\theta(0)$ = {np.pi - s0:.0e}")
axes[0].axhline(np.pi / 2, color="k", ls=":", lw=1)
axes[0].set(xlabel=r"time $t$ ($\alpha = 1$)", ylabel=r"angle $\theta$ (rad)",
            title="eq. 12: the slower the start, the longer the plateau near π")
axes[0].legend(fontsize=8)
axes[1].loglog(eps_grid, plateau["t_exact"], "o", ms=4, label="eq. 12, integrated")
axes[1].loglog(eps_grid, plateau["t_asym"], "-",
               label=r"$\frac{2\pi}{\alpha}\left(\frac{1}{\epsilon}-\frac{1}{\pi-\theta_{end}}\right)$")
axes[1].set(xlabel=r"$\epsilon = \pi - \theta(0)$", ylabel=r"time to reach $\theta=\pi/2$",
            title="escape time diverges like 1/ε")
axes[1].legend(fontsize=8)
plt.tight_layout()
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
