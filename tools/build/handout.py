"""The student handout: what a student needs and nothing more, in ``dist/``.

    python -m tools.build.handout [--out dist] [--reuse-release]

builds

    dist/
      README.md                     install (Linux, macOS, Windows), work, hand in
      requirements-student.txt      a full lock: numpy scipy torch matplotlib tqdm jupyterlab nbgrader and all
                                    they pull in on Python 3.11-3.13 (PYTHONS), Linux/macOS/Windows (PLATFORMS),
                                    every package pinned; its first line adds PyTorch's CPU index (CPU_INDEX)
                                    so that the README's one command takes torch's CPU build on Linux
      td_lib-<version>-py3-none-any.whl   the student edition of the course library
                                    (tools/build/student_edition.py: no function that answers a cut
                                    exercise; no checks, no tools, no sources), and the kernel
                                    start-up of td_lib/short_errors.py (etc/ipython)
      jupyter-config/               a Jupyter config dir: the student side of nbgrader, without
                                    the exchange (no assignment list on a laptop); no news toast
      notebooks/<assignment>/<notebook>.ipynb   released notebooks (tools.build.pipeline.release), the
                                    folder JupyterLab opens
      handin.py                     the hand-in command (tools/build/handin.py, standard library only,
                                    with the handout's assignments and notebooks filled in): one
                                    zip per assignment with a manifest naming the student

and refuses a handout that leaks (:func:`leaks`): a ``.py`` file outside the wheel (but
``handin.py``, exactly as :func:`handin_script` writes it), a
wheel holding anything but ``td_lib``, solution text, hidden-test text or nbgrader's
solution/hidden-test markers anywhere (the wheel's files included).

The student configuration (:func:`write_student_config`) is Jupyter's own extension
config: ``labconfig/page_config.json`` disables nbgrader's instructor Lab plugins (create
assignment, formgrader, course list; on a laptop also the assignment list and the *Nbgrader*
menu, which would be empty) and ``jupyter_server_config.d/`` disables the
formgrader and course-list server extensions; ``jupyter_server_config.json`` encrypts the
kernels' connections (:data:`KERNEL_TRANSPORT`). It takes effect for a server that has the
folder on ``JUPYTER_CONFIG_PATH`` (the README's start command; ``deploy/`` does the same on
JupyterHub). ``deploy/student-config`` is written by the same function.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

import nbformat

from tools import env, nbcore
from tools.build import handin
from tools.build import pipeline

REPO = env.REPO
DIST = REPO / "dist"
LIB = "td_lib"
WHEEL_NAME = "td_lib"

#: What a student's environment needs at the top; the file pins these and everything they
#: pull in, at the versions of requirements.txt.
STUDENT_TOP = ("numpy", "scipy", "torch", "matplotlib", "tqdm", "jupyterlab", "ipykernel", "nbgrader")

#: nbgrader's Lab plugins a student must not have (JupyterLab plugin ids).
INSTRUCTOR_LAB_PLUGINS = (
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:course-list",
)
#: JupyterLab's own plugins a student does not need: the news/update-check announcements
#: (a toast asking about "Jupyter news" that covers test output on a fresh HOME).
QUIET_LAB_PLUGINS = ("@jupyterlab/apputils-extension:announcements",)
#: ... and its server extensions.
INSTRUCTOR_SERVER_EXTENSIONS = (
    "nbgrader.server_extensions.formgrader",
    "nbgrader.server_extensions.course_list",
)
STUDENT_SERVER_EXTENSIONS = (
    "nbgrader.server_extensions.assignment_list",
    "nbgrader.server_extensions.validate_assignment",
)
#: What only works with an exchange (the class hub): on a laptop the assignment list shows
#: "Error fetching courses!" and "exchange directory does not exist", so the handout turns it off;
#: and with it the *Nbgrader* menu, whose items all open what is off then (assignment list, course
#: list, formgrader, create assignment): the menu would show in the Lab's menu bar, empty.
EXCHANGE_LAB_PLUGINS = ("@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:menu")
EXCHANGE_SERVER_EXTENSIONS = ("nbgrader.server_extensions.assignment_list",)
#: Where the handout's notebooks are, the folder JupyterLab opens (the install files stay outside).
NOTEBOOKS = "notebooks"
#: The hand-in command in the handout (tools/build/handin.py).
HANDIN = "handin.py"
_HANDIN_MARKER = "ASSIGNMENTS: dict[str, list[str]] = {}  # HANDOUT-ASSIGNMENTS"

README = """\
# {course}: student handout

