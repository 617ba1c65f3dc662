"""The feedback page a student gets (``nbgrader generate_feedback``): readable by everyone, light,
script-free, and honest about what is not graded yet.

nbgrader's own feedback page inlined the whole of MathJax (2.3 MB of a 2.5 MB page), Bootstrap and
the classic notebook's style sheet, and showed a hand-graded part that nobody had graded yet as
"Score: 0.0 / 1.0". Here (configured in ``course/nbgrader_config.py``, template
``tools/templates/td_feedback``):

- **Maths as MathML, typeset when the page is generated** (:func:`typeset`, on the pure-Python
  ``latex2mathml``): Chromium and Firefox render MathML Core natively, so the page runs no script
  at all (its Content-Security-Policy says ``script-src 'none'``). The TeX comes from text that
  :func:`tools.site.sanitize.clean_html` has already cleaned (a submission's own ``<math>`` elements are
  removed there, as before); the MathML generated from it goes through an allowlist of its own
  (:data:`MATH_TAGS`, :data:`MATH_ATTRIBUTES`: presentation elements and layout attributes, no
  ``href``, no event handler, no ``maction``/``semantics``). A formula latex2mathml cannot read stays
  visible as its TeX source, in ``<code>``.
- **Filters** (``c.FeedbackExporter.filters``, :data:`FILTERS`): ``markdown2html`` renders and cleans
  markdown as :class:`tools.site.sanitize.CleanMarkdown` does, then typesets its maths; ``td_typeset``
  typesets the maths of an already cleaned fragment (HTML outputs); ``td_latex`` turns a
  ``text/latex`` output into text and MathML; ``td_feedback_css`` is the page's style sheet
  (:func:`feedback_css`: the page's own few rules, and Pygments and ANSI colours darkened until each
  has a contrast of at least 4.5:1 on its background, WCAG AA).
- **Grades not given yet** (:class:`MarkPendingGrades`, after nbgrader's ``GetGrades``): each graded
  part is marked with the gradebook's ``needs_manual_grade``; the template shows such a part as "to
  be graded by your instructor" instead of a score, and the page's header splits the score into
  autograded and hand-graded points (``td_summary``). ``nbgrader generate_feedback`` logs a
  WARNING naming the student, the notebook and the parts not graded yet.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from pathlib import Path

import nh3
from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

from tools.site.sanitize import FILTERS as SANITIZING_FILTERS
from tools.site.sanitize import CleanMarkdown

# ----------------------------------------------------------------------------------- maths
#: MathML presentation elements latex2mathml writes (MathML Core and a few it renders as such)
MATH_TAGS = {
    "math", "mrow", "mi", "mo", "mn", "ms", "mtext", "mspace", "mfrac", "msqrt", "mroot", "mstyle",
    "merror", "mpadded", "mphantom", "msub", "msup", "msubsup", "munder", "mover", "munderover",
    "mmultiscripts", "mprescripts", "none", "mtable", "mtr", "mtd", "menclose",
}
#: their layout attributes (none takes a URL or runs anything)
MATH_ATTRIBUTES = {
    "math": {"display", "xmlns"},
    "*": {"mathvariant", "displaystyle", "scriptlevel", "stretchy", "fence", "separator", "lspace",
          "rspace", "accent", "accentunder", "largeop", "movablelimits", "symmetric", "minsize",
          "maxsize", "form", "linethickness", "width", "height", "depth", "voffset", "columnalign",
          "columnspacing", "rowspacing", "columnlines", "rowlines", "frame", "framespacing",
          "rowalign", "columnspan", "rowspan", "notation", "align", "equalrows", "equalcolumns"},
}
_MATH_CLEANER = nh3.Cleaner(tags=MATH_TAGS, attributes=MATH_ATTRIBUTES, url_schemes=set(),
                            strip_comments=True, link_rel=None)

# $$...$$, \[...\], \begin{env}...\end{env} (display); $...$, \(...\) (inline); \$ is a dollar
_MATH = re.compile(r"(?<!\\)\$\$(?P<dd>.+?)(?<!\\)\$\$|\\\[(?P<db>.+?)\\\]"
                   r"|(?P<env>\\begin\{(?P<name>[A-Za-z]+\*?)\}.+?\\end\{(?P=name)\})"
                   r"|(?<!\\)\$(?P<id>[^$]+?)(?<!\\)\$|\\\((?P<ib>.+?)\\\)", re.S)
# a tag of a serialised, cleaned fragment (attribute values quoted; they may hold ">")
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)(?:[^>\"']|\"[^\"]*\"|'[^']*')*>")
#: elements whose text is never maths
_NO_MATH = {"pre", "code", "kbd", "samp", "script", "style", "textarea", "math", "title"}


@lru_cache(maxsize=4096)
def mathml(tex: str, display: bool) -> str:
    """``tex`` (no delimiters) as a ``<math>`` element, or ``None`` if latex2mathml cannot read it."""
    from latex2mathml.converter import convert

    tex = tex.strip()
    for attempt in (tex, _PRIMES.sub(_primes_up, tex)):
        try:
            return _MATH_CLEANER.clean(convert(attempt, display="block" if display else "inline"))
        except Exception:  # noqa: BLE001 - any TeX latex2mathml does not understand
            continue
    return None


# x''^\star: TeX (and MathJax) read primes and the superscript after them as one superscript;
# latex2mathml sees a double superscript unless they are written as one
_PRIMES = re.compile(r"('+)\^(\{[^{}]*\}|\\[A-Za-z]+|[^\s{}\\])")


def _primes_up(m: re.Match) -> str:
    sup = m.group(2)[1:-1] if m.group(2).startswith("{") else m.group(2)
    return "^{" + "\\prime" * len(m.group(1)) + " " + sup + "}"


def _typeset_text(text: str) -> str:
    """A text node (escaped HTML) with its maths as MathML, the rest escaped again."""
    raw = html.unescape(text)
    if "$" not in raw and "\\" not in raw:
        return text
    out, last = [], 0
    for m in _MATH.finditer(raw):
        if m.group("env"):
            tex, display = m.group("env"), True
        else:
            tex = next(g for g in (m.group("dd"), m.group("db"), m.group("id"), m.group("ib")) if g is not None)
            display = m.group("dd") is not None or m.group("db") is not None
        if not tex.strip():
            continue
        out.append(html.escape(raw[last:m.start()], quote=False))
        rendered = mathml(tex, display)
        out.append(rendered if rendered else
                   '<code class="tex">' + html.escape(m.group(0), quote=False) + "</code>")
        last = m.end()
    if not out:
        return text
    out.append(html.escape(raw[last:], quote=False))
    return "".join(out)


def typeset(fragment) -> str:
    """A cleaned HTML fragment with the maths of its text (``$...$``, ``$$...$$``, ``\\(...\\)``,
    ``\\[...\\]``, ``\\begin{env}...\\end{env}``, as MathJax reads them) as MathML; text inside
    ``pre``, ``code``, ``kbd``, ``samp`` is left alone. A formula that spans an element (markdown
    never writes one) stays text."""
    fragment = str(fragment)
    if "$" not in fragment and "\\" not in fragment:
        return fragment
    out, depth, last = [], 0, 0
    for m in _TAG.finditer(fragment):
        text = fragment[last:m.start()]
        out.append(_typeset_text(text) if depth == 0 and text else text)
        out.append(m.group(0))
        name = m.group(2).lower()
        if name in _NO_MATH and not m.group(0).endswith("/>"):
            depth += -1 if m.group(1) else 1
            depth = max(depth, 0)
        last = m.end()
    tail = fragment[last:]
    out.append(_typeset_text(tail) if depth == 0 and tail else tail)
    return "".join(out)


class MathMLMarkdown(CleanMarkdown):
    """The ``markdown2html`` filter of feedback pages: rendered and cleaned
    (:class:`tools.site.sanitize.CleanMarkdown`), then its maths typeset (:func:`typeset`)."""

    def __call__(self, context, source) -> str:
        return typeset(super().__call__(context, source))


def latex_output(tex) -> str:
    """A ``text/latex`` output as HTML: its maths as MathML, the rest as text."""
    return _typeset_text(html.escape(str(tex), quote=False))


# ----------------------------------------------------------------------------------- style
BACKGROUND = "#ffffff"
CODE_BACKGROUND = "#f6f8fa"
ERROR_BACKGROUND = "#fff5f5"
#: colours of the ANSI classes nbconvert's ``ansi2html`` writes (tracebacks, coloured prints)
ANSI = {"black": "#000000", "red": "#c0392b", "green": "#1e7b34", "yellow": "#8a6d00",
        "blue": "#1f5fbf", "magenta": "#9b2f9b", "cyan": "#0b6e7a", "white": "#595959"}


def _luminance(hex_colour: str) -> float:
    rgb = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two ``#rrggbb`` colours."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def readable(colour: str, background: str, ratio: float = 4.6) -> str:
    """``colour`` darkened (same hue) until its contrast on ``background`` reaches ``ratio``."""
    colour = "#" + "".join(ch * 2 for ch in colour[1:]) if len(colour) == 4 else colour
    rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    out = colour.lower()
    while contrast(out, background) < ratio:
        rgb = [int(c * 0.9) for c in rgb]
        out = "#" + "".join(f"{c:02x}" for c in rgb)
    return out


_HEX = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b")


@lru_cache(maxsize=1)
def pygments_css(style: str = "default") -> str:
    """Pygments' ``style`` for ``.highlight``, every text colour made AA-readable on the code
    background; background colours (``hll``, errors) dropped."""
    from pygments.formatters import HtmlFormatter

    rules = []
    for line in HtmlFormatter(style=style).get_style_defs(".highlight").splitlines():
        if not line.startswith(".highlight ") or "{" not in line:
            continue
        sel, body = line.split("{", 1)
        decls = []
        for decl in body.split("}", 1)[0].split(";"):
            decl = decl.strip()
            if decl.startswith("color:"):
                m = _HEX.search(decl)
                if m:
                    decls.append("color: " + readable(m.group(0), CODE_BACKGROUND))
            elif decl.startswith(("font-weight", "font-style")):
                decls.append(decl)
        if decls:
            rules.append(sel.strip() + " { " + "; ".join(decls) + " }")
    return "\n".join(rules)


def ansi_css() -> str:
    """The ANSI text colours, readable on an error output's background; background colours
    ignored (the text keeps its contrast)."""
    rules = []
    for name, colour in ANSI.items():
        c = readable(colour, ERROR_BACKGROUND)
        rules.append(f".ansi-{name}-fg, .ansi-{name}-intense-fg {{ color: {c} }}")
    rules.append(".ansi-bold { font-weight: bold } .ansi-underline { text-decoration: underline }")
    return "\n".join(rules)


PAGE_CSS = f"""
*, *::before, *::after {{ box-sizing: border-box; }}
html {{ background: {BACKGROUND}; color: #1a1a1a; }}
body {{ margin: 0 auto; max-width: 60rem; padding: 1rem; font: 16px/1.5 system-ui, -apple-system,
  "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; overflow-wrap: break-word; }}
a {{ color: #0645ad; text-decoration: underline; }}
a:visited {{ color: #5a2ca0; }}
a:focus-visible, [tabindex]:focus-visible {{ outline: 3px solid #1f5fbf; outline-offset: 2px; }}
h1 {{ font-size: 1.6rem; margin: 0 0 .5rem; }}
header.td-summary {{ border: 1px solid #c8ccd1; border-radius: 6px; padding: .75rem 1rem; margin-bottom: 1.5rem; }}
.td-scores {{ margin: 0 0 .5rem; padding: 0; list-style: none; }}
.td-scores li {{ margin: .15rem 0; }}
.td-pending, .late-penalty {{ color: #8a1c1c; font-weight: 600; }}
nav.td-toc ol {{ margin: .25rem 0 0; padding-left: 1.5rem; }}
nav.td-toc h2 {{ font-size: 1.05rem; margin: .75rem 0 0; }}
.cell {{ margin: 1rem 0; }}
.prompt {{ display: none; }}
.nbgrader_cell {{ border: 1px solid #1f5fbf; border-radius: 6px; }}
.nbgrader_cell > .td-cell-head {{ display: flex; flex-wrap: wrap; justify-content: space-between; gap: .5rem;
  background: #e8f0fb; padding: .35rem .6rem; border-bottom: 1px solid #1f5fbf; font-weight: 600; }}
.nbgrader_cell > .td-cell-body {{ padding: .4rem .6rem; }}
.nbgrader_cell > .td-cell-foot {{ border-top: 1px solid #c8ccd1; padding: .4rem .6rem; background: #fafafa; }}
pre, code, kbd, samp {{ font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  font-size: .875rem; }}
pre {{ margin: 0; padding: .5rem .75rem; white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-word; }}
.input_area .highlight, .input_area pre {{ background: {CODE_BACKGROUND}; color: #1a1a1a; border-radius: 4px; }}
.output_wrapper {{ margin-top: .25rem; }}
.output_area {{ margin: .25rem 0; }}
.output_subarea {{ overflow-wrap: anywhere; }}
.output_stderr pre, .output_error pre {{ background: {ERROR_BACKGROUND}; color: #1a1a1a;
  border-left: 4px solid #c0392b; }}
.output_area img, .rendered_html img {{ max-width: 100%; height: auto; }}
.rendered_html table {{ border-collapse: collapse; margin: .5rem 0; }}
.rendered_html th, .rendered_html td {{ border: 1px solid #c8ccd1; padding: .2rem .5rem; text-align: right; }}
.text_cell .rendered_html :is(th, td) {{ overflow-wrap: anywhere; }}
.td-scroll {{ overflow-x: auto; max-width: 100%; }}
.td-scroll :is(th, td) {{ overflow-wrap: normal; }}
.rendered_html :is(h1, h2, h3, h4, h5, h6) {{ line-height: 1.25; }}
.rendered_html a.anchor-link {{ margin-left: .3rem; font-size: .8em; }}
math[display="block"] {{ margin: .5rem 0; overflow-wrap: normal; }}
code.tex {{ background: {CODE_BACKGROUND}; }}
@media print {{ .cell {{ break-inside: avoid; }} }}
"""


@lru_cache(maxsize=1)
def feedback_css(_value: object = None) -> str:
    """The whole style sheet of a feedback page (a Jinja filter: ``"" | td_feedback_css``)."""
    return PAGE_CSS.strip() + "\n" + pygments_css() + "\n" + ansi_css() + "\n"


# ----------------------------------------------------------------------------------- grades
def _points(value) -> str:
    value = float(value or 0)
    return f"{value:g}"


class MarkPendingGrades(Preprocessor):
    """After nbgrader's ``GetGrades``: each graded part (``nbgrader.grade`` or ``task``) gets
    ``td_pending`` (the gradebook's ``needs_manual_grade``: no one has graded it yet) and
    ``td_hand`` (graded by hand: a written or coded answer, a task; else a test cell), and the
    notebook's score is split into autograded and hand-graded points
    (``resources['nbgrader']['td_summary']``). Logs a WARNING when parts are not graded yet:
    their points are not in the score the student would see."""

    enabled = Bool(True, help="Whether to mark the parts not graded yet.").tag(config=True)

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook, MissingEntry

        info = resources["nbgrader"]
        notebook, assignment, student = info["notebook"], info["assignment"], info["student"]
        buckets = {k: {"score": 0.0, "max": 0.0, "pending": 0.0, "pending_parts": 0, "graded_parts": 0}
                   for k in ("auto", "hand")}
        pending_ids = []
        with Gradebook(info["db_url"]) as gb:
            for cell in nb.cells:
                meta = cell.get("metadata", {}).get("nbgrader")
                if not isinstance(meta, dict):
                    continue
                meta.pop("td_pending", None)
                meta.pop("td_hand", None)
                if not (meta.get("grade") or meta.get("task")):
                    continue
                try:
                    grade = gb.find_grade(meta["grade_id"], notebook, assignment, student)
                except MissingEntry:
                    continue
                hand = bool(meta.get("solution") or meta.get("task"))
                pending = bool(grade.needs_manual_grade)
                meta["td_hand"], meta["td_pending"] = hand, pending
                b = buckets["hand" if hand else "auto"]
                points = float(grade.max_score or 0)
                if pending:
                    b["pending"] += points
                    b["pending_parts"] += 1
                    pending_ids.append(meta["grade_id"])
                else:
                    b["score"] += float(grade.score or 0)
                    b["max"] += points
                    b["graded_parts"] += 1
        summary = {}
        for key, label in (("auto", "Autograded"), ("hand", "Graded by hand")):
            b = buckets[key]
            if not (b["pending_parts"] or b["graded_parts"]):
                continue
            parts = []
            if b["graded_parts"]:
                parts.append(f"{_points(b['score'])} / {_points(b['max'])}")
            if b["pending_parts"]:
                parts.append(f"to be graded ({_points(b['pending'])} point{'' if b['pending'] == 1 else 's'})")
            summary[key] = {"label": label, "text": ", ".join(parts), "pending": b["pending_parts"] > 0}
        pending_points = buckets["auto"]["pending"] + buckets["hand"]["pending"]
        summary["pending_parts"] = len(pending_ids)
        summary["pending_points"] = _points(pending_points)
        info["td_summary"] = summary
        if pending_ids:
            self.log.warning(
                "Feedback for %s, %s/%s: %d part(s) not graded yet (%s points: %s); the page shows "
                "them as 'to be graded by your instructor' and leaves their points out of the score. "
                "Grade them (Formgrader) and run generate_feedback again before releasing it.",
                student, assignment, notebook, len(pending_ids), _points(pending_points), ", ".join(pending_ids))
        return nb, resources


#: ``c.FeedbackExporter.filters`` (course/nbgrader_config.py): the sanitizing filters, and ours
FILTERS = {
    **SANITIZING_FILTERS,
    "markdown2html": "tools.site.feedback_page.MathMLMarkdown",
    "td_typeset": "tools.site.feedback_page.typeset",
    "td_latex": "tools.site.feedback_page.latex_output",
    "td_feedback_css": "tools.site.feedback_page.feedback_css",
}


# ------------------------------------------------------------------- nbgrader configuration
def configure_feedback(c) -> None:
    """Set the course's feedback pages on the nbgrader configuration ``c`` (course/nbgrader_config.py
    calls it; tests/test_site.py and tests/test_feedback_page.py through :data:`FEEDBACK_CONFIG`): the
    preprocessors (grades, then the parts not graded yet marked, hidden-test lines scrubbed, hidden
    tests cleared, student HTML cleaned) and, on generate_feedback's own exporter class, the course's
    template and filters (maths as MathML, no script, the course's own style sheet)."""
    from nbgrader.preprocessors import ClearHiddenTests, GetGrades

    from tools.grading.nbgrader_ext import ScrubHiddenOutputs
    from tools.site.sanitize import SanitizeStudentHTML

    c.GenerateFeedback.preprocessors = [GetGrades, MarkPendingGrades, ScrubHiddenOutputs, ClearHiddenTests,
                                        SanitizeStudentHTML]
    c.ClearHiddenTests.enforce_metadata = False
    c.GenerateFeedback.exporter_class = FeedbackExporter
    c.FeedbackExporter.template_name = "td_feedback"
    c.FeedbackExporter.extra_template_basedirs = feedback_template_basedirs()
    c.FeedbackExporter.filters = FILTERS
    c.FeedbackExporter.sanitize_html = True


#: the lines a scratch course's nbgrader_config.py adds for the course's feedback pages
FEEDBACK_CONFIG = "from tools.site.feedback_page import configure_feedback\nconfigure_feedback(c)\n"


class FeedbackExporter(HTMLExporter):
    """The exporter of ``nbgrader generate_feedback`` alone (``c.GenerateFeedback.exporter_class``).

    A subclass so that the course's feedback template (``c.FeedbackExporter.template_name``) and
    filters (``c.FeedbackExporter.filters``: maths as MathML) reach feedback pages only: the
    Formgrader builds a plain ``HTMLExporter`` from the same configuration and keeps nbgrader's
    ``formgrade`` template and its filters. Everything else set on ``c.HTMLExporter``
    (``sanitize_html``, the Bootstrap path generate_feedback adds, which the course's template
    does not use) applies to both.
    """


def feedback_template_basedirs() -> list[str]:
    """``HTMLExporter.extra_template_basedirs`` for ``nbgrader generate_feedback``: ours
    (``td_feedback``, a whole page built on nbconvert's ``classic`` cells; nbgrader's own
    ``feedback`` template is not used, and nbgrader adds its folder only when this option is
    unset)."""
    return [str(Path(__file__).resolve().parents[1] / "templates")]
