"""Tests of the CNN/LCN notebook's exercises outside the notebook (assignment ``cnn_lcn``).

The exercise cells are executed in a small namespace (the notebook's imports), without the
demo cells: each solution must pass its test cells, the nbgrader stub must fail them, and
each wrong answer of the fixture must fail exactly the test cells the fixture lists (within
the same exercise). The quoted numbers of the check script are tied to the notebook prose.
"""

from __future__ import annotations

import json
from pathlib import Path

import jupytext
import pytest

from checks.claims import first_number

REPO = Path(__file__).resolve().parent.parent
NB = REPO / "course/source/cnn_lcn/cnn_vs_lcn.py"
FIXTURE = REPO / "checks/fixtures/cnn_lcn/cnn_vs_lcn.json"
PRELUDE = """
import numpy as np
from scipy.special import erf
from td_lib import cnn_lcn as cl
from td_lib.core.runtime import QUICK, pick, progress
"""
# answer cell -> its test cells, and the earlier answers it needs.
EXERCISES = {
    "exA_j2_erf": (["test_exA_j2_erf"], []),
    "exB_lcn_sgd_step": (["test_exB_lcn_sgd_step"], []),
    "exC_matched_init": (["test_exC_matched_init"], []),
    "exD_alpha_spec": (["test_exD_alpha_spec", "test_exD_fit_log_d"], []),
    "exE_initial_errors": (["test_exE_initial_errors"], []),
    "exF_noise_floor": (["test_exF_noise_floor", "test_exF_optimal_eta"], ["exA_j2_erf"]),
}
BEGIN_SOL, END_SOL = "### BEGIN SOLUTION", "### END SOLUTION"


def _cells() -> dict[str, str]:
    nb = jupytext.read(str(NB))
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


CELLS = _cells()
FX = json.loads(FIXTURE.read_text())


@pytest.mark.parametrize("answer", list(EXERCISES))
def test_solution_passes_and_stub_fails(answer):
    tests, deps = EXERCISES[answer]
    for t in tests:
        assert _passes(_solution(CELLS[answer]), deps, t, CELLS), f"solution of {answer} fails {t}"
        assert not _passes(_stub(CELLS[answer]), deps, t, CELLS), f"stub of {answer} passes {t}"


@pytest.mark.parametrize("answer", list(EXERCISES))
def test_fixture_wrong_answer_fails_listed_tests(answer):
    wrong = FX["partial"]["answers"].get(answer)
    assert wrong is not None, f"the fixture has no plausible wrong answer for {answer}"
    tests, deps = EXERCISES[answer]
    for t in tests:
        expected_fail = t in FX["partial"]["fails"]
        assert _passes(wrong, deps, t, CELLS) != expected_fail, (
            f"wrong answer for {answer}: {t} should {'fail' if expected_fail else 'pass'}")


def test_fixture_lists_real_cells():
    for variant in ("partial", "raises"):
        for gid in list(FX[variant]["answers"]) + FX[variant]["fails"]:
            assert gid in CELLS, f"{variant}: unknown grade_id {gid}"


@pytest.mark.slow
def test_claim_quotes_are_in_the_notebook():
    from checks.cnn_lcn_notebook_check import collect

    text = NB.read_text()
    claims = collect(False)
    assert claims
    for c in claims:
        assert c.ok, f"claim {c.id} fails: quoted {c.quoted}, computed {c.computed}"
        if c.quote is not None:
            assert c.notebook == str(NB.relative_to(REPO))
            assert c.quote in text, f"quote of {c.id} not in the notebook: {c.quote!r}"
            assert first_number(c.quote) == c.quoted, f"first number of {c.quote!r} is not {c.quoted}"


@pytest.mark.slow
def test_full_mode_claims_of_figures_3_and_7():
    """The Figure 3 and 7 numbers that only the full check recomputes (the slopes of the larger
    kernels, about a minute) hold and are the ones the notebook quotes."""
    from checks.cnn_lcn_notebook_check import _figure3_claims, _figure7_claims

    text = NB.read_text()
    fast = {c.id for c in _figure3_claims(False) + _figure7_claims(False)}
    full = _figure3_claims(True) + _figure7_claims(True)
    assert {c.id for c in full} - fast, "the full check adds no claim"
    for c in full:
        assert c.ok, f"claim {c.id} fails: quoted {c.quoted}, computed {c.computed}"
        if c.quote is not None:
            assert c.quote in text, f"quote of {c.id} not in the notebook: {c.quote!r}"
            assert first_number(c.quote) == c.quoted, f"first number of {c.quote!r} is not {c.quoted}"
