"""What the modules of :mod:`td_lib.early_linear` share: the supported activations, the layer
names, the run records of the trainers (:class:`GDRun`, :class:`AgreementRun`), and checks of
checkpoints and hypercube inputs (private to the package)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from td_lib.core import activations
from td_lib.core import validate as V
from td_lib.core.run import Run, static

#: Activations of Assumption 3.2 (smooth, or piecewise linear) that the package supports;
#: their formulas are those of :mod:`td_lib.core.activations` (leaky slope 0.2).
ACTIVATION_NAMES: tuple[str, ...] = ("relu", "leaky_relu", "gelu", "tanh", "softplus")

#: Which layers are trained: the first (W), the second (v), or both.
LAYERS: tuple[str, ...] = ("first", "second", "both")

#: Where the supported activations have kinks: every Gaussian expectation in the package splits
#: its quadrature there (harmless for the smooth ones; the same nodes for all).
BREAKPOINTS: tuple[float, ...] = (0.0,)


@dataclass
class GDRun(Run):
    """Full-batch GD of a network or a linear model, at its checkpoints ``t`` (GD steps).

    ``train`` (time, [runs,] n) and ``test`` (time, [runs,] n_test; None without test inputs) are
    the predictions, ``loss`` (time, [runs]) the training loss ``(1/2n) sum_i (f(x_i) - y_i)^2``;
    ``dW`` (time, [runs]) is ``||W(t) - W(0)||_F`` of a network's first layer and ``beta``
    (time, p) the weights of a linear model (None where not recorded).

    References
    ----------
    Hu et al. (2020), eqs. (2) and (4) (the loss and GD).
    """

    train: np.ndarray
    loss: np.ndarray
    test: np.ndarray | None = None
    dW: np.ndarray | None = None
    beta: np.ndarray | None = None
    time_label: ClassVar[str] = "GD steps"


@dataclass
class AgreementRun(Run):
    """A network and its linear model trained on the same data (the agreement runs of
    :mod:`td_lib.early_linear.experiments`), at the checkpoints ``t`` (GD steps).

    Series (time first): ``t_over_T`` (``t / T``), ``rel_train``/``rel_test`` (relative RMS
    difference of the two models' predictions, NaN at t = 0), ``loss_net``/``loss_lin`` (train
    losses), ``test_net``/``test_lin`` (test losses), ``lin_net``, ``quad_net``, ``lin_lin``,
    ``quad_lin`` (overlaps of the test predictions with the linear and the quadratic or local
    part of the labels). Statics: ``d``, ``n``, ``eta``, ``T = d log d / eta``,
    ``test_best_lin`` (test loss of the converged linear model), ``lin_reach_T`` (first time, in
    units of T, the linear model's test loss is within the run's ``reach_rtol`` of it; NaN or
    None if never); for the two-layer network ``zeta2`` (``zeta^2`` of its kernel ``K1``),
    ``mode_rates`` (per-step rates of the linear model's GD modes, largest first) and
    ``psi_train`` (its features on the training set; None in a shipped reference result).

    References
    ----------
    Hu et al. (2020), Thms. 3.2, 3.5, D.1 and Cor. 3.3; §4.1 for the CNN.
    """

    t_over_T: np.ndarray
    rel_train: np.ndarray
    rel_test: np.ndarray
    loss_net: np.ndarray
    loss_lin: np.ndarray
    test_net: np.ndarray
    test_lin: np.ndarray
    lin_net: np.ndarray
    quad_net: np.ndarray
    lin_lin: np.ndarray
    quad_lin: np.ndarray
    d: int = static()
    n: int = static()
    eta: float = static()
    T: float = static()
    test_best_lin: float = static()
    lin_reach_T: float | None = static()
    zeta2: float | None = static(default=None)
    mode_rates: np.ndarray | None = static(default=None)
    psi_train: np.ndarray | None = static(default=None)
    time_label: ClassVar[str] = "GD steps"


@dataclass(kw_only=True)
class CNNAgreementRun(AgreementRun):
    """:class:`AgreementRun` of the CNN (12) (``quad_*``: the overlaps with the local part), plus
    the filter size ``q``, the number of filters ``m``, ``ntk_rel`` and ``ntk_rel_inf`` (relative
    distance of the finite- and the infinite-width NTK at initialisation to the linear kernel
    plus its identity part), ``eta_K_over_n`` (``eta ||K_CNN|| / n``) and the population rates
    ``rate_linear``, ``rate_local`` (:func:`td_lib.early_linear.cnn_walsh_rates`).

    References
    ----------
    Hu et al. (2020), §4.1, Prop. 4.1; App. C for the step bound.
    """

    q: int = static()
    m: int = static()
    ntk_rel: float = static()
    ntk_rel_inf: float = static()
    eta_K_over_n: float = static()
    rate_linear: float = static()
    rate_local: float = static()


def act(name: str) -> activations.Activation:
    """The registered activation ``name``; a name outside :data:`ACTIVATION_NAMES` raises a
    ``ValueError`` naming the argument ``activation``."""
    return activations.get(name, allowed=ACTIVATION_NAMES)


def check_checkpoints(values: Sequence[int]) -> np.ndarray:
    """``values`` as a strictly increasing int array of non-negative steps."""
    t = np.asarray(values)
    if t.ndim != 1 or t.size == 0 or not np.issubdtype(t.dtype, np.integer):
        raise TypeError("checkpoints must be a non-empty 1-d sequence of integers")
    if np.any(t < 0) or np.any(np.diff(t) <= 0):
        raise ValueError("checkpoints must be non-negative and strictly increasing")
    return t.astype(int)


def hypercube(name: str, X) -> np.ndarray:
    """``X`` as an (n, d) array with entries ±1 (Prop. 4.1's inputs)."""
    X = V.array(name, X, ndim=2)
    if not np.all(np.abs(X) == 1.0):
        raise ValueError(f"{name} must lie on the hypercube {{-1, 1}}^d (Prop. 4.1's inputs)")
    return X
