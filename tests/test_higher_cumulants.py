"""Tests of checks/higher_cumulants.py: the exact helpers and the claims of §7.2."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from checks import higher_cumulants
from checks.claims import first_number
from checks.grading import higher_cumulants as grading

REPO = Path(__file__).resolve().parent.parent
SQ2PI = math.sqrt(2 * math.pi)


def test_bayes_accuracy_v_limits_and_value():
    assert grading.bayes_accuracy_v(1e-9) == pytest.approx(0.5, abs=1e-9)
    assert grading.bayes_accuracy_v(10.0) == pytest.approx(0.71482, abs=1e-5)
    acc = [grading.bayes_accuracy_v(b) for b in (0.5, 2.0, 10.0, 100.0)]
    assert all(x < y for x, y in zip(acc, acc[1:]))


def test_bayes_accuracy_v_against_monte_carlo():
    """The Bayes rule (predict +1 where the mixture density wins) applied to samples."""
    rng = np.random.default_rng(0)
    n, bv = 400_000, 10.0
    a, s = math.sqrt(bv / (1 + bv)), 1 / math.sqrt(1 + bv)
    y = rng.choice([-1, 1], n)
    t = np.where(y > 0, a * rng.choice([-1, 1], n) + s * rng.standard_normal(n),
                 rng.standard_normal(n))
    pdf = lambda x, m, sd: np.exp(-0.5 * ((x - m) / sd) ** 2) / sd
    pred = np.where(0.5 * (pdf(t, a, s) + pdf(t, -a, s)) > pdf(t, 0, 1), 1, -1)
    acc = np.mean(pred == y)
    assert abs(acc - grading.bayes_accuracy_v(bv)) < 5 * math.sqrt(0.25 / n)


def test_bayes_lines_means_only_and_order():
    m, two, three = higher_cumulants.bayes_lines(n=801)
    assert m == pytest.approx(0.6914625, abs=1e-7)
    assert two == pytest.approx(0.7680232, abs=1e-6)  # the page printed 0.767
    assert three == pytest.approx(0.81936, abs=2e-5)
    assert m < two < three


def test_max_over_u_matches_numerical_integral():
    A, B, bu = 0.3, 0.7, 5.0
    x = np.linspace(-40, 40, 400_001)
    ru = math.sqrt(1 + bu)
    num = np.trapezoid(np.maximum(A * np.exp(-x**2 / 2), B * np.exp(-x**2 / (2 * ru**2)) / ru), x) / SQ2PI
    assert float(higher_cumulants._max_over_u(A, B, bu)) == pytest.approx(num, abs=1e-8)


@pytest.mark.parametrize("corr", [False, True])
def test_fitted_coefficients_match_hermite_formulas(corr):
    c20, c11, c04 = grading.fitted_coefficients(5.0, 10.0, corr)
    c = math.sqrt(2 / math.pi) * math.sqrt(50 / 11) if corr else 0.0
    assert c20 == pytest.approx(5 / (4 * SQ2PI), abs=2e-6)
    assert c11 == pytest.approx(c / (2 * SQ2PI), abs=2e-6)
    assert c04 == pytest.approx((200 / 121) / (48 * SQ2PI), abs=2e-8)


def test_fitted_coefficients_other_strengths():
    c20, c11, c04 = grading.fitted_coefficients(2.0, 3.0, True)
    assert c20 == pytest.approx(2 / (4 * SQ2PI), abs=2e-6)
    assert c11 == pytest.approx(math.sqrt(2 / math.pi) * math.sqrt(6 / 4) / (2 * SQ2PI), abs=2e-6)
    assert c04 == pytest.approx((2 * 9 / 16) / (48 * SQ2PI), abs=2e-8)


@pytest.mark.slow
def test_chain_slopes_are_in_the_band():
    s = higher_cumulants.chain_slopes(200)
    for k, law in zip((1, 2, 3), (1.0, 1.58, 2.29)):
        assert abs(s[k] - law) < 0.45


@pytest.mark.slow
def test_all_claims_hold_and_quotes_exist():
    src = (REPO / higher_cumulants.NB).read_text()
    claims = higher_cumulants.claims(full=False)
    bad = [c.id for c in claims if not c.ok]
    assert not bad, bad
    missing = [c.id for c in claims if c.quote is not None and c.quote not in src]
    assert not missing, missing
    wrong = [c.id for c in claims if c.quote is not None
             and first_number(c.quote) != pytest.approx(c.quoted)]
    assert not wrong, wrong


def test_reference_escape_times_is_the_notebook_solution():
    """The function the claims run is the notebook's own solution (seeded, reproducible) and
    follows the law of the exact overlap chain (two-sample KS, level 1e-4)."""
    from scipy import stats

    from td_lib import escape

    f = higher_cumulants.reference_escape_times()
    src = (REPO / higher_cumulants.NB).read_text()
    assert f.__name__ == "escape_times" and "def escape_times(" in src
    a = f(2, 16, 1 / math.log(16), runs=200, t_max=10**5, seed=3)
    assert np.array_equal(a, f(2, 16, 1 / math.log(16), runs=200, t_max=10**5, seed=3))
    ref = escape.reduced_escape_times(2, 16, delta=1 / math.log(16), runs=5000, t_max=10**5, rng=4)
    assert stats.ks_2samp(a, ref).pvalue > 1e-4



# ------------------------------------------------- test_ex72A_bayes: the stated time budget
FIXTURES = REPO / "checks/fixtures/td2_7_learned_first/td2_7_2_higher_cumulants/ex72A_kappa4"


def _bayes_test_cell() -> str:
    from tools import nbcore

    nb = nbcore.read_source(REPO / higher_cumulants.NB)  # baked regions expanded
    return next(c.source for c in nb.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == "test_ex72A_bayes")


def _visible(cell: str) -> str:
    return cell.split("### BEGIN HIDDEN TESTS")[0]


def test_bayes_cell_makes_the_stated_number_of_calls():
    """The statement promises 8 calls in all (1 visible, 7 hidden) and 5 s per call."""
    calls = []
    # computed outside the graded call: the test cell switches the library's counterparts off
    ref = {b: grading.bayes_accuracy_v(b) for b in (10.0, 1e-9, 0.0, 0.2, 1.0, 3.0, 30.0, 200.0)}

    def counted(beta_v):
        calls.append(beta_v)
        return ref[beta_v]

    exec(_bayes_test_cell(), {"bayes_accuracy_v_only": counted})
    assert len(calls) == 8
    src = (REPO / higher_cumulants.NB).read_text()
    assert "at most 5 s per call. The\n#    tests call it 8 times in all" in src
    assert "budget is 5 s per call" in _visible(_bayes_test_cell())


def test_bayes_visible_test_stops_a_correct_answer_over_the_budget():
    """A correct but slow answer fails at home, in the visible test, with the budget message."""
    import time

    ref = grading.bayes_accuracy_v(10.0)

    def slow(beta_v):
        time.sleep(5.3)
        return ref

    with pytest.raises(AssertionError, match="budget is 5 s per call"):
        exec(_visible(_bayes_test_cell()), {"bayes_accuracy_v_only": slow})


@pytest.mark.slow
def test_bayes_visible_test_stops_the_scalar_scan_fixture():
    """The over-budget fixture (root-finding on a fine grid, densities one point at a time, then
    the normal CDFs: correct, ~10 s per call) fails visibly at home with the budget message."""
    ns: dict = {}
    exec((FIXTURES / "wrong_bayes_over_the_time_budget.py").read_text(), ns)  # header imports + the cell
    with pytest.raises(AssertionError, match="budget is 5 s per call"):
        exec(_visible(_bayes_test_cell()), {"bayes_accuracy_v_only": ns["bayes_accuracy_v_only"]})
