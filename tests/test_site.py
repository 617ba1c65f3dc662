"""The course site, both editions, in a real browser with no network: headless Debian Chromium (Playwright).

The site (``python -m tools.site.pages``: the solutions edition and the student edition) is opened
from ``file://`` with every request that is not ``file:`` (or 127.0.0.1) aborted, as on a lab
machine or a train. Every page of both editions is loaded once (the ``visits`` fixture); the
tests then assert, for the home page and every notebook page:

* math is typeset by the packaged MathJax (``mjx-container`` elements, no ``mjx-merror``),
  and no text node outside code still holds ``$…$``, ``\\frac``, ``\\mathbb``, ``\\(``;
* every figure is there and loaded (as many ``<img>`` in the outputs as the executed notebook
  has image outputs), inside a ``<figure>`` with a caption, and its alt text says what it
  shows: not its file name or path, and from ``site/figures.toml`` (none undescribed);
* one fold style: every nbgrader answer cell is folded (hidden until its bar is opened) under a
  native ``<details>`` bar ``Solution — …`` (written and code answers alike, same look), every
  autograded test cell under ``What the autograder checks — …``, all labels of a page distinct,
  7.3.A.2 labelled as such; no other fold widget, no visible ``own_work(`` block;
* no progress-bar line in any page;
* the page title and ``<title>`` are the section title (the notebook's first level-1
  heading with a section number, else its first), never "Notebook";
* the sidebar of every page and the previous/next links reach every page;
* axe-core (the engine bundled by the pinned ``axe-playwright-python``; every WCAG 2.1 A and AA
  rule, experimental ones included) finds no violation on any page of either edition, nor in
  the folds once opened;
* the page asked for nothing outside the folder.

The student edition has no solution: no solution text of the sources (``tools.build.handout.
secret_lines()``, minus what the released notebooks show) in any page, a box "Your answer — …"
for every written answer, the released stub for every code answer.

The executed notebooks behind the site are checked too: one final line per progress bar
(no refresh left behind), and no warning in any output.

A student's feedback page is checked the same way (math typeset offline, as MathML written by
generate_feedback, no script; nothing fetched): nbgrader generate_assignment / autograde /
generate_feedback run on a tiny notebook in a scratch course whose config adds
``tools.site.feedback_page.FEEDBACK_CONFIG`` (the lines course/nbgrader_config.py carries);
``tests/test_feedback_page.py`` checks the page's accessibility, size and grades.

Screenshots: ``build/site-shots/home.png``, ``build/site-shots/<section>.png`` (and the same
page with a solution opened, and ``<section>.fold-and-figure.png``: a folded solution above a
captioned figure), ``build/site-shots/student-<section>.png``, ``build/site-shots/feedback.png``.

Which site: ``TD_SITE_DIR`` (a built site, e.g. ``solutions/site`` after ``make``) with
``TD_SITE_NOTEBOOKS`` (the executed notebooks it was built from; default: the folder above
the site, as ``solutions/`` holds ``solutions/site/``) and ``TD_SITE_STUDENT_DIR`` (its student
edition; default ``build/site-student``). Without them the fixture builds both editions itself
from quick-mode executions (``tools.build.render --quick``, as nbgrader runs them) into
``build/site-test/``, reusing those executions when they are newer than their sources.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

try:
    from tests import browser_support as bs
except ImportError:  # tests/ on sys.path (pytest's rootdir-less import mode)
    import browser_support as bs

pytestmark = [pytest.mark.browser, pytest.mark.timeout(1200)]

REPO = bs.REPO
SOURCE = REPO / "course" / "source"
TEST_ROOT = REPO / "build" / "site-test"
SHOTS = REPO / "build" / "site-shots"
SECTION_SHOT = "td2_7_learned_first/td2_7_3_spectral_bias"
AUTOGRADER = "What the autograder checks"

_H1 = re.compile(r"^# (?!%%)(.+?)\s*$")
_NUMBERED = re.compile(r"^§?\s*\d+(\.\d+)*[a-z]?\b")
_RAW_TEX = re.compile(r"\$[^$\n]+\$|\\frac|\\mathbb|\\\(|\\\[")
_BAR = re.compile(r"^(?P<desc>.*?):?\s*(?P<pct>\d+)%\|[^|]*\|\s*(?P<n>\d+)/(?P<total>\d+)\b")
# any line of a tqdm bar, with or without a total ("12it [00:01, 9.9it/s]")
_ANY_BAR = re.compile(r"\d+%\|[^|\n]*\|\s*[\d.]+[kMGT]?/|\b[\d.]+[kMGT]?it \[\d+:\d+")


def _sources() -> list[Path]:
    return sorted(p for p in SOURCE.glob("*/*.py") if not p.name.startswith("_"))


def expected_title(source: Path) -> str:
    """The section title from the Jupytext source: its first ``# `` heading that starts
    with a section number, else its first ``# `` heading (markdown cells only)."""
    h1, in_md = [], False
    for line in source.read_text().splitlines():
        if line.startswith("# %%"):
            in_md = "[markdown]" in line
            continue
        if in_md and line.startswith("# "):
            m = _H1.match(line[2:])
            if m:
                h1.append(m.group(1))
    assert h1, f"{source} has no level-1 heading"
    return next((t for t in h1 if _NUMBERED.match(t)), h1[0])


