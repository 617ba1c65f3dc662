"""The live grading service's parts (tools/live_grading/), fast: no hub, no real grading.

- the durable queue: a submission is written once however often it is noticed, a row left
  ``grading`` by a crash is queued again on start and one being graded when the service stops
  goes back at once, neither using an attempt; a result is recorded once;
- the worker grades submissions each on its own and records each result the moment it is there:
  a hanging submission holds back nobody else's;
- unchanged notebooks keep their grading (same bytes, same source of the assignment, the
  executed notebook still there); a changed one is graded again;
- messages a student can act on: an answer cell that hit its time limit is named, on the tests
  that then fail with NameError; a missing or unreadable notebook is one line of ``notice``; no
  traceback reaches a result;
- the rate limit: at most N accepted submissions per student, assignment and hour, the rest
  refused with a message that says when to submit again;
- the policy: visible tests at once, hidden tests as pass/fail (or nothing) before the
  deadline and with their messages after it; instructors see everything;
- the watcher on a fake exchange: complete submission folders only, each once;
- the test runner reports the line where a test cell failed (visible or hidden part);
- a burst: 60 submissions of 20 students at once, limit 2 per hour, graded by an injected
  grading function in a real service process (``python -m tools.live_grading --no-web``),
  which is killed (SIGKILL) mid-queue and restarted: the final table equals an uninterrupted
  run's, every accepted submission graded to completion once, the rest refused, none lost;
  a second service on the same state folder refuses to start.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools import env
from tools.live_grading import policy as pol
from tools.live_grading.queue import Arrival, Queue
from tools.live_grading.watch import Watcher, parse_name, scan

T0 = dt.datetime(2026, 11, 30, 10, 0, 0, tzinfo=dt.UTC)  # in the past: a future timestamp counts as now


def stamp(t: dt.datetime) -> str:
    """nbgrader's timestamp format."""
    return t.strftime("%Y-%m-%d %H:%M:%S.%f %Z")


def arrival(student: str, minutes: float, assignment: str = "a1") -> Arrival:
    t = T0 + dt.timedelta(minutes=minutes)
    return Arrival(student, assignment, stamp(t), t.timestamp(), f"{student}+{assignment}+{stamp(t)}+r")


# ---------------------------------------------------------------------- the queue
def test_queue_once_and_recovery(tmp_path):
    q = Queue(tmp_path / "q.sqlite")
    new = q.add([arrival("alice", 0), arrival("bob", 1)], limit=lambda a: 0)
    assert [r.state for r in new] == ["queued", "queued"]
    assert q.add([arrival("alice", 0), arrival("bob", 1)], limit=lambda a: 0) == [], "noticed twice, written twice"
    (first,) = q.claim(1)
    assert first.student == "alice" and first.state == "grading" and first.attempts == 1
    # The service dies while grading alice: a new process opens the same file.
    q2 = Queue(tmp_path / "q.sqlite")
    assert q2.recover() == 1
    assert q2.get(first.id).state == "queued" and q2.get(first.id).attempts == 0, "the crash used an attempt"
    assert q2.finish(first.id, {"score": 1}) is False, "a result for a row nobody is grading"
    rows = q2.claim(5)
    assert [r.student for r in rows] == ["alice", "bob"] and rows[0].attempts == 1
    assert q2.finish(rows[0].id, {"score": 2}) is True
    assert q2.finish(rows[0].id, {"score": 3}) is False, "graded to completion twice"
    assert q2.get(rows[0].id).result == {"score": 2}
    done = q2.get(rows[0].id)
    assert done.graded_at == done.finished and done.latency == round(done.finished - done.submitted, 2), \
        "the row says when it was submitted (the exchange's time) and when its result was recorded"
    # A grading error: retried, then failed with the reason.
    assert q2.fail(rows[1].id, "boom", retries=1) == "queued"
    (again,) = q2.claim(1)
    assert q2.fail(again.id, "boom again", retries=1) == "failed"
    assert q2.get(again.id).reason == "boom again"
    assert q2.counts() == {"queued": 0, "grading": 0, "graded": 1, "refused": 0, "failed": 1}


