"""Build the course site: a home page and one page per notebook, offline, into one folder.

    python -m tools.site [--notebooks DIR] [--out DIR] [--stage DIR]

Reads the executed solutions notebooks ``<notebooks>/<assignment>/<nb>.ipynb`` written by
``python -m tools.render`` (default ``solutions/``; nothing is executed again), stages
them with the home page of ``site/`` into ``build/site-src/``, and runs Sphinx (myst-nb,
execution off; sphinx-book-theme; sphinx-togglebutton) into ``<out>`` (default
``solutions/site/``). Open ``<out>/index.html``; the folder can be copied anywhere.

Staging does, per notebook:

* **title**: the page title is the notebook's section title: the first level-1 heading
  that starts with a section number (``7.1 Two moments ...``), else the first one. When a
  notebook has several level-1 headings, the title is put on top and the others become
  level-2 sections, so the page, its ``<title>`` and the sidebar carry that title.
* **solutions**: every nbgrader answer cell is folded under a bar labelled with the part
  it answers (:func:`solution_label`: ``Solution — 7.3.A.2``, ``Solution — 7.3.A (code:
  gd_step_bound, gd_efold_steps)``): written answers become a ``dropdown`` admonition
  (sphinx-togglebutton), code answers a folded cell (myst-nb ``hide-cell``). A question
  written inside an answer cell (text before its ``**Solution`` line) stays visible.
* **anchors** before every ``Exercise``/``Demo`` heading and every ``Readings`` heading,
  for the exercise and reading index of the home page.

Math is typeset in the browser by MathJax 3 (SVG output, a single file) copied from the
``sphinx-mathjax-offline`` wheel into ``_static/mathjax/`` (:func:`mathjax_dir`). The same
file, inlined, makes nbgrader's feedback pages typeset offline
(:func:`feedback_template_basedirs`, :func:`inline_mathjax`; template
``tools/templates/td_feedback``).
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SITE = REPO / "site"
OUT = REPO / "solutions" / "site"
NOTEBOOKS = REPO / "solutions"
STAGE = REPO / "build" / "site-src"
SOURCE = REPO / "course" / "source"
TEMPLATES = Path(__file__).resolve().parent / "templates"
MATHJAX_FILE = "tex-svg-full.js"

ASSIGNMENT_TITLES = {
    "td2_7_learned_first": "What is learned first (§7)",
    "cnn_lcn": "CNN vs LCN",
}

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_SECTION_NUMBER = re.compile(r"^§?\s*\d+(\.\d+)*[a-z]?\b")
_EXERCISE = re.compile(r"^(#{1,6})\s+((?:Exercise|Demo)\s+(§?[0-9A-Za-z.]*[0-9A-Za-z]))\b(.*)$")
_READINGS = re.compile(r"^(#{1,6})\s+(Readings?)\s*$")
_GID = re.compile(r"^ex(?:(\d)(\d)(b?))?([A-Z])_(.*)$")


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


MATHJAX_CONFIG = {
    "tex": {"inlineMath": [["$", "$"], ["\\(", "\\)"]],
            "displayMath": [["$$", "$$"], ["\\[", "\\]"]],
            "processEscapes": True, "processEnvironments": True, "tags": "ams"},
    "svg": {"fontCache": "global"},
    "options": {"ignoreHtmlClass": "tex2jax_ignore|mathjax_ignore",
                "skipHtmlTags": ["script", "noscript", "style", "textarea", "pre", "code"]},
}


@lru_cache(maxsize=1)
def _mathjax_source() -> str:
    return (mathjax_dir() / MATHJAX_FILE).read_text(encoding="utf-8")


def inline_mathjax(_value: object = None) -> str:
    """``<script>`` tags holding the MathJax 3 configuration and the whole of MathJax
    (a Jinja filter for the feedback template: a feedback page typesets offline and stays
    a single file)."""
    code = _mathjax_source().replace("</script", "<\\/script")
    return ("<script>window.MathJax = " + json.dumps(MATHJAX_CONFIG) + ";</script>\n"
            "<script>" + code + "</script>")


# The lines course/nbgrader_config.py needs so that feedback pages typeset math offline
# (tests/test_site.py runs nbgrader with exactly these in a scratch course).
FEEDBACK_CONFIG = """\
from tools.site import feedback_template_basedirs
c.HTMLExporter.template_name = "td_feedback"
c.HTMLExporter.extra_template_basedirs = feedback_template_basedirs()
c.HTMLExporter.filters = {"td_inline_mathjax": "tools.site.inline_mathjax"}
"""


def feedback_template_basedirs() -> list[str]:
    """``HTMLExporter.extra_template_basedirs`` for ``nbgrader generate_feedback``: ours
    (``td_feedback``, which overrides the ``mathjax`` macro) and nbgrader's own (its
    ``feedback`` template, which nbgrader adds only when this option is unset)."""
    import nbgrader

    ours = TEMPLATES
    theirs = Path(nbgrader.__file__).resolve().parent / "server_extensions" / "formgrader" / "templates"
    return [str(ours), str(theirs)]


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


# ------------------------------------------------------------------------------ staging
@dataclass
class Page:
    assignment: str
    stem: str
    title: str
    docname: str
    exercises: list[tuple[str, str]] = field(default_factory=list)  # (label, heading text)
    readings: str | None = None  # label of its Readings section
    solutions: list[str] = field(default_factory=list)  # fold labels, in order
    images: int = 0  # image outputs (figures)


def _target(*parts: str) -> str:
    return "td-" + "-".join(re.sub(r"[^0-9A-Za-z]+", "-", p).strip("-").lower() for p in parts)


def _fence_for(text: str) -> str:
    longest = max((len(m.group(1)) for m in re.finditer(r"^\s*(`{3,})", text, re.M)), default=0)
    return "`" * max(4, longest + 1)


def _fold_markdown(src: str, label: str) -> str:
    """A written answer folded in a dropdown admonition; a question above its
    ``**Solution`` line (or a heading it starts with) stays outside."""
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
    fold = f"{fence}{{admonition}} {label}\n:class: dropdown td-solution\n\n{body}\n{fence}"
    return f"{before}\n\n{fold}" if before else fold


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


def _image_outputs(cell) -> int:
    return sum(1 for o in cell.get("outputs", [])
               if o.get("output_type") in ("display_data", "execute_result")
               and any(k.startswith("image/") for k in o.get("data", {})))


def stage_notebook(nb, assignment: str, stem: str) -> tuple[object, Page]:
    """The notebook as the site shows it, and what the home page needs to know about it."""
    nb = copy.deepcopy(nb)
    title = page_title(nb)
    page = Page(assignment, stem, title, f"{assignment}/{stem}")
    n_h1 = sum(1 for c in nb.cells if c.cell_type == "markdown"
               for _i, level, _t in headings(c.source) if level == 1)
    first_md = next((c for c in nb.cells if c.cell_type == "markdown"), None)
    first_is_title = first_md is not None and any(
        level == 1 and text == title for _i, level, text in headings(first_md.source)[:1])
    restructure = n_h1 > 1 or not first_is_title
    exercise: str | None = None
    seen: dict[str, int] = {}
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = separate_display_math(cell.source)
            lines = cell.source.split("\n")
            found: list[tuple[str, str]] = []
            for i, level, text in reversed(headings(cell.source)):
                if restructure and level == 1:
                    lines[i] = "#" + lines[i]
                m = _EXERCISE.match(lines[i])
                if m:
                    label = _target(stem, m.group(3))
                    if label not in {lab for lab, _ in page.exercises + found}:
                        found.insert(0, (label, text))
                        lines.insert(i, f"({label})=")
                elif _READINGS.match(lines[i]) and page.readings is None:
                    page.readings = _target(stem, "readings")
                    lines.insert(i, f"({page.readings})=")
            page.exercises.extend(found)
            cell.source = "\n".join(lines)
            for _i, _level, text in headings(cell.source):
                m = re.match(r"^(?:Exercise|Demo)\s+(§?[0-9A-Za-z.]*[0-9A-Za-z])\b", text)
                if m:
                    exercise = m.group(1)
        if _nbgrader(cell).get("solution"):
            label = solution_label(cell, exercise)
            seen[label] = seen.get(label, 0) + 1
            if seen[label] > 1:
                label = f"{label} #{seen[label]}"
            page.solutions.append(label)
            if cell.cell_type == "markdown":
                cell.source = _fold_markdown(cell.source, label)
            else:
                tags = cell.metadata.setdefault("tags", [])
                if "hide-cell" not in tags:
                    tags.append("hide-cell")
                cell.metadata["mystnb"] = {"code_prompt_show": label,
                                           "code_prompt_hide": f"Hide: {label}"}
        page.images += _image_outputs(cell)
    if restructure:
        import nbformat

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


def _home(pages: list[Page]) -> str:
    text = (SITE / "index.md").read_text()
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


def stage(notebooks: Path = NOTEBOOKS, stage_dir: Path = STAGE) -> list[Page]:
    """Write the Sphinx sources (home page + staged notebooks) into ``stage_dir``."""
    import nbformat

    if stage_dir.exists():
        shutil.rmtree(stage_dir)
    stage_dir.mkdir(parents=True)
    pages, missing = [], []
    for assignment, stem in _notebook_list():
        src = notebooks / assignment / f"{stem}.ipynb"
        if not src.exists():
            missing.append(str(src))
            continue
        nb, page = stage_notebook(nbformat.read(str(src), as_version=4), assignment, stem)
        out = stage_dir / assignment / f"{stem}.ipynb"
        out.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(out))
        pages.append(page)
    if missing:
        raise FileNotFoundError("executed notebooks missing (run `python -m tools.render`, or "
                                "`--quick --out DIR`): " + ", ".join(missing))
    (stage_dir / "index.md").write_text(_home(pages))
    (stage_dir / "pages.json").write_text(json.dumps([p.__dict__ for p in pages], indent=1))
    return pages


def build(notebooks: Path = NOTEBOOKS, out: Path = OUT, stage_dir: Path = STAGE,
          quiet: bool = True) -> tuple[list[Page], list[str]]:
    """Stage and run Sphinx. Returns the pages and Sphinx's warnings."""
    pages = stage(notebooks, stage_dir)
    # Sphinx writes into a folder beside the sources (myst-nb puts its jupyter_execute/
    # next to the output folder), then the finished site replaces ``out``.
    work = stage_dir.parent / (stage_dir.name + "-build")
    if work.exists():
        shutil.rmtree(work)
    html, doctrees, warn = work / "html", work / "doctrees", work / "warnings.txt"
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-E", "-c", str(SITE),
           "-d", str(doctrees), "-w", str(warn), str(stage_dir), str(html)]
    if quiet:
        cmd.insert(3, "-q")
    work.mkdir(parents=True)
    subprocess.run(cmd, check=True, cwd=REPO)
    shutil.copy2(stage_dir / "pages.json", html / "pages.json")
    if out.exists():
        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(html), str(out))
    warnings = [ln for ln in warn.read_text().splitlines() if ln.strip()] if warn.exists() else []
    return pages, warnings


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--notebooks", type=Path, default=NOTEBOOKS,
                   help="folder of executed <assignment>/<nb>.ipynb (default: solutions/)")
    p.add_argument("--out", type=Path, default=OUT, help="site folder (default: solutions/site/)")
    p.add_argument("--stage", type=Path, default=STAGE, help="Sphinx sources (build/site-src/)")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    pages, warnings = build(a.notebooks.resolve(), a.out.resolve(), a.stage.resolve())
    for w in warnings:
        print("sphinx:", w)
    print(f"site built in {time.perf_counter() - t0:.1f} s: {len(pages)} notebook pages, "
          f"{sum(len(p.solutions) for p in pages)} folded solutions, "
          f"{sum(p.images for p in pages)} figures -> {a.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
