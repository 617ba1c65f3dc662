"""Parallel, sandboxed grading (tools/grading/grade.py) gives what serial ``nbgrader autograde`` gives.

The slow tests (marked ``pipeline``) grade fake students in scratch copies of the course:

- every fake student (solutions, blank, partial, raises, loop, tampered, delegates) on one
  notebook: the exported grade table and every cell's grade equal serial ``nbgrader
  autograde`` of the same submissions (every notebook of both assignments is graded by this
  grader in ``graded_class``, conftest.py, and checked against the plan in tests/test_pipeline.py);
- the other properties use one small notebook (td2_7_1b_early_time_linear, the only notebook
  of a scratch assignment), where the property does not need them all: a worker killed
  mid-grading, a corrupt and a missing notebook, hostile submissions
  (checks/fixtures/hostile/), the integrity check, re-running after an interruption.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import threading
import time
from pathlib import Path

import nbformat
import pytest

from tools import env, nbcore
from tools.build import fake_students, pipeline
from tools.grading import grade, sandbox

A1, A2 = "td2_7_learned_first", "cnn_lcn"
SMALL = "td2_7_1b_early_time_linear"
HOSTILE = fake_students.hostile(A1)  # checks/fixtures/hostile/<assignment>/<notebook>/<student>/

pytestmark = pytest.mark.skipif(not sandbox.available()[0], reason=sandbox.available()[1])


def make_course(root: Path, assignment: str, notebooks: list[str] | None = None,
                students=pipeline.STUDENTS) -> tuple[Path, pipeline.Plan]:
    """A scratch course (release, gradebook) with the fake students submitted."""
    return pipeline.scratch_course(root, assignment, notebooks, students)


def clone(course: Path, dst: Path) -> Path:
    shutil.copytree(course, dst, symlinks=True)
    return dst


def table(course: Path, assignment: str) -> dict:
    """Export rows and every cell's grade: what export, feedback and the formgrader read."""
    rows = pipeline.export(course)
    from nbgrader.api import Gradebook

    cells = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for sub in gb.find_assignment(assignment).submissions:
            for nb in sub.notebooks:
                for g in nb.grades:
                    cells[(sub.student.id, nb.name, g.name)] = (g.auto_score, g.manual_score, g.needs_manual_grade)
                for c in nb.comments:
                    cells[(sub.student.id, nb.name, c.name, "comment")] = (c.auto_comment, c.manual_comment)
    return {"rows": {k: v for k, v in rows.items() if k[0] == assignment}, "cells": cells}


def assert_same(parallel: dict, serial: dict, students) -> None:
    for s in students:
        assert parallel["rows"][(A_of(parallel), s)] == serial["rows"][(A_of(serial), s)], s
    assert parallel["cells"] == serial["cells"]


def A_of(t: dict) -> str:
    return next(iter(t["rows"]))[0]


@pytest.fixture(scope="session")
def client(grading_client):
    return grading_client  # conftest.py: the session's one cluster


@pytest.fixture(scope="session")
def small(tmp_path_factory):
    """The one-notebook scratch course (7.1b), its serial table (solutions, blank, partial)."""
    course, plan = make_course(tmp_path_factory.mktemp("small") / "course", A1, [SMALL],
                               students=("solutions", "blank", "partial"))
    serial = clone(course, tmp_path_factory.mktemp("small-serial") / "course")
    pipeline.autograde(A1, course=serial)
    return course, plan, table(serial, A1)


# ------------------------------------------------------------------------ fast
def test_probe_expression_is_valid_python():
    from tools.grading import integrity

    compile(integrity.PROBE_EXPR, "<probe>", "eval")
    assert integrity.probe_diff({"a": 1, "b": 2}, {"a": 1, "b": 3}) == ["b"]


def test_hostile_fixture_names_real_cells():
    src = env.COURSE / "source" / A1 / f"{SMALL}.py"
    nb = nbcore.read_source(src)
    ids = {nbcore.grade_id(c) for c in nb.cells}
    for student, spec in HOSTILE[SMALL].items():
        assert set(spec["answers"]) <= ids and set(spec["fails"]) <= ids, student


# ------------------------------------------------------------------------ slow
# Every kind of submission (full marks, blank, partial, raising, looping, a tampered test cell, a
# delegating answer) on one notebook, graded by serial nbgrader autograde and by the parallel
# sandboxed grader: the same table, cell by cell. The parallel side is the session's graded class
# (conftest.py's graded_class: every notebook of the assignment, every fake student, graded once
# and shared with tests/test_pipeline.py, which checks each student's score there); the serial
# side grades one notebook of the same submissions. The notebook is the one that holds the
# looping answer (one per assignment: the plan's loop_notebook), so all seven kinds meet.


