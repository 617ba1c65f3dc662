"""Build ``solutions/``: execute each source with its solutions and render it to HTML.

    python -m tools.render [--quick] [PATH...]

Each notebook is executed in full mode (``--quick``: as nbgrader would) with solution
markers removed and hidden tests dropped, saved as ``solutions/<assignment>/<nb>.ipynb``
and rendered to ``solutions/<assignment>/<nb>.html`` with every answer cell folded under
a "Solution" ``<details>`` (template ``tools/templates/solutions``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from nbconvert import HTMLExporter

from tools import env, nbcore

OUT = env.REPO / "solutions"
TEMPLATES = Path(__file__).resolve().parent / "templates"


def solutions_notebook(source: Path):
    nb = nbcore.read_source(source)
    for c in nb.cells:
        c.source = nbcore.strip_markers(c.source, nbcore.BEGIN_HIDDEN, nbcore.END_HIDDEN, keep=False)
        c.source = nbcore.strip_markers(c.source, nbcore.BEGIN_SOL, nbcore.END_SOL, keep=True)
    return nb


def to_html(nb) -> str:
    exporter = HTMLExporter(template_name="solutions", extra_template_basedirs=[str(TEMPLATES)])
    body, _ = exporter.from_notebook_node(nb)
    return body


def render(source: Path, quick: bool = False) -> tuple[Path, float, int]:
    nb = solutions_notebook(source)
    executed, secs = nbcore.execute(nb, source.parent, quick=quick)
    out = OUT / source.parent.name / source.stem
    nbcore.write(executed, out.with_suffix(".ipynb"))
    out.with_suffix(".html").write_text(to_html(executed))
    return out.with_suffix(".html"), secs, len(nbcore.error_cells(executed))


def _render_one(args: tuple[Path, bool]) -> tuple[Path, float, int]:
    return render(*args)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                   help="notebooks executed in parallel (default: number of cores)")
    p.add_argument("paths", nargs="*", type=Path)
    a = p.parse_args(argv)
    srcs = [s.resolve() for s in (a.paths or nbcore.sources())]
    jobs = max(1, min(a.jobs, len(srcs)))
    # Share the cores between parallel kernels instead of oversubscribing them.
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // jobs)))
    status = 0
    t0 = time.perf_counter()
    with ProcessPoolExecutor(jobs) as pool:
        for html, secs, nerr in pool.map(_render_one, [(s, a.quick) for s in srcs]):
            print(f"{html.relative_to(env.REPO)}: executed in {secs:.1f} s, {nerr} error cell(s)",
                  flush=True)
            status |= nerr > 0
    print(f"solutions built in {time.perf_counter() - t0:.1f} s with {jobs} parallel kernel(s)")
    return status


if __name__ == "__main__":
    sys.exit(main())
