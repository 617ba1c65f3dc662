"""No edition of td_lib states an exercise's answer, and a delegation fails at home as it fails
when graded (tools/build/student_edition.py, td_lib/own_work.py).

The answer signatures come from the course's solutions (``student_edition.answer_signatures``);
the check runs on the handout's edition (what students, the hub and the test runner use) and on
the grading edition of a notebook; ``-m slow`` runs it on every notebook's grading edition.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tools.build import student_edition as se

REPO = Path(__file__).resolve().parent.parent
LESSON1 = "cnn_lcn_1_exact_odes"


@pytest.fixture(scope="module")
def signatures():
    return se.answer_signatures()


@pytest.fixture(scope="module")
def handout(tmp_path_factory):
    return se.build(tmp_path_factory.mktemp("handout"), exercises=se.handout_exercises())


def _keys(signatures, exercise, kind):
    return {s.key for s in signatures if s.exercise == exercise and s.kind == kind}


# ----------------------------------------------------------------------------- the signatures
def test_signatures_come_from_the_solutions(signatures):
    """The method, formula and bound that the issue's examples give away are found from the
    solutions themselves."""
    assert "ive" in _keys(signatures, "ex73B_eigenvalues", "method")
    assert {"eta<2/max(lam)", "etamax(lam)<2"} <= _keys(signatures, "ex73A_q3_answer", "bound")
    assert "-2beta_v^2/(1+beta_v)^2" in _keys(signatures, "ex72A_kappa4", "formula")
    assert "sqrt(2/pi)sqrt(beta_ubeta_v/(1+beta_v))" in _keys(signatures, "ex72A_cross_term", "formula")


def test_what_the_statement_prints_or_calls_is_no_signature(signatures):
    # 7.3.B's statement prints k_l = e^{-kappa} I_l(kappa) ("show that"); lesson 1 defines
    # g(z) = erf(z/sqrt 2) in a code cell; 7.3.A's statement prints the bound eta <= 1/max(lam).
    assert "exp(-kappa)I_l(kappa)" not in _keys(signatures, "ex73B_eigenvalues", "formula")
    assert "erf" not in {s.key for s in signatures if s.exercise.startswith("exB") and s.kind == "method"}
    assert not any("1/max(lam)" in k for k in _keys(signatures, "ex73A_q3_answer", "bound"))


@pytest.mark.parametrize("text", [
    "Eigenvalues of the kernel (7.3.B.2).", "see §7.3.C", "Exercise 7.2.C asks", "exercise A's integral",
    "Exercises 7.2.B/7.2.C", "the 7.1b.A derivation", "eqs 7.3.A.1–3", "grade id ex73A_gd_steps",
    "test_exA_j2_erf"])
def test_names_exercise_catches_every_form(text):
    assert se.NAMES_EXERCISE.search(text), text


@pytest.mark.parametrize("text", [
    "original course notes §7.3", "Mori et al., eq. 45", "version 2.1.0", "§7.1b demos",
    "Tian (2020), §7", "an exercise of the notebook", "7.3 Spectral bias"])
def test_names_exercise_spares_sections_and_equations(text):
    assert not se.NAMES_EXERCISE.search(text), text


def test_the_check_flags_planted_answers_and_exercise_numbers(tmp_path, signatures):
    """A planted docstring with 7.3.B's method and formula, a comment with 7.3.A's bound, a
    message with that bound's negation and a "(7.3.A.3)" line: each is found, a clean line is not."""
    lib = tmp_path / "td_lib"
    lib.mkdir()
    (lib / "planted.py").write_text(
        '"""Kernel tools.\n\n'
        "The eigenvalues are ``exp(-kappa) * ive(l, kappa)``, via :func:`scipy.special.ive`.\n"
        "The fourth cumulant is ``-2 beta_v^2 / (1 + beta_v)^2``.\n"
        "Gradient descent with step eta (7.3.A.3).\n"
        'A clean line about the von Mises kernel exp(kappa (cos phi - 1)).\n"""\n\n\n'
        "def f(eta, lam):\n"
        "    # stable when eta * max(lam) stays below... < 2\n"
        "    if eta * max(lam) >= 2:\n"
        '        raise ValueError(f"eta * max(lam) = {eta * max(lam)} >= 2")\n'
        "    return eta\n")
    found = se.answers_in_text(lib, signatures)
    lines = {int(re.match(r"td_lib/planted\.py:(\d+) ", p).group(1)) for p in found}
    assert lines == {3, 4, 5, 11, 13}, found
    assert any(p.startswith("td_lib/planted.py:5 names an exercise") for p in found), found
    assert any("states the method 'scipy.special.ive' of ex73B_eigenvalues" in p for p in found), found
    assert any(p.startswith("td_lib/planted.py:13 states the bound") for p in found), found


def test_every_allowed_exception_is_needed(signatures):
    """An entry of student_edition.ALLOWED names a signature the solutions give and a file of
    td_lib whose text matches it: a stale entry is an error."""
    for (exercise, key, file), why in se.ALLOWED.items():
        assert len(why) > 40, f"{exercise}/{key}: say why {file} states no answer"
        sig = [s for s in signatures if (s.exercise, s.key) == (exercise, key)]
        assert sig, f"ALLOWED: {exercise} has no signature {key!r}"
        lines = se._text_lines((REPO / file).read_text())
        assert any(sig[0].found_in(text) for _, text in lines), f"ALLOWED: {file} never states {key!r}"


