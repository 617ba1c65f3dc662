"""Only what students have: the release names no file, command or edition a student does not receive.

    python -m tools.build.release_lint                      # the sources' release (in-process), the student site
    python -m tools.build.release_lint --release course/release --site build/site-student --dist dist

A student gets the handout (``tools/build/handout.py``: ``dist/`` with the released notebooks, the
``td_lib`` wheel, ``requirements-student.txt``, ``jupyter-config/`` and a ``README.md``), or the
same on the class hub, and the student edition of the site. A released notebook or a student
page that points to anything else (``checks/two_moments.py``, ``tests/test_kernel_flow.py``,
``make figures``, ``python -m checks.grading.bake``, "the solutions edition of this notebook",
"the original 2026 course notes, NB2 §7") sends the student after something they cannot open.

What the student receives is computed from the handout (:func:`received`), not listed here: the
files of a built ``dist/`` (and of its wheel) when there is one, else the files ``handout.build``
writes (the notebooks of ``course/source``, every ``td_lib`` module, which the student edition
keeps, the README, the requirements, the Jupyter config) and the packages the student
environment installs. What the repository has beyond that (its top-level folders and files, the
basenames of its tracked files, the targets of its Makefile) is what a mention may not name
(:class:`Repository`). Five rules (:data:`RULES`): a path under a repository folder the student
lacks, a tracked file name the student lacks, ``make <target>``, ``python -m <module>`` of a
package the student lacks, and the phrases of :data:`EDITIONS` (other editions and documents).

The release is made in-process from the sources with nbgrader's own preprocessors
(:func:`release_notebook`: ``ClearSolutions``, ``ClearHiddenTests``, ``ClearMarkScheme``,
``ClearOutput``, the steps of ``generate_assignment`` that change text); ``--release DIR`` lints
a release ``nbgrader generate_assignment`` wrote (``course/release``), ``--site DIR`` the pages of
the student site (``python -m tools.site.pages``: ``build/site-student``; without it, the student
edition of the site's home page ``site/index.md`` is linted), ``--dist DIR`` a built handout.
One line per finding, ``<where>: <excerpt>  [<rule>]``; exit status 1 if there is any.
"""

from __future__ import annotations

import argparse
import copy
import html
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import nbformat

from tools import env, nbcore

REPO = env.REPO
#: Python packages a student's environment has besides ``td_lib`` and the handout's pinned top
#: packages (``handout.STUDENT_TOP``): what ``python -m`` may name in a student's instructions.
STUDENT_TOOLS = ("pip", "venv", "jupyter", "jupyterlab", "notebook", "IPython", "ipykernel")
#: Editions and documents a student never gets, as (pattern, what). "your instructor" and "the
#: instructor's side" are fine (a person, a place the values come from); a course of the notes
#: may be cited in an errata note ("the original course notes printed 3.97"), but not as a place
#: to read ("NB2 §7" of those notes, the "Physics of Deep Learning day" and its notebooks).
EDITIONS: tuple[tuple[str, str], ...] = (
    (r"\bsolutions?\s+(?:edition|notebooks?|site|pages?)\b", "the solutions edition"),
    (r"\binstructor(?:'s|s')?\s+(?:edition|notebooks?|copy|version|site)\b", "an instructor's edition"),
    (r"\bgrading\s+edition\b", "the grading edition"),
    (r"\bcourse\s+notes\W{1,4}NB\s?\d+\s*§", "a section of the original course notes"),
    (r"\bPhysics\s+of\s+Deep\s+Learning\s+day\b", "the Physics of Deep Learning day"),
    (r"(?<![\w.])Notebook\s+\d+\b", "a notebook of another course"),
)
_PATH = re.compile(r"(?<![\w./:~<>-])((?:[A-Za-z_<][\w.<>-]*/)+[\w.*<>-]*)")
_FILE = re.compile(r"(?<![\w/.-])([\w*<>-]+\.(?:py|ipynb|toml|cfg|ya?ml|sh|txt|md|json|db))\b")
_MAKE = re.compile(r"\bmake\s+([a-z][\w-]*)|`(make)`")
_PYTHON_M = re.compile(r"\bpython3?\s+-m\s+([A-Za-z_][\w.]*)")


@dataclass
class Received:
    """What a student receives: file paths relative to the handout (``notebooks/<a>/<nb>.ipynb``,
    ``td_lib/core/run.py``), and the Python packages of the student environment."""

    files: set[str]
    packages: set[str]

    @property
    def tops(self) -> set[str]:
        """First components of the files (``notebooks``, ``td_lib``, ``README.md``)."""
        return {f.split("/")[0] for f in self.files}

    @property
    def basenames(self) -> set[str]:
        return {f.rsplit("/", 1)[-1] for f in self.files}


@dataclass
class Repository:
    """What the repository holds that a mention may name: top-level entries, tracked files'
    basenames, Makefile targets."""

    tops: set[str]
    basenames: set[str]
    make_targets: set[str]
    packages: set[str] = field(default_factory=set)