@pytest.fixture(scope="session")
def whole_class(tmp_path_factory, graded_class):
    """The graded class, the notebook of the comparison, and the serial table of that notebook's
    submissions (the very files the graded class was given) graded alone by ``nbgrader autograde``."""
    g = graded_class(A1)
    eq = g.plan.loop_notebook
    assert eq, "the fake class has no looping submission"
    serial, plan = make_course(tmp_path_factory.mktemp("whole-serial") / "course", A1, [eq],
                               students=pipeline.STUDENTS)
    for s in pipeline.STUDENTS:  # the very files (the plan's notebooks again, but with fresh cell ids)
        name = Path("submitted") / s / A1 / f"{eq}.ipynb"
        shutil.copyfile(g.pristine / name, serial / name)
    pipeline.autograde(A1, course=serial)
    return g, eq, plan, table(serial, A1)


@pytest.mark.pipeline
def test_parallel_equals_serial(whole_class, client):
    g, eq, plan, serial = whole_class
    students = pipeline.STUDENTS
    assert sorted(g.records) == sorted(students)
    assert all(not r.errors and not r.flags for r in g.records.values()), g.records
    got = table(g.course, A1)
    cells = {k: v for k, v in got["cells"].items() if k[1] == eq}
    assert {k[0] for k in cells} == set(students)
    assert cells == serial["cells"], "the parallel grader's cells differ from serial autograde's"
    for s in students:
        score = sum(v[0] or 0.0 for k, v in cells.items() if k[0] == s and len(k) == 3)
        assert float(serial["rows"][(A1, s)]["score"]) == pytest.approx(plan.expected[s]), s
        assert score == pytest.approx(plan.expected[s]), f"{s}: {eq} scores {score}, expected {plan.expected[s]}"
    # A re-run grades nothing.
    assert grade.grade(A1, g.course, client=client, progress=False, students=list(students)) == {}


@pytest.mark.pipeline
def test_killed_worker_still_gives_the_full_table(small, client, tmp_path):
    course, plan, serial = small
    course = clone(course, tmp_path / "course")
    client.wait_for_workers(2, timeout=120)
    pids = client.run(os.getpid)  # worker address -> pid
    killed = []

    def status(pid: int) -> dict:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
        return {ln.split(":")[0]: ln.split(":")[1].split() for ln in lines if ":" in ln}

    def killer():  # kill the worker under which a sandboxed kernel is running: a task in flight
        deadline = time.time() + 300
        while time.time() < deadline:
            for proc in Path("/proc").glob("[0-9]*"):
                try:
                    st = status(int(proc.name))
                    if not sandbox.UID_BASE <= int(st["Uid"][0]) < sandbox.UID_BASE + sandbox.SLOTS:
                        continue
                    pid = int(proc.name)
                    for _ in range(6):
                        pid = int(status(pid)["PPid"][0])
                        if pid in pids.values():
                            time.sleep(1)
                            os.kill(pid, signal.SIGKILL)
                            killed.append(pid)
                            return
                except (OSError, KeyError, ValueError):
                    continue
            time.sleep(0.2)

    t = threading.Thread(target=killer, daemon=True)
    t.start()
    recs = grade.grade(A1, course, client=client, progress=False, force=True)
    t.join()
    assert killed, "no worker was killed"
    assert killed[0] not in {r.worker_pid for r in recs.values()}, "a task finished on the killed worker"
    assert sorted(recs) == ["blank", "partial", "solutions"]
    assert all(r.score is not None and not r.errors for r in recs.values()), recs
    assert_same(table(course, A1), serial, ["blank", "partial", "solutions"])
    # nbgrader's feedback works on what the merge wrote (and shows no hidden test).
    pipeline.nbgrader("generate_feedback", A1, "--force", course=course)
    assert len(list((course / "feedback").glob(f"*/{A1}/*.html"))) == 3
    assert pipeline.feedback_leaks(A1, course) == []
    client.wait_for_workers(2, timeout=120)


