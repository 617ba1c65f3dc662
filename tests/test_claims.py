"""Every number the course quotes is recomputed by a check script and tied to its sentence.

Each ``checks/*_check.py`` exposes ``collect(full) -> list[Claim]``. A claim with a
``quote`` must find that exact text in its notebook source, and the first number of the
quote must be the claim's ``quoted`` value: change the prose and the check disagrees;
change the computation and the prose disagrees.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from checks.claims import first_number, table

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((REPO / "checks").glob("*_check.py"))


@pytest.fixture(scope="module", params=SCRIPTS, ids=[s.stem for s in SCRIPTS])
def claims(request):
    mod = importlib.import_module(f"checks.{request.param.stem}")
    return request.param, mod.collect(False)


@pytest.mark.slow
def test_all_claims_hold(claims):
    script, cs = claims
    assert cs, f"{script.name} checks nothing"
    bad = [c for c in cs if not c.ok]
    assert not bad, f"{script.name}: {len(bad)} claim(s) fail\n" + table(bad)


@pytest.mark.slow
def test_quoted_claims_appear_in_their_notebook(claims):
    script, cs = claims
    for c in cs:
        if c.quote is None:
            continue
        nb = REPO / c.notebook
        assert nb.exists(), f"[{c.id}] notebook {c.notebook} not found"
        text = nb.read_text()
        assert c.quote in text, f"[{c.id}] the notebook no longer says {c.quote!r}"
        assert first_number(c.quote) == pytest.approx(c.quoted, rel=1e-12, abs=1e-300), (
            f"[{c.id}] the sentence quotes {first_number(c.quote)}, the claim says {c.quoted}")


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_check_script_runs_as_a_script(script):
    p = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True,
                       cwd="/")
    assert p.returncode == 0 and "--json" in p.stdout, p.stderr
