"""The student edition of td_lib: the library without the functions that answer a graded exercise.

    python -m tools.build.student_edition OUT      # writes OUT/td_lib and checks it

Generated from the one source (``td_lib/``), never edited by hand, using the instructor's registry
of exercise counterparts (``checks/grading/exercises.py``, ``COUNTERPARTS``; td_lib names no exercise):

- every td_lib function or method the registry names is absent: its ``def`` (with its
  decorators) is cut from the module that defines it, and its name from every ``import`` and
  ``__all__`` that re-exported it, so ``from td_lib.mixed_cumulant import kappa4_v`` fails and nothing is
  left to read, copy or call. The registry's general tools (``GENERAL_TOOLS``: building
  blocks, or formulas a statement prints) stay in the students' edition and go from the grading
  kernel's (``keep_general=False``), as do the functions ``python -m tools.meta.delegates`` found a
  short delegate of an exercise could hand in (``DELEGATE_CUTS``);
- one verdict at home and at grading: the edition's ``own_work.COUNTERPARTS`` (empty in td_lib) is
  generated (:func:`home_registry`): it holds, per
  exercise, the names the students' edition keeps and the grading edition of the exercise's
  notebook cuts. While a test cell's ``own_work`` call runs at home, calling one raises
  ``DelegationError`` ("`k2_erf` calls `td_lib.cnn_lcn.integrals.J2`, which is not there when your
  work is graded: write it yourself"); outside it the tools work, for the demos;
- no docstring, comment or message names an exercise (:data:`NAMES_EXERCISE`: "(7.3.A.3)",
  "§7.3.C", "Exercise 7.2.C", "exercise A", grade ids): a parenthesis naming one goes, a
  docstring or comment line still naming one is dropped. Exercise numbers stay in the
  instructor's library;
- no docstring, comment or message states an answer: :func:`answer_signatures` reads, from the
  course's solutions themselves, the library method each solution calls (``scipy.special.ive``),
  its key formulas (normalised: ``-2beta_v^2/(1+beta_v)^2``) and the bounds its written part
  derives (``eta max(lam) < 2``), minus what the statement prints or calls;
  :func:`answers_in_text` finds them. The exceptions (:data:`ALLOWED`) are explicit, one file
  each, with the reason;
- a docstring example that uses a cut function (or an engine whose default is one) is dropped
  with its output, so the examples ``help()`` shows run.

:func:`check` imports the edition in a fresh interpreter and verifies all of it (in the editions
students read, by running every docstring example). The grading sandbox (``tools/grading/sandbox.py``)
mounts a notebook's grading edition in place of ``td_lib``, so a submission's code runs against
it; the test runner gets the students' edition (``tools/grading/grade.py``).
"""

from __future__ import annotations

import argparse
import ast
import functools
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path

from tools.nbcore import BEGIN_SOL, END_SOL  # the solution markers, in one place

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "td_lib"
#: the instructor's registry of exercises and the library functions that answer them
EXERCISES = REPO / "checks" / "grading" / "exercises.py"
#: an exercise's number or name: "7.3.A", "(7.3.A.3)", "§7.3.C", "7.1b.A", "7.3.A.1–2", "Exercise 7.2.C",
#: "exercise A", "Exercises 7.2.B/7.2.C", a grade id ("ex72A_kappa4", "test_exA_j2_erf")
_MENTION = (r"§?(?<![\w.])\d\.\d\w?\.[A-F](?![a-zA-Z])(?:\.\d+)?(?:\s*[–-]\s*\d+)?"
            r"|\b[Ee]xercises?\s+(?:\d[\w.]*|[A-F]\b)"
            r"|\b(?:test_)?ex(?:7\d\w*|[A-F])_\w+")
NAMES_EXERCISE = re.compile(_MENTION)
#: the assignments of the edition's ``own_work.py`` that hold grade ids as data (the keys test cells
#: pass to ``own_work``): the registry, exempt from the scrub and from the text check
REGISTRY = ("COUNTERPARTS",)


def handout_exercises() -> list[str]:
    """The exercises whose counterparts the handout's edition of td_lib cuts: every one. A demo
    or engine of a released notebook that needs an exercise's answer takes the student's own
    function and shows a baked reference result until it works (``td_lib.own_work.demo_result``)."""
    return sorted(counterparts())


def _literal(name: str, registry: Path | None = None):
    """One literal of the instructor's registry of exercises (``checks/grading/exercises.py``), read
    with ``ast``: tools import neither td_lib nor checks."""
    path = EXERCISES if registry is None else registry
    tree = ast.parse(path.read_text())
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id == name:
            return ast.literal_eval(node.value)
    raise ValueError(f"{path} defines no {name} literal")


