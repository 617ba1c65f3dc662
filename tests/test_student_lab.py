"""Student-only JupyterLab vs the instructor's, in a real browser (Chromium + Playwright).

* **Student**: JupyterLab with the handout's Jupyter config dir on ``JUPYTER_CONFIG_PATH``
  (``tools.build.handout.write_student_config``: nbgrader's instructor Lab plugins disabled in
  ``labconfig/page_config.json``, its formgrader and course-list server extensions off in
  ``jupyter_server_config.d``). The page has *Nbgrader > Assignment List* and a notebook's
  *Validate* button, and no *Formgrader*, *Course List* or *Create Assignment* (no
  command, no menu item, no toolbar or sidebar); ``/formgrader`` is not served.
* **Instructor**: JupyterLab in ``course/`` with the normal configuration (what
  ``make formgrader`` runs): every one of them is there and the formgrader opens.

Screenshots: ``build/browser/lab_student.png``, ``lab_instructor.png``, ``lab_formgrader.png``.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

try:
    from tests import browser_support as bs
except ImportError:  # tests/ on sys.path
    import browser_support as bs

from tools.build import handout

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

STUDENT_COMMANDS = ("nbgrader:open-assignment-list",)
INSTRUCTOR_COMMANDS = ("nbgrader:open-formgrader", "nbgrader:open-course-list",
                       "nbgrader:open-create-assignment")
STUDENT_MENU = ("Assignment List",)
INSTRUCTOR_MENU = ("Formgrader", "Course List", "Create Assignment")


class ConfiguredLab(bs.JupyterLab):
    """browser_support's JupyterLab with a Jupyter config dir on JUPYTER_CONFIG_PATH."""

    def __init__(self, *a, config_path: Path | None = None, **kw) -> None:
        super().__init__(*a, **kw)
        self.config_path = config_path

    def command(self) -> list[str]:
        cmd = super().command()
        if self.config_path is not None:
            # as a student starts it: what quiets the Lab comes from the student config, not from flags
            cmd = ["/usr/bin/env", f"JUPYTER_CONFIG_PATH={self.config_path}",
                   *[c for c in cmd if not c.startswith(("--LabApp.news_url", "--LabApp.check_for_updates"))]]
        return cmd

    def start(self, timeout_s: float = 120) -> bs.JupyterLab:
        """Start, then drop the notification settings browser_support writes for every test
        server: the student's Lab must be quiet on a fresh HOME by its own config."""
        lab = super().start(timeout_s)
        if self.config_path is not None:
            env = bs.jupyter_environment(self.state, self.quick)
            (Path(env["JUPYTERLAB_SETTINGS_DIR"]) / "@jupyterlab/apputils-extension/notification.jupyterlab-settings"
             ).unlink(missing_ok=True)
        return lab


@pytest.fixture(scope="module")
def browser(chromium: Path):
    with bs.chromium_browser() as b:
        yield b


def _serve(lab: bs.JupyterLab):
    lab.start()
    try:
        yield lab
    finally:
        strays = lab.stop()
    assert not strays, "processes survived the JupyterLab server:\n" + "\n".join(strays)


@pytest.fixture(scope="module")
def student_lab(chromium, tmp_path_factory, monkeypatch_module):
    from tools.build.pipeline import ensure_release

    root = bs.BUILD / "student_lab" / "work"
    bs.copy_tree(ensure_release("td2_7_learned_first"), root / "td2_7_learned_first")
    cfg = handout.write_student_config(tmp_path_factory.mktemp("student-config"))
    yield from _serve(ConfiguredLab(root=root, state=bs.BUILD / "student_lab" / "state",
                                    log_path=bs.BUILD / "student_lab.log", config_path=cfg))


