"""The mutation corpus: correct alternatives, plausible wrong answers and delegations.

Every autograded code exercise of a notebook has, in its answer cell's fixture package
``checks/fixtures/<assignment>/<notebook>/<grade_id>/`` (format: ``checks/fixtures/__init__.py``),
one Python file per variant of the answer cell::

    ex72A_kappa4/__init__.py     TESTS = ["test_ex72A_kappa4", "test_ex72A_bayes"]  # the test cells grading it
                                 WRONG = {"k4_scale_squared": "normalisation", ...}  # wrong answer -> error class
                                 DELEGATES_FAILS = [...]  # optional, see below
    ex72A_kappa4/correct_<name>.py   a correct alternative (the full answer cell)
    ex72A_kappa4/wrong_<name>.py     a plausible wrong answer
    ex72A_kappa4/delegates.py        an answer cell that only calls td_lib (where a counterpart exists)

which :func:`tools.build.fake_students.fixture` reads (as text, never imported) into the ``"mutants"``
entry of the notebook's fixture: ``{"ex72A_kappa4": {"tests": [...], "correct": {name: source},
"wrong": {name: {"class": ..., "source": ...}}, "delegates": source, "delegates_fails": [...]}}``.

    python -m tools.meta.mutants course/source/<a>/<nb>.py [--only ex72A_kappa4 ...]

runs one kernel per notebook, as the autograder does (``NBGRADER_EXECUTION`` set, hidden
tests in), executes the solution once, then for every variant re-runs just the answer cell
and its test cells, and restores the solution. A correct alternative must pass every test
of its exercise; a wrong answer must fail at least one; a delegation must fail all of them
(it scores 0 on the exercise). Prints per-exercise acceptance and kill rates.

An answer cell may define a function the library has no counterpart of next to ones it has
(``t_ratio_power_law`` beside ``vm_eigenvalue``), each graded by its own test cell. The
delegating student writes that one itself and keeps its points: ``DELEGATES_FAILS`` then
lists the test cells the delegation must fail (default: every one of ``tests``).
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_client.manager import KernelManager

from tools import env, nbcore
from tools.build import fake_students

ERROR_CLASSES = (
    "normalisation", "sign", "index", "boundary", "projection", "distribution", "ignored-argument",
    "edge", "symmetry", "hardcoded", "formula", "delegation",
)
TIMEOUT = 120  # seconds per cell


@dataclass
class Outcome:
    exercise: str
    kind: str  # correct | wrong | delegates
    name: str
    failed: dict[str, str]  # test grade_id -> error
    cell_error: str = ""

    @property
    def ok(self) -> bool:
        return verdict(self, self.tests) == ""

    tests: list[str] = field(default_factory=list)


def verdict(o: Outcome, tests: list[str]) -> str:
    """'' when the outcome is what its kind requires, else a reason."""
    if o.kind == "correct":
        if o.cell_error:
            return f"the answer cell raised: {o.cell_error}"
        return f"rejected by {sorted(o.failed)}: {next(iter(o.failed.values()))[:200]}" if o.failed else ""
    if o.kind == "wrong":
        return "" if o.failed else "passes every test (survives)"
    missing = sorted(set(tests) - set(o.failed))
    return f"passes {missing} (a delegation must score 0 on them)" if missing else ""


def mutants(source: Path) -> dict:
    return fake_students.fixture(source).get("mutants", {})


def defined_names(src: str) -> set[str]:
    """Top-level names an answer cell defines (deleted before a variant runs)."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


