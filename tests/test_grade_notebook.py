"""One notebook of one submission graded by ``tools.grading.grade.grade_notebook``: its record.

``grade_notebook`` is what every grader of the course runs per notebook (``make grade``'s task
``grade_submission`` for each notebook of a submission, the live service's Dask task per
notebook, ``make mistakes`` through ``make grade``): it returns a
:class:`tools.grading.record.GradingRecord` holding that notebook only (no score before the merge).
The fast tests check the record's plumbing without a kernel (a missing or unreadable notebook, the
combination of notebook records, the record file's keys); the slow one grades a notebook of two
fake students of a scratch course, and the delegating fake student's two notebooks, one task
(one setup for both) against one task per notebook, both scored as planned (tests/test_grade.py
proves the scores of whole classes against serial ``nbgrader autograde``).
"""

from __future__ import annotations

import os

import nbformat
import pytest

from tools import nbcore
from tools.build import pipeline
from tools.grading import grade, sandbox
from tools.grading.record import _ORDER, GradingRecord, NotebookReport

A1 = "td2_7_learned_first"
SMALL = "td2_7_1b_early_time_linear"
OTHER = "td2_7_2_higher_cumulants"  # its exercises have delegates' answers the grading edition must refuse


def _inputs(notebooks: list[str]) -> grade.AssignmentInputs:
    return grade.AssignmentInputs(config="", gradebook=b"", extras={}, sandbox=False, notebooks=notebooks)


# ------------------------------------------------------------------------ fast
def test_a_missing_or_unreadable_notebook_is_an_error_of_its_record_only():
    sub = grade.Submission("s", "a1", {"nb1.ipynb": b'{"cells": [ not json', "timestamp.txt": b"t"}, "t")
    missing = grade.grade_notebook(sub, _inputs(["nb1", "nb2"]), "nb2")
    assert isinstance(missing, GradingRecord) and (missing.student, missing.assignment) == ("s", "a1")
    assert missing.errors == ["nb2.ipynb: missing from the submission"]
    assert missing.executed == {} and missing.notebooks == [] and missing.timing == {} and missing.score is None
    bad = grade.grade_notebook(sub, _inputs(["nb1", "nb2"]), "nb1")
    assert len(bad.errors) == 1 and bad.errors[0].startswith("nb1.ipynb: unreadable notebook (")
    assert bad.seconds is not None and bad.worker_pid and bad.host


def test_notebook_records_combine_into_the_submission_record():
    one = GradingRecord(student="s", assignment="a1", seconds=2.0, executed={"nb1.ipynb": "x"}, log="l1")
    one.add_notebook("nb1", NotebookReport(seconds=1.5, flags=[], cells=[["t1", 0.5]], failed_lines={"t1": 3},
                                           mistakes={"t1": "off_by_one"}))
    two = GradingRecord(student="s", assignment="a1", seconds=3.0, executed={"nb2.ipynb": "y"})
    two.add_notebook("nb2", NotebookReport(seconds=2.5, flags=["numpy.allclose"], cells=[["t2", 1.0]]))
    rec = GradingRecord.combine([one, two], "s", "a1")
    assert rec.notebooks == ["nb1.ipynb", "nb2.ipynb"] and rec.seconds == 3.0 and rec.log == "l1"
    assert rec.timing == {"nb1": 1.5, "nb2": 2.5} and rec.flags == {"nb2": ["numpy.allclose"]}
    assert rec.failed_lines == {"nb1": {"t1": 3}} and rec.mistakes == {"nb1": {"t1": "off_by_one"}}
    assert rec.notebook("nb1") == NotebookReport(seconds=1.5, cells=[["t1", 0.5]], failed_lines={"t1": 3},
                                                 mistakes={"t1": "off_by_one"})
    assert list(rec.to_json()) == list(_ORDER), "the record file keeps its keys (no log, no executed notebooks)"


