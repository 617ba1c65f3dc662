"""Deep ReLU networks for the teacher–student experiment of Tian (2020), §6 and Fig. 8.

A :class:`DeepNet` is a batch of ``R`` deep ReLU networks (the leading axis of every array);
teachers have every hidden node active on about half the data, students are over-realised
copies of the architecture (:func:`make_deep_student`). Activations, output, the
per-node output gradient ``sqrt(E β_kk)`` of Fig. 8 and layerwise correlations are numpy.

Examples
--------
>>> t = make_deep_teacher(d=6, widths=(3, 4), C=2, runs=2, rng=0)
>>> s = make_deep_student(t, factor=2, rng=1)
>>> t.widths, s.widths, forward(s, np.ones((5, 6))).shape
((3, 4), (6, 8), (2, 5, 2))
>>> [c.shape for c in layer_correlations(t, s, np.random.default_rng(2).standard_normal((50, 6)))]
[(2, 3, 6), (2, 4, 8)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from td_lib.core import validate as V
from td_lib.core.runtime import numpy_rng
from td_lib.teacher_student.metrics import activation_correlation
from td_lib.teacher_student.model import RELU, run_inputs

__all__ = ["DeepNet", "check_deep_net", "make_deep_teacher", "make_deep_student", "hidden_layers",
           "forward", "fanout_rms", "layer_correlations"]


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
    info : dict
        What the constructor recorded (``active_fraction``, ``factor``).
    """

    W: list
    b: list
    info: dict = field(default_factory=dict)

    @property
    def runs(self) -> int:
        """``R``, the number of independent networks."""
        return self.W[0].shape[0]

    @property
    def d(self) -> int:
        """Input dimension."""
        return self.W[0].shape[1]

    @property
    def widths(self) -> tuple[int, ...]:
        """Hidden widths, lowest layer first."""
        return tuple(w.shape[2] for w in self.W[:-1])

    @property
    def C(self) -> int:
        """Output dimension."""
        return self.W[-1].shape[2]


def check_deep_net(name: str, net: DeepNet) -> DeepNet:
    """Return ``net`` after checking it is a :class:`DeepNet` with consistent layer shapes;
    errors name the argument ``name``."""
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


def make_deep_teacher(*, d: int, widths: Sequence[int], C: int, runs: int = 1, rng=0,
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
    d, C : int
        Input and output dimensions.
    widths : sequence of int
        Hidden widths, lowest layer first (the paper: 50, 75, 100, 125).
    runs : int
        Independent teachers (leading axis).
    rng : int, None or numpy Generator
    active_range : (float, float)
        Range of the active fraction of each hidden node, inside (0, 1).
    n_calib : int
        Calibration sample size.

    References
    ----------
    Tian (2020), §7 (teacher construction: biases so that about 50 % of the data activate
    each node) and Assumption 1.
    """
    d = V.positive_int("d", d)
    widths = _widths("widths", widths)
    C = V.positive_int("C", C)
    runs = V.positive_int("runs", runs)
    n_calib = V.positive_int("n_calib", n_calib, minimum=100)
    if len(active_range) != 2:
        raise ValueError(f"active_range must be a pair (lo, hi), got {active_range!r}")
    lo = V.in_interval("active_range[0]", active_range[0], 0.0, 1.0, closed="neither")
    hi = V.in_interval("active_range[1]", active_range[1], lo, 1.0, closed="left")
    rng = numpy_rng(rng)
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
        F = RELU.f(H + b[:, None, :])
        prev = m
    Ws.append(rng.standard_normal((runs, prev, C)) / np.sqrt(prev))
    bs.append(np.zeros((runs, C)))
    return DeepNet(Ws, bs, info={"active_fraction": fracs})


def make_deep_student(teacher: DeepNet, *, factor: int, rng=1, w_gain: float = np.sqrt(2.0),
                      v_scale: float = 0.1) -> DeepNet:
    """An over-realised student: ``factor ×`` the teacher's width in every hidden layer.

    Hidden weights ``N(0, w_gain²/fan_in)`` (He initialisation for ``w_gain = √2``), biases 0;
    output weights ``N(0, v_scale²/n_L)`` (small, so the student starts near output 0).
    ``rng`` is an int seed, ``None`` or a numpy Generator.
    """
    check_deep_net("teacher", teacher)
    factor = V.positive_int("factor", factor)
    w_gain = V.finite("w_gain", w_gain, positive=True)
    v_scale = V.finite("v_scale", v_scale, positive=True)
    rng = numpy_rng(rng)
    R, prev = teacher.runs, teacher.d
    Ws, bs = [], []
    for m in teacher.widths:
        n = factor * m
        Ws.append(rng.standard_normal((R, prev, n)) * w_gain / np.sqrt(prev))
        bs.append(np.zeros((R, n)))
        prev = n
    Ws.append(rng.standard_normal((R, prev, teacher.C)) * v_scale / np.sqrt(prev))
    bs.append(np.zeros((R, teacher.C)))
    return DeepNet(Ws, bs, info={"factor": factor})


def hidden_layers(net: DeepNet, X) -> list[np.ndarray]:
    """Hidden activations of every layer, lowest first: a list of (R, N, n_l) arrays."""
    check_deep_net("net", net)
    F = run_inputs(net, X)
    out = []
    for W, b in zip(net.W[:-1], net.b[:-1]):
        F = RELU.f(F @ W + b[:, None, :])
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

    References
    ----------
    Tian (2020), eq. 4 and Fig. 8 (its vertical axis).
    """
    check_deep_net("net", net)
    X = run_inputs(net, X)
    acts = hidden_layers(net, X)
    R, N, C = net.runs, acts[0].shape[-2], net.C
    J = np.broadcast_to(np.swapaxes(net.W[-1], 1, 2)[:, None], (R, N, C, net.widths[-1]))
    out = [None] * len(acts)
    for i in range(len(acts) - 1, -1, -1):
        out[i] = np.sqrt(np.mean(np.sum(J * J, axis=2), axis=1))
        if i > 0:
            gate = RELU.df(acts[i])[:, :, None, :]
            J = (J * gate) @ np.swapaxes(net.W[i], 1, 2)[:, None]
    return out


def layer_correlations(teacher: DeepNet, student: DeepNet, X) -> list[np.ndarray]:
    """Activation correlations teacher × student per hidden layer: (R, m_l, n_l) arrays."""
    check_deep_net("teacher", teacher)
    check_deep_net("student", student)
    if len(teacher.widths) != len(student.widths) or teacher.runs != student.runs:
        raise ValueError(f"teacher and student must have the same depth and runs, got "
                         f"{teacher.widths} x {teacher.runs} and {student.widths} x "
                         f"{student.runs}")
    return [activation_correlation(a, b) for a, b in
            zip(hidden_layers(teacher, X), hidden_layers(student, X))]
