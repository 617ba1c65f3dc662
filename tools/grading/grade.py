"""Autograde every collected submission of an assignment in parallel on Dask, sandboxed.

    python -m tools.grading.grade ASSIGNMENT [--course DIR] [--workers N] [--scheduler tcp://HOST:8786]
                          [--force] [--students a,b] [--no-sandbox] [--mem-gb G] [--notebooks-at-once K]

One Dask task per student (:func:`grade_submission`), grading each notebook of the submission with
:func:`grade_notebook`, the one function every grader of the course runs per notebook (the live
service's Dask task per notebook, ``make mistakes`` through this command): it builds a private
working copy of the course for that notebook (its ``nbgrader_config.py``, a snapshot of the
gradebook that holds the assignment's source notebooks and no student, the student's other files
and that notebook) and runs nbgrader's own ``Autograde`` on it -- the sanitizing step
(``ClearOutput`` ... ``ReleaseAwareOverwriteCells``) and the autograde step up to, not including,
``SaveAutoGrades``, whose ``Execute`` is the course's :class:`tools.grading.execute.GradingExecute`
configured with its grader steps (``grader_steps``: kernels in the sandbox of
``tools/grading/sandbox.py``, test cells in a test runner, the integrity probe) and the course's
per-cell timeout. It returns the notebook's :class:`tools.grading.record.GradingRecord` (the
executed notebook, the executor's report, nbgrader's log; no score yet). Every notebook gets a
fresh sandboxed kernel of its own; a task grades ``--notebooks-at-once`` of them at a time (by
default one more than the cores each worker has when it has several, :func:`default_at_once`: three
on a two-core laptop with one worker; one with a worker per core). What does not depend on a
student (the loaded config, the editions of td_lib on disk) is prepared once per task
(:func:`_prepare`) and removed with it: nothing is kept in a worker between tasks. The coordinator
(this process, the only writer) then runs a second nbgrader ``Autograde`` per student in the real
course, reading those executed notebooks (:func:`merge`): no sanitizing preprocessor, no
``Execute``, the course's remaining autograde preprocessors (``SaveAutoGrades``,
``AssignLatePenalties``, ``CheckCellMetadata``). So nbgrader itself writes ``gradebook.db`` and
``autograded/`` exactly as a serial ``nbgrader autograde`` would (tests/test_grade.py compares
the export).

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
import contextlib
import copy
import dataclasses
import logging
import os
import shutil
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
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
@dataclass
class Submission:
    """One student's submission as a grading task receives it: its files as data
    (:func:`_read_tree`), the ``timestamp.txt`` it was collected with, the files not taken."""

    student: str
    assignment: str
    files: dict[str, bytes] = field(default_factory=dict)
    stamp: str = ""
    refused: list[str] = field(default_factory=list)

    def notebook(self, name: str) -> bytes | None:
        """The bytes of notebook ``name`` (without ``.ipynb``) at the submission's top, or None."""
        return self.files.get(f"{name}.ipynb")

    def other_files(self) -> dict[str, bytes]:
        """The submission's files but its top-level notebooks (data, ``timestamp.txt``, ...)."""
        return {rel: data for rel, data in self.files.items() if not _top_notebook(rel)}


@dataclass
class AssignmentInputs:
    """What every task grading an assignment receives (built once by the coordinator,
    :func:`_shared_inputs`, scattered to the workers): the course's config, the gradebook snapshot
    (no student), the source's extra files, the kernels' settings, the assignment's notebooks, the
    student editions of td_lib (sandboxed), the names a test may ask the kernel for, the known
    mistakes, how many notebooks of a submission a task grades at once."""

    config: str
    gradebook: bytes
    extras: dict[str, bytes]
    sandbox: bool
    notebooks: list[str]
    limits: dict = field(default_factory=dict)
    student_lib: dict[str, dict[str, bytes]] = field(default_factory=dict)
    declarable: dict[str, list[str]] = field(default_factory=dict)
    mistakes: dict = field(default_factory=dict)
    notebooks_at_once: int = 1


def _top_notebook(rel: str) -> bool:
    return rel.endswith(".ipynb") and "/" not in rel


