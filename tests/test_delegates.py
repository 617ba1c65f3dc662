"""The delegates tool (tools/meta/delegates.py, issue 35 point 5): no function left in an exercise's
grading edition passes the exercise's tests through a short delegate, and the tool finds one when
there is one."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from tools import nbcore
from tools.build import student_edition
from tools.env import REPO
from tools.meta import delegates

TEACHER_NODES = REPO / "course/source/td2_7_learned_first/td2_7_4_teacher_nodes.py"
ARCCOS = "td_lib.core.gaussian.arccos_kernel"

# A tiny notebook: two exercises, the first answered by kappa4_v as given, the second by the
# difference of two calls of the arc-cosine kernel (two option settings of `degree`).
SYNTHETIC = '''\
# %%
import numpy as np

{answer_exS_kappa}
def kappa(beta):
    ### BEGIN SOLUTION
    return -2.0 * beta * beta / (1.0 + beta) ** 2
    ### END SOLUTION

{answer_exS_gap}
def gap(s):
    ### BEGIN SOLUTION
    s = np.asarray(s, dtype=float)
    return np.sqrt(1.0 - s * s) / (2 * np.pi) + (np.pi - np.arccos(s)) / (2 * np.pi) * (s - 1.0)
    ### END SOLUTION

{test_exS_kappa}
from td_lib.own_work import own_work
_k = own_work(kappa, "exS_kappa")
for _b in (0.5, 2.0, 10.0):
    assert abs(_k(_b) + 2 * _b * _b / (1 + _b) ** 2) < 1e-12, f"kappa({_b}) = {_k(_b)} is wrong here"

{test_exS_gap}
from td_lib.own_work import own_work
_g = own_work(gap, "exS_gap")
_s = np.linspace(-0.9, 0.9, 7)
_want = np.sqrt(1 - _s**2) / (2 * np.pi) + (np.pi - np.arccos(_s)) / (2 * np.pi) * (_s - 1)
assert np.abs(np.asarray(_g(_s), float) - _want).max() < 1e-12, "gap(s) is not the expected difference"
'''



def _header(kind: str, gid: str) -> str:
    """The ``# %%`` line of an answer or test cell, with its nbgrader metadata."""
    meta = ({"grade": False, "grade_id": gid, "locked": False, "schema_version": 3, "solution": True, "task": False}
            if kind == "answer" else
            {"grade": True, "grade_id": gid, "locked": True, "points": 1, "schema_version": 3, "solution": False,
             "task": False})
    return "# %% nbgrader=" + json.dumps(meta)


FUNCTIONS = [  # [module, name, where defined]: the synthetic edition
    ["td_lib.mixed_cumulant", "kappa4_v", "td_lib.mixed_cumulant.model.kappa4_v"],
    ["td_lib.core.gaussian", "arccos_kernel", ARCCOS],
    ["td_lib.core.gaussian", "gauss_normal_nodes", "td_lib.core.gaussian.gauss_normal_nodes"],
    ["td_lib.kernels", "relu_ntk_nobias", "td_lib.kernels.relu_ntk_nobias"],
]


def _fill(text: str) -> str:
    """SYNTHETIC with its placeholders ``{answer_<id>}`` / ``{test_<id>}`` replaced by cell headers."""
    for gid in ("exS_kappa", "exS_gap"):
        text = text.replace("{answer_" + gid + "}", _header("answer", gid))
        text = text.replace("{test_" + gid + "}", _header("test", "test_" + gid))
    return text


def _synthetic(tmp_path, functions, cut=()):
    src = tmp_path / "synthetic.py"
    src.write_text(_fill(SYNTHETIC))
    assert [nbcore.grade_id(c) for c in nbcore.read_source(src).cells if nbcore.is_answer(c)] == [
        "exS_kappa", "exS_gap"]
    spec = {"source": str(src), "exercises": {"exS_kappa": ["test_exS_kappa"], "exS_gap": ["test_exS_gap"]},
            "functions": functions, "cut": list(cut)}
    result = delegates.run_spec(spec)
    assert result["problems"] == [], result["problems"]
    return delegates.findings([result])


def test_a_planted_delegate_is_found_and_a_cut_one_is_not(tmp_path):
    found = _synthetic(tmp_path, FUNCTIONS)
    assert any("kappa4_v(as given)" in d for d in found["exS_kappa"]), found
    assert any("arccos_kernel" in d and "degree=1" in d and " - " in d for d in found["exS_gap"]), found
    # the same edition without those two functions: nothing else passes
    kept = [f for f in FUNCTIONS if f[1] not in ("kappa4_v", "arccos_kernel")]
    found = _synthetic(tmp_path, kept, cut=["td_lib.mixed_cumulant.kappa4_v", ARCCOS])
    assert found == {"exS_kappa": [], "exS_gap": []}, found


def test_the_grading_edition_of_7_4_cuts_the_arc_cosine_kernel_and_the_handout_keeps_it():
    answers = delegates.answer_ids(TEACHER_NODES)
    assert ARCCOS in student_edition.cut_names(answers, keep_general=False)
    assert ARCCOS not in student_edition.cut_names(answers, keep_general=True)
    assert ARCCOS not in student_edition.cut_names(student_edition.handout_exercises())


@pytest.mark.slow
def test_re_adding_the_arc_cosine_kernel_to_7_4_gives_theorem_6_a_delegate():
    r = delegates.run_notebook(TEACHER_NODES, readd=(ARCCOS,), only=["ex74A_closed_form"])
    found = delegates.findings([r])["ex74A_closed_form"]
    assert any("arccos_kernel" in d for d in found), delegates.table([r])


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("TD_DELEGATES_FULL"), reason=(
    "the course-wide search takes about 20 minutes on 2 cores, beyond CI's budget: `make delegates` runs it "
    "(TD_DELEGATES_FULL=1 runs this test)"))
def test_no_exercise_of_the_course_has_a_passing_delegate():
    results = delegates.run(nbcore.sources())
    problems = [p for r in results for p in r["problems"]]
    assert problems == [], problems
    found = {ex: ds for ex, ds in delegates.findings(results).items() if ds}
    assert found == {}, ("functions of a grading edition pass an exercise's tests as a short delegate: cut them "
                         "(DELEGATE_CUTS in checks/grading/exercises.py) or change the exercise\n"
                         + delegates.table(results))
    assert sum(len(r["exercises"]) for r in results) >= 20, "the tool checked too few exercises"


def test_the_statement_forms_are_documented():
    assert "ex74A_closed_form" in delegates.FORMS
    assert all(f.__doc__ for fs in delegates.FORMS.values() for forms in fs.values() for f in forms)
    assert textwrap.dedent(delegates.__doc__).count("statement") >= 1
