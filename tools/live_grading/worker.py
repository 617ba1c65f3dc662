"""Grading the queue: the course's grader (``tools.grade``) on one submission after another.

:class:`Worker` claims queued rows, calls a *grading function* ``grade(rows) -> {row id:
result}`` and records each result (:meth:`Queue.finish`) or the error (:meth:`Queue.fail`: the
row is retried, then ``failed``). The default grading function is :class:`CourseGrader`; tests
pass their own (``--grader module:function``).

:class:`CourseGrader` keeps one nbgrader course per assignment in the service's state folder
(``<state>/courses/<assignment>/``: the course's configuration, links to its ``source/`` and
``release/``, a gradebook holding the assignment and the students graded live), copies each
submission from the exchange into its ``submitted/<student>/<assignment>/`` as ``nbgrader
collect`` would, and runs ``tools.grade.grade`` on it: sandboxed kernels (``--no-sandbox``:
trusted work only), test cells in the test runner, on the service's Dask client (a
``LocalCluster`` started once, or the instructor's scheduler). The instructor's own
``course/gradebook.db`` is never written: the official grades still come from collect and
``make grade``. The result of a row: total and per graded cell (points, pass/fail, which part
of a test cell failed, from the failing line the test runner reports, and the message).

A submission is taken as data (``tools.safe_files``): regular files only, no symbolic link
followed, sizes capped. Each file not taken is named in the row's result, ``refused`` (a list
of ``{"path", "reason"}``) and, for the student's page, one line of ``errors`` (shown as the
grader's notes), and logged for the instructor.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import shutil
import stat
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from tools import safe_files
from tools.live_grading.policy import hidden_lines
from tools.live_grading.queue import Queue, Row

log = logging.getLogger("tools.live_grading")
GradeFn = Callable[[list[Row]], dict[int, dict]]
#: left out of a submission silently, as ``nbgrader collect`` does
SKIP = (".ipynb_checkpoints", "submission_secret.txt")
#: refused files named one by one on the student's page (all of them in the result's "refused")
NOTES = 20


def load_grader(spec: str) -> GradeFn:
    """``module:function`` -> the function."""
    mod, _, fn = spec.partition(":")
    if not mod or not fn:
        raise ValueError(f"--grader wants module:function, not {spec!r}")
    return getattr(importlib.import_module(mod), fn)


class Worker:
    """Claim, grade, record; ``batch`` submissions (distinct students) per grading call."""

    def __init__(self, queue: Queue, grade: GradeFn, batch: int = 1, retries: int = 2):
        self.queue, self.grade, self.batch, self.retries = queue, grade, batch, retries

    def run_once(self) -> int:
        """Grade one batch; the number of rows it claimed (0: the queue is empty)."""
        rows = self.queue.claim(self.batch)
        if not rows:
            return 0
        t0 = time.monotonic()
        try:
            results = self.grade(rows)
        except (Exception, SystemExit) as e:  # the whole call failed (tools.grade exits on a bad course): retried
            log.exception("grading %s failed", [r.key for r in rows])
            results = {r.id: {"error": f"{type(e).__name__}: {e}"} for r in rows}
        for r in rows:
            res = results.get(r.id) or {"error": "the grader returned no result"}
            if res.get("error"):
                state = self.queue.fail(r.id, f"grading failed: {res['error']}", self.retries)
                log.warning("%s %s %s: grading failed (%s), now %s", *r.key, res["error"], state)
            else:
                self.queue.finish(r.id, res)
                log.info("graded %s %s %s: %s/%s in %.1f s", *r.key, res.get("score"), res.get("max_score"),
                         time.monotonic() - t0)
        return len(rows)

    def run(self, stop: threading.Event, idle: float = 0.5) -> None:
        while not stop.is_set():
            if not self.run_once():
                stop.wait(idle)


# ------------------------------------------------------------------ the real grader
class CourseGrader:
    """Grade rows with ``tools.grade`` in the service's per-assignment courses."""

    def __init__(self, course: Path, inbound: Path, state: Path, sandbox: bool = True, workers: int | None = None,
                 scheduler: str | None = None, limits: dict | None = None,
                 file_limits: safe_files.Limits = safe_files.LIMITS):
        self.course, self.inbound, self.state = Path(course).resolve(), Path(inbound), Path(state)
        self.sandbox, self.workers, self.scheduler, self.limits = sandbox, workers, scheduler, limits or {}
        self.file_limits = file_limits
        self._client = None
        self._cluster = None
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- Dask
    def client(self):
        """The service's Dask client, started once (a LocalCluster unless a scheduler is given)."""
        with self._lock:
            if self._client is None:
                from distributed import Client, LocalCluster

                if self.scheduler:
                    self._client = Client(self.scheduler)
                else:
                    n = self.workers or max(1, os.cpu_count() or 1)
                    self._cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                                 dashboard_address=":0", silence_logs=logging.ERROR)
                    self._client = Client(self._cluster)
                log.info("grading on %s", self._client)
            return self._client

    def close(self) -> None:
        with self._lock:
            for x in (self._client, self._cluster):
                if x is not None:
                    try:
                        x.close()
                    except Exception:  # noqa: BLE001 - closing on the way out
                        log.exception("closing %s", x)
            self._client = self._cluster = None

    # ------------------------------------------------------------- courses
    def fingerprint(self, assignment: str) -> str:
        """A hash of the assignment's source notebooks: it changes when the instructor edits and
        generates the assignment again."""
        import hashlib

        h = hashlib.sha256()
        for nb in sorted((self.course / "source" / assignment).glob("*.ipynb")):
            h.update(nb.name.encode() + b"\0" + nb.read_bytes())
        return h.hexdigest()

    def course_for(self, assignment: str) -> Path:
        """``<state>/courses/<assignment>/``, made on first use from the course's gradebook, and
        made again (the old one kept as ``<assignment>.<time>``) when the assignment's source changed."""
        from tools import grade

        root = self.state / "courses" / assignment
        sha = self.fingerprint(assignment)
        if (root / "gradebook.db").exists():
            if (root / "source.sha256").exists() and (root / "source.sha256").read_text() == sha:
                return root
            old = root.with_name(f"{assignment}.{time.strftime('%Y%m%d-%H%M%S')}")
            log.warning("the source of %s changed: a fresh course for it (the old one: %s)", assignment, old)
            root.rename(old)
        tmp = root.with_name(f".{assignment}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        (tmp / "nbgrader_config.py").write_text(
            "c = get_config()  # noqa: F821  (written by tools.live_grading: the course's own config)\n"
            f"load_subconfig({str(self.course / 'nbgrader_config.py')!r})  # noqa: F821\n"
            f"c.CourseDirectory.root = {str(root)!r}\n")
        for sub in ("source", "release"):
            if (self.course / sub).exists():
                (tmp / sub).symlink_to(self.course / sub)
        (tmp / "gradebook.db").write_bytes(grade.gradebook_snapshot(self.course, assignment))
        (tmp / "source.sha256").write_text(sha)
        shutil.rmtree(root, ignore_errors=True)
        tmp.rename(root)
        return root

    def place(self, row: Row, course: Path) -> list[safe_files.Refusal]:
        """Copy the submission from the exchange to ``submitted/<student>/<assignment>/`` (as collect),
        as data: regular files only, no link followed, within ``file_limits``; the files not taken.

        Raises ``OSError`` when the inbound folder is gone or is not a folder (a symbolic link)."""
        src = self.inbound / row.inbound
        try:
            st = os.lstat(src)
        except FileNotFoundError:
            raise FileNotFoundError(f"{row.inbound} is no longer in the exchange") from None
        if not stat.S_ISDIR(st.st_mode):
            raise NotADirectoryError(f"{row.inbound} in the exchange is not a folder (a symbolic link?): not graded")
        dest = course / "submitted" / row.student / row.assignment
        shutil.rmtree(dest, ignore_errors=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        refused = safe_files.copy_tree(src, dest, self.file_limits, skip=SKIP)
        if refused:
            log.warning("%s %s %s: %d file(s) of %s not taken for grading: %s", row.student, row.assignment,
                        row.timestamp, len(refused), row.inbound, "; ".join(map(str, refused)))
        return refused

    def __call__(self, rows: list[Row]) -> dict[int, dict]:
        from tools import grade

        out: dict[int, dict] = {}
        for assignment in sorted({r.assignment for r in rows}):
            mine = [r for r in rows if r.assignment == assignment]
            course = self.course_for(assignment)
            todo = []
            refused: dict[int, list[safe_files.Refusal]] = {}
            for r in mine:
                try:
                    refused[r.id] = self.place(r, course)
                    todo.append(r)
                except OSError as e:
                    out[r.id] = {"error": str(e)}
            if not todo:
                continue
            records = grade.grade(assignment, course, client=self.client(), students=[r.student for r in todo],
                                  force=True, sandbox=self.sandbox, limits=self.limits, progress=False,
                                  echo=log.info)
            for r in todo:
                rec = records.get(r.student)
                if rec is None or rec.get("score") is None:
                    why = "; ".join(e.splitlines()[0] for e in (rec or {}).get("errors") or []) or "not graded"
                    out[r.id] = {"error": why}
                else:
                    out[r.id] = note_refusals(result(course, assignment, r.student, rec), refused.get(r.id, []))
        return out


def note_refusals(res: dict, refused: list[safe_files.Refusal]) -> dict:
    """``res`` with the files not taken from the submission: ``refused`` (``[{"path", "reason"}]``)
    and one line each (the first :data:`NOTES`) in front of ``errors``, which the student's
    feedback page shows."""
    res["refused"] = [r.as_dict() for r in refused]
    notes = [f"{r.path}: not graded, {r.reason}" for r in refused[:NOTES]]
    if len(refused) > NOTES:
        notes.append(f"... and {len(refused) - NOTES} more files not graded")
    res["errors"] = notes + list(res.get("errors") or [])
    return res


def result(course: Path, assignment: str, student: str, rec: dict) -> dict:
    """A row's result from the gradebook and the autograded notebooks of ``course``."""
    import nbformat
    from nbgrader.api import Gradebook

    failed_lines = rec.get("failed_lines") or {}
    cells = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            sub = gb.find_submission(assignment, student)
            score, max_score = float(sub.score), float(sub.max_score)
            grades = {(nb.name, g.name): g for nb in sub.notebooks for g in nb.grades}
            order = [(nb.name, gc.name, gc.cell_type, float(gc.max_score))
                     for nb in gb.find_assignment(assignment).notebooks for gc in nb.grade_cells]
            points = {k: (None if g.score is None else float(g.score)) for k, g in grades.items()}
            manual = {k: bool(g.needs_manual_grade) for k, g in grades.items()}
    executed: dict[tuple[str, str], dict] = {}
    for nb_path in sorted((course / "autograded" / student / assignment).glob("*.ipynb")):
        try:
            nb = nbformat.read(str(nb_path), as_version=4)
        except Exception:  # noqa: BLE001 - an unreadable result: the gradebook still has the points
            continue
        for c in nb.cells:
            meta = c.get("metadata", {}).get("nbgrader", {})
            if c.cell_type == "code" and meta.get("grade"):
                executed[(nb_path.stem, meta.get("grade_id", ""))] = c
    for nb, gid, cell_type, max_points in order:
        c = executed.get((nb, gid))
        is_test = cell_type == "code" and not manual.get((nb, gid), False)
        entry = {"notebook": nb, "grade_id": gid, "kind": "test" if is_test else "manual",
                 "max_points": max_points, "points": points.get((nb, gid)), "has_hidden": False,
                 "passed": None, "failed_part": None, "message": None}
        if is_test and c is not None:
            hidden = hidden_lines(c.source)
            entry["has_hidden"] = bool(hidden)
            errors = [o for o in c.get("outputs", []) if o.get("output_type") == "error"]
            entry["passed"] = not errors
            if errors:
                e = errors[-1]
                entry["message"] = f"{e.get('ename', 'Error')}: {e.get('evalue', '')}".rstrip(": ")
                line = failed_lines.get(f"{nb}.ipynb", {}).get(gid) or failed_lines.get(nb, {}).get(gid)
                if not hidden:
                    entry["failed_part"] = "visible"
                elif line:
                    entry["failed_part"] = "hidden" if line in hidden else "visible"
                else:
                    entry["failed_part"] = "unknown"
        elif is_test:  # the notebook is missing or unreadable: scored 0 by nbgrader
            entry.update(passed=False, failed_part="visible", message="the notebook was not graded (missing?)")
        cells.append(entry)
    errors = [e.splitlines()[0] for e in rec.get("errors") or []]
    return {"score": score, "max_score": max_score, "seconds": rec.get("seconds"), "cells": cells,
            "errors": errors, "flags": rec.get("flags") or {}, "timestamp": rec.get("timestamp"),
            "graded_at": time.time(), "record": json.loads(json.dumps({k: rec.get(k) for k in ("timing", "host")}))}
