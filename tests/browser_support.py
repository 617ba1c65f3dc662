"""Drive the student path in a real browser: JupyterLab + headless Chromium (Playwright).

Used by ``tests/test_browser.py``. Three pieces:

* :func:`chromium_problem` tells why Debian's ``/usr/bin/chromium`` cannot be used (or
  ``None``); the fix is ``.ci/install_chromium.sh``. Playwright's own browser download
  (``playwright install``) is never used.
* :class:`JupyterLab` starts ``.venv/bin/jupyter lab`` on 127.0.0.1 (free port, random
  token, ``--no-browser``, ``--allow-root`` only when running as root) with every piece of
  Jupyter/IPython/matplotlib state under a project-local folder (``build/browser/state``)
  and ``TD_QUICK=1`` in the environment, waits until ``/api/status`` answers, and stops it
  through its own API (``POST /api/shutdown``), falling back to signals sent to its PID
  (the server leads its own process group, so its kernels go with it).
* :func:`run_notebook` opens a notebook in the browser, runs all cells with JupyterLab's
  "Run All Cells" command, continues below any cell that stopped the run (the kernel
  aborts the queued cells after an error, as a student would see), waits for the kernel
  to go idle, saves the notebook from the page (File > Save) and returns it as saved, plus
  the text the page rendered under each cell, the dialogs it had to answer and the files
  the session created.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = REPO / ".venv" / "bin"
BUILD = REPO / "build" / "browser"
CHROMIUM = Path("/usr/bin/chromium")
INSTALL_HINT = "run `.ci/install_chromium.sh` (as root; CI runs it) to install Debian's chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1440, "height": 1000}

# JupyterLab user settings for a deterministic, offline session: every cell attached to
# the DOM (so the page can be inspected cell by cell), no news / update checks.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


class BrowserTestError(AssertionError):
    """A step of the browser path failed; the message says which and why."""


# ----------------------------------------------------------------------------- chromium
def chromium_problem(path: Path | None = None) -> str | None:
    """Why ``path`` (default :data:`CHROMIUM`) cannot serve as the test browser, or ``None``
    if it starts."""
    path = CHROMIUM if path is None else path
    if not path.exists():
        return f"{path} not found: {INSTALL_HINT}"
    if not os.access(path, os.X_OK):
        return f"{path} is not executable: {INSTALL_HINT}"
    try:
        p = subprocess.run([str(path), "--headless=new", *CHROMIUM_ARGS, "--version"],
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{path} does not start ({exc}): {INSTALL_HINT}"
    if p.returncode != 0:
        return f"`{path} --version` failed ({p.returncode}): {p.stderr.strip()[-500:]}"
    return None


@contextlib.contextmanager
def chromium_browser(timeout_s: float = 60) -> Iterator[Any]:
    """A headless Debian Chromium driven by Playwright (closed on exit)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                     headless=True, timeout=timeout_s * 1000)
        try:
            yield browser
        finally:
            browser.close()


# ----------------------------------------------------------------------------- server
def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def jupyter_environment(state: Path, quick: bool = True) -> dict[str, str]:
    """The server's environment: project-local Jupyter/IPython/matplotlib state, quick demos."""
    dirs = {
        "JUPYTER_CONFIG_DIR": state / "jupyter" / "config",
        "JUPYTER_DATA_DIR": state / "jupyter" / "data",
        "JUPYTER_RUNTIME_DIR": state / "jupyter" / "runtime",
        "JUPYTERLAB_SETTINGS_DIR": state / "jupyter" / "config" / "lab" / "user-settings",
        "JUPYTERLAB_WORKSPACES_DIR": state / "jupyter" / "config" / "lab" / "workspaces",
        "IPYTHONDIR": state / "ipython",
        "MPLCONFIGDIR": state / "matplotlib",
    }
    env = dict(os.environ)
    for key, path in dirs.items():
        path.mkdir(parents=True, exist_ok=True)
        env[key] = str(path)
    for key in ("NBGRADER_EXECUTION", "JUPYTER_TOKEN", "JUPYTER_PATH", "JUPYTER_CONFIG_PATH"):
        env.pop(key, None)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    if quick:
        env["TD_QUICK"] = "1"
    else:
        env.pop("TD_QUICK", None)
    return env