@pytest.mark.pipeline
def test_corrupt_and_missing_notebooks_are_reported_and_the_rest_graded(small, client, tmp_path):
    course, plan, serial = small
    course = clone(course, tmp_path / "course")
    for s in ("corrupt", "missing"):
        shutil.copytree(course / "submitted" / "solutions", course / "submitted" / s)
    (course / "submitted" / "corrupt" / A1 / f"{SMALL}.ipynb").write_text('{"cells": [ not json')
    (course / "submitted" / "missing" / A1 / f"{SMALL}.ipynb").unlink()
    # A hanging answer, cut by the course's per-cell timeout (lowered to 30 s in this copy).
    with (course / "nbgrader_config.py").open("a") as f:
        f.write("\nc.Execute.timeout = 30\n")
    src = course / "source" / A1 / f"{SMALL}.py"
    release_nb = nbformat.read(str(course / "release" / A1 / f"{SMALL}.ipynb"), as_version=4)
    nb = fake_students.student_notebook(release_nb, nbcore.read_source(src), "solution",
                                        {"ex71bB_ntk": fake_students.LOOP})
    nbcore.write(nb, course / "submitted" / "loop" / A1 / f"{SMALL}.ipynb")
    (course / "submitted" / "loop" / A1 / "timestamp.txt").write_text("2026-11-30 12:00:00.000000 UTC")
    recs = grade.grade(A1, course, client=client, progress=False)
    pts = pipeline.test_points(src)
    assert recs["loop"].score == sum(pts.values()) - pts["test_ex71bB_ntk"] and not recs["loop"].errors
    loop_nb = nbformat.read(str(course / "autograded" / "loop" / A1 / f"{SMALL}.ipynb"), as_version=4)
    assert any(o.get("ename") in ("CellTimeoutError", "KeyboardInterrupt") for c in loop_nb.cells
               for o in c.get("outputs", []))
    assert "unreadable notebook" in " ".join(recs["corrupt"].errors)
    assert "missing" in " ".join(recs["missing"].errors)
    assert recs["corrupt"].score == recs["missing"].score == 0
    got = table(course, A1)
    assert_same(got | {"cells": {k: v for k, v in got["cells"].items() if k[0] in ("solutions", "blank", "partial")}},
                serial, ["solutions", "blank", "partial"])
    # Interrupted run: drop one record, re-run: only that one is graded, nothing else changes.
    before = table(course, A1)
    (course / grade.RESULTS_DIR / A1 / "partial.json").unlink()
    again = grade.grade(A1, course, client=client, progress=False)
    assert sorted(again) == ["partial"]
    assert table(course, A1) == before


@pytest.mark.pipeline
def test_hostile_submissions_get_zero_where_affected(small, client, tmp_path):
    course, plan, serial = small
    course = clone(course, tmp_path / "course")
    src = course / "source" / A1 / f"{SMALL}.py"
    release_nb = nbformat.read(str(course / "release" / A1 / f"{SMALL}.ipynb"), as_version=4)
    source_nb = nbcore.read_source(src)
    sol = {nbcore.grade_id(c): c.source for c in nbcore.solution_notebook(source_nb).cells}
    pts = pipeline.test_points(src)
    for student, spec in HOSTILE[SMALL].items():
        answers = {g: a.replace("SOLUTION", sol[g]) for g, a in spec["answers"].items()}
        nb = fake_students.student_notebook(release_nb, source_nb, "solution", answers)
        d = course / "submitted" / student / A1
        nbcore.write(nb, d / f"{SMALL}.ipynb")
        (d / "timestamp.txt").write_text("2026-11-30 12:00:00.000000 UTC")
    recs = grade.grade(A1, course, client=client, progress=False)
    got = table(course, A1)
    for student, spec in HOSTILE[SMALL].items():
        cells = {k[2]: v[0] for k, v in got["cells"].items() if k[0] == student and k[2] in pts}
        want = {g: 0.0 if g in spec["fails"] else p for g, p in pts.items()}
        assert cells == want, (student, cells, recs[student].errors)
        assert bool(recs[student].flags) == spec["flagged"], (student, recs[student].flags)
    flagged = recs["hostile_patcher"].flags[SMALL]
    assert any("numpy.allclose" in f for f in flagged) and any("builtins.abs" in f for f in flagged)
    # Nothing outside the sandbox was touched; the rest of the class is graded as serially.
    con = sqlite3.connect(course / "gradebook.db")
    assert not con.execute("select name from sqlite_master where name = 'pwned'").fetchall()
    con.close()
    assert not list(course.rglob("PWNED_BY_STUDENT")) and not (env.REPO / "PWNED_BY_STUDENT").exists()
    # No payload sent through the channel ran on the trusted side (a521584's runner ran it, as root).
    assert not Path("/tmp/PWNED_BY_COMMANDER").exists()
    assert any("protocol violation" in f for f in recs["hostile_commander"].flags[SMALL])
    # The working folder is a capped tmpfs: 600 MB do not fit, the student's own cell says so.
    filler = nbformat.read(str(course / "autograded" / "hostile_filler" / A1 / f"{SMALL}.ipynb"), as_version=4)
    said = " ".join(o.get("text", "") for c in filler.cells for o in c.get("outputs", []))
    assert "the disk is full" in said and int(said.split("FILLED ")[1].split()[0]) <= 256, said[:400]
    assert_same(got | {"cells": {k: v for k, v in got["cells"].items() if not k[0].startswith("hostile")}},
                serial, ["solutions", "blank", "partial"])


def test_the_grading_kernel_gets_no_notebook():
    files = {"nb.ipynb": b"{}", "data/x.csv": b"1", "timestamp.txt": b"t", "sub/.ipynb_checkpoints/a.py": b"",
             "deep/other.ipynb": b"{}"}
    assert grade.kernel_files(files, {"table.npy": b"2"}) == {"data/x.csv": b"1", "table.npy": b"2"}
    assert sandbox.EXPOSE == [env.REPO / "td_lib"], "the sandbox exposes only td_lib of the repository"
