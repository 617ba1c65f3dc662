"""Tests of checks/lf_7_3.py and of the §7.3 notebook's autograder cells.

* every claim of §7.3 holds, and each quoted claim points at an exact substring of the notebook
  whose first number is the quoted value;
* the 7.3.C test cells accept any correct implementation (cos_coef: quadrature or FFT;
  basri: the closed form, however written) and reject plausible wrong ones (z_0 = pi, a
  missing 1/pi, a too coarse FFT, odd l not zeroed, a quadrature posing as the closed form);
  the 7.3.A/B test cells reject the fixture's wrong answers.
"""

from __future__ import annotations

import jupytext
import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import gammaln, iv, ive

from checks import lf_7_3
from checks.claims import REPO, first_number
from td_lib import basri, kernels

SRC = (REPO / lf_7_3.NB).read_text()


def _check(claims):
    for c in claims:
        assert c.ok, f"{c.id}: quoted {c.quoted}, computed {c.computed}, tol {c.tol}"
        if c.quote is not None:
            assert c.quote in SRC, f"{c.id}: quote {c.quote!r} not in the notebook"
            assert first_number(c.quote) == pytest.approx(c.quoted, abs=0, rel=1e-12), c.id


def test_spectral_and_monte_carlo_claims():
    _check(lf_7_3.spectral_claims() + lf_7_3.monte_carlo_claims(False))


@pytest.mark.slow
def test_flow_claims():  # ~5 s of CPU (a 1024 x 1024 eigendecomposition)
    _check(lf_7_3.flow_claims())


def test_demo_claim_quotes_exist():
    # the quotes of demo 7.3.D's claims, without the 2000-step run: feed a tiny run
    tiny = basri.train_basri(lf_7_3.FREQS, scales=(1.0, 10.0), n_train=32, pairs=10, steps=3,
                             show_progress=False)
    quoted = [c for c in lf_7_3.demo_claims(tiny) if c.quote is not None]
    assert len(quoted) >= 12
    for c in quoted:
        assert c.quote in SRC, f"{c.id}: quote {c.quote!r} not in the notebook"
        assert first_number(c.quote) == pytest.approx(c.quoted, abs=0, rel=1e-12), c.id


@pytest.mark.slow
def test_demo_claims():
    _check(lf_7_3.demo_claims())


# ----------------------------------------------------------------- autograder test cells
def _cells() -> list:
    return jupytext.read(REPO / lf_7_3.NB).cells


CELLS = {c.metadata["nbgrader"]["grade_id"]: c.source for c in _cells()
         if "nbgrader" in c.metadata}
K_SETUP = next(c.source for c in _cells() if c.source.startswith("K_nobias ="))


def _run_test_cell(test_id: str, definitions: dict) -> None:
    ns = {"np": np, "quad": quad, "ive": ive, "kernels": kernels, **definitions}
    exec(K_SETUP, ns)
    exec(CELLS[test_id], ns)


def _fft_cos_coef(n):
    """a_l from one FFT of F on n points of [-pi, pi) (the circulant-eigenvalue route)."""
    def cos_coef(F, l):
        t = -np.pi + 2 * np.pi * np.arange(n) / n
        c = (-1) ** l * np.fft.rfft(F(t))[l].real / n
        return c if l == 0 else 2 * c
    return cos_coef


def _quad_cos_coef(z0, zl):
    def cos_coef(F, l):
        z = z0 if l == 0 else zl
        return quad(lambda t: F(t) * np.cos(l * t), -np.pi, np.pi, points=[0], limit=200)[0] / z
    return cos_coef


def _closed_form_basri(l):
    """Basri et al.'s closed form, written out (a student's answer may not call the library's
    ``kernels.basri_coefficients``: the test cell switches it off while it grades)."""
    if l == 0:
        return 1 / np.pi**2
    if l == 1:
        return 0.25
    return 2 * (l * l + 1) / (np.pi**2 * (l * l - 1) ** 2) if l % 2 == 0 else 0.0


def test_closed_form_here_is_the_library_one():
    ells = np.arange(0, 40)
    np.testing.assert_allclose([_closed_form_basri(int(l)) for l in ells], kernels.basri_coefficients(ells),
                               rtol=1e-15, atol=0)


@pytest.mark.parametrize("impl", [_quad_cos_coef(2 * np.pi, np.pi), _fft_cos_coef(4096),
                                  _fft_cos_coef(1 << 14)])
def test_cos_coef_cell_accepts_correct_implementations(impl):
    _run_test_cell("test_ex73C_cos_coef", {"cos_coef": impl})


