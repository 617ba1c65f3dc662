"""What the modules of :mod:`td_lib.early_linear` share: the supported activations, the layer
names, and checks of checkpoints and hypercube inputs (private to the package)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from td_lib.core import activations
from td_lib.core import validate as V

#: Activations of Assumption 3.2 (smooth, or piecewise linear) that the package supports;
#: their formulas are those of :mod:`td_lib.core.activations` (leaky slope 0.2).
ACTIVATION_NAMES: tuple[str, ...] = ("relu", "leaky_relu", "gelu", "tanh", "softplus")

#: Which layers are trained: the first (W), the second (v), or both.
LAYERS: tuple[str, ...] = ("first", "second", "both")

#: Where the supported activations have kinks: every Gaussian expectation in the package splits
#: its quadrature there (harmless for the smooth ones; the same nodes for all).
BREAKPOINTS: tuple[float, ...] = (0.0,)


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
