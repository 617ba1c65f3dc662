"""Count, by pattern, the places where one idea is written more than once (issue "one idea, one
place").

Prints five counts over ``td_lib`` (and ``tools`` for long functions):

- **run-result types**: public classes whose fields include a time axis (``t``, ``steps``,
  ``epochs``, ``times``, ``alpha``, ``tau``) or whose name ends in Run, Result, History, Log or
  Trajectory, and that do not derive from another counted class; plus public trainers
  (``train*``, ``*run*``, ``integrate*``, ``simulate*``) annotated ``-> dict`` and functions that
  return a dict literal with a time-axis key (a result type in all but name);
- **schedule implementations**: functions that turn ``geomspace``/``logspace`` into recording
  times (``astype``, ``round``, ``floor``, ``unique``, a leading ``0``);
- **hand-updated bars**: calls ``<bar>.update(n)`` on a progress bar (the bar class of
  ``td_lib.core.runtime`` aside);
- **long functions**: function bodies over 80 lines, docstring excluded;
- **function definitions held in JSON**: ``def`` statements inside strings of ``checks`` JSON.

Usage: ``python -m tools.meta.code_counts [--json]``. Reads the source with :mod:`ast`; imports
nothing from td_lib.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TIME_AXES = {"t", "steps", "epochs", "times", "alpha", "tau"}
LONG = 80
_RESULT_NAME = re.compile(r"(Run|Result|History|Log|Trajectory)$")
_RUNNER = re.compile(r"(train|run|integrate|simulate)")


def _files(*tops: str) -> list[Path]:
    return sorted(p for top in tops for p in (REPO / top).rglob("*.py") if "__pycache__" not in p.parts)


def _fields(cls: ast.ClassDef) -> set[str]:
    names = {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    for n in cls.body:  # __init__ assignments self.x = ...
        if isinstance(n, ast.FunctionDef) and n.name == "__init__":
            for a in ast.walk(n):
                if isinstance(a, ast.Attribute) and isinstance(a.ctx, ast.Store) and \
                        isinstance(a.value, ast.Name) and a.value.id == "self":
                    names.add(a.attr)
    return names


def result_types(files: list[Path]) -> list[str]:
    """Root run-result classes and dict-returning runners, as ``file:line name``."""
    classes: dict[str, tuple[str, list[str]]] = {}
    dicts = []
    for f in files:
        tree = ast.parse(f.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_") and (
                    _fields(node) & TIME_AXES or _RESULT_NAME.search(node.name)):
                bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
                classes[node.name] = (f"{f.relative_to(REPO)}:{node.lineno} {node.name}", bases)
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                if _RUNNER.match(node.name) and isinstance(node.returns, ast.Name) and node.returns.id == "dict":
                    dicts.append(f"{f.relative_to(REPO)}:{node.lineno} {node.name} (dict)")
                    continue
                for r in ast.walk(node):
                    if isinstance(r, ast.Return) and isinstance(r.value, ast.Dict):
                        keys = {k.value for k in r.value.keys if isinstance(k, ast.Constant)}
                        if keys & TIME_AXES and len(keys) > 2:
                            dicts.append(f"{f.relative_to(REPO)}:{node.lineno} {node.name} (dict)")
                            break
    roots = [where for name, (where, bases) in classes.items() if not any(b in classes for b in bases)]
    # the record itself is a root; a class deriving from a counted class is not
    return sorted(roots) + sorted(dicts)


_SCHED = re.compile(r"\b(geomspace|logspace)$")
_UNIQUE_STEPS = re.compile(r"unique\(np\.r_\[")
_TO_TIMES = re.compile(r"astype\(|np\.round\(|np\.floor\(|np\.unique\(|r_\[0|\[\[0\.?0?\]")


def schedules(files: list[Path]) -> list[str]:
    """Functions that build recording times: ``geomspace``/``logspace`` turned into times (rounded,
    floored, made unique, or preceded by time 0), or ``unique(r_[...])`` of steps; ``file:line name``."""
    out = []
    for f in files:
        text = f.read_text()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            first = node.body[1] if len(node.body) > 1 and _is_docstring(node.body[0]) else node.body[0]
            body = "\n".join(lines[first.lineno - 1: node.end_lineno])  # the code, docstring excluded
            logs = any(isinstance(c, ast.Call) and _SCHED.search(ast.unparse(c.func)) for c in ast.walk(node))
            if (logs and _TO_TIMES.search(body)) or _UNIQUE_STEPS.search(body):
                out.append(f"{f.relative_to(REPO)}:{node.lineno} {node.name}")
    return out


def hand_bars(files: list[Path]) -> list[str]:
    """Calls ``<bar>.update(n)``: a progress bar advanced by hand."""
    out = []
    for f in files:
        if f.name == "runtime.py" and f.parent.name == "core":  # the bar itself
            continue
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update" \
                    and isinstance(node.func.value, ast.Name) and "bar" in node.func.value.id.lower():
                out.append(f"{f.relative_to(REPO)}:{node.lineno}")
    return out


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _body_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = fn.body
    if body and _is_docstring(body[0]):
        doc = body[0]
        n_doc = doc.end_lineno - doc.lineno + 1
    else:
        n_doc = 0
    return fn.end_lineno - fn.lineno + 1 - n_doc


def long_functions(files: list[Path]) -> list[str]:
    out = []
    for f in files:
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _body_lines(node) > LONG:
                out.append(f"{f.relative_to(REPO)}:{node.lineno} {node.name} ({_body_lines(node)} lines)")
    return out


def json_defs() -> list[str]:
    out = []
    for f in sorted((REPO / "checks").rglob("*.json")):
        n = len(re.findall(r"\bdef \w+\(", f.read_text()))
        if n:
            out.append(f"{f.relative_to(REPO)}: {n}")
    return out


def counts() -> dict[str, list[str]]:
    lib = _files("td_lib")
    return {"result types": result_types(lib), "schedule implementations": schedules(lib),
            "hand-updated bars": hand_bars(lib), f"functions over {LONG} lines": long_functions(lib + _files("tools")),
            "function definitions in JSON": json_defs()}


HELP = """\
Count, by pattern, the places where one idea is written more than once in td_lib and tools,
in five kinds: run-result types, schedule implementations, hand-updated progress bars, long functions,
and function definitions held in JSON. Reads the source with ast; imports nothing from td_lib.
The module docstring (python -m pydoc tools.meta.code_counts) says what each pattern matches."""

EXAMPLES = """\
examples:
  python -m tools.meta.code_counts          # one count per line
  python -m tools.meta.code_counts -v       # and every place counted"""


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m tools.meta.code_counts", description=HELP,
                                 epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="print the lists as JSON (default: a table)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every place counted (default: counts only)")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    c = counts()
    if args.json:
        print(json.dumps(c, indent=1))
        return 0
    for k, v in c.items():
        n = sum(int(x.rsplit(": ", 1)[1]) for x in v) if k.endswith("JSON") else len(v)
        print(f"{k:32s} {n}")
        if args.verbose:
            for x in v:
                print(f"    {x}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
