"""Log-log slopes of escape times against the dimension, with a bootstrap over runs; see
:mod:`td_lib.escape`."""

from __future__ import annotations

import numpy as np

from td_lib.core import validate as V
from td_lib.core.runtime import numpy_rng

__all__ = ["loglog_slope", "bootstrap_slope"]


def loglog_slope(dims, values) -> float:
    """Least-squares slope of :math:`\\log` ``values`` against :math:`\\log` ``dims``."""
    x = np.log(V.array("dims", dims, ndim=1))
    y = np.log(np.asarray(values, dtype=float))
    if y.shape != x.shape:
        raise ValueError(f"values must have the shape of dims {x.shape}, got {y.shape}")
    return float(np.polyfit(x, y, 1)[0])


def bootstrap_slope(dims, times: list[np.ndarray], n_boot: int = 1000, *, rng=0
                    ) -> tuple[float, np.ndarray]:
    """Slope of log median escape time vs log d, and its bootstrap distribution over runs.

    ``times[j]`` holds the escape times of the runs at ``dims[j]`` (``inf`` allowed: the
    median stays finite while fewer than half the runs are censored). Each bootstrap replicate
    resamples the runs at every d with replacement (``rng``: an int seed, default 0, or a numpy
    Generator). Returns ``(slope, boot_slopes)``.

    Examples
    --------
    >>> dims = [16, 32, 64]
    >>> times = [np.full(5, float(d) ** 2) for d in dims]
    >>> slope, boot = bootstrap_slope(dims, times, 10, rng=0)
    >>> round(slope, 6), boot.shape
    (2.0, (10,))
    """
    n_boot = V.positive_int("n_boot", n_boot)
    rng = numpy_rng(rng)
    dims = V.array("dims", dims, ndim=1)
    if len(times) != len(dims):
        raise ValueError(f"times must hold one array per dimension ({len(dims)}), got {len(times)}")
    med = [np.median(t) for t in times]
    slope = loglog_slope(dims, med)
    boot_med = np.stack([np.median(rng.choice(t, size=(n_boot, len(t)), replace=True), axis=1)
                         for t in times], axis=1)  # (n_boot, n_dims)
    x = np.log(dims)
    xc = x - x.mean()
    ly = np.log(boot_med)
    boot = (ly - ly.mean(1, keepdims=True)) @ xc / (xc @ xc)
    return slope, boot