def counterparts() -> dict[str, tuple[str, ...]]:
    """The registry: exercise -> the functions that answer it (``checks/grading/exercises.py``)."""
    return _literal("COUNTERPARTS")


def general_tools() -> set[str]:
    """Registry names the handout's edition keeps (``exercises.GENERAL_TOOLS``: off while graded only)."""
    return set(_literal("GENERAL_TOOLS"))


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


def _scrub(text: str, protect: tuple[str, ...] = ()) -> str:
    """Rewrite the docstring, comment and message lines of ``text`` that name an exercise.

    A parenthesis that names one goes whole (``(7.3.A.3)``, ``(Exercise 7.3.B, via ...)``); a
    docstring or comment line that still names one is dropped, a code line (a message) loses the
    mention itself. The assignments named in ``protect`` (the registry) are left as they are."""
    tree = ast.parse(text)
    doc_lines: set[int] = set()
    keep: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
                doc_lines.update(range(first.lineno + 1, first.end_lineno))  # strictly inside the quotes
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id in protect:
            keep.update(range(node.lineno, node.end_lineno + 1))
    comment_lines = {tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(text).readline)
                     if tok.type == tokenize.COMMENT}
    out = []
    for i, line in enumerate(text.split("\n"), start=1):
        if i not in keep and NAMES_EXERCISE.search(line):
            line = _PAREN.sub("", line)
        if i not in keep and NAMES_EXERCISE.search(line):
            if i in doc_lines:
                continue
            if i in comment_lines:
                code = line[:line.index("#")].rstrip()
                if not code:
                    continue
                line = code
            else:  # a docstring's first or last line, or a message: cut the mention itself
                line = re.sub(rf"\s*(?:{_MENTION})[^.;)\"']*", "", line)
        out.append(line)
    return "\n".join(out)


#: a parenthesis (no nested one) that names an exercise, with the space before it
_PAREN = re.compile(rf"\s*\((?:[^()]*?(?:{_MENTION}))[^()]*\)")


def delegate_cuts() -> dict[str, tuple[str, ...]]:
    """``exercises.DELEGATE_CUTS``: what ``python -m tools.meta.delegates`` found an exercise's grading
    edition kept and a short delegate could hand in; the grading edition cuts it too."""
    return _literal("DELEGATE_CUTS")


def cut_names(exercises=None, keep_general: bool = True) -> list[str]:
    """The td_lib names an edition cuts: the counterparts of ``exercises`` (default: every one),
    without the general tools unless ``keep_general`` is False; a grading edition
    (``keep_general=False``) also cuts the delegates found for them (:func:`delegate_cuts`)."""
    keep = general_tools() if keep_general else set()
    registry = {ex: tuple(ns) for ex, ns in counterparts().items()}
    if not keep_general:
        for ex, ns in delegate_cuts().items():
            registry[ex] = registry.get(ex, ()) + tuple(ns)
    return sorted({n for ex, ns in registry.items() if exercises is None or ex in exercises
                   for n in ns if n.startswith("td_lib.") and n not in keep})


def build(out: Path, source: Path = SOURCE, python: str = sys.executable, exercises=None,
          keep_general: bool = True) -> Path:
    """Write the student edition to ``out/td_lib``; return that folder.

    ``exercises``: the answer ``grade_id`` s whose counterparts go (default: every exercise of the
    registry). The grader builds one edition per notebook, without the answers of the exercises
    that notebook grades: a statement may point to the library's version of an exercise another
    notebook grades (lesson 3 of CNN/LCN computes W with ``cl.J2``, eq. 45 of lesson 1, derived in
    its exercise A). ``keep_general=False`` cuts the general tools of those exercises too
    (``GENERAL_TOOLS``): the grading kernel's edition."""
    names = cut_names(exercises, keep_general)
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
    needs_cut = removed | _needing(dest, removed)
    for path in sorted(dest.rglob("*.py")):
        text = _prune_examples(_drop_names(path.read_text(), removed, path.stem), needs_cut)
        if path.name == "own_work.py" and path.parent == dest:
            text = _scrub(_write_registry(text, home_registry()), REGISTRY)
        else:
            text = _scrub(text)
        path.write_text(text)
    return dest


def _callee(call: ast.Call) -> str:
    return getattr(call.func, "id", getattr(call.func, "attr", ""))