def kernel_files(files: dict[str, bytes], extras: dict[str, bytes]) -> dict[str, bytes]:
    """What the grading kernel's folder holds: the course's extra files (data next to the
    source notebooks) and the submission's other files, never a notebook (``.ipynb`` anywhere,
    checkpoints included) nor nbgrader's ``timestamp.txt``."""
    def keep(rel: str) -> bool:
        return not rel.endswith(".ipynb") and ".ipynb_checkpoints" not in rel.split("/") and rel != "timestamp.txt"

    return {rel: data for rel, data in {**files, **extras}.items() if keep(rel)}


def _unreadable(name: str, data: bytes) -> str | None:
    """The error line of a notebook file that does not read as a valid notebook, else None."""
    try:
        nbformat.validate(nbformat.reads(data.decode(), as_version=4))
    except Exception as e:  # corrupt: left out, nbgrader scores it as missing
        return f"{name}: unreadable notebook ({type(e).__name__}: {str(e)[:120]})"
    return None


@dataclass
class _Setup:
    """What grading an assignment's notebooks needs that holds nothing of a student
    (:func:`_prepare`): its scratch folder, the loaded course config, the editions of td_lib on
    disk (mounted read-only in every sandbox). Made by the task that uses it and
    removed by it (:func:`_drop`): nothing is kept between tasks."""

    folder: Path
    config: Config
    editions: dict[str, str]
    runner_edition: str


def _prepare(inputs: AssignmentInputs, notebooks: list[str] | None = None) -> _Setup:
    """A fresh :class:`_Setup` for ``inputs`` in a new scratch folder, with the editions of
    ``notebooks`` (default: every notebook of the assignment) and the test runner's."""
    from tools.grading.sandbox import scratch_dir

    folder = Path(scratch_dir("grade"))
    try:
        os.chmod(folder, 0o711)  # sandboxes reach the editions below, cannot list the folder
        course = folder / "config"
        course.mkdir(mode=0o700)
        (course / "nbgrader_config.py").write_text(inputs.config)
        cfg = load_config(course)
        editions = _install_editions(folder, inputs, inputs.notebooks if notebooks is None else notebooks)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return _Setup(folder, cfg, editions, editions.pop(RUNNER_EDITION, ""))


def _drop(setup: _Setup) -> None:
    shutil.rmtree(setup.folder, ignore_errors=True)


def _task_config(setup: _Setup, course: Path, work: Path, inputs: AssignmentInputs, reports: Path) -> Config:
    """The private course's config: the task's autograde preprocessors, sandboxed kernels working
    in ``work`` with the grading limits, killed at once when their notebook is done, and what the
    executor's grader steps need (``tools.grading.execute.grader_steps``): where test cells run,
    the editions of td_lib (sandboxed), the names a test may ask the kernel for, the known
    mistakes, the folder of the notebooks' reports (``reports``)."""
    cfg = copy.deepcopy(setup.config)
    cfg.CourseDirectory.root = str(course)
    task_pps, _ = _split_preprocessors(cfg)
    cfg.Autograde.autograde_preprocessors = task_pps
    cfg.Execute.kernel_manager_class = "tools.grading.kernel.SandboxKernelManager"
    # Outputs are in once the last cell ran: kill the kernel (its whole PID namespace) at once
    # instead of nbclient's graceful shutdown (about 1 s per notebook).
    cfg.Execute.shutdown_kernel = "immediate"
    cfg.SandboxKernelManager.workdir = str(work)
    cfg.SandboxKernelManager.enabled = inputs.sandbox
    cfg.SandboxKernelManager.mpl_cache = os.environ.get("MPLCONFIGDIR", "")
    for k, v in inputs.limits.items():
        setattr(cfg.SandboxKernelManager, k, v)
    cfg.GradingExecute.runner = "sandbox" if inputs.sandbox else "process"
    cfg.GradingExecute.runner_edition = setup.runner_edition
    cfg.GradingExecute.editions = dict(setup.editions)
    cfg.GradingExecute.declarable = {nb: list(v) for nb, v in inputs.declarable.items()}
    cfg.GradingExecute.known_mistakes = dict(inputs.mistakes)
    cfg.GradingExecute.report_dir = str(reports)
    return cfg


