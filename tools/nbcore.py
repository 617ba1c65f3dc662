"""The cell vocabulary every part of ``tools`` uses: the ground floor, importing no other part.

Sources are Jupytext percent files under ``course/source/<assignment>/<notebook>.py``;
nbgrader metadata rides on the ``# %%`` lines (see docs/AUTHORING.md). Here: reading a source
(its baked values expanded), nbgrader's markers and the cell predicates (answer, test, demo,
runs code), grade ids, the hidden lines of a test cell and their text, stubs and solutions.
"""

from __future__ import annotations

import ast
import copy
import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jupytext
import nbformat
from nbclient import NotebookClient
from nbformat import NotebookNode

from tools import env

#: nbgrader's region delimiters, the one place these strings are spelled (``tests/test_one_place.py``):
#: a line holding one opens or closes a region, whatever stands before it (nbgrader's own test);
#: the course's sources write them after ``### `` (:data:`BEGIN_SOL` ... :data:`END_HIDDEN`).
SOLUTION_DELIMITERS = ("BEGIN SOLUTION", "END SOLUTION")
HIDDEN_DELIMITERS = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
#: what no released notebook, handout or feedback page may show
MARKERS = SOLUTION_DELIMITERS + HIDDEN_DELIMITERS
BEGIN_SOL, END_SOL = (f"### {d}" for d in SOLUTION_DELIMITERS)
BEGIN_HIDDEN, END_HIDDEN = (f"### {d}" for d in HIDDEN_DELIMITERS)
CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
TEXT_STUB = "YOUR ANSWER HERE"
CELL_TIMEOUT = 300  # seconds per cell when we execute notebooks ourselves


def sources(assignment: str | None = None, course: Path = env.COURSE) -> list[Path]:
    """The notebook sources ``<course>/source/<assignment>/*.py`` (every assignment when
    ``assignment`` is None; names starting with ``_`` skipped), sorted."""
    pattern = f"{assignment}/*.py" if assignment else "*/*.py"
    return sorted(p for p in (Path(course) / "source").glob(pattern) if not p.name.startswith("_"))


def assignments(course: Path = env.COURSE) -> list[str]:
    """The assignments of ``course``: folders of ``<course>/source`` holding a notebook source
    (the one definition; ``tools.build.pipeline`` re-exports it)."""
    return sorted({p.parent.name for p in sources(course=course)})


def read_source(path: str | Path) -> NotebookNode:
    """The notebook of a source, its baked regions expanded (:func:`expand_notebook`): every
    reader (editions, runner, site, handout, the paired ``.ipynb``) sees the ``name = literal``
    lines, while the ``.py`` holds one line per region."""
    nb = expand_notebook(jupytext.read(str(path)), path)
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3",
                                          "language": "python"})
    return nb


# ----------------------------------------------------------------------------------- baked values
#: the generated data files of the baked expected values, one per notebook (``checks/grading/bake.py``
#: writes them; instructor side, never beside the sources, which nbgrader copies into the release)
BAKED_VALUES = env.REPO / "checks" / "grading" / "baked_values"
BAKED_BEGIN, BAKED_END = "# BEGIN BAKED ", "# END BAKED "
BAKED_NOTE = "(expected values computed on the instructor's side; do not edit)"
_BAKED_LINE = re.compile(r"^(?P<indent>[ \t]*)# BAKED (?P<name>\w+)\b.*$")


def baked_literal(value: Any, width: int) -> list[str]:
    """``value`` (a Python literal) as the lines of its ``repr`` at most ``width`` wide where
    possible: short containers on one line, long ones with their items packed."""
    one = repr(value)
    if len(one) <= width or not isinstance(value, (list, tuple, dict)) or not value:
        return [one]
    if isinstance(value, dict):
        opening, closing = "{", "}"
        items = []
        for k, v in value.items():
            key = repr(k) + ": "
            sub = baked_literal(v, width - 1 - len(key))
            items.append([key + sub[0]] + [" " * len(key) + s for s in sub[1:]])
    else:
        opening, closing = ("[", "]") if isinstance(value, list) else ("(", ")")
        items = [baked_literal(v, width - 1) for v in value]
        if isinstance(value, tuple) and len(value) == 1:
            items[0][-1] += ","
    lines: list[str] = []
    for item in items:
        if len(item) == 1 and lines and len(lines[-1]) + 2 + len(item[0]) <= width - 1 and not lines[-1].endswith("]"):
            lines[-1] += ", " + item[0]
        else:
            if lines:
                lines[-1] += ","
            lines += item
    out = [opening + lines[0]] + [" " + ln for ln in lines[1:]]
    out[-1] += closing
    return out


