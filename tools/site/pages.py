"""Build the course site, in two editions: a home page and one page per notebook, offline.

    python -m tools.site.pages [--notebooks DIR] [--out DIR] [--student-out DIR] [--edition E]

Reads the executed solutions notebooks ``<notebooks>/<assignment>/<nb>.ipynb`` written by
``python -m tools.build.render`` (default ``solutions/``; nothing is executed again), stages
them with the home page of ``site/`` and runs Sphinx (myst-nb, execution off;
sphinx-book-theme) once per edition:

* the **solutions edition** (default ``solutions/site/``, sources ``build/site-src/``): every
  answer folded under a bar that names the part it answers;
* the **student edition** (default ``build/site-student/``, sources ``build/site-student-src/``),
  to publish before the deadline: statements, readings and demos, no answer. Written answers
  become a box "Your answer — 7.3.A.2", code answers the stub of the released notebook (from
  ``course/source``), test cells lose their outputs, and a cell whose output is computed from
  an answer (:func:`reveals`) keeps its code but not its output.

Open ``<out>/index.html``; either folder can be copied anywhere.

Staging does, per notebook:

* **title**: the page title is the notebook's section title: the first level-1 heading
  that starts with a section number (``7.1 Two moments ...``), else the first one. When a
  notebook has several level-1 headings, the title is put on top and the others become
  level-2 sections, so the page, its ``<title>`` and the sidebar carry that title.
* **one fold** for everything folded, a native ``<details>`` (keyboard and screen readers
  work without JavaScript): every nbgrader answer cell under a bar labelled with the part it
  answers (:func:`solution_label`: ``Solution — 7.3.A.2``, ``Solution — 7.3.A (code:
  gd_step_bound, gd_efold_steps)``), and every autograded test cell under ``What the
  autograder checks — 7.3.A (...)`` (:func:`autograder_label`). Written answers use the
  ``td-fold`` directive, code cells myst-nb's ``hide-cell``; both render through
  :func:`sphinx_setup`.
* **progress bars**: tqdm lines are removed from the outputs (:func:`strip_progress`).
* **figures**: every image output gets a caption and an alt text from ``site/figures.toml``
  (:func:`figure_table`), keyed by notebook and a piece of the figure cell's source; a figure
  without an entry falls back to the titles its code sets, and the build lists it.
* **anchors** before every ``Exercise``/``Demo`` heading and every ``Readings`` heading,
  for the exercise and reading index of the home page.

Math is typeset in the browser by MathJax 3 (SVG output, a single file) copied from the
``sphinx-mathjax-offline`` wheel into ``_static/mathjax/`` (:func:`mathjax_dir`). nbgrader's
feedback pages need no script: their maths is MathML written when they are generated
(:mod:`tools.site.feedback_page`: its exporter, template ``tools/templates/td_feedback`` and the
nbgrader configuration ``course/nbgrader_config.py`` applies, without importing this module).
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import html
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import time
import tomllib
from base64 import b64decode
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from docutils import nodes as docutils_nodes

REPO = Path(__file__).resolve().parents[2]
SITE = REPO / "site"
OUT = REPO / "solutions" / "site"
NOTEBOOKS = REPO / "solutions"
STAGE = REPO / "build" / "site-src"
STUDENT_OUT = REPO / "build" / "site-student"
STUDENT_STAGE = REPO / "build" / "site-student-src"
SOURCE = REPO / "course" / "source"
FIGURES = SITE / "figures.toml"
MATHJAX_FILE = "tex-svg-full.js"
EDITIONS = ("solutions", "student")
AUTOGRADER = "What the autograder checks"
#: calls that give a demo the course's reference result while the student's function is not
#: written (td_lib.own_work): a demo that reaches an answer only through them shows what a
#: student's own notebook shows before the answer is written, so it reveals nothing
FALLBACK_CALLS = ("demo_result", "student_or")

ASSIGNMENT_TITLES = {
    "td2_7_learned_first": "What is learned first (§7)",
    "cnn_lcn": "CNN vs LCN",
}

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_SECTION_NUMBER = re.compile(r"^§?\s*\d+(\.\d+)*[a-z]?\b")
_EXERCISE = re.compile(r"^(#{1,6})\s+((?:Exercise|Demo)\s+(§?[0-9A-Za-z.]*[0-9A-Za-z]))\b(.*)$")
_READINGS = re.compile(r"^(#{1,6})\s+(Readings?)\s*$")
_GID = re.compile(r"^ex(?:(\d)(\d)(b?))?([A-Z])_(.*)$")
# one line of a tqdm bar: "desc: 100%|####| 100/100 [00:00<00:00, 3237.49it/s]", or without
# a total "desc: 123it [00:01, 99.9it/s]"
_PROGRESS = re.compile(r"^(?:[^\n]*?:\s*)?(?:\d{1,3}%\|[^|\n]*\|\s*[\d.]+[kMGT]?/(?:[\d.]+[kMGT]?|\?)"
                       r"|[\d.]+[kMGT]?(?:it|B)\s)\s*\[[^\]\n]*\]\s*$")


# ----------------------------------------------------------------------------- mathjax
def mathjax_dir() -> Path:
    """Folder of the MathJax 3 distribution shipped by ``sphinx-mathjax-offline``."""
    spec = importlib.util.find_spec("sphinx-mathjax-offline")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("sphinx-mathjax-offline is not installed: run `make setup`")
    path = Path(list(spec.submodule_search_locations)[0]) / "static" / "mathjax"
    if not (path / MATHJAX_FILE).exists():
        raise RuntimeError(f"{path / MATHJAX_FILE} missing from sphinx-mathjax-offline")
    return path


# ------------------------------------------------------------------------------ labels
def _lines_outside_fences(src: str):
    """(index, line, outside) for each line of a markdown source."""
    inside = None
    for i, line in enumerate(src.split("\n")):
        m = _FENCE.match(line)
        if m:
            if inside is None:
                inside = m.group(1)[0] * 3
                yield i, line, False
                continue
            if line.strip().startswith(inside):
                inside = None
                yield i, line, False
                continue
        yield i, line, inside is None


def headings(src: str) -> list[tuple[int, int, str]]:
    """(line index, level, text) of the markdown headings of ``src``."""
    out = []
    for i, line, outside in _lines_outside_fences(src):
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line) if outside else None
        if m:
            out.append((i, len(m.group(1)), m.group(2)))
    return out


def page_title(nb) -> str:
    """The section title of a notebook (see the module docstring)."""
    h1 = [text for c in nb.cells if c.cell_type == "markdown"
          for _i, level, text in headings(c.source) if level == 1]
    if not h1:
        raise ValueError("notebook has no level-1 heading")
    return next((t for t in h1 if _SECTION_NUMBER.match(t)), h1[0])


def _nbgrader(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _exercise_from_gid(gid: str) -> tuple[str | None, str]:
    """``ex73A_q2_answer`` -> (``7.3.A``, ``q2_answer``); ``exD_alpha`` -> (``D``, ...)."""
    m = _GID.match(gid or "")
    if not m:
        return None, gid or ""
    major, minor, b, letter, rest = m.groups()
    ex = f"{major}.{minor}{b}.{letter}" if major else letter
    return ex, rest


def solution_label(cell, exercise: str | None) -> str:
    """The bar label of an answer cell: ``Solution — <exercise>.<part>`` (or the exercise
    and what the cell holds), from the enclosing ``Exercise`` heading and the grade_id."""
    gid = _nbgrader(cell).get("grade_id", "")
    from_gid, rest = _exercise_from_gid(gid)
    ex = exercise or from_gid or "exercise"
    shown = ex if re.match(r"^§?\d", ex) else f"Exercise {ex}"
    if cell.cell_type == "code":
        names = re.findall(r"^(?:def|class)\s+(\w+)", cell.source, re.M)
        what = ", ".join(names[:3]) + (", …" if len(names) > 3 else "") if names else gid
        return f"Solution — {shown} (code: {what})"
    m = re.match(r"^q?(\d+)_(?:answer|derivation)$", rest)
    if m:
        digits = m.group(1)
        part = digits if len(digits) == 1 else f"{digits[0]}–{digits[-1]}"
        return f"Solution — {ex}.{part}" if shown == ex else f"Solution — {shown}.{part}"
    words = re.sub(r"_?answer$", "", rest).replace("_", " ").strip()
    return f"Solution — {shown} ({words})" if words else f"Solution — {shown}"


def _is_test(cell) -> bool:
    """An autograded test cell (nbgrader ``grade`` without ``solution``, code)."""
    meta = _nbgrader(cell)
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def autograder_label(cell, exercise: str | None) -> str:
    """The bar label of a test cell: ``What the autograder checks — <exercise> (<part>)``,
    from the enclosing ``Exercise`` heading and the grade_id (``test_ex72A_kappa4``)."""
    gid = _nbgrader(cell).get("grade_id", "")
    from_gid, rest = _exercise_from_gid(re.sub(r"^tests?_", "", gid))
    ex = exercise or from_gid
    shown = "" if ex is None else (ex if re.match(r"^§?\d", ex) else f"Exercise {ex}")
    what = rest.replace("_", " ").strip() if from_gid else gid
    label = f"{AUTOGRADER} — {shown}" if shown else AUTOGRADER
    return f"{label} ({what})" if what else label


# ------------------------------------------------------------------------------ outputs
def strip_progress(text: str) -> tuple[str, int]:
    """``text`` without the lines of tqdm progress bars (a line rewritten by carriage returns
    counts as what a terminal shows: its last part). Returns the text and how many lines went."""
    kept, gone = [], 0
    for line in text.split("\n"):
        shown = line.rstrip("\r").rsplit("\r", 1)[-1]
        if _PROGRESS.match(shown):
            gone += 1
        else:
            kept.append(shown)
    return "\n".join(kept), gone


def _image_outputs(cell) -> list[dict]:
    return [o for o in cell.get("outputs", [])
            if o.get("output_type") in ("display_data", "execute_result")
            and any(k.startswith("image/") for k in o.get("data", {}))]


def _image_key(output) -> str:
    """The name myst-nb gives the image file of an output: the sha256 of the bytes of the
    image type it shows (its HTML priority: SVG, then PNG, JPEG, GIF)."""
    data = output["data"]
    mime = next((m for m in ("image/svg+xml", "image/png", "image/jpeg", "image/gif") if m in data),
                next(k for k in data if k.startswith("image/")))
    content = data[mime]
    raw = ("\n".join(content.splitlines()).encode() if mime == "image/svg+xml" else b64decode(content))
    return hashlib.sha256(raw).hexdigest()


# ------------------------------------------------------------------------------ figures
@lru_cache(maxsize=4)
def _read_figure_table(path: str, mtime: float) -> dict[str, list[dict]]:
    entries = tomllib.loads(Path(path).read_text()).get("figure", [])
    table: dict[str, list[dict]] = {}
    for i, e in enumerate(entries):
        missing = [k for k in ("notebook", "match", "caption", "alt") if not str(e.get(k, "")).strip()]
        if missing:
            raise ValueError(f"{path}: figure entry {i + 1} lacks {', '.join(missing)}")
        table.setdefault(e["notebook"], []).append({**e, "image": int(e.get("image", 1))})
    return table


def figure_table(path: Path = FIGURES) -> dict[str, list[dict]]:
    """``site/figures.toml``: docname -> its figure entries (``match``, ``image``,
    ``caption``, ``alt``)."""
    if not path.exists():
        return {}
    return _read_figure_table(str(path), path.stat().st_mtime)


def _string_value(node) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "…" for v in node.values)
    return None


def figure_titles(src: str) -> list[str]:
    """The titles a figure cell sets (``suptitle``, ``set_title``, ``title``, ``set(title=)``),
    suptitles first: what the fallback caption of an undescribed figure is made of."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return []
    sup, other = [], []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        if name in ("suptitle", "set_title", "title") and node.args:
            value = _string_value(node.args[0])
            if value:
                (sup if name == "suptitle" else other).append(value)
        for kw in node.keywords:
            if kw.arg == "title" and name == "set":
                value = _string_value(kw.value)
                if value:
                    other.append(value)
    return [t.replace("\n", " ") for t in sup + other]


