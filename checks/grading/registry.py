"""The registry of baked regions: :func:`baked` registers a function as the content of the region
named after it (see :mod:`checks.grading.bake`).

The bottom of the baked modules: :mod:`checks.grading.baked` and the per-topic
``checks/grading/baked_*.py`` import :func:`baked` from here, and this module imports none of
them (no import cycle). :func:`registry` imports them all, which registers every region.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

REGISTRY: dict[str, Callable[[], dict[str, Any]]] = {}

#: the modules whose ``@baked`` functions fill the regions, imported by :func:`registry`
MODULES = ("baked", "baked_cnn_lcn", "baked_early_linear", "baked_escape", "baked_spectral_bias",
           "baked_teacher_nodes")


def baked(fn: Callable[[], dict[str, Any]] | None = None, *, rtol: float | None = None,
          digits: int | None = None, atol: float | None = None):
    """Register ``fn`` as the content of the region named ``fn.__name__``; ``rtol``: the drift
    tolerance of ``bake --check`` when the reference amplifies rounding (default 1e-12);
    ``digits``: significant digits of a demo's reference result (rounded for the reader);
    ``atol``: an absolute drift tolerance for values that are numerically zero (an ODE's noise)."""
    def register(f):
        if rtol is not None:
            f.rtol = rtol
        if atol is not None:
            f.atol = atol
        if digits is not None:
            f.digits = digits
        REGISTRY[f.__name__] = f
        return f

    return register(fn) if fn is not None else register


def registry() -> dict[str, Callable[[], dict[str, Any]]]:
    """Region name -> the function computing it, every module of :data:`MODULES` imported."""
    import importlib

    for mod in MODULES:
        importlib.import_module(f"checks.grading.{mod}")
    return dict(REGISTRY)
