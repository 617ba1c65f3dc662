"""What a student sees of a graded submission, per assignment: a small TOML file.

    # <course>/live_grading.toml (python -m tools.live_grading --policy FILE)
    [defaults]
    enabled = true                      # grade submissions as they arrive
    max_per_hour = 3                    # accepted submissions per student, assignment and hour (0: no limit)
    hidden_before_deadline = "passfail" # "passfail": pass/fail per hidden test; "nothing": not even that

    [assignments.td2_7_learned_first]
    deadline = 2026-12-15T18:00:00Z     # else the assignment's due date in the gradebook; else none
    max_per_hour = 2

Always shown: each visible test's result and message. Hidden tests (the part of a test cell
between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``): before the deadline only
pass/fail per test cell (or nothing), their messages after it; a cell's points reveal its
hidden tests, so they are shown with pass/fail and withheld with "nothing". Without a
deadline, "before the deadline" lasts. Instructors see everything. A test cell that fails in
its visible part never ran its hidden tests ("not run"). Where the grader could not tell
which part failed (a timeout, a crash), the message waits for the deadline too.
"""

from __future__ import annotations

import datetime as dt
import re
import time
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

MODES = ("passfail", "nothing")
#: grade_id -> exercise: ``test_ex71A_loss`` and ``ex71A_1_answer`` belong to ``ex71A``
EXERCISE = re.compile(r"(?:^|_)(ex[0-9]+[A-Za-z]*)(?:_|$)")


@dataclass(frozen=True)
class AssignmentPolicy:
    enabled: bool = True
    max_per_hour: int = 3
    hidden_before_deadline: str = "passfail"
    deadline: dt.datetime | None = None


def _deadline(value) -> dt.datetime | None:
    if value in (None, ""):
        return None
    if isinstance(value, dt.datetime):
        d = value
    elif isinstance(value, dt.date):
        d = dt.datetime.combine(value, dt.time(23, 59, 59))
    else:
        d = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return d if d.tzinfo else d.replace(tzinfo=dt.UTC)


def _entry(base: AssignmentPolicy, table: dict, where: str) -> AssignmentPolicy:
    names = {f.name for f in fields(AssignmentPolicy)}
    unknown = sorted(set(table) - names)
    if unknown:
        raise ValueError(f"{where}: unknown setting(s) {unknown}; known: {sorted(names)}")
    kw = dict(table)
    if "deadline" in kw:
        kw["deadline"] = _deadline(kw["deadline"])
    if "max_per_hour" in kw:
        kw["max_per_hour"] = int(kw["max_per_hour"])
        if kw["max_per_hour"] < 0:
            raise ValueError(f"{where}: max_per_hour must be 0 (no limit) or more")
    if kw.get("hidden_before_deadline", base.hidden_before_deadline) not in MODES:
        raise ValueError(f"{where}: hidden_before_deadline must be one of {MODES}")
    return replace(base, **kw)


@dataclass
class Policy:
    """The settings of every assignment; re-read when the file changes."""

    path: Path | None = None
    defaults: AssignmentPolicy = field(default_factory=AssignmentPolicy)
    assignments: dict[str, AssignmentPolicy] = field(default_factory=dict)
    _mtime: float = -1.0

    @classmethod
    def load(cls, path: Path | None, defaults: AssignmentPolicy | None = None) -> Policy:
        """The policy of ``path`` (a missing file: ``defaults`` for every assignment)."""
        p = cls(Path(path) if path else None, defaults or AssignmentPolicy())
        p._base = p.defaults
        p.refresh()
        return p

    def refresh(self) -> None:
        if self.path is None or not self.path.exists():
            return
        mtime = self.path.stat().st_mtime
        if mtime == self._mtime:
            return
        data = tomllib.loads(self.path.read_text())
        unknown = sorted(set(data) - {"defaults", "assignments"})
        if unknown:
            raise ValueError(f"{self.path}: unknown table(s) {unknown}; known: [defaults], [assignments.<name>]")
        base = _entry(getattr(self, "_base", AssignmentPolicy()), data.get("defaults", {}), f"{self.path} [defaults]")
        self.defaults = base
        self.assignments = {name: _entry(base, t, f"{self.path} [assignments.{name}]")
                            for name, t in data.get("assignments", {}).items()}
        self._mtime = mtime

    def get(self, assignment: str) -> AssignmentPolicy:
        try:
            self.refresh()
        except (OSError, ValueError, tomllib.TOMLDecodeError):
            pass  # a half-written file: keep the last good settings
        return self.assignments.get(assignment, self.defaults)

    def limit(self, assignment: str) -> int:
        return self.get(assignment).max_per_hour