def test_claim_keeps_a_students_order(tmp_path):
    q = Queue(tmp_path / "q.sqlite")
    q.add([arrival("alice", 0), arrival("alice", 5), arrival("bob", 2), arrival("carol", 1, "a2")],
          limit=lambda a: 0)
    batch = q.claim(4)  # one assignment per batch, one submission per student
    assert [(r.student, r.assignment) for r in batch] == [("alice", "a1"), ("bob", "a1")]
    # while alice's first one is graded, her second one waits (it may reuse the first one's result)
    assert [(r.student, r.assignment) for r in q.claim(4)] == [("carol", "a2")]
    assert q.claim(4) == []
    q.finish(batch[0].id, {"score": 1})
    (later,) = q.claim(4)
    assert (later.student, later.timestamp) == ("alice", arrival("alice", 5).timestamp)
    assert q.last_graded("alice", "a1", before=later.id).id == batch[0].id
    assert q.last_graded("bob", "a1") is None


def test_a_stop_uses_no_attempt(tmp_path):
    """SIGTERM while grading: the row is queued again, its attempts as before; a grading error
    is what uses attempts (and only its last one's reason is shown, once failed)."""
    q = Queue(tmp_path / "q.sqlite")
    q.add([arrival("alice", 0)], limit=lambda a: 0)
    for _ in range(5):  # five stops during one grading each: never "failed"
        (r,) = q.claim(1)
        assert q.release(r.id)
        assert q.get(r.id).state == "queued" and q.get(r.id).attempts == 0
    assert not q.release(r.id), "a row nobody grades"
    (r,) = q.claim(1)
    assert q.fail(r.id, "boom", retries=1) == "queued" and q.get(r.id).reason == ""


# --------------------------------------------------------------------- rate limit
def test_rate_limit(tmp_path):
    q = Queue(tmp_path / "q.sqlite")
    rows = q.add([arrival("alice", m) for m in (0, 10, 20)] + [arrival("alice", 30, "a2")], limit=lambda a: 2)
    states = {(r.assignment, r.timestamp[11:16]): r.state for r in rows}
    assert states == {("a1", "10:00"): "queued", ("a1", "10:10"): "queued", ("a1", "10:20"): "refused",
                      ("a2", "10:30"): "queued"}, "the limit is per student and assignment"
    refused = next(r for r in rows if r.state == "refused")
    assert "the limit is 2 per hour" in refused.reason and "after 2026-11-30 11:00 UTC" in refused.reason, \
        refused.reason
    # an hour after the first accepted one, a new submission is accepted again; the refused one does not count
    (later,) = q.add([arrival("alice", 61)], limit=lambda a: 2)
    assert later.state == "queued"
    (too_soon,) = q.add([arrival("alice", 65)], limit=lambda a: 2)
    assert too_soon.state == "refused", "10:10 and 11:01 were accepted within the hour before 11:05"
    assert [r.state for r in q.add([arrival("bob", m) for m in range(5)], limit=lambda a: 0)] == ["queued"] * 5


# ------------------------------------------------------------------------ policy
def _result() -> dict:
    def cell(gid, passed, part=None, hidden=True, msg=None, points=None, kind="test"):
        return {"notebook": "nb", "grade_id": gid, "kind": kind, "max_points": 2.0,
                "points": (2.0 if passed else 0.0) if points is None else points, "has_hidden": hidden,
                "passed": passed, "failed_part": part, "message": msg}
    return {"score": 4.0, "max_score": 12.0, "cells": [
        cell("test_ex1_visible_only", False, "visible", hidden=False, msg="AssertionError: shape (3,) expected"),
        cell("test_ex1_hidden_fails", False, "hidden", msg="AssertionError: hidden: negative numbers"),
        cell("test_ex2_all_pass", True),
        cell("test_ex2_visible_fails", False, "visible", msg="AssertionError: double(2) should be 4"),
        cell("test_ex3_unknown", False, "unknown", msg="CellTimeoutError: the test did not finish"),
        cell("ex3_answer", None, kind="manual", points=None)]}


def _cells(v: dict) -> dict:
    return {c["grade_id"]: c for ex in v["exercises"] for c in ex["cells"]}


