"""The live grading service's pages, API and set-up (tools/live_grading/app.py, policy.py, the
``live_grading_*`` templates, course/live_grading.toml, deploy/class_setup.py), fast: no hub.

The service's tornado application runs in a thread on 127.0.0.1 with the hub's sign-in replaced
by a header naming the user (``X-Test-User``; none: no session). The results are synthetic, in
worker.py's format, with what the engine adds: ``notice``, a cell's ``cause``, ``mistake`` and
``reused``, a notebook's ``reused_from``.

- times: one format, in the course's time zone, no microseconds; a refusal's time rounded up;
- the feedback: the reason a notebook was not graded in one line at the top, the answer cell a
  failure comes from, one line of each error for a student (never a traceback), a message
  repeated on many tests once, known mistakes shown and withheld exactly like the message,
  autograded and hand-graded points apart, exercise titles and cell labels from the notebooks;
- the API: JSON for everything (401 without a session, 404 for another student's submission, a
  non-integer or huge id, path tricks; 405; 429 with Retry-After);
- the class page: the latest submission of each student (all on request), no feedback link on a
  refused row, seconds to feedback from the submission's own time, the known mistakes per
  exercise, the deadline's source and a warning without one;
- axe-core (WCAG 2.1 A and AA) on the pages;
- the shipped course/live_grading.toml, and the hub trial refused as root.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import http.client
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest
import requests

try:
    from tests import browser_support as bs
except ImportError:  # tests/ on sys.path
    import browser_support as bs

from tools import env
from tools.grading.remote_tests import MISTAKE_LEAD
from tools.live_grading import app as lg_app
from tools.live_grading import policy as pol
from tools.live_grading.queue import Arrival, Queue

PREFIX = "/services/grading/"
USERS = {"alice": {"name": "alice", "groups": []}, "bob": {"name": "bob", "groups": []},
         "prof": {"name": "prof", "groups": ["instructors"]}}
T0 = dt.datetime(2026, 11, 30, 10, 0, 35, 123456, tzinfo=dt.UTC)
TRACE = "Traceback (most recent call last):\n  File \"/srv/grader/tools/runner.py\", line 12, in run"
HIDDEN_MSG = "AssertionError: hidden: negative numbers"
HINT = "the weights are transposed: W has shape (k, d), not (d, k)"


# ------------------------------------------------------------------ synthetic data
def cell(gid: str, passed: bool | None, part: str | None = None, hidden: bool = True, msg: str | None = None,
         kind: str = "test", points: float = 2.0, **extra) -> dict:
    return {"notebook": "nb", "grade_id": gid, "kind": kind, "max_points": points,
            "points": None if kind != "test" else (points if passed else 0.0), "has_hidden": hidden,
            "passed": passed, "failed_part": part, "message": msg, **extra}


def result(n_repeats: int = 5) -> dict:
    """One notebook unreadable (a notice), an answer cell that raises (its cause on many tests),
    a known mistake in a visible and in a hidden failure, a reused cell, a hand-graded answer."""
    why = "not graded: the answer cell ex71A_flow raised NotImplementedError: write linear_flow"
    cause = {"cell": "ex71A_flow", "kind": "error", "message": f"{why}\n{TRACE}"}
    cells = [cell(f"test_ex71A_r{i}", False, "visible", msg=f"NotImplementedError: \n{TRACE}", cause=cause)
             for i in range(n_repeats)]
    cells += [
        cell("test_ex71A_flow", False, "visible", hidden=False,
             msg=f"AssertionError: shape (3, 2) expected This looks like a known mistake: {HINT}",
             mistake={"name": "transposed", "hint": HINT}),
        cell("test_ex71B_orders", False, "hidden", msg=HIDDEN_MSG + "\n" + TRACE,
             mistake={"name": "off_by_one", "hint": "the hidden hint: count from zero"}),
        cell("test_ex71B_clone_order", True, reused=True),
        cell("test_ex71B_slow", False, "unknown", msg="CellTimeoutError: the cell ran out of time",
             cause={"cell": "ex71B_slow", "kind": "time limit",
                    "message": "not graded: the answer cell ex71B_slow hit its time limit of 60 s"}),
        cell("ex71B_2_answer", None, kind="manual", points=45.0),
    ]
    auto = sum(c["max_points"] for c in cells if c["kind"] == "test")
    return {"score": sum(c["points"] or 0.0 for c in cells), "max_score": auto + 45.0, "cells": cells,
            "notice": ["nb2.ipynb could not be read (not a notebook): it was not graded\n" + TRACE],
            "notebooks": {"nb": {"reused_from": T0.timestamp()}},
            "errors": ["a grader note\n" + TRACE]}


def cause_of(r: dict, gid: str) -> str:
    return next(c["cause"]["message"] for c in r["cells"] if c["grade_id"] == gid)


def cells_of(v: dict) -> dict:
    return {c["grade_id"]: c for ex in v["exercises"] for c in ex["cells"]}


# ----------------------------------------------------------------------- times
def test_times_one_format_in_the_courses_zone():
    paris = pol.zone("Europe/Paris")
    want = T0.astimezone(paris).strftime("%Y-%m-%d %H:%M:%S %Z")
    nbgrader_stamp = T0.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    for value in (T0.timestamp(), T0, nbgrader_stamp, T0.isoformat(), T0.replace(tzinfo=None)):
        assert pol.when(value, paris) == want, value
    assert "." not in pol.when(T0.timestamp()), "microseconds"
    assert pol.when(T0.timestamp()).endswith("UTC") and pol.when(None) is None and pol.when("garbage") is None
    assert pol.local_times("Submit again after 2026-11-30 11:01 UTC.", paris) == \
        f"Submit again after {pol.when(dt.datetime(2026, 11, 30, 11, 1, tzinfo=dt.UTC), paris)}."
    with pytest.raises(ValueError, match="unknown time zone"):
        pol.zone("Mars/Olympus")


def test_retry_time_rounded_up(tmp_path):
    q = Queue(tmp_path / "q.sqlite")
    first = Arrival("alice", "a1", "t0", T0.timestamp(), "alice+a1+t0+r")
    later = Arrival("alice", "a1", "t1", T0.timestamp() + 60, "alice+a1+t1+r")
    (ok, refused) = q.add([first, later], limit=lambda a: 1)
    assert ok.state == "queued" and refused.state == "refused"
    free = T0 + dt.timedelta(hours=1)  # 11:00:35: the student may submit again from 11:01
    up = (free + dt.timedelta(minutes=1)).strftime("%H:%M")
    assert f"after {free:%Y-%m-%d} {up} UTC" in refused.reason, refused.reason


# ---------------------------------------------------------------------- policy
def test_view_for_a_student_before_the_deadline():
    deadline = T0 + dt.timedelta(days=1)
    r = result()
    v = pol.view(r, pol.AssignmentPolicy(deadline=deadline), now=T0.timestamp())
    text = json.dumps(v)
    assert "Traceback" not in text and "runner.py" not in text, "a grader traceback reaches the student"
    assert "negative numbers" not in text and "the hidden hint" not in text, "a hidden failure's message or mistake"
    c = cells_of(v)
    assert v["notices"] == [r["notice"][0].splitlines()[0]]
    assert v["errors"] == [r["errors"][0].splitlines()[0]]
    # the answer cell's error, one line, on each test it broke; the message once, the others point to it
    repeats = [g for g in c if g.startswith("test_ex71A_r")]
    head, *rest = repeats
    assert c[head]["cause"]["cell"] == "ex71A_flow" and c[head]["cause"]["message"] == \
        cause_of(r, head).splitlines()[0]
    assert c[head]["same_count"] == len(rest) and all(c[g]["same_as"]["grade_id"] == head for g in rest)
    # a known mistake: shown with a visible failure, withheld with a hidden one (as the message)
    assert c["test_ex71A_flow"]["mistake"] == {"name": "transposed", "hint": HINT}
    assert c["test_ex71A_flow"]["message"] == "AssertionError: shape (3, 2) expected", "the hint once, on its own"
    assert c["test_ex71B_orders"]["message"] is None and c["test_ex71B_orders"]["mistake"] is None
    assert c["test_ex71B_slow"]["cause"]["kind"] == "time limit" and c["test_ex71B_slow"]["message"] is None
    assert c["test_ex71B_clone_order"]["reused"] and v["reused"] == {"nb": T0.timestamp()}
    auto = sum(x["max_points"] for x in r["cells"] if x["kind"] == "test")
    assert v["auto_max"] == auto and v["manual"] == r["max_score"] - auto and v["deadline_known"]
    # "nothing": the hidden failure's cell is withheld, its mistake and cause too
    v = pol.view(r, pol.AssignmentPolicy(deadline=deadline, hidden_before_deadline="nothing"), now=T0.timestamp())
    c = cells_of(v)
    assert c["test_ex71B_orders"]["mistake"] is None and c["test_ex71B_slow"]["cause"] is None
    assert "the hidden hint" not in json.dumps(v)


def test_view_after_the_deadline_and_for_instructors():
    deadline = T0 + dt.timedelta(days=1)
    r = result()
    after = pol.view(r, pol.AssignmentPolicy(deadline=deadline), now=(deadline + dt.timedelta(seconds=1)).timestamp())
    c = cells_of(after)
    assert c["test_ex71B_orders"]["message"] == HIDDEN_MSG, "a student reads one line, the hidden message too"
    assert c["test_ex71B_orders"]["mistake"]["name"] == "off_by_one"
    assert "Traceback" not in json.dumps(after)
    teacher = pol.view(r, pol.AssignmentPolicy(), now=T0.timestamp(), instructor=True)
    assert cells_of(teacher)["test_ex71B_orders"]["message"] == r["cells"][-4]["message"], "instructors: all of it"
    # no deadline anywhere: hidden messages never, and the view says no deadline is known
    v = pol.view(r, pol.AssignmentPolicy(), now=(deadline + dt.timedelta(days=365)).timestamp())
    assert not v["deadline_known"] and not v["after_deadline"] and cells_of(v)["test_ex71B_orders"]["message"] is None


def test_a_hint_only_in_the_message():
    """The test runner appends the hint to the message after a blank line (tools/grading/remote_tests.py):
    without the cell's ``mistake``, the hint is still shown on its own (a student reads one line of
    the message) and withheld with a hidden message."""
    hint = "the sum runs over the wrong axis"
    msg = f"AssertionError: wrong column sums\n\n{MISTAKE_LEAD} {hint}"
    r = {"score": 0.0, "max_score": 4.0, "cells": [cell("test_ex1_sums", False, "visible", hidden=False, msg=msg),
                                                    cell("test_ex1_hidden", False, "hidden", msg=msg)]}
    deadline = T0 + dt.timedelta(days=1)
    c = cells_of(pol.view(r, pol.AssignmentPolicy(deadline=deadline), now=T0.timestamp()))
    assert c["test_ex1_sums"]["message"] == msg.splitlines()[0] and c["test_ex1_sums"]["mistake"]["hint"] == hint
    assert c["test_ex1_hidden"]["mistake"] is None and c["test_ex1_hidden"]["message"] is None
    assert pol.mistake_of(r["cells"][0]) == {"name": hint, "hint": hint} and pol.mistake_of(cell("t", True)) is None


def _notebook(path: Path) -> Path:
    meta = lambda **kw: {"nbgrader": {"schema_version": 3, "locked": False, "task": False, **kw}}  # noqa: E731
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# 7.1 Two moments\n## Exercise 7.1.A — Linear models see two moments\nText."),
        nbformat.v4.new_code_cell("def linear_flow(W0, t):\n    ### BEGIN SOLUTION\n    return W0\n"
                                  "    ### END SOLUTION\n### BEGIN SOLUTION\ndef secret_helper():\n    pass\n"
                                  "### END SOLUTION",
                                  metadata=meta(grade=False, grade_id="ex71A_flow", solution=True)),
        nbformat.v4.new_code_cell("assert True", metadata=meta(grade=True, grade_id="test_ex71A_flow", points=2,
                                                               solution=False)),
        nbformat.v4.new_code_cell("assert True", metadata=meta(grade=True, grade_id="test_ex71A_loss", points=1,
                                                               solution=False)),
        nbformat.v4.new_markdown_cell("## Exercise 7.1.B — Counting powers"),
        nbformat.v4.new_markdown_cell("Why?", metadata=meta(grade=True, grade_id="ex71B_2_answer", points=1,
                                                            solution=True)),
        nbformat.v4.new_code_cell("assert True", metadata=meta(grade=True, grade_id="test_ex71B_orders", points=1,
                                                               solution=False)),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


def test_titles_from_the_notebooks(tmp_path):
    names = pol.titles([_notebook(tmp_path / "nb.ipynb")])
    assert names["exercises"] == {"ex71A": "Exercise 7.1.A — Linear models see two moments",
                                  "ex71B": "Exercise 7.1.B — Counting powers"}
    assert names["cells"] == {"nb/test_ex71A_flow": "7.1.A — linear flow", "nb/test_ex71A_loss": "7.1.A — loss",
                              "nb/ex71A_flow": "7.1.A — linear flow", "nb/ex71B_2_answer": "7.1.B.2",
                              "nb/test_ex71B_orders": "7.1.B — orders"}
    assert "secret" not in json.dumps(names), "a name from inside a solution"
    v = pol.view(result(), pol.AssignmentPolicy(), now=T0.timestamp(), names=names)
    assert [e["title"] for e in v["exercises"]] == [names["exercises"]["ex71A"], names["exercises"]["ex71B"]]
    assert cells_of(v)["test_ex71A_flow"]["label"] == "7.1.A — linear flow"
    assert cells_of(v)["test_ex71A_r0"]["cause"]["label"] == "7.1.A — linear flow"
    assert cells_of(v)["test_ex71A_r1"]["label"] == "test_ex71A_r1", "a cell the notebook does not have"


def test_the_shipped_policy_file(tmp_path):
    shipped = env.REPO / "course" / "live_grading.toml"
    p = pol.Policy.load(shipped)
    assert p.defaults == pol.AssignmentPolicy() and p.assignments == {} and p.tz == dt.UTC, \
        "the shipped file changes nothing until a line is uncommented"
    ignored = subprocess.run(["git", "check-ignore", "-q", str(shipped)], cwd=env.REPO).returncode
    assert ignored == 1, "course/live_grading.toml is ignored by git: it would not ship"
    # every example line, uncommented, is a valid policy
    lines = [ln[2:] for ln in shipped.read_text().splitlines()
             if ln.startswith("# ") and ("=" in ln[2:].split("#")[0] or ln[2:].startswith("["))]
    example = tmp_path / "live_grading.toml"
    example.write_text("\n".join(lines) + "\n")
    p = pol.Policy.load(example)
    for key in ("timezone", "deadline", "max_per_hour", "hidden_before_deadline"):
        assert any(ln.startswith(key) for ln in lines), f"the shipped example does not show {key}"
    assert p.timezone() != dt.UTC and p.assignments and all(a.deadline for a in p.assignments.values())
    example.write_text('timezone = "Nowhere/Land"\n')
    with pytest.raises(ValueError, match="unknown time zone"):
        pol.Policy.load(example)


# ----------------------------------------------------------------- the service
class Served:
    def __init__(self, root: Path):
        self.root = root
        self.course = root / "course"
        self.course.mkdir()
        self.policy_file = root / "live_grading.toml"
        self.policy_file.write_text('timezone = "Europe/Paris"\n')
        self.queue = Queue(root / "state" / "queue.sqlite")
        self.service = lg_app.Service(self.queue, pol.Policy.load(self.policy_file), self.course, root / "state",
                                      {"prof"})
        self.port = bs.free_port()
        self._stop = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._serve(),), daemon=True)
        self._ready = threading.Event()

    async def _serve(self) -> None:
        application = lg_app.make_app(self.service, prefix=PREFIX)
        server = application.listen(self.port, "127.0.0.1")
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        self._ready.set()
        await self._stop.wait()
        server.stop()

    def start(self) -> Served:
        self._thread.start()
        assert self._ready.wait(30)
        return self

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def get(self, path: str, user: str | None = None, **kw) -> requests.Response:
        headers = {"X-Test-User": user} if user else {}
        return requests.get(f"http://127.0.0.1:{self.port}{PREFIX}{path}", headers=headers,
                            allow_redirects=False, timeout=30, **kw)

    def raw(self, method: str, path: str, user: str | None = None) -> tuple[int, dict, bytes]:
        """A request with the path exactly as written (no client normalising ``..``)."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request(method, path, headers={"X-Test-User": user} if user else {})
        r = c.getresponse()
        out = (r.status, dict(r.getheaders()), r.read())
        c.close()
        return out

    def submit(self, student: str, minutes: float, assignment: str = "a1", res: dict | None = None,
               limit: int = 0, graded_after: float = 30.0):
        t = T0 + dt.timedelta(minutes=minutes)
        stamp = t.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
        arrival = Arrival(student, assignment, stamp, t.timestamp(), f"{student}+{assignment}+{stamp}+r")
        (row,) = self.queue.add([arrival], limit=lambda a: limit, now=t.timestamp() + 1)
        if row.state == "queued" and res is not None:
            (claimed,) = self.queue.claim(1)
            assert claimed.id == row.id
            self.queue.finish(row.id, res)
            with self.queue._tx() as con:  # the grading took graded_after s from the submission
                con.execute("UPDATE submissions SET finished=? WHERE id=?", (t.timestamp() + graded_after, row.id))
        return self.queue.get(row.id)


