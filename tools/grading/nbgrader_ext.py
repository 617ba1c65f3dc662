"""nbgrader preprocessors of the course (configured in ``course/nbgrader_config.py``).

They make the grading promises hold whatever shell, HOME or IPython profile the
instructor runs nbgrader from:

- :class:`ReleaseAwareOverwriteCells` (autograde): nbgrader stores a test cell's checksum
  *with* its hidden tests, then compares it with the submitted cell, which was released
  *without* them, so every untouched test cell with hidden tests is reported as changed
  (nbgrader issue #1961). This subclass recognises the released form of the cell, restores
  the hidden tests silently, and still warns about (and restores) a cell the student edited.
- :class:`ScrubHiddenOutputs` (generate_feedback, before ``ClearHiddenTests``): removes from
  every output (streams, results, tracebacks) each line that reproduces a hidden-test source
  line or marker, so neither a verbose traceback nor a student's code that prints the
  running cell can put a hidden test into the feedback.
- the pieces the grading executor (``tools/grading/``) uses, kept here as plain functions and
  constants: :class:`OutputCap` (what a cell keeps of its outputs, decided message by message,
  with :func:`cap_text` and :func:`cap_error`), :data:`KERNEL_FLUSH_SRC` (the kernel sends its
  output in small pieces and waits for a slow grader), :func:`error_output` and the error names of
  the budgets (:data:`BUDGET_ENAME`, :data:`KERNEL_DIED`, :data:`OUTPUT_LOST`). The executor
  itself, nbgrader's ``Execute`` as the course runs it (demo cells skipped, outputs capped, a time
  budget per notebook, a dead kernel restarted), is :class:`tools.grading.execute.GradingExecute`;
  output that reaches the grader by other ways (``tools/grading/remote_tests.py`` calling a student's
  function from a test runner) uses :class:`OutputCap` the same way.
"""

from __future__ import annotations

import collections
import json
import re

from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor, OverwriteCells

from tools import nbcore
from tools.nbcore import secret_lines

BEGIN, END = nbcore.HIDDEN_DELIMITERS
REMOVED = "[line removed: it showed hidden-test source]"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
def released_source(source: str) -> str:
    """``source`` as ``generate_assignment`` releases it (hidden regions removed)."""
    cell = NotebookNode(source=source, cell_type="code", metadata={})
    ClearHiddenTests(enforce_metadata=False)._remove_hidden_test_region(cell)
    return cell.source


def scrub_text(text: str, secrets: set[str]) -> tuple[str, int]:
    """Drop every line of ``text`` that shows a secret line or a marker; count the drops."""
    kept, dropped = [], 0
    for line in text.split("\n"):
        plain = _ANSI.sub("", line)
        if BEGIN in plain or END in plain or any(s in plain for s in secrets):
            kept.append(REMOVED)
            dropped += 1
        else:
            kept.append(line)
    return "\n".join(kept), dropped


class ScrubHiddenOutputs(NbGraderPreprocessor):
    """Remove hidden-test source from every output of the notebook (feedback step)."""

    def preprocess(self, nb, resources):
        secrets: set[str] = set()
        for cell in nb.cells:
            secrets |= secret_lines(cell.source)
        self._secrets = secrets
        self._dropped = 0
        nb, resources = super().preprocess(nb, resources)
        if self._dropped:
            self.log.warning("Removed %d output line(s) showing hidden-test source", self._dropped)
        return nb, resources

    def _scrub(self, text):
        if isinstance(text, list):  # nbformat may keep multiline strings as lists
            text = "".join(text)
        new, n = scrub_text(text, self._secrets)
        self._dropped += n
        return new

    def preprocess_cell(self, cell, resources, cell_index):
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "stream":
                out["text"] = self._scrub(out.get("text", ""))
            elif kind in ("execute_result", "display_data"):
                for mime, value in list(out.get("data", {}).items()):
                    if isinstance(value, (str, list)) and mime.startswith("text/"):
                        out["data"][mime] = self._scrub(value)
            elif kind == "error":
                out["evalue"] = self._scrub(out.get("evalue", ""))
                out["traceback"] = [self._scrub(t) for t in out.get("traceback", [])]
        return cell, resources


