"""The integrity probe: fingerprints of the functions tests rely on, read from the student's kernel.

Before the first cell and after every autograded test cell, the grader asks the kernel (a
silent ``user_expressions`` request) for fingerprints of the functions tests rely on (numpy's
``allclose``/``isclose``/``array_equal``/``testing.*``, ``math.isclose``, builtins such as
``abs``/``all``/``isinstance``, IPython's execution and traceback machinery, AST and input
transformers, trace hooks). A test cell after which any of them differs from the kernel's own
state before the first cell gets an ``IntegrityError`` output (:func:`integrity_error`), so it
scores 0, and the student is flagged.
"""

from __future__ import annotations

from nbformat.notebooknode import NotebookNode

PROBE_NAMES = {
    "builtins": ["abs", "all", "any", "isinstance", "issubclass", "len", "float", "int", "bool", "round",
                 "min", "max", "sum", "sorted", "repr", "str", "type", "print", "hasattr", "getattr",
                 "callable", "zip", "range", "enumerate", "map", "filter", "set", "list", "tuple", "dict",
                 "exec", "eval", "compile", "__import__", "id"],
    "math": ["isclose", "isfinite", "isnan", "fabs", "sqrt"],
    "numpy": ["allclose", "isclose", "array_equal", "array_equiv", "all", "any", "abs", "absolute", "isfinite",
              "isnan", "asarray", "array", "max", "min", "sum", "mean", "linalg.norm", "ndarray"],
    "numpy.testing": ["assert_allclose", "assert_array_almost_equal", "assert_almost_equal", "assert_equal",
                      "assert_array_equal", "assert_array_less", "assert_approx_equal"],
}
PROBE_SRC = r'''
import sys, hashlib, importlib
def _code(c):
    parts = [c.co_code.hex(), repr(c.co_names), repr(c.co_varnames), c.co_filename, str(c.co_firstlineno)]
    parts += [_code(k) if hasattr(k, "co_code") else repr(k) for k in c.co_consts]
    return "|".join(parts)
def _fp(o):
    c = getattr(o, "__code__", None)
    h = hashlib.sha256(_code(c).encode()).hexdigest()[:16] if c is not None else ""
    d = getattr(o, "__defaults__", None)
    return [id(o), type(o).__name__, h, repr(d)[:200] if d is not None else ""]
out = {}
for mod, names in NAMES.items():
    m = importlib.import_module(mod)
    for n in names:
        o = m
        try:
            for part in n.split("."):
                o = getattr(o, part)
        except AttributeError:
            o = None
        out[mod + "." + n] = _fp(o)
from IPython import get_ipython
ip = get_ipython()
for n in ("run_cell", "run_code", "run_ast_nodes", "run_cell_async", "showtraceback", "_showtraceback",
          "showsyntaxerror", "transform_cell"):
    out["ipython." + n] = _fp(getattr(type(ip), n, None)) + [n in ip.__dict__]
out["ipython.ast_transformers"] = [repr(t)[:80] for t in ip.ast_transformers]
_tm = ip.input_transformer_manager
out["ipython.input_transformers"] = [repr(t)[:80] for t in
                                     ip.input_transformers_post + _tm.cleanup_transforms + _tm.line_transforms]
_lib = ("IPython", "ipykernel", "matplotlib", "matplotlib_inline", "comm", "ipywidgets", "tqdm", "torch")
out["ipython.events"] = sorted(f"{k}:{getattr(f, '__module__', '?')}.{getattr(f, '__qualname__', f)}"
                               for k, v in ip.events.callbacks.items() for f in v
                               if not str(getattr(f, "__module__", "")).split(".")[0] in _lib)
out["sys.trace"] = [repr(sys.gettrace()), repr(sys.getprofile())]
out["sys.excepthook"] = _fp(sys.excepthook)
result = __import__("json").dumps(out)
'''
PROBE_EXPR = f"(lambda ns: (exec({PROBE_SRC!r}, ns), ns['result'])[1])({{'NAMES': {PROBE_NAMES!r}}})"
INTEGRITY_ENAME = "IntegrityError"


def probe_diff(before: dict, after: dict) -> list[str]:
    """The fingerprints of ``before`` that ``after`` lacks or holds changed, sorted."""
    return sorted(k for k in set(before) | set(after)
                  if k in before and (k not in after or before[k] != after[k]))


def integrity_error(changed: list[str]) -> NotebookNode:
    """The error output a test cell gets when, after it ran, functions the tests rely on differ
    from the kernel's own before the first cell (``changed``: their names): it scores 0."""
    return NotebookNode(
        output_type="error", ename=INTEGRITY_ENAME,
        evalue="the submission replaced functions the tests rely on: " + ", ".join(changed[:8]),
        traceback=[f"{INTEGRITY_ENAME}: this test cannot be trusted; replaced: {', '.join(changed)}"])
