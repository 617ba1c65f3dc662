"""Tests of checks/early_time_linear.py: the §7.1b claims (Hu et al. 2020) hold and are the sentences of the notebook.

The two-layer network's claims (about 35 s) are checked by
``tests/test_early_linear.py::test_lf_7_1b_claims_hold_and_match_the_prose``; here the cheap CNN
claims (Prop. 4.1 kernel sweep, Walsh rates, constants) run in the fast suite, and the CNN
training demo's claims (``full=True`` only, about 15 s) in the slow one.
"""

from __future__ import annotations

import pytest

from checks import early_time_linear
from checks.claims import REPO, first_number


def _assert_claims(cs):
    bad = [c for c in cs if not c.ok]
    assert not bad, "\n".join(f"{c.id}: quoted {c.quoted}, computed {c.computed}, tol {c.tol}" for c in bad)
    text = (REPO / early_time_linear.NB).read_text()
    for c in cs:
        if c.quote is None:
            continue
        assert c.quote in text, f"[{c.id}] the notebook no longer says {c.quote!r}"
        assert first_number(c.quote) == pytest.approx(c.quoted, rel=1e-12), c.id


def test_cnn_claims_hold_and_match_the_prose():  # about 3 s: the notebook's kernel sweep
    cs = early_time_linear.cnn_claims()
    assert len(cs) >= 12
    _assert_claims(cs)


def test_claim_ids_are_unique_and_the_cnn_demo_only_runs_in_full_mode(monkeypatch):
    calls = []
    monkeypatch.setattr(early_time_linear, "cnn_demo_claims", lambda: calls.append(1) or [])
    for name in ("identity_claims", "lemma_claims", "demo_claims", "time_scale_claims", "cnn_claims"):
        monkeypatch.setattr(early_time_linear, name, lambda name=name: [])
    early_time_linear.claims(False)
    assert calls == []
    early_time_linear.claims(True)
    assert calls == [1]
    ids = [line.split('"')[1] for line in (REPO / "checks" / "early_time_linear.py").read_text().splitlines()
           if line.strip().startswith('_c("')]
    assert len(ids) == len(set(ids)), "two claims share an id"


@pytest.mark.slow
def test_cnn_demo_claims_hold_and_match_the_prose():  # about 15 s: the notebook's CNN run
    cs = early_time_linear.cnn_demo_claims()
    assert len(cs) >= 8
    _assert_claims(cs)
