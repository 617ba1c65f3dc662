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
- :class:`GradingExecute` (autograde): nbgrader's ``Execute`` that does not run cells tagged
  ``demo`` (plots and demonstrations nothing graded depends on; the lint checks that no later
  cell uses a name only a demo defines). Grading a submission then costs what its graded
  computations cost; the demo cell keeps a one-line note in place of its outputs.

Budgets instead of failures (autograde; ``GradingExecute`` is built from the three classes
below, and ``tools/grade.py`` subclasses it with sandboxed kernels, so both grading paths get
them). A flood, a hang or a crash costs the student the affected cells, never the notebook:

- :class:`CappedOutputExecute`: a cell keeps at most ``max_output_bytes`` of text, the head and
  the tail with one line saying how much was cut, capped *while* the messages arrive (the
  grader's memory stays bounded however much a cell prints); rich display data beyond
  ``max_display_bytes`` is replaced by a note. The kernel sends its output in pieces of
  ``kernel_flush_bytes`` and waits for a slow grader rather than dropping messages; the
  grader's sockets drop any message over ``max_message_bytes`` unread.
- :class:`BudgetExecute`: a notebook has ``notebook_budget`` seconds; a cell running when it
  runs out is interrupted, the cells after it are not run and get a ``GradingBudgetExceeded``
  error (graded cells among them score 0).
- :class:`RecoveringExecute`: a cell that kills the kernel (``os._exit``, a segfault, the OOM
  killer) or does not stop when interrupted gets an error; a fresh kernel replays the cells
  run before it (outputs discarded) and grading goes on with the next cell.

:class:`KernelClientExecute` is their common base: how a kernel client is made, replaced and
restarted, with two hooks for subclasses (:meth:`~KernelClientExecute.configure_kernel_client`,
:meth:`~KernelClientExecute.async_on_kernel_restart`). The caps apply to what nbclient
executes; output that reaches the grader by other ways (``tools/remote_tests.py`` calling a
student's function from a test runner) can use :class:`OutputCap` the same way.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import copy
import json
import math
import re
import time

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async, run_hook, run_sync
from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, Execute, NbGraderPreprocessor, OverwriteCells
from traitlets import Integer

from tools import nbcore

BEGIN, END = nbcore.HIDDEN_DELIMITERS
REMOVED = "[line removed: it showed hidden-test source]"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
MIN_LINE = 8  # shorter hidden lines ("else:", "pass") carry nothing worth hiding
DEMO_TAG = "demo"
DEMO_NOTE = "[demo cell: not run while grading; run the notebook to see it]\n"


def is_demo(cell) -> bool:
    """A code cell tagged ``demo`` (skipped by :class:`GradingExecute`)."""
    return cell.get("cell_type") == "code" and DEMO_TAG in cell.get("metadata", {}).get("tags", [])


def secret_lines(source: str) -> set[str]:
    """The stripped source lines inside the hidden-test regions of ``source`` (the lines of
    :func:`tools.nbcore.hidden_lines`, marker lines left out), of :data:`MIN_LINE` characters or more."""
    lines = source.splitlines()
    return {s for i in nbcore.hidden_lines(source) if len(s := lines[i - 1].strip()) >= MIN_LINE
            and BEGIN not in s and END not in s}


#: the former name, kept for ``tests/test_nbgrader_ext.py`` until it calls :func:`secret_lines`
#: (``tests/test_one_place.py`` lists this alias as pending: remove both together)


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


def runs_code(cell) -> bool:
    """A cell nbclient would send to the kernel (code, not blank)."""
    return cell.get("cell_type") == "code" and bool(cell.get("source", "").strip())


def error_output(ename: str, evalue: str) -> NotebookNode:
    """An error output as the kernel would record it (minimal traceback)."""
    return NotebookNode(output_type="error", ename=ename, evalue=evalue,
                        traceback=[f"\x1b[0;31m{ename}\x1b[0m: {evalue}"])


class KernelClientExecute(Execute):
    """nbgrader's ``Execute`` whose kernel client can be configured, replaced and restarted.

    :meth:`configure_kernel_client` is called on every new client before its channels connect
    (:class:`CappedOutputExecute` sets socket limits there); :meth:`async_reconnect_client`
    gives the running kernel a fresh client (ZMQ does not reconnect a socket that dropped an
    oversized message); :meth:`async_restart_kernel` restarts the kernel through its kernel
    manager (``km.restart_kernel``, so a sandboxing manager restarts it sandboxed) and calls
    :meth:`async_on_kernel_restart`, which subclasses that keep per-kernel state override.
    """

    def configure_kernel_client(self, kc) -> None:
        """Adjust a new kernel client before its channels connect (default: nothing)."""

    async def async_on_kernel_restart(self) -> None:
        """Called after a kernel restart, on the fresh kernel, before anything runs on it."""

    async def async_start_new_kernel_client(self):
        """nbclient 0.11's, with :meth:`configure_kernel_client` before the channels start."""
        assert self.km is not None
        try:
            self.kc = self.km.client()
            self.configure_kernel_client(self.kc)
            await ensure_async(self.kc.start_channels())
            await ensure_async(self.kc.wait_for_ready(timeout=self.startup_timeout))
        except Exception as e:
            self.log.error("Error occurred while starting new kernel client for kernel %s: %s",
                           getattr(self.km, "kernel_id", None), e)
            await self._async_cleanup_kernel()
            raise
        self.kc.allow_stdin = False
        await run_hook(self.on_notebook_start, notebook=self.nb)
        return self.kc

    start_new_kernel_client = run_sync(async_start_new_kernel_client)

    async def _async_stop_client(self) -> None:
        if self.kc is not None:
            with contextlib.suppress(Exception):
                await ensure_async(self.kc.stop_channels())
            self.kc = None

    async def async_reconnect_client(self, wait: float = 10.0) -> bool:
        """A fresh client for the running kernel; whether the kernel answered on it within
        ``wait`` seconds (it is alive and idle: a kernel busy with a cell does not answer)."""
        await self._async_stop_client()
        if self.km is None or not await ensure_async(self.km.is_alive()):
            return False
        self.kc = self.km.client()
        self.configure_kernel_client(self.kc)
        await ensure_async(self.kc.start_channels())
        self.kc.allow_stdin = False
        try:
            await ensure_async(self.kc.wait_for_ready(timeout=wait))
        except RuntimeError:
            return False
        return True

    async def async_restart_kernel(self) -> None:
        """Kill the kernel and start a fresh one (same kernel manager, same arguments)."""
        await self._async_stop_client()
        await ensure_async(self.km.restart_kernel(now=True))
        await self.async_start_new_kernel_client()
        await self.async_on_kernel_restart()


class CappedOutputExecute(KernelClientExecute):
    """nbgrader's ``Execute`` whose cells keep bounded outputs, capped *while* they arrive.

    nbclient keeps every output message of a cell in memory, and nbgrader's ``LimitOutput``
    truncates only afterwards, so a cell printing a few hundred MB costs the grader that much
    memory (or more) and, as the messages take longer than nbclient waits for them, fails the
    whole notebook. Here each message is capped as it arrives (:class:`OutputCap`): a cell keeps
    the head and tail of its text with one line saying how much was cut, and at most
    ``max_display_bytes`` of images and other display data. Two more guards keep each message
    small: the kernel sends stdout/stderr every ``kernel_flush_bytes`` (a start-up line patches
    ipykernel's ``OutStream``; a student could undo it, the next guard cannot be undone), and
    the grader's ZMQ sockets drop any message over ``max_message_bytes`` before reading it and
    queue at most ``max_queued_messages`` (a dropped message loses that cell's output tail).
    The grader's memory per cell then stays under about ``max_output_bytes + max_display_bytes
    + max_queued_messages * max_message_bytes``. Error tracebacks are capped too.
    """

    max_output_bytes = Integer(
        100_000, help="Stream text (stdout and stderr together) a cell keeps, in bytes: the first and the "
                      "last half, with one line saying how much was cut in between. Each text/* value of a rich "
                      "output and each error message is capped the same way. 0: no cap.").tag(config=True)
    max_display_bytes = Integer(
        5_000_000, help="Rich outputs (images, HTML, ...) a cell keeps, in bytes; later ones are replaced by "
                        "one note. 0: no cap.").tag(config=True)
    kernel_flush_bytes = Integer(
        1_000_000, help="The kernel sends stdout/stderr at least every this many characters (ipykernel "
                        "otherwise buffers a 0.2 s burst of any size into one message). 0: ipykernel's "
                        "default.").tag(config=True)
    max_message_bytes = Integer(
        16_000_000, help="ZMQ_MAXMSGSIZE of the grader's sockets: a larger message part is dropped unread "
                         "(the cell loses the end of its output). 0: no limit.").tag(config=True)
    max_queued_messages = Integer(
        16, help="ZMQ_RCVHWM of the grader's sockets: messages queued unread in the grader's memory. "
                 "0: ZMQ's default (1000).").tag(config=True)
    iopub_timeout = Integer(
        15, help="Seconds to wait, once a cell's reply has come, for the rest of its output (nbclient's "
                 "default, 4, is too short for a flood still in the queue; past it the cell gets a "
                 "GradingOutputLost error under RecoveringExecute).").tag(config=True)

    _cap: OutputCap | None = None
    _cap_note: NotebookNode | None = None
    _output_task: asyncio.Task | None = None

    async def async_start_new_kernel(self, **kwargs):
        arg = kernel_flush_argument(self.kernel_flush_bytes)
        if arg and arg not in self.extra_arguments:
            self.extra_arguments = [*self.extra_arguments, arg]
        await super().async_start_new_kernel(**kwargs)

    start_new_kernel = run_sync(async_start_new_kernel)

    def configure_kernel_client(self, kc) -> None:
        """Socket limits on the client's own ZMQ context (a context option applies to the
        sockets created afterwards: the client's channels)."""
        import zmq

        super().configure_kernel_client(kc)
        if self.max_message_bytes > 0:
            kc.context.setsockopt(zmq.MAXMSGSIZE, self.max_message_bytes)
        if self.max_queued_messages > 0:
            kc.context.setsockopt(zmq.RCVHWM, self.max_queued_messages)

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        self._cap, self._cap_note = OutputCap(self.max_output_bytes, self.max_display_bytes), None
        try:
            return await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        finally:
            self._finish_outputs(cell)
            self._cap = None
            task, self._output_task = self._output_task, None
            if task is not None and not task.done():  # nbclient leaves it reading after an IOPub timeout
                task.cancel()

    execute_cell = run_sync(async_execute_cell)

    async def _async_poll_output_msg(self, parent_msg_id, cell, cell_index):
        self._output_task = asyncio.current_task()
        return await super()._async_poll_output_msg(parent_msg_id, cell, cell_index)

    def _finish_outputs(self, cell) -> None:
        """Append the kept tail of the cell's text (once)."""
        if self._cap is not None and not self._cap.finished:
            for out in self._cap.finish():
                last = cell.outputs[-1] if cell.outputs else None
                if last is not None and last.get("output_type") == "stream" and last.get("name") == out.name:
                    last["text"] += out.text
                else:
                    cell.outputs.append(out)

    def on_cell_executed(self, **kwargs):
        # nbgrader's hook copies the reply's error into the outputs when no output shows it
        reply = kwargs.get("execute_reply") or {}
        if (reply.get("content") or {}).get("status") == "error":
            cap_error(reply["content"], self.max_output_bytes)
        return super().on_cell_executed(**kwargs)

    def process_message(self, msg, cell, cell_index):
        content = msg.get("content") or {}
        if self._cap is not None:
            if msg["msg_type"] == "status" and content.get("execution_state") == "idle":
                self._finish_outputs(cell)  # before nbclient's own end-of-cell processing
            elif (content.get("transient") or {}).get("display_id") and isinstance(content.get("data"), dict):
                # update_display_data rewrites earlier outputs without passing through output()
                content["data"] = self._cap.display(content["data"], count=False)
        return super().process_message(msg, cell, cell_index)

    def output(self, outs, msg, display_id, cell_index):
        cap = self._cap
        if cap is None or self.output_hook_stack[msg["parent_header"].get("msg_id")]:
            return super().output(outs, msg, display_id, cell_index)
        if self.clear_before_next_output:  # nbclient clears the outputs below; start afresh
            cap.reset()
            self._cap_note = None
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            text = cap.stream(content.get("name", "stdout"), content.get("text", ""))
            if not text:
                return None
            content["text"] = text
            last = outs[-1] if outs else None
            if (not self.clear_before_next_output and last is not None and last.get("output_type") == "stream"
                    and last.get("name") == content.get("name")):
                last["text"] += text  # one output per run of text, not one per message
                return last
        elif kind in ("execute_result", "display_data"):
            data = cap.display(content.get("data") or {})
            if data is None:
                if self._cap_note is not None:  # forgotten whenever the outputs are cleared
                    self._cap_note["data"]["text/plain"] = cap.display_note()
                else:
                    self._cap_note = NotebookNode(output_type="display_data", metadata={},
                                                  data={"text/plain": cap.display_note()})
                    outs.append(self._cap_note)
                return None
            content["data"] = data
        elif kind == "error":
            cap_error(content, self.max_output_bytes)
        return super().output(outs, msg, display_id, cell_index)

    def clear_output(self, outs, msg, cell_index):
        super().clear_output(outs, msg, cell_index)
        hooked = self.output_hook_stack[msg["parent_header"].get("msg_id")]
        if self._cap is not None and not hooked and not (msg.get("content") or {}).get("wait"):
            self._cap.reset()
            self._cap_note = None


# ------------------------------------------------------------------------ time budget
BUDGET_ENAME = "GradingBudgetExceeded"


class BudgetExecute(Execute):
    """nbgrader's ``Execute`` with a time budget per notebook.

    nbgrader executes a submission one notebook at a time, each with a kernel of its own; the
    budget is the wall-clock time one notebook may take, kernel start (and restarts) included.
    A cell gets at most what is left of it (or ``timeout``, whichever is shorter): a cell still
    running when the budget runs out is interrupted and gets a ``GradingBudgetExceeded`` error,
    and the code cells after it are not run and get the same error, saying where the budget ran
    out, so graded cells among them score 0, the cells before keep their points and the notebook
    still goes through the rest of nbgrader's chain (scores are saved). Markdown and raw cells
    (a written answer graded by hand) are left as they are.
    """

    notebook_budget = Integer(
        600, help="Seconds one notebook may take to grade (kernel start and every cell included); the "
                  "cells left when it runs out are not run and score 0. 0: no budget.").tag(config=True)

    _deadline: float | None = None
    _ran_out: str = ""  # where the budget ran out ("while cell 6 (ex_square) ran"), once it has

    def preprocess(self, nb, resources=None, km=None):
        self._deadline = time.monotonic() + self.notebook_budget if self.notebook_budget > 0 else None
        self._ran_out = ""
        try:
            return super().preprocess(nb, resources, km)
        finally:
            self._deadline = None

    def budget_left(self) -> float | None:
        """Seconds left for the notebook under grading (None: no budget)."""
        return None if self._deadline is None else self._deadline - time.monotonic()

    def budget_spent(self) -> bool:
        left = self.budget_left()
        return left is not None and left <= 0

    def _get_timeout(self, cell):
        timeout = super()._get_timeout(cell)
        left = self.budget_left()
        if cell is None or left is None:  # kernel_info and other requests: nbclient's own timeout
            return timeout
        left = max(1, math.ceil(left))
        return left if timeout is None else min(timeout, left)

    def preprocess_cell(self, cell, resources, index):
        # Only cells that would run are marked: markdown and raw cells (a written answer graded
        # by hand) have no outputs and stay as they are.
        if self.budget_spent() and runs_code(cell):
            where = f" (it ran out {self._ran_out})" if self._ran_out else ""
            cell.outputs = [error_output(BUDGET_ENAME, (
                f"the time budget of this notebook ({self.notebook_budget} s to grade it) was used up before "
                f"this cell ran{where}: it was not run (a test cell scores 0); the cells before it are graded"))]
            cell.execution_count = None
            return cell, resources
        return super().preprocess_cell(cell, resources, index)

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        cell = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        if runs_code(cell) and self.budget_spent():  # nbclient returns other cells untouched (no outputs)
            timeout_ename = (self.error_on_timeout or {}).get("ename")
            interrupted = False
            for i, out in enumerate(cell.get("outputs", [])):
                if out.get("output_type") == "error" and out.get("ename") == timeout_ename:
                    interrupted = True
                    cell.outputs[i] = error_output(BUDGET_ENAME, (
                        f"the time budget of this notebook ({self.notebook_budget} s to grade it) ran out while "
                        "this cell ran: it was interrupted (a test cell scores 0); the cells after it are not run"))
            if not self._ran_out:
                self._ran_out = f"{'while' if interrupted else 'after'} {self._cell_name(cell, cell_index)} ran"
        return cell

    execute_cell = run_sync(async_execute_cell)

    @staticmethod
    def _cell_name(cell, cell_index: int) -> str:
        """``cell 6 (ex_square)``: its place in the notebook (from 1) and its grade id, if any."""
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        return f"cell {cell_index + 1}" + (f" ({gid})" if gid else "")


# ------------------------------------------------------------------------ crash recovery
KERNEL_DIED = "KernelDied"
OUTPUT_LOST = "GradingOutputLost"


class RecoveringExecute(KernelClientExecute):
    """nbgrader's ``Execute`` that survives a kernel that dies or stops answering.

    nbclient raises ``DeadKernelError`` when the kernel dies under a cell (``os._exit``, a
    segfault, the OOM killer) and ``CellTimeoutError`` when, after the cell's timeout, the kernel
    does not stop when interrupted; nbgrader then drops the whole submission ("Removing failed
    assignment"). Here the cell gets a ``KernelDied`` (or ``CellTimeoutError``) error output, the
    kernel is restarted through its kernel manager (``km.restart_kernel``: the sandbox's manager
    restarts sandboxed), the cells that ran before it are replayed silently on the fresh kernel
    (demo cells, cells that killed a kernel and cells cut by a timeout excepted; the replay's
    outputs are discarded, the recorded ones kept) and execution goes on with the next cell. A
    kernel that keeps dying (``max_kernel_restarts`` restarts for the notebook) ends it: the
    remaining cells get a ``GradingBudgetExceeded`` error and are not run. When only the end of
    a cell's output went missing (the kernel still answers), the cell gets a
    ``GradingOutputLost`` error (a test cell scores 0: it cannot be vouched for). A kernel found
    dead before a cell runs (it died between cells, or during a call a subclass made into it)
    is restarted and replayed the same way first (:meth:`async_ensure_kernel`).

    nbgrader 0.9's ``Execute.execute_retries`` is declared but unused, and nbgrader's converter
    catches only its own ``UnresponsiveKernelError``; nothing here relies on either.
    Subclasses that keep per-kernel state override :meth:`async_on_kernel_restart`.
    """

    max_kernel_restarts = Integer(
        3, help="Fresh kernels a notebook may get after its kernel died; then its remaining cells are not "
                "run and score 0. 0: a dead kernel ends the notebook.").tag(config=True)

    _replay: list[int]
    _restarts = 0
    _gave_up = ""

    def preprocess(self, nb, resources=None, km=None):
        self._replay, self._restarts, self._gave_up = [], 0, ""
        return super().preprocess(nb, resources, km)

    def preprocess_cell(self, cell, resources, index):
        if runs_code(cell) and not self._gave_up:
            run_sync(self.async_ensure_kernel)()
        if self._gave_up and runs_code(cell):
            cell.outputs = [error_output(BUDGET_ENAME, self._gave_up)]
            cell.execution_count = None
            return cell, resources
        return super().preprocess_cell(cell, resources, index)

    async def async_ensure_kernel(self) -> bool:
        """Restart the kernel (and replay) if it died outside a cell this class ran: between
        cells, or during a call a subclass made into it (a test runner calling a student's
        function, ``tools/remote_tests.py``). Whether it had died."""
        if self.km is None or self.kc is None or self._gave_up or await ensure_async(self.km.is_alive()):
            return False
        self.log.warning("The kernel died outside a cell: restarting it")
        await self._recover()
        return True

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        try:
            cell = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        except DeadKernelError:
            self.log.warning("Cell %s killed the kernel: restarting it", cell_index)
            await self._recover()
            cell.outputs.append(error_output(KERNEL_DIED, (
                "the kernel died while running this cell (it exited, crashed or ran out of memory): a test cell "
                "scores 0; " + self._then())))
            return cell
        except CellTimeoutError:
            # nbclient gave up waiting for the end of the cell's output: the socket may have dropped
            # an oversized message (ZMQ then closes it for good), or the kernel is stuck in the cell.
            if await self.async_reconnect_client():
                self.log.warning("Cell %s: the end of its output did not arrive", cell_index)
                cell.outputs.append(error_output(OUTPUT_LOST, (
                    "the end of this cell's output did not reach the grader (it sent more, or larger, messages "
                    "than the grader accepts): a test cell scores 0")))
                self._replay.append(cell_index)
            else:
                self.log.warning("Cell %s did not stop when interrupted: restarting the kernel", cell_index)
                await self._recover()
                cell.outputs.append(error_output("CellTimeoutError", (
                    "the cell did not stop when interrupted after its time limit: a test cell scores 0; "
                    + self._then())))
            return cell
        if runs_code(cell) and not self._was_cut(cell):
            self._replay.append(cell_index)
        return cell

    execute_cell = run_sync(async_execute_cell)

    def _then(self) -> str:
        if self._gave_up:
            return "the kernel had died too often: the rest of the notebook was not run"
        return "the grader started a new kernel, re-ran the cells before this one and went on with the next"

    def _was_cut(self, cell) -> bool:
        """The cell was interrupted by a timeout (replaying it would hang again)."""
        cut = {(self.error_on_timeout or {}).get("ename"), BUDGET_ENAME}
        return any(o.get("output_type") == "error" and o.get("ename") in cut for o in cell.outputs)

    async def _recover(self) -> None:
        """Fresh kernel, replay; again (without the cell that killed the replay) if it dies."""
        while True:
            if self._restarts >= self.max_kernel_restarts:
                self._gave_up = (
                    f"the kernel died (or hung) {self._restarts + 1} time(s) while grading this notebook, the most "
                    "it may: the rest of the notebook was not run (a test cell scores 0); the cells before are graded")
                self.log.warning("Kernel died %d time(s): the rest of the notebook is not run", self._restarts + 1)
                with contextlib.suppress(Exception):  # a live kernel for whatever still talks to it
                    await self.async_restart_kernel()
                return
            self._restarts += 1
            await self.async_restart_kernel()
            failed = await self._replay_cells()
            if failed is None:
                return
            self._replay.remove(failed)

    async def _replay_cells(self) -> int | None:
        """Re-run the cells recorded for replay on the fresh kernel, outputs discarded; the
        index of a cell under which the kernel died again (None: replay done)."""
        budget_spent = getattr(self, "budget_spent", lambda: False)
        for index in list(self._replay):
            if budget_spent():
                return None  # BudgetExecute marks the cells left
            original = self.nb.cells[index]
            twin = NotebookNode(cell_type="code", source=original.source, outputs=[], execution_count=None,
                                metadata=copy.deepcopy(original.get("metadata", {})))
            try:  # below this class: no recovery inside a replay, no checks of a subclass
                await super().async_execute_cell(twin, index, store_history=True)
            except DeadKernelError:
                self.log.warning("The kernel died again while replaying cell %s", index)
                return index
            except CellTimeoutError:
                if not await self.async_reconnect_client():
                    return index
            finally:
                self.nb.cells[index] = original
        return None


# ------------------------------------------------------------------------ the course's Execute
class GradingExecute(RecoveringExecute, BudgetExecute, CappedOutputExecute):
    """nbgrader's ``Execute`` as the course grades: demo cells skipped, outputs capped while they
    arrive (:class:`CappedOutputExecute`), a time budget per notebook (:class:`BudgetExecute`),
    a dead kernel restarted and the notebook carried on (:class:`RecoveringExecute`).

    A skipped ``demo`` cell gets one stream output, :data:`DEMO_NOTE`, so the feedback says why it
    is empty. Every other cell (imports, data, answers, tests) runs as under ``Execute``, within
    those budgets.
    """

    def preprocess_cell(self, cell, resources, index):
        if is_demo(cell):
            cell.outputs = [NotebookNode(output_type="stream", name="stdout", text=DEMO_NOTE)]
            cell.execution_count = None
            return cell, resources
        return super().preprocess_cell(cell, resources, index)
