"""nbgrader's real lifecycle, run from the README's own shell blocks.

The blocks of README.md marked ``<!-- test: NAME -->`` (``tools/build/readme_blocks.py``) run
verbatim with ``bash -e`` in a clean environment (PATH=/usr/bin:/bin, a temporary HOME,
TD_EXCHANGE, LANG; no JUPYTER_*, IPYTHONDIR, MPLCONFIGDIR or Makefile variables), in a
scratch copy of the repository whose ``.venv`` links to the real one, on a file-system
exchange in a temporary folder:

    instructor-release   make release; nbgrader release_assignment (both assignments)
    student-setup/fetch  three students, each with a HOME of their own and its
                         ~/.jupyter/nbgrader_config.py (course id, exchange, student id)
    (work)               the test fills the fetched notebooks (tools.build.pipeline.plan_students):
                         alice = ``partial``, bob = ``delegates``, carol stays ``blank``
    student-submit
    instructor-collect   nbgrader collect
    instructor-autograde nbgrader autograde of one assignment (the README's path for trusted submissions)
    instructor-grade     make grade A=... (both assignments, in parallel on Dask,
                         sandboxed: tools/grading/grade.py); what follows reads its results
    instructor-feedback  generate_feedback; release_feedback; export
    student-feedback     nbgrader fetch_feedback

then checks the exported scores against the plan, the fetched feedback (present, no
hidden-test line), the autograde log (no checksum warning for untouched cells), that a
tampered locked test cell is still reported and restored, and (browser) that the
Formgrader started by ``make formgrader`` lists both assignments and their submissions.

Work handed in outside the exchange (``instructor-collect-zip``: ``make collect-zip``,
``tools/grading/collect_zip.py``) runs verbatim in a scratch repository of its own holding two
notebooks of one assignment, on an LMS-style zip of the hand-in zips (``tools/build/handin.py``) of
two fake students whose ids hold ``_``, ``.``, ``-`` and digits; nothing is graded there (the
imported notebooks are the fake students' notebooks byte for byte, which the lifecycle above
grades through the exchange). ``tests/test_collect_zip.py`` tests the import in depth.

Both students run as the same Unix user here, so TD_STUDENT (read by the README's
student-setup block) gives each its student id; on a real machine it is the login name.
"""

from __future__ import annotations

import contextlib
import csv
import html
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

from tools import env, nbcore
from tools.build import fake_students, pipeline, readme_blocks

REPO = env.REPO
ASSIGNMENTS = ("td2_7_learned_first", "cnn_lcn")
TRUSTED = "cnn_lcn"  # the assignment the README's plain `nbgrader autograde` block grades
STUDENTS = {"alice": "partial", "bob": "delegates", "carol": "blank"}  # student id -> plan kind
TAMPERED = ("mallory", "cnn_lcn")  # a 4th submission, collected by hand: locked test cells edited
BLOCK_TIMEOUT_S = 1500
SHOTS = REPO / "build" / "browser"


# --------------------------------------------------------------------------- helpers
def scratch_repository(dst: Path) -> Path:
    """Copy the repository's files (tracked, plus new ones not ignored) with their
    timestamps; link ``.venv`` to the real venv so nothing is reinstalled."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=REPO, capture_output=True, text=True, check=True).stdout
    for rel in filter(None, out.split("\0")):
        src = REPO / rel
        if src.is_file() and not src.is_symlink():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)
    (dst / ".venv").symlink_to(REPO / ".venv")
    return dst


def clean_env(home: Path, exchange: Path, **extra: str) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "TD_EXCHANGE": str(exchange),
            "LANG": "C.UTF-8", **extra}


@dataclass
class Run:
    name: str
    who: str
    seconds: float
    output: str


def run_bash(script: str, cwd: Path, environ: dict[str, str], name: str, who: str,
             logs: Path) -> Run:
    """``bash -e -c script``; fail with the output's tail if it exits non-zero."""
    t0 = time.monotonic()
    p = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=environ, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=BLOCK_TIMEOUT_S,
                       stdin=subprocess.DEVNULL)
    run = Run(name, who, time.monotonic() - t0, p.stdout)
    logs.mkdir(parents=True, exist_ok=True)
    (logs / f"{name}.{who}.log").write_text(p.stdout)
    if p.returncode != 0:
        pytest.fail(f"README block {name!r} ({who}) exited {p.returncode} after {run.seconds:.0f} s:\n"
                    f"{script}\n--- output (tail) ---\n{p.stdout[-6000:]}", pytrace=False)
    return run