class ReleaseAwareOverwriteCells(OverwriteCells):
    """OverwriteCells that accepts the released form of a test cell (nbgrader #1961)."""

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None and utils.is_locked(cell):
            try:
                source_cell = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                source_cell = None
            if source_cell is not None and source_cell.locked and BEGIN in source_cell.source:
                if cell.source == released_source(source_cell.source):
                    # Untouched: put the hidden tests back; the parent then finds no change.
                    cell.source = source_cell.source
        return super().preprocess_cell(cell, resources, cell_index)


# ------------------------------------------------------------------------ output caps
CUT_NOTE = ("[... {cut} of output cut while grading: the cell printed more than {limit}; "
            "the first and last {half} are kept ...]")
DATA_CUT_NOTE = ("[... {cut} of this {what} cut while grading: it is over {limit}; "
                 "the first and last {half} are kept ...]")
DISPLAY_NOTE = ("[{n} display output(s), {size} in all, not kept while grading: a cell keeps at most {limit} "
                "of images and other display data]")
DISPLAY_OVERHEAD = 1000  # what a rich output costs at least (a NotebookNode and its keys): bounds their number


def nbytes(text: str) -> int:
    """UTF-8 size of ``text`` (constant time for ASCII text)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def head_bytes(text: str, n: int) -> str:
    """The longest prefix of ``text`` of at most ``n`` UTF-8 bytes."""
    if n <= 0:
        return ""
    if text.isascii():
        return text[:n]
    return text[:n].encode("utf-8", "surrogatepass")[:n].decode("utf-8", "ignore")


def tail_bytes(text: str, n: int) -> str:
    """The longest suffix of ``text`` of at most ``n`` UTF-8 bytes."""
    if n <= 0:
        return ""
    if text.isascii():
        return text[-n:]
    return text[-n:].encode("utf-8", "surrogatepass")[-n:].decode("utf-8", "ignore")


def human(n: float) -> str:
    """``524288500`` -> ``'524.3 MB'``, ``100000`` -> ``'100 kB'`` (decimal units)."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if round(n / size, 1) >= 1:
            return f"{n / size:.1f}".removesuffix(".0") + f" {unit}"
    return f"{int(n)} B"


