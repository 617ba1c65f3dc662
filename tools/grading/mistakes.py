"""Known mistakes: feedback that names the misconception behind a failing answer.

Every graded code exercise declares, in its fixture package's ``__init__.py``
(``checks/fixtures/<assignment>/<notebook>/<grade_id>/``, format: ``checks/fixtures/__init__.py``),
the wrong answers students really write, each with a one-sentence hint that names the
misconception and never the fix::

    MISTAKES = {"elementwise_exp": "The exponential is taken entry by entry ...", ...}
    MATCH = {"rtol": 1e-6, "atol": 1e-9}   # optional: how close counts as the same result

Each name is a ``wrong_<name>.py`` of the package: the instructor's implementation of the
mistake. While ``tools.grading.grade`` grades a test cell of the exercise, the grader sends the cell's
known mistakes to the test runner with the cell (:func:`for_runner`); when the cell fails, the
runner calls each mistake's functions on the inputs the test gave the student's functions and
compares the results (:func:`tools.grading.runner.recognise`): on a match, the failure's message ends
with "This looks like a known mistake: <hint>" and the grading record names the mistake
(``GradingRecord.mistakes[notebook][test cell]``, ``tools/grading/record.py``). Nothing of it
reaches the student's kernel, and a failure stays a failure. What the student sees of a hidden
part's message (the hint with it) is the live service's policy.

    python -m tools.grading.mistakes [--assignment A] [--workers N] [--no-sandbox]   (make mistakes)

grades, as ``make grade`` grades, a fake class in which each known mistake is submitted (one
mistake per exercise and student, the solution elsewhere) and prints, per exercise, its known
mistakes and whether its tests recognised each, then the summary line (:func:`summary_line`).
It fails when an exercise has fewer than :data:`MIN_MISTAKES` known mistakes, when one is not
recognised, or when a hint states an answer (:func:`hint_problems`).
"""

from __future__ import annotations

import argparse
import ast
import functools
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tools import env, nbcore
from tools.build import fake_students
from tools.grading.record import GradingRecord

FIXTURES = fake_students.FIXTURES
MIN_MISTAKES = 2
MAX_HINT = 220  # characters: one sentence
DEFAULT_MATCH = {"rtol": 1e-6, "atol": 1e-9}
NOT_MISTAKES = ("hardcoded",)  # error classes that are not misconceptions
STUDENT = "mistake{}"  # the fake students' ids


@dataclass
class Mistake:
    """One known mistake of one exercise (answer cell ``exercise`` of ``notebook``)."""

    assignment: str
    notebook: str
    exercise: str
    name: str
    hint: str
    tests: list[str]
    cell: str  # the wrong answer cell, as a student submits it
    program: str  # what the runner executes to define the wrong functions (dependencies resolved)
    defines: list[str]  # the functions of the cell, the ones compared
    depends: frozenset[str]  # the earlier exercises whose functions it calls (its relative imports)
    rtol: float = DEFAULT_MATCH["rtol"]
    atol: float = DEFAULT_MATCH["atol"]

    def for_runner(self) -> dict:
        return {"name": self.name, "hint": self.hint, "program": self.program, "defines": self.defines,
                "rtol": self.rtol, "atol": self.atol}


@dataclass
class Exercise:
    """A graded code exercise (an answer cell with a mutation corpus) and its known mistakes."""

    assignment: str
    notebook: str
    name: str
    tests: list[str]
    mistakes: list[Mistake] = field(default_factory=list)


# ----------------------------------------------------------------------- declarations
def _cell_functions(cell: str) -> list[str]:
    return [n.name for n in ast.parse(cell).body if isinstance(n, ast.FunctionDef)]


def _depends_on(path: Path) -> frozenset[str]:
    """The answer cells (fixture packages) whose functions the fixture file ``path`` imports."""
    return frozenset(node.module.split(".")[0] for node in ast.parse(path.read_text()).body
                     if isinstance(node, ast.ImportFrom) and node.level > 0 and node.module)


def program(path: Path, _seen: set[Path] | None = None) -> str:
    """The source that defines what the fixture file ``path`` defines, runnable where the fixtures
    are not importable (the test runner): the file with each relative import (a function of an
    earlier answer cell, from a correct alternative) replaced by the imported file's program."""
    seen = set() if _seen is None else _seen
    path = path.resolve()
    seen.add(path)
    text = path.read_text()
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    deps: list[str] = []
    drop: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            dep = base.joinpath(*(node.module or "").split(".")).with_suffix(".py")
            if dep.resolve() not in seen:
                deps.append(program(dep, seen))
            drop.update(range(node.lineno - 1, node.end_lineno))
    own = "".join(line for i, line in enumerate(lines) if i not in drop)
    return "\n".join([*deps, own])


