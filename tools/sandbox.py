"""Sandboxed Jupyter kernels for grading untrusted submissions (used by ``tools/grade.py``).

:class:`SandboxKernelManager` is a jupyter_client ``AsyncKernelManager`` that nbgrader's
``Execute`` preprocessor starts instead of a plain kernel (set in the grading task's own
config, never in ``course/nbgrader_config.py``). Each kernel runs

    setpriv --pdeathsig KILL -- unshare --mount --net --pid --ipc --uts --fork --kill-child
        -- python -I tools/sandbox.py SPEC      # this file, as the namespace's init (root)

which builds a new root file system on a tmpfs holding only the system directories
(``/usr``, ``/etc``, ... read-only), the virtual environment and the one part of the
repository a notebook imports, ``td_lib`` (read-only; the *student edition*,
``tools/student_edition.py``, without the functions that answer an exercise, when
``SandboxKernelManager.td_lib`` names it; not ``checks``: test cells carry baked values and run
outside the kernel, ``tools/remote_tests.py``), a fresh ``/tmp``, ``/dev`` and
``/proc``, and ``/submission`` (the kernel's working directory: the student's own files other
than notebooks; the kernel receives the cells to run over ZMQ, so the notebook under grading,
with its hidden tests, is not in its file system), chroots into it, sets the resource limits
(address space, CPU seconds, processes, file size, no core files), sets ``no_new_privs``,
drops to an unprivileged uid/gid of its own (61000 + a slot number, one per concurrently
running kernel, so the process limit of one student never starves another), scrubs the
environment and execs the IPython kernel. The course (sources, solutions, release,
gradebook, other submissions), the repository's other files, HOME and the grader's
scratch files are simply not in that file system; there is no network (a new, empty
network namespace; the kernel talks to the grader over ZMQ *ipc* sockets in a directory
bound into the sandbox); the kernel is PID 1 of its PID namespace, so every process the
student started dies with it, and ``--pdeathsig``/``--kill-child`` kill the sandbox when
the grading worker dies.

Needs root (``unshare``/``mount``/``chroot``); ``SandboxKernelManager.enabled = False``
(``python -m tools.grade --no-sandbox``) runs ordinary kernels, for trusted submissions.
"""

from __future__ import annotations

import ctypes
import fcntl
import functools
import json
import os
import resource
import shutil
import sys
import tempfile
from pathlib import Path

UID_BASE = 61000
SLOTS = 1000
SANDBOX_PY = Path(__file__).resolve()
REPO = SANDBOX_PY.parent.parent

# The part of the repository a kernel may import: td_lib. Not checks (the references; test
# cells carry baked values), not tools, not the course.
EXPOSE = [REPO / "td_lib"]
ENV_PASS = ("NBGRADER_EXECUTION", "NBGRADER_VALIDATING", "TD_QUICK", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
            "OPENBLAS_NUM_THREADS", "TZ", "LANG", "LC_ALL")
GiB = 1 << 30


@functools.lru_cache(maxsize=1)
def imported_parts() -> list[str]:
    """Where the kernel's Python imports ``td_lib`` from (isolated mode, outside any checkout:
    an editable install points at the checkout it was installed from, which need not be this
    file's)."""
    import subprocess

    out = subprocess.run([sys.executable, "-I", "-c", "import os, td_lib; print(os.path.dirname(td_lib.__file__))"],
                         cwd="/", capture_output=True, text=True)
    return out.stdout.split() if out.returncode == 0 else []


def available() -> tuple[bool, str]:
    """Whether sandboxed kernels can start here, and why not."""
    if os.geteuid() != 0:
        return False, "the sandbox needs root (unshare, mount, chroot, setuid)"
    for tool in ("unshare", "setpriv"):
        if not shutil.which(tool):
            return False, f"{tool} (util-linux) not found"
    return True, ""


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


# ------------------------------------------------------------------- kernel manager
def _remove_root(spec_file: str | Path) -> None:
    """Remove the sandbox root named in ``spec_file`` (a kernel's spec), if there is one."""
    if os.path.exists(spec_file):
        shutil.rmtree(json.loads(Path(spec_file).read_text())["root"], ignore_errors=True)


def _sandbox_argv(spec_file: str) -> list[str]:
    """The command that starts the init of this file in new namespaces (module docstring)."""
    return ["setpriv", "--pdeathsig", "KILL", "--",
            "unshare", "--mount", "--net", "--pid", "--ipc", "--uts", "--fork", "--kill-child=SIGKILL",
            "--propagation", "private", "--",
            sys.executable, "-I", str(SANDBOX_PY), spec_file]


