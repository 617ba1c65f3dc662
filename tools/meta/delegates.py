"""Delegates: functions left in an exercise's grading edition that pass its tests (issue 35, point 5).

    python -m tools.meta.delegates [--notebook NB ...] [--json]

A notebook's grading kernel imports the *grading edition* of td_lib (:mod:`tools.build.student_edition`,
``keep_general=False``): the library without the registered counterparts of that notebook's
exercises. This tool looks for what the registry missed. For every graded code exercise (an answer
cell with a mutation corpus, ``checks/fixtures/...``; its test cells are the corpus's ``TESTS``)
and every function ``f`` the answer cell defines, it tries every public function ``g`` of the
grading edition as a *short delegate* of ``f`` and runs the test cells of ``f`` (visible and hidden
parts, from ``course/source``) with ``f`` bound to the delegate. A delegate that makes every one of
them pass is a **finding**: cut ``g`` from that notebook's grading edition
(``checks/grading/exercises.py``, ``DELEGATE_CUTS``) or change the exercise.

Candidates, for a library function ``g`` and the student's call ``f(*args, **kwargs)`` (the
parameters of ``f`` are read from the solution's signature):

- ``as given``: ``g(*args, **kwargs)``;
- ``by name``: ``g(**{p: v})`` for the arguments of ``f`` whose names are parameters of ``g``;
- ``first k``: ``g(*args[:k])``, the trailing arguments dropped;
- each of these with the scalar arguments wrapped by ``float`` or ``np.asarray``;
- each with an *option setting* of ``g``: a value for a required keyword-only parameter, or a
  switched bool / small int default (0, 1, 2; at most :data:`MAX_OPTIONS` settings);
- two-call compositions of the single calls that run: the difference and the ratio of two calls
  with the same arguments and two option settings;
- the compositions an exercise's statement implies (:data:`FORMS`), with ``g`` and two option
  settings for its two calls.

A result that is a 0-d array is returned as a float (what a student would write). Candidates are
screened first on up to three of the calls the test cells make to the solution (recorded): a
candidate that raises, or returns something of another shape or far from the solution (beyond
half the solution's largest entry), is not run against the tests (``--no-screen`` runs every
candidate; slow). A call over :data:`CALL_LIMIT` seconds fails the candidate (counted as slow).

How it runs: the test cells are executed in-process, in a worker subprocess per notebook that
imports the full td_lib (the test runner's library: the tests compute their references with it);
the solution's non-demo cells run first (``NBGRADER_EXECUTION=autograde``), their namespace is
copied for each candidate. While a delegate runs, every function the grading edition cuts is
switched off (``td_lib.own_work.library_off``), so the delegate sees what the edition holds. The
``own_work`` guard of the test cells is bound to the identity: in grading it runs in the student's
kernel, and the finding is about the edition's content, not about the guard. ``tools`` imports no
td_lib: the worker reaches it with :func:`importlib.import_module`, as ``tools.grading.remote_tests`` does.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import importlib
import inspect
import io
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tools import env, nbcore
from tools.build import fake_students

CALL_LIMIT = 2.0  # seconds per delegate call
CELL_LIMIT = 90.0  # seconds per test cell run
MAX_OPTIONS = 8  # option settings per library function
SCREEN_CALLS = 3  # recorded calls a candidate must reproduce before the test cells run
#: modules whose functions are no delegate: the grading guard itself (its functions take a function)
SKIP_MODULES = ("td_lib.own_work",)


# ----------------------------------------------------------------------------- statement forms
def _plane(args: tuple, kwargs: dict):
    """Exercise 7.4.A, Theorem 6: the statement says that only the plane of w* and w_k matters and
    prints the result in terms of the norm of w*, the unit vectors and the angle. So the answer is
    ``|w*| (A û* + B û_k)`` with A, B Gaussian expectations of the cosine c: two calls ``g(c)``
    (``v1``, ``v2``, two option settings), each coefficient a call or a call minus c times the other."""
    import numpy as np

    w_star, w_k = (np.asarray(a, float) for a in (list(args) + [kwargs.get("w_star"), kwargs.get("w_k")])[:2])
    ns, nk = np.linalg.norm(w_star), np.linalg.norm(w_k)
    us, uk = w_star / ns, w_k / nk
    c = float(np.clip(us @ uk, -1.0, 1.0))
    combine = {
        "|w*| (v1 û* + v2 û_k)": lambda v1, v2: ns * (v1 * us + v2 * uk),
        "|w*| (v1 û* + (v2 - c v1) û_k)": lambda v1, v2: ns * (v1 * us + (v2 - c * v1) * uk),
        "|w*| (v1 û* - (v2 - c v1) û_k)": lambda v1, v2: ns * (v1 * us - (v2 - c * v1) * uk),
    }
    return (c,), combine


#: exercise -> function -> compositions its statement implies: ``derive(args, kwargs)`` returns the
#: arguments of the two library calls and ``{description: combine(v1, v2)}``.
FORMS = {"ex74A_closed_form": {"theorem6_closed_form": [_plane]}}


# ----------------------------------------------------------------------------- worker: candidates
class _Timeout(BaseException):
    """A delegate call or a test cell ran over its limit (BaseException: tests catch Exception)."""


@contextlib.contextmanager
def _deadline(seconds: float):
    """Raise :class:`_Timeout` after ``seconds``; nests (an outer deadline keeps its remaining time)."""
    def on_alarm(signum, frame):
        raise _Timeout()

    outer = signal.getitimer(signal.ITIMER_REAL)[0]
    old = signal.signal(signal.SIGALRM, on_alarm)
    t0 = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer) if outer > 0 else seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if outer > 0:
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - t0), 1e-3))


def _options(g) -> list[dict]:
    """Option settings of ``g`` (see the module docstring): ``[{}]`` first."""
    try:
        params = list(inspect.signature(g).parameters.values())
    except (TypeError, ValueError):
        return [{}]
    required = [p.name for p in params if p.kind is p.KEYWORD_ONLY and p.default is p.empty]
    out: list[dict] = [dict(zip(required, vals)) for vals in
                       itertools.islice(itertools.product((0, 1, 2), repeat=len(required)), MAX_OPTIONS)]
    for p in params:
        if p.default is p.empty or p.kind not in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD):
            continue
        if isinstance(p.default, bool):
            out += [{**o, p.name: not p.default} for o in out[:1]]
        elif isinstance(p.default, int) and 0 <= p.default <= 2 and p.name not in ("rng", "threads", "progress"):
            out += [{**o, p.name: v} for o in out[:1] for v in (0, 1, 2) if v != p.default]
    return out[:MAX_OPTIONS]


def _wrap(value, how: str):
    import numpy as np

    if how == "float" and isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        return float(value)
    if how == "asarray" and (isinstance(value, (int, float, np.number, list)) and not isinstance(value, bool)):
        try:
            return np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            return value
    return value


def _bases(g, params: list[str]):
    """The single-call argument mappings: name -> (args, kwargs) -> (args, kwargs) for ``g``."""
    try:
        gparams = inspect.signature(g).parameters
    except (TypeError, ValueError):
        gparams = {}

    def bound(args, kwargs):
        vals = dict(zip(params, args))
        vals.update(kwargs)
        return vals

    out = {"as given": lambda a, k: (tuple(a), dict(k))}
    if any(p in gparams for p in params):
        out["by name"] = lambda a, k: ((), {p: v for p, v in bound(a, k).items() if p in gparams})
    for n in range(1, len(params)):
        out[f"first {n}"] = lambda a, k, n=n: (tuple(bound(a, k)[p] for p in params[:n] if p in bound(a, k)), {})
    for name, f in list(out.items()):
        for how in ("float", "asarray"):
            out[f"{name}, {how} args"] = lambda a, k, f=f, how=how: (
                lambda ak: (tuple(_wrap(v, how) for v in ak[0]), {x: _wrap(v, how) for x, v in ak[1].items()}))(f(a, k))
    return out


def _scalar(res):
    import numpy as np

    if isinstance(res, np.ndarray) and res.ndim == 0 or isinstance(res, np.generic):
        return float(res)
    return res


def _fmt(o: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in o.items())


def candidates(g, gname: str, params: list[str]) -> list[tuple[str, object, str, dict]]:
    """The single-call candidates built from ``g``: ``(description, call(args, kwargs), base, options)``."""
    out = []
    for bname, base in _bases(g, params).items():
        for o in _options(g):
            def one(a, k, base=base, o=o):
                ba, bk = base(a, k)
                return _scalar(g(*ba, **{**bk, **o}))
            out.append((f"{gname}({bname}{'; ' + _fmt(o) if o else ''})", one, bname, o))
    return out


def two_calls(singles: list[tuple[str, object, str, dict]]) -> list[tuple[str, object]]:
    """Differences and ratios of two single calls with the same arguments and two option settings
    (``singles``: those that ran on the screened calls)."""
    out = []
    for (d1, c1, b1, o1), (d2, c2, b2, o2) in itertools.permutations(singles, 2):
        if b1 == b2 and o1 != o2:
            out.append((f"{d1} - {d2}", lambda a, k, c1=c1, c2=c2: c1(a, k) - c2(a, k)))
            out.append((f"{d1} / {d2}", lambda a, k, c1=c1, c2=c2: c1(a, k) / c2(a, k)))
    return out


def statement_forms(g, gname: str, forms: list) -> list[tuple[str, object]]:
    """The compositions of :data:`FORMS`, with ``g`` for both calls and every pair of option settings."""
    out = []
    opts = _options(g)
    for derive in forms:
        for o1, o2 in itertools.product(opts, repeat=2):
            for key in _form_keys(derive):
                def form(a, k, derive=derive, o1=o1, o2=o2, key=key):
                    inner, combine = derive(a, k)
                    return _scalar(combine[key](g(*inner, **o1), g(*inner, **o2)))
                out.append((f"{derive.__name__.strip('_')} form {key}, v1 = {gname}(c; {_fmt(o1)}), "
                            f"v2 = {gname}(c; {_fmt(o2)})", form))
    return out


def _form_keys(derive) -> list[str]:
    import numpy as np

    return list(derive((np.ones(2), np.ones(2)), {})[1])


def _close(got, want) -> bool:
    """Loose agreement (the screen): same structure and shape, within half the largest entry."""
    import numpy as np

    if isinstance(want, (tuple, list)) and not _numeric(want):
        return isinstance(got, (tuple, list)) and len(got) == len(want) and all(map(_close, got, want))
    try:
        a, b = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    except (TypeError, ValueError):
        try:
            return bool(got == want)
        except Exception:  # noqa: BLE001 - anything incomparable is not close
            return False
    if a.size != b.size or (a.shape != b.shape and a.size != 1):
        return False
    a = a.reshape(b.shape)
    fin = np.isfinite(b)
    if not np.all(np.isfinite(a[fin])):
        return False
    scale = float(np.abs(b[fin]).max()) if fin.any() else 0.0
    return bool(np.all(np.abs(a[fin] - b[fin]) <= 0.5 * scale + 1e-9))


def _numeric(v) -> bool:
    import numpy as np

    try:
        return np.asarray(v, dtype=float).dtype.kind == "f"
    except (TypeError, ValueError):
        return False


def _copy(v):
    try:
        return copy.deepcopy(v)
    except Exception:  # noqa: BLE001 - an argument that cannot be copied is passed as it is
        return v


# ----------------------------------------------------------------------------- worker: running cells
def _exec(src: str, ns: dict, name: str, limit: float = CELL_LIMIT) -> str:
    """Run a cell's source in ``ns``; '' or 'Name: message' of what it raised."""
    src = "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line for line in src.split("\n"))
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), warnings.catch_warnings(), \
                _deadline(limit):
            warnings.simplefilter("ignore")
            exec(compile(src, f"<{name}>", "exec"), ns)
    except _Timeout:
        return "Timeout"
    except BaseException as exc:  # noqa: BLE001 - a failing cell is an outcome
        return f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        _close_figures()
    return ""