def _plain(text: str) -> str:
    """Caption text made readable without math rendering (for a fallback alt text)."""
    return re.sub(r"\s+", " ", re.sub(r"[$\\{}^_]", "", text)).strip()


def _describe_figures(cell, docname: str, entries: list[dict], used: dict[int, int], page: Page) -> None:
    """Caption and alt text of each image output of ``cell`` (see :func:`figure_table`);
    ``used`` counts the figure cells each entry matched."""
    images = _image_outputs(cell)
    if not images:
        return
    matching = [(i, e) for i, e in enumerate(entries) if e["match"] in cell.source]
    for i, _e in matching:
        used[i] = used.get(i, 0) + 1
    for n, output in enumerate(images, start=1):
        found = [e for _i, e in matching if e["image"] == n]
        if found:
            page.figures.append({"key": _image_key(output), "alt": found[0]["alt"].strip(),
                                 "caption": found[0]["caption"].strip(), "described": True})
            continue
        titles = figure_titles(cell.source)
        number = len(page.figures) + 1
        caption = "; ".join(titles[:3]) if titles else f"Figure {number} of this page"
        page.figures.append({"key": _image_key(output), "caption": caption, "described": False,
                             "alt": f"Plot: {_plain(caption)}" if titles else caption})
        page.figure_problems.append(f"{docname}: figure {number} ({'; '.join(titles[:2]) or 'no title'}) "
                                    f"has no entry in {FIGURES.relative_to(REPO)}")


