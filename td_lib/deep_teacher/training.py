"""Online SGD of a deep ReLU student on a deep teacher, all runs at once (Tian 2020, §6, Fig. 8).

:func:`train_deep` runs the vectorised loop in torch (float64, hand-written
back-propagation :func:`deep_sgd_step`, one thread by default; the loop is
:func:`~td_lib.teacher_student.sgd_loop.sgd_loop`) and records the paper's measures
per layer (:class:`DeepHistory`); :func:`crossing_epochs` reads off when each layer's
``ρ_mean`` first reaches a threshold.

Examples
--------
>>> crossing_epochs([0.0, 0.5, 1.0], [[0.2, 0.1], [0.75, 0.3], [0.9, 0.6]], 0.7).tolist()
[0.5, inf]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from td_lib.core import validate as V
from td_lib.core.run import Run, checkpoints, static
from td_lib.deep_teacher.model import DeepNet, check_deep_net, fanout_rms
from td_lib.teacher_student.model import RELU
from td_lib.teacher_student.sgd_loop import sgd_loop
from td_lib.teacher_student.training import torch_unit_columns

__all__ = ["DeepHistory", "train_deep", "deep_sgd_step", "crossing_epochs"]


@dataclass
class DeepHistory(Run):
    """What :func:`train_deep` records.

    Attributes
    ----------
    t : (T,) evaluation times in epochs (``epoch_size`` samples each).
    best_corr : list over layers of (T, R, m_l): best student correlation per teacher node.
    rho_mean : (T, R, L) its mean over the teacher nodes of each layer (``ρ_mean``).
    loss : (T, R) evaluation loss ``½ E‖f* − f‖²``.
    snapshots : dict epoch -> dict with ``node_corr`` (list over layers of (R, n_l): each
        student node's best correlation with a teacher node) and ``fanout`` (list of (R, n_l):
        :func:`fanout_rms`), at the requested snapshot epochs (no time axis).
    student : the final student (no time axis).
    X_eval : (N, d) the evaluation inputs (no time axis).
    """

    best_corr: list
    rho_mean: np.ndarray
    loss: np.ndarray
    snapshots: dict = static()
    student: DeepNet = static()
    X_eval: np.ndarray = static()
    time_label: ClassVar[str] = "epochs"


def train_deep(teacher: DeepNet, student: DeepNet, *, epochs: float, eta: float, batch: int = 16,
               epoch_size: int = 10_000, evals_per_epoch: int = 2,
               snapshot_epochs: Sequence[float] = (), n_eval: int = 2000, n_fanout: int = 500,
               rng=0, progress: bool | str = False, threads: int = 1) -> DeepHistory:
    """Online SGD of a deep student on a deep teacher, all runs at once (Tian §6, Fig. 8).

    Every step draws a fresh minibatch ``x ~ N(0, I_d)`` (the paper regenerates its 10000
    training samples every epoch "to mimic infinite sample setting"; here no sample is
    reused). One *epoch* is ``epoch_size`` samples, ``epoch_size // batch`` steps. The loss
    is ``½‖f*(x) − f(x)‖²`` averaged over the batch.

    Parameters
    ----------
    teacher, student : DeepNet
        Same depth, runs, input and output dimension.
    epochs : float
        Training length in epochs (rounded to whole steps).
    eta, batch, epoch_size : learning rate, batch size, samples per epoch.
    evals_per_epoch : int
        Evaluations per epoch (plus epoch 0).
    snapshot_epochs : sequence of float
        Epochs at which to store every student node's best correlation and
        :func:`fanout_rms` (the nearest evaluation time is used).
    n_eval : int
        Size of the (separate, fixed) evaluation set for the correlations.
    n_fanout : int
        Number of evaluation points averaged in :func:`fanout_rms` at snapshots.
    rng : int, None or numpy Generator
        Seeds the data stream (a torch generator seeded by one draw,
        :func:`td_lib.core.runtime.torch_generator`) and the evaluation set.
    progress : bool or str
        Progress bar: ``False`` none, ``True`` labelled "deep SGD", a string as the label.
    threads : int
        Torch threads while training (the matrices are small: one is fastest).

    Notes
    -----
    Back-propagation is written out (:func:`deep_sgd_step`): with ``A_0 = x``,
    ``H_l = A_{l-1}W_l + b_l``, ``A_l = relu(H_l)``, output ``A_L W_out + b_out`` and
    ``G = (f* − f)/B``, each layer gets ``W_l += η·A_{l-1}ᵀG``, ``b_l += η·ΣG`` and passes
    ``G ← (G W_lᵀ) ⊙ 1{H_{l-1} > 0}`` down (eq. 1 and Lemma 1: ``g_{l-1} = D_{l-1} W_l g_l``).

    References
    ----------
    Tian (2020), eq. 1, Lemma 1 and §6 (Fig. 8: the deep teacher–student experiment).
    """
    check_deep_net("teacher", teacher)
    check_deep_net("student", student)
    if (len(teacher.widths), teacher.runs, teacher.d, teacher.C) != \
            (len(student.widths), student.runs, student.d, student.C):
        raise ValueError(
            f"student must match the teacher's (depth, runs, d, C) = "
            f"{(len(teacher.widths), teacher.runs, teacher.d, teacher.C)}, got "
            f"{(len(student.widths), student.runs, student.d, student.C)}")
    epochs = V.finite("epochs", epochs, positive=True)
    eta = V.finite("eta", eta, positive=True)
    batch = V.positive_int("batch", batch)
    epoch_size = V.positive_int("epoch_size", epoch_size)
    evals_per_epoch = V.positive_int("evals_per_epoch", evals_per_epoch)
    n_eval = V.positive_int("n_eval", n_eval, minimum=2)
    n_fanout = V.positive_int("n_fanout", n_fanout)
    threads = V.positive_int("threads", threads)
    snaps = [V.finite("snapshot_epochs", s, nonnegative=True) for s in snapshot_epochs]
    steps_per_epoch = max(1, epoch_size // batch)
    steps = max(1, int(round(epochs * steps_per_epoch)))
    # every 1/evals_per_epoch epoch: in units of 1/evals_per_epoch step, every steps_per_epoch,
    # then rounded to whole steps (an epoch of 625 steps is evaluated after 312 and 625 steps)
    ev = np.unique(np.round(checkpoints(steps * evals_per_epoch, every=steps_per_epoch)
                            / evals_per_epoch).astype(int))
    snap_steps = {int(ev[np.argmin(np.abs(ev - s * steps_per_epoch))]): s for s in snaps}
    run = sgd_loop(lambda g: _DeepSGD(teacher, student, g, eta=eta, batch=batch, n_eval=n_eval,
                                      n_fanout=n_fanout, snap_steps=snap_steps,
                                      steps_per_epoch=steps_per_epoch),
                   steps=steps, times=ev, eta=eta, rng=rng, threads=threads, progress=progress,
                   label="deep SGD")
    final = DeepNet([w.numpy() for w in run.W], [b_[:, 0].numpy() for b_ in run.b], info=dict(student.info))
    return DeepHistory(t=ev / steps_per_epoch, best_corr=[np.asarray(x) for x in run.best],
                       rho_mean=np.asarray(run.rho), loss=np.asarray(run.loss), snapshots=run.snapshots,
                       student=final, X_eval=run.Xe_np)


class _DeepSGD:
    """The deep problem of :func:`train_deep` for :func:`~td_lib.teacher_student.sgd_loop.sgd_loop`:
    the student's weights and biases (torch), fresh Gaussian batches, :func:`deep_sgd_step`
    and the per-layer measures."""

    def __init__(self, teacher: DeepNet, student: DeepNet, rng: np.random.Generator, *, eta: float,
                 batch: int, n_eval: int, n_fanout: int, snap_steps: dict, steps_per_epoch: int):
        self.eta, self.batch, self.n_fanout = eta, batch, n_fanout
        self.snap_steps, self.steps_per_epoch = snap_steps, steps_per_epoch
        self.R, self.d, self.L = teacher.runs, teacher.d, len(teacher.widths)
        t = self.tensor
        self.tW, self.tb = [t(w) for w in teacher.W], [t(b)[:, None, :] for b in teacher.b]
        self.W = [t(w).clone() for w in student.W]
        self.b = [t(b_)[:, None, :].clone() for b_ in student.b]
        self.Xe_np = rng.standard_normal((n_eval, self.d))
        self.Xe = t(self.Xe_np)
        self.Ye, tacts = self.fwd(self.tW, self.tb, self.Xe)
        self.Ut = [torch_unit_columns(a).transpose(1, 2) for a in tacts[1:]]  # (R, m_l, N)
        self.best: list[list] = [[] for _ in range(self.L)]
        self.rho, self.loss, self.snapshots = [], [], {}

    @staticmethod
    def tensor(a):
        import torch

        return torch.tensor(np.asarray(a), dtype=torch.float64)

    def fwd(self, Ws, bs, X):  # output and activations (input first)
        A, As = X, [X]
        for i in range(self.L):
            A = RELU.f(A @ Ws[i] + bs[i])
            As.append(A)
        return A @ Ws[self.L] + bs[self.L], As

    def draw(self, k: int, gen):
        import torch

        Xc = torch.randn((k, self.R, self.batch, self.d), generator=gen, dtype=torch.float64)
        return Xc, self.fwd(self.tW, self.tb, Xc)[0]

    def step(self, data, i: int) -> None:
        deep_sgd_step(self.W, self.b, data[0][i], data[1][i], eta=self.eta)

    def record(self, step: int) -> None:
        out, acts = self.fwd(self.W, self.b, self.Xe)
        node_corr, rm = [], []
        for i in range(self.L):
            c = self.Ut[i] @ torch_unit_columns(acts[i + 1])  # (R, m, n)
            bc = c.max(dim=-1).values.numpy()
            self.best[i].append(bc)
            rm.append(bc.mean(axis=-1))
            node_corr.append(c.max(dim=-2).values.numpy())
        self.rho.append(np.stack(rm, axis=-1))
        self.loss.append((0.5 * ((self.Ye - out) ** 2).sum(-1).mean(-1)).numpy())
        if step in self.snap_steps:
            net = DeepNet([w.numpy().copy() for w in self.W], [b_[:, 0].numpy().copy() for b_ in self.b])
            self.snapshots[self.snap_steps[step]] = dict(
                epoch=step / self.steps_per_epoch, node_corr=node_corr,
                fanout=fanout_rms(net, self.Xe_np[:self.n_fanout]))

    def weights(self) -> list:
        return self.W


def deep_sgd_step(W: list, b: list, X, Y, *, eta: float) -> None:
    """One SGD step on ``½‖Y − f(X)‖²`` averaged over the batch, in place (torch tensors).

    ``W[l]`` (R, n_l, n_{l+1}), ``b[l]`` (R, 1, n_{l+1}), ``X`` (R, B, d), ``Y`` (R, B, C).
    Back-propagation by hand (see :func:`train_deep`); every layer's update uses the weights
    before the step.

    References
    ----------
    Tian (2020), eq. 1 and Lemma 1 (``g_{l-1} = D_{l-1} W_l g_l``).
    """
    L = len(W) - 1
    A, Hs, As = X, [], [X]
    for i in range(L):
        H = A @ W[i] + b[i]
        A = RELU.f(H)
        Hs.append(H)
        As.append(A)
    G = (Y - (A @ W[L] + b[L])) * (eta / X.shape[-2])
    for layer in range(L, -1, -1):
        gW = As[layer].transpose(1, 2) @ G
        gb = G.sum(dim=1, keepdim=True)
        if layer > 0:
            G = (G @ W[layer].transpose(1, 2)) * RELU.df(Hs[layer - 1])
        W[layer] += gW
        b[layer] += gb


def crossing_epochs(epochs, rho_mean, threshold: float) -> np.ndarray:
    """First evaluation epoch at which ``rho_mean`` reaches ``threshold`` (``inf`` if never).

    ``epochs`` shape (T,), ``rho_mean`` shape (T, ...); returns shape (...).
    """
    e = V.array("epochs", epochs, ndim=1)
    r = V.array("rho_mean", rho_mean)
    if r.ndim < 1 or r.shape[0] != e.size:
        raise ValueError(f"rho_mean must have shape (T={e.size}, ...), got {r.shape}")
    threshold = V.in_interval("threshold", threshold, -1.0, 1.0, closed="both")
    hit = r >= threshold
    out = e[np.argmax(hit, axis=0)].astype(float)
    out[~hit.any(axis=0)] = np.inf
    return np.asarray(out)