@pytest.fixture(scope="module")
def monkeypatch_module(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    # The course config reads the exchange from TD_EXCHANGE: a scratch one, never /srv.
    mp.setenv("TD_EXCHANGE", str(tmp_path_factory.mktemp("exchange")))
    yield mp
    mp.undo()


@pytest.fixture(scope="module")
def instructor_lab(chromium, monkeypatch_module):
    # `make formgrader`: JupyterLab rooted at course/ (its nbgrader_config.py), normal config.
    yield from _serve(bs.JupyterLab(root=bs.REPO / "course", state=bs.BUILD / "instructor_lab" / "state",
                                    log_path=bs.BUILD / "instructor_lab.log"))


_JS_UI = """
async () => {
  const app = window.jupyterapp;
  if (!app || !app.commands) return null;
  await app.restored;
  const ids = %s;
  const cmds = Object.fromEntries(ids.map(i => [i, app.commands.hasCommand(i)]));
  const plugins = Object.fromEntries(['assignment-list', 'course-list', 'create-assignment',
      'formgrader', 'menu', 'validate-assignment'].map(
      p => [p, app.hasPlugin('@jupyter/nbgrader:' + p) && app.isPluginActivated('@jupyter/nbgrader:' + p)]));
  return {cmds, plugins};
}
"""


_JS_RUN = """
async (code) => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.sessionContext.ready;
  let out = '';
  const future = panel.sessionContext.session.kernel.requestExecute({code});
  future.onIOPub = (msg) => { if (msg.header.msg_type === 'stream') out += msg.content.text; };
  await future.done;
  return out;
}
"""


def _status(lab: bs.JupyterLab, path: str) -> int:
    try:
        return lab.api("GET", path)[0]
    except urllib.error.HTTPError as e:
        return e.code


def _look(browser, lab: bs.JupyterLab, shot: str, notebook: str | None = None) -> dict:
    """Open Lab (a notebook if given), read commands and plugins, open the Nbgrader menu,
    screenshot it; returns {'cmds', 'plugins', 'menu', 'toolbar', 'sidebar'}."""
    context = browser.new_context(viewport=bs.VIEWPORT)
    page = context.new_page()
    try:
        path = f"lab/workspaces/{shot}/tree/{notebook}" if notebook else f"lab/workspaces/{shot}"
        page.goto(lab.url(path, reset=""), timeout=120_000, wait_until="domcontentloaded")
        js = _JS_UI % repr(list(STUDENT_COMMANDS + INSTRUCTOR_COMMANDS)).replace("'", '"')
        ui = None
        for _ in range(240):
            ui = page.evaluate(js)
            if ui and (notebook is None or page.locator(".jp-Notebook .jp-Cell").count()):
                break
            page.wait_for_timeout(500)
        assert ui, "JupyterLab did not start in the page (window.jupyterapp)\n" + lab.log_tail()
        page.wait_for_timeout(1500)  # toolbar buttons and sidebars settle
        ui["toolbar"] = page.locator(".jp-NotebookPanel-toolbar").inner_text() if notebook else ""
        ui["sidebar"] = page.locator("#jp-right-stack, .jp-SideBar.jp-mod-right").all_inner_texts()
        ui["sidebar_titles"] = [t.get_attribute("title") or "" for t in
                                page.locator(".jp-SideBar.jp-mod-right .lm-TabBar-tab").all()]
        page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").first.click(timeout=10_000)
        page.wait_for_selector(".lm-Menu", timeout=10_000)
        ui["menu"] = [t.strip() for t in page.locator(".lm-Menu .lm-Menu-itemLabel").all_inner_texts()
                      if t.strip()]
        bs.BUILD.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(bs.BUILD / f"{shot}.png"))
        ui["page"] = page
        ui["context"] = context
        return ui
    except Exception:
        page.screenshot(path=str(bs.BUILD / f"{shot}.failure.png"))
        context.close()
        raise