def assert_venv_kept(repo: Path, environ: dict[str, str], target: str) -> None:
    """`make target` in the scratch ``repo`` must not reinstall the (linked, shared) venv."""
    dry = subprocess.run(["make", "-n", *target.split()], cwd=repo, env=environ, text=True, capture_output=True)
    if "pip install" in dry.stdout or dry.returncode != 0:
        pytest.fail(f"`make {target}` would reinstall the venv (its stamp does not match "
                    f"requirements.txt/pyproject.toml): run `make setup` in {REPO} first.\n"
                    f"{dry.stdout}{dry.stderr}", pytrace=False)


def checksum_warnings(log: str) -> dict[str, list[str]]:
    """student id -> the ``checksum`` lines autograde logged while grading that student."""
    out: dict[str, list[str]] = {}
    current = "?"
    for line in log.splitlines():
        m = re.search(r"/(?:submitted|autograded)/([^/\s]+)/", line)
        if m:
            current = m.group(1)
        if "checksum" in line.lower():
            out.setdefault(current, []).append(line)
    return out


@dataclass
class Lifecycle:
    repo: Path
    course: Path
    exchange: Path
    homes: dict[str, Path]
    instructor_env: dict[str, str]
    plans: dict[str, pipeline.Plan]
    grades: dict[tuple[str, str], dict]
    runs: list[Run] = field(default_factory=list)

    def log(self, name: str) -> str:
        return "\n".join(r.output for r in self.runs if r.name == name)


@pytest.fixture(scope="module")
def lifecycle(tmp_path_factory) -> Lifecycle:
    top = tmp_path_factory.mktemp("instructor_path")
    repo = scratch_repository(top / "td-course")
    exchange = top / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)  # as the README creates it (sticky)
    logs = top / "logs"
    blocks = readme_blocks.blocks(repo / "README.md")
    # The students are one Unix user here (TD_STUDENT names them): the exchange's owner check cannot
    # tell them apart, so the instructor's collect trusts the names (README: TD_EXCHANGE_ONE_ACCOUNT;
    # tests/test_exchange_identity.py runs the check with real system users).
    ienv = clean_env(top / "home-instructor", exchange, TD_EXCHANGE_ONE_ACCOUNT="1")

    assert_venv_kept(repo, ienv, "release")

    runs = [run_bash(blocks["instructor-release"], repo, ienv, "instructor-release", "instructor", logs)]
    course = repo / "course"
    plans = {a: pipeline.plan_students(a, course) for a in ASSIGNMENTS}

    homes = {sid: top / f"home-{sid}" for sid in STUDENTS}
    senv = {sid: clean_env(homes[sid], exchange, TD_STUDENT=sid) for sid in STUDENTS}
    for sid, kind in STUDENTS.items():
        for name in ("student-setup", "student-fetch"):
            runs.append(run_bash(blocks[name], repo, senv[sid], name, sid, logs))
        for a in ASSIGNMENTS:
            work = homes[sid] / "td-work" / a
            released = course / "release" / a
            for stem, nb in plans[a].notebooks[kind].items():
                fetched = work / f"{stem}.ipynb"
                assert fetched.exists(), f"{sid}: fetch_assignment did not bring {a}/{stem}.ipynb"
                got = nbformat.read(str(fetched), as_version=4)
                want = nbformat.read(str(released / f"{stem}.ipynb"), as_version=4)
                assert [c.source for c in got.cells] == [c.source for c in want.cells], (
                    f"{sid}: the fetched {stem}.ipynb differs from course/release/{a}/")
                if kind != "blank":  # the student's work
                    nbformat.write(nb, str(fetched))
        runs.append(run_bash(blocks["student-submit"], repo, senv[sid], "student-submit", sid, logs))

    for name in ("instructor-collect", "instructor-autograde", "instructor-grade", "instructor-feedback"):
        runs.append(run_bash(blocks[name], repo, ienv, name, "instructor", logs))
    for sid in STUDENTS:
        runs.append(run_bash(blocks["student-feedback"], repo, senv[sid], "student-feedback", sid, logs))

    with (course / "grades.csv").open() as f:
        grades = {(r["assignment"], r["student_id"]): r for r in csv.DictReader(f)}
    life = Lifecycle(repo, course, exchange, homes, ienv, plans, grades, runs)
    print("\n".join(f"{r.name:22s} {r.who:10s} {r.seconds:6.1f} s" for r in runs))
    return life


