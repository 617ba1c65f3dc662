"""Known mistakes (tools/grading/mistakes.py): the test runner recognises them, hints cannot leak, the
declarations hold the rules, and (slow) the graded fake class of ``make mistakes``: every known
mistake recognised, its hint in the student's feedback page, the report's counts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import nbformat
import numpy as np
import pytest

from tools import nbcore
from tools.grading import mistakes, runner, wire
from tools.grading.remote_tests import MISTAKE_LEAD

CELL = ("import numpy as np\nfrom td_lib.own_work import own_work\n_f = own_work(double, 'exX')\n"
        "_a = np.arange(1.0, 4.0)\nassert np.allclose(_f(_a), 2 * _a), 'double is wrong'\n")
TRIPLE = {"name": "triple", "hint": "The factor is three.", "program": "def double(x):\n    return 3 * x\n",
          "defines": ["double"], "rtol": 1e-6, "atol": 1e-9}
SQUARE = {"name": "square", "hint": "Squared.", "program": "import numpy as np\ndef double(x):\n    return x ** 2\n",
          "defines": ["double"], "rtol": 1e-6, "atol": 1e-9}


class Grader:
    """Plays the grader against a real runner process; ``answer(x)`` is the 'student'."""

    def __init__(self):
        r, w = os.pipe()
        self.proc = subprocess.Popen([sys.executable, "-I", "-m", "tools.grading.runner", str(w)],
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, pass_fds=(w,), cwd="/")
        os.close(w)
        self.out = os.fdopen(r, "rb")

    def send(self, m: dict) -> None:
        self.proc.stdin.write(json.dumps(m).encode() + b"\n")
        self.proc.stdin.flush()

    def recv(self) -> dict:
        return json.loads(self.out.readline())

    def run(self, answer, known: list[dict], budget: float = 30.0, cell: str = CELL) -> dict:
        self.send({"op": "run", "source": cell, "label": "<t>", "student": ["double"], "mistakes": known,
                   "budget": budget})
        while True:
            m = self.recv()
            if m["op"] == "need":
                self.send({"op": "names", "id": m["id"], "info": {"double": {"kind": "function"}}})
            elif m["op"] == "call":
                x = wire.decode(m["args"])[0]
                self.send({"op": "result", "id": m["id"], "ok": wire.encode(answer(x)), "after": {}})
            elif m["op"] == "done":
                return m

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
        self.out.close()


@pytest.fixture(scope="module")
def grader():
    g = Grader()
    yield g
    g.close()


def test_runner_names_the_mistake_whose_results_match(grader):
    done = grader.run(lambda x: 3 * x, [SQUARE, TRIPLE])
    assert done["error"]["ename"] == "AssertionError" and done["mistake"] == {"name": "triple", "hint": TRIPLE["hint"]}
    near = grader.run(lambda x: 3 * x * (1 + 1e-8), [SQUARE, TRIPLE])  # within the mistake's own tolerance
    assert near["mistake"]["name"] == "triple"
    far = grader.run(lambda x: 3 * x * (1 + 1e-4), [SQUARE, TRIPLE])  # no known mistake: today's message only
    assert far["error"]["ename"] == "AssertionError" and far["mistake"] is None


def test_a_pass_stays_a_pass_and_a_failure_stays_a_failure(grader):
    assert grader.run(lambda x: 2 * x, [TRIPLE]) == {"op": "done", "error": None, "mistake": None}
    # a mistake that would "match" the right answer changes nothing: only failures are compared
    assert grader.run(lambda x: 2 * x, [{**TRIPLE, "program": "def double(x):\n    return 2 * x\n"}])["error"] is None


def test_broken_slow_and_unrelated_mistakes_match_nothing_and_cost_at_most_the_budget(grader):
    broken = {**TRIPLE, "name": "broken", "program": "raise RuntimeError('no')\n"}
    other = {**TRIPLE, "name": "other", "defines": ["halve"], "program": "def halve(x):\n    return x / 2\n"}
    assert grader.run(lambda x: 3 * x, [broken, other])["mistake"] is None
    slow = {**TRIPLE, "name": "slow", "program": "import time\ndef double(x):\n    time.sleep(60)\n    return 3 * x\n"}
    t0 = time.monotonic()
    assert grader.run(lambda x: 3 * x, [slow, TRIPLE], budget=3.0)["mistake"] is None  # out of time before TRIPLE
    assert time.monotonic() - t0 < 10
    assert grader.run(lambda x: 3 * x, [TRIPLE])["mistake"]["name"] == "triple"  # the runner is still healthy
    assert grader.run(lambda x: 3 * x, [TRIPLE], budget=0.2)["mistake"] is None  # no time left: not compared


def test_a_mistake_sees_the_inputs_as_the_test_gave_them(grader):
    """The student's function may change its argument in place: the mistake gets the original."""
    def in_place(x):
        x *= 3
        return x
    cell = CELL.replace("_f(_a)", "_f(_a.copy())")
    assert grader.run(in_place, [TRIPLE], cell=cell)["mistake"]["name"] == "triple"


