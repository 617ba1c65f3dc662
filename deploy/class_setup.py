"""The class's set-up on one machine: what keeps students to their own work (deploy/README.md).

``make hub`` runs ``python deploy/class_setup.py --check-env`` before the hub (a clear error when
students would run in the instructor's environment, or as root in the one-account trial:
:func:`root_trial_problem`), and ``deploy/jupyterhub_config.py`` calls :func:`setup` each time
the hub starts, so a hub started with ``jupyterhub -f`` is set up the same way. With one system
user per student (``TD_SPAWNER=localprocess``, the default) and as root it

- checks the student environment (``TD_STUDENT_ENV``): set, not this checkout's ``.venv``, and
  without the course's ``tools`` or ``checks`` (it holds the handout: the student edition of
  ``td_lib``);
- installs the students' Jupyter config (``deploy/student-config`` and ``tools/grading/exchange.py`` as
  ``td_exchange.py``) into ``<student env>/etc/td-course/student-config``, so a student's server
  names no path of the checkout;
- takes every permission for "others" away from the checkout, from the course root
  (``TD_COURSE_DIR``: sources, solutions, hidden tests, gradebook, submissions, feedback) and, if
  a student is in their group, the group's too; makes the hub's state (``TD_HUB_ROOT``) and the
  grading service's (``TD_GRADING_STATE``) ``0700``; takes group and others' permissions away
  from the students' homes (their nbgrader cache, their work);
- creates the exchange ``1777`` (sticky), owned by the first instructor's system user if there is
  one (the owner of the exchange is whom students' servers trust as the course's, see
  ``tools/grading/exchange.py``), or adds the sticky bit to an exchange writable by everyone.

The instructors' system users must be able to reach the course (owner of the checkout, or in its
group): a warning names each one who cannot.
"""

from __future__ import annotations

import argparse
import grp
import os
import pwd
import shutil
import stat
import subprocess
import sys
from pathlib import Path

DEPLOY = Path(__file__).resolve().parent
REPO = DEPLOY.parent
EXCHANGE_MODE = 0o1777


def _env_list(name: str, default: str = "") -> list[str]:
    return [u.strip() for u in os.environ.get(name, default).split(",") if u.strip()]


def _user(name: str) -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


# ------------------------------------------------------------------ the student environment
def student_env_problem(student_env: str | None, repo: Path = REPO) -> str | None:
    """Why ``student_env`` may not run students' servers, or None."""
    fix = ("build the student environment from the handout (deploy/README.md, 'One machine': make handout; "
           "python3 -m venv /srv/td-course/student-env; .../pip install -r dist/requirements-student.txt "
           "dist/td_lib-*.whl + the hub's pins) and pass it: TD_STUDENT_ENV=/srv/td-course/student-env make hub")
    if not student_env:
        return f"TD_STUDENT_ENV is not set: students' servers would run in the instructor's environment; {fix}"
    env = Path(student_env).resolve()
    if env == repo.resolve() or repo.resolve() in env.parents or env == (repo / ".venv").resolve():
        return (f"TD_STUDENT_ENV={student_env} is this checkout's environment (full td_lib with the answers, "
                f"checks, tools); {fix}")
    py = env / "bin" / "python"
    if not (env / "bin" / "jupyterhub-singleuser").exists() or not py.exists():
        return f"TD_STUDENT_ENV={student_env} has no bin/python and bin/jupyterhub-singleuser; {fix}"
    probe = ("import importlib.util as u\n"
             "print(' '.join(m for m in ('tools', 'checks', 'tools.grading.exchange')"
             " if u.find_spec(m.split('.')[0])))")
    out = subprocess.run([str(py), "-I", "-c", probe], cwd="/", capture_output=True, text=True, timeout=120)
    if out.returncode != 0 or out.stdout.split():
        return (f"TD_STUDENT_ENV={student_env} imports the course's {out.stdout.strip() or 'tools (probe failed)'}: "
                f"it is an instructor's environment; {fix}")
    return None


ALLOW_ROOT_TRIAL = "TD_HUB_ALLOW_ROOT_TRIAL"


