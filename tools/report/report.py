"""The instructor's report of an assignment: one self-contained HTML page.

    python -m tools.report.report ASSIGNMENT [--course DIR] [--out FILE]     # make report A=<assignment>

Default output ``course/reports/<assignment>.html``. It reads what grading left behind and
changes nothing:

- grades from nbgrader's gradebook (``gradebook.db``, through ``nbgrader.api.Gradebook``:
  the numbers ``nbgrader export`` and the Formgrader show): the score distribution, and per
  graded cell the share of full, partial and zero marks (and of answers still to grade by hand);
- failure messages from the autograded notebooks (``autograded/<student>/<assignment>/``):
  the error outputs of the cells with nbgrader grade metadata, grouped per test cell after
  masking the numbers (``<n>``), most frequent first, with a count and one student as example;
- the integrity check and grading time from ``make grade``'s records
  (``.grade/<assignment>/<student>.json``; a class graded by plain ``nbgrader autograde`` has
  none, and its integrity errors are still read from the notebooks);
- the class by misconception: per graded code exercise, how many students made each of its
  known mistakes (``tools.grading.mistakes``: named in ``make grade``'s records when a failing test
  recognised one) and how many failed it in a way no known mistake explains, the authors'
  cue to declare one;
- pairs of submissions whose code answers are near-identical beyond the released stubs
  (``tools/report/similarity.py``, copydetect), with the two cells side by side, for a look.

The figures are matplotlib PNGs inlined as ``data:`` URIs, with alt texts and captions; the
page loads nothing (no script, font or style from elsewhere) and works offline.

What students wrote (messages, code, names) reaches the page only as text (Jinja autoescape),
and the page carries its own Content-Security-Policy (:func:`content_security_policy`): no script
runs, nothing is fetched but its ``data:`` images, only its own style sheet applies.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import hashlib
import html
import io
import re
import statistics
import sys
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from tools import env
from tools.grading import mistakes
from tools.grading.grade import RESULTS_DIR
from tools.grading.integrity import INTEGRITY_ENAME
from tools.grading.record import GradingRecord
from tools.report import similarity

TEMPLATE = Path(__file__).resolve().parents[1] / "templates" / "report.html.j2"
#: a number in a message: an integer, a decimal or scientific float, with its sign, also as a
#: coefficient (``6t``); not a digit inside a name (``eq34``, ``x2``, ``td2_7``)
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?")
MAX_MESSAGES = 8  # message groups shown per test cell
MAX_PAIR_CELLS = 4  # cells shown side by side per similar pair
MAX_PAIRS = 200  # rows of the table of similar pairs
MAX_PAIRS_SIDE_BY_SIDE = 30  # pairs whose cells are shown side by side


def mask(message: str) -> str:
    """The message with every number replaced by ``<n>`` and whitespace runs collapsed."""
    return " ".join(NUMBER.sub("<n>", message).split())


# ------------------------------------------------------------------------- the data
@dataclass
class Cell:
    notebook: str
    name: str  # grade_id
    cell_type: str  # code: autograded test; markdown: graded by hand
    max_score: float
    full: int = 0
    partial: int = 0
    zero: int = 0
    to_grade: int = 0  # answers awaiting manual grading

    @property
    def label(self) -> str:
        return f"{self.notebook} / {self.name}"


@dataclass
class Submission:
    student: str
    score: float
    max_score: float
    timestamp: str
    needs_manual_grade: bool
    seconds: float | None = None  # grading time (make grade's record)
    timing: dict[str, float] = field(default_factory=dict)
    flags: dict[str, list[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


@dataclass
class MessageGroup:
    masked: str
    count: int
    example_student: str
    example: str
    students: list[str]


@dataclass
class Misconception:
    name: str
    hint: str
    students: list[str]


@dataclass
class ExerciseMistakes:
    """One graded code exercise: the students per known mistake, and those whose failure no
    known mistake explains."""

    notebook: str
    exercise: str
    tests: list[str]
    known: list[Misconception]
    unexplained: list[str]

    @property
    def failed(self) -> int:
        return sum(len(m.students) for m in self.known) + len(self.unexplained)


@dataclass
class Report:
    assignment: str
    course: Path
    max_score: float
    cells: list[Cell]
    submissions: list[Submission]
    failures: dict[str, list[MessageGroup]]  # cell label -> groups, most frequent first
    pairs: list[similarity.Pair]
    records: bool  # make grade's records were found
    similarity_note: str = ""
    misconceptions: list[ExerciseMistakes] = field(default_factory=list)
    threshold: float = similarity.THRESHOLD
    min_overlap: int = similarity.MIN_OVERLAP
    generated: str = field(default_factory=lambda: dt.datetime.now().isoformat(timespec="seconds"))

    @property
    def flagged(self) -> list[Submission]:
        return [s for s in self.submissions if s.flags]


def category(score: float | None, max_score: float, needs_manual: bool) -> str:
    if needs_manual:
        return "to_grade"
    score = score or 0.0
    if score >= max_score:
        return "full"
    return "zero" if score <= 0 else "partial"


def gradebook(course: Path, assignment: str) -> tuple[float, list[Cell], list[Submission]]:
    """(maximum score, graded cells with their mark counts, submissions) from nbgrader's gradebook."""
    from nbgrader.api import Gradebook, MissingEntry

    db = course / "gradebook.db"
    if not db.exists():
        raise SystemExit(f"no gradebook at {db}: grade the assignment first (make grade A={assignment})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy's chatter inside nbgrader
        with Gradebook(f"sqlite:///{db}") as gb:
            try:
                a = gb.find_assignment(assignment)
            except MissingEntry as e:
                raise SystemExit(f"{assignment} is not in {db}") from e
            cells = {(nb.name, g.name): Cell(nb.name, g.name, g.cell_type, float(g.max_score))
                     for nb in a.notebooks for g in nb.grade_cells}
            subs = []
            for sub in sorted(a.submissions, key=lambda s: s.student.id):
                subs.append(Submission(sub.student.id, float(sub.score), float(sub.max_score), str(sub.timestamp),
                                       bool(sub.needs_manual_grade)))
                for nb in sub.notebooks:
                    for g in nb.grades:
                        cell = cells[(nb.name, g.name)]
                        kind = category(g.score, cell.max_score, bool(g.needs_manual_grade))
                        setattr(cell, kind, getattr(cell, kind) + 1)
            return float(a.max_score), list(cells.values()), subs


def error_messages(nb: nbformat.NotebookNode) -> dict[str, list[str]]:
    """grade_id -> the error messages (``Name: message``) of the graded cells of an executed notebook."""
    out: dict[str, list[str]] = {}
    for c in nb.cells:
        meta = c.get("metadata", {}).get("nbgrader", {})
        if c.cell_type != "code" or not meta.get("grade"):
            continue
        for o in c.get("outputs", []):
            if o.get("output_type") == "error":
                ename, evalue = o.get("ename", "Error"), str(o.get("evalue", "")).strip()
                out.setdefault(meta.get("grade_id", "?"), []).append(f"{ename}: {evalue}" if evalue else ename)
    return out


def failures(course: Path, assignment: str, students: list[str],
             failed: dict[str, set[tuple[str, str]]] | None = None) -> tuple[dict, dict]:
    """(cell label -> message groups, student -> {notebook: integrity messages}) from the
    autograded notebooks; ``failed``, when given, receives student -> {(notebook, test cell)}."""
    groups: dict[str, dict[str, MessageGroup]] = defaultdict(dict)
    integrity: dict[str, dict[str, list[str]]] = {}
    for student in students:
        for path in sorted((course / "autograded" / student / assignment).glob("*.ipynb")):
            try:
                nb = nbformat.read(str(path), as_version=4)
            except Exception:
                continue
            for gid, messages in error_messages(nb).items():
                if failed is not None:
                    failed.setdefault(student, set()).add((path.stem, gid))
                for msg in messages:
                    if msg.startswith(INTEGRITY_ENAME + ":"):
                        integrity.setdefault(student, {}).setdefault(path.stem, []).append(msg)
                    key = mask(msg)
                    g = groups[f"{path.stem} / {gid}"].get(key)
                    if g is None:
                        groups[f"{path.stem} / {gid}"][key] = MessageGroup(key, 1, student, msg, [student])
                    else:
                        g.count += 1
                        g.students.append(student)
    ordered = {label: sorted(gs.values(), key=lambda g: (-g.count, g.masked)) for label, gs in groups.items()}
    return ordered, integrity


def misconceptions(assignment: str, records: dict[str, GradingRecord],
                   failed: dict[str, set[tuple[str, str]]]) -> list[ExerciseMistakes]:
    """Per graded code exercise with known mistakes (``tools.grading.mistakes``), the students whose
    failing test named each (``records[student].mistakes``), and the students who failed one of
    its tests with no known mistake named. Empty without ``make grade``'s records."""
    if not records:
        return []
    out = []
    for nb in mistakes.notebooks(assignment) if (env.COURSE / "source" / assignment).is_dir() else []:
        for ex in mistakes.exercises(assignment, nb):
            if not ex.mistakes:
                continue
            known = {m.name: Misconception(m.name, m.hint, []) for m in ex.mistakes}
            unexplained = []
            for student in sorted(failed):
                bad = [t for t in ex.tests if (nb, t) in failed[student]]
                if not bad:
                    continue
                rec = records.get(student)
                seen = (rec.mistakes.get(nb) or {}) if rec is not None else {}
                names = {seen[t] for t in bad if seen.get(t) in known}
                for n in sorted(names):
                    known[n].students.append(student)
                if not names:
                    unexplained.append(student)
            out.append(ExerciseMistakes(nb, ex.name, ex.tests, list(known.values()), unexplained))
    return out


def grade_records(course: Path, assignment: str) -> dict[str, GradingRecord]:
    """student -> the record ``make grade`` (tools/grading/grade.py) wrote for the submission."""
    out = {}
    for p in sorted((course / RESULTS_DIR / assignment).glob("*.json")):
        try:
            out[p.stem] = GradingRecord.read(p)
        except (OSError, ValueError, TypeError):
            continue
    return out


def submission_folder(course: Path, assignment: str, student: str) -> Path:
    graded = course / "autograded" / student / assignment
    return graded if graded.is_dir() else course / "submitted" / student / assignment


def collect(assignment: str, course: Path = env.COURSE, threshold: float = similarity.THRESHOLD,
            min_overlap: int = similarity.MIN_OVERLAP) -> Report:
    course = Path(course).resolve()
    max_score, cells, subs = gradebook(course, assignment)
    students = [s.student for s in subs]
    failed: dict[str, set[tuple[str, str]]] = {}
    fails, integrity = failures(course, assignment, students, failed)
    order = {c.label: i for i, c in enumerate(cells)}
    fails = dict(sorted(fails.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
    records = grade_records(course, assignment)
    for s in subs:
        rec = records.get(s.student)
        if rec:
            s.seconds = rec.seconds
            s.timing = dict(rec.timing)
            s.flags = {nb: list(v) for nb, v in rec.flags.items() if v}
            s.errors = [e.splitlines()[0] for e in rec.errors]
        for nb, msgs in integrity.get(s.student, {}).items():
            if nb not in s.flags:
                s.flags[nb] = msgs
    release = course / "release" / assignment
    note, pairs = "", []
    if not any(release.glob("*.ipynb")):
        note = (f"no release in {release.relative_to(course)}: the stubs cannot be told apart from the answers "
                "(make release), so no similarity was computed")
    else:
        folders = {s: submission_folder(course, assignment, s) for s in students}
        pairs = similarity.similar_pairs(release, folders, threshold, min_overlap)
    return Report(assignment, course, max_score, cells, subs, fails, pairs, bool(records), note,
                  misconceptions(assignment, records, failed), threshold, min_overlap)


# ----------------------------------------------------------------------- figures
def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _fmt(x: float) -> str:
    return f"{x:g}"


def score_histogram(report: Report) -> dict:
    """The histogram of total scores: ``src`` (data URI), ``alt``, ``caption``."""
    import numpy as np
    from matplotlib.figure import Figure

    scores = [s.score for s in report.submissions]
    top = report.max_score or max(scores, default=1.0) or 1.0
    if top <= 40:
        edges = np.arange(0, np.floor(top) + 2) - 0.5
    else:
        edges = np.linspace(0, top, 21)
    counts, edges = np.histogram(scores, bins=edges)
    fig = Figure(figsize=(7, 3.2))
    ax = fig.add_subplot()
    ax.bar((edges[:-1] + edges[1:]) / 2, counts, width=np.diff(edges) * 0.9, color="#0072B2", edgecolor="#003f63")
    ax.set_xlabel(f"total score (points out of {_fmt(top)})")
    ax.set_ylabel("submissions")
    ax.set_xlim(edges[0], edges[-1])
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_title(f"{report.assignment}: scores of {len(scores)} submissions")
    if report.max_score:
        ax.axvline(report.max_score, color="#555555", linestyle="--", linewidth=1)
    bins = [(edges[i], edges[i + 1], int(n)) for i, n in enumerate(counts) if n]
    if top <= 40:
        parts = [f"{n} at {_fmt((lo + hi) / 2)}" for lo, hi, n in bins]
    else:
        parts = [f"{n} between {lo:.0f} and {hi:.0f}" for lo, hi, n in bins]
    shown = ", ".join(parts[:15]) + (", ..." if len(parts) > 15 else "")
    alt = (f"Histogram of the total scores of the {len(scores)} submissions of {report.assignment}, "
           f"out of {_fmt(top)} points: {shown or 'no submission'}.")
    mean = statistics.fmean(scores) if scores else 0.0
    med = statistics.median(scores) if scores else 0.0
    caption = (f"Score distribution: {len(scores)} submissions, mean {mean:.2f}, median {_fmt(med)} "
               f"of {_fmt(top)} points (dashed line: full marks). Manually graded answers count "
               "only once they are graded.")
    return {"src": _png(fig), "alt": alt, "caption": caption}


COLOURS = {"full": "#009E73", "partial": "#E69F00", "zero": "#D55E00", "to_grade": "#BBBBBB"}
HATCHES = {"full": "", "partial": "//", "zero": "xx", "to_grade": ".."}
NAMES = {"full": "full marks", "partial": "partial marks", "zero": "zero", "to_grade": "to grade by hand"}


def marks_figure(report: Report) -> dict:
    """Stacked horizontal bars: per graded cell, the shares of full, partial and zero marks."""
    import numpy as np
    from matplotlib.figure import Figure

    cells = report.cells
    n = max(1, len(report.submissions))
    fig = Figure(figsize=(8, 0.9 + 0.32 * max(1, len(cells))))
    ax = fig.add_subplot()
    y = np.arange(len(cells))[::-1]
    left = np.zeros(len(cells))
    for kind in ("full", "partial", "zero", "to_grade"):
        share = np.array([getattr(c, kind) / n for c in cells])
        ax.barh(y, share, left=left, color=COLOURS[kind], hatch=HATCHES[kind], edgecolor="white",
                label=NAMES[kind])
        left += share
    ax.set_yticks(y, [f"{c.label} ({_fmt(c.max_score)} pt)" for c in cells], fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of the submissions")
    ax.set_ylabel("graded cell")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, fontsize=8, frameon=False)
    worst = sorted(cells, key=lambda c: (-c.zero, c.label))[:3]
    worst_text = "; ".join(f"{c.label}: {c.zero} of {n}" for c in worst if c.zero)
    alt = (f"Stacked horizontal bars, one per graded cell of {report.assignment} ({len(cells)} cells), "
           f"splitting the {n} submissions into full marks, partial marks, zero and still to grade by hand. "
           + (f"Most zero marks: {worst_text}. " if worst_text else "No cell has a zero mark. ")
           + "The table above gives every number.")
    caption = ("Marks per graded cell: full (green, plain), partial (orange, hatched /), zero (red, crossed) "
               "and answers waiting for manual grading (grey, dotted), as shares of the submissions.")
    return {"src": _png(fig), "alt": alt, "caption": caption}


# ------------------------------------------------------------------------ the page
def highlight(source: str, slices: list[tuple[int, int]]) -> str:
    """``source`` escaped for HTML with the copied spans in ``<mark>``."""
    out, pos = [], 0
    for start, end in sorted(slices):
        start, end = max(start, pos), min(end, len(source))
        if start >= end:
            continue
        out += [html.escape(source[pos:start]), "<mark>", html.escape(source[start:end]), "</mark>"]
        pos = end
    out.append(html.escape(source[pos:]))
    return "".join(out)


CSP_PLACEHOLDER = "TD-REPORT-CONTENT-SECURITY-POLICY"
_NONE = "'none'"
_HEAD_STYLE = re.compile(r"<style>(.*?)</style>", re.S)


def content_security_policy(page: str, meta: bool = False) -> str:
    """The report's Content-Security-Policy: no script, nothing fetched but ``data:`` images, and
    only the page's own style sheet (the ``<style>`` of its head, by hash). ``meta``: the form
    for the page's ``<meta>`` (``frame-ancestors`` only works in a header)."""
    head = page.split("</head>", 1)[0]
    styles = " ".join("'sha256-" + base64.b64encode(hashlib.sha256(s.encode("utf-8")).digest()).decode() + "'"
                      for s in _HEAD_STYLE.findall(head))
    policy = (f"default-src 'none'; script-src 'none'; style-src {styles or _NONE}; "
              "img-src data:; base-uri 'none'; form-action 'none'")
    return policy if meta else policy + "; frame-ancestors 'none'"


def render(report: Report) -> str:
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    from markupsafe import Markup

    jenv = Environment(loader=FileSystemLoader(TEMPLATE.parent), autoescape=select_autoescape(["j2", "html"]),
                       trim_blocks=True, lstrip_blocks=True)
    jenv.filters["num"] = _fmt
    jenv.filters["pct"] = lambda x: f"{100 * x:.0f}%"
    jenv.filters["marked"] = lambda src, sl: Markup(highlight(src, sl))
    timed = [s for s in report.submissions if s.seconds is not None]
    secs = sorted(s.seconds for s in timed)
    timing = {"count": len(timed), "total": sum(secs), "median": statistics.median(secs) if secs else 0.0,
              "max": secs[-1] if secs else 0.0}
    scores = [s.score for s in report.submissions]
    summary = {"n": len(scores), "mean": statistics.fmean(scores) if scores else 0.0,
               "median": statistics.median(scores) if scores else 0.0,
               "to_grade": sum(s.needs_manual_grade for s in report.submissions)}
    page = jenv.get_template(TEMPLATE.name).render(
        r=report, summary=summary, histogram=score_histogram(report), marks=marks_figure(report),
        timing=timing, by_time=sorted(timed, key=lambda s: (-s.seconds, s.student)),
        n=max(1, len(report.submissions)), max_cells=MAX_PAIR_CELLS, max_messages=MAX_MESSAGES,
        max_pairs=MAX_PAIRS, max_side=MAX_PAIRS_SIDE_BY_SIDE, csp=CSP_PLACEHOLDER)
    # the policy hashes the page's style sheet, so it is written once the page is
    return page.replace(CSP_PLACEHOLDER, content_security_policy(page, meta=True), 1)


def write(report: Report, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(report), encoding="utf-8")
    return out


HELP = """\
The instructor's report of one graded assignment, as one offline HTML page: the score
distribution, per graded cell the share of full, partial and zero marks, the failure messages
grouped by test cell, the submissions the grader flagged, and pairs of near-identical answers
to look at. It reads the gradebook and the graded notebooks and changes nothing."""

EXAMPLES = """\
examples:
  make report A=td2_7_learned_first    # = python -m tools.report.report td2_7_learned_first
  python -m tools.report.report cnn_lcn --out /tmp/cnn_lcn.html --threshold 0.8"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.report.report", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("assignment", help="the graded assignment, e.g. td2_7_learned_first")
    p.add_argument("--course", type=Path, default=env.COURSE, help="nbgrader course root (default: course/)")
    p.add_argument("--out", type=Path, help="the HTML page (default: <course>/reports/<assignment>.html)")
    p.add_argument("--threshold", type=float, default=similarity.THRESHOLD,
                   help="similarity share from which a pair is shown (default %(default)s)")
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    report = collect(a.assignment, a.course, threshold=a.threshold)
    out = write(report, a.out or a.course / "reports" / f"{a.assignment}.html")
    failed = sum(g.count for gs in report.failures.values() for g in gs)
    kinds = sum(len(gs) for gs in report.failures.values())
    print(f"{out}: {len(report.submissions)} submissions, {failed} failures in {len(report.failures)} cells "
          f"({kinds} distinct messages), {len(report.flagged)} flagged, {len(report.pairs)} similar pairs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
