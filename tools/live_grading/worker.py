"""Grading the queue: the course's grader (``tools.grading.grade``), each submission on its own.

:class:`Worker` runs ``slots`` gradings at once, each in a thread of its own: a thread claims
one queued row, calls a *grading function* ``grade([row]) -> {row id: result}`` and records
the result the moment it is there (:meth:`Queue.finish`) or the error (:meth:`Queue.fail`:
the row is retried, then ``failed``). A submission that hangs holds its own slot and nobody
else's result. When the service stops (SIGTERM), the rows being graded go back to the queue
without using an attempt (:meth:`Worker.shutdown`, :meth:`Queue.release`). The default
grading function is :class:`CourseGrader`; tests pass their own (``--grader module:function``).

:class:`CourseGrader` keeps one nbgrader course per assignment in the service's state folder
(``<state>/courses/<assignment>/``: the course's configuration, links to its ``source/`` and
``release/``, a gradebook holding the assignment and the students graded live), copies each
submission from the exchange into its ``submitted/<student>/<assignment>/`` as ``nbgrader
collect`` would, and grades it with ``tools.grading.grade``'s task (``grade_notebook``: sandboxed
kernels, ``--no-sandbox`` for trusted work only; test cells in the test runner), **one Dask
task per notebook** on the service's Dask client (a ``LocalCluster`` started and warmed up
with the service, or the instructor's scheduler), each returning the notebook's
``GradingRecord``; ``tools.grading.grade``'s writer (``finish``) then merges the executed
notebooks into that course (nbgrader's own ``SaveAutoGrades``). The instructor's
``course/gradebook.db`` is never written: the official grades still come from collect and
``make grade``.

**Only what changed is graded**: a notebook whose bytes are those of the student's last graded
submission (and graded against the same source of the assignment) keeps that grading, its
executed notebook included; the result says so (``notebooks[<nb>]["reused_from"]``, the row
that graded it, and ``"reused": true`` on each of its cells).

The result of a row (:func:`result`): total and per graded cell (points, pass/fail, which part
of a test cell failed, from the failing line the test runner reports, the message, and the
``cause`` of a failure that comes from elsewhere: an answer cell that hit its time limit or
raised, a notebook that could not be read), ``notice`` (one line each, shown at the top of the
student's page), ``errors`` (one line each, never a traceback: those go to the service's log),
``notebooks`` (per notebook: content hash, when graded, reused from which row).

A submission is taken as data (``tools.grading.safe_files``): regular files only, no symbolic link
followed, sizes capped. Each file not taken is named in the row's result, ``refused`` (a list
of ``{"path", "reason"}``) and, for the student's page, one line of ``errors`` (shown as the
grader's notes), and logged for the instructor.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
import re
import shutil
import stat
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tools.grading import mistakes, safe_files
from tools.grading.record import GradingRecord
from tools.live_grading.policy import hidden_lines
from tools.live_grading.queue import Queue, Row

log = logging.getLogger("tools.live_grading")
GradeFn = Callable[[list[Row]], dict[int, dict]]
#: left out of a submission silently, as ``nbgrader collect`` does
SKIP = (".ipynb_checkpoints", "submission_secret.txt")
#: refused files named one by one on the student's page (all of them in the result's "refused")
NOTES = 20
#: error names of a cell the grader stopped: its time limit (nbgrader's error_on_timeout, the
#: interrupt it sends) or the notebook's budget (tools.grading.nbgrader_ext.BUDGET_ENAME)
TIME_LIMIT = ("CellTimeoutError", "KeyboardInterrupt", "GradingBudgetExceeded")


def load_grader(spec: str) -> GradeFn:
    """``module:function`` -> the function."""
    mod, _, fn = spec.partition(":")
    if not mod or not fn:
        raise ValueError(f"--grader wants module:function, not {spec!r}")
    return getattr(importlib.import_module(mod), fn)


def one_line(text: str, limit: int = 300) -> str:
    """The first line of ``text`` (a message, never a traceback), at most ``limit`` characters."""
    line = next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")
    line = re.sub(r"\s*Traceback \(most recent call last\):.*", "", line)
    return line if len(line) <= limit else line[: limit - 3] + "..."


class Worker:
    """Claim, grade, record: ``batch`` submissions at once (one per thread, each recorded the
    moment it is graded)."""

    def __init__(self, queue: Queue, grade: GradeFn, batch: int = 1, retries: int = 2):
        self.queue, self.grade, self.slots, self.retries = queue, grade, max(1, batch), retries
        self.stopping = False
        self._active: dict[int, Row] = {}
        self._lock = threading.Lock()

    def run_once(self) -> int:
        """Claim one queued row and grade it in this thread; the number of rows claimed (0: none)."""
        if self.stopping:
            return 0
        rows = self.queue.claim(1)
        for r in rows:
            self._grade(r)
        return len(rows)

    def _grade(self, r: Row) -> None:
        with self._lock:
            self._active[r.id] = r
        t0 = time.monotonic()
        try:
            res = self.grade([r]).get(r.id) or {"error": "the grader returned no result"}
        except (Exception, SystemExit) as e:  # the whole call failed (tools.grading.grade exits on a bad course)
            if self.stopping:  # cancelled by the stop: the row is queued again (shutdown)
                log.info("grading %s %s %s interrupted by the stop: queued again", *r.key)
                return
            log.exception("grading %s %s %s failed", *r.key)
            res = {"error": one_line(f"{type(e).__name__}: {e}")}
        finally:
            with self._lock:
                self._active.pop(r.id, None)
        if res.get("error"):
            if self.stopping:
                log.info("grading %s %s %s interrupted by the stop (%s): queued again", *r.key, res["error"])
                self.queue.release(r.id)
                return
            state = self.queue.fail(r.id, f"grading failed: {one_line(res['error'])}", self.retries)
            log.warning("%s %s %s: grading failed (%s), now %s", *r.key, res["error"], state)
        elif self.queue.finish(r.id, res):
            log.info("graded %s %s %s: %s/%s in %.1f s, %.1f s after the submission", *r.key, res.get("score"),
                     res.get("max_score"), time.monotonic() - t0, time.time() - r.submitted)

    def _slot(self, stop: threading.Event, idle: float) -> None:
        while not stop.is_set() and not self.stopping:
            try:
                if not self.run_once():
                    stop.wait(idle)
            except Exception:  # noqa: BLE001 - a bad row (or a busy database) must not end the slot
                log.exception("grading slot")
                stop.wait(idle)

    def run(self, stop: threading.Event, idle: float = 0.2) -> None:
        """``slots`` grading threads until ``stop`` is set."""
        threads = [threading.Thread(target=self._slot, args=(stop, idle), daemon=True, name=f"grade-{i}")
                   for i in range(self.slots)]
        for t in threads:
            t.start()
        stop.wait()

    def shutdown(self) -> list[int]:
        """The service stops: every row being graded goes back to ``queued`` without using an
        attempt (graded again at the next start); their ids."""
        self.stopping = True
        with self._lock:
            rows = list(self._active.values())
        back = [r.id for r in rows if self.queue.release(r.id)]
        for r in rows:
            if r.id in back:
                log.info("stopping: %s %s %s queued again (no attempt used)", *r.key)
        return back


# ------------------------------------------------------------------ reuse by content
def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def plan_reuse(previous: Row | None, hashes: dict[str, str], source: str,
               executed: Callable[[str], str | None]) -> dict[str, dict]:
    """The notebooks of a new submission that keep the grading of the student's last graded
    submission ``previous``: same bytes (``hashes``: notebook -> sha256 of the submitted file),
    graded against the same source of the assignment (``source``: its fingerprint), and that
    grading's executed notebook still there, unchanged (``executed(nb)``: the sha256 of the
    executed notebook in the service's course, or None). Returns notebook -> ``{"reused_from":
    the row that graded it, "graded_at", "sha256", "source", "executed_sha256"}``."""
    if previous is None or not previous.result:
        return {}
    out = {}
    for nb, info in (previous.result.get("notebooks") or {}).items():
        if not isinstance(info, dict) or not info.get("executed_sha256"):
            continue
        if info.get("sha256") != hashes.get(nb) or info.get("source") != source:
            continue
        if executed(nb) != info["executed_sha256"]:
            continue
        out[nb] = {"reused_from": info.get("reused_from") or previous.id, "graded_at": info.get("graded_at"),
                   "sha256": info["sha256"], "source": source, "executed_sha256": info["executed_sha256"],
                   **{k: info[k] for k in PER_NOTEBOOK if isinstance(info.get(k), dict)}}
    return out


#: what a grading record holds per notebook beyond the executed notebook (``tools.grading.grade``: the line
#: where each failing test cell stopped, the known mistake each recognised): kept with a notebook's
#: result, so that a reused notebook's cells read as they did when it was graded
PER_NOTEBOOK = ("failed_lines", "mistakes")

_MISSING = re.compile(r"^(?P<nb>.+)\.ipynb: missing from the submission$")

# ------------------------------------------------------------------ the real grader
def _quiet_worker() -> None:
    """In each Dask worker: no SQLAlchemy chatter from nbgrader's gradebook in the service's log."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from sqlalchemy.exc import SAWarning
    warnings.filterwarnings("ignore", category=SAWarning)
    for name in ("alembic", "traitlets", "nbgrader"):
        logging.getLogger(name).setLevel(logging.WARNING)


