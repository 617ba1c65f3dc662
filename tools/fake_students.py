"""Fake students for the autograder, built from per-notebook fixtures.

Fixtures live in ``checks/fixtures/<assignment>/<notebook>.json`` (docs/AUTHORING.md):
``partial`` (plausible wrong answers + the test cells they must fail) and ``raises``.

    python -m tools.fake_students check course/source/<a>/<nb>.py

executes the notebook in-process (quick mode) as: the solutions (no test may fail), the
stubs (every test must fail), and each fixture variant (exactly the listed tests fail),
and reports mismatches. The nbgrader pipeline (tools/pipeline.py) uses
:func:`student_notebook` to fill released notebooks the same way.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

from nbformat import NotebookNode

from tools import env, nbcore

FIXTURES = env.REPO / "checks" / "fixtures"
LOOP = "while True:\n    pass"
TAMPER = "# tampered by the student\npass"


def fixture(source: Path) -> dict:
    f = FIXTURES / source.parent.name / (source.stem + ".json")
    return json.loads(f.read_text()) if f.exists() else {}


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
        # (tools/mutants.py holds the per-exercise corpus).
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
Check a notebook's fake students (checks/fixtures/<assignment>/<notebook>.json) before
grading with them: run the notebook in-process as the solutions (no test may fail), the
stubs (every test must fail) and each fixture variant (exactly the listed tests fail),
and report every mismatch. For authors of a notebook; docs/AUTHORING.md."""

EXAMPLES = """\
examples:
  python -m tools.fake_students check course/source/td2_7_learned_first/td2_7_1_two_moments.py
  python -m tools.fake_students check course/source/cnn_lcn/cnn_lcn_1_exact_odes.py --only partial"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.fake_students", description=HELP, epilog=EXAMPLES,
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