def exercises(assignment: str, notebook: str) -> list[Exercise]:
    """The graded code exercises of one notebook (its fixture packages with ``TESTS``), in the
    notebook's order, with their declared mistakes."""
    out = []
    for package in fake_students.answer_packages(env.COURSE / "source" / assignment / f"{notebook}.py"):
        meta = fake_students.constants(package)
        if "TESTS" not in meta:
            continue
        ex = Exercise(assignment, notebook, package.name, list(meta["TESTS"]))
        match = {**DEFAULT_MATCH, **meta.get("MATCH", {})}
        for name, hint in meta.get("MISTAKES", {}).items():
            path = package / f"wrong_{name}.py"
            if not path.is_file():
                raise ValueError(f"{package}: MISTAKES names {name!r}, but there is no {path.name}")
            cell = fake_students.cell_source(path)
            ex.mistakes.append(Mistake(assignment, notebook, package.name, name, str(hint), ex.tests, cell,
                                       program(path), _cell_functions(cell), _depends_on(path),
                                       float(match["rtol"]), float(match["atol"])))
        out.append(ex)
    return out


def for_runner(assignment: str, notebooks: list[str]) -> dict[str, dict[str, list[dict]]]:
    """notebook -> test cell -> the known mistakes of the exercises it grades, as the test
    runner receives them (``tools.grading.grade`` puts this in every task's shared data)."""
    out: dict[str, dict[str, list[dict]]] = {}
    for nb in notebooks:
        for ex in exercises(assignment, nb):
            for m in ex.mistakes:
                for t in ex.tests:
                    out.setdefault(nb, {}).setdefault(t, []).append(m.for_runner())
    return out


def hints(assignment: str, notebooks: list[str]) -> dict[tuple[str, str], dict[str, str]]:
    """(notebook, test cell) -> {known mistake: its hint}, read from the declarations alone (what
    a page needs to show a recognised mistake)."""
    out: dict[tuple[str, str], dict[str, str]] = {}
    for nb in notebooks:
        root = FIXTURES / assignment / nb
        for package in sorted(p for p in root.iterdir() if (p / "__init__.py").is_file()) if root.is_dir() else []:
            meta = fake_students.constants(package)
            for t in meta.get("TESTS", []):
                out.setdefault((nb, t), {}).update({str(k): str(v) for k, v in meta.get("MISTAKES", {}).items()})
    return out


def assignments() -> list[str]:
    return sorted(p.name for p in (env.COURSE / "source").iterdir()
                  if p.is_dir() and (FIXTURES / p.name).is_dir())


def notebooks(assignment: str) -> list[str]:
    return [p.stem for p in sorted((env.COURSE / "source" / assignment).glob("*.py"))]


# ------------------------------------------------------------------------ the hints
#: what code looks like in a sentence: backticks, a library's namespace, Python operators and keywords
CODE = re.compile(r"`|\b(?:np|numpy|scipy|torch|math)\.|\*\*|==|\bdef |\breturn\b|\blambda\b|\w__|\[\s*:|"
                  r"\b[A-Za-z]+_[A-Za-z]{2,}")  # the last: an identifier (W_star), not a subscript (a_p)
GENERIC_CALLS = frozenset({"float", "int", "len", "range", "zip", "abs", "min", "max", "sum", "print", "asarray",
                           "array", "isinstance", "enumerate", "sorted", "list", "tuple", "dict", "round",
                           "zeros", "ones", "eye", "arange", "linspace", "sqrt", "exp", "log", "sin", "cos"})


@functools.cache
def solution_calls(source: Path) -> dict[str, set[str]]:
    """answer cell -> the names of the functions its solution calls (not the generic ones of
    :data:`GENERIC_CALLS`): what a hint must not name."""
    out: dict[str, set[str]] = {}
    for c in nbcore.read_source(source).cells:
        if c.cell_type != "code" or not nbcore.is_answer(c):
            continue
        text = c.source
        if nbcore.BEGIN_SOL in text:
            text = "\n".join(text.split(nbcore.BEGIN_SOL, 1)[1].split(nbcore.END_SOL, 1)[0].splitlines())
        try:
            tree = ast.parse(_dedent(text))
        except SyntaxError:
            continue
        names = set()
        for n in ast.walk(tree):
            if isinstance(n, ast.Call):
                f = n.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name and name not in GENERIC_CALLS and not name.startswith("_"):
                    names.add(name)
        out[nbcore.grade_id(c)] = names
    return out


def _dedent(text: str) -> str:
    import textwrap

    body = textwrap.dedent(text)
    try:
        ast.parse(body)
        return body
    except SyntaxError:  # a solution region inside a function: parse it as a function body
        return "def _region():\n" + textwrap.indent(body, "    ")