# ------------------------------------------------------------------------------ fixtures
@dataclass
class Site:
    """The two editions of a built site and the executed notebooks they come from."""

    root: Path  # solutions edition
    student: Path  # student edition
    notebooks: Path

    def edition(self, name: str) -> Path:
        return self.root if name == "solutions" else self.student


def _build_quick_site() -> Site:
    notebooks, site = TEST_ROOT / "notebooks", TEST_ROOT / "site"
    stale = [s for s in _sources()
             if not (notebooks / s.parent.name / (s.stem + ".ipynb")).exists()
             or (notebooks / s.parent.name / (s.stem + ".ipynb")).stat().st_mtime
             < max(s.stat().st_mtime, (REPO / "td_lib" / "core" / "runtime.py").stat().st_mtime)]
    py = str(REPO / ".venv" / "bin" / "python") if (REPO / ".venv").exists() else sys.executable
    if stale:
        subprocess.run([py, "-m", "tools.build.render", "--quick", "--out", str(notebooks),
                        *map(str, stale)], cwd=REPO, check=True)
    # both editions from the same executions (nothing runs again)
    subprocess.run([py, "-m", "tools.site.pages", "--notebooks", str(notebooks), "--out", str(site),
                    "--stage", str(TEST_ROOT / "src"), "--student-out", str(TEST_ROOT / "site-student"),
                    "--student-stage", str(TEST_ROOT / "student-src")], cwd=REPO, check=True)
    return Site(site, TEST_ROOT / "site-student", notebooks)


@pytest.fixture(scope="module")
def site() -> Site:
    """Both editions and the folder of the executed notebooks they were built from."""
    if os.environ.get("TD_SITE_DIR"):
        root = Path(os.environ["TD_SITE_DIR"]).resolve()
        nbs = os.environ.get("TD_SITE_NOTEBOOKS")
        notebooks = Path(nbs).resolve() if nbs else root.parent  # solutions/site -> solutions/
        student = Path(os.environ.get("TD_SITE_STUDENT_DIR", REPO / "build" / "site-student")).resolve()
        for folder, var in ((root, "TD_SITE_DIR"), (student, "TD_SITE_STUDENT_DIR")):
            assert (folder / "index.html").exists(), f"{var}={folder} holds no index.html"
        return Site(root, student, notebooks)
    return _build_quick_site()


@pytest.fixture(scope="module")
def executed(site) -> dict[str, nbformat.NotebookNode]:
    """docname -> the executed notebook behind its page."""
    out = {}
    for s in _sources():
        path = site.notebooks / s.parent.name / (s.stem + ".ipynb")
        assert path.exists(), f"executed notebook {path} missing"
        out[f"{s.parent.name}/{s.stem}"] = nbformat.read(str(path), as_version=4)
    return out


def built_pages(root: Path) -> dict[str, dict]:
    """docname -> what tools.site.pages recorded about the page (``pages.json`` of the edition)."""
    return {p["docname"]: p for p in json.loads((root / "pages.json").read_text())}


class OfflinePage:
    """A Playwright page and what it asked the network for / logged as errors."""

    def __init__(self, page, blocked: list[str], console_errors: list[str]) -> None:
        self.page, self.blocked, self.console_errors = page, blocked, console_errors


@pytest.fixture(scope="module")
def offline_page(chromium):
    """A page whose every non-file, non-127.0.0.1 request is aborted (and recorded)."""
    blocked: list[str] = []
    console: list[str] = []
    with bs.chromium_browser() as browser:
        context = browser.new_context(viewport=bs.VIEWPORT)

        def route(r):
            url = r.request.url
            if url.startswith(("file:", "data:", "blob:", "about:")) or re.match(
                    r"^https?://127\.0\.0\.1[:/]", url):
                r.continue_()
            else:
                blocked.append(url)
                r.abort()

        context.route("**/*", route)
        page = context.new_page()
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}")
                if m.type == "error" else None)
        page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
        yield OfflinePage(page, blocked, console)
        context.close()