# ------------------------------------------------------------------------- no kernels
def test_readme_marks_the_whole_lifecycle():
    blocks = readme_blocks.blocks()
    want = {
        "instructor-release": ["make release", "nbgrader release_assignment"],
        "student-setup": ["~/.jupyter/nbgrader_config.py", 'course_id = "td-course"', "Exchange.root"],
        "student-fetch": ["nbgrader fetch_assignment"],
        "student-submit": ["nbgrader submit"],
        "instructor-collect": ["nbgrader collect"],
        "instructor-collect-zip": ["make collect-zip A=", "ZIP="],
        "instructor-autograde": ["nbgrader autograde"],
        "instructor-grade": ["make grade A="],
        "instructor-feedback": ["nbgrader generate_feedback", "nbgrader release_feedback", "nbgrader export"],
        "student-feedback": ["nbgrader fetch_feedback"],
    }
    for name, commands in want.items():
        assert name in blocks, f"README.md has no block marked <!-- test: {name} -->"
        for cmd in commands:
            assert cmd in blocks[name], f"README block {name!r} lacks {cmd!r}"
        for a in ASSIGNMENTS if name not in ("student-setup", "instructor-collect-zip", "instructor-autograde") else ():
            assert a in blocks[name], f"README block {name!r} does not name {a}"
    # nbgrader's own autograde is shown on one assignment (trusted submissions only); make grade
    # grades both.
    assert TRUSTED in blocks["instructor-autograde"]
    readme = (REPO / "README.md").read_text()
    assert "nbgrader formgrader" not in readme, "`nbgrader formgrader` is not a command: use make formgrader"
    assert "make formgrader" in readme


# ---------------------------------------------------------------------- the lifecycle
@pytest.mark.pipeline
@pytest.mark.timeout(2400)
def test_exported_scores_match_the_plan(lifecycle: Lifecycle):
    rows = []
    for a in ASSIGNMENTS:
        plan = lifecycle.plans[a]
        for sid, kind in STUDENTS.items():
            row = lifecycle.grades.get((a, sid))
            assert row is not None, f"nbgrader export has no row for {sid}/{a}: {sorted(lifecycle.grades)}"
            rows.append((a, sid, kind, plan.expected[kind], float(row["score"]), float(row["max_score"])))
    print("\n".join(f"{a:20s} {sid:6s} {kind:9s} expected {e:6g} got {s:6g} / {m:g}" for a, sid, kind, e, s, m in rows))
    for a, sid, kind, expected, score, _max in rows:
        assert score == pytest.approx(expected, abs=1e-9), f"{sid} ({kind}) on {a}: {score}, expected {expected}"
    for a in ASSIGNMENTS:
        assert lifecycle.plans[a].expected["blank"] == 0
        assert 0 < lifecycle.plans[a].expected["partial"] < lifecycle.plans[a].max_score


def hidden_lines_shown(assignment: str, course: Path, pages: list[Path]) -> list[str]:
    """Hidden-test markers and source lines that ``pages`` show (tools.build.pipeline's check:
    lines over 25 characters of the hidden regions that the release does not show)."""
    secrets = pipeline.secret_lines(assignment, course)
    return [p for page in pages for p in pipeline.page_leaks(page, secrets)]


