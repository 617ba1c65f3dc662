"""The run skeleton every trainer and integrator of td_lib shares, defined once.

- **when to record**: :func:`checkpoints`, the one schedule of recording times (evenly or
  log-spaced, integer steps or continuous time), with its validation;
- **what a run returns**: :class:`Run`, one record whose time axis is ``t`` and whose arrays
  are numpy, ordered ``(time, runs, ...)``; a trainer returns a subclass that adds its fields
  (:func:`static` marks a field without a time axis: parameters, final weights);
- **progress of a hand-stepped loop**: :func:`ticker`, for loops that advance by varying
  amounts (an adaptive ODE stepper, SGD in chunks); loops over an iterable use
  :func:`td_lib.core.runtime.bar`.

Notebooks read one vocabulary: ``run.t`` is the time axis of every run (SGD steps, epochs, or
``alpha = steps / D``, as the subclass's ``time_label`` says), ``run.field[i]`` the state at
``run.t[i]``, and ``run.at(time)`` the index of a recording time.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import numpy as np

from td_lib.core import validate as V
from td_lib.core.runtime import label, wants_bar
from td_lib.core.runtime import progress as _progress_bar

__all__ = ["checkpoints", "Run", "static", "ticker"]


def checkpoints(end: float, *, num: int | None = None, every: int | None = None, start: float = 1.0,
                zero: bool = True, integer: bool = True, rounding: str = "floor") -> np.ndarray:
    """The recording times of a run, sorted and without repeats.

    With ``every``: ``0, every, 2·every, …`` and ``end`` (integer steps). With ``num``: ``num``
    log-spaced times ``geomspace(start, end, num)``, turned into integer steps by ``rounding``
    (``"floor"`` or ``"round"``) when ``integer``, preceded by ``0`` when ``zero``.

    Parameters
    ----------
    end : last time (> 0; an integer number of steps when ``integer`` or ``every``).
    num : number of log-spaced times (>= 1); exactly one of ``num`` and ``every``.
    every : spacing of evenly spaced integer steps (>= 1).
    start : first log-spaced time, ``0 < start <= end``.
    zero : include time 0.
    integer : integer steps (dtype int64) or continuous times (float64).
    rounding : ``"floor"`` (``astype(int)``) or ``"round"`` (nearest integer).

    Examples
    --------
    >>> checkpoints(250, every=100).tolist()
    [0, 100, 200, 250]
    >>> checkpoints(100, num=5).tolist()
    [0, 1, 3, 10, 31, 100]
    >>> checkpoints(100, num=5, rounding="round", zero=False).tolist()
    [1, 3, 10, 32, 100]
    >>> checkpoints(10.0, num=3, start=0.1, integer=False).tolist()
    [0.0, 0.1, 1.0, 10.0]
    """
    end = V.finite("end", end, positive=True)
    if (num is None) == (every is None):
        raise ValueError("checkpoints: give exactly one of num (log-spaced) and every (evenly spaced)")
    if every is not None:
        every = V.positive_int("every", every)
        if end != int(end):
            raise ValueError(f"end must be a whole number of steps with every=, got {end}")
        return np.unique(np.r_[np.arange(0, int(end) + 1, every), int(end)]).astype(np.int64)
    num = V.positive_int("num", num)
    start = V.finite("start", start, positive=True)
    if start > end:
        raise ValueError(f"start must be at most end, got start={start} > end={end}")
    if rounding not in ("floor", "round"):
        raise ValueError(f"rounding must be 'floor' or 'round', got {rounding!r}")
    t = np.geomspace(start, end, num)
    if integer:
        t = (np.floor(t) if rounding == "floor" else np.round(t)).astype(np.int64)
    if zero:
        t = np.r_[t.dtype.type(0), t]
    return np.unique(t)


def static(**kw: Any) -> Any:
    """A :class:`Run` field without a time axis (parameters, final weights, per-run summaries):
    ``field: np.ndarray = static()``. Keywords go to :func:`dataclasses.field`."""
    return dataclasses.field(metadata={"static": True}, **kw)


def _numpy(value: Any) -> Any:
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch tensor
        return value.detach().cpu().numpy()
    return value


@dataclasses.dataclass
class Run:
    """What a trainer or integrator returns: the time axis ``t`` and, in a subclass, its fields.

    Every field not marked :func:`static` is a time series: a numpy array whose first axis runs
    along ``t`` (then the runs, then the rest); torch tensors are converted on construction, and
    a series whose first axis is not ``len(t)`` is refused with the field's name. ``time_label``
    names the time axis for plots.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Loss(Run):
    ...     loss: np.ndarray
    >>> r = Loss(t=np.array([0, 10, 100]), loss=np.array([[1.0], [0.5], [0.1]]))
    >>> r.at(10), float(r.final("loss")[0])
    (1, 0.1)
    """

    t: np.ndarray
    time_label: ClassVar[str] = "SGD steps"

    def __post_init__(self) -> None:
        self.t = np.asarray(_numpy(self.t))
        if self.t.ndim != 1 or self.t.size == 0:
            raise ValueError(f"{type(self).__name__}.t must be a non-empty 1-d time axis, got shape {self.t.shape}")
        if np.any(np.diff(self.t) < 0):
            raise ValueError(f"{type(self).__name__}.t must be non-decreasing")
        for f in dataclasses.fields(self):
            if f.name == "t" or f.metadata.get("static"):
                continue
            value = _numpy(getattr(self, f.name))
            setattr(self, f.name, value)
            if isinstance(value, np.ndarray) and (value.ndim == 0 or value.shape[0] != self.t.size):
                raise ValueError(f"{type(self).__name__}.{f.name} must have the time axis first "
                                 f"({self.t.size} times), got shape {value.shape}")

    def at(self, time: float) -> int:
        """Index of the recording time ``time`` (the nearest one; a time outside the run is refused)."""
        time = float(time)
        if not (math.isfinite(time) and self.t[0] - 1e-9 <= time <= self.t[-1] + 1e-9):
            raise ValueError(f"time must lie in the run's times [{self.t[0]}, {self.t[-1]}], got {time}")
        return int(np.argmin(np.abs(self.t - time)))

    def final(self, name: str) -> np.ndarray:
        """The last recorded value of the series ``name``."""
        return getattr(self, name)[-1]


@contextmanager
def ticker(total: int, progress: bool | str, default: str) -> Iterator[Callable[[int], None]]:
    """Progress of a loop that advances by varying amounts: ``with ticker(total, progress,
    "SGD") as advance: ... advance(n)``. No bar (and ``advance`` does nothing) when ``progress``
    is false; otherwise the :func:`td_lib.core.runtime.progress` bar labelled by the
    ``progress=`` convention, closed when the block ends (also on error).

    Examples
    --------
    >>> with ticker(10, False, "steps") as advance:
    ...     advance(4)
    """
    if not wants_bar(progress):
        yield lambda n=1: None
        return
    bar = _progress_bar(None, desc=label(progress, default), total=V.positive_int("total", total, minimum=0))

    def advance(n: int = 1) -> None:
        bar.update(n)

    try:
        yield advance
    finally:
        bar.close()