def test_policy_before_and_after_the_deadline(tmp_path):
    deadline = T0 + dt.timedelta(days=1)
    before, after = T0.timestamp(), (deadline + dt.timedelta(seconds=1)).timestamp()
    p = pol.AssignmentPolicy(deadline=deadline)
    v = pol.view(_result(), p, now=before)
    c = _cells(v)
    assert not v["after_deadline"] and [e["name"] for e in v["exercises"]] == ["ex1", "ex2", "ex3"]
    assert c["test_ex1_visible_only"]["visible"] == {"status": "failed"}
    assert c["test_ex1_visible_only"]["hidden"] is None
    assert c["test_ex1_visible_only"]["message"] == "AssertionError: shape (3,) expected"
    assert c["test_ex1_hidden_fails"]["visible"]["status"] == "passed"
    assert c["test_ex1_hidden_fails"]["hidden"]["status"] == "failed" and c["test_ex1_hidden_fails"]["message"] is None
    assert c["test_ex2_all_pass"]["hidden"]["status"] == "passed" and c["test_ex2_all_pass"]["points"] == 2
    assert c["test_ex2_visible_fails"]["hidden"]["status"] == "not run"
    assert c["test_ex2_visible_fails"]["message"] == "AssertionError: double(2) should be 4"
    assert c["test_ex3_unknown"]["message"] is None and c["ex3_answer"]["points"] is None
    assert v["score"] == 2.0 and v["withheld"] == 0 and v["manual"] == 2.0
    ex3 = v["exercises"][2]
    assert (ex3["points"], ex3["max_points"], ex3["manual"], ex3["withheld"]) == (0, 4, 2, False)
    assert "negative numbers" not in json.dumps(v) and "did not finish" not in json.dumps(v)
    # "nothing": hidden results and the points that would reveal them wait for the deadline too
    v = pol.view(_result(), pol.AssignmentPolicy(deadline=deadline, hidden_before_deadline="nothing"), now=before)
    c = _cells(v)
    assert c["test_ex1_hidden_fails"]["hidden"]["status"] == "withheld" and c["test_ex1_hidden_fails"]["points"] is None
    assert c["test_ex2_all_pass"]["hidden"]["status"] == "withheld" and c["test_ex2_all_pass"]["points"] is None
    assert c["test_ex2_visible_fails"]["points"] == 0 and c["test_ex2_visible_fails"]["message"]
    assert v["withheld"] == 6.0 and v["exercises"][1]["withheld"]
    # after the deadline, and for an instructor at any time: every message
    for v in (pol.view(_result(), p, now=after), pol.view(_result(), p, now=before, instructor=True)):
        c = _cells(v)
        assert c["test_ex1_hidden_fails"]["message"] == "AssertionError: hidden: negative numbers"
        assert c["test_ex3_unknown"]["message"].startswith("CellTimeoutError")
    # without a deadline, "before" lasts; the gradebook's due date is used when the policy has none
    assert not pol.view(_result(), pol.AssignmentPolicy(), now=after)["after_deadline"]
    assert pol.view(_result(), pol.AssignmentPolicy(), deadline=deadline, now=after)["after_deadline"]


def test_policy_file(tmp_path):
    f = tmp_path / "live_grading.toml"
    f.write_text('[defaults]\nmax_per_hour = 5\nhidden_before_deadline = "nothing"\n\n'
                 '[assignments.a1]\ndeadline = 2026-12-15T18:00:00Z\nmax_per_hour = 2\n\n'
                 '[assignments.exam]\nenabled = false\n')
    p = pol.Policy.load(f)
    assert p.limit("a1") == 2 and p.limit("other") == 5
    assert p.get("a1").hidden_before_deadline == "nothing", "an assignment inherits [defaults]"
    assert p.get("a1").deadline == dt.datetime(2026, 12, 15, 18, tzinfo=dt.UTC)
    assert not p.get("exam").enabled
    time.sleep(0.01)
    f.write_text('[assignments.a1]\nmax_per_hour = 1\n')
    os.utime(f, (time.time() + 5, time.time() + 5))
    assert p.limit("a1") == 1, "the file is read again when it changes"
    f.write_text('[assignments.a1]\nmax_per_hr = 1\n')
    with pytest.raises(ValueError, match="unknown setting"):
        pol.Policy.load(f)
    assert pol.hidden_lines("a\n### BEGIN HIDDEN TESTS\nb\n### END HIDDEN TESTS\nc") == {2, 3, 4}
    assert pol.exercise_of("test_ex71A_loss") == "ex71A" == pol.exercise_of("ex71A_1_answer")


