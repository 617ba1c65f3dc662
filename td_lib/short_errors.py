"""Test-cell failures shown as their message, in the student's JupyterLab.

A failing test cell raises an ``AssertionError`` whose message says what is wrong; an unwritten
exercise raises a ``NotImplementedError`` that names the function to write. IPython shows
either under a traceback that repeats the test's source, and the message comes last. In the
handout's environment (and on the class hub) the kernel runs :func:`install` at start-up
(``etc/ipython/ipython_kernel_config.json`` of the handout's wheel, ``tools/build/handout.py``): an
exception of those two kinds *with a message* is then shown as the message alone, with the
line of the cell that raised it. Everything else keeps IPython's full traceback, and so does
an ``assert`` without a message (a student's own check). Grading kernels do not install it.

Examples
--------
>>> lines = short_traceback(AssertionError("f(2) returned 5; expected 4"), None)
>>> lines[0]
'AssertionError: f(2) returned 5; expected 4'
>>> short_traceback(AssertionError(), None) is None   # no message: the full traceback
True
"""

from __future__ import annotations

import types
from typing import Any

__all__ = ["KINDS", "install", "short_traceback"]

#: The exceptions a test cell or an unwritten stub raises with a message for the student.
KINDS: tuple[type[BaseException], ...] = (AssertionError, NotImplementedError)


def _cell_line(tb: types.TracebackType | None) -> int | None:
    """The line of the cell being run at which the exception surfaced: the first frame that
    belongs to a notebook cell (later ones may be other cells, e.g. the function called)."""
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.startswith("<ipython-input-") or "/ipykernel_" in name or name.startswith("<cell"):
            return tb.tb_lineno
        tb = tb.tb_next
    return None


def short_traceback(value: BaseException, tb: types.TracebackType | None) -> list[str] | None:
    """The lines to show for ``value``: its type and message, and where in the cell it was
    raised; ``None`` when the exception has no message (then IPython's traceback is shown)."""
    message = str(value).strip()
    if not message:
        return None
    lines = [f"{type(value).__name__}: {message}"]
    line = _cell_line(tb)
    if line is not None:
        lines.append(f"(raised at line {line} of this cell; run `%tb` for the full traceback)")
    return lines


def install(shell: Any = None) -> bool:
    """Show :data:`KINDS` with a message as the message alone in ``shell`` (default: the
    running IPython). Returns False outside IPython."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None:
        return False

    def handler(self, etype, value, tb, tb_offset=None):
        import sys

        sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb  # for %tb
        stb = short_traceback(value, tb)
        if stb is None:
            stb = self.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
        self._showtraceback(etype, value, stb)
        return stb

    shell.set_custom_exc(KINDS, handler)
    return True