def test_the_scrub_rewrites_parentheses_and_drops_lines():
    src = ('"""Eigenvalues ``k_l`` (7.3.B.2, via the Bessel function).\n\n'
           "Seed §7.3, Exercise 7.3.C.3 and more.\nGradient descent (7.3.A.3): the filter.\n"
           'Kept line.\n"""\n'
           "x = 1  # as exercise B says\n"
           'MSG = "see (7.3.A) for the bound"\n')
    text = se._scrub(src)
    assert not se.NAMES_EXERCISE.search(text), text
    assert '"""Eigenvalues ``k_l``.' in text and "Gradient descent: the filter." in text
    assert "Kept line." in text and "Seed §7.3" not in text and "x = 1\n" in text
    compile(text, "<edition>", "exec")


# ----------------------------------------------------------------------------- the editions
def test_the_handout_edition_states_no_answer(handout, signatures):
    """The handout's edition (also the hub's and the test runner's): cut names absent, the home
    registry in place, docstring examples run, no docstring, comment or message names an exercise
    or states an answer."""
    assert se.check(handout, exercises=se.handout_exercises(), signatures=signatures) == []


def test_a_grading_edition_states_no_answer_of_its_exercises(tmp_path, signatures):
    answers = se.notebook_exercises()[LESSON1]
    edition = se.build(tmp_path, exercises=answers, keep_general=False)
    assert se.check(edition, exercises=answers, keep_general=False,
                    signatures=[s for s in signatures if s.exercise in answers]) == []


@pytest.mark.slow
@pytest.mark.parametrize("notebook", sorted(se.notebook_exercises()))
def test_every_grading_edition_states_no_answer(notebook):
    """Through the grader's own cache (``cached`` runs the same check and raises on a problem), so
    the editions the grading tests build are checked once, not twice."""
    answers = se.notebook_exercises()[notebook]
    edition = se.cached(answers, keep_general=False)
    assert (edition / "__init__.py").exists() and (edition.parent / "ok").exists()


# ----------------------------------------------------------------------------- one verdict
def test_the_home_registry_is_what_grading_lacks():
    """Per exercise: the names the handout keeps and its notebook's grading edition cuts."""
    reg = se.home_registry()
    assert {"td_lib.cnn_lcn.integrals.J2", "td_lib.cnn_lcn.integrals.j2_entries", "td_lib.cnn_lcn.network.sgd_step",
            "td_lib.cnn_lcn.network.Networks.step"} <= set(reg["exA_j2_erf"])
    assert "td_lib.core.gaussian.arccos_kernel" in reg["ex74A_closed_form"]  # a delegate cut (DELEGATE_CUTS)
    assert "td_lib.cnn_lcn.model.generalisation_error" in reg["exE_initial_errors"]
    handout_cuts = set(se.cut_names(se.handout_exercises()))
    for ex, names in reg.items():
        nb = next(nb for nb, answers in se.notebook_exercises().items() if ex in answers)
        grading_cuts = set(se.cut_names(se.notebook_exercises()[nb], keep_general=False))
        assert set(names) == grading_cuts - handout_cuts, ex
    assert "ex72A_kappa4" not in reg  # its notebook's grading edition cuts nothing the handout keeps


_HOME = r'''
import json, sys
import numpy as np
import td_lib
from td_lib import own_work
from td_lib.own_work import DelegationError
assert td_lib.__file__.startswith(sys.argv[1]), td_lib.__file__
out = {}
for ex, names in own_work.COUNTERPARTS.items():
    for dotted in names:
        lib = own_work._resolve(dotted)
        def my_answer(*args, **kwargs):
            return lib(*args, **kwargs)
        try:
            own_work.own_work(my_answer, ex)()
        except DelegationError as e:
            out[ex + " " + dotted] = str(e)
        else:
            out[ex + " " + dotted] = "no error"
from td_lib.cnn_lcn import integrals
def j2_erf(C):
    return integrals.J2(C)
def honest(C):
    C = np.asarray(C, dtype=float)
    return 2 / np.pi / np.sqrt((1 + C[..., 0, 0]) * (1 + C[..., 1, 1]) - C[..., 0, 1] ** 2)
try:
    own_work.own_work(j2_erf, "exA_j2_erf")(np.eye(2))
    out["j2_erf"] = "no error"
except DelegationError as e:
    out["j2_erf"] = str(e)
out["honest"] = float(own_work.own_work(honest, "exA_j2_erf")(np.eye(2)))
out["demo"] = float(j2_erf(np.eye(2)))  # outside the graded call the tool works
out["other exercise"] = float(own_work.own_work(j2_erf, "exD_alpha_spec")(np.eye(2)))
print(json.dumps(out))
'''


def test_a_delegation_fails_at_home_as_when_graded(handout):
    """In the handout's edition, a function of an exercise that calls a tool its grading edition
    lacks raises DelegationError naming both; honest code and the demos run."""
    p = subprocess.run([sys.executable, "-s", "-c", _HOME, str(handout.parent)], capture_output=True, text=True,
                       cwd=str(handout.parent), env=se.edition_env(handout), timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    got = json.loads(p.stdout)
    reg = se.home_registry()
    assert len([k for k in got if " " in k and k != "other exercise"]) == sum(map(len, reg.values()))
    for ex, names in reg.items():
        for dotted in names:
            msg = got[f"{ex} {dotted}"]
            assert msg.startswith(f"`my_answer` calls `{dotted}`, which is not there when your work is graded: "
                                  "write it yourself"), (ex, dotted, msg)
    assert got["j2_erf"].startswith("`j2_erf` calls `td_lib.cnn_lcn.integrals.J2`, which is not there when your "
                                    "work is graded: write it yourself"), got["j2_erf"]
    assert got["honest"] == pytest.approx(1 / 3.141592653589793, rel=1e-12)
    assert got["demo"] == pytest.approx(got["honest"], rel=1e-12)
    assert got["other exercise"] == pytest.approx(got["honest"], rel=1e-12)  # lesson 2 grades keep J2