# Files written into the project-local JUPYTER_CONFIG_DIR: no JupyterLab build check on
# page load (the prebuilt application is used as is).
CONFIG_FILES = {
    "labconfig/page_config.json": {"buildCheck": False, "buildAvailable": False},
}


def write_lab_settings(env: dict[str, str]) -> None:
    """Write :data:`LAB_SETTINGS` and :data:`CONFIG_FILES` into the server's state dirs."""
    files = {Path(env["JUPYTERLAB_SETTINGS_DIR"]) / rel: v for rel, v in LAB_SETTINGS.items()}
    files |= {Path(env["JUPYTER_CONFIG_DIR"]) / rel: v for rel, v in CONFIG_FILES.items()}
    for path, value in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value, indent=2))


def _describe(proc: Any) -> str:
    try:
        return f"pid {proc.pid} {' '.join(proc.cmdline())[:160]}"
    except Exception:  # noqa: BLE001 - process vanished while describing it
        return f"pid {proc.pid}"


class JupyterLab:
    """A JupyterLab server owned by the test (see the module docstring).

    Parameters
    ----------
    root : Path
        Folder served (``--ServerApp.root_dir``) and the server's working directory.
    state : Path
        Project-local folder for Jupyter, IPython and matplotlib state.
    log_path : Path
        The server's stdout and stderr go here (attached to failure messages).
    quick : bool
        Put ``TD_QUICK=1`` in the environment (kernels inherit it).
    """

    def __init__(self, root: Path, state: Path, log_path: Path, quick: bool = True) -> None:
        self.root = Path(root)
        self.state = Path(state)
        self.log_path = Path(log_path)
        self.quick = quick
        self.token = secrets.token_hex(24)
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.stopped_by = ""  # "api", "SIGTERM" or "SIGKILL" once stopped
        self._log_file: Any = None

    # -- lifecycle
    def command(self) -> list[str]:
        cmd = [
            str(VENV_BIN / "jupyter"), "lab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--ServerApp.terminals_enabled=False",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        return cmd

    def start(self, timeout_s: float = 120) -> JupyterLab:
        """Start the server and wait until ``/api/status`` answers with the token."""
        if not (VENV_BIN / "jupyter").exists():
            raise BrowserTestError(f"{VENV_BIN / 'jupyter'} missing: run `make setup` first")
        self.root.mkdir(parents=True, exist_ok=True)
        env = jupyter_environment(self.state, self.quick)
        write_lab_settings(env)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        for _attempt in range(3):  # a port can be taken between free_port() and bind
            self.port = free_port()
            self._log_file = self.log_path.open("w")
            self.proc = subprocess.Popen(self.command(), cwd=self.root, env=env,
                                         stdout=self._log_file, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
            if self._wait_ready(timeout_s):
                return self
            if self.proc.poll() is None:
                self.stop()
                raise BrowserTestError(
                    f"JupyterLab did not answer /api/status within {timeout_s:.0f} s\n"
                    + self.log_tail())
            self._log_file.close()
            if "already in use" not in self.log_path.read_text(errors="replace"):
                break
        raise BrowserTestError(f"JupyterLab exited with code {self.proc.returncode} "
                               f"before answering\n" + self.log_tail())

    def _wait_ready(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                status, body = self.api("GET", "api/status", timeout_s=5)
                if status == 200 and isinstance(body, dict) and "started" in body:
                    return True
            except (OSError, urllib.error.URLError, ValueError):
                pass
            time.sleep(0.5)
        return False

    def stop(self, timeout_s: float = 30) -> list[str]:
        """Stop the server: ``POST /api/shutdown``, else SIGTERM/SIGKILL to its PID group.

        Returns the stray processes (the server's descendants, e.g. kernels) still alive
        once the server had exited, described; they are killed. An empty list means a clean
        stop. :attr:`stopped_by` records how the server itself went: ``"api"``, ``"SIGTERM"``
        or ``"SIGKILL"``.
        """
        import psutil

        if self.proc is None:
            return []
        strays: list[str] = []
        try:
            family = [psutil.Process(self.proc.pid)]
            family += family[0].children(recursive=True)
        except psutil.NoSuchProcess:
            family = []
        if self.proc.poll() is None:
            try:
                self.api("POST", "api/shutdown", timeout_s=10)
            except (OSError, urllib.error.URLError, ValueError):
                pass  # the fallback below handles a server that does not answer
            self.stopped_by = "api"
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.stopped_by = "SIGTERM"
                self._signal_group(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.stopped_by = "SIGKILL"
                    self._signal_group(signal.SIGKILL)
                    self.proc.wait(timeout=10)
        _gone, alive = psutil.wait_procs(family, timeout=10)
        for proc in alive:
            strays.append(f"still alive after the server stopped: {_describe(proc)}")
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
        psutil.wait_procs(alive, timeout=10)
        if self._log_file and not self._log_file.closed:
            self._log_file.close()
        return strays

    def _signal_group(self, sig: signal.Signals) -> None:
        # The server was started with start_new_session=True: its PID is its group id.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def __enter__(self) -> JupyterLab:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- access
    def url(self, path: str = "lab", **query: str) -> str:
        q = urllib.parse.urlencode({"token": self.token, **query})
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}?{q}"

    def api(self, method: str, path: str, timeout_s: float = 10) -> tuple[int, Any]:
        """Call the REST API with the token; returns (status, parsed JSON or text)."""
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/{path.lstrip('/')}",
                                     method=method, data=b"" if method != "GET" else None,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            raw = resp.read().decode("utf-8", "replace")
            try:
                return resp.status, json.loads(raw) if raw else None
            except json.JSONDecodeError:
                return resp.status, raw

    def log_tail(self, lines: int = 120) -> str:
        if self._log_file and not self._log_file.closed:
            self._log_file.flush()
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return f"--- (no server log at {self.log_path}) ---"
        # The token would be useless after the test, but keep it out of reports anyway.
        body = "\n".join(text[-lines:]).replace(self.token, "<token>")
        return f"--- last {min(lines, len(text))} lines of {self.log_path} ---\n{body}"


# --------------------------------------------------------------------------- notebook
@dataclass
class NotebookRun:
    """What JupyterLab showed after running a notebook in the browser."""

    path: str  # relative to the server root
    notebook: dict  # nbformat JSON of the notebook as JupyterLab saved it
    rendered: dict[int, str]  # cell index -> text of its rendered output area (code cells)
    rounds: list[int]  # index of the cell each run started at (0 = "Run All Cells")
    seconds: float
    screenshot: Path | None = None
    console: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # phase -> seconds since open
    new_files: list[str] = field(default_factory=list)  # files the session created beside it
    dialogs: list[str] = field(default_factory=list)  # text of dialogs accepted on the way

    @property
    def cells(self) -> list[dict]:
        return self.notebook["cells"]


def nbgrader_meta(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def cell_kind(cell: dict) -> str:
    """``markdown``/``raw``, ``answer`` (student writes it), ``test`` (autograded), ``code``."""
    if cell["cell_type"] != "code":
        return cell["cell_type"]
    meta = nbgrader_meta(cell)
    if meta.get("solution"):
        return "answer"
    if meta.get("grade"):
        return "test"
    return "code"


def errors(cell: dict) -> list[tuple[str, str]]:
    return [(o.get("ename", ""), o.get("evalue", "")) for o in cell.get("outputs", [])
            if o.get("output_type") == "error"]


def first_exercise_test(cells: list[dict]) -> int | None:
    """Index of the first autograded test cell after the first code answer cell."""
    answers = [i for i, c in enumerate(cells) if cell_kind(c) == "answer"]
    if not answers:
        return None
    return next((i for i in range(answers[0] + 1, len(cells)) if cell_kind(cells[i]) == "test"),
                None)


def stub_run_problems(cells: list[dict]) -> list[str]:
    """What a student would find wrong in a released notebook run top to bottom on the
    stubs (the cell-level part of the judgement, shared by the browser and handout tests):
    every code cell ran; nothing raised before the first exercise; code and answer cells
    raise at most an unwritten exercise's ``NotImplementedError``; no visible test needs
    more than td_lib; the first exercise's test cell reports ``NotImplementedError``."""
    problems: list[str] = []
    target = first_exercise_test(cells)
    if target is None:
        problems.append("no autograded test cell after a code exercise (answer) cell")
    first_test = next((i for i, c in enumerate(cells) if cell_kind(c) == "test"), len(cells))
    for i, cell in enumerate(cells):
        kind = cell_kind(cell)
        if kind not in ("code", "answer", "test"):
            continue
        gid = nbgrader_meta(cell).get("grade_id", "")
        where = f"cell {i} ({kind}{' ' + gid if gid else ''}): {cell['source'][:60]!r}"
        errs = errors(cell)
        if cell["source"].strip() and cell.get("execution_count") is None:
            problems.append(f"{where} did not run (no execution count)")
        if kind == "code" and i < first_test and errs:
            problems.append(f"{where} raised {errs} before any exercise")
        elif kind in ("code", "answer") and [e for e in errs if e[0] != "NotImplementedError"]:
            problems.append(f"{where} raised {[e for e in errs if e[0] != 'NotImplementedError']} "
                            "(only an unwritten exercise's NotImplementedError is acceptable)")
        elif kind == "test" and [e for e in errs if e[0] in ("ModuleNotFoundError", "ImportError")]:
            problems.append(f"{where}: a visible test needs more than td_lib: {errs}")
    if target is not None and "NotImplementedError" not in [e[0] for e in errors(cells[target])]:
        gid = nbgrader_meta(cells[target]).get("grade_id", "")
        problems.append(f"first exercise's test cell {target} ({gid}) should report NotImplementedError "
                        f"on the stub; its errors: {errors(cells[target])}")
    return problems


# JavaScript run in the page. ``window.jupyterapp`` exists because the server runs with
# ``--LabApp.expose_app_in_browser=True``.
_JS_INSTALL = """
(path) => {
  const app = window.jupyterapp;
  if (!app || !app.shell || !app.commands) return 'no-app';
  const panel = Array.from(app.shell.widgets('main')).find(
      w => w.context && w.context.path === path && w.content && w.content.model);
  if (!panel) return 'no-panel';
  window.__td = window.__td || {};
  window.__td.panel = panel;
  return 'ok';
}
"""
_JS_KERNEL = """
() => {
  const p = window.__td.panel, sc = p.sessionContext;
  const k = sc.session && sc.session.kernel;
  return {ready: !!sc.isReady, kernel: k ? k.status : null,
          name: k ? k.name : null, busy: sc.kernelDisplayStatus};
}
"""
_JS_RUN = """
([command, index]) => {
  const app = window.jupyterapp, p = window.__td.panel;
  app.shell.activateById(p.id);
  if (index !== null) { p.content.activeCellIndex = index; p.content.deselectAll(); }
  window.__td.done = null;
  app.commands.execute(command).then(
      r => { window.__td.done = 'ok'; },
      e => { window.__td.done = 'error: ' + (e && e.message ? e.message : String(e)); });
  return true;
}
"""
_JS_STATE = """
() => {
  const p = window.__td.panel, sc = p.sessionContext;
  const k = sc.session && sc.session.kernel;
  const pending = Array.from(document.querySelectorAll(
      '.jp-Notebook .jp-InputPrompt')).filter(e => e.textContent.includes('*')).length;
  return {done: window.__td.done, kernel: k ? k.status : null, pending: pending};
}
"""
_JS_MODEL = "() => window.__td.panel.content.model.toJSON()"
_JS_RENDERED = """
() => window.__td.panel.content.widgets.map(w => {
  const o = w.node.querySelector('.jp-OutputArea');
  return o ? o.textContent : null;
})
"""
_JS_SCROLL = """
(index) => {
  const p = window.__td.panel;
  p.content.activeCellIndex = index;
  const w = p.content.widgets[index];
  if (w && w.node) w.node.scrollIntoView({block: 'center'});
  return true;
}
"""
_JS_SAVE = """
() => {
  const app = window.jupyterapp, p = window.__td.panel;
  app.shell.activateById(p.id);
  window.__td.saved = null;
  app.commands.execute('docmanager:save').then(
      r => { window.__td.saved = p.context.model.dirty ? 'still dirty' : 'ok'; },
      e => { window.__td.saved = 'error: ' + (e && e.message ? e.message : String(e)); });
  return true;
}
"""
_JS_SHUTDOWN = "async () => { await window.__td.panel.sessionContext.shutdown(); return true; }"


def _poll(page: Any, check: Callable[[], Any], timeout_s: float, what: str,
          interval_s: float = 0.5, dialogs: list[str] | None = None) -> Any:
    """Call ``check`` until it returns a truthy value; accept any dialog JupyterLab raises
    meanwhile (e.g. a kernel chooser), noting its text in ``dialogs``. Raise
    BrowserTestError naming ``what`` on timeout."""
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while True:
        dialog = page.locator(".jp-Dialog .jp-mod-accept")
        if dialog.count():
            with contextlib.suppress(Exception):
                text = page.locator(".jp-Dialog-content").first.inner_text(timeout=2000)
                if dialogs is not None:
                    dialogs.append(" ".join(text.split())[:200])
                dialog.first.click(timeout=2000)
        last = check()
        if last and not (isinstance(last, str) and last.startswith("no-")):
            return last
        if time.monotonic() > deadline:
            raise BrowserTestError(f"timed out after {timeout_s:.0f} s waiting for {what} "
                                   f"(last state: {last!r})")
        page.wait_for_timeout(interval_s * 1000)


def _listing(folder: Path) -> set[str]:
    """Files under ``folder`` (relative), ignoring JupyterLab's checkpoints."""
    return {str(p.relative_to(folder)) for p in folder.rglob("*")
            if p.is_file() and ".ipynb_checkpoints" not in p.parts}


def run_notebook(browser: Any, lab: JupyterLab, path: str, *, screenshot: Path | None = None,
                 open_timeout_s: float = 120, run_timeout_s: float = 600,
                 executed_copy: Path | None = None) -> NotebookRun:
    """Open ``path`` (relative to the server root) in JupyterLab and run all its cells.

    Sequence: load ``/lab/tree/<path>``; wait for the notebook panel and an idle kernel;
    execute JupyterLab's ``notebook:run-all-cells`` command (what *Run ▸ Run All Cells*
    does); when that run stops at an error (the kernel aborts the queued cells), select
    the first cell below the run's start that did not run and execute
    ``notebook:run-all-below`` from there, until every code cell has run (each round
    starts further down, so this ends). After each round wait for
    the command to settle, the kernel to be idle and no ``[*]`` prompt to remain. Then save
    the notebook (``docmanager:save``) and read it back through ``/api/contents``.

    The screenshot (if asked) is taken with the first exercise's test cell in view. The
    kernel is shut down before returning. ``executed_copy`` receives the notebook JSON.
    """
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}")
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    t0 = time.monotonic()
    timings: dict[str, float] = {}
    dialogs: list[str] = []
    poll = functools.partial(_poll, dialogs=dialogs)
    folder = (lab.root / path).parent
    before = _listing(folder)

    def mark(phase: str) -> None:
        timings[phase] = round(time.monotonic() - t0, 2)

    try:
        # A workspace of its own, reset: nothing restored from an earlier page (a tab left
        # open would start a second kernel).
        workspace = "td-" + "".join(ch if ch.isalnum() else "-" for ch in path)
        url = lab.url(f"lab/workspaces/{workspace}/tree/" + urllib.parse.quote(path), reset="")
        page.goto(url, timeout=open_timeout_s * 1000, wait_until="domcontentloaded")
        poll(page, lambda: page.evaluate(_JS_INSTALL, path), open_timeout_s,
              f"JupyterLab to open {path} (window.jupyterapp and the notebook panel)")
        mark("panel")
        poll(page, lambda: (lambda s: s["ready"] and s["kernel"] == "idle")(
            page.evaluate(_JS_KERNEL)), open_timeout_s, f"the kernel of {path} to be idle")
        # Let the notebook attach every cell to the DOM before running.
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=open_timeout_s * 1000)
        mark("kernel idle")

        rounds: list[int] = []
        start: int | None = None
        deadline = time.monotonic() + run_timeout_s
        while True:
            command = "notebook:run-all-cells" if start is None else "notebook:run-all-below"
            rounds.append(start or 0)
            page.evaluate(_JS_RUN, [command, start])
            page.wait_for_timeout(300)
            poll(page, lambda: (lambda s: s["done"] is not None and s["kernel"] == "idle"
                                 and s["pending"] == 0)(page.evaluate(_JS_STATE)),
                  max(5.0, deadline - time.monotonic()),
                  f"{command} on {path} to finish (kernel idle, no [*] prompt)")
            state = page.evaluate(_JS_STATE)
            if state["done"] != "ok":
                raise BrowserTestError(f"{command} failed in the page: {state['done']}")
            cells = page.evaluate(_JS_MODEL)["cells"]
            # After an error the kernel aborts the requests queued at that moment; requests
            # arriving later still run, so any subset of the cells below may be missing.
            # Resume at the first cell below this round's start that has not run.
            nxt = next((i for i, c in enumerate(cells)
                        if i > (-1 if start is None else start) and c["cell_type"] == "code"
                        and c.get("execution_count") is None and c["source"].strip()), None)
            if nxt is None:
                break
            start = nxt
        seconds = time.monotonic() - t0
        mark("cells run")

        # Save as a student would (File > Save) and read the file back through the server.
        page.evaluate(_JS_SAVE)
        saved = poll(page, lambda: page.evaluate("() => window.__td.saved"), open_timeout_s,
                      f"JupyterLab to save {path}")
        if saved != "ok":
            raise BrowserTestError(f"saving {path} from JupyterLab failed: {saved}")
        status, model = lab.api("GET", "api/contents/" + urllib.parse.quote(path)
                                + "?content=1&type=notebook", timeout_s=30)
        if status != 200 or not isinstance(model, dict) or not model.get("content"):
            raise BrowserTestError(f"GET /api/contents/{path} returned {status}: {model!r:.300}")
        nb_json = model["content"]
        mark("saved")
        new_files = sorted(_listing(folder) - before)
        dom = page.evaluate(_JS_RENDERED)
        rendered = {i: dom[i] for i in range(min(len(dom), len(nb_json["cells"])))
                    if dom[i] is not None}
        if len(dom) != len(nb_json["cells"]):
            console.append(f"note: page shows {len(dom)} cells, model has "
                           f"{len(nb_json['cells'])}")
        if executed_copy is not None:
            executed_copy.parent.mkdir(parents=True, exist_ok=True)
            executed_copy.write_text(json.dumps(nb_json, indent=1))
        if screenshot is not None:
            focus = first_exercise_test(nb_json["cells"])
            if focus is not None:
                page.evaluate(_JS_SCROLL, focus)
                page.wait_for_timeout(500)
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot))
        mark("screenshot")
        with contextlib.suppress(Exception):
            page.evaluate(_JS_SHUTDOWN)
        mark("kernel shut down")
        return NotebookRun(path, nb_json, rendered, rounds, seconds, screenshot, console,
                           timings, new_files, dialogs)
    except Exception as exc:
        if screenshot is not None:
            with contextlib.suppress(Exception):
                fail_shot = screenshot.with_name(screenshot.stem + ".failure.png")
                page.screenshot(path=str(fail_shot))
                console.append(f"failure screenshot: {fail_shot}")
        raise BrowserTestError(
            f"{exc}\n(phases reached, seconds since opening: {timings})"
            f"\n--- browser console (errors/warnings) ---\n" + "\n".join(console[-40:])
            + "\n" + lab.log_tail()) from exc
    finally:
        context.close()