# ------------------------------------------------------------------------------ helpers
_JS_TEXT_WITH_TEX = """
(re) => {
  const rx = new RegExp(re);
  const skip = 'PRE,CODE,SCRIPT,STYLE,TEXTAREA,MJX-CONTAINER,MJX-ASSISTIVE-MML,KBD,SAMP';
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    let p = n.parentElement, bad = false;
    while (p) { if (skip.split(',').includes(p.tagName)) { bad = true; break; }
                p = p.parentElement; }
    if (!bad && rx.test(n.textContent)) out.push(n.textContent.trim().slice(0, 120));
  }
  return out;
}
"""
# Every <details> of the article: its kind, bar label (the summary's own text: its accessible
# name), state, whether its body is really hidden, and the computed look of its bar.
_JS_FOLDS = """
() => {
  const shown = e => e.checkVisibility({visibilityProperty: true, opacityProperty: true})
                     && e.getBoundingClientRect().height > 0;
  return Array.from(document.querySelectorAll('article details')).map(d => {
    const s = d.querySelector(':scope > summary');
    const body = Array.from(d.children).filter(c => c !== s);
    const cs = s ? getComputedStyle(s) : null, ds = getComputedStyle(d);
    const mark = s ? getComputedStyle(s, '::before') : null;
    return {
      cls: Array.from(d.classList), label: s ? s.textContent.trim() : '',
      aria: s ? s.getAttribute('aria-label') : null, open: d.open,
      hidden: body.length > 0 && body.every(c => !shown(c)),
      height: d.getBoundingClientRect().height - (s ? s.getBoundingClientRect().height : 0),
      look: cs ? [cs.display, cs.fontWeight, cs.paddingLeft, cs.cursor, ds.borderLeftWidth,
                  ds.borderLeftStyle, mark.borderRightWidth, mark.width].join(' ') : '',
      colours: cs ? [cs.backgroundColor, cs.color, ds.borderLeftColor].join(' ') : '',
    };
  });
}
"""
_JS_FIGURES = """
() => Array.from(document.querySelectorAll('div.cell_output img')).map(i => {
  const f = i.closest('figure'), c = f ? f.querySelector('figcaption .caption-text, figcaption') : null;
  return {src: i.getAttribute('src'), alt: i.getAttribute('alt'), ok: i.complete && i.naturalWidth > 0,
          caption: c ? c.textContent.trim() : null};
})
"""
_JS_CONTENT = """
() => {
  const shown = e => e.checkVisibility({visibilityProperty: true, opacityProperty: true})
                     && e.getBoundingClientRect().height > 0;
  const article = document.querySelector('article') || document.body;
  const pres = Array.from(article.querySelectorAll('pre'));
  return {
    text: article.textContent,
    pre: pres.map(p => p.textContent),
    visible_own_work: pres.filter(p => shown(p) && p.textContent.includes('own_work(')).length,
    other_folds: article.querySelectorAll(
        '.toggle-button, .toggle-details, div.dropdown, details.hide, .admonition.toggle').length,
    answer_boxes: Array.from(article.querySelectorAll('div.admonition.td-answer')).map(
        a => (a.querySelector('.admonition-title') || a).textContent.trim()),
    withheld: article.querySelectorAll('div.td-withheld').length,
  };
}
"""
_JS_LINKS = """
() => ({
  sidebar: Array.from(document.querySelectorAll('nav.bd-docs-nav a.reference.internal')).map(
      a => ({href: a.href, text: a.textContent.trim()})),
  next: (document.querySelector('a.right-next') || {}).href || null,
  prev: (document.querySelector('a.left-prev') || {}).href || null,
  h1: (document.querySelector('article h1') || {}).textContent || '',
  title: document.title,
})
"""
# The folded solution and the captioned figure below it that are closest together: the top
# of the fold and the span down to the bottom of the figure (pixels), for the screenshot.
_JS_FOLD_AND_FIGURE = """
() => {
  const folds = Array.from(document.querySelectorAll('article details.td-solution'));
  let best = null;
  for (const fig of document.querySelectorAll('article figure.td-figure')) {
    const r = fig.getBoundingClientRect();
    const above = folds.filter(d => d.getBoundingClientRect().top < r.top);
    if (!above.length) continue;
    const top = above[above.length - 1].getBoundingClientRect().top;
    if (!best || r.bottom - top < best.span) best = {top: top + window.scrollY, span: r.bottom - top};
  }
  return best;
}
"""


def _url(root: Path, docname: str) -> str:
    return (root / f"{docname}.html").as_uri()


def _docname(root: Path, url: str) -> str | None:
    if not url.startswith("file:"):
        return None
    path = Path(url.split("#")[0].removeprefix("file://"))
    try:
        return str(path.relative_to(root).with_suffix(""))
    except ValueError:
        return None


def html_pages(root: Path) -> list[str]:
    """Every page of a built site (docnames: ``index``, ``search``, ``<assignment>/<nb>``...)."""
    return sorted(str(p.relative_to(root).with_suffix("")) for p in root.rglob("*.html")
                  if not {"_static", "_sources", "_images"} & set(p.relative_to(root).parts))


def open_page(page, root: Path, docname: str) -> dict:
    """Load a page, wait for MathJax, return what the checks need."""
    page.goto(_url(root, docname), wait_until="load", timeout=60_000)
    has_mathjax = page.evaluate("() => !!(window.MathJax && window.MathJax.startup)")
    if has_mathjax:
        page.evaluate("() => window.MathJax.startup.promise")
        page.wait_for_timeout(200)
    return {
        "mathjax": has_mathjax,
        "math": page.locator("mjx-container").count(),
        "merror": page.locator("mjx-merror").count(),
        "raw_tex": page.evaluate(_JS_TEXT_WITH_TEX, _RAW_TEX.pattern),
        "folds": page.evaluate(_JS_FOLDS),
        "figures": page.evaluate(_JS_FIGURES),
        "content": page.evaluate(_JS_CONTENT),
        "links": page.evaluate(_JS_LINKS),
    }


def image_outputs(nb) -> int:
    return sum(1 for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
               if o.get("output_type") in ("display_data", "execute_result")
               and any(k.startswith("image/") for k in o.get("data", {})))


def solution_cells(nb, kind: str | None = None) -> int:
    return sum(1 for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution")
               and kind in (None, c.cell_type))


def graded_test_cells(nb) -> int:
    return sum(1 for c in nb.cells if c.cell_type == "code"
               and c.get("metadata", {}).get("nbgrader", {}).get("grade")
               and not c.get("metadata", {}).get("nbgrader", {}).get("solution"))


