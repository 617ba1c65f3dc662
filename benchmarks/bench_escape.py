"""Benchmark: the §7.2 escape-time study (Exercise 7.2.C) must run in < 20 s on 2 cores.

48 runs for each k = 1, 2, 3 and d = 16, 32, 64 with the study's step parameters. The notebook
runs the study on the student's ``escape_times``: timed here with the reference solution (read
from the notebook by checks.higher_cumulants.reference_escape_times), the vectorised d-dimensional
library simulator that replaces a missing one (td_lib.escape.single_index_escape_times, run
to completion: t_max = 10^6), and for comparison the exact overlap chain
(td_lib.escape.reduced_escape_times). Reports wall-clock and CPU time; on a shared machine the
CPU time is the fair measure (the load average is printed too).

    python benchmarks/bench_escape.py [--runs 48]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from checks.higher_cumulants import reference_escape_times
from td_lib import escape

BUDGET_S = 20.0


def _library(fn):
    """The library simulator with the exercise's signature ``(k, d, delta, runs=, t_max=, seed=)``."""
    return lambda k, d, delta, runs, t_max, seed: fn(k, d, delta=delta, runs=runs, t_max=t_max, rng=seed)


def study(fn, runs: int) -> dict:
    out = {}
    for k in (1, 2, 3):
        for d in (16, 32, 64):
            out[k, d] = fn(k, d, escape.STEPS[k](d), runs=runs, t_max=10**6,
                           seed=7200 + 100 * k + d)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=48)
    args = p.parse_args(argv)
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    ok = True
    for name, fn in [("reference solution", reference_escape_times()),
                     ("d-dimensional SGD", _library(escape.single_index_escape_times)),
                     ("exact overlap chain", _library(escape.reduced_escape_times))]:
        t0, c0 = time.perf_counter(), time.process_time()
        res = study(fn, args.runs)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        steps = int(sum(np.max(v) for v in res.values()))
        print(f"{name:22s}: wall {wall:6.2f} s, CPU {cpu:6.2f} s, {steps} sequential steps "
              f"(longest run per point, summed); budget {BUDGET_S:.0f} s: "
              f"{'ok' if cpu < BUDGET_S else 'OVER'}")
        for k in (1, 2, 3):
            med = [float(np.median(res[k, d])) for d in (16, 32, 64)]
            print(f"    k={k}: medians {med}, slope {escape.loglog_slope((16, 32, 64), med):.2f}")
        ok &= cpu < BUDGET_S
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
