"""A student's path holds (issue 37, point 7): what a released notebook's visible tests say at home,
on the handout's td_lib, is what they say when ``make grade`` grades the same notebook.

The fast tests pin how each side's verdict is read (the ✓ and errors at home; the line where a
graded test cell stopped, visible or hidden); the pipeline test runs the CNN/LCN notebooks whose
exercises have general tools (J2, sgd_step, generalisation_error) with the reference answers and the
delegating answers, at home and through the sandboxed grader, and finds no mismatch."""

from __future__ import annotations

import nbformat
import pytest

from tools import env, nbcore
from tools.grading import sandbox
from tools.grading.record import GradingRecord
from tools.meta import home_verdicts

TICK = "✓ j2_erf passes the visible tests. When your work is graded, hidden tests check more cases.\n"


def _cell(outputs: list) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell("x = 1", outputs=outputs)


def _stream(text: str):
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def _error(ename: str = "AssertionError", evalue: str = "got 2, expected 3"):
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[])


def test_home_verdict_is_a_tick_and_no_error():
    assert home_verdicts._home_verdict(_cell([_stream(TICK)])) == ("pass", "")
    assert home_verdicts._home_verdict(_cell([_stream("✓ f and g pass the visible tests.")]))[0] == "pass"
    assert home_verdicts._home_verdict(_cell([_error()])) == ("fail", "AssertionError: got 2, expected 3")
    # the tick before a check (issue 37, point 3) is a failure at home, and the note says so
    verdict, note = home_verdicts._home_verdict(_cell([_stream(TICK), _error("DelegationError", "calls J2")]))
    assert verdict == "fail" and note.startswith("✓ printed, then DelegationError"), note
    assert home_verdicts._home_verdict(_cell([_stream("nothing")])) == ("fail", "no error but no ✓")


def _graded_course(tmp_path, source: str, error_line: int | None):
    """A fake ``autograded/`` notebook holding one test cell with ``source`` that failed at ``error_line``."""
    meta = {"nbgrader": {"grade": True, "solution": False, "grade_id": "test_a", "points": 1, "locked": True}}
    cell = nbformat.v4.new_code_cell(source, metadata=meta, outputs=[_error()] if error_line else [])
    nb = nbformat.v4.new_notebook(cells=[cell])
    nbcore.write(nb, tmp_path / "autograded" / "s" / "a1" / "nb.ipynb")
    return GradingRecord(student="s", failed_lines={"nb": {"test_a": error_line}} if error_line else {})


SRC = ("x = 1\nassert x == 1, 'x should be one'\npassed('f')\n"
       "### BEGIN HIDDEN TESTS\nassert x == 2, 'm'\n### END HIDDEN TESTS")


@pytest.mark.parametrize(("line", "verdict"), [(None, "pass"), (2, "fail"), (5, "pass"), (4, "pass")])
def test_graded_verdict_reads_where_the_cell_stopped(tmp_path, line, verdict):
    """A graded test cell fails visibly iff it stopped outside its hidden regions."""
    record = _graded_course(tmp_path, SRC, line)
    got = home_verdicts.graded_verdicts(tmp_path, "a1", "s", "nb", record)
    assert got["test_a"][0] == verdict, got


def test_a_failure_without_a_line_is_visible(tmp_path):
    _graded_course(tmp_path, SRC, 2)
    got = home_verdicts.graded_verdicts(tmp_path, "a1", "s", "nb", GradingRecord(student="s"))
    assert got["test_a"][0] == "fail", got


def test_the_students_of_a_notebook():
    cnn3 = env.SOURCE / "cnn_lcn" / "cnn_lcn_3_noise_floor_phase.py"
    assert home_verdicts.student_answers(cnn3, "reference") == {}
    corpus = home_verdicts.student_answers(cnn3, "delegates")
    home = home_verdicts.student_answers(cnn3, "home_delegates")
    assert set(corpus) == set(home) == {"exE_initial_errors", "exF_noise_floor"}
    assert "cl.generalisation_error(" in home["exE_initial_errors"] and "initial_error(" in corpus["exE_initial_errors"]
    assert home["exF_noise_floor"] == corpus["exF_noise_floor"]
    cnn2 = env.SOURCE / "cnn_lcn" / "cnn_lcn_2_specialisation.py"
    assert home_verdicts.student_answers(cnn2, "home_delegates") is None  # no general tool to delegate to
    t74 = env.SOURCE / "td2_7_learned_first" / "td2_7_4_teacher_nodes.py"
    assert "arccos_kernel(" in home_verdicts.student_answers(t74, "home_delegates")["ex74A_closed_form"]


@pytest.mark.pipeline
@pytest.mark.skipif(not sandbox.available()[0], reason=sandbox.available()[1])
def test_visible_verdicts_at_home_equal_the_graded_ones(tmp_path):
    """CNN/LCN: the reference answers and the delegations (j2_erf -> J2, lcn_sgd_step -> sgd_step,
    matched_init -> a cut function) of notebook 1, and initial_errors -> generalisation_error of
    notebook 3, at home and through make grade's grader: the same visible verdict on every test cell.
    Fails while the handout's own_work lets a general tool through at home (a ✓ the grader refuses)."""
    rows = home_verdicts.table(
        ["cnn_lcn_1_exact_odes", "cnn_lcn_3_noise_floor_phase"], root=tmp_path,
        only={"cnn_lcn_1_exact_odes": ("reference", "delegates"), "cnn_lcn_3_noise_floor_phase": ("home_delegates",)})
    text = home_verdicts.render(rows)
    by = {(r.notebook, r.student, r.test): r for r in rows}
    assert not [r for r in rows if r.mismatch], text
    # the comparison has teeth: the reference passes everything, each delegation fails its own test
    assert all(r.home == "pass" for r in rows if r.student == "reference"), text
    for key in [("cnn_lcn_1_exact_odes", "delegates", "test_exA_j2_erf"),
                ("cnn_lcn_1_exact_odes", "delegates", "test_exB_lcn_sgd_step"),
                ("cnn_lcn_3_noise_floor_phase", "home_delegates", "test_exE_initial_errors")]:
        assert by[key].graded == "fail" and "DelegationError" in by[key].home_note, text
