"""Claim records and the command-line report shared by every check script.

A :class:`Claim` pairs a number the course quotes with the value recomputed by code:

* ``quoted`` is the number exactly as the notebook prose prints it (in the prose's units:
  ``69.1`` for "69.1 %");
* ``computed`` is what the check computed now;
* ``tol`` is the absolute tolerance on ``|computed - quoted|`` (state *why* in ``text`` or
  ``note``: rounding of the quoted digits, a Monte Carlo standard error, ...);
* ``notebook`` and ``quote`` locate the sentence: ``quote`` must be an exact substring of
  the notebook source ``notebook`` (path relative to the repository root), and the first
  number in ``quote`` must equal ``quoted``. ``tests/test_claims.py`` enforces both, so the
  prose and the computation cannot drift apart. Claims that no sentence quotes (internal
  identities) leave both ``None``.
* ``note`` records a correction of the source ("the original course notes print 0.0009; exact value
  0.000895") or other context.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

@dataclass
class Claim:
    id: str
    text: str
    quoted: float | None
    computed: float
    tol: float
    notebook: str | None = None
    quote: str | None = None
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        if self.computed is None or not math.isfinite(float(self.computed)):
            return False
        if self.quoted is None:  # an identity whose "quoted" value is 0 by construction
            return abs(float(self.computed)) <= self.tol
        return abs(float(self.computed) - float(self.quoted)) <= self.tol

    def record(self) -> dict:
        d = asdict(self)
        d["ok"] = self.ok
        d["computed"] = float(self.computed) if self.computed is not None else None
        return d


def first_number(text: str) -> float:
    """The first number written in ``text`` ("69.1 %" -> 69.1, "1.2e-4" -> 1.2e-4,
    "−1.282 × 10^-4" -> -1.282e-4)."""
    t = text.replace("−", "-").replace("\u2009", "").replace("\u202f", "")
    m = re.search(r"[-+]?\d+(?:\.\d+)?(?:\s*(?:[eE]|×\s*10\^?\{?|\\times\s*10\^\{?)\s*[-+]?\d+)?", t)
    if not m:
        raise ValueError(f"no number in {text!r}")
    s = m.group(0)
    mant = re.match(r"[-+]?\d+(?:\.\d+)?", s).group(0)
    rest = s[len(mant):]
    exp = re.search(r"[-+]?\d+\s*$", rest) if rest.strip() else None
    return float(mant) * (10.0 ** int(exp.group(0)) if exp else 1.0)


def run(collect: Callable[[bool], Iterable[Claim]], description: str,
        argv: list[str] | None = None) -> int:
    """Command-line entry point: ``--json`` for records, ``--full`` for the long version."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--json", action="store_true", help="print the claims as JSON records")
    p.add_argument("--full", action="store_true", help="run the long (non-CI) version")
    args = p.parse_args(argv)
    claims = list(collect(args.full))
    if args.json:
        print(json.dumps([c.record() for c in claims], indent=1, default=float))
    else:
        print(table(claims))
    bad = [c for c in claims if not c.ok]
    if not args.json:
        print(f"\n{len(claims) - len(bad)} passed, {len(bad)} failed")
    return 1 if bad else 0


def _fmt(v) -> str:
    if v is None:
        return "-"
    v = float(v)
    return f"{v:.6g}" if (v == 0 or 1e-3 <= abs(v) < 1e5) else f"{v:.4e}"


def table(claims: Iterable[Claim]) -> str:
    rows = [("claim", "quoted", "computed", "tol", "verdict")]
    for c in claims:
        rows.append((f"{c.id}: {c.text}"[:78], _fmt(c.quoted), _fmt(c.computed), _fmt(c.tol),
                     "ok" if c.ok else "FAIL"))
    w = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["  ".join(r[i].ljust(w[i]) if i == 0 else r[i].rjust(w[i]) for i in range(5))
             for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    notes = [f"  [{c.id}] {c.note}" for c in claims if c.note]
    if notes:
        lines += ["", "notes:"] + notes
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run one of the *_check.py scripts instead")
