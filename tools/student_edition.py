"""The student edition of td_lib: the library without the functions that answer a graded exercise.

    python -m tools.student_edition OUT      # writes OUT/td_lib and checks it

Generated from the one source (``td_lib/``), never edited by hand, using the registry of
exercise counterparts (``td_lib.own_work.COUNTERPARTS``):

- every td_lib function or method the registry names is absent: its ``def`` (with its
  decorators) is cut from the module that defines it, and its name from every ``import`` and
  ``__all__`` that re-exported it, so ``from td_lib.mixed_cumulant import kappa4_v`` fails and nothing is
  left to read, copy or call. The registry's general tools (``own_work.GENERAL_TOOLS``: building
  blocks, or formulas a statement prints) stay in the students' edition and go from the grading
  kernel's (``keep_general=False``), as do the functions ``python -m tools.delegates`` found a
  short delegate of an exercise could hand in (``own_work.DELEGATE_CUTS``);
- the registry itself is empty (there is nothing to switch off);
- no docstring or comment names an exercise: a line of a docstring or a comment that mentions
  one (``Exercise 7.3.C.3``) is dropped.

:func:`check` imports the edition in a fresh interpreter and verifies all three. The grading
sandbox (``tools/sandbox.py``) mounts the edition in place of ``td_lib``, so a submission's code
runs against it; the test runner (``tools/remote_tests.py``) keeps the full library.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tokenize
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "td_lib"
#: a mention of an exercise: "Exercise 7.3.C", "Exercises 7.3.B", a grade id such as "ex72A_kappa4"
NAMES_EXERCISE = re.compile(r"\bExercises?\s+\d|\bex(?:7\d\w*|[A-F])_\w+")


def handout_exercises(source: Path = SOURCE) -> list[str]:
    """The exercises whose counterparts the handout's edition of td_lib cuts: every one. A demo
    or engine of a released notebook that needs an exercise's answer takes the student's own
    function and shows a baked reference result until it works (``td_lib.own_work.demo_result``)."""
    return sorted(counterparts(source))


def _literal(source: Path, name: str):
    tree = ast.parse((source / "own_work.py").read_text())
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id == name:
            return ast.literal_eval(node.value)
    raise ValueError(f"td_lib/own_work.py defines no {name} literal")


def counterparts(source: Path = SOURCE) -> dict[str, tuple[str, ...]]:
    """The registry, read from ``own_work.py`` as a literal (tools do not import td_lib)."""
    return _literal(source, "COUNTERPARTS")


def general_tools(source: Path = SOURCE) -> set[str]:
    """Registry names the edition keeps (``own_work.GENERAL_TOOLS``: blocked while graded only)."""
    return set(_literal(source, "GENERAL_TOOLS"))


# Run in a fresh interpreter (tools import no td_lib): ``package.module.attr[.attr]`` to its
# object, None when it does not import -- as td_lib.own_work resolves the registry's names.
_RESOLVE = r'''
import importlib, inspect, json, pkgutil, sys
def resolve(dotted):
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None
'''
_LOCATE = _RESOLVE + r'''
out = {}
for dotted in json.loads(sys.argv[1]):
    obj = inspect.unwrap(resolve(dotted))
    out[dotted] = [inspect.getsourcefile(obj), obj.__qualname__]
print(json.dumps(out))
'''


def locate(names: list[str], python: str = sys.executable) -> dict[str, tuple[str, str]]:
    """dotted name -> (file that defines it, qualified name there), asked of a fresh interpreter."""
    out = subprocess.run([python, "-c", _LOCATE, json.dumps(names)], capture_output=True, text=True, cwd=REPO)
    if out.returncode != 0:
        raise RuntimeError(f"cannot locate the counterparts:\n{out.stderr[-2000:]}")
    return {k: tuple(v) for k, v in json.loads(out.stdout).items()}


def _find(tree: ast.Module, qualname: str) -> ast.AST | None:
    body, node = tree.body, None
    for part in qualname.split("."):
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == part), None)
        if node is None:
            return None
        body = node.body
    return node


def _cut_definitions(text: str, qualnames: set[str]) -> str:
    tree = ast.parse(text)
    spans = []
    for q in qualnames:
        node = _find(tree, q)
        if node is None:
            raise ValueError(f"{q} is not defined here")
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        spans.append((first, node.end_lineno))
    lines = text.split("\n")
    for first, last in sorted(spans, reverse=True):
        del lines[first - 1:last]
    return "\n".join(lines)


def _drop_names(text: str, removed: set[str], module: str) -> str:
    """Remove ``removed`` from td_lib imports and from ``__all__`` in one module's source."""
    tree = ast.parse(text)
    lines = text.split("\n")
    edits = []  # (first line, last line, replacement lines)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").startswith("td_lib")):
            keep = [a for a in node.names if a.name not in removed]
            if len(keep) < len(node.names):
                indent = re.match(r"\s*", lines[node.lineno - 1]).group(0)
                new = [] if not keep else [indent + ast.unparse(ast.ImportFrom(module=node.module, names=keep,
                                                                                 level=node.level))]
                edits.append((node.lineno, node.end_lineno, new))
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets) \
                and isinstance(node.value, (ast.List, ast.Tuple)):
            elts = [e for e in node.value.elts if not (isinstance(e, ast.Constant) and e.value in removed)]
            if len(elts) < len(node.value.elts):
                value = ast.List(elts=elts, ctx=ast.Load())
                src = "__all__ = " + ast.unparse(value)
                edits.append((node.lineno, node.end_lineno, _wrap(src)))
    for first, last, new in sorted(edits, reverse=True):
        lines[first - 1:last] = new
    return "\n".join(lines)


