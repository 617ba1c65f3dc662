"""Unit tests of the build tooling (no kernels): markers, stubs, sync guard, lint."""

from __future__ import annotations

import os
import time

import jupytext
import nbformat
import pytest
from nbgrader.preprocessors import ClearSolutions

from tools import nbcore
from tools.build import nbtool

SRC = '''# %% [markdown]
# Intro

# %% nbgrader={"grade": false, "grade_id": "ans", "locked": false, "schema_version": 3, "solution": true, "task": false}
def f(x):
    """Double x."""
    ### BEGIN SOLUTION
    y = 2 * x
    return y
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "test_ans", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
from td_lib.own_work import own_work, passed
_f = own_work(f, "ans")
assert _f(1) == 2, "f(1) should be 2: f doubles x"
passed("f")
### BEGIN HIDDEN TESTS
assert _f(5) == 10, "f(5) should be 10: f doubles x"
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": true, "grade_id": "md", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false}
# Because.
'''


@pytest.fixture
def src(tmp_path):
    p = tmp_path / "nb.py"
    p.write_text(SRC)
    (tmp_path / "jupytext.toml").write_text(
        'formats = "ipynb,py:percent"\ncell_metadata_filter = "nbgrader,tags,-all"\n'
        'notebook_metadata_filter = "-all"\n')
    return p


def test_solution_notebook_strips_markers_and_keeps_code(src):
    nb = nbcore.solution_notebook(nbcore.read_source(src))
    text = "\n".join(c.source for c in nb.cells)
    assert "BEGIN" not in text and "END" not in text
    assert "y = 2 * x" in text and "assert _f(5) == 10" in text


def test_the_markers_and_hidden_lines_have_one_definition():
    """nbcore spells nbgrader's markers; the ``### `` forms and MARKERS are built from them, and
    nbcore's secret lines are the text of nbcore.hidden_lines (markers left out)."""
    from nbgrader.preprocessors import ClearHiddenTests

    hidden = ClearHiddenTests()
    assert nbcore.HIDDEN_DELIMITERS == (hidden.begin_test_delimeter, hidden.end_test_delimeter)
    solution = ClearSolutions()
    assert nbcore.SOLUTION_DELIMITERS == (solution.begin_solution_delimeter, solution.end_solution_delimeter)
    assert (nbcore.BEGIN_SOL, nbcore.END_SOL, nbcore.BEGIN_HIDDEN, nbcore.END_HIDDEN) == tuple(
        f"### {m}" for m in nbcore.MARKERS)
    cell = SRC.split("# %%")[3]
    lines = cell.splitlines()
    where = nbcore.hidden_lines(cell)
    assert [lines[i - 1] for i in sorted(where)] == [nbcore.BEGIN_HIDDEN, 'assert _f(5) == 10, "f(5) should be 10: '
                                                     'f doubles x"', nbcore.END_HIDDEN]
    assert nbcore.hidden_lines("a\n  # BEGIN HIDDEN TESTS\nb") == {2, 3}  # unclosed: to the end
    assert nbcore.secret_lines(cell) == {'assert _f(5) == 10, "f(5) should be 10: f doubles x"'}
    assert nbcore.secret_lines("### BEGIN HIDDEN TESTS\n  pass\n### END HIDDEN TESTS") == set()  # short


def test_our_stubs_equal_nbgraders(src):
    ours = nbcore.stub_notebook(nbcore.read_source(src))
    theirs = nbcore.read_source(src)
    nb, _ = ClearSolutions(code_stub={"python": nbcore.CODE_STUB}, text_stub=nbcore.TEXT_STUB).preprocess(
        theirs, {})
    for a, b in zip(ours.cells, nb.cells):
        if nbcore.is_answer(a):
            assert a.source == b.source
    ans = ours.cells[1].source
    assert ans.splitlines()[-1] == "    raise NotImplementedError()" and '"""Double x."""' in ans


def test_failed_tests_reads_error_outputs(src):
    nb = nbcore.read_source(src)
    nb.cells[2].outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue="f(1) should be 2",
                                                  traceback=[])]
    assert nbcore.failed_tests(nb) == {"test_ans": "AssertionError: f(1) should be 2"}