def root_trial_problem(env: dict[str, str] | None = None, euid: int | None = None) -> str | None:
    """Why the hub may not start: the one-account trial (``TD_SPAWNER=simple``) started as root,
    where every student's server runs as root. None when it may (not root, one system user per
    student, or ``TD_HUB_ALLOW_ROOT_TRIAL=1``)."""
    env = os.environ if env is None else env
    euid = os.geteuid() if euid is None else euid
    if euid != 0 or env.get("TD_SPAWNER", "localprocess") != "simple" or env.get(ALLOW_ROOT_TRIAL) == "1":
        return None
    return (f"TD_SPAWNER=simple as root: every student's server would run as root, under the hub's account. "
            f"A student's notebook or terminal could then read and change everything on this machine: the "
            f"course's sources with their solutions and hidden tests, the gradebook, the instructor's "
            f"environment (this checkout: the full td_lib with the answers, checks, tools), every other "
            f"student's work and submissions, and submit under anyone's name. Start the trial as an "
            f"ordinary user, or run a class with one system user per student (the default, TD_SPAWNER="
            f"localprocess, as root). On a throw-away machine where that is acceptable, {ALLOW_ROOT_TRIAL}=1 "
            f"starts it anyway")


def root_trial_warning(env: dict[str, str] | None = None, euid: int | None = None) -> str | None:
    """What a root trial allowed by ``TD_HUB_ALLOW_ROOT_TRIAL=1`` gives the students, or None."""
    env = os.environ if env is None else env
    euid = os.geteuid() if euid is None else euid
    if euid == 0 and env.get("TD_SPAWNER", "localprocess") == "simple" and env.get(ALLOW_ROOT_TRIAL) == "1":
        return ("WARNING: a trial as root (TD_HUB_ALLOW_ROOT_TRIAL=1): every student's server runs as root; "
                "students can read the solutions, hidden tests and gradebook, and change anything on this "
                "machine. Never with real students.")
    return None


def student_config_dir(student_env: str | os.PathLike) -> Path:
    """Where the students' Jupyter config is installed: inside the student environment."""
    return Path(os.environ.get("TD_STUDENT_CONFIG") or Path(student_env) / "etc" / "td-course" / "student-config")


