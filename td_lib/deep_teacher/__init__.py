"""Deep ReLU teacher–student networks: which layer specialises first (§7.4; Tian 2020, Fig. 8).

Tian's Fig. 8 trains a 10× over-realised student on a deep ReLU teacher with hidden widths
50-75-100-125 (input dimension 100, 50 outputs, Gaussian inputs regenerated every epoch) and
observes that "the lowest layer learns first": the student's first hidden layer specialises
to the teacher's (each teacher node copied by some student node) while the upper layers
follow later. This package runs the same experiment at a CPU-sized scale with the same shape
(widths 10-15-20-25 by default) and records the paper's measures per layer:

* for every teacher node ``j`` of layer ``l``, the best Pearson correlation over the student
  nodes of the *same* layer between the activations ``f*_{l,j}(x)`` and ``f_{l,k}(x)`` on a
  separate evaluation set (the paper's normalized correlation), and its mean over the
  teacher nodes of the layer, ``ρ_mean(l)`` (the paper's §7 measure);
* for every student node ``k``, its best correlation with a teacher node of its layer and
  ``sqrt(E_x β_kk(x))``, the root-mean-square norm of the gradient of the output with respect
  to the node's activation (``β_kk(x) = ‖V_l(x)_{:,k}‖²``, eq. 4), which equals the fan-out
  norm ``‖v_k‖`` in a two-layer network: Fig. 8's two axes.

Networks are batches of ``R`` independent runs (the leading axis of every array), trained in
one vectorised loop (torch, one thread, hand-written back-propagation, float64). Random
sources follow the ``rng`` convention (:func:`td_lib.core.runtime.numpy_rng`): an int seed,
``None`` or a numpy ``Generator``. The notebook's run is
:func:`td_lib.teacher_student.demos.fig8_demo`.

Modules: :mod:`~td_lib.deep_teacher.model` (networks, activations, measures) and
:mod:`~td_lib.deep_teacher.training` (:func:`train_deep`, :func:`crossing_epochs`).

Examples
--------
>>> import numpy as np
>>> from td_lib import deep_teacher as deep
>>> t = deep.make_deep_teacher(d=6, widths=(3, 4), C=2, rng=0)
>>> X = np.random.default_rng(1).standard_normal((4000, 6))
>>> [bool(np.all(abs((h > 0).mean(axis=1) - 0.5) < 0.15)) for h in deep.hidden_layers(t, X)]
[True, True]
"""

from td_lib.deep_teacher.model import (
    DeepNet,
    check_deep_net,
    fanout_rms,
    forward,
    hidden_layers,
    layer_correlations,
    make_deep_student,
    make_deep_teacher,
)
from td_lib.deep_teacher.training import DeepHistory, crossing_epochs, deep_sgd_step, train_deep

__all__ = ["DeepNet", "DeepHistory", "check_deep_net", "make_deep_teacher", "make_deep_student",
           "hidden_layers", "forward", "fanout_rms", "layer_correlations", "train_deep", "deep_sgd_step",
           "crossing_epochs"]