def test_the_gradebooks_due_date_is_the_deadline(tmp_path):
    from nbgrader.api import Gradebook

    from tools.live_grading.app import Service

    due = dt.datetime(2026, 12, 20, 18, 0)
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        gb.add_assignment("a1", duedate=due)
        gb.add_assignment("a2")
    s = Service(Queue(tmp_path / "q.sqlite"), pol.Policy.load(None), tmp_path, tmp_path, {"prof"})
    assert s.duedate("a1") == due.replace(tzinfo=dt.UTC) and s.duedate("a2") is None and s.duedate("zz") is None
    assert s.is_instructor({"name": "prof"}) and s.is_instructor({"name": "x", "groups": ["instructors"]})
    assert not s.is_instructor({"name": "alice", "groups": []})


# ----------------------------------------------------------------------- watcher
def _submit(inbound: Path, student: str, assignment: str, t: dt.datetime, complete: bool = True) -> Path:
    d = inbound / f"{student}+{assignment}+{stamp(t)}+{os.urandom(4).hex()}"
    d.mkdir(parents=True)
    (d / "nb.ipynb").write_text("{}")
    if complete:
        (d / "timestamp.txt").write_text(stamp(t))
        (d / "submission_secret.txt").write_text("s")
    return d


def test_watcher_on_a_fake_exchange(tmp_path):
    inbound = tmp_path / "exchange" / "c" / "inbound"
    q = Queue(tmp_path / "q.sqlite")
    w = Watcher(q, inbound, limit=lambda a: 0, settle=1.0)
    assert w.poll() == [], "no exchange yet"
    _submit(inbound, "alice", "a1", T0)
    half = _submit(inbound, "bob", "a1", T0 + dt.timedelta(seconds=5), complete=False)
    (inbound / "not-a-submission").mkdir()
    (inbound / "stray.txt").write_text("x")
    rows = w.poll()
    assert [(r.student, r.assignment, r.timestamp) for r in rows] == [("alice", "a1", stamp(T0))]
    assert w.poll() == [], "noticed once"
    (half / "timestamp.txt").write_text(stamp(T0 + dt.timedelta(seconds=5)))  # an older nbgrader: no secret file
    assert w.poll() == [], "still being written"
    old = time.time() - 10
    for p in half.iterdir():
        os.utime(p, (old, old))
    (rows,) = [w.poll()]
    assert [r.student for r in rows] == ["bob"]
    assert Watcher(q, inbound, limit=lambda a: 0).poll() == [], "a restarted watcher knows what it saw"
    assert parse_name("a+b+c+d+2026-12-02 10:00:00.000000 UTC+ff") == ("a+b+c", "d", "2026-12-02 10:00:00.000000 UTC")
    assert parse_name("..+a1+2026-12-02 10:00:00.000000 UTC+ff") is None, "a student id that climbs out"
    assert parse_name("alice+..+2026-12-02 10:00:00.000000 UTC+ff") is None
    assert scan(inbound, set(), now=time.time())[0].submitted == T0.timestamp()


def test_refused_outright(tmp_path):
    import pwd

    from tools.live_grading.__main__ import refuser

    me = pwd.getpwuid(os.getuid()).pw_name
    course, inbound = tmp_path / "course", tmp_path / "inbound"
    (course / "source" / "a1").mkdir(parents=True)
    (course / "source" / "exam").mkdir(parents=True)
    f = tmp_path / "p.toml"
    f.write_text("[assignments.exam]\nenabled = false\n")
    for who in (me, "mallory"):
        _submit(inbound, who, "a1", T0)
    arrivals = {a.student: a for a in scan(inbound, set(), now=time.time())}
    refuse = refuser(pol.Policy.load(f), course, inbound)
    assert refuse(arrivals[me]) is None
    assert refuse(arrivals["mallory"]) == f"this submission was written by {me}, not by mallory"
    assert refuser(pol.Policy.load(f), course)(arrivals["mallory"]) is None, "no owner check unless asked"
    other = arrival(me, 0, "exam")
    assert "live grading is off for exam" in refuse(other)
    assert refuse(arrival(me, 0, "nope")) == "the course has no assignment nope"


# ------------------------------------------------------------- the failing line
def test_test_runner_reports_the_failing_line():
    from tools.grading.runner import failed_line

    src = "x = 1\nassert x == 1, 'visible'\n### BEGIN HIDDEN TESTS\nassert x == 2, 'hidden'\n### END HIDDEN TESTS\n"
    try:
        exec(compile(src, "<test cell t>", "exec"), {})
    except AssertionError as e:
        assert failed_line(e, "<test cell t>") == 4
    def helper():
        raise ValueError("inside a function")
    try:
        exec(compile("y = 0\nhelper()\n", "<test cell u>", "exec"), {"helper": helper})
    except ValueError as e:
        assert failed_line(e, "<test cell u>") == 2, "the line of the test cell, not of the function"


