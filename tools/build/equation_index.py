"""Equation -> function index: ``docs/EQUATIONS.md``, generated from td_lib's docstrings.

A newcomer goes from a formula in a notebook to its code in one hop: for every paper the course
follows (and the original course notes, numbered 7.x.Y.n), a table of its equations, the td_lib functions
and classes whose docstring cites each one (dotted name and ``file:line`` link), and the
notebooks that use each function. Nothing is written by hand, so the index cannot drift from
the code: ``tests/test_equation_index.py`` regenerates it and compares.

Where a citation is read: the ``References`` section of a public function's, class's or
method's docstring (``Mori et al. (CNN vs LCN), eqs 17-18``, ``Tian (2020), eqs. 1–5``,
``original course notes §7.3, eq. 7.3.A.3``) and its summary line (``Eq. 28: eps_g at ...``). An
equation belongs to the last source named before it in the citation; without one, to the
docstring's first cited source, else to the module docstring's. Ranges
(``eqs 41-43``, ``(1)-(4)``, ``7.3.A.1–3``) and lists (``eqs 17-18 and 72``, ``43/72``) expand.

    python -m tools.build.equation_index            # rewrite docs/EQUATIONS.md (= make equations)
    python -m tools.build.equation_index --check    # exit 1 if docs/EQUATIONS.md is stale

Reads td_lib and the notebook sources with :mod:`ast` and regular expressions; imports neither.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "docs" / "EQUATIONS.md"
LIB = "td_lib"
NOTEBOOKS = REPO / "course" / "source"


@dataclass(frozen=True)
class Source:
    key: str
    title: str
    pattern: str  # how prose names it (docstrings and notebooks)


# The order of the index. Sources without numbered equations in td_lib are named too, so that an
# equation after them is not given to the source named before.
SOURCES = [
    Source("mori", "Mori et al., *Exact online-SGD dynamics of CNN vs LCN students* (notebooks `cnn_lcn_*`)",
           r"\bMori\b|CNN vs LCN"),
    Source("course", "The original course notes (NB2 §7), §7.1–7.4 (equations numbered 7.x.Y.n)",
           r"[Cc]ourse notes|\bSeed §"),
    Source("hu", "Hu, Xiao, Adlam & Pennington (NeurIPS 2020), *The surprising simplicity of the early-time "
           "learning dynamics of neural networks* (§7.1b)", r"\bHu\b"),
    Source("bardone_goldt", "Bardone & Goldt (ICML 2024), *Sliding down the stairs: how correlated latent "
           "variables accelerate learning with neural networks* (§7.1, §7.2)", r"\bBardone\b"),
    Source("basri", "Basri et al. (NeurIPS 2019), *The convergence rate of neural networks for learned "
           "functions of different frequencies* (§7.3)", r"\bBasri\b"),
    Source("tian", "Tian (ICML 2020), *Student specialization in deep ReLU networks with finite width and "
           "input dimension* (§7.4)", r"\bTian\b"),
    Source("saad_solla", "Saad & Solla (Phys. Rev. E 1995)", r"\bSaad\b"),
    Source("cho_saul", "Cho & Saul (NeurIPS 2009)", r"\bCho\b"),
    Source("jacot", "Jacot, Gabriel & Hongler (NeurIPS 2018)", r"\bJacot\b"),
    Source("ben_arous", "Ben Arous, Gheissari & Jagannath (JMLR 2021)", r"\bBen Arous\b"),
]
BY_KEY = {s.key: s for s in SOURCES}
_SOURCE = re.compile("|".join(f"(?P<{s.key}>{s.pattern})" for s in SOURCES))

# ---------------------------------------------------------------------------------------------- parsing
_NUM = r"\(?(?:\d+\.\d+b?\.[A-Z]\.\d+|\d+)\)?"  # 17, (1), 7.3.A.3
_ITEM = rf"{_NUM}(?:\s*[-–]\s*{_NUM})?"
_SEP = r"(?:\s*\([^()\d][^()]*\))?\s*(?:,|/|\band\b|\bor\b)\s*"  # may skip a remark "(CNN)" before it
_KEYWORD = re.compile(rf"\b(?:[Ee]qs?\.\s*|[Ee]qs?\s+|[Ee]quations?\s+)(?P<items>{_ITEM}(?:{_SEP}{_ITEM})*)")
_COURSE_NUM = re.compile(r"^\d+\.\d+b?\.[A-Z]\.\d+$")
MAX_RANGE = 40


def _expand(item: str) -> list[str]:
    parts = [p.strip().strip("()") for p in re.split(r"[-–]", item)]
    if len(parts) == 1:
        return parts
    lo, hi = parts
    if _COURSE_NUM.match(lo):  # 7.3.A.1–3 or 7.3.A.1–7.3.A.3
        stem, first = lo.rsplit(".", 1)
        last = hi.rsplit(".", 1)[-1]
        return [f"{stem}.{k}" for k in range(int(first), int(last) + 1)]
    if not (lo.isdigit() and hi.isdigit()) or not 0 <= int(hi) - int(lo) <= MAX_RANGE:
        raise ValueError(f"cannot read the equation range {item!r}")
    return [str(k) for k in range(int(lo), int(hi) + 1)]


def equation_refs(text: str) -> list[tuple[int, str]]:
    """``(position, label)`` of every numbered equation ``text`` cites, ranges and lists expanded.

    >>> [e for _, e in equation_refs("eqs 17-18 and 72; eq. (1); eqs. (1)-(3), Prop. 3.4")]
    ['17', '18', '72', '1', '1', '2', '3']
    >>> [e for _, e in equation_refs("eqs 65-67 (CNN) and 77 (LCN); eqs 7.3.A.1–3")][3:]
    ['77', '7.3.A.1', '7.3.A.2', '7.3.A.3']
    """
    out = []
    for m in _KEYWORD.finditer(text):
        items = re.findall(_ITEM, re.sub(r"\([^()\d][^()]*\)", " ", m.group("items")))
        out += [(m.start(), label) for item in items for label in _expand(item)]
    return out


def attribute(text: str, default: str | None) -> list[tuple[str | None, str, int]]:
    """``(source key, equation, position)`` for the equations ``text`` cites.

    An equation belongs to the last source named before it in ``text`` (a References section, a
    notebook paragraph), else to ``default``. Course-notes numbers (7.x.Y.n) always belong to
    the original course notes.

    >>> attribute("Mori et al. (CNN vs LCN), eq. 44; Saad & Solla (1995).", None)
    [('mori', '44', 26)]
    >>> [a[:2] for a in attribute("Cho & Saul (2009), the kernel; Tian (2020), eq. 7; eq. 7.3.A.3", "hu")]
    [('tian', '7'), ('course', '7.3.A.3')]
    """
    named = [(m.start(), m.lastgroup) for m in _SOURCE.finditer(text)]
    out = []
    for pos, label in equation_refs(text):
        before = [key for p, key in named if p < pos]
        key = before[-1] if before else default
        if _COURSE_NUM.match(label):
            key = "course"
        out.append((key, label, pos))
    return out


def first_source(text: str) -> str | None:
    """The source of the first equation ``text`` cites (a docstring's or module's default)."""
    found = attribute(text, None)
    return next((key for key, _, _ in found if key), None)


_SECTION = re.compile(r"^(\w[\w ]*)\n-{3,}\s*$", re.M)


def cited_text(doc: str) -> str:
    """The parts of a docstring that cite: its summary paragraph and its References section."""
    summary = doc.split("\n\n", 1)[0]
    sections = list(_SECTION.finditer(doc))
    for i, m in enumerate(sections):
        if m.group(1).strip() == "References":
            end = sections[i + 1].start() if i + 1 < len(sections) else len(doc)
            return summary + "\n\n" + doc[m.end():end]
    return summary


# ---------------------------------------------------------------------------------------------- td_lib
@dataclass
class Obj:
    """A public function, class or method of td_lib and the equations its docstring cites."""

    dotted: str
    path: str  # relative to the repository
    line: int
    cites: list[tuple[str | None, str]]
    notebooks: set[str] = field(default_factory=set)


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _lib_files() -> list[Path]:
    return sorted(p for p in (REPO / LIB).rglob("*.py") if "__pycache__" not in p.parts)


def _defs(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """Public top-level functions and classes, and public methods of public classes."""
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    out = []
    for n in tree.body:
        if isinstance(n, kinds) and not n.name.startswith("_"):
            out.append((n.name, n))
            if isinstance(n, ast.ClassDef):
                out += [(f"{n.name}.{m.name}", m) for m in n.body
                        if isinstance(m, kinds) and not m.name.startswith("_")]
    return out


def library(files: list[Path] | None = None) -> tuple[dict[str, Obj], dict[str, str], set[str]]:
    """td_lib's citing objects by dotted name, the names packages re-export (name -> target), the modules."""
    objs: dict[str, Obj] = {}
    exports: dict[str, str] = {}
    modules: set[str] = set()
    for p in files if files is not None else _lib_files():
        mod, tree = _module_name(p), ast.parse(p.read_text(), str(p))
        modules.add(mod)
        module_source = first_source(ast.get_docstring(tree) or "")
        for name, node in _defs(tree):
            doc = ast.get_docstring(node) or ""
            text = cited_text(doc)
            default = first_source(text) or module_source
            cites = [(key, label) for key, label, _ in attribute(text, default)]
            if cites:
                objs[f"{mod}.{name}"] = Obj(f"{mod}.{name}", str(p.relative_to(REPO)), node.lineno,
                                            list(dict.fromkeys(cites)))
        package = mod if p.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for n in tree.body:
            if isinstance(n, ast.ImportFrom):
                base = _absolute(n, package)
                for a in n.names:
                    exports[f"{mod}.{a.asname or a.name}"] = f"{base}.{a.name}"
    return objs, exports, modules


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
    return f"{base}.{node.module}" if node.module else base


