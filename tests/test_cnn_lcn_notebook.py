"""Tests of the CNN/LCN notebooks' exercises outside the notebooks (assignment ``cnn_lcn``).

The assignment has three lessons (``course/source/cnn_lcn/cnn_lcn_{1,2,3}_*.py``), each with
its fixture. The exercise cells are executed in a small namespace (the notebooks' imports),
without the demo cells: each solution must pass its test cells, the nbgrader stub must fail
them, and each wrong answer of the notebook's fixture must fail exactly the test cells the
fixture lists (within the same exercise). The quoted numbers of the check script are tied to
the prose of the notebook each claim names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.claims import first_number
from tools import nbcore
from tools.build import fake_students

REPO = Path(__file__).resolve().parent.parent
STEMS = ("cnn_lcn_1_exact_odes", "cnn_lcn_2_specialisation", "cnn_lcn_3_noise_floor_phase")
NBS = {stem: REPO / f"course/source/cnn_lcn/{stem}.py" for stem in STEMS}
PRELUDE = """
import numpy as np
from scipy.special import erf
from td_lib import cnn_lcn as cl
from td_lib.core.runtime import QUICK, pick, progress
"""
# answer cell -> its notebook, its test cells, and the earlier answers (same notebook) it needs.
EXERCISES = {
    "exA_j2_erf": ("cnn_lcn_1_exact_odes", ["test_exA_j2_erf"], []),
    "exB_lcn_sgd_step": ("cnn_lcn_1_exact_odes", ["test_exB_lcn_sgd_step"], []),
    "exC_matched_init": ("cnn_lcn_1_exact_odes", ["test_exC_matched_init"], []),
    "exD_alpha_spec": ("cnn_lcn_2_specialisation", ["test_exD_alpha_spec", "test_exD_fit_log_d"], []),
    "exE_initial_errors": ("cnn_lcn_3_noise_floor_phase", ["test_exE_initial_errors"], []),
    "exF_noise_floor": ("cnn_lcn_3_noise_floor_phase", ["test_exF_noise_floor", "test_exF_optimal_eta"], []),
}
BEGIN_SOL, END_SOL = "### BEGIN SOLUTION", "### END SOLUTION"


def _cells(nb_path: Path) -> dict[str, str]:
    nb = nbcore.read_source(nb_path)  # baked regions expanded (checks/grading/bake.py)
    out = {}
    for cell in nb.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid:
            out[gid] = cell.source
    return out


def _solution(src: str) -> str:
    return "\n".join(line for line in src.split("\n") if BEGIN_SOL not in line and END_SOL not in line)


def _stub(src: str) -> str:
    out, inside = [], False
    for line in src.split("\n"):
        if BEGIN_SOL in line:
            inside = True
            out.append(line[: len(line) - len(line.lstrip())] + "raise NotImplementedError()")
        elif END_SOL in line:
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


def _passes(answer_src: str, deps: list[str], test_id: str, cells: dict[str, str]) -> bool:
    ns: dict = {}
    exec(PRELUDE, ns)
    for d in deps:
        exec(_solution(cells[d]), ns)
    try:
        exec(answer_src, ns)
        exec(cells[test_id], ns)
    except Exception:  # noqa: BLE001 - any failure of the test cell counts
        return False
    return True


CELLS = {stem: _cells(path) for stem, path in NBS.items()}
FX = {stem: fake_students.fixture(path) for stem, path in NBS.items()}  # checks/fixtures/cnn_lcn/<stem>/


def test_the_exercises_are_where_they_are_listed():
    for answer, (stem, tests, deps) in EXERCISES.items():
        for gid in [answer, *tests, *deps]:
            assert gid in CELLS[stem], f"{gid} is not a cell of {stem}"
    assert {stem for stem, _, _ in EXERCISES.values()} == set(STEMS), "a lesson has no exercise"


@pytest.mark.parametrize("answer", list(EXERCISES))
def test_solution_passes_and_stub_fails(answer):
    stem, tests, deps = EXERCISES[answer]
    cells = CELLS[stem]
    for t in tests:
        assert _passes(_solution(cells[answer]), deps, t, cells), f"solution of {answer} fails {t}"
        assert not _passes(_stub(cells[answer]), deps, t, cells), f"stub of {answer} passes {t}"


@pytest.mark.parametrize("answer", list(EXERCISES))
def test_fixture_wrong_answer_fails_listed_tests(answer):
    stem, tests, deps = EXERCISES[answer]
    fx = FX[stem]
    wrong = fx["partial"]["answers"].get(answer)
    assert wrong is not None, f"the fixture of {stem} has no plausible wrong answer for {answer}"
    for t in tests:
        expected_fail = t in fx["partial"]["fails"]
        assert _passes(wrong, deps, t, CELLS[stem]) != expected_fail, (
            f"wrong answer for {answer}: {t} should {'fail' if expected_fail else 'pass'}")


@pytest.mark.parametrize("stem", STEMS)
def test_fixture_lists_real_cells(stem):
    for variant in ("partial", "raises"):
        assert FX[stem][variant]["fails"], f"{stem}: the {variant} student must fail some test"
        for gid in list(FX[stem][variant]["answers"]) + FX[stem][variant]["fails"]:
            assert gid in CELLS[stem], f"{stem}, {variant}: unknown grade_id {gid}"


@pytest.mark.slow
def test_claim_quotes_are_in_the_notebook():
    from checks.cnn_lcn_notebook_check import collect

    texts = {str(path.relative_to(REPO)): path.read_text() for path in NBS.values()}
    claims = collect(False)
    assert claims
    for c in claims:
        assert c.ok, f"claim {c.id} fails: quoted {c.quoted}, computed {c.computed}"
        if c.quote is not None:
            assert c.notebook in texts, f"claim {c.id} names {c.notebook}, not one of {sorted(texts)}"
            assert c.quote in texts[c.notebook], f"quote of {c.id} not in {c.notebook}: {c.quote!r}"
            assert first_number(c.quote) == c.quoted, f"first number of {c.quote!r} is not {c.quoted}"


@pytest.mark.slow
def test_full_mode_claims_of_figures_3_and_7():
    """The Figure 3 and 7 numbers that only the full check recomputes (the slopes of the larger
    kernels, about a minute) hold and are the ones the notebook quotes."""
    from checks.cnn_lcn_notebook_check import _figure3_claims, _figure7_claims

    fast = {c.id for c in _figure3_claims(False) + _figure7_claims(False)}
    full = _figure3_claims(True) + _figure7_claims(True)
    assert {c.id for c in full} - fast, "the full check adds no claim"
    for c in full:
        assert c.ok, f"claim {c.id} fails: quoted {c.quoted}, computed {c.computed}"
        if c.quote is not None:
            assert c.notebook == str(NBS["cnn_lcn_2_specialisation"].relative_to(REPO)), (
                f"claim {c.id}: Figures 3 and 7 are in lesson 2, not {c.notebook}")
            text = (REPO / c.notebook).read_text()
            assert c.quote in text, f"quote of {c.id} not in {c.notebook}: {c.quote!r}"
            assert first_number(c.quote) == c.quoted, f"first number of {c.quote!r} is not {c.quoted}"
