"""A student's path holds: the visible verdicts at home equal the visible verdicts of ``make grade``.

    python -m tools.meta.home_verdicts [--notebooks STEM ...] [--students reference delegates home_delegates]

For each notebook and fake student, the same submission is run twice:

* **at home** (:func:`home_verdicts`): the released notebook with the student's answers pasted in,
  top to bottom (quick mode, demos included), on a kernel that imports the **handout's edition** of
  ``td_lib`` (``tools.build.student_edition.cached(handout_exercises())``, first on ``PYTHONPATH``, as a
  student's laptop imports the wheel). A test cell's visible verdict is *pass* when it printed the
  ✓ of ``td_lib.own_work.passed`` and raised nothing, else *fail*;
* **graded** (:func:`graded_verdicts`): submitted to a scratch course (``tools.build.pipeline``: the
  release, the gradebook) and graded by ``tools.grading.grade`` (sandboxed, the grading edition in the
  kernel, the test cells in the test runner). A test cell's visible verdict is *fail* when it
  raised in its visible part: the grader records where a test cell stopped
  (``failed_lines`` of the grading record, ``tools/runner.failed_line``), and a line outside the
  cell's ``### BEGIN/END HIDDEN TESTS`` regions is visible (a failure with no line, a time-out or a
  protocol violation, counts as visible); a failure in the hidden tests alone is a visible *pass*.

The students (:data:`STUDENTS`): ``reference`` (every answer cell holds the solution),
``delegates`` (the corpus's delegations, ``checks/fixtures/<a>/<nb>/<ex>/delegates.py``, as the
pipeline's delegating student) and ``home_delegates``: the same, with the answers of
``checks/fixtures/home_delegates/<notebook>/`` in place of the corpus's, each of which only calls a
general tool the handout keeps and the grading edition cuts (``GENERAL_TOOLS`` of ``checks/grading/exercises.py``,
``DELEGATE_CUTS``: ``generalisation_error``, ``arccos_kernel``; the corpus's ``j2_erf`` and
``lcn_sgd_step`` delegations already call ``J2`` and ``sgd_step``). Only notebooks with such
answers have this student. A mismatch means a student reads ✓ at home for
work that fails when graded, or the reverse.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import nbformat

from tools import nbcore
from tools.build import fake_students, nbtool, pipeline
from tools.grading.record import GradingRecord

STUDENTS = ("reference", "delegates", "home_delegates")
HOME_DELEGATES = fake_students.FIXTURES / "home_delegates"
#: what ``td_lib.own_work.passed`` prints: "✓ f passes the visible tests." / "✓ f and g pass ..."
TICK = re.compile(r"✓ .* pass(?:es)? the visible tests")


@dataclass
class Verdict:
    """One test cell of one student's notebook: the visible verdict at home and when graded."""

    notebook: str
    student: str
    test: str
    home: str  # "pass" | "fail"
    graded: str  # "pass" | "fail"
    home_note: str = ""
    graded_note: str = ""

    @property
    def mismatch(self) -> bool:
        return self.home != self.graded


# ------------------------------------------------------------------------------ students
def home_delegate_answers(source: Path) -> dict[str, str]:
    """The answers of ``checks/fixtures/home_delegates/<notebook>/`` (grade_id -> cell)."""
    folder = HOME_DELEGATES / source.stem
    return {p.parent.name: fake_students.cell_source(p) for p in sorted(folder.glob("*/delegates.py"))}


def student_answers(source: Path, student: str) -> dict[str, str] | None:
    """The answer cells ``student`` submits in place of the solution (None: this notebook has no
    such student, e.g. no exercise with a delegation)."""
    if student == "reference":
        return {}
    corpus = {ex: spec["delegates"] for ex, spec in fake_students.fixture(source).get("mutants", {}).items()
              if "delegates" in spec}
    if student == "delegates":
        return corpus or None
    if student == "home_delegates":  # the delegations, those of checks/fixtures/home_delegates/ in their place
        own = home_delegate_answers(source)
        return {**corpus, **own} if own else None
    raise ValueError(f"unknown student {student!r}: one of {STUDENTS}")


