"""Shared pytest configuration: project-local Jupyter state, repo paths."""

from __future__ import annotations

from pathlib import Path

import pytest

import tools.env  # noqa: F401  (sets JUPYTER_*/IPYTHONDIR/MPLCONFIGDIR before anything runs)

REPO = Path(__file__).resolve().parent.parent


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
