"""td_lib: the small library behind the *What is learned first* course.

Modules are named after the idea they implement (import them directly, e.g.
``from td_lib import mcm``):

- ``mcm``, ``clone``, ``nets``: mixed cumulant model, exact empirical clones, small
  two-layer trainers (§7.1);
- ``hermite``, ``escape``, ``staircase``: Hermite tools, online spherical SGD escape
  times, the two-layer ReLU staircase demo (§7.2);
- ``kernels``, ``kernel_flow``, ``basri``: kernels on the circle, kernel gradient flow,
  the Basri-setting trainer (§7.3);
- ``teacher_student``, ``deep_teacher``: ReLU teacher/student specialisation, the deep
  teacher of Tian's Fig. 8 (§7.4);
- ``cnn_lcn``: exact ODEs and SGD simulators for CNN vs LCN students;
- ``runtime``, ``_validate``: quick-mode switch, progress bars, argument checks.

The library holds no exercise answers that students are asked to write.
"""

__version__ = "0.1.0"