The course's notebooks (`notebooks/`: {assignments}), the library they import (`{wheel}`,
without the answers to the exercises) and the list of packages it needs, every one pinned. You
need Python {pythons}, from python.org or your system's, on Linux (x86_64),
macOS 14 or newer on Apple silicon, or Windows (x86_64), and about 2 GB of disk.

## Install (once, in this folder)

Linux and macOS (with Python {python}; {others} work the same):

    python{python} -m venv .venv && .venv/bin/pip install -r requirements-student.txt {wheel}

Windows (PowerShell):

    py -{python} -m venv .venv; .venv\\Scripts\\pip install -r requirements-student.txt {wheel}

The first line of `requirements-student.txt` adds PyTorch's index of CPU-only builds to PyPI, so
on Linux this command installs torch's CPU build (2.13.0+cpu), without the GBs of CUDA libraries
that the course does not use; on macOS and Windows, PyPI's torch is the CPU build. With another
Python version the command fails: `td_lib` requires Python `{requires_python}`.

## Work

Start JupyterLab (it opens in your browser, on the `notebooks/` folder):

    JUPYTER_CONFIG_PATH=jupyter-config .venv/bin/jupyter lab --ServerApp.root_dir={notebooks}

(Windows PowerShell: `$env:JUPYTER_CONFIG_PATH="jupyter-config"; .venv\\Scripts\\jupyter lab
--ServerApp.root_dir={notebooks}`.) Open a notebook, work from the top, fill the cells
marked `YOUR CODE HERE` / `YOUR ANSWER HERE`, and run the test cell under each exercise:
it prints `✓ ... passes the visible tests` when that part is right, or a message saying what
is wrong. When your work is graded, hidden tests check more cases than the visible ones.
The *Validate* button runs every test of a notebook. Until you have written a function, the
demos that need it show the course's reference results, and say so.

## Hand in

Save your notebooks in JupyterLab (*File > Save*), then hand in with one command, in this
folder, giving your student id and the assignment:

    .venv/bin/python handin.py --id jean_dupont --assignment {first}

(Windows PowerShell: `.venv\\Scripts\\python handin.py --id jean_dupont --assignment {first}`.)
{which_id} The command writes one file, `{first}__handin.zip`, holding your notebooks of the
assignment and a manifest with your id; upload that one file to the assignment's page on the
LMS (the platform may rename it: that does not matter). To hand in again, run the command again
and upload the new zip: the newest one counts. Your instructor imports the zips
(`make collect-zip`) and returns your grade and feedback.

