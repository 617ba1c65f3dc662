"""Grading references: everything a hidden test needs that a student must not have.

This package is the one place for them. A hidden test cell imports its references only
from ``checks.grading.<module>`` (one module per notebook or topic); the library counterparts
of an exercise (:mod:`checks.grading.exercises`, the registry of which functions answer which
exercise) name these functions too. ``checks`` is instructor-only: it is absent from the student wheel and the handout
(``tools/build/handout.py``), and the sandboxed grader exposes it to the kernel
(``tools/grading/sandbox.py``). The claim modules (``checks/<section>.py``) and the benchmarks may use
these references as well; td_lib never imports them (an import-linter contract).
"""
