"""Expected values baked for the notebooks' test cells, computed on the instructor's side.

A test cell compares the student's function with numbers. Those numbers used to be computed
*while grading*, by a reference function imported from :mod:`checks.grading` or td_lib, so the
grading kernel had to hold the references (the answers) and a visible test had to show a
reference formula before calling the student's function. Now this tool computes them here, once,
and writes them to a generated data file per notebook,
``checks/grading/baked_values/<notebook>.json`` (instructor side: never beside the sources, which
nbgrader copies into the release). The source holds one line per region::

    # BAKED noise_floor_visible (expected values computed on the instructor's side: checks/grading/...)

and every reader of a source (``tools.nbcore.read_source``: the editions, the runner, the site,
the handout, the paired ``.ipynb``) sees it expanded into the ``name = literal`` lines::

    # BEGIN BAKED noise_floor_visible (expected values computed on the instructor's side; do not edit)
    _cases = [(0.002, 1.0, 6, 1.0, 0.0), ...]
    _refs = [(0.000577..., 0.000693...), ...]
    # END BAKED noise_floor_visible

Each region is named after the function registered with ``@baked``
(:mod:`checks.grading.registry`; :mod:`checks.grading.baked` and ``baked_*.py``) that computes
it (a dict ``{variable: value}``). The grading kernel then imports neither ``checks`` nor an answer.

    python -m checks.grading.bake            # rewrite every data file from the references (and
                                             # collapse a region expanded in a source back to its line)
    python -m checks.grading.bake --check    # exit 1 when a data file differs from what the
                                             # references compute now (tests/test_bake.py)

A data file maps each region (sorted) to its variables (in the order the reference returns
them), each value as its Python literal (floats written with ``repr``, which round-trips exactly;
numpy scalars and arrays become floats and lists; tuples stay tuples). ``--check`` compares
floats with a relative tolerance of 1e-12 (and 1e-15 absolute, for exact zeros): the references
are deterministic, but the last bits of a float may differ between machines (BLAS kernels,
thread counts), which is not drift. A reference that amplifies rounding (a finite-difference
fit) declares a looser tolerance of its own, ``@baked(rtol=...)``, well below what its test cell
checks. A region with no data, or data with no region, is an error naming both.

A demo's reference result (what a demo shows while the student's function is not written,
:func:`td_lib.own_work.demo_result`) is baked the same way, rounded for the reader:
``@baked(digits=6)`` writes floats to 6 significant digits and compares them to within one
unit of the last digit.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SOURCES = REPO / "course" / "source"
BEGIN = "# BEGIN BAKED "
END = "# END BAKED "
DATA = REPO / "checks" / "grading" / "baked_values"  # one generated data file per notebook
DATA_REL = "checks/grading/baked_values"
MARK = "# BAKED "  # a source's one line per region
RTOL, ATOL = 1e-12, 1e-15
_REGION = re.compile(r"^(?P<indent>[ \t]*)# BEGIN BAKED (?P<name>\w+)\b.*$")
_MARK = re.compile(r"^(?P<indent>[ \t]*)# BAKED (?P<name>\w+)\b.*$")


def plain(value: Any) -> Any:
    """``value`` with numpy scalars/arrays turned into Python floats, ints and lists."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return plain(value.tolist())
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"a baked value must be finite, got {value!r}")
        return float(value)
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    raise TypeError(f"cannot bake a {type(value).__name__}: use floats, ints, str, tuples, lists, dicts")


def regions(text: str) -> list[tuple[str, int, int, str]]:
    """(name, first line, last line, indent) of every baked region of ``text`` (0-based, inclusive)."""
    out, lines = [], text.split("\n")
    i = 0
    while i < len(lines):
        m = _REGION.match(lines[i])
        if m:
            name, indent = m.group("name"), m.group("indent")
            for j in range(i + 1, len(lines)):
                if lines[j].strip() == f"{END}{name}".strip():
                    out.append((name, i, j, indent))
                    i = j
                    break
                if lines[j].lstrip().startswith(BEGIN):
                    raise ValueError(f"region {name} is not closed before the next one (line {j + 1})")
            else:
                raise ValueError(f"region {name} (line {i + 1}) has no `{END}{name}` line")
        i += 1
    return out