Only if you cannot run the command: upload each notebook named `<your student id>_<notebook>.ipynb`,
for example `jean_dupont_td2_7_1_two_moments.ipynb`. Such a file is imported only when its id
matches the class list without doubt; otherwise your instructor has to ask you for the zip.
If your course runs the class JupyterHub instead, work there: *Nbgrader > Assignment List*
fetches, submits and fetches feedback.
"""


# ----------------------------------------------------------------------- pieces
def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def repo_pins(path: Path = REPO / "requirements.txt") -> dict[str, str]:
    """normalised name -> ``Name==version`` line of requirements.txt."""
    pins = {}
    for ln in path.read_text().splitlines():
        ln = ln.strip()
        if ln and not ln.startswith(("#", "-")) and "==" in ln:
            pins[_norm(ln.split("==")[0])] = ln
    return pins


#: The Python versions the handout names (README), the versions whose resolution of
#: requirements-student.txt tests/test_install_resolution.py checks on each of :data:`PLATFORMS`,
#: and the wheel's ``Requires-Python`` (pyproject.toml's ``requires-python``, :func:`requires_python`).
PYTHONS = ("3.11", "3.12", "3.13")
#: The oldest release of ``PYTHONS[0]`` the pins install on (soupsieve 4.1 requires 3.11.5).
OLDEST_PYTHON = "3.11.5"
#: The students' machines: name -> (pip ``--platform`` tag the resolution test uses, environment
#: markers). torch 2.13 has wheels for Linux x86_64 (glibc >= 2.28), macOS >= 14 on Apple silicon
#: and Windows x86_64 only.
PLATFORMS = {
    "linux": ("manylinux_2_28_x86_64", {"sys_platform": "linux", "platform_system": "Linux",
                                         "os_name": "posix", "platform_machine": "x86_64"}),
    "macos": ("macosx_14_0_arm64", {"sys_platform": "darwin", "platform_system": "Darwin",
                                     "os_name": "posix", "platform_machine": "arm64"}),
    "windows": ("win_amd64", {"sys_platform": "win32", "platform_system": "Windows",
                               "os_name": "nt", "platform_machine": "AMD64"}),
}
#: PyTorch's index of CPU-only builds: the first line of requirements-student.txt, so that the one
#: install command takes ``torch==2.13.0`` as ``2.13.0+cpu`` on Linux (PEP 440: ``==2.13.0`` matches
#: the local version ``2.13.0+cpu``, which sorts above ``2.13.0``, so pip prefers it) instead of
#: PyPI's build and its CUDA libraries (nvidia-*, triton: several GB). On macOS and Windows PyPI's
#: torch is already CPU-only.
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
#: Pins of what only the other platforms (or Pythons) of :data:`PLATFORMS` / :data:`PYTHONS` pull
#: in, so not installed here to read the version from (all have no dependencies of their own):
#: ipykernel's appnope (macOS), tqdm's and ipython's colorama, terminado's and jupyter_server's
#: pywinpty (Windows).
OTHER_PLATFORM_PINS = {"appnope": "appnope==1.0.0", "colorama": "colorama==0.4.6",
                       "pywinpty": "pywinpty==3.1.2"}


def index_reachable(url: str = CPU_INDEX, timeout: float = 10) -> bool:
    """Whether this machine can open a connection to the host of ``url`` (HTTPS)."""
    import socket

    try:
        socket.create_connection((url.split("/")[2], 443), timeout=timeout).close()
        return True
    except OSError:
        return False


def requires_python() -> str:
    """The specifier of :data:`PYTHONS` (the wheel's ``Requires-Python``; pyproject.toml says the same)."""
    major, minor = PYTHONS[-1].split(".")
    return f">={OLDEST_PYTHON},<{major}.{int(minor) + 1}"


def readme(wheel: str, assignments: list[str]) -> str:
    """The handout's README.md for the wheel file ``wheel`` and the released ``assignments``."""
    return README.format(course="td-course", wheel=wheel, notebooks=NOTEBOOKS,
                         assignments=", ".join(f"`{a}/`" for a in assignments),
                         first=assignments[0], which_id=handin.WHICH_ID, pythons=_spoken_pythons(),
                         python=PYTHONS[0], others=" or ".join(f"`python{v}`" for v in PYTHONS[1:]),
                         requires_python=requires_python())


def _spoken_pythons() -> str:
    """:data:`PYTHONS` for the README: ``3.11 (3.11.5 or newer), 3.12 or 3.13``."""
    said = [f"{py} ({OLDEST_PYTHON} or newer)" if OLDEST_PYTHON.startswith(py + ".") else py for py in PYTHONS]
    return ", ".join(said[:-1]) + f" or {said[-1]}"


def marker_environments() -> list[dict[str, str]]:
    """PEP 508 marker environments of every (Python, platform) the handout names."""
    envs = []
    for py in PYTHONS:
        for _tag, plat in PLATFORMS.values():
            full = OLDEST_PYTHON if OLDEST_PYTHON.startswith(py + ".") else f"{py}.0"
            envs.append({"python_version": py, "python_full_version": full,
                         "implementation_name": "cpython", "implementation_version": full,
                         "platform_python_implementation": "CPython", "platform_release": "",
                         "platform_version": "", **plat})
    return envs


def dependency_closure(top: tuple[str, ...] = STUDENT_TOP,
                       environments: list[dict[str, str]] | None = None) -> list[str]:
    """``top`` and everything they require on any of ``environments`` (default: every
    (Python, platform) of :func:`marker_environments`), extras followed (``jsonschema[format-nongpl]``
    brings arrow, isoduration, lark...), from the installed metadata of this environment;
    a package that only another platform needs and is not installed here must be one of
    :data:`OTHER_PLATFORM_PINS` (a leaf). Normalised names, sorted."""
    from packaging.requirements import Requirement

    envs = marker_environments() if environments is None else environments
    seen: dict[str, set[str]] = {}  # name -> extras already followed
    todo: list[tuple[str, frozenset[str]]] = [(_norm(t), frozenset()) for t in top]
    while todo:
        name, extras = todo.pop()
        if name in seen and extras <= seen[name]:
            continue
        seen.setdefault(name, set()).update(extras)
        try:
            reqs = metadata.requires(name) or []
        except metadata.PackageNotFoundError as exc:
            if name in OTHER_PLATFORM_PINS:
                continue
            raise RuntimeError(f"{name} (needed by students) is not installed here: make setup, "
                               f"or pin it in tools.build.handout.OTHER_PLATFORM_PINS") from exc
        wanted = ("", *sorted(seen[name]))
        for raw in reqs:
            req = Requirement(raw)
            if req.marker is not None and not any(req.marker.evaluate({**e, "extra": x})
                                                  for e in envs for x in wanted):
                continue
            todo.append((_norm(req.name), frozenset(_norm(x) for x in req.extras)))
    return sorted(seen)


STUDENT_HEADER = (
    "# The student environment of td-course, every package pinned (generated by tools/build/handout.py\n"
    "# from the course's requirements.txt), for Python " + _spoken_pythons() + "\n# on Linux x86_64, "
    "macOS 14+ on Apple silicon and Windows x86_64. Install it\n# with the td_lib wheel, in one command:\n"
    "#     pip install -r requirements-student.txt td_lib-<version>-py3-none-any.whl   (README.md)\n"
    "# The index line below makes that command take torch's CPU-only build on Linux (2.13.0+cpu,\n"
    "# no CUDA libraries); on macOS and Windows, PyPI's torch 2.13.0 is already CPU-only.\n"
    f"--extra-index-url {CPU_INDEX}")


def where_needed(top: tuple[str, ...] = STUDENT_TOP) -> dict[str, set[tuple[str, str]]]:
    """Each package of the closure of ``top`` -> the (Python, platform name) it is needed on."""
    needed: dict[str, set[tuple[str, str]]] = {}
    envs = marker_environments()
    for py in PYTHONS:
        for plat, (_tag, markers) in PLATFORMS.items():
            (e,) = [e for e in envs if e["python_version"] == py and e["sys_platform"] == markers["sys_platform"]]
            for name in dependency_closure(top, [e]):
                needed.setdefault(name, set()).add((py, plat))
    return needed


def needed_marker(where: set[tuple[str, str]]) -> str:
    """The PEP 508 marker of a pin needed only on ``where`` (empty: needed everywhere), so that
    pip does not look for, say, pywinpty's wheels on Linux."""
    if where >= {(py, plat) for py in PYTHONS for plat in PLATFORMS}:
        return ""
    by_plat = {plat: sorted(py for py, p in where if p == plat) for plat in PLATFORMS}
    if len({tuple(pys) for pys in by_plat.values()}) == 1:  # the same Pythons everywhere
        return " or ".join(f'python_version == "{py}"' for py in by_plat[next(iter(PLATFORMS))])
    clauses = []
    for plat, (_tag, markers) in PLATFORMS.items():
        pys = sorted(py for py, p in where if p == plat)
        if not pys:
            continue
        clause = f'sys_platform == "{markers["sys_platform"]}"'
        if len(pys) < len(PYTHONS):
            clause += " and (" + " or ".join(f'python_version == "{py}"' for py in pys) + ")"
        clauses.append(clause)
    return " or ".join(f"({c})" if len(clauses) > 1 and " and " in c else c for c in clauses)


def student_requirements(top: tuple[str, ...] = STUDENT_TOP, without: tuple[str, ...] = (),
                         header: str = STUDENT_HEADER) -> str:
    """Pinned requirements of ``top`` and of everything they pull in on any (Python, platform)
    the handout names (minus those of ``without``): the version of requirements.txt, else the
    one installed here, else :data:`OTHER_PLATFORM_PINS`; a pin needed only on some of them
    carries the marker that says where (:func:`needed_marker`: pip installs every line that
    applies, needed or not, and there is no pywinpty for Linux)."""
    pins = repo_pins()
    lines = [header]
    skip = set(dependency_closure(without)) if without else set()
    for name, where in sorted(where_needed(top).items()):
        if name in skip:
            continue
        line = pins.get(name) or OTHER_PLATFORM_PINS.get(name)
        if line is None:
            line = f"{metadata.metadata(name)['Name']}=={metadata.version(name)}"
        marker = needed_marker(where)
        lines.append(f"{line} ; {marker}" if marker else line)
    return "\n".join(lines) + "\n"


#: IPython's configuration for the kernels of the student's environment, installed by the wheel
#: at ``<venv>/etc/ipython`` (IPython reads ``sys.prefix/etc/ipython``): test-cell failures and
#: unwritten stubs show their message, not a traceback (td_lib/short_errors.py).
KERNEL_CONFIG = Path("etc/ipython/ipython_kernel_config.json")
KERNEL_STARTUP = {"IPKernelApp": {"exec_lines": ["__import__('td_lib.short_errors').short_errors.install()"]}}

#: What a student's server on JupyterHub needs on top of the handout (deploy/).
HUB_TOP = ("jupyterhub",)


def hub_requirements() -> str:
    """Pins to add to requirements-student.txt in a JupyterHub user image (deploy/README.md)."""
    return student_requirements(HUB_TOP, without=STUDENT_TOP, header=(
        "# A student's server on the course's JupyterHub: these pins on top of\n"
        "# requirements-student.txt and the td_lib wheel (generated by tools/build/handout.py)."))


def install(dist: Path, venv: Path, extra_requirements: str = "") -> Path:
    """A fresh venv at ``venv`` with the handout of ``dist`` installed (and the extra pins);
    returns its python. Runs pip with the folder of ``dist`` as working directory."""
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    py = venv / "bin" / "python"
    (wheel,) = dist.glob(f"{WHEEL_NAME}-*.whl")
    reqs = "requirements-student.txt"
    if not index_reachable(CPU_INDEX):
        # pip would retry the index for every package (minutes) and then skip it: skip it at once
        # (torch's CPU build then comes from this machine's pip configuration, or PyPI)
        offline = venv / "requirements-student-no-cpu-index.txt"
        offline.write_text("".join(ln for ln in (dist / reqs).read_text().splitlines(keepends=True)
                                   if ln.strip() != f"--extra-index-url {CPU_INDEX}"))
        reqs = str(offline)
    cmd = [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
           "-r", reqs, wheel.name]
    if extra_requirements:
        extra = venv / "requirements-extra.txt"
        extra.write_text(extra_requirements)
        cmd += ["-r", str(extra)]
    p = subprocess.run(cmd, cwd=dist, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"installing the handout failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return py


#: How the student's server talks to its kernels (jupyter_server's policy for every kernel it
#: starts): CurveZMQ keys provisioned by jupyter_client for a kernel that supports them (ipykernel
#: >= 7.4; pyzmq's wheels carry CURVE), so the connection on 127.0.0.1 is encrypted and no kernel
#: prints "Kernel is running over TCP without encryption".
KERNEL_TRANSPORT = {"transport_encryption": "auto"}


def write_student_config(dest: Path, exchange: bool = True) -> Path:
    """A Jupyter config dir enabling only the student side of nbgrader (see module doc);
    ``exchange=False`` (a laptop, the handout) also turns off the assignment list, which needs
    the class hub's exchange."""
    dest.mkdir(parents=True, exist_ok=True)
    lab = dest / "labconfig" / "page_config.json"
    lab.parent.mkdir(parents=True, exist_ok=True)
    off = INSTRUCTOR_LAB_PLUGINS + QUIET_LAB_PLUGINS + (() if exchange else EXCHANGE_LAB_PLUGINS)
    lab.write_text(json.dumps({"disabledExtensions": dict.fromkeys(off, True)}, indent=2) + "\n")
    srv = dest / "jupyter_server_config.d" / "td-student.json"
    srv.parent.mkdir(parents=True, exist_ok=True)
    exts = {**dict.fromkeys(INSTRUCTOR_SERVER_EXTENSIONS, False),
            **dict.fromkeys(STUDENT_SERVER_EXTENSIONS, True)}
    if not exchange:
        exts |= dict.fromkeys(EXCHANGE_SERVER_EXTENSIONS, False)
    srv.write_text(json.dumps({"ServerApp": {"jpserver_extensions": exts}}, indent=2) + "\n")
    # the server's own config file: a ``.d`` fragment only contributes the extensions' switches
    (dest / "jupyter_server_config.json").write_text(
        json.dumps({"MappingKernelManager": KERNEL_TRANSPORT}, indent=2) + "\n")
    return dest


def build_wheel(out: Path) -> Path:
    """The student edition of ``td_lib`` alone as a wheel (a scratch project: the repository's
    pyproject also packages checks/ and tools/, which students must not get). The edition
    (:func:`tools.build.student_edition.build`) has no counterpart of the exercises of
    :func:`tools.build.student_edition.handout_exercises`, and is checked before it is packaged."""
    import tomllib

    from tools.build import student_edition

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    with tempfile.TemporaryDirectory(prefix="td-wheel-") as tmp:
        root = Path(tmp)
        exercises = student_edition.handout_exercises()
        student_edition.build(root, exercises=exercises)
        problems = student_edition.check(root / LIB, exercises=exercises)
        if problems:
            raise RuntimeError("the student edition of td_lib is not sound:\n  " + "\n  ".join(problems))
        deps = json.dumps(project.get("dependencies", []))
        (root / "pyproject.toml").write_text(
            '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n'
            f'[project]\nname = "{WHEEL_NAME}"\nversion = "{project["version"]}"\n'
            f'description = "The library of the td-course notebooks"\n'
            f'requires-python = "{requires_python()}"\ndependencies = {deps}\n\n'
            f'[tool.setuptools.packages.find]\ninclude = ["{LIB}*"]\n\n'
            f'[tool.setuptools.data-files]\n"{KERNEL_CONFIG.parent}" = ["{KERNEL_CONFIG.name}"]\n')
        (root / KERNEL_CONFIG.name).write_text(json.dumps(KERNEL_STARTUP, indent=2) + "\n")
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob(f"{WHEEL_NAME}-*.whl"):
            old.unlink()
        p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                            "--no-build-isolation", "-w", str(out), str(root)],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"building the td_lib wheel failed:\n{p.stdout}\n{p.stderr}")
    (wheel,) = out.glob(f"{WHEEL_NAME}-*.whl")
    return wheel


