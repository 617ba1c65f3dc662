"""The feedback page a student gets (issue 31, point 3): readable by everyone, light, honest.

A scratch course with the course's own nbgrader configuration (``course/nbgrader_config.py``):
one notebook with maths, a written answer graded by hand (2 points), a test cell the student
passes and one whose message is long (it fails). ``nbgrader generate_assignment``, ``autograde``,
``generate_feedback``, then:

(a) before hand-grading: the written answer says "to be graded by your instructor" (not a
    score), the header splits the score into autograded and hand-graded points, and
    ``generate_feedback`` warns the instructor (student, notebook, parts not graded);
(b) after a manual grade and a comment are set in the gradebook (nbgrader's API, as the
    Formgrader does) and the feedback generated again: the page shows that score and the
    comment, and no warning;
(c) the page is at most 300 KB, says its language, has MathML for the notebook's formulas,
    runs no script, and axe-core (WCAG 2.1 A/AA, every rule) finds nothing in headless Chromium;
(d) a long error message wraps: nothing on the page scrolls sideways.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from tools import env

try:
    from tests import browser_support as bs
except ImportError:  # tests/ on sys.path (pytest's rootdir-less import mode)
    import browser_support as bs

pytestmark = [pytest.mark.pipeline, pytest.mark.timeout(900)]

A = "fb"
NB = "page"
STUDENT = "s1"
MAX_BYTES = 300_000
LONG = "f(3) should be 7: " + "the expected value is computed from the statement, " * 12 + "...by your implementation"
WRITTEN = ("The rate is $\\frac{1}{\\sqrt{n}}$ because the variance is "
           "$$\\operatorname{Var}(\\bar x) = \\frac{\\sigma^2}{n}.$$")


def _meta(**kw) -> dict:
    return {"nbgrader": {"schema_version": 3, "task": False, **kw}}


def source_notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Feedback page\nInline $\\frac{a}{b}$ and $\\mathbb E[x]$, display\n"
                                      "$$\\int_0^1 x\\,dx=\\tfrac12.$$\nSee [the notes](https://example.org/notes)."),
        nbformat.v4.new_markdown_cell("### BEGIN SOLUTION\nAn answer.\n### END SOLUTION", metadata=_meta(
            grade=True, grade_id="written", locked=False, points=2, solution=True)),
        nbformat.v4.new_code_cell("def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION",
                                  metadata=_meta(grade=False, grade_id="ex_f", locked=False, solution=True)),
        nbformat.v4.new_code_cell("import numpy as np\nprint('values:', np.arange(3) * 2)\n{'key': [1, 2.5, 'text']}"),
        nbformat.v4.new_code_cell(  # a wide table: it must fit the page, not scroll
            "from IPython.display import HTML\n"
            "HTML('<table><tr>' + ''.join(f'<th>column_{i}</th>' for i in range(20)) + '</tr><tr>'"
            " + ''.join(f'<td>{i * 1234567.891:.3f}</td>' for i in range(20)) + '</tr></table>')"),
        nbformat.v4.new_code_cell("assert f(2) == 4, 'f(2) should be 4: f doubles x'", metadata=_meta(
            grade=True, grade_id="test_f", locked=True, points=1, solution=False)),
        nbformat.v4.new_code_cell(f"assert f(3) == 7, {LONG!r}", metadata=_meta(
            grade=True, grade_id="test_long", locked=True, points=1, solution=False)),
    ]
    return nb


class Course:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.page = root / "feedback" / STUDENT / A / f"{NB}.html"

    def nbgrader(self, *args: str) -> str:
        from tools.build import pipeline

        p = pipeline.nbgrader(*args, course=self.root)
        return p.stdout + p.stderr


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Course:
    """The scratch course, the student's work autograded, feedback generated before any
    hand-grading (``before``: the page and generate_feedback's output)."""
    root = tmp_path_factory.mktemp("feedback-page") / "course"
    (root / "source" / A).mkdir(parents=True)
    nbformat.write(source_notebook(), str(root / "source" / A / f"{NB}.ipynb"))
    (root / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"load_subconfig({str(env.COURSE / 'nbgrader_config.py')!r})  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(root)!r}\n")
    c = Course(root)
    c.nbgrader("generate_assignment", A, "--force")
    nb = nbformat.read(str(root / "release" / A / f"{NB}.ipynb"), as_version=4)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid == "written":
            cell.source = WRITTEN
        elif gid == "ex_f":
            cell.source = "def f(x):\n    return 2 * x"
    sub = root / "submitted" / STUDENT / A
    sub.mkdir(parents=True)
    nbformat.write(nb, str(sub / f"{NB}.ipynb"))
    c.nbgrader("autograde", A, "--force")
    c.log_before = c.nbgrader("generate_feedback", A, "--force")
    c.html_before = c.page.read_text(encoding="utf-8")
    c.bytes_before = c.page.stat().st_size
    c.copies = {"before": root.parent / "before" / f"{NB}.html"}  # a page stands alone: opened elsewhere
    c.copies["before"].parent.mkdir()
    c.copies["before"].write_bytes(c.page.read_bytes())
    return c


@pytest.fixture(scope="module")
def graded(course) -> Course:
    """The same course after the instructor graded the written answer (1.5 of 2) and generated
    the feedback again."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gb:
        grade = gb.find_grade("written", NB, A, STUDENT)
        grade.manual_score = 1.5  # what the Formgrader's API does when a grade is saved
        grade.needs_manual_grade = False
        gb.find_comment("written", NB, A, STUDENT).manual_comment = "Right, and **well argued**: $\\sigma^2/n$."
        gb.db.commit()
    course.log_after = course.nbgrader("generate_feedback", A, "--force")
    course.html_after = course.page.read_text(encoding="utf-8")
    course.copies["after"] = course.root.parent / "after" / f"{NB}.html"
    course.copies["after"].parent.mkdir()
    course.copies["after"].write_bytes(course.page.read_bytes())
    return course


def _text(html: str) -> str:
    html = re.sub(r"<style>.*?</style>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


# -------------------------------------------------------------------------------- grades
def test_before_hand_grading_parts_are_pending_and_the_instructor_is_warned(course):
    text = _text(course.html_before)
    assert "To be graded by your instructor (2 points)" in text, text[:2000]
    assert "Score: 0.0 / 2.0" not in text, "the ungraded written answer shows 0 points"
    assert "Autograded: 1 / 2 · Graded by hand: to be graded (2 points)" in text, text[:1500]
    assert re.search(r"Score: 1\.0 / 4\.0 so far \(2 points still to be graded by your instructor\)", text), text[:1500]
    warning = [ln for ln in course.log_before.splitlines() if "WARNING" in ln and "not graded yet" in ln]
    assert warning, f"generate_feedback did not warn:\n{course.log_before[-3000:]}"
    assert STUDENT in warning[0] and f"{A}/{NB}" in warning[0] and "1 part(s)" in warning[0], warning


def test_after_hand_grading_the_page_shows_the_score_and_nobody_is_warned(graded):
    text = _text(graded.html_after)
    assert "to be graded" not in text.lower(), text[:2000]
    assert "Autograded: 1 / 2 · Graded by hand: 1.5 / 2" in text, text[:1500]
    assert "Score: 2.5 / 4.0" in text, text[:1500]
    assert "Score: 1.5 / 2.0" in text, "the written answer's own score is missing"
    assert "Comments: Right, and well argued" in text and 'href="#comment-written"' in graded.html_after
    assert re.search(r'id="comment-written".*?<math', graded.html_after, re.S), "the comment's maths is not MathML"
    assert "not graded yet" not in graded.log_after, graded.log_after[-3000:]


# -------------------------------------------------------------------------------- the page
def test_page_is_small_self_contained_and_script_free(course):
    html = course.html_before
    assert course.bytes_before <= MAX_BYTES, f"the page is {course.bytes_before} bytes"
    assert re.search(r"<html lang=\"en\"", html)
    assert "<script" not in html.lower(), "the page carries a script"
    assert "script-src 'none'" in html, "the page's CSP lets scripts run"
    assert html.count("<math") >= 5, "the notebook's and the answer's formulas are not MathML"
    assert "<mfrac>" in html and "<msqrt>" in html
    assert "MathJax" not in html and "bootstrap" not in html.lower()
    assert "BEGIN SOLUTION" not in html
    # the full traceback message is there, not cut
    assert "...by your implementation" in html


_JS_MEASURE = """() => {
  // what scrolls sideways and is not a named region reachable by keyboard (a wide table's)
  const wide = [...document.querySelectorAll('body *')].filter(e => e.scrollWidth > e.clientWidth + 1
      && getComputedStyle(e).overflowX !== 'visible'
      && !(e.getAttribute('tabindex') === '0' && e.getAttribute('aria-label'))).map(e => e.tagName + '.' + e.className);
  const scrollers = [...document.querySelectorAll('.td-scroll')].map(e => e.scrollWidth > e.clientWidth);
  const err = document.querySelector('.output_error pre');
  const maths = [...document.querySelectorAll('math')];
  return {wide, page_wide: document.documentElement.scrollWidth > window.innerWidth,
          error_ws: err ? getComputedStyle(err).whiteSpace : null,
          error_fits: err ? err.scrollWidth <= err.clientWidth : null,
          maths: maths.length, math_width: maths.map(m => m.getBoundingClientRect().width),
          scripts: document.scripts.length, scrollers};
}"""


@pytest.fixture(scope="module")
def opened(graded, chromium):
    """The pages before and after hand-grading, copied elsewhere and opened offline in headless
    Chromium (a narrow window): axe-core's WCAG 2.1 A/AA result and what each page measures."""
    out = {}
    with bs.chromium_browser() as browser:
        context = browser.new_context(viewport={"width": 800, "height": 800})
        fetched: list[str] = []

        def route(r):
            if r.request.url.startswith(("file:", "data:", "about:")):
                r.continue_()
            else:
                fetched.append(r.request.url)
                r.abort()

        context.route("**/*", route)
        for when, path in graded.copies.items():
            page = context.new_page()
            page.goto(path.as_uri(), wait_until="load", timeout=60_000)
            out[when] = {"measured": page.evaluate(_JS_MEASURE), "axe": bs.axe_run(page)}
            page.close()
        context.close()
    out["fetched"] = fetched
    return out


def test_page_passes_axe_wcag21_aa(opened):
    problems = []
    for when in ("before", "after"):
        axe = opened[when]["axe"]
        assert axe["rules"] > 50, f"axe {axe['version']} ran only {axe['rules']} rules"
        if axe["violations"]:
            problems.append(f"{when} hand-grading:\n" + bs.axe_report(axe["violations"]))
    assert not problems, f"axe-core {axe['version']}, WCAG 2.1 A/AA:\n" + "\n".join(problems)
    assert not opened["fetched"], f"the page asked the network for {opened['fetched']}"


def test_maths_render_and_long_messages_wrap(opened):
    for when in ("before", "after"):
        m = opened[when]["measured"]
        assert m["scripts"] == 0, when
        assert m["maths"] >= 5 and all(w > 0 for w in m["math_width"]), (when, m)
        assert m["error_ws"] == "pre-wrap" and m["error_fits"], (when, m)
        assert not m["wide"] and not m["page_wide"], f"{when}: elements that scroll sideways: {m['wide']}"
        assert m["scrollers"] == [True], f"{when}: the wide table is not in a keyboard-reachable scroller: {m}"


# -------------------------------------------------------------------------------- units
def test_typeset_writes_only_clean_mathml():
    from tools.site.feedback_page import typeset
    from tools.site.sanitize import clean_html

    out = typeset(clean_html("<p>$\\href{javascript:alert(1)}{x}$ and $a&lt;b$</p>"
                             "<math><mi onclick='alert(2)'>s</mi><maction actiontype='x'>y</maction></math>"))
    assert "javascript" not in out and "onclick" not in out and "maction" not in out, out
    assert out.count("<math") == 2 and "<mi>x</mi>" in out, out
    # maths in code stays text; a dollar escaped stays a dollar; unreadable TeX stays visible TeX
    assert typeset("<p><code>$x$</code> costs \\$5</p>") == "<p><code>$x$</code> costs \\$5</p>"
    assert '<code class="tex">$\\frac{$</code>' in typeset("<p>$\\frac{$</p>")
    # primes before a superscript (x''^\star) read as one superscript, as TeX reads them
    assert "<math" in typeset("<p>$l''^\\star$</p>")


def test_style_sheet_colours_are_aa():
    from tools.site.feedback_page import CODE_BACKGROUND, ERROR_BACKGROUND, ansi_css, contrast, pygments_css

    for css, background in ((pygments_css(), CODE_BACKGROUND), (ansi_css(), ERROR_BACKGROUND)):
        for colour in re.findall(r"color: (#[0-9a-f]{6})", css):
            assert contrast(colour, background) >= 4.5, (colour, background)
