"""The SGD loop the teacher–student trainers share, written once (Tian 2020, eqs. 1–2).

Both trainers, :func:`td_lib.teacher_student.train` (two layers) and
:func:`td_lib.deep_teacher.train_deep` (a deep teacher), run minibatch SGD on all runs at
once in torch (float64, one thread by default) and evaluate at the recording times of
:func:`td_lib.core.run.checkpoints`. :func:`sgd_loop` is that loop: it seeds the torch stream
by one draw from the numpy generator, lets the trainer build its :class:`SGDProblem` from the
same generator (evaluation set, training set), draws the batches ``chunk`` steps at a time,
takes the steps, records at the checkpoints and refuses a diverged run. A trainer supplies
only what differs: the network's data, step and measures.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from td_lib.core import validate as V
from td_lib.core.runtime import bar, numpy_rng, torch_generator, torch_threads

__all__ = ["SGDProblem", "sgd_loop"]


class SGDProblem(Protocol):
    """What a trainer hands to :func:`sgd_loop`: the state of its runs and three operations."""

    def draw(self, k: int, rng: Any) -> Any:
        """The data of the next ``k`` steps (e.g. inputs and teacher outputs), from the torch
        generator ``rng``."""

    def step(self, data: Any, i: int) -> None:
        """One SGD step, in place, on item ``i`` of ``data``."""

    def record(self, step: int) -> None:
        """Evaluate and store the measures after ``step`` steps."""

    def weights(self) -> Sequence[Any]:
        """The tensors that must stay finite (a diverged run is refused)."""


def sgd_loop(problem_of: Callable[[np.random.Generator], SGDProblem], *, steps: int, times: np.ndarray,
             eta: float, rng=0, threads: int = 1, progress: bool | str = False, label: str = "SGD",
             chunk: int = 256) -> SGDProblem:
    """Run ``steps`` SGD steps of the problem ``problem_of(rng)``, recording at ``times``.

    Parameters
    ----------
    problem_of : callable
        Builds the :class:`SGDProblem` from the numpy generator (after the torch stream has
        been seeded from it, so the generator's later draws are the problem's own).
    steps : int
        Number of SGD steps.
    times : (T,) int array
        The recording steps (:func:`td_lib.core.run.checkpoints`); ``record`` is called at step
        0 and after every step listed here.
    eta : float
        The learning rate, named in the error of a diverged run.
    rng : int, None or numpy Generator
        Seeds everything: the torch stream of the batches by one draw
        (:func:`td_lib.core.runtime.torch_generator`), then whatever ``problem_of`` draws.
    threads : int
        Torch threads while training (restored afterwards).
    progress : bool or str
        Progress bar over the chunks (``True``: labelled ``label``).
    chunk : int
        Steps whose data are drawn at once.

    Returns
    -------
    SGDProblem
        The problem after training (its state and records).

    Examples
    --------
    A toy problem: SGD on ``½(w − x)²`` with ``x ~ N(1, 1)``, recorded at steps 0, 10, 1000.

    >>> import torch
    >>> class Mean:
    ...     def __init__(self, g):
    ...         self.w, self.rec = torch.zeros(1, dtype=torch.float64), []
    ...     def draw(self, k, rng):
    ...         return 1 + torch.randn(k, generator=rng, dtype=torch.float64)
    ...     def step(self, x, i):
    ...         self.w -= 0.02 * (self.w - x[i])
    ...     def record(self, step):
    ...         self.rec.append((step, round(float(self.w[0]), 1)))
    ...     def weights(self):
    ...         return [self.w]
    >>> p = sgd_loop(Mean, steps=1000, times=np.array([0, 10, 1000]), eta=0.02, rng=0)
    >>> [s for s, _ in p.rec], abs(p.rec[-1][1] - 1) < 0.5
    ([0, 10, 1000], True)

    References
    ----------
    Tian (2020), eqs. 1–2 (minibatch SGD on the square loss).
    """
    import torch

    steps = V.positive_int("steps", steps)
    chunk = V.positive_int("chunk", chunk)
    threads = V.positive_int("threads", threads)
    times = set(np.asarray(times).tolist())
    rng = numpy_rng(rng)
    with torch_threads(threads), torch.no_grad():
        gen = torch_generator(rng)
        problem = problem_of(rng)
        it = range(0, steps, chunk)
        problem.record(0)
        for c0 in bar(it, progress, label, total=len(it)):
            k = min(chunk, steps - c0)
            data = problem.draw(k, gen)
            for i in range(k):
                problem.step(data, i)
                if (c0 + i + 1) in times:
                    problem.record(c0 + i + 1)
        if not all(torch.isfinite(w).all() for w in problem.weights()):
            raise FloatingPointError(f"training diverged: lower eta (got eta={eta})")
    return problem