def resolve(dotted: str, objs: dict[str, Obj], exports: dict[str, str]) -> str | None:
    """The object ``dotted`` names, following the packages' re-exports (``None``: not a citing object)."""
    seen = set()
    while dotted not in objs:
        if dotted in seen:
            return None
        seen.add(dotted)
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):  # the longest re-exported prefix
            prefix = ".".join(parts[:i])
            if prefix in exports:
                dotted = ".".join([exports[prefix], *parts[i:]])
                break
        else:
            return None
    return dotted


# ---------------------------------------------------------------------------------------------- notebooks
# The paper a notebook follows: an equation number its prose cites without naming a source is
# that paper's (course-notes numbers 7.x.Y.n are always the notes').
NOTEBOOK_SOURCE = {"cnn_lcn_": "mori", "td2_7_1_": "course", "td2_7_1b_": "hu", "td2_7_2_": "bardone_goldt",
                   "td2_7_3_": "course", "td2_7_4_": "tian"}


def notebook_files() -> list[Path]:
    return sorted(p for p in NOTEBOOKS.rglob("*.py") if p.parent != NOTEBOOKS and ".ipynb_checkpoints" not in p.parts)


def short(nb: Path) -> str:
    """``cnn_lcn_1``, ``td2_7_1b``: the notebook's number."""
    m = re.match(r"(.*?\d+b?)_[a-z]", nb.stem)
    return m.group(1) if m else nb.stem


