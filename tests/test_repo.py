"""Repository-level contracts: pinned environment, README commands, CI entry point."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _requirements() -> list[str]:
    return [ln.strip() for ln in (REPO / "requirements.txt").read_text().splitlines()
            if ln.strip() and not ln.startswith("#")]


def test_environment_yml_matches_requirements():
    text = (REPO / "environment.yml").read_text()
    pip_block = re.findall(r"^\s+- ([^\s].*)$", text.split("- pip:")[1], re.M)
    pins = [p for p in pip_block if not p.startswith("-e")]
    assert sorted(pins) == sorted(_requirements()), (
        "environment.yml and requirements.txt must pin the same packages; differences: "
        f"{sorted(set(pins) ^ set(_requirements()))}")


def test_everything_pinned_and_torch_is_the_cpu_release():
    reqs = _requirements()
    loose = [r for r in reqs if "==" not in r]
    assert not loose, f"unpinned requirements: {loose}"
    assert "torch==2.13.0" in reqs, "torch must be pinned to 2.13.0 (the CPU build on disk)"
    for needed in ("numpy", "scipy", "torch", "matplotlib", "jupyterlab", "nbgrader", "jupytext",
                   "pytest", "tqdm"):
        assert any(r.lower().startswith(needed + "==") for r in reqs), f"{needed} missing"


def test_readme_gives_exactly_the_two_commands_and_ci_calls_the_test_one():
    readme = (REPO / "README.md").read_text()
    block = re.search(r"```(?:bash|sh)?\n(.*?)```", readme, re.S).group(1)
    cmds = [ln.split("#")[0].strip() for ln in block.splitlines() if ln.split("#")[0].strip()]
    assert cmds == ["make", "make test"], f"README's first code block should be the two commands, got {cmds}"
    ci = (REPO / ".ci" / "run").read_text()
    assert re.search(r"^\s*(exec\s+)?make test\s*$", ci, re.M), ".ci/run must call `make test`"


def test_gitignore_keeps_generated_files_out():
    ignored = (REPO / ".gitignore").read_text()
    for pattern in ("course/source/**/*.ipynb", "course/release/", "course/submitted/",
                    "course/autograded/", "course/feedback/", "course/gradebook.db", ".venv/"):
        assert pattern in ignored, f"{pattern} should be git-ignored"


def test_the_machinery_list_names_test_files_that_exist():
    """conftest.MACHINERY leaves files out of make test-numerics: a renamed file must not fall out
    of the list silently, nor a stale name stay in it."""
    try:
        from tests.conftest import MACHINERY
    except ImportError:  # tests/ on sys.path (pytest's rootdir-less import mode)
        from conftest import MACHINERY

    assert MACHINERY, "no file names in conftest.MACHINERY"
    missing = sorted(n for n in MACHINERY if not (REPO / "tests" / n).is_file())
    assert not missing, f"conftest.MACHINERY names files that do not exist: {missing}"
