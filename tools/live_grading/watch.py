"""Noticing submissions: a poll of the nbgrader exchange's inbound folder.

``nbgrader submit`` copies the student's notebooks to
``<exchange>/<course_id>/inbound/<student>+<assignment>+<timestamp>+<random>/``, then writes
``timestamp.txt`` and, last, ``submission_secret.txt``. A folder counts as arrived when that
last file is there, or when ``timestamp.txt`` is and nothing in the folder changed for
``settle`` seconds (an exchange written by an older nbgrader). Names are split as nbgrader's
own collect does (``rsplit('+', 3)``: a student id may hold a ``+``), timestamps parsed by
``nbgrader.utils.parse_utc``.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from pathlib import Path

from tools.live_grading.queue import Arrival, Queue, Row

log = logging.getLogger("tools.live_grading")
#: a student or assignment id the service accepts (hub user names, nbgrader assignment names)
NAME = re.compile(r"^[A-Za-z0-9_@][A-Za-z0-9_.@+\-]*$")


def parse_name(name: str) -> tuple[str, str, str] | None:
    """(student, assignment, timestamp) of an inbound folder name, or None if it is not one."""
    parts = name.rsplit("+", 3)  # <student>+<assignment>+<timestamp>[+<random>], as nbgrader's collect
    if len(parts) < 3 or not all(NAME.match(x) for x in parts[:2]) or not parts[2]:
        return None  # also a name that would climb out of submitted/ ("..", a leading dot)
    return parts[0], parts[1], parts[2]


def seconds(timestamp: str) -> float | None:
    """nbgrader's timestamp (``2026-12-02 10:15:03.123456 UTC``) in seconds since the epoch."""
    from nbgrader.utils import parse_utc

    try:
        return parse_utc(timestamp).timestamp()
    except Exception:
        return None


def complete(folder: Path, settle: float, now: float) -> bool:
    """Whether ``nbgrader submit`` has finished writing ``folder``."""
    if (folder / "submission_secret.txt").exists():
        return True
    if not (folder / "timestamp.txt").exists():
        return False
    newest = max((p.stat().st_mtime for p in folder.rglob("*")), default=0.0)
    return now - newest >= settle


def scan(inbound: Path, known: set[str], settle: float = 2.0, now: float | None = None) -> list[Arrival]:
    """The complete submissions in ``inbound`` whose folder names are not in ``known``."""
    now = time.time() if now is None else now
    out = []
    try:
        entries = sorted(inbound.iterdir())
    except FileNotFoundError:
        return out
    for p in entries:
        if p.name in known or not p.is_dir():
            continue
        parsed = parse_name(p.name)
        if parsed is None:
            continue
        student, assignment, stamp = parsed
        if not complete(p, settle, now):
            continue
        t = seconds(stamp)
        if t is None:
            log.warning("inbound folder %s: unreadable timestamp %r, left alone", p.name, stamp)
            continue
        out.append(Arrival(student, assignment, stamp, min(t, now), p.name))
    return out


class Watcher:
    """Poll ``<exchange>/<course_id>/inbound`` and put what arrives into the queue."""

    def __init__(self, queue: Queue, inbound: Path, limit: Callable[[str], int | None],
                 refuse: Callable[[Arrival], str | None] = lambda a: None, settle: float = 2.0):
        self.queue, self.inbound, self.limit, self.refuse, self.settle = queue, Path(inbound), limit, refuse, settle
        self.known = queue.known()

    def poll(self) -> list[Row]:
        """One scan; the new rows (queued or refused)."""
        arrivals = scan(self.inbound, self.known, self.settle)
        if not arrivals:
            return []
        rows = self.queue.add(arrivals, self.limit, self.refuse)
        self.known.update(a.inbound for a in arrivals)
        for r in rows:
            log.info("noticed %s %s %s: %s%s", r.student, r.assignment, r.timestamp, r.state,
                     f" ({r.reason})" if r.reason else "")
        return rows
