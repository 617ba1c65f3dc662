"""Tests of checks/teacher_nodes.py: the §7.4 notebook's quoted numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks import teacher_nodes
from checks.claims import first_number

REPO = Path(__file__).resolve().parent.parent


def _check_located(claims):
    src = (REPO / teacher_nodes.NB).read_text(encoding="utf-8")
    for c in claims:
        if c.quote is None:
            assert c.quoted is None, f"{c.id}: a quoted number needs a quote"
            continue
        assert c.notebook == teacher_nodes.NB
        assert c.quote in src, f"{c.id}: quote {c.quote!r} not in the notebook"
        assert first_number(c.quote) == pytest.approx(c.quoted, abs=1e-12), (
            f"{c.id}: first number of {c.quote!r} is not {c.quoted}")


def test_deterministic_claims_hold_and_are_located():
    cl = teacher_nodes.deterministic_claims(full=False)
    assert len(cl) >= 6
    bad = [(c.id, c.quoted, c.computed) for c in cl if not c.ok]
    assert not bad, bad
    _check_located(cl)
    assert len({c.id for c in cl}) == len(cl)
    # sensitivity: a quoted number off by more than its tolerance fails
    for c in cl:
        if c.quoted is not None:
            c.quoted = c.computed + 1.01 * c.tol + 1e-9 * max(1.0, abs(c.computed))
            assert not c.ok, c.id


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_all_claims_including_seeded_runs():
    cl = teacher_nodes.claims(full=False)
    bad = [(c.id, c.quoted, c.computed) for c in cl if not c.ok]
    assert not bad, bad
    _check_located(cl)
    assert len({c.id for c in cl}) == len(cl)


def test_eq10_claims_hold_and_are_located():
    """Demo 7.4.5 (seeded Monte Carlo, a few seconds): eq. 10's ‖w_k‖ factor is absent."""
    cl = teacher_nodes.eq10_claims()
    bad = [(c.id, c.quoted, c.computed) for c in cl if not c.ok]
    assert not bad, bad
    _check_located(cl)
    by_id = {c.id: c for c in cl}
    # the measured slope is many standard errors from eq. 10's prediction of 1
    slope, se = by_id["lf74_eq10_slope"].computed, by_id["lf74_eq10_slope_se"].computed
    assert abs(slope - 1.0) > 50 * se


def test_deep_quotes_are_in_the_notebook():
    """The deep run is recomputed only in full mode; its quotes are tied to the prose always."""
    src = (REPO / teacher_nodes.NB).read_text(encoding="utf-8")
    assert len(teacher_nodes.DEEP_QUOTES) >= 10
    for id_, (quoted, quote) in teacher_nodes.DEEP_QUOTES.items():
        assert quote in src, f"{id_}: quote {quote!r} not in the notebook"
        assert src.count(quote) == 1, f"{id_}: quote {quote!r} is ambiguous"
        assert first_number(quote) == pytest.approx(quoted, abs=1e-12), (
            f"{id_}: first number of {quote!r} is not {quoted}")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_deep_claims_recomputed():
    cl = teacher_nodes.deep_claims()
    bad = [(c.id, c.quoted, c.computed) for c in cl if not c.ok]
    assert not bad, bad
    _check_located(cl)
    quoted_ids = {c.id.removeprefix("lf74_") for c in cl if c.quote is not None}
    assert quoted_ids == set(teacher_nodes.DEEP_QUOTES)