def notebook_source(nb: Path) -> str:
    keys = [v for k, v in NOTEBOOK_SOURCE.items() if nb.stem.startswith(k)]
    if len(keys) != 1:
        raise ValueError(f"{nb.name}: add the paper it follows to NOTEBOOK_SOURCE in tools/build/equation_index.py")
    return keys[0]


def markdown_paragraphs(nb: Path) -> list[tuple[int, str]]:
    """``(first line, text)`` of each paragraph of the notebook's markdown cells (py:percent)."""
    out: list[tuple[int, str]] = []
    in_md, para, start = False, [], 0
    for i, line in enumerate(nb.read_text().splitlines() + ["# %%"], 1):
        if line.startswith("# %%"):
            in_md = "[markdown]" in line
            text = ""
        elif in_md:
            text = line[1:].removeprefix(" ") if line.startswith("#") else ""
        else:
            text = ""
        if text.strip():
            start = start or i
            para.append(text)
        elif para:
            out.append((start, "\n".join(para)))
            para, start = [], 0
    return out


def notebook_citations(nb: Path) -> list[tuple[int, str, str]]:
    """``(line, source key, equation)`` for every numbered equation the notebook's prose cites."""
    default, out = notebook_source(nb), []
    for start, text in markdown_paragraphs(nb):
        for key, label, pos in attribute(text, default):
            out.append((start + text.count("\n", 0, pos), key, label))
    return out


