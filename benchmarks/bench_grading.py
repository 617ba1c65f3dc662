"""Grading throughput: serial ``nbgrader autograde`` vs ``tools.grading.grade`` on 1 and 2 Dask workers.
A benchmark, not a test: it measures and prints, it never fails a build.

    .venv/bin/python benchmarks/bench_grading.py                       # N=2 copies, td2_7_learned_first
    .venv/bin/python benchmarks/bench_grading.py --copies 3 --students solutions,partial
    .venv/bin/python benchmarks/bench_grading.py --notebooks td2_7_1b_early_time_linear   # one notebook
    .venv/bin/python benchmarks/bench_grading.py --workers 1,2 --no-serial --project 300 --on 2,8,32

A scratch course under ``build/bench/grading/`` gets the fake students of the assignment
(``tools.build.pipeline.plan_students``; the loop student is left out: it measures the timeout),
each submitted ``--copies`` times under distinct ids. The same submissions are then graded
serially by ``nbgrader autograde`` and by ``tools.grading.grade`` (sandboxed) on a LocalCluster of 1
and of 2 workers, each from a fresh copy of the course. Printed: seconds per submission,
speed-up over serial, the per-notebook execution seconds the tasks report (kernel start
included) and a projection for a class of ``--project`` students on W workers,
``T(W) = n * s1 / (W * e)`` with s1 the measured seconds per submission on one worker and e
the measured parallel efficiency of 2 workers (capped at 1); a task grades as many notebooks of
a submission at once as ``make grade`` would (``--notebooks-at-once``), printed with each run.
Results also go to ``build/bench_grading.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

from tools import env
from tools.build import pipeline
from tools.grading import grade

REPO = env.REPO


def build(root: Path, assignment: str, notebooks: list[str] | None, students: list[str], copies: int) -> Path:
    """A scratch course with ``copies`` submissions of each fake student (ids ``<student>-<k>``)."""
    if root.exists():
        shutil.rmtree(root)
    root, plan = pipeline.scratch_course(root, assignment, notebooks, students=())
    full = pipeline.plan_students(assignment, root)
    plan.notebooks = {f"{s}-{k}": full.notebooks[s] for s in students for k in range(copies)}
    pipeline.submit(plan, assignment, root)
    return root


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--assignment", default="td2_7_learned_first")
    p.add_argument("--notebooks", help="comma-separated notebook stems (default: all of the assignment)")
    p.add_argument("--students", default="solutions,blank,partial", help="fake students to copy")
    p.add_argument("--copies", type=int, default=2)
    p.add_argument("--workers", default="1,2")
    p.add_argument("--no-serial", action="store_true")
    p.add_argument("--notebooks-at-once", type=int, help="notebooks of a submission a task grades at once "
                   "(default: make grade's, tools.grading.grade.default_at_once)")
    p.add_argument("--project", type=int, default=300, help="class size of the projection")
    p.add_argument("--on", default="1,2,8,32,100", help="worker counts of the projection")
    a = p.parse_args(argv)
    base = REPO / "build" / "bench" / "grading"
    nbs = a.notebooks.split(",") if a.notebooks else None
    pristine = build(base / "pristine", a.assignment, nbs, a.students.split(","), a.copies)
    n = len(grade.submissions(pristine, a.assignment))
    runs: dict[str, dict] = {}

    def fresh(name: str) -> Path:
        dst = base / name
        if dst.exists():
            shutil.rmtree(dst)
        shutil.copytree(pristine, dst, symlinks=True)
        return dst

    if not a.no_serial:
        course = fresh("serial")
        t0 = time.perf_counter()
        pipeline.autograde(a.assignment, course=course)
        runs["serial nbgrader"] = {"seconds": time.perf_counter() - t0, "workers": 1}
    for w in map(int, a.workers.split(",")):
        course = fresh(f"dask{w}")
        t0 = time.perf_counter()
        recs = grade.grade(a.assignment, course, workers=w, progress=False, echo=lambda m: None,
                           notebooks_at_once=a.notebooks_at_once)
        secs = time.perf_counter() - t0
        at_once = a.notebooks_at_once or grade.default_at_once(w)
        per_nb: dict[str, list[float]] = {}
        for r in recs.values():
            for nb, s in r.timing.items():
                per_nb.setdefault(nb, []).append(s)
        runs[f"tools.grading.grade W={w}"] = {"seconds": secs, "workers": w, "notebooks_at_once": at_once,
                                      "task_seconds": sorted(r.seconds or 0 for r in recs.values()),
                                      "notebook_exec_seconds": {k: sum(v) / len(v) for k, v in per_nb.items()},
                                      "cells": {s: r.cells for s, r in recs.items()}}
    ref = runs.get("serial nbgrader", next(iter(runs.values())))["seconds"]
    print(f"{n} submissions of {a.assignment} ({', '.join(nbs) if nbs else 'all notebooks'})")
    print(f"{'run':22s} {'total s':>8s} {'s/submission':>13s} {'speed-up':>9s} {'notebooks at once':>18s}")
    for name, r in runs.items():
        print(f"{name:22s} {r['seconds']:8.1f} {r['seconds'] / n:13.1f} {ref / r['seconds']:9.2f} "
              f"{r.get('notebooks_at_once', 1):18d}")
    for name, r in runs.items():
        for nb, s in (r.get("notebook_exec_seconds") or {}).items():
            cells = [c for per in r["cells"].values() for c in (per or {}).get(nb, [])]
            k = len(r["cells"]) or 1
            in_cells = sum(c[1] for c in cells) / k
            top = sorted(cells, key=lambda c: -c[1])[:3]
            print(f"  {name}: {nb} {s:.1f} s = cells {in_cells:.1f} s + kernel start/stop and probes "
                  f"{s - in_cells:.1f} s; slowest cells {', '.join(f'{c[0]} {c[1]:.1f}s' for c in top)}")
    d1, d2 = runs.get("tools.grading.grade W=1"), runs.get("tools.grading.grade W=2")
    if d1:
        s1 = d1["seconds"] / n
        eff = min(1.0, d1["seconds"] / (2 * d2["seconds"])) if d2 else 1.0
        print(f"projection, {a.project} students, {s1:.1f} s per submission on one worker, "
              f"parallel efficiency {eff:.2f} (measured with 2 workers):")
        for w in map(int, a.on.split(",")):
            t = a.project * s1 / (w * (eff if w > 1 else 1.0))
            print(f"  W={w:4d}: {t / 60:7.1f} min")
    out = REPO / "build" / "bench_grading.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"n": n, "assignment": a.assignment, "notebooks": nbs, "runs": runs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
