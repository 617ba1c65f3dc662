"""Budgets instead of failures: a flood, a hang or a crash costs a submission only the cells it
affects (tools/grading/nbgrader_ext.py: CappedOutputExecute, BudgetExecute, RecoveringExecute, all in
the course's GradingExecute).

Fast tests check the cap logic without a kernel. The pipeline tests grade a scratch course of
one tiny notebook (three one-point exercises) with plain ``nbgrader autograde`` (the
course's configuration) and, if the sandbox can run here, with ``tools.grading.grade``:

- a submission printing 500 MB in one cell keeps full marks, and the grader's peak memory
  stays far below what it receives;
- a cell that kills the kernel (``os._exit``) costs only its own test cell: the cells after it
  still see what the cells before it defined;
- a notebook over its time budget loses only the cells after the one that used it up;
- a correct submission keeps full marks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import CellExecutionComplete
from nbformat.notebooknode import NotebookNode

from tools import env
from tools.grading import nbgrader_ext as ext
from tools.grading import sandbox, steps
from tools.grading.execute import GradingExecute

A = "budgets"
MB = 1 << 20
# 500 MB (and a bit: 500 lines of 1 MiB), fast to produce; the flush patch splits it in ~1 MB messages.
FLOOD = ("import sys\n_line = 'x' * (1 << 20) + '\\n'\n"
         "for _ in range(500):\n    sys.stdout.write(_line)\nprint('THE END')")
FLOOD_BYTES = 500 * (MB + 1) + len("THE END\n")
SOLUTIONS = {"ex_double": "def double(x):\n    return 2 * x", "ex_square": "def square(x):\n    return x * x",
             "ex_inc": "def inc(x):\n    return x + OFFSET"}
STUDENTS = {
    "correct": {},
    "flood": {"ex_square": SOLUTIONS["ex_square"] + "\n" + FLOOD},
    # square() kills the kernel when test_square calls it; test_inc needs double and OFFSET from before.
    "crash": {"ex_square": "def square(x):\n    import os\n    os._exit(1)"},
    "sleepy": {"ex_square": "import time\ntime.sleep(60)\n" + SOLUTIONS["ex_square"]},
    # square() prints 500 MB each time a test calls it (path 2: from the test runner, tools/grading/remote_tests.py)
    "flood_call": {"ex_square": "def square(x):\n" + "\n".join("    " + ln for ln in FLOOD.split("\n"))
                   + "\n    return x * x"},
}
SLEEPY_BUDGET = 10  # seconds; nbgrader starts the kernel and runs the first exercise well within it


# ---------------------------------------------------------------------------- fast
def _feed(cap: ext.OutputCap, chunks) -> str:
    """Stream ``chunks`` through ``cap`` as nbclient would; the text the notebook keeps."""
    shown = "".join(cap.stream(name, text) for name, text in chunks)
    return shown + "".join(o.text for o in cap.finish())


def test_stream_cap_keeps_head_and_tail_and_says_how_much_was_cut():
    line = "y" * MB + "\n"
    chunks = [("stdout", "first line\n")] + [("stdout", line)] * 300 + [("stdout", "last line\n")]
    total = sum(len(t) for _, t in chunks)
    cap = ext.OutputCap(100_000, 0)
    kept = _feed(cap, chunks)
    head, note, tail = kept[:50_000], kept[50_000:-50_000], kept[-50_000:]
    assert head.startswith("first line\n") and set(head[11:]) == {"y"}
    assert tail.endswith("y\nlast line\n")
    assert cap.seen == total and cap.cut == total - 100_000
    assert note == "\n" + ext.CUT_NOTE.format(cut=ext.human(total - 100_000), limit="100 kB", half="50 kB") + "\n"
    assert "[... 314.5 MB of output cut while grading: the cell printed more than 100 kB; " in note


def test_stream_cap_keeps_small_outputs_exactly():
    chunks = [("stdout", "a" * 30_000), ("stderr", "warning\n"), ("stdout", "b" * 40_000), ("stdout", "c\n")]
    cap = ext.OutputCap(100_000, 0)
    shown = [(n, cap.stream(n, t)) for n, t in chunks]
    rest = cap.finish()
    assert cap.cut == 0 and not any("cut while grading" in o.text for o in rest)
    # The head (50 kB) is shown as it arrives, the rest follows unchanged at the end of the cell.
    assert "".join(t for _, t in shown) + "".join(o.text for o in rest) == "".join(t for _, t in chunks)
    assert [(o.name, len(o.text)) for o in rest] == [("stdout", 20_010)]


def test_stream_cap_counts_utf8_bytes_and_never_splits_a_character():
    cap = ext.OutputCap(1000, 0)
    kept = _feed(cap, [("stdout", "é" * 10_000)])  # 2 bytes each
    head, tail = kept.split("\n[... ")[0], kept.split("...]\n")[1]
    assert set(head) == set(tail) == {"é"} and len(head) == len(tail) == 250
    assert cap.cut == 20_000 - 1000


def test_stream_cap_memory_stays_bounded_while_200_mb_arrive():
    line = "z" * MB + "\n"
    cap = ext.OutputCap(100_000, 0)
    tracemalloc.start()
    try:
        for _ in range(200):
            cap.stream("stdout", line)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # what it keeps (100 kB) and the message in hand (the first one is copied once, 1 MB)
    assert peak < 3 * MB, f"the cap held {peak / MB:.1f} MB while 200 MB went through it"
    assert cap.tail_size <= 50_000 and cap.cut > 199 * MB


def test_rich_outputs_are_capped_and_counted():
    cap = ext.OutputCap(1000, 10_000)
    big_text = cap.display({"text/plain": "t" * 5000, "text/html": "<b>short</b>"})
    assert len(big_text["text/plain"]) < 1200 and "of this text/plain cut while grading" in big_text["text/plain"]
    assert big_text["text/html"] == "<b>short</b>"
    assert cap.display({"image/png": "i" * 6000}) is not None
    assert cap.display({"image/png": "i" * 6000}) is None  # over the cell's 10 kB of display data
    assert cap.display({"text/plain": "x"}) is not None  # a small one still fits (1 kB each at least)
    assert cap.dropped == 1 and "1 display output(s), 6 kB in all, not kept" in cap.display_note()


def test_error_outputs_are_capped():
    content = {"ename": "ValueError", "evalue": "v" * 300_000,
               "traceback": [f"frame {i}" for i in range(50_000)] + ["ValueError: " + "v" * 300_000]}
    ext.cap_error(content, 100_000)
    assert len(content["evalue"]) < 100_200 and "of this error message cut while grading" in content["evalue"]
    tb = content["traceback"]
    assert tb[0] == "frame 0" and tb[-1].startswith("ValueError: vvv") and sum(map(len, tb)) < 101_000
    assert any("traceback entries cut while grading" in t for t in tb)


def test_kernel_flush_argument_is_valid_python_without_braces():
    arg = ext.kernel_flush_argument(1_000_000)
    assert arg.startswith("--IPKernelApp.exec_lines=exec(") and "{" not in arg and "}" not in arg
    compile(arg.split("=", 1)[1], "<exec_lines>", "eval")
    compile(ext.KERNEL_FLUSH_SRC.replace("EVERY", "1000"), "<flush>", "exec")
    assert ext.kernel_flush_argument(0) is None


def _msg(kind: str, **content) -> dict:
    return {"msg_type": kind, "header": {"msg_type": kind}, "parent_header": {"msg_id": "m1"},
            "metadata": {}, "content": content}


def test_capped_execute_applies_the_cap_message_by_message_without_a_kernel():
    pre = GradingExecute(max_output_bytes=1000, max_display_bytes=3000)
    cell = NotebookNode(cell_type="code", source="", metadata={"execution": {}}, outputs=[])
    pre.step(steps.CapOutput).begin()
    pre.clear_before_next_output = False
    for i in range(100):
        pre.output(cell.outputs, _msg("stream", name="stdout", text=f"{i:03d}" + "." * 96 + "\n"), None, 0)
    for _ in range(5):
        pre.output(cell.outputs, _msg("display_data", data={"image/png": "p" * 1500}, metadata={}), None, 0)
    pre.output(cell.outputs, _msg("error", ename="E", evalue="e" * 5000, traceback=["E: " + "e" * 5000]), None, 0)
    with pytest.raises(CellExecutionComplete):  # nbclient's end of the cell; the tail is in by then
        pre.process_message(_msg("status", execution_state="idle"), cell, 0)
    kinds = [o.output_type for o in cell.outputs]
    assert kinds == ["stream", "display_data", "display_data", "display_data", "error", "stream"], kinds
    text = cell.outputs[0].text + cell.outputs[-1].text
    assert text.startswith("000....") and text.endswith("099" + "." * 96 + "\n")
    assert "[... 9 kB of output cut while grading: the cell printed more than 1 kB" in text
    assert "3 display output(s)" in cell.outputs[3].data["text/plain"]
    assert len(cell.outputs[4].evalue) < 1200


def test_grading_execute_is_all_three():
    names = [type(s).__name__ for s in GradingExecute().steps]
    assert names == ["SkipDemo", "InstructorGuard", "Recovery", "Budget", "CapOutput"]
    assert GradingExecute.__mro__[1].__name__ == "Execute"  # one class over nbgrader's: no mixins
    for trait in ("max_output_bytes", "max_display_bytes", "kernel_flush_bytes", "max_message_bytes",
                  "max_queued_messages", "notebook_budget", "max_kernel_restarts"):
        assert GradingExecute.class_traits()[trait].metadata.get("config"), trait


def test_course_config_sets_every_budget_explicitly():
    from tools.build import pipeline

    cfg = pipeline.config()
    for trait in ("max_output_bytes", "max_display_bytes", "kernel_flush_bytes", "max_message_bytes",
                  "max_queued_messages", "iopub_timeout", "notebook_budget", "max_kernel_restarts"):
        assert trait in cfg.GradingExecute, trait


# ---------------------------------------------------------------------- scratch course
def _meta(**kw) -> dict:
    return {"nbgrader": {"schema_version": 3, "task": False, **kw}}


def tiny_source() -> nbformat.NotebookNode:
    """Three one-point exercises; the last test also uses what the first answer and a setup
    cell defined (so it passes after a crash only if those were replayed)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# Budgets"), nbformat.v4.new_code_cell("OFFSET = 1")]
    for name, body, test in (
        ("double", "return 2 * x", "assert double(3) == 6, 'double(3) should be 6'"),
        ("square", "return x * x", "assert square(3) == 9, 'square(3) should be 9'"),
        ("inc", "return x + OFFSET", "assert inc(double(2)) == 5, 'inc(double(2)) should be 5'"),
    ):
        nb.cells.append(nbformat.v4.new_code_cell(
            f"def {name}(x):\n    ### BEGIN SOLUTION\n    {body}\n    ### END SOLUTION",
            metadata=_meta(grade=False, grade_id=f"ex_{name}", locked=False, solution=True)))
        nb.cells.append(nbformat.v4.new_code_cell(
            test, metadata=_meta(grade=True, grade_id=f"test_{name}", locked=True, points=1, solution=False)))
    return nb


