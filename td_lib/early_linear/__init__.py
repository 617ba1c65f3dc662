"""Early-time linear learning of a two-layer network at standard initialisation (§7.1b).

Implements the setting of Hu, Xiao, Adlam & Pennington (2020), "The surprising simplicity of
the early-time learning dynamics of neural networks" (NeurIPS 2020), whose display equations
were lost in the text of the paper we had; the formulas are re-derived in the notebook
``td2_7_1b_early_time_linear`` and checked numerically in ``tests/test_early_linear.py``.
Equation numbers (1)-(12) follow the paper's numbering as far as our text of it shows.

One module per idea:

- :mod:`~td_lib.early_linear.fcn`: the two-layer network of their §3 -- data (Assumption
  3.1), teacher, symmetric initialisation (3), network (1), NTK at initialisation, GD (4);
- :mod:`~td_lib.early_linear.linear`: the linear models (5), (9), (11) -- constants,
  features, kernels, GD from zero on them, mode rates, the time scale ``T = d log d / eta``;
- :mod:`~td_lib.early_linear.cnn`: the CNN (12) of their §4.1 at finite width -- patches,
  initialisation, output, NTK, hypercube labels, GD;
- :mod:`~td_lib.early_linear.cnn_kernel`: the CNN at infinite width -- dual activations,
  the infinite-width NTK, the linear kernel of Prop. 4.1, Walsh eigenvalues;
- :mod:`~td_lib.early_linear.experiments`: the notebook's sweeps and agreement runs (shared
  with ``checks/early_time_linear.py``, so the quoted numbers are recomputed from the same seeds).

The trainers return run records (:class:`td_lib.core.run.Run`): :class:`GDRun` (GD of a network
or a linear model), :class:`AgreementRun` and :class:`CNNAgreementRun` (a network beside its
linear model).

Activations are those of :mod:`td_lib.core.activations` named in :data:`ACTIVATION_NAMES`;
Gaussian expectations go through :func:`td_lib.core.gaussian.gaussian_expectation`, Hermite
coefficients through :func:`td_lib.hermite.coefficients` (with ``breakpoints=[0.0]``), and
``rng``/``progress`` follow :mod:`td_lib.core.runtime`. Every function here is general library
code; the notebook's exercises ask for the student's own implementation and compare behaviour.
The experiments on the two-layer network take the caller's NTK (``ntk=``) and linear-model
kernels (``linear_kernels=``), by default the library's; the CNN's kernels and constants are
built from its dual activations (the arc-cosine kernels for ReLU and leaky ReLU).

References
----------
Hu, Xiao, Adlam & Pennington (2020), NeurIPS, §3 (eqs. (1)-(11), Prop. 3.4, Thms. 3.2, 3.5,
D.1), §4.1 (eq. (12), Prop. 4.1, App. E).

Examples
--------
>>> from td_lib import early_linear as el
>>> round(el.linear_constants("relu").zeta, 12)
0.5
>>> round(el.cnn_linear_constants("relu", 8).const1 + el.cnn_linear_constants("relu", 8).const2, 3)
0.191
"""

from td_lib.early_linear._shared import ACTIVATION_NAMES, LAYERS, AgreementRun, CNNAgreementRun, GDRun
from td_lib.early_linear.cnn import cnn_ntk, cnn_output, cnn_patches, cnn_symmetric_init, cnn_teacher_labels, train_cnn
from td_lib.early_linear.cnn_kernel import (
    CNNLinearConstants,
    cnn_linear_constants,
    cnn_linear_features,
    cnn_linear_kernel,
    cnn_ntk_infinite,
    cnn_walsh_rates,
    dual_activation,
    local_overlaps,
)
from td_lib.early_linear.experiments import (
    agreement_run,
    cnn_agreement_run,
    cnn_kernel_sweep,
    first_time_within,
    lemma_sweep,
)
from td_lib.early_linear.fcn import (
    make_data,
    network_output,
    ntk_at_init,
    symmetric_init,
    teacher_labels,
    train_network,
)
from td_lib.early_linear.linear import (
    LinearConstants,
    gd_on_features,
    linear_constants,
    linear_features,
    linear_kernel,
    linear_mode_rates,
    spectral_distance,
    spectral_norm,
    time_scale,
    train_linear_model,
)

__all__ = [
    "ACTIVATION_NAMES",
    "LAYERS",
    # run records
    "GDRun", "AgreementRun", "CNNAgreementRun",
    # fcn
    "make_data", "teacher_labels", "symmetric_init", "network_output", "ntk_at_init",
    "train_network",
    # linear
    "LinearConstants", "linear_constants", "linear_features", "linear_kernel",
    "train_linear_model", "gd_on_features", "linear_mode_rates", "time_scale", "spectral_norm", "spectral_distance",
    # cnn
    "cnn_patches", "cnn_symmetric_init", "cnn_output", "cnn_ntk", "cnn_teacher_labels",
    "train_cnn",
    # cnn_kernel
    "dual_activation", "local_overlaps", "cnn_ntk_infinite", "CNNLinearConstants",
    "cnn_linear_constants", "cnn_linear_features", "cnn_linear_kernel", "cnn_walsh_rates",
    # experiments
    "lemma_sweep", "agreement_run", "first_time_within", "cnn_kernel_sweep", "cnn_agreement_run",
]
