"""The course on JupyterHub, end to end on 127.0.0.1 (``deploy/jupyterhub_config.py``).

JupyterHub (the configurable HTTP proxy from PyPI, the dummy authenticator, the simple
local-process spawner with homes under a temporary folder) serves one instructor and two
students, a scratch course with one small notebook, and an nbgrader exchange in a temporary
folder. Students run the handout's environment (``tests/handout_support.py``: a fresh venv
with requirements-student.txt, the td_lib wheel and jupyterhub), the instructor the
repository's. Everything goes through the hub and the servers it spawned:

1. each user logs in with the hub's login form and gets an API token from the hub's API;
   the hub spawns their server (``POST /hub/api/users/<u>/server``), JupyterLab by default;
2. the instructor generates and releases the assignment (formgrader REST API);
3. each student lists and fetches it (``/assignments``), fills the exercise (contents API:
   alice right, bob wrong), alice validates it, both submit;
4. the instructor collects, autogrades each submission (alice 2 points, bob 0), generates
   and releases feedback;
5. each student fetches the feedback: an HTML page with their score and no hidden test.

The test stops every server through the hub's API and the hub with SIGTERM to its PID, and
checks that no process it started survives (killing any straggler by PID).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
import requests

try:
    from tests import browser_support as bs
    from tests.handout_support import student_env
except ImportError:  # tests/ on sys.path
    import browser_support as bs
    from handout_support import student_env

from tools import env

pytestmark = [pytest.mark.pipeline, pytest.mark.slow, pytest.mark.timeout(2400)]

DEPLOY = env.REPO / "deploy"
COURSE_ID = "td-course"
ASSIGNMENT = "hubtiny"
INSTRUCTOR = "instructor"
STUDENTS = ("alice", "bob")
HIDDEN = "assert double(-3) == -6, 'hidden: negative numbers'"


def tiny_source() -> nbformat.NotebookNode:
    """One exercise (2 points), a visible and a hidden test."""
    def meta(**kw) -> dict:
        return {"nbgrader": {"schema_version": 3, "task": False, **kw}}

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Hub check\nWrite `double`."),
        nbformat.v4.new_code_cell("import td_lib\nprint('td_lib', td_lib.__name__)"),
        nbformat.v4.new_code_cell(
            "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION",
            metadata=meta(grade=False, grade_id="ex_double", locked=False, solution=True)),
        nbformat.v4.new_code_cell(
            "assert double(2) == 4, 'double(2) should be 4'\n### BEGIN HIDDEN TESTS\n" + HIDDEN
            + "\n### END HIDDEN TESTS",
            metadata=meta(grade=True, grade_id="test_double", locked=True, points=2, solution=False)),
    ]
    return nb


class Hub:
    """A JupyterHub process of this test, reached on 127.0.0.1 only."""

    def __init__(self, root: Path, course: Path, exchange: Path, student_prefix: Path) -> None:
        self.root, self.course, self.exchange, self.student_prefix = root, course, exchange, student_prefix
        self.port = bs.free_port()
        self.password = secrets.token_hex(12)
        self.log_path = root / "jupyterhub.log"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "TD_"))},
            "TD_HUB_ROOT": str(root / "hub"), "TD_EXCHANGE": str(exchange), "TD_COURSE_DIR": str(course),
            "TD_COURSE_ID": COURSE_ID, "TD_INSTRUCTORS": INSTRUCTOR, "TD_STUDENTS": ",".join(STUDENTS),
            "TD_STUDENT_ENV": str(student_prefix), "TD_INSTRUCTOR_ENV": str(Path(sys.prefix)),
            "TD_AUTHENTICATOR": "dummy", "TD_DUMMY_PASSWORD": self.password, "TD_SPAWNER": "simple",
            "TD_HUB_IP": "127.0.0.1", "TD_HUB_PORT": str(self.port),
            "TD_HUB_API_PORT": str(bs.free_port()), "TD_PROXY_API_PORT": str(bs.free_port()),
            "TD_SPAWN_TIMEOUT": "300",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        self.proc: subprocess.Popen | None = None
        self.family: dict[int, str] = {}  # every process seen under the hub: pid -> cmdline

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"

    def start(self, timeout_s: float = 180) -> None:
        self._log = self.log_path.open("w")
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "jupyterhub"), "-f", str(DEPLOY / "jupyterhub_config.py")],
            cwd=self.root, env=self.env, stdout=self._log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"jupyterhub exited with {self.proc.returncode}\n{self.log_tail()}")
            with contextlib.suppress(requests.RequestException):
                if requests.get(self.url("hub/api/"), timeout=5).status_code == 200:
                    self.note_family()
                    return
            time.sleep(0.5)
        raise AssertionError(f"the hub did not answer within {timeout_s:.0f} s\n{self.log_tail()}")

    def note_family(self) -> None:
        import psutil

        with contextlib.suppress(psutil.NoSuchProcess):
            for p in [psutil.Process(self.proc.pid), *psutil.Process(self.proc.pid).children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    self.family.setdefault(p.pid, " ".join(p.cmdline())[:160])

    def stop(self) -> list[str]:
        """SIGTERM to the hub's PID (it stops the proxy and the servers: cleanup_servers),
        then SIGKILL to any process of its family still alive. Returns the stragglers."""
        import psutil

        if self.proc is None:
            return []
        self.note_family()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        procs = []
        for pid in self.family:
            with contextlib.suppress(psutil.NoSuchProcess):
                procs.append(psutil.Process(pid))
        _gone, alive = psutil.wait_procs(procs, timeout=20)
        strays = [f"pid {p.pid}: {self.family[p.pid]}" for p in alive]
        for p in alive:
            with contextlib.suppress(psutil.NoSuchProcess):
                p.kill()
        psutil.wait_procs(alive, timeout=10)
        self._log.close()
        return strays

    def log_tail(self, n: int = 80) -> str:
        self._log.flush()
        text = self.log_path.read_text(errors="replace").replace(self.password, "<password>")
        return "--- jupyterhub log ---\n" + "\n".join(text.splitlines()[-n:])


class User:
    """A hub user driving their own server through the hub (login form, then a token)."""

    def __init__(self, hub: Hub, name: str) -> None:
        self.hub, self.name = hub, name
        self.http = requests.Session()
        self.token = ""

    def login(self) -> None:
        s = self.http
        r = s.get(self.hub.url("hub/login"), timeout=30)
        assert r.status_code == 200, r.text[:300]
        xsrf = s.cookies.get("_xsrf", "")
        r = s.post(self.hub.url("hub/login?next="), data={"username": self.name, "password": self.hub.password,
                                                          "_xsrf": xsrf}, allow_redirects=False, timeout=30)
        assert r.status_code == 302, f"login of {self.name}: {r.status_code} {r.text[:300]}"
        r = s.post(self.hub.url(f"hub/api/users/{self.name}/tokens"), json={"note": "td test", "expires_in": 3600},
                   headers={"X-XSRFToken": s.cookies.get("_xsrf", path="/hub/") or xsrf}, timeout=30)
        assert r.status_code in (200, 201), f"token for {self.name}: {r.status_code} {r.text[:300]}"
        self.token = r.json()["token"]
        self.http = requests.Session()  # from now on: the token only
        self.http.headers["Authorization"] = f"token {self.token}"

    def spawn(self, timeout_s: float = 300) -> dict:
        r = self.http.post(self.hub.url(f"hub/api/users/{self.name}/server"), timeout=60)
        assert r.status_code in (201, 202), f"spawn {self.name}: {r.status_code} {r.text[:300]}"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            model = self.http.get(self.hub.url(f"hub/api/users/{self.name}"), timeout=30).json()
            server = model.get("servers", {}).get("", {})
            if server.get("ready"):
                self.hub.note_family()
                return server
            time.sleep(1)
        raise AssertionError(f"the server of {self.name} did not become ready\n{self.hub.log_tail()}")

    def api(self, method: str, path: str, **kw) -> requests.Response:
        r = self.http.request(method, self.hub.url(f"user/{self.name}/{path.lstrip('/')}"), timeout=600, **kw)
        assert r.status_code < 400, f"{self.name}: {method} {path}: {r.status_code} {r.text[:500]}"
        return r


def _write_course(course: Path) -> None:
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(tiny_source(), str(course / "source" / ASSIGNMENT / "tiny.ipynb"))
    (course / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"load_subconfig({str(env.COURSE / 'nbgrader_config.py')!r})  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(course)!r}\n")


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    student = student_env()
    root = tmp_path_factory.mktemp("hub")
    course, exchange = root / "course", root / "exchange"
    _write_course(course)
    h = Hub(root, course, exchange, student.venv)
    h.timings = {"student env (s)": student.seconds}
    t0 = time.monotonic()
    h.start()
    h.timings["hub up"] = round(time.monotonic() - t0, 1)
    try:
        yield h
    finally:
        for name in (INSTRUCTOR, *STUDENTS):  # stop the servers through the hub first
            with contextlib.suppress(Exception):
                tok = getattr(h, "tokens", {}).get(name)
                if tok:
                    requests.delete(h.url(f"hub/api/users/{name}/server"),
                                    headers={"Authorization": f"token {tok}"}, timeout=60)
        strays = h.stop()
        assert not strays, "processes survived the hub:\n" + "\n".join(strays)


def test_class_on_jupyterhub(hub: Hub) -> None:
    t0 = time.monotonic()
    users = {n: User(hub, n) for n in (INSTRUCTOR, *STUDENTS)}
    hub.tokens = {}
    for u in users.values():
        u.login()
        hub.tokens[u.name] = u.token
        server = u.spawn()
        assert server["url"] == f"/user/{u.name}/", server
    hub.timings["logins + spawns"] = round(time.monotonic() - t0, 1)
    # JupyterLab is the default UI (the hub redirects /user/<name>/ to /lab).
    r = users["alice"].http.get(hub.url("user/alice/"), allow_redirects=False, timeout=60)
    assert r.status_code in (301, 302) and "/user/alice/lab" in r.headers["Location"], (r.status_code, r.headers)
    # Instructor has the formgrader; students do not (deploy/student-config).
    teacher = users[INSTRUCTOR]
    assert teacher.api("GET", "formgrader/api/status").status_code == 200
    for s in STUDENTS:
        r = users[s].http.get(hub.url(f"user/{s}/formgrader/api/status"), timeout=60)
        assert r.status_code == 404, f"{s} reaches the formgrader: {r.status_code}"
    # Each server runs its role's environment: students the handout's venv, the instructor the course's.
    servers = [cmd for cmd in hub.family.values() if "jupyterhub-singleuser" in cmd]
    student_cmd = str(hub.student_prefix / "bin" / "jupyterhub-singleuser")
    assert sum(student_cmd in cmd for cmd in servers) == len(STUDENTS), servers
    assert sum(str(Path(sys.prefix) / "bin" / "jupyterhub-singleuser") in cmd for cmd in servers) == 1, servers

    # -- instructor: generate + release
    t = time.monotonic()
    out = teacher.api("POST", f"formgrader/api/assignment/{ASSIGNMENT}/assign").json()
    assert out.get("success"), out
    out = teacher.api("POST", f"formgrader/api/assignment/{ASSIGNMENT}/release").json()
    assert out.get("success"), out
    released = hub.course / "release" / ASSIGNMENT / "tiny.ipynb"
    assert HIDDEN not in released.read_text() and "BEGIN SOLUTION" not in released.read_text()
    hub.timings["release"] = round(time.monotonic() - t, 1)

    # -- students: fetch, fill, (validate), submit
    t = time.monotonic()
    answers = {"alice": "def double(x):\n    return x + x", "bob": "def double(x):\n    return x * x"}
    for s in STUDENTS:
        u = users[s]
        listed = u.api("GET", "assignments", params={"course_id": COURSE_ID}).json()
        assert listed["success"] and [a["assignment_id"] for a in listed["value"]] == [ASSIGNMENT], listed
        assert listed["value"][0]["status"] == "released", listed
        fetched = u.api("POST", "assignments/fetch", json={"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}).json()
        assert fetched["value"][0]["status"] == "fetched", fetched
        path = f"{ASSIGNMENT}/tiny.ipynb"
        model = u.api("GET", f"api/contents/{path}", params={"content": "1"}).json()
        nb = model["content"]
        cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "ex_double")
        assert "raise NotImplementedError()" in "".join(cell["source"]), cell["source"]
        cell["source"] = answers[s]
        u.api("PUT", f"api/contents/{path}", json={"type": "notebook", "format": "json", "content": nb})
        if s == "alice":
            # nbgrader's Validate button: an empty result is "no test failed".
            val = u.api("POST", "assignments/validate", json={"path": path}).json()
            assert val == {"success": True, "value": {}}, f"validate of alice's notebook: {val}"
        sub = u.api("POST", "assignments/submit", json={"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}).json()
        assert sub["success"], sub
        assert any(a["status"] == "submitted" for a in sub["value"]), f"{s}'s submission is not listed: {sub}"
    hub.timings["fetch + fill + submit"] = round(time.monotonic() - t, 1)
    inbound = sorted(p.name.split("+")[0] for p in (hub.exchange / COURSE_ID / "inbound").iterdir())
    assert inbound == sorted(STUDENTS), f"the exchange's inbound holds {inbound}"

    # -- instructor: collect, autograde, feedback
    t = time.monotonic()
    out = teacher.api("POST", f"formgrader/api/assignment/{ASSIGNMENT}/collect").json()
    assert out.get("success"), out
    for s in STUDENTS:
        out = teacher.api("POST", f"formgrader/api/submission/{ASSIGNMENT}/{s}/autograde").json()
        assert out.get("success"), out
    subs = {x["student"]: x for x in teacher.api("GET", f"formgrader/api/submissions/{ASSIGNMENT}").json()}
    scores = {s: subs[s]["score"] for s in STUDENTS}
    assert scores == {"alice": 2.0, "bob": 0.0}, scores
    for step in ("generate_feedback", "release_feedback"):
        out = teacher.api("POST", f"formgrader/api/assignment/{ASSIGNMENT}/{step}").json()
        assert out.get("success"), (step, out)
    hub.timings["collect + autograde + feedback"] = round(time.monotonic() - t, 1)

    # -- students: fetch feedback
    for s in STUDENTS:
        u = users[s]
        out = u.api("POST", "assignments/fetch_feedback", json={"course_id": COURSE_ID, "assignment_id": ASSIGNMENT})
        (sub,) = [x for a in out.json()["value"] if a["status"] == "submitted" for x in a["submissions"]]
        assert sub["has_local_feedback"] and sub["student_id"] == s, f"{s}: no feedback fetched: {sub}"
        page = u.api("GET", f"api/contents/{sub['local_feedback_path']}/tiny.html", params={"content": "1"})
        html = page.json()["content"]
        score = re.search(r"Score:\s*([0-9.]+)\s*/\s*([0-9.]+)", re.sub(r"<[^>]+>", " ", html))
        assert score and float(score.group(1)) == scores[s] and float(score.group(2)) == 2, (
            f"{s}'s feedback page should show the score {scores[s]} / 2: {score and score.group(0)}")
        assert HIDDEN not in html and "BEGIN HIDDEN TESTS" not in html, f"{s}'s feedback shows the hidden test"
    hub.timings["total test"] = round(time.monotonic() - t0, 1)
    print(f"\nhub timings: {hub.timings}")
