"""Two-layer ReLU teacher–student specialisation (§7.4; Tian 2020, seed ``003``).

A *teacher* ``f*(x) = V*ᵀ relu(W*ᵀ x̃)`` with ``x̃ = (x, 1)`` (biases ride in the last row
of the augmented weights, Tian's "bias term" convention of §3), ``m`` hidden nodes with
augmented weights of unit norm and fan-out rows of norm ``‖v*_j‖ ∝ 1/j^p`` (eq. 13, the
"teacher polarity" ``p``). An over-realised *student* of the same form with ``n = factor·m``
hidden nodes learns it by SGD on the square loss (eq. 2), either on a finite training set
or online (a fresh batch every step). Everything is vectorised over independent runs: the
leading axis ``R`` of every weight array indexes runs (seeds, polarities, ...).

Specialisation is measured per teacher node ``j`` over time by

* the best Pearson correlation over student nodes of the activations ``f*_j(x)`` and
  ``f_k(x)`` over an evaluation set (the paper's "normalized correlation", §6 and §7);
* the best cosine between augmented weights ``w*_j`` and ``w_k`` (Definition 3: node ``k``
  is aligned with ``j`` when ``w_k = γ w*_j`` with ``γ > 0``, i.e. cosine 1).

The module also holds the analytic pieces of §5: Theorem 6's closed-form ReLU expectation
for spherically symmetric inputs, and the angle dynamics ``θ̇ = −α ψ(θ) sin θ`` (eq. 12)
with ``ψ(θ) = (π − θ)/(2π)`` from Theorem 6, its integrator, exact escape times by
quadrature and their ``1/ε`` asymptotics near ``θ = π``; and the population gradient flow
of a bias-free two-layer student in closed form (:func:`population_gradient`, its Monte
Carlo check and integrator), which shows that the pull on ``w_k`` scales with the fan-out
``‖v_k‖``, not with the ``‖w_k‖`` of eq. 10 (:func:`eq10_norm_scan`). Deep teachers
(Fig. 8) live in :mod:`td_lib.deep_teacher`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import integrate, special

from td_lib.core import validate as V
from td_lib.core.runtime import progress

__all__ = [
    "Net",
    "History",
    "THRESHOLDS",
    "make_teacher",
    "make_student",
    "augment",
    "hidden",
    "output",
    "activation_correlation",
    "weight_cosine",
    "best_match",
    "coverage_counts",
    "first_match_times",
    "focus_shifts",
    "Experiment",
    "run_experiment",
    "DEMO_SIZE",
    "staircase_demo",
    "focus_demo",
    "staircase_summary",
    "focus_summary",
    "train",
    "relu_cross_moment",
    "relu_cross_moment_mc",
    "relu_kernel",
    "population_gradient",
    "population_gradient_mc",
    "population_flow",
    "eq10_norm_scan",
    "escape_time_theorem6",
    "psi_gaussian",
    "angle_velocity",
    "integrate_angle",
    "escape_time",
    "escape_time_asymptotic",
    "escape_time_constant",
]

THRESHOLDS: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


# ----------------------------------------------------------------------------- networks


@dataclass
class Net:
    """A batch of ``R`` two-layer ReLU networks ``f(x) = Vᵀ relu(Wᵀ x̃)``.

    Attributes
    ----------
    W : ndarray, shape (R, d + 1, width)
        Augmented first-layer weights; column ``k`` is ``w_k = (w̃_k, b_k)``.
    V : ndarray, shape (R, width, C)
        Fan-out weights; row ``k`` is ``v_k`` (Tian's ``v_k``, the ``k``-th row of ``W_2``).
    """

    W: np.ndarray
    V: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def runs(self) -> int:
        return self.W.shape[0]

    @property
    def d(self) -> int:
        return self.W.shape[1] - 1

    @property
    def width(self) -> int:
        return self.W.shape[2]

    @property
    def n_out(self) -> int:
        return self.V.shape[2]


def _check_net(name: str, net: Net) -> Net:
    if not isinstance(net, Net):
        raise TypeError(f"{name} must be a teacher_student.Net, got {type(net).__name__}")
    W = V.array(f"{name}.W", net.W, ndim=3)
    Vo = V.array(f"{name}.V", net.V, ndim=3)
    if Vo.shape[:2] != (W.shape[0], W.shape[2]):
        raise ValueError(f"{name}.V must have shape (runs, width, C) = ({W.shape[0]}, "
                         f"{W.shape[2]}, C), got {Vo.shape}")
    return net


def _rng(seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, (int, np.integer)):
        return np.random.default_rng(seed)
    raise TypeError(f"seed must be an int, None or a numpy Generator, got {seed!r}")


def make_teacher(d: int, m: int, n_out: int, p: float | Sequence[float], *, runs: int = 1,
                 seed=0, active_range: tuple[float, float] = (0.3, 0.7)) -> Net:
    """Random teachers with unit-norm augmented weights and fan-out ``‖v*_j‖ = j^{-p}``.

    Parameters
    ----------
    d, m, n_out : int
        Input dimension, number of teacher hidden nodes, output dimension ``C``.
    p : float or sequence of float
        Teacher polarity (eq. 13). A sequence gives one value per run (length ``runs``).
    runs : int
        Number of independent teachers (leading axis).
    seed : int, None or Generator
    active_range : (float, float)
        For ``x ~ N(0, I_d)`` each teacher node is active on a fraction of inputs drawn
        uniformly from this range (Tian sets biases so that about half the data activate
        each node, which keeps every boundary visible, Assumption 1).

    Returns
    -------
    Net
        ``W`` columns ``w*_j = (w̃_j, b_j)/‖(w̃_j, b_j)‖`` (the paper's normalisation
        ``‖w*_j‖ = 1``, bias included); ``V`` rows of norm ``j^{-p}`` with random
        directions. ``info["p"]`` holds the per-run polarity.
    """
    d = V.positive_int("d", d)
    m = V.positive_int("m", m)
    n_out = V.positive_int("n_out", n_out)
    runs = V.positive_int("runs", runs)
    p_arr = np.broadcast_to(V.array("p", p), (runs,)).copy() if np.ndim(p) == 0 else \
        V.array("p", p, ndim=1)
    if p_arr.shape != (runs,):
        raise ValueError(f"p must be a scalar or have length runs={runs}, got {p_arr.shape}")
    if np.any(p_arr < 0):
        raise ValueError(f"p must be >= 0, got {p_arr}")
    lo = V.in_interval("active_range[0]", active_range[0], 0.0, 1.0, closed="neither")
    hi = V.in_interval("active_range[1]", active_range[1], lo, 1.0, closed="right")
    if hi >= 1.0:
        raise ValueError(f"active_range[1] must be < 1, got {hi}")
    rng = _rng(seed)
    wt = rng.standard_normal((runs, d, m))
    frac = rng.uniform(lo, hi, size=(runs, m))
    # P(w̃·x + b > 0) = Φ(b/‖w̃‖) for x ~ N(0, I)
    b = np.linalg.norm(wt, axis=1) * special.ndtri(frac)
    W = np.concatenate([wt, b[:, None, :]], axis=1)
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    Vd = rng.standard_normal((runs, m, n_out))
    Vd /= np.linalg.norm(Vd, axis=2, keepdims=True)
    strength = np.arange(1, m + 1)[None, :] ** (-p_arr[:, None])
    return Net(W, Vd * strength[:, :, None], info={"p": p_arr, "active_fraction": frac})


def make_student(teacher: Net, factor: int | Sequence[int], *, seed=1, w_scale: float = 1.0,
                 v_scale: float = 0.1) -> Net:
    """An over-realised student: ``factor × m`` hidden nodes, random initialisation.

    First-layer weights ``w̃_k ~ N(0, w_scale²/d · I)``, biases 0 (pre-activations of order
    ``w_scale`` for ``x ~ N(0, I_d)``); fan-out ``v_k ~ N(0, v_scale²/(m C) · I)`` (small, so
    the student output starts near 0). The fan-out scale per node does not depend on the
    student's width, so every node of a wide student starts as fast as a node of a narrow
    one (otherwise over-realisation would also slow every node down).

    ``factor`` may be a sequence with one over-realisation factor per run, so that students
    of different widths train in one batch: every run gets ``max(factor) × m`` nodes and the
    surplus nodes of narrower runs are set exactly to zero. A zero node (weights and bias 0)
    has zero activation and zero gradient under :func:`train`, so it stays zero: the run
    behaves exactly like a student of width ``factor × m``. ``info["factor"]`` is per run.
    """
    _check_net("teacher", teacher)
    if np.ndim(factor) == 0:
        factors = np.full(teacher.runs, V.positive_int("factor", factor))
    else:
        factors = np.array([V.positive_int("factor", f) for f in factor])
        if factors.shape != (teacher.runs,):
            raise ValueError(f"factor must be an int or have length runs={teacher.runs}, "
                             f"got {len(factors)} values")
    w_scale = V.finite("w_scale", w_scale, positive=True)
    v_scale = V.finite("v_scale", v_scale, nonnegative=True)
    rng = _rng(seed)
    R, d, m, C = teacher.runs, teacher.d, teacher.width, teacher.n_out
    n = int(factors.max()) * m
    W = np.zeros((R, d + 1, n))
    W[:, :d] = rng.standard_normal((R, d, n)) * w_scale / np.sqrt(d)
    Vs = rng.standard_normal((R, n, C)) * v_scale / np.sqrt(m * C)
    alive = np.arange(n)[None, :] < (factors * m)[:, None]
    W *= alive[:, None, :]
    Vs *= alive[:, :, None]
    return Net(W, Vs, info={"factor": factors, "alive": alive})


def augment(X: np.ndarray) -> np.ndarray:
    """Append the constant-1 input: ``x ↦ x̃ = (x, 1)`` along the last axis."""
    X = V.array("X", X)
    if X.ndim < 1:
        raise ValueError(f"X must have at least 1 dimension, got shape {X.shape}")
    return np.concatenate([X, np.ones(X.shape[:-1] + (1,))], axis=-1)


def run_inputs(net, X) -> np.ndarray:
    """``X`` checked against a batch of networks ``net`` (with ``d`` and ``runs``): shape
    ``(N, d)`` (shared by every run) or ``(runs, N, d)``."""
    X = V.array("X", X)
    if X.ndim not in (2, 3) or X.shape[-1] != net.d:
        raise ValueError(f"X must have shape (N, {net.d}) or (runs, N, {net.d}), got {X.shape}")
    if X.ndim == 3 and X.shape[0] != net.runs:
        raise ValueError(f"X has {X.shape[0]} runs, the network has {net.runs}")
    return X


def _aug_inputs(net: Net, X) -> np.ndarray:
    return augment(run_inputs(net, X))


def hidden(net: Net, X) -> np.ndarray:
    """Hidden activations ``f_k(x) = relu(w_kᵀ x̃)``, shape (R, N, width).

    ``X`` has shape (N, d) (shared by all runs) or (R, N, d).
    """
    _check_net("net", net)
    Xa = _aug_inputs(net, X)
    H = Xa @ net.W if Xa.ndim == 3 else np.einsum("ni,rik->rnk", Xa, net.W)
    return np.maximum(H, 0.0)


def output(net: Net, X) -> np.ndarray:
    """Network output ``Vᵀ relu(Wᵀ x̃)``, shape (R, N, C)."""
    return hidden(net, X) @ net.V


# ---------------------------------------------------------------- specialisation measures


def activation_correlation(F_teacher, F_student, eps: float = 1e-12) -> np.ndarray:
    """Pearson correlation between every teacher and student node over evaluation points.

    Parameters
    ----------
    F_teacher : array, shape (..., N, m)
    F_student : array, shape (..., N, n)
        Activations over the same ``N`` evaluation inputs.
    eps : float
        A node whose activation is constant over the set (a dead ReLU) has correlation 0.

    Returns
    -------
    ndarray, shape (..., m, n)
        ``ρ_jk = f̃*_jᵀ f̃_k``, ``f̃`` the centred activation vector normalised to unit length
        (the paper's normalized correlation, §7).
    """
    A = V.array("F_teacher", F_teacher)
    B = V.array("F_student", F_student)
    if A.ndim < 2 or B.ndim < 2 or A.shape[:-1] != B.shape[:-1]:
        raise ValueError(f"F_teacher and F_student must share all axes but the last, got "
                         f"{A.shape} and {B.shape}")
    if A.shape[-2] < 2:
        raise ValueError(f"need at least 2 evaluation points, got {A.shape[-2]}")

    def unit(F):
        Fc = F - F.mean(axis=-2, keepdims=True)
        nrm = np.linalg.norm(Fc, axis=-2, keepdims=True)
        scale = np.maximum(np.abs(F).max(axis=-2, keepdims=True), 1.0)
        return np.where(nrm > eps * scale, Fc / np.where(nrm > 0, nrm, 1.0), 0.0)

    return np.swapaxes(unit(A), -1, -2) @ unit(B)


def weight_cosine(W_teacher, W_student) -> np.ndarray:
    """Cosines between augmented weights, shape (..., m, n), from (..., d+1, m) and (..., d+1, n)."""
    A = V.array("W_teacher", W_teacher)
    B = V.array("W_student", W_student)
    if A.ndim < 2 or A.shape[:-1] != B.shape[:-1]:
        raise ValueError(f"W_teacher and W_student must share all axes but the last, got "
                         f"{A.shape} and {B.shape}")
    na = np.linalg.norm(A, axis=-2, keepdims=True)
    nb = np.linalg.norm(B, axis=-2, keepdims=True)
    if np.any(na == 0):
        raise ValueError("W_teacher has a zero column")
    Bn = B / np.where(nb > 0, nb, 1.0)
    return np.swapaxes(A / na, -1, -2) @ Bn


def best_match(M) -> tuple[np.ndarray, np.ndarray]:
    """Per teacher node, the best value over student nodes and the student achieving it.

    ``M`` has shape (..., m, n); returns ``(best, argbest)`` of shape (..., m).
    """
    M = V.array("M", M)
    if M.ndim < 2:
        raise ValueError(f"M must be at least 2-dimensional (..., m, n), got {M.shape}")
    return M.max(axis=-1), M.argmax(axis=-1)


def coverage_counts(best, thresholds: Sequence[float] = THRESHOLDS) -> np.ndarray:
    """Number of teacher nodes whose best match exceeds each threshold.

    ``best`` has shape (..., m); returns shape (..., len(thresholds)) of ints.
    """
    best = V.array("best", best)
    th = V.array("thresholds", thresholds, ndim=1)
    if th.size == 0 or np.any(np.abs(th) > 1):
        raise ValueError(f"thresholds must be a non-empty list of values in [-1, 1], got {th}")
    return (best[..., None, :] > th[:, None]).sum(axis=-1)


def first_match_times(times, best_history, threshold: float = 0.95) -> np.ndarray:
    """First time each teacher node's best match exceeds ``threshold`` (``inf`` if never).

    ``times`` shape (T,), ``best_history`` shape (T, ..., m); returns shape (..., m).
    """
    t = V.array("times", times, ndim=1)
    bh = V.array("best_history", best_history)
    if bh.ndim < 2 or bh.shape[0] != t.size:
        raise ValueError(f"best_history must have shape (T={t.size}, ..., m), got {bh.shape}")
    threshold = V.in_interval("threshold", threshold, -1.0, 1.0, closed="both")
    hit = bh > threshold
    first = np.argmax(hit, axis=0)
    out = t[first].astype(float)
    out[~hit.any(axis=0)] = np.inf
    return out


def focus_shifts(corr, *, peak: float = 0.6, drop: float = 0.25, final: float = 0.9) -> list[dict]:
    """Student nodes that chase one teacher node, then shift to another (Tian §5.3, Fig. 6b).

    Parameters
    ----------
    corr : array, shape (T, R, m, n)
        Correlation history (``History.corr``).
    peak : float
        The node's correlation with its first teacher ``j1`` must reach at least ``peak``...
    drop : float
        ...then fall by at least ``drop`` below that peak by the end, while...
    final : float
        ...its final correlation with another teacher ``j2`` is at least ``final``.

    Returns
    -------
    list of dict
        One record per event with keys ``run``, ``node``, ``j1``, ``j2``, ``t_peak`` (index
        into the time axis of the peak with ``j1``), ``peak``, ``end_j1``, ``end_j2``;
        sorted by decreasing ``peak − end_j1`` (the clearest shift first).
    """
    C = V.array("corr", corr, ndim=4)
    peak = V.in_interval("peak", peak, -1.0, 1.0, closed="both")
    drop = V.finite("drop", drop, positive=True)
    final = V.in_interval("final", final, -1.0, 1.0, closed="both")
    _, R, m, n = C.shape
    out = []
    for r in range(R):
        for k in range(n):
            ck = C[:, r, :, k]  # (T, m)
            j2 = int(np.argmax(ck[-1]))
            if ck[-1, j2] < final:
                continue
            others = [j for j in range(m) if j != j2]
            pk = ck[:, others].max(axis=0)
            i = int(np.argmax(pk))
            j1 = others[i]
            if pk[i] >= peak and pk[i] - ck[-1, j1] >= drop:
                t_pk = int(np.argmax(ck[:, j1]))
                out.append(dict(run=r, node=k, j1=j1, j2=j2, t_peak=t_pk, peak=float(pk[i]),
                                end_j1=float(ck[-1, j1]), end_j2=float(ck[-1, j2])))
    return sorted(out, key=lambda e: e["end_j1"] - e["peak"])


# ------------------------------------------------------------------------------ training


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


def _eval_points(T: int, every: int) -> np.ndarray:
    return np.unique(np.r_[np.arange(0, T + 1, every), T])


def train(teacher: Net, student: Net, *, steps: int, lr: float, batch: int = 16,
          n_train: int | None = None, eval_every: int = 100, n_eval: int = 2000,
          seed=0, desc: str = "SGD", show_progress: bool = True,
          log_eval: bool = False, threads: int = 1) -> History:
    """Train the student on the teacher's outputs by minibatch SGD (eq. 1–2), all runs at once.

    Parameters
    ----------
    teacher, student : Net
        Same number of runs, input dimension and output dimension.
    steps : int
        Number of SGD steps.
    lr : float
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
    seed : int, None or Generator
        Seeds the data (inputs, training set, evaluation set, batch draws).
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
    ``E = f* − AV``, the SGD step is ``V += lr·AᵀE/B`` and ``W += lr·X̃ᵀ[(EVᵀ)⊙1{H>0}]/B``
    (eq. 5: ``g_1 = D_1 V_1ᵀ e_1``).
    """
    import torch

    _check_net("teacher", teacher)
    _check_net("student", student)
    if (teacher.runs, teacher.d, teacher.n_out) != (student.runs, student.d, student.n_out):
        raise ValueError(
            f"student must match the teacher's (runs, d, C) = "
            f"{(teacher.runs, teacher.d, teacher.n_out)}, got "
            f"{(student.runs, student.d, student.n_out)}")
    steps = V.positive_int("steps", steps)
    lr = V.finite("lr", lr, positive=True)
    batch = V.positive_int("batch", batch)
    if n_train is not None:
        n_train = V.positive_int("n_train", n_train)
    eval_every = V.positive_int("eval_every", eval_every)
    n_eval = V.positive_int("n_eval", n_eval, minimum=2)
    threads = V.positive_int("threads", threads)
    old_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return _train(torch, teacher, student, steps, lr, batch, n_train, eval_every, n_eval,
                      _rng(seed), desc, show_progress, log_eval)
    finally:
        torch.set_num_threads(old_threads)


def _train(torch, teacher, student, steps, lr, batch, n_train, eval_every, n_eval, rng, desc,
           show_progress, log_eval) -> History:
    R, d = teacher.runs, teacher.d
    gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
    dt = torch.float64

    Ws = torch.tensor(teacher.W, dtype=dt)
    Vs = torch.tensor(teacher.V, dtype=dt)
    W = torch.tensor(student.W, dtype=dt).clone()
    Vo = torch.tensor(student.V, dtype=dt).clone()

    def aug(x):
        return torch.cat([x, torch.ones(x.shape[:-1] + (1,), dtype=dt)], dim=-1)

    Xe = aug(torch.tensor(rng.standard_normal((n_eval, d)), dtype=dt))
    Fe_t = torch.relu(Xe @ Ws)  # (R, N, m)
    Ye_t = Fe_t @ Vs
    Xtr = Ytr = None
    if n_train is not None:
        Xtr = aug(torch.tensor(rng.standard_normal((R, n_train, d)), dtype=dt))
        Ytr = torch.relu(Xtr @ Ws) @ Vs
    if log_eval:
        ev = np.unique(np.r_[0, np.round(np.geomspace(1, steps, 60)).astype(int)])
    else:
        ev = _eval_points(steps, eval_every)
    ev_set = set(ev.tolist())
    rec: dict[str, list] = {k: [] for k in ("corr", "cos", "vnorm", "wnorm", "loss")}

    def unit_cols(F):  # centre over the evaluation axis, normalise (dead node -> 0)
        Fc = F - F.mean(dim=-2, keepdim=True)
        nrm = torch.linalg.norm(Fc, dim=-2, keepdim=True)
        return torch.where(nrm > 1e-12, Fc / torch.clamp(nrm, min=1e-300), 0.0)

    Ut = unit_cols(Fe_t).transpose(1, 2)  # (R, m, N)
    Wt_unit = (Ws / torch.linalg.norm(Ws, dim=1, keepdim=True)).transpose(1, 2)

    def record():  # same numbers as activation_correlation / weight_cosine, in torch
        Fs = torch.relu(Xe @ W)
        rec["corr"].append((Ut @ unit_cols(Fs)).numpy())
        nw = torch.linalg.norm(W, dim=1, keepdim=True)
        rec["cos"].append((Wt_unit @ torch.where(nw > 0, W / torch.clamp(nw, min=1e-300),
                                                 0.0)).numpy())
        rec["vnorm"].append(torch.linalg.norm(Vo, dim=2).numpy().copy())
        rec["wnorm"].append(nw[:, 0, :].numpy().copy())
        rec["loss"].append((0.5 * ((Ye_t - Fs @ Vo) ** 2).sum(-1).mean(-1)).numpy())

    ridx = torch.arange(R)[:, None]
    chunk = 256
    it = range(0, steps, chunk)
    bar = progress(it, desc=desc, total=len(it)) if show_progress else it
    record()
    with torch.no_grad():
        for c0 in bar:
            k = min(chunk, steps - c0)
            if n_train is None:
                Xc = aug(torch.randn((k, R, batch, d), generator=gen, dtype=dt))
                Yc = torch.relu(Xc @ Ws) @ Vs
            else:
                idx = torch.randint(n_train, (k, R, batch), generator=gen)
            for i in range(k):
                if n_train is None:
                    X, Y = Xc[i], Yc[i]
                else:
                    X, Y = Xtr[ridx, idx[i]], Ytr[ridx, idx[i]]
                H = X @ W
                A = torch.relu(H)
                E = Y - A @ Vo
                G = (E @ Vo.transpose(1, 2)) * (H > 0)
                Vo += (lr / batch) * (A.transpose(1, 2) @ E)
                W += (lr / batch) * (X.transpose(1, 2) @ G)
                if (c0 + i + 1) in ev_set:
                    record()
    if not torch.isfinite(W).all():
        raise FloatingPointError(f"training diverged: lower lr (got lr={lr})")
    out = {k: np.asarray(v) for k, v in rec.items()}
    return History(steps=ev.astype(int), student=Net(W.numpy(), Vo.numpy(), dict(student.info)),
                   **out)


# ------------------------------------------------------------------- Theorem 6 and eq. 12


def pair_at_angle(d: int, theta: float, norm_star: float, norm_k: float,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A random pair (w*, w_k) in R^d at angle ``theta`` with norms ``norm_star``, ``norm_k``.

    Used to test Theorem 6 (``relu_cross_moment``) at prescribed angles.
    """
    d = V.positive_int("d", d, minimum=2)
    theta = V.in_interval("theta", theta, 0.0, np.pi, closed="both")
    norm_star = V.finite("norm_star", norm_star, positive=True)
    norm_k = V.finite("norm_k", norm_k, positive=True)
    a = rng.standard_normal(d)
    a /= np.linalg.norm(a)
    u = rng.standard_normal(d)
    u -= (u @ a) * a
    u /= np.linalg.norm(u)
    return norm_star * a, norm_k * (np.cos(theta) * a + np.sin(theta) * u)


def relu_cross_moment(w_star, w_k, *, dist: str = "gaussian", sigma: float = 1.0,
                      radius: float = 1.0) -> np.ndarray:
    """Theorem 6: ``E_x[x · 1{w_kᵀx > 0} · relu(w*ᵀx)]`` for spherically symmetric ``x``.

    With ``θ`` the angle between ``w*`` and ``w_k`` and ``ŵ = w/‖w‖``,

        E[x z_k f*_j] = (E‖x‖²/d) · ‖w*‖/(2π) · [(π − θ) ŵ* + sin θ · ŵ_k],

    where ``E‖x‖²/d = σ²`` for ``x ~ N(0, σ²I_d)`` and ``r²/d`` for ``x`` uniform on the
    sphere of radius ``r``. This is Tian's Theorem 6 with the constant written out. The
    expectation is degree-1 homogeneous in ``w*`` and degree-0 in ``w_k`` (``z_k`` is an
    indicator); the seed prints the prefactor ``‖w*_j‖‖w_k‖/2``, which is right only up to
    the dropped constant and with unit vectors inside the bracket.

    Parameters
    ----------
    w_star, w_k : array, shape (..., d)
        Broadcast against each other; neither may be zero.
    dist : {"gaussian", "sphere"}
    sigma : float
        Standard deviation per coordinate (Gaussian).
    radius : float
        Radius of the sphere (``dist="sphere"``).

    Returns
    -------
    ndarray, shape (..., d)
    """
    ws = V.array("w_star", w_star)
    wk = V.array("w_k", w_k)
    if ws.ndim < 1 or wk.ndim < 1 or ws.shape[-1] != wk.shape[-1]:
        raise ValueError(f"w_star and w_k must be vectors of the same length, got "
                         f"{ws.shape} and {wk.shape}")
    V.choice("dist", dist, ("gaussian", "sphere"))
    d = ws.shape[-1]
    if dist == "gaussian":
        m2 = V.finite("sigma", sigma, positive=True) ** 2
    else:
        m2 = V.finite("radius", radius, positive=True) ** 2 / d
    ns = np.linalg.norm(ws, axis=-1, keepdims=True)
    nk = np.linalg.norm(wk, axis=-1, keepdims=True)
    if np.any(ns == 0):
        raise ValueError("w_star must be non-zero")
    if np.any(nk == 0):
        raise ValueError("w_k must be non-zero")
    us, uk = ws / ns, wk / nk
    c = np.clip((us * uk).sum(-1, keepdims=True), -1.0, 1.0)
    th = np.arccos(c)
    return m2 * ns / (2 * np.pi) * ((np.pi - th) * us + np.sin(th) * uk)


def relu_cross_moment_mc(w_star, w_k, n_samples: int, *, seed=0, dist: str = "gaussian",
                         chunk: int = 200_000) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo estimate of Theorem 6's expectation, with its standard error.

    ``x ~ N(0, I_d)`` (``dist="gaussian"``) or uniform on the unit sphere. Returns the
    mean and the standard error per coordinate, each of shape (d,).
    """
    ws = V.array("w_star", w_star, ndim=1)
    wk = V.array("w_k", w_k, shape=(ws.size,))
    n_samples = V.positive_int("n_samples", n_samples, minimum=2)
    V.choice("dist", dist, ("gaussian", "sphere"))
    rng = _rng(seed)
    s1 = np.zeros(ws.size)
    s2 = np.zeros(ws.size)
    done = 0
    while done < n_samples:
        k = min(chunk, n_samples - done)
        x = rng.standard_normal((k, ws.size))
        if dist == "sphere":
            x /= np.linalg.norm(x, axis=1, keepdims=True)
        v = x * ((x @ wk > 0) * np.maximum(x @ ws, 0.0))[:, None]
        s1 += v.sum(0)
        s2 += (v * v).sum(0)
        done += k
    mean = s1 / n_samples
    var = (s2 - n_samples * mean**2) / (n_samples - 1)
    return mean, np.sqrt(np.maximum(var, 0.0) / n_samples)


def relu_kernel(a, b, *, sigma: float = 1.0) -> np.ndarray:
    """``E[relu(aᵀx) relu(bᵀx)]`` for ``x ~ N(0, σ²I_d)``: the degree-1 arc-cosine kernel

        σ² ‖a‖‖b‖/(2π) · [sin θ + (π − θ) cos θ],

    ``θ`` the angle between ``a`` and ``b`` (``= bᵀ·relu_cross_moment(a, b)``). Broadcasts
    over leading axes; a zero vector gives 0.
    """
    a = V.array("a", a)
    b = V.array("b", b)
    if a.ndim < 1 or b.ndim < 1 or a.shape[-1] != b.shape[-1]:
        raise ValueError(f"a and b must be vectors of the same length, got {a.shape} and {b.shape}")
    s2 = V.finite("sigma", sigma, positive=True) ** 2
    na = np.linalg.norm(a, axis=-1)
    nb = np.linalg.norm(b, axis=-1)
    den = np.where((na > 0) & (nb > 0), na * nb, 1.0)
    c = np.clip((a * b).sum(-1) / den, -1.0, 1.0)
    th = np.arccos(c)
    return s2 * na * nb / (2 * np.pi) * (np.sin(th) + (np.pi - th) * c)


def _flow_args(W, Vs, W_star, V_star, vname="Vo"):
    W = V.array("W", W, ndim=2)
    Vs = V.array(vname, Vs, ndim=2)
    Wt = V.array("W_star", W_star, ndim=2)
    Vt = V.array("V_star", V_star, ndim=2)
    d, n = W.shape
    if Vs.shape[0] != n:
        raise ValueError(f"{vname} must have shape (n, C) = ({n}, C), got {Vs.shape}")
    if Wt.shape[0] != d:
        raise ValueError(f"W_star must have shape (d, m) = ({d}, m), got {Wt.shape}")
    if Vt.shape != (Wt.shape[1], Vs.shape[1]):
        raise ValueError(f"V_star must have shape (m, C) = ({Wt.shape[1]}, {Vs.shape[1]}), "
                         f"got {Vt.shape}")
    if np.any(np.linalg.norm(W, axis=0) == 0):
        raise ValueError("W has a zero column (a student node with w_k = 0)")
    if np.any(np.linalg.norm(Wt, axis=0) == 0):
        raise ValueError("W_star has a zero column")
    return W, Vs, Wt, Vt


def population_gradient(W, Vo, W_star, V_star, *, sigma: float = 1.0) -> tuple[np.ndarray,
                                                                                 np.ndarray]:
    """Gradient flow of a two-layer ReLU student on the population loss, in closed form.

    Bias-free networks ``f(x) = Voᵀ relu(Wᵀx)`` (student: ``W`` (d, n), fan-outs ``Vo``
    (n, C), row ``k`` is ``v_k``; teacher
    ``W_star`` (d, m), ``V_star`` (m, C)), ``x ~ N(0, σ²I_d)``, ``J = ½E‖f* − f‖²``. With
    ``α_jk = v*_jᵀv_k``, ``β_k'k = v_k'ᵀv_k`` (Tian eq. 6) and Theorem 6's expectation
    ``M(a, w) = E[x 1{wᵀx > 0} relu(aᵀx)]`` (:func:`relu_cross_moment`),

        ẇ_k = Σ_j α_jk M(w*_j, w_k) − Σ_k' β_k'k M(w_k', w_k),
        v̇_k = Σ_j v*_j K(w_k, w*_j) − Σ_k' v_k' K(w_k, w_k')      (K = :func:`relu_kernel`).

    ``M(a, w_k)`` does not depend on ``‖w_k‖`` (a gate), so ``ẇ_k = ‖v_k‖ r̂_k`` with ``r̂_k``
    built from the unit fan-out ``v_k/‖v_k‖``: the prefactor is the fan-out norm, not the
    ``‖w_k‖`` of Tian's eq. 10. Returns ``(dW, dV)`` with the shapes of ``W`` and ``Vo``.
    """
    W, Vs, Wt, Vt = _flow_args(W, Vo, W_star, V_star)
    sigma = V.finite("sigma", sigma, positive=True)
    wk = W.T[:, None, :]                      # (n, 1, d)
    Mt = relu_cross_moment(Wt.T[None, :, :], wk, sigma=sigma)   # (n, m, d)
    Ms = relu_cross_moment(W.T[None, :, :], wk, sigma=sigma)    # (n, n, d): [k, k', :]
    alpha = Vs @ Vt.T                         # (n, m): α_jk
    beta = Vs @ Vs.T                          # (n, n): β_k'k
    dW = (np.einsum("kj,kjd->dk", alpha, Mt) - np.einsum("kq,kqd->dk", beta, Ms))
    Kt = relu_kernel(wk, Wt.T[None, :, :], sigma=sigma)         # (n, m)
    Ks = relu_kernel(wk, W.T[None, :, :], sigma=sigma)          # (n, n)
    dV = Kt @ Vt - Ks @ Vs
    return dW, dV


def population_gradient_mc(W, Vo, W_star, V_star, n_samples: int, *, seed=0,
                           sigma: float = 1.0, chunk: int = 100_000):
    """Monte Carlo estimate of :func:`population_gradient`, with standard errors.

    Averages the per-sample gradient ``x 1{Wᵀx > 0} ⊙ (Vo e)``, ``e = f*(x) − f(x)``, (and
    ``relu(Wᵀx) eᵀ`` for ``Vo``) over ``n_samples`` draws ``x ~ N(0, σ²I_d)``. Returns
    ``(dW, dV, se_W, se_V)``.
    """
    W, Vs, Wt, Vt = _flow_args(W, Vo, W_star, V_star)
    n_samples = V.positive_int("n_samples", n_samples, minimum=2)
    sigma = V.finite("sigma", sigma, positive=True)
    chunk = V.positive_int("chunk", chunk)
    rng = _rng(seed)
    d, n = W.shape
    s1W, s2W = np.zeros((d, n)), np.zeros((d, n))
    s1V, s2V = np.zeros(Vs.shape), np.zeros(Vs.shape)
    done = 0
    while done < n_samples:
        k = min(chunk, n_samples - done)
        x = sigma * rng.standard_normal((k, d))
        H = x @ W
        A = np.maximum(H, 0.0)
        E = np.maximum(x @ Wt, 0.0) @ Vt - A @ Vs           # (k, C)
        gW = x[:, :, None] * ((E @ Vs.T) * (H > 0))[:, None, :]   # (k, d, n)
        gV = A[:, :, None] * E[:, None, :]                  # (k, n, C)
        s1W += gW.sum(0)
        s2W += (gW * gW).sum(0)
        s1V += gV.sum(0)
        s2V += (gV * gV).sum(0)
        done += k
    mW, mV = s1W / n_samples, s1V / n_samples
    seW = np.sqrt(np.maximum(s2W - n_samples * mW**2, 0.0) / (n_samples - 1) / n_samples)
    seV = np.sqrt(np.maximum(s2V - n_samples * mV**2, 0.0) / (n_samples - 1) / n_samples)
    return mW, mV, seW, seV


def population_flow(W0, V0, W_star, V_star, t, *, train_v: bool = True, sigma: float = 1.0,
                    rtol: float = 1e-9, atol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Integrate the gradient flow of :func:`population_gradient` to the times ``t``.

    ``train_v=False`` holds the fan-outs ``V`` fixed (the reading of eq. 10 in which the
    coefficients ``α_jk``, ``β_k'k`` are given). Returns ``W(t)`` of shape (T, d, n) and
    ``V(t)`` of shape (T, n, C). In the full flow ``‖v_k‖² − ‖w_k‖²`` is conserved for every
    node (Tian eqs. 7 and 8 have the same right-hand side). A node that shrinks to
    ``w_k = 0`` (possible when ``‖v_k‖ ≥ ‖w_k‖`` or with ``V`` fixed) makes the flow singular:
    then a ``FloatingPointError`` asks for a shorter ``t``.
    """
    W0, V0, Wt, Vt = _flow_args(W0, V0, W_star, V_star, vname="V0")
    t = V.array("t", t, ndim=1)
    if t.size == 0 or np.any(np.diff(t) < 0) or t[0] < 0:
        raise ValueError("t must be a non-empty, non-decreasing array of times >= 0")
    d, n = W0.shape
    nw = d * n

    floor = 1e-8 * np.linalg.norm(W0, axis=0).min()

    def rhs(_, y):
        Wy = y[:nw].reshape(d, n)
        if np.linalg.norm(Wy, axis=0).min() < floor:
            raise FloatingPointError("a student node collapsed to w_k = 0, where the flow is "
                                     "singular (its direction is undefined): shorten t")
        dW, dV = population_gradient(Wy, y[nw:].reshape(V0.shape), Wt, Vt, sigma=sigma)
        return np.r_[dW.ravel(), dV.ravel() if train_v else np.zeros(dV.size)]

    y0 = np.r_[W0.ravel(), V0.ravel()]
    if t[-1] == 0:
        Y = np.tile(y0, (t.size, 1))
    else:
        sol = integrate.solve_ivp(rhs, (0.0, float(t[-1])), y0, t_eval=t, rtol=rtol, atol=atol,
                                  method="DOP853")
        if not sol.success:  # pragma: no cover
            raise RuntimeError(sol.message)
        Y = sol.y.T
    return Y[:, :nw].reshape(t.size, d, n), Y[:, nw:].reshape((t.size,) + V0.shape)


def eq10_norm_scan(scales=(0.25, 0.5, 1.0, 2.0, 4.0), *, which: str = "w",
                   n_samples: int = 200_000, seed: int = 10) -> dict:
    """Does the pull on ``w_k`` scale with ``‖w_k‖`` (Tian eq. 10) or with ``‖v_k‖``?

    A fixed two-layer configuration (``d = 6``, two teacher nodes with ``‖w*_j‖ = 1`` and
    fan-outs of norm 1 and 0.5, two student nodes, ``C = 2``, no biases, ``x ~ N(0, I)``;
    student node 0 at angle 1 rad from teacher node 0). Node 0's weight (``which="w"``) or
    fan-out (``which="v"``) is multiplied by each of ``scales``, and the component of its
    gradient ``ẇ_0`` orthogonal to ``w_0`` (the part that turns it; the self-term and eq. 10's
    ``−ν w_k`` drop out) is estimated by Monte Carlo of the per-sample gradient
    (:func:`population_gradient_mc`, independent samples per scale, seeds ``seed + i``) and
    computed in closed form (:func:`population_gradient`).

    Returns a dict with ``scales``, ``mc`` and ``mc_se`` (norm of the orthogonal part and its
    approximate standard error), ``exact``, ``z`` (largest |MC − closed form| over coordinates
    and scales, in standard errors), and ``slope_mc`` (weighted least squares, standard error
    ``slope_se``) / ``slope_exact``: log–log slopes of the orthogonal part against the scale.
    Eq. 10 (``ẇ_k = ‖w_k‖ r_k``) predicts slope 1 for ``which="w"``; the gradient has 0 (the
    gate ``z_k`` ignores ``‖w_k‖``) and 1 for ``which="v"`` (every pull carries ``α_jk`` or
    ``β_k'k``, linear in ``v_k``; per sample, scaling ``v_k`` by ``c`` gives ``c`` times the
    gradient obtained by scaling ``w_k`` by ``c``, since both scale the node's output).
    """
    sc = V.array("scales", scales, ndim=1)
    if sc.size < 2 or np.any(sc <= 0):
        raise ValueError(f"scales must hold at least two positive values, got {sc}")
    V.choice("which", which, ("w", "v"))
    n_samples = V.positive_int("n_samples", n_samples, minimum=2)
    seed = V.positive_int("seed", seed, minimum=0)
    rng = np.random.default_rng(2020)
    d = 6
    ws0, w0 = pair_at_angle(d, 1.0, 1.0, 1.0, rng)
    ws1 = rng.standard_normal(d)
    Wt = np.stack([ws0, ws1 / np.linalg.norm(ws1)], axis=1)
    Vt = rng.standard_normal((2, 2))
    Vt *= (np.array([1.0, 0.5]) / np.linalg.norm(Vt, axis=1))[:, None]
    W = np.stack([w0, rng.standard_normal(d)], axis=1)
    Vs = 0.5 * rng.standard_normal((2, 2))
    u = W[:, 0] / np.linalg.norm(W[:, 0])
    P = np.eye(d) - np.outer(u, u)
    mc, se, ex, z = [], [], [], 0.0
    for i, c in enumerate(sc):
        Wc, Vc = W.copy(), Vs.copy()
        if which == "w":
            Wc[:, 0] *= c
        else:
            Vc[0] *= c
        gW, _ = population_gradient(Wc, Vc, Wt, Vt)
        mW, _, sW, _ = population_gradient_mc(Wc, Vc, Wt, Vt, n_samples, seed=seed + i)
        z = max(z, float(np.max(np.abs(mW[:, 0] - gW[:, 0]) / sW[:, 0])))
        pm, pe = P @ mW[:, 0], P @ gW[:, 0]
        nm = float(np.linalg.norm(pm))
        mc.append(nm)
        se.append(float(np.sqrt(np.sum((P @ (pm / nm)) ** 2 * sW[:, 0] ** 2))))
        ex.append(float(np.linalg.norm(pe)))
    mc, se, ex = map(np.array, (mc, se, ex))
    ls = np.log(sc)
    wt = mc / se                                  # 1 / (standard error of log mc)
    A = np.stack([ls, np.ones_like(ls)], axis=1) * wt[:, None]
    coef, *_ = np.linalg.lstsq(A, np.log(mc) * wt, rcond=None)
    cov = np.linalg.inv(A.T @ A)
    return dict(scales=sc, mc=mc, mc_se=se, exact=ex, z=z, slope_mc=float(coef[0]),
                slope_se=float(np.sqrt(cov[0, 0])),
                slope_exact=float(np.polyfit(ls, np.log(ex), 1)[0]))


def escape_time_theorem6(eps: float, theta_end: float, alpha: float = 1.0, *,
                         sigma: float = 1.0, norm_k: float = 1.0) -> float:
    """Escape time of eq. 12 computed from Theorem 6's vector itself, for any ``σ`` and ``‖w_k‖``.

    One teacher node (``‖w*‖ = 1``) pulls one student node of norm ``norm_k`` with strength
    ``α``; the student's direction moves by ``P⊥ ẇ_k/‖w_k‖`` with ``ẇ_k = α M(w*, w_k)``
    (:func:`relu_cross_moment` with ``sigma``; the self-term is parallel to ``w_k``). The angle
    is integrated numerically from ``π − eps`` to ``theta_end`` (variable ``log(π − θ)``),
    independently of :func:`psi_gaussian`. Near ``π`` the result is
    ``(2π‖w_k‖/(ασ²))(1/ε − 1/(π − θ_end)) + O(1)``: the paper's ``t_0 ∼ 1/ε − 1/(π − θ_0)``
    with its unstated constant.
    """
    eps = V.in_interval("eps", eps, 0.0, np.pi, closed="neither")
    theta_end = V.in_interval("theta_end", theta_end, 0.0, np.pi - eps, closed="neither")
    alpha = V.finite("alpha", alpha, positive=True)
    sigma = V.finite("sigma", sigma, positive=True)
    norm_k = V.finite("norm_k", norm_k, positive=True)
    ws = np.array([1.0, 0.0])

    def theta_dot(th):
        wk = norm_k * np.array([np.cos(th), np.sin(th)])
        g = alpha * relu_cross_moment(ws, wk, sigma=sigma)
        uk = wk / norm_k
        perp = g - (g @ uk) * uk                      # P⊥ ẇ_k
        # d/dt ŵ_k = P⊥ẇ_k/‖w_k‖; the in-plane unit vector of increasing θ is (−sin θ, cos θ)
        return float(perp @ np.array([-np.sin(th), np.cos(th)])) / norm_k

    def rhs(_, u):  # u = log(π − θ)
        th = np.pi - np.exp(u[0])
        return [-theta_dot(th) / np.exp(u[0])]

    hit = lambda _, u: u[0] - np.log(np.pi - theta_end)  # noqa: E731
    hit.terminal, hit.direction = True, 1
    guess = 2 * np.pi * norm_k / (alpha * sigma**2) * (1 / eps)
    sol = integrate.solve_ivp(rhs, (0.0, 10 * guess + 100), [np.log(eps)], events=hit,
                              rtol=1e-11, atol=1e-13, method="DOP853")
    if not sol.t_events[0].size:  # pragma: no cover
        raise RuntimeError("the angle did not reach theta_end")
    return float(sol.t_events[0][0])


def psi_gaussian(theta) -> np.ndarray:
    """``ψ(θ) = (π − θ)/(2π)``: the coefficient of ``w*`` in Theorem 6 (unit vectors, σ = 1).

    Assumption 2's ``ψ`` for Gaussian inputs; ``ψ(π) = 0``.
    """
    th = V.array("theta", theta)
    if np.any((th < 0) | (th > np.pi)):
        raise ValueError("theta must lie in [0, π]")
    return (np.pi - th) / (2 * np.pi)


def angle_velocity(theta, alpha: float = 1.0) -> np.ndarray:
    """Right-hand side of eq. 12, ``θ̇ = −α ψ(θ) sin θ`` with ``ψ = psi_gaussian``.

    Near ``θ = π`` it behaves as ``−α (π − θ)²/(2π)``; near 0 as ``−α θ/2``.
    """
    alpha = V.finite("alpha", alpha, positive=True)
    th = V.array("theta", theta)
    return -alpha * psi_gaussian(th) * np.sin(th)


def integrate_angle(theta0, t, alpha: float = 1.0, *, rtol: float = 1e-10,
                    atol: float = 1e-12) -> np.ndarray:
    """Integrate eq. 12 from ``theta0`` (scalar or array of starts) to the times ``t``.

    Uses the variable ``u = log(π − θ)``, in which the slow approach away from ``π`` is
    well conditioned: ``u̇ = α sin(π − θ)/(2π)``. Returns shape ``(len(t),) + theta0.shape``.
    """
    alpha = V.finite("alpha", alpha, positive=True)
    th0 = V.array("theta0", theta0)
    if np.any((th0 <= 0) | (th0 >= np.pi)):
        raise ValueError("theta0 must lie in (0, π)")
    t = V.array("t", t, ndim=1)
    if t.size == 0 or np.any(np.diff(t) < 0) or t[0] < 0:
        raise ValueError("t must be a non-empty, non-decreasing array of times >= 0")
    shape = th0.shape
    u0 = np.log(np.pi - th0.ravel())

    def rhs(_, u):
        return alpha * np.sin(np.exp(u)) / (2 * np.pi)

    if t[-1] == 0:
        return np.broadcast_to(th0, (t.size,) + shape).copy()
    sol = integrate.solve_ivp(rhs, (0.0, float(t[-1])), u0, t_eval=t, rtol=rtol, atol=atol,
                              method="DOP853")
    if not sol.success:  # pragma: no cover
        raise RuntimeError(sol.message)
    return (np.pi - np.exp(sol.y.T)).reshape((t.size,) + shape)


def escape_time(theta_start, theta_end, alpha: float = 1.0) -> np.ndarray:
    """Exact time for eq. 12 to go from ``theta_start`` down to ``theta_end`` (quadrature).

    ``t = ∫_{θ_end}^{θ_start} dθ / (α ψ(θ) sin θ) = (2π/α) ∫_{π−θ_start}^{π−θ_end}
    du / (u sin u)``, evaluated as ``(2π/α)[1/ε − 1/u_1 + ∫ (1/(u sin u) − 1/u²) du]`` with
    ``ε = π − θ_start``, ``u_1 = π − θ_end`` (the bracketed integrand is smooth). Vectorised
    over ``theta_start``.
    """
    alpha = V.finite("alpha", alpha, positive=True)
    ts = V.array("theta_start", theta_start)
    te = V.in_interval("theta_end", theta_end, 0.0, np.pi, closed="neither")
    if np.any((ts <= 0) | (ts >= np.pi)):
        raise ValueError("theta_start must lie in (0, π)")
    if np.any(ts < te):
        raise ValueError("theta_start must be >= theta_end (θ decreases under eq. 12)")
    eps = np.pi - ts
    u1 = np.pi - te

    def reg(u):
        return 1.0 / (u * np.sin(u)) - 1.0 / u**2 if u > 1e-4 else 1.0 / 6 + 7 * u * u / 360

    rest = np.vectorize(lambda e: integrate.quad(reg, e, u1, epsabs=1e-13, epsrel=1e-12)[0])(eps)
    return (2 * np.pi / alpha) * (1.0 / eps - 1.0 / u1 + rest)


def escape_time_asymptotic(eps, theta_end, alpha: float = 1.0) -> np.ndarray:
    """The seed's asymptotic escape time with its constant: ``(2π/α)(1/ε − 1/(π − θ_end))``.

    This is the exact time for the quadratic approximation ``θ̇ = −α(π − θ)²/(2π)`` of eq. 12
    near ``π``; the exact time differs from it by ``O(1)`` as ``ε → 0`` (see
    :func:`escape_time_constant`).
    """
    alpha = V.finite("alpha", alpha, positive=True)
    e = V.array("eps", eps)
    if np.any(e <= 0):
        raise ValueError("eps must be > 0")
    te = V.in_interval("theta_end", theta_end, 0.0, np.pi, closed="neither")
    return (2 * np.pi / alpha) * (1.0 / e - 1.0 / (np.pi - te))


def escape_time_constant(theta_end: float, alpha: float = 1.0) -> float:
    """``lim_{ε→0} [escape_time(π − ε) − escape_time_asymptotic(ε)]``
    ``= (2π/α) ∫_0^{π−θ_end} (1/(u sin u) − 1/u²) du``."""
    alpha = V.finite("alpha", alpha, positive=True)
    te = V.in_interval("theta_end", theta_end, 0.0, np.pi, closed="neither")
    u1 = np.pi - te

    def reg(u):
        return 1.0 / (u * np.sin(u)) - 1.0 / u**2 if u > 1e-4 else 1.0 / 6 + 7 * u * u / 360

    return float(2 * np.pi / alpha * integrate.quad(reg, 0.0, u1, epsabs=1e-13,
                                                    epsrel=1e-12)[0])


# ------------------------------------------------------------------------- experiments


@dataclass
class Experiment:
    """A batch of teacher–student runs and what :func:`run_experiment` recorded.

    ``p``, ``factor`` and ``index`` have one entry per run: the teacher polarity, the
    over-realisation factor and the teacher/student index. Runs with the same ``index``
    share the teacher's directions (weights, biases, fan-out directions; only the strengths
    ``j^{-p}`` differ with ``p``) and the student's initialisation (a ×1 student is the first
    ``m`` nodes of the ×5 student with the same index), so polarities and widths are
    compared on the same draws.
    """

    teacher: Net
    history: History
    p: np.ndarray
    factor: np.ndarray
    index: np.ndarray

    def select(self, *, p: float | None = None, factor: int | None = None) -> np.ndarray:
        """Indices of the runs with the given polarity and/or factor."""
        ok = np.ones(self.p.size, bool)
        if p is not None:
            ok &= np.isclose(self.p, p)
        if factor is not None:
            ok &= self.factor == factor
        return np.flatnonzero(ok)


def run_experiment(configs: Sequence[tuple[float, int, int]], *, d: int = 20, m: int = 10,
                   n_out: int = 10, steps: int = 12000, lr: float = 0.2, batch: int = 16,
                   n_train: int | None = None, eval_every: int = 100, n_eval: int = 2000,
                   seed: int = 0, desc: str = "SGD", show_progress: bool = True) -> Experiment:
    """Build teachers and students for ``configs`` and train them all in one batch.

    Parameters
    ----------
    configs : sequence of (p, factor, index)
        One run per entry: polarity ``p`` (eq. 13), over-realisation ``factor``, and an
        index selecting the random draws (see :class:`Experiment`).
    d, m, n_out, steps, lr, batch, n_train, eval_every, n_eval
        As in :func:`make_teacher` and :func:`train`.
    seed : int
        Master seed: teacher ``i`` uses ``seed·1000 + i``, student ``i`` uses
        ``seed·1000 + 500 + i``, the data stream ``seed·1000 + 999``.
    """
    if len(configs) == 0:
        raise ValueError("configs must list at least one (p, factor, index) run")
    for c in configs:
        if len(c) != 3:
            raise ValueError(f"configs entries must be (p, factor, index), got {c!r}")
    seed = V.positive_int("seed", seed, minimum=0)
    ps = np.array([V.finite("p", c[0], nonnegative=True) for c in configs])
    fs = np.array([V.positive_int("factor", c[1]) for c in configs])
    ix = np.array([V.positive_int("index", c[2], minimum=0) for c in configs])
    nmax = int(fs.max()) * V.positive_int("m", m)
    Wt, Vt, Ws, Vs = [], [], [], []
    for p_, f_, i_ in zip(ps, fs, ix):
        t = make_teacher(d, m, n_out, p_, seed=seed * 1000 + int(i_))
        s = make_student(t, int(fs.max()), seed=seed * 1000 + 500 + int(i_))
        alive = np.arange(nmax) < f_ * m
        Wt.append(t.W[0])
        Vt.append(t.V[0])
        Ws.append(s.W[0] * alive)
        Vs.append(s.V[0] * alive[:, None])
    teacher = Net(np.stack(Wt), np.stack(Vt), info={"p": ps})
    student = Net(np.stack(Ws), np.stack(Vs), info={"factor": fs})
    hist = train(teacher, student, steps=steps, lr=lr, batch=batch, n_train=n_train,
                 eval_every=eval_every, n_eval=n_eval, seed=seed * 1000 + 999, desc=desc,
                 show_progress=show_progress)
    return Experiment(teacher, hist, ps, fs, ix)


# ------------------------------------------------------------- the notebook's demo runs

#: Problem size of the §7.4 demos (the paper uses d = 100, C = 50, 10–20 teacher nodes).
DEMO_SIZE = dict(d=20, m=10, n_out=10, lr=0.2, batch=16, n_eval=1000)


def staircase_demo(quick: bool = False, show_progress: bool = True) -> Experiment:
    """The notebook's online-SGD batch: polarities ``p ∈ {0, 1, 2}`` and widths ×1, ×2, ×5.

    Full size: ``p = 1`` with 6 teacher/student draws at each of ×1, ×2, ×5 (the
    over-realisation comparison, same draws across widths) and ``p = 0, 2`` with 3 draws at
    ×5; 12000 online SGD steps, evaluated every 200 steps. ``quick`` shrinks it to a smoke
    test (one draw each, 400 steps). Seeded: the check script recomputes the quoted numbers.
    """
    k1, k02, steps, every = (1, 1, 400, 100) if quick else (6, 3, 12000, 200)
    cfg = [(1.0, f, i) for f in (1, 2, 5) for i in range(k1)]
    cfg += [(p, 5, i) for p in (0.0, 2.0) for i in range(k02)]
    return run_experiment(cfg, steps=steps, eval_every=every, seed=0,
                          desc="online SGD, 3 polarities x 3 widths",
                          show_progress=show_progress, **DEMO_SIZE)


def focus_demo(quick: bool = False, show_progress: bool = True) -> Experiment:
    """The notebook's focus-shifting batch: ``p = 1``, ×5, two draws, SGD on a finite
    training set of 5000 inputs (the paper's setting: a fixed training set, many epochs);
    8000 steps (``quick``: 400), evaluated every 100 steps."""
    steps = 400 if quick else 8000
    return run_experiment([(1.0, 5, i) for i in range(2)], steps=steps, n_train=5000,
                          eval_every=100, seed=2, desc="SGD on 5000 samples",
                          show_progress=show_progress, **DEMO_SIZE)


def staircase_summary(ex: Experiment, threshold: float = 0.95) -> dict:
    """Numbers the notebook quotes from :func:`staircase_demo`.

    Returns a dict with, per polarity ``p`` (×5 students): ``first[p]`` the first-match
    times (draws × teacher nodes), ``median_first[p]`` their median per teacher node
    (``inf`` when most draws never matched it), ``matched[p]`` the mean number of teacher
    nodes matched at the end, ``spearman[p]`` the rank correlation between teacher index and
    first-match time (never-matched counted as latest), ``slope[p]`` the log–log slope of
    median first-match time against ``1/‖v*_j‖`` over the nodes matched in most draws; and,
    for ``p = 1``: ``coverage[f]`` the mean number of matched teacher nodes at the end for
    width ×f, ``coverage_curve[f]`` its mean over time, ``thresholds[f]`` mean coverage
    counts at :data:`THRESHOLDS`, ``paired_wins`` / ``paired_losses`` the number of draws in
    which both the ×2 and the ×5 student match more / either matches fewer teacher nodes
    than the ×1 student at the end, and ``vnorm_special`` / ``vnorm_unspecial`` the median
    fan-out norm of ×5 student nodes whose best teacher correlation is ≥ 0.95 / < 0.5,
    ``wnorm_special`` / ``wnorm_unspecial`` the same for the first-layer norms ``‖w_k‖``, and
    ``wnorm_init`` / ``vnorm_init`` the median ``‖w_k‖`` and ``‖v_k‖`` of those nodes at step 0.
    """
    from scipy import stats

    h = ex.history
    bc = h.best_corr
    out: dict = {k: {} for k in ("first", "median_first", "matched", "spearman", "slope",
                                 "coverage", "coverage_curve", "thresholds")}
    m = bc.shape[-1]
    j = np.arange(1, m + 1)
    for p in sorted(set(ex.p.tolist())):
        sel = ex.select(p=p, factor=5)
        fm = first_match_times(h.steps, bc[:, sel], threshold)
        out["first"][p] = fm
        out["median_first"][p] = np.median(fm, axis=0)
        out["matched"][p] = float(np.isfinite(fm).sum(axis=1).mean())
        late = np.where(np.isfinite(fm), fm, 2.0 * h.steps[-1])
        # A rank correlation is undefined when every node matched at once (or none did).
        rho = (stats.spearmanr(np.tile(j, fm.shape[0]), late.ravel()).statistic
               if np.ptp(late) > 0 else float("nan"))
        out["spearman"][p] = float(rho) if np.isfinite(rho) else float("nan")
        med = out["median_first"][p]
        ok = np.isfinite(med)
        if p > 0 and ok.sum() >= 2:
            out["slope"][p] = float(np.polyfit(p * np.log(j[ok]), np.log(med[ok]), 1)[0])
    for f in sorted(set(ex.factor.tolist())):
        sel = ex.select(p=1.0, factor=f)
        if sel.size == 0:
            continue
        cov = (bc[:, sel] > threshold).sum(axis=-1)
        out["coverage"][f] = float(cov[-1].mean())
        out["coverage_curve"][f] = cov.mean(axis=1)
        out["thresholds"][f] = coverage_counts(bc[-1, sel]).mean(axis=0)
    widths = [ex.select(p=1.0, factor=f) for f in (1, 2, 5)]
    if all(w.size for w in widths) and len({w.size for w in widths}) == 1:
        c1, c2, c5 = ((bc[-1, w] > threshold).sum(axis=-1) for w in widths)
        out["paired_wins"] = int(((c2 > c1) & (c5 > c1)).sum())
        out["paired_losses"] = int(((c2 < c1) | (c5 < c1)).sum())
        out["paired_draws"] = int(c1.size)
    sel = ex.select(p=1.0, factor=5)
    spec = h.corr[-1, sel].max(axis=1)  # (runs, n): best teacher per student node
    vn = h.vnorm[-1, sel]
    out["vnorm_special"] = float(np.median(vn[spec >= 0.95])) if np.any(spec >= 0.95) else \
        float("nan")
    out["vnorm_unspecial"] = float(np.median(vn[spec < 0.5])) if np.any(spec < 0.5) else \
        float("nan")
    wn = h.wnorm[-1, sel]
    out["wnorm_special"] = float(np.median(wn[spec >= 0.95])) if np.any(spec >= 0.95) else \
        float("nan")
    out["wnorm_unspecial"] = float(np.median(wn[spec < 0.5])) if np.any(spec < 0.5) else \
        float("nan")
    out["wnorm_init"] = float(np.median(h.wnorm[0, sel]))
    out["vnorm_init"] = float(np.median(h.vnorm[0, sel]))
    out["n_unspecial"] = int((spec < 0.5).sum())
    out["n_nodes"] = int(spec.size)
    return out


def focus_summary(ex: Experiment) -> dict:
    """The clearest focus shift in :func:`focus_demo` (see :func:`focus_shifts`), with the
    step of its peak and the step at which its correlation with the new teacher first
    exceeds 0.95; empty if there is none."""
    ev = focus_shifts(ex.history.corr)
    if not ev:
        return {}
    e = dict(ev[0])
    steps = ex.history.steps
    e["step_peak"] = int(steps[e["t_peak"]])
    c2 = ex.history.corr[:, e["run"], e["j2"], e["node"]]
    e["step_match"] = float(first_match_times(steps, c2[:, None], 0.95)[0])
    e["matched_end"] = (ex.history.best_corr[-1] > 0.95).sum(axis=-1)
    return e
