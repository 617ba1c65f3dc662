"""Course timings: each notebook (full and quick mode), the whole ``make``, one autograded
submission. A benchmark, not a test: it measures and prints, it never fails a build.

    .venv/bin/python benchmarks/bench_course.py                 # every notebook, full + quick
    .venv/bin/python benchmarks/bench_course.py --modes quick   # quick mode only
    .venv/bin/python benchmarks/bench_course.py --autograde     # + one submission autograded
    .venv/bin/python benchmarks/bench_course.py --make          # + the whole `make` (long)
    .venv/bin/python benchmarks/bench_course.py --no-notebooks --autograde

Notebooks run one at a time through ``python -m tools.build.nbtool run [--quick] <source>``
(a fresh kernel each); wall time includes interpreter and kernel start-up, "exec" is the
execution time nbtool reports, "cpu" the user+system time of the child processes (less
sensitive than wall time to other load on a shared machine). Autograding happens in a
scratch copy of the course under ``build/bench/`` (the real gradebook is never touched):
``generate_assignment``, then one student's submission (the solutions, every notebook of
the assignment) through ``nbgrader autograde``. Results: a table on stdout and
``build/bench_course.json``.

Targets (issue 2 and docs/AUTHORING.md): whole course <= 10 min on 2 cores; one
submission autograded <= 60 s; quick mode <= 20 s per notebook; full mode within the
section budget (7.1 <= 2 min, 7.2 <= 3 min, 7.3 <= 2 min, 7.4 <= 3 min, CNN/LCN <= 5 min).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = REPO / ".venv" / "bin" / "python"
BUILD = REPO / "build"
SOURCE = REPO / "course" / "source"

COURSE_TARGET_S = 600.0  # whole course, 2 cores
AUTOGRADE_TARGET_S = 60.0  # one submission
QUICK_TARGET_S = 20.0  # one notebook, quick mode
# Full-mode budget per notebook, by name prefix (docs/AUTHORING.md).
FULL_TARGETS_S = {"td2_7_1": 120.0, "td2_7_2": 180.0, "td2_7_3": 120.0, "td2_7_4": 180.0,
                  "cnn": 300.0}


@dataclass
class Row:
    """One measurement."""

    item: str
    mode: str
    wall_s: float | None
    target_s: float | None
    cpu_s: float | None = None
    exec_s: float | None = None
    status: str = "ok"
    detail: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        if self.status != "ok":
            return self.status
        if self.wall_s is None or self.target_s is None:
            return ""
        return "within target" if self.wall_s <= self.target_s else "OVER TARGET"


def full_target(stem: str) -> float | None:
    return next((t for prefix, t in FULL_TARGETS_S.items() if stem.startswith(prefix)), None)


def sources(only: list[str] | None = None) -> list[Path]:
    found = sorted(p for p in SOURCE.glob("*/*.py") if not p.name.startswith("_"))
    if only:
        found = [p for p in found if any(o in str(p) for o in only)]
    return found


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str], cwd: Path, timeout_s: float,
          env: dict[str, str] | None = None) -> tuple[float, float, int, str]:
    """Run ``cmd``; return (wall s, children CPU s, exit code, combined output)."""
    cpu0, t0 = _children_cpu(), time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout_s,
                           env=env)
        code, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as exc:
        code = -9
        out = f"timed out after {timeout_s:.0f} s\n{exc.stdout or ''}{exc.stderr or ''}"
    return time.perf_counter() - t0, _children_cpu() - cpu0, code, out


def bench_notebook(path: Path, quick: bool, timeout_s: float) -> Row:
    cmd = [str(PY), "-m", "tools.build.nbtool", "run", *(["--quick"] if quick else []), str(path)]
    wall, cpu, code, out = timed(cmd, REPO, timeout_s)
    m = re.search(r"(?:quick|full) run ([0-9.]+) s, (\d+) cell\(s\) with errors", out)
    row = Row(item=f"{path.parent.name}/{path.stem}", mode="quick" if quick else "full",
              wall_s=wall, cpu_s=cpu, exec_s=float(m.group(1)) if m else None,
              target_s=QUICK_TARGET_S if quick else full_target(path.stem),
              extra={"load1_after": round(os.getloadavg()[0], 2)})
    if code != 0:
        errors = m.group(2) if m else "?"
        row.status = "TIMEOUT" if code == -9 else f"exit {code} ({errors} error cells)"
        row.detail = out.strip()[-1500:]
    return row


def bench_make(clean: bool, timeout_s: float) -> list[Row]:
    rows = []
    if clean:
        wall, cpu, code, out = timed(["make", "clean"], REPO, timeout_s)
        rows.append(Row("make clean", "-", wall, None, cpu,
                        status="ok" if code == 0 else f"exit {code}", detail=out[-1500:]))
    wall, cpu, code, out = timed(["make"], REPO, timeout_s)
    rows.append(Row("make (whole course, warm venv)", "clean" if clean else "as is", wall,
                    COURSE_TARGET_S, cpu, status="ok" if code == 0 else
                    ("TIMEOUT" if code == -9 else f"exit {code}"),
                    detail="" if code == 0 else out.strip()[-3000:]))
    return rows


def scratch_course(dest: Path) -> Path:
    """A copy of ``course/`` without generated state (release, submissions, gradebook)."""
    skip = {"release", "submitted", "autograded", "feedback", "gradebook.db", ".ipynb_checkpoints"}
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(REPO / "course", dest,
                    ignore=lambda d, names: [n for n in names if n in skip or n.endswith(".csv")])
    return dest


def _score(course: Path, assignment: str, student: str) -> tuple[float, float]:
    """Autograded (code) score and its maximum, read from the scratch gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        sub = gb.find_submission(assignment, student)
        return float(sub.code_score), float(sub.max_code_score)