@pytest.mark.parametrize("impl", [_quad_cos_coef(np.pi, np.pi),          # z_0 = pi
                                  _quad_cos_coef(2.0, 1.0),              # missing 1/pi
                                  _quad_cos_coef(2 * np.pi, 2 * np.pi),  # z_l = 2 pi
                                  _fft_cos_coef(128)])                   # FFT far too coarse
def test_cos_coef_cell_rejects_wrong_implementations(impl):
    with pytest.raises(AssertionError):
        _run_test_cell("test_ex73C_cos_coef", {"cos_coef": impl})


def _closed_form_basri_rational(l):
    """The same closed form written another way (exact rationals times 1/pi^2)."""
    from fractions import Fraction

    if l in (0, 1):
        return [1 / np.pi**2, 0.25][l]
    return float(Fraction(2 * (l * l + 1), (l * l - 1) ** 2)) / np.pi**2 if l % 2 == 0 else 0.0


def test_basri_cell_accepts_closed_forms():
    _run_test_cell("test_ex73C_basri", {"basri": _closed_form_basri})
    _run_test_cell("test_ex73C_basri", {"basri": _closed_form_basri_rational})


def test_basri_cell_rejects_a_quadrature_posing_as_the_closed_form():
    # The exercise asks for the closed form; a numerical integral is off at large l
    # (a_1001 = 0 exactly, quadrature gives 4e-4).
    with pytest.raises(AssertionError, match="closed form is exact at every l"):
        _run_test_cell("test_ex73C_basri", {"basri": lambda l: _quad_cos_coef(2 * np.pi, np.pi)(
            kernels.relu_ntk_nobias, l)})


@pytest.mark.parametrize("impl", [
    lambda l: 2 * (l * l + 1) / (np.pi**2 * (l * l - 1) ** 2) if l >= 2 else _closed_form_basri(l),
    lambda l: _closed_form_basri(l) / (2 if l >= 1 else 1),   # eigenvalue instead of a_l
    lambda l: 2 * (l * l + 1) / (np.pi * (l * l - 1) ** 2) if l >= 2 and l % 2 == 0
    else _closed_form_basri(l),                                # pi instead of pi^2
])
def test_basri_cell_rejects_wrong_closed_forms(impl):
    with pytest.raises(AssertionError):
        _run_test_cell("test_ex73C_basri", {"basri": impl})


def _vm(ell, kappa):
    return ive(ell, kappa)


def _vm_large(ell, kappa):
    ell = np.asarray(ell, dtype=float)
    return np.exp(-kappa + ell * np.log(kappa / 2) - gammaln(ell + 1))


GOOD_B = {"vm_eigenvalue": _vm, "vm_eigenvalue_large_l": _vm_large,
          "t_ratio_von_mises": lambda k, s, f: ive(f, k) / ive(s, k),
          "t_ratio_power_law": lambda s, f, p=2.0: (s / f) ** p}


def test_exercise_B_cells():
    _run_test_cell("test_ex73B_eigenvalues", GOOD_B)
    _run_test_cell("test_ex73B_ratios", GOOD_B)
    for wrong in ({"vm_eigenvalue": iv},                                   # no exp(-kappa)
                  {"vm_eigenvalue_large_l": lambda l, k: _vm_large(l, k) * np.exp(k)}):
        with pytest.raises(AssertionError):
            _run_test_cell("test_ex73B_eigenvalues", {**GOOD_B, **wrong})
    with pytest.raises(AssertionError):   # inverted ratio
        _run_test_cell("test_ex73B_ratios", {**GOOD_B, "t_ratio_von_mises":
                                             lambda k, s, f: ive(s, k) / ive(f, k)})


def test_exercise_A_cell():
    good = {"gd_step_bound": lambda lam: 2 / np.max(lam),
            "gd_efold_steps": lambda eta, lam: -1 / np.log(np.abs(1 - eta * np.asarray(lam)))}
    _run_test_cell("test_ex73A_gd_steps", good)
    for wrong in ({"gd_step_bound": lambda lam: 1 / np.max(lam)},
                  {"gd_efold_steps": lambda eta, lam: 1 / (eta * np.asarray(lam))},
                  {"gd_efold_steps": lambda eta, lam: -1 / np.log(1 - eta * np.asarray(lam))}):
        with pytest.raises((AssertionError, ValueError, FloatingPointError)):
            with np.errstate(invalid="raise"):
                _run_test_cell("test_ex73A_gd_steps", {**good, **wrong})
