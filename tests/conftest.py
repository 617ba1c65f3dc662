"""Shared pytest configuration: project-local Jupyter state, repo paths."""

from __future__ import annotations

import fcntl
import functools
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

import tools.env  # noqa: F401  (sets JUPYTER_*/IPYTHONDIR/MPLCONFIGDIR before anything runs)

REPO = Path(__file__).resolve().parent.parent


def pytest_report_header(config) -> str:
    """One line with the BLAS libraries, their kernels and threads and torch's threads in force:
    numbers that agree to a few ulps depend on them (tests/numerics_support.py, make test-numerics)."""
    try:
        from tests import numerics_support as ns
    except ImportError:  # tests/ on sys.path (pytest's rootdir-less import mode)
        import numerics_support as ns
    return ns.describe()


#: Test files about the course's machinery (build, exchange, grading, pages, the repository's own
#: structure): their verdicts do not depend on the order of floating-point reductions, so the
#: second numeric configuration (``make test-numerics``: one BLAS/OpenMP/torch thread) leaves
#: them out. Every other unit test runs in both configurations: td_lib's and checks' tests, and
#: those that run the course's exercises and tests against solutions, fake students and mutants.
MACHINERY = frozenset({
    "test_budgets.py", "test_cli_help.py", "test_clone.py", "test_code_counts.py", "test_collect_zip.py",
    "test_edition_answers.py", "test_equation_index.py", "test_exchange_identity.py", "test_feedback_page.py",
    "test_grade.py", "test_grade_notebook.py", "test_handout.py", "test_hub.py", "test_install_resolution.py",
    "test_instructor_path.py", "test_layers.py", "test_live_grading.py", "test_live_grading_hub.py",
    "test_live_grading_pages.py", "test_mistakes.py", "test_nbgrader_ext.py", "test_no_student_script.py",
    "test_one_place.py", "test_pipeline.py", "test_release_lint.py", "test_remote_tests.py", "test_report.py",
    "test_repo.py", "test_safe_files.py", "test_site.py", "test_student_edition.py", "test_student_lab.py",
    "test_tick_last.py", "test_tools.py", "test_trust_boundary.py",
})


#: What several test files share once per process, too costly to build on both workers of the
#: slow session (``make test``: ``pytest -n 2 --dist loadgroup``): a session fixture (by name; a
#: test reaches it directly or through other fixtures) or a function of ``tests/*_support.py``
#: cached per process (by the name a test module imports it under) -> the xdist group of every
#: file that reaches it.
SHARED = {
    "grading_client": "grading",  # the Dask cluster of 2 workers: graded_class, mistake_classes, ...
    "student_env": "student_env",  # tests/handout_support.py: the handout installed in a fresh venv
}


def xdist_groups(items) -> dict[str, str]:
    """Test file name -> its xdist group: the file itself, so that module fixtures are built once,
    or, for files reaching one of :data:`SHARED`, one group per connected set of such files, so
    that a session fixture is built once (and two graded classes never grade at the same time)."""
    reaches: dict[str, set[str]] = {}
    for item in items:
        names = set(getattr(item, "fixturenames", ())) | set(vars(getattr(item, "module", None) or object))
        reaches.setdefault(item.path.name, set()).update(SHARED[n] for n in SHARED if n in names)
    parent = {g: g for g in SHARED.values()}

    def find(g: str) -> str:
        while parent[g] != g:
            g = parent[g]
        return g

    for groups in reaches.values():  # two shared things reached by one file: one group
        first, *rest = sorted(groups) or [None]
        for g in rest:
            parent[find(g)] = find(first)
    return {f: find(min(gs)) if gs else f for f, gs in reaches.items()}


