"""The durable queue of submissions: one sqlite file in the service's state folder.

Every submission the watcher notices becomes one row, keyed by (student, assignment,
timestamp): noticing it again changes nothing. Its state moves

    queued -> grading -> graded            (or failed, after ``retries`` grading errors)
    refused                                (rate limit, live grading off, unknown assignment)

The rate limit is decided when the row is written, in the same transaction, so a restart or
a second scan cannot change it: a submission is refused when the student already has
``limit`` accepted submissions of that assignment whose timestamps fall in the hour before
its own. Rows left ``grading`` by a crash go back to ``queued`` on start (:meth:`Queue.recover`),
and the rows being graded when the service stops (SIGTERM) go back at once
(:meth:`Queue.release`): neither uses one of the row's attempts, which only a grading error of
the submission itself does (:meth:`Queue.fail`). :meth:`Queue.finish` records a result only
for a row still ``grading``, so a submission is graded to completion exactly once (a grading
interrupted by a crash or a stop is redone).

Each row keeps the submission's own time (``submitted``: the exchange's record) and the time
its result was recorded (``finished``): :attr:`Row.latency` is what the student waited.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

STATES = ("queued", "grading", "graded", "refused", "failed")
HOUR = 3600.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    student TEXT NOT NULL,
    assignment TEXT NOT NULL,
    timestamp TEXT NOT NULL,         -- nbgrader's timestamp, as in the folder's name
    submitted REAL NOT NULL,         -- the same, in seconds since the epoch (UTC)
    inbound TEXT NOT NULL,           -- the folder's name in <exchange>/<course>/inbound/
    noticed REAL NOT NULL,           -- when the service saw it
    state TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0,
    started REAL,
    finished REAL,
    result TEXT,                     -- JSON (worker.py), for graded rows
    UNIQUE (student, assignment, timestamp)
);
CREATE INDEX IF NOT EXISTS by_student ON submissions (student, assignment, submitted);
CREATE INDEX IF NOT EXISTS by_state ON submissions (state, id);
"""


@dataclass(frozen=True)
class Arrival:
    """A submission seen in the exchange."""

    student: str
    assignment: str
    timestamp: str
    submitted: float  # seconds since the epoch
    inbound: str  # folder name


@dataclass
class Row:
    id: int
    student: str
    assignment: str
    timestamp: str
    submitted: float
    inbound: str
    noticed: float
    state: str
    reason: str
    attempts: int
    started: float | None
    finished: float | None
    result: dict | None = field(default=None)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.student, self.assignment, self.timestamp)

    @property
    def waited(self) -> float | None:
        """Seconds from the service noticing the submission to its grade being recorded."""
        return None if self.finished is None else round(self.finished - self.noticed, 2)

    @property
    def graded_at(self) -> float | None:
        """When the result was recorded (seconds since the epoch), None until then."""
        return self.finished if self.state == "graded" else None

    @property
    def latency(self) -> float | None:
        """Seconds from the submission's own time (the exchange's record, ``submitted``) to its
        result being recorded: what the student waited after *Submit*."""
        return None if self.graded_at is None else round(self.graded_at - self.submitted, 2)


def _row(r: sqlite3.Row) -> Row:
    d = dict(r)
    d["result"] = json.loads(d["result"]) if d["result"] else None
    return Row(**d)