@dataclass
class Prepared:
    """What every grading of one assignment shares: the service's course, its config, the task's
    inputs on the cluster (``tools.grading.grade._shared_inputs``, scattered once), the source's fingerprint."""

    assignment: str
    course: Path
    cfg: object
    shared_f: object
    source: str
    notebooks: list[str]
    timeout: int | None
    lock: threading.Lock = field(default_factory=threading.Lock)


class CourseGrader:
    """Grade rows with ``tools.grading.grade``'s task in the service's per-assignment courses."""

    def __init__(self, course: Path, inbound: Path, state: Path, sandbox: bool = True, workers: int | None = None,
                 scheduler: str | None = None, limits: dict | None = None,
                 file_limits: safe_files.Limits = safe_files.LIMITS, queue: Queue | None = None):
        self.course, self.inbound, self.state = Path(course).resolve(), Path(inbound), Path(state)
        self.sandbox, self.workers, self.scheduler, self.limits = sandbox, workers, scheduler, limits or {}
        self.file_limits, self.queue = file_limits, queue
        self._client = None
        self._cluster = None
        self._lock = threading.Lock()
        self._prepared: dict[str, Prepared] = {}
        self._prep_lock = threading.Lock()
        self._warming: list = []  # the warm-up's futures, dropped when a submission comes
        self._writers: dict[str, threading.Lock] = {}  # assignment -> the lock of its course's writer

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
                try:
                    self._client.run(_quiet_worker)
                    from distributed.diagnostics.plugin import WorkerPlugin

                    class Quiet(WorkerPlugin):
                        name = "td-quiet"

                        def setup(self, worker):  # also a worker started later (one that died is replaced)
                            _quiet_worker()  # no import thread here: the grader is imported by the
                            # warm-up's tasks, one at a time (two threads importing it raced)

                    self._client.register_plugin(Quiet())
                except Exception:  # noqa: BLE001 - only the log's volume depends on it
                    log.debug("quieting the workers", exc_info=True)
                log.info("grading on %s", self._client)
            return self._client

    def close(self, timeout: float = 3) -> None:
        """Close the client and the local cluster, waiting at most about ``timeout`` seconds each
        for a busy worker (the service stops: what it graded is queued again, and a worker left
        behind exits with its parent)."""
        with self._lock:
            for x in (self._client, self._cluster):
                if x is not None:
                    try:
                        x.close(timeout=timeout)
                    except Exception:  # noqa: BLE001 - closing on the way out
                        log.debug("closing %s", x, exc_info=True)
            if self._cluster is not None:  # not again at exit (distributed waits 10 s more there)
                self._cluster.shutdown_on_close = False
            self._client = self._cluster = None

    # ------------------------------------------------------------- courses
    def fingerprint(self, assignment: str) -> str:
        """A hash of the assignment's source notebooks: it changes when the instructor edits and
        generates the assignment again."""
        h = hashlib.sha256()
        for nb in sorted((self.course / "source" / assignment).glob("*.ipynb")):
            h.update(nb.name.encode() + b"\0" + nb.read_bytes())
        return h.hexdigest()

    def course_for(self, assignment: str) -> Path:
        """``<state>/courses/<assignment>/``, made on first use from the course's gradebook, and
        made again (the old one kept as ``<assignment>.<time>``) when the assignment's source changed."""
        from tools.grading import grade

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

    def prepare(self, assignment: str) -> Prepared:
        """The assignment's :class:`Prepared` (made once, and again when its source changed)."""
        from tools.grading import grade

        sha = self.fingerprint(assignment)
        with self._prep_lock:
            p = self._prepared.get(assignment)
            if p is not None and p.source == sha:
                return p
            t0 = time.monotonic()
            course = self.course_for(assignment)
            if self.sandbox:
                grade._require_sandbox()
            cfg = grade.load_config(course)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SQLAlchemy's notes inside nbgrader's gradebook
                shared = grade._shared_inputs(course, assignment, cfg, self.sandbox, self.limits)
            shared_f = self.client().scatter(shared, broadcast=True)
            ex = cfg.get("GradingExecute", {}).get("timeout") or cfg.get("Execute", {}).get("timeout")
            p = Prepared(assignment, course, cfg, shared_f, sha, list(shared.notebooks), ex,
                         self._writers.setdefault(assignment, threading.Lock()))  # one writer of the course
            self._prepared[assignment] = p
            log.info("ready to grade %s (%d notebooks) in %.1f s", assignment, len(p.notebooks), time.monotonic() - t0)
            return p

    def forget(self, assignment: str) -> None:
        """Prepare the assignment again next time (its inputs on the cluster may be lost)."""
        with self._prep_lock:
            self._prepared.pop(assignment, None)

    # ------------------------------------------------------------- warm-up
    def warm(self, assignments: list[str], grade: bool = True) -> float:
        """Start the cluster, prepare each assignment and (``grade``) grade its released notebooks
        once on every worker (results thrown away): imports, the student editions of td_lib, the
        libraries the kernels load are all in memory or in the page cache before the first
        submission arrives. A submission that comes meanwhile goes first (the warm-up's tasks not
        started yet are dropped). Returns the seconds it took."""
        t0 = time.monotonic()
        client = self.client()
        import nbgrader.apps  # noqa: F401  (the merge's imports, in this process)

        from tools.grading import grade

        workers = sorted(client.scheduler_info().get("workers", {})) or [None]
        futures = []
        for assignment in assignments:
            try:
                p = self.prepare(assignment)
            except (Exception, SystemExit) as e:  # noqa: BLE001 - a broken assignment must not stop the service
                log.warning("warm-up: %s cannot be prepared: %s", assignment, one_line(str(e)))
                continue
            release = self.course / "release" / assignment
            nbs = sorted(release.glob("*.ipynb")) if release.is_dir() else []
            for i, w in enumerate(workers):
                if not nbs or not grade:
                    break
                nb = nbs[i % len(nbs)]
                files = {nb.name: nb.read_bytes(), "timestamp.txt": b"2000-01-01 00:00:00.000000 UTC"}
                sub = grade.Submission("td-warm-up", assignment, files)
                futures.append(client.submit(grade.grade_notebook, sub, p.shared_f, nb.stem, pure=False, priority=-100,
                                             key=f"warm-{assignment}-{i}-{time.time_ns()}",
                                             **({"workers": [w], "allow_other_workers": True} if w else {})))
        self._warming = futures
        from distributed import wait

        try:
            wait(futures, timeout=600)
        except Exception:  # noqa: BLE001 - a slow warm-up only costs time
            log.warning("warm-up: not done within 600 s", exc_info=True)
        self._warming = []
        for f in futures:
            f.release()
        took = time.monotonic() - t0
        if grade:
            log.info("warm: %d worker(s), %s in %.1f s", len(workers), ", ".join(assignments) or "no assignment", took)
        else:
            log.info("ready in %.1f s (no warm-up grading: submissions were waiting)", took)
        return took

    # ------------------------------------------------------------- grading
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
        out = {}
        for r in rows:
            try:
                out[r.id] = self.grade_row(r)
            except OSError as e:  # the submission's folder is gone, or not a folder
                out[r.id] = {"error": str(e)}
        return out

    def _executed_sha(self, course: Path, row: Row, nb: str) -> str | None:
        f = course / "autograded" / row.student / row.assignment / f"{nb}.ipynb"
        try:
            return sha256(f.read_bytes())
        except OSError:
            return None

    def grade_row(self, row: Row) -> dict:
        """Grade one submission: the notebooks that changed since the student's last graded one,
        one Dask task each; the others keep their grading. Its result (:func:`result`)."""
        from tools.grading import grade

        if self._warming:  # a submission goes before the warm-up's tasks not started yet
            warming, self._warming = self._warming, []
            self.client().cancel(warming)
        p = self.prepare(row.assignment)
        refused = self.place(row, p.course)
        whole = grade.read_submission(p.course, row.assignment, row.student)  # as make grade's task receives it
        top = {rel[:-6]: data for rel, data in whole.files.items() if rel.endswith(".ipynb") and "/" not in rel}
        hashes = {nb: sha256(data) for nb, data in top.items()}
        previous = self.queue.last_graded(row.student, row.assignment, before=row.id) if self.queue else None
        reuse = plan_reuse(previous, hashes, p.source, lambda nb: self._executed_sha(p.course, row, nb))
        todo = [nb for nb in p.notebooks if nb not in reuse and nb in top]
        missing = [nb for nb in p.notebooks if nb not in top]
        others, stamp = whole.other_files(), whole.stamp
        client = self.client()
        futures = []
        for nb in todo:  # each task receives its notebook and the submission's other files
            sub = grade.Submission(row.student, row.assignment, {**others, f"{nb}.ipynb": top[nb]}, stamp)
            futures.append(client.submit(grade.grade_notebook, sub, p.shared_f, nb, pure=False,
                                         key=f"live-{row.assignment}-{row.student}-{nb}-{time.time_ns()}"))
        try:
            parts = [f.result() for f in futures]
        except Exception:
            self.forget(row.assignment)  # its inputs may be gone with the workers
            raise
        finally:
            for f in futures:
                f.release()
        task = GradingRecord.combine(parts, row.student, row.assignment)  # one record, as make grade's task
        task.errors = [f"{nb}.ipynb: missing from the submission" for nb in missing] + task.errors
        for nb in reuse:
            executed = p.course / "autograded" / row.student / row.assignment / f"{nb}.ipynb"
            task.executed[f"{nb}.ipynb"] = executed.read_text()
            for k in PER_NOTEBOOK:
                if reuse[nb].get(k):
                    getattr(task, k)[nb] = reuse[nb][k]
        with p.lock:  # one writer of the service's course at a time (nbgrader's gradebook, autograded/)
            rec = grade.finish(task, stamp, p.course, p.cfg)
            if not rec.graded:
                log.warning("%s %s %s not graded: %s", *row.key, " | ".join(rec.errors))
                return {"error": "; ".join(one_line(e) for e in rec.errors) or "not graded"}
            res = result(p.course, row.assignment, row.student, rec, timeout=p.timeout, reused=set(reuse),
                         notebooks=p.notebooks)
            now = time.time()
            res["notebooks"] = {}
            for nb in p.notebooks:
                if nb in reuse:
                    res["notebooks"][nb] = reuse[nb]
                elif nb in todo:
                    res["notebooks"][nb] = {"graded_at": now, "sha256": hashes[nb], "source": p.source,
                                            "executed_sha256": self._executed_sha(p.course, row, nb),
                                            "seconds": rec.timing.get(nb),
                                            "failed_lines": rec.failed_lines.get(nb, {}),
                                            "mistakes": rec.mistakes.get(nb, {})}
        if todo or reuse:
            log.info("%s %s %s: graded %s%s", *row.key, ", ".join(todo) or "nothing",
                     f"; kept the grading of {', '.join(sorted(reuse))}" if reuse else "")
        for e in rec.errors:
            if "\n" in e:
                log.warning("%s %s %s: %s", *row.key, e)
        return note_refusals(res, refused)


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