# ------------------------------------------------------------------------------ student edition
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _stored(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _scan(stmt: ast.stmt) -> tuple[list[tuple[tuple[int, int], str, bool]], list[tuple[tuple[int, int], str]]]:
    """The names one top-level statement binds in the notebook's namespace, as (position,
    name, is_import), and the names it reads from it, as (position, name): reads inside a
    function, lambda or comprehension of their own locals are left out, and so are reads in
    the arguments of :data:`FALLBACK_CALLS`."""
    stores: list[tuple[tuple[int, int], str, bool]] = []
    loads: list[tuple[tuple[int, int], str]] = []

    def pos(n: ast.AST) -> tuple[int, int]:
        return getattr(n, "lineno", 0), getattr(n, "col_offset", 0)

    def visit(node: ast.AST, local: frozenset, inner: bool) -> None:
        if isinstance(node, _SCOPES):
            if not isinstance(node, ast.Lambda):
                if not inner:
                    stores.append((pos(node), node.name, False))
                for d in node.decorator_list:
                    visit(d, local, inner)
            a = node.args
            for d in [*a.defaults, *(k for k in a.kw_defaults if k is not None)]:
                visit(d, local, inner)
            params = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x}
            body = node.body if isinstance(node.body, list) else [node.body]
            own = frozenset(local | params | set().union(*(_stored(b) for b in body)))
            for b in body:
                visit(b, own, True)
            return
        if isinstance(node, ast.ClassDef):
            if not inner:
                stores.append((pos(node), node.name, False))
            for b in [*node.decorator_list, *node.bases, *node.body]:
                visit(b, local, True)
            return
        if isinstance(node, _COMPREHENSIONS):
            own = frozenset(local | set().union(*(_stored(g.target) for g in node.generators)))
            visit(node.generators[0].iter, local, inner)
            for g in node.generators:
                if g is not node.generators[0]:
                    visit(g.iter, own, True)
                for cond in g.ifs:
                    visit(cond, own, True)
            for part in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
                visit(part, own, True)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if not inner:
                stores.extend((pos(node), (a.asname or a.name).split(".")[0], True) for a in node.names)
            return
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in FALLBACK_CALLS:
            visit(node.func, local, inner)
            return  # its arguments reach the answers only through the fallback
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store) and not inner:
                stores.append((pos(node), node.id, False))
            elif isinstance(node.ctx, ast.Load) and node.id not in local:
                loads.append((pos(node), node.id))
            return
        for child in ast.iter_child_nodes(node):
            visit(child, local, inner)

    visit(stmt, frozenset(), False)
    return stores, loads


