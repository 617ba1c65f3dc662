"""Recompute every number quoted in assignment ``td2_7_learned_first`` (§7.1–7.4).

Run ``python -m checks.td2_7_learned_first_check`` (or the file as a script: ``checks`` is
installed editable, so it imports from anywhere) for a table, ``--json`` for records,
``--full`` for the long version (more runs, larger sizes). Each section lives in its own
module ``checks/<section>.py`` (named after the idea of its notebook, listed in ``SECTIONS``)
exposing ``claims(full: bool) -> list[Claim]``; this script gathers them all.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from checks.claims import Claim, run

SECTIONS = ("two_moments", "early_time_linear", "higher_cumulants", "spectral_bias", "teacher_nodes")
"""The claim modules of the assignment, in the order of its notebooks (§7.1, 7.1b, 7.2, 7.3, 7.4)."""


def section_modules() -> list[str]:
    """The names of the section claim modules (``checks/<section>.py``); a module of ``checks``
    that defines ``claims`` and is not listed here is refused (it would otherwise check nothing)."""
    stray = [p.stem for p in sorted(Path(__file__).parent.glob("*.py"))
             if p.stem not in SECTIONS and "\ndef claims(" in p.read_text()]
    if stray:
        raise RuntimeError(f"claim modules not listed in SECTIONS: {stray}")
    return list(SECTIONS)


def collect(full: bool = False) -> list[Claim]:
    out: list[Claim] = []
    for name in section_modules():
        out.extend(importlib.import_module(f"checks.{name}").claims(full))
    return out


if __name__ == "__main__":
    sys.exit(run(collect, __doc__.splitlines()[0]))