@pytest.mark.parametrize(("got", "want", "same"), [
    (1.0 + 1e-7, 1.0, True), (1.0 + 1e-5, 1.0, False), (np.array([1.0, np.nan]), np.array([1.0, np.nan]), True),
    (np.zeros(3), np.zeros(4), False), ((1.0, {"a": 2.0}), [1.0, {"a": 2.0}], True), ({"a": 1.0}, {"b": 1.0}, False),
    (True, 1, False), ("x", "x", True), (None, 0.0, False), (np.float64(2.0), 2, True),
])
def test_close_compares_structures_within_the_tolerance(got, want, same):
    assert runner.close(got, want, 1e-6, 1e-12) is same


def test_program_resolves_an_earlier_answer_from_its_correct_alternative(tmp_path):
    pkg = tmp_path / "nb"
    (pkg / "exA").mkdir(parents=True)
    (pkg / "exB").mkdir()
    (pkg / "exA" / "correct_x.py").write_text("import math\n\n# %%\ndef a(x):\n    return math.sqrt(x)\n")
    (pkg / "exB" / "wrong_y.py").write_text("from ..exA.correct_x import a\n\n# %%\ndef b(x):\n    return a(x) + 1\n")
    ns: dict = {}
    exec(mistakes.program(pkg / "exB" / "wrong_y.py"), ns)  # noqa: S102 - the test's own code
    assert ns["b"](4.0) == 3.0


# ------------------------------------------------------------------- the declarations
@pytest.fixture(scope="module")
def all_exercises() -> list[mistakes.Exercise]:
    return [ex for a in mistakes.assignments() for nb in mistakes.notebooks(a) for ex in mistakes.exercises(a, nb)]


def test_every_graded_code_exercise_declares_its_known_mistakes(all_exercises):
    from tools.build import fake_students

    assert len(all_exercises) >= 25
    for ex in all_exercises:
        package = mistakes.FIXTURES / ex.assignment / ex.notebook / ex.name
        wrong = fake_students.constants(package).get("WRONG", {})
        real = [n for n, cls in wrong.items() if cls not in mistakes.NOT_MISTAKES]
        assert len(ex.mistakes) >= min(3, max(mistakes.MIN_MISTAKES, len(real))), (ex.name, real)
        for m in ex.mistakes:
            assert wrong.get(m.name) not in mistakes.NOT_MISTAKES, (ex.name, m.name)
            assert m.defines, f"{ex.name} {m.name}: the wrong cell defines no function to compare"
        assert len({m.hint for m in ex.mistakes}) == len(ex.mistakes), f"{ex.name}: two mistakes share a hint"


def test_no_hint_states_an_answer(all_exercises):
    problems = [p for ex in all_exercises for p in mistakes.hint_problems(ex)]
    assert not problems, "\n".join(problems)


def test_a_hint_naming_the_solution_is_caught(all_exercises):
    ex = next(e for e in all_exercises if e.name == "ex71A_flow")
    planted = [("The matrix exponential expm is missing.", "expm"), ("Write W = W_star + ...", "code"),
               ("First sentence.\nSecond sentence.", "sentence")]
    for hint, what in planted:
        m = mistakes.Mistake(**{**ex.mistakes[0].__dict__, "hint": hint})
        found = mistakes.hint_problems(mistakes.Exercise(ex.assignment, ex.notebook, ex.name, ex.tests, [m]))
        assert found and what in " ".join(found), (hint, found)


def test_the_fake_class_plants_each_mistake_once_apart_from_what_it_calls():
    for a in mistakes.assignments():
        plan = mistakes.plan(a)
        planted = [(m.notebook, m.exercise, m.name) for ms in plan.values() for m in ms]
        declared = [(nb, ex.name, m.name) for nb in mistakes.notebooks(a) for ex in mistakes.exercises(a, nb)
                    for m in ex.mistakes]
        assert sorted(planted) == sorted(declared)
        per_ex = max(len(ex.mistakes) for nb in mistakes.notebooks(a) for ex in mistakes.exercises(a, nb))
        assert per_ex <= len(plan) <= per_ex + 3  # packed: a handful of students, not one per mistake
        for ms in plan.values():
            mine = {(m.notebook, m.exercise) for m in ms}
            assert len(mine) == len(ms)
            assert not {(m.notebook, d) for m in ms for d in m.depends} & mine