# ------------------------------------------------------------------------------ at home
def handout_edition() -> Path:
    """The handout's edition of td_lib (built once, checked; ``tools.build.student_edition.cached``)."""
    from tools.build import student_edition

    return student_edition.cached(student_edition.handout_exercises())


def _home_verdict(cell) -> tuple[str, str]:
    text = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
    errors = [f"{o.get('ename')}: {o.get('evalue', '')}" for o in cell.get("outputs", [])
              if o.get("output_type") == "error"]
    ticked = bool(TICK.search(text))
    if errors:
        return "fail", ("✓ printed, then " if ticked else "") + errors[0][:160]
    return ("pass", "") if ticked else ("fail", "no error but no ✓")


#: packages of this repository that a student's installation does not have (the handout ships the
#: td_lib wheel only); this venv imports them through its editable install
NOT_AT_HOME = ("checks", "tools")


def _absent(root: Path) -> Path:
    """A folder of stand-ins for :data:`NOT_AT_HOME`: importing one raises ``ModuleNotFoundError``,
    as on a student's laptop."""
    for name in NOT_AT_HOME:
        (root / name).mkdir(parents=True, exist_ok=True)
        (root / name / "__init__.py").write_text(
            f"raise ModuleNotFoundError({f'No module named {name!r}'!r}, name={name!r})\n")
    return root


