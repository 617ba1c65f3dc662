"""The instructor's report of an assignment (tools/report/report.py, ``make report A=...``).

On the fake class that ``graded_class`` (conftest.py) grades once per session for
tests/test_pipeline.py, never grading it anew:

- both assignments: the page is one file that asks for nothing (figures inlined as ``data:``
  URIs, no external URL), its scores equal ``nbgrader export``'s, its marks per graded cell
  equal the gradebook's (nbgrader's API), and its grouped failure messages are the errors of
  the failing test cells of the autograded notebooks, numbers masked, counted once per failure;
- cnn_lcn (a scratch copy of the graded course, three more students graded by the same
  ``nbgrader autograde`` for them only): a near-copy of the partial student (local variables
  renamed, independent lines swapped, through ``ast``) is paired with its original, two
  students who wrote independent correct answers (the correct variants of the mutation
  corpus, checks/fixtures) are not, and the blank student (stubs left as released) is in
  no pair; ``make grade``'s records (written here in tools/grading/grade.py's format, one flagged)
  give the integrity and grading-time sections; td2_7's real records give its grading times,
  and without them the page says that the class was not graded by ``make grade``;
- the page in headless Chromium with no network: every figure loads, axe-core finds no
  WCAG 2.1 A/AA violation; screenshots in ``build/report-shots/``.
"""

from __future__ import annotations

import ast
import copy
import csv
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup

from tools import nbcore
from tools.build import fake_students, pipeline
from tools.grading import grade
from tools.report import report, similarity

A1, A2 = "td2_7_learned_first", "cnn_lcn"
ORIGINAL, COPY = "partial", "late_copycat"
HONEST = ("late_honest_a", "late_honest_b")
FLAGGED = {"cnn_lcn_1_exact_odes": ["numpy.allclose", "builtins.abs"]}
SHOTS = Path(__file__).resolve().parent.parent / "build" / "report-shots"
KINDS = ("full", "partial", "zero", "to_grade")
ASSIGN = ast.Assign | ast.AugAssign | ast.AnnAssign


