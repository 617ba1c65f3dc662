"""Minibatch SGD of a two-layer ReLU student on a teacher, all runs at once (Tian 2020, eqs. 1–5).

:func:`train` runs online SGD (a fresh Gaussian batch every step) or SGD on a finite training
set, in torch (float64, hand-written gradients, one thread by default: the matrices are small),
and records the specialisation measures of :mod:`~td_lib.teacher_student.metrics` on a
separate evaluation set (:class:`History`). The torch import happens on the first call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from td_lib.core import validate as V
from td_lib.core.runtime import bar, numpy_rng, torch_generator, torch_threads
from td_lib.teacher_student.model import RELU, Net, check_net

__all__ = ["History", "train", "eval_steps", "torch_unit_columns"]


@dataclass
class History:
    """What :func:`train` records at every evaluation time.

    Attributes
    ----------
    steps : (T,) SGD steps taken.
    corr : (T, R, m, n) activation correlations teacher × student (evaluation set).
    cos : (T, R, m, n) cosines of augmented weights.
    vnorm : (T, R, n) student fan-out norms ``‖v_k‖``.
    wnorm : (T, R, n) student first-layer norms ``‖w_k‖``.
    loss : (T, R) evaluation loss ``½ E‖f* − f‖²``.
    student : the final student.
    """

    steps: np.ndarray
    corr: np.ndarray
    cos: np.ndarray
    vnorm: np.ndarray
    wnorm: np.ndarray
    loss: np.ndarray
    student: Net

    @property
    def best_corr(self) -> np.ndarray:
        """(T, R, m): best student correlation per teacher node."""
        return self.corr.max(axis=-1)

    @property
    def best_cos(self) -> np.ndarray:
        """(T, R, m): best student weight cosine per teacher node."""
        return self.cos.max(axis=-1)


def eval_steps(steps: int, every: int, log: bool = False) -> np.ndarray:
    """The evaluation steps of :func:`train`: ``0, every, 2·every, …`` and ``steps``; with
    ``log``, step 0 and about 60 log-spaced steps up to ``steps``.

    Examples
    --------
    >>> eval_steps(250, 100).tolist()
    [0, 100, 200, 250]
    """
    if log:
        return np.unique(np.r_[0, np.round(np.geomspace(1, steps, 60)).astype(int)])
    return np.unique(np.r_[np.arange(0, steps + 1, every), steps])


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
        If true, evaluate at about 60 log-spaced steps instead of every ``eval_every``.
    threads : int
        Torch threads while training (restored afterwards). The matrices are small, so one
        thread is fastest and leaves the other cores alone.

    Returns
    -------
    History

    Notes
    -----
    The gradients are written out by hand (no autograd): with ``H = X̃W``, ``A = relu(H)``,
    ``E = f* − AV``, the SGD step is ``V += η·AᵀE/B`` and ``W += η·X̃ᵀ[(EVᵀ)⊙1{H>0}]/B``
    (eq. 5: ``g_1 = D_1 V_1ᵀ e_1``).

    References
    ----------
    Tian (2020), eqs. 1–2 (square loss, SGD) and eq. 5 (the back-propagated gradient).
    """
    import torch

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
    rng = numpy_rng(rng)
    with torch_threads(threads), torch.no_grad():
        R, d = teacher.runs, teacher.d
        gen = torch_generator(rng)
        dt = torch.float64
        relu, gate = RELU.f, RELU.df

        Ws = torch.tensor(teacher.W, dtype=dt)
        Vs = torch.tensor(teacher.V, dtype=dt)
        W = torch.tensor(student.W, dtype=dt).clone()
        Vo = torch.tensor(student.V, dtype=dt).clone()

        def aug(x):
            return torch.cat([x, torch.ones(x.shape[:-1] + (1,), dtype=dt)], dim=-1)

        Xe = aug(torch.tensor(rng.standard_normal((n_eval, d)), dtype=dt))
        Fe_t = relu(Xe @ Ws)  # (R, N, m)
        Ye_t = Fe_t @ Vs
        Xtr = Ytr = None
        if n_train is not None:
            Xtr = aug(torch.tensor(rng.standard_normal((R, n_train, d)), dtype=dt))
            Ytr = relu(Xtr @ Ws) @ Vs
        ev = eval_steps(steps, eval_every, log_eval)
        ev_set = set(ev.tolist())
        rec: dict[str, list] = {k: [] for k in ("corr", "cos", "vnorm", "wnorm", "loss")}
        Ut = torch_unit_columns(Fe_t).transpose(1, 2)  # (R, m, N)
        Wt_unit = (Ws / torch.linalg.norm(Ws, dim=1, keepdim=True)).transpose(1, 2)

        def record():  # same numbers as activation_correlation / weight_cosine, in torch
            Fs = relu(Xe @ W)
            rec["corr"].append((Ut @ torch_unit_columns(Fs)).numpy())
            nw = torch.linalg.norm(W, dim=1, keepdim=True)
            rec["cos"].append((Wt_unit @ torch.where(nw > 0, W / torch.clamp(nw, min=1e-300),
                                                     0.0)).numpy())
            rec["vnorm"].append(torch.linalg.norm(Vo, dim=2).numpy().copy())
            rec["wnorm"].append(nw[:, 0, :].numpy().copy())
            rec["loss"].append((0.5 * ((Ye_t - Fs @ Vo) ** 2).sum(-1).mean(-1)).numpy())

        ridx = torch.arange(R)[:, None]
        chunk = 256
        it = range(0, steps, chunk)
        record()
        for c0 in bar(it, progress, "SGD", total=len(it)):
            k = min(chunk, steps - c0)
            if n_train is None:
                Xc = aug(torch.randn((k, R, batch, d), generator=gen, dtype=dt))
                Yc = relu(Xc @ Ws) @ Vs
            else:
                idx = torch.randint(n_train, (k, R, batch), generator=gen)
            for i in range(k):
                if n_train is None:
                    X, Y = Xc[i], Yc[i]
                else:
                    X, Y = Xtr[ridx, idx[i]], Ytr[ridx, idx[i]]
                H = X @ W
                A = relu(H)
                E = Y - A @ Vo
                G = (E @ Vo.transpose(1, 2)) * gate(H)
                Vo += (eta / batch) * (A.transpose(1, 2) @ E)
                W += (eta / batch) * (X.transpose(1, 2) @ G)
                if (c0 + i + 1) in ev_set:
                    record()
        if not torch.isfinite(W).all():
            raise FloatingPointError(f"training diverged: lower eta (got eta={eta})")
        out = {k: np.asarray(v) for k, v in rec.items()}
        return History(steps=ev.astype(int),
                       student=Net(W.numpy(), Vo.numpy(), dict(student.info)), **out)
