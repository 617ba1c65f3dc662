"""Run-time switches shared by the notebooks.

``QUICK`` is true while nbgrader validates or autogrades a notebook (nbgrader sets
``NBGRADER_EXECUTION`` in the kernel's environment) or when ``TD_QUICK`` is set (the
browser test, quick CI runs). Notebooks use it only to shrink *demo* cells (fewer steps,
smaller sweeps); graded computations never depend on it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")

QUICK: bool = bool(os.environ.get("NBGRADER_EXECUTION") or os.environ.get("TD_QUICK"))


def pick(full: T, quick: T) -> T:
    """Return ``quick`` in quick mode and ``full`` otherwise (demo sizes only)."""
    return quick if QUICK else full


def progress(it: Iterable[T], desc: str = "", total: int | None = None, **kw) -> Iterable[T]:
    """A plain-text tqdm bar (the widget form does not render offline).

    Writes to stdout so that executed notebooks keep a single, final line; updates at most
    once per second.
    """
    kw.setdefault("mininterval", 1.0)
    kw.setdefault("file", sys.stdout)
    kw.setdefault("ascii", True)
    kw.setdefault("ncols", 80)
    return tqdm(it, desc=desc, total=total, **kw)
