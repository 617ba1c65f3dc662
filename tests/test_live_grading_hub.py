"""Live grading on JupyterHub, end to end on 127.0.0.1 (``deploy/jupyterhub_config.py`` with
``TD_GRADING_SERVICE=1``): the hub, the configurable HTTP proxy, the dummy authenticator,
the simple spawner, the grading service the hub starts (``python -m tools.live_grading``)
with its local Dask cluster, sandboxed when the machine allows it.

The course is ``tests/test_hub.py``'s tiny assignment (one test cell, 2 points, a visible and a
hidden assert), generated and released by nbgrader; the policy gives it a deadline tomorrow and
one accepted submission per student and hour.
alice answers right, bob wrong in a way the visible assert does not see (``x * x``: 2 * 2 = 4).
Both fetch and submit through their Lab servers; then, through the proxy with their hub tokens:

1. each one's feedback comes from the service within 60 s of the submission (measured);
   alice: visible and hidden passed, 2/2; bob: visible passed, hidden failed, 0/2, and not a
   word of the hidden assert's message;
2. bob gets 404 for alice's submission (page and API) and 403 for the class page;
3. the instructor sees both, bob's hidden message included, and the report of the assignment;
4. a browser session (the hub's login form, then the service's OAuth) reaches the page, and
   the hub's home page (the Lab's *File > Hub Control Panel*) links to it;
5. alice's second submission within the hour is refused (the policy allows one), with the reason;
6. once the deadline has passed (the policy file changes), bob sees the hidden message.

Then, under real conditions (``test_a_class_under_real_conditions``, the same hub; three more
students submit straight into the exchange, as their Lab's *Submit* would):

7. carol's answer loops forever at the top of its cell; dave and erin submit right after her:
   their results arrive first, each within 30 s of its submission; carol's arrives once her own
   cell's time limit cut it (10 s in this course), its test row naming the answer cell that hit
   the limit (``cause``);
8. the service gets SIGTERM while grading frank's submission: the hub starts it again, the
   submission is graded without using an attempt, and never shows "failed";
9. the service gets SIGKILL while grading gina's: the hub notices within seconds
   (``TD_GRADING_HUB_POLL``), the new service queues the row again without using an attempt,
   the result arrives.

It prints the submit -> result latency of each case (cold: the first submissions after the
service started; warm; next to a hanging one; across a SIGTERM; across a SIGKILL) and the load
average. The hub is stopped with SIGTERM; no process it started (servers, proxy, service and
the Dask workers of each of its runs) may survive.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

try:
    from tests import browser_support as bs
    from tests.handout_support import student_env
    from tests.test_hub import ASSIGNMENT, COURSE_ID, HIDDEN, INSTRUCTOR, STUDENTS, Hub, User, _write_course
except ImportError:  # tests/ on sys.path
    import browser_support as bs
    from handout_support import student_env
    from test_hub import ASSIGNMENT, COURSE_ID, HIDDEN, INSTRUCTOR, STUDENTS, Hub, User, _write_course

from tools.grading import sandbox

pytestmark = [pytest.mark.pipeline, pytest.mark.slow, pytest.mark.timeout(1200)]

SERVICE = "services/grading/"
MORE = ("carol", "dave", "erin", "frank", "gina")  # submit straight into the exchange (test 2)
CELL_TIMEOUT = 10  # the course's cell time limit, in this test's course
HIDDEN_MESSAGE = "hidden: negative numbers"
ANSWERS = {"alice": "def double(x):\n    return x + x", "bob": "def double(x):\n    return x * x"}


def write_policy(path: Path, deadline: dt.datetime) -> None:
    path.write_text(f'[defaults]\nmax_per_hour = 3\n\n[assignments.{ASSIGNMENT}]\nmax_per_hour = 1\n'
                    f'deadline = {deadline.strftime("%Y-%m-%dT%H:%M:%SZ")}\nhidden_before_deadline = "passfail"\n')


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    student = student_env()
    root = tmp_path_factory.mktemp("livehub")
    course, exchange = root / "course", root / "exchange"
    _write_course(course)
    with (course / "nbgrader_config.py").open("a") as f:  # a loop costs 10 s here, not 90
        f.write(f"c.Execute.timeout = {CELL_TIMEOUT}\n")
    exchange.mkdir()
    exchange.chmod(0o777)
    env = {**os.environ, "TD_EXCHANGE": str(exchange)}
    for step in ("generate_assignment", "release_assignment"):  # the instructor, as make release would
        r = subprocess.run([sys.executable, "-m", "nbgrader", step, ASSIGNMENT, f"--CourseDirectory.root={course}"],
                           cwd=course, env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"nbgrader {step}: {r.stderr[-1500:]}"
    policy = root / "live_grading.toml"
    write_policy(policy, dt.datetime.now(dt.UTC) + dt.timedelta(days=1))
    h = Hub(root, course, exchange, student.venv)
    h.policy = policy
    h.sandboxed = sandbox.available()[0]
    h.env["TD_STUDENTS"] = ",".join((*STUDENTS, *MORE))
    h.env.update(TD_GRADING_SERVICE="1", TD_GRADING_HUB_POLL="1",
                 TD_GRADING_PORT=str(bs.free_port()), TD_GRADING_STATE=str(root / "grading"),
                 TD_GRADING_POLICY=str(policy), TD_GRADING_WORKERS="2", TD_GRADING_POLL="0.5",
                 **({} if h.sandboxed else {"TD_GRADING_NO_SANDBOX": "1"}))
    h.tokens = {}
    t0 = time.monotonic()
    h.start()
    h.timings = {"hub up": round(time.monotonic() - t0, 1)}
    try:
        yield h
    finally:
        for name, tok in h.tokens.items():  # the servers through the hub first
            with contextlib.suppress(Exception):
                requests.delete(h.url(f"hub/api/users/{name}/server"), headers={"Authorization": f"token {tok}"},
                                timeout=60)
        strays = h.stop()
        assert not strays, "processes survived the hub:\n" + "\n".join(strays)


def service(user: User, path: str = "", **kw) -> requests.Response:
    """GET a page of the service through the proxy with the user's hub token (no redirects)."""
    return user.http.get(user.hub.url(SERVICE + path), allow_redirects=False, timeout=60, **kw)


