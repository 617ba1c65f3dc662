"""The instructor path, end to end, for every notebook under course/source/.

nbgrader's own docs-CI style: lint the sources, validate them (all tests pass on the
solutions), generate the release (no solution, hidden test or .py leaks; stubs raise
NotImplementedError and stay in step with the solutions), validate the release inverted
(every test fails on the stubs), autograde fake students (full marks, zero, a known
partial score, one that raises, an infinite loop, a tampered test cell, one that delegates
every exercise with a library counterpart to td_lib), generate
feedback (no hidden-test source), export and assert every score.

Everything runs in a scratch copy of the course, so the working course stays untouched.
Tests are parametrised over the sources present, so a new notebook is covered as is.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import jupytext
import nbformat
import pytest

from tools import env, nbcore
from tools.build import fake_students, nbtool, pipeline

SOURCES = nbcore.sources()
ASSIGNMENTS = nbcore.assignments()
IDS = [f"{p.parent.name}/{p.stem}" for p in SOURCES]


def _scratch(src: Path, root: Path) -> Path:
    return root / "source" / src.parent.name / src.name


@pytest.fixture(scope="session")
def course(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("course")
    shutil.copy(env.COURSE / "nbgrader_config.py", root)
    for src in SOURCES:
        dst = _scratch(src, root)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dst)
        shutil.copy(src.parent / "jupytext.toml", dst.parent / "jupytext.toml")
    return root


@pytest.fixture(scope="session")
def released(course) -> Path:
    for a in ASSIGNMENTS:
        pipeline.release(a, course)
    return course


# ------------------------------------------------------------------ fast, no kernels
@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_metadata_lint(src):
    problems = nbtool.lint(src)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_py_ipynb_round_trip_is_byte_stable(src, tmp_path):
    text = src.read_text()
    assert nbtool.round_trip(src) == text, (
        f"{src.name} changes on a .py -> .ipynb -> .py round trip: run `python -m tools.build.nbtool fmt`")
    ipynb = tmp_path / (src.stem + ".ipynb")
    jupytext.write(jupytext.reads(text, fmt="py:percent"), str(ipynb))
    meta_py = [c.metadata.get("nbgrader") for c in jupytext.reads(text, fmt="py:percent").cells]
    meta_nb = [c.metadata.get("nbgrader") for c in nbformat.read(str(ipynb), as_version=4).cells]
    assert meta_py == meta_nb and any(meta_py), "nbgrader metadata must survive the round trip"


@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_fixture_names_real_cells(src):
    fx = fake_students.fixture(src)
    assert "partial" in fx and "raises" in fx, f"checks/fixtures/.../{src.stem}/ needs partial and raises"
    nb = nbcore.read_source(src)
    answers = {nbcore.grade_id(c) for c in nb.cells if nbcore.is_answer(c)}
    tests = {nbcore.grade_id(c) for c in nb.cells if nbcore.is_test(c)}
    for v in ("partial", "raises"):
        assert set(fx[v]["answers"]) <= answers, f"{v}: unknown answer cells {set(fx[v]['answers']) - answers}"
        assert fx[v]["fails"] and set(fx[v]["fails"]) <= tests, f"{v}: fails must name test cells"
    # Free-form code cells that no test grades (a plot, a comparison) are listed under
    # "untested"; every other code exercise needs a plausible wrong answer.
    code_answers = {nbcore.grade_id(c) for c in nb.cells if nbcore.is_answer(c) and c.cell_type == "code"}
    code_answers -= set(fx.get("untested", []))
    assert set(fx["partial"]["answers"]) == code_answers, (
        "the partial student needs a plausible wrong answer for every code exercise: missing "
        f"{sorted(code_answers - set(fx['partial']['answers']))}")


# ------------------------------------------------------------------------- nbgrader
@pytest.mark.pipeline
@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_source_validates(src, released):
    res = pipeline.validate(_scratch(src, released).with_suffix(".ipynb"), course=released)
    assert res == {}, f"tests fail on the solutions of {src.name}: {res}"


@pytest.mark.pipeline
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_release_leaks_nothing(assignment, released):
    rel = released / "release" / assignment
    assert sorted(p.stem for p in rel.glob("*.ipynb")) == sorted(
        p.stem for p in SOURCES if p.parent.name == assignment)
    assert pipeline.leaks(rel) == []


@pytest.mark.pipeline
@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_release_stubs_raise_and_match_solutions(src, released):
    rel = nbformat.read(str(released / "release" / src.parent.name / (src.stem + ".ipynb")), as_version=4)
    ours = {nbcore.grade_id(c): c for c in nbcore.stub_notebook(nbcore.read_source(src)).cells}
    for c in rel.cells:
        if not nbcore.is_answer(c):
            continue
        gid = nbcore.grade_id(c)
        if c.cell_type == "code":
            assert "raise NotImplementedError()" in c.source, f"{gid}: stub must raise NotImplementedError"
        # Stubs and solutions stay in step: the release equals the source with each solution
        # region replaced by the stub (same signatures, docstrings, surrounding code).
        assert c.source == ours[gid].source, f"{gid}: released stub differs from the source's"


@pytest.mark.pipeline
@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_release_validates_inverted(src, released):
    rel = released / "release" / src.parent.name / (src.stem + ".ipynb")
    res = pipeline.validate(rel, invert=True, course=released)
    assert res == {}, f"some tests of {src.name} pass on the stubs: {res}"


# Every fake student is graded once per session as `make grade` grades (the graded_class
# fixture of conftest.py: tools.grading.grade, sandboxed; tests/test_grade.py proves on one notebook that
# it gives serial `nbgrader autograde`'s table). The partial, blank and delegates students also go
# through the README's own instructor and student commands (exchange, collect, autograde,
# feedback) in tests/test_instructor_path.py; `make autograde-demo` runs nbgrader's own path by hand.


@pytest.mark.pipeline
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_autograde_fake_students(assignment, graded_class):
    g = graded_class(assignment)
    plan, course = g.plan, g.course
    rows = pipeline.export(course)
    scores = {s: float(rows[(assignment, s)]["score"]) for s in pipeline.STUDENTS}
    print(pipeline.grade_table(assignment, plan, scores))
    assert plan.expected["solutions"] == plan.max_score > 0
    assert plan.expected["blank"] == 0
    assert 0 < plan.expected["partial"] < plan.max_score, "the partial student must lose some points"
    assert plan.expected["delegates"] < plan.max_score, "the delegates student must lose points"
    for s in pipeline.STUDENTS:
        assert scores[s] == pytest.approx(plan.expected[s], abs=1e-9), (
            f"{s}: autograded {scores[s]}, expected {plan.expected[s]}\n"
            + pipeline.grade_table(assignment, plan, scores))
    for s in pipeline.STUDENTS:
        fb = list((course / "feedback" / s / assignment).glob("*.html"))
        assert len(fb) == len(plan.notebooks[s]), f"feedback missing for {s}"
    assert pipeline.feedback_leaks(assignment, course) == []
    # Demo cells are not run while grading (tools.grading.execute.GradingExecute): their outputs
    # are the one-line note, and the solutions student still gets full marks above.
    from tools.nbcore import DEMO_NOTE, is_demo

    for src in pipeline.source_paths(assignment, course):
        demos = [c.source for c in nbcore.read_source(src).cells if is_demo(c)]
        nb = nbformat.read(str(course / "autograded" / "solutions" / assignment / f"{src.stem}.ipynb"), as_version=4)
        skipped = [c.source for c in nb.cells if c.cell_type == "code"
                   and [o.get("text") for o in c.get("outputs", [])] == [DEMO_NOTE]]
        assert demos, f"{src.name}: no cell is tagged demo (plots and demonstrations should be)"
        assert skipped == demos, f"{src.name}: the autograder skipped other cells than the demo cells"
    # nbgrader #1961: untouched test cells with hidden tests are not "changed"; the student
    # who edited locked test cells is still caught (and graded with the original tests).
    warned = pipeline.checksum_warnings(plan.autograde_log)
    assert set(warned) == {"tampered"}, f"checksum warnings per student: {warned}"