# ------------------------------------------------------------ the graded fake class (slow)
@pytest.fixture(scope="session")
def mistake_classes(tmp_path_factory, grading_client):
    """Each assignment's fake class of known mistakes, graded as ``make grade`` grades (sandboxed
    where bubblewrap runs), on the session's Dask cluster (conftest.py)."""
    from tools.grading import sandbox

    return {a: mistakes.grade_class(a, tmp_path_factory.mktemp(f"mistakes-{a}") / "course",
                                    sandbox=sandbox.available()[0], client=grading_client)
            for a in mistakes.assignments()}


@pytest.mark.slow
@pytest.mark.pipeline
def test_make_mistakes_recognises_every_known_mistake(mistake_classes, capsys):
    totals = [0, 0, 0, 0]
    problems = []
    for a, (_, records) in mistake_classes.items():
        all_ex, found, probs = mistakes.check_class(a, records)
        problems += probs
        totals = [totals[0] + len(all_ex), totals[1] + sum(len(e.mistakes) >= 2 for e in all_ex),
                  totals[2] + len(found), totals[3] + sum(found.values())]
    line = mistakes.summary_line(*totals)
    print(line)
    assert not problems, "\n".join(problems)
    assert totals[0] == totals[1] and totals[2] == totals[3], line


@pytest.mark.slow
@pytest.mark.pipeline
def test_a_recognised_mistake_still_fails_and_its_hint_reaches_the_feedback_page(mistake_classes):
    """Every fake student reads the hint of each mistake it made in its feedback page, and the
    test cell that recognised it scored 0."""
    for a, (course, records) in mistake_classes.items():
        _hints_in_feedback(a, course, records)


def _hints_in_feedback(a: str, course, records: dict) -> None:
    import html

    from nbgrader.api import Gradebook

    from tools.build import pipeline

    hints = mistakes.hints(a, mistakes.notebooks(a))  # (notebook, test cell) -> {mistake: hint}: names repeat
    pipeline.nbgrader("generate_feedback", a, "--force", course=course)
    checked = 0
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student, rec in records.items():
            for nb, seen in rec.mistakes.items():
                grades = {g.name: g for g in gb.find_submission_notebook(nb, a, student).grades}
                graded = nbformat.read(str(course / "autograded" / student / a / f"{nb}.ipynb"), as_version=4)
                page = html.unescape((course / "feedback" / student / a / f"{nb}.html").read_text())
                for test, name in seen.items():
                    assert grades[test].auto_score == 0, "recognising a mistake must never turn a failure into a pass"
                    cell = next(c for c in graded.cells if nbcore.grade_id(c) == test)
                    err = next(o for o in cell.outputs if o.get("output_type") == "error")
                    hint = hints[(nb, test)][name]
                    assert err["evalue"].endswith(f"{MISTAKE_LEAD} {hint}")
                    assert f"{MISTAKE_LEAD} {hint}" in " ".join(page.split()), (student, nb, test)
                    checked += 1
    assert checked >= sum(len(e.mistakes) for nb in mistakes.notebooks(a) for e in mistakes.exercises(a, nb))


@pytest.mark.slow
@pytest.mark.pipeline
def test_the_report_counts_the_class_by_misconception(mistake_classes, tmp_path):
    import re

    from tools.report import report

    for a, (course, _) in mistake_classes.items():
        r = report.collect(a, course)
        by_ex = {e.exercise: e for e in r.misconceptions}
        for nb in mistakes.notebooks(a):
            for ex in mistakes.exercises(a, nb):
                counted = by_ex[ex.name]
                who = mistakes.planters(a)
                for m in ex.mistakes:
                    got = next(x for x in counted.known if x.name == m.name)
                    assert got.students == [who[(nb, ex.name, m.name)]], (ex.name, m.name, got.students)
                # a student failing it with no known mistake named planted none here, but one in an
                # earlier exercise whose function this one calls (7.4's escape time calls angle_rhs)
                plan = mistakes.plan(a)
                for student in counted.unexplained:
                    planted = {(m.notebook, m.exercise) for m in plan[student]}
                    assert (nb, ex.name) not in planted, (ex.name, student)
                    assert any(n == nb for n, _ in planted), (ex.name, student, planted)
        page = report.write(r, tmp_path / f"{a}.html").read_text()
        first = r.misconceptions[0]
        row = re.search(rf'data-exercise="{first.exercise}" data-mistake="{first.known[0].name}">.*?'
                        r'<td class="num">(\d+)</td>', page, re.S)
        assert row and int(row.group(1)) == 1


