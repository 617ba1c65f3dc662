"""The layers of the project and the conventions of td_lib, enforced (fast: nothing executed
but td_lib's doctests and ``lint-imports``).

Layers, from the ground up: ``td_lib.core`` (activations, Gaussian quadrature, runtime,
validation) <- td_lib's topic modules <- ``checks`` (claims; grading references in
``checks/grading``) <- tests. ``tools`` (the nbgrader pipeline) imports neither td_lib nor
checks. The import directions are import-linter contracts (``pyproject.toml``
``[tool.importlinter]``, run by ``make test`` and ``make lint``); what import-linter cannot
see (private names across modules, one definition per concept, signatures, sizes, doctests,
``sys.path`` hacks) is checked here with ``ast``. docs/AUTHORING.md, "Layers and conventions".

Every failure message names the file (and line) and says what to change.
"""

from __future__ import annotations

import ast
import doctest
import functools
import importlib
import inspect
import io
import os
import pkgutil
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

import td_lib
from checks.td2_7_learned_first_check import SECTIONS

REPO = Path(__file__).resolve().parent.parent
TD_LIB = REPO / "td_lib"
CORE = TD_LIB / "core"
MAX_LINES = 450
SYS_PATH_ALLOWED = {"tests/conftest.py"}


# ----------------------------------------------------------------------------- helpers
def _tracked_py() -> list[Path]:
    """Every .py file git knows or would add (tracked, or untracked and not ignored)."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", "*.py"],
                             cwd=REPO, capture_output=True, text=True, check=True).stdout
        files = [REPO / f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (an unpacked copy)
        skip = {".venv", "build", "solutions", ".state", "dist", "node_modules", ".git"}
        files = [p for p in REPO.rglob("*.py") if not skip & set(p.relative_to(REPO).parts)]
    return sorted(p for p in files if p.exists())


def _rel(p: Path) -> str:
    return p.relative_to(REPO).as_posix()


@functools.cache
def _parse(p: Path) -> ast.Module:
    """The syntax tree of ``p`` (parsed once per session; callers do not modify it)."""
    return ast.parse(p.read_text(), filename=str(p))


def _td_lib_files() -> list[Path]:
    return sorted(p for p in TD_LIB.rglob("*.py") if "__pycache__" not in p.parts)


def _module_name(p: Path) -> str:
    parts = list(p.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_td_lib_module(dotted: str) -> bool:
    """``dotted`` names a module or package of td_lib (a file, not a function in one)."""
    if dotted != "td_lib" and not dotted.startswith("td_lib."):
        return False
    base = REPO.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file() or (
        base.is_dir() and any(base.glob("*.py")))


def _owner(dotted: str) -> str:
    """The unit that may use a td_lib module's private names: its subpackage
    (``td_lib.cnn_lcn``, ``td_lib.core``, ...), or the module itself for a top-level module."""
    parts = dotted.split(".")
    if len(parts) >= 3 or (len(parts) == 2 and (TD_LIB / parts[1]).is_dir()):
        return ".".join(parts[:2])
    return dotted


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _outside_core(p: Path) -> bool:
    return CORE not in p.parents


def _calls_or_refs(tree: ast.AST, names: set[str]) -> Iterator[tuple[int, str]]:
    """(line, name) of every reference to one of ``names`` (as a name or an attribute)."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id in names:
            yield n.lineno, n.id
        elif isinstance(n, ast.Attribute) and n.attr in names:
            yield n.lineno, n.attr
        elif isinstance(n, ast.ImportFrom):
            for a in n.names:
                if a.name in names:
                    yield n.lineno, a.name


# ----------------------------------------------------------------------------- sys.path
_SYS_PATH_TEXT = re.compile(r"\bsys\s*\.\s*path\s*(?:\.\s*(?:insert|append|extend)\s*\(|\+?=(?!=)|\[)")


