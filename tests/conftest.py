"""Shared pytest configuration: project-local Jupyter state, repo paths."""

from __future__ import annotations

from pathlib import Path

import pytest

import tools.env  # noqa: F401  (sets JUPYTER_*/IPYTHONDIR/MPLCONFIGDIR before anything runs)

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