def bench_autograde(assignments: list[str]) -> list[Row]:
    """Release each assignment in a scratch course, submit its solutions as one student,
    and time ``nbgrader autograde`` of that one submission."""
    import nbformat

    from tools import nbcore
    from tools.build import fake_students, pipeline

    rows = []
    course = scratch_course(BUILD / "bench" / "course")
    for assignment in assignments:
        item = f"{assignment}: autograde 1 submission"
        try:
            t0 = time.perf_counter()
            release = pipeline.release(assignment, course)
            t_release = time.perf_counter() - t0
            notebooks = {}
            for src in pipeline.source_paths(assignment, course):
                release_nb = nbformat.read(str(release / f"{src.stem}.ipynb"), as_version=4)
                notebooks[src.stem] = fake_students.student_notebook(
                    release_nb, nbcore.read_source(src), "solution")
            plan = pipeline.Plan({"bench_student": notebooks}, {"bench_student": 0.0}, 0.0)
            pipeline.submit(plan, assignment, course)
            cpu0 = _children_cpu()
            wall = pipeline.autograde(assignment, student="bench_student", course=course)
            cpu = _children_cpu() - cpu0
            score, max_score = _score(course, assignment, "bench_student")
            rows.append(Row(f"{assignment}: generate_assignment", "-", t_release, None))
            rows.append(Row(item, f"{score:g}/{max_score:g}pt", wall, AUTOGRADE_TARGET_S, cpu,
                            status="ok" if score == max_score else "NOT FULL MARKS",
                            extra={"notebooks": sorted(notebooks), "score": score,
                                   "max_score": max_score}))
        except Exception as exc:  # noqa: BLE001 - a benchmark reports, it does not crash
            rows.append(Row(item, "nbgrader", None, AUTOGRADE_TARGET_S, status="FAILED",
                            detail=f"{type(exc).__name__}: {exc}"[-3000:]))
    return rows


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.1f}" if x < 100 else f"{x:.0f}"


def table(rows: list[Row]) -> str:
    head = f"{'item':48s} {'mode':9s} {'wall s':>7s} {'exec s':>7s} {'cpu s':>7s} " \
           f"{'target s':>8s}  verdict"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r.item[:48]:48s} {r.mode:9s} {_fmt(r.wall_s):>7s} {_fmt(r.exec_s):>7s} "
                     f"{_fmt(r.cpu_s):>7s} {_fmt(r.target_s):>8s}  {r.verdict}")
    return "\n".join(lines)


