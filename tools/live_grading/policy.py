"""What a student sees of a graded submission, per assignment: a small TOML file.

    # <course>/live_grading.toml (python -m tools.live_grading --policy FILE)
    timezone = "Europe/Paris"           # the pages' times (default UTC); before any [table]

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
which part failed (a timeout, a crash), the message waits for the deadline too. A recognised
known mistake (``mistake``: its hint) is shown, and withheld, exactly like the message.

A student never reads more than the first line of an error (:func:`first_line`): no grader
traceback reaches them. Instructors read every message whole.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
import tomllib
import zoneinfo
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from tools.grading.remote_tests import MISTAKE_LEAD
from tools.nbcore import SOLUTION_DELIMITERS, hidden_lines, strip_markers  # noqa: F401 (hidden_lines: worker.py imports it from here)

MODES = ("passfail", "nothing")
#: grade_id -> exercise: ``test_ex71A_loss`` and ``ex71A_1_answer`` belong to ``ex71A``
EXERCISE = re.compile(r"(?:^|_)(ex[0-9]+[A-Za-z]*)(?:_|$)")
#: the course's exercise ids: ``ex71A`` -> 7.1.A, ``ex71bA`` -> 7.1b.A, ``exD`` -> D
NUMBERED = re.compile(r"^ex(?:(\d)(\d)(b?))?([A-Z])$")
#: what the test runner appends to a failure's message when it recognises a known mistake
KNOWN = re.compile(rf"\s*{re.escape(MISTAKE_LEAD)}.*\Z", re.S)
#: the longest line of an error a student reads
LINE = 300
UTC = dt.UTC


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


def zone(name: str | None) -> dt.tzinfo:
    """The time zone called ``name`` (IANA, ``Europe/Paris``; empty: UTC); ValueError if unknown."""
    if not name or name.upper() == "UTC":
        return dt.UTC
    try:
        return zoneinfo.ZoneInfo(str(name))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as e:
        raise ValueError(f"unknown time zone {name!r} (an IANA name such as \"Europe/Paris\")") from e


@dataclass
class Policy:
    """The settings of every assignment; re-read when the file changes."""

    path: Path | None = None
    defaults: AssignmentPolicy = field(default_factory=AssignmentPolicy)
    assignments: dict[str, AssignmentPolicy] = field(default_factory=dict)
    tz: dt.tzinfo = dt.UTC
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
        unknown = sorted(set(data) - {"defaults", "assignments", "timezone"})
        if unknown:
            raise ValueError(f"{self.path}: unknown table(s) or setting(s) {unknown}; known: timezone = \"...\", "
                             "[defaults], [assignments.<name>]")
        tz = zone(data.get("timezone"))
        base = _entry(getattr(self, "_base", AssignmentPolicy()), data.get("defaults", {}), f"{self.path} [defaults]")
        self.assignments = {name: _entry(base, t, f"{self.path} [assignments.{name}]")
                            for name, t in data.get("assignments", {}).items()}
        self.defaults, self.tz = base, tz
        self._mtime = mtime

    def get(self, assignment: str) -> AssignmentPolicy:
        try:
            self.refresh()
        except (OSError, ValueError, tomllib.TOMLDecodeError):
            pass  # a half-written file: keep the last good settings
        return self.assignments.get(assignment, self.defaults)

    def limit(self, assignment: str) -> int:
        return self.get(assignment).max_per_hour

    def timezone(self) -> dt.tzinfo:
        """The pages' time zone (``timezone = "..."`` at the top of the file; default UTC)."""
        try:
            self.refresh()
        except (OSError, ValueError, tomllib.TOMLDecodeError):
            pass
        return self.tz