def test_sync_writes_pair_and_refuses_to_clobber_an_edited_notebook(src):
    ipynb = nbtool.sync(src)
    assert ipynb.exists()
    nb = jupytext.read(str(ipynb))
    nb.cells[0].source = "# Intro, edited in JupyterLab"
    jupytext.write(nb, str(ipynb))
    later = time.time() + 5
    os.utime(ipynb, (later, later))
    with pytest.raises(nbtool.SyncError, match="edited as a notebook"):
        nbtool.sync(src)
    ipynb.unlink()
    assert nbtool.sync(src).exists()


def test_lint_accepts_a_good_source_and_names_each_problem(src, tmp_path):
    assert nbtool.lint(src) == []
    bad = SRC.replace('"grade_id": "md"', '"grade_id": "ans"').replace('"points": 1, "schema_version": 3, "solution": false',
                                                                      '"schema_version": 3, "solution": false')
    bad = bad.replace("    ### END SOLUTION\n", "") + "\n# %%\nx = 1  ### BEGIN HIDDEN TESTS\n"
    p = tmp_path / "bad.py"
    p.write_text(bad)
    problems = "\n".join(nbtool.lint(p))
    assert "duplicate grade_id 'ans'" in problems
    assert "graded cell without points" in problems
    assert "unpaired '### BEGIN SOLUTION'" in problems
    assert "markers in a cell without nbgrader metadata" in problems


def test_lint_rejects_quick_mode_in_graded_cells(tmp_path):
    p = tmp_path / "q.py"
    p.write_text(SRC.replace("assert _f(1) == 2", "n = pick(10, 2)\nassert _f(1) == 2"))
    assert any("quick mode" in m for m in nbtool.lint(p))


def test_feedback_leak_detector_flags_hidden_lines_only(tmp_path):
    from tools.build import pipeline

    course = tmp_path
    src = course / "source" / "a" / "nb.py"
    src.parent.mkdir(parents=True)
    src.write_text(SRC.replace('assert _f(5) == 10, "f(5) should be 10: f doubles x"',
                               "assert _f(5) == 10, 'hidden check of f at five, secret'\n"
                               "assert _f(1) == 2, \"f(1) should be 2: f doubles x\""))  # repeats a visible line
    rel = course / "release" / "a" / "nb.ipynb"
    rel.parent.mkdir(parents=True)
    released = nbcore.read_source(src)
    for c in released.cells:  # what generate_assignment does to hidden tests
        c.source = nbcore.strip_markers(c.source, nbcore.BEGIN_HIDDEN, nbcore.END_HIDDEN, keep=False)
    released = nbcore.stub_notebook(released)
    nbformat.write(released, str(rel))
    fb = course / "feedback" / "s" / "a" / "nb.html"
    fb.parent.mkdir(parents=True)
    fb.write_text("<pre>assert _f(1) == 2, &quot;f(1) should be 2: f doubles x&quot;</pre>")
    assert pipeline.feedback_leaks("a", course) == []
    fb.write_text("<pre>assert _f(5) == 10, &#39;hidden check of f at five, secret&#39;</pre>")
    assert len(pipeline.feedback_leaks("a", course)) == 1
    # ... unless the student's own submission holds that very line (their code, no leak).
    sub = nbformat.read(str(rel), as_version=4)
    sub.cells.append(nbformat.v4.new_code_cell("assert _f(5) == 10, 'hidden check of f at five, secret'"))
    nbcore.write(sub, course / "submitted" / "s" / "a" / "nb.ipynb")
    assert pipeline.feedback_leaks("a", course) == []