def summary(rows: list[Row]) -> list[Row]:
    """Whole-course estimate: the full-mode notebook runs, back to back."""
    full = [r for r in rows if r.mode == "full" and r.wall_s is not None]
    out = []
    if full:
        out.append(Row(f"all notebooks, full mode ({len(full)})", "sum",
                       sum(r.wall_s for r in full), COURSE_TARGET_S,
                       sum(r.cpu_s or 0 for r in full),
                       sum(r.exec_s or 0 for r in full)))
    quick = [r for r in rows if r.mode == "quick" and r.wall_s is not None]
    if quick:
        out.append(Row(f"all notebooks, quick mode ({len(quick)})", "sum",
                       sum(r.wall_s for r in quick), None, sum(r.cpu_s or 0 for r in quick),
                       sum(r.exec_s or 0 for r in quick)))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modes", default="full,quick",
                   help="comma-separated notebook modes to time (default: full,quick)")
    p.add_argument("--only", nargs="*", metavar="SUBSTR",
                   help="only the notebooks whose path contains one of these strings")
    p.add_argument("--no-notebooks", action="store_true", help="skip the notebook timings")
    p.add_argument("--make", action="store_true", help="also time the whole `make` (long)")
    p.add_argument("--clean", action="store_true",
                   help="with --make: run `make clean` first (the venv is kept warm)")
    p.add_argument("--autograde", action="store_true",
                   help="also time autograding one submission per assignment (scratch course)")
    p.add_argument("--timeout", type=float, default=900.0,
                   help="seconds allowed per notebook run (default 900)")
    p.add_argument("--json", type=Path, default=BUILD / "bench_course.json",
                   help="where to write the results (default build/bench_course.json)")
    a = p.parse_args(argv)

    modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    if bad := set(modes) - {"full", "quick"}:
        p.error(f"--modes: unknown mode(s) {sorted(bad)}; use full and/or quick")
    if not PY.exists():
        p.error(f"{PY} not found: run `make setup` first")
    load = os.getloadavg()
    print(f"bench_course: {os.cpu_count()} CPUs, load average {load[0]:.1f} "
          f"(wall times grow with other load; cpu s does not)", flush=True)

    rows: list[Row] = []
    if not a.no_notebooks:
        paths = sources(a.only)
        if not paths:
            print(f"no notebook sources under {SOURCE}")
        for path in paths:
            for mode in modes:
                row = bench_notebook(path, mode == "quick", a.timeout)
                rows.append(row)
                print(f"  {row.item} [{row.mode}]: {_fmt(row.wall_s)} s wall "
                      f"({_fmt(row.exec_s)} s exec) {row.verdict}", flush=True)
    if a.autograde:
        names = sorted({p.parent.name for p in sources(a.only)})
        rows += bench_autograde(names)
    if a.make:
        rows += bench_make(a.clean, timeout_s=3600)
    rows += summary(rows)

    print()
    print(table(rows))
    print("wall s: elapsed time; exec s: notebook execution as nbtool reports it; cpu s: "
          "user+system time of the child processes (on a machine shared with other load, "
          "compare cpu s with the targets too: the targets assume 2 otherwise idle cores)")
    print(f"targets: whole course <= {COURSE_TARGET_S / 60:.0f} min on 2 cores; one submission "
          f"autograded <= {AUTOGRADE_TARGET_S:.0f} s; quick mode <= {QUICK_TARGET_S:.0f} s "
          f"per notebook")
    for r in rows:
        if r.detail:
            print(f"\n--- {r.item} [{r.mode}]: {r.status}\n{r.detail}")

    a.json.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": {"cpus": os.cpu_count(), "loadavg": load, "python": platform.python_version(),
                 "machine": platform.machine()},
        "targets_s": {"course": COURSE_TARGET_S, "autograde_one_submission": AUTOGRADE_TARGET_S,
                      "notebook_quick": QUICK_TARGET_S, "notebook_full": FULL_TARGETS_S},
        "rows": [{**asdict(r), "verdict": r.verdict} for r in rows],
    }
    a.json.write_text(json.dumps(record, indent=2))
    print(f"\nwrote {a.json.relative_to(REPO) if a.json.is_relative_to(REPO) else a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