def _needing(dest: Path, removed: set[str]) -> set[str]:
    """The edition's functions that need a cut one by default: an engine whose default is a cut
    function (``validate.library_default("<name>", ...)``), and every function of td_lib calling such
    an engine by name (``sample(...)``, ``mixed_cumulant.sample(...)``: a docstring example calling
    one without the student's function fails). A name that module-level functions or methods of
    several modules define counts only when every one of them needs a cut function;
    the check runs the handout's doctests to catch what this misses."""
    defs: list[tuple[str, set[str], bool]] = []  # (name, bare names its body reads, calls a cut default)
    for path in sorted(dest.rglob("*.py")):
        tree = ast.parse(path.read_text())
        top = [n for n in tree.body] + [m for c in tree.body if isinstance(c, ast.ClassDef) for m in c.body]
        for fn in top:
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                reads = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | {
                    n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
                seed = any(isinstance(n, ast.Call) and _callee(n) == "library_default" and n.args
                           and isinstance(n.args[0], ast.Constant) and n.args[0].value in removed
                           for n in ast.walk(fn))
                defs.append((fn.name, reads, seed))
    tainted = [seed for _, _, seed in defs]
    needs: set[str] = set()
    while True:
        tainted = [t or bool(reads & needs) for t, (_, reads, _) in zip(tainted, defs)]
        names = {name for (name, _, _), t in zip(defs, tainted) if t}
        new = {n for n in names if all(t for (m, _, _), t in zip(defs, tainted) if m == n)} - needs
        if not new:
            return needs
        needs |= new


def _uses(source: str) -> tuple[set[str], set[str]]:
    """(names an example's code reads or imports, names it binds); unparsable code reads nothing."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(), set()
    reads, binds = set(), set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (binds if isinstance(n.ctx, ast.Store) else reads).add(n.id)
        elif isinstance(n, ast.Attribute):
            reads.add(n.attr)
        elif isinstance(n, ast.alias):
            reads.add(n.name.split(".")[-1])
            binds.add((n.asname or n.name).split(".")[0])
    return reads, binds


def _prune_examples(text: str, removed: set[str]) -> str:
    """Drop the docstring examples (with their output) that use a function the edition cut, or a
    name such an example bound; an ``Examples`` heading left without examples goes too."""
    import doctest

    tree = ast.parse(text)
    drop: set[int] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
                and isinstance(node.body[0], ast.Expr) and isinstance(getattr(node.body[0].value, "value", None), str)):
            continue
        doc, start = node.body[0].value.value, node.body[0].lineno
        tainted, kept, dropped = set(removed), 0, 0
        for ex in doctest.DocTestParser().get_examples(doc):
            reads, binds = _uses(ex.source)
            if reads & tainted:
                tainted |= binds
                n = ex.source.count("\n") + ex.want.count("\n")
                drop.update(range(start + ex.lineno, start + ex.lineno + n))
                dropped += 1
            else:
                kept += 1
        if kept == 0 and dropped:
            lines = doc.split("\n")
            for i, line in enumerate(lines[:-1]):
                if line.strip() == "Examples" and set(lines[i + 1].strip()) == {"-"}:
                    drop.update({start + i, start + i + 1})
    return "\n".join(line for i, line in enumerate(text.split("\n"), start=1) if i not in drop)


@functools.cache
def notebook_exercises(course: Path = REPO / "course") -> dict[str, list[str]]:
    """notebook -> the ``grade_id`` s of its answer cells, read from the course's sources (the
    exercises one grading edition is built for)."""
    from tools import nbcore

    return {p.stem: [nbcore.grade_id(c) for c in nbcore.read_source(p).cells if nbcore.is_answer(c)]
            for p in nbcore.sources(course=course)}


def home_registry(course: Path = REPO / "course") -> dict[str, tuple[str, ...]]:
    """The student edition's registry: exercise -> the td_lib names the handout keeps but the
    grading edition of the exercise's notebook cuts (general tools of that notebook's exercises,
    and the delegates found for them). Calling one of them while the exercise is graded at home
    raises the ``DelegationError`` a grading kernel would answer with an ``AttributeError``."""
    handout = set(cut_names(None, True))
    out = {}
    for answers in notebook_exercises(course).values():
        absent = tuple(n for n in cut_names(answers, False) if n not in handout)
        out.update({ex: absent for ex in answers if absent})
    return dict(sorted(out.items()))


def _write_registry(text: str, registry: dict[str, tuple[str, ...]]) -> str:
    """``own_work.py`` with its (empty) ``COUNTERPARTS`` replaced by ``registry``."""
    body = "".join(f"    {ex!r}: {names!r},\n" for ex, names in registry.items())
    new = {"COUNTERPARTS": ["# what the handout keeps and a grading edition does not: off while graded",
                            "COUNTERPARTS: dict[str, tuple[str, ...]] = {", *body.rstrip("\n").split("\n"), "}"]}
    found = []
    for node in reversed(ast.parse(text).body):
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id in new:
            lines = text.split("\n")
            lines[node.lineno - 1:node.end_lineno] = [x for x in new[target.id] if x.strip()]
            text = "\n".join(lines)
            found.append(target.id)
    if "COUNTERPARTS" not in found:
        raise ValueError("own_work.py: COUNTERPARTS not found")
    return text


_CHECK = _RESOLVE + r'''
import ast, builtins, doctest, types
import td_lib
assert td_lib.__file__.startswith(sys.argv[1]), td_lib.__file__
problems = []
mods = [m.name for m in pkgutil.walk_packages(td_lib.__path__, "td_lib.")]
loaded = {}
for m in mods:
    try:
        loaded[m] = importlib.import_module(m)
    except Exception as e:
        problems.append(f"{m} does not import: {type(e).__name__}: {e}")
for dotted in json.loads(sys.argv[2]):
    if resolve(dotted) is not None:
        problems.append(f"{dotted} is importable from the student edition")
from td_lib import own_work
registry, kept = json.loads(sys.argv[3]), json.loads(sys.argv[4])
if {k: list(v) for k, v in own_work.COUNTERPARTS.items()} != registry:
    problems.append("own_work.COUNTERPARTS is not the student edition's registry")
for dotted in kept:
    if resolve(dotted) is None:
        problems.append(f"{dotted} is in the registry but not in the edition")

def bound_names(tree):
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
    return out

def example_problems(test):
    env, where, out = dict(test.globs), f"{test.name} (docstring example)", []
    for ex in test.examples:
        try:
            tree = ast.parse(ex.source)
        except SyntaxError:
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
                for a in n.names:
                    try:
                        mod = importlib.import_module(n.module)
                        env[a.asname or a.name] = getattr(mod, a.name) if hasattr(mod, a.name) \
                            else importlib.import_module(n.module + "." + a.name)
                    except ImportError:
                        out.append(f"{where}: `from {n.module} import {a.name}` fails in this edition")
            elif isinstance(n, ast.Import):
                for a in n.names:
                    try:
                        mod = importlib.import_module(a.name)
                        env[a.asname or a.name.split(".")[0]] = mod if a.asname else importlib.import_module(
                            a.name.split(".")[0])
                    except ImportError:
                        out.append(f"{where}: `import {a.name}` fails in this edition")
        for name in bound_names(tree):
            env.setdefault(name, None)
        for n in ast.walk(tree):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in env \
                    and not hasattr(builtins, n.id):
                out.append(f"{where}: uses `{n.id}`, which this edition does not have")
            elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
                obj = env.get(n.value.id)
                if isinstance(obj, types.ModuleType) and obj.__name__.startswith("td_lib") \
                        and not hasattr(obj, n.attr):
                    out.append(f"{where}: uses `{obj.__name__}.{n.attr}`, which this edition does not have")
    return out

finder = doctest.DocTestFinder(exclude_empty=True)
for m, mod in loaded.items():
    for test in finder.find(mod):
        problems += example_problems(test)
        if sys.argv[5] == "1" and test.examples:  # run them: what a student's help() shows works
            import io
            out = io.StringIO()
            runner = doctest.DocTestRunner(verbose=False)
            runner.run(test, out=out.write, clear_globs=True)
            if runner.failures:
                problems.append(f"{test.name}: {runner.failures} docstring example(s) fail in this edition: "
                                + out.getvalue()[-600:])
print(json.dumps(problems))
'''


def edition_env(edition: Path) -> dict[str, str]:
    """The environment of a Python that imports ``edition`` as td_lib (it comes first on the
    path, before the editable install of the full library)."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(Path(edition).parent)
    return env


