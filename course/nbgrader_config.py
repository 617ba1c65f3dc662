"""nbgrader configuration of the course (course root = this folder).

Sources: ``source/<assignment>/<notebook>.ipynb``, paired by Jupytext with the ``.py``
files next to them (the ``.py`` files are the single source of truth, and are never
copied into a release: they contain every solution and hidden test).

Everything that keeps grades honest is configured here, so it holds for any shell, HOME,
IPython profile or working directory (the repository root has an ``nbgrader_config.py``
that loads this file): minimal kernel tracebacks, hidden tests scrubbed from feedback
outputs, and the checksum check that knows about hidden tests (``tools/grading/nbgrader_ext.py``).
"""

import os
from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    DeduplicateIds,
    IgnorePattern,
    OverwriteKernelspec,
    SaveAutoGrades,
)

from tools.grading.execute import GradingExecute
from tools.grading.nbgrader_ext import ReleaseAwareOverwriteCells

c = get_config()  # noqa: F821

c.CourseDirectory.root = str(Path(__file__).resolve().parent)
c.CourseDirectory.course_id = "td-course"
# Never release the paired Jupytext sources (they hold the answers) or Jupytext config
# (which would pair the students' notebooks with .py files).
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints", "*.pyc", "__pycache__", "*.py", "jupytext.toml", "*.md", ".state",
]

# The file-system exchange shared by instructor and students (release_assignment, fetch,
# submit, collect, release_feedback, fetch_feedback). nbgrader's default; a class on one
# machine or a JupyterHub mounts the same folder for everyone. TD_EXCHANGE moves it (tests).
c.Exchange.root = os.environ.get("TD_EXCHANGE", "/srv/nbgrader/exchange")
# ... through the course's own exchange classes (tools/grading/exchange.py): a sticky root (1777), a course
# folder only its owner may rename, inbound write-only for students, and collect takes a submission
# only from the system user its folder's name claims (lstat, no links), at the time the exchange
# recorded (the folder's ctime), never the one its name claims. TD_EXCHANGE_ONE_ACCOUNT=1: every
# student runs as one system account (the hub's trial, the README's tests): no owner check.
from tools.grading import exchange as _exchange  # noqa: E402

_exchange.configure(c)
c.CourseExchange.one_account = os.environ.get("TD_EXCHANGE_ONE_ACCOUNT", "") not in ("", "0")

# Work handed in outside the exchange (students on laptops upload to an LMS) is imported by
# `make collect-zip A=<assignment> ZIP=<download>` (tools/grading/collect_zip.py), not by nbgrader's
# zip_collect: the student id comes from the manifest of the zip the handout's `handin.py` writes
# (tools/build/handin.py), never from a file name, and a loose <id>_<notebook>.ipynb is imported only when
# exactly one student of the roster fits it. nbgrader's file-name reader misfiled work (a course id
# or a name with "_" read as the student), so it matches nothing: `nbgrader zip_collect` by hand
# imports no file.
c.FileNameCollectorPlugin.named_regexp = r"(?!)(?P<student_id>)(?P<file_id>)"

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Execution: explicit per-cell timeout; an infinite loop is interrupted and only that cell
# scores 0. Demo cells shrink automatically while nbgrader executes (NBGRADER_EXECUTION is
# set in the kernel), graded computations do not. Tracebacks are minimal (exception type
# and message, no source lines) whatever the instructor's IPython profile says: a command
# line option beats every profile file.
c.Execute.timeout = 90
c.Execute.interrupt_on_timeout = True
c.Execute.kernel_name = "python3"
c.Execute.extra_arguments = ["--InteractiveShell.xmode=Minimal"]

