"""What a test cell and a demo tell the student; in the handout, general tools off while graded.

A test cell calls the student's function through :func:`own_work`, which

- turns an unfilled stub (the bare ``raise NotImplementedError()`` of the release) into a
  message naming the function to write;
- switches off, for the duration of the call, the library functions :data:`COUNTERPARTS` lists
  for the exercise: calling one, directly or through another td_lib function, raises a
  :class:`DelegationError` that names the student's function and the library function, says
  that the library function is not there when the work is graded, and asks to write it.

The library itself names no exercise: :data:`COUNTERPARTS` is empty here. Which td_lib functions
answer which exercise is the instructor's registry (``checks/grading/exercises.py``); the editions
are the anti-copy mechanism. The handout's edition of td_lib lacks every answer, but keeps the
general tools that engines across the course are built on (the SGD step, the integral J₂, the
generalisation error, the arc-cosine kernel), while the grading edition of a notebook lacks those
its exercises ask for. The handout's edition is generated with :data:`COUNTERPARTS` holding, per
exercise, exactly those names (``tools.build.student_edition.home_registry``): a function that
delegates to one fails its visible test at home with the same reason it would score 0 when
graded. Outside a graded call they work as usual, for the demos.

Demos that want the student's function but must run without it use :func:`student_or` (a
fallback function) or :func:`demo_result` (a reference *result*, shipped as data with the
notebook: the handout's edition of td_lib has no answer to fall back on). :func:`passed` prints the
line a test cell ends its visible tests with.

Examples
--------
>>> from td_lib.core import gaussian
>>> COUNTERPARTS["my_exercise"] = ("td_lib.core.gaussian.gauss_normal_nodes",)  # any td_lib function
>>> def my_nodes(n):
...     return gaussian.gauss_normal_nodes(n)
>>> try:
...     own_work(my_nodes, "my_exercise")(3)
... except DelegationError as e:
...     print(str(e)[:100])
`my_nodes` calls `td_lib.core.gaussian.gauss_normal_nodes`, which is not there when your work is gra
>>> len(my_nodes(3)[0])  # back on once the graded call returns
3
>>> del COUNTERPARTS["my_exercise"]
"""

from __future__ import annotations

import functools
import importlib
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["COUNTERPARTS", "DelegationError", "delegation_error", "demo_result", "library_off", "own_work", "passed",
           "student_or"]

#: exercise (answer cell ``grade_id``) -> the td_lib functions switched off while a test cell
#: calls the student's function for it. Empty in the library itself, which knows no exercise: the
#: handout's edition is generated with the general tools its grading editions cut (the home
#: registry, ``tools.build.student_edition.home_registry``, from ``checks/grading/exercises.py``).
COUNTERPARTS: dict[str, tuple[str, ...]] = {}


class DelegationError(RuntimeError):
    """A graded function called a library counterpart of its own exercise."""


_lock = threading.RLock()
_graded: list[str] = []  # names of the student's functions whose graded calls are running, innermost last
_depth: dict[int, int] = {}  # id(function) -> how many active library_off blocks hold it
_saved: dict[int, types.CodeType] = {}