# ------------------------------------------------------------------ the result of a row
_UNREADABLE = re.compile(r"^(?P<nb>[^/]+)\.ipynb: unreadable notebook \((?P<why>[A-Za-z_.]+)")
_GRADER = ("nbgrader autograde failed", "grading task failed", "merge failed", "not graded:")


def notices(errors: list[str], notebooks: list[str] | None) -> tuple[list[str], list[str], dict[str, str]]:
    """The record's errors as (notice lines for the top of the page, the remaining error lines,
    notebook -> why it was not graded). One line each, never a traceback."""
    notice, rest, not_graded = [], [], {}
    for e in errors:
        if m := _MISSING.match(e.strip()):
            not_graded[m["nb"]] = "it was not in this submission"
        elif m := _UNREADABLE.match(e.strip()):
            not_graded[m["nb"]] = f"the file could not be read as a notebook ({m['why']})"
    expected = set(notebooks or []) or set(not_graded)
    if not_graded and expected <= set(not_graded):
        notice.append("No notebook of this submission could be graded (missing or unreadable): every test "
                      "scores 0. Submit again from the assignment's folder in JupyterLab.")
    else:
        notice += [f"{nb}.ipynb was not graded: {why}; its tests score 0." for nb, why in sorted(not_graded.items())]
    for e in errors:
        if _MISSING.match(e.strip()) or _UNREADABLE.match(e.strip()):
            continue
        if e.startswith(_GRADER):
            if not (not_graded and expected <= set(not_graded)):  # a consequence of no notebook: said above
                rest.append("the grader could not finish part of this submission (the instructor's log has the "
                            "details)")
            continue
        rest.append(one_line(e))
    return notice, list(dict.fromkeys(rest)), not_graded


