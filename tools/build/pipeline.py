"""The instructor path with nbgrader, scripted (nbgrader's own docs-CI style).

    python -m tools.build.pipeline release [ASSIGNMENT...]     # sync + generate_assignment + leak check
    python -m tools.build.pipeline validate [ASSIGNMENT...]    # sources pass, releases fail (inverted)
    python -m tools.build.pipeline autograde-demo [ASSIGNMENT...]
        # fake students -> autograde -> feedback -> export -> grade table, asserted

Every function takes a course root, so tests can run the same pipeline in a scratch copy.
"""

from __future__ import annotations

import argparse
import csv
import html
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from tools import env, nbcore
from tools.build import fake_students, nbtool, release_lint

STUDENTS = ("solutions", "blank", "partial", "raises", "loop", "tampered", "delegates")


def config(course: Path = env.COURSE) -> Config:
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    cfg.CourseDirectory.root = str(course)
    return cfg


def nbgrader(*args: str, course: Path = env.COURSE, check: bool = True) -> subprocess.CompletedProcess:
    """Run the nbgrader CLI in the course root with the project-local environment."""
    cmd = [sys.executable, "-m", "nbgrader", *args, f"--CourseDirectory.root={course}"]
    p = subprocess.run(cmd, cwd=course, capture_output=True, text=True, env=os.environ.copy())
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


assignments = nbcore.assignments  # one definition (tools/nbcore.py), re-exported for callers


def source_paths(assignment: str, course: Path = env.COURSE) -> list[Path]:
    """The sources of one assignment of ``course`` (:func:`tools.nbcore.sources`)."""
    return nbcore.sources(assignment, course)


# --------------------------------------------------------------------------- release
def sync(assignment: str, course: Path = env.COURSE) -> list[Path]:
    return [nbtool.sync(p) for p in source_paths(assignment, course)]


def leaks(release_dir: Path) -> list[str]:
    """Solution text, hidden tests or sources found in a release folder."""
    problems = [f"source file released: {p.name}" for p in release_dir.rglob("*.py")]
    problems += [f"jupytext config released: {p}" for p in release_dir.rglob("jupytext.toml")]
    for nbfile in release_dir.rglob("*.ipynb"):
        text = nbfile.read_text()
        meta = nbformat.reads(text, as_version=4).metadata
        if "jupytext" in meta:
            problems.append(f"{nbfile.name}: Jupytext pairing metadata (saving would write a .py)")
        if meta.get("kernelspec", {}).get("name") != "python3":
            problems.append(f"{nbfile.name}: no python3 kernelspec (JupyterLab would ask for a kernel)")
        for marker in nbcore.MARKERS:
            if marker in text:
                problems.append(f"{nbfile.name}: contains {marker!r}")
    return problems


def language_info() -> dict:
    """What ipykernel reports as ``language_info`` for this Python (the course's, which the hub's
    student environment and the handout's pinned Python 3.11 share up to the patch version)."""
    import platform

    return {"name": "python", "version": platform.python_version(), "mimetype": "text/x-python",
            "codemirror_mode": {"name": "ipython", "version": 3}, "pygments_lexer": "ipython3",
            "nbconvert_exporter": "python", "file_extension": ".py"}


def release(assignment: str, course: Path = env.COURSE) -> Path:
    """Sync the sources, ``nbgrader generate_assignment``, and refuse a leaking release."""
    sync(assignment, course)
    nbgrader("generate_assignment", assignment, "--force", course=course)
    out = course / "release" / assignment
    for nbfile in out.glob("*.ipynb"):
        # Students' copies must not be paired with .py files by Jupytext when saved, and carry the
        # language_info their kernel reports, so that JupyterLab does not mark them modified on open.
        nb = nbformat.read(str(nbfile), as_version=4)
        before = nbformat.writes(nb)
        nb.metadata.pop("jupytext", None)
        nb.metadata["language_info"] = language_info()
        if nbformat.writes(nb) != before:
            nbformat.write(nb, str(nbfile))
    problems = leaks(out)
    if problems:
        raise RuntimeError("release leaks answers:\n" + "\n".join(problems))
    named = release_lint.lint_release(out)
    if named:
        raise RuntimeError("the release names what students do not receive:\n" + "\n".join(map(str, named)))
    return out


