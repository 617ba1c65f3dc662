"""The student path in a real browser: JupyterLab + headless Debian Chromium (Playwright).

One JupyterLab server (127.0.0.1, random token, project-local state under
``build/browser/state``, ``TD_QUICK=1``) serves a scratch folder ``build/browser/work``
holding copies of the released student notebooks. Each test opens one notebook in
Chromium, runs all cells with JupyterLab's *Run All Cells* command (continuing below each
cell that stopped the run, as a student would), waits for the kernel to go idle, and
checks what a student sees:

* every code cell ran (has an execution count);
* ordinary (non-exercise) cells ran without error; after the first exercise the only error
  they may show is the ``NotImplementedError`` of a function the student has not written;
* the first exercise's autograded test cell shows ``NotImplementedError``, in the saved
  notebook and on the page;
* opening it asks nothing (no kernel chooser), and saving it (File > Save) writes nothing
  but the notebook (no paired script).

A screenshot goes to ``build/browser/<notebook>.png`` and the executed notebook to
``build/browser/<notebook>.executed.ipynb``. The server is stopped through
``POST /api/shutdown`` (falling back to its PID) and no process may survive it.

Chromium comes from ``.ci/install_chromium.sh`` (apt); if it is missing these tests FAIL
with that instruction — they never skip silently. ``playwright install`` is never used.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import nbformat
import pytest

try:
    from tests import browser_support as bs
except ImportError:  # tests/ on sys.path (pytest's rootdir-less import mode)
    import browser_support as bs

pytestmark = [pytest.mark.browser, pytest.mark.timeout(1200)]

REQUIRED_ASSIGNMENT = "td2_7_learned_first"
SOURCE = bs.REPO / "course" / "source"


def _source_notebooks() -> list[tuple[str, str]]:
    return sorted((p.parent.name, p.stem) for p in SOURCE.glob("*/*.py")
                  if not p.name.startswith("_"))


def _release_params() -> list:
    """Every source notebook; the first of the required assignment is the fast, required
    case, the others are marked slow."""
    found = _source_notebooks()
    required = [nb for a, nb in found if a == REQUIRED_ASSIGNMENT][:1]
    params = []
    if not required:  # never let the required case vanish from the run
        params.append(pytest.param(REQUIRED_ASSIGNMENT, None,
                                   id=f"{REQUIRED_ASSIGNMENT}/<first notebook>"))
    for assignment, stem in found:
        first = assignment == REQUIRED_ASSIGNMENT and [stem] == required
        params.append(pytest.param(assignment, stem, id=f"{assignment}/{stem}",
                                   marks=() if first else (pytest.mark.slow,)))
    return params


# -------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def lab(chromium: Path):
    """A JupyterLab server for this module; stopped by its API, and nothing may survive."""
    work = bs.BUILD / "work"
    if work.exists():
        shutil.rmtree(work)
    server = bs.JupyterLab(root=work, state=bs.BUILD / "state",
                           log_path=bs.BUILD / "jupyterlab.log", quick=True)
    server.start()
    try:
        yield server
    finally:
        strays = server.stop()
    if server.stopped_by != "api":
        warnings.warn(f"JupyterLab ignored POST /api/shutdown; stopped by {server.stopped_by} "
                      f"to its PID {server.proc.pid}", stacklevel=1)
    assert not strays, ("processes survived the JupyterLab server (stopped by "
                        f"{server.stopped_by}):\n" + "\n".join(strays) + "\n"
                        + server.log_tail())


@pytest.fixture(scope="module")
def browser(chromium: Path):
    with bs.chromium_browser() as b:
        yield b


@pytest.fixture(scope="module")
def released(lab: bs.JupyterLab):
    """assignment -> its release folder copied into the server root (built once)."""
    cache: dict[str, Path] = {}

    def get(assignment: str) -> Path:
        if assignment not in cache:
            try:  # tools imports from anywhere (the project is installed editable)
                from tools.build.pipeline import ensure_release
            except ImportError as exc:
                pytest.fail(f"tools/build/pipeline.py (ensure_release) is needed to build the "
                            f"student release: {exc}", pytrace=False)
            src = ensure_release(assignment)
            cache[assignment] = bs.copy_tree(src, lab.root / assignment)
        return cache[assignment]

    return get


# ------------------------------------------------------------------------------ checking
def student_view_problems(run: bs.NotebookRun) -> list[str]:
    """What is wrong with the notebook a student just ran (empty list if nothing)."""
    cells = run.cells
    problems = bs.stub_run_problems(cells)
    target = bs.first_exercise_test(cells)
    if run.dialogs:
        kernelspec = run.notebook.get("metadata", {}).get("kernelspec")
        problems.append(f"JupyterLab asked the student something on the way: {run.dialogs}"
                        + ("" if kernelspec else " (the notebook has no metadata.kernelspec, "
                           "so JupyterLab asks which kernel to start: keep the kernelspec in "
                           "released notebooks)"))
    if run.new_files:
        pairing = run.notebook.get("metadata", {}).get("jupytext", {}).get("formats")
        problems.append(f"saving the notebook created {run.new_files} beside it"
                        + (f" (the notebook's metadata.jupytext.formats = {pairing!r} pairs it "
                           f"with a script: strip metadata.jupytext from released notebooks)"
                           if pairing else ""))
    if target is not None:
        gid = bs.nbgrader_meta(cells[target]).get("grade_id", "")
        shown = run.rendered.get(target) or ""
        if "NotImplementedError" not in shown:
            problems.append(f"the page does not show NotImplementedError under test cell "
                            f"{target} ({gid}); it shows: {shown[:300]!r}")
    return problems


def run_and_check(lab: bs.JupyterLab, browser, rel_path: str, name: str) -> bs.NotebookRun:
    shot = bs.BUILD / f"{name}.png"
    run = bs.run_notebook(browser, lab, rel_path, screenshot=shot,
                          executed_copy=bs.BUILD / f"{name}.executed.ipynb")
    problems = student_view_problems(run)
    assert not problems, (f"{rel_path} in the browser ({run.seconds:.1f} s, runs started at "
                          f"cells {run.rounds}):\n  " + "\n  ".join(problems)
                          + "\n--- browser console ---\n" + "\n".join(run.console[-30:])
                          + "\n" + lab.log_tail(60))
    assert shot.exists() and shot.stat().st_size > 10_000, f"screenshot {shot} missing or empty"
    return run


# --------------------------------------------------------------------------------- tests
def _synthetic_notebook() -> nbformat.NotebookNode:
    """A small nbgrader-style *student* notebook (as generate_assignment releases it)."""
    def meta(**kw) -> dict:
        return {"nbgrader": {"schema_version": 3, "task": False, **kw}}

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# A tiny exercise\nWrite `f`, which doubles its input."),
        nbformat.v4.new_code_cell("import numpy as np\nprint(np.pi)"),
        nbformat.v4.new_code_cell(
            "def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()",
            metadata=meta(grade=False, grade_id="ex_f", locked=False, solution=True)),
        nbformat.v4.new_code_cell(
            'assert f(2) == 4, "f should double its input"',
            metadata=meta(grade=True, grade_id="test_ex_f", locked=True, points=1,
                          solution=False)),
        nbformat.v4.new_code_cell("import os\nprint('quick mode:', os.environ.get('TD_QUICK'))"),
    ]
    return nb


def test_browser_harness_on_a_synthetic_notebook(lab: bs.JupyterLab, browser) -> None:
    """The harness itself: runs past the failing test cell and reads what the page shows."""
    folder = lab.root / "synthetic"
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(_synthetic_notebook(), str(folder / "tiny.ipynb"))
    run = run_and_check(lab, browser, "synthetic/tiny.ipynb", "synthetic_tiny")
    out = {i: "".join(o.get("text", "") for o in c.get("outputs", []))
           for i, c in enumerate(run.cells) if c["cell_type"] == "code"}
    assert out[1].startswith("3.14159"), f"demo cell printed {out[1]!r}, expected pi"
    assert "3.14159" in run.rendered[1], f"the page shows {run.rendered[1]!r} under the demo"
    assert out[4].strip() == "quick mode: 1", (
        f"the kernel should inherit TD_QUICK=1 from the server; it printed {out[4]!r}")
    assert run.rounds == [0, 4], (
        f"expected Run All Cells to stop at the failing test (cell 3) and the run to "
        f"resume at cell 4; runs started at {run.rounds}")
    # The notebook model is valid nbformat, as JupyterLab would save it.
    nbformat.validate(nbformat.from_dict(run.notebook))


@pytest.mark.parametrize(("assignment", "stem"), _release_params())
def test_released_notebook_in_browser(lab: bs.JupyterLab, browser, released,
                                      assignment: str, stem: str | None) -> None:
    if stem is None:
        pytest.fail(f"no source notebook under {SOURCE / assignment}: the browser test needs "
                    f"the first notebook of {assignment}", pytrace=False)
    folder = released(assignment)
    nb_file = folder / f"{stem}.ipynb"
    assert nb_file.exists(), (f"ensure_release({assignment!r}) did not produce {nb_file.name}; "
                              f"it holds {sorted(p.name for p in folder.iterdir())}")
    run_and_check(lab, browser, f"{assignment}/{stem}.ipynb", stem)