def test_student_lab_has_no_instructor_ui(student_lab, browser) -> None:
    ui = _look(browser, student_lab, "lab_student", "td2_7_learned_first/td2_7_1_two_moments.ipynb")
    try:
        for cmd in STUDENT_COMMANDS:
            assert ui["cmds"][cmd], f"the student's Lab lacks {cmd}: {ui}"
        for cmd in INSTRUCTOR_COMMANDS:
            assert not ui["cmds"][cmd], f"the student's Lab has the instructor command {cmd}"
        assert ui["plugins"] == {"assignment-list": True, "course-list": False, "create-assignment": False,
                                 "formgrader": False, "menu": True, "validate-assignment": True}, ui["plugins"]
        assert ui["menu"] == list(STUDENT_MENU), f"Nbgrader menu of a student: {ui['menu']}"
        assert "Validate" in ui["toolbar"], f"no Validate button in the notebook toolbar: {ui['toolbar']!r}"
        assert not any("Create Assignment" in t or "nbgrader" in t.lower() for t in ui["sidebar_titles"]), (
            f"right sidebar shows nbgrader's instructor panel: {ui['sidebar_titles']}")
        page = ui["page"]
        page.keyboard.press("Escape")   # close the Nbgrader menu _look opened
        page.wait_for_timeout(3000)     # the news toast, if any, comes a little after start-up
        toasts = page.locator(".Toastify__toast").all_inner_texts()
        assert not toasts, f"the student's Lab shows toasts on a fresh HOME: {toasts}"
        dirty = page.locator(".lm-TabBar-tab.jp-mod-dirty").count()
        assert dirty == 0, "the notebook shows as modified right after it was opened"
        # the notebook's kernel answers over its encrypted connection, and says nothing about TCP
        out = page.evaluate(_JS_RUN, "print(6 * 7)")
        assert out == "42\n", f"the student's kernel did not run code: {out!r}\n" + student_lab.log_tail()
        log = student_lab.log_path.read_text(errors="replace")
        assert "without encryption" not in log, (
            "a student's kernel warns about an unencrypted connection (handout.KERNEL_TRANSPORT):\n"
            + student_lab.log_tail())
    finally:
        ui["context"].close()
    assert _status(student_lab, "formgrader") == 404, "the student's server serves /formgrader"
    assert _status(student_lab, "formgrader/api/status") == 404
    assert _status(student_lab, "formgraders") == 404, "the student's server serves the course list"
    assert _status(student_lab, "assignments") != 404, "the student's server lacks the assignment list"


def test_instructor_lab_has_formgrader(instructor_lab, browser) -> None:
    ui = _look(browser, instructor_lab, "lab_instructor")
    try:
        for cmd in STUDENT_COMMANDS + INSTRUCTOR_COMMANDS:
            assert ui["cmds"][cmd], f"the instructor's Lab lacks {cmd}: {ui}"
        assert all(ui["plugins"].values()), ui["plugins"]
        for item in STUDENT_MENU + INSTRUCTOR_MENU:
            assert any(item.lower() == m.lower() for m in ui["menu"]), f"Nbgrader menu lacks {item!r}: {ui['menu']}"
        page = ui["page"]
        page.keyboard.press("Escape")
        page.evaluate("() => window.jupyterapp.commands.execute('nbgrader:open-formgrader')")
        frame = None
        for _ in range(120):
            frame = next((f for f in page.frames if "formgrader" in f.url), None)
            if frame and frame.locator("text=Manage Assignments").count():
                break
            page.wait_for_timeout(500)
        assert frame is not None, "the Formgrader tab did not open"
        page.wait_for_timeout(1500)
        page.screenshot(path=str(bs.BUILD / "lab_formgrader.png"))
        assert frame.locator("text=Manage Assignments").count(), (
            "the formgrader shows no 'Manage Assignments'\n" + instructor_lab.log_tail())
        body = frame.locator("body").inner_text()
        assert "td2_7_learned_first" in body and "cnn_lcn" in body, (
            f"the formgrader should list the course's assignments; it shows {body[:500]!r}")
    finally:
        ui["context"].close()
    assert _status(instructor_lab, "formgrader/api/status") == 200
