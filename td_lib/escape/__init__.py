"""Online spherical SGD for a single neuron, and first-passage ("escape") times (§7.2).

Seed §7.2, "The information exponent" and Exercises 7.2.B/7.2.C: a neuron with weight
:math:`w` on the unit sphere sees one fresh sample per step and takes the step

.. math:: w \\leftarrow \\mathrm{normalize}\\Big(w-\\frac{\\delta}{d}\\,(I-ww^\\top)
   \\nabla_w\\ell(w;x_t,y_t)\\Big),\\qquad
   \\ell = 1-y\\,\\sigma(w\\cdot x)\\ \\text{(correlation loss)},

so that :math:`-\\nabla_w\\ell = y\\,\\sigma'(w\\cdot x)\\,x`. We track overlaps
:math:`\\alpha_i=w\\cdot v_i` with given unit directions and record the first step at which
the overlap with the target direction exceeds a threshold (signed, or in absolute value).

Everything is vectorised over independent runs (each run draws its own samples); randomness
comes from one :class:`numpy.random.Generator` (the ``rng`` convention of
:func:`td_lib.core.runtime.numpy_rng`: an int seed or a Generator), drawn in chunks of steps.

Three entry points:

* :func:`spherical_sgd` — the general simulator (any sampler, any activation derivative,
  several tracked directions, optional traces); used for the mixed cumulant model with two
  spikes via :func:`mcm_sampler`.
* :func:`single_index_escape_times` — the 7.2.C setting: Gaussian inputs, teacher
  :math:`y=h_k(x_0)` (:math:`v=e_0`), student :math:`h_k(w\\cdot x)`, full d-dimensional SGD.
* :func:`reduced_escape_times` — the same process simulated *exactly* through the Markov
  chain of the overlap alone (three random numbers per step whatever d is), for cheap
  reference distributions in checks and tests.

This module is a general simulator; Exercise 7.2.C asks students for their own
``escape_times``, and the tests compare distributions, not code.

References
----------
Ben Arous, Gheissari & Jagannath (2021), "Online stochastic gradient descent on non-convex
losses from high-dimensional inference", JMLR 22 (Section 1: the spherical online SGD and its
sample complexity in terms of the information exponent, :data:`LAWS`); original course notes §7.2, "The
information exponent", the update displayed above.

Examples
--------
>>> T = single_index_escape_times(1, 16, runs=8, t_max=10**4, rng=0)
>>> T.shape, bool(np.isfinite(T).all())
((8,), True)
>>> T2 = reduced_escape_times(1, 16, runs=200, t_max=10**4, rng=1)
>>> 5 < float(np.median(T2)) < 200
True
"""

from __future__ import annotations

import numpy as np  # noqa: F401  (the examples above)

from td_lib.escape.sgd import Sampler, SphericalSGDRun, mcm_sampler, random_start, spherical_sgd
from td_lib.escape.single_index import (
                                        LAWS,
                                        STEPS,
                                        gaussian_single_index_sampler,
                                        reduced_escape_times,
                                        single_index_escape_times,
                                        single_index_teacher,
)
from td_lib.escape.slopes import bootstrap_slope, loglog_slope

__all__ = [
    "SphericalSGDRun", "Sampler", "spherical_sgd", "single_index_teacher",
    "gaussian_single_index_sampler", "random_start", "single_index_escape_times",
    "reduced_escape_times", "mcm_sampler", "loglog_slope", "bootstrap_slope", "LAWS", "STEPS",
]