def _math_problems(where: str, info: dict, need_math: bool) -> list[str]:
    problems = []
    if need_math and not info["mathjax"]:
        problems.append(f"{where}: MathJax not loaded")
    if need_math and info["math"] == 0:
        problems.append(f"{where}: no typeset math (mjx-container)")
    if info["merror"]:
        problems.append(f"{where}: {info['merror']} MathJax error(s) (mjx-merror)")
    if info["raw_tex"]:
        problems.append(f"{where}: raw TeX left in text: {info['raw_tex'][:5]}")
    return problems


def _section_shots(page, info: dict, name: str) -> None:
    """Screenshots of the section page: as loaded; a folded solution above a captioned figure
    (a window tall enough for both); the first written solution opened by a click."""
    page.screenshot(path=str(SHOTS / f"{name}.png"))
    pair = info["fold_and_figure"] = page.evaluate(_JS_FOLD_AND_FIGURE)
    if pair:
        page.set_viewport_size({"width": bs.VIEWPORT["width"], "height": min(1600, int(pair["span"]) + 140)})
        page.evaluate("(y) => window.scrollTo(0, y)", max(0, pair["top"] - 90))
        page.wait_for_timeout(300)
        page.screenshot(path=str(SHOTS / f"{name}.fold-and-figure.png"))
        page.set_viewport_size(bs.VIEWPORT)
    first = page.locator("article details.td-solution:not(.td-code-fold) > summary").first
    first.scroll_into_view_if_needed()
    first.click()
    page.wait_for_timeout(300)
    info["opened"] = page.evaluate(
        "() => { const d = document.querySelector('article details.td-solution:not(.td-code-fold)');"
        " return {open: d.open, height: d.getBoundingClientRect().height}; }")
    page.screenshot(path=str(SHOTS / f"{name}.solution-open.png"))


def _only(prefixes: tuple[str, ...]):
    """A Playwright route handler that lets through the URLs starting with ``prefixes``."""
    def route(r) -> None:
        r.continue_() if r.request.url.startswith(prefixes) else r.abort()
    return route


@pytest.fixture(scope="module")
def visits(site, executed, offline_page) -> dict[str, dict[str, dict]]:
    """edition -> docname -> what :func:`open_page` found on that page, plus ``axe`` (axe-core's
    WCAG 2.1 A/AA result as loaded), on the section page ``axe_open`` (the same in the folds,
    all opened), and on the home and section pages ``axe_cssom`` (the rule that reads the style
    sheets, over http://127.0.0.1). Every page of both editions is loaded once, in two tabs
    taking turns: axe runs in one while the next page loads in the other. Screenshots on the
    way (before axe, which flattens repeated code highlighting: browser_support.axe_start)."""
    page = offline_page.page
    # a second tab: a page loads in one while axe-core runs in the other (two cores)
    other = page.context.new_page()
    other.on("console", lambda m: offline_page.console_errors.append(f"{m.type}: {m.text}")
             if m.type == "error" else None)
    other.on("pageerror", lambda e: offline_page.console_errors.append(f"pageerror: {e}"))
    SHOTS.mkdir(parents=True, exist_ok=True)
    out: dict[str, dict[str, dict]] = {}
    for edition in ("solutions", "student"):
        root = site.edition(edition)
        found: dict[str, dict] = {}
        pending = None  # (tab, docname) whose axe run is under way
        t0 = time.perf_counter()
        for i, d in enumerate(html_pages(root)):
            tab = (page, other)[i % 2]
            info = found[d] = open_page(tab, root, d)
            if d == "index" and edition == "solutions":
                tab.screenshot(path=str(SHOTS / "home.png"))
            if d == SECTION_SHOT and edition == "student":
                tab.screenshot(path=str(SHOTS / f"student-{Path(d).name}.png"))
            if d == SECTION_SHOT and edition == "solutions":
                _section_shots(tab, info, Path(d).name)
                # the folds, all opened, then closed again as loaded
                tab.evaluate("() => document.querySelectorAll('article details').forEach(d => d.open = true)")
                tab.evaluate("() => window.MathJax && window.MathJax.typesetPromise ? "
                             "window.MathJax.typesetPromise() : null")
                info["axe_open"] = bs.axe_run_page(tab, root="article details")
                tab.evaluate("() => document.querySelectorAll('article details').forEach(d => d.open = false)")
            if pending:
                found[pending[1]]["axe"] = bs.axe_wait(pending[0])
            info["code_blocks"] = bs.axe_start(tab)  # last on the page: it flattens repeated highlighting
            pending = (tab, d)
        if pending:
            found[pending[1]]["axe"] = bs.axe_wait(pending[0])
        print(f"{edition} edition: {len(found)} pages loaded and checked by axe-core in "
              f"{time.perf_counter() - t0:.0f} s")
        # the rule that needs the style sheets as text, over http://127.0.0.1 (same pages, same CSS)
        with bs.serve_folder(root) as base:
            context = page.context.browser.new_context(viewport=bs.VIEWPORT)
            context.route("**/*", _only((base, "data:", "blob:", "about:")))
            served = context.new_page()
            for d in ("index", SECTION_SHOT):
                served.goto(base + d + ".html", wait_until="load", timeout=60_000)
                found[d]["axe_cssom"] = bs.axe_run(served, rules=bs.AXE_CSSOM_RULES, preload=True)
            context.close()
        out[edition] = found
    other.close()
    return out


