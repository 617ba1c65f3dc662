"""The course's exercises as the instructor's side sees them: which library functions answer which.

The science library (``td_lib``) knows nothing about exercises: it holds the course's formulas and
engines, and an engine that a student's function can replace takes it as an argument. This
module, which students never receive (``checks`` is absent from the handout, the student site
and the grading kernel's library), names per exercise (answer cell ``grade_id``) the library
functions a student could hand in instead of their own work. Three mechanisms read it, none of
them in the student's kernel:

- the **editions** (``tools/build/student_edition.py``): the handout's td_lib has no function of
  :data:`COUNTERPARTS` except the :data:`GENERAL_TOOLS`; a notebook's grading edition has none of
  its exercises' counterparts, general tools and :data:`DELEGATE_CUTS` included;
- the **home registry** the handout's edition is generated with (``student_edition.home_registry``):
  per exercise, the general tools the handout keeps and the grading edition cuts; while a test
  cell's ``own_work`` call runs at home they are switched off, so a function that delegates to one
  fails its visible test at home as it scores 0 when graded (one verdict at home and at grading);
- the **checks of the corpus**: ``tools.meta.delegates`` (a short delegate of any kept function
  must fail every exercise), ``tools.meta.mutants`` (an exercise with counterparts has a
  delegating variant), ``tools.build.nbtool`` (no test cell calls an answer).

Tools read these three literals with ``ast`` (``tools`` imports neither td_lib nor checks); the
names that do not import in an edition (``checks.*``) are skipped.
"""

from __future__ import annotations

#: exercise (answer cell ``grade_id``) -> dotted names of the functions a student could
#: delegate the exercise to (td_lib's, and the references of ``checks.grading``).
COUNTERPARTS: dict[str, tuple[str, ...]] = {
    # §7.1 two moments
    "ex71A_flow": ("td_lib.kernel_flow.training_residual",),
    "ex71C_ntk": ("td_lib.early_linear.ntk_at_init", "td_lib.circle_net.empirical_ntk"),
    "ex71C_tanh": ("checks.grading.two_moments.e_tanh2_gauss",),
    # §7.1b early-time linear learning
    "ex71bB_ntk": ("td_lib.early_linear.ntk_at_init",),
    "ex71bC_linear_kernels": ("td_lib.early_linear.linear_constants",
                              "td_lib.early_linear.linear_kernel",
                              "td_lib.early_linear.linear_features",
                              "td_lib.hermite.coefficients",
                              "td_lib.early_linear.dual_activation",
                              "td_lib.core.gaussian.arccos_kernel",
                              "td_lib.early_linear.cnn_linear_constants",
                              "td_lib.early_linear.train_linear_model",
                              "td_lib.hermite.normalised_coefficients"),
    # §7.2 higher cumulants
    "ex72A_kappa4": ("td_lib.mixed_cumulant.kappa4_v", "td_lib.mixed_cumulant.bayes_accuracy",
                     "td_lib.mixed_cumulant.log_likelihood_ratios",
                     "checks.grading.higher_cumulants.bayes_accuracy_v"),
    "ex72A_cross_term": ("td_lib.mixed_cumulant.cross_term", "td_lib.mixed_cumulant.class_cov"),
    "ex72C_escape_times": ("td_lib.escape.single_index_escape_times",
                           "td_lib.escape.reduced_escape_times", "td_lib.escape.spherical_sgd"),
    "ex72D_var": ("td_lib.mixed_cumulant.class_cov",),
    "ex72D_coefficients": ("td_lib.hermite.mcm_relu_loss", "checks.grading.higher_cumulants.fitted_coefficients"),
    # §7.3 spectral bias
    "ex73B_eigenvalues": ("td_lib.kernels.von_mises_eigenvalues",
                          "td_lib.kernels.von_mises_eigenvalues_asymptotic",
                          "td_lib.kernels.cosine_coefficients_quad", "td_lib.kernels.cosine_coefficients_fft",
                          "td_lib.kernels.circulant_eigenvalues", "checks.grading.spectral_bias.von_mises_series"),
    "ex73C_cos_coef": ("td_lib.kernels.cosine_coefficients_quad", "td_lib.kernels.cosine_coefficients_fft",
                       "td_lib.kernels.circulant_eigenvalues", "checks.grading.spectral_bias.bias_coefficients"),
    "ex73C_basri": ("td_lib.kernels.basri_coefficients", "td_lib.kernels.cosine_coefficients_quad",
                    "td_lib.kernels.cosine_coefficients_fft", "td_lib.kernels.circulant_eigenvalues"),
    "ex73C_finite_width": ("td_lib.kernels.finite_width_kernel", "td_lib.circle_net.empirical_ntk"),
    # §7.4 teacher nodes
    "ex74A_closed_form": ("td_lib.teacher_student.relu_cross_moment", "td_lib.teacher_student.psi_gaussian"),
    "ex74A_monte_carlo": ("td_lib.teacher_student.relu_cross_moment_mc",
                          "td_lib.teacher_student.relu_cross_moment",
                          "td_lib.teacher_student.population_gradient_mc"),
    "ex74B_rhs": ("td_lib.teacher_student.angle_velocity", "td_lib.teacher_student.psi_gaussian"),
    "ex74B_escape": ("td_lib.teacher_student.escape_time", "td_lib.teacher_student.escape_time_asymptotic",
                     "td_lib.teacher_student.escape_time_constant", "td_lib.teacher_student.integrate_angle",
                     "td_lib.teacher_student.escape_time_theorem6"),
    # CNN vs LCN
    "exA_j2_erf": ("td_lib.cnn_lcn.integrals.J2", "td_lib.cnn_lcn.integrals.j2_entries"),
    "exB_lcn_sgd_step": ("td_lib.cnn_lcn.network.sgd_step", "td_lib.cnn_lcn.network.Networks.step",
                         "td_lib.cnn_lcn.network.Networks.coef"),
    "exC_matched_init": ("td_lib.cnn_lcn.init.matched_lcn_init",),
    "exD_alpha_spec": ("td_lib.cnn_lcn.observables.alpha_spec", "td_lib.cnn_lcn.observables.log_d_fit"),
    "exE_initial_errors": ("td_lib.cnn_lcn.early_times.initial_error", "td_lib.cnn_lcn.model.generalisation_error",
                           "td_lib.cnn_lcn.model.eg_from_covariance"),
    "exF_noise_floor": ("td_lib.cnn_lcn.noise.noise_floor", "td_lib.cnn_lcn.noise.noise_floor_from_M",
                        "td_lib.cnn_lcn.noise.omega_matrix", "td_lib.cnn_lcn.noise.error_covariance_prediction",
                        "td_lib.cnn_lcn.phase.refine_min"),
}