# Autograde: nbgrader's own sanitizing step, with the checksum check that recognises the
# released (hidden tests removed) form of a test cell -- nbgrader issue #1961.
c.Autograde.sanitize_preprocessors = [
    ClearOutput, DeduplicateIds, OverwriteKernelspec, ReleaseAwareOverwriteCells, CheckCellMetadata,
]
# ... and nbgrader's own autograde chain, with Execute replaced by GradingExecute: cells
# tagged "demo" (plots, demonstrations; nothing graded uses them, the lint checks it) are
# not run while grading, so a submission costs what its graded computations cost.
# nbgrader's LimitOutput is left out: it cuts a cell's output to its first 1000 lines only
# after the whole output is in the grader's memory (a cell printing 500 MB used to cost the
# grader 1.6 GB and the student the whole submission); GradingExecute caps while the output
# arrives and keeps the head and the tail, saying what was cut (budgets below).
c.Autograde.autograde_preprocessors = [
    GradingExecute, IgnorePattern, ClearMetadataPreprocessor, SaveAutoGrades,
    AssignLatePenalties, CheckCellMetadata,
]

# Budgets instead of failures (steps of GradingExecute, tools/grading/steps.py; tools/grading/grade.py
# grades with the same class, its grader steps added, so both grading paths use these): a flood, a hang or a crash
# costs the student the cells it affects, the rest is graded and the class goes on.
# - Output: a cell keeps 100 kB of text (the first and the last 50 kB, one line in between
#   saying how much was cut), 5 MB of images and other display data; its error messages are
#   capped the same way. The kernel sends stdout/stderr in pieces of 1 MB, the grader drops
#   any message over 16 MB unread (that cell loses the end of its output: GradingOutputLost)
#   and queues at most 16 unread, so its memory stays bounded whatever a cell prints. Once a
#   cell's reply is in, the rest of its output may take 15 s to arrive (a flood in the queue).
c.GradingExecute.max_output_bytes = 100_000
c.GradingExecute.max_display_bytes = 5_000_000
c.GradingExecute.kernel_flush_bytes = 1_000_000
c.GradingExecute.max_message_bytes = 16_000_000
c.GradingExecute.max_queued_messages = 16
c.GradingExecute.iopub_timeout = 15
# - Time: nbgrader grades a submission one notebook at a time; each notebook gets 600 s, kernel
#   start, restarts and every cell included (a solution runs in seconds: demo cells do not run
#   while grading; a hang costs Execute.timeout, 90 s). A cell still running when the budget is
#   spent is interrupted; the cells after it are not run and get a GradingBudgetExceeded error
#   (graded ones score 0).
c.GradingExecute.notebook_budget = 600
# - Crashes: a cell that kills the kernel (os._exit, a segfault, the OOM killer) or ignores the
#   interrupt gets an error; a fresh kernel replays the cells before it (outputs discarded) and
#   grading goes on. After 3 restarts in one notebook its remaining cells are not run.
c.GradingExecute.max_kernel_restarts = 3

# Feedback shows results, never the source of hidden tests: output lines that reproduce a
# hidden line are removed, then the hidden regions themselves.
# Last, student HTML made inert (tools/site/sanitize.py; after the scrub, which reads the raw text).
# Right after GetGrades, the parts no one has graded yet (the gradebook's needs_manual_grade) are
# marked: the page says "to be graded by your instructor" for them and splits the score into
# autograded and hand-graded points, and generate_feedback logs a WARNING (tools/site/feedback_page.py).
# Feedback pages are one file with no script (nbgrader's release_feedback ships each page alone):
# maths as MathML written at generation time, the course's own small style sheet (AA colours,
# underlined links, text that wraps), no MathJax, Bootstrap or classic notebook CSS
# (tools/site/feedback_page.py; template tools/templates/td_feedback). The template and its filters are
# set on generate_feedback's own exporter class, not on every HTMLExporter: the Formgrader builds an
# HTMLExporter from this configuration too, and must keep nbgrader's `formgrade` template.
from tools.site.feedback_page import configure_feedback  # noqa: E402
from tools.site.sanitize import FILTERS as SANITIZING_FILTERS  # noqa: E402

configure_feedback(c)
c.HTMLExporter.filters = dict(SANITIZING_FILTERS)
# No student script runs in a page nbconvert renders for the instructor: generate_feedback and the
# Formgrader (nbgrader builds its HTMLExporter from this configuration) clean rich outputs (nbconvert's
# sanitize_html, through tools.site.sanitize.clean_html) and drop scripts and widgets; the filters clean
# markdown and image sizes, and the feedback page's CSP lets no script run.
c.HTMLExporter.sanitize_html = True