def ensure_release(assignment: str, course: Path = env.COURSE) -> Path:
    """The release folder of ``assignment``, generated if missing or older than a source."""
    out = course / "release" / assignment
    srcs = source_paths(assignment, course)
    if not out.exists() or any(
        not (out / (s.stem + ".ipynb")).exists()
        or (out / (s.stem + ".ipynb")).stat().st_mtime < s.stat().st_mtime for s in srcs
    ):
        return release(assignment, course)
    return out


# -------------------------------------------------------------------------- validate
def validate(notebook: Path, invert: bool = False, course: Path = env.COURSE) -> dict:
    """nbgrader's Validator, read properly (the CLI exits 0 even when tests fail)."""
    from nbgrader.validator import Validator

    v = Validator(config=config(course), invert=invert)
    return v.validate(str(notebook))


# ------------------------------------------------------------------ fake students
def test_points(source: Path) -> dict[str, float]:
    nb = nbcore.read_source(source)
    return {nbcore.grade_id(c): float(nbcore.nbmeta(c).get("points", 0)) for c in nb.cells
            if nbcore.is_test(c)}


@dataclass
class Plan:
    """What each fake student submits, and the score it must get."""

    notebooks: dict[str, dict[str, nbformat.NotebookNode]]  # student -> notebook stem -> nb
    expected: dict[str, float]  # student -> total autograded score
    max_score: float
    autograde_log: str = ""
    loop_notebook: str = ""  # the notebook whose ``loop`` submission loops (one per assignment)


def plan_students(assignment: str, course: Path = env.COURSE) -> Plan:
    rel = ensure_release(assignment, course)
    subs: dict[str, dict[str, nbformat.NotebookNode]] = {s: {} for s in STUDENTS}
    expected = dict.fromkeys(STUDENTS, 0.0)
    total = 0.0
    loop_notebook = ""
    for src in source_paths(assignment, course):
        pts = test_points(src)
        total += sum(pts.values())
        source_nb = nbcore.read_source(src)
        release_nb = nbformat.read(str(rel / (src.stem + ".ipynb")), as_version=4)
        mk = fake_students.student_notebook
        subs["solutions"][src.stem] = mk(release_nb, source_nb, "solution")
        subs["blank"][src.stem] = mk(release_nb, source_nb, "blank")
        expected["solutions"] += sum(pts.values())
        p_ans, p_fails = fake_students.variant_answers(src, "partial")
        subs["partial"][src.stem] = mk(release_nb, source_nb, "solution", p_ans)
        expected["partial"] += sum(pts.values()) - sum(pts[g] for g in set(p_fails))
        r_ans, r_fails = fake_students.variant_answers(src, "raises")
        subs["raises"][src.stem] = mk(release_nb, source_nb, "solution", r_ans)
        expected["raises"] += sum(pts.values()) - sum(pts[g] for g in set(r_fails))
        # One infinite loop per assignment (each costs a full cell timeout).
        if not loop_notebook and r_ans:
            # The first of the raising answers becomes an infinite loop (cut by the cell
            # timeout), the others still raise: the same tests must fail as for `raises`.
            l_ans, _ = fake_students.variant_answers(src, "loop")
            first = next(iter(l_ans))
            subs["loop"][src.stem] = mk(release_nb, source_nb, "solution", {**r_ans, first: l_ans[first]})
            expected["loop"] += sum(pts.values()) - sum(pts[g] for g in set(r_fails))
            loop_notebook = src.stem
        else:
            subs["loop"][src.stem] = mk(release_nb, source_nb, "solution")
            expected["loop"] += sum(pts.values())
        d_ans, d_fails = fake_students.variant_answers(src, "delegates")
        subs["delegates"][src.stem] = mk(release_nb, source_nb, "solution", d_ans)
        expected["delegates"] += sum(pts.values()) - sum(pts[g] for g in set(d_fails))
        # Tampered: the partial student who also overwrote the tests it fails.
        subs["tampered"][src.stem] = mk(release_nb, source_nb, "solution", p_ans, tamper=p_fails)
        expected["tampered"] += sum(pts.values()) - sum(pts[g] for g in set(p_fails))
    return Plan(subs, expected, total, loop_notebook=loop_notebook)


