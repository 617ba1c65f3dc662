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


class _WholeLines:
    """A file that passes on only whole lines, each in one write (one stream message)."""

    def __init__(self, fp) -> None:
        self.fp, self.buf = fp, ""

    def write(self, text: str) -> None:
        self.buf += text
        if "\n" in self.buf:
            head, _, self.buf = self.buf.rpartition("\n")
            self.fp.write(head + "\n")
            self.fp.flush()

    def flush(self) -> None:  # a partial line waits for its end
        pass


class _Bar(tqdm):
    """tqdm that counts an item when it hands it out; ``final_only`` shows nothing until
    it closes, then its final state (see :func:`progress`)."""

    def __init__(self, *args, final_only: bool = False, **kw):
        self._final_only = final_only
        if final_only:
            kw["delay"] = float("inf")
            kw["file"] = _WholeLines(kw.get("file") or sys.stderr)
        super().__init__(*args, **kw)

    def __iter__(self):
        if self.disable:
            yield from self.iterable
            return
        try:
            for obj in self.iterable:
                self.update(1)
                yield obj
        finally:
            self.close()

    def close(self):
        if self._final_only and not self.disable:
            self.delay = 0  # now print the final state (tqdm skips bars never shown)
        super().close()


def progress(it: Iterable[T], desc: str = "", total: int | None = None, **kw) -> Iterable[T]:
    """A plain-text tqdm bar (the widget form does not render offline).

    Writes to stdout, at most once per second: JupyterLab shows a live bar (each refresh
    starts with a carriage return). Saved outputs keep one final line per bar: while
    nbgrader executes a notebook (``NBGRADER_EXECUTION``: validate, autograde, the quick
    solutions build) nobody watches, so the bar prints only its final state when it
    closes; the solutions build coalesces its streams (``tools.nbcore.execute``). Items
    are counted as they are handed out, so a loop left with ``break`` after its last item,
    or a ``zip`` that stops on its other argument, still ends at ``total/total``. The
    returned object is a tqdm bar (``update``, ``close``, ``set_postfix`` work as usual).
    """
    kw.setdefault("mininterval", 1.0)
    kw.setdefault("file", sys.stdout)
    kw.setdefault("ascii", True)
    kw.setdefault("ncols", 80)
    kw.setdefault("final_only", bool(os.environ.get("NBGRADER_EXECUTION")))
    return _Bar(it, desc=desc, total=total, **kw)
