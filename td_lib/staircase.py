"""The staircase in a two-layer ReLU network on the mixed cumulant model (demo 7.2.E).

Seed §7.2, demo 7.2.E: a network :math:`f(x)=\\sum_j a_j\\,\\mathrm{ReLU}(w_j\\cdot x+b_j)` is
trained by online minibatch SGD (fresh samples every step) on the logistic loss
:math:`\\log(1+e^{-yf(x)})`, and its test accuracy is recorded on three test sets: the full
data, a "mean only" set (:math:`\\beta_u=\\beta_v=0`: only the mean signal) and the population
Gaussian clone, together with :math:`\\max_j|\\cos(w_j,v)|`, the largest hidden-unit overlap
with the cumulant direction :math:`v`.

The gradients of the minibatch loss are written out (:func:`logistic_grads`, checked against
autograd in the tests), which is about twice as fast as autograd for a network this small.

References
----------
Bardone & Goldt (2024), the staircase of their two-layer experiments on the mixed cumulant
model (eq. 1); original course notes §7.2, demo 7.2.E.

Examples
--------
>>> run = train_staircase(True, d=8, width=4, steps=10, batch=4, n_test=50, num_records=3, rng=0)
>>> run.t.tolist(), run.accuracy.shape, run.accuracy_on("mean only").shape
([1, 3, 10], (3, 3), (3,))
>>> first_above([1, 2, 3], [0.1, 0.6, 0.9], 0.5)
2
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from td_lib import mixed_cumulant
from td_lib.core import validate as V
from td_lib.core.run import Run, checkpoints
from td_lib.core.runtime import bar, base_seed, torch_generator

__all__ = ["StaircaseRun", "train_staircase", "logistic_grads", "first_above", "onset_step", "TEST_SETS"]

TEST_SETS = ("full data", "mean only", "Gaussian clone")


@dataclass
class StaircaseRun(Run):
    """Output of :func:`train_staircase` (a :class:`td_lib.core.run.Run` of one network).

    Attributes
    ----------
    t : ndarray (T,)
        SGD steps at which the network was evaluated.
    accuracy : ndarray (T, 3)
        Test accuracy on the test sets :data:`TEST_SETS` (``"full data"``, ``"mean only"``,
        ``"Gaussian clone"``, in that order); :meth:`accuracy_on` picks one by name.
    overlap_v : ndarray (T,)
        :math:`\\max_j|\\cos(w_j, v)|` at the recorded steps.
    overlap_u, overlap_m : ndarray (T,)
        The same for the spikes ``u`` and ``m``.
    """

    accuracy: np.ndarray
    overlap_v: np.ndarray
    overlap_u: np.ndarray
    overlap_m: np.ndarray

    def accuracy_on(self, test_set: str) -> np.ndarray:
        """The accuracy series ``(T,)`` on the test set called ``test_set`` (one of :data:`TEST_SETS`)."""
        V.choice("test_set", test_set, TEST_SETS)
        return self.accuracy[:, TEST_SETS.index(test_set)]


def first_above(steps, values, level: float) -> int | None:
    """The first recorded step at which ``values`` exceeds ``level`` (None if it never does)."""
    steps, values = _records(steps, values)
    level = V.finite("level", level)
    return next((int(t) for t, x in zip(steps, values) if x > level), None)


def onset_step(steps, values, rise: float = 0.05) -> int | None:
    """The first recorded step from which ``values`` stays more than ``rise`` above its first
    record ``values[0]`` at every later record: the start of a lasting rise, not a transient
    excursion (None if there is none)."""
    steps, values = _records(steps, values)
    rise = V.finite("rise", rise, positive=True)
    above = values > values[0] + rise
    if not above[-1]:
        return None
    i = len(above) - 1
    while i > 0 and above[i - 1]:
        i -= 1
    return int(steps[i])


def _records(steps, values) -> tuple[np.ndarray, np.ndarray]:
    steps = V.array("steps", steps, ndim=1)
    values = V.array("values", values, ndim=1)
    if steps.shape != values.shape or steps.size == 0:
        raise ValueError(f"steps and values must be non-empty and of equal length, got "
                         f"{steps.size} and {values.size}")
    return steps, values


def logistic_grads(x: torch.Tensor, y: torch.Tensor, W: torch.Tensor, b: torch.Tensor,
                   a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Gradients of the minibatch logistic loss :math:`\\frac1B\\sum_i\\log(1+e^{-y_if(x_i)})`
    of :math:`f(x)=\\sum_ja_j\\,\\mathrm{ReLU}(w_j\\cdot x+b_j)` with respect to ``(W, b, a)``.

    With :math:`g_i=-y_i\\,\\mathrm{sigmoid}(-y_if(x_i))/B`: :math:`\\partial_a=\\sum_ig_i\\,
    \\mathrm{ReLU}(Wx_i+b)`, and :math:`\\partial_{w_j}=\\sum_ig_ia_j\\mathbf 1[w_j\\cdot x_i+b_j>0]\\,x_i`
    (ReLU' = 0 at 0, as in autograd), :math:`\\partial_{b_j}` the same without :math:`x_i`.

    References
    ----------
    Seed §7.2, demo 7.2.E (the logistic loss :math:`\\log(1+e^{-yf(x)})`).
    """
    pre = x @ W.T + b
    hid = torch.relu(pre)
    g = -y * torch.sigmoid(-y * (hid @ a)) / x.shape[0]
    gpre = torch.outer(g, a) * (pre > 0)
    return gpre.T @ x, gpre.sum(0), hid.T @ g


