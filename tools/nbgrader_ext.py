"""nbgrader preprocessors of the course (configured in ``course/nbgrader_config.py``).

They make the grading promises hold whatever shell, HOME or IPython profile the
instructor runs nbgrader from:

- :class:`ReleaseAwareOverwriteCells` (autograde): nbgrader stores a test cell's checksum
  *with* its hidden tests, then compares it with the submitted cell, which was released
  *without* them, so every untouched test cell with hidden tests is reported as changed
  (nbgrader issue #1961). This subclass recognises the released form of the cell, restores
  the hidden tests silently, and still warns about (and restores) a cell the student edited.
- :class:`ScrubHiddenOutputs` (generate_feedback, before ``ClearHiddenTests``): removes from
  every output (streams, results, tracebacks) each line that reproduces a hidden-test source
  line or marker, so neither a verbose traceback nor a student's code that prints the
  running cell can put a hidden test into the feedback.
- :class:`GradingExecute` (autograde): nbgrader's ``Execute`` that does not run cells tagged
  ``demo`` (plots and demonstrations nothing graded depends on; the lint checks that no later
  cell uses a name only a demo defines). Grading a submission then costs what its graded
  computations cost; the demo cell keeps a one-line note in place of its outputs.
"""

from __future__ import annotations

import re

from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, Execute, NbGraderPreprocessor, OverwriteCells

BEGIN, END = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"
REMOVED = "[line removed: it showed hidden-test source]"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
MIN_LINE = 8  # shorter hidden lines ("else:", "pass") carry nothing worth hiding
DEMO_TAG = "demo"
DEMO_NOTE = "[demo cell: not run while grading; run the notebook to see it]\n"


def is_demo(cell) -> bool:
    """A code cell tagged ``demo`` (skipped by :class:`GradingExecute`)."""
    return cell.get("cell_type") == "code" and DEMO_TAG in cell.get("metadata", {}).get("tags", [])


def hidden_lines(source: str) -> set[str]:
    """The stripped source lines inside hidden-test regions of ``source``."""
    out, inside = set(), False
    for line in source.split("\n"):
        if BEGIN in line:
            inside = True
        elif END in line:
            inside = False
        elif inside and len(line.strip()) >= MIN_LINE:
            out.add(line.strip())
    return out


def released_source(source: str) -> str:
    """``source`` as ``generate_assignment`` releases it (hidden regions removed)."""
    cell = NotebookNode(source=source, cell_type="code", metadata={})
    ClearHiddenTests(enforce_metadata=False)._remove_hidden_test_region(cell)
    return cell.source


def scrub_text(text: str, secrets: set[str]) -> tuple[str, int]:
    """Drop every line of ``text`` that shows a secret line or a marker; count the drops."""
    kept, dropped = [], 0
    for line in text.split("\n"):
        plain = _ANSI.sub("", line)
        if BEGIN in plain or END in plain or any(s in plain for s in secrets):
            kept.append(REMOVED)
            dropped += 1
        else:
            kept.append(line)
    return "\n".join(kept), dropped


class ScrubHiddenOutputs(NbGraderPreprocessor):
    """Remove hidden-test source from every output of the notebook (feedback step)."""

    def preprocess(self, nb, resources):
        secrets: set[str] = set()
        for cell in nb.cells:
            secrets |= hidden_lines(cell.source)
        self._secrets = secrets
        self._dropped = 0
        nb, resources = super().preprocess(nb, resources)
        if self._dropped:
            self.log.warning("Removed %d output line(s) showing hidden-test source", self._dropped)
        return nb, resources

    def _scrub(self, text):
        if isinstance(text, list):  # nbformat may keep multiline strings as lists
            text = "".join(text)
        new, n = scrub_text(text, self._secrets)
        self._dropped += n
        return new

    def preprocess_cell(self, cell, resources, cell_index):
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "stream":
                out["text"] = self._scrub(out.get("text", ""))
            elif kind in ("execute_result", "display_data"):
                for mime, value in list(out.get("data", {}).items()):
                    if isinstance(value, (str, list)) and mime.startswith("text/"):
                        out["data"][mime] = self._scrub(value)
            elif kind == "error":
                out["evalue"] = self._scrub(out.get("evalue", ""))
                out["traceback"] = [self._scrub(t) for t in out.get("traceback", [])]
        return cell, resources


class ReleaseAwareOverwriteCells(OverwriteCells):
    """OverwriteCells that accepts the released form of a test cell (nbgrader #1961)."""

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None and utils.is_locked(cell):
            try:
                source_cell = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                source_cell = None
            if source_cell is not None and source_cell.locked and BEGIN in source_cell.source:
                if cell.source == released_source(source_cell.source):
                    # Untouched: put the hidden tests back; the parent then finds no change.
                    cell.source = source_cell.source
        return super().preprocess_cell(cell, resources, cell_index)


class GradingExecute(Execute):
    """nbgrader's ``Execute`` that skips ``demo`` cells (autograde only; see module doc).

    A skipped cell gets one stream output, :data:`DEMO_NOTE`, so the feedback says why it is
    empty. Every other cell (imports, data, answers, tests) runs exactly as under ``Execute``.
    """

    def preprocess_cell(self, cell, resources, index):
        if is_demo(cell):
            cell.outputs = [NotebookNode(output_type="stream", name="stdout", text=DEMO_NOTE)]
            cell.execution_count = None
            return cell, resources
        return super().preprocess_cell(cell, resources, index)