def read_values(text: str, first: int, last: int) -> dict[str, Any]:
    """The ``{variable: literal}`` assignments inside one region."""
    body = "\n".join(text.split("\n")[first + 1:last])
    tree = ast.parse(textwrap.dedent(body))
    out = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            raise ValueError(f"line {first + 1 + node.lineno}: a baked region holds only `name = literal` lines")
        out[node.targets[0].id] = ast.literal_eval(node.value)
    return out


def close(a: Any, b: Any, rtol: float = RTOL, atol: float = ATOL) -> bool:
    """Same structure, same ints and strings, floats within ``rtol`` (relative) or ``atol``."""
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) \
                or not isinstance(b, (int, float)):
            return False
        return abs(a - b) <= max(rtol * max(abs(a), abs(b)), atol)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(close(x, y, rtol, atol) for x, y in zip(a, b))
    if isinstance(a, dict):
        return (isinstance(b, dict) and list(a) == list(b)
                and all(close(a[k], b[k], rtol, atol) for k in a))
    return a == b


def rounded(value: Any, digits: int) -> Any:
    """``value`` (already :func:`plain`) with every float to ``digits`` significant digits."""
    if isinstance(value, float):
        return float(f"{value:.{digits}g}")
    if isinstance(value, tuple):
        return tuple(rounded(v, digits) for v in value)
    if isinstance(value, list):
        return [rounded(v, digits) for v in value]
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    return value


_COMPUTED: dict[str, tuple[Callable, dict[str, Any]]] = {}


