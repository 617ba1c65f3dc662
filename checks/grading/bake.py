"""Expected values baked into the notebooks' test cells, computed on the instructor's side.

A test cell compares the student's function with numbers. Those numbers used to be computed
*while grading*, by a reference function imported from :mod:`checks.grading` or td_lib, so the
grading kernel had to hold the references (the answers) and a visible test had to show a
reference formula before calling the student's function. Now a tool computes them here, once,
and writes them into the source as literals, between two marker lines::

    # BEGIN BAKED noise_floor_visible (expected values computed on the instructor's side; do not edit)
    _cases = [(0.002, 1.0, 6, 1.0, 0.0), ...]
    _refs = [(0.000577..., 0.000693...), ...]
    # END BAKED noise_floor_visible

Each region is named after the function of :mod:`checks.grading.baked` that computes it (a
dict ``{variable: value}``). The grading kernel then imports neither ``checks`` nor an answer.

    python -m checks.grading.bake            # rewrite every region from the references
    python -m checks.grading.bake --check    # exit 1 when a region differs from what the
                                             # references compute now (tests/test_bake.py)

Values are Python literals (floats written with ``repr``, which round-trips exactly; numpy
scalars and arrays become floats and lists). ``--check`` compares floats with a relative
tolerance of 1e-12 (and 1e-15 absolute, for exact zeros): the references are deterministic,
but the last bits of a float may differ between machines (BLAS kernels, thread counts), which
is not drift. A reference that amplifies rounding (a finite-difference fit) declares a looser
tolerance of its own, ``@baked(rtol=...)``, well below what its test cell checks.

A demo's reference result (what a demo shows while the student's function is not written,
:func:`td_lib.own_work.demo_result`) is baked the same way, rounded for the reader:
``@baked(digits=6)`` writes floats to 6 significant digits and compares them to within one
unit of the last digit.
"""

from __future__ import annotations

import argparse
import ast
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
NOTE = "(expected values computed on the instructor's side; do not edit)"
RTOL, ATOL = 1e-12, 1e-15
_REGION = re.compile(r"^(?P<indent>[ \t]*)# BEGIN BAKED (?P<name>\w+)\b.*$")


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


def literal(value: Any, width: int) -> list[str]:
    """``value`` (already :func:`plain`) as the lines of a Python literal at most ``width``
    wide where possible: short containers on one line, long ones with their items packed."""
    one = repr(value)
    if len(one) <= width or not isinstance(value, (list, tuple, dict)) or not value:
        return [one]
    if isinstance(value, dict):
        opening, closing = "{", "}"
        items = []
        for k, v in value.items():
            key = repr(k) + ": "
            sub = literal(v, width - 1 - len(key))
            items.append([key + sub[0]] + [" " * len(key) + s for s in sub[1:]])
    else:
        opening, closing = ("[", "]") if isinstance(value, list) else ("(", ")")
        items = [literal(v, width - 1) for v in value]
        if isinstance(value, tuple) and len(value) == 1:
            items[0][-1] += ","
    lines: list[str] = []
    for item in items:
        if len(item) == 1 and lines and len(lines[-1]) + 2 + len(item[0]) <= width - 1 and not lines[-1].endswith("]"):
            lines[-1] += ", " + item[0]
        else:
            if lines:
                lines[-1] += ","
            lines += item
    out = [opening + lines[0]] + [" " + ln for ln in lines[1:]]
    out[-1] += closing
    return out


def render(name: str, values: dict[str, Any], indent: str = "") -> list[str]:
    """The lines of one region (markers included)."""
    lines = [f"{indent}{BEGIN}{name} {NOTE}"]
    for var, value in values.items():
        if not var.isidentifier():
            raise ValueError(f"{name}: {var!r} is not a variable name")
        body = literal(plain(value), 110 - len(indent) - len(var) - 3)
        lines.append(f"{indent}{var} = {body[0]}")
        pad = indent + " " * (len(var) + 3)
        lines += [pad + b for b in body[1:]]
    lines.append(f"{indent}{END}{name}")
    return lines


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


def registry() -> dict[str, Callable[[], dict[str, Any]]]:
    from checks.grading import baked

    return dict(baked.REGISTRY)


def sources(root: Path = SOURCES) -> list[Path]:
    return sorted(root.glob("*/*.py"))


def bake(check: bool = False, root: Path = SOURCES, only: tuple[str, ...] = ()) -> list[str]:
    """Rewrite (or, with ``check``, compare) every region; return the problems found.

    ``only``: notebook names (``td2_7_3_spectral_bias``) whose sources are baked; the others are
    read (a region name must stay unique) but neither computed nor written.
    """
    reg = registry()
    problems, seen = [], {}
    for path in sources(root):
        text = path.read_text()
        if only and path.stem not in only:
            for name, first, _, _ in regions(text):
                seen.setdefault(name, f"{path.name}:{first + 1}")
            continue
        found = regions(text)
        if not found:
            continue
        lines = text.split("\n")
        for name, first, last, indent in reversed(found):
            where = f"{path.relative_to(root.parent.parent) if root == SOURCES else path}:{first + 1}"
            if name in seen:
                problems.append(f"{where}: region {name} also in {seen[name]}")
                continue
            seen[name] = where
            if name not in reg:
                problems.append(f"{where}: no function {name} in checks/grading/baked.py")
                continue
            fn = reg[name]
            want = computed(name, fn)
            rtol, atol = getattr(fn, "rtol", RTOL), getattr(fn, "atol", ATOL)
            if getattr(fn, "digits", None):
                want = {k: rounded(v, fn.digits) for k, v in want.items()}
                rtol = max(rtol, 1.5 * 10.0 ** (1 - fn.digits))
            if check:
                have = read_values(text, first, last)
                if list(have) != list(want):
                    problems.append(f"{where}: region {name} sets {list(have)}, the reference {list(want)}")
                for var in want:
                    if var in have and not close(have[var], want[var], rtol, atol):
                        problems.append(f"{where}: {name}.{var} differs from what the reference computes now "
                                        "(run python -m checks.grading.bake)")
            else:
                lines[first:last + 1] = render(name, want, indent)
        if not check:
            new = "\n".join(lines)
            if new != text:
                path.write_text(new)
    for name in sorted(set(reg) - set(seen)) if not only else ():
        problems.append(f"checks/grading/baked.py: {name} has no region in any notebook source")
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