def wait_graded(user: User, submitted_at: float, timeout_s: float = 120, seen: int = 0) -> tuple[dict, float]:
    """The user's newest submission (beyond the ``seen`` ones) once decided (graded, refused or
    failed), and the seconds from ``submitted_at`` to it."""
    while time.monotonic() - submitted_at < timeout_s:
        r = service(user, "api/submissions")
        if r.status_code == 200:
            subs = r.json()["submissions"]
            if len(subs) > seen and subs[0]["state"] in ("graded", "failed", "refused"):
                return subs[0], time.monotonic() - submitted_at
        time.sleep(0.6)  # the service allows 120 requests a minute
    raise AssertionError(f"{user.name}'s submission was not graded within {timeout_s} s\n{user.hub.log_tail(120)}")


def cell(summary: dict) -> dict:
    (ex,) = summary["feedback"]["exercises"]
    (c,) = ex["cells"]
    return c


def test_feedback_within_a_minute(hub: Hub, chromium) -> None:
    t0 = time.monotonic()
    users = {n: User(hub, n) for n in (INSTRUCTOR, *STUDENTS)}
    for u in users.values():
        u.login()
        hub.tokens[u.name] = u.token
    for s in STUDENTS:
        users[s].spawn()
    hub.timings["logins + spawns"] = round(time.monotonic() - t0, 1)
    # The service is up behind the proxy and knows nobody's submission yet.
    deadline = time.monotonic() + 120
    while (r := service(users["alice"], "api/submissions")).status_code != 200 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert r.status_code == 200 and r.json() == {"user": "alice", "instructor": False, "submissions": []}, r.text[:500]

    # Students fetch, answer and submit through their Lab servers.
    submitted = {}
    for s in STUDENTS:
        u = users[s]
        fetched = u.api("POST", "assignments/fetch", json={"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}).json()
        assert fetched["value"][0]["status"] == "fetched", fetched
        path = f"{ASSIGNMENT}/tiny.ipynb"
        nb = u.api("GET", f"api/contents/{path}", params={"content": "1"}).json()["content"]
        answer = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "ex_double")
        answer["source"] = ANSWERS[s]
        u.api("PUT", f"api/contents/{path}", json={"type": "notebook", "format": "json", "content": nb})
        sub = u.api("POST", "assignments/submit", json={"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}).json()
        assert sub["success"], sub
        submitted[s] = time.monotonic()

    # 1. Feedback within 60 s of each submission, as the policy allows before the deadline.
    got, waited = {}, {}
    for s in STUDENTS:
        got[s], waited[s] = wait_graded(users[s], submitted[s])
    hub.note_family()  # the service's Dask workers, for the check that nothing survives
    hub.timings.update({f"submit -> feedback, {s} (s)": round(waited[s], 1) for s in STUDENTS})
    assert all(w <= 60 for w in waited.values()), f"feedback later than 60 s after the submission: {waited}"
    a, b = got["alice"], got["bob"]
    assert a["state"] == "graded" and b["state"] == "graded", (a, b, hub.log_tail(80))
    assert (a["feedback"]["score"], b["feedback"]["score"], a["feedback"]["max_score"]) == (2, 0, 2), (a, b)
    assert cell(a)["visible"] == {"status": "passed"} and cell(a)["hidden"] == {"status": "passed"}
    assert cell(b)["visible"] == {"status": "passed"} and cell(b)["hidden"] == {"status": "failed"}, cell(b)
    assert cell(b)["message"] is None and cell(b)["points"] == 0
    page_b = service(users["bob"], f"submissions/{b['id']}")
    assert page_b.status_code == 200 and "failed" in page_b.text and "passed" in page_b.text
    for text in (page_b.text, service(users["bob"], f"api/submissions/{b['id']}").text, service(users["bob"]).text):
        assert HIDDEN_MESSAGE not in text and HIDDEN not in text, "bob sees the hidden test before the deadline"
    mine = service(users["alice"])
    assert mine.status_code == 200 and f"submissions/{a['id']}" in mine.text and "2 / 2" in mine.text

    # 2. bob cannot read alice's page, feedback or the class.
    for path in (f"submissions/{a['id']}", f"api/submissions/{a['id']}"):
        r = service(users["bob"], path)
        assert r.status_code == 404, f"bob reads alice's {path}: {r.status_code}"
    assert service(users["bob"], "class").status_code == 403
    assert [x["student"] for x in service(users["bob"], "api/submissions", params={"all": "1"}).json()[
        "submissions"]] == ["bob"], "a student asking for everyone's submissions gets only their own"

    # 3. The instructor sees both (everything), the class page and the report of the assignment.
    teacher = users[INSTRUCTOR]
    everyone = service(teacher, "api/submissions", params={"all": "1"}).json()
    assert everyone["instructor"] and sorted(x["student"] for x in everyone["submissions"]) == ["alice", "bob"]
    bob_seen = next(x for x in everyone["submissions"] if x["student"] == "bob")
    assert HIDDEN_MESSAGE in cell(bob_seen)["message"], bob_seen
    for s in STUDENTS:
        assert service(teacher, f"submissions/{got[s]['id']}").status_code == 200
    page = service(teacher, "class")
    assert page.status_code == 200 and "alice" in page.text and "bob" in page.text
    assert f"report/{ASSIGNMENT}" in page.text
    t = time.monotonic()
    report = service(teacher, f"report/{ASSIGNMENT}")
    hub.timings["report (s)"] = round(time.monotonic() - t, 1)
    assert report.status_code == 200 and "Report of the assignment" in report.text, report.text[:500]
    assert service(users["alice"], f"report/{ASSIGNMENT}").status_code == 403

    # 4. A browser: the hub's login form, then the service's OAuth (no confirmation page) to the page.
    browser = requests.Session()
    r = browser.get(hub.url("hub/login"), timeout=30)
    r = browser.post(hub.url("hub/login?next="), data={"username": "alice", "password": hub.password,
                                                       "_xsrf": browser.cookies.get("_xsrf", "")}, timeout=30)
    r = browser.get(hub.url(SERVICE), timeout=60)
    assert r.status_code == 200 and "My submissions" in r.text and r.url.rstrip("/").endswith("services/grading"), (
        r.status_code, r.url, r.text[:300])
    home = browser.get(hub.url("hub/home"), timeout=60)  # the Lab's File > Hub Control Panel: the Services menu
    assert "/services/grading/" in home.text, "the hub's home page has no link to the grading service"

    # A second submission within the hour is refused (the policy allows 1 per hour), and says why.
    t = time.monotonic()
    assert users["alice"].api("POST", "assignments/submit",
                              json={"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}).json()["success"]
    again, _ = wait_graded(users["alice"], t, seen=1)
    assert again["id"] != a["id"] and again["state"] == "refused" and "limit is 1 per hour" in again["reason"], again
    assert "refused" in service(users["alice"]).text

    # 5. After the deadline bob reads the hidden test's message.
    write_policy(hub.policy, dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1))
    os.utime(hub.policy, (time.time() + 2, time.time() + 2))
    after = service(users["bob"], f"api/submissions/{b['id']}").json()
    assert after["feedback"]["after_deadline"] and HIDDEN_MESSAGE in cell(after)["message"], after
    # 6. Everyone can read them: axe-core's WCAG 2.1 A/AA rules over the pages as served (offline copies),
    #    and a page while a submission waits (it polls the API instead of refreshing itself).
    from tools.live_grading.app import _render

    waiting = {"id": 9, "assignment": ASSIGNMENT, "timestamp": "2026-12-02 10:00:00", "state": "queued",
               "reason": None, "feedback": None}
    pages = {"student": mine.text, "feedback_before_deadline": page_b.text, "class": page.text,
             "feedback_after_deadline": service(users["bob"], f"submissions/{b['id']}").text,
             "waiting": _render("live_grading_student.html.j2", rows=[waiting], pending=True, user="alice",
                                instructor=False, url=lambda *p: "/services/grading/" + "/".join(p), hub="/hub/")}
    assert "http-equiv" not in pages["waiting"] and 'role="status"' in pages["waiting"]
    problems = bs.axe_html_pages(pages, hub.root, screenshots=bs.BUILD)
    assert not problems, "\n".join(problems)
    hub.timings["total test (s)"] = round(time.monotonic() - t0, 1)
    print(f"\nlive grading timings: {hub.timings}; sandboxed: {hub.sandboxed}")


# ------------------------------------------------------------------ under real conditions
LOOP = "while True:\n    pass\ndef double(x):\n    return x + x"
SLOW = "import time\ntime.sleep(6)\ndef double(x):\n    return x + x"  # long enough to stop the service in it


def drop_submission(hub: Hub, student: str, answer: str) -> float:
    """A submission of ``student`` written into the exchange's inbound as ``nbgrader submit`` writes
    it (the notebook, ``timestamp.txt``, then ``submission_secret.txt`` last); its time.monotonic()."""
    import nbformat

    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    nb = nbformat.read(str(hub.course / "release" / ASSIGNMENT / "tiny.ipynb"), as_version=4)
    for c in nb.cells:
        if c.metadata.get("nbgrader", {}).get("grade_id") == "ex_double":
            c.source = answer
    inbound = hub.exchange / COURSE_ID / "inbound"
    tmp = hub.root / f".{student}-{os.getpid()}"
    tmp.mkdir()
    nbformat.write(nb, str(tmp / "tiny.ipynb"))
    (tmp / "timestamp.txt").write_text(stamp)
    folder = inbound / f"{student}+{ASSIGNMENT}+{stamp}+{os.urandom(4).hex()}"
    tmp.rename(folder)
    (folder / "submission_secret.txt").write_text("s")
    return time.monotonic()


def service_pid(hub: Hub) -> int | None:
    """The grading service's PID (a child of the hub)."""
    import psutil

    for p in psutil.Process(hub.proc.pid).children():
        with contextlib.suppress(psutil.Error):
            if "tools.live_grading" in " ".join(p.cmdline()):
                return p.pid
    return None


def queue_row(hub: Hub, student: str, graded: bool = False):
    """The student's newest row in the service's queue (``graded``: newest graded one)."""
    from tools.live_grading.queue import Queue

    rows = Queue(hub.root / "grading" / "queue.sqlite").rows(student=student)
    rows = [r for r in rows if r.state == "graded"] if graded else rows
    return rows[0] if rows else None


def stop_while_grading(hub: Hub, user: User, sig: signal.Signals) -> dict:
    """Submit a slow answer as ``user``, send ``sig`` to the service while it grades it, and wait for
    the result; what happened (the row, the latency, how long the pages answered something else
    than 200, the states the student saw)."""
    import psutil

    t = drop_submission(hub, user.name, SLOW)
    deadline = time.monotonic() + 60
    while (row := queue_row(hub, user.name)) is None or row.state != "grading":
        assert time.monotonic() < deadline, f"{user.name}'s submission was never graded\n{hub.log_tail(80)}"
        time.sleep(0.1)
    time.sleep(1.0)  # inside the grading: the kernel runs the answer's sleep
    pid = service_pid(hub)
    hub.note_family()
    os.kill(pid, sig)
    t_sig = time.monotonic()
    psutil.Process(pid).wait(timeout=60)
    seen, down, last_api = set(), None, 0.0
    while time.monotonic() - t < 180:
        row = queue_row(hub, user.name)
        seen.add(row.state)  # what the service recorded, every state on the way
        if time.monotonic() - last_api >= 1.0:  # the pages, as the student polls them (within their rate limit)
            last_api = time.monotonic()
            r = service(user, "api/submissions")
            if r.status_code == 200:
                down = down if down is not None else last_api - t_sig
                seen |= {x["state"] for x in r.json()["submissions"]}
        if row.state in ("graded", "failed", "refused") and down is not None:
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"{user.name}: no result within 180 s after {sig.name}\n{hub.log_tail(120)}")
    (sub,) = service(user, "api/submissions").json()["submissions"]
    hub.note_family()  # the new service and its workers, for the check that nothing survives
    return {"sub": sub, "row": row, "latency": row.latency, "down": down, "seen": seen,
            "new_pid": service_pid(hub), "old_pid": pid}


def test_a_class_under_real_conditions(hub: Hub) -> None:
    users = {n: User(hub, n) for n in MORE}
    for u in users.values():
        u.login()
        hub.tokens[u.name] = u.token

    # 7. A submission that loops forever holds back nobody: dave's and erin's results come first.
    t_carol = drop_submission(hub, "carol", LOOP)
    time.sleep(0.3)
    t_fast = {s: drop_submission(hub, s, ANSWERS["alice"]) for s in ("dave", "erin")}
    got = {s: wait_graded(users[s], t_fast[s], timeout_s=60) for s in ("dave", "erin")}
    carol_row = queue_row(hub, "carol")
    assert carol_row.state in ("queued", "grading"), "the fast ones came first"
    for s, (sub, _) in got.items():
        assert sub["state"] == "graded" and sub["feedback"]["score"] == 2, sub
        hub.timings[f"warm, next to a hanging one: {s} (s)"] = queue_row(hub, s).latency
    latency = {s: queue_row(hub, s).latency for s in got}
    assert all(w <= 30 for w in latency.values()), f"fast submissions waited for a hanging one: {latency}"
    carol, _ = wait_graded(users["carol"], t_carol, timeout_s=180)
    hub.timings["the hanging one: carol (s)"] = queue_row(hub, "carol").latency
    assert carol["state"] == "graded" and carol["feedback"]["score"] == 0, carol
    (entry,) = queue_row(hub, "carol").result["cells"]
    assert entry["message"].startswith("NameError") and entry["cause"]["kind"] == "time limit", entry
    assert entry["cause"]["cell"] == "ex_double" and f"time limit of {CELL_TIMEOUT} s" in entry["cause"]["message"]
    assert any("ex_double hit its time limit" in n for n in queue_row(hub, "carol").result["notice"])

    # 8. SIGTERM while grading: queued again, no attempt used, graded by the restarted service.
    term = stop_while_grading(hub, users["frank"], signal.SIGTERM)
    assert term["sub"]["state"] == "graded" and term["sub"]["feedback"]["score"] == 2, (term, hub.log_tail(80))
    assert term["row"].attempts == 1 and "failed" not in term["seen"], term
    assert term["new_pid"] not in (None, term["old_pid"]), "the hub did not start the service again"
    hub.timings["across a SIGTERM: frank (s)"] = term["latency"]
    hub.timings["pages down after SIGTERM (s)"] = round(term["down"], 1)

    # 9. SIGKILL while grading: the hub notices within seconds; the row is queued again on start.
    kill = stop_while_grading(hub, users["gina"], signal.SIGKILL)
    assert kill["sub"]["state"] == "graded" and kill["sub"]["feedback"]["score"] == 2, (kill, hub.log_tail(80))
    assert kill["row"].attempts == 1 and "failed" not in kill["seen"], kill
    assert kill["down"] < 20, f"the pages answered 503 for {kill['down']:.0f} s after the crash"
    hub.timings["across a SIGKILL: gina (s)"] = kill["latency"]
    hub.timings["pages down after SIGKILL (s)"] = round(kill["down"], 1)
    assert "queued again (no attempt used)" in hub.log_path.read_text(), "the restarted service said nothing"
    cold = {f"{s} (s)": queue_row(hub, s, graded=True).latency for s in STUDENTS}
    print(f"\nlive grading latencies (submit -> result, s): cold (first after the service started) {cold}; "
          f"{ {k: v for k, v in hub.timings.items() if k.startswith(('warm', 'the hanging', 'across', 'pages'))} }; "
          f"load average {os.getloadavg()}; sandboxed: {hub.sandboxed}")