def when(seconds: float) -> str:
    """A time for a student to read, rounded up to the minute (a limit that frees at 01:21:35
    reads 01:22, never a time at which it is still in force): ``2026-12-02 14:05 UTC``."""
    return dt.datetime.fromtimestamp(math.ceil(seconds / 60) * 60, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


class Queue:
    """The queue in ``path`` (created if missing). Each method opens its own connection, so one
    ``Queue`` serves several threads, and several processes may share the file."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, timeout=60)
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.executescript(SCHEMA)  # in a transaction of its own
        finally:
            con.close()

    @contextlib.contextmanager
    def _tx(self, write: bool = True) -> Iterator[sqlite3.Connection]:
        con = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        con.row_factory = sqlite3.Row
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=FULL")
            con.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
        finally:
            con.close()

    # ------------------------------------------------------------------ arrivals
    def add(self, arrivals: Iterable[Arrival], limit: Callable[[str], int | None],
            refuse: Callable[[Arrival], str | None] = lambda a: None, now: float | None = None) -> list[Row]:
        """Write the submissions not seen before, in order of timestamp, in one transaction;
        return the new rows. ``limit(assignment)``: accepted submissions per student and hour
        (None or 0: no limit). ``refuse(arrival)``: a reason to refuse it outright, or None."""
        now = time.time() if now is None else now
        new = []
        with self._tx() as con:
            for a in sorted(arrivals, key=lambda a: (a.submitted, a.timestamp, a.inbound)):
                if con.execute("SELECT 1 FROM submissions WHERE student=? AND assignment=? AND timestamp=?",
                               (a.student, a.assignment, a.timestamp)).fetchone():
                    continue
                state, reason = "queued", refuse(a) or ""
                if reason:
                    state = "refused"
                else:
                    n = limit(a.assignment)
                    if n:
                        before = [r[0] for r in con.execute(
                            "SELECT submitted FROM submissions WHERE student=? AND assignment=? AND state!='refused'"
                            " AND submitted>? AND submitted<=? ORDER BY submitted",
                            (a.student, a.assignment, a.submitted - HOUR, a.submitted))]
                        if len(before) >= n:
                            state = "refused"
                            reason = (f"{len(before)} of your submissions of {a.assignment} were accepted "
                                      f"in the hour before this one, and the limit is {n} per hour. Submit again "
                                      f"after {when(before[-n] + HOUR)}. This submission stays in the exchange: "
                                      f"the instructor's collection grades your latest one as usual.")
                cur = con.execute(
                    "INSERT INTO submissions (student, assignment, timestamp, submitted, inbound, noticed, state,"
                    " reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (a.student, a.assignment, a.timestamp, a.submitted, a.inbound, now, state, reason))
                new.append(cur.lastrowid)
            rows = [_row(con.execute("SELECT * FROM submissions WHERE id=?", (i,)).fetchone()) for i in new]
        return rows

    def known(self) -> set[str]:
        """The inbound folder names already in the queue."""
        with self._tx(write=False) as con:
            return {r[0] for r in con.execute("SELECT inbound FROM submissions")}

    # ------------------------------------------------------------------- grading
    def recover(self) -> int:
        """Rows left ``grading`` (the service died while grading them) back to ``queued``; the
        attempt the interrupted grading counted is given back (the service's fault, not the
        submission's)."""
        with self._tx() as con:
            return con.execute("UPDATE submissions SET state='queued', started=NULL, attempts=MAX(attempts-1, 0) "
                               "WHERE state='grading'").rowcount

    def release(self, row_id: int) -> bool:
        """A row being graded back to ``queued`` without using an attempt (the service stops while
        grading it); False if it was not ``grading``."""
        with self._tx() as con:
            return con.execute("UPDATE submissions SET state='queued', started=NULL, attempts=MAX(attempts-1, 0) "
                               "WHERE id=? AND state='grading'", (row_id,)).rowcount == 1

    def claim(self, n: int = 1) -> list[Row]:
        """Up to ``n`` queued rows, oldest first, of one assignment and distinct students, now ``grading``.
        A student's newer submission waits while an older one of the same assignment is queued or
        being graded (its notebooks may reuse that one's result)."""
        with self._tx() as con:
            busy = {(r[0], r[1]) for r in con.execute(
                "SELECT student, assignment FROM submissions WHERE state='grading'")}
            first = None
            for r in con.execute("SELECT * FROM submissions WHERE state='queued' ORDER BY submitted, id"):
                if (r["student"], r["assignment"]) not in busy:
                    first = r
                    break
            if first is None:
                return []
            picked, students = [], {s for s, a in busy if a == first["assignment"]}
            for r in con.execute("SELECT * FROM submissions WHERE state='queued' AND assignment=? "
                                 "ORDER BY submitted, id", (first["assignment"],)):
                if r["student"] in students:
                    continue
                students.add(r["student"])
                picked.append(r["id"])
                if len(picked) >= n:
                    break
            now = time.time()
            con.executemany("UPDATE submissions SET state='grading', started=?, attempts=attempts+1 WHERE id=?",
                            [(now, i) for i in picked])
            return [_row(con.execute("SELECT * FROM submissions WHERE id=?", (i,)).fetchone()) for i in picked]

    def finish(self, row_id: int, result: dict) -> bool:
        """Record the grade of a row being graded; False (and nothing written) if it is not ``grading``."""
        with self._tx() as con:
            return con.execute("UPDATE submissions SET state='graded', finished=?, result=?, reason='' "
                               "WHERE id=? AND state='grading'",
                               (time.time(), json.dumps(result), row_id)).rowcount == 1

    def fail(self, row_id: int, reason: str, retries: int = 2) -> str:
        """A grading error: back to ``queued`` while the row has had at most ``retries`` attempts
        after the first, else ``failed`` with the reason. Returns the new state."""
        with self._tx() as con:
            r = con.execute("SELECT attempts, state FROM submissions WHERE id=?", (row_id,)).fetchone()
            if r is None or r["state"] != "grading":
                return r["state"] if r else "missing"
            state = "queued" if r["attempts"] <= retries else "failed"
            # queued again: no reason for the student to read (the service's log has it)
            con.execute("UPDATE submissions SET state=?, reason=?, started=NULL, finished=? WHERE id=?",
                        (state, reason if state == "failed" else "", time.time() if state == "failed" else None,
                         row_id))
            return state

    # ------------------------------------------------------------------- reading
    def rows(self, student: str | None = None, assignment: str | None = None) -> list[Row]:
        """Rows, newest first (one student's, one assignment's, or all)."""
        q, args = "SELECT * FROM submissions WHERE 1=1", []
        if student is not None:
            q, args = q + " AND student=?", [*args, student]
        if assignment is not None:
            q, args = q + " AND assignment=?", [*args, assignment]
        with self._tx(write=False) as con:
            return [_row(r) for r in con.execute(q + " ORDER BY submitted DESC, id DESC", args)]

    def last_graded(self, student: str, assignment: str, before: int | None = None) -> Row | None:
        """The student's latest graded row of the assignment (other than row ``before``, and not
        submitted after it): the result a new submission's unchanged notebooks may reuse."""
        q = "SELECT * FROM submissions WHERE student=? AND assignment=? AND state='graded'"
        args: list = [student, assignment]
        if before is not None:
            q += " AND id!=? AND submitted<=(SELECT submitted FROM submissions WHERE id=?)"
            args += [before, before]
        with self._tx(write=False) as con:
            r = con.execute(q + " ORDER BY submitted DESC, id DESC LIMIT 1", args).fetchone()
            return _row(r) if r else None

    def get(self, row_id: int) -> Row | None:
        with self._tx(write=False) as con:
            r = con.execute("SELECT * FROM submissions WHERE id=?", (row_id,)).fetchone()
            return _row(r) if r else None

    def counts(self) -> dict[str, int]:
        with self._tx(write=False) as con:
            got = dict(con.execute("SELECT state, COUNT(*) FROM submissions GROUP BY state").fetchall())
        return {s: got.get(s, 0) for s in STATES}

    def pending(self) -> int:
        """Rows still to grade (queued or grading)."""
        c = self.counts()
        return c["queued"] + c["grading"]

    def table(self) -> list[tuple]:
        """(student, assignment, timestamp, state, reason, score) for every row, sorted: what two
        runs over the same submissions must agree on."""
        return sorted((r.student, r.assignment, r.timestamp, r.state, r.reason,
                       (r.result or {}).get("score")) for r in self.rows())
