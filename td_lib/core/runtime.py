"""Run-time conventions shared by every module and notebook: quick mode, progress bars,
torch threads, random sources.

One convention per concern:

- **quick mode**: :data:`QUICK` and :func:`pick` shrink demo cells only;
- **progress**: a public function that loops for more than a few seconds takes
  ``progress: bool | str = False``; ``True`` shows a bar with the function's own label, a
  string shows a bar with that label (:func:`bar`);
- **threads**: ``with torch_threads(n):`` sets torch's intra-op threads and restores them;
- **randomness**: a public function takes ``rng``, which may be an int seed, ``None`` (fresh
  entropy), a :class:`numpy.random.Generator` or, for torch engines, a :class:`torch.Generator`
  (:func:`numpy_rng`, :func:`torch_generator`). An int seed gives the same stream as before the
  convention existed: ``numpy.random.default_rng(seed)`` and ``torch.Generator().manual_seed(seed)``.

``QUICK`` is true while nbgrader validates or autogrades a notebook (nbgrader sets
``NBGRADER_EXECUTION`` in the kernel's environment) or when ``TD_QUICK`` is set (the
browser test, quick CI runs). Notebooks use it only to shrink *demo* cells (fewer steps,
smaller sweeps); graded computations never depend on it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np
from tqdm import tqdm

__all__ = ["QUICK", "pick", "quick_note", "progress", "bar", "label", "wants_bar", "torch_threads", "numpy_rng",
           "base_seed", "torch_generator"]

T = TypeVar("T")

QUICK: bool = bool(os.environ.get("NBGRADER_EXECUTION") or os.environ.get("TD_QUICK"))


def pick(full: T, quick: T) -> T:
    """Return ``quick`` in quick mode and ``full`` otherwise (demo sizes only)."""
    return quick if QUICK else full


def quick_note(what: str) -> None:
    """In quick mode, print one line saying that a demo runs smaller than the full run the text quotes.

    A demo whose printed numbers the prose quotes calls it, so that a student who validates the
    notebook (which runs it in quick mode) is told why the numbers differ from the text.

    Parameters
    ----------
    what : str
        How this run is smaller, e.g. ``"20 seeds instead of 200"``.

    Examples
    --------
    >>> quick_note("20 seeds instead of 200")  # prints nothing outside quick mode
    """
    if QUICK:
        print(f"(quick run: {what}; the numbers in the text are from the full run)")


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


_tqdm_bar = progress  # ``bar``'s argument ``progress`` shadows the function


def label(progress: bool | str, default: str) -> bool | str:
    """The ``progress=`` value to pass on: ``default`` for ``True``, ``progress`` itself
    otherwise (a caller's own label, or no bar). For drivers that hand their bar to a trainer
    under their own default label.

    Examples
    --------
    >>> label(True, "SGD"), label("mine", "SGD"), label(False, "SGD")
    ('SGD', 'mine', False)
    """
    return default if progress is True else progress


def bar(it: Iterable[T], progress: bool | str, default: str, total: int | None = None,
        **kw) -> Iterable[T]:
    """The ``progress=`` convention: ``it`` itself when ``progress`` is false, else a
    :func:`progress` bar labelled ``progress`` (a string) or ``default`` (``True``).

    Examples
    --------
    >>> list(bar(range(3), False, "steps"))
    [0, 1, 2]
    """
    if not wants_bar(progress):
        return it
    return _tqdm_bar(it, desc=label(progress, default), total=total, **kw)


def wants_bar(progress: bool | str | None) -> bool:
    """Whether the ``progress=`` value asks for a bar: ``False``/``None`` no, ``True`` or a label
    yes; anything else is refused (``TypeError`` naming ``progress``).

    Examples
    --------
    >>> wants_bar(False), wants_bar("SGD")
    (False, True)
    """
    if progress is None or progress is False:
        return False
    if not isinstance(progress, (bool, str)):
        raise TypeError(f"progress must be a bool or a label (str), got {progress!r}")
    return True


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with ``n`` torch intra-op threads, restoring the previous setting after
    (also on error). ``None`` leaves torch's setting alone. Imports torch only when ``n`` is
    given.

    Examples
    --------
    >>> with torch_threads(None):
    ...     pass
    """
    if n is None:
        yield
        return
    from td_lib.core import validate as V

    n = V.positive_int("threads", n)
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def numpy_rng(rng: Any = None) -> np.random.Generator:
    """The ``rng=`` convention for numpy code: an int seed or ``None`` gives
    ``numpy.random.default_rng(rng)``; a Generator is returned as is.

    Examples
    --------
    >>> float(numpy_rng(0).random()) == float(np.random.default_rng(0).random())
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)):
        return np.random.default_rng(None if rng is None else int(rng))
    raise TypeError(f"rng must be an int seed, None or a numpy Generator, got {type(rng).__name__}")


def base_seed(rng: Any = None) -> int:
    """The ``rng=`` convention for drivers that derive several seeds from one (``seed + 1``,
    ``seed * 1000 + i``, ...): an int is the base seed itself (>= 0), so the streams are those
    of the int-seed API; ``None`` or a numpy Generator gives one draw ``integers(2**31)``.

    Examples
    --------
    >>> base_seed(7)
    7
    >>> base_seed(np.random.default_rng(0)) == int(np.random.default_rng(0).integers(2**31))
    True
    """
    if isinstance(rng, (int, np.integer)):
        from td_lib.core import validate as V

        return V.positive_int("rng", rng, minimum=0)
    return int(numpy_rng(rng).integers(2**31))


def torch_generator(rng: Any = None):
    """The ``rng=`` convention for torch code: an int seed gives
    ``torch.Generator().manual_seed(rng)``; a torch Generator is returned as is; a numpy
    Generator seeds a new torch Generator with one draw ``rng.integers(2**62)``; ``None`` seeds
    from fresh entropy."""
    import torch

    if isinstance(rng, torch.Generator):
        return rng
    if isinstance(rng, np.random.Generator):
        return torch.Generator().manual_seed(int(rng.integers(2**62)))
    if rng is None:
        return torch.Generator().manual_seed(int(np.random.default_rng().integers(2**62)))
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return torch.Generator().manual_seed(int(rng))
    raise TypeError(f"rng must be an int seed, None, a numpy Generator or a torch.Generator, "
                    f"got {type(rng).__name__}")