def _secrets() -> tuple[dict[str, str], set[str], str]:
    """(solution lines -> where from, lines the released notebooks show, their text with
    only letters and digits). ``tools.build.handout.secret_lines`` subtracts what ``course/release``
    shows when it is built; the releases are recomputed here from the sources (solutions
    stubbed, hidden tests cut, as nbgrader does), so the check does not depend on it."""
    from tools import nbcore
    from tools.build.handout import secret_lines

    shown_lines: set[str] = set()
    shown_text = []
    for src in _sources():
        for c in nbcore.read_source(src).cells:
            text = c.source
            if nbcore.is_answer(c):
                text = (nbcore.stub_region(text, nbcore.CODE_STUB if c.cell_type == "code" else nbcore.TEXT_STUB)
                        if nbcore.BEGIN_SOL in text else nbcore.TEXT_STUB)
            text = nbcore.strip_markers(text, nbcore.BEGIN_HIDDEN, nbcore.END_HIDDEN, keep=False)
            shown_lines |= {ln.strip().lstrip("#").strip() for ln in text.splitlines()}
            shown_text.append(text)
    secret = {s: w for s, w in secret_lines(REPO / "course").items() if s not in shown_lines}
    return secret, shown_lines, _alnum("\n".join(shown_text))


def _alnum(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "", text)


def solution_leaks(info: dict, secret: dict[str, str], shown_alnum: str) -> list[str]:
    """Solution lines a page shows: a line of code equal to a secret line, or the text of a
    written solution (letters and digits, 24 or more) that the released notebooks do not show."""
    code = {ln.strip().lstrip("#").strip() for pre in info["content"]["pre"] for ln in pre.splitlines()}
    prose = _alnum(info["content"]["text"])
    leaks = [f"{s[:80]!r} ({w})" for s, w in secret.items() if s in code]
    for s, w in secret.items():
        a = _alnum(s)
        if "markdown" in w and len(a) >= 24 and a in prose and a not in shown_alnum:
            leaks.append(f"{s[:80]!r} ({w})")
    return leaks


def _page_problems(root: Path, visited: dict[str, dict], executed: dict, where_prefix: str) -> list[str]:
    """What both editions must get right on every notebook page and the home page: math,
    titles, sidebar, previous/next, figures loaded, the autograder's folds, one fold style."""
    docnames = list(executed)
    problems: list[str] = []
    home = visited["index"]
    problems += _math_problems(f"{where_prefix}home", home, need_math=True)
    reached = {_docname(root, a["href"]) for a in home["links"]["sidebar"]}
    for d in docnames:
        if d not in reached:
            problems.append(f"{where_prefix}home: the sidebar does not link to {d}")
    if "Notebook" in home["links"]["title"]:
        problems.append(f"{where_prefix}home: <title> is {home['links']['title']!r}")
    chain = []
    for d in docnames:
        info, where = visited[d], f"{where_prefix}{d}"
        title = expected_title(SOURCE / f"{d}.py")
        problems += _math_problems(where, info, need_math=True)
        links = info["links"]
        h1 = links["h1"].replace("#", "").strip()
        if h1 != title:
            problems.append(f"{where}: page heading {h1!r}, expected the section title {title!r}")
        if not links["title"].startswith(title) or "Notebook" in links["title"]:
            problems.append(f"{where}: <title> {links['title']!r} does not start with {title!r}")
        side = {_docname(root, a["href"]): a["text"] for a in links["sidebar"]}
        for other in docnames:
            if other not in side:
                problems.append(f"{where}: the sidebar lacks {other}")
        if side.get(d) not in (None, title):
            problems.append(f"{where}: the sidebar names it {side.get(d)!r}, not {title!r}")
        broken = [i["src"] for i in info["figures"] if not i["ok"]]
        if broken:
            problems.append(f"{where}: figures that did not load: {broken[:5]}")
        # the autograder's test cells: folded, labelled, none left in view
        checks = [f for f in info["folds"] if "td-autograder" in f["cls"]]
        n_tests = graded_test_cells(executed[d])
        if len(checks) != n_tests:
            problems.append(f"{where}: {len(checks)} folded test cells, {n_tests} in the notebook")
        for f in checks:
            if not f["label"].startswith(AUTOGRADER + " — ") or f["open"] or not f["hidden"]:
                problems.append(f"{where}: test cell fold {f['label']!r} (open={f['open']}, hidden={f['hidden']})")
        if info["content"]["visible_own_work"]:
            problems.append(f"{where}: {info['content']['visible_own_work']} own_work(...) blocks in view")
        # one fold style: native <details>, the label is the bar's own text (its accessible name)
        if info["content"]["other_folds"]:
            problems.append(f"{where}: {info['content']['other_folds']} fold widgets of another kind")
        ours = [f for f in info["folds"] if "td-fold" in f["cls"]]
        if len({f["look"] for f in ours}) > 1:
            problems.append(f"{where}: the folds look different: {sorted({f['look'] for f in ours})}")
        for f in ours:
            if f["aria"] is not None:
                problems.append(f"{where}: fold bar {f['label']!r} has aria-label={f['aria']!r}")
        labels = [f["label"] for f in ours]
        dup = sorted({x for x in labels if labels.count(x) > 1})
        if dup:
            problems.append(f"{where}: fold labels repeated: {dup}")
        for line in info["content"]["text"].splitlines():
            if _ANY_BAR.search(line):
                problems.append(f"{where}: progress bar left in the page: {line.strip()[:100]!r}")
                break
        chain.append((d, _docname(root, links["prev"] or ""), _docname(root, links["next"] or "")))
    nxt = {d: n for d, _p, n in chain}
    seen, cur = [], _docname(root, home["links"]["next"] or "")
    while cur and cur in nxt and cur not in seen:
        seen.append(cur)
        cur = nxt[cur]
    if sorted(seen) != sorted(docnames):
        problems.append(f"{where_prefix}following 'next' from the home page reaches {seen}, not all of {docnames}")
    return problems


