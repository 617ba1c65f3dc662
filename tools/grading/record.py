"""What grading produces: :class:`NotebookReport` per executed notebook, :class:`GradingRecord` per submission.

The grading task (:func:`tools.grading.grade.grade_notebook`) executes one notebook of a submission
and returns its :class:`GradingRecord` (that notebook only, no score yet); the executor
(:class:`tools.grading.execute.GradingExecute`) reports each notebook as a :class:`NotebookReport`
(grading time, integrity flags, per-cell times, the line where each failing test stopped, the
known mistake each failing test recognised). The coordinator merges the executed notebooks into
the gradebook and writes one :class:`GradingRecord` per student,
``course/.grade/<assignment>/<student>.json``: the only thing ``make grade``, ``make report``,
``make mistakes`` and the live grading service read. Its JSON (:meth:`GradingRecord.to_json`)
keeps the keys the instructor-facing files always had (the log and the executed notebooks, which
travel from the grading task to the merge, are left out); :meth:`GradingRecord.from_json` reads
records written before (missing keys take their defaults).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class NotebookReport:
    """What executing one notebook reports (beside the executed notebook itself).

    Attributes
    ----------
    seconds : float
        Wall-clock time of the notebook's execution (kernel start included).
    flags : list of str
        Integrity flags: functions the tests rely on that the submission replaced, protocol
        violations of the student's kernel.
    cells : list of [str or int, float]
        Each executed cell's grade id (its index when it has none) and its time in seconds.
    failed_lines : dict of str to int
        Test cell grade id -> the line of the cell where its test failed.
    mistakes : dict of str to str
        Test cell grade id -> the known mistake (``tools.grading.mistakes``) its failure looks like.
    """

    seconds: float = 0.0
    flags: list[str] = field(default_factory=list)
    cells: list = field(default_factory=list)
    failed_lines: dict[str, int] = field(default_factory=dict)
    mistakes: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict:
        """The report as JSON data."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> NotebookReport:
        """A report from :meth:`to_json`'s data (unknown keys ignored)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def write(self, path: Path) -> None:
        """Write the report to ``path`` (JSON)."""
        Path(path).write_text(json.dumps(self.to_json()))

    @classmethod
    def read(cls, path: Path) -> NotebookReport:
        """The report written to ``path`` by :meth:`write`."""
        return cls.from_json(json.loads(Path(path).read_text()))


#: the keys of a record's JSON, in the order ``make grade`` writes them
_ORDER = ("student", "assignment", "seconds", "errors", "flags", "timing", "host", "notebooks", "worker_pid",
          "score", "max_score", "timestamp", "auto_score", "auto_max", "hand_score", "hand_max", "hand_pending",
          "submitted_stamp", "cells", "failed_lines", "mistakes")


@dataclass
class GradingRecord:
    """The grading of one student's submission of one assignment.

    Per-notebook tables are keyed by notebook: ``flags``, ``timing`` and ``cells`` by the
    notebook's name without ``.ipynb`` (nbgrader's ``unique_key``), as are ``failed_lines`` and
    ``mistakes``. A record whose ``score`` is None was not graded (``errors`` says why).

    Attributes
    ----------
    student, assignment : str
        Whose submission, of which assignment.
    seconds : float or None
        The grading task's wall-clock time.
    errors : list of str
        What went wrong (unreadable or missing notebooks, a failed task or merge).
    flags : dict of str to list of str
        Notebook -> integrity flags (:attr:`NotebookReport.flags`), only flagged notebooks.
    timing : dict of str to float
        Notebook -> execution time.
    host : str or None
        The machine that graded it.
    notebooks : list of str
        The executed notebooks' file names.
    worker_pid : int or None
        The grading worker's process id.
    score, max_score, auto_score, auto_max, hand_score, hand_max : float or None
        The gradebook's totals after the merge (autograded and hand-graded parts).
    hand_pending : bool or None
        Hand-graded answers still to grade.
    timestamp : str or None
        The submission's timestamp in the gradebook.
    submitted_stamp : str or None
        ``timestamp.txt`` of the submission graded (a later one is graded again).
    cells : dict
        Notebook -> :attr:`NotebookReport.cells`.
    failed_lines : dict
        Notebook -> test cell -> line where its test failed.
    mistakes : dict
        Notebook -> test cell -> the known mistake its failure looks like (``tools.grading.mistakes``).
    log : str
        nbgrader's log of the task (not written to the record's file).
    executed : dict of str to str
        Executed notebook file name -> the notebook's JSON text, as the grading task returns it
        to the merge (not written to the record's file: the merge writes ``autograded/``).
    """

    student: str
    assignment: str | None = None
    seconds: float | None = None
    errors: list[str] = field(default_factory=list)
    flags: dict[str, list[str]] = field(default_factory=dict)
    timing: dict[str, float] = field(default_factory=dict)
    host: str | None = None
    notebooks: list[str] = field(default_factory=list)
    worker_pid: int | None = None
    score: float | None = None
    max_score: float | None = None
    timestamp: str | None = None
    auto_score: float | None = None
    auto_max: float | None = None
    hand_score: float | None = None
    hand_max: float | None = None
    hand_pending: bool | None = None
    submitted_stamp: str | None = None
    cells: dict = field(default_factory=dict)
    failed_lines: dict = field(default_factory=dict)
    mistakes: dict = field(default_factory=dict)
    log: str = ""
    executed: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def graded(self) -> bool:
        """Whether the submission was graded (it has a score)."""
        return self.score is not None

    def notebook(self, name: str) -> NotebookReport:
        """The report of notebook ``name`` (without ``.ipynb``) as this record holds it."""
        return NotebookReport(seconds=self.timing.get(name) or 0.0, flags=list(self.flags.get(name) or []),
                              cells=list(self.cells.get(name) or []),
                              failed_lines=dict(self.failed_lines.get(name) or {}),
                              mistakes=dict(self.mistakes.get(name) or {}))

    def add_notebook(self, name: str, report: NotebookReport) -> None:
        """Put the report of notebook ``name`` (without ``.ipynb``) into the per-notebook tables,
        as :meth:`notebook` reads it back (flags, failed lines and mistakes only when there are some)."""
        self.timing[name] = report.seconds
        self.cells[name] = report.cells
        if report.flags:
            self.flags[name] = report.flags
        if report.failed_lines:
            self.failed_lines[name] = report.failed_lines
        if report.mistakes:
            self.mistakes[name] = report.mistakes

    @classmethod
    def combine(cls, parts: list[GradingRecord], student: str, assignment: str | None = None) -> GradingRecord:
        """One record from records that each graded some notebooks of one submission (not merged
        yet: no score): per-notebook tables joined, errors and logs concatenated in order, the
        longest time; host and worker of the first part."""
        out = cls(student=student, assignment=assignment, seconds=0.0 if parts else None)
        for p in parts:
            out.errors += p.errors
            for table in ("flags", "timing", "cells", "failed_lines", "mistakes", "executed"):
                getattr(out, table).update(getattr(p, table))
            out.log = "\n".join(x for x in (out.log, p.log) if x)
            out.seconds = max(out.seconds or 0.0, p.seconds or 0.0)
            out.host = out.host or p.host
            out.worker_pid = out.worker_pid or p.worker_pid
        out.notebooks = sorted(out.executed)
        return out

    def to_json(self) -> dict:
        """The record as JSON data, with the keys (and order) of ``make grade``'s files; the log left out."""
        return {k: getattr(self, k) for k in _ORDER}

    @classmethod
    def from_json(cls, data: dict) -> GradingRecord:
        """A record from JSON data (a record file, a stored row); missing or null tables read as empty."""
        names = {f.name for f in dataclasses.fields(cls)}
        rec = cls(**{k: v for k, v in data.items() if k in names and v is not None})
        return rec

    def write(self, path: Path) -> None:
        """Write the record's file (:meth:`to_json`, indented as always)."""
        Path(path).write_text(json.dumps(self.to_json(), indent=1))

    @classmethod
    def read(cls, path: Path) -> GradingRecord:
        """The record in the file ``path``."""
        return cls.from_json(json.loads(Path(path).read_text()))
