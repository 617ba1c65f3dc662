"""A class that students cannot reach around (issue 36): hostile students on one machine.

Two throwaway system users of one class (``useradd``; removed afterwards), a victim and an
attacker, act with plain shell commands through ``runuser`` (what an attacker types; an honest
submission is what ``nbgrader submit`` writes: a folder ``<student>+<assignment>+<timestamp>+<random>``
in inbound), against an exchange created by the README's own commands and released by the
instructor (root) with the course's configuration (``tools/grading/exchange.py``):

- renaming the course's folder (the hijack), listing inbound or renaming a classmate's submission
  is refused by the file system;
- a folder named after a classmate is not collected as theirs, and is reported;
- a backdated name changes neither the time collect records nor the live service's limit per hour;
- links in inbound (to a classmate's folder, or inside a submission to the solutions) are refused;
- a course folder planted before the release is refused by release, collect and the student side;
- after the project's set-up (``deploy/class_setup.py``, what ``make hub`` and the hub run) a
  student cannot read the sources, the gradebook, another student's submission, the hub's or the
  grading service's state, or a classmate's home.

The hub's configuration is checked without a hub (its servers' environments and refusals).
Needs root (``useradd``, ``runuser``); skipped otherwise.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

try:
    from tests.test_hub import ASSIGNMENT, COURSE_ID, _write_course
except ImportError:  # tests/ on sys.path
    from test_hub import ASSIGNMENT, COURSE_ID, _write_course

from tools import env

REPO = env.REPO
BIN = Path(sys.executable).parent
pytestmark = [pytest.mark.pipeline, pytest.mark.timeout(900)]

root_only = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("useradd") or not shutil.which("runuser"),
    reason="needs root with useradd and runuser: the attacks are made by throwaway system users")


def stamp(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S.%f") + " UTC"


def as_user(user: str, *cmd: str | os.PathLike) -> subprocess.CompletedProcess:
    return subprocess.run(["runuser", "-u", user, "--", *map(str, cmd)], capture_output=True, text=True,
                          timeout=60, cwd="/", stdin=subprocess.DEVNULL)


SUBMIT = r"""set -e
d="$1/$2+$3+$4+$5"
mkdir "$d"
printf '%s' "$6" > "$d/tiny.ipynb"
printf '%s' "$4" > "$d/timestamp.txt"
printf 'secret' > "$d/submission_secret.txt"
chmod 0777 "$d"
"""


def write_submission(user: str, inbound: Path, claims: str, when: str, content: str, rand: str = "") -> Path:
    """``user`` writes a submission folder in ``inbound`` whose name claims ``claims`` at ``when``."""
    rand = rand or os.urandom(8).hex()
    r = as_user(user, "sh", "-c", SUBMIT, "sh", inbound, claims, ASSIGNMENT, when, rand, content)
    assert r.returncode == 0, f"{user} could not write a submission: {r.stderr}"
    return inbound / f"{claims}+{ASSIGNMENT}+{when}+{rand}"


# ------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def users():
    names = (f"tdv{os.getpid() % 100000}", f"tdm{os.getpid() % 100000}")  # victim, attacker
    made = []
    try:
        for n in names:
            subprocess.run(["useradd", "-m", "-s", "/bin/sh", n], check=True, capture_output=True)
            made.append(n)
        yield names
    finally:
        for n in made:
            subprocess.run(["userdel", "-r", n], capture_output=True)


class Class:
    """A scratch course (test_hub's tiny assignment) in a folder every user may traverse."""

    def __init__(self, base: Path):
        self.base = base
        self.course = base / "course"
        self.n = 0

    def env(self, exchange: Path, **extra: str) -> dict[str, str]:
        home = self.base / "home-instructor"
        home.mkdir(exist_ok=True)
        keep = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "TD_", "IPYTHON"))}
        return {**keep, "HOME": str(home), "TD_EXCHANGE": str(exchange), "PATH": f"{BIN}:/usr/bin:/bin", **extra}

    def nbgrader(self, exchange: Path, *args: str, cwd: Path | None = None, **extra: str):
        return subprocess.run([str(BIN / "nbgrader"), *args], cwd=cwd or self.course, env=self.env(exchange, **extra),
                              capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)

    def readme_exchange(self) -> Path:
        """A new exchange, created by the README's own commands (the block without root)."""
        self.n += 1
        home = self.base / f"home-{self.n}"
        home.mkdir()
        home.chmod(0o755)
        block = readme_exchange_block()
        subprocess.run(["bash", "-e", "-c", block], env={"HOME": str(home), "PATH": "/usr/bin:/bin"}, check=True)
        return home / "td-exchange"

    def released(self) -> Path:
        exchange = self.readme_exchange()
        r = self.nbgrader(exchange, "release_assignment", ASSIGNMENT)
        assert r.returncode == 0, r.stdout + r.stderr
        shutil.rmtree(self.course / "submitted", ignore_errors=True)
        return exchange

    def collect(self, exchange: Path) -> str:
        r = self.nbgrader(exchange, "collect", ASSIGNMENT)
        return r.stdout + r.stderr


