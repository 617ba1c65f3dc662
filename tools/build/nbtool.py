"""Notebook commands: sync sources to paired notebooks, execute, lint nbgrader metadata.

    python -m tools.build.nbtool sync [PATH...]      # .py -> paired .ipynb (jupytext --update)
    python -m tools.build.nbtool run [--quick] PATH  # execute a source; report time and errors
    python -m tools.build.nbtool lint [PATH...]      # nbgrader metadata, tests, demos, checks imports
    python -m tools.build.nbtool fmt [PATH...]       # canonical Jupytext form (round-trip fixed point)
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

import jupytext
import nbformat

from tools import env, nbcore
from tools.build import student_edition

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


class SyncError(RuntimeError):
    pass


def sync(path: Path) -> Path:
    """Write the paired ``.ipynb`` of a source with ``jupytext --to ipynb --update``, its baked
    regions expanded (:func:`tools.nbcore.read_source`: the notebook shows the ``name = literal``
    lines, the ``.py`` holds one line per region).

    The ``.py`` is the single source of truth. If the ``.ipynb`` is newer *and* its cells
    differ from what the ``.py`` says (someone edited the notebook in JupyterLab), refuse
    instead of silently overwriting either side: the author must run ``jupytext --sync``
    (or delete the ``.ipynb``) deliberately, then ``python -m checks.grading.bake``, which
    collapses the regions that the ``.py`` got back expanded.
    """
    path = Path(path)
    ipynb = path.with_suffix(".ipynb")
    expanded = nbcore.read_source(path)
    if ipynb.exists() and ipynb.stat().st_mtime > path.stat().st_mtime:
        from_py = [(c.cell_type, c.source) for c in expanded.cells]
        from_nb = [(c.cell_type, c.source) for c in jupytext.read(str(ipynb)).cells]
        if from_py != from_nb:
            raise SyncError(
                f"{ipynb} is newer than {path.name} and differs from it: it was edited as a "
                f"notebook. Run `jupytext --sync {ipynb}` to pull the edits into the .py, then "
                f"`python -m checks.grading.bake` to collapse its baked regions to one line each; "
                f"or delete the .ipynb to discard them.")
    subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--to", "ipynb", "--update",
                    str(path)], check=True)
    nb = nbformat.read(str(ipynb), as_version=4)
    changed = False
    if [c.cell_type for c in nb.cells] != [c.cell_type for c in expanded.cells]:
        raise SyncError(f"{ipynb}: jupytext wrote {len(nb.cells)} cells, the source has {len(expanded.cells)}")
    for cell, want in zip(nb.cells, expanded.cells, strict=True):
        if cell.source != want.source:
            cell.source, changed = want.source, True
    # The .py carries no notebook metadata: give the notebook its kernel, so that JupyterLab
    # and nbgrader never ask which one to use.
    if nb.metadata.get("kernelspec") != KERNELSPEC:
        nb.metadata["kernelspec"] = dict(KERNELSPEC)
        nb.metadata.setdefault("language_info", {"name": "python"})
        changed = True
    if changed:
        nbformat.write(nb, str(ipynb))
    return ipynb


def round_trip(path: Path) -> str:
    """The text of ``path`` after ``.py -> .ipynb -> .py`` with the Jupytext CLI and config.

    A canonical source is a fixed point (``tests/test_pipeline.py`` asserts it); ``fmt``
    writes the canonical form back.
    """
    path = Path(path)
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        shutil.copy(path, t / path.name)
        shutil.copy(path.parent / "jupytext.toml", t / "jupytext.toml")
        jt = [sys.executable, "-m", "jupytext", "--quiet"]
        subprocess.run([*jt, "--to", "ipynb", str(t / path.name)], check=True)
        subprocess.run([*jt, "--to", "py:percent", "-o", str(t / "back.py"),
                        str((t / path.name).with_suffix(".ipynb"))], check=True)
        return (t / "back.py").read_text()


def lint(path: Path) -> list[str]:
    """Problems in a source's nbgrader metadata (empty list if none)."""
    nb = nbcore.read_source(path)
    problems, seen = lint_baked(path), set()
    for i, c in enumerate(nb.cells):
        m = nbcore.nbmeta(c)
        src = c.source
        where = f"{path.name} cell {i}"
        for b, e in [(nbcore.BEGIN_SOL, nbcore.END_SOL), (nbcore.BEGIN_HIDDEN, nbcore.END_HIDDEN)]:
            if src.count(b) != src.count(e):
                problems.append(f"{where}: unpaired {b!r}/{e!r}")
        if not m:
            if nbcore.BEGIN_SOL in src or nbcore.BEGIN_HIDDEN in src:
                problems.append(f"{where}: solution/hidden markers in a cell without nbgrader metadata")
            continue
        gid = m.get("grade_id")
        if not gid:
            problems.append(f"{where}: nbgrader cell without grade_id")
        elif gid in seen:
            problems.append(f"{where}: duplicate grade_id {gid!r}")
        seen.add(gid)
        if m.get("grade") and not m.get("points"):
            problems.append(f"{where} ({gid}): graded cell without points")
        if m.get("schema_version") != 3:
            problems.append(f"{where} ({gid}): schema_version must be 3")
        if nbcore.is_test(c) and not m.get("locked"):
            problems.append(f"{where} ({gid}): test cell must be locked")
        if c.cell_type == "code" and m.get("solution") and nbcore.BEGIN_SOL not in src:
            problems.append(f"{where} ({gid}): code answer cell without a BEGIN SOLUTION region")
        quick_words = ("QUICK", "pick(", "NBGRADER_EXECUTION")
        if (nbcore.is_test(c) or nbcore.is_answer(c)) and any(k in src for k in quick_words):
            problems.append(f"{where} ({gid}): graded cells must not depend on quick mode")
        if nbcore.BEGIN_HIDDEN in src and not nbcore.is_test(c):
            problems.append(f"{where} ({gid}): hidden tests outside a test cell")
    if not any(nbcore.is_test(c) for c in nb.cells):
        problems.append(f"{path.name}: no autograded test cell")
    problems += lint_tests(nb, path.name)
    problems += lint_demos(nb, path.name)
    problems += lint_checks_imports(nb, path.name)
    return problems


