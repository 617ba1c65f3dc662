"""Sandboxes for grading untrusted submissions, on bubblewrap (``tools/grading/grade.py``).

Two kinds of process handle a student's code or its data while a notebook is graded, and each
runs in a sandbox of its own built by ``bwrap`` (Debian's ``bubblewrap``, the sandbox Flatpak
is built on; docs/GRADING.md has the whole picture):

- the **student's kernel** (``tools.grading.kernel.SandboxKernelManager``, a jupyter_client kernel manager
  nbgrader's ``Execute`` uses while grading): it sees the system's ``/usr`` and ``/etc``, the
  virtual environment and the notebook's grading edition of ``td_lib`` (``SandboxKernelManager
  .td_lib``, ``tools/build/student_edition.py``) read-only; a ``/submission`` folder (its working
  directory: the course's data files and the student's own files, never a notebook) on a
  **size-capped tmpfs** (``work_size``, default 256 MB: writing past it fails in the student's
  own cell with "No space left on device"), a capped ``/tmp`` and ``/dev/shm``, and the folder of
  its ZMQ *ipc* sockets; no network, no other process, nothing else of the machine;
- the **test runner** (:func:`runner_command`): the test cells' own process, which decodes the
  kernel's answers: the same system folders and edition read-only, its two source files
  (``tools/grading/runner.py``, ``tools/grading/wire.py``), a small ``/tmp``, nothing writable of the host.

Both are in new user, mount, PID, network, IPC and UTS namespaces (``--unshare-all``, no
nested user namespaces), die with their parent (``--die-with-parent``), start a new session,
and run under resource limits (``prlimit``: address space, CPU seconds, file size, no core files;
processes too when they have a uid of their own). **No root needed**: bubblewrap uses
unprivileged user namespaces, which most Linux systems allow; then the sandboxes run as the
grader's own user, mapped inside their user namespace. Run as root (``make grade`` on a course
server), bwrap builds each sandbox with root's rights and the sandboxed command then drops to
an unprivileged uid of its own (61000 + a slot: one student's process limit never starves
another's), without capabilities and with ``no_new_privs``, before any code of a submission runs.

Where bubblewrap is missing or user namespaces are disabled, :func:`available` says why and
``make grade`` refuses to grade unless ``--no-sandbox`` (which runs kernels and runners as the
grader's own user next to the course: trusted submissions only).
"""

from __future__ import annotations

import fcntl
import functools
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

UID_BASE = 61000
SLOTS = 1000
SANDBOX_PY = Path(__file__).resolve()
REPO = SANDBOX_PY.parents[2]

# The part of the repository a kernel may import: td_lib. Not checks (the references; test
# cells carry baked values), not tools, not the course.
EXPOSE = [REPO / "td_lib"]
ENV_PASS = ("NBGRADER_EXECUTION", "NBGRADER_VALIDATING", "TD_QUICK", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
            "OPENBLAS_NUM_THREADS", "TZ", "LANG", "LC_ALL")
GiB = 1 << 30
MiB = 1 << 20
RUNNER_FILES = [SANDBOX_PY.parent / "runner.py", SANDBOX_PY.parent / "wire.py"]
log = logging.getLogger("tools.grading.sandbox")


@functools.lru_cache(maxsize=1)
def imported_parts() -> list[str]:
    """Where the kernel's Python imports ``td_lib`` from (isolated mode, outside any checkout:
    an editable install points at the checkout it was installed from, which need not be this
    file's)."""
    import subprocess

    out = subprocess.run([sys.executable, "-I", "-c", "import os, td_lib; print(os.path.dirname(td_lib.__file__))"],
                         cwd="/", capture_output=True, text=True)
    return out.stdout.split() if out.returncode == 0 else []