def _install_editions(folder: Path, inputs: AssignmentInputs, notebooks: list[str]) -> dict[str, str]:
    """Sandboxed: write the student edition of td_lib of each of ``notebooks`` (and the test
    runner's, under :data:`RUNNER_EDITION`) under ``folder``, readable by the kernel's uid;
    notebook -> its folder."""
    editions: dict[str, str] = {}
    if not inputs.sandbox:
        return editions
    wanted = [(nb, files) for nb, files in inputs.student_lib.items() if nb in notebooks or nb == RUNNER_EDITION]
    for i, (nb, lib_files) in enumerate(wanted):
        lib = folder / "student_lib" / str(i) / "td_lib"
        _write_tree(lib, lib_files)
        for p in [lib.parent.parent, lib.parent, lib, *lib.rglob("*")]:
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        editions[nb] = str(lib)
    return editions


@dataclass
class _Staged:
    """One notebook of a submission written into a private course (:func:`_stage`), ready to grade."""

    notebook: str
    scratch: Path
    course: Path
    reports: Path
    cfg: Config


def _stage(sub: Submission, inputs: AssignmentInputs, setup: _Setup, notebook: str, data: bytes) -> _Staged:
    """A private course for one notebook of ``sub`` in a fresh scratch folder: the course's config,
    the gradebook snapshot (no student), the source folder's extra files, the submission's other
    files and this notebook; the kernel's working folder (``work``: the extra files and the
    student's own files, no notebook: the kernel receives the cells over ZMQ, the notebook under
    grading, hidden tests restored into it, stays in ``course``, outside the sandbox)."""
    from tools.grading.sandbox import scratch_dir

    scratch = Path(scratch_dir("grade"))
    try:
        os.chmod(scratch, 0o711)  # sandboxes may reach work/, not list or read the rest
        course = scratch / "course"
        course.mkdir(mode=0o700)
        (course / "source" / sub.assignment).mkdir(parents=True)
        (course / "nbgrader_config.py").write_text(inputs.config)
        (course / "gradebook.db").write_bytes(inputs.gradebook)
        _write_tree(course / "source" / sub.assignment, inputs.extras)
        files = {**sub.other_files(), f"{notebook}.ipynb": data}
        _write_tree(course / "submitted" / sub.student / sub.assignment, files)
        work = scratch / "work"
        work.mkdir()
        _write_tree(work, kernel_files(files, inputs.extras))
        if inputs.sandbox:  # read (then copied onto the kernel's capped tmpfs) by the kernel's own uid
            for p in [work, *work.rglob("*")]:
                os.chmod(p, 0o755 if p.is_dir() else 0o644)
        reports = scratch / "reports"
        reports.mkdir()
        cfg = _task_config(setup, course, work, inputs, reports)
        cfg.CourseDirectory.notebook_id = notebook
        return _Staged(notebook, scratch, course, reports, cfg)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def _autograde(api, assignment: str, student: str) -> tuple[bool, str, str]:
    """nbgrader's ``NbGraderAPI.autograde`` of one submission (SQLAlchemy's autoflush chatter
    inside nbgrader silenced): whether it succeeded, its error, its log."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcome = api.autograde(assignment, student, force=True, create=True)
    return bool(outcome.get("success")), outcome.get("error") or "", outcome.get("log") or ""


def _autograde_staged(cfg: Config, assignment: str, student: str) -> tuple[bool, str, str]:
    """nbgrader's ``Autograde`` of one staged submission, as ``NbGraderAPI.autograde`` runs it
    (``capture_log``), safe in one of several threads of a process: its own logger (the log of
    this notebook only, at the level of traitlets' logger) and no change of the process's working
    folder (:class:`_Autograde`). Whether it succeeded, its error, its log. The caller holds the
    process-wide settings (:func:`_grading_state`)."""
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.utils import capture_log
    from traitlets.log import get_logger

    coursedir = CourseDirectory(config=cfg)
    coursedir.assignment_id, coursedir.student_id = assignment, student
    logger = logging.Logger("tools.grading.notebook")  # not registered: gone with the task
    logger.setLevel(get_logger().getEffectiveLevel())
    app = _autograde_class()(coursedir=coursedir, config=cfg, log=logger)
    app.force, app.create_student = True, True
    outcome = capture_log(app)
    return bool(outcome.get("success")), outcome.get("error") or "", outcome.get("log") or ""


def _autograde_class():
    """:class:`nbgrader.converters.Autograde` without its two changes of process-wide state, which
    the threads grading a submission's notebooks share (nbgrader 0.9's code otherwise):

    - ``start`` as ``BaseConverter.start`` but without its ``os.chdir`` into the course (every path
      of a staged course is absolute);
    - ``convert_single_notebook`` as ``Autograde``'s but without ``utils.setenv(NBGRADER_EXECUTION=
      'autograde')``, which deletes the variable afterwards whatever it was (it saves
      ``os.environ.get(value)``, not ``get(key)``): another thread's kernel could start without it,
      and the second deletion raises ``KeyError``. :func:`_grading_state` holds it set instead."""
    from nbconvert.writers import FilesWriter
    from nbgrader.converters import Autograde
    from nbgrader.converters.base import BaseConverter

    class _Autograde(Autograde):
        def start(self) -> None:
            self.init_notebooks()
            self.writer = FilesWriter(parent=self, config=self.config)
            self.exporter = self.exporter_class(parent=self, config=self.config)
            for pp in self.preprocessors:
                self.exporter.register_preprocessor(pp)
            self.convert_notebooks()

        def convert_single_notebook(self, notebook_filename: str) -> None:
            self.log.info("Sanitizing %s", notebook_filename)
            self._sanitizing = True
            self._init_preprocessors()
            BaseConverter.convert_single_notebook(self, notebook_filename)
            notebook_filename = os.path.join(self.writer.build_directory, os.path.basename(notebook_filename))
            self.log.info("Autograding %s", notebook_filename)
            self._sanitizing = False
            self._init_preprocessors()
            try:
                BaseConverter.convert_single_notebook(self, notebook_filename)
            finally:
                self._sanitizing = True

    return _Autograde


def import_grader() -> None:
    """Import what grading a notebook needs (seconds on a busy machine), in one thread: two threads
    importing nbgrader at once fail on its circular imports. :func:`grade` has the workers do it
    in their event loop (``Client.run``) while it reads the assignment's inputs."""
    import nbclient  # noqa: F401
    import nbgrader.apps  # noqa: F401
    import nbgrader.converters  # noqa: F401
    import nbgrader.preprocessors  # noqa: F401

    import tools.env  # noqa: F401  (project-local Jupyter/IPython dirs on the worker)
    import tools.grading.execute  # noqa: F401
    import tools.grading.kernel  # noqa: F401
    import tools.grading.remote_tests  # noqa: F401