# ------------------------------------------------------------------------ times
def when(value, tz: dt.tzinfo | None = None) -> str | None:
    """The one way the pages write a time: ``2026-12-02 15:05:09 CET`` in the course's time
    zone ``tz`` (default UTC), no microseconds. ``value``: seconds since the epoch, a datetime
    (naive: UTC), or an ISO or nbgrader time string (``2026-12-02 14:05:09.123456 UTC``);
    None, or a string it cannot read: None."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        d = value
    elif isinstance(value, int | float):
        d = dt.datetime.fromtimestamp(float(value), dt.UTC)
    else:
        s = str(value).strip()
        if s.endswith(" UTC"):
            s = s[:-4]
        try:
            d = dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
        except ValueError:
            return None
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.UTC)
    return d.astimezone(tz or dt.UTC).replace(microsecond=0).strftime("%Y-%m-%d %H:%M:%S %Z")


_MINUTE_UTC = re.compile(r"\b(\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})?) UTC\b")


def local_times(text: str, tz: dt.tzinfo | None) -> str:
    """``text`` (a refusal: "Submit again after 2026-12-02 14:05 UTC") with its UTC times
    written by :func:`when` in ``tz``."""
    if not text:
        return text
    return _MINUTE_UTC.sub(lambda m: when(m.group(1), tz) or m.group(0), text)


def first_line(text, cap: int = LINE) -> str | None:
    """The first non-empty line of an error (at most ``cap`` characters): what a student reads."""
    if text is None:
        return None
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    if not lines:
        return ""
    line = lines[0]
    return line if len(line) <= cap else line[:cap - 1].rstrip() + "…"


# -------------------------------------------------------------------- exercises
def exercise_of(grade_id: str) -> str:
    m = EXERCISE.search(grade_id)
    if m:
        return m.group(1)
    return grade_id.removeprefix("test_")


def exercise_number(exercise: str) -> str | None:
    """``ex71A`` -> ``7.1.A`` (the numbering of the notebooks' headings), else None."""
    m = NUMBERED.match(exercise)
    if not m:
        return None
    major, minor, b, letter = m.groups()
    return f"{major}.{minor}{b}.{letter}" if major else letter


def _headings(source: str) -> list[str]:
    out, fence = [], False
    for line in source.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        m = None if fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            out.append(m.group(1))
    return out


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("_", " ")).strip()


def titles(notebooks: list[Path]) -> dict:
    """What the pages call exercises and graded cells, from the assignment's notebooks (the
    released ones: headings and the signatures of answer cells, no solution, no hidden test):
    ``{"exercises": {"ex71A": "Exercise 7.1.A — Linear models see two moments"}, "cells":
    {"<notebook>/<grade_id>": "7.1.A — linear flow"}}`` (graded and answer cells). A test cell
    ``test_ex71A_flow`` and its answer cell ``ex71A_flow`` take the function the answer cell
    defines (``linear_flow``), else the name's tail (``flow``); a written answer
    ``ex71A_2_answer`` is ``7.1.A.2``."""
    exercises: dict[str, str] = {}
    cells: dict[str, str] = {}
    for path in sorted(notebooks):
        try:
            nb = json.loads(Path(path).read_text())
        except (OSError, ValueError):
            continue
        heading = None
        graded: list[tuple[str, str]] = []
        defs: dict[str, list[str]] = {}
        for c in nb.get("cells", []):
            src = c.get("source", "")
            src = "".join(src) if isinstance(src, list) else str(src)
            if c.get("cell_type") == "markdown":
                for h in _headings(src):
                    if re.match(r"^(?:Exercise|Demo)\s", h):
                        heading = h
            meta = (c.get("metadata") or {}).get("nbgrader") or {}
            gid = meta.get("grade_id")
            if not gid:
                continue
            ex = exercise_of(gid)
            number = exercise_number(ex)
            if number and ex not in exercises:
                exercises[ex] = heading if heading and re.match(
                    rf"^(?:Exercise|Demo)\s+{re.escape(number)}\b", heading) else f"Exercise {number}"
            if c.get("cell_type") == "code" and meta.get("solution"):
                given = strip_markers(src, *SOLUTION_DELIMITERS, keep=False)  # never a name from a solution
                defs[gid] = re.findall(r"^(?:def|class)\s+(\w+)", given, re.M)
            if meta.get("grade") or meta.get("solution"):
                graded.append((gid, c.get("cell_type", "")))
        for gid, _kind in graded:
            ex = exercise_of(gid)
            number = exercise_number(ex) or ex
            tail = re.sub(rf"^(?:tests?_)?(?:.*_)?{re.escape(ex)}_?", "", gid)
            part = re.match(r"^q?(\d+)_(?:answer|derivation)$", tail)
            if part:
                label = f"{number}.{part.group(1)}"
            else:
                names = defs.get(gid.removeprefix("test_").removeprefix("tests_")) or []
                what = _words(names[0]) if names else _words(re.sub(r"_?answer$", "", tail))
                label = f"{number} — {what}" if what else number
            cells[f"{Path(path).stem}/{gid}"] = label
    return {"exercises": exercises, "cells": cells}