def hint_problems(ex: Exercise, signatures=None, calls: dict[str, set[str]] | None = None) -> list[str]:
    """What is wrong with ``ex``'s hints: not one sentence, code in it (:data:`CODE`), or
    something of the answer: one of its key formulas, bounds or library methods
    (``tools.build.student_edition`` answer signatures), or a function the solution calls, named as
    code (an identifier, or any name followed by a parenthesis; a plain word such as "trace"
    describes the mistake, a call would dictate the fix)."""
    from tools.build import student_edition

    source = env.COURSE / "source" / ex.assignment / f"{ex.notebook}.py"
    if signatures is None:
        signatures = student_edition.answer_signatures(exercises=[ex.name])
    if calls is None:
        calls = solution_calls(source)
    own = set(calls.get(ex.name, set()))
    problems = []
    for m in ex.mistakes:
        h = m.hint
        where = f"{ex.notebook} {ex.name} {m.name}"
        if not h or "\n" in h or len(h) > MAX_HINT or not h.rstrip().endswith((".", "?")):
            problems.append(f"{where}: the hint must be one sentence of at most {MAX_HINT} characters")
        if CODE.search(h):
            problems.append(f"{where}: the hint reads like code: {h!r}")
        for s in signatures:
            if s.exercise == ex.name and (s.found_in(h) or s.kind == "method" and re.search(rf"\b{s.key}\b", h)):
                problems.append(f"{where}: the hint states the {s.kind} {s.shown!r} of the answer: {h!r}")
        for name in sorted(own):
            code_like = re.search(r"_|\d|[a-z][A-Z]", name) is not None
            if re.search(rf"\b{re.escape(name)}\b" + ("" if code_like else r"\s*\("), h):
                problems.append(f"{where}: the hint names {name!r}, which the solution calls: {h!r}")
    return problems


# ------------------------------------------------------------------- the fake class
def plan(assignment: str) -> dict[str, list[Mistake]]:
    """The fake class: student -> the known mistakes it plants, at most one per exercise, and
    none in an exercise whose functions another of its planted mistakes calls (each is then
    compared with the solution of what it calls, as a student with that one mistake would be).
    Student ``mistake<k>`` takes the first mistakes that fit, in the notebooks' order."""
    out: dict[str, list[Mistake]] = {}
    for nb in notebooks(assignment):
        for ex in exercises(assignment, nb):
            for m in ex.mistakes:
                k = 1
                while True:
                    mine = out.setdefault(STUDENT.format(k), [])
                    taken = {(x.notebook, x.exercise) for x in mine}
                    needs = {(x.notebook, d) for x in mine for d in x.depends}
                    if (nb, ex.name) not in taken | needs and not {(nb, d) for d in m.depends} & taken:
                        mine.append(m)
                        break
                    k += 1
    return out


