"""Exact online-SGD theory for convolutional (CNN) vs locally connected (LCN) students.

Mori et al., *exact online-SGD dynamics of CNN vs LCN students*: a teacher-student model with a
convolutional teacher of kernel size ``k_t`` on ``P`` positions of dimension ``D``; students of
kernel size ``k_s`` with or without weight sharing; input covariance
``E[x_{p,a} x_{q,b}] = S_{pq} delta_ab``.

Conventions (used everywhere in this subpackage)
------------------------------------------------
* ``g(z) = erf(z / sqrt 2)`` for every closed form; the SGD simulators also accept ReLU.
* CNN state: ``R`` of shape ``(..., k_s, k_t)`` with ``R[l, m] = w_hat_l . w_m / (sqrt(k_s k_t) D)``
  and ``Q`` of shape ``(..., k_s, k_s)`` with ``Q[l, l'] = w_hat_l . w_hat_l' / (k_s D)``.
  (The paper's eq. 15 prints ``k_s k_t D`` in the denominator of ``Q``; the appendix, eq. 19
  and the SGD simulation all require ``k_s D``.)
* LCN state: ``R`` of shape ``(..., P, k_s, k_t)`` (``R[p] = R^{(p)}``) and ``Q`` of shape
  ``(..., P, P, k_s, k_s)`` (``Q[p, q] = Q^{(p,q)}``).
* The teacher has ``w_l . w_l' / D = T delta_ll'`` (eq. 7). ``k_s``, ``k_t`` and ``P`` are read off
  the shapes of ``Q``, ``R`` and ``S``. Leading ("batch") axes broadcast everywhere: one call
  integrates a learning-rate sweep, a grid of correlations, or many initial conditions.
* ``kind`` is ``"cnn"`` or ``"lcn"``.

Seed corrections (each verified numerically; evidence in ``checks/cnn_lcn_check.py``)
-----------------------------------------------------------------------------------
* eq. 15: ``Q`` is normalised by ``k_s D`` (the page prints ``k_s k_t D``); eq. 38 similarly
  prints ``sqrt(k_s k_t D)`` for ``sqrt(k_s k_t) D`` in the definition of ``R``.
* eq. 40 (second part): ``<lambda_q nu_r^(l')> = sum_l R_{l',l} S_{(q+l)_P, r}`` (indices swapped
  on the page; eq. 71 has them right).
* eq. 75: the average covers the whole product ``<(Delta y)^2 g'(lh_p) g'(lh_q)>`` (as eq. 76);
  eq. 90: ``nu^{(l')}_{(p+l)_P}`` in the first I3 (the page prints ``(p+l')_P``).
* eq. 108: in ``V_d`` the factor ``chi`` sits on the wrong arcsine; the correct terms are
  ``2(P-1) asin(chi / (2 sqrt(2(3-chi^2))))`` and ``(P-1) asin((3-2chi^2) / (2(3-chi^2)))``.
  With the printed ``V_d``, ``B`` is 6.2 % too small at ``c = 0`` (P=4, k_s=1); ``A``, ``V_o``,
  ``c0`` (eq. 119) are right. ``eps_T`` in ``V_d``, ``V_o`` uses the data correlation ``c`` also
  for the LCN (where ``chi = 0``).
* eq. 24: ``gamma_s`` needs a factor ``1/sqrt(T)`` to equal 1 at a zero-error solution when
  ``T != 1`` (the paper uses ``T = 1``).
* eq. 34 is right to leading order, but for the CNN at large ``c`` its O(eta) relative
  correction has a large coefficient (12 % at eta = 2e-3, c = 0.5, P = 6, k = 2) because of a
  slow mode; eqs 31-32 (weighted by Omega) are within 0.5 % there.

Modules
-------
Numeric parameters are keyword-only wherever a function has more than two; randomness is
``rng`` and progress bars ``progress`` (conventions of :mod:`td_lib.core.runtime`). Signatures
and defaults are documented with each function, not repeated here.

* ``integrals`` -- the Saad-Solla averages of eqs 44-51 and their Monte Carlo check;
* ``model`` -- input covariance (eq. 3), teacher overlaps, preactivation covariances and eps_g
  (eqs 42-43, 72, 81);
* ``odes`` -- the right-hand sides of eqs 17-18 (eqs 61-67, 77-79);
* ``init`` -- initial conditions (eqs 19-21) and the zero-error solutions (eq. 23);
* ``integrate`` and ``rk4`` -- the batched integration of the ODEs (a :class:`Trajectory`, a
  :class:`~td_lib.core.run.Run` in ``alpha``); ``stationary`` -- their stationary states;
* ``observables`` -- specialisation (eqs 24-26, Result 3.3);
* ``early_times`` -- eqs 27-30 and 107-119; ``noise`` -- the noise floor (eqs 31-34, 130);
* ``phase`` -- the phase diagram (Figure 6); ``plots`` -- plot helpers;
* ``network`` and ``sgd`` -- finite-D networks and online SGD (eqs 1-16, 36, 68), the simulator
  returning an :class:`SGDResult`, also a :class:`~td_lib.core.run.Run` in ``alpha``.

Examples
--------
>>> import numpy as np
>>> from td_lib import cnn_lcn as cl
>>> R0, Q0 = cl.leading_order_init("cnn", P=4, k_s=1, k_t=1)
>>> tr = cl.integrate("cnn", R0, Q0, np.array([0.0, 5.0]), cl.input_covariance(4, 0.0), eta=0.5)
>>> round(float(tr.eg[0]), 6), round(float(tr.eg[-1]), 6)
(2.666667, 0.074414)
"""