def _wrap(src: str, width: int = 110) -> list[str]:
    if len(src) <= width:
        return [src]
    head, _, rest = src.partition("[")
    items = [s.strip() for s in rest.rstrip("]").split(",") if s.strip()]
    out, line = [], head + "["
    for it in items:
        piece = it + ", "
        if len(line) + len(piece) > width:
            out.append(line.rstrip())
            line = "    "
        line += piece
    out.append(line.rstrip().rstrip(",") + "]")
    return out


def _scrub(text: str) -> str:
    """Drop the docstring and comment lines of ``text`` that name an exercise."""
    tree = ast.parse(text)
    doc_lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
                doc_lines.update(range(first.lineno + 1, first.end_lineno))  # strictly inside the quotes
    comment_lines = {tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(text).readline)
                     if tok.type == tokenize.COMMENT}
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines, start=1):
        if NAMES_EXERCISE.search(line):
            if i in doc_lines:
                continue
            if i in comment_lines:
                code = line[:line.index("#")].rstrip()
                if not code:
                    continue
                line = code
            else:  # a docstring's first or last line, or a message: cut the mention itself
                line = re.sub(r"\s*\(?\b(?:Exercises?\s+\d[\w.]*|ex(?:7\d\w*|[A-F])_\w+)[^.;)]*\)?", "", line)
        out.append(line)
    return "\n".join(out)


def delegate_cuts(source: Path = SOURCE) -> dict[str, tuple[str, ...]]:
    """``own_work.DELEGATE_CUTS``: what ``python -m tools.delegates`` found an exercise's grading
    edition kept and a short delegate could hand in; the grading edition cuts it too."""
    return _literal(source, "DELEGATE_CUTS")


def cut_names(exercises=None, keep_general: bool = True, source: Path = SOURCE) -> list[str]:
    """The td_lib names an edition cuts: the counterparts of ``exercises`` (default: every one),
    without the general tools unless ``keep_general`` is False; a grading edition
    (``keep_general=False``) also cuts the delegates found for them (:func:`delegate_cuts`)."""
    keep = general_tools(source) if keep_general else set()
    registry = {ex: tuple(ns) for ex, ns in counterparts(source).items()}
    if not keep_general:
        for ex, ns in delegate_cuts(source).items():
            registry[ex] = registry.get(ex, ()) + tuple(ns)
    return sorted({n for ex, ns in registry.items() if exercises is None or ex in exercises
                   for n in ns if n.startswith("td_lib.") and n not in keep})


def build(out: Path, source: Path = SOURCE, python: str = sys.executable, exercises=None,
          keep_general: bool = True) -> Path:
    """Write the student edition to ``out/td_lib``; return that folder.

    ``exercises``: the answer ``grade_id`` s whose counterparts go (default: every exercise of the
    registry). The grader builds one edition per notebook, without the answers of the exercises
    that notebook grades: a statement may point to the library's version of an exercise another
    notebook grades (lesson 3 of CNN/LCN computes W with ``cl.J2``, the library's version of
    lesson 1's ``j2_erf``). ``keep_general=False`` cuts the general tools of those exercises too
    (``own_work.GENERAL_TOOLS``): the grading kernel's edition."""
    names = cut_names(exercises, keep_general, source)
    where = locate(names, python) if names else {}
    dest = Path(out) / "td_lib"
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    by_file: dict[Path, set[str]] = {}
    removed: set[str] = set()
    for dotted in names:
        file, qual = where[dotted]
        rel = Path(file).resolve().relative_to(Path(source).resolve())
        by_file.setdefault(dest / rel, set()).add(qual)
        if "." not in qual:
            removed.add(qual)
    for path, quals in by_file.items():
        path.write_text(_cut_definitions(path.read_text(), quals))
    for path in sorted(dest.rglob("*.py")):
        text = _drop_names(path.read_text(), removed, path.stem)
        if path.name == "own_work.py" and path.parent == dest:
            text = _empty_registry(text)
        path.write_text(_scrub(text))
    return dest


def _empty_registry(text: str) -> str:
    """``own_work.py`` with its tables keyed by exercise (``COUNTERPARTS``, ``DELEGATE_CUTS``) empty."""
    empty = {"COUNTERPARTS": "the student edition has no counterparts",
             "DELEGATE_CUTS": "nor the delegates found for them"}
    found = []
    for node in reversed(ast.parse(text).body):
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id in empty:
            lines = text.split("\n")
            lines[node.lineno - 1:node.end_lineno] = [
                f"{target.id}: dict[str, tuple[str, ...]] = {{}}  # {empty[target.id]}"]
            text = "\n".join(lines)
            found.append(target.id)
    if "COUNTERPARTS" not in found:
        raise ValueError("own_work.py: COUNTERPARTS not found")
    return text