def _problem(cell, index: int, timeout: int | None) -> dict | None:
    """What went wrong in a cell that is not a test (an answer cell, an import), or None."""
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    if not errors:
        return None
    gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    label = f"the answer cell {gid}" if gid else f"cell {index + 1}"
    gid = gid or f"cell {index + 1}"
    names = [o.get("ename", "") for o in errors]
    if any(n in TIME_LIMIT for n in names):
        budget = next((o for o in errors if o.get("ename") == "GradingBudgetExceeded"), None)
        m = re.search(r"\((\d+) s to grade it\)", (budget or {}).get("evalue", ""))
        if budget is not None and m:
            text = f"{label} was stopped: the notebook's time budget of {m[1]} s ran out"
        else:
            text = f"{label} hit its time limit" + (f" of {timeout} s" if timeout else "")
        return {"cell": gid, "kind": "time limit", "message": text}
    e = errors[-1]
    return {"cell": gid, "kind": "error",
            "message": f"{label} raised " + one_line(f"{e.get('ename', 'Error')}: {e.get('evalue', '')}")}


def _defines(source: str, name: str) -> bool:
    return bool(re.search(rf"^\s*(?:def|class)\s+{re.escape(name)}\b|^\s*{re.escape(name)}\s*[:=]", source, re.M))