# --------------------------------------------------------------------------------- tests
def test_site_pages_offline(site, executed, visits, offline_page):
    """The solutions edition: every page right, every answer folded under its labelled bar."""
    visited = visits["solutions"]
    problems = _page_problems(site.root, visited, executed, "")
    for d in executed:
        info, where = visited[d], d
        want = image_outputs(executed[d])
        if len(info["figures"]) != want:
            problems.append(f"{where}: {len(info['figures'])} figures on the page, {want} image outputs "
                            f"in the notebook")
        sols = [f for f in info["folds"] if "td-solution" in f["cls"]]
        n_sol = solution_cells(executed[d])
        if len(sols) != n_sol:
            problems.append(f"{where}: {len(sols)} folded solutions, {n_sol} answer cells")
        for s in sols:
            if not re.match(r"^Solution — \S", s["label"]):
                problems.append(f"{where}: solution bar labelled {s['label']!r}")
            if s["open"] or not s["hidden"] or s["height"] > 40:
                problems.append(f"{where}: solution {s['label']!r} is not folded ({s})")
        kinds = {("code" if "td-code-fold" in s["cls"] else "text"): s["colours"] for s in sols}
        if len(set(kinds.values())) > 1:
            problems.append(f"{where}: written and code solutions fold in different colours: {kinds}")
        labels = [s["label"] for s in sols]
        if d.endswith("td2_7_3_spectral_bias") and "Solution — 7.3.A.2" not in labels:
            problems.append(f"{where}: no bar labelled 'Solution — 7.3.A.2' among {labels}")
    section = visited[SECTION_SHOT]
    if not (section.get("opened") or {}).get("open") or section["opened"]["height"] < 80:
        problems.append(f"{SECTION_SHOT}: clicking the first solution bar did not open it: {section.get('opened')}")
    if not section.get("fold_and_figure"):
        problems.append(f"{SECTION_SHOT}: no folded solution just above a figure for the screenshot")
    if offline_page.blocked:
        problems.append(f"the pages asked the network for: {sorted(set(offline_page.blocked))[:10]}")
    if offline_page.console_errors:
        problems.append(f"browser console errors: {offline_page.console_errors[:10]}")
    assert not problems, "\n".join(problems)
    for shot in ("home.png", Path(SECTION_SHOT).name + ".png", Path(SECTION_SHOT).name + ".fold-and-figure.png"):
        assert (SHOTS / shot).stat().st_size > 10_000, f"screenshot {shot} missing or empty"


def test_student_edition_offline_without_solutions(site, executed, visits):
    """The student edition: every page right, no solution anywhere: no solution fold, a box
    for every written answer, the released stub for every code answer, no line of a solution
    or hidden test in any page (and the same check does find them in the solutions edition)."""
    visited = visits["student"]
    problems = _page_problems(site.student, visited, executed, "student edition, ")
    built = built_pages(site.student)
    secret, _shown, shown_alnum = _secrets()
    assert len(secret) > 100, f"only {len(secret)} solution lines found in the sources"
    for d in executed:
        info, where = visited[d], f"student edition, {d}"
        if any("td-solution" in f["cls"] for f in info["folds"]) or "Solution — " in info["content"]["text"]:
            problems.append(f"{where}: a solution fold or label is on the page")
        boxes = info["content"]["answer_boxes"]
        if len(boxes) != solution_cells(executed[d], "markdown") or not all(
                b.startswith("Your answer — ") for b in boxes):
            problems.append(f"{where}: {len(boxes)} answer boxes for {solution_cells(executed[d], 'markdown')} "
                            f"written answers: {boxes[:3]}")
        stubs = sum(pre.count("raise NotImplementedError()") for pre in info["content"]["pre"])
        if stubs < solution_cells(executed[d], "code"):
            problems.append(f"{where}: {stubs} code stubs for {solution_cells(executed[d], 'code')} code answers")
        if len(info["figures"]) != len(built[d]["figures"]):
            problems.append(f"{where}: {len(info['figures'])} figures on the page, {len(built[d]['figures'])} staged")
        if info["content"]["withheld"] != built[d]["withheld"]:
            problems.append(f"{where}: {info['content']['withheld']} withheld-output notes, "
                            f"{built[d]['withheld']} outputs withheld")
        leaks = solution_leaks(info, secret, shown_alnum)
        if leaks:
            problems.append(f"{where}: {len(leaks)} solution lines shown: {leaks[:5]}")
    # the detector is not blind: the solutions edition shows the solutions
    found = sum(len(solution_leaks(visits["solutions"][d], secret, shown_alnum)) for d in executed)
    if found < 100:
        problems.append(f"the leak check finds only {found} solution lines in the solutions edition")
    assert not problems, "\n".join(problems)