class Kernel:
    """One python3 kernel in the notebook's folder, run as the autograder runs it."""

    def __init__(self, cwd: Path):
        self.km = KernelManager(kernel_name="python3")
        kernel_env = {**os.environ, "NBGRADER_EXECUTION": "autograde"}
        self.km.start_kernel(cwd=str(cwd), env=kernel_env, extra_arguments=["--InteractiveShell.xmode=Minimal"])
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def run(self, code: str, timeout: int = TIMEOUT) -> str:
        """Execute ``code``; return '' or 'Name: message' of the error it raised."""
        err: list[str] = []

        def hook(msg):
            if msg["msg_type"] == "error":
                err.append(f"{msg['content']['ename']}: {msg['content']['evalue']}")

        try:
            reply = self.kc.execute_interactive(code, timeout=timeout, output_hook=hook, store_history=False)
        except TimeoutError:
            self.km.interrupt_kernel()
            try:
                self.kc.get_shell_msg(timeout=30)
            except Exception:  # noqa: BLE001
                pass
            return f"TimeoutError: cell ran longer than {timeout} s"
        if reply["content"]["status"] == "error" and not err:
            err.append(f"{reply['content']['ename']}: {reply['content']['evalue']}")
        return err[0] if err else ""

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def run(source: Path, only: list[str] | None = None, verbose: bool = True) -> list[Outcome]:
    """Execute every variant of ``source``'s mutation corpus; return the outcomes."""
    nb = nbcore.solution_notebook(nbcore.read_source(source))
    cells = {nbcore.grade_id(c): c for c in nb.cells if nbcore.grade_id(c)}
    corpus = mutants(source)
    k = Kernel(source.parent)
    out: list[Outcome] = []
    try:
        t0 = time.perf_counter()
        # the whole library is here: a graded call is denied its exercise's counterparts, as the
        # grading edition (which lacks them) denies them
        guard = k.run("from checks.grading.exercises import install_guard; install_guard()")
        if guard:
            raise RuntimeError(f"{source.name}: the guard did not install: {guard}")
        for c in nb.cells:
            if c.cell_type != "code" or nbcore.is_demo(c):  # as the autograder runs it (GradingExecute)
                continue
            e = k.run(c.source, timeout=600)
            if e:
                raise RuntimeError(f"{source.name}: solution cell {nbcore.grade_id(c) or c.source[:60]!r} raised {e}")
        if verbose:
            print(f"{source.stem}: solution executed in {time.perf_counter() - t0:.0f} s")
        for ex, spec in corpus.items():
            if only and ex not in only:
                continue
            tests = spec["tests"]
            solution_src = cells[ex].source
            variants = [("correct", n, s) for n, s in spec.get("correct", {}).items()]
            variants += [("wrong", n, w["source"]) for n, w in spec.get("wrong", {}).items()]
            if "delegates" in spec:
                variants.append(("delegates", "delegates", spec["delegates"]))
            for kind, name, src in variants:
                names = defined_names(solution_src) | defined_names(src)
                if names:
                    k.run("\n".join(f"globals().pop({n!r}, None)" for n in sorted(names)))
                cell_error = k.run(src)
                failed = {}
                for t in tests:
                    e = k.run(cells[t].source)
                    if e:
                        failed[t] = e
                o = Outcome(ex, kind, name, failed, cell_error if kind == "correct" else "",
                            fake_students.delegates_fails(spec) if kind == "delegates" else tests)
                out.append(o)
                if verbose:
                    why = verdict(o, o.tests)
                    print(f"  {ex:24s} {kind:9s} {name:28s} {'ok ' if not why else 'BAD'} "
                          f"{why or ('fails ' + ','.join(sorted(failed)) if failed else 'passes')}")
                    for t, e in sorted(failed.items()):
                        print(f"      {t}: {e[:300]}")
                restore = k.run(solution_src)
                if restore:
                    raise RuntimeError(f"{ex}: the solution cell raised on restore: {restore}")
    finally:
        k.close()
    return out


def summary(outcomes: list[Outcome]) -> tuple[str, list[str]]:
    """A per-exercise table of acceptance / kill rates, and the list of problems."""
    lines = [f"{'exercise':24s} {'correct ok':>10s} {'wrong killed':>12s} {'delegates':>9s}"]
    problems = []
    for ex in dict.fromkeys(o.exercise for o in outcomes):
        os_ = [o for o in outcomes if o.exercise == ex]
        c = [o for o in os_ if o.kind == "correct"]
        w = [o for o in os_ if o.kind == "wrong"]
        d = [o for o in os_ if o.kind == "delegates"]
        lines.append(f"{ex:24s} {sum(o.ok for o in c):>4d}/{len(c):<5d} {sum(o.ok for o in w):>6d}/{len(w):<5d} "
                     f"{'killed' if d and d[0].ok else ('SURVIVES' if d else '-'):>9s}")
        problems += [f"{ex} {o.kind} {o.name!r}: {verdict(o, o.tests)}" for o in os_ if not o.ok]
    c_all = [o for o in outcomes if o.kind == "correct"]
    w_all = [o for o in outcomes if o.kind != "correct"]
    lines.append(f"acceptance {sum(o.ok for o in c_all)}/{len(c_all)}, "
                 f"kill rate {sum(o.ok for o in w_all)}/{len(w_all)}")
    return "\n".join(lines), problems