def test_lint_wants_messages_and_own_work_in_test_cells(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(SRC.replace('assert _f(1) == 2, "f(1) should be 2: f doubles x"', "assert f(1) == 2\nassert f(2) == 4, 'no'"))
    problems = "\n".join(nbtool.lint(p))
    assert "line 3: assert without a message" in problems
    assert "line 4: assert message 'no' is too terse" in problems
    assert "uses the student's 'f' directly" in problems


def test_lint_keeps_graded_runs_independent_of_demo_cells():
    from nbformat.v4 import new_code_cell, new_notebook

    def nb(*cells):
        out = []
        for src, demo in cells:
            c = new_code_cell(src)
            if demo:
                c.metadata["tags"] = ["demo"]
            out.append(c)
        return new_notebook(cells=out)

    ok = nb(("import numpy as np\nn = 3", False), ("y = np.ones(n)\nprint(y)", True),
            ("z = np.zeros(n)\nassert z.sum() == 0, 'zeros should sum to zero here'", False),
            ("for y in range(2):\n    print(y)", False))
    assert nbtool.lint_demos(ok) == []
    bad = nbtool.lint_demos(nb(("import numpy as np", False), ("y = np.ones(3)", True), ("print(y.sum())", False)))
    assert len(bad) == 1 and "'y'" in bad[0] and "demo cell 1" in bad[0], bad
    state = nbtool.lint_demos(nb(("import torch\ntorch.set_default_dtype(torch.float64)", True)))
    assert len(state) == 1 and "global state" in state[0], state
    for src in ("torch.manual_seed(0)", "np.random.seed(1)", "random.seed(2)"):
        assert nbtool.lint_demos(nb((src, True))), f"{src} changes global state"
    local = "import torch\ng = torch.Generator().manual_seed(3)\nrng = np.random.default_rng(4)"
    assert nbtool.lint_demos(nb(("import numpy as np", False), (local, True))) == []
    graded = new_notebook(cells=[new_code_cell("x = 1", metadata={
        "tags": ["demo"], "nbgrader": {"grade": True, "grade_id": "t", "points": 1}})])
    assert any("nbgrader metadata" in p for p in nbtool.lint_demos(graded))


def test_lint_asks_every_test_cell_to_confirm_its_visible_tests(tmp_path):
    p = tmp_path / "quiet.py"
    p.write_text(SRC.replace('passed("f")\n', ""))
    assert nbtool.lint(p) == [
        "quiet.py (test_ans): the visible tests do not end with passed(<the functions tested>) "
        "(td_lib.own_work.passed: the student's one-line confirmation)"]


def test_lint_refuses_every_checks_import_even_in_hidden_tests(tmp_path):
    p = tmp_path / "good.py"
    p.write_text(SRC)
    assert nbtool.lint(p) == []
    hidden = '### BEGIN HIDDEN TESTS\nassert _f(5) == 10, "f(5) should be 10: f doubles x"\n'
    bad = SRC.replace(hidden, hidden.replace("### BEGIN HIDDEN TESTS\n", "### BEGIN HIDDEN TESTS\n"
                                             "from checks.grading.higher_cumulants import bayes_accuracy_v as _ref\n"))
    bad = bad.replace('_f = own_work(f, "ans")\n', '_f = own_work(f, "ans")\nfrom checks.grading import higher_cumulants\n')
    bad = bad.replace("# %% [markdown]\n# Intro\n", "# %% [markdown]\n# Intro\n\n# %%\nimport checks.two_moments as ref\n")
    p = tmp_path / "bad.py"
    p.write_text(bad)
    problems = nbtool.lint(p)
    text = "\n".join(problems)
    assert "cell 1 line 1: `import checks.two_moments as ref` imports checks.two_moments but the grading kernel" in text, text
    assert "(test_ans) line 3: `from checks.grading import higher_cumulants` imports checks.grading but" in text, text
    assert ("(test_ans) line 7: `from checks.grading.higher_cumulants import bayes_accuracy_v as _ref` imports "
            "checks.grading.higher_cumulants in a hidden-test region but") in text, text
    assert all("python -m checks.grading.bake" in m for m in problems), text
    assert len(problems) == 3, text


def test_lint_refuses_a_reference_called_while_grading(tmp_path):
    """A test cell compares with baked numbers: calling an exercise's library counterpart (module
    attribute or bare name) is flagged, in visible and hidden parts alike; the student's own
    function of the same name as a registry entry is not."""
    hidden = '### BEGIN HIDDEN TESTS\nassert _f(5) == 10, "f(5) should be 10: f doubles x"\n'
    bad = SRC.replace(hidden, hidden + "_r = escape.reduced_escape_times(2, 4, runs=9)\n")
    bad = bad.replace('_f = own_work(f, "ans")\n', '_f = own_work(f, "ans")\n_c = cross_term(5.0, 10.0, True)\n')
    p = tmp_path / "ref.py"
    p.write_text(bad)
    text = "\n".join(nbtool.lint(p))
    assert "(test_ans) line 3: calls the reference 'cross_term' while grading" in text, text
    assert "(test_ans) line 8: calls the reference 'reduced_escape_times' while grading" in text, text
    own = SRC.replace("def f(x):", "def cross_term(x):").replace('own_work(f, "ans")', 'own_work(cross_term, "ans")')
    p.write_text(own.replace('passed("f")', 'passed("cross_term")'))
    assert nbtool.lint(p) == []
