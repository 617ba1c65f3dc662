"""The handout's install resolves as its README says, on every Python and platform it names.

``requirements-student.txt`` (:func:`tools.build.handout.student_requirements`) is generated once
(module fixture) and checked against the package indexes, metadata only (nothing is built or
installed):

* **a full lock**, on each (Python of :data:`tools.build.handout.PYTHONS`) x (Linux x86_64, macOS 14
  arm64, Windows x86_64): walking the requirements from the top packages, with the environment
  markers of that Python and platform and the extras asked for, every package needed is pinned,
  its pin satisfies every requirement on it, and PyPI has a wheel of the pinned version for that
  Python and platform whose ``Requires-Python`` admits it (wheel metadata from PyPI's simple
  JSON API, PEP 691/658). pip cannot do this for macOS and Windows from a Linux host: its
  ``--platform``/``--python-version`` pick wheels but evaluate markers for the running
  interpreter (a macOS dry run on Linux asks for torch's Linux-only CUDA packages). On Linux,
  torch is the CPU build: its metadata is that of the ``+cpu`` build installed here (from the
  CPU index, requirements.txt);
* **pip itself**, on Linux: ``pip install --dry-run --only-binary=:all: --python-version X
  --platform manylinux_2_28_x86_64 ... -r requirements-student.txt --report`` resolves, takes
  torch ``2.13.0+cpu`` from the CPU index, installs no ``nvidia-*``/``triton``/``cuda-*``
  package, and every package in the report is the pinned one (needs the CPU index: skipped,
  saying so, where download.pytorch.org is unreachable);
* **the versions agree**: the wheel's ``Requires-Python`` (:func:`tools.build.handout.requires_python`)
  is pyproject.toml's, admits exactly the named Pythons, and a Python the handout does not name
  (3.10, 3.14, 3.11 before 3.11.5) is refused; on 3.10 the pins do not resolve anyway (neither
  the lock check nor pip).

Needs the network to PyPI (CI has it): skipped, saying so, only when pypi.org is unreachable.
"""

from __future__ import annotations

import concurrent.futures
import email.parser
import io
import json
import os
import re
import socket
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
import zipfile
from functools import cache
from pathlib import Path

import pytest
from packaging import tags
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from tools import env
from tools.build import handout

pytestmark = pytest.mark.timeout(600)

PYPI = "https://pypi.org/simple"
CUDA_PREFIXES = ("nvidia-", "triton", "cuda-")
#: pip's --platform for glibc >= 2.28: pip expands manylinux2014 (to manylinux_2_17 and older) and
#: macosx_X_Y, but takes manylinux_2_28 alone, so each manylinux_2_x in between is named.
LINUX_PLATFORM_ARGS = [a for m in range(28, 17, -1) for a in ("--platform", f"manylinux_2_{m}_x86_64")] + [
    "--platform", "manylinux2014_x86_64"]


@cache
def pypi_reachable() -> bool:
    return handout.index_reachable(PYPI)


@cache
def cpu_index_reachable() -> bool:
    return handout.index_reachable(handout.CPU_INDEX)


def _need_pypi() -> None:
    if not pypi_reachable():
        pytest.skip("pypi.org is unreachable from this machine: the install's resolution cannot be checked")