def answer_names(src: str) -> set[str]:
    """What an answer cell defines in the notebook's namespace (imports aside)."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return set()
    return {name for stmt in tree.body for _p, name, imported in _scan(stmt)[0] if not imported}


def reveals(src: str, tainted: set[str]) -> bool:
    """Whether a code cell computes with an answer: reads a name of ``tainted`` (what the
    answer cells define, and what cells that computed with them bound since) other than
    through :data:`FALLBACK_CALLS` (a function defined on top of an answer is tainted, not
    revealing, until it is called). Then its output, in the solutions run, shows what the
    answer gives. Updates ``tainted`` with what the cell binds (a name bound from clean
    values is clean again). A cell that does not parse reveals when it names a tainted name."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return any(re.search(rf"\b{re.escape(n)}\b", src) for n in tainted)
    revealed = False
    for stmt in tree.body:
        stores, loads = _scan(stmt)
        compound = not isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr))
        hit = any(n in tainted and not (compound and any(sp < lp and sn == n for sp, sn, _i in stores))
                  for lp, n in loads)
        names = {n for _p, n, _i in stores}
        if hit:
            # a definition computes nothing yet: calling it does (unless through a fallback)
            revealed |= not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            tainted |= names
        else:
            tainted -= names
    return revealed


def student_stubs(assignment: str, stem: str) -> dict[str, str]:
    """grade_id -> the code a student finds in an answer cell of the released notebook
    (nbgrader's stub in place of each solution region), from ``course/source``."""
    from tools import nbcore

    src = SOURCE / assignment / f"{stem}.py"
    if not src.exists():
        return {}
    out = {}
    for cell in nbcore.read_source(src).cells:
        gid = _nbgrader(cell).get("grade_id")
        if cell.cell_type == "code" and _nbgrader(cell).get("solution") and gid:
            code = nbcore.strip_markers(cell.source, nbcore.BEGIN_HIDDEN, nbcore.END_HIDDEN, keep=False)
            out[gid] = nbcore.stub_region(code, nbcore.CODE_STUB) if nbcore.BEGIN_SOL in code else nbcore.CODE_STUB
    return out


def _answer_box(label: str) -> str:
    return (f"```{{admonition}} {label.replace('Solution', 'Your answer', 1)}\n:class: td-answer\n\n"
            "Write it in this cell of your notebook, where it reads *YOUR ANSWER HERE*.\n```")


WITHHELD_NOTE = ("```{container} td-withheld\n*Output not shown in this edition: it is computed with "
                 "the solutions. Run the cell in your notebook once your answer is written.*\n```")


# ------------------------------------------------------------------------------ staging
@dataclass
class Page:
    assignment: str
    stem: str
    title: str
    docname: str
    edition: str = "solutions"
    exercises: list[tuple[str, str]] = field(default_factory=list)  # (label, heading text)
    readings: str | None = None  # label of its Readings section
    solutions: list[str] = field(default_factory=list)  # solution fold labels, in order
    checks: list[str] = field(default_factory=list)  # autograder fold labels, in order
    answers: list[str] = field(default_factory=list)  # student edition: answers left to write
    withheld: int = 0  # student edition: code cells shown without their outputs
    progress_lines: int = 0  # progress-bar lines removed from the outputs
    figures: list[dict] = field(default_factory=list)  # {"key", "alt", "caption", "described"}
    figure_problems: list[str] = field(default_factory=list)

    @property
    def images(self) -> int:
        return len(self.figures)


def _target(*parts: str) -> str:
    return "td-" + "-".join(re.sub(r"[^0-9A-Za-z]+", "-", p).strip("-").lower() for p in parts)


def _fence_for(text: str) -> str:
    longest = max((len(m.group(1)) for m in re.finditer(r"^\s*(`{3,})", text, re.M)), default=0)
    return "`" * max(4, longest + 1)


def _fold_markdown(src: str, label: str) -> str:
    """A written answer folded (``td-fold`` directive); a question above its ``**Solution``
    line (or a heading it starts with) stays outside."""
    lines = src.split("\n")
    start = next((i for i, ln in enumerate(lines) if re.match(r"^\s*\*\*Solution\b", ln)), None)
    if start is None:  # a leading heading never goes inside the fold
        start = 0
        while start < len(lines) and (not lines[start].strip() or lines[start].startswith("#")):
            start += 1
    before, body = "\n".join(lines[:start]).rstrip(), "\n".join(lines[start:]).strip()
    body = "\n".join(re.sub(r"^#{1,6}\s+(.*)$", r"**\1**", ln) if outside else ln
                     for _i, ln, outside in _lines_outside_fences(body))
    fence = _fence_for(body)
    fold = f"{fence}{{td-fold}} {label}\n:class: td-solution\n\n{body}\n{fence}"
    return f"{before}\n\n{fold}" if before else fold