def computed(name: str, fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``fn()`` as plain literals, once per process (references are deterministic; a demo's
    reference trains a network for seconds)."""
    hit = _COMPUTED.get(name)
    if hit is None or hit[0] is not fn:
        hit = _COMPUTED[name] = (fn, {k: plain(v) for k, v in fn().items()})
    return dict(hit[1])


def marker(name: str, stem: str, indent: str = "") -> str:
    """The one line a source holds for a region (``tools.nbcore.read_source`` expands it)."""
    return f"{indent}{MARK}{name} (expected values computed on the instructor's side: {DATA_REL}/{stem}.json)"


def markers(text: str) -> list[tuple[str, int, str]]:
    """(name, line, indent) of every one-line region marker of ``text`` (0-based lines)."""
    return [(m.group("name"), i, m.group("indent")) for i, line in enumerate(text.split("\n"))
            if (m := _MARK.match(line))]


def collapse(text: str, stem: str) -> str:
    """``text`` with every expanded region (``# BEGIN BAKED`` ... ``# END BAKED``, as the paired
    notebook shows it) replaced by its one-line :func:`marker`."""
    lines = text.split("\n")
    for name, first, last, indent in reversed(regions(text)):
        lines[first:last + 1] = [marker(name, stem, indent)]
    return "\n".join(lines)


def data_path(stem: str, data: Path = DATA) -> Path:
    """The generated data file of the notebook ``stem``."""
    return Path(data) / f"{stem}.json"


def read_data(path: Path) -> dict[str, dict[str, Any]]:
    """``{region: {variable: value}}`` of a data file (empty when there is none)."""
    path = Path(path)
    if not path.exists():
        return {}
    raw = json.loads(path.read_text())["regions"]
    return {name: {var: ast.literal_eval(text) for var, text in values.items()} for name, values in raw.items()}


def data_text(found: dict[str, dict[str, Any]], stem: str) -> str:
    """The text of a data file: regions sorted by name, variables in the reference's order, each
    value as its Python literal (``repr``: exact floats, tuples kept), one line per variable."""
    body = {"about": f"generated by python -m checks.grading.bake for course/source/*/{stem}.py; do not edit",
            "regions": {name: {var: repr(found[name][var]) for var in found[name]} for name in sorted(found)}}
    return json.dumps(body, indent=1, ensure_ascii=False) + "\n"


def registry() -> dict[str, Callable[[], dict[str, Any]]]:
    from checks.grading.registry import registry

    return registry()


def sources(root: Path = SOURCES) -> list[Path]:
    return sorted(p for p in root.glob("*/*.py") if not p.name.startswith("_"))


def bake(check: bool = False, root: Path = SOURCES, only: tuple[str, ...] = (), data: Path = DATA) -> list[str]:
    """Rewrite (or, with ``check``, compare) every data file; return the problems found.

    Writing also collapses a region expanded in a source (pulled back from a notebook edited in
    JupyterLab) to its one line; ``check`` reports it. ``only``: notebook names
    (``td2_7_3_spectral_bias``) whose data are baked; the others are read (a region name must
    stay unique) but neither computed nor written.
    """
    reg = registry()
    problems, seen = [], {}
    stems: dict[str, Path] = {}
    for path in sources(root):
        if path.stem in stems:  # one data file per notebook name
            problems.append(f"{path}: the notebook name {path.stem} is also {stems[path.stem]}'s (one data file each)")
        stems[path.stem] = path
        where_src = path.relative_to(root.parent.parent) if root == SOURCES else path
        text = path.read_text()
        if expanded := [r[0] for r in regions(text)]:
            if check:
                problems.append(f"{where_src}: holds expanded baked regions ({', '.join(expanded)}); "
                                "run python -m checks.grading.bake to collapse them to one line each")
            else:
                text = collapse(text, path.stem)
                path.write_text(text)
        found = markers(text)
        if only and path.stem not in only:
            for name, line, _ in found:
                seen.setdefault(name, f"{where_src}:{line + 1}")
            continue
        dpath = data_path(path.stem, data)
        where_data = dpath.relative_to(REPO) if dpath.is_relative_to(REPO) else dpath
        stored = read_data(dpath)
        new: dict[str, dict[str, Any]] = {}
        for name, line, _ in found:
            where = f"{where_src}:{line + 1}"
            if name in seen:
                problems.append(f"{where}: region {name} also in {seen[name]}")
                continue
            seen[name] = where
            if name not in reg:
                problems.append(f"{where}: no function {name} in checks/grading/baked*.py")
                continue
            fn = reg[name]
            want = computed(name, fn)
            rtol, atol = getattr(fn, "rtol", RTOL), getattr(fn, "atol", ATOL)
            if getattr(fn, "digits", None):
                want = {k: rounded(v, fn.digits) for k, v in want.items()}
                rtol = max(rtol, 1.5 * 10.0 ** (1 - fn.digits))
            new[name] = want
            if check:
                if name not in stored:
                    problems.append(f"{where}: region {name} has no data in {where_data} (run python -m "
                                    "checks.grading.bake)")
                    continue
                have = stored[name]
                if list(have) != list(want):
                    problems.append(f"{where_data}: region {name} sets {list(have)}, the reference {list(want)}")
                for var in want:
                    if var in have and not close(have[var], want[var], rtol, atol):
                        problems.append(f"{where_data}: {name}.{var} differs from what the reference computes now "
                                        "(run python -m checks.grading.bake)")
        names = {name for name, _, _ in found}
        for name in sorted(set(stored) - names):
            if check:
                problems.append(f"{where_data}: data for region {name}, which {where_src} does not hold "
                                "(run python -m checks.grading.bake)")
        if not check:
            if new:
                text_new = data_text(new, path.stem)
                if not dpath.exists() or dpath.read_text() != text_new:
                    dpath.parent.mkdir(parents=True, exist_ok=True)
                    dpath.write_text(text_new)
            elif dpath.exists():
                dpath.unlink()
    if only:
        return problems
    stems = {p.stem for p in sources(root)}
    for extra in sorted(Path(data).glob("*.json")):
        if extra.stem not in stems:
            problems.append(f"{extra}: data for the notebook {extra.stem}, which has no source in {root}")
    for name in sorted(set(reg) - set(seen)):
        problems.append(f"checks/grading/baked*.py: {name} has no region in any notebook source")
    return problems

def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="compare, do not write; exit 1 on drift")
    p.add_argument("--only", nargs="+", default=(), metavar="NOTEBOOK",
                   help="bake only these notebooks (names without .py, e.g. td2_7_3_spectral_bias); default: all")
    a = p.parse_args(argv)
    problems = bake(check=a.check, only=tuple(a.only))
    for line in problems:
        print(line, file=sys.stderr)
    if not problems:
        print("baked values " + ("match the references" if a.check else "written"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