def exercise_of(grade_id: str) -> str:
    m = EXERCISE.search(grade_id)
    if m:
        return m.group(1)
    return grade_id.removeprefix("test_")


def hidden_lines(source: str, begin: str = "BEGIN HIDDEN TESTS", end: str = "END HIDDEN TESTS") -> set[int]:
    """The 1-based lines of ``source`` inside its hidden-test regions (markers included)."""
    out, inside = set(), False
    for i, line in enumerate(source.splitlines(), 1):
        if begin in line:
            inside = True
        if inside:
            out.add(i)
        if end in line:
            inside = False
    return out


def view(result: dict, pol: AssignmentPolicy, deadline: dt.datetime | None = None, now: float | None = None,
         instructor: bool = False) -> dict:
    """What the viewer may see of a grading ``result`` (worker.py's format).

    Returns ``{"after_deadline", "deadline", "full", "score", "max_score", "withheld",
    "manual", "exercises": [{"name", "points", "max_points", "cells": [...]}], "errors"}``;
    a cell is ``{"notebook", "grade_id", "kind", "max_points", "points" (None: withheld),
    "visible": {"status"}, "hidden": {"status"} | None, "message" (None: none or withheld)}``,
    statuses ``passed``, ``failed``, ``not run``, ``unknown``, ``withheld``."""
    now = time.time() if now is None else now
    deadline = pol.deadline or deadline
    after = deadline is not None and now >= deadline.timestamp()
    full = instructor or after
    mode = pol.hidden_before_deadline
    exercises: dict[str, dict] = {}
    score = withheld = manual = 0.0
    for c in result.get("cells", []):
        cell = {"notebook": c["notebook"], "grade_id": c["grade_id"], "kind": c["kind"],
                "max_points": c["max_points"], "points": c.get("points"), "message": None,
                "visible": None, "hidden": None}
        if c["kind"] != "test":  # graded by hand
            cell["points"] = None
            manual += c["max_points"]
        else:
            passed, part, msg = c.get("passed"), c.get("failed_part"), c.get("message")
            vis = "passed" if passed or part == "hidden" else ("failed" if part == "visible" else "unknown")
            hid = None
            if c.get("has_hidden"):
                hid = "passed" if passed else {"hidden": "failed", "visible": "not run"}.get(part, "unknown")
            cell["visible"] = {"status": vis}
            if full or not c.get("has_hidden"):
                cell["hidden"] = {"status": hid} if hid else None
                cell["message"] = msg
            else:
                if part == "visible":
                    cell["hidden"] = {"status": hid}
                    cell["message"] = msg
                elif mode == "passfail":
                    cell["hidden"] = {"status": hid}
                else:
                    cell["hidden"] = {"status": "withheld"}
                    cell["visible"] = {"status": "withheld" if vis == "unknown" else vis}
                    cell["points"] = None
            if cell["points"] is None:
                withheld += c["max_points"]
            else:
                score += cell["points"]
        ex = exercises.setdefault(exercise_of(c["grade_id"]), {"name": exercise_of(c["grade_id"]), "points": 0.0,
                                                               "max_points": 0.0, "cells": [], "withheld": False,
                                                               "manual": 0.0})
        ex["cells"].append(cell)
        ex["max_points"] += c["max_points"]
        if c["kind"] != "test":
            ex["manual"] += c["max_points"]
        elif cell["points"] is None:
            ex["withheld"] = True
        else:
            ex["points"] += cell["points"]
    return {"after_deadline": after, "deadline": deadline.isoformat() if deadline else None, "full": full,
            "mode": mode, "score": score, "max_score": result.get("max_score", 0.0), "withheld": withheld,
            "manual": manual, "exercises": list(exercises.values()), "errors": list(result.get("errors") or [])}
