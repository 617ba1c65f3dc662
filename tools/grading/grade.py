"""Autograde every collected submission of an assignment in parallel on Dask, sandboxed.

    python -m tools.grading.grade ASSIGNMENT [--course DIR] [--workers N] [--scheduler tcp://HOST:8786]
                          [--force] [--students a,b] [--no-sandbox] [--mem-gb G]

One Dask task per student: the task builds a private working copy of the course (its
``nbgrader_config.py``, a snapshot of the gradebook that holds the assignment's source
notebooks and no student, the student's submission) and runs nbgrader's own ``Autograde``
on it -- the sanitizing step (``ClearOutput`` ... ``ReleaseAwareOverwriteCells``) and the
autograde step up to, not including, ``SaveAutoGrades``, whose ``Execute`` is the course's
:class:`tools.grading.execute.GradingExecute` configured with its grader steps
(``grader_steps``: kernels in the sandbox of ``tools/grading/sandbox.py``, test cells in a test runner,
the integrity probe) and the course's per-cell timeout. The task returns the executed notebooks
and each notebook's report (:class:`tools.grading.record.NotebookReport`). The coordinator (this
process, the only writer) then runs a second nbgrader ``Autograde`` per student in the real
course, reading those executed notebooks: no sanitizing preprocessor, no ``Execute``, the
course's remaining autograde preprocessors (``SaveAutoGrades``, ``AssignLatePenalties``,
``CheckCellMetadata``). So nbgrader itself writes ``gradebook.db`` and ``autograded/``
exactly as a serial ``nbgrader autograde`` would (tests/test_grade.py compares the export).

Integrity (``tools/grading/integrity.py``): a test cell after which functions the tests rely on
differ from the kernel's own before the first cell gets an ``IntegrityError`` output, so it
scores 0, and the student is flagged in the log line and in the record.

Results: a tqdm bar (count, rate, ETA), one log line per submission (student, score, seconds,
errors, flags), one :class:`tools.grading.record.GradingRecord` per student, written to
``course/.grade/<assignment>/<student>.json``. A student whose
record matches the submission's timestamp is skipped unless ``--force``. A failing notebook
(corrupt JSON) is left out, recorded as an error and scored 0 by nbgrader as a missing one;
the student's other notebooks are graded (a submission with no readable notebook at all gets a
0 submission in the gradebook and the error, where serial nbgrader would silently skip it).
A worker that dies mid-task is replaced and the task rerun elsewhere by the Dask scheduler
(``distributed.scheduler.allowed-failures``).
"""

from __future__ import annotations

import argparse
import ast
import base64
import contextlib
import logging
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import nbformat
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from tools import env, nbcore
from tools.grading import mistakes
from tools.grading.record import GradingRecord, NotebookReport

RESULTS_DIR = ".grade"
log = logging.getLogger("tools.grading.grade")

RUNNER_EDITION = "<test runner>"  # its key among the editions a task receives


# ------------------------------------------------------------------------- helpers
def load_config(course: Path) -> Config:
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    cfg.CourseDirectory.root = str(course)
    return cfg


def _read_tree(folder: Path) -> tuple[dict[str, bytes], list]:
    """A submission's files as data (``tools.grading.safe_files``: regular files only, no link followed,
    capped), and what was refused."""
    from tools.grading import safe_files

    return safe_files.read_tree(folder, skip=(".ipynb_checkpoints",))