@pytest.mark.pipeline
@pytest.mark.timeout(2400)
def test_students_fetched_feedback_without_hidden_tests(lifecycle: Lifecycle, tmp_path):
    for a in ASSIGNMENTS:
        # The check is alive: a page quoting the hidden tests is caught.
        src = "\n".join(s.read_text() for s in pipeline.source_paths(a, lifecycle.course))
        quoted = re.findall(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", src, re.S)
        (tmp_path / "quoting.html").write_text("<pre>" + html.escape("\n".join(quoted)) + "</pre>")
        assert hidden_lines_shown(a, lifecycle.course, [tmp_path / "quoting.html"]), a
        stems = sorted(p.stem for p in pipeline.source_paths(a, lifecycle.course))
        for sid in STUDENTS:
            pages = sorted((lifecycle.homes[sid] / "td-work" / a / "feedback").glob("*/*.html"))
            assert sorted(p.stem for p in pages) == stems, (
                f"{sid}: fetched feedback for {a} is {[str(p) for p in pages]}, expected one page per notebook")
            for page in pages:
                text = page.read_text()
                for marker in ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
                    assert marker not in text, f"{page} shows {marker!r}"
            leaks = hidden_lines_shown(a, lifecycle.course, pages)
            assert leaks == [], f"hidden-test lines in {sid}'s feedback:\n" + "\n".join(leaks)


@pytest.mark.pipeline
@pytest.mark.timeout(2400)
def test_parallel_grading_block_regrades_every_submission(lifecycle: Lifecycle):
    """`make grade` from a plain shell: every collected submission graded again (the serial
    run left no grading records), no errors, no flags; the exported scores checked above
    are the ones it wrote."""
    log = lifecycle.log("instructor-grade")
    # One line per student: the autograded points, then the hand-graded ones (to grade, or graded).
    score = r"[0-9.]+/[0-9.]+ autograded(, [0-9.]+ points to grade by hand| \+ [0-9.]+/[0-9.]+ by hand)"
    for a in ASSIGNMENTS:
        assert f"graded {len(STUDENTS)} submission(s) of {a}" in log, log[-3000:]
        for sid in STUDENTS:
            assert re.search(rf"^{sid}\s+{score}\s+[0-9.]+ s  errors: -$", log, re.M), (
                f"no log line for {sid} ({a}) with its autograded and hand-graded points:\n{log[-3000:]}")
        recs = [json.loads(p.read_text()) for p in (lifecycle.course / ".grade" / a).glob("*.json")]
        assert sorted(r["student"] for r in recs) == sorted(STUDENTS)
    # A clean run says nothing that reads as a failure: library warnings go to the log file.
    noisy = [ln for ln in re.split(r"[\r\n]+", log)
             if re.search(r"warn|error(?!s: -|s or flags)|traceback", ln, re.I)]
    assert not noisy, "make grade printed warnings on a clean run:\n" + "\n".join(noisy[:20])
    assert "with errors or flags: none" in log and log.count("with errors or flags: none") == len(ASSIGNMENTS)


@pytest.mark.pipeline
@pytest.mark.timeout(2400)
def test_untouched_cells_raise_no_checksum_warning(lifecycle: Lifecycle):
    log = lifecycle.log("instructor-autograde")
    assert all(f"/submitted/{sid}/" in log or f"submitted/{sid}" in log for sid in STUDENTS), (
        "the autograde log does not name every student's submission; cannot attribute warnings")
    warnings = checksum_warnings(log)
    assert warnings.get("carol", []) == [], "checksum warnings for the blank student:\n" + "\n".join(warnings["carol"])
    assert warnings == {}, f"checksum warnings for submissions with untouched test cells: {warnings}"


@pytest.mark.pipeline
@pytest.mark.timeout(2400)
def test_tampered_test_cell_is_reported_and_restored(lifecycle: Lifecycle):
    sid, a = TAMPERED
    plan = lifecycle.plans[a]
    subs = lifecycle.course / "submitted" / sid / a
    subs.mkdir(parents=True)
    tampered: dict[str, list[str]] = {}
    for stem, nb in plan.notebooks["tampered"].items():
        nbformat.write(nb, str(subs / f"{stem}.ipynb"))
        tampered[stem] = [nbcore.grade_id(c) for c in nb.cells if c.source == fake_students.TAMPER]
    (subs / "timestamp.txt").write_text("2026-12-01 12:00:00.000000 UTC")
    assert any(tampered.values()), "the tampered student edited no test cell"
    run = run_bash(f"source .venv/bin/activate\nnbgrader autograde {a} --student={sid}\n"
                   f"nbgrader export --to=course/grades.csv\n", lifecycle.repo, lifecycle.instructor_env,
                   "tampered-autograde", sid, lifecycle.repo.parent / "logs")
    lifecycle.runs.append(run)
    warned = checksum_warnings(run.output).get(sid, [])
    for stem, gids in tampered.items():
        for gid in gids:
            assert any(f"Attribute 'checksum' for cell {gid} has changed" in w for w in warned), (
                f"no checksum warning for the edited cell {gid} of {stem}: {warned}\n{run.output[-3000:]}")
        graded = nbformat.read(str(lifecycle.course / "autograded" / sid / a / f"{stem}.ipynb"), as_version=4)
        cells = {nbcore.grade_id(c): c for c in graded.cells}
        source = {nbcore.grade_id(c): c for c in nbcore.read_source(
            next(p for p in pipeline.source_paths(a, lifecycle.course) if p.stem == stem)).cells}
        for gid in gids:
            assert cells[gid].source == source[gid].source, f"{gid}: the original test was not restored"
    with (lifecycle.course / "grades.csv").open() as f:
        score = next(float(r["score"]) for r in csv.DictReader(f) if (r["assignment"], r["student_id"]) == (a, sid))
    assert score == pytest.approx(plan.expected["tampered"], abs=1e-9), (
        f"tampered submission scored {score}, expected {plan.expected['tampered']} (tests restored)")


# ------------------------------------------------- work handed in outside the exchange
ZIP_ASSIGNMENT = "td2_7_learned_first"
ZIP_NOTEBOOKS = ("td2_7_1_two_moments", "td2_7_1b_early_time_linear")
# student id -> (fake student, where the LMS puts its hand-in zip in the download)
ZIP_STUDENTS = {"jean_dupont": ("partial", "Jean Dupont_48213_assignsubmission_file_/48213_{a}__handin.zip"),
                "marie.dupont-2": ("solutions", "Submission 3 - {a}__handin (2).zip")}


@pytest.mark.pipeline
@pytest.mark.timeout(900)
def test_collect_zip_block_imports_an_lms_download(tmp_path):
    """The README's ``instructor-collect-zip`` block, verbatim, on the zip an LMS gives for two
    fake students' hand-in zips (folders, LMS prefixes, a resubmission suffix, macOS residue):
    each notebook lands in ``submitted/<manifest's id>/<assignment>/`` byte for byte with a
    timestamp, as ``nbgrader collect`` leaves it for ``make grade``. A second download of loose
    notebooks (the former ``<id>_<notebook>.ipynb`` convention, with no roster to check the ids
    against) and a hand-in whose manifest id leaves the folder: each is listed with its reason,
    the command fails, and nothing is imported or changed."""
    from tools.build import handin

    a = ZIP_ASSIGNMENT
    repo = scratch_repository(tmp_path / "td-course")
    course = repo / "course"
    for src in pipeline.source_paths(a, course):  # two notebooks: the release costs what they cost
        if src.stem not in ZIP_NOTEBOOKS:
            src.unlink()
    plan = pipeline.plan_students(a, course)  # releases them (collect_zip checks names against it)
    home = tmp_path / "home-instructor"
    ienv = clean_env(home, tmp_path / "exchange")
    assert_venv_kept(repo, ienv, "collect-zip A=x ZIP=y")

    (home / "Downloads").mkdir(parents=True)
    want: dict[tuple[str, str], str] = {}
    with zipfile.ZipFile(home / "Downloads" / f"{a}.zip", "w") as z:
        for sid, (kind, name) in ZIP_STUDENTS.items():
            notebooks = {}
            for stem, nb in plan.notebooks[kind].items():
                want[(sid, stem)] = nbformat.writes(nb)
                notebooks[f"{stem}.ipynb"] = want[(sid, stem)].encode()
            made = handin.write_zip(tmp_path / f"{sid}.zip", sid, a, notebooks)
            z.write(made, name.format(a=a))
        z.writestr(f"__MACOSX/._48213_{a}__handin.zip", b"\0\5\26\7")
    block = readme_blocks.blocks(repo / "README.md")["instructor-collect-zip"]
    run = run_bash(block, repo, ienv, "instructor-collect-zip", "instructor", tmp_path / "logs")
    assert f"collected {len(want)} notebook(s) of {len(ZIP_STUDENTS)} student(s)" in run.output, run.output
    for (sid, stem), text in want.items():
        got = course / "submitted" / sid / a / f"{stem}.ipynb"
        assert got.exists(), f"make collect-zip did not import {got.relative_to(repo)}:\n{run.output}"
        assert got.read_text() == text, f"{got.relative_to(repo)} differs from {sid}'s notebook"
    assert sorted(p.name for p in (course / "submitted").iterdir()) == sorted(ZIP_STUDENTS)
    for sid in ZIP_STUDENTS:
        sub = course / "submitted" / sid / a
        assert sorted(p.name for p in sub.iterdir()) == sorted([f"{s}.ipynb" for s in ZIP_NOTEBOOKS]
                                                               + ["timestamp.txt"])
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ UTC", (sub / "timestamp.txt").read_text())

    # A folder downloaded again: loose notebooks under the former convention, no roster in the
    # gradebook to make their ids certain, and a manifest whose id would leave submitted/.
    before = {p: p.read_bytes() for p in (course / "submitted").rglob("*") if p.is_file()}
    again = tmp_path / "download-2"
    again.mkdir()
    text = want[("jean_dupont", ZIP_NOTEBOOKS[1])]
    loose = [f"td-course_{ZIP_NOTEBOOKS[0]}.ipynb",         # the course id, read as a student before
             f"jean_dupont_{ZIP_NOTEBOOKS[1]}.ipynb",       # was imported as "dupont" before
             f"48213_marie_dupont_{ZIP_NOTEBOOKS[0]}-1.ipynb",
             "carol_notes.txt"]
    for name in loose:
        (again / name).write_text(text)
    handin_dir = again / "evil"
    handin_dir.mkdir()
    (handin_dir / handin.MANIFEST).write_text(json.dumps(
        {**handin.manifest("x", a, {f"{ZIP_NOTEBOOKS[0]}.ipynb": text.encode()}), "student_id": "../../evil"}))
    (handin_dir / f"{ZIP_NOTEBOOKS[0]}.ipynb").write_text(text)
    p = subprocess.run(["bash", "-e", "-c", f"make collect-zip A={a} ZIP={again} FORCE=1"], cwd=repo, env=ienv,
                       text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=BLOCK_TIMEOUT_S,
                       stdin=subprocess.DEVNULL)
    assert p.returncode != 0, f"make collect-zip succeeded with unreadable ids:\n{p.stdout}"
    assert f"NOT collected: {len(loose) + 1} file(s)" in p.stdout, p.stdout
    listed = dict(ln.strip().split(" -- ", 1) for ln in p.stdout.splitlines()
                  if ln.startswith("  ") and " -- " in ln)
    for name in loose:
        assert name in listed, f"{name!r} was not reported:\n{p.stdout}"
    assert "roster" in listed[loose[1]], listed
    assert "is refused" in listed["evil/"], listed
    assert "collected 0 notebook(s) of 0 student(s)" in p.stdout, p.stdout
    after = {p: p.read_bytes() for p in (course / "submitted").rglob("*") if p.is_file()}
    assert after == before, "a file whose id is not certain was imported"
    assert not list(tmp_path.rglob("evil*")) or all(q.is_relative_to(again) or "downloaded" in q.parts
                                                     for q in tmp_path.rglob("evil*"))


# ------------------------------------------------------------------------ formgrader
def _stop(proc: subprocess.Popen, token: str, port: int) -> list[str]:
    """Stop `make formgrader`: POST /api/shutdown, else signals to its process group (by
    its PID); return descriptions of processes that survived (killed)."""
    import psutil

    family = [psutil.Process(proc.pid)]
    with contextlib.suppress(psutil.NoSuchProcess):
        family += family[0].children(recursive=True)
    with contextlib.suppress(OSError):
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/shutdown", method="POST", data=b"",
                                     headers={"Authorization": f"token {token}"})
        urllib.request.urlopen(req, timeout=10).close()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)
    _gone, alive = psutil.wait_procs(family, timeout=10)
    strays = []
    for p in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            strays.append(f"pid {p.pid} {' '.join(p.cmdline())[:120]}")
            p.kill()
    return strays