def copy_tree(src: Path, dst: Path) -> Path:
    """Replace ``dst`` by a copy of ``src`` (what a student downloads)."""
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    return dst


# ------------------------------------------------------------------------------- axe-core
#: The WCAG 2.1 A and AA rules of axe-core (tags), as the course's accessibility checks run them.
AXE_WCAG21_AA = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")

_JS_AXE_RUN = """
async ([tags, rules, context, preload, disable]) => {
  // axe leaves its experimental rules out of a run by tag; those that carry a WCAG A/AA tag
  // (label-content-name-mismatch, ...) are switched on, so every WCAG 2.1 A/AA rule runs.
  const experimental = axe.getRules(tags).filter(r => r.tags.includes('experimental')).map(r => r.ruleId);
  const switches = Object.fromEntries(experimental.map(r => [r, {enabled: true}]));
  for (const r of disable) switches[r] = {enabled: false};
  const options = {runOnly: rules ? {type: 'rule', values: rules} : {type: 'tag', values: tags},
                   resultTypes: ['violations'], preload, rules: rules ? {} : switches};
  const res = await axe.run(context || document, options);
  return {version: axe.version, rules: rules ? rules.length : axe.getRules(tags).length,
          passes: res.passes.map(r => r.id), incomplete: res.incomplete.map(r => r.id),
          violations: res.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, tags: v.tags,
              nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 300),
                                        summary: (n.failureSummary || '').slice(0, 300)}))}))};
}
"""

