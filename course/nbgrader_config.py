"""nbgrader configuration of the course (course root = this folder).

Sources: ``source/<assignment>/<notebook>.ipynb``, paired by Jupytext with the ``.py``
files next to them (the ``.py`` files are the single source of truth, and are never
copied into a release: they contain every solution and hidden test).
"""

from pathlib import Path

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import ClearHiddenTests, GetGrades

c = get_config()  # noqa: F821

c.CourseDirectory.root = str(Path(__file__).resolve().parent)
c.CourseDirectory.course_id = "td-course"
# Never release the paired Jupytext sources (they hold the answers) or Jupytext config
# (which would pair the students' notebooks with .py files).
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints", "*.pyc", "__pycache__", "*.py", "jupytext.toml", "*.md", ".state",
]

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Execution: explicit per-cell timeout; an infinite loop is interrupted and only that cell
# scores 0. Demo cells shrink automatically while nbgrader executes (NBGRADER_EXECUTION is
# set in the kernel), graded computations do not.
c.Execute.timeout = 90
c.Execute.interrupt_on_timeout = True
c.Execute.kernel_name = "python3"

# Feedback shows results, never the source of hidden tests (kernel tracebacks are minimal,
# see tools/env.py, and the hidden regions are cleared before rendering).
c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]
c.ClearHiddenTests.enforce_metadata = False