def _fold_code(cell, label: str, kind: str) -> None:
    tags = cell.metadata.setdefault("tags", [])
    for tag in ("hide-cell", kind):
        if tag not in tags:
            tags.append(tag)
    cell.metadata["mystnb"] = {**cell.metadata.get("mystnb", {}), "code_prompt_show": label,
                               "code_prompt_hide": label}


def separate_display_math(src: str) -> str:
    """Blank lines around each ``$$`` display that starts a line inside a paragraph.

    MyST's dollarmath reads such a display as inline (``$$`` cannot interrupt a paragraph),
    which puts a ``<div>`` inside a ``<p>``: the browser then closes the paragraph early and
    the rest of it escapes its container (a folded solution shows it). As a block of its own
    it renders as in JupyterLab.
    """
    lines = src.split("\n")
    fenced = [not outside for _i, _ln, outside in _lines_outside_fences(src)]
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*(?:>\s*)?)\$\$(.*)$", lines[i])
        if fenced[i] or not m:
            out.append(lines[i])
            i += 1
            continue
        prefix, rest = m.group(1), m.group(2)
        end = i
        if "$$" not in rest:
            end = next((j for j in range(i + 1, len(lines)) if "$$" in lines[j]), i)
        closing = lines[end].rsplit("$$", 1)[1] if end > i else rest.split("$$", 1)[1]
        quote = prefix.strip()  # ">" inside a block quote
        if out and out[-1].strip() not in ("", quote):
            out.append(quote)
        out.extend(lines[i:end + 1])
        if not closing.strip() and end + 1 < len(lines) and lines[end + 1].strip() not in ("", quote):
            out.append(quote)
        i = end + 1
    return "\n".join(out)


def _unique(label: str, seen: dict[str, int]) -> str:
    seen[label] = seen.get(label, 0) + 1
    return label if seen[label] == 1 else f"{label} #{seen[label]}"


@dataclass
class _Staging:
    """What staging one notebook carries from one cell to the next (:func:`stage_notebook`)."""

    page: Page
    stem: str
    student: bool
    restructure: bool  # the title goes on top, the other level-1 headings become level 2
    stubs: dict[str, str]  # grade_id -> released code of an answer cell (student edition)
    entries: list[dict]  # the page's entries of site/figures.toml
    used: dict[int, int] = field(default_factory=dict)  # entry index -> figure cells it matched
    seen: dict[str, int] = field(default_factory=dict)  # fold label -> times used
    answers: set[str] = field(default_factory=set)  # names holding what an answer computes (:func:`reveals`)
    exercise: str | None = None  # the exercise or demo the cells belong to


def _needs_title_cell(nb, title: str) -> bool:
    """Whether the page title must be put on top: several level-1 headings, or the first
    markdown cell does not open with the title."""
    n_h1 = sum(1 for c in nb.cells if c.cell_type == "markdown"
               for _i, level, _t in headings(c.source) if level == 1)
    first_md = next((c for c in nb.cells if c.cell_type == "markdown"), None)
    first_is_title = first_md is not None and any(
        level == 1 and text == title for _i, level, text in headings(first_md.source)[:1])
    return n_h1 > 1 or not first_is_title


def _anchor_headings(cell, st: _Staging) -> None:
    """Separate display math, demote level-1 headings (``st.restructure``), put an anchor before
    every ``Exercise``/``Demo`` and the first ``Readings`` heading, and record them on the page."""
    cell.source = separate_display_math(cell.source)
    lines = cell.source.split("\n")
    found: list[tuple[str, str]] = []
    for i, level, text in reversed(headings(cell.source)):
        if st.restructure and level == 1:
            lines[i] = "#" + lines[i]
        m = _EXERCISE.match(lines[i])
        if m:
            label = _target(st.stem, m.group(3))
            if label not in {lab for lab, _ in st.page.exercises + found}:
                found.insert(0, (label, text))
                lines.insert(i, f"({label})=")
        elif _READINGS.match(lines[i]) and st.page.readings is None:
            st.page.readings = _target(st.stem, "readings")
            lines.insert(i, f"({st.page.readings})=")
    st.page.exercises.extend(found)
    cell.source = "\n".join(lines)


def _follow_exercise(source: str, st: _Staging) -> None:
    """The last ``Exercise``/``Demo`` heading of a markdown cell becomes the current exercise."""
    for _i, _level, text in headings(source):
        m = re.match(r"^(?:Exercise|Demo)\s+(§?[0-9A-Za-z.]*[0-9A-Za-z])\b", text)
        if m:
            st.exercise = m.group(1)


def _stage_answer(cell, st: _Staging):
    """An answer cell: folded under its ``Solution`` bar (solutions edition), or the released stub
    in its place (student edition, code); return the "Your answer" box that replaces it, if any."""
    import nbformat

    label = _unique(solution_label(cell, st.exercise), st.seen)
    if not st.student:
        st.page.solutions.append(label)
        if cell.cell_type == "markdown":
            cell.source = _fold_markdown(cell.source, label)
        else:
            _fold_code(cell, label, "td-solution")
        return None
    st.page.answers.append(label)
    if cell.cell_type == "code":
        st.answers |= answer_names(cell.source)
    gid = _nbgrader(cell).get("grade_id", "")
    if cell.cell_type == "code" and gid in st.stubs:
        cell.source, cell.outputs, cell.execution_count = st.stubs[gid], [], None
        return None
    return nbformat.v4.new_markdown_cell(_answer_box(label))