def test_axe_wcag21_aa_every_page_of_both_editions(visits):
    """axe-core, every WCAG 2.1 A and AA rule (experimental ones included), every page of both
    editions as loaded, and the folds of the section page once opened: no violation. The rule
    that reads the style sheets runs on pages served over http://127.0.0.1 (from file:// it
    cannot fetch them) and must pass."""
    problems = []
    for edition, visited in visits.items():
        assert len(visited) >= 11, f"{edition}: only {sorted(visited)}"
        for d, info in visited.items():
            for key, how in (("axe", ""), ("axe_open", " (folds open)"), ("axe_cssom", " (over http, style sheets)")):
                if key in info and info[key]["violations"]:
                    problems.append(f"{edition}, {d}{how}:\n" + bs.axe_report(info[key]["violations"]))
            undecided = set(bs.AXE_CSSOM_RULES) - set(info.get("axe_cssom", {}).get("passes", bs.AXE_CSSOM_RULES))
            if undecided:
                problems.append(f"{edition}, {d}: axe could not decide {sorted(undecided)} over http")
    axe = visits["solutions"]["index"]["axe"]
    assert axe["rules"] > 50, f"axe {axe['version']} ran only {axe['rules']} rules"
    assert not problems, f"axe-core {axe['version']}, WCAG 2.1 A/AA:\n" + "\n".join(problems)


def test_every_figure_has_a_caption_and_an_alt_text(site, executed, visits):
    """Every figure of both editions sits in a <figure> with a caption, and its alt text
    describes it (from site/figures.toml): not empty, not its file name or path, not the caption."""
    problems = []
    total = {}
    for edition, visited in visits.items():
        built = built_pages(site.edition(edition))
        n = 0
        for d in executed:
            for p in built[d].get("figure_problems", []):
                problems.append(f"{edition}: {p}")
            for f in built[d]["figures"]:
                if not f["described"]:
                    problems.append(f"{edition}, {d}: a figure without an entry in site/figures.toml: "
                                    f"{f['caption'][:80]!r}")
            for i, fig in enumerate(visited[d]["figures"], start=1):
                n += 1
                where = f"{edition}, {d}, figure {i} ({fig['src']})"
                alt, caption = (fig["alt"] or "").strip(), (fig["caption"] or "").strip()
                name = Path(fig["src"] or "").name
                if not caption:
                    problems.append(f"{where}: no caption")
                if (len(alt) < 40 or name in alt or Path(name).stem in alt
                        or re.search(r"\.(png|jpe?g|svg)\b|_images/", alt)):
                    problems.append(f"{where}: alt text {alt[:80]!r} is not a description")
                if alt == caption:
                    problems.append(f"{where}: alt text repeats the caption")
        total[edition] = n
    want = sum(image_outputs(nb) for nb in executed.values())
    assert total["solutions"] == want, f"{total['solutions']} figures checked, {want} image outputs"
    assert total["student"] >= want - 5, f"the student edition shows only {total['student']} of {want} figures"
    assert not problems, "\n".join(problems)


def test_strip_progress_and_reveals():
    """The two rules of the staging that no page shows directly: progress-bar lines go (what a
    terminal would show last counts), and which cells of the student edition lose their output."""
    from tools.site.pages import reveals, strip_progress

    text = ("run: 100%|####| 3/3 [00:00<00:00, 10.0it/s]\nresult 1\n"
            "x:  50%|##  | 1/2 [00:00<?, ?it/s]\rx: 100%|####| 2/2 [00:01<00:00, 2.0it/s]\n"
            "seen: 12it [00:01, 9.9it/s]\n12% of the runs failed | see below\n")
    assert strip_progress(text) == ("result 1\n12% of the runs failed | see below\n", 3)
    answers = {"f"}
    assert reveals("print(f(2))", answers)
    assert not reveals("r = demo_result(lambda: f(2), 4, 'f')\nprint(r)", answers)
    assert not reveals("g = student_or(f, abs, lambda h: h(1), 'f')\nprint(g(3))", answers)
    assert not reveals("def h():\n    return f(1)", answers) and "h" in answers  # defined: not run yet
    assert reveals("print(h())", answers)
    assert not reveals("f = abs\nprint(f(-1))", answers) and "f" not in answers  # rebound to a clean value
    assert not reveals("print([f for f in range(3)])", {"f"})


def _stream_texts(nb):
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code":
            continue
        for o in c.get("outputs", []):
            if o.get("output_type") == "stream":
                yield i, o.get("name"), o.get("text", "")
            elif o.get("output_type") in ("display_data", "execute_result"):
                yield i, "data", o.get("data", {}).get("text/plain", "")