class _Sandboxing:
    """The lifecycle of a sandboxed kernel, mixed into ``SandboxKernelManager`` before
    jupyter_client's ``AsyncKernelManager`` (:func:`_make_manager`, which declares the traits
    ``enabled``, ``workdir`` and the limits read here)."""

    def __init__(self, **kw) -> None:
        """A manager whose kernel talks over ipc sockets in a scratch folder of its own."""
        super().__init__(**kw)
        self._slot = None
        self._ipc = None
        if self.enabled:
            self._ipc = scratch_dir("ipc")
            self.transport = "ipc"
            self.ip = os.path.join(self._ipc, "k")
            self.connection_file = os.path.join(self._ipc, "kernel.json")

    def format_kernel_cmd(self, extra_arguments=None):
        """The command that starts the kernel in its sandbox (a spec file for the init)."""
        cmd = super().format_kernel_cmd(extra_arguments)
        if not self.enabled:
            return cmd
        if self._slot is None:
            self._slot = UidSlot()
        uid = self._slot.uid
        os.chmod(self._ipc, 0o700)
        os.chown(self._ipc, uid, uid)
        os.chown(self.connection_file, uid, uid)
        work = self.workdir or os.getcwd()
        spec_file = os.path.join(self._ipc, "spec.json")
        _remove_root(spec_file)  # a restart: the previous kernel's (empty) root goes
        spec = self._spec(cmd, uid, work)
        Path(spec_file).write_text(json.dumps(spec))
        return _sandbox_argv(spec_file)

    def _spec(self, cmd: list[str], uid: int, work: str) -> dict:
        """What the init (:func:`_init`) needs to build this kernel's sandbox: the kernel's
        command, its uid/gid, folders, exposed paths, limits and environment."""
        return {
            "argv": cmd, "uid": uid, "gid": uid, "work": work, "ipc": self._ipc,
            "root": scratch_dir("root"),
            "expose": [sys.prefix, sys.base_prefix, *map(str, EXPOSE), *imported_parts(), *self.expose],
            "limits": {"AS": self.mem_limit, "CPU": self.cpu_limit, "NPROC": self.nproc_limit,
                       "FSIZE": self.fsize_limit, "CORE": 0},
            "tmp_size": self.tmp_size, "mpl_cache": self.mpl_cache,
            "overlay": {d: self.td_lib for d in imported_parts()} if self.td_lib else {},
            "env": {k: os.environ[k] for k in ENV_PASS if k in os.environ},
        }

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        """Launch the kernel, its stderr discarded when sandboxed."""
        if self.enabled:  # the student's own low-level fd 2 writes (and unshare's) stay out of
            import subprocess  # the worker's log; Python-level output travels over ZMQ

            kw["stderr"] = subprocess.DEVNULL
        return await super()._async_launch_kernel(kernel_cmd, **kw)

    async def _async_kill_kernel(self, restart: bool = False) -> None:
        """Kill the kernel, its sandboxed processes first."""
        # Kill the sandboxed processes first, so unshare reaps its child and exits by itself
        # (killing unshare first would leave the kernel a zombie of the host's init).
        if self._slot is not None:
            kill_uid(self._slot.uid)
            import asyncio
            for _ in range(50):
                if not await self.is_alive():
                    break
                await asyncio.sleep(0.02)
        await super()._async_kill_kernel(restart=restart)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        """Release the uid slot, the sandbox root and the ipc folder (not on a restart)."""
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            if self._slot is not None:
                kill_uid(self._slot.uid)  # anything the kernel left (the PID namespace dies with it)
                self._slot.release()
                self._slot = None
            if self._ipc:
                _remove_root(Path(self._ipc) / "spec.json")
                shutil.rmtree(self._ipc, ignore_errors=True)
                self._ipc = None


