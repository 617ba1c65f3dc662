"""Grading one notebook of one submission, as one visible engine.

- :mod:`tools.grading.execute`: :class:`~tools.grading.execute.GradingExecute`, nbgrader's
  ``Execute`` running each cell through an explicit list of steps (``course_steps`` for
  ``nbgrader autograde``, ``grader_steps`` for ``make grade`` and the live service);
- :mod:`tools.grading.steps`: the steps, one job each (demo cells skipped, the sandboxed
  kernel's edition of ``td_lib``, the integrity probe, cell times, test cells in a test runner,
  crash recovery, the time budget, output caps);
- :mod:`tools.grading.kernel`: the student's kernel in its sandbox (``SandboxKernelManager``);
- :mod:`tools.grading.integrity`: the integrity probe's fingerprints;
- :mod:`tools.grading.record`: what grading produces, :class:`~tools.grading.record.NotebookReport`
  per executed notebook and :class:`~tools.grading.record.GradingRecord` per submission, the only
  thing ``make grade``, ``make report``, ``make mistakes`` and the live service read.

The Dask task that grades a submission and the coordinator that merges it into the gradebook
are ``tools/grading/grade.py``; the sandbox's command lines ``tools/grading/sandbox.py``; the test runner and
its data channel ``tools/grading/runner.py``, ``tools/grading/wire.py`` and ``tools/grading/remote_tests.py``.
This package's ``__init__`` imports nothing (importing a record does not start Jupyter).
"""
