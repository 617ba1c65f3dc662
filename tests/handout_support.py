"""The student handout installed in a fresh venv, once per test session.

:func:`student_env` builds the handout (``tools.build.handout.build``) into a temporary folder
outside the repository, copies nothing else there, and installs it into a new venv with
``pip install -r requirements-student.txt td_lib-*.whl`` (plus ``jupyterhub``'s pins, so
``tests/test_hub.py`` can spawn student servers from the same environment). pip's cache
keeps the second and later installs short. The folder is removed when the session exits.
:func:`built_handout` builds the handout once per session for it and for the tests that read the
handout itself (``tests/test_handout.py``'s ``dist``); each gets a copy of its own.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tools.build import handout


@dataclass
class StudentEnv:
    root: Path  # temporary folder, outside the repository
    dist: Path  # the handout, as a student gets it
    venv: Path
    python: Path
    seconds: dict  # phase -> seconds (build, install)

    def run(self, *args: str, cwd: Path | None = None, env: dict | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess:
        """Run the venv's python (never the repo's) with a clean environment."""
        return subprocess.run([str(self.python), *args], cwd=cwd or self.dist, env=env or self.env(),
                              capture_output=True, text=True, timeout=timeout)

    def env(self, **extra: str) -> dict[str, str]:
        home = self.root / "home"
        home.mkdir(exist_ok=True)
        keep = {k: os.environ[k] for k in ("LANG", "LC_ALL", "TZ") if k in os.environ}
        return {**keep, "HOME": str(home), "PATH": f"{self.venv / 'bin'}:/usr/bin:/bin",
                "MPLCONFIGDIR": str(home / ".mpl"), "PYDEVD_DISABLE_FILE_VALIDATION": "1", **extra}


@functools.cache
def built_handout() -> Path:
    """``handout.build(fresh=False)`` once per session, in a temporary folder outside the
    repository; callers copy it (:func:`copy_handout`) and never change this one."""
    root = Path(tempfile.mkdtemp(prefix="td-handout-build-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return handout.build(root / "dist", fresh=False)


def copy_handout(dst: Path) -> Path:
    """A copy of :func:`built_handout` at ``dst`` (timestamps kept): the handout as built."""
    return Path(shutil.copytree(built_handout(), dst, symlinks=True))


@functools.cache
def student_env() -> StudentEnv:
    reuse = os.environ.get("TD_TEST_HANDOUT_ROOT")  # development loop: a root built earlier
    if reuse:
        root = Path(reuse)
        return StudentEnv(root, root / "dist", root / "venv", root / "venv" / "bin" / "python", {"reused": 0})
    root = Path(tempfile.mkdtemp(prefix="td-handout-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    t0 = time.monotonic()
    dist = copy_handout(root / "dist")
    t1 = time.monotonic()
    py = handout.install(dist, root / "venv", extra_requirements=handout.hub_requirements())
    t2 = time.monotonic()
    return StudentEnv(root, dist, root / "venv", py, {"build": round(t1 - t0, 1), "install": round(t2 - t1, 1)})