# ------------------------------------------------------------------ the worker
def test_each_result_is_recorded_when_graded(tmp_path):
    """Three submissions graded at once: the one that hangs holds back nobody; the two others
    are recorded as soon as they are graded. Then the service stops: the hanging one goes back
    to the queue, no attempt used."""
    import threading

    from tools.live_grading.worker import Worker

    q = Queue(tmp_path / "q.sqlite")
    q.add([arrival("hangs", 0), arrival("fast1", 1), arrival("fast2", 2)], limit=lambda a: 0)
    release = threading.Event()

    def grade(rows):
        (r,) = rows
        if r.student == "hangs":
            release.wait(30)
            raise RuntimeError("cancelled")  # what a cancelled Dask future raises on the way out
        time.sleep(0.05)
        return {r.id: {"score": 1.0, "max_score": 1.0, "cells": []}}

    w = Worker(q, grade, batch=3)
    stop = threading.Event()
    t = threading.Thread(target=w.run, args=(stop,), daemon=True)
    t.start()
    deadline = time.monotonic() + 10
    while q.counts()["graded"] < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    by = {r.student: r for r in q.rows()}
    assert by["fast1"].state == by["fast2"].state == "graded" and by["hangs"].state == "grading", q.counts()
    stop.set()
    assert w.shutdown() == [by["hangs"].id]
    release.set()
    time.sleep(0.1)
    again = q.get(by["hangs"].id)
    assert again.state == "queued" and again.attempts == 0 and again.reason == "", again


def test_a_grading_error_is_retried_then_failed_in_one_line(tmp_path):
    from tools.live_grading.worker import Worker

    q = Queue(tmp_path / "q.sqlite")
    q.add([arrival("alice", 0)], limit=lambda a: 0)

    def grade(rows):
        raise ValueError("no such thing\nTraceback (most recent call last):\n  File x")

    w = Worker(q, grade, batch=1, retries=1)
    assert w.run_once() == 1 and q.counts()["queued"] == 1
    assert w.run_once() == 1
    (r,) = q.rows()
    assert r.state == "failed" and r.reason == "grading failed: ValueError: no such thing", r.reason


# ------------------------------------------------------------------ reuse
def test_unchanged_notebooks_keep_their_grading():
    from tools.live_grading.queue import Row
    from tools.live_grading.worker import plan_reuse

    def row(i, notebooks):
        return Row(id=i, student="alice", assignment="a1", timestamp="t", submitted=0.0, inbound="x", noticed=0.0,
                   state="graded", reason="", attempts=1, started=None, finished=1.0,
                   result={"score": 1, "notebooks": notebooks})

    prev = row(7, {"nb1": {"sha256": "h1", "source": "S", "executed_sha256": "e1", "graded_at": 5.0},
                   "nb2": {"sha256": "h2", "source": "S", "executed_sha256": "e2", "graded_at": 5.0},
                   "nb3": {"sha256": "h3", "source": "S", "executed_sha256": "e3", "graded_at": 4.0,
                           "reused_from": 3}})
    executed = {"nb1": "e1", "nb2": "e2", "nb3": "e3"}.get
    plan = plan_reuse(prev, {"nb1": "h1", "nb2": "CHANGED", "nb3": "h3"}, "S", executed)
    assert sorted(plan) == ["nb1", "nb3"], "the changed notebook is graded again"
    assert plan["nb1"]["reused_from"] == 7 and plan["nb1"]["graded_at"] == 5.0
    assert plan["nb3"]["reused_from"] == 3, "kept from the row that graded it, through a chain of reuses"
    assert plan_reuse(prev, {"nb1": "h1", "nb2": "h2", "nb3": "h3"}, "S2", executed) == {}, \
        "the assignment's source changed: everything is graded again"
    assert sorted(plan_reuse(prev, {"nb1": "h1", "nb2": "h2"}, "S", {"nb1": "e1", "nb2": "tampered"}.get)) == \
        ["nb1"], "an executed notebook that is not the one recorded is not reused"
    assert plan_reuse(None, {"nb1": "h1"}, "S", executed) == {}
    assert plan_reuse(row(8, {"nb1": {"sha256": "h1", "source": "S", "executed_sha256": None}}), {"nb1": "h1"}, "S",
                      executed) == {}, "a notebook that could not be graded is graded again"