def baked_region(name: str, values: dict[str, Any], indent: str = "") -> list[str]:
    """The lines of one expanded baked region, markers included: what a notebook's cell shows."""
    lines = [f"{indent}{BAKED_BEGIN}{name} {BAKED_NOTE}"]
    for var, value in values.items():
        if not var.isidentifier():
            raise ValueError(f"{name}: {var!r} is not a variable name")
        body = baked_literal(value, 110 - len(indent) - len(var) - 3)
        lines.append(f"{indent}{var} = {body[0]}")
        pad = indent + " " * (len(var) + 3)
        lines += [pad + b for b in body[1:]]
    lines.append(f"{indent}{BAKED_END}{name}")
    return lines


def baked_values(stem: str, data: Path = BAKED_VALUES) -> dict[str, dict[str, Any]]:
    """``{region: {variable: value}}`` of the notebook ``stem``'s data file (empty if none)."""
    path = Path(data) / f"{stem}.json"
    if not path.exists():
        return {}
    raw = json.loads(path.read_text())["regions"]
    return {name: {var: ast.literal_eval(text) for var, text in values.items()} for name, values in raw.items()}


def has_baked_lines(src: str) -> bool:
    return any(_BAKED_LINE.match(line) for line in src.split("\n"))


def expand_baked(src: str, values: dict[str, dict[str, Any]], where: str = "") -> str:
    """``src`` with each one-line ``# BAKED <name> (...)`` replaced by its expanded region."""
    out = []
    for line in src.split("\n"):
        m = _BAKED_LINE.match(line)
        if not m:
            out.append(line)
            continue
        name = m.group("name")
        if name not in values:
            raise ValueError(f"{where}: region {name} has no data in {BAKED_VALUES.relative_to(env.REPO)}"
                             f"/{Path(where).stem}.json (run python -m checks.grading.bake)")
        out += baked_region(name, values[name], m.group("indent"))
    return "\n".join(out)


def expand_notebook(nb: NotebookNode, path: str | Path, data: Path = BAKED_VALUES) -> NotebookNode:
    """Every code cell of ``nb`` (read from the source ``path``) with its baked regions expanded."""
    cells = [c for c in nb.cells if c.cell_type == "code" and has_baked_lines(c.source)]
    if cells:
        values = baked_values(Path(path).stem, data)
        for c in cells:
            c.source = expand_baked(c.source, values, str(path))
    return nb


def nbmeta(cell: NotebookNode) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def is_answer(cell) -> bool:
    return bool(nbmeta(cell).get("solution"))


def is_test(cell) -> bool:
    m = nbmeta(cell)
    return bool(m.get("grade")) and not m.get("solution") and cell.cell_type == "code"


def grade_id(cell) -> str | None:
    return nbmeta(cell).get("grade_id")


def strip_markers(src: str, begin: str, end: str, keep: bool) -> str:
    """Remove marker lines; keep (``keep=True``) or drop the region between them."""
    out, inside = [], False
    for line in src.split("\n"):
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        elif keep or not inside:
            out.append(line)
    return "\n".join(out)


def hidden_lines(source: str) -> set[int]:
    """The 1-based numbers of the lines of ``source`` (a test cell) in its hidden-test regions,
    marker lines included: a line holding ``BEGIN HIDDEN TESTS`` opens a region, one holding
    ``END HIDDEN TESTS`` closes it (lines as ``str.splitlines`` counts them).

    The one definition: the live-grading policy tells a failure in the hidden part of a cell by
    its line, :func:`secret_lines` takes the text of these lines.

    Examples
    --------
    >>> sorted(hidden_lines("a\\n### BEGIN HIDDEN TESTS\\nb\\n### END HIDDEN TESTS\\nc"))
    [2, 3, 4]
    """
    begin, end = HIDDEN_DELIMITERS
    out, inside = set(), False
    for i, line in enumerate(source.splitlines(), 1):
        if begin in line:
            inside = True
        if inside:
            out.add(i)
        if end in line:
            inside = False
    return out


def stub_region(src: str, stub: str) -> str:
    """Replace each solution region by ``stub`` at the BEGIN line's indentation (as nbgrader)."""
    out, inside = [], False
    for line in src.split("\n"):
        if BEGIN_SOL in line:
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out.extend(indent + s for s in stub.split("\n"))
        elif END_SOL in line:
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