def train_staircase(correlated: bool, *, d: int = 16, width: int = 64, steps: int = 12000,
                    batch: int = 32, eta: float = 0.5, rng=0, n_test: int = 10000,
                    beta_m: float = 1.0, beta_u: float = 5.0, beta_v: float = 10.0,
                    num_records: int = 40, dtype=torch.float32,
                    progress: bool | str = False, cross: float | None = None) -> StaircaseRun:
    """Train the demo-7.2.E network by online SGD and record the staircase.

    Initialisation :math:`W_{jk}\\sim\\mathcal N(0,1/d)`, :math:`b=0`,
    :math:`a_j\\sim\\mathcal N(0,1/N)` (from ``torch.Generator().manual_seed(rng)``, the stream
    of the original notes' ``torch.manual_seed(seed)``; the global generator is not touched);
    data from :func:`td_lib.mixed_cumulant.sample` with spikes ``orthonormal_spikes(d)`` and a generator
    seeded with ``rng + 10``: first the three test sets (``n_test`` each), then
    ``steps * batch`` training samples used once each, ``batch`` per step. With a torch
    Generator as ``rng`` the data and then the initial weights are drawn from it.

    Parameters
    ----------
    correlated
        Latents :math:`\\nu=\\mathrm{sign}(\\lambda)` (True) or independent (False).
    d, width, steps, batch, eta, n_test
        Input dimension, hidden units, SGD steps, minibatch size, learning rate, size of each
        test set.
    rng
        An int seed (default 0), a torch Generator, or ``None`` / a numpy Generator (one base
        seed drawn from it, :func:`td_lib.core.runtime.base_seed`).
    beta_m, beta_u, beta_v
        Signal strengths of the mixed cumulant model (course test bed: 1, 5, 10).
    num_records
        Number of log-spaced evaluation steps in ``[1, steps]`` before merging repeats
        (``checkpoints(steps, num=num_records, zero=False)``, :func:`td_lib.core.run.checkpoints`).
    dtype
        Torch dtype of data and weights.
    progress
        ``True`` (a bar labelled with the latent setting) or a label: show a progress bar.
    cross
        The cross term ``c`` of the Gaussian clone with correlated latents (a value the caller
        computed, e.g. with their own function); default: the library's
        (:func:`td_lib.mixed_cumulant.sample`).

    References
    ----------
    Seed §7.2, demo 7.2.E; Bardone & Goldt (2024), eq. (1) (the data).
    """
    if not isinstance(correlated, bool):
        raise TypeError(f"correlated must be a bool, got {correlated!r}")
    d = V.positive_int("d", d, minimum=3)
    width = V.positive_int("width", width)
    steps = V.positive_int("steps", steps)
    batch = V.positive_int("batch", batch)
    eta = V.finite("eta", eta, positive=True)
    n_test = V.positive_int("n_test", n_test)
    spikes = mixed_cumulant.orthonormal_spikes(d, dtype=dtype)
    if isinstance(rng, torch.Generator):
        gen = init_gen = rng
    else:
        seed = base_seed(rng)
        gen, init_gen = torch_generator(seed + 10), torch_generator(seed)
    kw = dict(beta_m=beta_m, beta_u=beta_u, beta_v=beta_v, dtype=dtype, rng=gen)
    tests = {
        "full data": mixed_cumulant.sample(n_test, spikes=spikes, correlated=correlated, **kw),
        "mean only": mixed_cumulant.sample(n_test, spikes=spikes, **{**kw, "beta_u": 0.0, "beta_v": 0.0}),
        "Gaussian clone": mixed_cumulant.sample(n_test, spikes=spikes, correlated=correlated, clone=True,
                                     cross=cross, **kw),
    }
    X, Y = mixed_cumulant.sample(steps * batch, spikes=spikes, correlated=correlated, **kw)
    X, Y = X.view(steps, batch, d), Y.view(steps, batch)

    W = torch.randn(width, d, generator=init_gen, dtype=dtype) / math.sqrt(d)
    b = torch.zeros(width, dtype=dtype)
    a = torch.randn(width, generator=init_gen, dtype=dtype) / math.sqrt(width)

    def net(x):
        return torch.relu(x @ W.T + b) @ a

    record = checkpoints(steps, num=V.positive_int("num_records", num_records), zero=False)
    record_set = set(record.tolist())
    acc, overlaps = [], []
    label = ("correlated" if correlated else "independent") + " latents"
    for t in bar(range(steps + 1), progress, label):
        if t in record_set:
            acc.append([(net(xt) * yt > 0).to(dtype).mean().item() for xt, yt in tests.values()])
            cos = (W @ spikes.T).abs() / W.norm(dim=1, keepdim=True)  # (width, 3): m, u, v
            overlaps.append([cos[:, i].max().item() for i in range(3)])
        if t == steps:
            break
        gW, gb, ga = logistic_grads(X[t], Y[t], W, b, a)  # logistic loss, minibatch mean
        W -= eta * gW
        b -= eta * gb
        a -= eta * ga
    ov = np.array(overlaps)
    return StaircaseRun(t=record, accuracy=np.array(acc), overlap_m=ov[:, 0], overlap_u=ov[:, 1],
                        overlap_v=ov[:, 2])