def _stage_test(cell, st: _Staging) -> None:
    """An autograded test cell: folded under its ``What the autograder checks`` bar; no outputs
    in the student edition."""
    label = _unique(autograder_label(cell, st.exercise), st.seen)
    st.page.checks.append(label)
    _fold_code(cell, label, "td-autograder")
    if st.student:
        cell.outputs, cell.execution_count = [], None


def _withhold(cell, st: _Staging) -> list:
    """Student edition: a code cell whose output is computed from an answer loses its outputs;
    return the note that follows it (none if nothing was withheld)."""
    import nbformat

    if st.student and cell.cell_type == "code" and reveals(cell.source, st.answers):
        if cell.get("outputs"):
            cell.outputs = []
            st.page.withheld += 1
            return [nbformat.v4.new_markdown_cell(WITHHELD_NOTE)]
    return []


def _clean_outputs(cell, st: _Staging) -> None:
    """A code cell's outputs without progress-bar lines (and without streams left empty), its
    figures described from site/figures.toml."""
    outputs = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            o["text"], gone = strip_progress(o.get("text", ""))
            st.page.progress_lines += gone
            if not o["text"].strip():
                continue
        outputs.append(o)
    cell.outputs = outputs
    _describe_figures(cell, st.page.docname, st.entries, st.used, st.page)


def _stage_cell(cell, st: _Staging) -> list:
    """The cells that stand for ``cell`` on the page: itself, an answer box in its place, or
    itself followed by a note that its output is withheld."""
    if cell.cell_type == "markdown":
        _anchor_headings(cell, st)
        _follow_exercise(cell.source, st)
    if _nbgrader(cell).get("solution"):
        box = _stage_answer(cell, st)
        if box is not None:
            return [box]
        staged = [cell]
    elif _is_test(cell):
        _stage_test(cell, st)
        staged = [cell]
    else:
        staged = [cell, *_withhold(cell, st)]
    if cell.cell_type == "code":
        _clean_outputs(cell, st)
    return staged


def _figure_problems(st: _Staging) -> list[str]:
    """The entries of site/figures.toml for this page that match several figure cells, or
    none (solutions edition only: the student edition may leave a figure out)."""
    problems = []
    for i, e in enumerate(st.entries):
        entry = f"{st.page.docname}: {FIGURES.relative_to(REPO)} entry match={e['match']!r} image={e['image']}"
        if st.used.get(i, 0) > 1:
            problems.append(f"{entry} matches {st.used[i]} figure cells: make it more specific")
        elif i not in st.used and not st.student:  # the student edition may leave a figure out
            problems.append(f"{entry} matches no figure")
    return problems


def stage_notebook(nb, assignment: str, stem: str, edition: str = "solutions",
                   stubs: dict[str, str] | None = None,
                   figures: dict[str, list[dict]] | None = None) -> tuple[object, Page]:
    """The notebook as the site shows it in ``edition``, and what the home page needs to
    know about it. ``stubs``: grade_id -> released code of an answer cell (student edition;
    default :func:`student_stubs`); ``figures``: the table of :func:`figure_table`."""
    import nbformat

    if edition not in EDITIONS:
        raise ValueError(f"edition {edition!r}: one of {EDITIONS}")
    student = edition == "student"
    nb = copy.deepcopy(nb)
    title = page_title(nb)
    page = Page(assignment, stem, title, f"{assignment}/{stem}", edition)
    if student and stubs is None:
        stubs = student_stubs(assignment, stem)
    entries = (figure_table() if figures is None else figures).get(page.docname, [])
    st = _Staging(page, stem, student, _needs_title_cell(nb, title), stubs or {}, entries)
    nb.cells = [staged for cell in nb.cells for staged in _stage_cell(cell, st)]
    page.figure_problems.extend(_figure_problems(st))
    if st.restructure:
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(f"# {title}"))
    nb.metadata.pop("jupytext", None)
    return nb, page


def _notebook_list() -> list[tuple[str, str]]:
    """(assignment, notebook) in the order of the route: assignments as in
    :data:`ASSIGNMENT_TITLES` (others after them), notebooks by name."""
    order = list(ASSIGNMENT_TITLES)
    found = {(p.parent.name, p.stem) for p in SOURCE.glob("*/*.py") if not p.name.startswith("_")}
    return sorted(found, key=lambda an: (order.index(an[0]) if an[0] in order else len(order),
                                         an[0], an[1]))


def _edition_text(text: str, edition: str) -> str:
    """Keep the blocks of ``site/index.md`` between ``<!-- edition: NAME -->`` and
    ``<!-- end edition -->`` whose NAME is ``edition``; drop the others and the markers."""
    def keep(m: re.Match) -> str:
        return m.group(2).strip("\n") if m.group(1) == edition else ""

    out = re.sub(r"<!-- edition: (\w+) -->\n(.*?)<!-- end edition -->\n?", keep, text, flags=re.S)
    return re.sub(r"\n{3,}", "\n\n", out)


