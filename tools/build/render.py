"""Build ``solutions/``: execute each source with its solutions.

    python -m tools.build.render [--quick] [--out DIR] [PATH...]

Each notebook is executed in full mode (``--quick``: as nbgrader would) with solution
markers removed and hidden tests dropped, and saved as ``<out>/<assignment>/<nb>.ipynb``
(default ``solutions/``). The course site (``python -m tools.site.pages``) renders these executed
notebooks to HTML, with every answer folded under a labelled "Solution — 7.3.A.2" bar; they
are not executed again.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tools import env, nbcore

OUT = env.REPO / "solutions"


def solutions_notebook(source: Path):
    nb = nbcore.read_source(source)
    for c in nb.cells:
        c.source = nbcore.strip_markers(c.source, nbcore.BEGIN_HIDDEN, nbcore.END_HIDDEN, keep=False)
        c.source = nbcore.strip_markers(c.source, nbcore.BEGIN_SOL, nbcore.END_SOL, keep=True)
    return nb


def render(source: Path, quick: bool = False, out_dir: Path = OUT) -> tuple[Path, float, int]:
    """Execute ``source`` with its solutions; write ``<out_dir>/<assignment>/<nb>.ipynb``."""
    nb = solutions_notebook(source)
    executed, secs = nbcore.execute(nb, source.parent, quick=quick)
    out = Path(out_dir) / source.parent.name / (source.stem + ".ipynb")
    nbcore.write(executed, out)
    return out, secs, len(nbcore.error_cells(executed))


def _render_one(args: tuple[Path, bool, Path]) -> tuple[Path, float, int]:
    return render(*args)


def _shown(path: Path) -> Path | str:
    try:
        return path.relative_to(env.REPO)
    except ValueError:
        return path


HELP = """\
Run every notebook source with its solutions (hidden tests dropped) and save the executed
notebooks as solutions/<assignment>/<notebook>.ipynb, which the course site renders without
running them again. One line per notebook: its time and its number of error cells (exit
status 1 if any)."""

EXAMPLES = """\
examples:
  make solutions                      # = python -m tools.build.render: every notebook, full size
  python -m tools.build.render --quick course/source/cnn_lcn/cnn_lcn_1_exact_odes.py
  python -m tools.build.render -j 1 --out /tmp/solutions   # one kernel at a time, elsewhere"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.build.render", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="the quick mode nbgrader's validation uses: fewer samples and steps, so the printed "
                        "numbers differ from the prose's (default: full size)")
    p.add_argument("--out", type=Path, default=OUT,
                   help="folder for <assignment>/<nb>.ipynb (default: solutions/)")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                   help="notebooks executed in parallel (default: number of cores)")
    p.add_argument("paths", nargs="*", type=Path,
                   help="notebook sources (course/source/<assignment>/<nb>.py; default: all of them)")
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    srcs = [s.resolve() for s in (a.paths or nbcore.sources())]
    jobs = max(1, min(a.jobs, len(srcs)))
    # Share the cores between parallel kernels instead of oversubscribing them.
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // jobs)))
    status = 0
    t0 = time.perf_counter()
    with ProcessPoolExecutor(jobs) as pool:
        for out, secs, nerr in pool.map(_render_one, [(s, a.quick, a.out.resolve()) for s in srcs]):
            print(f"{_shown(out)}: executed in {secs:.1f} s, {nerr} error cell(s)", flush=True)
            status |= nerr > 0
    print(f"solutions built in {time.perf_counter() - t0:.1f} s with {jobs} parallel kernel(s)")
    return status


if __name__ == "__main__":
    sys.exit(main())