def home_env(edition: Path) -> dict[str, str]:
    """The kernel's environment at home: the handout's td_lib first on the path, then stand-ins that
    make the repository's own packages (``checks``, ``tools``) absent, as they are for a student;
    quick mode."""
    import os
    import tempfile

    absent = _absent(Path(tempfile.gettempdir()) / "td-home-absent")
    return {**{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NBGRADER_EXECUTION")},
            "PYTHONPATH": os.pathsep.join([str(Path(edition).parent), str(absent)]), "TD_QUICK": "1"}


def home_verdicts(release_nb, source_nb, answers: dict[str, str], cwd: Path,
                  edition: Path | None = None) -> dict[str, tuple[str, str]]:
    """Run the released notebook with ``answers`` (the solution elsewhere) top to bottom on a kernel
    that imports the handout's td_lib; test grade_id -> (visible verdict, note)."""
    from nbclient import NotebookClient

    nb = fake_students.student_notebook(release_nb, source_nb, "solution", answers)
    client = NotebookClient(nb, timeout=nbcore.CELL_TIMEOUT, kernel_name="python3", allow_errors=True,
                            coalesce_streams=True, resources={"metadata": {"path": str(cwd)}})
    client.execute(env=home_env(edition or handout_edition()))  # the kernel's own env, not this process's
    return {nbcore.grade_id(c): _home_verdict(c) for c in nb.cells if nbcore.is_test(c)}


# ------------------------------------------------------------------------------ graded
def scratch_course(root: Path, assignment: str, stems: list[str]) -> Path:
    """A course with ``stems`` of ``assignment`` released and its gradebook, nobody submitted."""
    course, _ = pipeline.scratch_course(root / assignment / "course", assignment, stems, students=())
    return course


def submit(course: Path, assignment: str, student: str, notebooks: dict[str, nbformat.NotebookNode]) -> None:
    d = course / "submitted" / student / assignment
    for stem, nb in notebooks.items():
        nbcore.write(nb, d / f"{stem}.ipynb")
    (d / "timestamp.txt").write_text("2026-11-30 12:00:00.000000 UTC")


def grade_all(course: Path, assignment: str, students: list[str], client) -> dict[str, dict]:
    """``tools.grading.grade`` (sandboxed) of ``students`` on the Dask ``client``; student -> grading record."""
    from tools.grading import grade

    return grade.grade(assignment, course, client=client, students=students, force=True, progress=False,
                       echo=lambda _m: None)


def _hidden(src: str) -> set[int]:
    visible = nbtool.visible_part(src).split("\n")
    return {i for i, (a, b) in enumerate(zip(visible, src.split("\n")), start=1) if a != b or
            nbcore.BEGIN_HIDDEN in b or nbcore.END_HIDDEN in b}


def graded_verdicts(course: Path, assignment: str, student: str, stem: str,
                    record: GradingRecord) -> dict[str, tuple[str, str]]:
    """The visible verdict of every test cell of the graded notebook (``autograded/``), from the
    error outputs and the line the grader recorded where each failing cell stopped."""
    nb = nbformat.read(str(course / "autograded" / student / assignment / f"{stem}.ipynb"), as_version=4)
    lines_by_nb = record.failed_lines or {}
    lines = lines_by_nb.get(stem) or lines_by_nb.get(f"{stem}.ipynb") or {}
    out = {}
    for c in nb.cells:
        if not nbcore.is_test(c):
            continue
        gid = nbcore.grade_id(c)
        err = nbcore.error_text(c) if any(o.get("output_type") == "error" for o in c.get("outputs", [])) else ""
        if not err:
            out[gid] = ("pass", "")
            continue
        line = lines.get(gid)
        if line is not None and line in _hidden(c.source):
            out[gid] = ("pass", f"hidden tests fail (line {line}): {err[:120]}")
        else:
            out[gid] = ("fail", f"line {line}: {err[:160]}")
    return out


# ------------------------------------------------------------------------------ both
def _source(stem: str) -> Path:
    found = [p for p in nbcore.sources() if p.stem == stem]
    if not found:
        raise ValueError(f"no notebook source named {stem!r} under course/source")
    return found[0]


def _plan(course: Path, assignment: str, srcs: list[Path], students: tuple[str, ...],
          only: dict[str, tuple[str, ...]] | None) -> dict[tuple[str, str], tuple]:
    """(student, notebook stem) -> (released notebook, source notebook, answers) to run."""
    release = course / "release" / assignment
    plan = {}
    for src in srcs:
        release_nb = nbformat.read(str(release / f"{src.stem}.ipynb"), as_version=4)
        source_nb = nbcore.read_source(src)
        for student in (only or {}).get(src.stem, students):
            answers = student_answers(src, student)
            if answers is not None:
                plan[(student, src.stem)] = (release_nb, source_nb, answers)
    return plan


def _assignment_rows(course: Path, assignment: str, plan: dict, client, root: Path, edition: Path) -> list[Verdict]:
    """Grade the plan's submissions (in a thread, on the Dask workers) while running them at home."""
    from concurrent.futures import ThreadPoolExecutor

    subs: dict[str, dict[str, nbformat.NotebookNode]] = {}
    for (student, stem), (release_nb, source_nb, answers) in plan.items():
        subs.setdefault(student, {})[stem] = fake_students.student_notebook(release_nb, source_nb, "solution",
                                                                             answers)
    for student, nbs in subs.items():
        submit(course, assignment, student, nbs)
    with ThreadPoolExecutor(1) as pool:
        grading = pool.submit(grade_all, course, assignment, sorted(subs), client)
        home = {}
        for (student, stem), (release_nb, source_nb, answers) in plan.items():
            work = root / "home" / student / assignment
            work.mkdir(parents=True, exist_ok=True)
            home[(student, stem)] = home_verdicts(release_nb, source_nb, answers, work, edition)
        records = grading.result()
    rows = []
    for (student, stem), got in home.items():
        rec = records.get(student)
        if rec is None:
            raise RuntimeError(f"grading {student} gave no record")
        # a notebook the student did not submit (not run for this student) is no error here
        errors = [e for e in rec.errors or [] if not (e.endswith(": missing from the submission")
                                                      and e.split(".ipynb:")[0] not in subs[student])]
        if errors or rec.flags or rec.score is None:
            raise RuntimeError(f"grading {student} failed: {errors} {rec.flags}")
        graded = graded_verdicts(course, assignment, student, stem, rec)
        for gid, (h, hn) in got.items():
            g, gn = graded.get(gid, ("fail", "not graded"))
            rows.append(Verdict(stem, student, gid, h, g, hn, gn))
    return rows


def table(stems: list[str], students: tuple[str, ...] = STUDENTS, root: Path | None = None,
          workers: int = 2, only: dict[str, tuple[str, ...]] | None = None) -> list[Verdict]:
    """Every test cell of every notebook of ``stems`` for every student of ``students`` (``only``:
    notebook stem -> the students to run on it, narrowing ``students``), home vs graded."""
    from distributed import Client, LocalCluster

    by_assignment: dict[str, list[Path]] = {}
    for stem in stems:
        src = _source(stem)
        by_assignment.setdefault(src.parent.name, []).append(src)
    edition = handout_edition()
    rows: list[Verdict] = []
    with tempfile.TemporaryDirectory(prefix="td-home-verdicts-") as tmp, \
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        root = Path(root or tmp)
        for assignment, srcs in by_assignment.items():
            course = scratch_course(root, assignment, [s.stem for s in srcs])
            plan = _plan(course, assignment, srcs, students, only)
            if plan:
                rows += _assignment_rows(course, assignment, plan, client, root, edition)
    return rows


def render(rows: list[Verdict]) -> str:
    """The table, one line per test cell, then the mismatches."""
    width = max([len(r.test) for r in rows] + [4])
    out = [f"{'notebook':30s} {'student':15s} {'test':{width}s} home  graded"]
    for r in rows:
        note = "; ".join(n for n in (r.home_note and f"home: {r.home_note}", r.graded_note and
                                     f"graded: {r.graded_note}") if n)
        out.append(f"{r.notebook:30s} {r.student:15s} {r.test:{width}s} {r.home:5s} {r.graded:6s}"
                   f"{' MISMATCH' if r.mismatch else ''}{'  (' + note[:200] + ')' if note else ''}")
    bad = [r for r in rows if r.mismatch]
    out.append(f"{len(bad)} mismatch(es) in {len(rows)} test cell verdicts" if bad
               else f"no mismatch in {len(rows)} test cell verdicts")
    return "\n".join(out)


HELP = """\
Run each released notebook as a student does at home (the handout's td_lib, answers pasted in) and
grade the same submission with the sandboxed grader; print, per test cell, the visible verdict of
both (pass: the ✓ and no error) and every mismatch. Students: the reference answers, the corpus's
delegations, and delegations to the general tools the handout keeps. Exit status 1 on a mismatch."""

EXAMPLES = """\
examples:
  python -m tools.meta.home_verdicts --notebooks cnn_lcn_1_exact_odes cnn_lcn_3_noise_floor_phase
  python -m tools.meta.home_verdicts --students home_delegates --json build/home_verdicts.json"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.meta.home_verdicts", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--notebooks", nargs="+", metavar="STEM", help="notebook names (default: every notebook)")
    p.add_argument("--students", nargs="+", choices=STUDENTS, default=list(STUDENTS),
                   help=f"fake students to run (default: {' '.join(STUDENTS)})")
    p.add_argument("--workers", type=int, default=2, help="grading workers (default: 2)")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the rows as JSON to FILE (default: none)")
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    stems = a.notebooks or [s.stem for s in nbcore.sources()]
    rows = table(stems, tuple(a.students), workers=a.workers)
    print(render(rows))
    if a.json:
        a.json.write_text(json.dumps([r.__dict__ for r in rows], indent=1, ensure_ascii=False))
    return 1 if any(r.mismatch for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
