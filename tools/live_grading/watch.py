"""Noticing submissions: a poll of the nbgrader exchange's inbound folder.

``nbgrader submit`` copies the student's notebooks to
``<exchange>/<course_id>/inbound/<student>+<assignment>+<timestamp>+<random>/``, then writes
``timestamp.txt`` and, last, ``submission_secret.txt``. A folder counts as arrived when that
last file is there, or when ``timestamp.txt`` is and nothing in the folder changed for
``settle`` seconds (an exchange written by an older nbgrader). Names are split as nbgrader's
own collect does (``rsplit('+', 3)``: a student id may hold a ``+``), timestamps parsed by
``nbgrader.utils.parse_utc``.

The folders are students' data: nothing in them is followed (``os.lstat``,
``tools.grading.safe_files.walk``). An inbound entry that is a symbolic link is no submission; a folder
holding a dangling link or a link to anything is queued as any other (the worker refuses the
link); a folder that cannot be read is left out of this scan with a warning naming it (once),
and every other folder is still queued.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import time
from collections.abc import Callable
from pathlib import Path

from tools.grading import safe_files
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


def _lexists(path: Path) -> bool:
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    return True


def complete(folder: Path, settle: float, now: float) -> bool:
    """Whether ``nbgrader submit`` has finished writing ``folder`` (no link in it followed: a
    dangling one counts as written). ``OSError`` if part of it cannot be read."""
    if _lexists(folder / "submission_secret.txt"):
        return True
    if not _lexists(folder / "timestamp.txt"):
        return False
    newest = max((st.st_mtime for _, st in safe_files.walk(folder)), default=0.0)
    return now - newest >= settle


_warned: set[str] = set()


def _warn_once(path: Path, msg: str, *args) -> None:
    """Log a warning about the inbound folder at ``path`` once per process (a poll every few seconds)."""
    if str(path) not in _warned:
        _warned.add(str(path))
        log.warning("inbound folder %s: " + msg, path.name, *args)


def scan(inbound: Path, known: set[str], settle: float = 2.0, now: float | None = None) -> list[Arrival]:
    """The complete submissions in ``inbound`` whose folder names are not in ``known``. One bad
    folder (a link, unreadable) is left out with a warning; it never makes the scan fail."""
    now = time.time() if now is None else now
    out = []
    try:
        entries = sorted(inbound.iterdir())
    except FileNotFoundError:
        return out
    for p in entries:
        if p.name in known:
            continue
        parsed = parse_name(p.name)
        try:
            mode = os.lstat(p).st_mode
        except OSError:
            continue  # gone since the listing
        if not stat.S_ISDIR(mode):
            if parsed is not None and stat.S_ISLNK(mode):
                _warn_once(p, "a symbolic link, not a folder: not a submission, left alone")
            continue
        if parsed is None:
            continue
        student, assignment, stamp = parsed
        try:
            if not complete(p, settle, now):
                continue
        except OSError as e:
            _warn_once(p, "cannot be read (%s), left alone", e)
            continue
        t = seconds(stamp)
        if t is None:
            _warn_once(p, "unreadable timestamp %r, left alone", stamp)
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