def install_student_config(dest: Path) -> Path:
    """``deploy/student-config`` and ``tools/grading/exchange.py`` (as ``td_exchange.py``) into ``dest``,
    readable by everyone, replaced when they differ."""
    src = DEPLOY / "student-config"
    dest.mkdir(parents=True, exist_ok=True)
    files = {p.relative_to(src): p for p in src.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    files[Path("td_exchange.py")] = REPO / "tools" / "grading" / "exchange.py"
    for rel, p in files.items():
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if not out.exists() or out.read_bytes() != p.read_bytes():
            shutil.copyfile(p, out)
        out.chmod(0o644)
    for d in [dest, *(p for p in dest.rglob("*") if p.is_dir())]:
        d.chmod(0o755)
    return dest


# ------------------------------------------------------------------------- the exchange
def prepare_exchange(exchange: Path, owner: str | None = None) -> list[str]:
    """Create the exchange ``1777`` (owned by ``owner`` if that system user exists and we are
    root), or add the sticky bit to one writable by everyone. Returns what it did."""
    done = []
    if not exchange.exists():
        exchange.mkdir(parents=True)
        exchange.chmod(EXCHANGE_MODE)
        done.append(f"created the exchange {exchange} (1777)")
        u = _user(owner) if owner else None
        if u and os.geteuid() == 0:
            os.chown(exchange, u.pw_uid, u.pw_gid)
            done.append(f"the exchange belongs to {owner}")
    st = os.lstat(exchange)
    if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
        try:
            exchange.chmod(stat.S_IMODE(st.st_mode) | stat.S_ISVTX)
            done.append(f"added the sticky bit to {exchange} (students could rename the course's folder)")
        except PermissionError:
            raise SystemExit(f"the exchange {exchange} is writable by everyone without the sticky bit: "
                             f"run `sudo chmod 1777 {exchange}`") from None
    return done


# ------------------------------------------------------------------------ permissions
def _members(gid: int) -> set[str]:
    try:
        g = grp.getgrgid(gid)
    except KeyError:
        return set()
    return set(g.gr_mem) | {u.pw_name for u in pwd.getpwall() if u.pw_gid == gid}


def _close(path: Path, students: list[str], done: list[str], mask: int | None = None) -> None:
    """Take others' permissions away from ``path`` (and the group's, if a student is in it)."""
    st = os.lstat(path)
    if mask is None:
        mask = 0o007 | (0o070 if _members(st.st_gid) & set(students) else 0)
    mode = stat.S_IMODE(st.st_mode)
    if mode & mask:
        path.chmod(mode & ~mask)
        done.append(f"{path}: {mode:o} -> {mode & ~mask:o}")


def lock(repo: Path, course: Path, hub_root: Path, grading_state: Path | None, students: list[str],
         instructors: list[str]) -> list[str]:
    """The permissions of a class on one machine (module doc). Returns what changed and warnings."""
    done: list[str] = []
    for p in dict.fromkeys([repo.resolve(), course.resolve()]):
        if p.exists():
            _close(p, students, done)
    gradebook = course / "gradebook.db"
    if gradebook.exists():
        _close(gradebook, students, done)
    for p in (hub_root, grading_state):
        if p is not None:
            p.mkdir(parents=True, exist_ok=True)
            _close(p, students, done, mask=0o077)
    for s in students:
        u = _user(s)
        home = Path(u.pw_dir) if u else None
        if home and home.is_dir() and os.lstat(home).st_uid == u.pw_uid:
            _close(home, students, done, mask=0o077)
    for name in instructors:
        u = _user(name)
        if u is None or u.pw_uid == 0:
            continue
        st = os.stat(course)
        groups = {g.gr_gid for g in grp.getgrall() if name in g.gr_mem} | {u.pw_gid}
        if st.st_uid != u.pw_uid and not (st.st_gid in groups and st.st_mode & 0o050 == 0o050):
            done.append(f"WARNING: instructor {name} cannot reach {course}: `chown -R {name} {repo}` "
                        f"or add {name} to its group")
    return done


def setup(env: dict[str, str] | None = None, repo: Path = REPO) -> list[str]:
    """The whole set-up from the hub's variables (deploy/README.md). Raises SystemExit with the
    reason when the student environment is the instructor's."""
    env = os.environ if env is None else env
    problem = student_env_problem(env.get("TD_STUDENT_ENV"), repo)
    if problem:
        raise SystemExit(f"error: {problem}")
    done = []
    install_student_config(student_config_dir(env["TD_STUDENT_ENV"]))
    instructors = [u.strip() for u in env.get("TD_INSTRUCTORS", "instructor").split(",") if u.strip()]
    students = [u.strip() for u in env.get("TD_STUDENTS", "").split(",") if u.strip()]
    exchange = Path(env.get("TD_EXCHANGE", "/srv/nbgrader/exchange"))
    one_user_each = env.get("TD_SPAWNER", "localprocess") == "localprocess"
    done += prepare_exchange(exchange, instructors[0] if instructors and one_user_each else None)
    if one_user_each and os.geteuid() == 0:
        hub_root = Path(env.get("TD_HUB_ROOT", "/srv/td-course/hub"))
        state = env.get("TD_GRADING_STATE")
        done += lock(repo, Path(env.get("TD_COURSE_DIR", str(repo / "course"))), hub_root,
                     Path(state) if state else None, students, instructors)
    return done


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python deploy/class_setup.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--check-env", action="store_true",
                   help="only check TD_STUDENT_ENV, and refuse the one-account trial (TD_SPAWNER=simple) as root "
                        f"unless {ALLOW_ROOT_TRIAL}=1 (make hub)")
    p.add_argument("--repo", type=Path, default=REPO, help="the checkout to close (default: this one)")
    a = p.parse_args(argv)
    if a.check_env:
        problem = root_trial_problem() or student_env_problem(os.environ.get("TD_STUDENT_ENV"), a.repo)
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
        warning = root_trial_warning()
        if warning:
            print(warning, file=sys.stderr)
        return 0
    try:
        for line in setup(repo=a.repo):
            print(line)
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