def _write_tree(folder: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def _split_preprocessors(cfg: Config):
    """(task's autograde preprocessors, coordinator's) around SaveAutoGrades; the task's execute
    step is the course's :class:`~tools.grading.execute.GradingExecute` (an ``Execute`` of
    another class, nbgrader's own in a config without it, is replaced by it)."""
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute, SaveAutoGrades

    from tools.grading.execute import GradingExecute

    pps = list(cfg.Autograde.autograde_preprocessors) if "autograde_preprocessors" in cfg.Autograde \
        else list(Autograde.class_traits()["autograde_preprocessors"].default())
    cut = pps.index(SaveAutoGrades)
    task = [GradingExecute if isinstance(p, type) and issubclass(p, Execute) else p for p in pps[:cut]]
    return task, pps[cut:]


def gradebook_snapshot(course: Path, assignment: str) -> bytes:
    """The course's gradebook with its assignments and source notebooks, and no student."""
    from nbgrader.api import Gradebook, MissingEntry

    with tempfile.TemporaryDirectory() as d:
        db = Path(d) / "gradebook.db"
        shutil.copy(course / "gradebook.db", db)
        with Gradebook(f"sqlite:///{db}") as gb, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SQLAlchemy's autoflush chatter inside remove_student
            try:
                gb.find_assignment(assignment)
            except MissingEntry as e:
                raise SystemExit(f"{assignment} is not in {course}/gradebook.db: run generate_assignment first") from e
            for s in list(gb.students):
                gb.remove_student(s.id)
        import sqlite3
        con = sqlite3.connect(db)
        con.execute("VACUUM")
        con.close()
        return db.read_bytes()


def answer_ids(course: Path, assignment: str) -> dict[str, list[str]]:
    """notebook -> the ``grade_id`` s of its answer cells (solution cells), from the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {nb.name: sorted(c.name for c in nb.solution_cells) for nb in gb.find_assignment(assignment).notebooks}


def answer_names(course: Path, assignment: str, notebooks: list[str]) -> dict[str, list[str]]:
    """notebook -> the names its answer cells define (functions, classes, assigned names) in the
    course's source, with the solutions: the student's work a test cell may read (nothing else
    of the student's notebook reaches a test; docs/GRADING.md)."""

    out: dict[str, list[str]] = {}
    for nb in notebooks:
        src = next((s for s in (course / "source" / assignment / f"{nb}{ext}" for ext in (".py", ".ipynb"))
                    if s.exists()), None)
        if src is None:  # no source to read the answers from: the test's own declaration decides
            continue
        names: set[str] = set()
        for c in nbcore.read_source(src).cells:
            if c.cell_type != "code" or not nbcore.is_answer(c):
                continue
            try:
                tree = ast.parse(nbcore.strip_markers(c.source, nbcore.BEGIN_SOL, nbcore.END_SOL, keep=True))
            except SyntaxError:
                continue
            for n in tree.body:
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(n.name)
                elif isinstance(n, (ast.Assign, ast.AnnAssign)):
                    for tg in n.targets if isinstance(n, ast.Assign) else [n.target]:
                        names |= {x.id for x in ast.walk(tg) if isinstance(x, ast.Name)}
        out[nb] = sorted(names)
    return out


def source_extras(cfg: Config, course: Path, assignment: str) -> dict[str, bytes]:
    """The files nbgrader copies from source/ into every autograded folder (not notebooks)."""
    from nbgrader import utils as nbutils

    src = course / "source" / assignment
    ignore = list(cfg.CourseDirectory.ignore) if "ignore" in cfg.CourseDirectory else []
    return {os.path.relpath(f, src): Path(f).read_bytes()
            for f in nbutils.find_all_files(str(src), ignore + ["*.ipynb"])}


# --------------------------------------------------------------------------- task
def kernel_files(files: dict[str, bytes], extras: dict[str, bytes]) -> dict[str, bytes]:
    """What the grading kernel's folder holds: the course's extra files (data next to the
    source notebooks) and the submission's other files, never a notebook (``.ipynb`` anywhere,
    checkpoints included) nor nbgrader's ``timestamp.txt``."""
    def keep(rel: str) -> bool:
        return not rel.endswith(".ipynb") and ".ipynb_checkpoints" not in rel.split("/") and rel != "timestamp.txt"

    return {rel: data for rel, data in {**files, **extras}.items() if keep(rel)}


def _write_course(course: Path, assignment: str, shared: dict) -> None:
    """The task's private course: the course's config, the gradebook snapshot (no student) and
    the source folder's extra files."""
    (course / "source" / assignment).mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(shared["config"])
    (course / "gradebook.db").write_bytes(shared["gradebook"])
    _write_tree(course / "source" / assignment, shared["extras"])


def _readable_files(job: dict, notebooks: list[str], errors: list[str]) -> dict[str, bytes]:
    """The submission's files (decoded) without its unreadable notebooks; one line in ``errors``
    per notebook left out as unreadable or missing from the submission."""
    files = {k: base64.b64decode(v) for k, v in job["files"].items()}
    for rel in list(files):
        if rel.endswith(".ipynb") and "/" not in rel:
            try:
                nbformat.validate(nbformat.reads(files[rel].decode(), as_version=4))
            except Exception as e:  # corrupt: left out, nbgrader scores it as missing
                errors.append(f"{rel}: unreadable notebook ({type(e).__name__}: {str(e)[:120]})")
                del files[rel]
    for nb in notebooks:
        if f"{nb}.ipynb" not in job["files"]:
            errors.append(f"{nb}.ipynb: missing from the submission")
    return files


def _task_config(course: Path, work: Path, shared: dict, scratch: Path, reports: Path) -> Config:
    """The private course's config: the task's autograde preprocessors, sandboxed kernels working
    in ``work`` with the grading limits, killed at once when their notebook is done, and what the
    executor's grader steps need (``tools.grading.execute.grader_steps``): where test cells run,
    the editions of td_lib (written under ``scratch``, sandboxed), the names a test may ask the
    kernel for, the known mistakes, the folder of the notebooks' reports (``reports``)."""
    cfg = load_config(course)
    task_pps, _ = _split_preprocessors(cfg)
    cfg.Autograde.autograde_preprocessors = task_pps
    cfg.Execute.kernel_manager_class = "tools.grading.kernel.SandboxKernelManager"
    # Outputs are in once the last cell ran: kill the kernel (its whole PID namespace) at once
    # instead of nbclient's graceful shutdown (about 1 s per notebook).
    cfg.Execute.shutdown_kernel = "immediate"
    cfg.SandboxKernelManager.workdir = str(work)
    cfg.SandboxKernelManager.enabled = shared["sandbox"]
    cfg.SandboxKernelManager.mpl_cache = os.environ.get("MPLCONFIGDIR", "")
    for k, v in shared.get("limits", {}).items():
        setattr(cfg.SandboxKernelManager, k, v)
    editions = _install_editions(scratch, shared)
    cfg.GradingExecute.runner = "sandbox" if shared["sandbox"] else "process"
    cfg.GradingExecute.runner_edition = editions.pop(RUNNER_EDITION, "")
    cfg.GradingExecute.editions = editions
    cfg.GradingExecute.declarable = {nb: list(v) for nb, v in shared.get("declarable", {}).items()}
    cfg.GradingExecute.known_mistakes = dict(shared.get("mistakes", {}))
    cfg.GradingExecute.report_dir = str(reports)
    return cfg


def _install_editions(scratch: Path, shared: dict) -> dict[str, str]:
    """Sandboxed: write each notebook's student edition of td_lib (and the test runner's, under
    :data:`RUNNER_EDITION`) under ``scratch``, readable by the kernel's uid; notebook -> its folder."""
    editions: dict[str, str] = {}
    if not shared["sandbox"]:
        return editions
    for i, (nb, lib_files) in enumerate(shared.get("student_lib", {}).items()):
        lib = scratch / "student_lib" / str(i) / "td_lib"
        _write_tree(lib, lib_files)
        for p in [lib.parent.parent, lib.parent, lib, *lib.rglob("*")]:
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        editions[nb] = str(lib)
    return editions


def _collect_task(out: dict, res: dict, done: Path, reports: Path) -> None:
    """Into ``out``: nbgrader's log and failure, the executed notebooks in ``done`` and what the
    executor reported per notebook in ``reports`` (flags, seconds, cells, failed lines, mistakes)."""
    out["log"] = res.get("log", "")
    if not res.get("success"):
        out["errors"].append("nbgrader autograde failed: " + (res.get("error") or "")[-600:])
    for nb in sorted(done.glob("*.ipynb")) if done.exists() else []:
        out["notebooks"][nb.name] = nb.read_text()
    report = {p.stem: NotebookReport.read(p) for p in sorted(reports.glob("*.json"))}
    out["flags"] = {k: v.flags for k, v in report.items() if v.flags}
    out["timing"] = {k: v.seconds for k, v in report.items()}
    out["cells"] = {k: v.cells for k, v in report.items()}
    out["failed_lines"] = {k: v.failed_lines for k, v in report.items() if v.failed_lines}
    out["mistakes"] = {k: v.mistakes for k, v in report.items() if v.mistakes}


def grade_submission(job: dict, shared: dict) -> dict:
    """Dask task: autograde one student's submission in a private course copy; no shared state."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    import tools.env  # noqa: F401  (project-local Jupyter/IPython dirs on the worker)

    t0 = time.perf_counter()
    student, assignment = job["student"], job["assignment"]
    out = {"student": student, "assignment": assignment, "notebooks": {}, "errors": [], "flags": {},
           "log": "", "host": os.uname().nodename, "pid": os.getpid()}
    from tools.grading.sandbox import scratch_dir

    scratch = Path(scratch_dir("grade"))
    os.chmod(scratch, 0o711)  # sandboxes may reach work/ and student_lib/, not list or read the rest
    try:
        course = scratch / "course"
        course.mkdir(mode=0o700)
        _write_course(course, assignment, shared)
        out["errors"] += [f"not graded: {r}" for r in job.get("refused", [])]
        files = _readable_files(job, shared["notebooks"], out["errors"])
        _write_tree(course / "submitted" / student / assignment, files)
        # The kernel's working folder: the course's extra files and the student's own files, but
        # no notebook. The kernel receives the cells to run over ZMQ; the notebook under grading
        # (hidden tests restored into it) stays in scratch/course, outside the sandbox.
        work = scratch / "work"
        work.mkdir()
        _write_tree(work, kernel_files(files, shared["extras"]))
        reports = scratch / "reports"
        reports.mkdir()
        cfg = _task_config(course, work, shared, scratch, reports)
        if shared["sandbox"]:  # read (then copied onto the kernel's capped tmpfs) by the kernel's own uid
            for p in [work, *work.rglob("*")]:
                os.chmod(p, 0o755 if p.is_dir() else 0o644)
        coursedir = CourseDirectory(config=cfg)
        api = NbGraderAPI(coursedir=coursedir, config=cfg)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SQLAlchemy's autoflush chatter inside nbgrader (worker's stderr)
            res = api.autograde(assignment, student, force=True, create=True)
        _collect_task(out, res, course / "autograded" / student / assignment, reports)
    except Exception as e:
        import traceback
        out["errors"].append(f"grading task failed: {type(e).__name__}: {e}\n{traceback.format_exc()[-800:]}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    out["seconds"] = round(time.perf_counter() - t0, 2)
    return out


# ----------------------------------------------------------------------- merge
def merge(result: dict, course: Path, cfg: Config) -> GradingRecord:
    """Write one task's executed notebooks into the course with nbgrader (the only writer); the
    submission's record (its scores from the gradebook), written to its file."""
    from nbgrader.api import Gradebook
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    student, assignment = result["student"], result["assignment"]
    _, merge_pps = _split_preprocessors(cfg)
    with tempfile.TemporaryDirectory(prefix="td-merge-") as d:
        stage = Path(d) / "executed"
        dest = stage / student / assignment
        src = course / "submitted" / student / assignment
        dest.mkdir(parents=True)
        files, _ = _read_tree(src)  # the submission's other files (timestamp.txt, data), as data
        for rel, data in files.items():
            if not (rel.endswith(".ipynb") and "/" not in rel):
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                (dest / rel).write_bytes(data)
        for name, text in result["notebooks"].items():
            (dest / name).write_text(text)
        mcfg = Config(cfg)
        mcfg.CourseDirectory.submitted_directory = str(stage)
        mcfg.Autograde.sanitize_preprocessors = []
        mcfg.Autograde.autograde_preprocessors = merge_pps
        if result["notebooks"]:
            api = NbGraderAPI(coursedir=CourseDirectory(config=mcfg), config=mcfg)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SQLAlchemy's autoflush chatter inside nbgrader
                res = api.autograde(assignment, student, force=True, create=True)
        else:  # nothing readable: nbgrader's rule for a missing notebook, for every notebook
            res = _record_empty(course, assignment, student, mcfg)
    errors = list(result.get("errors") or [])
    if not res.get("success"):
        errors.append("merge failed: " + (res.get("error") or "")[-400:])
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        s = gb.find_submission(assignment, student)
        record = GradingRecord(
            student=student, assignment=assignment, seconds=result.get("seconds"), errors=errors,
            flags=result.get("flags") or {}, timing=result.get("timing") or {}, host=result.get("host"),
            notebooks=sorted(result["notebooks"]), worker_pid=result.get("pid"),
            score=s.score, max_score=s.max_score, timestamp=str(s.timestamp),
            auto_score=s.code_score, auto_max=s.max_code_score,
            hand_score=s.written_score + s.task_score, hand_max=s.max_written_score + s.max_task_score,
            hand_pending=bool(s.needs_manual_grade))
    rec_dir = course / RESULTS_DIR / assignment
    rec_dir.mkdir(parents=True, exist_ok=True)
    record.write(rec_dir / f"{student}.json")
    return record


def _record_empty(course: Path, assignment: str, student: str, cfg: Config) -> dict:
    """A submission without one readable notebook: every grade 0, as nbgrader scores a missing one."""
    from nbgrader.api import Gradebook
    from nbgrader.coursedir import CourseDirectory

    cd = CourseDirectory(config=cfg)
    stamp = cd.get_existing_timestamp(str(course / "submitted" / student / assignment))
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.update_or_create_student(student)
        sub = gb.update_or_create_submission(assignment, student, **({"timestamp": stamp} if stamp else {}))
        for nb in sub.notebooks:
            for g in nb.grades:
                g.auto_score = 0
                g.needs_manual_grade = False
        gb.db.commit()
    return {"success": True}


# -------------------------------------------------------------------- coordinator
def submissions(course: Path, assignment: str) -> list[str]:
    return sorted(p.parent.name for p in (course / "submitted").glob(f"*/{assignment}") if p.is_dir())


def already_graded(course: Path, assignment: str, student: str) -> bool:
    rec_file = course / RESULTS_DIR / assignment / f"{student}.json"
    ts = course / "submitted" / student / assignment / "timestamp.txt"
    if not rec_file.exists():
        return False
    rec = GradingRecord.read(rec_file)
    if rec.notebooks and not (course / "autograded" / student / assignment).is_dir():
        return False
    stamp = ts.read_text().strip() if ts.exists() else ""
    return (rec.submitted_stamp or "") == stamp


def log_line(rec: GradingRecord) -> str:
    """One line per submission: student, score, seconds, errors, flags."""
    errs = "; ".join(e.splitlines()[0] for e in rec.errors) or "-"
    flags = "; ".join(f"{nb}: {', '.join(v)}" for nb, v in rec.flags.items())
    return (f"{rec.student:16s} {score_text(rec)}  {rec.seconds or 0:5.1f} s  errors: {errs}"
            + (f"  FLAGGED: {flags}" if flags else ""))


def score_text(rec: GradingRecord) -> str:
    """A record's score split into autograded and hand-graded points: ``52/52 autograded, 45
    points to grade by hand`` (or ``+ 40/45 by hand`` once they are graded)."""
    if rec.score is None:
        return "not graded"
    if rec.auto_max is None:  # a record written before the split was kept
        return f"{rec.score:g}/{rec.max_score:g}"
    text = f"{rec.auto_score:g}/{rec.auto_max:g} autograded"
    if rec.hand_max:
        text += (f", {rec.hand_max:g} points to grade by hand" if rec.hand_pending
                 else f" + {rec.hand_score:g}/{rec.hand_max:g} by hand")
    return text


def _require_sandbox() -> None:
    """Stop (``SystemExit``) when sandboxes cannot start here, saying why."""
    from tools.grading import sandbox as sbx
    ok, why = sbx.available()
    if not ok:
        raise SystemExit(f"cannot sandbox the grading: {why}. Without a sandbox (--no-sandbox) a submission's "
                         "code runs as you, next to the course: only for trusted submissions")


def _to_grade(course: Path, assignment: str, students: list[str] | None, force: bool, echo) -> list[str]:
    """The chosen students (``students``, default all) whose submission is to be graded: all of
    them with ``force``, else those not graded yet (``echo`` says how many are skipped)."""
    everyone = submissions(course, assignment)
    chosen = [s for s in everyone if not students or s in students]
    todo = [s for s in chosen if force or not already_graded(course, assignment, s)]
    if len(todo) < len(chosen):
        echo(f"{len(chosen) - len(todo)} submission(s) already graded (--force regrades them)")
    return todo


def _shared_inputs(course: Path, assignment: str, cfg: Config, sandbox: bool, limits: dict | None) -> dict:
    """What every task of the assignment receives: the config, the student editions of td_lib
    (sandboxed), the gradebook snapshot, the source's extra files, the kernel settings, the
    notebooks."""
    answers = answer_ids(course, assignment)  # notebook -> its answer cells, in the gradebook's order
    notebooks = list(answers)
    student_lib = {}
    if sandbox:  # the submission's code runs against td_lib without the answers of its exercises
        from tools.build import student_edition

        for nb in notebooks:
            student_lib[nb] = student_edition.files(student_edition.cached(answers.get(nb, []), keep_general=False))
        # The test runner's: the handout's edition, what a student's laptop runs the same test cells
        # with (every exercise's answers cut, the engines a test may call, such as cnn_lcn.integrate, kept).
        student_lib[RUNNER_EDITION] = student_edition.files(student_edition.cached(student_edition.handout_exercises()))
    return {"config": (course / "nbgrader_config.py").read_text(), "student_lib": student_lib,
            "gradebook": gradebook_snapshot(course, assignment),
            "extras": source_extras(cfg, course, assignment), "sandbox": sandbox, "limits": limits or {},
            "notebooks": notebooks, "declarable": answer_names(course, assignment, notebooks),
            "mistakes": mistakes.for_runner(assignment, notebooks)}


def _dask_client(stack: contextlib.ExitStack, scheduler: str | None, workers: int | None):
    """A Dask client of the scheduler at ``scheduler``, else of a local cluster of ``workers``
    processes (default: one per CPU core); ``stack`` closes them."""
    from distributed import Client, LocalCluster

    if scheduler:
        return stack.enter_context(Client(scheduler))
    n = workers or max(1, os.cpu_count() or 1)
    cluster = stack.enter_context(LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                               dashboard_address=":0", silence_logs=logging.ERROR))
    return stack.enter_context(Client(cluster))


def _submit(client, shared_f, course: Path, assignment: str, todo: list[str]) -> dict:
    """One :func:`grade_submission` task per student of ``todo``; return future -> its job."""
    futures = {}
    for s in todo:
        sub = course / "submitted" / s / assignment
        tree, refused = _read_tree(sub)
        files = {k: base64.b64encode(v).decode() for k, v in tree.items()}
        stamp = tree.get("timestamp.txt", b"").decode("utf-8", "replace").strip()
        job = {"student": s, "assignment": assignment, "files": files, "stamp": stamp,
               "refused": [str(r) for r in refused]}
        if refused:
            log.warning("%s: files not graded: %s", s, "; ".join(map(str, refused)))
        f = client.submit(grade_submission, job, shared_f, key=f"grade-{assignment}-{s}-{time.time_ns()}",
                          pure=False)
        futures[f] = job
    return futures


def _record(future, job: dict, course: Path, assignment: str, cfg: Config) -> GradingRecord:
    """The record of one finished task: merged into the course and written to
    ``course/.grade/<assignment>/<student>.json``; a task that could not run or merge keeps the
    old grades and says why (its record has no score)."""
    try:
        result = future.result()
    except Exception as e:  # the task could not run (e.g. its workers kept dying): keep old grades
        return GradingRecord(student=job["student"], errors=[f"not graded: {type(e).__name__}: {e}"])
    try:
        rec = merge(result, course, cfg)
    except Exception as e:  # the batch goes on; this student is reported and regraded next run
        return GradingRecord(student=job["student"], seconds=result.get("seconds"),
                             errors=[*result.get("errors", []), f"merge failed: {type(e).__name__}: {e}"],
                             flags=result.get("flags") or {})
    rec.submitted_stamp = job["stamp"]
    rec.log = result["log"]
    rec.cells = result.get("cells") or {}
    rec.failed_lines = result.get("failed_lines") or {}
    rec.mistakes = result.get("mistakes") or {}  # notebook -> test cell -> known mistake (tools.grading.mistakes)
    rec.write(course / RESULTS_DIR / assignment / f"{job['student']}.json")
    return rec


def grade(assignment: str, course: Path = env.COURSE, client=None, workers: int | None = None,
          scheduler: str | None = None, force: bool = False, students: list[str] | None = None,
          sandbox: bool = True, limits: dict | None = None, progress: bool = True,
          echo=print) -> dict[str, GradingRecord]:
    """Grade every (or every missing) submission; return student -> record."""
    from distributed import as_completed
    from tqdm import tqdm

    course = Path(course).resolve()
    if sandbox:
        _require_sandbox()
    cfg = load_config(course)
    todo = _to_grade(course, assignment, students, force, echo)
    records: dict[str, GradingRecord] = {}
    if not todo:
        return records
    shared = _shared_inputs(course, assignment, cfg, sandbox, limits)
    with contextlib.ExitStack() as stack:
        if client is None:
            client = _dask_client(stack, scheduler, workers)
        shared_f = client.scatter(shared, broadcast=True)
        futures = _submit(client, shared_f, course, assignment, todo)
        bar = tqdm(total=len(todo), unit="sub", desc=f"grading {assignment}", disable=not progress,
                   file=sys.stderr, dynamic_ncols=True)
        write = (lambda m: tqdm.write(m, file=sys.stderr)) if progress else echo
        for f in as_completed(futures):
            job = futures[f]
            rec = _record(f, job, course, assignment, cfg)
            records[job["student"]] = rec
            write(log_line(rec))
            bar.update()
        bar.close()
    return records


def combined_log(records: dict[str, GradingRecord]) -> str:
    """All task logs (nbgrader's own messages: checksum warnings name ``submitted/<student>/``)."""
    return "\n".join(r.log for _, r in sorted(records.items()))


HELP = """\
Grade every collected submission of ASSIGNMENT (course/submitted/<student>/ASSIGNMENT/) into
course/gradebook.db and course/autograded/ as `nbgrader autograde` would, in parallel, each
student's code sandboxed (bubblewrap, no root needed; docs/GRADING.md). Graded submissions are
skipped unless --force; feedback, export and the Formgrader then work as usual."""

EXAMPLES = """\
examples:
  make grade A=td2_7_learned_first      # the usual command, after `nbgrader collect`
                                        # or `make collect-zip` (= python -m tools.grading.grade ...)
  python -m tools.grading.grade cnn_lcn --students alice,bob --force   # regrade two students
  make grade A=cnn_lcn NO_SANDBOX=1     # = --no-sandbox, where bubblewrap cannot run: the code
      # runs as you, next to every solution and the gradebook, so only for trusted submissions
      # (your own test students), never for a class's work"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.grading.grade", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("assignment", help="the assignment to grade, e.g. td2_7_learned_first")
    p.add_argument("--course", type=Path, default=env.COURSE, metavar="DIR",
                   help="nbgrader course root (default: course/ of this repository)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="grade on an existing Dask scheduler, tcp://HOST:8786 (default: a local "
                        "cluster)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="local workers, without --scheduler (default: one per CPU core)")
    p.add_argument("--force", action="store_true", help="regrade submissions already graded (default: skip them)")
    p.add_argument("--students", metavar="A,B",
                   help="comma-separated student ids to grade (default: every collected student)")
    add_kernel_options(p)
    return p


def add_kernel_options(p: argparse.ArgumentParser, runs_as: str = "you") -> None:
    """``--no-sandbox`` and ``--mem-gb``: how a grader of the course runs a student's kernel
    (``make grade`` and the live grading service take the same two)."""
    p.add_argument("--no-sandbox", action="store_true",
                   help=f"ordinary kernels and test runners running as {runs_as}, next to the course: trusted "
                        "submissions only (default: sandboxed with bubblewrap; docs/GRADING.md)")
    p.add_argument("--mem-gb", type=float, default=6.0, metavar="G",
                   help="memory (address-space) limit of a student's kernel in the sandbox, GiB (default: 6)")


def quiet_libraries(log_file: Path) -> logging.Handler:
    """Send the libraries' warnings and log messages (SQLAlchemy's autoflush notes inside nbgrader,
    Dask's start-up messages, ...) to ``log_file`` instead of the terminal, where they would read
    as failures among the per-student lines; return the handler (to remove it again)."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.captureWarnings(True)
    for name in ("py.warnings", "distributed", "nbgrader", "traitlets"):
        lg = logging.getLogger(name)
        lg.addHandler(handler)
        lg.propagate = False
    return handler


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    log_file = Path(a.course).resolve() / RESULTS_DIR / a.assignment / "grade.log"
    quiet_libraries(log_file)
    t0 = time.perf_counter()
    recs = grade(a.assignment, a.course, workers=a.workers, scheduler=a.scheduler, force=a.force,
                 students=a.students.split(",") if a.students else None, sandbox=not a.no_sandbox,
                 limits={"mem_limit": int(a.mem_gb * (1 << 30))})
    bad = [s for s, r in recs.items() if r.errors or r.flags]
    print(f"graded {len(recs)} submission(s) of {a.assignment} in {time.perf_counter() - t0:.0f} s; "
          f"with errors or flags: {', '.join(bad) or 'none'}; library messages in {log_file}")
    return 1 if any(not r.graded for r in recs.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