@functools.lru_cache(maxsize=1)
def available() -> tuple[bool, str]:
    """Whether sandboxes can start here (bubblewrap installed, user namespaces allowed), and why not."""
    if not shutil.which("bwrap"):
        return False, ("bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap; `make sandbox` "
                       "does it as root)")
    for tool in ("prlimit", "setpriv"):
        if not shutil.which(tool):
            return False, f"{tool} (util-linux) not found"
    probe = subprocess.run(["bwrap", *_base_args(), "--", "/bin/true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return False, ("bubblewrap cannot create a sandbox here (user namespaces disabled?): "
                       + (probe.stderr.strip() or f"exit {probe.returncode}")[:300])
    return True, ""


def _base_args(privileged: bool = False) -> list[str]:
    """The namespaces and the system folders every sandbox has (read-only). ``privileged``:
    bwrap runs as root and the sandboxed command drops to a uid of its own (:func:`wrap`)."""
    ns = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"] if privileged \
        else ["--unshare-all", "--unshare-user", "--disable-userns"]
    args = [*ns, "--die-with-parent", "--new-session", "--proc", "/proc", "--dev", "/dev"]
    for top in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def wrap(uid: int | None, limits: dict, inside: list[str], cmd: list[str]) -> list[str]:
    """The command line that runs ``cmd`` in a bubblewrap sandbox laid out by ``inside``.

    As root (``uid`` given): bwrap builds the namespaces and mounts with root's rights, then the
    command drops to ``uid`` with no capability, no supplementary group and ``no_new_privs``
    (``setpriv``) before anything of a submission runs; the limits include the process count
    of that uid. Otherwise: bwrap in a user namespace of the caller's (no root needed); the
    process count is not limited (it would count every process of the caller's uid). Either way
    the sandbox is killed when its parent dies."""
    inside = [*inside, *_searchable(inside)]
    if uid is not None and os.geteuid() == 0:
        drop = ["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups", "--inh-caps=-all",
                "--bounding-set=-all", "--no-new-privs", "--"]
        lim = ["prlimit", *(f"--{k.lower()}={v}" for k, v in limits.items()), "--"]
        return ["setpriv", "--pdeathsig", "KILL", "--", "bwrap", *_base_args(True), *inside, "--", *drop, *lim, *cmd]
    lim = ["prlimit", *(f"--{k.lower()}={v}" for k, v in limits.items() if k != "NPROC"), "--"]
    return ["setpriv", "--pdeathsig", "KILL", "--", *lim, "bwrap", *_base_args(), *inside, "--", *cmd]


def _searchable(inside: list[str]) -> list[str]:
    """``--chmod 0755`` for the folders bwrap creates above the bound paths (it makes them 0700,
    which a sandbox running as another uid could not traverse)."""
    dests, made = set(), set()
    for i, arg in enumerate(inside[:-2]):
        if arg in ("--ro-bind", "--bind", "--tmpfs", "--dir"):
            dest = inside[i + 1] if arg in ("--tmpfs", "--dir") else inside[i + 2]
            dests.add(dest)
            made.update(str(a) for a in Path(dest).parents if str(a) != "/")
    system = ("/usr", "/etc", "/opt", "/proc", "/dev")
    keep = sorted(d for d in made - dests if not d.startswith(system))
    return [a for d in keep for a in ("--chmod", "0755", d)]


def _edition_binds(edition: str) -> list[str]:
    """Bind the grading edition of td_lib where Python imports td_lib from (else the full library)."""
    parts = imported_parts()
    if edition:
        return [a for part in parts for a in ("--ro-bind", edition, part)]
    return [a for part in parts for a in ("--ro-bind", part, part)]


def _python_binds(extra: list[str]) -> list[str]:
    out: list[str] = []
    for path in dict.fromkeys([sys.prefix, sys.base_prefix, *extra]):
        if os.path.exists(path) and not any(path.startswith(top + "/") for top in ("/usr", "/etc", "/opt")):
            out += ["--ro-bind", path, path]
    return out


def runner_command(edition: str = "", uid: int | None = None, mem_limit: int = 4 * GiB, cpu_limit: int = 1800,
                   tmp_size: int = 64 * MiB):
    """``fd -> argv``: the command that starts the test runner (``tools/grading/runner.py``) in its
    sandbox with its replies on file descriptor ``fd`` (see the module docstring)."""

    def command(fd: int) -> list[str]:
        limits = {"AS": mem_limit, "CPU": cpu_limit, "FSIZE": tmp_size, "CORE": 0, "NPROC": 64}
        env = {"HOME": "/tmp", "TMPDIR": "/tmp", "MPLBACKEND": "agg", "LANG": "C.UTF-8",
               "PATH": f"{sys.prefix}/bin:/usr/bin:/bin",
               **{k: os.environ[k] for k in ENV_PASS if k in os.environ}}
        # the fresh /tmp first: a venv or checkout under /tmp (a CI clone) is then bound on top of it
        inside = ["--perms", "1777", "--size", str(tmp_size), "--tmpfs", "/tmp",
                  *_python_binds([]), *_edition_binds(edition),
                  "--ro-bind", str(RUNNER_FILES[0]), "/runner/tools/grading/runner.py",
                  "--ro-bind", str(RUNNER_FILES[1]), "/runner/tools/grading/wire.py",
                  "--ro-bind", "/dev/null", "/runner/tools/__init__.py",
                  "--ro-bind", "/dev/null", "/runner/tools/grading/__init__.py", "--chdir", "/runner",
                  "--clearenv", *[a for k, v in env.items() for a in ("--setenv", k, v)]]
        # -m from /runner: tools.grading is the two files there (-E: no PYTHONPATH, -s: no user site)
        return wrap(uid, limits, inside, [sys.executable, "-s", "-E", "-m", "tools.grading.runner", str(fd)])

    return command


class UidSlot:
    """An unprivileged uid/gid of its own for one kernel (flock on a slot file)."""

    def __init__(self) -> None:
        d = Path(tempfile.gettempdir()) / "td-grade-uids"
        d.mkdir(exist_ok=True)
        for n in range(SLOTS):
            fd = os.open(d / f"slot-{n}", os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.fd, self.uid = fd, UID_BASE + n
            return
        raise RuntimeError("no free sandbox uid slot")

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def scratch_dir(kind: str) -> str:
    """A fresh 0700 folder ``td-<kind>-<pid>-*`` in the temp folder; first sweeps the folders of
    processes that died (a worker killed mid-task cannot clean up after itself)."""
    base = Path(tempfile.gettempdir())
    for old in base.glob("td-*-*-*"):
        parts = old.name.split("-")
        if len(parts) >= 4 and parts[1] in ("grade", "ipc", "root") and parts[2].isdigit():
            if not Path(f"/proc/{parts[2]}").exists():
                if parts[1] != "root" or not os.path.ismount(old):
                    shutil.rmtree(old, ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"td-{kind}-{os.getpid()}-")


def kill_uid(uid: int) -> int:
    """SIGKILL every process running as ``uid`` (a sandbox slot's own uid); return how many."""
    n = 0
    for st in Path("/proc").glob("[0-9]*/status"):
        try:
            uids = next(ln for ln in st.read_text().splitlines() if ln.startswith("Uid:")).split()[1:]
            if int(uids[0]) == uid:
                os.kill(int(st.parent.name), 9)
                n += 1
        except (OSError, StopIteration, ValueError):
            continue
    return n