def lint_baked(path: Path) -> list[str]:
    """The source holds each baked region as one line (``# BAKED <name> (...)``), never its values:
    a region expanded in the ``.py`` (pulled back from the paired notebook) is a problem."""
    lines = Path(path).read_text().split("\n")
    return [f"{Path(path).name} line {i}: the baked region {line.strip()[len(nbcore.BAKED_BEGIN):].split()[0]} is "
            "expanded in the source; run python -m checks.grading.bake, which writes its values to the "
            "notebook's data file and leaves one line"
            for i, line in enumerate(lines, 1) if line.lstrip().startswith(nbcore.BAKED_BEGIN)]


GRADING = "checks.grading"  # the one package of grading references (checks/grading/__init__.py)
_CHECKS_IMPORT = re.compile(r"^\s*(?:from\s+(checks(?:\.[\w.]+)?)\s+import|import\s+(checks(?:\.[\w.]+)?))\b")


def _checks_imports(src: str) -> list[tuple[int, str, str]]:
    """(line, module, statement) of every import from the ``checks`` package in ``src``
    (``ast``; a line scan for cells that do not parse, e.g. IPython magics)."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        found = []
        for i, line in enumerate(src.split("\n"), start=1):
            m = _CHECKS_IMPORT.match(line)
            if m:
                found.append((i, m.group(1) or m.group(2), line.strip()))
        return found
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names if a.name == "checks" or a.name.startswith("checks.")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module == "checks" or node.module.startswith("checks.")):
            # ``from checks import grading`` names the submodule it imports
            mods = [f"{node.module}.{a.name}" if node.module == "checks" else node.module for a in node.names]
        else:
            continue
        stmt = ast.get_source_segment(src, node) or ""
        found += [(node.lineno, m, stmt.splitlines()[0] if stmt else m) for m in mods]
    return sorted(found)


def lint_checks_imports(nb, name: str = "notebook") -> list[str]:
    """A notebook never imports from ``checks``: neither a student's install nor the grading
    kernel has it (the grader exposes no reference to student code). A test's expected values
    are baked into the cell on the instructor's side: a region ``# BEGIN BAKED <name>`` ...
    ``# END BAKED <name>`` written by ``python -m checks.grading.bake`` from the function
    ``<name>`` of ``checks/grading/baked.py``."""
    problems = []
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code" or "checks" not in c.source:
            continue
        where = f"{name} cell {i}" + (f" ({nbcore.grade_id(c)})" if nbcore.grade_id(c) else "")
        hidden = nbcore.hidden_lines(c.source) if nbcore.is_test(c) else set()
        for line, mod, stmt in _checks_imports(c.source):
            region = "in a hidden-test region " if line in hidden else ""
            problems.append(f"{where} line {line}: `{stmt}` imports {mod} {region}but the grading kernel has no "
                            f"checks package; bake the expected values instead (a function in "
                            f"{GRADING.replace('.', '/')}/baked.py and a `# BEGIN BAKED <name>` region, "
                            "then python -m checks.grading.bake)")
    return problems


_IPYTHON_NAMES = {"get_ipython", "display", "In", "Out", "exit", "quit", "__name__", "__file__"}
# Calls that change process-wide state (a local torch.Generator().manual_seed(s) does not).
_GLOBAL_STATE = {name: re.compile(rx) for name, rx in {
    "torch.set_default_dtype": r"\bset_default_dtype\(",
    "torch.manual_seed": r"(?<![\w).])torch\.manual_seed\(",
    "random.seed": r"(?<![\w)])(?:np\.|numpy\.)?random\.seed\(",
    "set_num_threads": r"\bset_num_threads\(",
    "set_printoptions": r"\bset_printoptions\(",
    "warnings.filterwarnings": r"\bfilterwarnings\(",
    "rcParams": r"\brcParams\b",
}.items()}


def _bound_and_used(src: str) -> tuple[set[str], set[str]] | None:
    """Names a cell binds (anywhere: assignments, defs, imports, loop targets, arguments) and
    names it reads; None if it does not parse (IPython magics)."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return None
    bound: set[str] = set()
    used: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (used if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
    return bound, used


def lint_demos(nb, name: str = "notebook") -> list[str]:
    """Cells tagged ``demo`` are skipped while nbgrader autogrades
    (``tools.grading.execute.GradingExecute``), so nothing graded may depend on them: a demo
    cell is a plain code cell, changes no global state (dtype, seeds, threads), and no later
    cell that runs while grading reads a name that only demo cells define."""
    import builtins


    problems: list[str] = []
    graded_defined = set(dir(builtins)) | _IPYTHON_NAMES
    demo_only: dict[str, int] = {}
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code":
            continue
        names = _bound_and_used(c.source)
        if nbcore.is_demo(c):
            if nbcore.nbmeta(c):
                problems.append(f"{name} cell {i}: a demo cell must not carry nbgrader metadata "
                                f"({nbcore.grade_id(c)!r} is graded or an answer)")
            for word, rx in _GLOBAL_STATE.items():
                if rx.search(c.source):
                    problems.append(f"{name} cell {i}: demo cell changes global state ({word}); graded runs "
                                    "skip it, so move that line to a cell that is not a demo")
            if names:
                for n in names[0] - graded_defined:
                    demo_only.setdefault(n, i)
            continue
        if names is None:
            continue
        bound, used = names
        for n in sorted((used - bound) & set(demo_only)):
            problems.append(f"{name} cell {i}: uses {n!r}, which only the demo cell {demo_only[n]} defines; "
                            "graded runs skip demo cells (define it in a cell that is not tagged demo)")
        graded_defined |= bound
        for n in bound:
            demo_only.pop(n, None)
    return problems


MIN_MESSAGE = 20  # characters of a constant assert message


def reference_names() -> set[str]:
    """Names of the functions that answer an exercise (the registry ``checks/grading/exercises.py``,
    last components, general tools left out): what a test cell may not call while grading."""
    keep = student_edition.general_tools()
    return {n.split(".")[-1] for names in student_edition.counterparts().values() for n in names if n not in keep}


def visible_part(src: str) -> str:
    """A test cell as the student's release shows it: every ``### BEGIN/END HIDDEN TESTS`` region,
    markers included, blanked (empty lines, so that line numbers stay those of the source)."""
    out, inside = [], False
    for line in src.split("\n"):
        if nbcore.BEGIN_HIDDEN in line:
            inside = True
            out.append("")
        elif nbcore.END_HIDDEN in line:
            inside = False
            out.append("")
        else:
            out.append("" if inside else line)
    return "\n".join(out)


def _is_passed_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "passed"


def lint_tick_last(src: str, where: str) -> list[str]:
    """The tick last: the visible tests of a test cell (the cell without its hidden regions, what a
    student runs at home) print their confirmation only after every visible check passed.

    Precisely: the last top-level statement of the visible part is the one ``passed(...)`` call of
    the cell (``td_lib.own_work.passed``); nothing follows it in the visible part but comments and
    blank lines (a visible check after a hidden region counts: the student runs it after the tick);
    at least one ``assert`` precedes it; ``passed`` is called nowhere else in the cell (not in a
    hidden region, not inside a block). A cell that does not parse is left to the other rules."""
    try:
        whole = ast.parse(src)
        visible = ast.parse(visible_part(src))
    except SyntaxError:
        return []
    calls = sorted(n.lineno for n in ast.walk(whole) if _is_passed_call(n))
    body = visible.body
    last = body[-1] if body else None
    if not any(_is_passed_call(n) for n in ast.walk(visible)):
        return [f"{where}: the visible tests do not end with passed(<the functions tested>) "
                "(td_lib.own_work.passed: the student's one-line confirmation)"]
    problems = []
    first = min(n.lineno for n in ast.walk(visible) if _is_passed_call(n))
    if not (isinstance(last, ast.Expr) and _is_passed_call(last.value)):
        after = [s.lineno for s in body if s.lineno > first]
        problems.append(f"{where} line {first}: passed(...) prints the student's ✓ before visible code that still "
                        f"checks (line{'s' if len(after) > 1 else ''} {', '.join(map(str, after))}): the tick last, "
                        "as the last statement of the visible tests, after every check")
    if len(calls) > 1:
        problems.append(f"{where}: passed(...) is called {len(calls)} times (lines {', '.join(map(str, calls))}); "
                        "call it once, as the last statement of the visible tests")
    checks = [n.lineno for n in ast.walk(visible) if isinstance(n, ast.Assert)]
    if not checks or min(checks) > first:
        problems.append(f"{where}: no assert before passed(...) in the visible tests: the ✓ would show for "
                        "any answer, the untouched stub included")
    return problems


def lint_tests(nb, name: str = "notebook") -> list[str]:
    """Test cells: every name a test cell reads is its own (imported or defined in the cell) or
    the student's work (defined by an answer cell); every assert explains itself, every function
    a student writes is called
    through ``td_lib.own_work.own_work`` (library counterparts off, stubs named), no reference
    (an exercise's library counterpart) is called (expected values are baked, see
    ``checks/grading/bake.py``), and the visible tests end with ``passed(...)`` (the student's
    confirmation)."""
    from tools.grading.runner import free_names

    references = reference_names()
    answer_names: set[str] = set()
    answer_values: set[str] = set()
    for c in nb.cells:
        if nbcore.is_answer(c) and c.cell_type == "code":
            try:
                tree = ast.parse(nbcore.strip_markers(c.source, nbcore.BEGIN_SOL, nbcore.END_SOL, keep=True))
            except SyntaxError:
                continue
            answer_names |= {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
            answer_values |= {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                              for tg in (n.targets if isinstance(n, ast.Assign) else [n.target])
                              for t in ast.walk(tg) if isinstance(t, ast.Name)}
    problems = []
    for c in nb.cells:
        if not nbcore.is_test(c):
            continue
        gid = nbcore.grade_id(c)
        try:
            tree = ast.parse(c.source)
        except SyntaxError as e:
            problems.append(f"{name} ({gid}): test cell does not parse: {e}")
            continue
        for n in free_names(c.source):
            if n not in answer_names | answer_values:
                problems.append(f"{name} ({gid}): reads {n!r}, which the cell neither imports nor defines and no "
                                "answer cell defines: import or define it in the test cell (while grading, a test "
                                "cell gets from the student's notebook only what its answer cells define; "
                                "docs/GRADING.md)")
        problems += lint_tick_last(c.source, f"{name} ({gid})")
        wrapped = {id(call.args[0]) for call in ast.walk(tree) if isinstance(call, ast.Call)
                   and getattr(call.func, "id", getattr(call.func, "attr", None)) == "own_work" and call.args}
        for node in sorted(ast.walk(tree), key=lambda n: getattr(n, "lineno", 0)):
            if isinstance(node, ast.Assert):
                msg = node.msg
                if msg is None:
                    problems.append(f"{name} ({gid}) line {node.lineno}: assert without a message")
                elif isinstance(msg, ast.Constant) and len(str(msg.value)) < MIN_MESSAGE:
                    problems.append(f"{name} ({gid}) line {node.lineno}: assert message {msg.value!r} is too "
                                    "terse: say what was checked and what is wrong")
            elif isinstance(node, ast.Call) and (
                    isinstance(node.func, ast.Attribute) and node.func.attr in references
                    or isinstance(node.func, ast.Name) and node.func.id in references - answer_names):
                called = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
                problems.append(f"{name} ({gid}) line {node.lineno}: calls the reference {called!r} while grading; "
                                "bake the expected values instead (python -m checks.grading.bake)")
            elif (isinstance(node, ast.Name) and node.id in answer_names and isinstance(node.ctx, ast.Load)
                  and id(node) not in wrapped):
                problems.append(f"{name} ({gid}) line {node.lineno}: uses the student's {node.id!r} directly; "
                                f"call it through own_work({node.id}, <answer grade_id>) (td_lib.own_work)")
    return problems


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(env.REPO))
    except ValueError:
        return str(path)


def _cell_seconds(cell) -> float:
    t = cell.get("metadata", {}).get("execution", {})
    try:
        a, b = (datetime.fromisoformat(t[k].replace("Z", "+00:00"))
                for k in ("iopub.execute_input", "shell.execute_reply"))
    except (KeyError, ValueError):
        return 0.0
    return (b - a).total_seconds()


def run(path: Path, quick: bool, out: Path | None = None, grading: bool = False) -> int:
    """Execute a source (full, ``quick``, or as the autograder does with ``grading``: demo
    cells skipped); print the wall time (kernel start included), the slowest cells, errors."""
    nb = nbcore.read_source(path)
    if grading:
        nb = nbcore.solution_notebook(nb)
    executed, secs = nbcore.execute(nb, path.parent, quick=quick, grading=grading)
    mode = "grading" if grading else "quick" if quick else "full"
    out = out or env.BUILD / "executed" / path.parent.name / (path.stem + ("" if mode == "full" else f".{mode}")
                                                              + ".ipynb")
    nbcore.write(executed, out)
    errs = nbcore.error_cells(executed)
    print(f"{_rel(path)}: {mode} run {secs:.1f} s, {len(errs)} cell(s) with errors -> {out}")
    slow = sorted(((_cell_seconds(c), i, c) for i, c in enumerate(executed.cells) if c.cell_type == "code"),
                  key=lambda t: -t[0])[:8]
    for sec, i, c in slow:
        first = c.source.strip().splitlines()[0][:60] if c.source.strip() else ""
        print(f"  {sec:6.2f} s  cell {i:3d} {nbcore.grade_id(c) or '':26s} {first}")
    for c in errs:
        print(f"  [{nbcore.grade_id(c) or 'cell'}] {nbcore.error_text(c)}")
    return 1 if errs else 0


HELP = """\
The notebook sources' commands for authors: sync each Jupytext source (.py) to its paired
.ipynb, execute a source and report its time and errors, lint the nbgrader metadata and the
test cells (messages, the tick last, self-contained tests, demos), and rewrite sources in
canonical Jupytext form. `make notebooks` runs lint, then sync."""

EXAMPLES = """\
examples:
  python -m tools.build.nbtool lint                    # every source (as `make notebooks` does)
  python -m tools.build.nbtool run --quick course/source/cnn_lcn/cnn_lcn_1_exact_odes.py"""

_SUB = {
    "sync": ("""\
Write each source's paired notebook (.py -> .ipynb, with jupytext --update: outputs and
metadata of the notebook are kept). It refuses to overwrite a notebook edited after its
source, so that no edit made in JupyterLab is lost.""",
             ["python -m tools.build.nbtool sync", "python -m tools.build.nbtool sync course/source/cnn_lcn/*.py"]),
    "run": ("""\
Run one source with its solutions, as the course does (or, with --grading, as the
autograder runs a submission), and report its run time and the cells that raised. With
--out, the executed notebook is written there.""",
            ["python -m tools.build.nbtool run course/source/td2_7_learned_first/td2_7_1_two_moments.py",
             "python -m tools.build.nbtool run --quick --grading course/source/cnn_lcn/cnn_lcn_2_specialisation.py"]),
    "fmt": ("""\
Rewrite sources in canonical Jupytext form (the fixed point of a round trip through the
notebook format), so that a sync never changes a source. Prints each source it rewrote.
Sources already canonical are left untouched.""",
            ["python -m tools.build.nbtool fmt", "python -m tools.build.nbtool fmt course/source/cnn_lcn/cnn_lcn_1_exact_odes.py"]),
    "lint": ("""\
Check each source's nbgrader metadata, test cells (a message on every assert, the visible
part ending with its tick, only self-contained names), demo cells and imports of checks.
Prints one line per problem, or "metadata ok"; exit status 1 on a problem.""",
             ["python -m tools.build.nbtool lint",
              "python -m tools.build.nbtool lint course/source/cnn_lcn/cnn_lcn_3_noise_floor_phase.py"]),
}


def build_parser() -> argparse.ArgumentParser:
    raw = argparse.RawDescriptionHelpFormatter
    p = argparse.ArgumentParser(prog="python -m tools.build.nbtool", description=HELP, epilog=EXAMPLES, formatter_class=raw)
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND",
                           help="sync, run, fmt or lint (python -m tools.build.nbtool COMMAND --help)")

    def add(name: str, summary: str) -> argparse.ArgumentParser:
        text, examples = _SUB[name]
        return sub.add_parser(name, help=summary, description=text, formatter_class=raw,
                              epilog="examples:\n" + "\n".join(f"  {e}" for e in examples))

    sources = "notebook sources (course/source/<assignment>/<nb>.py; default: every source)"
    add("sync", "sources -> paired notebooks").add_argument("paths", nargs="*", type=Path, help=sources)
    r = add("run", "execute one source; report time and errors")
    r.add_argument("--quick", action="store_true",
                   help="quick mode, NBGRADER_EXECUTION set as nbgrader does (default: full size)")
    r.add_argument("--grading", action="store_true",
                   help="as the autograder runs a submission: solutions in, demo cells skipped (default: all cells)")
    r.add_argument("path", type=Path, help="the source to execute")
    r.add_argument("-o", "--out", type=Path, help="write the executed notebook here (default: nowhere)")
    add("fmt", "rewrite sources in canonical Jupytext form").add_argument("paths", nargs="*", type=Path, help=sources)
    add("lint", "check metadata and test cells").add_argument("paths", nargs="*", type=Path, help=sources)
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    if a.cmd == "sync":
        for path in a.paths or nbcore.sources():
            print("synced", _rel(sync(path)))
        return 0
    if a.cmd == "fmt":
        for path in a.paths or nbcore.sources():
            text = round_trip(path)
            if text != path.read_text():
                path.write_text(text)
                print("reformatted", _rel(path))
        return 0
    if a.cmd == "run":
        return run(a.path.resolve(), a.quick, a.out, a.grading)
    problems = [msg for path in (a.paths or nbcore.sources()) for msg in lint(path)]
    print("\n".join(problems) or "metadata ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