def _wheel_files(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as z:
        return {n for n in z.namelist() if ".dist-info/" not in n and ".data/" not in n}


def received(dist: Path | None = None, course: Path = env.COURSE) -> Received:
    """What the handout gives a student: the files of ``dist`` (a built handout, its wheel's files
    included) or, without one, the files :func:`tools.build.handout.build` writes; and the packages of
    the student environment (``td_lib``, ``handout.STUDENT_TOP``, :data:`STUDENT_TOOLS`)."""
    from tools.build import handout

    packages = {"td_lib", *handout.STUDENT_TOP, *STUDENT_TOOLS}
    if dist is not None and dist.is_dir():
        files = {str(p.relative_to(dist)) for p in dist.rglob("*") if p.is_file()}
        for wheel in dist.glob("*.whl"):
            files |= _wheel_files(wheel)
        return Received(files, packages)
    files = {"README.md", "requirements-student.txt", "jupyter-config/", handout.HANDIN}
    files |= {f"{handout.NOTEBOOKS}/{p.parent.name}/{p.stem}.ipynb" for p in nbcore.sources(course=course)}
    # the student edition keeps every module of td_lib (it cuts functions, not files)
    files |= {str(p.relative_to(REPO)) for p in (REPO / handout.LIB).rglob("*.py")}
    return Received(files, packages)


def repository(root: Path = REPO) -> Repository:
    """The repository's top-level entries (tracked or generated: ``solutions``, ``build``,
    ``dist``), the basenames of its tracked files, its Makefile targets and its packages."""
    tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True).stdout.split()
    tops = {t.split("/")[0] for t in tracked} | {p.name for p in root.iterdir() if not p.name.startswith(".")}
    tops |= {"solutions", "build", "dist"}
    targets = set()
    makefile = root / "Makefile"
    if makefile.exists():
        targets = set(re.findall(r"^([a-z][\w-]*):", makefile.read_text(), flags=re.M))
    packages = {t for t in tops if (root / t / "__init__.py").exists()} | {"scripts", "benchmarks", "tests"}
    return Repository(tops, {t.rsplit("/", 1)[-1] for t in tracked}, targets, packages)


@dataclass
class Finding:
    where: str
    excerpt: str
    rule: str

    def __str__(self) -> str:
        return f"{self.where}: {self.excerpt}  [{self.rule}]"


def _excerpt(text: str, start: int, end: int, width: int = 50) -> str:
    a, b = max(0, start - width), min(len(text), end + width)
    s = " ".join(text[a:b].split())
    return ("…" if a else "") + s + ("…" if b < len(text) else "")


def _hits(text: str, have: Received, repo: Repository):
    """(start, end, rule) of every mention in ``text`` of something the student does not receive."""
    for m in _PATH.finditer(text):
        top = m.group(1).split("/")[0]
        if top in repo.tops and top not in have.tops:
            yield m.start(1), m.end(1), f"path {m.group(1)}: students get no {top}/"
    for m in _FILE.finditer(text):
        name = m.group(1)
        if name in repo.basenames and name not in have.basenames:
            yield m.start(1), m.end(1), f"file {name}: not in the handout"
    if "Makefile" not in have.files:
        for m in _MAKE.finditer(text):
            if m.group(2) or m.group(1) in repo.make_targets:
                what = "make" if m.group(2) else f"make {m.group(1)}"
                yield m.start(), m.end(), f"command {what}: students get no Makefile"
    for m in _PYTHON_M.finditer(text):
        top = m.group(1).split(".")[0]
        if top not in have.packages:
            yield m.start(), m.end(1), f"command python -m {m.group(1)}: students have no {top}"
    for rx, what in EDITIONS:
        for m in re.finditer(rx, text):
            yield m.start(), m.end(), f"names {what}"


def lint_text(text: str, where: str, have: Received, repo: Repository) -> list[Finding]:
    """The findings of one text (a cell, a page); overlapping hits of two rules count once."""
    out, last_end = [], -1
    for start, end, rule in sorted(_hits(text, have, repo)):
        if start < last_end:
            continue
        out.append(Finding(where, _excerpt(text, start, end), rule))
        last_end = end
    return out


def lint_notebook(nb, where: str, have: Received, repo: Repository) -> list[Finding]:
    """Every cell of a released notebook (source, and outputs' text if it has any)."""
    found = []
    for i, c in enumerate(nb.cells):
        texts = [c.source] + [o.get("text", "") if isinstance(o.get("text", ""), str) else ""
                              for o in c.get("outputs", [])]
        found += lint_text("\n".join(texts), f"{where}:cell {i}", have, repo)
    return found