def _sys_path_edits(tree: ast.Module) -> list[tuple[int, str]]:
    sys_names = {"sys"}
    path_names: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            sys_names |= {a.asname for a in n.names if a.name == "sys" and a.asname}
        elif isinstance(n, ast.ImportFrom) and n.module == "sys":
            path_names |= {a.asname or a.name for a in n.names if a.name == "path"}

    def is_sys_path(e: ast.AST) -> bool:
        if isinstance(e, ast.Subscript):
            e = e.value
        return (isinstance(e, ast.Attribute) and e.attr == "path" and isinstance(e.value, ast.Name)
                and e.value.id in sys_names) or (isinstance(e, ast.Name) and e.id in path_names)

    found = []
    for n in ast.walk(tree):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in
                {"insert", "append", "extend"} and is_sys_path(n.func.value)):
            found.append((n.lineno, f"sys.path.{n.func.attr}(...)"))
        elif isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(is_sys_path(t) for t in targets):
                found.append((n.lineno, "an assignment to sys.path"))
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and _SYS_PATH_TEXT.search(n.value):
            found.append((n.lineno, "generated code (a string) that edits sys.path"))
    return sorted(found)


def test_no_sys_path_manipulation_outside_conftest():
    problems = []
    for p in _tracked_py():
        if _rel(p) in SYS_PATH_ALLOWED:
            continue
        try:
            tree = _parse(p)
        except SyntaxError:
            continue
        problems += [f"{_rel(p)}:{line}: {what}" for line, what in _sys_path_edits(tree)]
    assert not problems, (
        "sys.path is edited outside tests/conftest.py. The project is installed editable "
        "(pip install -e .): td_lib, checks and tools import from anywhere, also in subprocesses "
        "and generated configs; run scripts as `python -m checks.<name>`. Remove:\n  " + "\n  ".join(problems))


# ----------------------------------------------------------------------------- sizes
def test_no_td_lib_module_over_450_lines():
    long = [(n, _rel(p)) for p in _td_lib_files() if (n := p.read_text().count("\n")) > MAX_LINES]
    assert not long, (f"td_lib modules over {MAX_LINES} lines (wc -l); split each along its ideas into a "
                      "package whose __init__.py re-exports the public API (like td_lib/cnn_lcn/):\n  "
                      + "\n  ".join(f"{path}: {n} lines" for n, path in sorted(long, reverse=True)))


# ----------------------------------------------------------------------------- doctests
def _td_lib_modules() -> tuple[list, list[str]]:
    errors: list[str] = []
    names = ["td_lib"] + [m.name for m in pkgutil.walk_packages(td_lib.__path__, "td_lib.",
                                                                 onerror=lambda n: errors.append(
                                                                     f"{n}: the package does not import, its "
                                                                     "modules were not searched"))]
    mods = []
    for name in dict.fromkeys(names):
        try:
            mods.append(importlib.import_module(name))
        except Exception as exc:  # noqa: BLE001 (reported)
            errors.append(f"{name}: import failed: {type(exc).__name__}: {exc}")
    return mods, errors


@pytest.fixture(scope="module")
def td_lib_modules():
    return _td_lib_modules()


def test_td_lib_doctests_pass(td_lib_modules):
    mods, errors = td_lib_modules
    finder = doctest.DocTestFinder()
    failures = [f"import: {e}" for e in errors]
    for mod in mods:
        for t in finder.find(mod):
            if not t.examples:
                continue
            out = io.StringIO()
            runner = doctest.DocTestRunner(verbose=False)
            runner.run(t, out=out.write, clear_globs=True)
            if runner.failures:
                where = f"{t.filename and Path(t.filename).relative_to(REPO)}:{(t.lineno or 0) + 1}"
                failures.append(f"{t.name} ({where}): {runner.failures} failing example(s)\n"
                                + out.getvalue()[-1500:])
    assert not failures, ("td_lib doctests fail (run `.venv/bin/python -m pytest -q --doctest-modules "
                          "td_lib/<module>.py` for the full report):\n" + "\n".join(failures))


def _public_name(test_name: str, module: str) -> bool:
    rest = test_name[len(module):].lstrip(".")
    return not any(part.startswith("_") for part in rest.split(".") if part)