# ------------------------------------------------------------------------ slow
@pytest.fixture(scope="module")
def small_course(tmp_path_factory):
    course, plan = pipeline.scratch_course(tmp_path_factory.mktemp("one-notebook") / "course", A1, [SMALL, OTHER],
                                           students=("solutions", "blank", "delegates"))
    cfg = grade.load_config(course)
    return course, plan, grade._shared_inputs(course, A1, cfg, sandbox.available()[0], {})


@pytest.mark.pipeline
def test_grade_notebook_records_one_notebook_of_a_fake_student(small_course):
    course, plan, inputs = small_course
    src = course / "source" / A1 / f"{SMALL}.py"
    tests = set(pipeline.test_points(src))
    recs = {s: grade.grade_notebook(grade.read_submission(course, A1, s), inputs, SMALL)
            for s in ("solutions", "blank")}
    for s, rec in recs.items():
        assert (rec.student, rec.assignment) == (s, A1) and rec.score is None, "not merged: no score yet"
        assert rec.errors == [] and rec.flags == {}, (s, rec.errors, rec.flags)
        assert rec.notebooks == [f"{SMALL}.ipynb"] and list(rec.executed) == rec.notebooks
        assert list(rec.timing) == [SMALL] and 0 < rec.timing[SMALL] <= rec.seconds
        assert tests <= {c[0] for c in rec.cells[SMALL]}, "every test cell ran and was timed"
        assert "submitted/" + s in rec.log, "nbgrader's log names the submission"
    assert recs["solutions"].failed_lines == {} and recs["solutions"].mistakes == {}
    assert recs["blank"].failed_lines[SMALL] and set(recs["blank"].failed_lines[SMALL]) <= tests
    executed = nbformat.reads(recs["blank"].executed[f"{SMALL}.ipynb"], as_version=4)
    failing = {nbcore.grade_id(c) for c in executed.cells
               if any(o.get("output_type") == "error" for o in c.get("outputs", []))}
    assert tests <= failing


@pytest.mark.pipeline
def test_each_notebook_of_a_delegating_submission_is_graded_on_its_own_edition(small_course):
    """Every notebook, not only the first, runs in a kernel holding its own grading edition: the
    delegating student's answers (calls to the library's own counterparts) fail in both notebooks,
    whether one task grades the submission (its two notebooks at once, in two threads) or one task
    per notebook (the live service)."""
    course, plan, inputs = small_course
    assert set(inputs.notebooks) == {SMALL, OTHER}
    assert plan.expected["delegates"] < plan.expected["solutions"], "the planned scores tell the delegates apart"
    sub = grade.read_submission(course, A1, "delegates")
    cfg = grade.load_config(course)
    inputs.notebooks_at_once = 2  # the task's notebooks in two threads, as on a laptop with one worker
    before = os.environ.get("NBGRADER_EXECUTION")
    whole = grade.grade_submission(sub, inputs)
    assert os.environ.get("NBGRADER_EXECUTION") == before, "the task leaves the process's environment as it was"
    assert whole.errors == [] and whole.notebooks == sorted(f"{nb}.ipynb" for nb in inputs.notebooks), whole.errors
    rec = grade.finish(whole, sub.stamp, course, cfg)
    assert rec.graded and rec.score == pytest.approx(plan.expected["delegates"]), (rec.score, plan.expected)
    assert GradingRecord.read(course / grade.RESULTS_DIR / A1 / "delegates.json").score == rec.score
    parts = [grade.grade_notebook(sub, inputs, nb) for nb in reversed(inputs.notebooks)]  # the other order too
    one_by_one = grade.finish(GradingRecord.combine(parts, "delegates", A1), sub.stamp, course, cfg)
    assert one_by_one.score == pytest.approx(rec.score), "one task per notebook scores as one task"
    for nb in inputs.notebooks:
        assert whole.failed_lines.get(nb), f"{nb}: no delegating answer failed its tests"
        assert whole.failed_lines[nb] == one_by_one.failed_lines[nb], nb
