"""The student's kernel in its bubblewrap sandbox: :class:`SandboxKernelManager`.

jupyter_client's ``AsyncKernelManager`` whose kernel runs in the sandbox ``tools/grading/sandbox.py``
builds (module docstring there: what the kernel sees, its limits, its uid). The grading
executor (:mod:`tools.grading.execute`) starts every notebook's kernel with it
(``Execute.kernel_manager_class``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Bool, Int, List, Unicode

from tools.grading.sandbox import (
    ENV_PASS,
    EXPOSE,
    GiB,
    MiB,
    UidSlot,
    _edition_binds,
    _python_binds,
    kill_uid,
    scratch_dir,
    wrap,
)

# Inside the kernel's sandbox, before the kernel: the student's files go onto the capped tmpfs,
# matplotlib's font cache is copied in, and the kernel's own banner goes to /dev/null.
KERNEL_INIT = ('cp -R /srv/in/. /submission/ 2>/dev/null; mkdir -p "$HOME/.ipython" "$HOME/.mpl" "$HOME/.jupyter"; '
               'cp /srv/mpl/fontlist*.json "$HOME/.mpl/" 2>/dev/null; exec "$@" >/dev/null')



class SandboxKernelManager(AsyncKernelManager):
    """An IPython kernel in a sandbox (see ``tools/grading/sandbox.py``'s docstring)."""

    enabled = Bool(True, help="Run the kernel sandboxed (False: an ordinary kernel).").tag(config=True)
    workdir = Unicode("", help="Host folder whose files are copied into /submission, the kernel's cwd "
                               "(read-only to the kernel).").tag(config=True)
    work_size = Int(256 * MiB, help="Size of the kernel's writable /submission (tmpfs), bytes.").tag(config=True)
    mem_limit = Int(6 * GiB, help="RLIMIT_AS of the kernel, bytes.").tag(config=True)
    cpu_limit = Int(1800, help="RLIMIT_CPU of the kernel, seconds.").tag(config=True)
    nproc_limit = Int(256, help="RLIMIT_NPROC (processes + threads of the kernel's uid; only when the "
                                "kernel has a uid of its own, as root).").tag(config=True)
    fsize_limit = Int(1 * GiB, help="RLIMIT_FSIZE, bytes.").tag(config=True)
    tmp_size = Unicode("512m", help="Size of the sandbox's /tmp (tmpfs).").tag(config=True)
    expose = List(Unicode(), help="Extra host paths visible read-only.").tag(config=True)
    mpl_cache = Unicode("", help="Host MPLCONFIGDIR whose font cache is copied in.").tag(config=True)
    td_lib = Unicode("", help="Host folder of the student edition of td_lib (tools/build/student_edition.py), "
                              "mounted where the kernel imports td_lib from; empty: the full library."
                     ).tag(config=True)


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
        """The command that starts the kernel in its sandbox."""
        cmd = super().format_kernel_cmd(extra_arguments)
        if not self.enabled:
            return cmd
        if self._slot is None and os.geteuid() == 0:
            self._slot = UidSlot()
        uid = self._slot.uid if self._slot is not None else None
        if uid is not None:
            os.chmod(self._ipc, 0o700)
            os.chown(self._ipc, uid, uid)
            os.chown(self.connection_file, uid, uid)
        return self.sandbox_argv(cmd, uid, self.workdir or os.getcwd())

    def sandbox_argv(self, cmd: list[str], uid: int | None, work: str) -> list[str]:
        """``cmd`` (the kernel) inside its bubblewrap sandbox (module docstring)."""
        expose = [*map(str, EXPOSE), *self.expose]
        limits = {"AS": self.mem_limit, "CPU": self.cpu_limit, "NPROC": self.nproc_limit,
                  "FSIZE": self.fsize_limit, "CORE": 0}
        env = {k: os.environ[k] for k in ENV_PASS if k in os.environ}
        env.setdefault("LANG", "C.UTF-8")
        env.update(HOME="/tmp/home", IPYTHONDIR="/tmp/home/.ipython", MPLCONFIGDIR="/tmp/home/.mpl",
                   JUPYTER_CONFIG_DIR="/tmp/home/.jupyter", JUPYTER_DATA_DIR="/tmp/home/.jupyter",
                   JUPYTER_RUNTIME_DIR="/tmp/home/.jupyter", TMPDIR="/tmp", MPLBACKEND="agg",
                   PYDEVD_DISABLE_FILE_VALIDATION="1", PATH=f"{sys.prefix}/bin:/usr/local/bin:/usr/bin:/bin")
        mpl = ["--ro-bind", self.mpl_cache, "/srv/mpl"] if self.mpl_cache and os.path.isdir(self.mpl_cache) else []
        extra = [a for path in expose if os.path.exists(path) and "td_lib" not in Path(path).parts[-1:]
                 for a in ("--ro-bind", path, path)]
        # the fresh /tmp first: a venv or checkout under /tmp (a CI clone) is then bound on top of it
        inside = ["--perms", "1777", "--size", str(_bytes(self.tmp_size)), "--tmpfs", "/tmp",
                  "--perms", "1777", "--size", str(256 * MiB), "--tmpfs", "/dev/shm",
                  *_python_binds([]), *extra, *_edition_binds(self.td_lib),
                  "--perms", "0777", "--size", str(self.work_size), "--tmpfs", "/submission",
                  "--ro-bind", work, "/srv/in", *mpl,
                  "--bind", self._ipc, self._ipc, "--chdir", "/submission",
                  "--clearenv", *[a for k, v in env.items() for a in ("--setenv", k, v)]]
        return wrap(uid, limits, inside, ["/bin/sh", "-c", KERNEL_INIT, "sh", *cmd])

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        """Launch the kernel, its stderr discarded when sandboxed."""
        if self.enabled:  # the student's own low-level fd 2 writes stay out of the worker's log
            kw["stderr"] = subprocess.DEVNULL
        return await super()._async_launch_kernel(kernel_cmd, **kw)

    async def _async_kill_kernel(self, restart: bool = False) -> None:
        """Kill the kernel, its sandboxed processes first."""
        if self._slot is not None:
            kill_uid(self._slot.uid)
            import asyncio
            for _ in range(50):
                if not await self.is_alive():
                    break
                await asyncio.sleep(0.02)
        await super()._async_kill_kernel(restart=restart)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        """Release the uid slot and the ipc folder (not on a restart)."""
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            if self._slot is not None:
                kill_uid(self._slot.uid)  # anything the kernel left (the PID namespace dies with it)
                self._slot.release()
                self._slot = None
            if self._ipc:
                shutil.rmtree(self._ipc, ignore_errors=True)
                self._ipc = None



def _bytes(size: str | int) -> int:
    """``"512m"`` -> bytes (k, m, g suffixes, as tmpfs takes them)."""
    text = str(size).strip().lower()
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[-1:], 1)
    return int(float(text.rstrip("kmg")) * scale)