def _close_figures() -> None:
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


class _Recorder:
    """The solution's function, recording the calls the test cells make (arguments copied)."""

    def __init__(self, fn, limit: int = 60):
        self.fn, self.calls, self.limit = fn, [], limit

    def __call__(self, *args, **kwargs):
        a, k = _copy(args), _copy(kwargs)
        res = self.fn(*args, **kwargs)
        if len(self.calls) < self.limit:
            self.calls.append((a, k, _copy(res)))
        return res


def _screen_calls(calls: list) -> list:
    if len(calls) <= SCREEN_CALLS:
        return calls
    idx = sorted({0, len(calls) // 2, len(calls) - 1})
    return [calls[i] for i in idx]


def _run_exercise(ns: dict, fname: str, tests: dict[str, str], calls: list, funcs: list, forms: list,
                  off, screen: bool) -> dict:
    """Try every candidate of every library function as ``fname``; return counts and findings."""
    sol = ns[fname]
    try:
        params = list(inspect.signature(sol).parameters)
    except (TypeError, ValueError):
        params = []
    stats = {"candidates": 0, "screened_in": 0, "slow": 0, "findings": []}
    probe = _screen_calls([c for c in calls if not isinstance(c[2], BaseException)])

    def try_one(desc: str, call) -> bool:
        """Screen one candidate, run the tests if it gets through; True when it ran on the probes."""
        stats["candidates"] += 1

        def delegate(*args, **kwargs):
            with _deadline(CALL_LIMIT), off():
                return call(args, kwargs)

        close = True
        try:
            for a, k, want in probe:
                got = delegate(*_copy(a), **_copy(k))
                close = close and (not screen or _close(got, want))
        except _Timeout:
            stats["slow"] += 1
            return False
        except Exception:  # noqa: BLE001 - a candidate that raises is screened out
            return False
        if close:
            stats["screened_in"] += 1
            trial = dict(ns)
            trial[fname] = delegate
            errors = [e for t, src in tests.items() if (e := _exec(src, trial, t))]
            stats["slow"] += any(e == "Timeout" for e in errors)
            if not errors:
                stats["findings"].append(desc)
        return True

    for gname, g in funcs:
        live = [s for s in candidates(g, gname, params) if try_one(s[0], s[1])]
        for desc, call in two_calls(live) + statement_forms(g, gname, forms):
            try_one(desc, call)
    return stats


def _functions(names: list[list[str]], readd: list[str]) -> list[tuple[str, object]]:
    """The edition's functions (listed in the edition, resolved in the full library), plus ``readd``;
    each once, named where it is defined."""
    out, seen = [], set()
    pairs = [tuple(n) for n in names] + [(*r.rsplit(".", 1), r) for r in readd]
    for mod, attr, home in pairs:
        if mod.startswith(SKIP_MODULES):
            continue
        try:
            obj = getattr(importlib.import_module(mod), attr)
        except Exception:  # noqa: BLE001 - not in the full library: nothing to try
            continue
        key = id(inspect.unwrap(obj)) if callable(obj) else None
        if key is None or key in seen:
            continue
        seen.add(key)
        out.append((home, obj))
    return out


def worker(spec: dict) -> dict:
    """Run in the worker subprocess (full td_lib): the findings of one notebook."""
    os.environ["NBGRADER_EXECUTION"] = "autograde"
    os.environ.setdefault("MPLBACKEND", "Agg")
    source = Path(spec["source"])
    os.chdir(source.parent)
    ow = importlib.import_module("td_lib.own_work")
    ow.own_work = lambda fn, exercise: fn  # the guard runs in the student's kernel; here the edition counts
    cut = [n for n in spec["cut"] if n.startswith("td_lib.")]

    def off():
        return ow.library_off("__grading_edition__", *cut)

    nb = nbcore.solution_notebook(nbcore.read_source(source))

    ns: dict = {"__name__": "__main__"}
    cells = {nbcore.grade_id(c): c.source for c in nb.cells if nbcore.grade_id(c)}
    problems = []
    t0 = time.perf_counter()
    for c in nb.cells:
        if c.cell_type != "code" or nbcore.is_demo(c):
            continue
        e = _exec(c.source, ns, nbcore.grade_id(c) or "cell", limit=600)
        if e and nbcore.is_test(c):
            problems.append(f"{source.stem}: the solution fails {nbcore.grade_id(c)}: {e}")
    funcs = _functions(spec["functions"], spec.get("readd", []))
    result = {"notebook": source.stem, "functions": len(funcs), "exercises": {}, "problems": problems,
              "solution_seconds": round(time.perf_counter() - t0, 1)}
    for ex, tests in spec["exercises"].items():
        if spec.get("only") and ex not in spec["only"]:
            continue
        names = [n for n in _defined_functions(cells[ex]) if callable(ns.get(n))]
        for fname in names:
            mine = {t: cells[t] for t in tests if re.search(rf"\b{re.escape(fname)}\b", cells[t])}
            if not mine:
                continue
            rec = _Recorder(ns[fname])
            trial = dict(ns)
            trial[fname] = rec
            for t, src in mine.items():
                e = _exec(src, trial, t)
                if e:
                    problems.append(f"{ex}: the solution's {fname} fails {t} in the tool: {e}")
            t1 = time.perf_counter()
            stats = _run_exercise(ns, fname, mine, rec.calls, funcs,
                                  FORMS.get(ex, {}).get(fname, []), off, spec.get("screen", True))
            stats.update(tests=sorted(mine), calls=len(rec.calls), seconds=round(time.perf_counter() - t1, 1))
            result["exercises"].setdefault(ex, {})[fname] = stats
    return result


def _defined_functions(src: str) -> list[str]:
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return []
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


# ----------------------------------------------------------------------------- driver (no td_lib here)
_LIST = r'''
import importlib, inspect, json, pkgutil, sys
import td_lib
assert td_lib.__file__.startswith(sys.argv[1]), td_lib.__file__
out = []
for m in ["td_lib"] + sorted(x.name for x in pkgutil.walk_packages(td_lib.__path__, "td_lib.")):
    try:
        mod = importlib.import_module(m)
    except Exception:
        continue
    for name, obj in sorted(vars(mod).items()):
        if name.startswith("_") or isinstance(obj, type) or not callable(obj):
            continue
        home = getattr(obj, "__module__", None) or ""
        if home.startswith("td_lib"):
            out.append([m, name, home + "." + getattr(obj, "__qualname__", name)])
print(json.dumps(out))
'''


def edition_functions(edition: Path, python: str = sys.executable) -> list[list[str]]:
    """``[module, name, defining module.qualname]`` of every public function of ``edition``'s modules
    (re-exports included), asked of a fresh interpreter that imports the edition as td_lib."""
    from tools.build import student_edition

    out = subprocess.run([python, "-s", "-c", _LIST, str(edition.parent)], capture_output=True, text=True,
                         cwd=tempfile.gettempdir(), env=student_edition.edition_env(edition))
    if out.returncode != 0:
        raise RuntimeError(f"cannot list the edition's functions:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout)


def exercises(source: Path) -> dict[str, list[str]]:
    """Graded code exercise (answer grade_id) -> the test cells grading it (its corpus's TESTS)."""
    return {ex: spec["tests"] for ex, spec in fake_students.fixture(source).get("mutants", {}).items()}


def answer_ids(source: Path) -> list[str]:
    return [nbcore.grade_id(c) for c in nbcore.read_source(source).cells if nbcore.is_answer(c)]


def run_notebook(source: Path, *, readd: tuple[str, ...] = (), only: list[str] | None = None,
                 screen: bool = True, python: str = sys.executable) -> dict:
    """The findings of one notebook: ``{"notebook", "exercises": {ex: {function: stats}}, "problems"}``.

    ``readd``: dotted names to put back into the grading edition (a planted case: re-adding a cut
    function must produce a finding)."""
    from tools.build import student_edition

    answers = answer_ids(source)
    edition = student_edition.cached(answers, keep_general=False)
    names = edition_functions(edition, python)
    cut = [n for n in student_edition.cut_names(answers, keep_general=False) if n not in readd]
    spec = {"source": str(source), "exercises": exercises(source), "functions": names, "cut": cut,
            "readd": list(readd), "only": only, "screen": screen}
    return run_spec(spec, python)


def run_spec(spec: dict, python: str = sys.executable) -> dict:
    """Run the worker on ``spec`` in a subprocess (full td_lib): ``source`` (a notebook source),
    ``exercises`` (answer grade_id -> test cells), ``functions`` (``[module, name, dotted]`` to try),
    ``cut`` (dotted names switched off while a delegate runs), optional ``readd``, ``only``, ``screen``."""
    source = Path(spec["source"])
    with tempfile.TemporaryDirectory(prefix="delegates-") as tmp:
        spec_path, out_path = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec_path.write_text(json.dumps(spec))
        threads = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
        proc = subprocess.run([python, "-m", "tools.meta.delegates", "--worker", str(spec_path), str(out_path)],
                              capture_output=True, text=True, cwd=env.REPO, env={**os.environ, **threads})
        if proc.returncode != 0 or not out_path.exists():
            raise RuntimeError(f"{source.name}: the delegates worker failed:\n{proc.stderr[-3000:]}")
        return json.loads(out_path.read_text())


def run(sources: list[Path], jobs: int = 2, **kw) -> list[dict]:
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda s: run_notebook(s, **kw), sources))


def findings(results: list[dict]) -> dict[str, list[str]]:
    """exercise -> the delegates that pass its tests (``function: delegate``)."""
    out: dict[str, list[str]] = {}
    for r in results:
        for ex, fs in r["exercises"].items():
            for fname, st in fs.items():
                out.setdefault(ex, []).extend(f"{fname} <- {d}" for d in st["findings"])
    return out


def table(results: list[dict]) -> str:
    lines = [f"{'exercise':24s} {'function':26s} {'tried':>7s} {'screened in':>11s} {'slow':>5s}  delegates that pass"]
    for r in results:
        lines.append(f"# {r['notebook']}: {r['functions']} edition functions, solution in {r['solution_seconds']} s")
        for ex, fs in r["exercises"].items():
            for fname, st in fs.items():
                found = "; ".join(st["findings"]) or "-"
                lines.append(f"{ex:24s} {fname:26s} {st['candidates']:>7d} {st['screened_in']:>11d} "
                             f"{st['slow']:>5d}  {found}")
    return "\n".join(lines)


HELP = """\
Find the short delegates an exercise's grading edition of td_lib still allows: for every graded
code exercise, try every public function of the notebook's grading edition (as given, with
renamed, dropped or wrapped arguments, option settings, differences and ratios of two calls, and
the compositions the statement implies) against the exercise's test cells, hidden parts included,
and list the candidates that pass them all. Exits 1 on a finding."""

EXAMPLES = """\
examples:
  python -m tools.meta.delegates                                   # every notebook (a few minutes)
  python -m tools.meta.delegates --notebook td2_7_4_teacher_nodes --json
  python -m tools.meta.delegates --notebook td2_7_4_teacher_nodes --readd td_lib.core.gaussian.arccos_kernel"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.meta.delegates", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--notebook", nargs="*", metavar="NB",
                   help="notebook stems or sources (default: every notebook of the course)")
    p.add_argument("--only", nargs="*", metavar="GRADE_ID", help="only these exercises (answer grade_ids)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--jobs", type=int, default=2, help="notebooks checked at once (default 2)")
    p.add_argument("--no-screen", action="store_true",
                   help="run every candidate that does not raise against the tests (slow)")
    p.add_argument("--readd", nargs="*", metavar="DOTTED",
                   help="put these cut functions back into the edition (to check that the tool finds them)")
    p.add_argument("--worker", nargs=2, metavar=("SPEC", "OUT"),
                   help="internal: run one search job SPEC (JSON) and write its result to OUT; the tool starts "
                        "these itself (default: not a worker)")
    return p


def _sources(names: list[str] | None) -> list[Path]:
    every = nbcore.sources()
    if not names:
        return every
    out = []
    for n in names:
        hit = [s for s in every if s.stem == n or s == Path(n).resolve()]
        if not hit:
            raise SystemExit(f"no notebook {n!r} (one of {[s.stem for s in every]})")
        out += hit
    return out


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    if a.worker:
        spec_path, out_path = a.worker
        Path(out_path).write_text(json.dumps(worker(json.loads(Path(spec_path).read_text()))))
        return 0
    results = run(_sources(a.notebook), jobs=a.jobs, readd=tuple(a.readd or ()), only=a.only, screen=not a.no_screen)
    found = findings(results)
    problems = [p for r in results for p in r["problems"]]
    if a.json:
        print(json.dumps({"results": results, "findings": found, "problems": problems}, indent=1))
    else:
        print(table(results))
        print("\n".join(["PROBLEMS:"] + problems) if problems else "")
        print(f"{sum(map(len, found.values()))} passing delegate(s) in {sum(1 for v in found.values() if v)} "
              "exercise(s)")
    return 1 if any(found.values()) or problems else 0


if __name__ == "__main__":
    sys.exit(main())