def test_every_public_td_lib_module_has_a_doctest_example(td_lib_modules):
    mods, _ = td_lib_modules
    finder = doctest.DocTestFinder()
    missing = []
    for mod in mods:
        name = mod.__name__
        if any(part.startswith("_") for part in name.split(".")):
            continue  # private module
        if getattr(mod, "__path__", None) is not None and not any(
                getattr(obj, "__module__", None) == name and not k.startswith("_")
                and (inspect.isfunction(obj) or inspect.isclass(obj)) for k, obj in vars(mod).items()):
            continue  # a package __init__ that only re-exports: its entry points are tested where defined
        if not any(t.examples for t in finder.find(mod) if _public_name(t.name, name)):
            missing.append(f"{Path(mod.__file__).relative_to(REPO)} ({name})")
    assert not missing, ("public td_lib modules without any doctest example (add an Examples section, "
                         "2-4 per module, to the main entry points or the module docstring; print rounded "
                         "numbers):\n  " + "\n  ".join(missing))


# ----------------------------------------------------------------------------- one definition per concept
_THREAD_CALLS = {"set_num_threads", "get_num_threads"}
_QUADRATURE = {"hermegauss", "leggauss", "hermgauss", "roots_hermitenorm", "roots_legendre"}
_ACTIVATION_KEYS = {"relu"}, {"tanh", "gelu", "erf", "softplus"}
_PROGRESS_PARAMS = {"show_progress", "desc"}
_RNG_PARAMS = {"seed", "gen"}


def _is_activation_table(d: ast.Dict) -> bool:
    keys = {k.value for k in d.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    if not (keys & _ACTIVATION_KEYS[0] and keys & _ACTIVATION_KEYS[1]):
        return False
    # a table of formulas or functions, not of plain data (plot colours, quoted numbers are fine)
    return not all(_literal(v) for v in d.values)


def _literal(node: ast.AST) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _all_args(f: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    a = f.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []),
            *([a.kwarg] if a.kwarg else [])]


def _public_defs(tree: ast.Module) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    """Public functions and public methods of public classes, with their qualified names."""
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("_"):
            yield n, n.name
        elif isinstance(n, ast.ClassDef) and not n.name.startswith("_"):
            for m in n.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                        not m.name.startswith("_") or m.name == "__init__"):
                    yield m, f"{n.name}.{m.name}"


def test_one_definition_per_concept_outside_core():
    problems = []
    for p in _td_lib_files():
        if not _outside_core(p):
            continue
        tree, r = _parse(p), _rel(p)
        for line, name in _calls_or_refs(tree, _THREAD_CALLS):
            problems.append(f"{r}:{line}: {name}: use `with td_lib.core.runtime.torch_threads(n):`")
        for line, name in _calls_or_refs(tree, _QUADRATURE):
            problems.append(f"{r}:{line}: {name}: Gaussian expectations go through "
                            "td_lib.core.gaussian.gaussian_expectation (or gauss_normal_nodes)")
        for n in ast.walk(tree):
            if isinstance(n, ast.Import) and any(a.name.split(".")[0] == "tqdm" for a in n.names) or (
                    isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "tqdm"):
                problems.append(f"{r}:{n.lineno}: imports tqdm: progress bars come from td_lib.core.runtime "
                                "(progress, bar) with the `progress: bool | str = False` convention")
            elif isinstance(n, ast.Dict) and _is_activation_table(n):
                problems.append(f"{r}:{n.lineno}: an activation table: use td_lib.core.activations.get(name)")
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for a in _all_args(n):
                    if a.arg in _PROGRESS_PARAMS:
                        problems.append(f"{r}:{n.lineno}: {n.name}({a.arg}=...): take `progress: bool | str = "
                                        "False` instead (td_lib.core.runtime.bar)")
        for f, qual in _public_defs(tree):
            for a in _all_args(f):
                if a.arg in _RNG_PARAMS:
                    problems.append(f"{r}:{f.lineno}: public {qual}({a.arg}=...): take `rng` (an int seed, None "
                                    "or a Generator; td_lib.core.runtime.numpy_rng / torch_generator)")
    problems.sort(key=lambda m: (m.split(":")[0], int(m.split(":")[1])))
    assert not problems, ("td_lib re-implements what td_lib.core defines once (docs/AUTHORING.md, "
                          "'Layers and conventions'):\n  " + "\n  ".join(problems))


