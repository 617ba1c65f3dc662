"""Project-local state: Jupyter, IPython and matplotlib write under ``.state/``, not $HOME.

Importing this module sets the environment variables (if not already set) and writes the
IPython kernel profile that makes tracebacks minimal (so autograder feedback never prints
the source lines of a hidden test).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STATE = REPO / ".state"
COURSE = REPO / "course"
SOURCE = COURSE / "source"
BUILD = REPO / "build"

_DIRS = {
    "JUPYTER_CONFIG_DIR": STATE / "jupyter" / "config",
    "JUPYTER_DATA_DIR": STATE / "jupyter" / "data",
    "JUPYTER_RUNTIME_DIR": STATE / "jupyter" / "runtime",
    "IPYTHONDIR": STATE / "ipython",
    "MPLCONFIGDIR": STATE / "matplotlib",
}

KERNEL_CONFIG = """\
# Written by tools/env.py: minimal tracebacks (exception type and message only), so that
# autograder feedback never shows the source lines of hidden tests.
c.InteractiveShell.xmode = "Minimal"
"""


def setup() -> dict[str, str]:
    """Set the project-local environment in ``os.environ`` and return it."""
    for key, path in _DIRS.items():
        os.environ.setdefault(key, str(path))
        Path(os.environ[key]).mkdir(parents=True, exist_ok=True)
    # nbgrader shells out to `alembic`, the kernels to the venv's python: put the
    # interpreter's own bin folder first on PATH.
    bindir = str(Path(sys.executable).parent)
    if os.environ.get("PATH", "").split(os.pathsep)[0] != bindir:
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    profile = Path(os.environ["IPYTHONDIR"]) / "profile_default"
    profile.mkdir(parents=True, exist_ok=True)
    cfg = profile / "ipython_kernel_config.py"
    if not cfg.exists() or cfg.read_text() != KERNEL_CONFIG:
        cfg.write_text(KERNEL_CONFIG)
    return {k: os.environ[k] for k in _DIRS}


setup()
