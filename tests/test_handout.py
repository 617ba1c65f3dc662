"""The student handout (``python -m tools.build.handout`` / ``make handout``).

* what is in it: the released notebooks of every assignment, one wheel holding ``td_lib``
  only, pinned student requirements, the student Jupyter config, a README; and what is not
  (:func:`tools.build.handout.leaks`: solution text, hidden-test text, ``.py`` sources, markers);
  the leak check itself is shown to catch planted leaks;
* that it works with nothing but itself: installed into a fresh venv in a temporary folder
  (``tests/handout_support.py``), ``checks`` and ``tools`` do not import, and every released
  notebook runs top to bottom with its exercises left as stubs on that venv's kernel
  (``TD_QUICK=1``), judged as the browser test judges a student's run: every code cell ran,
  ordinary cells before the first test raised nothing, afterwards only an unwritten
  exercise's ``NotImplementedError``; the first exercise's test reports it; no visible test
  needs anything but ``td_lib`` (no ``ModuleNotFoundError``);
* that the handout's td_lib is the student edition (no counterpart of the exercises it cuts
  imports, no line names an exercise), and that every released notebook with the right answers
  filled in (the fake student "solution") runs there with no error at all: its demos use the
  student's functions where the edition has no library version.
"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path

import nbformat
import pytest

try:
    from tests import browser_support as bs
    from tests.handout_support import copy_handout, student_env
except ImportError:  # tests/ on sys.path
    import browser_support as bs
    from handout_support import copy_handout, student_env

from tools import env, nbcore
from tools.build import fake_students, handout, pipeline, student_edition

pytestmark = [pytest.mark.pipeline, pytest.mark.timeout(2400)]


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """``handout.build(fresh=False)``: a copy of the build that student_env installs (built once)."""
    return copy_handout(tmp_path_factory.mktemp("handout") / "dist")


def test_handout_holds_what_a_student_needs(dist: Path) -> None:
    for a in pipeline.assignments():
        want = sorted(p.stem + ".ipynb" for p in pipeline.source_paths(a))
        assert sorted(p.name for p in (dist / handout.NOTEBOOKS / a).iterdir()) == want, f"{a} in the handout"
    assert sorted(p.name for p in (dist / handout.NOTEBOOKS).iterdir()) == sorted(pipeline.assignments()), (
        "JupyterLab opens notebooks/: only the assignments belong there")
    (wheel,) = dist.glob("td_lib-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith((".dist-info", ".data"))} == {"td_lib"}, tops
    data = [n for n in names if n.split("/")[0].endswith(".data")]
    assert [n.split("/", 2)[2] for n in data] == [str(handout.KERNEL_CONFIG)], data
    lib = sorted(str(p.relative_to(env.REPO)) for p in (env.REPO / "td_lib").rglob("*.py"))
    assert sorted(n for n in names if n.endswith(".py")) == lib, "the wheel should hold td_lib's modules"
    reqs = [ln for ln in (dist / "requirements-student.txt").read_text().splitlines()
            if ln and not ln.startswith("#")]
    # the one install command takes torch's CPU build on Linux (tests/test_install_resolution.py)
    assert reqs.pop(0) == f"--extra-index-url {handout.CPU_INDEX}", "the CPU index must come first"
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+==[^=\s;]+( ; .+)?", r) for r in reqs), reqs  # pin ; where needed
    names_ = {r.split("==")[0].lower().replace("_", "-") for r in reqs}
    for needed in ("numpy", "scipy", "torch", "matplotlib", "tqdm", "jupyterlab", "nbgrader", "ipykernel"):
        assert needed in names_, f"{needed} missing from requirements-student.txt"
    assert "torch==2.13.0" in reqs
    for tool in ("jupytext", "pytest", "ruff", "playwright", "jupyterhub"):
        assert tool not in names_, f"{tool} is an instructor tool: not in the student requirements"
    readme = (dist / "README.md").read_text()
    assert f"pip install -r requirements-student.txt {wheel.name}" in readme
    start = f"JUPYTER_CONFIG_PATH=jupyter-config .venv/bin/jupyter lab --ServerApp.root_dir={handout.NOTEBOOKS}"
    assert start in readme
    assert f"python{handout.PYTHONS[0]} -m venv .venv" in readme and handout.requires_python() in readme
    for words in ("Windows", "macOS", "Hand in", "_td2_7_1_two_moments.ipynb", "hidden tests", *handout.PYTHONS):
        assert words in readme, f"the handout's README does not say {words!r}"
    # a laptop has no exchange: no assignment list (it would show errors), Validate stays
    page = json.loads((dist / "jupyter-config" / "labconfig" / "page_config.json").read_text())
    assert set(page["disabledExtensions"]) == set(handout.INSTRUCTOR_LAB_PLUGINS + handout.QUIET_LAB_PLUGINS
                                                  + handout.EXCHANGE_LAB_PLUGINS)
    assert "@jupyter/nbgrader:menu" in page["disabledExtensions"], "an empty Nbgrader menu in the Lab"
    srv = json.loads((dist / "jupyter-config" / "jupyter_server_config.d" / "td-student.json").read_text())
    exts = srv["ServerApp"]["jpserver_extensions"]
    assert exts["nbgrader.server_extensions.validate_assignment"] is True
    assert exts["nbgrader.server_extensions.assignment_list"] is False
    # kernels on encrypted connections: no "Kernel is running over TCP without encryption" per kernel
    server = json.loads((dist / "jupyter-config" / "jupyter_server_config.json").read_text())
    assert server == {"MappingKernelManager": {"transport_encryption": "auto"}}, server
    assert handout.leaks(dist) == []


def test_deploy_student_config_is_the_generated_one(tmp_path: Path) -> None:
    """The hub's student config is what write_student_config writes with an exchange."""
    deploy = env.REPO / "deploy" / "student-config"
    fresh = handout.write_student_config(tmp_path / "cfg", exchange=True)
    for rel in ("labconfig/page_config.json", "jupyter_server_config.d/td-student.json", "jupyter_server_config.json"):
        assert (deploy / rel).read_text() == (fresh / rel).read_text(), (
            f"deploy/student-config/{rel} is stale: "
            "python -m tools.build.handout --student-config deploy/student-config")


