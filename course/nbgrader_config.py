"""nbgrader configuration of the course (course root = this folder).

Sources: ``source/<assignment>/<notebook>.ipynb``, paired by Jupytext with the ``.py``
files next to them (the ``.py`` files are the single source of truth, and are never
copied into a release: they contain every solution and hidden test).

Everything that keeps grades honest is configured here, so it holds for any shell, HOME,
IPython profile or working directory (the repository root has an ``nbgrader_config.py``
that loads this file): minimal kernel tracebacks, hidden tests scrubbed from feedback
outputs, and the checksum check that knows about hidden tests (``tools/nbgrader_ext.py``).
"""

import os
from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearHiddenTests,
    ClearOutput,
    DeduplicateIds,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    OverwriteKernelspec,
    SaveAutoGrades,
)

from tools.nbgrader_ext import GradingExecute, ReleaseAwareOverwriteCells, ScrubHiddenOutputs

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
c.Autograde.autograde_preprocessors = [
    GradingExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
    AssignLatePenalties, CheckCellMetadata,
]

# Feedback shows results, never the source of hidden tests: output lines that reproduce a
# hidden line are removed, then the hidden regions themselves.
c.GenerateFeedback.preprocessors = [GetGrades, ScrubHiddenOutputs, ClearHiddenTests, CSSHTMLHeaderPreprocessor]
c.ClearHiddenTests.enforce_metadata = False

# Feedback pages typeset math offline: the course's feedback template inlines the packaged
# MathJax (tools/site.py; nbgrader's own template would load it from a CDN).
from tools.site import feedback_template_basedirs  # noqa: E402

c.HTMLExporter.template_name = "td_feedback"
c.HTMLExporter.extra_template_basedirs = feedback_template_basedirs()
c.HTMLExporter.filters = {"td_inline_mathjax": "tools.site.inline_mathjax"}