def test_no_public_name_defined_in_two_td_lib_modules():
    where: dict[str, list[str]] = {}
    for p in _td_lib_files():
        if p.name == "__init__.py":
            continue  # packages re-export
        for n in _parse(p).body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not n.name.startswith("_"):
                where.setdefault(n.name, []).append(f"{_rel(p)}:{n.lineno}")
    dup = {k: v for k, v in where.items() if len(v) > 1}
    assert not dup, ("public functions/classes defined in more than one td_lib module: keep one definition "
                     "and import (re-export) it elsewhere, or give the two different names:\n  "
                     + "\n  ".join(f"{k}: {', '.join(v)}" for k, v in sorted(dup.items())))


# ----------------------------------------------------------------------------- keyword-only
def _numeric(p: inspect.Parameter) -> bool:
    ann = p.annotation
    if ann is not inspect.Parameter.empty:
        text = ann if isinstance(ann, str) else getattr(ann, "__name__", None) or repr(ann)
        if re.search(r"\b(int|float)\b", str(text)):
            return True
    d = p.default
    return d is not inspect.Parameter.empty and isinstance(d, (int, float)) and not isinstance(d, bool)


def _positional_numeric(fn) -> list[str]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    params = [p for p in sig.parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in ("self", "cls")]
    return [p.name for p in params if _numeric(p)]


def _where(obj) -> str:
    try:
        return f"{Path(inspect.getsourcefile(obj)).relative_to(REPO)}:{inspect.getsourcelines(obj)[1]}"
    except (TypeError, OSError, ValueError):
        return getattr(obj, "__module__", "?")


def test_public_functions_take_numeric_parameters_keyword_only(td_lib_modules):
    mods, _ = td_lib_modules
    seen: set[int] = set()
    problems = []
    for mod in mods:
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name, None)
            if obj is None or id(obj) in seen:
                continue
            seen.add(id(obj))
            targets = []
            if inspect.isfunction(obj):
                targets.append((f"{obj.__module__}.{obj.__qualname__}", obj))
            elif inspect.isclass(obj):
                for k, v in vars(obj).items():
                    if k.startswith("_"):
                        continue
                    f = v.__func__ if isinstance(v, (staticmethod, classmethod)) else v
                    if inspect.isfunction(f):
                        targets.append((f"{obj.__module__}.{obj.__qualname__}.{k}", f))
            for qual, f in targets:
                nums = _positional_numeric(f)
                if len(nums) > 2:
                    problems.append(f"{qual} ({_where(f)}): numeric parameters {nums} can be passed "
                                    "positionally; put them after `*` (keyword-only)")
    assert not problems, ("public td_lib functions with more than two positional numeric parameters "
                          "(docs/AUTHORING.md, keyword-only rule):\n  " + "\n  ".join(problems))


# ----------------------------------------------------------------------------- public API across layers
def _api_clients() -> list[Path]:
    out = []
    for p in _tracked_py():
        r = _rel(p)
        if r.startswith(("checks/", "benchmarks/", "scripts/", "course/source/", "td_lib/")):
            out.append(p)
    return out