def solution_notebook(nb: NotebookNode) -> NotebookNode:
    """The source with solution/hidden-test markers removed (what a perfect student runs)."""
    nb = copy.deepcopy(nb)
    for c in nb.cells:
        c.source = strip_markers(c.source, BEGIN_SOL, END_SOL, keep=True)
        c.source = strip_markers(c.source, BEGIN_HIDDEN, END_HIDDEN, keep=True)
    return nb


def stub_notebook(nb: NotebookNode) -> NotebookNode:
    """Solutions replaced by stubs, hidden tests kept (an inverted validation in-process)."""
    nb = copy.deepcopy(nb)
    for c in nb.cells:
        if is_answer(c):
            if BEGIN_SOL in c.source:
                c.source = stub_region(c.source, CODE_STUB if c.cell_type == "code" else TEXT_STUB)
            elif c.cell_type == "markdown":
                c.source = TEXT_STUB
        c.source = strip_markers(c.source, BEGIN_HIDDEN, END_HIDDEN, keep=True)
    return nb


@contextmanager
def environ(**kw: str | None) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in kw}
    try:
        for k, v in kw.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def execute(nb: NotebookNode, cwd: str | Path, *, quick: bool = False, grading: bool = False,
            timeout: int = CELL_TIMEOUT, allow_errors: bool = True) -> tuple[NotebookNode, float]:
    """Execute ``nb`` in a fresh python3 kernel with working directory ``cwd``.

    ``quick`` sets ``NBGRADER_EXECUTION=validate`` in the kernel, exactly as nbgrader does
    while validating/autograding, so demos shrink. Returns the executed notebook and the
    wall time. ``grading`` runs it as the autograder does: ``NBGRADER_EXECUTION=autograde``
    and cells tagged ``demo`` left out (``tools.grading.execute.GradingExecute``).

    Stream outputs are coalesced (nbclient's ``coalesce_streams``): the stdout (stderr)
    chunks of a cell become one stream each, with carriage-return overwrites applied, so a
    tqdm bar saves as its final line only (in JupyterLab the same ``\\r`` updates give a
    live bar).
    """
    nb = copy.deepcopy(nb)
    if grading:
        nb.cells = [c for c in nb.cells if not is_demo(c)]
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=allow_errors,
                            interrupt_on_timeout=True, coalesce_streams=True,
                            resources={"metadata": {"path": str(cwd)}})
    t0 = time.perf_counter()
    with environ(NBGRADER_EXECUTION="autograde" if grading else "validate" if quick else None):
        client.execute()
    return nb, time.perf_counter() - t0


def error_cells(nb: NotebookNode) -> list[NotebookNode]:
    return [c for c in nb.cells if c.cell_type == "code"
            and any(o.get("output_type") == "error" for o in c.get("outputs", []))]


def error_text(cell: NotebookNode) -> str:
    for o in cell.get("outputs", []):
        if o.get("output_type") == "error":
            return f"{o.get('ename')}: {o.get('evalue')}"
    return ""


def failed_tests(nb: NotebookNode) -> dict[str, str]:
    """grade_id -> error of every autograded test cell that raised."""
    return {grade_id(c): error_text(c) for c in error_cells(nb) if is_test(c)}


def write(nb: NotebookNode, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


# --------------------------------------------------------------- cell predicates of grading
MIN_LINE = 8  # shorter hidden lines ("else:", "pass") carry nothing worth hiding
DEMO_TAG = "demo"
DEMO_NOTE = "[demo cell: not run while grading; run the notebook to see it]\n"


def is_demo(cell) -> bool:
    """A code cell tagged ``demo`` (skipped while grading: ``tools.grading.steps.SkipDemo``)."""
    return cell.get("cell_type") == "code" and DEMO_TAG in cell.get("metadata", {}).get("tags", [])


def secret_lines(source: str) -> set[str]:
    """The stripped source lines inside the hidden-test regions of ``source`` (the lines of
    :func:`hidden_lines`, marker lines left out), of :data:`MIN_LINE` characters or more."""
    lines = source.splitlines()
    return {s for i in hidden_lines(source) if len(s := lines[i - 1].strip()) >= MIN_LINE
            and HIDDEN_DELIMITERS[0] not in s and HIDDEN_DELIMITERS[1] not in s}


def runs_code(cell) -> bool:
    """A cell nbclient would send to the kernel (code, not blank)."""
    return cell.get("cell_type") == "code" and bool(cell.get("source", "").strip())
