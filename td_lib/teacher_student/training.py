"""Minibatch SGD of a two-layer ReLU student on a teacher, all runs at once (Tian 2020, eqs. 1–5).

:func:`train` runs online SGD (a fresh Gaussian batch every step) or SGD on a finite training
set, in torch (float64, hand-written gradients, one thread by default: the matrices are small;
the loop is :func:`~td_lib.teacher_student.sgd_loop.sgd_loop`), and records the specialisation
measures of :mod:`~td_lib.teacher_student.metrics` on a separate evaluation set
(:class:`History`). The torch import happens on the first call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from td_lib.core import validate as V
from td_lib.core.run import Run, checkpoints, static
from td_lib.teacher_student.model import RELU, Net, check_net
from td_lib.teacher_student.sgd_loop import sgd_loop

__all__ = ["History", "train", "torch_unit_columns"]


@dataclass
class History(Run):
    """What :func:`train` records at every evaluation time.

    Attributes
    ----------
    t : (T,) SGD steps taken.
    corr : (T, R, m, n) activation correlations teacher × student (evaluation set).
    cos : (T, R, m, n) cosines of augmented weights.
    vnorm : (T, R, n) student fan-out norms ``‖v_k‖``.
    wnorm : (T, R, n) student first-layer norms ``‖w_k‖``.
    loss : (T, R) evaluation loss ``½ E‖f* − f‖²``.
    student : the final student (no time axis).
    """

    corr: np.ndarray
    cos: np.ndarray
    vnorm: np.ndarray
    wnorm: np.ndarray
    loss: np.ndarray
    student: Net = static()
    time_label: ClassVar[str] = "SGD steps"

    @property
    def best_corr(self) -> np.ndarray:
        """(T, R, m): best student correlation per teacher node."""
        return self.corr.max(axis=-1)

    @property
    def best_cos(self) -> np.ndarray:
        """(T, R, m): best student weight cosine per teacher node."""
        return self.cos.max(axis=-1)


def torch_unit_columns(F):
    """Torch tensor ``F`` (..., N, k) centred over the evaluation axis ``N`` and each column
    scaled to unit norm; a constant column (a dead node) becomes 0. The correlation of two
    activation sets is ``Aᵀ B`` of these (the measure of
    :func:`~td_lib.teacher_student.metrics.activation_correlation`, inside a torch loop)."""
    import torch

    Fc = F - F.mean(dim=-2, keepdim=True)
    nrm = torch.linalg.norm(Fc, dim=-2, keepdim=True)
    return torch.where(nrm > 1e-12, Fc / torch.clamp(nrm, min=1e-300), 0.0)


def train(teacher: Net, student: Net, *, steps: int, eta: float, batch: int = 16,
          n_train: int | None = None, eval_every: int = 100, n_eval: int = 2000, rng=0,
          progress: bool | str = False, log_eval: bool = False, threads: int = 1) -> History:
    """Train the student on the teacher's outputs by minibatch SGD (eq. 1–2), all runs at once.

    Parameters
    ----------
    teacher, student : Net
        Same number of runs, input dimension and output dimension.
    steps : int
        Number of SGD steps.
    eta : float
        Learning rate (SGD on ``½‖f*(x) − f(x)‖²`` averaged over the batch).
    batch : int
        Batch size.
    n_train : int or None
        ``None``: online SGD, a fresh batch ``x ~ N(0, I_d)`` every step (Tian's "infinite
        sample" setting). Otherwise every run has its own training set of ``n_train``
        Gaussian inputs, and batches are drawn from it with replacement.
    eval_every : int
        Steps between evaluations (plus step 0 and the last step).
    n_eval : int
        Size of the (separate, shared) evaluation set for the correlations.
    rng : int, None or numpy Generator
        Seeds the data (inputs, training set, evaluation set, batch draws): the torch stream
        of the batches is seeded by one draw from it (:func:`td_lib.core.runtime.torch_generator`).
    progress : bool or str
        Progress bar: ``False`` none, ``True`` labelled "SGD", a string as the label.
    log_eval : bool
        If true, evaluate at step 0 and about 60 log-spaced steps instead of every ``eval_every``
        (:func:`td_lib.core.run.checkpoints`).
    threads : int
        Torch threads while training (restored afterwards). The matrices are small, so one
        thread is fastest and leaves the other cores alone.

    Returns
    -------
    History

    Examples
    --------
    >>> from td_lib.teacher_student import make_student, make_teacher
    >>> T = make_teacher(d=5, m=2, C=1, p=1.0, rng=0)
    >>> h = train(T, make_student(T, factor=2, rng=1), steps=300, eta=0.05, eval_every=100, n_eval=200)
    >>> h.t.tolist(), h.corr.shape, bool(h.loss[-1, 0] < h.loss[0, 0])
    ([0, 100, 200, 300], (4, 1, 2, 4), True)

    Notes
    -----
    The gradients are written out by hand (no autograd): with ``H = X̃W``, ``A = relu(H)``,
    ``E = f* − AV``, the SGD step is ``V += η·AᵀE/B`` and ``W += η·X̃ᵀ[(EVᵀ)⊙1{H>0}]/B``
    (eq. 5: ``g_1 = D_1 V_1ᵀ e_1``).

    References
    ----------
    Tian (2020), eqs. 1–2 (square loss, SGD) and eq. 5 (the back-propagated gradient).
    """
    check_net("teacher", teacher)
    check_net("student", student)
    if (teacher.runs, teacher.d, teacher.C) != (student.runs, student.d, student.C):
        raise ValueError(
            f"student must match the teacher's (runs, d, C) = "
            f"{(teacher.runs, teacher.d, teacher.C)}, got "
            f"{(student.runs, student.d, student.C)}")
    steps = V.positive_int("steps", steps)
    eta = V.finite("eta", eta, positive=True)
    batch = V.positive_int("batch", batch)
    if n_train is not None:
        n_train = V.positive_int("n_train", n_train)
    eval_every = V.positive_int("eval_every", eval_every)
    n_eval = V.positive_int("n_eval", n_eval, minimum=2)
    threads = V.positive_int("threads", threads)
    t = checkpoints(steps, num=60, rounding="round") if log_eval else checkpoints(steps, every=eval_every)
    run = sgd_loop(lambda g: _TwoLayerSGD(teacher, student, g, eta=eta, batch=batch, n_train=n_train,
                                          n_eval=n_eval),
                   steps=steps, times=t, eta=eta, rng=rng, threads=threads, progress=progress, label="SGD")
    return History(t=t, student=Net(run.W.numpy(), run.Vo.numpy(), dict(student.info)),
                   **{k: np.asarray(v) for k, v in run.rec.items()})


class _TwoLayerSGD:
    """The two-layer problem of :func:`train` for :func:`~td_lib.teacher_student.sgd_loop.sgd_loop`:
    the student's weights (torch), the data, the step of eq. 5 and the measures."""

    def __init__(self, teacher: Net, student: Net, rng: np.random.Generator, *, eta: float, batch: int,
                 n_train: int | None, n_eval: int):
        import torch

        dt = torch.float64
        self.eta, self.batch, self.n_train = eta, batch, n_train
        self.R, self.d = teacher.runs, teacher.d
        self.Ws = torch.tensor(teacher.W, dtype=dt)
        self.Vs = torch.tensor(teacher.V, dtype=dt)
        self.W = torch.tensor(student.W, dtype=dt).clone()
        self.Vo = torch.tensor(student.V, dtype=dt).clone()
        self.Xe = self.aug(torch.tensor(rng.standard_normal((n_eval, self.d)), dtype=dt))
        Fe_t = RELU.f(self.Xe @ self.Ws)  # (R, N, m)
        self.Ye_t = Fe_t @ self.Vs
        if n_train is not None:
            self.Xtr = self.aug(torch.tensor(rng.standard_normal((self.R, n_train, self.d)), dtype=dt))
            self.Ytr = RELU.f(self.Xtr @ self.Ws) @ self.Vs
        self.rec: dict[str, list] = {k: [] for k in ("corr", "cos", "vnorm", "wnorm", "loss")}
        self.Ut = torch_unit_columns(Fe_t).transpose(1, 2)  # (R, m, N)
        self.Wt_unit = (self.Ws / torch.linalg.norm(self.Ws, dim=1, keepdim=True)).transpose(1, 2)
        self.ridx = torch.arange(self.R)[:, None]

    @staticmethod
    def aug(x):
        import torch

        return torch.cat([x, torch.ones(x.shape[:-1] + (1,), dtype=x.dtype)], dim=-1)

    def draw(self, k: int, gen):
        import torch

        if self.n_train is None:  # online: fresh inputs and their teacher outputs
            Xc = self.aug(torch.randn((k, self.R, self.batch, self.d), generator=gen, dtype=torch.float64))
            return Xc, RELU.f(Xc @ self.Ws) @ self.Vs
        return torch.randint(self.n_train, (k, self.R, self.batch), generator=gen)  # batch indices

    def step(self, data, i: int) -> None:  # eq. 5, by hand
        if self.n_train is None:
            X, Y = data[0][i], data[1][i]
        else:
            X, Y = self.Xtr[self.ridx, data[i]], self.Ytr[self.ridx, data[i]]
        H = X @ self.W
        A = RELU.f(H)
        E = Y - A @ self.Vo
        G = (E @ self.Vo.transpose(1, 2)) * RELU.df(H)
        self.Vo += (self.eta / self.batch) * (A.transpose(1, 2) @ E)
        self.W += (self.eta / self.batch) * (X.transpose(1, 2) @ G)

    def record(self, step: int) -> None:  # same numbers as activation_correlation / weight_cosine, in torch
        import torch

        W, rec = self.W, self.rec
        Fs = RELU.f(self.Xe @ W)
        rec["corr"].append((self.Ut @ torch_unit_columns(Fs)).numpy())
        nw = torch.linalg.norm(W, dim=1, keepdim=True)
        rec["cos"].append((self.Wt_unit @ torch.where(nw > 0, W / torch.clamp(nw, min=1e-300), 0.0)).numpy())
        rec["vnorm"].append(torch.linalg.norm(self.Vo, dim=2).numpy().copy())
        rec["wnorm"].append(nw[:, 0, :].numpy().copy())
        rec["loss"].append((0.5 * ((self.Ye_t - Fs @ self.Vo) ** 2).sum(-1).mean(-1)).numpy())

    def weights(self) -> list:
        return [self.W]