def check(edition: Path, python: str = sys.executable, exercises=None,
          keep_general: bool = True, signatures: list[Signature] | None = None,
          doctests: bool | None = None) -> list[str]:
    """What is wrong with a built edition (empty: nothing): a cut name that still imports, a module
    that does not, a registry other than :func:`home_registry` (in the handout's edition, a name of
    it the edition lacks), a docstring example using a name the edition lacks or (``doctests``,
    default: in the editions students read, ``keep_general``) failing when run, and every line
    :func:`answers_in_text` finds (``signatures``: default the signatures of ``exercises``,
    :func:`answer_signatures`)."""
    edition = Path(edition)
    names = cut_names(exercises, keep_general)
    registry = home_registry()
    kept = sorted({n for ns in registry.values() for n in ns}) if keep_general else []
    run_doctests = keep_general if doctests is None else doctests
    out = subprocess.run([python, "-s", "-c", _CHECK, str(edition.parent), json.dumps(names), json.dumps(registry),
                          json.dumps(kept), "1" if run_doctests else "0"],
                         capture_output=True, text=True, cwd=tempfile.gettempdir(), env=edition_env(edition))
    if out.returncode != 0:
        return [f"the student edition does not import: {out.stderr[-1500:]}"]
    if signatures is None:
        signatures = answer_signatures(exercises=exercises)
    return json.loads(out.stdout) + answers_in_text(edition, signatures)


