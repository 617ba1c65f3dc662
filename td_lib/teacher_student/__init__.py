"""Two-layer ReLU teacher–student specialisation (§7.4; Tian 2020).

A *teacher* ``f*(x) = V*ᵀ relu(W*ᵀ x̃)`` with ``x̃ = (x, 1)`` (biases ride in the last row
of the augmented weights, Tian's "bias term" convention of §3), ``m`` hidden nodes with
augmented weights of unit norm and fan-out rows of norm ``‖v*_j‖ ∝ 1/j^p`` (eq. 13, the
"teacher polarity" ``p``). An over-realised *student* of the same form with ``n = factor·m``
hidden nodes learns it by SGD on the square loss (eq. 2), either on a finite training set
or online (a fresh batch every step). Everything is vectorised over independent runs: the
leading axis ``R`` of every weight array indexes runs (seeds, polarities, ...).

The package, one idea per module:

- :mod:`~td_lib.teacher_student.model`: :class:`Net`, :func:`make_teacher`,
  :func:`make_student`, :func:`hidden`, :func:`output`;
- :mod:`~td_lib.teacher_student.metrics`: specialisation measures (activation correlation,
  weight cosine, best match, coverage, first-match times, focus shifts);
- :mod:`~td_lib.teacher_student.training`: :func:`train` (minibatch SGD in torch) and its
  :class:`History` (a :class:`td_lib.core.run.Run`: time axis ``t`` in SGD steps);
- :mod:`~td_lib.teacher_student.sgd_loop`: :func:`~td_lib.teacher_student.sgd_loop.sgd_loop`, the
  chunked SGD loop this trainer and :func:`td_lib.deep_teacher.train_deep` share;
- :mod:`~td_lib.teacher_student.theory`: Theorem 6's closed-form ReLU expectation, the ReLU
  kernel, the population gradient flow and the eq. 10 check;
- :mod:`~td_lib.teacher_student.angle`: the angle dynamics of eq. 12 and escape times;
- :mod:`~td_lib.teacher_student.demos`: the notebook's seeded demo runs and summaries (not
  re-exported here; ``from td_lib.teacher_student import demos``).

Deep teachers (Fig. 8) live in :mod:`td_lib.deep_teacher`.

Examples
--------
>>> import numpy as np
>>> from td_lib import teacher_student as ts
>>> teacher = ts.make_teacher(d=5, m=3, C=2, p=1.0, rng=0)
>>> X = np.random.default_rng(1).standard_normal((400, 5))
>>> F = ts.hidden(teacher, X)
>>> ts.best_match(ts.activation_correlation(F, F))[0].round(6).tolist()
[[1.0, 1.0, 1.0]]
"""

from td_lib.teacher_student.angle import (
    angle_velocity,
    escape_time,
    escape_time_asymptotic,
    escape_time_constant,
    escape_time_theorem6,
    integrate_angle,
    psi_gaussian,
)
from td_lib.teacher_student.mc_checks import eq10_norm_scan, theorem6_scan
from td_lib.teacher_student.metrics import (
    THRESHOLDS,
    activation_correlation,
    best_match,
    coverage_counts,
    first_match_times,
    focus_shifts,
    weight_cosine,
)
from td_lib.teacher_student.model import (
    Net,
    augment,
    check_net,
    hidden,
    make_student,
    make_teacher,
    output,
    run_inputs,
)
from td_lib.teacher_student.theory import (
    pair_at_angle,
    population_flow,
    population_gradient,
    population_gradient_mc,
    relu_cross_moment,
    relu_cross_moment_mc,
    relu_kernel,
)
from td_lib.teacher_student.training import History, torch_unit_columns, train

__all__ = [
    # model
    "Net", "check_net", "make_teacher", "make_student", "augment", "run_inputs", "hidden", "output",
    # metrics
    "THRESHOLDS", "activation_correlation", "weight_cosine", "best_match", "coverage_counts",
    "first_match_times", "focus_shifts",
    # training
    "History", "train", "torch_unit_columns",
    # theory (Theorem 6, population flow, eq. 10)
    "pair_at_angle", "relu_cross_moment", "relu_cross_moment_mc", "relu_kernel",
    "population_gradient", "population_gradient_mc", "population_flow", "eq10_norm_scan",
    "theorem6_scan",
    # angle dynamics (eq. 12)
    "psi_gaussian", "angle_velocity", "integrate_angle", "escape_time", "escape_time_asymptotic",
    "escape_time_constant", "escape_time_theorem6",
]