from td_lib.cnn_lcn.early_times import (
    c_star_slope,
    c_star_slope_numeric,
    early_time_coefficients,
    early_time_coefficients_closed_form,
    initial_error,
    optimal_early_eta,
    v_closed_form,
)
from td_lib.cnn_lcn.init import (
    leading_order_init,
    matched_lcn_init,
    random_init,
    zero_error_solution,
)
from td_lib.cnn_lcn.integrals import I2, I3, I4, J2, monte_carlo
from td_lib.cnn_lcn.integrate import (
    DivergenceError,
    Trajectory,
    dt_convergence,
    integrate,
    log_checkpoints,
)
from td_lib.cnn_lcn.model import (
    effective,
    generalisation_error,
    input_covariance,
    preactivation_covariance,
    state_shapes,
    teacher_overlap,
)
from td_lib.cnn_lcn.network import (
    ACTIVATIONS,
    Networks,
    eg_from_order,
    preactivations,
    sample_inputs,
    sgd_step,
)
from td_lib.cnn_lcn.noise import (
    error_covariance,
    error_covariance_prediction,
    noise_floor,
    noise_floor_from_M,
    omega_matrix,
)
from td_lib.cnn_lcn.observables import (
    SpecialisationRun,
    alignment,
    alpha_spec,
    log_d_fit,
    reflect,
    specialisation_runs,
    specialisation_time,
)
from td_lib.cnn_lcn.odes import ode_terms, rhs, v_matrix
from td_lib.cnn_lcn.phase import phase_diagram, refine_min
from td_lib.cnn_lcn.sgd import SGDResult, one_step_drift, simulate_sgd
from td_lib.cnn_lcn.stationary import fixed_point

__all__ = [
    "I2", "J2", "I3", "I4", "monte_carlo",
    "input_covariance", "teacher_overlap", "effective", "preactivation_covariance",
    "generalisation_error", "state_shapes",
    "ode_terms", "rhs", "v_matrix",
    "random_init", "leading_order_init", "matched_lcn_init", "zero_error_solution",
    "integrate", "Trajectory", "log_checkpoints", "dt_convergence", "DivergenceError",
    "fixed_point",
    "alignment", "alpha_spec", "SpecialisationRun", "specialisation_runs", "specialisation_time", "log_d_fit",
    "reflect", "initial_error",
    "early_time_coefficients", "early_time_coefficients_closed_form", "v_closed_form",
    "optimal_early_eta", "c_star_slope", "c_star_slope_numeric",
    "noise_floor", "error_covariance", "error_covariance_prediction", "noise_floor_from_M",
    "omega_matrix", "phase_diagram", "refine_min",
    "ACTIVATIONS", "Networks", "sample_inputs", "simulate_sgd", "one_step_drift", "SGDResult",
    "sgd_step", "preactivations", "eg_from_order",
]
