"""Recompute every number quoted in assignment ``td2_7_learned_first`` (§7.1–7.4).

Run ``python -m checks.td2_7_learned_first_check`` (or the file as a script: ``checks`` is
installed editable, so it imports from anywhere) for a table, ``--json`` for records,
``--full`` for the long version (more runs, larger sizes). Each section lives in its own
module ``checks/lf_<section>.py`` exposing ``claims(full: bool) -> list[Claim]``; this
script gathers them all.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

from checks.claims import Claim, run


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