def handin_script(assignments: dict[str, list[str]]) -> str:
    """The handout's ``handin.py``: ``tools/build/handin.py`` with :data:`tools.build.handin.ASSIGNMENTS` set.

    Parameters
    ----------
    assignments : dict[str, list[str]]
        Assignment -> the file names of its notebooks (``<notebook>.ipynb``).

    Returns
    -------
    str
        The script's text (standard library only: it runs in the student's environment).
    """
    text = Path(handin.__file__).read_text()
    if text.count(_HANDIN_MARKER) != 1:
        raise RuntimeError(f"tools/build/handin.py lost its line {_HANDIN_MARKER!r}")
    filled = {a: sorted(nbs) for a, nbs in sorted(assignments.items())}
    return text.replace(_HANDIN_MARKER, f"ASSIGNMENTS: dict[str, list[str]] = {json.dumps(filled)}  "
                                        f"# HANDOUT-ASSIGNMENTS")


def handout_assignments(dist: Path) -> dict[str, list[str]]:
    """Assignment -> its notebooks' file names, as the handout ``dist`` holds them."""
    return {d.name: sorted(p.name for p in d.glob("*.ipynb"))
            for d in sorted((dist / NOTEBOOKS).iterdir()) if d.is_dir()} if (dist / NOTEBOOKS).is_dir() else {}


