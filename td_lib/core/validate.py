"""Argument checks with errors that name the offending argument.

Every public td_lib function validates its inputs with these helpers, so that bad input
raises a ``ValueError`` (or ``TypeError``) naming the argument instead of producing a
silent NaN somewhere downstream.

Examples
--------
>>> positive_int("n", 3)
3
>>> try:
...     in_interval("c", 1.0, 0.0, 1.0)
... except ValueError as e:
...     print(e)
c must lie in [0.0, 1.0), got 1.0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def positive_int(name: str, value, minimum: int = 1) -> int:
    """Return ``value`` as an int, requiring ``value >= minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def finite(name: str, value, *, positive: bool = False, nonnegative: bool = False) -> float:
    """Return ``value`` as a finite float, optionally requiring > 0 or >= 0."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {value!r}") from None
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    if positive and v <= 0:
        raise ValueError(f"{name} must be > 0, got {v}")
    if nonnegative and v < 0:
        raise ValueError(f"{name} must be >= 0, got {v}")
    return v


def in_interval(name: str, value, lo: float, hi: float, *, closed: str = "left") -> float:
    """Return ``value`` as a float in the interval from ``lo`` to ``hi``.

    ``closed`` is one of ``"left"`` ([lo, hi)), ``"right"`` ((lo, hi]), ``"both"``, ``"neither"``.
    """
    v = finite(name, value)
    left_ok = v >= lo if closed in ("left", "both") else v > lo
    right_ok = v <= hi if closed in ("right", "both") else v < hi
    if not (left_ok and right_ok):
        lb = "[" if closed in ("left", "both") else "("
        rb = "]" if closed in ("right", "both") else ")"
        raise ValueError(f"{name} must lie in {lb}{lo}, {hi}{rb}, got {v}")
    return v


def array(name: str, value, *, ndim: int | None = None, shape: Sequence[int | None] | None = None,
          dtype=float) -> np.ndarray:
    """Convert to an ndarray, checking dimension, shape (``None`` = any size) and finiteness."""
    a = np.asarray(value, dtype=dtype)
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {a.shape}")
    if shape is not None:
        if a.ndim != len(shape) or any(s is not None and s != n for s, n in zip(shape, a.shape)):
            want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name} must have shape {want}, got {a.shape}")
    if np.issubdtype(a.dtype, np.floating) and not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return a


def array_in(name: str, value, lo: float, hi: float, *, closed: str = "left") -> np.ndarray:
    """Array-aware :func:`in_interval`: every entry finite and in the interval (``hi`` may be inf)."""
    a = array(name, value)
    left_ok = a >= lo if closed in ("left", "both") else a > lo
    right_ok = a <= hi if closed in ("right", "both") else a < hi
    bad = ~(left_ok & right_ok)
    if np.any(bad):
        lb = "[" if closed in ("left", "both") else "("
        rb = "]" if closed in ("right", "both") else ")"
        raise ValueError(f"{name} must lie in {lb}{lo}, {hi}{rb}, got {a[bad].ravel()[0]:g}"
                         + (f" (and {int(bad.sum()) - 1} more entries)" if bad.sum() > 1 else ""))
    return a


def psd(name: str, value, *, strict: bool = False, tol: float = 1e-10) -> np.ndarray:
    """Check a symmetric positive semi-definite (``strict``: definite) matrix or batch of them."""
    a = array(name, value)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name} must be a square matrix (or a batch of them), got shape {a.shape}")
    scale = max(1.0, float(np.abs(a).max(initial=0.0)))
    if not np.allclose(a, np.swapaxes(a, -1, -2), atol=tol * scale, rtol=0):
        raise ValueError(f"{name} must be symmetric")
    lo = np.linalg.eigvalsh(a).min(initial=np.inf)
    if (strict and lo <= tol * scale) or lo < -tol * scale:
        kind = "positive definite" if strict else "positive semi-definite"
        raise ValueError(f"{name} must be {kind}; smallest eigenvalue is {lo:.3g}")
    return a


def choice(name: str, value, options: Sequence) -> object:
    """Require ``value`` to be one of ``options``."""
    if value not in options:
        raise ValueError(f"{name} must be one of {list(options)}, got {value!r}")
    return value


def library_default(name: str, namespace: dict[str, Any], argument: str) -> Callable:
    """The library function ``name`` of an engine's module, as the engine's default for ``argument``.

    An engine that can run on a function the reader wrote (``argument``) uses the library's own
    when given none. An edition of td_lib without ``name`` (the handout's, which lacks the
    functions students write) raises a ``TypeError`` asking for ``argument`` here, instead of a
    ``NameError`` deep in the engine.

    Examples
    --------
    >>> library_default("positive_int", globals(), "check").__name__
    'positive_int'
    >>> try:
    ...     library_default("missing_function", globals(), "check")
    ... except TypeError as e:
    ...     print(e)
    check is required: pass your own function (this edition of td_lib does not have missing_function)
    """
    fn = namespace.get(name)
    if fn is None:
        raise TypeError(f"{argument} is required: pass your own function (this edition of td_lib does not "
                        f"have {name})")
    return fn