def _signed_in(handler):
    """The hub's sign-in, replaced: the user the X-Test-User header names. ``mallory`` is a hub
    user the service does not allow: jupyterhub's HubAuthenticated then returns None and turns
    the login redirect into a 403 (as ``get_current_user`` does for ``UserNotAllowed``)."""
    name = handler.request.headers.get("X-Test-User", "")
    if name == "mallory":
        def refuse(*_a, **_k):
            raise lg_app.web.HTTPError(403, "user mallory is not allowed.")
        handler.redirect = refuse
        return None
    return USERS.get(name)


@pytest.fixture
def served(tmp_path, monkeypatch):
    monkeypatch.setattr(lg_app.Base, "get_current_user", _signed_in)
    s = Served(tmp_path)
    monkeypatch.setattr(lg_app.HubOAuth.instance(), "base_url", PREFIX)
    s.start()
    try:
        yield s
    finally:
        s.close()


def _json(r: requests.Response) -> dict:
    assert r.headers["Content-Type"].startswith("application/json"), (r.status_code, r.headers, r.text[:300])
    return r.json()


def test_api_answers_json_to_everyone(served):
    a = served.submit("alice", 0, res=result())
    b = served.submit("bob", 1, res=result())
    # no session: 401, JSON, never a redirect to the login page
    for path in ("api/submissions", f"api/submissions/{a.id}", "api/nothing", "api/submissions/x"):
        r = served.get(path)
        assert r.status_code == 401 and "Location" not in r.headers and _json(r)["status"] == 401, path
    # the pages still send a browser to the hub's login
    assert served.get("").status_code == 302
    # a hub user the service does not allow: 403, JSON
    r = served.get("api/submissions", "mallory")
    assert r.status_code == 403 and _json(r)["status"] == 403
    # another student's submission, a non-integer, a huge or zero id, a path that names nothing: 404 JSON
    for path in (f"api/submissions/{b.id}", "api/submissions/abc", "api/submissions/-1", "api/submissions/0",
                 "api/submissions/" + "9" * 30, f"api/submissions/{a.id}/", "api/submissions/1.0", "api/class",
                 f"api/submissions/{a.id}%2f..%2f{b.id}"):
        r = served.get(path, "alice")
        assert r.status_code == 404 and _json(r)["status"] == 404, (path, r.status_code, r.text[:200])
    for raw in (f"{PREFIX}api/submissions/{a.id}/../{b.id}", f"{PREFIX}api/../class", f"{PREFIX}api/%2e%2e/class"):
        status, headers, body = served.raw("GET", raw, "alice")
        assert status in (400, 404) and b"bob" not in body, (raw, status, body[:200])
        if status == 404:
            assert headers["Content-Type"].startswith("application/json") and json.loads(body)["status"] == 404
    for path in (f"submissions/{b.id}", "submissions/" + "9" * 30, "submissions/abc"):
        assert served.get(path, "alice").status_code == 404, path
    # the student's own: JSON, and ?all=1 gives a student only their own
    mine = _json(served.get(f"api/submissions/{a.id}", "alice"))
    assert mine["id"] == a.id and "Traceback" not in json.dumps(mine)
    assert {x["student"] for x in _json(served.get("api/submissions", "alice", params={"all": "1"}))[
        "submissions"]} == {"alice"}
    assert {x["student"] for x in _json(served.get("api/submissions", "prof", params={"all": "1"}))[
        "submissions"]} == {"alice", "bob"}
    # a method the API does not have: 405, JSON
    status, headers, body = served.raw("POST", f"{PREFIX}api/submissions", "alice")
    assert status == 405 and json.loads(body)["status"] == 405
    # too many requests: 429 with Retry-After in whole seconds, JSON; another user is not slowed down
    served.service.api_per_minute = 3
    served.service._hits.clear()
    codes = [served.get("api/submissions", "alice") for _ in range(4)]
    assert [r.status_code for r in codes] == [200, 200, 200, 429]
    retry = int(codes[-1].headers["Retry-After"])
    assert 1 <= retry <= 60 and _json(codes[-1])["status"] == 429
    assert served.get("api/submissions", "bob").status_code == 200