def write_config(root: Path, extra: str = "") -> None:
    """The course's configuration, with ``root`` as the course root (and ``extra`` lines)."""
    (root / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"load_subconfig({str(env.COURSE / 'nbgrader_config.py')!r})  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(root)!r}\n" + extra)


def make_course(root: Path) -> Path:
    """The scratch course (the course's configuration), released, every student submitted."""
    (root / "source" / A).mkdir(parents=True)
    nbformat.write(tiny_source(), str(root / "source" / A / "tiny.ipynb"))
    write_config(root)
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    from tools.grading import grade

    cfg = grade.load_config(root)  # nbgrader's own generate_assignment, in this process (saves a start-up)
    res = NbGraderAPI(coursedir=CourseDirectory(config=cfg), config=cfg).generate_assignment(A)
    assert res["success"], res.get("error")
    release = nbformat.read(str(root / "release" / A / "tiny.ipynb"), as_version=4)
    for student, answers in STUDENTS.items():
        nb = nbformat.from_dict(release)
        for c in nb.cells:
            gid = c.metadata.get("nbgrader", {}).get("grade_id")
            if gid in SOLUTIONS:
                c.source = answers.get(gid, SOLUTIONS[gid])
        d = root / "submitted" / student / A
        d.mkdir(parents=True)
        nbformat.write(nb, str(d / "tiny.ipynb"))
        (d / "timestamp.txt").write_text("2026-11-30 12:00:00.000000 UTC")
    return root