def test_leak_check_catches_planted_leaks(dist: Path, tmp_path: Path) -> None:
    bad = shutil.copytree(dist, tmp_path / "dist")
    a = pipeline.assignments()[0]
    src = pipeline.source_paths(a)[0]
    # plant lines only the instructor has: a secret line that td_lib's own code also holds
    # (e.g. ``C = np.asarray(C, dtype=float)``) is shown to every student by design
    lib = handout.library_lines()
    secret = {s: w for s, w in handout.secret_lines().items() if s not in lib}
    sol = next(s for s, w in secret.items() if w.startswith(src.name) and "solution" in w)
    hid = next((s for s, w in secret.items() if "hidden" in w), None)
    nb_path = bad / handout.NOTEBOOKS / a / (src.stem + ".ipynb")
    nb = nbformat.read(str(nb_path), as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(sol + "\n" + (hid or "")))
    nbformat.write(nb, str(nb_path))
    shutil.copy2(src, bad / handout.NOTEBOOKS / a / src.name)
    problems = "\n".join(handout.leaks(bad))
    assert f"source file in the handout: {handout.NOTEBOOKS}/{a}/{src.name}" in problems
    assert sol[:70] in problems, problems
    if hid:
        assert hid[:70] in problems, problems


# ---------------------------------------------------------------- installed and run
RUNNER = r"""
import json, sys
import nbformat
from nbclient import NotebookClient
src, out = sys.argv[1], sys.argv[2]
nb = nbformat.read(src, as_version=4)
NotebookClient(nb, timeout=600, allow_errors=True, kernel_name="python3",
               resources={"metadata": {"path": str(__import__("pathlib").Path(src).parent)}}).execute()
nbformat.write(nb, out)
"""


def _execute_in_handout_env(s, notebook: Path) -> list:
    """Run ``notebook`` top to bottom (quick mode) on the handout venv's kernel, with the venv's
    own Jupyter and IPython state under its temporary HOME; return the executed cells."""
    out = notebook.with_name(notebook.stem + ".executed.ipynb")
    home = s.root / "home"
    run_env = s.env(TD_QUICK="1", JUPYTER_CONFIG_DIR=str(home / ".jupyter"),
                    JUPYTER_DATA_DIR=str(home / ".local/share/jupyter"),
                    JUPYTER_RUNTIME_DIR=str(home / ".local/share/jupyter/runtime"),
                    IPYTHONDIR=str(home / ".ipython"))
    p = s.run("-c", RUNNER, str(notebook), str(out), cwd=notebook.parent, env=run_env, timeout=1200)
    assert p.returncode == 0, f"executing {notebook.name} failed:\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}"
    return nbformat.read(str(out), as_version=4).cells


def run_problems(cells: list[dict]) -> list[str]:
    """What a student would find wrong in a notebook run top to bottom on the stubs."""
    return bs.stub_run_problems(cells)


@pytest.fixture(scope="module")
def installed():
    return student_env()