def cached(exercises=None, source: Path = SOURCE, python: str = sys.executable, keep_general: bool = True) -> Path:
    """A checked edition for ``exercises`` (``keep_general``: see :func:`build`), built once per
    content of td_lib, of the course's sources, of this generator and exercise set (in the temporary folder,
    ``td-editions/<hash>``); raises ``RuntimeError`` if unsound."""
    import hashlib

    h = hashlib.sha256(repr((sorted(exercises) if exercises is not None else None, keep_general)).encode())
    h.update(Path(__file__).read_bytes())  # a changed generator builds anew
    for p in sorted(Path(source).rglob("*.py")):
        h.update(str(p.relative_to(source)).encode() + b"\0" + p.read_bytes())
    for p in sorted((REPO / "course" / "source").glob("*/*.py")):  # the registry and the answers come from them
        h.update(str(p.relative_to(REPO)).encode() + b"\0" + p.read_bytes())
    root = Path(tempfile.gettempdir()) / "td-editions" / h.hexdigest()[:20]
    if not (root / "ok").exists():
        tmp = Path(tempfile.mkdtemp(prefix="build-", dir=root.parent if root.parent.exists() else None))
        edition = build(tmp, source, python, exercises, keep_general)
        problems = check(edition, python, exercises, keep_general)
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
Write the student edition of td_lib into OUT/td_lib and check it: no function that answers a graded
exercise (the general tools of checks/grading/exercises.py stay), a registry that stops a graded function
calling a tool its grading edition lacks, no line naming an exercise or stating an answer (read
from the course's solutions), docstring examples that run. The handout's wheel is this edition;
the grading sandbox builds one per notebook, without that notebook's general tools too."""

EXAMPLES = """\
examples:
  python -m tools.build.student_edition /tmp/edition        # then: PYTHONPATH=/tmp/edition python ...
  python -m tools.build.student_edition /tmp/handout-lib --handout   # the same: what the handout's wheel holds"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.build.student_edition", description=HELP, epilog=EXAMPLES,
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



# ----------------------------------------------------------------------------- answers in the text
# What an exercise's solution gives away, read from the course's sources (the solution regions of
# code answer cells and the worked written answers), so that no edition's docstrings, comments or
# messages state it. Three kinds of signature: the library *method* the solution calls (a scipy
# function: ``ive``), its key *formulas* (code expressions, normalised: ``exp(-kappa)*I_l(kappa)``)
# and the *bounds* its written part derives (``0 < eta < 2/max(lam)``). What the statement prints
# (markdown and code outside solutions and tests) is no answer: formulas and bounds found there are
# dropped.

#: the libraries whose functions count as an exercise's method when a solution calls one
METHOD_MODULES = ("scipy.special", "scipy.integrate", "scipy.linalg", "scipy.optimize", "scipy.stats")
#: explicit exceptions: (exercise, signature key, file of the edition) -> why that file's mention
#: states no answer of that exercise; an entry no edition needs is an error
#: (``tests/test_edition_answers.py``). What a statement calls or prints is no signature in the
#: first place (:func:`notebook_signatures`).
ALLOWED: dict[tuple[str, str, str], str] = {
    ("ex71C_tanh", "quad", "td_lib/kernels.py"):
        "cosine_coefficients_quad (kept where §7.3 is not graded) integrates a kernel against cos(l phi) on "
        "[-pi, pi] and names the general quadrature routine it uses; the exercise's Gaussian expectation of "
        "tanh^2 is not in it",
}
#: symbols written differently in solutions and docstrings, to one spelling
_SYNONYMS = (("lam_hat", "lam"), ("lambda", "lam"), ("ell", "l"), ("math.", ""), ("np.", ""), ("numpy.", ""))
_LATEX = ((r"\\(?:mathbf|boldsymbol|mathrm|operatorname)\s*\{?(\w+)\}?", r"\1"),
          (r"\\hat\\lambda_\{?\\max\}?", "max(lam)"), (r"\\lambda_\{?\\max\}?", "max(lam)"),
          (r"\\hat\\lambda", "lam"), (r"\\ell", "l"), (r"\\left|\\right|\\big|\\Big|\\,|\\;|\\!|\\quad|\\qquad", ""),
          (r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"(\1)/(\2)"), (r"\\frac(\w)(\w)", r"\1/\2"),
          (r"\\frac(\w)\{([^{}]*)\}", r"\1/(\2)"), (r"e\^\{([^{}]*)\}", r"exp(\1)"), (r"\\exp", "exp"),
          (r"\\le(?:q)?\b", "<="), (r"\\ll\b", "<"), (r"\\max", "max"), (r"\\sqrt\{([^{}]*)\}", r"sqrt(\1)"),
          (r"\\operatorname\{(\w+)\}", r"\1"), (r"\\mathrm\{(\w+)\}", r"\1"), (r"\\(\w+)", r"\1"), (r"[{}]", ""))


@dataclass(frozen=True)
class Signature:
    """One thing a solution gives away: ``kind`` (method, formula, bound), the normalised ``key``
    searched for, and the solution's own spelling (``shown``)."""

    exercise: str
    kind: str
    key: str
    shown: str

    def found_in(self, text: str, flat: str | None = None) -> bool:
        """Does ``text`` (one line of a docstring, comment or message; ``flat``: its :func:`canon`)
        state this signature?"""
        if self.kind == "method":
            return _method_pattern(self.key).search(text) is not None
        flat = canon(text) if flat is None else flat
        if self.kind == "formula":
            return self.key in flat
        return _bound_pattern(self.key).search(flat) is not None


@functools.cache
def _method_pattern(name: str) -> re.Pattern:
    n = re.escape(name)
    return re.compile(rf"\b(?:scipy\.\w+|special|integrate|linalg|optimize|stats)\.{n}\b|\b{n}\s*\(|"
                      rf"`[\w.~]*\b{n}`|\b(?:via|with|using)\s+{n}\b")


@functools.cache
def _bound_pattern(key: str) -> re.Pattern:
    lhs, _, rhs = re.split(r"(<=?)", key, maxsplit=1)
    return re.compile(re.escape(lhs) + r".{0,40}?[<>]=?" + re.escape(rhs))  # the bound, or its negation


def canon(text: str) -> str:
    """``text`` normalised for comparing formulas: no spaces, ``*``, backticks, ``$`` or ``:math:``,
    ``**`` as ``^``, one spelling of the course's symbols, ``2.0`` as ``2``."""
    s = text.replace("**", "^").replace(":math:", "")
    for a, b in _SYNONYMS:
        s = re.sub(rf"\b{re.escape(a)}" if a[0].isalpha() and a[-1] == "." else rf"\b{re.escape(a)}\b", b, s)
    s = re.sub(r"(\d)\.0\b", r"\1", s)
    return re.sub(r"[\s*`$\\]", "", s)


def latex(text: str) -> str:
    """A LaTeX formula in the spelling of :func:`canon` (``e^{-\\kappa}`` -> ``exp(-kappa)``)."""
    for pat, rep in _LATEX:
        for _ in range(3):
            text = re.sub(pat, rep, text)
    return canon(text)


class _Plain(ast.NodeTransformer):
    """Code as a docstring writes it: ``x.max()`` -> ``max(x)``, no ``np.asarray``/``float``
    wrappers, ``ive(l, k)`` -> ``exp(-k)*I_l(k)``."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in ("max", "min", "sum") and not node.args \
                and not (isinstance(f.value, ast.Name) and f.value.id in ("np", "math", "numpy")):
            return ast.Call(func=ast.Name(id=f.attr), args=[f.value], keywords=[])
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        if name in ("asarray", "array", "float", "int") and node.args:
            return node.args[0]
        if name == "ive" and len(node.args) == 2:
            order, x = (ast.unparse(a) for a in node.args)
            return ast.parse(f"exp(-{x}) * I_{order}({x})", mode="eval").body
        return node


def _region_lines(src: str) -> set[int]:
    lines, inside, out = src.split("\n"), False, set()
    for i, line in enumerate(lines, start=1):
        if BEGIN_SOL in line:
            inside = True
        elif END_SOL in line:
            inside = False
        elif inside:
            out.add(i)
    return out


def _imports(cells) -> dict[str, str]:
    """local name -> dotted name, for every import of the notebook's code cells."""
    out: dict[str, str] = {}
    for src in cells:
        try:
            tree = ast.parse(_strip_markers(src))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                out.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
            elif isinstance(node, ast.Import):
                out.update({a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0]
                            for a in node.names})
    return out


