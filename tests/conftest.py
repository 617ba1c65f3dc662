"""Shared pytest configuration: project-local Jupyter state, repo paths."""

from __future__ import annotations

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
    """One assignment's fake class (every student of ``tools.pipeline.STUDENTS``):
    ``pristine`` is the course as collected (nothing graded), ``course`` the same course after
    serial ``nbgrader autograde`` and ``generate_feedback`` -- the reference that both the
    pipeline test (scores, feedback, checksum warnings) and the parallel grader's test
    (identical table) read. Tests must not modify either (clone ``pristine`` to grade it)."""

    course: Path
    pristine: Path
    plan: object
    log: str


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory):
    """``graded_class(assignment) -> GradedClass``, built once per session and assignment."""
    from tools import pipeline

    cache: dict[str, GradedClass] = {}

    def get(assignment: str) -> GradedClass:
        if assignment not in cache:
            base = tmp_path_factory.mktemp(f"class-{assignment}")
            course, plan = pipeline.scratch_course(base / "course", assignment)
            pristine = base / "pristine"
            shutil.copytree(course, pristine, symlinks=True)
            log = pipeline.autograde(assignment, course=course)
            plan.autograde_log = log
            pipeline.nbgrader("generate_feedback", assignment, "--force", course=course)
            cache[assignment] = GradedClass(course, pristine, plan, log)
        return cache[assignment]

    return get