def test_pages_for_a_student(served):
    due = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(days=1)
    served.policy_file.write_text(f'timezone = "Europe/Paris"\n[assignments.a1]\ndeadline = {due.isoformat()}\n')
    _notebook(served.course / "release" / "a1" / "nb.ipynb")
    a = served.submit("alice", 0, res=result())
    refused = served.submit("alice", 2, limit=1)
    assert refused.state == "refused"
    page = served.get(f"submissions/{a.id}", "alice").text
    for secret in ("Traceback", "runner.py", "negative numbers", "the hidden hint"):
        assert secret not in page, secret
    notice = result()["notice"][0].splitlines()[0]
    assert page.index(notice) < page.index("Score:"), "the notebook that was not graded is said at the top"
    auto = sum(c["max_points"] for c in result()["cells"] if c["kind"] == "test")
    assert f"/ {auto:g} autograded" in page and "45 points graded by hand later" in page
    assert "7.1.A — linear flow" in page and "Exercise 7.1.A — Linear models see two moments" in page
    repeats = sum(1 for c in result()["cells"] if c["grade_id"].startswith("test_ex71A_r"))
    assert page.count("NotImplementedError: write linear_flow") == 1
    assert "raised NotImplementedError" in page and "the answer cell 7.1.A — linear flow" in page
    assert f"and {repeats - 1} more tests failed the same way" in page
    assert page.count(f"This looks like a known mistake: {HINT}") == 1
    assert "hit its time limit of 60 s" in page, "the answer cell that hit its time limit"
    assert "is unchanged since your submission of" in page
    paris = pol.zone("Europe/Paris")
    assert pol.when(due, paris) in page and pol.when(a.submitted, paris) in page
    assert ".123456" not in page and "+00:00" not in page
    mine = served.get("", "alice").text
    assert f"submissions/{refused.id}" not in mine, "a feedback link on a refused submission"
    assert "refused" in mine and pol.first_line(refused.reason)[:40] in mine
    # no deadline anywhere: the page says hidden messages stay hidden
    served.policy_file.write_text('timezone = "Europe/Paris"\n')
    os.utime(served.policy_file, (time.time() + 5, time.time() + 5))
    assert "no deadline is set for this assignment" in served.get(f"submissions/{a.id}", "alice").text


