"""Two-layer ReLU teachers and students with augmented weights (Tian 2020, §3 and eq. 13).

A network is ``f(x) = Vᵀ relu(Wᵀ x̃)`` with ``x̃ = (x, 1)``: the biases ride in the last row
of the augmented weights ``W`` (Tian's "bias term" convention). Every array carries a leading
axis ``R`` of independent runs (seeds, polarities, widths), so one call builds, evaluates or
trains a whole batch.

Examples
--------
>>> teacher = make_teacher(d=4, m=3, C=2, p=1.0, runs=2, rng=0)
>>> teacher.W.shape, teacher.V.shape
((2, 5, 3), (2, 3, 2))
>>> student = make_student(teacher, factor=2, rng=1)
>>> hidden(student, np.ones((7, 4))).shape
(2, 7, 6)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from td_lib.core import activations
from td_lib.core import validate as V
from td_lib.core.runtime import numpy_rng

__all__ = ["Net", "check_net", "make_teacher", "make_student", "augment", "run_inputs", "hidden",
           "output"]

#: The activation of every hidden node in this package (σ = relu, σ′ = the gate 1{z > 0}).
RELU = activations.get("relu")


@dataclass
class Net:
    """A batch of ``R`` two-layer ReLU networks ``f(x) = Vᵀ relu(Wᵀ x̃)``.

    Attributes
    ----------
    W : ndarray, shape (R, d + 1, width)
        Augmented first-layer weights; column ``k`` is ``w_k = (w̃_k, b_k)``.
    V : ndarray, shape (R, width, C)
        Fan-out weights; row ``k`` is ``v_k`` (Tian's ``v_k``, the ``k``-th row of ``W_2``).
    info : dict
        What the constructor recorded (``p``, ``active_fraction``, ``factor``, ``alive``).
    """

    W: np.ndarray
    V: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def runs(self) -> int:
        """``R``, the number of independent networks."""
        return self.W.shape[0]

    @property
    def d(self) -> int:
        """Input dimension (without the constant 1)."""
        return self.W.shape[1] - 1

    @property
    def width(self) -> int:
        """Number of hidden nodes (``m`` for a teacher, ``n`` for a student)."""
        return self.W.shape[2]

    @property
    def C(self) -> int:
        """Output dimension."""
        return self.V.shape[2]


def check_net(name: str, net: Net) -> Net:
    """Return ``net`` after checking it is a :class:`Net` with consistent ``W`` and ``V``;
    errors name the argument ``name``."""
    if not isinstance(net, Net):
        raise TypeError(f"{name} must be a teacher_student.Net, got {type(net).__name__}")
    W = V.array(f"{name}.W", net.W, ndim=3)
    Vo = V.array(f"{name}.V", net.V, ndim=3)
    if Vo.shape[:2] != (W.shape[0], W.shape[2]):
        raise ValueError(f"{name}.V must have shape (runs, width, C) = ({W.shape[0]}, "
                         f"{W.shape[2]}, C), got {Vo.shape}")
    return net


def make_teacher(*, d: int, m: int, C: int, p: float | Sequence[float], runs: int = 1, rng=0,
                 active_range: tuple[float, float] = (0.3, 0.7)) -> Net:
    """Random teachers with unit-norm augmented weights and fan-out ``‖v*_j‖ = j^{-p}``.

    Parameters
    ----------
    d, m, C : int
        Input dimension, number of teacher hidden nodes, output dimension.
    p : float or sequence of float
        Teacher polarity (eq. 13). A sequence gives one value per run (length ``runs``).
    runs : int
        Number of independent teachers (leading axis).
    rng : int, None or numpy Generator
        The random source (:func:`td_lib.core.runtime.numpy_rng`).
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

    References
    ----------
    Tian (2020), *Student specialization in deep ReLU networks with finite width and input
    dimension*, eq. 13 (teacher polarity) and Assumption 1.

    Examples
    --------
    >>> t = make_teacher(d=3, m=4, C=2, p=2.0, rng=0)
    >>> np.linalg.norm(t.V[0], axis=1).round(4).tolist()  # 1, 1/4, 1/9, 1/16
    [1.0, 0.25, 0.1111, 0.0625]
    >>> round(float(np.linalg.norm(t.W[0, :, 0])), 12)  # unit augmented weights
    1.0
    """
    d = V.positive_int("d", d)
    m = V.positive_int("m", m)
    C = V.positive_int("C", C)
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
    rng = numpy_rng(rng)
    wt = rng.standard_normal((runs, d, m))
    frac = rng.uniform(lo, hi, size=(runs, m))
    # P(w̃·x + b > 0) = Φ(b/‖w̃‖) for x ~ N(0, I)
    b = np.linalg.norm(wt, axis=1) * special.ndtri(frac)
    W = np.concatenate([wt, b[:, None, :]], axis=1)
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    Vd = rng.standard_normal((runs, m, C))
    Vd /= np.linalg.norm(Vd, axis=2, keepdims=True)
    strength = np.arange(1, m + 1)[None, :] ** (-p_arr[:, None])
    return Net(W, Vd * strength[:, :, None], info={"p": p_arr, "active_fraction": frac})


def make_student(teacher: Net, *, factor: int | Sequence[int], rng=1, w_scale: float = 1.0,
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
    has zero activation and zero gradient under :func:`~td_lib.teacher_student.train`, so it
    stays zero: the run behaves exactly like a student of width ``factor × m``.
    ``info["factor"]`` is per run. ``rng`` is an int seed, ``None`` or a numpy Generator.

    Examples
    --------
    >>> t = make_teacher(d=3, m=2, C=1, p=0.0, runs=2, rng=0)
    >>> s = make_student(t, factor=[1, 3], rng=1)
    >>> s.width, (np.abs(s.W).sum(axis=1) > 0).sum(axis=1).tolist()
    (6, [2, 6])
    """
    check_net("teacher", teacher)
    if np.ndim(factor) == 0:
        factors = np.full(teacher.runs, V.positive_int("factor", factor))
    else:
        factors = np.array([V.positive_int("factor", f) for f in factor])
        if factors.shape != (teacher.runs,):
            raise ValueError(f"factor must be an int or have length runs={teacher.runs}, "
                             f"got {len(factors)} values")
    w_scale = V.finite("w_scale", w_scale, positive=True)
    v_scale = V.finite("v_scale", v_scale, nonnegative=True)
    rng = numpy_rng(rng)
    R, d, m, C = teacher.runs, teacher.d, teacher.width, teacher.C
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


def hidden(net: Net, X) -> np.ndarray:
    """Hidden activations ``f_k(x) = relu(w_kᵀ x̃)``, shape (R, N, width).

    ``X`` has shape (N, d) (shared by all runs) or (R, N, d).
    """
    check_net("net", net)
    Xa = augment(run_inputs(net, X))
    H = Xa @ net.W if Xa.ndim == 3 else np.einsum("ni,rik->rnk", Xa, net.W)
    return RELU.f(H)


def output(net: Net, X) -> np.ndarray:
    """Network output ``Vᵀ relu(Wᵀ x̃)``, shape (R, N, C).

    References
    ----------
    Tian (2020), eq. 2 (the two-layer network whose square loss SGD minimises).
    """
    return hidden(net, X) @ net.V
