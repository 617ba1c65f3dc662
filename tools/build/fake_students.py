"""Fake students for the autograder, built from per-notebook fixtures.

Fixtures live in ``checks/fixtures/<assignment>/<notebook>/`` (format: the docstring of
``checks/fixtures/__init__.py``; docs/AUTHORING.md): one package per answer cell, holding its
``partial`` answer (a plausible wrong answer; the notebook's package lists the test cells the
partial student fails), its ``raises`` answer and its mutation corpus (tools/meta/mutants.py), one
Python file per cell. :func:`fixture` gathers them into one dict per notebook::

    {"partial": {"answers": {grade_id: cell source}, "fails": [test grade_id, ...]},
     "raises": {...}, "untested": [...],
     "mutants": {grade_id: {"tests": [...], "correct": {name: source},
                            "wrong": {name: {"class": ..., "source": ...}},
                            "delegates": source, "delegates_fails": [...]}}}

The fixtures are read, never imported: a cell is the text below its file's ``# %%`` line (the
header above it imports, for ruff and import-linter, the names the cell takes from the
notebook), the packages' constants are literals read with :mod:`ast`. Importing them would
break the layer rule (``tools`` imports neither ``checks`` nor ``td_lib``; the cells import
td_lib) and run what they do, which for :func:`hostile` submissions is an attack.

    python -m tools.build.fake_students check course/source/<a>/<nb>.py

executes the notebook in-process (quick mode) as: the solutions (no test may fail), the
stubs (every test must fail), and each fixture variant (exactly the listed tests fail),
and reports mismatches. The nbgrader pipeline (tools/build/pipeline.py) uses
:func:`student_notebook` to fill released notebooks the same way.
"""

from __future__ import annotations

import argparse
import ast
import copy
import sys
from pathlib import Path

from nbformat import NotebookNode

from tools import env, nbcore

FIXTURES = env.REPO / "checks" / "fixtures"
LOOP = "while True:\n    pass"
TAMPER = "# tampered by the student\npass"
CELL_MARK = "# %%"  # a fixture file's cell is the text below its first line that reads exactly this


def cell_source(path: Path) -> str:
    """The answer cell a fixture file holds: every line below its first ``# %%`` line."""
    lines = path.read_text().splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.rstrip("\r\n") == CELL_MARK:
            return "".join(lines[i + 1:])
    raise ValueError(f"{path}: no line {CELL_MARK!r} above the cell (checks/fixtures/__init__.py)")


def constants(package: Path) -> dict:
    """The UPPER_CASE constants a fixture package's ``__init__.py`` assigns, as literals (not imported)."""
    init = package / "__init__.py"
    out = {}
    for node in ast.parse(init.read_text(), filename=str(init)).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id.isupper():
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError as exc:
                raise ValueError(f"{init}: {node.targets[0].id} must be a plain literal") from exc
    return out


def _packages(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if (p / "__init__.py").is_file()) if folder.is_dir() else []


def _corpus(package: Path) -> dict | None:
    """The mutation corpus of one answer cell's package, or None where it has none (no TESTS)."""
    meta = constants(package)
    if "TESTS" not in meta:
        return None
    wrong = meta.get("WRONG", {})
    files = {p.stem.removeprefix("wrong_") for p in package.glob("wrong_*.py")}
    if files != set(wrong):
        raise ValueError(f"{package}: WRONG must list every wrong_<name>.py and no other: "
                         f"files without a class {sorted(files - set(wrong))}, "
                         f"classes without a file {sorted(set(wrong) - files)}")
    spec = {"tests": list(meta["TESTS"]),
            "correct": {p.stem.removeprefix("correct_"): cell_source(p) for p in sorted(package.glob("correct_*.py"))},
            "wrong": {n: {"class": c, "source": cell_source(package / f"wrong_{n}.py")} for n, c in wrong.items()}}
    if (package / "delegates.py").is_file():
        spec["delegates"] = cell_source(package / "delegates.py")
    if "DELEGATES_FAILS" in meta:
        spec["delegates_fails"] = list(meta["DELEGATES_FAILS"])
    return spec