#: The one WCAG rule that needs the page's style sheets as text (axe fetches them: "preload"),
#: which a page opened from file:// cannot give it (Chromium refuses the requests); run it
#: with :func:`axe_run` on the pages served over http://127.0.0.1 (:func:`serve_folder`).
AXE_CSSOM_RULES = ("css-orientation-lock",)


@functools.lru_cache(maxsize=1)
def axe_script() -> str:
    """axe-core's ``axe.min.js`` as bundled by the pinned ``axe-playwright-python`` wheel
    (requirements.txt): the same engine offline, no npm and no network."""
    from axe_playwright_python.sync_playwright import Axe

    return Axe().axe_script


def axe_run(page: Any, tags: tuple[str, ...] = AXE_WCAG21_AA, context: Any = None,
            rules: tuple[str, ...] | None = None, preload: bool = False,
            disable: tuple[str, ...] = ()) -> dict:
    """Run axe-core in ``page`` (injected once per document) over ``context`` (default: the
    whole document; else an axe context such as ``{"include": [["details"]]}``) with the rules
    of ``tags``, experimental ones included, but ``disable``; or only ``rules``. ``preload``
    lets axe fetch the style sheets (for :data:`AXE_CSSOM_RULES`; from file:// those requests
    fail, in the console). Returns ``{"version", "rules", "passes", "incomplete",
    "violations"}``: rule ids that passed or could not decide, and each violation with its
    rule id, impact, help text and nodes (target, html, summary)."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(axe_script())
    return page.evaluate(_JS_AXE_RUN, [list(tags), list(rules) if rules else None, context, preload,
                                       list(disable)])


# Under ``root``: keeps the highlighting of one visible <pre> per highlighted-token class and
# place (a cell's code, its output, other text; in a fold or not) and flattens every other
# <pre> to its plain text (same text, same block, no token <span>s). The contrast of a token
# depends on its class and the block it sits in, not on which of the page's blocks it is, and
# thousands of tokens share a few dozen classes: checking each one made most of axe's run.
_JS_SAMPLE_CODE = """
(root) => {
  const seen = new Set(), pres = Array.from(document.querySelectorAll((root || 'body') + ' pre'));
  let kept = 0, flattened = 0;
  for (const pre of pres) {
    if (!pre.querySelector('span') || !pre.checkVisibility({visibilityProperty: true})) continue;
    const place = (pre.closest('.cell_output') ? 'out' : pre.closest('.cell_input') ? 'in' : 'text')
                  + (pre.closest('details') ? ' fold' : '');
    const keys = [place, ...Array.from(pre.querySelectorAll('span[class]'), s => place + ' ' + s.className)];
    const fresh = keys.filter(k => !seen.has(k));
    fresh.forEach(k => seen.add(k));
    if (fresh.length) { kept++; } else { pre.textContent = pre.textContent; flattened++; }
  }
  return {kept, flattened};
}
"""


_JS_AXE_START = ("(args) => { window.__tdAxe = undefined; (" + _JS_AXE_RUN.strip() + ")(args).then("
                 "r => { window.__tdAxe = r; }, e => { window.__tdAxe = {error: String(e && e.stack || e)}; });"
                 " return true; }")


def axe_start(page: Any, tags: tuple[str, ...] = AXE_WCAG21_AA, root: str = "") -> dict:
    """Start axe-core over a whole page (or the elements matching ``root``, a CSS selector),
    every rule of ``tags`` (experimental ones included), and return at once: the run goes on
    in the page while Python loads the next one in another tab (:func:`axe_wait` collects it).
    One economy first (:data:`_JS_SAMPLE_CODE`): the highlighted code blocks that bring no new
    token class are flattened to their plain text. This changes the page (reload it before
    anything that must see the highlighting). Returns what was kept and flattened."""
    sample = page.evaluate(_JS_SAMPLE_CODE, root)
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(axe_script())
    page.evaluate(_JS_AXE_START, [list(tags), None, {"include": [[root]]} if root else None, False, []])
    return sample


def axe_wait(page: Any, timeout_s: float = 300) -> dict:
    """The result of the run :func:`axe_start` began in ``page`` (as :func:`axe_run` returns it)."""
    page.wait_for_function("() => window.__tdAxe !== undefined", timeout=timeout_s * 1000, polling=100)
    result = page.evaluate("() => window.__tdAxe")
    if "error" in result:
        raise BrowserTestError(f"axe-core failed in {page.url}: {result['error'][:2000]}")
    return result


def axe_run_page(page: Any, tags: tuple[str, ...] = AXE_WCAG21_AA, root: str = "") -> dict:
    """:func:`axe_start` and :func:`axe_wait`: every rule of ``tags`` over the page (or
    ``root``), the repeated code highlighting flattened first (``code_blocks`` in the result)."""
    sample = axe_start(page, tags, root)
    return {**axe_wait(page), "code_blocks": sample}


def axe_html_pages(pages: dict[str, str], folder: Path, screenshots: Path | None = None) -> list[str]:
    """axe-core's WCAG 2.1 AA problems of HTML pages (name -> text), each written to ``folder``
    and opened offline (nothing but ``file:`` and ``data:`` loads) in headless Chromium; with
    ``screenshots``, a full-page screenshot of each there."""
    problems = []
    with chromium_browser() as browser:
        context = browser.new_context(viewport=VIEWPORT)
        context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:")) else r.abort())
        for name, html in pages.items():
            f = folder / f"live_grading_{name}.html"
            f.write_text(html)
            pg = context.new_page()
            pg.goto(f.as_uri())
            if screenshots is not None:
                screenshots.mkdir(parents=True, exist_ok=True)
                pg.screenshot(path=str(screenshots / f"live_grading_{name}.png"), full_page=True)
            res = axe_run(pg)
            if res["violations"]:
                problems.append(f"{name}: axe-core {res['version']}:\n{axe_report(res['violations'])}")
            pg.close()
        context.close()
    return problems


def axe_report(violations: list[dict]) -> str:
    """One line per violation and node, for an assertion message."""
    return "\n".join(f"  {v['id']} ({v['impact']}): {v['help']}: {n['target']} {n['html'][:160]}"
                     for v in violations for n in v["nodes"][:5])


@contextlib.contextmanager
def serve_folder(root: Path) -> Iterator[str]:
    """Serve ``root`` read-only over http://127.0.0.1 (a free port) while the block runs;
    yields the base URL (ending in ``/``). Quiet: no request log."""
    import http.server
    import threading

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