def readme_exchange_block() -> str:
    readme = (REPO / "README.md").read_text()
    for block in re.findall(r"```bash\n(.*?)```", readme, re.S):
        if 'mkdir -p "$TD_EXCHANGE"' in block:
            return block
    raise AssertionError("README.md has no block creating $TD_EXCHANGE")


@pytest.fixture(scope="module")
def klass():
    base = Path(tempfile.mkdtemp(prefix="td-exchange-identity-", dir="/tmp"))
    base.chmod(0o755)
    try:
        k = Class(base)
        _write_course(k.course)
        r = k.nbgrader(base / "none", "generate_assignment", ASSIGNMENT)
        assert r.returncode == 0, r.stdout + r.stderr
        yield k
    finally:
        shutil.rmtree(base, ignore_errors=True)


def inbound_of(exchange: Path) -> Path:
    return exchange / COURSE_ID / "inbound"


# ---------------------------------------------------------------------------- the attacks
@root_only
def test_course_folder_and_submissions_cannot_be_renamed(users, klass):
    victim, attacker = users
    exchange = klass.released()
    course = exchange / COURSE_ID
    r = as_user(attacker, "mv", course, exchange / "td-course.old")
    assert r.returncode != 0, "a student renamed the instructor's course folder (the exchange is not sticky)"
    assert os.lstat(course).st_uid == 0 and not (exchange / "td-course.old").exists()
    assert os.stat(exchange).st_mode & stat.S_ISVTX, "the README's exchange has no sticky bit"
    # inbound: students create, never list or rename another's entry (even knowing its name)
    sub = write_submission(victim, inbound_of(exchange), victim, stamp(dt.datetime.now(dt.UTC)), "victim's work")
    assert as_user(attacker, "ls", inbound_of(exchange)).returncode != 0, "a student lists inbound"
    r = as_user(attacker, "mv", sub, inbound_of(exchange) / "gone")
    assert r.returncode != 0 and sub.is_dir(), "a student renamed a classmate's submission"


@root_only
def test_forged_folder_is_not_collected_as_the_classmates(users, klass):
    victim, attacker = users
    exchange = klass.released()
    now = dt.datetime.now(dt.UTC)
    write_submission(victim, inbound_of(exchange), victim, stamp(now), "VICTIM'S OWN WORK")
    forged = write_submission(attacker, inbound_of(exchange), victim, stamp(now + dt.timedelta(hours=1)),
                              "PLANTED BY THE ATTACKER")
    log = klass.collect(exchange)
    collected = klass.course / "submitted" / victim / ASSIGNMENT / "tiny.ipynb"
    got = collected.read_text() if collected.exists() else f"nothing: {log}"
    assert got == "VICTIM'S OWN WORK", f"collect took the forged folder as {victim}'s:\n{log}"
    assert "REFUSED" in log and forged.name in log and f"written by {attacker}, not by {victim}" in log, log