@pytest.hookimpl(tryfirst=True)  # before xdist reads the xdist_group marks, and before -m deselects
def pytest_collection_modifyitems(config, items) -> None:
    """Mark the tests of :data:`MACHINERY` files ``machinery``; under ``--dist loadgroup`` put
    every test in its file's group (:func:`xdist_groups`)."""
    for item in items:
        if item.path.name in MACHINERY:
            item.add_marker(pytest.mark.machinery)
    if getattr(config.option, "loadgroup", False):  # set on xdist's workers under --dist loadgroup
        groups = xdist_groups(items)
        for item in items:
            group = groups[item.path.name]
            item.add_marker(pytest.mark.xdist_group(group))
            if hasattr(item, "_id"):
                # xdist's scheduler reads the group from the nodeid's "@group" suffix, which
                # pytest-xdist 3.8 appends to item._nodeid; pytest 9.2 keeps the id in item._id
                # (a NodeId) and ignores _nodeid, so the suffix is appended here.
                item._id = type(item._id).parse(f"{item.nodeid}@{group}")
                if not item.nodeid.endswith(f"@{group}"):  # never silently ungrouped
                    raise pytest.UsageError(f"cannot put {item.nodeid} in xdist group {group}")


@pytest.fixture(scope="session", autouse=True)
def _one_release_at_a_time(tmp_path_factory):
    """Under pytest-xdist, ``tools.build.pipeline.ensure_release`` holds a lock shared by the
    workers for the repository's course: two workers releasing the same assignment at once
    (``course/release``, the synced ``course/source/*.ipynb``, the gradebook) would read each
    other's half-written files. Nothing else changes: a release that is up to date is returned."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    from tools import env
    from tools.build import pipeline

    lock = tmp_path_factory.getbasetemp().parent / "ensure_release.lock"  # one for the test run
    unlocked = pipeline.ensure_release

    @functools.wraps(unlocked)
    def ensure_release(assignment: str, course: Path = env.COURSE) -> Path:
        if Path(course).resolve() != env.COURSE.resolve():  # a test's scratch course: its own
            return unlocked(assignment, course)
        with open(lock, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)  # released when f is closed
            return unlocked(assignment, course)

    pipeline.ensure_release = ensure_release
    try:
        yield
    finally:
        pipeline.ensure_release = unlocked


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's Chromium for the browser tests; they FAIL (never skip) when it is missing."""
    try:
        from tests import browser_support as bs
    except ImportError:  # tests/ on sys.path (pytest's rootdir-less import mode)
        import browser_support as bs

    problem = bs.chromium_problem()
    if problem:
        pytest.fail(f"Chromium is required for the browser tests: {problem}", pytrace=False)
    return bs.CHROMIUM


@dataclass
class GradedClass:
    """One assignment's fake class (every student of ``tools.build.pipeline.STUDENTS``):
    ``pristine`` is the course as collected (nothing graded), ``course`` the same course graded
    as ``make grade`` grades it (``tools.grading.grade``: sandboxed where bubblewrap runs, on the
    session's Dask cluster) with nbgrader's ``generate_feedback`` after it: what the pipeline
    test (scores, feedback, checksum warnings) and the report read. ``records``: the grading
    records; ``log``: nbgrader's logs of the tasks. Tests must not modify either course (clone
    ``pristine`` to grade it). tests/test_grade.py proves, on one notebook and every kind of
    student, that this grader gives what serial ``nbgrader autograde`` gives."""

    course: Path
    pristine: Path
    plan: object
    log: str
    records: dict


@pytest.fixture(scope="session")
def grading_client():
    """One local Dask cluster of two worker processes for every test that grades (2 cores)."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as c:
        yield c


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory, grading_client):
    """``graded_class(assignment) -> GradedClass``, built once per session and assignment."""
    from tools.build import pipeline
    from tools.grading import grade, sandbox

    cache: dict[str, GradedClass] = {}

    def get(assignment: str) -> GradedClass:
        if assignment not in cache:
            base = tmp_path_factory.mktemp(f"class-{assignment}")
            course, plan = pipeline.scratch_course(base / "course", assignment)
            pristine = base / "pristine"
            shutil.copytree(course, pristine, symlinks=True)
            records = grade.grade(assignment, course, client=grading_client, progress=False,
                                  sandbox=sandbox.available()[0], echo=lambda *a: None)
            log = grade.combined_log(records)
            plan.autograde_log = log
            pipeline.nbgrader("generate_feedback", assignment, "--force", course=course)
            cache[assignment] = GradedClass(course, pristine, plan, log, records)
        return cache[assignment]

    return get
