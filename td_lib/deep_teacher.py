"""Deep ReLU teacher–student networks: which layer specialises first (§7.4; Tian 2020, Fig. 8).

Tian's Fig. 8 trains a 10× over-realised student on a deep ReLU teacher with hidden widths
50-75-100-125 (input dimension 100, 50 outputs, Gaussian inputs regenerated every epoch) and
observes that "the lowest layer learns first": the student's first hidden layer specialises
to the teacher's (each teacher node copied by some student node) while the upper layers
follow later. This module runs the same experiment at a CPU-sized scale with the same shape
(widths 10-15-20-25 by default) and records the paper's measures per layer:

* for every teacher node ``j`` of layer ``l``, the best Pearson correlation over the student
  nodes of the *same* layer between the activations ``f*_{l,j}(x)`` and ``f_{l,k}(x)`` on a
  separate evaluation set (the paper's normalized correlation), and its mean over the
  teacher nodes of the layer, ``ρ_mean(l)`` (the paper's §7 measure);
* for every student node ``k``, its best correlation with a teacher node of its layer and
  ``sqrt(E_x β_kk(x))``, the root-mean-square norm of the gradient of the output with respect
  to the node's activation (``β_kk(x) = ‖V_l(x)_{:,k}‖²``, eq. 4), which equals the fan-out
  norm ``‖v_k‖`` in a two-layer network: Fig. 8's two axes.

Networks are batches of ``R`` independent runs (the leading axis of every array), trained in
one vectorised loop (torch, one thread, hand-written back-propagation, float64). Seeds follow
the conventions of :mod:`td_lib.teacher_student`: an int, ``None`` or a numpy ``Generator``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from td_lib.core import validate as V
from td_lib.core.runtime import progress
from td_lib.teacher_student import _rng, activation_correlation, run_inputs

__all__ = [
    "DeepNet",
    "DeepHistory",
    "make_deep_teacher",
    "make_deep_student",
    "hidden_layers",
    "forward",
    "fanout_rms",
    "layer_correlations",
    "train_deep",
    "crossing_epochs",
    "DEEP_DEMO",
    "fig8_demo",
    "fig8_summary",
]


@dataclass
class DeepNet:
    """A batch of ``R`` deep ReLU networks ``f(x) = W_Lᵀ relu(… relu(W_1ᵀ x + b_1) …) + b_L``.

    Attributes
    ----------
    W : list of ndarray
        ``W[l]`` has shape (R, n_l, n_{l+1}): layer ``l+1``'s weights (``n_0 = d``); the last
        entry is the linear output layer (no ReLU), shape (R, n_L, C).
    b : list of ndarray
        ``b[l]`` has shape (R, n_{l+1}): the biases.
    """

    W: list
    b: list
    info: dict = field(default_factory=dict)

    @property
    def runs(self) -> int:
        return self.W[0].shape[0]

    @property
    def d(self) -> int:
        return self.W[0].shape[1]

    @property
    def widths(self) -> tuple[int, ...]:
        """Hidden widths, lowest layer first."""
        return tuple(w.shape[2] for w in self.W[:-1])

    @property
    def n_out(self) -> int:
        return self.W[-1].shape[2]


def _check_deep(name: str, net: DeepNet) -> DeepNet:
    if not isinstance(net, DeepNet):
        raise TypeError(f"{name} must be a deep_teacher.DeepNet, got {type(net).__name__}")
    if len(net.W) < 2 or len(net.W) != len(net.b):
        raise ValueError(f"{name} needs at least one hidden layer and one bias per weight "
                         f"matrix, got {len(net.W)} weights and {len(net.b)} biases")
    R, prev = net.W[0].shape[0], net.W[0].shape[1]
    for i, (w, b) in enumerate(zip(net.W, net.b)):
        w = V.array(f"{name}.W[{i}]", w, ndim=3)
        b = V.array(f"{name}.b[{i}]", b, ndim=2)
        if w.shape[:2] != (R, prev) or b.shape != (R, w.shape[2]):
            raise ValueError(f"{name}: layer {i} has weights {w.shape} and biases {b.shape}, "
                             f"expected ({R}, {prev}, n) and ({R}, n)")
        prev = w.shape[2]
    return net


def _widths(name: str, widths) -> tuple[int, ...]:
    if isinstance(widths, (int, np.integer)) or len(widths) == 0:
        raise ValueError(f"{name} must be a non-empty sequence of hidden widths, got {widths!r}")
    return tuple(V.positive_int(f"{name}[{i}]", w) for i, w in enumerate(widths))


def make_deep_teacher(d: int, widths: Sequence[int], n_out: int, *, runs: int = 1, seed=0,
                      active_range: tuple[float, float] = (0.4, 0.6),
                      n_calib: int = 20_000) -> DeepNet:
    """Random deep ReLU teachers whose every hidden node is active on about half the data.

    Layer by layer, each node gets a random Gaussian weight vector; on a calibration sample of
    ``n_calib`` inputs ``x ~ N(0, I_d)`` its pre-activation is scaled to unit standard
    deviation and its bias set so that the node is active on a fraction of the inputs drawn
    uniformly from ``active_range`` (Tian: "bias is set so that ∼50% of the input data
    activate the nodes", which keeps every boundary visible, Assumption 1). Random Gaussian
    weights are pairwise non-co-linear with probability 1. The output layer is linear with
    ``N(0, 1/n_L)`` weights and no bias.

    Parameters
    ----------
    d, n_out : int
        Input and output dimensions.
    widths : sequence of int
        Hidden widths, lowest layer first (the paper: 50, 75, 100, 125).
    runs : int
        Independent teachers (leading axis).
    seed : int, None or Generator
    active_range : (float, float)
        Range of the active fraction of each hidden node, inside (0, 1).
    n_calib : int
        Calibration sample size.
    """
    d = V.positive_int("d", d)
    widths = _widths("widths", widths)
    n_out = V.positive_int("n_out", n_out)
    runs = V.positive_int("runs", runs)
    n_calib = V.positive_int("n_calib", n_calib, minimum=100)
    if len(active_range) != 2:
        raise ValueError(f"active_range must be a pair (lo, hi), got {active_range!r}")
    lo = V.in_interval("active_range[0]", active_range[0], 0.0, 1.0, closed="neither")
    hi = V.in_interval("active_range[1]", active_range[1], lo, 1.0, closed="left")
    rng = _rng(seed)
    F = rng.standard_normal((runs, n_calib, d))
    Ws, bs, fracs = [], [], []
    prev = d
    for m in widths:
        W = rng.standard_normal((runs, prev, m))
        H = F @ W
        sd = H.std(axis=1)
        if np.any(sd == 0):  # pragma: no cover - a dead input layer (probability 0)
            raise FloatingPointError("a teacher layer received constant inputs")
        W /= sd[:, None, :]
        H /= sd[:, None, :]
        frac = rng.uniform(lo, hi, size=(runs, m))
        Hs = np.sort(H, axis=1)
        idx = np.clip(np.round((1.0 - frac) * (n_calib - 1)).astype(int), 0, n_calib - 1)
        b = -np.take_along_axis(Hs, idx[:, None, :], axis=1)[:, 0, :]
        Ws.append(W)
        bs.append(b)
        fracs.append(frac)
        F = np.maximum(H + b[:, None, :], 0.0)
        prev = m
    Ws.append(rng.standard_normal((runs, prev, n_out)) / np.sqrt(prev))
    bs.append(np.zeros((runs, n_out)))
    return DeepNet(Ws, bs, info={"active_fraction": fracs})


def make_deep_student(teacher: DeepNet, factor: int, *, seed=1, w_gain: float = np.sqrt(2.0),
                      v_scale: float = 0.1) -> DeepNet:
    """An over-realised student: ``factor ×`` the teacher's width in every hidden layer.

    Hidden weights ``N(0, w_gain²/fan_in)`` (He initialisation for ``w_gain = √2``), biases 0;
    output weights ``N(0, v_scale²/n_L)`` (small, so the student starts near output 0).
    """
    _check_deep("teacher", teacher)
    factor = V.positive_int("factor", factor)
    w_gain = V.finite("w_gain", w_gain, positive=True)
    v_scale = V.finite("v_scale", v_scale, positive=True)
    rng = _rng(seed)
    R, prev = teacher.runs, teacher.d
    Ws, bs = [], []
    for m in teacher.widths:
        n = factor * m
        Ws.append(rng.standard_normal((R, prev, n)) * w_gain / np.sqrt(prev))
        bs.append(np.zeros((R, n)))
        prev = n
    Ws.append(rng.standard_normal((R, prev, teacher.n_out)) * v_scale / np.sqrt(prev))
    bs.append(np.zeros((R, teacher.n_out)))
    return DeepNet(Ws, bs, info={"factor": factor})


def _inputs(net: DeepNet, X) -> np.ndarray:
    return run_inputs(net, X)


def hidden_layers(net: DeepNet, X) -> list[np.ndarray]:
    """Hidden activations of every layer, lowest first: a list of (R, N, n_l) arrays."""
    _check_deep("net", net)
    F = _inputs(net, X)
    out = []
    for W, b in zip(net.W[:-1], net.b[:-1]):
        F = np.maximum(F @ W + b[:, None, :], 0.0)
        out.append(F)
    return out


def forward(net: DeepNet, X) -> np.ndarray:
    """Network output, shape (R, N, C)."""
    top = hidden_layers(net, X)[-1]
    return top @ net.W[-1] + net.b[-1][:, None, :]


def fanout_rms(net: DeepNet, X) -> list[np.ndarray]:
    """``sqrt(E_x β_kk(x))`` for every hidden node, lowest layer first: (R, n_l) arrays.

    ``β_kk(x) = Σ_c (∂f_c/∂f_{l,k})²`` is the squared norm of column ``k`` of Tian's
    ``V_l(x)`` (eq. 4: ``V_{l-1} = V_l D_l W_lᵀ``, ``V_L = I``), the average taken over the
    rows of ``X``. For the top hidden layer it is exactly the fan-out norm ``‖v_k‖``.
    """
    _check_deep("net", net)
    X = _inputs(net, X)
    acts = hidden_layers(net, X)
    R, N, C = net.runs, acts[0].shape[-2], net.n_out
    J = np.broadcast_to(np.swapaxes(net.W[-1], 1, 2)[:, None], (R, N, C, net.widths[-1]))
    out = [None] * len(acts)
    for i in range(len(acts) - 1, -1, -1):
        out[i] = np.sqrt(np.mean(np.sum(J * J, axis=2), axis=1))
        if i > 0:
            gate = (acts[i] > 0)[:, :, None, :]
            J = (J * gate) @ np.swapaxes(net.W[i], 1, 2)[:, None]
    return out


def layer_correlations(teacher: DeepNet, student: DeepNet, X) -> list[np.ndarray]:
    """Activation correlations teacher × student per hidden layer: (R, m_l, n_l) arrays."""
    _check_deep("teacher", teacher)
    _check_deep("student", student)
    if len(teacher.widths) != len(student.widths) or teacher.runs != student.runs:
        raise ValueError(f"teacher and student must have the same depth and runs, got "
                         f"{teacher.widths} x {teacher.runs} and {student.widths} x "
                         f"{student.runs}")
    return [activation_correlation(a, b) for a, b in
            zip(hidden_layers(teacher, X), hidden_layers(student, X))]


@dataclass
class DeepHistory:
    """What :func:`train_deep` records.

    Attributes
    ----------
    epochs : (T,) evaluation times in epochs (``epoch_size`` samples each).
    best_corr : list over layers of (T, R, m_l): best student correlation per teacher node.
    rho_mean : (T, R, L) its mean over the teacher nodes of each layer (``ρ_mean``).
    loss : (T, R) evaluation loss ``½ E‖f* − f‖²``.
    snapshots : dict epoch -> dict with ``node_corr`` (list over layers of (R, n_l): each
        student node's best correlation with a teacher node) and ``fanout`` (list of (R, n_l):
        :func:`fanout_rms`), at the requested snapshot epochs.
    student : the final student.
    X_eval : (N, d) the evaluation inputs.
    """

    epochs: np.ndarray
    best_corr: list
    rho_mean: np.ndarray
    loss: np.ndarray
    snapshots: dict
    student: DeepNet
    X_eval: np.ndarray


def train_deep(teacher: DeepNet, student: DeepNet, *, epochs: float, lr: float, batch: int = 16,
               epoch_size: int = 10_000, evals_per_epoch: int = 2,
               snapshot_epochs: Sequence[float] = (), n_eval: int = 2000, n_fanout: int = 500,
               seed=0, desc: str = "deep SGD", show_progress: bool = True,
               threads: int = 1) -> DeepHistory:
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
    lr, batch, epoch_size : learning rate, batch size, samples per epoch.
    evals_per_epoch : int
        Evaluations per epoch (plus epoch 0).
    snapshot_epochs : sequence of float
        Epochs at which to store every student node's best correlation and
        :func:`fanout_rms` (the nearest evaluation time is used).
    n_eval : int
        Size of the (separate, fixed) evaluation set for the correlations.
    n_fanout : int
        Number of evaluation points averaged in :func:`fanout_rms` at snapshots.
    seed : int, None or Generator
        Seeds the data stream and the evaluation set.
    threads : int
        Torch threads while training (the matrices are small: one is fastest).

    Notes
    -----
    Back-propagation is written out: with ``A_0 = x``, ``H_l = A_{l-1}W_l + b_l``,
    ``A_l = relu(H_l)``, output ``A_L W_out + b_out`` and ``G = (f* − f)/B``, each layer gets
    ``W_l += lr·A_{l-1}ᵀG``, ``b_l += lr·ΣG`` and passes ``G ← (G W_lᵀ) ⊙ 1{H_{l-1} > 0}``
    down (eq. 1 and Lemma 1: ``g_{l-1} = D_{l-1} W_l g_l``).
    """
    import torch

    _check_deep("teacher", teacher)
    _check_deep("student", student)
    if (len(teacher.widths), teacher.runs, teacher.d, teacher.n_out) != \
            (len(student.widths), student.runs, student.d, student.n_out):
        raise ValueError(
            f"student must match the teacher's (depth, runs, d, C) = "
            f"{(len(teacher.widths), teacher.runs, teacher.d, teacher.n_out)}, got "
            f"{(len(student.widths), student.runs, student.d, student.n_out)}")
    epochs = V.finite("epochs", epochs, positive=True)
    lr = V.finite("lr", lr, positive=True)
    batch = V.positive_int("batch", batch)
    epoch_size = V.positive_int("epoch_size", epoch_size)
    evals_per_epoch = V.positive_int("evals_per_epoch", evals_per_epoch)
    n_eval = V.positive_int("n_eval", n_eval, minimum=2)
    n_fanout = V.positive_int("n_fanout", n_fanout)
    threads = V.positive_int("threads", threads)
    snaps = [V.finite("snapshot_epochs", s, nonnegative=True) for s in snapshot_epochs]
    steps_per_epoch = max(1, epoch_size // batch)
    steps = max(1, int(round(epochs * steps_per_epoch)))
    n_ev = int(np.ceil(steps * evals_per_epoch / steps_per_epoch))
    ev = np.unique(np.r_[np.round(np.arange(n_ev + 1) * steps_per_epoch / evals_per_epoch)
                         .astype(int).clip(0, steps), steps])
    snap_steps = {int(ev[np.argmin(np.abs(ev - s * steps_per_epoch))]): s for s in snaps}
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return _train_deep(torch, teacher, student, steps, steps_per_epoch, lr, batch, ev,
                           snap_steps, n_eval, n_fanout, _rng(seed), desc, show_progress)
    finally:
        torch.set_num_threads(old)


def _sgd_step(W: list, b: list, X, Y, lr: float) -> None:
    """One SGD step on ``½‖Y − f(X)‖²`` averaged over the batch, in place (torch tensors).

    ``W[l]`` (R, n_l, n_{l+1}), ``b[l]`` (R, 1, n_{l+1}), ``X`` (R, B, d), ``Y`` (R, B, C).
    Back-propagation by hand (see :func:`train_deep`); every layer's update uses the weights
    before the step.
    """
    import torch

    L = len(W) - 1
    A, Hs, As = X, [], [X]
    for i in range(L):
        H = A @ W[i] + b[i]
        A = torch.relu(H)
        Hs.append(H)
        As.append(A)
    G = (Y - (A @ W[L] + b[L])) * (lr / X.shape[-2])
    for layer in range(L, -1, -1):
        gW = As[layer].transpose(1, 2) @ G
        gb = G.sum(dim=1, keepdim=True)
        if layer > 0:
            G = (G @ W[layer].transpose(1, 2)) * (Hs[layer - 1] > 0)
        W[layer] += gW
        b[layer] += gb


def _train_deep(torch, teacher, student, steps, steps_per_epoch, lr, batch, ev, snap_steps,
                n_eval, n_fanout, rng, desc, show_progress) -> DeepHistory:
    dt = torch.float64
    R, d, L = teacher.runs, teacher.d, len(teacher.widths)
    gen = torch.Generator().manual_seed(int(rng.integers(2**62)))

    def t(a):
        return torch.tensor(np.asarray(a), dtype=dt)

    tW, tb = [t(w) for w in teacher.W], [t(b)[:, None, :] for b in teacher.b]
    W, b = [t(w).clone() for w in student.W], [t(b_)[:, None, :].clone() for b_ in student.b]

    def fwd(Ws, bs, X):  # output and activations (input first)
        A, As = X, [X]
        for i in range(L):
            A = torch.relu(A @ Ws[i] + bs[i])
            As.append(A)
        return A @ Ws[L] + bs[L], As

    def unit_cols(F):  # centre over the evaluation axis, normalise (dead node -> 0)
        Fc = F - F.mean(dim=-2, keepdim=True)
        nrm = torch.linalg.norm(Fc, dim=-2, keepdim=True)
        return torch.where(nrm > 1e-12, Fc / torch.clamp(nrm, min=1e-300), 0.0)

    Xe_np = rng.standard_normal((n_eval, d))
    Xe = t(Xe_np)
    Ye, tacts = fwd(tW, tb, Xe)
    Ut = [unit_cols(a).transpose(1, 2) for a in tacts[1:]]  # (R, m_l, N)
    best: list[list] = [[] for _ in range(L)]
    rho, loss, snapshots = [], [], {}

    def record(step):
        out, acts = fwd(W, b, Xe)
        node_corr = []
        rm = []
        for i in range(L):
            c = Ut[i] @ unit_cols(acts[i + 1])  # (R, m, n)
            bc = c.max(dim=-1).values.numpy()
            best[i].append(bc)
            rm.append(bc.mean(axis=-1))
            node_corr.append(c.max(dim=-2).values.numpy())
        rho.append(np.stack(rm, axis=-1))
        loss.append((0.5 * ((Ye - out) ** 2).sum(-1).mean(-1)).numpy())
        if step in snap_steps:
            net = DeepNet([w.numpy().copy() for w in W], [b_[:, 0].numpy().copy() for b_ in b])
            snapshots[snap_steps[step]] = dict(
                epoch=step / steps_per_epoch, node_corr=node_corr,
                fanout=fanout_rms(net, Xe_np[:n_fanout]))

    ev_set = set(ev.tolist())
    chunk = 256
    it = range(0, steps, chunk)
    bar = progress(it, desc=desc, total=len(it)) if show_progress else it
    with torch.no_grad():
        record(0)
        for c0 in bar:
            k = min(chunk, steps - c0)
            Xc = torch.randn((k, R, batch, d), generator=gen, dtype=dt)
            Yc, _ = fwd(tW, tb, Xc)
            for i in range(k):
                _sgd_step(W, b, Xc[i], Yc[i], lr)
                if (c0 + i + 1) in ev_set:
                    record(c0 + i + 1)
    if not all(torch.isfinite(w).all() for w in W):
        raise FloatingPointError(f"training diverged: lower lr (got lr={lr})")
    final = DeepNet([w.numpy() for w in W], [b_[:, 0].numpy() for b_ in b],
                    info=dict(student.info))
    return DeepHistory(epochs=ev / steps_per_epoch,
                       best_corr=[np.asarray(x) for x in best], rho_mean=np.asarray(rho),
                       loss=np.asarray(loss), snapshots=snapshots, student=final,
                       X_eval=Xe_np)


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


# ------------------------------------------------------------------ the notebook's demo run

#: Fig. 8 at CPU scale: the paper's shape (four hidden layers, widths growing 2:3:4:5,
#: d = 2 m_1, C = m_1) at a fifth of its width, a 5× over-realised student (the paper: 10×).
DEEP_DEMO = dict(d=20, widths=(10, 15, 20, 25), n_out=10, factor=5, runs=3, lr=0.05, batch=16,
                 epoch_size=10_000)


def fig8_demo(quick: bool = False, show_progress: bool = True) -> tuple[DeepNet, DeepHistory]:
    """The notebook's deep run: :data:`DEEP_DEMO`, 3 seeds (teachers and students) in one
    batch, 30 epochs of online SGD (``quick``: 0.2 epochs), evaluated every half epoch, with
    Fig. 8 snapshots at epochs 1, 3, 10 and 30. Seeded: the check script recomputes it."""
    c = DEEP_DEMO
    ep = 0.2 if quick else 30.0
    snaps = (0.2,) if quick else (1.0, 3.0, 10.0, 30.0)
    teacher = make_deep_teacher(c["d"], c["widths"], c["n_out"], runs=c["runs"], seed=74)
    student = make_deep_student(teacher, c["factor"], seed=75)
    hist = train_deep(teacher, student, epochs=ep, lr=c["lr"], batch=c["batch"],
                      epoch_size=c["epoch_size"], evals_per_epoch=2, snapshot_epochs=snaps,
                      seed=76, desc="deep teacher, online SGD", show_progress=show_progress)
    return teacher, hist


def fig8_summary(hist: DeepHistory, thresholds: Sequence[float] = (0.7, 0.9)) -> dict:
    """Numbers the notebook quotes from :func:`fig8_demo`.

    Returns ``cross[τ]`` (runs × layers: first epoch with ``ρ_mean ≥ τ``, ``inf`` if never),
    ``median_cross[τ]`` (per layer, median over runs), ``lowest_first[τ]`` (number of runs
    in which layer 1 reaches ``τ`` strictly before every other layer), ``final`` (runs ×
    layers: ``ρ_mean`` at the end), ``initial`` (the same at epoch 0) and, per snapshot epoch,
    ``frac_special[e]`` (layers: fraction of student nodes whose best correlation is ≥ 0.9).
    """
    out: dict = {"cross": {}, "median_cross": {}, "lowest_first": {}}
    for tau in thresholds:
        c = crossing_epochs(hist.epochs, hist.rho_mean, tau)
        out["cross"][tau] = c
        out["median_cross"][tau] = np.median(c, axis=0)
        first = np.isfinite(c[:, 0]) & np.all(c[:, :1] < c[:, 1:], axis=1)
        out["lowest_first"][tau] = int(first.sum())
    out["final"] = hist.rho_mean[-1]
    out["initial"] = hist.rho_mean[0]
    out["frac_special"] = {e: np.array([float(np.mean(nc >= 0.9)) for nc in s["node_corr"]])
                           for e, s in hist.snapshots.items()}
    out["runs"] = int(hist.rho_mean.shape[1])
    return out