@pytest.mark.slow  # ~30 s: nbgrader generate_assignment, a Dask worker, six notebooks graded
def test_reuse_with_the_real_grader(tmp_path):
    """Through the course's grader (unsandboxed: the test's own submissions): a resubmission grades
    only the notebook that changed and keeps the other's grading (the score adds up, the kept cells
    say so, and keep where they failed); once the assignment's source changes, nothing is kept."""
    import nbformat

    from tests.test_hub import tiny_source
    from tools.live_grading.worker import CourseGrader

    course, inbound = tmp_path / "course", tmp_path / "inbound"
    (course / "source" / "a1").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"load_subconfig({str(env.COURSE / 'nbgrader_config.py')!r})  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(course)!r}\n")
    for nb in ("nb1", "nb2"):
        nbformat.write(tiny_source(), str(course / "source" / "a1" / f"{nb}.ipynb"))
    r = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", "a1",
                        f"--CourseDirectory.root={course}"], cwd=course, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-1500:]
    q = Queue(tmp_path / "q.sqlite")
    answers = {"right": "def double(x):\n    return x + x", "wrong": "def double(x):\n    return x * x"}

    def submit(minute: int, nb1: str, nb2: str):
        t = T0 + dt.timedelta(minutes=minute)
        d = inbound / f"alice+a1+{stamp(t)}+r"
        d.mkdir(parents=True)
        for name, answer in (("nb1", nb1), ("nb2", nb2)):
            nb = nbformat.read(str(course / "release" / "a1" / f"{name}.ipynb"), as_version=4)
            for c in nb.cells:
                if c.metadata.get("nbgrader", {}).get("grade_id") == "ex_double":
                    c.source = answers[answer]
            nbformat.write(nb, str(d / f"{name}.ipynb"))
        (d / "timestamp.txt").write_text(stamp(t))
        q.add([Arrival("alice", "a1", stamp(t), t.timestamp(), d.name)], limit=lambda a: 0)
        (row,) = q.claim(1)
        res = g([row])[row.id]
        assert "error" not in res, res
        assert q.finish(row.id, res)
        return row.id, res

    g = CourseGrader(course, inbound, tmp_path / "state", sandbox=False, workers=1, queue=q)
    try:
        first, res = submit(0, "right", "right")
        assert res["score"] == 4 and not any("reused_from" in v for v in res["notebooks"].values()), res
        _, res = submit(1, "right", "wrong")
        assert res["score"] == 2, "nb1 kept (2 points), nb2 graded again (0)"
        assert res["notebooks"]["nb1"]["reused_from"] == first and "reused_from" not in res["notebooks"]["nb2"]
        kept = {c["notebook"]: c.get("reused", False) for c in res["cells"]}
        assert kept == {"nb1": True, "nb2": False}, res["cells"]
        src = course / "source" / "a1" / "nb1.ipynb"  # the instructor edits the assignment's source
        nb = nbformat.read(str(src), as_version=4)
        nb.cells.append(nbformat.v4.new_markdown_cell("A hint added later."))
        nbformat.write(nb, str(src))
        _, res = submit(2, "right", "wrong")
        assert res["score"] == 2 and not any("reused_from" in v for v in res["notebooks"].values()), \
            "the source changed: everything is graded again"
        third, res = submit(3, "wrong", "wrong")
        assert res["notebooks"]["nb2"]["reused_from"] == third - 1 and "reused_from" not in res["notebooks"]["nb1"]
        parts = {c["notebook"]: c["failed_part"] for c in res["cells"]}
        assert parts == {"nb1": "hidden", "nb2": "hidden"}, "a reused cell keeps where it failed, as when graded"
    finally:
        g.close()