def answer_packages(source: Path) -> list[Path]:
    """The fixture packages of the notebook ``source``, one per answer cell, in the notebook's order."""
    root = FIXTURES / source.parent.name / source.stem
    if not root.is_dir():
        return []
    order = {g: i for i, g in enumerate(nbcore.grade_id(c) for c in nbcore.read_source(source).cells)}
    return sorted(_packages(root), key=lambda p: (order.get(p.name, len(order)), p.name))


def fixture(source: Path) -> dict:
    """The fake students of the notebook ``source`` (format: the module docstring); {} without fixtures."""
    root = FIXTURES / source.parent.name / source.stem
    if not (root / "__init__.py").is_file():
        return {}
    meta = constants(root)
    cells = answer_packages(source)
    fx: dict = {}
    for variant in ("partial", "raises"):
        answers = {p.name: cell_source(p / f"{variant}.py") for p in cells if (p / f"{variant}.py").is_file()}
        fails = meta.get(f"{variant.upper()}_FAILS")
        if answers or fails is not None:
            fx[variant] = {"answers": answers, "fails": list(fails or [])}
    if "UNTESTED" in meta:
        fx["untested"] = list(meta["UNTESTED"])
    corpus = {p.name: spec for p in cells if (spec := _corpus(p)) is not None}
    if corpus:
        fx["mutants"] = corpus
    return fx


def hostile(assignment: str) -> dict[str, dict[str, dict]]:
    """The hostile submissions of ``assignment`` (tests/test_grade.py), read as text:
    ``{notebook: {student: {"answers": {grade_id: cell source}, "fails": [...], "flagged": bool,
    "threat": str}}}``. A line ``SOLUTION`` in a cell stands for that cell's solution."""
    out: dict[str, dict[str, dict]] = {}
    for nb in _packages(FIXTURES / "hostile" / assignment):
        for student in _packages(nb):
            meta = constants(student)
            answers = {p.stem: cell_source(p) for p in sorted(student.glob("*.py")) if p.name != "__init__.py"}
            out.setdefault(nb.name, {})[student.name] = {
                "answers": answers, "fails": list(meta["FAILS"]), "flagged": meta["FLAGGED"], "threat": meta["THREAT"]}
    return out


def delegates_fails(spec: dict) -> list[str]:
    """The test cells an exercise's delegation must fail: ``delegates_fails`` of its mutation
    corpus where some function of the exercise has no library counterpart, else ``tests``."""
    return list(spec.get("delegates_fails", spec["tests"]))


def variant_answers(source: Path, variant: str) -> tuple[dict[str, str], list[str]]:
    """(answers to substitute, tests expected to fail) for a fixture variant.

    ``loop`` is derived from ``raises``: the same cells, replaced by an infinite loop;
    ``delegates`` from the ``"delegates"`` entries of the mutation corpus.
    """
    fx = fixture(source)
    if variant == "delegates":
        # Every exercise with a library counterpart answered by delegating to it: each of
        # those exercises scores 0 on the test cells of its delegated functions
        # (tools/meta/mutants.py holds the per-exercise corpus).
        corpus = {ex: spec for ex, spec in fx.get("mutants", {}).items() if "delegates" in spec}
        return ({ex: spec["delegates"] for ex, spec in corpus.items()},
                sorted({t for spec in corpus.values() for t in delegates_fails(spec)}))
    base = "raises" if variant == "loop" else variant
    if base not in fx:
        return {}, []
    answers = dict(fx[base]["answers"])
    if variant == "loop":
        answers = {k: LOOP for k in answers}
    return answers, list(fx[base]["fails"])