_JS_ROWS = """() => Array.from(document.querySelectorAll('td.num-submissions')).map(td => {
  const tr = td.closest('tr');
  const name = tr.querySelector('.name');
  return [name ? name.textContent.trim() : '', td.textContent.trim()];
})"""


@pytest.mark.browser
@pytest.mark.pipeline
@pytest.mark.timeout(2400)
def test_formgrader_lists_assignments_and_submissions(lifecycle: Lifecycle):
    try:
        from tests import browser_support as bs
    except ImportError:  # tests/ on sys.path
        import browser_support as bs

    problem = bs.chromium_problem()
    if problem:
        pytest.fail(f"Chromium is required for the browser test: {problem}", pytrace=False)
    port = bs.free_port()
    log_path = lifecycle.repo.parent / "logs" / "formgrader.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        proc = subprocess.Popen(["bash", "-e", "-c", f"make formgrader LAB_PORT={port}"], cwd=lifecycle.repo,
                                env=lifecycle.instructor_env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    token, strays = "", []
    try:
        deadline = time.monotonic() + 120
        while not token:
            m = re.search(rf"http://127\.0\.0\.1:{port}/lab\?token=([0-9a-f]+)", log_path.read_text())
            if m:
                token = m.group(1)
            elif proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"make formgrader printed no URL with a token:\n{log_path.read_text()[-4000:]}")
            else:
                time.sleep(0.5)
        SHOTS.mkdir(parents=True, exist_ok=True)
        with bs.chromium_browser() as browser:
            page = browser.new_context(viewport=bs.VIEWPORT).new_page()
            page.goto(f"http://127.0.0.1:{port}/formgrader?token={token}", timeout=120_000)
            page.wait_for_selector("td.num-submissions", timeout=120_000)
            page.wait_for_timeout(1000)
            rows = dict(page.evaluate(_JS_ROWS))
            page.screenshot(path=str(SHOTS / "formgrader.png"), full_page=True)
            for a in ASSIGNMENTS:
                assert a in rows, f"the Formgrader lists {sorted(rows)}, not {a}"
                assert int(rows[a] or 0) >= len(STUDENTS), f"{a}: the Formgrader shows {rows[a]!r} submissions"
            # The submissions of one assignment, by student.
            page.goto(f"http://127.0.0.1:{port}/formgrader/manage_submissions/cnn_lcn?token={token}",
                      timeout=120_000)
            page.wait_for_selector("td", timeout=120_000)
            page.wait_for_function("() => document.body.innerText.includes('alice')", timeout=60_000)
            text = page.inner_text("body")
            page.screenshot(path=str(SHOTS / "formgrader_submissions.png"), full_page=True)
            for sid in STUDENTS:
                assert sid in text, f"manage_submissions/cnn_lcn does not list {sid}"
    finally:
        strays = _stop(proc, token, port)
    assert not strays, f"processes survived make formgrader: {strays}"
    print(json.dumps(rows))