@root_only
def test_backdated_name_does_not_change_the_recorded_time(users, klass, tmp_path):
    _victim, attacker = users
    exchange = klass.released()
    old = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
    t0 = time.time()
    write_submission(attacker, inbound_of(exchange), attacker, stamp(old), "late work")
    log = klass.collect(exchange)
    recorded = (klass.course / "submitted" / attacker / ASSIGNMENT / "timestamp.txt").read_text()
    from nbgrader.utils import parse_utc

    when = parse_utc(recorded).replace(tzinfo=dt.UTC).timestamp()
    assert abs(when - t0) < 120, f"collect recorded {recorded!r} (the name's claim), not when it was written:\n{log}"

    # The live service with --check-owner: five backdated names an hour apart, two per hour allowed.
    for i in range(1, 6):
        write_submission(attacker, inbound_of(exchange), attacker, stamp(old + dt.timedelta(hours=i)), f"try {i}")
    state = tmp_path / "state"
    p = subprocess.run(
        [sys.executable, "-m", "tools.live_grading", "--no-web", "--exit-when-idle", "--grader",
         "tests.test_live_grading:fake_grade", "--exchange", str(exchange), "--course-id", COURSE_ID,
         "--course", str(klass.course), "--state", str(state), "--max-per-hour", "2", "--poll", "0.2",
         "--batch", "1", "--check-owner"],
        cwd=REPO, env={**klass.env(exchange), "LG_FAKE_LOG": str(tmp_path / "fake.log"), "LG_FAKE_DELAY": "0"},
        capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    with sqlite3.connect(state / "queue.sqlite") as con:
        states = [s for (s,) in con.execute("SELECT state FROM submissions WHERE student=?", (attacker,))]
    accepted = [s for s in states if s != "refused"]
    assert len(states) == 6 and len(accepted) == 2, (
        f"backdated names escaped the limit of 2 per hour: {states}\n{p.stderr[-3000:]}")


@root_only
def test_links_in_inbound_are_refused(users, klass, tmp_path):
    victim, attacker = users
    exchange = klass.released()
    inbound = inbound_of(exchange)
    # a folder the victim owns (their own files, e.g. their nbgrader cache), linked in under their name
    own = Path(f"~{victim}").expanduser() / "nbgrader_cache"
    make = 'mkdir "$1" && echo "VICTIM CACHE" > "$1/tiny.ipynb" && echo x > "$1/timestamp.txt"'
    assert as_user(victim, "sh", "-c", make, "sh", own).returncode == 0
    link = inbound / f"{victim}+{ASSIGNMENT}+{stamp(dt.datetime.now(dt.UTC))}+ab12"
    r = as_user(attacker, "ln", "-s", own, link)
    assert r.returncode == 0, r.stderr
    # the attacker's own folder holding a link to the solutions (collect runs as root)
    solution = klass.course / "source" / ASSIGNMENT / "tiny.ipynb"
    mine = write_submission(attacker, inbound, attacker, stamp(dt.datetime.now(dt.UTC)), "x")
    assert as_user(attacker, "ln", "-sf", solution, mine / "tiny.ipynb").returncode == 0
    log = klass.collect(exchange)
    assert not (klass.course / "submitted" / victim).exists(), f"a link was collected as {victim}'s:\n{log}"
    leaked = klass.course / "submitted" / attacker / ASSIGNMENT / "tiny.ipynb"
    assert not (leaked.exists() and "BEGIN SOLUTION" in leaked.read_text()), "collect copied the solution"
    assert log.count("REFUSED") >= 2 and "symbolic link" in log, log

    # the live service's owner check: the same refusals
    from tools.live_grading import policy as pol
    from tools.live_grading.__main__ import refuser
    from tools.live_grading.queue import Arrival
    from tools.live_grading.watch import parse_name

    arrivals = {p.name: Arrival(*parse_name(p.name), time.time(), p.name) for p in (link, mine)}
    refuse = refuser(pol.Policy.load(tmp_path / "none.toml"), klass.course, inbound)
    assert refuse(arrivals[link.name]) and "link" in refuse(arrivals[link.name]), "a link passed --check-owner"
    assert refuse(arrivals[mine.name]) and "link" in refuse(arrivals[mine.name]), (
        "a folder holding a link passed --check-owner")


@root_only
def test_planted_course_folder_is_refused(users, klass, tmp_path):
    victim, attacker = users
    exchange = klass.readme_exchange()  # created, not released yet
    plant = r"""set -e
mkdir -p "$1/td-course/outbound/$2" "$1/td-course/inbound" "$1/td-course/feedback"
echo '{"cells": [], "PLANTED": 1}' > "$1/td-course/outbound/$2/tiny.ipynb"
chmod -R 0777 "$1/td-course"
"""
    assert as_user(attacker, "sh", "-c", plant, "sh", exchange, ASSIGNMENT).returncode == 0
    write_submission(victim, exchange / COURSE_ID / "inbound", victim, stamp(dt.datetime.now(dt.UTC)), "work")
    r = klass.nbgrader(exchange, "release_assignment", ASSIGNMENT)
    assert r.returncode != 0, "the instructor released into a planted course folder"
    log = klass.collect(exchange)
    assert not (klass.course / "submitted" / victim).exists(), f"collected from a planted course folder:\n{log}"
    assert attacker in log, log
    # the student side (the hub's student config, with the course's exchange classes)
    import importlib.util

    spec = importlib.util.spec_from_file_location("class_setup", REPO / "deploy" / "class_setup.py")
    class_setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(class_setup)
    cfg = class_setup.install_student_config(tmp_path / "student-config")
    work = tmp_path / "work"
    work.mkdir()
    r = klass.nbgrader(exchange, "fetch_assignment", ASSIGNMENT, cwd=work, JUPYTER_CONFIG_PATH=str(cfg),
                       TD_COURSE_ID=COURSE_ID, JUPYTERHUB_USER=victim)
    assert r.returncode != 0 and not (work / ASSIGNMENT).exists(), "a student fetched from a planted course folder"
    assert attacker in r.stdout + r.stderr, r.stdout + r.stderr


# ------------------------------------------------------------------------- the set-up
@root_only
def test_students_cannot_read_the_course_after_the_setup(users, tmp_path):
    victim, attacker = users
    base = Path(tempfile.mkdtemp(prefix="td-setup-", dir="/tmp"))
    try:
        base.chmod(0o755)
        repo, hub = base / "checkout", base / "hub"
        files = {
            "source": repo / "course" / "source" / ASSIGNMENT / "tiny.ipynb",
            "gradebook": repo / "course" / "gradebook.db",
            "classmate's submission": repo / "course" / "submitted" / victim / ASSIGNMENT / "tiny.ipynb",
            "checks": repo / "checks" / "grading" / "baked.json",
            "grading state": hub / "grading" / "queue.sqlite",
        }
        for f in files.values():
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text("secret")
        senv = base / "student-env"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(senv)], check=True)
        (senv / "bin" / "jupyterhub-singleuser").write_text("#!/bin/sh\n")
        (senv / "bin" / "jupyterhub-singleuser").chmod(0o755)
        assert as_user(attacker, "cat", files["source"]).returncode == 0, "precondition: the scratch course is open"
        e = {"PATH": "/usr/bin:/bin", "TD_STUDENT_ENV": str(senv), "TD_STUDENTS": f"{victim},{attacker}",
             "TD_INSTRUCTORS": "nosuchinstructor", "TD_HUB_ROOT": str(hub), "TD_EXCHANGE": str(base / "exchange"),
             "TD_SPAWNER": "localprocess"}
        p = subprocess.run([sys.executable, str(REPO / "deploy" / "class_setup.py"), "--repo", str(repo)], env=e,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr
        for what, f in files.items():
            r = as_user(attacker, "cat", f)
            assert r.returncode != 0, f"a student reads the {what} after the set-up: {f}"
        assert as_user(attacker, "ls", repo / "course" / "submitted").returncode != 0
        assert as_user(attacker, "ls", Path(f"~{victim}").expanduser()).returncode != 0, "a classmate's home is open"
        assert stat.S_IMODE(os.stat(base / "exchange").st_mode) == 0o1777
        cfg = senv / "etc" / "td-course" / "student-config"
        assert as_user(attacker, "cat", cfg / "nbgrader_config.py").returncode == 0, "the students' config is closed"
        assert (cfg / "td_exchange.py").read_text() == (REPO / "tools" / "grading" / "exchange.py").read_text()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _load_hub_config(environ: dict[str, str]):
    from traitlets.config import Config

    cfg = Config()
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(environ)
    try:
        path = REPO / "deploy" / "jupyterhub_config.py"
        exec(compile(path.read_text(), str(path), "exec"), {"get_config": lambda: cfg, "__file__": str(path)})
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return cfg


def test_hub_refuses_the_instructors_environment_for_students(tmp_path):
    base = {"PATH": f"{REPO / '.venv' / 'bin'}:/usr/bin:/bin", "TD_HUB_ROOT": str(tmp_path / "hub"),
            "TD_EXCHANGE": str(tmp_path / "exchange"), "TD_SPAWNER": "simple", "VIRTUAL_ENV": str(REPO / ".venv")}
    for student_env in ({}, {"TD_STUDENT_ENV": str(REPO / ".venv")}):
        with pytest.raises(SystemExit, match="TD_STUDENT_ENV"):
            _load_hub_config({**base, **student_env})
    # make hub: a clear error before any hub starts (the venv's stamp is not checked here)
    for student_env in ({}, {"TD_STUDENT_ENV": str(REPO / ".venv")}):
        e = {k: v for k, v in os.environ.items() if not k.startswith("TD_")}
        e.update(TD_HUB_ROOT=str(tmp_path / "hub"), TD_EXCHANGE=str(tmp_path / "exchange"), TD_HUB_PORT="1",
                 TD_HUB_API_PORT="1", TD_PROXY_API_PORT="1", **student_env)
        proc = subprocess.Popen(["make", "--no-print-directory", "-o", "setup", "-o", ".venv/.td-installed", "hub"],
                                cwd=REPO, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            pytest.fail(f"make hub started with {student_env or 'no TD_STUDENT_ENV'}:\n{out[-2000:]}")
        assert proc.returncode != 0 and "TD_STUDENT_ENV" in out and "jupyterhub -f" not in out, out


def test_student_servers_name_no_instructor_path(tmp_path):
    senv = tmp_path / "student-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(senv)], check=True)
    (senv / "bin" / "jupyterhub-singleuser").write_text("#!/bin/sh\n")
    (senv / "bin" / "jupyterhub-singleuser").chmod(0o755)
    cfg = _load_hub_config({"PATH": f"{REPO / '.venv' / 'bin'}:/usr/bin:/bin", "TD_HUB_ROOT": str(tmp_path / "hub"),
                            "TD_EXCHANGE": str(tmp_path / "exchange"), "TD_SPAWNER": "simple",
                            "TD_STUDENT_ENV": str(senv), "VIRTUAL_ENV": str(REPO / ".venv"),
                            "PYTHONPATH": str(REPO)})
    assert stat.S_IMODE(os.stat(tmp_path / "exchange").st_mode) == 0o1777, "the hub's exchange is not sticky"
    assert stat.S_IMODE(os.stat(tmp_path / "hub").st_mode) == 0o700, "the hub's state is open to students"

    class Spawner:
        def __init__(self, name):
            self.user = type("U", (), {"name": name})()
            self.environment = dict(cfg.Spawner.environment)
            self.home_dir = str(tmp_path / "home" / name)

    s = Spawner("alice")
    cfg.Spawner.pre_spawn_hook(s)
    assert "VIRTUAL_ENV" not in cfg.Spawner.env_keep and "PATH" not in cfg.Spawner.env_keep
    names = [f"{k}={v}" for k, v in s.environment.items() if str(REPO) in v] + [x for x in s.cmd if str(REPO) in x]
    assert names == [], f"a student's server names the checkout: {names}"
    assert Path(s.environment["JUPYTER_CONFIG_PATH"], "td_exchange.py").exists()
    teacher = Spawner("instructor")
    cfg.Spawner.pre_spawn_hook(teacher)
    assert teacher.environment.get("TD_EXCHANGE_ONE_ACCOUNT") == "1", "the trial's collect must trust names"