def _resolve(dotted: str) -> Any | None:
    """Import ``package.module.attr[.attr]``; None when it is not installed here."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _functions(obj: Any) -> list[types.FunctionType]:
    """The plain Python functions behind ``obj`` (a function, a method, a wrapper, a class)."""
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    if isinstance(obj, type):
        return [f for v in vars(obj).values() for f in _functions(v)]
    out = []
    while obj is not None:
        if isinstance(obj, types.FunctionType):
            out.append(obj)
        obj = getattr(obj, "__wrapped__", None)
    return out


_BLOCKED: dict[tuple[str, types.CodeType], types.CodeType] = {}


def _blocked_code(dotted: str, original: types.CodeType) -> types.CodeType:
    """A code object that raises DelegationError, with the free variables of ``original``.

    It runs with the counterpart's module globals, so it reaches the exception class through
    the ``__import__`` builtin rather than a global name. Built once per counterpart (test
    cells call ``own_work`` in loops).
    """
    key = (dotted, original)
    if key not in _BLOCKED:
        _BLOCKED[key] = _build_blocked(dotted, original)
    return _BLOCKED[key]


def _build_blocked(dotted: str, original: types.CodeType) -> types.CodeType:
    free = original.co_freevars
    src = ("def _outer():\n" + "".join(f"    {v} = None\n" for v in free)
           + "    def blocked(*args, **kwargs):\n"
           + "".join(f"        {v}\n" for v in free)
           + "        raise __import__('td_lib.own_work', fromlist=['delegation_error'])"
           + f".delegation_error({dotted!r})\n"
           + "    return blocked\n")
    ns: dict[str, Any] = {}
    exec(compile(src, f"<{dotted} is switched off>", "exec"), ns)
    code = ns["_outer"]().__code__
    if hasattr(code, "co_qualname"):
        return code.replace(co_name=original.co_name, co_qualname=original.co_qualname)
    return code.replace(co_name=original.co_name)


def delegation_error(dotted: str) -> DelegationError:
    """The error a switched-off ``dotted`` raises: it names the graded function that called it
    (the innermost :func:`own_work` call running; "your function" under a bare
    :func:`library_off`).

    Examples
    --------
    >>> print(delegation_error("td_lib.core.gaussian.gauss_normal_nodes"))  # doctest: +ELLIPSIS
    `your function` calls `td_lib.core.gaussian.gauss_normal_nodes`, which is not there when your work is graded: ...
    """
    who = _graded[-1] if _graded else "your function"
    return DelegationError(
        f"`{who}` calls `{dotted}`, which is not there when your work is graded: write it yourself "
        "(the test checks your own implementation, so your function must not call it, directly or through "
        "another td_lib function).")


@contextmanager
def library_off(exercise: str, *extra: str) -> Iterator[None]:
    """Switch off the library counterparts of ``exercise`` (plus ``extra`` dotted names).

    Every alias of a counterpart is affected (its code object is swapped), so importing it
    under another name does not help. Re-entrant and restored on exit, errors included.
    """
    names = COUNTERPARTS.get(exercise, ()) + tuple(extra)
    funcs: dict[int, tuple[types.FunctionType, str]] = {}
    for dotted in names:
        obj = _resolve(dotted)
        for f in _functions(obj) if obj is not None else []:
            funcs.setdefault(id(f), (f, dotted))
    with _lock:
        for key, (f, dotted) in funcs.items():
            if _depth.get(key, 0) == 0:
                _saved[key] = f.__code__
                blocked = _blocked_code(dotted, f.__code__)
                f.__code__ = blocked
            _depth[key] = _depth.get(key, 0) + 1
    try:
        yield
    finally:
        with _lock:
            for key, (f, _) in funcs.items():
                _depth[key] -= 1
                if _depth[key] == 0:
                    f.__code__ = _saved.pop(key)
                    del _depth[key]


@contextmanager
def _grading(name: str) -> Iterator[None]:
    """Record that the graded call of the student's ``name`` runs (for :func:`delegation_error`)."""
    with _lock:
        _graded.append(name)
    try:
        yield
    finally:
        with _lock:
            _graded.pop()


def _is_bare_stub(exc: NotImplementedError, fn: Callable) -> bool:
    """True when ``exc`` is the release's ``raise NotImplementedError()`` in ``fn`` itself."""
    code = getattr(fn, "__code__", None)
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return not exc.args and tb is not None and tb.tb_frame.f_code is code


def own_work(fn: Callable, exercise: str) -> Callable:
    """``fn`` wrapped for grading: counterparts of ``exercise`` off, stubs named.

    Parameters
    ----------
    fn
        The student's function.
    exercise
        The ``grade_id`` of the answer cell that defines ``fn`` (a key of
        :data:`COUNTERPARTS`, or any other id when the exercise has no counterpart).
    """
    if not callable(fn):
        raise TypeError(f"{exercise}: expected the function you wrote, got {type(fn).__name__} {fn!r}")
    name = getattr(fn, "__name__", repr(fn))

    @functools.wraps(fn)
    def graded(*args, **kwargs):
        with library_off(exercise), _grading(name):
            try:
                return fn(*args, **kwargs)
            except NotImplementedError as exc:
                if _is_bare_stub(exc, fn):
                    raise NotImplementedError(
                        f"`{name}` is not written yet: replace `raise NotImplementedError()` in its cell "
                        "by your implementation, run that cell, then run this test again") from None
                raise

    return graded