def student_notebook(release_nb: NotebookNode, source_nb: NotebookNode, kind: str,
                     answers: dict[str, str] | None = None,
                     tamper: list[str] | None = None) -> NotebookNode:
    """A submission built from a *released* notebook.

    kind ``blank`` leaves the release as is; ``solution`` fills every answer cell with the
    source's solution (markers removed). ``answers`` then overrides cells by grade_id;
    ``tamper`` lists test cells whose locked source the student overwrote.
    """
    nb = copy.deepcopy(release_nb)
    sol = {nbcore.grade_id(c): c for c in nbcore.solution_notebook(source_nb).cells
           if nbcore.grade_id(c)}
    for c in nb.cells:
        gid = nbcore.grade_id(c)
        if kind == "solution" and nbcore.is_answer(c) and gid in sol:
            c.source = sol[gid].source
        if answers and gid in answers:
            c.source = answers[gid]
        if tamper and gid in tamper:
            c.source = TAMPER
    return nb


def check(source: Path, variants: list[str] | None = None) -> list[str]:
    """Run the in-process checks of one source; return a list of problems."""
    nb = nbcore.read_source(source)
    tests = [nbcore.grade_id(c) for c in nb.cells if nbcore.is_test(c)]
    fx = fixture(source)
    problems: list[str] = []
    plan = {"solution": (nbcore.solution_notebook(nb), [])}
    stubs = nbcore.stub_notebook(nb)
    plan["stub"] = (stubs, tests)
    for v in ("partial", "raises"):
        if v in fx:
            answers, fails = variant_answers(source, v)
            unknown = [g for g in list(answers) + fails if g not in
                       {nbcore.grade_id(c) for c in nb.cells}]
            if unknown:
                problems.append(f"{v}: unknown grade_ids {unknown}")
            plan[v] = (student_notebook(nbcore.solution_notebook(nb), nb, "blank", answers), fails)
        else:
            problems.append(f"fixture has no {v!r} variant")
    for name, (student, expect) in plan.items():
        if variants and name not in variants:
            continue
        executed, secs = nbcore.execute(student, source.parent, quick=True)
        got = nbcore.failed_tests(executed)
        print(f"{name:9s} {secs:6.1f} s  failed tests: {sorted(got) or '-'}")
        for gid, err in sorted(got.items()):
            print(f"            {gid}: {err[:150]}")
        if sorted(got) != sorted(expect):
            problems.append(f"{name}: expected failures {sorted(expect)}, got {sorted(got)}")
        others = [c for c in nbcore.error_cells(executed) if not nbcore.is_test(c)
                  and not nbcore.is_answer(c)]
        if name == "solution" and others:
            problems.append("solution: non-test cells raised: "
                            + "; ".join(nbcore.error_text(c) for c in others))
    return problems


HELP = """\
Check a notebook's fake students (checks/fixtures/<assignment>/<notebook>/) before
grading with them: run the notebook in-process as the solutions (no test may fail), the
stubs (every test must fail) and each fixture variant (exactly the listed tests fail),
and report every mismatch. For authors of a notebook; docs/AUTHORING.md."""

EXAMPLES = """\
examples:
  python -m tools.build.fake_students check course/source/td2_7_learned_first/td2_7_1_two_moments.py
  python -m tools.build.fake_students check course/source/cnn_lcn/cnn_lcn_1_exact_odes.py --only partial"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.build.fake_students", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND", help="one of:")
    c = sub.add_parser("check", description=HELP, epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       help="run one notebook's fake students and report mismatches")
    c.add_argument("path", type=Path, metavar="SOURCE", help="the notebook's source, course/source/<a>/<nb>.py")
    c.add_argument("--only", nargs="*", metavar="VARIANT", choices=["solution", "stub", "partial", "raises"],
                   help="run only these of solution, stub, partial, raises (default: all four)")
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    problems = check(a.path.resolve(), a.only)
    print("\n".join(["PROBLEMS:"] + problems) if problems else "fixture ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
