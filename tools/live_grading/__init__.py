"""Live grading on the class hub: feedback within a minute of a submission.

A JupyterHub-managed service (``python -m tools.live_grading``, registered by
``deploy/jupyterhub_config.py`` when ``TD_GRADING_SERVICE=1``):

- :mod:`~tools.live_grading.watch` notices each new submission in the nbgrader exchange
  (``<exchange>/<course_id>/inbound/<student>+<assignment>+<timestamp>+<random>/``);
- :mod:`~tools.live_grading.queue` keeps them in a durable queue (sqlite in the service's state
  folder): a restart loses nothing, and each submission is graded to completion exactly once;
  the rate limit (at most N graded submissions per student, assignment and hour) is decided
  there, when a submission arrives; a stop (SIGTERM) or a crash while grading puts the
  submission back without using one of its attempts;
- :mod:`~tools.live_grading.worker` grades them with the course's grader (``tools.grading.grade``:
  sandboxed kernels, test cells in a test runner, on a Dask cluster started and warmed up with
  the service), each submission on its own and recorded the moment it is graded (one that hangs
  holds back nobody else's), one Dask task per notebook, and only the notebooks that changed
  since the student's last graded submission (the others keep their grading, marked as reused);
  its results name what a student can act on (an answer cell that hit its time limit, a notebook
  that could not be read) in one line each, never a traceback (those go to the service's log);
- :mod:`~tools.live_grading.policy` decides what a student sees of a result (visible tests
  at once; hidden tests as pass/fail or nothing before the deadline, their messages after);
- :mod:`~tools.live_grading.app` serves the pages under ``/services/grading/`` behind the
  hub's OAuth: a student's own submissions and feedback, the class and the report for
  instructors.
"""


def build_parser():
    """The command line's parser (``python -m tools.live_grading``; in ``__main__``)."""
    from tools.live_grading.__main__ import build_parser as parser

    return parser()