def submit(plan: Plan, assignment: str, course: Path = env.COURSE) -> None:
    for student, nbs in plan.notebooks.items():
        d = course / "submitted" / student / assignment
        if d.exists():
            shutil.rmtree(d)
        for stem, nb in nbs.items():
            nbcore.write(nb, d / f"{stem}.ipynb")
        (d / "timestamp.txt").write_text("2026-11-30 12:00:00.000000 UTC")


def scratch_course(root: Path, assignment: str, notebooks: list[str] | None = None,
                   students: tuple[str, ...] = STUDENTS) -> tuple[Path, Plan]:
    """A course at ``root`` holding one assignment (its sources, or only ``notebooks``),
    released, with the fake ``students`` submitted and nothing graded yet."""
    (root / "source" / assignment).mkdir(parents=True)
    shutil.copy(env.COURSE / "nbgrader_config.py", root)
    folder = env.COURSE / "source" / assignment
    for src in sorted(folder.glob("*.py")):
        if notebooks is None or src.stem in notebooks:
            shutil.copy(src, root / "source" / assignment / src.name)
    shutil.copy(folder / "jupytext.toml", root / "source" / assignment)
    plan = plan_students(assignment, root)
    plan.notebooks = {s: nbs for s, nbs in plan.notebooks.items() if s in students}
    submit(plan, assignment, root)
    return root, plan


def autograde(assignment: str, student: str | None = None, course: Path = env.COURSE) -> str:
    """``nbgrader autograde``; returns its log."""
    args = ["autograde", assignment, "--force", "--create"]
    if student:
        args.append(f"--student={student}")
    p = nbgrader(*args, course=course)
    return p.stdout + p.stderr


def checksum_warnings(log: str) -> dict[str, int]:
    """student -> number of "Attribute 'checksum' ... has changed" warnings in an autograde log.

    nbgrader names the submission it sanitizes before the warnings about it.
    """
    counts: dict[str, int] = {}
    student = None
    for line in log.splitlines():
        m = re.search(r"submitted/([^/]+)/", line)
        if m:
            student = m.group(1)
        if "Attribute 'checksum'" in line and student:
            counts[student] = counts.get(student, 0) + 1
    return counts


def export(course: Path = env.COURSE) -> dict[tuple[str, str], dict]:
    out = course / "grades.csv"
    nbgrader("export", f"--to={out}", course=course)
    with out.open() as f:
        return {(r["assignment"], r["student_id"]): r for r in csv.DictReader(f)}


def secret_lines(assignment: str, course: Path = env.COURSE) -> set[str]:
    """Hidden-test source lines (over 25 characters) that the released notebooks do not show.

    A hidden line that also stands in the visible text of the release, even as part of a
    longer line (``import x`` hidden, ``import x  # comment`` visible), is no secret.
    """
    hidden: set[str] = set()
    visible = []
    for src in source_paths(assignment, course):
        hidden |= {ln for ln in nbcore.secret_lines(src.read_text()) if len(ln) > 25}
        released = course / "release" / assignment / (src.stem + ".ipynb")
        visible += [cell.source for cell in nbformat.read(str(released), as_version=4).cells]
    visible_text = "\n".join(visible)
    return {ln for ln in hidden if ln not in visible_text}


def page_leaks(page: Path, secrets: set[str], own: str = "") -> list[str]:
    """Markers and secret lines an HTML page shows; lines of ``own`` (the student's own
    submission, where a delegating answer imports what a hidden reference imports) excepted."""
    plain = html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))
    problems = [f"{page}: shows the marker {m!r}" for m in nbcore.HIDDEN_DELIMITERS if m in plain]
    return problems + [f"{page}: shows hidden line {ln[:60]!r}" for ln in sorted(secrets)
                       if ln in plain and ln not in own]