def _dotted(func: ast.AST, imports: dict[str, str]) -> str:
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return ""
    return ".".join([imports.get(func.id, func.id)] + parts[::-1])


def _formulas(tree: ast.AST, lines: set[int]) -> list[str]:
    """The returned and assigned expressions of a solution region, as code (locals inlined too)."""
    out: list[str] = []
    for fn in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Module))]:
        env: dict[str, str] = {}
        for st in ast.walk(fn):
            if getattr(st, "lineno", 0) not in lines:
                continue
            value = st.value if isinstance(st, (ast.Return, ast.Assign)) else None
            if value is None or isinstance(value, (ast.Constant, ast.Name)):
                continue
            code = ast.unparse(_Plain().visit(value))
            inlined = code
            for name, expr in env.items():
                inlined = re.sub(rf"\b{name}\b", f"({expr})", inlined)
            out += [code, inlined]
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                env[st.targets[0].id] = code
    return out


def _is_key(flat: str) -> bool:
    """A formula worth looking for: long enough, and more than a name or a lone call."""
    return len(flat) >= 10 and len(re.findall(r"[-+/^]", flat)) >= 2


def _bounds(markdown: str) -> list[tuple[str, str]]:
    """``(key, shown)`` of each inequality of a written answer with a quotient on its right, as
    ``lhs<rhs`` and rearranged as ``lhs·den<num`` (``eta<2/max(lam)``, ``etamax(lam)<2``)."""
    out = []
    for m in re.finditer(r"\$\$?(.+?)\$\$?", markdown, re.S):
        for piece in re.split(r",|\\qquad|\\quad|;|\\text\{[^}]*\}", m.group(1)):
            parts = re.split(r"(<=?)", latex(piece))
            for i in range(0, len(parts) - 2, 2):
                lhs, op, rhs = parts[i], parts[i + 1], parts[i + 2]
                if not re.search(r"[a-z]", lhs) or "/" not in rhs:
                    continue
                out.append((f"{lhs}{op}{rhs}", piece.strip()))
                num, _, den = rhs.partition("/")
                if re.fullmatch(r"\d+", num):
                    out += [(f"{lhs}{den}{op}{num}", piece.strip()), (f"{den}{lhs}{op}{num}", piece.strip())]
    return out