def _home(pages: list[Page], edition: str = "solutions") -> str:
    text = _edition_text((SITE / "index.md").read_text(), edition)
    by_assignment: dict[str, list[Page]] = {}
    for p in pages:
        by_assignment.setdefault(p.assignment, []).append(p)
    toc = []
    for assignment, ps in by_assignment.items():
        toc.append(f"```{{toctree}}\n:caption: {ASSIGNMENT_TITLES.get(assignment, assignment)}\n"
                   f":maxdepth: 2\n:hidden:\n\n" + "\n".join(p.docname for p in ps) + "\n```")
    exercises = []
    for p in pages:
        if p.exercises:
            exercises.append(f"* {{doc}}`{p.docname}`\n"
                             + "\n".join(f"  * [{_md_text(text)}](#{label})"
                                          for label, text in p.exercises))
    readings = [f"* {{ref}}`{p.title} <{p.readings}>`" for p in pages if p.readings]
    return (text.replace("{{ toctree }}", "\n\n".join(toc))
            .replace("{{ exercises }}", "\n".join(exercises))
            .replace("{{ readings }}", "\n".join(readings)))


def _md_text(text: str) -> str:
    """Heading text usable as link text (its math stays math)."""
    return text.replace("[", "\\[").replace("]", "\\]")


def stage(notebooks: Path = NOTEBOOKS, stage_dir: Path = STAGE, edition: str = "solutions") -> list[Page]:
    """Write the Sphinx sources of ``edition`` (home page + staged notebooks + the captions
    and alt texts of the figures, ``figures.json``) into ``stage_dir``."""
    import nbformat

    if stage_dir.exists():
        shutil.rmtree(stage_dir)
    stage_dir.mkdir(parents=True)
    pages, missing = [], []
    table = figure_table()
    for assignment, stem in _notebook_list():
        src = notebooks / assignment / f"{stem}.ipynb"
        if not src.exists():
            missing.append(str(src))
            continue
        nb, page = stage_notebook(nbformat.read(str(src), as_version=4), assignment, stem,
                                  edition, figures=table)
        out = stage_dir / assignment / f"{stem}.ipynb"
        out.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(out))
        pages.append(page)
    if missing:
        raise FileNotFoundError("executed notebooks missing (run `python -m tools.build.render`, or "
                                "`--quick --out DIR`): " + ", ".join(missing))
    (stage_dir / "index.md").write_text(_home(pages, edition))
    (stage_dir / "pages.json").write_text(json.dumps([p.__dict__ for p in pages], indent=1))
    figures = {f["key"]: {"alt": f["alt"], "caption": f["caption"]} for p in pages for f in p.figures}
    (stage_dir / "figures.json").write_text(json.dumps(figures, indent=1, ensure_ascii=False))
    return pages


def build(notebooks: Path = NOTEBOOKS, out: Path = OUT, stage_dir: Path = STAGE,
          quiet: bool = True, edition: str = "solutions") -> tuple[list[Page], list[str]]:
    """Stage ``edition`` and run Sphinx into ``out``. Returns the pages and Sphinx's warnings."""
    pages = stage(notebooks, stage_dir, edition)
    # Sphinx writes into a folder beside the sources (myst-nb puts its jupyter_execute/
    # next to the output folder), then the finished site replaces ``out``.
    work = stage_dir.parent / (stage_dir.name + "-build")
    if work.exists():
        shutil.rmtree(work)
    html_dir, doctrees, warn = work / "html", work / "doctrees", work / "warnings.txt"
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-E", "-c", str(SITE),
           "-d", str(doctrees), "-w", str(warn), str(stage_dir), str(html_dir)]
    if quiet:
        cmd.insert(3, "-q")
    work.mkdir(parents=True)
    subprocess.run(cmd, check=True, cwd=REPO)
    shutil.copy2(stage_dir / "pages.json", html_dir / "pages.json")
    if out.exists():
        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(html_dir), str(out))
    warnings = [ln for ln in warn.read_text().splitlines() if ln.strip()] if warn.exists() else []
    return pages, warnings


# ------------------------------------------------------------------------------ sphinx
class td_fold(docutils_nodes.General, docutils_nodes.Element):  # noqa: N801 - docutils names nodes so
    """A folded block (the ``td-fold`` directive): drawn as ``<details>`` by :func:`sphinx_setup`.
    Defined at module level: Sphinx pickles the doctrees that hold it."""


def _fold_open(classes: list[str], label: str) -> str:
    return (f'<details class="{html.escape(" ".join(classes))}">\n'
            f'<summary class="td-fold-summary"><span class="td-fold-label">{html.escape(label)}</span>'
            f'</summary>\n<div class="td-fold-body">\n')


_FOLD_CLOSE = "</div>\n</details>\n"


def _caption_nodes(text: str) -> list:
    """Caption text as docutils nodes: ``$...$`` becomes math (typeset by MathJax)."""
    from docutils import nodes

    out: list = []
    for i, part in enumerate(re.split(r"(?<!\\)\$(.+?)(?<!\\)\$", text)):
        if i % 2:
            out.append(nodes.math(part, part))
        elif part:
            out.append(nodes.Text(part))
    return out