# -------------------------------------------------------------- planted submissions
def _reads(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _writes(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}


def _swap_independent(body: list) -> int:
    """Swap adjacent assignments that neither read nor write what the other writes."""
    swapped, i = 0, 0
    while i + 1 < len(body):
        s, t = body[i], body[i + 1]
        if (isinstance(s, ASSIGN) and isinstance(t, ASSIGN)
                and not _writes(s) & (_reads(t) | _writes(t)) and not _writes(t) & _reads(s)):
            body[i], body[i + 1] = t, s
            swapped, i = swapped + 1, i + 2
        else:
            i += 1
    return swapped


def disguise(source: str) -> tuple[str, int, int]:
    """``source`` with its functions' local variables renamed and independent lines swapped:
    (new source, names renamed, swaps). Same behaviour, other text."""
    tree = ast.parse(source)
    renamed = swapped = 0
    for fn in [n for n in tree.body if isinstance(n, ast.FunctionDef)]:
        params = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
        names = {n: f"my_{n.lower()}_" for n in set().union(*map(_writes, fn.body)) - params}
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and node.id in names:
                node.id = names[node.id]
        renamed += len(names)
        swapped += _swap_independent(fn.body)
    return ast.unparse(tree) + "\n", renamed, swapped


def plant(course: Path, assignment: str) -> dict:
    """Submit the copycat and the two honest students into ``course``; what was done to them."""
    done = {"renamed": 0, "swapped": 0}
    for path in sorted((course / "submitted" / ORIGINAL / assignment).glob("*.ipynb")):
        nb = nbformat.read(str(path), as_version=4)
        for c in nb.cells:
            if nbcore.is_answer(c) and c.cell_type == "code":
                c.source, r, s = disguise(c.source)
                done["renamed"] += r
                done["swapped"] += s
        nbcore.write(nb, course / "submitted" / COPY / assignment / path.name)
    for which, student in enumerate(HONEST):  # correct variant 0, resp. 1 (the solution where none)
        for src in pipeline.source_paths(assignment, course):
            release_nb = nbformat.read(str(course / "release" / assignment / f"{src.stem}.ipynb"), as_version=4)
            corpus = fake_students.fixture(src).get("mutants", {})
            variants = {ex: list(spec.get("correct", {}).values()) for ex, spec in corpus.items()}
            answers = {ex: v[which] for ex, v in variants.items() if len(v) > which}
            nb = fake_students.student_notebook(release_nb, nbcore.read_source(src), "solution", answers)
            nbcore.write(nb, course / "submitted" / student / assignment / f"{src.stem}.ipynb")
    for student in (COPY, *HONEST):
        (course / "submitted" / student / assignment / "timestamp.txt").write_text("2026-11-30 13:00:00.000000 UTC")
    return done


def write_records(course: Path, assignment: str, students: list[str]) -> dict[str, dict]:
    """``make grade``'s records (tools/grading/grade.py, ``merge``) for ``students``; ``tampered`` flagged."""
    out = {}
    d = course / grade.RESULTS_DIR / assignment
    d.mkdir(parents=True, exist_ok=True)
    nbs = sorted(p.stem for p in (course / "release" / assignment).glob("*.ipynb"))
    for i, s in enumerate(sorted(students)):
        rec = {"student": s, "assignment": assignment, "seconds": 10.0 + 1.5 * i, "errors": [],
               "flags": FLAGGED if s == "tampered" else {}, "timing": {nb: 2.0 + i + k for k, nb in enumerate(nbs)},
               "host": "127.0.0.1", "notebooks": [f"{nb}.ipynb" for nb in nbs], "worker_pid": 1000 + i,
               "score": None, "max_score": None, "timestamp": "2026-11-30 12:00:00", "submitted_stamp": "", "cells": {}}
        (d / f"{s}.json").write_text(json.dumps(rec, indent=1))
        out[s] = rec
    return out


@pytest.fixture(scope="module")
def planted(graded_class, tmp_path_factory) -> dict:
    """A copy of the graded cnn_lcn class with the copycat and the honest students graded too
    (``nbgrader autograde`` for them only, as the fixture graded the others) and records."""
    g = graded_class(A2)
    course = tmp_path_factory.mktemp("report-class") / "course"
    shutil.copytree(g.course, course, symlinks=True)
    done = plant(course, A2)
    pipeline.autograde(A2, student="late_*", course=course)
    students = sorted(p.name for p in (course / "submitted").iterdir())
    return {"course": course, "done": done, "records": write_records(course, A2, students)}


def course_of(assignment: str, graded_class, planted) -> Path:
    return planted["course"] if assignment == A2 else graded_class(assignment).course


# ----------------------------------------------------------------------- helpers
def export(course: Path, tmp: Path) -> dict[str, dict]:
    out = tmp / "grades.csv"
    pipeline.nbgrader("export", f"--to={out}", course=course)
    with out.open() as f:
        return {r["student_id"]: r for r in csv.DictReader(f)}


def gradebook_marks(course: Path, assignment: str) -> dict[str, dict[str, int]]:
    from nbgrader.api import Gradebook

    marks: dict[str, dict[str, int]] = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for sub in gb.find_assignment(assignment).submissions:
            for nb in sub.notebooks:
                for g in nb.grades:
                    kind = ("to_grade" if g.needs_manual_grade else "full" if g.score >= g.max_score
                            else "zero" if not g.score else "partial")
                    m = marks.setdefault(f"{nb.name} / {g.name}", dict.fromkeys(KINDS, 0))
                    m[kind] += 1
    return marks


def error_outputs(course: Path, assignment: str) -> dict[str, list[tuple[str, str]]]:
    """cell label -> (student, message) of every error output of a test cell, from the notebooks."""
    out: dict[str, list[tuple[str, str]]] = {}
    for path in sorted((course / "autograded").glob(f"*/{assignment}/*.ipynb")):
        nb = nbformat.read(str(path), as_version=4)
        for c in nb.cells:
            if nbcore.is_test(c):
                for o in c.get("outputs", []):
                    if o.get("output_type") == "error":
                        out.setdefault(f"{path.stem} / {nbcore.grade_id(c)}", []).append(
                            (path.parent.parent.name, f"{o['ename']}: {o['evalue']}"))
    return out


def rows(table) -> list[list[str]]:
    """The cells' texts (whitespace collapsed) of every body row of ``table``."""
    return [[" ".join(td.get_text(" ").split()) for td in tr.find_all(["th", "td"])]
            for tr in table.tbody.find_all("tr")]


@pytest.fixture(scope="module")
def pages(graded_class, planted, tmp_path_factory) -> dict[str, Path]:
    out = {}
    for a in (A1, A2):
        page = tmp_path_factory.mktemp(f"report-{a}") / f"{a}.html"
        assert report.main([a, "--course", str(course_of(a, graded_class, planted)), "--out", str(page)]) == 0
        out[a] = page
    return out


# ------------------------------------------------------------------------ fast
def test_mask_replaces_numbers_not_names():
    assert report.mask("C = I: eq. 45 gives J2 = 1/pi = 0.318310, your j2_erf gives -6.4e-05.") == (
        "C = I: eq. <n> gives J2 = <n>/pi = <n>, your j2_erf gives <n>.")
    assert report.mask("(P, k_s, D) = (4, 3, 20),\n  eta = .5 in td2_7 eq34: 1 + 2 cos 6t") == (
        "(P, k_s, D) = (<n>, <n>, <n>), eta = <n> in td2_7 eq34: <n> + <n> cos <n>t")


def test_stubs_count_for_nothing(tmp_path):
    head = 'def f(x):\n    """Sum of squares of x, then its square root."""\n'
    stub = head + "    # YOUR CODE HERE\n    raise NotImplementedError()"
    answer = head + ("    total = 0.0\n    for v in x:\n        total = total + v * v\n"
                     "    result = total ** 0.5\n    return result\n")
    cell = nbformat.v4.new_code_cell(stub, metadata={"nbgrader": {"solution": True, "grade": False,
                                                                  "grade_id": "ex_f", "locked": False}})
    for name, src in (("release", stub), ("blank1", stub), ("blank2", stub), ("a", answer), ("b", answer)):
        nb = nbformat.v4.new_notebook(cells=[copy.deepcopy(cell)])
        nb.cells[0].source = src
        nbcore.write(nb, tmp_path / name / "nb.ipynb")
    rel = tmp_path / "release"
    assert similarity.compare(rel, tmp_path / "blank1", tmp_path / "blank2").score == 0
    assert similarity.compare(rel, tmp_path / "a", tmp_path / "blank1").score == 0
    same = similarity.compare(rel, tmp_path / "a", tmp_path / "b")
    assert same.score == pytest.approx(1.0) and [m.cell for m in same.cells] == ["ex_f"]


# ------------------------------------------------------------------------ slow
@pytest.mark.pipeline
def test_planted_copy_is_paired_and_honest_answers_are_not(planted):
    course, done = planted["course"], planted["done"]
    assert done["renamed"] >= 5 and done["swapped"] >= 2, done
    rows_ = export(course, course.parent)
    solutions = float(rows_["solutions"]["score"])
    # The copy behaves as its original, and the honest students' answers are correct.
    assert float(rows_[COPY]["score"]) == float(rows_[ORIGINAL]["score"])
    assert [float(rows_[s]["score"]) for s in HONEST] == [solutions, solutions]
    sub = course / "autograded"
    original, copied = similarity.answer_cells(sub / ORIGINAL / A2), similarity.answer_cells(sub / COPY / A2)
    assert original.keys() == copied.keys() and all(original[k] != copied[k] for k in original)
    release = course / "release" / A2
    pair = similarity.compare(release, sub / ORIGINAL / A2, sub / COPY / A2)
    honest = similarity.compare(release, sub / HONEST[0] / A2, sub / HONEST[1] / A2)
    assert pair.score >= 0.9 and pair.overlap >= similarity.MIN_OVERLAP, (pair.score_a, pair.score_b)
    assert honest.score < similarity.THRESHOLD / 2, (honest.score_a, honest.score_b)
    for s in HONEST:  # independent correct answers against the reference solution
        other = similarity.compare(release, sub / s / A2, sub / "solutions" / A2)
        assert other.score < similarity.THRESHOLD, (s, other.score_a, other.score_b)


@pytest.mark.pipeline
@pytest.mark.parametrize("assignment", [A1, A2])
def test_report_page_matches_the_gradebook(assignment, pages, graded_class, planted, tmp_path):
    course = course_of(assignment, graded_class, planted)
    page = pages[assignment]
    text = page.read_text()
    soup = BeautifulSoup(text, "html.parser")

    # One self-contained file: no external URL, every figure inlined.
    refs = [t.get(a) for t in soup.find_all(True) for a in ("src", "href", "data", "poster", "srcset") if t.get(a)]
    assert refs and all(r.startswith(("data:", "#")) for r in refs), [r[:80] for r in refs if not r.startswith(
        ("data:", "#"))]
    assert not soup.find_all(["script", "link", "iframe", "object", "embed"])
    assert not re.search(r"url\(|@import", "\n".join(t.get_text() for t in soup.find_all("style")))
    prose = BeautifulSoup(text, "html.parser")
    for el in prose.find_all(["pre", "code"]):  # students' code may name a URL: text, never fetched
        el.decompose()
    assert not re.search(r"https?://", str(prose))
    imgs = soup.find_all("img")
    assert len(imgs) == 2 and all(i["src"].startswith("data:image/png;base64,") for i in imgs)
    assert all(len(i["alt"]) > 60 and i.find_parent("figure").figcaption.get_text(strip=True) for i in imgs)

    # Scores: nbgrader export's, for every student.
    exported = export(course, tmp_path)
    table = {r[0]: r for r in rows(soup.find("table", id="submissions"))}
    assert sorted(table) == sorted(exported)
    for s, r in exported.items():
        assert (float(table[s][1]), float(table[s][2])) == (float(r["score"]), float(r["max_score"])), s

    # Marks per graded cell: the gradebook's.
    want = gradebook_marks(course, assignment)
    got = {f"{r[0]} / {r[1]}": dict(zip(KINDS, map(int, r[4:8])))
           for r in rows(soup.find("table", id="marks"))}
    assert got == want

    # Failure messages: the errors of the test cells, masked and counted; every zero of an
    # autograded cell is a failure with a message.
    errors = error_outputs(course, assignment)
    shown = {t["data-cell"]: rows(t) for t in soup.find_all("table", class_="failures")}
    assert set(errors) <= set(shown)
    for label, errs in errors.items():
        counts: dict[str, int] = {}
        for _student, msg in errs:
            counts[report.mask(msg)] = counts.get(report.mask(msg), 0) + 1
        top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:report.MAX_MESSAGES]
        assert [(r[1], int(r[0])) for r in shown[label]] == top, label
        for r in shown[label]:
            assert (r[2], r[3]) in [(s, " ".join(m.split())) for s, m in errs], (label, r)
            assert not re.search(r"(?<![\w.<])\d", r[1].replace("<n>", "")), r[1]
        if want[label]["zero"] and len(counts) <= report.MAX_MESSAGES:
            assert sum(counts.values()) == want[label]["zero"], label
    # The partial student's plausible mistakes are named by the asserts that failed.
    for src in pipeline.source_paths(assignment, course):
        for test in fake_students.variant_answers(src, "partial")[1]:
            label = f"{src.stem} / {test}"
            mine = [m for s, m in errors[label] if s == "partial"]
            assert mine and all(m.startswith("AssertionError: ") for m in mine), (label, mine)
            assert any(r[1] == report.mask(mine[0]) for r in shown[label]), label

    # Integrity, grading time and similar pairs.
    pairs = {r["data-pair"]: float(r["data-score"]) for r in soup.find_all("tr") if r.get("data-pair")}
    assert not [p for p in pairs if "blank" in p.split("|")], pairs
    if assignment == A1:  # graded by make grade's grader: its own records, nobody flagged
        recs = graded_class(A1).records
        timing = {r[0]: float(r[1]) for r in rows(soup.find("table", id="grading-time"))}
        assert timing == {st: round(r.seconds, 1) for st, r in recs.items()} and soup.find(id="flagged-none")
        # the same class without make grade's records (plain nbgrader autograde): the page says so
        bare = shutil.copytree(course, tmp_path / "bare", symlinks=True,
                               ignore=shutil.ignore_patterns(grade.RESULTS_DIR))
        plain = BeautifulSoup(report.render(report.collect(A1, bare)), "html.parser")
        assert plain.find(id="timing-none") and plain.find(id="flagged-none") and plain.find(id="mistakes")
        return
    recs = planted["records"]
    flagged = rows(soup.find("table", id="flagged"))
    assert [(r[0], r[1], r[2]) for r in flagged] == [("tampered", nb, ", ".join(v)) for nb, v in FLAGGED.items()]
    assert table["tampered"][6] == "flagged" and all(r[6] == "-" for s, r in table.items() if s != "tampered")
    timing = {r[0]: float(r[1]) for r in rows(soup.find("table", id="grading-time"))}
    assert timing == {s: round(r["seconds"], 1) for s, r in recs.items()}
    pair = "|".join(sorted((ORIGINAL, COPY)))
    assert pair in pairs and pairs[pair] >= 0.9, pairs
    assert "|".join(HONEST) not in pairs, pairs
    assert not [p for p in pairs if set(p.split("|")) & set(HONEST)], pairs
    block = soup.find("h3", string=re.compile(f"{ORIGINAL} and {COPY}|{COPY} and {ORIGINAL}"))
    sides = block.find_next("details").find_all("pre")
    assert len(sides) == 2 and sides[0].find("mark") and sides[1].find("mark")