def feedback_leaks(assignment: str, course: Path = env.COURSE) -> list[str]:
    """Hidden-test source visible in the generated feedback of ``assignment`` (must be empty)."""
    secrets = secret_lines(assignment, course)
    problems = []
    for page in (course / "feedback").glob(f"*/{assignment}/*.html"):
        submitted = course / "submitted" / page.parent.parent.name / assignment / (page.stem + ".ipynb")
        own = ("\n".join(c.source for c in nbformat.read(str(submitted), as_version=4).cells)
               if submitted.exists() else "")
        problems += [p.replace(str(page), str(page.relative_to(course)), 1)
                     for p in page_leaks(page, secrets, own)]
    return problems


def autograde_demo(assignment: str, course: Path = env.COURSE,
                   students: tuple[str, ...] = STUDENTS) -> tuple[Plan, dict]:
    """Fake students -> autograde -> feedback -> export. Returns the plan and the scores
    (of ``students``, a subset of :data:`STUDENTS`)."""
    plan = plan_students(assignment, course)
    plan.notebooks = {s: plan.notebooks[s] for s in students}
    submit(plan, assignment, course)
    plan.autograde_log = autograde(assignment, course=course)
    nbgrader("generate_feedback", assignment, "--force", course=course)
    rows = export(course)
    scores = {s: float(rows[(assignment, s)]["score"]) for s in students}
    return plan, scores


def grade_table(assignment: str, plan: Plan, scores: dict) -> str:
    lines = [f"{assignment}: autograded points available {plan.max_score:g}",
             f"{'student':10s} {'expected':>9s} {'score':>7s}  verdict"]
    for s in scores:
        ok = abs(scores[s] - plan.expected[s]) < 1e-9
        lines.append(f"{s:10s} {plan.expected[s]:9g} {scores[s]:7g}  {'ok' if ok else 'MISMATCH'}")
    return "\n".join(lines)


HELP = """\
The nbgrader steps of the course, scripted: build the student release of each assignment
(refusing one that leaks solutions or hidden tests), check that the sources pass their tests
and the releases fail them, or grade fake students end to end as a demonstration. It works
on course/ and needs no exchange; releasing to students is `nbgrader release_assignment`."""

EXAMPLES = """\
examples:
  make release          # = python -m tools.build.pipeline release: every assignment into course/release/
  python -m tools.build.pipeline validate td2_7_learned_first   # sources pass, releases fail (inverted)
  make autograde-demo   # fake students -> autograde -> feedback -> export; prints the asserted grades"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.build.pipeline", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("cmd", choices=["release", "validate", "autograde-demo"], metavar="COMMAND",
                   help="release: Jupytext sync, nbgrader generate_assignment and the leak check into "
                        "course/release/<assignment>/; validate: every source passes its tests and every "
                        "released notebook fails them; autograde-demo: fake students submitted into "
                        "course/ (so not on a course in use), autograded, fed back and exported, the grade "
                        "table printed and asserted")
    p.add_argument("assignments", nargs="*", metavar="ASSIGNMENT",
                   help="assignments to work on (default: every assignment of course/source/)")
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    names = a.assignments or assignments()
    status = 0
    for name in names:
        if a.cmd == "release":
            out = release(name)
            print(f"released {name}: {sorted(q.name for q in out.glob('*.ipynb'))}")
        elif a.cmd == "validate":
            sync(name)
            for src in source_paths(name):
                res = validate(src.with_suffix(".ipynb"))
                rel = ensure_release(name) / (src.stem + ".ipynb")
                inv = validate(rel, invert=True)
                bad = bool(res) or bool(inv)
                status |= bad
                print(f"{name}/{src.stem}: source {'FAIL ' + json.dumps(res)[:400] if res else 'ok'}; "
                      f"release inverted {'FAIL ' + json.dumps(inv)[:400] if inv else 'ok'}")
        else:
            plan, scores = autograde_demo(name)
            print(grade_table(name, plan, scores))
            status |= any(abs(scores[s] - plan.expected[s]) > 1e-9 for s in scores)
            warned = checksum_warnings(plan.autograde_log)
            print(f"checksum warnings (only the tampered student may have any): {warned or 'none'}")
            status |= set(warned) != {"tampered"}
            for msg in feedback_leaks(name):
                print("LEAK:", msg)
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
