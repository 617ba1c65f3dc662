"""Recompute every number quoted in assignment ``td2_7_learned_first`` (§7.1–7.4).

Run ``python checks/td2_7_learned_first_check.py`` for a table, ``--json`` for records,
``--full`` for the long version (more runs, larger sizes). Each section lives in its own
module ``checks/lf_<section>.py`` exposing ``claims(full: bool) -> list[Claim]``; this
script gathers them all.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``checks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from checks.claims import Claim, run  # noqa: E402


def section_modules() -> list[str]:
    import checks

    return sorted(m.name for m in pkgutil.iter_modules(checks.__path__) if m.name.startswith("lf_"))


def collect(full: bool = False) -> list[Claim]:
    out: list[Claim] = []
    for name in section_modules():
        out.extend(importlib.import_module(f"checks.{name}").claims(full))
    return out


if __name__ == "__main__":
    sys.exit(run(collect, __doc__.splitlines()[0]))