def _executed(folder: Path, timeout: int | None, notice: list[str]):
    """The graded cells of the autograded notebooks in ``folder``, ``{(notebook, grade id): cell}``,
    and for each the problems of the earlier answer cells (``{(notebook, grade id): [(problem,
    its source)]}``); an answer cell that hit its time limit adds a line to ``notice``."""
    import nbformat

    executed: dict[tuple[str, str], dict] = {}
    problems: dict[tuple[str, str], list[tuple[dict, str]]] = {}
    for nb_path in sorted(folder.glob("*.ipynb")):
        try:
            nb = nbformat.read(str(nb_path), as_version=4)
        except Exception:  # noqa: BLE001 - an unreadable result: the gradebook still has the points
            continue
        seen: list[tuple[dict, str]] = []
        for i, c in enumerate(nb.cells):
            if c.cell_type != "code":
                continue
            meta = c.get("metadata", {}).get("nbgrader", {})
            if meta.get("grade"):
                executed[(nb_path.stem, meta.get("grade_id", ""))] = c
                problems[(nb_path.stem, meta.get("grade_id", ""))] = list(seen)
            if not (meta.get("grade") and not meta.get("solution")):  # not a test cell: an answer, an import
                p = _problem(c, i, timeout)
                if p is not None:
                    seen.append((p, c.source))
                    if p["kind"] == "time limit":
                        notice.append(f"{nb_path.name}: {p['message']} and was interrupted; the tests that use "
                                      "what it defines fail.")
    return executed, problems