#: Names of :data:`COUNTERPARTS` that are general tools rather than an exercise's answer: the
#: student edition of td_lib that students work with keeps them, because engines across the
#: course are built on them, and each is either a building block of the answer only or a formula
#: the exercise's statement prints (so the tests cannot tell a copy from a derivation, and the
#: statement says so). The grading kernel of a notebook whose exercise lists one has it cut all
#: the same (``tools/grading/grade.py``), and at home ``td_lib.own_work.own_work`` switches it off while
#: that exercise is graded (the home registry).
GENERAL_TOOLS: tuple[str, ...] = (
    "td_lib.core.gaussian.arccos_kernel",  # E[relu(u) relu(v)]-type integrals: kernels, teacher-student theory
    "td_lib.cnn_lcn.integrals.J2",  # eq. 45, printed in the statement; the ODEs' noise term
    "td_lib.cnn_lcn.integrals.j2_entries",
    "td_lib.cnn_lcn.network.sgd_step",  # eq. 68, printed in the statement; every SGD simulation
    "td_lib.cnn_lcn.network.Networks.step",
    "td_lib.cnn_lcn.network.Networks.coef",  # the update's coefficient, which step applies
    "td_lib.cnn_lcn.model.generalisation_error",  # eq. 81: the error every ODE run reports
    "td_lib.cnn_lcn.model.eg_from_covariance",
)


#: What ``python -m tools.meta.delegates`` found (issue 35, point 5): exercise -> library functions that
#: its notebook's grading edition kept and that passed every test of the exercise as a short
#: delegate.
#: The grading edition of the notebook cuts them like the exercise's counterparts
#: (``tools.build.student_edition.cut_names``, ``keep_general=False``); the students' edition keeps them
#: (they are general tools, which demos and engines need). ``tests/test_delegates.py`` reruns the tool
#: on the course: it must find nothing, so a new finding lands here (or changes its exercise).
DELEGATE_CUTS: dict[str, tuple[str, ...]] = {
    "ex74A_closed_form": ("td_lib.core.gaussian.arccos_kernel",),
}


def install_guard() -> None:
    """Fill td_lib's guard registry (``td_lib.own_work.COUNTERPARTS``, empty in the library) with
    :data:`COUNTERPARTS`, in this process.

    The instructor's environment has the whole library. Where the course's test cells run there
    on purpose against answers that delegate (the mutation corpus, ``tools.meta.mutants``; tests of
    the test cells), this makes a graded call fail on any counterpart of its exercise, as it fails
    in the grading edition, which does not have them.
    """
    from td_lib import own_work

    own_work.COUNTERPARTS.update(COUNTERPARTS)