# ------------------------------------------------------------------------ leaks
def secret_lines(course: Path = env.COURSE, min_len: int = 20) -> dict[str, str]:
    """Lines that only the instructor may see -> where they come from: the solution
    regions and hidden tests of every source, and the worked solutions of graded markdown
    cells; minus lines that the releases show anyway (imports, signatures...)."""
    secret: dict[str, str] = {}
    visible: set[str] = set()
    for assignment in pipeline.assignments(course):
        for src in pipeline.source_paths(assignment, course):
            text = src.read_text()
            for kind, (begin, end) in (("solution", (nbcore.BEGIN_SOL, nbcore.END_SOL)),
                                       ("hidden test", (nbcore.BEGIN_HIDDEN, nbcore.END_HIDDEN))):
                for block in re.findall(rf"{re.escape(begin)}\n(.*?){re.escape(end)}", text, re.S):
                    for ln in block.splitlines():
                        s = _norm_line(ln)
                        if len(s) >= min_len:
                            secret.setdefault(s, f"{src.name} ({kind})")
            # Markdown answers: the cell's text after its `# %% [markdown] nbgrader=...solution": true` line.
            for cell in re.split(r"^# %%", text, flags=re.M):
                head = cell.split("\n", 1)[0]
                if "[markdown]" in head and '"solution": true' in head:
                    for ln in cell.split("\n")[1:]:
                        s = ln.strip().lstrip("#").strip()
                        if len(s) >= min_len:
                            secret.setdefault(s, f"{src.name} (markdown solution)")
            released = course / "release" / assignment / (src.stem + ".ipynb")
            if released.exists():
                for c in nbformat.read(str(released), as_version=4).cells:
                    visible |= {ln.strip().lstrip("#").strip() for ln in c.source.splitlines()}
    return {s: w for s, w in secret.items() if s not in visible}