def _make_manager() -> type:
    """``SandboxKernelManager``: jupyter_client's ``AsyncKernelManager`` with the lifecycle of
    :class:`_Sandboxing` and its configurable traits (imported lazily: the init does not)."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import Bool, Int, List, Unicode

    class SandboxKernelManager(_Sandboxing, AsyncKernelManager):
        """An IPython kernel in a sandbox (see the module docstring)."""

        enabled = Bool(True, help="Run the kernel sandboxed (False: an ordinary kernel).").tag(config=True)
        workdir = Unicode("", help="Host folder bound as /submission, the kernel's cwd.").tag(config=True)
        mem_limit = Int(6 * GiB, help="RLIMIT_AS of the kernel, bytes.").tag(config=True)
        cpu_limit = Int(1800, help="RLIMIT_CPU of the kernel, seconds.").tag(config=True)
        nproc_limit = Int(256, help="RLIMIT_NPROC (processes + threads of the kernel's uid).").tag(config=True)
        fsize_limit = Int(1 * GiB, help="RLIMIT_FSIZE, bytes.").tag(config=True)
        tmp_size = Unicode("512m", help="Size of the sandbox's /tmp (tmpfs).").tag(config=True)
        expose = List(Unicode(), help="Extra host paths visible read-only.").tag(config=True)
        mpl_cache = Unicode("", help="Host MPLCONFIGDIR whose font cache is copied in.").tag(config=True)
        td_lib = Unicode("", help="Host folder of the student edition of td_lib (tools/student_edition.py), "
                                  "mounted where the kernel imports td_lib from; empty: the full library."
                         ).tag(config=True)

    return SandboxKernelManager


def __getattr__(name):  # lazy: the init below must not import jupyter_client
    if name == "SandboxKernelManager":
        cls = _make_manager()
        globals()[name] = cls
        return cls
    raise AttributeError(name)


# ------------------------------------------------------------ init inside namespaces
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC = 1, 2, 4, 32, 4096, 16384
_libc = None


def _mount(src, dst, fstype=None, flags=0, data=None) -> None:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    enc = lambda s: None if s is None else str(s).encode()
    if _libc.mount(enc(src), enc(dst), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"mount {src} -> {dst}: {os.strerror(e)}")


def _bind(src: str, dst: str, ro: bool = True) -> None:
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        open(dst, "a").close()
    _mount(src, dst, None, MS_BIND | MS_REC)
    flags = MS_REMOUNT | MS_BIND | MS_NOSUID | (MS_RDONLY if ro else 0)
    _mount(None, dst, None, flags)


def _init(spec: dict) -> None:
    """Run as root inside the new namespaces: build the root, drop privileges, exec."""
    root = spec["root"]
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=755")
    r = lambda p: root + p
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr", "/etc", "/opt", "/sys"):
        if os.path.islink(top):
            os.symlink(os.readlink(top), r(top))
        elif os.path.isdir(top):
            _bind(top, r(top))
    # The fresh /tmp first: a repository or venv that lives under /tmp (a CI clone) is then
    # bound on top of it, not hidden by it.
    os.makedirs(r("/tmp"))
    _mount("tmpfs", r("/tmp"), "tmpfs", MS_NOSUID | MS_NODEV, f"size={spec['tmp_size']},mode=1777")
    for p in spec["expose"]:
        if os.path.exists(p) and not os.path.exists(r(p)):  # not already under a bound folder
            _bind(p, r(p))
    for dst, src in spec.get("overlay", {}).items():  # the student edition in place of td_lib
        _bind(src, r(dst))
    os.makedirs(r("/dev"))
    _mount("tmpfs", r("/dev"), "tmpfs", MS_NOSUID, "size=64k,mode=755")
    for dev in ("null", "zero", "full", "random", "urandom"):
        _bind("/dev/" + dev, r("/dev/" + dev), ro=False)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, r("/dev/" + name))
    os.makedirs(r("/dev/shm"))
    _mount("tmpfs", r("/dev/shm"), "tmpfs", MS_NOSUID | MS_NODEV, "size=256m,mode=1777")
    os.makedirs(r("/proc"))
    _mount("proc", r("/proc"), "proc", MS_NOSUID | MS_NODEV)
    _bind(spec["work"], r("/submission"), ro=False)
    _bind(spec["ipc"], r(spec["ipc"]), ro=False)
    uid, gid = spec["uid"], spec["gid"]
    home = r("/tmp/home")
    for d in ("/tmp/home", "/tmp/home/.ipython", "/tmp/home/.mpl", "/tmp/home/.jupyter"):
        os.makedirs(r(d), exist_ok=True)
        os.chown(r(d), uid, gid)
    if spec.get("mpl_cache") and os.path.isdir(spec["mpl_cache"]):
        for f in Path(spec["mpl_cache"]).glob("fontlist*.json"):
            shutil.copy(f, home + "/.mpl/" + f.name)
            os.chown(home + "/.mpl/" + f.name, uid, gid)
    _mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=16m,mode=755")
    os.chroot(root)
    os.chdir("/submission")
    for name, value in spec["limits"].items():
        lim = getattr(resource, "RLIMIT_" + name)
        resource.setrlimit(lim, (value, value))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG=SIGKILL again: a change of uid clears unshare's
    env = dict(spec["env"])
    env.update(HOME="/tmp/home", IPYTHONDIR="/tmp/home/.ipython", MPLCONFIGDIR="/tmp/home/.mpl",
               JUPYTER_CONFIG_DIR="/tmp/home/.jupyter", JUPYTER_DATA_DIR="/tmp/home/.jupyter",
               JUPYTER_RUNTIME_DIR="/tmp/home/.jupyter", TMPDIR="/tmp", MPLBACKEND="agg",
               PYDEVD_DISABLE_FILE_VALIDATION="1",
               PATH=os.pathsep.join([os.path.join(spec["expose"][0], "bin"), "/usr/local/bin", "/usr/bin", "/bin"]))
    env.setdefault("LANG", "C.UTF-8")
    argv = spec["argv"]
    devnull = os.open("/dev/null", os.O_WRONLY)  # the kernel's own banner; outputs go over ZMQ
    os.dup2(devnull, 1)
    os.execve(argv[0], argv, env)


if __name__ == "__main__":
    _init(json.loads(Path(sys.argv[1]).read_text()))