# ------------------------------------------------------------------------- view
def mistake_of(c: dict) -> dict | None:
    """The known mistake a failed cell of a result looks like, ``{"name", "hint"}``: the cell's
    ``mistake``, else the hint the test runner appended to its message (``This looks like a known
    mistake: <hint>``; its name is then the hint). None for a cell that passed or has none."""
    if c.get("passed") is not False:
        return None
    m = c.get("mistake")
    if isinstance(m, dict) and m.get("hint"):
        return {"name": str(m.get("name") or m["hint"]), "hint": str(m["hint"])}
    found = KNOWN.search(str(c.get("message") or ""))
    if found:
        hint = " ".join(found.group(0).split()).removeprefix(MISTAKE_LEAD).strip()
        if hint:
            return {"name": hint, "hint": hint}
    return None


def _lines(value) -> list[str]:
    if not value:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def view(result: dict, pol: AssignmentPolicy, deadline: dt.datetime | None = None, now: float | None = None,
         instructor: bool = False, names: dict | None = None) -> dict:
    """What the viewer may see of a grading ``result`` (worker.py's format).

    Returns ``{"after_deadline", "deadline", "deadline_known", "full", "mode", "score",
    "max_score", "auto_max", "withheld", "manual", "notices", "reused", "exercises": [{"name",
    "title", "points", "max_points", "manual", "withheld", "cells": [...]}], "errors"}``; a cell
    is ``{"notebook", "grade_id", "label", "kind", "max_points", "points" (None: withheld),
    "visible": {"status"}, "hidden": {"status"} | None, "message" (None: none or withheld),
    "mistake" ({"name", "hint"}, withheld with the message), "cause" ({"cell", "label", "kind",
    "message"}: the answer cell the failure comes from), "reused", "same_as", "same_count"}``;
    statuses ``passed``, ``failed``, ``not run``, ``unknown``, ``withheld``. ``names``: what
    :func:`titles` returns (exercise titles and cell labels). A student's messages are one line
    each (:func:`first_line`); a message repeated on several cells is kept on the first one
    (``same_count``: how many more), the others point to it (``same_as``)."""
    now = time.time() if now is None else now
    names = names or {}
    deadline = pol.deadline or deadline
    after = deadline is not None and now >= deadline.timestamp()
    full = instructor or after
    mode = pol.hidden_before_deadline
    short = (lambda s: s) if instructor else first_line
    exercises: dict[str, dict] = {}
    score = withheld = manual = 0.0
    for c in result.get("cells", []):
        gid = c["grade_id"]
        label = (names.get("cells") or {}).get(f"{c['notebook']}/{gid}") or gid
        cell = {"notebook": c["notebook"], "grade_id": gid, "label": label, "kind": c["kind"],
                "max_points": c["max_points"], "points": c.get("points"), "message": None, "mistake": None,
                "cause": None, "reused": bool(c.get("reused")), "visible": None, "hidden": None,
                "same_as": None, "same_count": 0}
        shown = False  # the message (and a known mistake) may be read
        if c["kind"] != "test":  # graded by hand
            cell["points"] = None
            manual += c["max_points"]
        else:
            passed, part = c.get("passed"), c.get("failed_part")
            vis = "passed" if passed or part == "hidden" else ("failed" if part == "visible" else "unknown")
            hid = None
            if c.get("has_hidden"):
                hid = "passed" if passed else {"hidden": "failed", "visible": "not run"}.get(part, "unknown")
            cell["visible"] = {"status": vis}
            if full or not c.get("has_hidden"):
                cell["hidden"] = {"status": hid} if hid else None
                shown = True
            else:
                if part == "visible":
                    cell["hidden"] = {"status": hid}
                    shown = True
                elif mode == "passfail":
                    cell["hidden"] = {"status": hid}
                else:
                    cell["hidden"] = {"status": "withheld"}
                    cell["visible"] = {"status": "withheld" if vis == "unknown" else vis}
                    cell["points"] = None
            if shown:
                m = mistake_of(c)
                if m:  # the runner appends the hint to the message: shown once, on its own
                    cell["mistake"] = {"name": m["name"], "hint": short(m["hint"])}
                msg = c.get("message")
                cell["message"] = short(KNOWN.sub("", str(msg)) or msg if m and msg else msg)
            if not passed and "withheld" not in (cell["visible"]["status"], (cell["hidden"] or {}).get("status")):
                cell["cause"] = _cause_view(c, names, short)
            if cell["points"] is None:
                withheld += c["max_points"]
            else:
                score += cell["points"]
        ex_id = exercise_of(gid)
        ex = exercises.setdefault(ex_id, {"name": ex_id, "title": (names.get("exercises") or {}).get(ex_id) or ex_id,
                                          "points": 0.0, "max_points": 0.0, "cells": [], "withheld": False,
                                          "manual": 0.0})
        ex["cells"].append(cell)
        ex["max_points"] += c["max_points"]
        if c["kind"] != "test":
            ex["manual"] += c["max_points"]
        elif cell["points"] is None:
            ex["withheld"] = True
        else:
            ex["points"] += cell["points"]
    _fold(exercises.values())
    reused = {str(nb): info.get("reused_from") for nb, info in (result.get("notebooks") or {}).items()
              if isinstance(info, dict) and info.get("reused_from") is not None}
    max_score = result.get("max_score", 0.0) or 0.0
    return {"after_deadline": after, "deadline": deadline.isoformat() if deadline else None,
            "deadline_known": deadline is not None, "full": full, "mode": mode, "score": score,
            "max_score": max_score, "auto_max": max(0.0, max_score - manual), "withheld": withheld,
            "manual": manual, "notices": [short(n) for n in _lines(result.get("notice"))], "reused": reused,
            "exercises": list(exercises.values()), "errors": [short(e) for e in _lines(result.get("errors"))]}


