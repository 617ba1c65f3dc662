"""The course site in a real browser with no network: headless Debian Chromium (Playwright).

The site (``python -m tools.site``) is opened from ``file://`` with every request that is
not ``file:`` (or 127.0.0.1) aborted, as on a lab machine or a train. For the home page and
every notebook page the test asserts:

* math is typeset by the packaged MathJax (``mjx-container`` elements, no ``mjx-merror``),
  and no text node outside code still holds ``$…$``, ``\\frac``, ``\\mathbb``, ``\\(``;
* every figure is there and loaded: as many ``<img>`` in the outputs as the executed
  notebook has image outputs;
* every nbgrader answer cell is folded (hidden until its bar is opened) under a bar
  ``Solution — …``, all labels of a page distinct, 7.3.A.2 labelled as such;
* the page title and ``<title>`` are the section title (the notebook's first level-1
  heading with a section number, else its first), never "Notebook";
* the sidebar of every page and the previous/next links reach every page;
* the page asked for nothing outside the folder.

The executed notebooks behind the site are checked too: one final line per progress bar
(no refresh left behind), and no warning in any output.

A student's feedback page is checked the same way (math typeset offline, nothing fetched):
nbgrader generate_assignment / autograde / generate_feedback run on a tiny notebook in a
scratch course whose config adds ``tools.site.FEEDBACK_CONFIG`` (the lines
course/nbgrader_config.py carries).

Screenshots: ``build/site-shots/home.png``, ``build/site-shots/<section>.png`` (and the same
page with a solution opened), ``build/site-shots/feedback.png``.

Which site: ``TD_SITE_DIR`` (a built site, e.g. ``solutions/site`` after ``make``) with
``TD_SITE_NOTEBOOKS`` (the executed notebooks it was built from; default: the folder above
the site, as ``solutions/`` holds ``solutions/site/``). Without them the fixture builds one itself from
quick-mode executions (``tools.render --quick``, as nbgrader runs them) into
``build/site-test/``, reusing those executions when they are newer than their sources.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
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

_H1 = re.compile(r"^# (?!%%)(.+?)\s*$")
_NUMBERED = re.compile(r"^§?\s*\d+(\.\d+)*[a-z]?\b")
_RAW_TEX = re.compile(r"\$[^$\n]+\$|\\frac|\\mathbb|\\\(|\\\[")
_BAR = re.compile(r"^(?P<desc>.*?):?\s*(?P<pct>\d+)%\|[^|]*\|\s*(?P<n>\d+)/(?P<total>\d+)\b")


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
def _build_quick_site() -> tuple[Path, Path]:
    notebooks, site = TEST_ROOT / "notebooks", TEST_ROOT / "site"
    stale = [s for s in _sources()
             if not (notebooks / s.parent.name / (s.stem + ".ipynb")).exists()
             or (notebooks / s.parent.name / (s.stem + ".ipynb")).stat().st_mtime
             < max(s.stat().st_mtime, (REPO / "td_lib" / "core" / "runtime.py").stat().st_mtime)]
    py = str(REPO / ".venv" / "bin" / "python") if (REPO / ".venv").exists() else sys.executable
    if stale:
        subprocess.run([py, "-m", "tools.render", "--quick", "--out", str(notebooks),
                        *map(str, stale)], cwd=REPO, check=True)
    subprocess.run([py, "-m", "tools.site", "--notebooks", str(notebooks), "--out", str(site),
                    "--stage", str(TEST_ROOT / "src")], cwd=REPO, check=True)
    return site, notebooks


@pytest.fixture(scope="module")
def site() -> tuple[Path, Path]:
    """(site folder, folder of the executed notebooks it was built from)."""
    if os.environ.get("TD_SITE_DIR"):
        root = Path(os.environ["TD_SITE_DIR"]).resolve()
        nbs = os.environ.get("TD_SITE_NOTEBOOKS")
        notebooks = Path(nbs).resolve() if nbs else root.parent  # solutions/site -> solutions/
        assert (root / "index.html").exists(), f"TD_SITE_DIR={root} holds no index.html"
        return root, notebooks
    return _build_quick_site()


@pytest.fixture(scope="module")
def executed(site) -> dict[str, nbformat.NotebookNode]:
    """docname -> the executed notebook behind its page."""
    _root, notebooks = site
    out = {}
    for s in _sources():
        path = notebooks / s.parent.name / (s.stem + ".ipynb")
        assert path.exists(), f"executed notebook {path} missing"
        out[f"{s.parent.name}/{s.stem}"] = nbformat.read(str(path), as_version=4)
    return out


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
_JS_SOLUTIONS = """
() => {
  const shown = e => e.checkVisibility({visibilityProperty: true, opacityProperty: true})
                     && e.getBoundingClientRect().height > 0;
  const out = [];
  for (const el of document.querySelectorAll(
      'div.admonition.td-solution, details.hide.above-input')) {
    if (el.tagName === 'DETAILS') {
      const s = el.querySelector(':scope > summary .collapsed') ||
                el.querySelector(':scope > summary');
      const body = Array.from(el.children).filter(c => c.tagName !== 'SUMMARY');
      const tall = el.getBoundingClientRect().height -
                   el.querySelector(':scope > summary').getBoundingClientRect().height;
      out.push({kind: 'code', label: s.textContent.trim(), folded: !el.open,
                hidden: body.length > 0 && body.every(c => !shown(c)) && tall < 40});
    } else {
      const t = el.querySelector(':scope > .admonition-title');
      const body = Array.from(el.children).filter(c => !c.classList.contains('admonition-title'));
      // text nodes straight under the fold (e.g. after a <div> that closed a <p>) are not
      // hidden by the toggle: the folded box must be no taller than its title bar
      const tall = el.getBoundingClientRect().height - t.getBoundingClientRect().height;
      out.push({kind: 'text', label: t.textContent.trim(),
                folded: el.classList.contains('toggle-hidden'),
                hidden: body.length > 0 && body.every(c => !shown(c)) && tall < 40});
    }
  }
  return out;
}
"""
_JS_IMAGES = """
() => Array.from(document.querySelectorAll('div.cell_output img')).map(
    i => ({src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0}))
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
        "solutions": page.evaluate(_JS_SOLUTIONS),
        "images": page.evaluate(_JS_IMAGES),
        "links": page.evaluate(_JS_LINKS),
    }