def library_overlap(course: Path = env.COURSE) -> dict[str, str]:
    """Secret lines that td_lib's own code also contains (reported, not refused: the
    library may hold a general version of what an exercise asks for, AUTHORING.md)."""
    lib = library_lines()
    return {s: w for s, w in secret_lines(course).items() if s in lib}


def _norm_line(ln: str) -> str:
    return ln.strip().lstrip("#").strip()


def library_lines() -> set[str]:
    """Lines of the handout's edition of td_lib (shown to every student by design:
    AUTHORING.md); a solution line that only the full library holds is a leak."""
    from tools.build import student_edition

    lib = student_edition.cached(student_edition.handout_exercises())
    return {_norm_line(ln) for p in lib.rglob("*.py") for ln in p.read_text().splitlines()}


def _texts(dist: Path):
    """(label, raw text, set of its lines) of every file of the handout, the wheel's
    members included; a notebook's lines are those of its cells' sources and outputs."""
    def lines_of(name: str, text: str) -> set[str]:
        if name.endswith(".ipynb"):
            nb = nbformat.reads(text, as_version=4)
            chunks = [c.source for c in nb.cells]
            chunks += [str(o.get("text", "")) + json.dumps(o.get("data", {}))
                       for c in nb.cells for o in c.get("outputs", [])]
            text = "\n".join(chunks)
        return {_norm_line(ln) for ln in text.splitlines()}

    for p in sorted(dist.rglob("*")):
        if not p.is_file():
            continue
        rel = str(p.relative_to(dist))
        if p.suffix == ".whl":
            with zipfile.ZipFile(p) as z:
                for name in z.namelist():
                    text = z.read(name).decode("utf-8", "replace")
                    yield f"{rel}!{name}", text, lines_of(name, text)
        else:
            text = p.read_bytes().decode("utf-8", "replace")
            yield rel, text, lines_of(p.name, text)