def _private_uses(tree: ast.Module, importer: str | None) -> Iterator[tuple[int, str]]:
    """(line, what) for each private name of a td_lib module used by a file whose own
    td_lib unit is ``_owner(importer)`` (None: not a td_lib file)."""
    mine = _owner(importer) if importer else None

    def foreign(module: str) -> bool:
        return mine is None or _owner(module) != mine

    aliases: dict[str, str] = {}  # local name -> dotted td_lib module
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                if a.name.split(".")[0] != "td_lib":
                    continue
                priv = [part for part in a.name.split(".") if _private(part)]
                if priv and foreign(a.name):
                    yield n.lineno, f"import {a.name} (private module {priv[0]})"
                if a.asname:
                    aliases[a.asname] = a.name
                else:
                    aliases["td_lib"] = "td_lib"
        elif isinstance(n, ast.ImportFrom) and n.level == 0 and (n.module or "").split(".")[0] == "td_lib":
            priv = [part for part in n.module.split(".") if _private(part)]
            if priv and foreign(n.module):
                yield n.lineno, f"from {n.module} import ... (private module {priv[0]})"
            for a in n.names:
                if _private(a.name) and foreign(n.module):
                    yield n.lineno, f"from {n.module} import {a.name}"
                sub = f"{n.module}.{a.name}"
                if _is_td_lib_module(sub):
                    aliases[a.asname or a.name] = sub

    def dotted(e: ast.AST) -> str | None:
        if isinstance(e, ast.Name):
            return aliases.get(e.id)
        if isinstance(e, ast.Attribute):
            base = dotted(e.value)
            if base is not None and _is_td_lib_module(f"{base}.{e.attr}"):
                return f"{base}.{e.attr}"
        return None

    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and _private(n.attr):
            mod = dotted(n.value)
            if mod is not None and foreign(mod):
                yield n.lineno, f"{mod}.{n.attr}"


def test_only_public_td_lib_names_across_layers():
    problems = []
    for p in _api_clients():
        r = _rel(p)
        try:
            tree = _parse(p)
        except SyntaxError as exc:
            problems.append(f"{r}: does not parse ({exc.msg}, line {exc.lineno})")
            continue
        importer = _module_name(p) if r.startswith("td_lib/") else None
        problems += [f"{r}:{line}: {what}" for line, what in sorted(_private_uses(tree, importer))]
    assert not problems, (
        "private td_lib names used outside their own module/package (checks, benchmarks, scripts, "
        "notebooks and other td_lib modules call public API only: make the helper public with a docstring, "
        "or move it; a grading reference goes to checks/grading/):\n  " + "\n  ".join(problems))


def test_notebooks_never_import_checks():
    """The grading kernel has no ``checks``: expected values are baked (checks/grading/bake.py)."""
    problems = []
    for p in _tracked_py():
        r = _rel(p)
        if not r.startswith("course/source/"):
            continue
        for i, line in enumerate(p.read_text().splitlines(), start=1):
            if re.search(r"\bchecks\.(" + "|".join(SECTIONS) + r")\b", line):
                problems.append(f"{r}:{i}: {line.strip()}")
        try:
            tree = _parse(p)
        except SyntaxError:
            continue
        for n in ast.walk(tree):
            mods = ([a.name for a in n.names] if isinstance(n, ast.Import) else
                    [n.module] if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module else [])
            for m in mods:
                if (m == "checks" or m.startswith("checks.")) and "checks.lf_" not in m:
                    problems.append(f"{r}:{n.lineno}: imports {m}")
    assert not problems, ("notebook sources import checks, which the grading kernel does not have; bake the "
                          "expected values (checks/grading/baked.py, python -m checks.grading.bake):\n  "
                          + "\n  ".join(problems))


# ----------------------------------------------------------------------------- import-linter
CONTRACTS = {
    "td_lib.core": {"td_lib.*"},
    "td_lib": {"checks", "tools", "tests"},
    "tools": {"td_lib", "checks"},
    "checks": {"tools"},
}


def test_import_contracts_are_configured_and_make_test_runs_them():
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text()).get("tool", {}).get("importlinter", {})
    have = {}
    for c in cfg.get("contracts", []):
        if c.get("type") == "forbidden":
            for s in c.get("source_modules", []):
                have.setdefault(s, set()).update(c.get("forbidden_modules", []))
    missing = {s: sorted(f - have.get(s, set())) for s, f in CONTRACTS.items() if f - have.get(s, set())}
    assert not missing, f"pyproject.toml [tool.importlinter] lacks forbidden contracts (source -> modules): {missing}"
    make = (REPO / "Makefile").read_text()
    for target in ("test", "lint"):
        m = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", make, re.M)
        assert m, f"Makefile has no `{target}:` recipe"
        assert "lint-imports" in m.group(1), (
            f"the Makefile's `{target}:` recipe does not run `$(VENV)/bin/lint-imports` (the layer contracts)")