def students(assignment: str) -> dict[str, dict[str, dict[str, str]]]:
    """The fake class of :func:`plan` as submissions: student -> notebook -> {answer cell: the
    wrong cell} (the solution elsewhere)."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for student, planted in plan(assignment).items():
        for m in planted:
            out.setdefault(student, {}).setdefault(m.notebook, {})[m.exercise] = m.cell
    return out


def submit_class(course: Path, assignment: str, answers: dict[str, dict[str, dict[str, str]]]) -> None:
    """Write each fake student's submission into ``course/submitted``, as ``nbgrader collect``
    leaves them: the notebooks in which it plants a mistake (the solution in every other answer
    cell); its other notebooks are left out, as nothing of them would be checked."""
    import nbformat

    rel = course / "release" / assignment
    for student, per_nb in answers.items():
        d = course / "submitted" / student / assignment
        if d.exists():
            shutil.rmtree(d)
        for nb in notebooks(assignment):
            if nb not in per_nb:
                continue
            src = course / "source" / assignment / f"{nb}.py"
            release_nb = nbformat.read(str(rel / f"{nb}.ipynb"), as_version=4)
            sub = fake_students.student_notebook(release_nb, nbcore.read_source(src), "solution", per_nb.get(nb, {}))
            nbcore.write(sub, d / f"{nb}.ipynb")
        (d / "timestamp.txt").write_text("2026-11-30 12:00:00.000000 UTC")


def scratch_class(root: Path, assignment: str) -> tuple[Path, dict]:
    """A scratch course of ``assignment`` (released) with the fake class of :func:`students`
    submitted, nothing graded."""
    from tools.build import pipeline

    course, _ = pipeline.scratch_course(root, assignment, students=())
    plan = students(assignment)
    submit_class(course, assignment, plan)
    return course, plan


def planters(assignment: str) -> dict[tuple[str, str, str], str]:
    """(notebook, exercise, mistake) -> the fake student of :func:`plan` who plants it."""
    return {(m.notebook, m.exercise, m.name): s for s, planted in plan(assignment).items() for m in planted}


def recognised(ex: Exercise, m: Mistake, records: dict[str, GradingRecord], student: str) -> bool:
    """Did one of ``ex``'s test cells name ``m`` in ``student``'s grading record?"""
    rec = records.get(student)
    seen = (rec.mistakes.get(ex.notebook) or {}) if rec is not None else {}
    return any(seen.get(t) == m.name for t in ex.tests)


def summary_line(n: int, m: int, k: int, l_: int) -> str:
    return (f"{n} graded code exercises, {m} with at least {MIN_MISTAKES} known mistakes; "
            f"{k} known mistakes, {l_} recognised")


def check_class(assignment: str, records: dict[str, GradingRecord],
                echo=print) -> tuple[list[Exercise], dict, list[str]]:
    """Per exercise of ``assignment``, which known mistakes the graded fake class's records
    show recognised: (exercises, {(exercise, mistake): bool}, problems)."""
    found: dict[tuple[str, str], bool] = {}
    problems: list[str] = []
    all_ex = [ex for nb in notebooks(assignment) for ex in exercises(assignment, nb)]
    who = planters(assignment)
    for ex in all_ex:
        echo(f"{ex.notebook} {ex.name}: {len(ex.mistakes)} known mistakes")
        for m in ex.mistakes:
            ok = recognised(ex, m, records, who[(m.notebook, m.exercise, m.name)])
            found[(ex.name, m.name)] = ok
            echo(f"  {'recognised' if ok else 'NOT recognised':15s} {m.name}: {m.hint}")
            if not ok:
                problems.append(f"{ex.notebook} {ex.name}: {m.name} is not recognised by {ex.tests}")
        if len(ex.mistakes) < MIN_MISTAKES:
            problems.append(f"{ex.notebook} {ex.name}: {len(ex.mistakes)} known mistakes (at least {MIN_MISTAKES})")
        problems += hint_problems(ex)
    return all_ex, found, problems


def grade_class(assignment: str, root: Path, workers: int | None = None, sandbox: bool = True,
                client=None) -> tuple[Path, dict[str, GradingRecord]]:
    """Build and grade (``tools.grading.grade``, as ``make grade``: each notebook of each submission by
    ``grade_notebook``, the records merged) the fake class of ``assignment`` under ``root``; (course,
    student -> grading record)."""
    from tools.grading import grade

    if root.exists():
        shutil.rmtree(root)
    course, plan = scratch_class(root, assignment)
    records = grade.grade(assignment, course, client=client, workers=workers, force=True,
                          students=sorted(plan), sandbox=sandbox, progress=False, echo=lambda *a: None)
    return course, records


HELP = """\
Grade, as make grade grades, a fake class in which each known mistake of every graded code
exercise is submitted, and show whether the exercise's tests recognise it (the hint a student
then reads). Known mistakes are declared in checks/fixtures/<assignment>/<notebook>/<exercise>/
(MISTAKES). Fails unless every exercise has at least 2 and every one is recognised."""

EXAMPLES = """\
examples:
  python -m tools.grading.mistakes
  python -m tools.grading.mistakes --assignment cnn_lcn --workers 2
  python -m tools.grading.mistakes --no-sandbox          # trusted fixtures only, where bubblewrap cannot run"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.grading.mistakes", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--assignment", action="append", default=None,
                   help="an assignment (repeatable; default: every assignment with fixtures)")
    p.add_argument("--workers", type=int, default=None, help="local Dask workers (default: one per core)")
    p.add_argument("--out", type=Path, default=env.REPO / "build" / "mistakes",
                   help="scratch folder of the fake classes (default: build/mistakes)")
    p.add_argument("--no-sandbox", action="store_true", help="grade without bubblewrap (default: sandboxed)")
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    totals = [0, 0, 0, 0]
    problems: list[str] = []
    for assignment in a.assignment or assignments():
        _, records = grade_class(assignment, a.out / assignment, workers=a.workers, sandbox=not a.no_sandbox)
        all_ex, found, probs = check_class(assignment, records)
        problems += probs
        totals[0] += len(all_ex)
        totals[1] += sum(len(ex.mistakes) >= MIN_MISTAKES for ex in all_ex)
        totals[2] += len(found)
        totals[3] += sum(found.values())
    for p in problems:
        print("problem:", p)
    print(summary_line(*totals))
    return 0 if not problems and totals[0] == totals[1] and totals[2] == totals[3] else 1


if __name__ == "__main__":
    sys.exit(main())