_CHECK = _RESOLVE + r'''
import td_lib
assert td_lib.__file__.startswith(sys.argv[1]), td_lib.__file__
problems = []
mods = [m.name for m in pkgutil.walk_packages(td_lib.__path__, "td_lib.")]
for m in mods:
    try:
        importlib.import_module(m)
    except Exception as e:
        problems.append(f"{m} does not import: {type(e).__name__}: {e}")
for dotted in json.loads(sys.argv[2]):
    if resolve(dotted) is not None:
        problems.append(f"{dotted} is importable from the student edition")
from td_lib import own_work
if own_work.COUNTERPARTS:
    problems.append("own_work.COUNTERPARTS is not empty")
print(json.dumps(problems))
'''


def edition_env(edition: Path) -> dict[str, str]:
    """The environment of a Python that imports ``edition`` as td_lib (it comes first on the
    path, before the editable install of the full library)."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(Path(edition).parent)
    return env


def check(edition: Path, source: Path = SOURCE, python: str = sys.executable, exercises=None,
          keep_general: bool = True) -> list[str]:
    """What is wrong with a built edition (empty: nothing)."""
    edition = Path(edition)
    names = cut_names(exercises, keep_general, source)
    out = subprocess.run([python, "-s", "-c", _CHECK, str(edition.parent), json.dumps(names)],
                         capture_output=True, text=True, cwd=tempfile.gettempdir(), env=edition_env(edition))
    if out.returncode != 0:
        return [f"the student edition does not import: {out.stderr[-1500:]}"]
    problems = json.loads(out.stdout)
    for path in sorted(edition.rglob("*.py")):
        for i, line in enumerate(path.read_text().split("\n"), start=1):
            if NAMES_EXERCISE.search(line):
                problems.append(f"{path.relative_to(edition.parent)}:{i} names an exercise: {line.strip()[:100]}")
    return problems


def cached(exercises=None, source: Path = SOURCE, python: str = sys.executable, keep_general: bool = True) -> Path:
    """A checked edition for ``exercises`` (``keep_general``: see :func:`build`), built once per
    content of td_lib, of this generator and exercise set (in the temporary folder,
    ``td-editions/<hash>``); raises ``RuntimeError`` if unsound."""
    import hashlib

    h = hashlib.sha256(repr((sorted(exercises) if exercises is not None else None, keep_general)).encode())
    h.update(Path(__file__).read_bytes())  # a changed generator builds anew
    for p in sorted(Path(source).rglob("*.py")):
        h.update(str(p.relative_to(source)).encode() + b"\0" + p.read_bytes())
    root = Path(tempfile.gettempdir()) / "td-editions" / h.hexdigest()[:20]
    if not (root / "ok").exists():
        tmp = Path(tempfile.mkdtemp(prefix="build-", dir=root.parent if root.parent.exists() else None))
        edition = build(tmp, source, python, exercises, keep_general)
        problems = check(edition, source, python, exercises, keep_general)
        if problems:
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError("the student edition of td_lib is not sound:\n  " + "\n  ".join(problems))
        (tmp / "ok").write_text("checked\n")
        root.parent.mkdir(parents=True, exist_ok=True)
        try:
            tmp.rename(root)
        except OSError:  # built by another process meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
    return root / "td_lib"


def files(edition: Path) -> dict[str, bytes]:
    """The edition's files, relative to its folder (what the grader ships to its workers)."""
    return {str(p.relative_to(edition)): p.read_bytes() for p in sorted(edition.rglob("*.py"))}


HELP = """\
Write the student edition of td_lib into OUT/td_lib and check it: the library without the
functions that answer graded exercises (the counterparts registry of td_lib/own_work.py), an
empty registry, and no line naming an exercise; general tools (building blocks, formulas a
statement prints: own_work.GENERAL_TOOLS) stay. The handout's wheel is this edition; the
grading sandbox builds one per notebook, without that notebook's general tools too."""

EXAMPLES = """\
examples:
  python -m tools.student_edition /tmp/edition        # then: PYTHONPATH=/tmp/edition python ...
  python -m tools.student_edition /tmp/handout-lib --handout   # the same: what the handout's wheel holds"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.student_edition", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", type=Path, metavar="OUT", help="folder to write td_lib/ into (replaced if present)")
    p.add_argument("--handout", action="store_true",
                   help="the handout's edition (every exercise cut: the same as the default)")
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    exercises = handout_exercises() if a.handout else None
    dest = build(a.out, exercises=exercises)
    problems = check(dest, exercises=exercises)
    for line in problems:
        print(line, file=sys.stderr)
    n = len(list(dest.rglob("*.py")))
    verdict = "ok" if not problems else f"{len(problems)} problem(s)"
    print(f"student edition of td_lib in {dest} ({n} modules): {verdict}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