def _cause_view(c: dict, names: dict, short) -> dict | None:
    """The answer cell a failed test cell's failure comes from, as the viewer reads it (its label
    in place of its id), or None."""
    cause = c.get("cause")
    if not isinstance(cause, dict):
        return None
    where = str(cause.get("cell") or "")
    named = (names.get("cells") or {}).get(f"{c['notebook']}/{where}") or where
    text = short(cause.get("message"))
    return {"cell": where, "kind": str(cause.get("kind") or "error"), "label": named,
            "message": text.replace(where, named) if text and where else text}


def _fold(exercises) -> None:
    """The same failure on several cells (one NotImplementedError, a missing notebook): its
    message is shown on the first cell, which counts the others (``same_count``); the others
    name it (``same_as``: its notebook, grade_id and label) and the pages show only that."""
    first: dict[tuple, dict] = {}
    for ex in exercises:
        for cell in ex["cells"]:
            cause = cell["cause"] or {}
            if not cell["message"] and not cause.get("message"):
                continue
            key = (cell["message"], cause.get("cell"), cause.get("message"), (cell["mistake"] or {}).get("name"))
            if key not in first:
                first[key] = cell
                continue
            head = first[key]
            head["same_count"] += 1
            cell["same_as"] = {"notebook": head["notebook"], "grade_id": head["grade_id"], "label": head["label"]}