# Runs nbgrader's own CLI in this process and writes the process's peak RSS (VmHWM: the
# grader alone, not its kernels) to TD_PEAK_FILE when it exits.
PEAK = """
import atexit, os, sys
def _peak():
    hwm = next(ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')).split()[1]
    open(os.environ['TD_PEAK_FILE'], 'w').write(hwm)
atexit.register(_peak)
sys.argv = ['nbgrader'] + sys.argv[1:]
from nbgrader.apps.nbgraderapp import main
main()
"""


def start_autograde(course: Path, *args: str) -> subprocess.Popen:
    """``nbgrader autograde`` in ``course``, started (see :func:`finish`)."""
    return subprocess.Popen([sys.executable, "-c", PEAK, "autograde", A, "--force", "--create", *args], cwd=course,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "TD_PEAK_FILE": str(course / "peak.txt")})


def finish(p: subprocess.Popen, course: Path) -> tuple[str, float]:
    """Its log and the grader's peak RSS in MB."""
    log = p.communicate()[0]
    assert p.returncode == 0, log[-5000:]
    return log, int((course / "peak.txt").read_text()) / 1024


def cell_scores(course: Path, student: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {g.name: g.score for g in gb.find_submission_notebook("tiny", A, student).grades}


def outputs(course: Path, student: str, grade_id: str) -> list[dict]:
    nb = nbformat.read(str(course / "autograded" / student / A / "tiny.ipynb"), as_version=4)
    return next(c.outputs for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


FULL = {"test_double": 1.0, "test_square": 1.0, "test_inc": 1.0}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The scratch course after ``nbgrader autograde`` (path 1), and its pristine copy. The
    sleepy student is graded in a copy whose configuration lowers the time budget to a few
    seconds, at the same time as the others."""
    base = tmp_path_factory.mktemp("budgets")
    t0 = time.monotonic()
    course = make_course(base / "course")
    pristine, budget = base / "pristine", base / "budget"
    shutil.copytree(course, pristine, symlinks=True)
    shutil.copytree(course, budget, symlinks=True)
    write_config(budget, f"c.GradingExecute.notebook_budget = {SLEEPY_BUDGET}\n")
    timings = {"course": time.monotonic() - t0}
    t0 = time.monotonic()
    main = start_autograde(course, "--CourseDirectory.student_id_exclude=sleepy")
    sleepy = start_autograde(budget, "--student=sleepy")
    log2, _ = finish(sleepy, budget)
    timings["sleepy"] = time.monotonic() - t0
    log, peak = finish(main, course)
    timings["correct+flood+crash"] = time.monotonic() - t0
    print(f"\nscratch course timings (s): { {k: round(v, 1) for k, v in timings.items()} }, grader peak {peak:.0f} MB")
    return {"course": course, "budget": budget, "pristine": pristine, "log": log + log2, "peak_mb": peak,
            "timings": timings}


@pytest.mark.pipeline
def test_a_correct_submission_keeps_full_marks(graded):
    assert cell_scores(graded["course"], "correct") == FULL
    assert "Removing failed" not in graded["log"]


@pytest.mark.pipeline
def test_printing_500_mb_costs_no_mark_and_no_memory(graded):
    course = graded["course"]
    assert cell_scores(course, "flood") == FULL
    text = "".join(o.get("text", "") for o in outputs(course, "flood", "ex_square"))
    note = ext.CUT_NOTE.format(cut=ext.human(FLOOD_BYTES - 100_000), limit="100 kB", half="50 kB")
    assert note in text and text.endswith("x\nTHE END\n") and len(text) < 101_000
    # 500 MB went through the grader; before the cap it peaked at about 1.6 GB (and failed the
    # submission); the cap keeps it near what nbgrader needs anyway.
    assert graded["peak_mb"] < 400, f"the grader peaked at {graded['peak_mb']:.0f} MB"


@pytest.mark.pipeline
def test_a_function_that_floods_when_a_test_calls_it_costs_nothing(graded):
    assert cell_scores(graded["course"], "flood_call") == FULL
    text = "".join(o.get("text", "") for o in outputs(graded["course"], "flood_call", "test_square"))
    assert "of output cut while grading" in text and text.endswith("THE END\n") and len(text) < 101_000


@pytest.mark.pipeline
def test_a_cell_that_kills_the_kernel_costs_only_its_test(graded):
    course = graded["course"]
    assert cell_scores(course, "crash") == {**FULL, "test_square": 0.0}
    died = [o for o in outputs(course, "crash", "test_square") if o.get("output_type") == "error"]
    assert [o["ename"] for o in died] == [ext.KERNEL_DIED] and "the kernel died while running this cell" in died[0][
        "evalue"]


@pytest.mark.pipeline
def test_a_notebook_over_its_time_budget_loses_only_the_cells_after(graded):
    course = graded["budget"]
    assert cell_scores(course, "sleepy") == {"test_double": 1.0, "test_square": 0.0, "test_inc": 0.0}
    cut = [o for o in outputs(course, "sleepy", "ex_square") if o.get("output_type") == "error"]
    assert cut[-1]["ename"] == ext.BUDGET_ENAME and "ran out while this cell ran" in cut[-1]["evalue"]
    for gid in ("test_square", "ex_inc", "test_inc"):
        (err,) = outputs(course, "sleepy", gid)
        assert err["ename"] == ext.BUDGET_ENAME, gid
        assert f"the time budget of this notebook ({SLEEPY_BUDGET} s to grade it) was used up" in err["evalue"]
    assert graded["timings"]["sleepy"] < 45, "the sleeping cell (60 s) was not cut at the budget"


@pytest.mark.pipeline
@pytest.mark.skipif(not sandbox.available()[0], reason=sandbox.available()[1])
def test_parallel_sandboxed_grader_survives_500_mb_too(graded, tmp_path):
    from distributed import Client, LocalCluster

    from tools.grading import grade

    course = tmp_path / "course"
    shutil.copytree(graded["pristine"], course, symlinks=True)
    t0 = time.monotonic()
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        recs = grade.grade(A, course, client=client, students=["flood", "correct", "flood_call", "crash"],
                           progress=False, echo=lambda *a: None)
        peak_kb = next(iter(client.run(lambda: int(next(
            ln for ln in open("/proc/self/status") if ln.startswith("VmHWM")).split()[1])).values()))
    print(f"\npath 2: {time.monotonic() - t0:.1f} s, worker peak {peak_kb / 1024:.0f} MB")
    assert {s: (r.score, r.errors) for s, r in recs.items()} == {
        "flood": (3.0, []), "correct": (3.0, []), "flood_call": (3.0, []), "crash": (2.0, [])}
    assert cell_scores(course, "flood") == cell_scores(course, "flood_call") == FULL
    for student, cell in (("flood", "ex_square"), ("flood_call", "test_square")):
        text = "".join(o.get("text", "") for o in outputs(course, student, cell))
        assert "of output cut while grading" in text and len(text) < 101_000, (student, text[-300:])
    # The test runner called square(); it killed the kernel: only that test lost its point.
    assert cell_scores(course, "crash") == {**FULL, "test_square": 0.0}
    died = [o for o in outputs(course, "crash", "test_square") if o.get("output_type") == "error"]
    assert died and "KernelDied" in died[-1]["evalue"] + died[-1]["ename"], died
    assert not recs["crash"].flags, recs["crash"].flags
    assert peak_kb / 1024 < 600, f"the grading worker peaked at {peak_kb / 1024:.0f} MB"


# ------------------------------------------------------------------ a slow honest notebook
SLOW_BUDGET = 8  # seconds: the kernel starts and the first exercise runs well within it


def slow_honest_notebook() -> nbformat.NotebookNode:
    """Correct answers, one of them slow (a 60 s computation), with markdown cells after it
    (text, a graded written answer) and exercises after those."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    md = nbformat.v4.new_markdown_cell
    code = nbformat.v4.new_code_cell
    nb.cells = [
        md("# A slow honest notebook"),
        code("OFFSET = 1"),
        code("def double(x):\n    return 2 * x", metadata=_meta(grade=False, grade_id="ex_double", locked=False,
                                                             solution=True)),
        code("assert double(3) == 6", metadata=_meta(grade=True, grade_id="test_double", locked=True, points=1,
                                                    solution=False)),
        md("## The slow one"),
        code("import time\ntime.sleep(60)  # an honest but slow computation\ndef square(x):\n    return x * x",
             metadata=_meta(grade=False, grade_id="ex_square", locked=False, solution=True)),
        md("Markdown after the cell that uses up the budget."),
        code("assert square(3) == 9", metadata=_meta(grade=True, grade_id="test_square", locked=True, points=1,
                                                    solution=False)),
        md("My written answer: $x^2$ grows.", metadata=_meta(grade=True, grade_id="written", locked=False,
                                                            points=2, solution=True)),
        code("def inc(x):\n    return x + OFFSET", metadata=_meta(grade=False, grade_id="ex_inc", locked=False,
                                                                solution=True)),
        md("One more markdown cell."),
        code("assert inc(double(2)) == 5", metadata=_meta(grade=True, grade_id="test_inc", locked=True, points=1,
                                                          solution=False)),
        md("The end."),
    ]
    return nb


def _by_id(nb) -> dict:
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "grade_id" in c.metadata.get("nbgrader", {})}


def test_a_slow_honest_notebook_is_cut_at_its_budget_not_dropped():
    """The budget runs out in a slow cell followed by markdown cells: no crash (nbgrader used to
    drop the whole notebook, "nbgrader autograde failed"), the test cells before keep their
    points, the code cells after are not run and score 0, the written answer is still there to
    grade by hand, and the feedback says where the budget ran out."""
    from nbgrader.utils import determine_grade

    nb = slow_honest_notebook()
    pre = GradingExecute(notebook_budget=SLOW_BUDGET, timeout=90)
    t0 = time.monotonic()
    nb, _ = pre.preprocess(nb, {})
    took = time.monotonic() - t0
    assert took < SLOW_BUDGET + 30, f"grading took {took:.0f} s for a budget of {SLOW_BUDGET} s"
    cells = _by_id(nb)
    scores = {gid: determine_grade(c)[0] for gid, c in cells.items() if gid.startswith("test_")}
    assert scores == {"test_double": 1, "test_square": 0, "test_inc": 0}, scores
    assert determine_grade(cells["written"])[0] is None  # graded by hand, untouched
    assert cells["written"].source == "My written answer: $x^2$ grows."

    cut = [o for o in cells["ex_square"].outputs if o.get("output_type") == "error"]
    assert cut and cut[-1]["ename"] == ext.BUDGET_ENAME, cells["ex_square"].outputs
    assert f"the time budget of this notebook ({SLOW_BUDGET} s to grade it) ran out while this cell ran" \
        in cut[-1]["evalue"]
    for gid in ("test_square", "ex_inc", "test_inc"):
        (err,) = cells[gid].outputs
        assert err["ename"] == ext.BUDGET_ENAME, gid
        assert f"({SLOW_BUDGET} s to grade it) was used up before this cell ran" in err["evalue"], err["evalue"]
        assert "it ran out while cell 6 (ex_square) ran" in err["evalue"], err["evalue"]
        assert cells[gid].execution_count is None
    assert [o["output_type"] for o in cells["test_double"].outputs if o["output_type"] == "error"] == []