def sphinx_setup(app) -> None:
    """What site/conf.py adds to Sphinx: the ``td-fold`` directive (a written answer folded),
    myst-nb's folded code cells drawn as the same ``<details>`` (label as the summary's own
    text, no ``aria-label`` that would differ from it), and the caption and alt text of
    every figure (``figures.json`` beside the sources, written by :func:`stage`)."""
    from docutils import nodes
    from docutils.parsers.rst import directives
    from myst_nb.sphinx_ import HideCodeCellNode
    from sphinx.util.docutils import SphinxDirective

    class FoldDirective(SphinxDirective):
        required_arguments = 1
        final_argument_whitespace = True
        has_content = True
        option_spec = {"class": directives.class_option}

        def run(self):
            node = td_fold(label=self.arguments[0], classes=["td-fold", *self.options.get("class", [])])
            self.set_source_info(node)
            self.state.nested_parse(self.content, self.content_offset, node)
            return [node]

    def visit_fold_html(self, node):
        self.body.append(_fold_open(node["classes"], node["label"]))

    def depart_fold_html(self, node):
        self.body.append(_FOLD_CLOSE)

    def visit_code_fold(self, node):
        # (myst-nb sets the node's children without parent links: the kind comes from the label)
        kind = "td-autograder" if node["prompt_show"].startswith(AUTOGRADER) else "td-solution"
        self.body.append(_fold_open(["td-fold", "td-code-fold", kind, *node["classes"]], node["prompt_show"]))

    def figures(app, doctree, docname):
        path = Path(app.srcdir) / "figures.json"
        table = json.loads(path.read_text()) if path.exists() else {}
        number = 0
        for image in list(doctree.findall(nodes.image)):
            info = table.get(Path(image.get("uri", "")).stem)
            if info is None:
                continue
            image["alt"] = info["alt"]
            if isinstance(image.parent, nodes.figure):
                continue
            number += 1
            figure = nodes.figure(classes=["td-figure"], ids=[f"td-figure-{number}"])
            image.replace_self(figure)
            figure += image
            figure += nodes.caption("", "", *_caption_nodes(info["caption"]))

    app.add_node(td_fold, html=(visit_fold_html, depart_fold_html))
    app.add_directive("td-fold", FoldDirective)
    app.add_node(HideCodeCellNode, override=True, html=(visit_code_fold, depart_fold_html))
    app.connect("doctree-resolved", figures)


# ------------------------------------------------------------------------------ main
def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m tools.site.pages`` (``main`` parses with it)."""
    p = argparse.ArgumentParser(
        prog="python -m tools.site.pages",
        description="Render the executed notebooks (nothing runs again) into the course site, in two\n"
                    "editions: with the solutions folded under labelled bars, and the student edition\n"
                    "without them, to publish before the deadline. Both work offline; every figure\n"
                    "gets its caption and alt text from site/figures.toml.",
        epilog="examples:\n"
               "  make site                                      # both editions from solutions/\n"
               "  python -m tools.site.pages --edition student         # only build/site-student/\n"
               "  python -m tools.site.pages --notebooks build/site-test/notebooks --out /tmp/site\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--notebooks", type=Path, default=NOTEBOOKS,
                   help="folder of executed <assignment>/<nb>.ipynb (default: solutions/)")
    p.add_argument("--out", type=Path, default=OUT,
                   help="solutions edition (default: solutions/site/)")
    p.add_argument("--stage", type=Path, default=STAGE,
                   help="its Sphinx sources (default: build/site-src/)")
    p.add_argument("--student-out", type=Path, default=STUDENT_OUT,
                   help="student edition, no solutions (default: build/site-student/)")
    p.add_argument("--student-stage", type=Path, default=STUDENT_STAGE,
                   help="its Sphinx sources (default: build/site-student-src/)")
    p.add_argument("--edition", choices=(*EDITIONS, "both"), default="both",
                   help="which edition to build (default: both)")
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    problems: list[str] = []
    for edition in EDITIONS:
        if a.edition not in (edition, "both"):
            continue
        out, stage_dir = (a.out, a.stage) if edition == "solutions" else (a.student_out, a.student_stage)
        t0 = time.perf_counter()
        pages, warnings = build(a.notebooks.resolve(), out.resolve(), stage_dir.resolve(), edition=edition)
        for w in warnings:
            print("sphinx:", w)
        problems += [x for pg in pages for x in pg.figure_problems if x not in problems]
        folded = (f"{sum(len(pg.solutions) for pg in pages)} folded solutions" if edition == "solutions" else
                  f"{sum(len(pg.answers) for pg in pages)} answers left to write, "
                  f"{sum(pg.withheld for pg in pages)} outputs withheld")
        print(f"{edition} edition built in {time.perf_counter() - t0:.1f} s: {len(pages)} notebook pages, "
              f"{folded}, {sum(len(pg.checks) for pg in pages)} folded test cells, "
              f"{sum(pg.images for pg in pages)} figures "
              f"({sum(f['described'] for pg in pages for f in pg.figures)} described), "
              f"{sum(pg.progress_lines for pg in pages)} progress-bar lines removed -> {out / 'index.html'}")
    for x in problems:
        print("figures:", x)
    return 0


if __name__ == "__main__":
    sys.exit(main())