async def _import_grader_in_loop() -> None:
    """:func:`import_grader` as ``Client.run(..., wait=False)`` runs it: in the worker's event loop,
    which it holds until done, so no task of that worker starts (nor imports) meanwhile."""
    import_grader()


@contextlib.contextmanager
def _grading_state():
    """The process-wide settings a grading task holds while its notebooks run (in one thread or
    several): nbgrader's ``NBGRADER_EXECUTION=autograde`` (what ``nbgrader autograde`` sets around
    each notebook: set here once for all the task's notebooks, :func:`_autograde_class`),
    warnings silenced (SQLAlchemy's autoflush chatter inside nbgrader), the grader's modules
    imported (two threads importing nbgrader at once fail on its circular imports)."""
    import_grader()
    with nbcore.environ(NBGRADER_EXECUTION="autograde"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _run_staged(sub: Submission, staged: _Staged, rec: GradingRecord) -> None:
    """nbgrader's ``Autograde`` (sanitize, then the task's autograde preprocessors) on the staged
    notebook; its executed notebook, report and log into ``rec``."""
    ok, error, rec.log = _autograde_staged(staged.cfg, sub.assignment, sub.student)
    if not ok:
        rec.errors.append("nbgrader autograde failed: " + error[-600:])
    done = staged.course / "autograded" / sub.student / sub.assignment / f"{staged.notebook}.ipynb"
    if done.exists():
        rec.executed[done.name] = done.read_text()
    for p in sorted(staged.reports.glob("*.json")):
        rec.add_notebook(p.stem, NotebookReport.read(p))
    rec.notebooks = sorted(rec.executed)


def grade_notebook(sub: Submission, inputs: AssignmentInputs, notebook: str,
                   setup: _Setup | None = None) -> GradingRecord:
    """Grade ONE notebook (``notebook``, without ``.ipynb``) of ONE submission in a private course
    copy of its own, in a fresh kernel (sandboxed unless ``inputs.sandbox`` is off): the record of
    that notebook (executed notebook in :attr:`~tools.grading.record.GradingRecord.executed`, its
    report in the per-notebook tables, nbgrader's log, the errors: missing, unreadable, a failed
    run), not merged (no score). A Dask task of the live service; :func:`grade_submission` runs it
    for each notebook. ``setup``: the assignment's :func:`_prepare`, made (and removed) here if None."""
    with _grading_state():
        return _grade_one(sub, inputs, notebook, setup)


def _grade_one(sub: Submission, inputs: AssignmentInputs, notebook: str, setup: _Setup | None) -> GradingRecord:
    """:func:`grade_notebook` inside :func:`_grading_state` (one of several threads may run it)."""
    t0 = time.perf_counter()
    rec = GradingRecord(student=sub.student, assignment=sub.assignment, host=os.uname().nodename,
                        worker_pid=os.getpid())
    own = setup is None
    staged = None
    try:
        data = sub.notebook(notebook)
        if data is None:
            rec.errors.append(f"{notebook}.ipynb: missing from the submission")
        elif (bad := _unreadable(f"{notebook}.ipynb", data)) is not None:
            rec.errors.append(bad)
        else:
            if own:
                setup = _prepare(inputs, [notebook])
            staged = _stage(sub, inputs, setup, notebook, data)
            _run_staged(sub, staged, rec)
    except Exception as e:
        import traceback
        rec.errors.append(f"grading task failed: {type(e).__name__}: {e}\n{traceback.format_exc()[-800:]}")
    finally:
        if staged is not None:
            shutil.rmtree(staged.scratch, ignore_errors=True)
        if own and setup is not None:
            _drop(setup)
    rec.seconds = round(time.perf_counter() - t0, 2)
    return rec


def grade_submission(sub: Submission, inputs: AssignmentInputs) -> GradingRecord:
    """Dask task of ``make grade``: every notebook of one student's submission graded as
    :func:`grade_notebook` grades it (each in a private course copy and a fresh kernel of its own,
    one :func:`_prepare` for all), ``inputs.notebooks_at_once`` of them at a time (threads: each
    notebook's kernel and test runner are processes of their own), the largest notebooks first;
    one record, not merged yet."""
    t0 = time.perf_counter()
    errors = [f"not graded: {r}" for r in sub.refused]
    errors += [bad for rel, data in sub.files.items() if _top_notebook(rel) and rel[:-6] not in inputs.notebooks
               and (bad := _unreadable(rel, data)) is not None]
    parts: list[GradingRecord] = []
    setup = None
    try:
        with _grading_state():
            if any(sub.notebook(nb) is not None for nb in inputs.notebooks):
                setup = _prepare(inputs)
            largest_first = sorted(inputs.notebooks, key=lambda nb: -len(sub.notebook(nb) or b""))
            at_once = max(1, min(inputs.notebooks_at_once, len(largest_first)))
            if at_once == 1:
                done = {nb: _grade_one(sub, inputs, nb, setup) for nb in largest_first}
            else:
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(at_once, thread_name_prefix="td-notebook") as pool:
                    done = dict(zip(largest_first, pool.map(lambda nb: _grade_one(sub, inputs, nb, setup),
                                                            largest_first)))
            parts = [done[nb] for nb in inputs.notebooks]
    except Exception as e:
        import traceback
        errors.append(f"grading task failed: {type(e).__name__}: {e}\n{traceback.format_exc()[-800:]}")
    finally:
        if setup is not None:
            _drop(setup)
    rec = GradingRecord.combine(parts, sub.student, sub.assignment)
    rec.errors = errors + _intake_first(rec.errors)
    rec.host, rec.worker_pid = os.uname().nodename, os.getpid()
    rec.seconds = round(time.perf_counter() - t0, 2)
    return rec


def _intake_first(errors: list[str]) -> list[str]:
    """The notebooks left out as unreadable, then those missing, then the rest (the order of a
    submission's errors)."""
    def rank(e: str) -> int:
        return 0 if ": unreadable notebook (" in e else 1 if e.endswith(": missing from the submission") else 2

    return sorted(errors, key=rank)


# ----------------------------------------------------------------------- merge
def merge(result: GradingRecord, course: Path, cfg: Config) -> GradingRecord:
    """Write one task's executed notebooks (``result.executed``) into the course with nbgrader (the
    only writer); the submission's record: ``result`` with its scores from the gradebook."""
    from nbgrader.api import Gradebook
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    student, assignment = result.student, result.assignment
    _, merge_pps = _split_preprocessors(cfg)
    with tempfile.TemporaryDirectory(prefix="td-merge-") as d:
        stage = Path(d) / "executed"
        dest = stage / student / assignment
        src = course / "submitted" / student / assignment
        dest.mkdir(parents=True)
        files, _ = _read_tree(src)  # the submission's other files (timestamp.txt, data), as data
        for rel, data in files.items():
            if not _top_notebook(rel):
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                (dest / rel).write_bytes(data)
        for name, text in result.executed.items():
            (dest / name).write_text(text)
        mcfg = Config(cfg)
        mcfg.CourseDirectory.submitted_directory = str(stage)
        mcfg.Autograde.sanitize_preprocessors = []
        mcfg.Autograde.autograde_preprocessors = merge_pps
        if result.executed:
            api = NbGraderAPI(coursedir=CourseDirectory(config=mcfg), config=mcfg)
            ok, error, _ = _autograde(api, assignment, student)
        else:  # nothing readable: nbgrader's rule for a missing notebook, for every notebook
            _record_empty(course, assignment, student, mcfg)
            ok, error = True, ""
    record = dataclasses.replace(result, errors=list(result.errors), notebooks=sorted(result.executed))
    if not ok:
        record.errors.append("merge failed: " + error[-400:])
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        s = gb.find_submission(assignment, student)
        record.score, record.max_score, record.timestamp = s.score, s.max_score, str(s.timestamp)
        record.auto_score, record.auto_max = s.code_score, s.max_code_score
        record.hand_score, record.hand_max = s.written_score + s.task_score, s.max_written_score + s.max_task_score
        record.hand_pending = bool(s.needs_manual_grade)
    rec_dir = course / RESULTS_DIR / assignment
    rec_dir.mkdir(parents=True, exist_ok=True)
    record.write(rec_dir / f"{student}.json")
    return record


def _record_empty(course: Path, assignment: str, student: str, cfg: Config) -> None:
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


def _shared_inputs(course: Path, assignment: str, cfg: Config, sandbox: bool,
                   limits: dict | None) -> AssignmentInputs:
    """What every task of the assignment receives (:class:`AssignmentInputs`): the config, the
    student editions of td_lib (sandboxed), the gradebook snapshot, the source's extra files, the
    kernel settings, the notebooks."""
    answers = answer_ids(course, assignment)  # notebook -> its answer cells, in the gradebook's order
    notebooks = list(answers)
    student_lib = {}
    if sandbox:  # the submission's code runs against td_lib without the answers of its exercises
        from tools.build import student_edition

        for nb in notebooks:
            student_lib[nb] = student_edition.files(student_edition.cached(answers[nb], keep_general=False))
        # The test runner's: the handout's edition, what a student's laptop runs the same test cells
        # with (every exercise's answers cut, the engines a test may call, such as cnn_lcn.integrate, kept).
        student_lib[RUNNER_EDITION] = student_edition.files(student_edition.cached(student_edition.handout_exercises()))
    return AssignmentInputs(config=(course / "nbgrader_config.py").read_text(), student_lib=student_lib,
                            gradebook=gradebook_snapshot(course, assignment),
                            extras=source_extras(cfg, course, assignment), sandbox=sandbox, limits=limits or {},
                            notebooks=notebooks, declarable=answer_names(course, assignment, notebooks),
                            mistakes=mistakes.for_runner(assignment, notebooks))


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


def read_submission(course: Path, assignment: str, student: str) -> Submission:
    """``submitted/<student>/<assignment>/`` as a :class:`Submission` (its files as data)."""
    tree, refused = _read_tree(course / "submitted" / student / assignment)
    if refused:
        log.warning("%s: files not graded: %s", student, "; ".join(map(str, refused)))
    stamp = tree.get("timestamp.txt", b"").decode("utf-8", "replace").strip()
    return Submission(student, assignment, tree, stamp, [str(r) for r in refused])


def _submit(client, inputs_f, course: Path, assignment: str, todo: list[str]) -> dict:
    """One :func:`grade_submission` task per student of ``todo``; return future -> its submission."""
    futures = {}
    for s in todo:
        sub = read_submission(course, assignment, s)
        f = client.submit(grade_submission, sub, inputs_f, key=f"grade-{assignment}-{s}-{time.time_ns()}",
                          pure=False)
        futures[f] = sub
    return futures


def finish(task: GradingRecord, stamp: str, course: Path, cfg: Config) -> GradingRecord:
    """The record of one finished task (:func:`grade_submission`'s, or the live service's notebooks
    combined): merged into the course and written to ``course/.grade/<assignment>/<student>.json``;
    a task that could not merge keeps the old grades and says why (its record has no score)."""
    try:
        rec = merge(task, course, cfg)
    except Exception as e:  # the batch goes on; this student is reported and regraded next run
        return GradingRecord(student=task.student, seconds=task.seconds, flags=task.flags,
                             errors=[*task.errors, f"merge failed: {type(e).__name__}: {e}"])
    rec.submitted_stamp = stamp
    rec.write(course / RESULTS_DIR / task.assignment / f"{task.student}.json")
    return rec


def _record(future, sub: Submission, course: Path, cfg: Config) -> GradingRecord:
    """:func:`finish` for a Dask future of :func:`grade_submission`; a task that could not run
    (e.g. its workers kept dying) keeps the old grades and says why."""
    try:
        task = future.result()
    except Exception as e:
        return GradingRecord(student=sub.student, errors=[f"not graded: {type(e).__name__}: {e}"])
    return finish(task, sub.stamp, course, cfg)


def grade(assignment: str, course: Path = env.COURSE, client=None, workers: int | None = None,
          scheduler: str | None = None, force: bool = False, students: list[str] | None = None,
          sandbox: bool = True, limits: dict | None = None, progress: bool = True,
          echo=print, notebooks_at_once: int | None = None) -> dict[str, GradingRecord]:
    """Grade every (or every missing) submission; return student -> record. ``notebooks_at_once``:
    how many notebooks of a submission a task grades at once (default :func:`_at_once`)."""
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
    with contextlib.ExitStack() as stack:
        if client is None:
            client = _dask_client(stack, scheduler, workers)
        with contextlib.suppress(Exception):  # only how soon the first task starts depends on it
            client.run(_import_grader_in_loop, wait=False)  # the workers import while the inputs are read
        inputs = _shared_inputs(course, assignment, cfg, sandbox, limits)
        inputs.notebooks_at_once = notebooks_at_once or _at_once(client)
        inputs_f = client.scatter(inputs, broadcast=True)
        futures = _submit(client, inputs_f, course, assignment, todo)
        bar = tqdm(total=len(todo), unit="sub", desc=f"grading {assignment}", disable=not progress,
                   file=sys.stderr, dynamic_ncols=True)
        write = (lambda m: tqdm.write(m, file=sys.stderr)) if progress else echo
        for f in as_completed(futures):
            sub = futures[f]
            rec = _record(f, sub, course, cfg)
            records[sub.student] = rec
            write(log_line(rec))
            bar.update()
        bar.close()
    return records


def default_at_once(workers: int) -> int:
    """How many notebooks of a submission a task grades at once by default, ``workers`` sharing
    this machine's cores: with ``c`` cores per worker, ``c + 1`` if ``c >= 2`` (part of a notebook's
    time is spent waiting on its kernel's start and messages: one worker on two cores grades a
    ``td2_7`` submission in 7.7 s with three notebooks at a time, 8.5 s with two,
    benchmarks/bench_grading.py), else 1 (a worker per core, ``make grade``'s default)."""
    per = (os.cpu_count() or 1) // max(1, workers)
    return per + 1 if per >= 2 else 1


def _at_once(client) -> int:
    """:func:`default_at_once` for the workers of ``client``'s cluster (1 if it cannot tell)."""
    try:
        return default_at_once(len(client.scheduler_info().get("workers", {})))
    except Exception:  # noqa: BLE001 - one at a time, as before
        return 1


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
    p.add_argument("--notebooks-at-once", type=int, metavar="K",
                   help="notebooks of one submission a task grades at once, each in its own kernel "
                        "(default: c + 1 with c >= 2 CPU cores per worker, else 1)")
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
                 limits={"mem_limit": int(a.mem_gb * (1 << 30))}, notebooks_at_once=a.notebooks_at_once)
    bad = [s for s, r in recs.items() if r.errors or r.flags]
    print(f"graded {len(recs)} submission(s) of {a.assignment} in {time.perf_counter() - t0:.0f} s; "
          f"with errors or flags: {', '.join(bad) or 'none'}; library messages in {log_file}")
    return 1 if any(not r.graded for r in recs.values()) else 0


if __name__ == "__main__":
    # Run as the module tools.grading.grade, not as __main__: Dask then sends the grading task by
    # reference (the worker imports it), not by value with this script's globals.
    from tools.grading import grade as _module

    sys.exit(_module.main())