@pytest.mark.slow
@pytest.mark.browser
def test_the_misconception_section_is_accessible(mistake_classes, chromium, tmp_path):
    try:
        from tests import browser_support as bs
    except ImportError:  # tests/ on sys.path
        import browser_support as bs
    from tools.report import report

    a = "td2_7_learned_first"
    page_path = report.write(report.collect(a, mistake_classes[a][0]), tmp_path / "report.html")
    with bs.chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(page_path.as_uri() + "#mistakes")
        page.locator("#mistakes").screenshot(path=str(tmp_path / "mistakes.png"))  # for a look when it fails
        res = bs.axe_run(page)  # axe-core's WCAG 2.1 A and AA rules, the whole page
        assert not res["violations"], bs.axe_report(res["violations"])
        rows = page.locator("#mistakes tbody tr").count()
    assert rows == sum(len(e.known) + 1 for e in report.collect(a, mistake_classes[a][0]).misconceptions)


# ------------------------------------------------------------ the grader's side (hostile)
FAKE_RUNNER = r"""
import json, os, sys
out = os.fdopen(int(sys.argv[1]), "wb", buffering=0)
reply = json.loads(sys.argv[2])
for line in sys.stdin:
    msg = json.loads(line)
    if msg["op"] == "run":
        out.write(json.dumps({"op": "done", "error": {"ename": "AssertionError", "evalue": "wrong"},
                              "mistake": reply}).encode() + b"\n")
    elif msg["op"] == "exit":
        break
"""


@pytest.mark.parametrize(("reply", "shown"), [
    ({"name": "real", "hint": "<b>EVIL</b> a hint of the runner's own"}, "The instructor's hint."),  # our copy
    ({"name": "forged", "hint": "A name the grader never sent."}, None),
    ("real", None), ({"name": ["real"]}, None), (None, None),
])
def test_the_grader_takes_only_a_mistake_it_sent_and_its_own_hint(reply, shown):
    """Whatever the runner's ``done`` says, the grader appends only the hint of a mistake it sent,
    from its own copy, and the cell fails as the test said."""
    import asyncio

    from nbformat.v4 import new_code_cell

    from tools.grading.remote_tests import RemoteTests

    known = {"t": [{"name": "real", "hint": "The instructor's hint.", "program": "", "defines": []}]}
    g = RemoteTests(None, lambda fd: [sys.executable, "-c", FAKE_RUNNER, str(fd), json.dumps(reply)],
                    mistakes=known, mistaken={})
    cell = new_code_cell("assert False", metadata={"nbgrader": {"grade_id": "t", "grade": True}})
    try:
        asyncio.run(g.run_test(cell, 0, 30))
    finally:
        g.close()
    err = next(o for o in cell.outputs if o["output_type"] == "error")
    assert err["ename"] == "AssertionError"
    if shown is None:
        assert err["evalue"] == "wrong" and g.mistaken == {}
    else:
        assert err["evalue"] == f"wrong\n\n{MISTAKE_LEAD} {shown}" and g.mistaken == {"t": "real"}


@pytest.mark.slow
@pytest.mark.pipeline
def test_the_live_service_shows_the_mistake_as_its_policy_says(mistake_classes):
    """The live service's result names each recognised mistake with its hint; a student sees it
    with the message: a hidden part's hint is withheld before the deadline, shown after."""
    import datetime as dt

    from tools.live_grading import policy, worker

    shown = {"visible": 0, "hidden": 0}
    for a, (course, records) in mistake_classes.items():
      hints = mistakes.hints(a, mistakes.notebooks(a))
      for student, rec in records.items():
          res = worker.result(course, a, student, rec, notebooks=mistakes.notebooks(a))
          cells = {(c["notebook"], c["grade_id"]): c for c in res["cells"]}
          for nb, seen in rec.mistakes.items():
              for test, name in seen.items():
                  assert cells[(nb, test)]["mistake"] == {"name": name, "hint": hints[(nb, test)][name]}
          pol = policy.AssignmentPolicy()
          future = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
          before = policy.view(res, pol, deadline=future)
          after = policy.view(res, pol, deadline=dt.datetime.now(dt.UTC) - dt.timedelta(days=1))
          seen_before = {(x["notebook"], x["grade_id"]): x for e in before["exercises"] for x in e["cells"]}
          seen_after = {(x["notebook"], x["grade_id"]): x for e in after["exercises"] for x in e["cells"]}
          for c in res["cells"]:
              if not c.get("mistake"):
                  continue
              b, f = seen_before[(c["notebook"], c["grade_id"])], seen_after[(c["notebook"], c["grade_id"])]
              assert f["mistake"]["hint"] == c["mistake"]["hint"]  # after the deadline: always
              if c["failed_part"] == "visible":
                  assert b["mistake"]["hint"] == c["mistake"]["hint"]
                  shown["visible"] += 1
              else:
                  assert b["mistake"] is None and b["message"] is None
                  shown["hidden"] += 1
    # the hidden part's hint withheld before the deadline: wherever the fake class fails a hidden
    # part (tests/test_live_grading_pages.py plants one in a synthetic result as well)
    assert shown["visible"] > 0, shown