def student_or(student: Callable, fallback: Callable, probe: Callable[[Callable], Any], what: str,
               agree: Callable[[Any, Any], bool] | None = None) -> Callable:
    """The student's function for a demo when it works, else ``fallback`` (said so).

    ``probe(f)`` runs a small call; the student's function is used when it returns without
    raising (and, with ``agree``, when ``agree(probe(student), probe(fallback))`` holds).
    Prints one line saying which version the demo uses.
    """
    try:
        got = probe(student)
    except NotImplementedError:
        print(f"{what}: your function is not written yet, so this demo uses the library's version.")
        return fallback
    except Exception as exc:  # noqa: BLE001 - any failure of the student's code means fallback
        print(f"{what}: your function failed on a small test call ({type(exc).__name__}: {exc}); "
              "this demo uses the library's version.")
        return fallback
    if agree is not None and not agree(got, probe(fallback)):
        print(f"{what}: your function disagrees with the library on a small test call; "
              "this demo uses the library's version (run the test cell above to see why).")
        return fallback
    print(f"{what}: using your function.")
    return student


def passed(*names: str) -> None:
    """Print the line a test cell ends its visible tests with, so a student sees that this part
    is right and that grading checks more.

    Examples
    --------
    >>> passed("kappa4_vx")
    ✓ kappa4_vx passes the visible tests. When your work is graded, hidden tests check more cases.
    """
    what = " and ".join(names) if names else "Your code"
    verb = "pass" if len(names) > 1 else "passes"
    print(f"✓ {what} {verb} the visible tests. When your work is graded, hidden tests check more cases.")


def _arrays(value: Any) -> Any:
    """Baked data as a demo uses it: lists of numbers become arrays, containers are walked."""
    import numpy as np

    if isinstance(value, dict):
        return {k: _arrays(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_arrays(v) for v in value)
    if isinstance(value, list):
        try:
            arr = np.asarray(value)
            if arr.dtype.kind not in "iub":   # integers stay integers; None (never reached) becomes NaN
                arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            return [_arrays(v) for v in value]
        return arr
    return value


def demo_result(compute: Callable[[], Any], reference: Any, what: str, *, rtol: float | None = None) -> Any:
    """What a demo computes with the student's functions, or the reference result.

    ``compute()`` runs the demo's computation, which calls the functions the student wrote
    (passed to the library's engine, as a student builds the piece an engine then uses).
    While one of them is unwritten or fails, the demo still runs: this returns
    ``reference``, the result of the same computation with the course's own answers,
    computed on the instructor's side and shipped with the notebook as plain numbers (a
    baked region, ``python -m checks.grading.bake``). Prints one line saying which it is.

    Parameters
    ----------
    compute
        No-argument callable returning the demo's result (numbers, arrays, dicts of them).
    reference
        The baked result of the same computation: lists of numbers become arrays.
    what
        The student's functions the demo needs, as the message names them.
    rtol
        When given, the student's result is also compared with the reference (same structure,
        numbers within ``rtol``, relative to each entry and to the largest of its array; above
        the rounding of the baked digits) and a difference is pointed out; the demo still shows
        the student's result.
    """
    try:
        out = compute()
    except NotImplementedError:
        print(f"{what}: not written yet, so this demo shows the reference results shipped with the "
              "notebook. Run it again once your function passes its test.")
        return _arrays(reference)
    except Exception as exc:  # noqa: BLE001 - any failure of the student's code means the reference
        print(f"{what}: your code failed in this demo ({type(exc).__name__}: {str(exc)[:200]}), so it shows "
              "the reference results shipped with the notebook.")
        return _arrays(reference)
    if rtol is not None and not _agrees(out, _arrays(reference), rtol):
        print(f"{what}: this demo uses your functions, and its results differ from the course's reference "
              f"(beyond a relative {rtol:g}): run the test cells above to see why.")
        return out
    print(f"{what}: this demo uses your functions.")
    return out


def _agrees(mine: Any, ref: Any, rtol: float) -> bool:
    import numpy as np

    if isinstance(ref, dict):
        return isinstance(mine, dict) and set(mine) >= set(ref) and all(_agrees(mine[k], ref[k], rtol) for k in ref)
    if isinstance(ref, (tuple, list)):
        return isinstance(mine, (tuple, list)) and len(mine) == len(ref) and all(
            _agrees(a, b, rtol) for a, b in zip(mine, ref))
    try:
        a, b = np.asarray(mine, dtype=float), np.asarray(ref, dtype=float)
    except (TypeError, ValueError):
        return mine == ref
    scale = float(np.max(np.abs(b))) if b.size else 0.0   # entries that are 0 are compared at that scale
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=rtol * scale))