def _sides(markdown: str) -> list[tuple[str, str]]:
    """``(key, shown)`` of each side of the equations and relations of a written answer's formulas
    that is a formula worth looking for (:func:`_is_key`)."""
    out = []
    for m in re.finditer(r"\$\$?(.+?)\$\$?", markdown, re.S):
        for piece in re.split(r",|\\qquad|\\quad|;|\\text\{[^}]*\}|=|<|>|\\approx|\\le|\\ge|\\sim", m.group(1)):
            key = latex(piece)
            if len(key) >= 12 and _is_key(key):
                out.append((key, piece.strip()))
    return out


def _strip_markers(src: str) -> str:
    return "\n".join(line for line in src.split("\n") if BEGIN_SOL not in line and END_SOL not in line
                     and "HIDDEN TESTS" not in line)


def _statement(cells) -> str:
    """What the released notebook prints (markdown, as :func:`latex` spells it, and code outside
    solutions and test cells): a formula or bound found there is no answer, nor a function its
    code calls."""
    parts = []
    for c in cells:
        if c.get("metadata", {}).get("nbgrader", {}).get("grade") and c.cell_type == "code" \
                and not c["metadata"]["nbgrader"].get("solution"):
            continue  # a test cell
        if c.get("metadata", {}).get("nbgrader", {}).get("solution"):
            if c.cell_type == "markdown":
                continue
            keep = _region_lines(c.source)
            parts.append("\n".join(x for i, x in enumerate(c.source.split("\n"), 1) if i not in keep))
        else:
            parts.append(latex(c.source) if c.cell_type == "markdown" else c.source)
    return "\n".join(parts)


