"""nbgrader extensions of the course: hidden tests never reach feedback outputs; the
checksum check knows the released form of a test cell (nbgrader #1961)."""

from __future__ import annotations

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from tools import nbcore
from tools.grading import nbgrader_ext as ext
from tools.grading.execute import GradingExecute

TEST_CELL = """assert f(1) == 2, "f(1) should be 2"
### BEGIN HIDDEN TESTS
for _x in (3.0, 7.5):
    assert abs(f(_x) - 2 * _x) < 1e-12, f"f({_x}) is wrong"
### END HIDDEN TESTS
"""


def _nb(outputs):
    cell = new_code_cell(TEST_CELL, outputs=outputs)
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "test_f", "locked": True, "points": 1,
                                 "solution": False, "schema_version": 3}
    return new_notebook(cells=[cell])


def test_secret_lines_and_released_source():
    assert ext.secret_lines(TEST_CELL) == {"for _x in (3.0, 7.5):",
                                           'assert abs(f(_x) - 2 * _x) < 1e-12, f"f({_x}) is wrong"'}
    assert ext.released_source(TEST_CELL) == 'assert f(1) == 2, "f(1) should be 2"\n'


def test_scrub_removes_source_lines_from_tracebacks_streams_and_results():
    verbose_tb = [
        "\x1b[31mAssertionError\x1b[39m Traceback (most recent call last)",
        "Cell In[4], line 4\n      2 for _x in (3.0, 7.5):\n----> 4     assert abs(f(_x) - 2 * _x) < 1e-12, "
        'f"f({_x}) is wrong"',
        "\x1b[31mAssertionError\x1b[39m: f(3.0) is wrong",
    ]
    peek = "### BEGIN HIDDEN TESTS\nfor _x in (3.0, 7.5):\nharmless line\n"
    nb = _nb([
        new_output("error", ename="AssertionError", evalue="f(3.0) is wrong", traceback=verbose_tb),
        new_output("stream", name="stdout", text=peek),
        new_output("execute_result", data={"text/plain": "'for _x in (3.0, 7.5):'"}, execution_count=1),
    ])
    nb, _ = ext.ScrubHiddenOutputs().preprocess(nb, {})
    text = nbformat.writes(nb)  # the whole notebook as JSON text
    outs = nb.cells[0].outputs
    joined = "\n".join(outs[0].traceback) + outs[1].text + outs[2].data["text/plain"]
    for secret in ("for _x in (3.0, 7.5):", "2 * _x) < 1e-12", "BEGIN HIDDEN TESTS"):
        assert secret not in joined
    # The message the test meant to show, and unrelated output, stay.
    assert outs[0].evalue == "f(3.0) is wrong"
    assert "f(3.0) is wrong" in outs[0].traceback[-1]
    assert "harmless line" in outs[1].text
    assert ext.REMOVED in outs[1].text and ext.REMOVED in joined
    assert "2 * _x" in text  # the source itself is ClearHiddenTests' job (next in the chain)


def test_scrub_leaves_a_clean_notebook_unchanged():
    outs = [new_output("stream", name="stdout", text="kappa_4 = -1.652893\n")]
    nb = _nb(outs)
    before = nbformat.writes(nb)
    nb, _ = ext.ScrubHiddenOutputs().preprocess(nb, {})
    assert nbformat.writes(nb) == before


def test_feedback_chain_is_configured_in_the_course_config():
    from tools.build import pipeline

    cfg = pipeline.config()
    chain = cfg.GenerateFeedback.preprocessors
    names = [p.__name__ for p in chain]
    assert names.index("ScrubHiddenOutputs") < names.index("ClearHiddenTests")
    assert "--InteractiveShell.xmode=Minimal" in cfg.Execute.extra_arguments
    assert "ReleaseAwareOverwriteCells" in [p.__name__ for p in cfg.Autograde.sanitize_preprocessors]


def _demo_nb():
    setup = new_code_cell("x = 21")
    demo = new_code_cell("import time\ntime.sleep(60)\nraise RuntimeError('a demo ran while grading')")
    demo.metadata["tags"] = ["demo"]
    test = new_code_cell("assert 2 * x == 42, 'the cell after a demo must still see x'\nprint('graded ran')")
    return new_notebook(cells=[setup, demo, test], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})


def test_grading_execute_skips_demo_cells_and_runs_the_rest(tmp_path):
    nb, _ = GradingExecute(timeout=30).preprocess(_demo_nb(), {"metadata": {"path": str(tmp_path)}})
    setup, demo, test = nb.cells
    assert [o.get("text") for o in demo.outputs] == [nbcore.DEMO_NOTE] and demo.execution_count is None
    assert not any(o.output_type == "error" for c in nb.cells for o in c.outputs), "a cell raised"
    assert "graded ran" in "".join(o.get("text", "") for o in test.outputs)
    assert setup.execution_count == 1 and test.execution_count == 2


def test_autograde_chain_is_nbgraders_with_grading_execute():
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute, LimitOutput

    from tools.build import pipeline

    cfg = pipeline.config()
    ours = list(cfg.Autograde.autograde_preprocessors)
    default = list(Autograde.class_traits()["autograde_preprocessors"].default())
    # LimitOutput (cuts after the fact, first lines only) is superseded by GradingExecute's caps.
    assert ours == [GradingExecute if p is Execute else p for p in default if p is not LimitOutput], ours


@pytest.mark.pipeline
def test_grading_execute_recovers_from_a_dead_kernel_and_caps_a_flood(tmp_path):
    nb = new_notebook(cells=[
        new_code_cell("x = 21"),
        new_code_cell("import sys\nfor _ in range(50):\n    sys.stdout.write('y' * 100_000 + '\\n')"),
        new_code_cell("import os\nos._exit(1)"),
        new_code_cell("print(2 * x)"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nb, _ = GradingExecute(timeout=30).preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    _, flood, crash, after = nb.cells
    text = "".join(o.get("text", "") for o in flood.outputs)
    assert len(text) < 100_200 and "4.9 MB of output cut while grading" in text
    assert [o.get("ename") for o in crash.outputs] == [ext.KERNEL_DIED]
    assert [o.get("text") for o in after.outputs] == ["42\n"], "x was not replayed on the fresh kernel"