def image_outputs(nb) -> int:
    return sum(1 for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
               if o.get("output_type") in ("display_data", "execute_result")
               and any(k.startswith("image/") for k in o.get("data", {})))


def solution_cells(nb) -> int:
    return sum(1 for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution"))


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


# --------------------------------------------------------------------------------- tests
def test_site_pages_offline(site, executed, offline_page):
    root, _notebooks = site
    page = offline_page.page
    docnames = list(executed)
    problems: list[str] = []
    SHOTS.mkdir(parents=True, exist_ok=True)

    home = open_page(page, root, "index")
    page.screenshot(path=str(SHOTS / "home.png"))
    problems += _math_problems("home", home, need_math=True)
    reached = {_docname(root, a["href"]) for a in home["links"]["sidebar"]}
    for d in docnames:
        if d not in reached:
            problems.append(f"home: the sidebar does not link to {d}")
    if "Notebook" in home["links"]["title"]:
        problems.append(f"home: <title> is {home['links']['title']!r}")

    chain = []  # pages reached by following "next" from the home page
    for d in docnames:
        src = SOURCE / f"{d}.py"
        title = expected_title(src)
        info = open_page(page, root, d)
        where = d
        if d == SECTION_SHOT:
            page.screenshot(path=str(SHOTS / (Path(d).name + ".png")))
            first = page.locator("div.admonition.td-solution > .admonition-title").first
            first.scroll_into_view_if_needed()
            first.click()
            page.wait_for_timeout(300)
            page.screenshot(path=str(SHOTS / (Path(d).name + ".solution-open.png")))
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
        # figures
        want = image_outputs(executed[d])
        imgs = info["images"]
        if len(imgs) != want:
            problems.append(f"{where}: {len(imgs)} figures on the page, {want} image outputs "
                            f"in the notebook")
        broken = [i["src"] for i in imgs if not i["ok"]]
        if broken:
            problems.append(f"{where}: figures that did not load: {broken[:5]}")
        # solutions
        sols = info["solutions"]
        n_sol = solution_cells(executed[d])
        if len(sols) != n_sol:
            problems.append(f"{where}: {len(sols)} folded solutions, {n_sol} answer cells")
        labels = [s["label"] for s in sols]
        for s in sols:
            if not re.match(r"^Solution — \S", s["label"]):
                problems.append(f"{where}: solution bar labelled {s['label']!r}")
            if not (s["folded"] and s["hidden"]):
                problems.append(f"{where}: solution {s['label']!r} is not folded ({s})")
        dup = sorted({x for x in labels if labels.count(x) > 1})
        if dup:
            problems.append(f"{where}: solution labels repeated: {dup}")
        if d.endswith("td2_7_3_spectral_bias") and "Solution — 7.3.A.2" not in labels:
            problems.append(f"{where}: no bar labelled 'Solution — 7.3.A.2' among {labels}")
        chain.append((d, _docname(root, links["prev"] or ""), _docname(root, links["next"] or "")))

    # previous/next: a chain home -> first -> ... -> last
    nxt = {d: n for d, _p, n in chain}
    seen, cur = [], _docname(root, home["links"]["next"] or "")
    while cur and cur in nxt and cur not in seen:
        seen.append(cur)
        cur = nxt[cur]
    if sorted(seen) != sorted(docnames):
        problems.append(f"following 'next' from the home page reaches {seen}, not all of "
                        f"{docnames}")
    if offline_page.blocked:
        problems.append(f"the pages asked the network for: {sorted(set(offline_page.blocked))[:10]}")
    if offline_page.console_errors:
        problems.append(f"browser console errors: {offline_page.console_errors[:10]}")
    assert not problems, "\n".join(problems)
    for shot in ("home.png", Path(SECTION_SHOT).name + ".png"):
        assert (SHOTS / shot).stat().st_size > 10_000, f"screenshot {shot} missing or empty"


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
    from tools.site import FEEDBACK_CONFIG

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
    page.wait_for_function("() => window.MathJax && window.MathJax.startup", timeout=30_000)
    page.evaluate("() => window.MathJax.startup.promise")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "feedback.png"), full_page=True)
    problems = _math_problems("feedback", {
        "mathjax": True, "math": page.locator("mjx-container").count(),
        "merror": page.locator("mjx-merror").count(),
        "raw_tex": page.evaluate(_JS_TEXT_WITH_TEX, _RAW_TEX.pattern)}, need_math=True)
    if page.locator("mjx-container").count() < 3:
        problems.append("feedback: fewer than the 3 formulas of the notebook typeset")
    if len(offline_page.blocked) > before:
        problems.append(f"feedback: asked the network for {offline_page.blocked[before:]}")
    bars = [ln for ln in page.locator("div.output_area pre, div.output_subarea pre").all_inner_texts()
            if "bar:" in ln]
    if len(bars) != 1:
        problems.append(f"feedback: the progress bar shows {len(bars)} lines, not one: {bars}")
    assert not problems, "\n".join(problems)
