"""td_lib's ground floor: what every topic module shares, defined once.

- :mod:`~td_lib.core.activations`: the activation registry (σ, σ′, σ″; numpy and torch);
- :mod:`~td_lib.core.gaussian`: expectations under N(0, 1) by quadrature;
- :mod:`~td_lib.core.run`: the run skeleton: recording times (``checkpoints``), the run record
  (``Run``: time axis ``t``, arrays ordered (time, runs, ...)), progress of hand-stepped loops;
- :mod:`~td_lib.core.runtime`: quick mode, progress bars, torch threads, random sources;
- :mod:`~td_lib.core.validate`: argument checks whose errors name the argument.

Topic modules (``mixed_cumulant``, ``escape``, ``cnn_lcn``, ...) build on these and re-implement none of
them; ``td_lib.core`` imports nothing from the topic modules (an import-linter contract).
"""

from td_lib.core import activations, gaussian, run, runtime, validate
from td_lib.core.gaussian import QuadratureWarning, gauss_normal_nodes, gaussian_expectation
from td_lib.core.run import Run, checkpoints, static, ticker
from td_lib.core.runtime import QUICK, bar, numpy_rng, pick, progress, torch_generator, torch_threads

__all__ = ["activations", "gaussian", "run", "runtime", "validate", "Run", "checkpoints", "static", "ticker",
           "QUICK", "pick", "progress", "bar", "torch_threads", "numpy_rng", "torch_generator",
           "gaussian_expectation", "gauss_normal_nodes", "QuadratureWarning"]