def corpus_problems(source: Path) -> list[str]:
    """Static rules of the corpus (no kernel): coverage, sizes, names, error classes.

    The rule that ties the corpus to the library ("an exercise with library counterparts has
    a ``delegates`` variant") lives in ``tests/test_mutants.py``: ``tools`` imports neither
    ``td_lib`` nor ``checks`` (an import-linter contract)."""
    nb = nbcore.read_source(source)
    fx = fake_students.fixture(source)
    code_answers = {nbcore.grade_id(c) for c in nb.cells if nbcore.is_answer(c) and c.cell_type == "code"}
    code_answers -= set(fx.get("untested", []))
    tests = {nbcore.grade_id(c) for c in nb.cells if nbcore.is_test(c)}
    corpus = fx.get("mutants", {})
    problems = [f"{ex}: no mutation corpus" for ex in sorted(code_answers - set(corpus))]
    problems += [f"{ex}: not an autograded code answer of {source.name}" for ex in sorted(set(corpus) - code_answers)]
    for ex, spec in corpus.items():
        if not spec.get("tests") or not set(spec["tests"]) <= tests:
            problems.append(f"{ex}: TESTS must name test cells of the notebook")
        if "delegates_fails" in spec and ("delegates" not in spec or not spec["delegates_fails"]
                                          or not set(spec["delegates_fails"]) <= set(spec.get("tests", []))):
            problems.append(f"{ex}: DELEGATES_FAILS must be a non-empty part of TESTS, next to delegates.py")
        if len(spec.get("correct", {})) < 1:
            problems.append(f"{ex}: needs at least one correct alternative")
        wrong = spec.get("wrong", {})
        if len(wrong) < 4:
            problems.append(f"{ex}: needs at least four wrong answers, has {len(wrong)}")
        classes = {w.get("class") for w in wrong.values()}
        if len(classes) < min(4, len(wrong)):
            problems.append(f"{ex}: the wrong answers cover only the error classes {sorted(classes)}")
        bad = classes - set(ERROR_CLASSES)
        if bad:
            problems.append(f"{ex}: unknown error classes {sorted(bad)} (use {ERROR_CLASSES})")
    return problems


HELP = """\
Run the mutation corpus of autograded exercises (the correct_*, wrong_* and delegates files
of checks/fixtures/<assignment>/<notebook>/<grade_id>/) against their test cells: every correct
alternative must pass, every plausible wrong answer must fail a test, every answer that
only calls td_lib must score 0. Prints acceptance and kill rates per exercise; exits 1 on
a problem. For authors of a notebook; the corpus format: `python -m pydoc tools.meta.mutants`."""

EXAMPLES = """\
examples:
  python -m tools.meta.mutants                       # every notebook (minutes)
  python -m tools.meta.mutants course/source/td2_7_learned_first/td2_7_2_higher_cumulants.py
  python -m tools.meta.mutants course/source/td2_7_learned_first/td2_7_2_higher_cumulants.py --only ex72A_kappa4"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.meta.mutants", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="*", type=Path, metavar="SOURCE",
                   help="notebook sources, course/source/<a>/<nb>.py (default: every notebook)")
    p.add_argument("--only", nargs="*", metavar="GRADE_ID",
                   help="only these exercises, by the grade_id of their answer cell (default: all)")
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    paths = [q.resolve() for q in a.paths] or nbcore.sources()
    status = 0
    for src in paths:
        static = corpus_problems(src)
        outcomes = run(src, a.only)
        table, problems = summary(outcomes)
        print(table)
        problems = static + problems
        if problems:
            status = 1
            print("PROBLEMS:\n  " + "\n  ".join(problems))
    return status


if __name__ == "__main__":
    env.setup()
    sys.exit(main())