def test_tasks_of_one_submission_combine():
    from tools.grading.record import GradingRecord

    a = GradingRecord(student="s", assignment="a1", executed={"nb1.ipynb": "x"}, seconds=3.0, log="la",
                      timing={"nb1": 2.0}, failed_lines={"nb1": {"t": 3}}, host="h", mistakes={"nb1": {"t": "m"}})
    b = GradingRecord(student="s", assignment="a1", executed={"nb2.ipynb": "y"}, seconds=5.0, log="lb",
                      errors=["nb2.ipynb: missing from the submission"], flags={"nb2": ["numpy.allclose"]},
                      timing={"nb2": 4.0}, host="h")
    out = GradingRecord.combine([a, b], "s", "a1")  # what the live worker does with its notebooks' records
    assert sorted(out.executed) == out.notebooks == ["nb1.ipynb", "nb2.ipynb"] and out.seconds == 5.0
    assert out.errors == ["nb2.ipynb: missing from the submission"] and out.log == "la\nlb"
    assert out.timing == {"nb1": 2.0, "nb2": 4.0} and out.flags == {"nb2": ["numpy.allclose"]}
    assert out.mistakes == {"nb1": {"t": "m"}} and out.failed_lines == {"nb1": {"t": 3}} and out.host == "h"
    assert "executed" not in out.to_json() and "log" not in out.to_json(), "the record file keeps its keys"


# ------------------------------------------------------------------ messages
def test_messages_a_student_can_act_on():
    import nbformat

    from tools.live_grading.worker import _cause, _problem, notices, one_line

    # an unreadable notebook: one line on top, not a row per test; no traceback anywhere
    errs = ["nb1.ipynb: unreadable notebook (NotJSONError: Notebook does not appear to be JSON: '{not')",
            "nbgrader autograde failed: Traceback (most recent call last):\n  File \"x\", line 1\nBoom"]
    notice, rest, not_graded = notices(errs, ["nb1", "nb2"])
    assert notice == ["nb1.ipynb was not graded: the file could not be read as a notebook (NotJSONError); "
                      "its tests score 0."], notice
    assert not_graded == {"nb1": "the file could not be read as a notebook (NotJSONError)"}
    assert rest == ["the grader could not finish part of this submission (the instructor's log has the details)"]
    # every notebook gone: one line, and the grader's failure is not shown at all
    notice, rest, _ = notices(["nb1.ipynb: missing from the submission", "nb2.ipynb: missing from the submission",
                               errs[1]], ["nb1", "nb2"])
    assert len(notice) == 1 and notice[0].startswith("No notebook of this submission could be graded") and rest == []
    assert "Traceback" not in json.dumps(notices(errs, ["nb1"])) and one_line(errs[1]) == "nbgrader autograde failed:"
    # a loop at the top of an answer cell: the cell hit its time limit; the test's NameError says so
    loop = nbformat.v4.new_code_cell("while True:\n    pass\ndef loss_from_moments(m):\n    return m",
                                     metadata={"nbgrader": {"grade_id": "ex1_answer", "solution": True}})
    loop.outputs = [nbformat.v4.new_output("error", ename="KeyboardInterrupt", evalue="", traceback=[]),
                    nbformat.v4.new_output("error", ename="CellTimeoutError", evalue="", traceback=[])]
    other = nbformat.v4.new_code_cell("import numpy as np\nraise ValueError('bad shape')")
    other.outputs = [nbformat.v4.new_output("error", ename="ValueError", evalue="bad shape\nmore", traceback=[])]
    p_loop, p_other = _problem(loop, 3, 90), _problem(other, 1, 90)
    assert p_loop == {"cell": "ex1_answer", "kind": "time limit",
                      "message": "the answer cell ex1_answer hit its time limit of 90 s"}
    assert p_other == {"cell": "cell 2", "kind": "error", "message": "cell 2 raised ValueError: bad shape"}
    name_error = {"ename": "NameError", "evalue": "name 'loss_from_moments' is not defined"}
    cause = _cause(name_error, [(p_loop, loop.source), (p_other, other.source)])
    assert cause == {"cell": "ex1_answer", "kind": "time limit",
                     "message": "not graded: the answer cell ex1_answer hit its time limit of 90 s"}, cause
    assert _cause({"ename": "AssertionError", "evalue": "x"}, [(p_loop, loop.source)]) is None
    budget = nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {"grade_id": "ex2", "solution": True}})
    budget.outputs = [nbformat.v4.new_output("error", ename="GradingBudgetExceeded", traceback=[], evalue=(
        "the time budget of this notebook (600 s to grade it) ran out while this cell ran: it was interrupted"))]
    assert _problem(budget, 0, 90)["message"] == "the answer cell ex2 was stopped: the notebook's time budget of " \
        "600 s ran out"