def notebook_uses(nb: Path, objs: dict[str, Obj], exports: dict[str, str], modules: set[str]) -> set[str]:
    """The citing td_lib objects the notebook's code names (through its imports)."""
    tree = ast.parse(nb.read_text(), str(nb))
    alias: dict[str, str] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            alias.update({a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0]
                          for a in n.names})
        elif isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == LIB:
            alias.update({a.asname or a.name: f"{n.module}.{a.name}" for a in n.names})
    used = set()
    for n in ast.walk(tree):
        chain = []
        while isinstance(n, ast.Attribute):
            chain.append(n.attr)
            n = n.value
        if isinstance(n, ast.Name) and n.id in alias:
            found = resolve(".".join([alias[n.id], *reversed(chain)]), objs, exports)
            if found:
                used.add(found)
    return used


# ---------------------------------------------------------------------------------------------- the index
def _eq_key(label: str) -> tuple:
    return tuple((0, int(x), "") if x.isdigit() else (1, 0, x) for x in label.split("."))


def _names(found: set[str] | list[str]) -> str:
    return ", ".join(sorted(found, key=_eq_key)) or "—"


def render() -> str:
    """The text of docs/EQUATIONS.md."""
    objs, exports, modules = library()
    cited: dict[tuple[str | None, str], set[str]] = {}
    nbs = notebook_files()
    for nb in nbs:
        for o in notebook_uses(nb, objs, exports, modules):
            objs[o].notebooks.add(short(nb))
        for _, key, label in notebook_citations(nb):
            cited.setdefault((key, label), set()).add(short(nb))
    rows: dict[str | None, dict[str, list[Obj]]] = {}
    for o in objs.values():
        for key, label in o.cites:
            rows.setdefault(key, {}).setdefault(label, []).append(o)
    lines = [
        "# Equations → code",
        "",
        "<!-- Generated by `python -m tools.build.equation_index` (`make equations`) from td_lib's docstrings: "
        "do not edit. -->",
        "",
        "Every numbered equation that a td_lib docstring cites (its *References* section or summary line), "
        "the functions and classes that implement it, and where the course uses them. *cited in*: the "
        "notebooks whose text cites the equation; *used in*: the notebooks whose code calls the function. "
        "`tests/test_equation_index.py` fails when this file is stale (run `make equations`) and when a "
        "notebook cites an equation no function implements.",
        "",
        "Notebooks: " + ", ".join(f"[`{short(nb)}`](../{nb.relative_to(REPO)})" for nb in nbs) + ".",
    ]
    order = [s.key for s in SOURCES] + sorted((k for k in rows if k not in BY_KEY), key=str)
    for key in (k for k in order if k in rows):
        lines += ["", f"## {BY_KEY[key].title if key in BY_KEY else 'Source not named'}", "",
                  "| eq. | cited in | implemented by | used in |", "|---|---|---|---|"]
        for label in sorted(rows[key], key=_eq_key):
            for i, o in enumerate(sorted(rows[key][label], key=lambda o: o.dotted)):
                left = f"{label} | {_names(cited.get((key, label), set()))}" if i == 0 else " | "
                link = f"[{Path(o.path).name}](../{o.path})"  # no line numbers: other edits leave it valid
                lines.append(f"| {left} | `{o.dotted}` ({link}) | {_names(o.notebooks)} |")
    return "\n".join(lines) + "\n"


HELP = """\
Write docs/EQUATIONS.md: for every paper the course follows, a table of its equations, the
td_lib functions whose docstrings cite each one (with file:line links) and the notebooks that
use them. Generated from the docstrings, so it cannot drift from the code; the tests compare
it with a fresh run."""

EXAMPLES = """\
examples:
  make equations                            # = python -m tools.build.equation_index: rewrite the index
  python -m tools.build.equation_index --check    # exit 1 if it is stale"""


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m tools.build.equation_index", description=HELP,
                                 epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true",
                    help=f"exit 1 if {OUT.relative_to(REPO)} is stale, write nothing (default: rewrite it)")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    text = render()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.relative_to(REPO)} is stale: run `make equations`", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