def test_progress_bars_keep_one_final_line(executed):
    """Refresh debris is a bar line that a later line of the same bar replaced: an
    unfinished line followed by one with the same description, or text overwritten by a
    carriage return. (Separate bars may share a description, each with its own final line.)"""
    problems = []
    for d, nb in executed.items():
        for i, name, text in _stream_texts(nb):
            if re.search(r"[^\n]\r[^\n]", text):
                problems.append(f"{d} cell {i} ({name}): carriage returns kept (bar refreshes "
                                f"saved): {text[:80]!r}")
            bars = [m for m in map(_BAR.match, text.splitlines()) if m]
            for k, m in enumerate(bars):
                desc = m.group("desc").strip()
                if m.group("n") != m.group("total") and any(
                        later.group("desc").strip() == desc for later in bars[k + 1:]):
                    problems.append(f"{d} cell {i}: bar {desc!r} saved at "
                                    f"{m.group('n')}/{m.group('total')} and again later")
    assert not problems, "\n".join(problems)


def test_no_warning_in_executed_outputs(executed):
    problems = []
    for d, nb in executed.items():
        for i, name, text in _stream_texts(nb):
            for line in text.splitlines():
                if re.search(r"\b\w*Warning\b|^\s*warnings\.warn", line):
                    problems.append(f"{d} cell {i} ({name}): {line.strip()[:160]}")
    assert not problems, "outputs holding warnings:\n" + "\n".join(problems)


def _tiny_assignment(path: Path) -> None:
    def meta(**kw) -> dict:
        return {"nbgrader": {"schema_version": 3, "task": False, **kw}}

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Feedback math\nInline $\\frac{a}{b}$ and "
                                      "$\\mathbb E[x]$, display\n$$\\int_0^1 x\\,dx=\\tfrac12.$$"),
        nbformat.v4.new_code_cell("from td_lib.core.runtime import progress\nimport time\n"
                                  "for i in progress(range(3), desc='bar', mininterval=0):\n"
                                  "    time.sleep(0.05)"),
        nbformat.v4.new_code_cell("def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n"
                                  "    ### END SOLUTION",
                                  metadata=meta(grade=False, grade_id="f", locked=False,
                                                solution=True)),
        nbformat.v4.new_code_cell("assert f(2) == 4, 'f(2) should be 4: f doubles x'",
                                  metadata=meta(grade=True, grade_id="test_f", locked=True,
                                                points=1, solution=False)),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))


def test_feedback_page_offline(tmp_path, offline_page):
    from tools.site.feedback_page import FEEDBACK_CONFIG

    course = tmp_path / "course"
    _tiny_assignment(course / "source" / "a" / "nb.ipynb")
    (course / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"  # tools imports from anywhere (editable install)
        f"c.CourseDirectory.root = {str(course)!r}\nc.CourseDirectory.course_id = 'scratch'\n"
        f"c.Exchange.root = {str(tmp_path / 'exchange')!r}\n" + FEEDBACK_CONFIG)
    env = bs.jupyter_environment(tmp_path / "state", quick=False)
    nbg = str(bs.VENV_BIN / "nbgrader")

    def run(*args: str) -> None:
        p = subprocess.run([nbg, *args], cwd=course, env=env, capture_output=True, text=True,
                           timeout=300)
        assert p.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{p.stdout[-3000:]}{p.stderr[-3000:]}"

    run("generate_assignment", "a", "--force")
    sub = course / "submitted" / "s1" / "a"
    sub.mkdir(parents=True)
    (sub / "nb.ipynb").write_bytes((course / "release" / "a" / "nb.ipynb").read_bytes())
    run("autograde", "a", "--force")
    run("generate_feedback", "a", "--force")
    page_path = course / "feedback" / "s1" / "a" / "nb.html"
    assert page_path.exists(), "generate_feedback wrote no page"
    # the page is self-contained: a copy elsewhere renders the same
    copy = tmp_path / "copied" / "nb.html"
    copy.parent.mkdir()
    copy.write_bytes(page_path.read_bytes())
    page = offline_page.page
    before = len(offline_page.blocked)
    page.goto(copy.as_uri(), wait_until="load", timeout=60_000)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "feedback.png"), full_page=True)
    # No MathJax: generate_feedback wrote the maths as MathML (tools/site/feedback_page.py), which the
    # browser renders itself; a formula latex2mathml could not read would stay as TeX in <code>.
    maths = page.locator("math")
    problems = _math_problems("feedback", {
        "mathjax": True, "math": maths.count(),
        "merror": page.locator("merror, code.tex").count(),
        "raw_tex": page.evaluate(_JS_TEXT_WITH_TEX, _RAW_TEX.pattern)}, need_math=True)
    if maths.count() < 3:
        problems.append("feedback: fewer than the 3 formulas of the notebook typeset")
    if any(w <= 0 for w in maths.evaluate_all("ms => ms.map(m => m.getBoundingClientRect().width)")):
        problems.append("feedback: a formula renders with no width")
    if page.evaluate("() => document.scripts.length"):
        problems.append("feedback: the page carries a script")
    if len(offline_page.blocked) > before:
        problems.append(f"feedback: asked the network for {offline_page.blocked[before:]}")
    bars = [ln for ln in page.locator("div.output_area pre, div.output_subarea pre").all_inner_texts()
            if "bar:" in ln]
    if len(bars) != 1:
        problems.append(f"feedback: the progress bar shows {len(bars)} lines, not one: {bars}")
    assert not problems, "\n".join(problems)