def notebook_signatures(path: Path) -> list[Signature]:
    """The signatures of every exercise of one notebook source (see :class:`Signature`)."""
    from tools import nbcore

    cells = nbcore.read_source(path).cells
    imports = _imports([c.source for c in cells if c.cell_type == "code"])
    shown = _statement(cells)
    statement = canon(shown)
    found: list[Signature] = []
    for c in cells:
        meta = c.get("metadata", {}).get("nbgrader", {})
        if not meta.get("solution"):
            continue
        ex = meta["grade_id"]
        if c.cell_type == "markdown":
            found += [Signature(ex, "bound", k, s) for k, s in _bounds(c.source)]
            found += [Signature(ex, "formula", k, s) for k, s in _sides(c.source)]
            continue
        lines = _region_lines(c.source)
        try:
            tree = ast.parse(_strip_markers(c.source))
        except SyntaxError:
            continue
        kept = [i for i, x in enumerate(c.source.split("\n"), 1) if BEGIN_SOL not in x and END_SOL not in x]
        region = {j for j, i in enumerate(kept, 1) if i in lines}  # line numbers after the markers go
        for call in [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno in region]:
            dotted = _dotted(call.func, imports)
            if dotted.startswith(METHOD_MODULES):
                found.append(Signature(ex, "method", dotted.rsplit(".", 1)[1], dotted))
        found += [Signature(ex, "formula", canon(f), f) for f in _formulas(tree, region) if _is_key(canon(f))]
    out = []
    for s in dict.fromkeys(found):
        if s.kind == "method" and re.search(rf"\b{re.escape(s.key)}\s*\(", shown):
            continue
        if s.kind == "formula" and s.key in statement:
            continue
        if s.kind == "bound" and s.found_in("", statement):
            continue
        out.append(s)
    return out


def answer_signatures(course: Path = REPO / "course", exercises=None) -> list[Signature]:
    """The signatures of the exercises ``exercises`` (default: every one) of the course
    (:func:`notebook_signatures`; each notebook read once per process)."""
    return [s for s in _all_signatures(Path(course)) if exercises is None or s.exercise in exercises]


@functools.cache
def _all_signatures(course: Path) -> tuple[Signature, ...]:
    from tools import nbcore

    return tuple(s for p in nbcore.sources(course=course) for s in notebook_signatures(p))


def _text_lines(text: str, protect: tuple[str, ...] = ()) -> list[tuple[int, str]]:
    """(line, text) of every docstring, comment and string literal of a module (the lines of the
    assignments named in ``protect`` left out)."""
    tree = ast.parse(text)
    skip: set[int] = set()
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id in protect:
            skip.update(range(node.lineno, node.end_lineno + 1))
    out: list[tuple[int, str]] = []
    parts = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip or id(node) in parts:
            continue
        if isinstance(node, ast.JoinedStr):  # a message: its text with {} for each value
            joined = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            out += [(node.lineno + i, line) for i, line in enumerate(joined.split("\n"))]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out += [(node.lineno + i, line) for i, line in enumerate(node.value.split("\n"))]
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT and tok.start[0] not in skip:
            out.append((tok.start[0], tok.string))
    return out


def _allowed(s: Signature, rel: Path) -> bool:
    """Is ``s`` in ``rel`` (a file of an edition, ``td_lib/...``) an entry of :data:`ALLOWED`?"""
    return (s.exercise, s.key, rel.as_posix()) in ALLOWED


def answers_in_text(edition: Path, signatures: list[Signature] | None = None) -> list[str]:
    """Lines of ``edition``'s docstrings, comments and messages that name an exercise or state
    one of its answers (``signatures``, default: :func:`answer_signatures`)."""
    signatures = answer_signatures() if signatures is None else signatures
    problems = []
    for path in sorted(Path(edition).rglob("*.py")):
        protect = REGISTRY if path.name == "own_work.py" and path.parent == Path(edition) else ()
        where = path.relative_to(Path(edition).parent)
        for i, line in _text_lines(path.read_text(), protect):
            if NAMES_EXERCISE.search(line):
                problems.append(f"{where}:{i} names an exercise: {line.strip()[:100]}")
            flat = canon(line)
            for s in signatures:
                if s.found_in(line, flat) and not _allowed(s, path.relative_to(Path(edition).parent)):
                    problems.append(f"{where}:{i} states the {s.kind} {s.shown!r} of {s.exercise}: "
                                    f"{line.strip()[:100]}")
    return problems


if __name__ == "__main__":
    sys.exit(main())