def release_notebook(source: Path):
    """The notebook ``nbgrader generate_assignment`` releases from ``source``, as far as its text
    goes: nbgrader's own preprocessors clear solutions (stubs), hidden tests, mark schemes and
    outputs."""
    from nbgrader.preprocessors import ClearHiddenTests, ClearMarkScheme, ClearOutput, ClearSolutions

    nb = copy.deepcopy(nbcore.read_source(source))
    resources: dict = {}
    for pre in (ClearSolutions(code_stub={"python": nbcore.CODE_STUB}, text_stub=nbcore.TEXT_STUB),
                ClearHiddenTests(), ClearMarkScheme(), ClearOutput()):
        nb, resources = pre.preprocess(nb, resources)
    return nb


def lint_sources(course: Path = env.COURSE, have: Received | None = None,
                 repo: Repository | None = None, notebooks: tuple[str, ...] = ()) -> list[Finding]:
    """The release of every source of ``course`` (or of ``notebooks``, by stem), made in-process."""
    have, repo = have or received(course=course), repo or repository()
    found = []
    for src in nbcore.sources(course=course):
        if not notebooks or src.stem in notebooks:
            found += lint_notebook(release_notebook(src), f"{src.parent.name}/{src.stem}.ipynb", have, repo)
    return found


def lint_release(release: Path, have: Received | None = None, repo: Repository | None = None) -> list[Finding]:
    """Every notebook under ``release`` (``course/release/<assignment>/<nb>.ipynb`` or a handout's
    ``notebooks/``), as written."""
    have, repo = have or received(), repo or repository()
    found = []
    for path in sorted(Path(release).rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        nb = nbformat.read(str(path), as_version=4)
        found += lint_notebook(nb, str(path.relative_to(release)), have, repo)
    return found


class _Text(HTMLParser):
    """The text a page shows (no scripts, styles or tag attributes)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style") and self._skip > 0

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def page_text(page_html: str) -> str:
    p = _Text()
    p.feed(page_html)
    return html.unescape("".join(p.parts))


def lint_site(site: Path | None = None, have: Received | None = None, repo: Repository | None = None) -> list[Finding]:
    """The student site: every page of a built ``site`` (``build/site-student``; Sphinx's own
    pages, ``_static`` and ``_sources`` left out), or without one the student edition of the
    home page's source (``site/index.md``, the text that is not a notebook)."""
    have, repo = have or received(), repo or repository()
    if site is None or not Path(site).is_dir():
        from tools.site import pages as site_tool

        text = site_tool._edition_text((site_tool.SITE / "index.md").read_text(), "student")
        return lint_text(text, "site/index.md (student edition)", have, repo)
    found = []
    for page in sorted(Path(site).rglob("*.html")):
        rel = page.relative_to(site)
        if rel.parts[0] in ("_static", "_sources", "_images") or rel.name in ("genindex.html", "search.html"):
            continue
        found += lint_text(page_text(page.read_text(errors="replace")), str(rel), have, repo)
    return found


def lint_dist(dist: Path, repo: Repository | None = None) -> list[Finding]:
    """A built handout: its notebooks and its README, against its own contents."""
    have, repo = received(dist), repo or repository()
    found = lint_release(dist / "notebooks", have, repo) if (dist / "notebooks").is_dir() else []
    readme = dist / "README.md"
    if readme.exists():
        found += lint_text(readme.read_text(), "dist/README.md", have, repo)
    return found


HELP = """\
Find, in the released notebooks and the student site, every mention of a file, command or edition
a student does not receive (checks/, tests/, scripts/, make <target>, python -m checks..., the
solutions edition, the original course notes' sections): one line per finding, exit status 1 if
any. What a student receives is read from the handout (dist/ when given, else what it would hold)."""

EXAMPLES = """\
examples:
  python -m tools.build.release_lint                                   # the sources' release and the student site
  python -m tools.build.release_lint --release course/release --dist dist
  python -m tools.build.release_lint --notebooks td2_7_1_two_moments"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.build.release_lint", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--release", type=Path, metavar="DIR",
                   help="lint the notebooks nbgrader released into DIR (default: release the sources in-process)")
    p.add_argument("--site", type=Path, metavar="DIR", default=REPO / "build" / "site-student",
                   help="the student site (default: build/site-student; if absent, site/index.md's student edition)")
    p.add_argument("--dist", type=Path, metavar="DIR",
                   help="also lint a built handout, and read what students receive from it (default: none)")
    p.add_argument("--notebooks", nargs="+", default=(), metavar="STEM",
                   help="only these notebooks of the sources' release (default: every notebook)")
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    have, repo = received(a.dist), repository()
    found = (lint_release(a.release, have, repo) if a.release
             else lint_sources(have=have, repo=repo, notebooks=tuple(a.notebooks)))
    found += lint_site(a.site, have, repo)
    if a.dist:
        found += lint_dist(a.dist, repo)
    for f in found:
        print(f)
    print(f"{len(found)} mention(s) of what students do not receive" if found
          else "the release names only what students receive", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