@pytest.mark.slow
def test_handout_installs_alone(installed) -> None:
    s = installed
    assert env.REPO not in s.root.parents and s.root != env.REPO
    p = s.run("-c", "import td_lib, sys; print(td_lib.__file__); print(sys.prefix)")
    assert p.returncode == 0, p.stderr
    assert str(s.venv) in p.stdout and str(env.REPO) not in p.stdout, p.stdout
    for forbidden in ("checks", "tools", "td_course"):
        p = s.run("-c", f"import {forbidden}")
        assert p.returncode != 0 and "ModuleNotFoundError" in p.stderr, (
            f"`import {forbidden}` works in the student environment: {p.stdout}{p.stderr}")
    # the student edition: no counterpart of the handout's exercises imports, no text names an exercise
    names = student_edition.cut_names(student_edition.handout_exercises())
    assert names, "the handout's edition should cut something"
    probe = student_edition._RESOLVE + (
        "import json, sys, td_lib\n"
        "names = json.loads(sys.argv[1])\n"
        "left = [n for n in names if resolve(n) is not None]\n"
        "from td_lib import own_work\n"
        "print(json.dumps({'left': left, 'lib': td_lib.__path__[0],\n"
        "                  'registry': {k: list(v) for k, v in own_work.COUNTERPARTS.items()}}))\n")
    p = s.run("-c", probe, json.dumps(names))
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert got["left"] == [], f"the handout's td_lib holds answers: importable counterparts {got['left']}"
    # its registry: exactly the tools it keeps that a notebook's grading edition lacks (a graded call
    # into one fails at home as it fails when graded)
    assert got["registry"] == {k: list(v) for k, v in student_edition.home_registry().items()}, got["registry"]
    stated = student_edition.answers_in_text(Path(got["lib"]))
    assert stated == [], "the installed td_lib states answers or names exercises:\n" + "\n".join(map(str, stated[:10]))
    p = s.run("-m", "pip", "check")
    assert p.returncode == 0, p.stdout + p.stderr
    # kernels of the student environment show a test's message without the traceback
    cfg = s.venv / handout.KERNEL_CONFIG
    assert json.loads(cfg.read_text()) == handout.KERNEL_STARTUP, cfg
    p = s.run("-c", "import td_lib.short_errors as e; print(e.install())")
    assert p.returncode == 0 and p.stdout.strip() == "False", p.stdout + p.stderr  # no IPython running
    p = s.run("-c", "import torch; print(torch.__version__)")
    assert p.returncode == 0 and p.stdout.strip() == "2.13.0+cpu", p.stdout + p.stderr


def _notebooks() -> list:
    return [pytest.param(p.parent.name, p.stem, id=f"{p.parent.name}/{p.stem}")
            for p in sorted(env.SOURCE.glob("*/*.py")) if not p.name.startswith("_")]


@pytest.mark.slow
@pytest.mark.parametrize(("assignment", "stem"), _notebooks())
def test_released_notebook_runs_in_the_handout_env(installed, assignment: str, stem: str) -> None:
    s = installed
    work = s.root / "work" / assignment
    work.mkdir(parents=True, exist_ok=True)
    src = s.dist / handout.NOTEBOOKS / assignment / f"{stem}.ipynb"
    shutil.copy2(src, work / src.name)
    cells = _execute_in_handout_env(s, work / src.name)
    problems = run_problems(cells)
    assert not problems, f"{assignment}/{stem} in the handout's environment:\n  " + "\n  ".join(problems)
    # the first test cell's failure reads as its message, not as a traceback (td_lib/short_errors.py)
    target = bs.first_exercise_test(cells)
    (tb,) = [o["traceback"] for o in cells[target]["outputs"] if o.get("output_type") == "error"]
    assert len(tb) <= 2 and tb[0].startswith("NotImplementedError: `") and "is not written yet" in tb[0], tb


@pytest.mark.slow
@pytest.mark.parametrize(("assignment", "stem"), _notebooks())
def test_released_notebook_with_right_answers_runs_in_the_handout_env(installed, assignment: str,
                                                                      stem: str) -> None:
    s = installed
    work = s.root / "solved" / assignment
    work.mkdir(parents=True, exist_ok=True)
    release = nbformat.read(str(s.dist / handout.NOTEBOOKS / assignment / f"{stem}.ipynb"), as_version=4)
    source = nbcore.read_source(env.SOURCE / assignment / f"{stem}.py")
    nb = fake_students.student_notebook(release, source, "solution")
    src = work / f"{stem}.ipynb"
    nbformat.write(nb, str(src))
    cells = _execute_in_handout_env(s, src)
    errors = [f"cell {i}: {o.ename}: {o.evalue[:300]}" for i, c in enumerate(cells)
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, f"{assignment}/{stem} with the right answers, in the handout's environment:\n  " + \
        "\n  ".join(errors)