@pytest.fixture(scope="module")
def requirements(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("install") / "requirements-student.txt"
    path.write_text(handout.student_requirements())
    return path


def pin_lines(path: Path) -> dict[str, Requirement]:
    """normalised name -> the pinning requirement (marker included) of a requirements file."""
    return {canonicalize_name(r.name): r for r in (Requirement(ln) for ln in path.read_text().splitlines()
                                                      if ln and not ln.startswith(("#", "-")))}


def pins_of(path: Path) -> dict[str, str]:
    """normalised name -> pinned version of a requirements file (its option lines aside)."""
    return {n: str(r.specifier).removeprefix("==") for n, r in pin_lines(path).items()}


# ------------------------------------------------------------------ the file itself
def test_requirements_file_is_a_lock_with_the_cpu_index_first(requirements: Path) -> None:
    lines = [ln for ln in requirements.read_text().splitlines() if ln and not ln.startswith("#")]
    assert lines[0] == f"--extra-index-url {handout.CPU_INDEX}", lines[0]
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+==[^=\s;]+( ; .+)?", r) for r in lines[1:]), lines
    # what only some platforms need says so: pip installs every line that applies
    reqs = pin_lines(requirements)
    assert str(reqs["pywinpty"].marker) == 'sys_platform == "win32"', reqs["pywinpty"]
    assert str(reqs["appnope"].marker) == 'sys_platform == "darwin"', reqs["appnope"]
    assert reqs["numpy"].marker is None and reqs["torch"].marker is None
    pins = pins_of(requirements)
    assert pins["torch"] == "2.13.0"
    # what jsonschema[format-nongpl] (jupyter-events) and the other platforms pull in is pinned too
    for name in ("arrow", "lark", "isoduration", "fqdn", "uri-template", "webcolors", "colorama", "pywinpty",
                 "appnope"):
        assert name in pins, f"{name} is not pinned in requirements-student.txt"
    # PEP 440: ``==2.13.0`` admits the CPU index's local version 2.13.0+cpu, which pip prefers
    assert Version("2.13.0+cpu") in SpecifierSet("==2.13.0") and Version("2.13.0+cpu") > Version("2.13.0")


def test_python_versions_agree() -> None:
    project = tomllib.loads((env.REPO / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == handout.requires_python()
    spec = SpecifierSet(handout.requires_python())
    for py in handout.PYTHONS:
        assert full_version(py) in spec and f"{py}.99" in spec
        assert f"Programming Language :: Python :: {py}" in project["classifiers"]
    for py in ("3.10.12", "3.14.0", "3.11.0"):
        assert py not in spec, f"the handout does not name Python {py}: td_lib must refuse it"
    readme = handout.README
    assert "Python {pythons}" in readme and "python{python} -m venv" in readme and "py -{python}" in readme


# ------------------------------------------------------------- the index, metadata only
@cache
def _get(url: str, accept: str = "") -> bytes:
    """The body at ``url``. A *temporary* name-resolution failure (``EAI_AGAIN``: the resolver
    did not answer, as happens under 16 parallel lookups) is retried, as pip does; any other
    error is raised at once."""
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    for attempt in range(4):
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return r.read()
        except urllib.error.URLError as e:
            temporary = isinstance(e.reason, socket.gaierror) and e.reason.errno == socket.EAI_AGAIN
            if not temporary or attempt == 3:
                raise
            time.sleep(1 + 2 * attempt)
    raise AssertionError("unreachable")


@cache
def index_files(name: str) -> list[dict]:
    """The files of ``name`` on PyPI (PEP 691 JSON)."""
    data = json.loads(_get(f"{PYPI}/{name}/", "application/vnd.pypi.simple.v1+json"))
    return data["files"]


@cache
def wheel_requires(url: str) -> tuple[str, ...]:
    """``Requires-Dist`` of a wheel: its PEP 658 metadata file (PyPI serves one beside every
    wheel, whether or not the index page says so), else the wheel's own METADATA."""
    url = url.split("#")[0]
    try:
        text = _get(url + ".metadata").decode()
    except urllib.error.HTTPError:
        with zipfile.ZipFile(io.BytesIO(_get(url))) as z:
            (meta,) = [n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            text = z.read(meta).decode()
    return tuple(email.parser.Parser().parsestr(text).get_all("Requires-Dist") or ())


@cache
def tag_rank(py: str, platform: str) -> dict[tags.Tag, int]:
    """The wheel tags pip accepts on ``py``/``platform`` -> preference (0: best)."""
    rank: dict[tags.Tag, int] = {}
    for i, t in enumerate(supported_tags(py, platform)):
        rank.setdefault(t, i)
    return rank


def supported_tags(py: str, platform: str) -> list[tags.Tag]:
    major, minor = (int(x) for x in py.split("."))
    tag = handout.PLATFORMS[platform][0]
    if platform == "linux":
        plats = [f"manylinux_2_{m}_x86_64" for m in range(28, 4, -1)] + [
            "manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"]
    elif platform == "macos":
        plats = list(tags.mac_platforms((14, 0), "arm64"))
    else:
        plats = [tag]
    return [*tags.cpython_tags((major, minor), platforms=plats),
            *tags.compatible_tags((major, minor), platforms=plats)]


def full_version(py: str) -> str:
    """The oldest release of ``py`` the handout admits (:data:`tools.build.handout.OLDEST_PYTHON`)."""
    return handout.OLDEST_PYTHON if handout.OLDEST_PYTHON.startswith(py + ".") else f"{py}.0"


@cache
def best_wheel(name: str, version: str, py: str, platform: str) -> dict | None:
    """PyPI's file of ``name==version`` that pip would take on ``py``/``platform`` (None: none)."""
    if platform == "linux" and name == "torch":
        return None  # the CPU build, not PyPI's
    rank = tag_rank(py, platform)
    best = None
    for f in index_files(name):
        fn = f["filename"]
        if not fn.endswith(".whl") or f.get("yanked"):
            continue
        _n, v, _b, wtags = parse_wheel_filename(fn)
        if v.public != Version(version).public:
            continue
        r = min((rank[t] for t in wtags if t in rank), default=None)
        if r is not None and (best is None or r < best[0]):
            best = (r, f)
    return best and best[1]


def lock_problems(reqs: dict[str, Requirement], py: str, platform: str) -> list[str]:
    """What keeps the lines ``reqs`` from installing as they are on ``py``/``platform`` (empty:
    nothing): pip installs every line whose marker applies there, so each needs a wheel for
    that Python and platform; and what those packages require, with the markers of that
    Python and platform and the extras asked for, must be such a line, pinned to a version
    that the requirement admits."""
    markers = {**handout.marker_environments()[0], "python_version": py, "python_full_version": full_version(py),
               "implementation_version": full_version(py), **handout.PLATFORMS[platform][1]}
    applies = {n: r for n, r in reqs.items() if r.marker is None or r.marker.evaluate({**markers, "extra": ""})}
    pins = {n: str(r.specifier).removeprefix("==") for n, r in applies.items()}
    problems: list[str] = []
    requires: dict[str, tuple[str, ...]] = {}
    for name, version in pins.items():
        if platform == "linux" and name == "torch":  # the CPU index's build: the one installed here
            from importlib import metadata
            assert metadata.version("torch") == f"{version}+cpu", "this environment's torch is not the CPU build"
            requires[name] = tuple(metadata.requires("torch") or ())
            continue
        f = best_wheel(name, version, py, platform)
        if f is None:
            problems.append(f"{name}=={version}: no wheel for Python {py} on {platform}")
            continue
        rp = f.get("requires-python")
        if rp and full_version(py) not in SpecifierSet(rp):
            problems.append(f"{name}=={version} requires Python {rp}, not {full_version(py)}")
        requires[name] = wheel_requires(f["url"])
    seen: dict[str, set[str]] = {}
    todo = [(canonicalize_name(t), frozenset()) for t in handout.STUDENT_TOP]
    while todo:
        name, extras = todo.pop()
        if name in seen and extras <= seen[name]:
            continue
        seen.setdefault(name, set()).update(extras)
        if name not in pins:
            problems.append(f"{name} is needed but not pinned" + (" for this platform" if name in reqs else ""))
            continue
        wanted = ("", *sorted(seen[name]))
        for raw in requires.get(name, ()):
            req = Requirement(raw)
            if req.marker is not None and not any(req.marker.evaluate({**markers, "extra": x}) for x in wanted):
                continue
            dep = canonicalize_name(req.name)
            if dep in pins and not req.specifier.contains(Version(pins[dep]), prereleases=True):
                problems.append(f"{name}=={pins[name]} requires {raw}; pinned {dep}=={pins[dep]}")
            todo.append((dep, frozenset(canonicalize_name(x) for x in req.extras)))
    return problems


@pytest.fixture(scope="module")
def reqs(requirements: Path) -> dict[str, Requirement]:
    _need_pypi()
    r = pin_lines(requirements)
    p = {n: str(q.specifier).removeprefix("==") for n, q in r.items()}
    with concurrent.futures.ThreadPoolExecutor(16) as pool:  # fetch index pages and metadata at once
        list(pool.map(index_files, p))
        urls = {f["url"] for n, v in p.items() for py in (*handout.PYTHONS, "3.10") for plat in handout.PLATFORMS
                if (f := best_wheel(n, v, py, plat))}
        list(pool.map(wheel_requires, urls))
    return r


@pytest.mark.parametrize("platform", list(handout.PLATFORMS))
@pytest.mark.parametrize("py", handout.PYTHONS)
def test_lock_installs_as_pinned(reqs: dict[str, Requirement], py: str, platform: str) -> None:
    problems = lock_problems(reqs, py, platform)
    assert not problems, f"requirements-student.txt on Python {py}, {platform}:\n  " + "\n  ".join(problems)


def test_lock_does_not_install_on_python_310(reqs: dict[str, Requirement]) -> None:
    problems = lock_problems(reqs, "3.10", "linux")
    assert any("requires Python" in p or "no wheel" in p for p in problems), problems


# ------------------------------------------------------------------------ pip itself
def _pip_dry_run(requirements: Path, py: str, tmp: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """pip's own resolution of the file for Linux x86_64 and ``py``, as a student's pip would
    see it: no pip configuration of this machine (local wheel folders, constraints)."""
    report = tmp / f"report-{py}.json"
    if not cpu_index_reachable():  # pip would retry it for every package (minutes), then skip it
        text = requirements.read_text().replace(f"--extra-index-url {handout.CPU_INDEX}\n", "")
        requirements = tmp / "requirements-no-cpu-index.txt"
        requirements.write_text(text)
    run_env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    run_env |= {"PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    if "PIP_CERT" in os.environ:
        run_env["PIP_CERT"] = os.environ["PIP_CERT"]
    # pip < 24 takes --platform/--python-version only with --target; --dry-run writes nothing there
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
           "--target", str(tmp / f"target-{py}"), "--only-binary=:all:", "--python-version", full_version(py),
           *LINUX_PLATFORM_ARGS, "-r", str(requirements), "--report", str(report)]
    return subprocess.run(cmd, capture_output=True, text=True, env=run_env, timeout=500), report


@pytest.mark.slow
@pytest.mark.parametrize("py", handout.PYTHONS)
def test_pip_resolves_linux_cpu_torch(requirements: Path, tmp_path: Path, py: str) -> None:
    _need_pypi()
    if not cpu_index_reachable():
        pytest.skip(f"{handout.CPU_INDEX} is unreachable from this machine: pip cannot take torch's CPU build "
                    "(test_lock_installs_as_pinned checks Linux with the CPU build installed here)")
    p, report = _pip_dry_run(requirements, py, tmp_path)
    assert p.returncode == 0, f"pip cannot resolve requirements-student.txt for Python {py}:\n{p.stderr[-3000:]}"
    got = {canonicalize_name(i["metadata"]["name"]): (i["metadata"]["version"], i["download_info"]["url"])
           for i in json.loads(report.read_text())["install"]}
    pins = pins_of(requirements)
    assert not [n for n in got if n.startswith(CUDA_PREFIXES)], sorted(got)
    assert got["torch"][0] == "2.13.0+cpu" and "pytorch.org/" in got["torch"][1], got["torch"]
    unpinned = {n: v for n, (v, _u) in got.items()
                if n not in pins or Version(v) not in SpecifierSet(f"=={pins[n]}")}
    assert not unpinned, f"pip installs what the file does not pin: {unpinned}"


@pytest.mark.slow
def test_pip_refuses_python_310(requirements: Path, tmp_path: Path) -> None:
    _need_pypi()
    p, _report = _pip_dry_run(requirements, "3.10", tmp_path)
    assert p.returncode != 0 and ("Requires-Python" in p.stderr or "No matching distribution" in p.stderr), (
        p.stderr[-2000:])