def cap_text(text: str, limit: int, what: str = "text") -> str:
    """``text`` if it holds at most ``limit`` bytes, else its head and tail (half each) around
    one line saying how much was cut (a value of a rich output, an error message)."""
    if limit <= 0 or nbytes(text) <= limit:
        return text
    head, tail = head_bytes(text, limit // 2), tail_bytes(text, limit // 2)
    note = DATA_CUT_NOTE.format(cut=human(nbytes(text) - nbytes(head) - nbytes(tail)), what=what,
                                limit=human(limit), half=human(limit // 2))
    return f"{head}\n{note}\n{tail}"


def cap_error(content: dict, limit: int) -> dict:
    """Cap an error output (or reply) in place: ``evalue`` and the traceback keep their head
    and tail, at most ``limit`` bytes each."""
    if limit <= 0:
        return content
    if isinstance(content.get("evalue"), str):
        content["evalue"] = cap_text(content["evalue"], limit, "error message")
    tb = [t if isinstance(t, str) else str(t) for t in content.get("traceback") or []]
    if sum(map(nbytes, tb)) > limit:
        half = limit // 2
        tb = [cap_text(t, half, "traceback line") for t in tb]
        head, used = [], 0
        for t in tb:
            if head and used + nbytes(t) > half:
                break
            head.append(t)
            used += nbytes(t)
        tail, used = [], 0
        for t in reversed(tb[len(head):]):
            if tail and used + nbytes(t) > half:
                break
            tail.insert(0, t)
            used += nbytes(t)
        left_out = len(tb) - len(head) - len(tail)
        tb = head + ([f"[... {left_out} traceback entries cut while grading ...]"] if left_out else []) + tail
    content["traceback"] = tb
    return content


class OutputCap:
    """What one cell keeps of its outputs, decided message by message (no kernel involved).

    Stream text (stdout and stderr together): the first ``limit - limit // 2`` bytes go to the
    notebook as they arrive; after that a bounded buffer keeps the last ``limit // 2`` bytes and
    counts everything pushed out of it as cut. :meth:`finish` returns the buffered tail as
    stream outputs, after one line (:data:`CUT_NOTE`) saying how much was cut, if anything was.
    Rich outputs (``display_data``, ``execute_result``): each ``text/*`` value is cut to its
    head and tail (:func:`cap_text`); the cell's rich outputs together keep at most
    ``display_limit`` bytes, further ones are dropped and counted (:meth:`display_note`).
    A limit of 0 means no limit. Memory: at most ``limit + display_limit`` bytes per cell
    (plus the message being processed), however much arrives.
    """

    def __init__(self, limit: int, display_limit: int) -> None:
        self.limit, self.display_limit = limit, display_limit
        self.reset()

    def reset(self) -> None:
        """Forget everything (the cell's outputs were cleared)."""
        self.head_left = self.limit - self.limit // 2
        self.tail_limit = self.limit // 2
        self.tail: collections.deque[list] = collections.deque()  # [stream name, text, bytes]
        self.tail_size = 0
        self.seen = 0  # stream bytes received
        self.cut = 0  # stream bytes dropped
        self.head_ends_line = True
        self.display_used = 0
        self.dropped, self.dropped_bytes = 0, 0
        self.finished = False

    def stream(self, name: str, text: str) -> str:
        """Take one stream message; return the part of it to show now (may be empty)."""
        n = nbytes(text)
        self.seen += n
        if self.limit <= 0:
            return text
        if n <= self.head_left:
            self.head_left -= n
            if text:
                self.head_ends_line = text.endswith("\n")
            return text
        head = head_bytes(text, self.head_left)
        self.head_left = 0
        if head:
            self.head_ends_line = head.endswith("\n")
        self._to_tail(name, text[len(head):])
        return head

    def _to_tail(self, name: str, text: str) -> None:
        n = nbytes(text)
        if n > self.tail_limit:
            kept = tail_bytes(text, self.tail_limit)
            self.cut += n - nbytes(kept)
            text, n = kept, nbytes(kept)
        if self.tail and self.tail[-1][0] == name:
            self.tail[-1][1] += text
            self.tail[-1][2] += n
        else:
            self.tail.append([name, text, n])
        self.tail_size += n
        while self.tail_size > self.tail_limit:
            first, excess = self.tail[0], self.tail_size - self.tail_limit
            if first[2] <= excess:
                self.tail.popleft()
                dropped = first[2]
            else:
                kept = tail_bytes(first[1], first[2] - excess)
                dropped = first[2] - nbytes(kept)
                first[1], first[2] = kept, first[2] - dropped
            self.tail_size -= dropped
            self.cut += dropped

    def finish(self) -> list[NotebookNode]:
        """The outputs that follow the head: the cut note (if anything was cut), then the tail."""
        if self.finished:
            return []
        self.finished = True
        outs: list[NotebookNode] = []
        if self.cut:
            note = CUT_NOTE.format(cut=human(self.cut), limit=human(self.limit), half=human(self.limit // 2))
            name = self.tail[0][0] if self.tail else "stdout"
            outs.append(NotebookNode(output_type="stream", name=name,
                                     text=("" if self.head_ends_line else "\n") + note + "\n"))
        for name, text, _ in self.tail:
            if outs and outs[-1].name == name:
                outs[-1].text += text
            else:
                outs.append(NotebookNode(output_type="stream", name=name, text=text))
        self.tail.clear()
        self.tail_size = 0
        return outs

    def display(self, data: dict, count: bool = True) -> dict | None:
        """A rich output's mime bundle with its text values capped, or None when the cell's
        display budget is used up (``count=False``: cap the text, do not charge the budget)."""
        out, size = {}, 0
        for mime, value in data.items():
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                value = "".join(value)  # nbformat's multiline strings
            if isinstance(value, str):
                if mime.startswith("text/"):
                    value = cap_text(value, self.limit, mime)
                size += nbytes(value)
            else:
                size += len(json.dumps(value, default=str))
            out[mime] = value
        if not count:
            return out
        size = max(size, DISPLAY_OVERHEAD)
        if self.display_limit > 0 and self.display_used + size > self.display_limit:
            self.dropped += 1
            self.dropped_bytes += size
            return None
        self.display_used += size
        return out

    def display_note(self) -> str:
        return DISPLAY_NOTE.format(n=self.dropped, size=human(self.dropped_bytes), limit=human(self.display_limit))


# Run in the kernel at start-up (IPKernelApp.exec_lines). ipykernel buffers a stream for 0.2 s
# and sends the buffer, however large, as one message; here a buffer is sent as soon as it
# holds EVERY characters (the writer waits for it), in messages of at most EVERY characters
# (one huge write too), so a flood reaches the grader as small messages it caps one by one.
# Patched on the class: IPython's history tee rebinds ``stream.write`` on the instance around
# every cell; these two methods are not exposed to it. And the IOPub socket waits for a slow
# grader instead of dropping messages (XPUB_NODROP, a short queue: set on its own thread), so
# the end of a flood and the cell's closing status are never lost, and the flood is paced by
# the grader. No braces: jupyter_client formats {name} patterns in kernel arguments.
KERNEL_FLUSH_SRC = """\
import ipykernel.iostream as _iostream
_OutStream = _iostream.OutStream
def _flush_buffers(self, _flush_buffers=_OutStream._flush_buffers, _every=EVERY):
    for parent, data in _flush_buffers(self):
        for start in range(0, max(len(data), 1), _every):
            yield parent, data[start:start + _every]
def _schedule_flush(self, _schedule_flush=_OutStream._schedule_flush, _every=EVERY):
    try:
        size = sum(b.tell() for b in list(self._buffers.values()))
    except Exception:
        size = 0
    if size >= _every:
        self.flush()
    else:
        _schedule_flush(self)
_OutStream._flush_buffers = _flush_buffers
_OutStream._schedule_flush = _schedule_flush
try:
    import zmq
    from IPython import get_ipython
    _thread = get_ipython().kernel.iopub_thread
    def _wait_for_the_grader(sock=_thread.socket, zmq=zmq):
        sock.setsockopt(zmq.SNDHWM, 16)
        sock.setsockopt(zmq.XPUB_NODROP, 1)
    _thread.schedule(_wait_for_the_grader)
except Exception:
    pass
"""


def kernel_flush_argument(every: int) -> str | None:
    """The kernel command-line argument that installs :data:`KERNEL_FLUSH_SRC` (None: off)."""
    if every <= 0:
        return None
    src = KERNEL_FLUSH_SRC.replace("EVERY", str(int(every)))
    return f"--IPKernelApp.exec_lines=exec({src!r}, dict(__name__='grading_flush'))"


def error_output(ename: str, evalue: str) -> NotebookNode:
    """An error output as the kernel would record it (minimal traceback)."""
    return NotebookNode(output_type="error", ename=ename, evalue=evalue,
                        traceback=[f"\x1b[0;31m{ename}\x1b[0m: {evalue}"])


BUDGET_ENAME = "GradingBudgetExceeded"  # a cell not run (or cut) when the notebook's time budget ran out
KERNEL_DIED = "KernelDied"  # a cell under which the kernel died
OUTPUT_LOST = "GradingOutputLost"  # a cell whose output's end did not reach the grader