def source_files(dist: Path) -> list[str]:
    """The ``.py`` files of the handout ``dist`` but its ``handin.py`` exactly as :func:`handin_script`
    writes it for the handout's assignments (a changed one is listed too)."""
    script = dist / HANDIN
    sound = script.is_file() and not script.is_symlink() and script.read_text() == handin_script(
        handout_assignments(dist))
    return [f"source file in the handout: {p.relative_to(dist)}" for p in sorted(dist.rglob("*.py"))
            if not (p == script and sound)]


def leaks(dist: Path, course: Path = env.COURSE) -> list[str]:
    """What must not be in a handout (empty list: none)."""
    problems = source_files(dist)
    for p in dist.rglob("jupytext.toml"):
        problems.append(f"jupytext config in the handout: {p.relative_to(dist)}")
    wheels = list(dist.glob("*.whl"))
    if len(wheels) != 1:
        problems.append(f"expected one wheel in the handout, found {[w.name for w in wheels]}")
    for w in wheels:
        with zipfile.ZipFile(w) as z:
            for name in z.namelist():
                top = name.split("/")[0]
                if top.endswith(".data") and name == f"{top}/data/{KERNEL_CONFIG}":
                    continue
                if top != LIB and not top.endswith(".dist-info"):
                    problems.append(f"{w.name} holds {name} (only {LIB}/ may be packaged)")
    for a in pipeline.assignments(course):
        nbs = dist / NOTEBOOKS / a
        problems += [f"{a}: {m}" for m in pipeline.leaks(nbs)] if nbs.exists() else [
            f"assignment {a} missing from the handout"]
    secret = secret_lines(course)
    lib = library_lines()
    secret = {s: w for s, w in secret.items() if s not in lib}
    for label, text, lines in _texts(dist):
        for marker in nbcore.MARKERS:
            if marker in text:
                problems.append(f"{label}: contains {marker!r}")
        for ln in sorted(lines & secret.keys()):
            problems.append(f"{label}: shows {secret[ln]} line {ln[:70]!r}")
    return problems


