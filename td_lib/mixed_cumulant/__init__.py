"""The mixed cumulant model of Bardone & Goldt (2024, their eq. 1), the course's test bed.

Class ``y = -1`` is ``x = z ~ N(0, I_d)``. Class ``y = +1`` is

.. math::

    x = \\beta_m m + \\sqrt{\\beta_u}\\,\\lambda\\,u + Q(\\sqrt{\\beta_v}\\,\\nu\\,v + z),
    \\qquad Q = I - \\gamma\\, v v^\\top,\\quad
    \\gamma = \\frac{\\beta_v}{1 + \\beta_v + \\sqrt{1 + \\beta_v}} = 1 - \\frac{1}{\\sqrt{1+\\beta_v}},

with orthonormal spikes ``m, u, v``, ``lambda ~ N(0, 1)`` and ``nu = ±1`` independent of
``lambda`` (or ``nu = sign(lambda)`` for *correlated* latents). The classes differ in their
mean along ``m``, in their variance along ``u`` and, along ``v``, first in the fourth
cumulant ``kappa_4(v.x)`` (:func:`kappa4_v`). With correlated latents the class-+1 covariance
gains a cross term ``c (u v^T + v u^T)`` (:func:`cross_term`), which vanishes for independent
latents.

The *population Gaussian clone* (``clone=True``) replaces class +1 by the Gaussian with the
same mean and covariance. Everything is built from rank-one/rank-two updates, so no
dense ``d x d`` matrix is formed and batches of 10^6 rows are cheap for moderate ``d``.

Random numbers are drawn from a ``torch.Generator`` in the order of the original course
notes' ``mcm_sample`` (labels, ``z``, the class -1 inputs, ``lambda``, ``nu``), so a seeded call
reproduces their data set exactly (``rng``: an int seed or a torch Generator).
:func:`sample` also accepts a ``numpy.random.Generator`` (same construction, numpy arrays, no
torch).

torch is imported inside the functions that need it, so that importing this module (for
:func:`kappa4_v`, :func:`cross_term`, :func:`bayes_accuracy` or numpy sampling) costs no torch
start-up. The module is a package: :mod:`~td_lib.mixed_cumulant.model` (the model, its moments and its
mixture form) and :mod:`~td_lib.mixed_cumulant.bayes` (exact Bayes accuracies and the Bayes rules).

References
----------
Bardone & Goldt (2024), "Sliding down the stairs: how correlated latent variables accelerate
learning with neural networks", eq. (1) (the model); original course notes §7.1 and §7.2.

Examples
--------
>>> round(kappa4_v(10.0), 6)  # -200/121
-1.652893
>>> round(bayes_accuracy(beta_m=1.0, beta_u=5.0, beta_v=10.0, use="mu"), 4)
0.768
>>> X, y = sample(4, 8, rng=0)
>>> tuple(X.shape), sorted(set(y.tolist())) <= [-1.0, 1.0]
((4, 8), True)
"""

from __future__ import annotations

import numpy as np  # noqa: F401  (the examples above)

from td_lib.mixed_cumulant.bayes import bayes_accuracy, log_likelihood_ratios
from td_lib.mixed_cumulant.model import (
                              class_cov,
                              class_mean,
                              cross_term,
                              gamma,
                              kappa4_v,
                              mixture_components,
                              orthonormal_spikes,
                              sample,
)

__all__ = ["orthonormal_spikes", "gamma", "kappa4_v", "cross_term", "sample", "class_mean",
           "class_cov", "bayes_accuracy", "log_likelihood_ratios", "mixture_components"]