# ------------------------------------------------------------------------ burst
def fake_grade(rows) -> dict:
    """A grading function for the burst test (``--grader tests.test_live_grading:fake_grade``):
    logs start and end of each grading to $LG_FAKE_LOG, takes $LG_FAKE_DELAY s; with
    $LG_FAKE_HANG_AFTER=N it hangs on the grading after the N-th (the test kills it there)."""
    log = Path(os.environ["LG_FAKE_LOG"])
    out = {}
    for r in rows:
        key = f"{r.student}|{r.assignment}|{r.timestamp}"
        with log.open("a") as f:
            f.write(f"start {key}\n")
        done = sum(1 for ln in log.read_text().splitlines() if ln.startswith("done "))
        hang = int(os.environ.get("LG_FAKE_HANG_AFTER", "0") or 0)
        if hang and done >= hang:
            time.sleep(3600)
        time.sleep(float(os.environ.get("LG_FAKE_DELAY", "0.02")))
        with log.open("a") as f:
            f.write(f"done {key}\n")
        out[r.id] = {"score": float(sum(map(ord, key)) % 3), "max_score": 2.0, "cells": []}
    return out


def _service(exchange: Path, state: Path, log: Path, **extra) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "tools.live_grading", "--no-web", "--exit-when-idle", "--grader",
           "tests.test_live_grading:fake_grade", "--exchange", str(exchange), "--course-id", "c",
           "--course", str(exchange.parent / "nocourse"), "--state", str(state), "--max-per-hour", "2",
           "--poll", "0.1", "--batch", "1"]
    e = {**os.environ, "LG_FAKE_LOG": str(log), "LG_FAKE_DELAY": "0.03", **extra}
    return subprocess.Popen(cmd, cwd=env.REPO, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.slow  # ~10 s of subprocesses: once per make test, not again in test-numerics
def test_burst_kill_and_restart(tmp_path):
    exchange = tmp_path / "exchange"
    inbound = exchange / "c" / "inbound"
    students = [f"s{i:02d}" for i in range(20)]
    for k in range(3):  # 60 submissions, 3 per student within a few minutes: all there at once
        for i, s in enumerate(students):
            _submit(inbound, s, "a1", T0 + dt.timedelta(minutes=k, seconds=i))
    t0 = time.monotonic()
    # an uninterrupted run
    p = _service(exchange, tmp_path / "A", tmp_path / "A.log")
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 0, out
    table_a = Queue(tmp_path / "A" / "queue.sqlite").table()
    t_a = time.monotonic() - t0
    # the same, killed with SIGKILL while grading the 11th submission, then started again
    log_b = tmp_path / "B.log"
    p = _service(exchange, tmp_path / "B", log_b, LG_FAKE_HANG_AFTER="10")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if log_b.exists() and log_b.read_text().count("start ") == 11:
            break
        time.sleep(0.05)
    q = Queue(tmp_path / "B" / "queue.sqlite")
    assert q.counts()["grading"] == 1 and q.counts()["graded"] == 10, q.counts()
    second = _service(exchange, tmp_path / "B", log_b)  # the same state folder: refused while B runs
    out, _ = second.communicate(timeout=60)
    assert second.returncode == 1 and "another grading service runs on" in out, out
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    p = _service(exchange, tmp_path / "B", log_b)
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 0, out
    assert "1 submission(s) left 'grading' by a previous run are queued again" in out, out
    table_b = q.table()
    assert table_b == table_a, "the restarted queue ends with another table"
    # every submission is there once; 2 per student accepted and graded; the third refused, with the message
    assert len(table_a) == 60 and len({r[:3] for r in table_a}) == 60
    graded = [r for r in table_a if r[3] == "graded"]
    refused = [r for r in table_a if r[3] == "refused"]
    assert len(graded) == 40 and len(refused) == 20
    assert {r[0] for r in refused} == set(students) and all("limit is 2 per hour" in r[4] for r in refused)
    assert all(r[2][14:16] == "02" for r in refused), "the third submission of each student is the refused one"
    for log in (tmp_path / "A.log", log_b):
        lines = log.read_text().splitlines()
        done = [ln[5:] for ln in lines if ln.startswith("done ")]
        keys = {"|".join(r[:3]) for r in graded}
        assert set(done) == keys, "a refused submission was graded, or an accepted one was not"
        assert len(done) == len(keys), "a submission was graded to completion twice"
    starts = [ln[6:] for ln in log_b.read_text().splitlines() if ln.startswith("start ")]
    assert len(starts) == 41, "only the grading the kill interrupted is started again"
    print(f"\nburst: uninterrupted {t_a:.1f} s, all {time.monotonic() - t0:.1f} s")