def test_class_page(served):
    from nbgrader.api import Gradebook

    due = dt.datetime(2026, 12, 20, 17, 0)
    with Gradebook(f"sqlite:///{served.course / 'gradebook.db'}") as gb:
        gb.add_assignment("a1", duedate=due)
    clean = {"score": 2.0, "max_score": 2.0, "cells": [cell("test_ex71A_flow", True, hidden=False)]}
    old = served.submit("alice", 0, res=result(), graded_after=20)
    new = served.submit("alice", 10, res=clean, graded_after=4000)  # graded after a long outage
    bob = served.submit("bob", 1, res=result(), graded_after=12)
    carol = served.submit("carol", 3, res={"score": 0.0, "max_score": 2.0, "cells": [
        cell("test_ex71A_flow", False, "visible", hidden=False, msg="AssertionError: x")]}, graded_after=12)
    refused = served.submit("dave", 5, "a2")  # a2: no deadline anywhere
    with served.queue._tx() as con:
        con.execute("UPDATE submissions SET state='refused', reason='live grading is off' WHERE id=?", (refused.id,))
    assert served.get("class", "alice").status_code == 403
    page = served.get("class", "prof").text
    assert f"submissions/{new.id}" in page and f"submissions/{old.id}" not in page, "the latest of each student"
    assert f"submissions/{refused.id}" not in page and "dave" in page, "a feedback link on a refused row"
    assert "?all=1" in page
    everything = served.get("class", "prof", params={"all": "1"}).text
    assert f"submissions/{old.id}" in everything
    # seconds from the submission's own time to its feedback (the outage shows)
    assert f">{new.finished - new.submitted:g}<" in page.replace("\n", "").replace(" ", "")
    # the deadline's source, and the warning without one
    assert pol.when(due.replace(tzinfo=dt.UTC), pol.zone("Europe/Paris")) in page and "the gradebook's due date" in page
    assert "No deadline known" in page and "students never see hidden tests' messages" in page
    # known mistakes per exercise over the latest graded submission of each student
    stats = {m["assignment"]: m for m in served.service.mistakes(served.queue.rows())}["a1"]
    latest = [r for r in (new, bob, carol)]
    assert stats["students"] == len(latest)
    ex = {e["name"]: e for e in stats["exercises"]}
    expect = {}
    for r in latest:
        for c in r.result["cells"]:
            if c["kind"] == "test" and c["passed"] is False and c.get("mistake"):
                expect.setdefault((pol.exercise_of(c["grade_id"]), c["mistake"]["name"]), set()).add(r.student)
    got = {(e, k["name"]): k["count"] for e, x in ex.items() for k in x["mistakes"]}
    assert got == {k: len(v) for k, v in expect.items()}
    unexplained = {r.student for r in latest for c in r.result["cells"]
                   if pol.exercise_of(c["grade_id"]) == "ex71A" and c["passed"] is False and not c.get("mistake")}
    assert ex["ex71A"]["unexplained"] == len(unexplained)
    assert f"This looks like a known mistake: {HINT}" in served.get(f"submissions/{bob.id}", "prof").text
    assert HINT in page and "no known mistake explains" in page