# ------------------------------------------------------------------------ build
def build(out: Path = DIST, fresh: bool = True, course: Path = env.COURSE) -> Path:
    """Build the handout in ``out`` (replaced). ``fresh=False`` reuses up-to-date releases."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    names = pipeline.assignments(course)
    for a in names:
        rel = pipeline.release(a, course) if fresh else pipeline.ensure_release(a, course)
        (out / NOTEBOOKS / a).mkdir(parents=True)
        for nb in sorted(rel.glob("*.ipynb")):
            shutil.copy2(nb, out / NOTEBOOKS / a / nb.name)
    wheel = build_wheel(out)
    (out / "requirements-student.txt").write_text(student_requirements())
    write_student_config(out / "jupyter-config", exchange=False)
    (out / HANDIN).write_text(handin_script(handout_assignments(out)))
    (out / "README.md").write_text(readme(wheel.name, names))
    problems = leaks(out, course)
    if problems:
        raise RuntimeError("the handout leaks:\n" + "\n".join(problems))
    return out


HELP = """\
Build the student handout in dist/: the released notebooks (notebooks/), the student edition
of td_lib as a wheel (no function that answers a cut exercise), pinned requirements (torch CPU),
nbgrader's student-side Jupyter config, the hand-in command (handin.py) and a README: install,
work, hand in. Refuses a handout
that shows solution or hidden-test text or holds a .py source."""

EXAMPLES = """\
examples:
  make handout                                   # = python -m tools.build.handout: dist/
  python -m tools.build.handout --out /tmp/handout --reuse-release
  python -m tools.build.handout --student-config deploy/student-config   # only the hub's Jupyter config dir"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.build.handout", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=DIST, metavar="DIR",
                   help="folder to build the handout in (default: dist/)")
    p.add_argument("--reuse-release", action="store_true",
                   help="reuse course/release/ where it is newer than the sources (default: release afresh)")
    p.add_argument("--student-config", type=Path, metavar="DIR",
                   help="only write the student Jupyter config dir of the class hub (with the exchange) to DIR "
                        "(default: build the whole handout)")
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    if a.student_config:
        print(write_student_config(a.student_config))
        return 0
    out = build(a.out, fresh=not a.reuse_release)
    files = sorted(str(q.relative_to(out)) for q in out.rglob("*") if q.is_file())
    print(f"handout in {out}: {len(files)} files, no leaks\n  " + "\n  ".join(files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