def test_lint_imports_passes():
    exe = Path(sys.executable).parent / "lint-imports"
    assert exe.exists(), f"{exe} missing: import-linter is pinned in requirements.txt; run `make setup`"
    p = subprocess.run([str(exe)], cwd=REPO, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})
    out = p.stdout[p.stdout.find("Contracts"):] if "Contracts" in p.stdout else p.stdout
    assert p.returncode == 0, (f"lint-imports found broken layer contracts (pyproject.toml):\n"
                               f"{out[-4000:]}{p.stderr[-2000:]}")


# ----------------------------------------------------------------------------- the detectors themselves
def test_the_detectors_catch_what_they_should():
    """Each ast rule above fails on a small bad example (so a passing suite means something)."""
    # (SP stands for the attribute, so that this file holds no such string itself)
    edits = _sys_path_edits(ast.parse((
        "import sys\nimport sys as S\nfrom sys import path as P\nSP.insert(0, 'x')\nS.path.append('y')\n"
        "P.extend(['z'])\nSP[:0] = ['w']\nSP += ['v']\ncfg = 'import sys\\nSP.insert(0, r)'\n"
        "ok = SP[0]\nfound = 'x' in SP\n").replace("SP", "sys" + ".path")))
    assert sorted(line for line, _ in edits) == [4, 5, 6, 7, 8, 9], f"sys.path edits detected: {edits}"
    client = ast.parse("from td_lib.cnn_lcn.odes import _rhs\nfrom td_lib import mixed_cumulant\n"
                       "import td_lib.hermite as H\n"
                       "import td_lib\nfrom td_lib.cnn_lcn import observables as obs\nmixed_cumulant._x\nH._y\n"
                       "td_lib.kernels._z\nobs._V_closed\nmixed_cumulant.kappa4_v\nmixed_cumulant.__name__\n"
                       "from td_lib.early_linear._shared import helper\n")
    uses = sorted(line for line, _ in _private_uses(client, None))
    assert uses == [1, 6, 7, 8, 9, 12], f"private uses detected in a check: {list(_private_uses(client, None))}"
    inside = ast.parse("from td_lib.cnn_lcn.odes import _rhs\nfrom td_lib.core.gaussian import _legendre_pieces\n")
    assert [line for line, _ in _private_uses(inside, "td_lib.cnn_lcn.sgd")] == [2], \
        "inside td_lib.cnn_lcn, its own private names are allowed and td_lib.core's are not"
    assert sorted(line for line, _ in _private_uses(inside, "td_lib.mixed_cumulant")) == [1, 2], \
        "a top-level module owns only itself"
    table = ast.parse("A = {'relu': lambda z: z, 'tanh': np.tanh}\nC = {'relu': 'C0', 'tanh': 'C1'}\n"
                      "B = {'relu': (f, df), 'gelu': (g, dg)}\nQ = {'relu': (0.5, 1), 'erf': (0.1, 2)}\n")
    assert sorted(n.lineno for n in ast.walk(table) if isinstance(n, ast.Dict) and _is_activation_table(n)) == [1, 3], \
        "a dict of formulas keyed by activation names is a table; a dict of plot colours or numbers is not"

    def f(a: float, b: int, c, *, d: float = 1.0):
        pass

    def g(x, y=2, z=0.5, flag=True):
        pass

    def h(self, n: int | None, eta: float, T=3):
        pass

    assert _positional_numeric(f) == ["a", "b"] and _positional_numeric(g) == ["y", "z"], "numeric parameters"
    assert _positional_numeric(h) == ["n", "eta", "T"], "annotations (strings here) read, self excluded"
