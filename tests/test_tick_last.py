"""The tick last (issue 37, point 3): a test cell's visible tests print their ✓ (``passed(...)``) only
after every visible check, so a stub or a wrong answer never reads "✓ ... passes" before an error.

``nbtool.lint`` refuses any other order; these tests plant each wrong order in a small source and
check that the lint names it, and that the course's own sources obey the rule."""

# nbgrader metadata lines of the planted sources are long by nature (as in course/source)
# ruff: noqa: E501

from __future__ import annotations

from pathlib import Path

import pytest

from tools import nbcore
from tools.build import nbtool

HEAD = '''# %% nbgrader={"grade": false, "grade_id": "ans", "locked": false, "schema_version": 3, "solution": true, "task": false}
def f(x):
    """Double x."""
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "test_ans", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
from td_lib.own_work import own_work, passed
_f = own_work(f, "ans")
'''
CHECK = 'assert _f(1) == 2, "f(1) should be 2: f doubles x"\n'
HIDDEN = '### BEGIN HIDDEN TESTS\nassert _f(5) == 10, "f(5) should be 10: f doubles x"\n### END HIDDEN TESTS\n'


def tick_problems(tmp_path: Path, body: str) -> list[str]:
    """The lint's complaints about the test cell ``HEAD + body`` (only those of the tick rule:
    any message naming passed)."""
    p = tmp_path / "nb.py"
    p.write_text(HEAD + body)
    return [m for m in nbtool.lint(p) if "passed" in m]


def test_the_tick_after_every_visible_check_is_accepted(tmp_path):
    assert tick_problems(tmp_path, CHECK + 'passed("f")\n' + HIDDEN) == []
    # comments and blank lines may follow; the call may span lines; no hidden region is needed
    assert tick_problems(tmp_path, CHECK + 'passed(\n    "f",\n)\n# that is all\n\n') == []
    assert nbtool.lint(tmp_path / "nb.py") == []


def test_a_tick_before_a_visible_check_is_refused(tmp_path):
    problems = tick_problems(tmp_path, 'assert _f(0) == 0, "f(0) should be 0: f doubles x"\npassed("f")\n'
                             + CHECK + HIDDEN)
    assert problems == ["nb.py (test_ans) line 4: passed(...) prints the student's ✓ before visible code that "
                        "still checks (line 5): the tick last, as the last statement of the visible tests, "
                        "after every check"], problems


def test_the_visible_check_after_a_hidden_region_counts(tmp_path):
    """The shape of test_ex71C_ntk: the tick closes the visible code above the hidden region, the
    visible check comes after it; the student's release shows both, the tick first."""
    problems = tick_problems(tmp_path, 'passed("f")\n' + HIDDEN + CHECK)
    assert any("line 3: passed(...) prints the student's ✓ before visible code that still checks (line 7)" in m
               for m in problems), problems
    assert any("no assert before passed(...)" in m for m in problems), problems


def test_a_tick_that_checks_nothing_is_refused(tmp_path):
    problems = tick_problems(tmp_path, '_y = _f(1)\npassed("f")\n' + HIDDEN)
    assert problems == ["nb.py (test_ans): no assert before passed(...) in the visible tests: the ✓ would "
                        "show for any answer, the untouched stub included"], problems


@pytest.mark.parametrize("body", [
    CHECK + 'if _f(2) == 4:\n    passed("f")\n' + HIDDEN,                   # inside a block: not the last statement
    CHECK + 'try:\n    passed("f")\nexcept Exception:\n    pass\n',
])
def test_a_tick_inside_a_block_is_refused(tmp_path, body):
    problems = tick_problems(tmp_path, body)
    assert len(problems) == 1 and "the tick last" in problems[0], problems


def test_a_second_tick_or_one_in_the_hidden_tests_is_refused(tmp_path):
    twice = tick_problems(tmp_path, CHECK + 'passed("f")\n' + HIDDEN.replace("### END", 'passed("f")\n### END'))
    assert twice == ["nb.py (test_ans): passed(...) is called 2 times (lines 4, 7); call it once, as the last "
                     "statement of the visible tests"], twice
    only_hidden = tick_problems(tmp_path, CHECK + HIDDEN.replace("### END", 'passed("f")\n### END'))
    assert only_hidden == ["nb.py (test_ans): the visible tests do not end with passed(<the functions tested>) "
                           "(td_lib.own_work.passed: the student's one-line confirmation)"], only_hidden


def test_visible_part_blanks_hidden_regions_and_keeps_line_numbers():
    src = "a = 1\n" + HIDDEN + "b = 2"
    vis = nbtool.visible_part(src)
    assert vis.split("\n") == ["a = 1", "", "", "", "b = 2"]
    assert "_f(5)" not in vis


@pytest.mark.parametrize("source", nbcore.sources(), ids=lambda p: p.stem)
def test_every_course_test_cell_ticks_last(source):
    """Fails (naming the cells) until the course's test cells print their ✓ last."""
    nb = nbcore.read_source(source)
    problems = [m for c in nb.cells if nbcore.is_test(c)
                for m in nbtool.lint_tick_last(c.source, f"{source.name} ({nbcore.grade_id(c)})")]
    assert problems == [], "\n".join(problems)