def result(course: Path, assignment: str, student: str, rec: GradingRecord, timeout: int | None = None,
           reused: set[str] | None = None, notebooks: list[str] | None = None) -> dict:
    """A row's result from the gradebook and the autograded notebooks of ``course``.

    ``timeout``: the cell time limit (seconds) named when an answer cell hit it; ``reused``: the
    notebooks whose grading was kept from an earlier submission (their cells get ``"reused":
    true``); ``notebooks``: the assignment's notebooks (to tell "none could be graded")."""
    from nbgrader.api import Gradebook

    reused = reused or set()
    failed_lines = rec.failed_lines
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
    notice, errors, not_graded = notices(list(rec.errors), notebooks)
    mistakes_seen = rec.mistakes  # notebook -> test cell -> known mistake (tools.grading.mistakes)
    hints = mistakes.hints(assignment, sorted({nb for nb, *_ in order})) if mistakes_seen else {}
    executed, problems = _executed(course / "autograded" / student / assignment, timeout, notice)
    for nb, gid, cell_type, max_points in order:
        c = executed.get((nb, gid))
        is_test = cell_type == "code" and not manual.get((nb, gid), False)
        entry = {"notebook": nb, "grade_id": gid, "kind": "test" if is_test else "manual",
                 "max_points": max_points, "points": points.get((nb, gid)), "has_hidden": False,
                 "passed": None, "failed_part": None, "message": None}
        if nb in reused:
            entry["reused"] = True
        if is_test and c is not None:
            hidden = hidden_lines(c.source)
            entry["has_hidden"] = bool(hidden)
            errs = [o for o in c.get("outputs", []) if o.get("output_type") == "error"]
            entry["passed"] = not errs
            if errs:
                e = errs[-1]
                entry["message"] = one_line(f"{e.get('ename', 'Error')}: {e.get('evalue', '')}".rstrip(": "), 2000)
                line = failed_lines.get(f"{nb}.ipynb", {}).get(gid) or failed_lines.get(nb, {}).get(gid)
                if not hidden:
                    entry["failed_part"] = "visible"
                elif line:
                    entry["failed_part"] = "hidden" if line in hidden else "visible"
                else:
                    entry["failed_part"] = "unknown"
                cause = _cause(e, problems.get((nb, gid), []))
                if cause:
                    entry["cause"] = cause
                named = mistakes_seen.get(nb, {}).get(gid)  # a known mistake the test runner recognised
                if named in hints.get((nb, gid), {}):
                    entry["mistake"] = {"name": named, "hint": hints[(nb, gid)][named]}
        elif is_test:  # the notebook is missing or unreadable: scored 0 by nbgrader
            why = not_graded.get(nb, "the notebook was not graded")
            entry.update(passed=False, failed_part="visible", message=f"not graded: {why}",
                         cause={"cell": None, "kind": "notebook", "message": f"not graded: {nb}.ipynb: {why}"})
        elif c is not None:  # an answer graded by hand that raised or hit its time limit
            p = _problem(c, 0, timeout)
            if p is not None:
                entry["cause"] = p
        cells.append(entry)
    return {"score": score, "max_score": max_score, "seconds": rec.seconds, "cells": cells,
            "errors": errors, "notice": list(dict.fromkeys(notice)), "flags": rec.flags,
            "timestamp": rec.timestamp, "graded_at": time.time(),
            "record": json.loads(json.dumps({"timing": rec.timing, "host": rec.host}))}


def _cause(error: dict, earlier: list[tuple[dict, str]]) -> dict | None:
    """Why a test cell failed when the failure comes from an earlier cell: a name the test reads
    is not defined because the answer cell that defines it hit its time limit or raised."""
    if error.get("ename") != "NameError" or not earlier:
        return None
    m = re.search(r"name '([^']+)' is not defined", error.get("evalue", ""))
    pick = next((p for p, src in earlier if m and _defines(src, m[1])), None)
    if pick is None:
        pick = next((p for p, _ in reversed(earlier) if p["kind"] == "time limit"), earlier[-1][0])
    return {**pick, "message": "not graded: " + pick["message"]}