def test_the_gradebooks_due_date_is_the_deadline(served):
    from nbgrader.api import Gradebook

    past = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).replace(tzinfo=None)
    with Gradebook(f"sqlite:///{served.course / 'gradebook.db'}") as gb:
        gb.add_assignment("a1", duedate=past)
    a = served.submit("alice", 0, res=result())
    seen = _json(served.get(f"api/submissions/{a.id}", "alice"))["feedback"]
    assert seen["after_deadline"] and seen["deadline_from"] == "gradebook"
    assert seen["deadline_at"] == pol.when(past.replace(tzinfo=dt.UTC), pol.zone("Europe/Paris"))
    assert cells_of(seen)["test_ex71B_orders"]["message"] == HIDDEN_MSG
    assert "Traceback" not in json.dumps(seen)


def test_hostile_names_are_escaped(served):
    evil = '<img src=x onerror="alert(1)">'
    r = served.submit(evil, 0, evil, res=result())
    for path in ("class", f"submissions/{r.id}"):
        page = served.get(path, "prof").text
        assert evil not in page and "&lt;img" in page, path
    for path in ("report/..", "report/.hidden", "report/%2e%2e"):
        assert served.raw("GET", PREFIX + path, "prof")[0] == 404, path


def test_pages_pass_axe(served, chromium, tmp_path):
    _notebook(served.course / "release" / "a1" / "nb.ipynb")
    due = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(days=1)
    served.policy_file.write_text(f'timezone = "Europe/Paris"\n[assignments.a1]\ndeadline = {due.isoformat()}\n')
    a = served.submit("alice", 0, res=result())
    served.submit("alice", 2, limit=1)
    served.submit("bob", 1, res=result())
    served.submit("carol", 4, "a2", res=result())
    pages = {"student": served.get("", "alice").text, "feedback": served.get(f"submissions/{a.id}", "alice").text,
             "feedback_instructor": served.get(f"submissions/{a.id}", "prof").text,
             "class": served.get("class", "prof").text}
    problems = bs.axe_html_pages(pages, tmp_path)
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------- set-up
def _class_setup():
    import importlib.util

    spec = importlib.util.spec_from_file_location("class_setup", env.REPO / "deploy" / "class_setup.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_trial_refuses_root():
    cs = _class_setup()
    trial = {"TD_SPAWNER": "simple", "TD_AUTHENTICATOR": "dummy"}
    problem = cs.root_trial_problem(trial, euid=0)
    assert problem and "root" in problem and "solutions" in problem and "TD_HUB_ALLOW_ROOT_TRIAL=1" in problem
    assert cs.root_trial_problem(trial, euid=1000) is None
    assert cs.root_trial_problem({"TD_SPAWNER": "localprocess"}, euid=0) is None, "a class: one user per student"
    assert cs.root_trial_problem({}, euid=0) is None
    allowed = {**trial, "TD_HUB_ALLOW_ROOT_TRIAL": "1"}
    assert cs.root_trial_problem(allowed, euid=0) is None and "root" in cs.root_trial_warning(allowed, euid=0)
    if os.geteuid() == 0:  # make hub's first step, as root
        e = {"PATH": os.environ.get("PATH", ""), **trial, "TD_STUDENT_ENV": "/nonexistent"}
        p = subprocess.run([sys.executable, str(env.REPO / "deploy" / "class_setup.py"), "--check-env"], env=e,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 2 and "every student's server would run as root" in p.stderr, p.stderr
        p = subprocess.run([sys.executable, str(env.REPO / "deploy" / "class_setup.py"), "--check-env"],
                           env={**e, "TD_HUB_ALLOW_ROOT_TRIAL": "1"}, capture_output=True, text=True, timeout=120)
        assert "would run as root" not in p.stderr and "TD_STUDENT_ENV=/nonexistent" in p.stderr, p.stderr
