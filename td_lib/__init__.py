"""td_lib: the small library behind the *What is learned first* course.

Two floors (enforced by import-linter contracts in ``pyproject.toml``, run by ``make test``):

- ``td_lib.core``, the ground floor, defined once for the whole library: the activation
  registry (σ, σ′, σ″ for numpy and torch), Gaussian expectations by quadrature, the runtime
  conventions (quick mode, ``progress=``, ``rng``, ``torch_threads``) and argument validation.
  It imports nothing else from td_lib.
- The topic modules and packages, named after the idea they implement (import them directly,
  e.g. ``from td_lib import mixed_cumulant``):

  - ``mixed_cumulant``, ``clone``, ``nets``: mixed cumulant model, exact empirical clones, small
    two-layer trainers (§7.1);
  - ``early_linear``: early-time linear learning of two-layer networks and CNNs (§7.1b,
    Hu et al.);
  - ``hermite``, ``escape``, ``staircase``: Hermite tools, online spherical SGD escape
    times, the two-layer ReLU staircase demo (§7.2);
  - ``kernels``, ``kernel_flow``, ``basri``: kernels on the circle, kernel gradient flow,
    the Basri-setting trainer (§7.3);
  - ``teacher_student`` (model, metrics, training, theory, angle; ``demos`` holds the
    notebook's seeded demo runs), ``deep_teacher``: ReLU teacher/student specialisation and
    the deep teacher of Tian's Fig. 8 (§7.4);
  - ``cnn_lcn``: exact ODEs and SGD simulators for CNN vs LCN students;
  - ``own_work``: what a test cell and a demo tell the student (an unwritten function named, the
    visible tests' ✓ line, a demo on the student's functions or a shipped reference); in the
    handout's edition, the general tools an exercise must not call are off while its test runs.

Grading references (what hidden tests need but students must not have) live outside td_lib,
in ``checks/grading``. The library names no exercise: which of its functions answer which exercise is the instructor's
``checks/grading/exercises.py``.
"""

__version__ = "0.1.0"