@pytest.mark.pipeline
@pytest.mark.browser
def test_report_page_offline_in_chromium_is_accessible(pages, chromium):
    try:
        from tests import browser_support as bs
    except ImportError:  # tests/ on sys.path (pytest's rootdir-less import mode)
        import browser_support as bs

    SHOTS.mkdir(parents=True, exist_ok=True)
    problems = []
    with bs.chromium_browser() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        asked: list[str] = []

        def route(r):
            if r.request.url.startswith(("file:", "data:")):
                r.continue_()
            else:
                asked.append(r.request.url)
                r.abort()

        context.route("**/*", route)
        page = context.new_page()
        for a, path in pages.items():
            page.goto(path.as_uri())
            loaded = page.evaluate("() => [...document.images].map(i => i.complete && i.naturalWidth > 100)")
            if loaded != [True, True]:
                problems.append(f"{a}: figures not shown: {loaded}")
            page.screenshot(path=str(SHOTS / f"{a}.png"), full_page=True)
            res = bs.axe_run(page)  # axe-core's WCAG 2.1 A and AA rules
            if res["violations"]:
                problems.append(f"{a}: axe-core {res['version']}:\n{bs.axe_report(res['violations'])}")
        context.close()
    assert not asked, f"the page asked the network for {asked}"
    assert not problems, "\n".join(problems)
    assert all((SHOTS / f"{a}.png").stat().st_size > 50_000 for a in pages)
