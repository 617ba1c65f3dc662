"""The steps of executing a notebook for grading: one small object per job.

:class:`~tools.grading.execute.GradingExecute` runs every cell of a notebook through a list of
steps, as nbgrader's ``Autograde`` runs a notebook through its list of preprocessors
(:func:`tools.grading.execute.course_steps` and :func:`~tools.grading.execute.grader_steps`
spell the two lists). A step has up to seven hooks (the :class:`Step` defaults do nothing),
called in list order:

- :meth:`~Step.start` / :meth:`~Step.finish`: a notebook begins / ends (``finish`` in reverse
  order, always);
- :meth:`~Step.kernel_arguments`, :meth:`~Step.configure_manager`, :meth:`~Step.configure_client`:
  how a kernel starts and how the grader talks to it;
- :meth:`~Step.kernel_ready`: a fresh kernel answers (at the start, after every restart), before
  any cell runs on it;
- :meth:`~Step.skip`: before a cell: the step may replace it (outputs set, not run);
- :meth:`~Step.run`: around the cell's execution: the step calls ``run_next`` (the steps after
  it, then nbclient) or answers for the cell itself;
- :meth:`~Step.timeout`: the cell's time limit.

Each step keeps its own state, reset in :meth:`~Step.start`; the executor ``ex`` passed to every
hook is how a step reaches the kernel (``ex.kc``, ``ex.km``), the notebook (``ex.nb``) and, by
type, another step (``ex.step(Budget)``). Nothing is kept at module level.

The steps: :class:`SkipDemo` (demo cells not run), :class:`InstructorGuard` (plain autograde:
the instructor's registry in td_lib's guard), :class:`SandboxedKernel` (the notebook's
grading edition of ``td_lib`` in the kernel's sandbox), :class:`IntegrityProbe`,
:class:`Timing`, :class:`TestRunner` (test cells in a test runner, ``tools/grading/remote_tests.py``),
:class:`Recovery` (a dead kernel restarted, the notebook carried on), :class:`Budget` (a time
budget per notebook), :class:`CapOutput` (outputs capped while they arrive).
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import copy
import json
import math
import os
import time
from collections.abc import Awaitable, Callable

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async, run_sync
from nbformat.notebooknode import NotebookNode
from nbgrader import utils as nbutils

from tools import nbcore
from tools.grading import integrity
from tools.grading.nbgrader_ext import (
    BUDGET_ENAME,
    KERNEL_DIED,
    OUTPUT_LOST,
    OutputCap,
    cap_error,
    error_output,
    kernel_flush_argument,
)

RunNext = Callable[[NotebookNode, int], Awaitable[NotebookNode]]


class Step:
    """One job of executing a notebook for grading (module docstring: the hooks)."""

    def start(self, ex) -> None:
        """A notebook begins (before its kernel starts): reset the step's state."""

    def finish(self, ex) -> None:
        """The notebook is done (or failed): release what the step holds."""

    def kernel_arguments(self, ex) -> list[str]:
        """Extra command-line arguments of the kernel."""
        return []

    def configure_manager(self, ex, km) -> None:
        """Adjust a new kernel manager before it starts a kernel."""

    def configure_client(self, ex, kc) -> None:
        """Adjust a new kernel client before its channels connect."""

    async def kernel_ready(self, ex) -> None:
        """A fresh kernel answers (first start or restart); nothing has run on it yet."""

    def skip(self, ex, cell, index: int) -> bool:
        """Before cell ``index``: True when the step set the cell's outputs and it must not run."""
        return False

    async def run(self, ex, cell, index: int, run_next: RunNext):
        """Execute cell ``index`` (default: the steps after this one, then nbclient)."""
        return await run_next(cell, index)

    def timeout(self, ex, cell, timeout: int | None) -> int | None:
        """The time limit of ``cell`` given the one the steps before allow."""
        return timeout


def _cell_name(cell, cell_index: int) -> str:
    """``cell 6 (ex_square)``: its place in the notebook (from 1) and its grade id, if any."""
    gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    return f"cell {cell_index + 1}" + (f" ({gid})" if gid else "")


# ------------------------------------------------------------------------ demo cells
class SkipDemo(Step):
    """Cells tagged ``demo`` are not run (plots and demonstrations nothing graded depends on; the
    lint checks that no later cell uses a name only a demo defines): the cell keeps one stream
    output, :data:`~tools.nbcore.DEMO_NOTE`, so the feedback says why it is empty."""

    def skip(self, ex, cell, index: int) -> bool:
        if not nbcore.is_demo(cell):
            return False
        cell.outputs = [NotebookNode(output_type="stream", name="stdout", text=nbcore.DEMO_NOTE)]
        cell.execution_count = None
        return True


# ------------------------------------------------------------------------ sandboxed kernel
class SandboxedKernel(Step):
    """The kernel imports the notebook's grading edition of ``td_lib`` (``tools/build/student_edition.py``):
    the kernel manager (``tools.grading.kernel.SandboxKernelManager``, configured by the task)
    mounts ``edition`` where the kernel imports ``td_lib`` from. Empty: the full library."""

    def __init__(self, edition: str = "") -> None:
        self.edition = edition

    def configure_manager(self, ex, km) -> None:
        if self.edition and hasattr(km, "td_lib"):
            km.td_lib = self.edition


# ------------------------------------------------------------------------ integrity
class InstructorGuard(Step):
    """Plain ``nbgrader autograde`` (trusted submissions, the instructor's environment): its kernel
    has the whole td_lib, whose guard registry is empty (td_lib names no exercise). Before any cell,
    the instructor's registry goes into it (``checks.grading.exercises.install_guard``), so a test
    cell's ``own_work`` call fails on its exercise's counterparts, as a grading edition lacks them:
    an answer that delegates scores 0 here as in ``make grade``. Not a grader step: a sandboxed
    kernel has no ``checks``, and its edition has no counterpart to switch off."""

    CODE = "from checks.grading.exercises import install_guard as _td_ig\n_td_ig()\ndel _td_ig"

    async def kernel_ready(self, ex) -> None:
        msg_id = await ensure_async(ex.kc.execute(self.CODE, silent=True, store_history=False))
        reply = await ex.async_wait_for_reply(msg_id)
        content = (reply or {}).get("content", {})
        if content.get("status") != "ok":
            raise RuntimeError("the instructor's registry of exercises (checks.grading.exercises) did not install "
                               f"in the kernel: {content.get('ename', '')} {content.get('evalue', '')}; "
                               "nbgrader autograde needs the course's checks importable")


class IntegrityProbe(Step):
    """Fingerprints of the functions tests rely on (:mod:`tools.grading.integrity`), read from
    each fresh kernel before any cell (its baseline) and after every autograded cell: a cell
    after which one differs gets an ``IntegrityError`` output (it scores 0) and the notebook is
    flagged (``flags``, shared with the other steps that flag)."""

    def __init__(self, flags: set[str]) -> None:
        self.flags = flags
        self.baseline: dict = {}

    def start(self, ex) -> None:
        self.baseline = {}

    @staticmethod
    async def probe(ex) -> dict | None:
        """The kernel's fingerprints (``PROBE_EXPR``); None if the kernel could not answer."""
        msg_id = await ensure_async(ex.kc.execute("", silent=True, store_history=False,
                                                  user_expressions={"fp": integrity.PROBE_EXPR}))
        reply = await ex.async_wait_for_reply(msg_id)
        try:
            res = reply["content"]["user_expressions"]["fp"]
            return json.loads(ast.literal_eval(res["data"]["text/plain"]))
        except Exception:  # noqa: BLE001 - whatever the kernel sent, the probe failed
            return None

    async def kernel_ready(self, ex) -> None:
        self.baseline = await self.probe(ex) or {}  # the fresh kernel's own fingerprints

    async def run(self, ex, cell, index: int, run_next: RunNext):
        cell = await run_next(cell, index)
        if cell.cell_type == "code" and nbutils.is_grade(cell) and cell.source.strip():
            now = await self.probe(ex)
            changed = ["probe failed (the kernel's import/exec machinery was replaced)"] if now is None \
                else integrity.probe_diff(self.baseline, now)
            if changed:
                self.flags.update(changed)
                cell.outputs.append(integrity.integrity_error(changed))
        return cell


# ------------------------------------------------------------------------ timing
class Timing(Step):
    """Each cell's wall-clock time, ``[grade id or index, seconds]`` in ``cells``."""

    def __init__(self, cells: list) -> None:
        self.cells = cells

    async def run(self, ex, cell, index: int, run_next: RunNext):
        t0 = time.perf_counter()
        cell = await run_next(cell, index)
        self.cells.append((cell.metadata.get("nbgrader", {}).get("grade_id", index),
                           round(time.perf_counter() - t0, 3)))
        return cell


# ------------------------------------------------------------------------ test runner
class TestRunner(Step):
    """Autograded test cells run in a test runner, out of the student's reach
    (:class:`tools.grading.remote_tests.RemoteTests`); every other cell goes on to the kernel.

    ``sandboxed``: the runner in a sandbox of its own (``tools.grading.sandbox.runner_command`` with
    ``edition``, the runner's edition of ``td_lib``), under a uid of its own when run as root.
    A test whose call killed the kernel is followed by a fresh kernel (:class:`Recovery`).
    """

    __test__ = False  # not a pytest class

    def __init__(self, flags: set[str], failed_lines: dict, mistaken: dict, sandboxed: bool = False,
                 edition: str = "", declarable: frozenset | None = None, mistakes: dict | None = None,
                 max_output_bytes: int = 0) -> None:
        self.flags, self.failed_lines, self.mistaken = flags, failed_lines, mistaken
        self.sandboxed, self.edition = sandboxed, edition
        self.declarable, self.mistakes, self.max_output_bytes = declarable, mistakes or {}, max_output_bytes
        self.remote = None
        self._slot = None

    def start(self, ex) -> None:
        from tools.grading import remote_tests, sandbox

        command = None
        if self.sandboxed:  # the test runner in a sandbox of its own, under a uid of its own (as root)
            self._slot = sandbox.UidSlot() if os.geteuid() == 0 else None
            command = sandbox.runner_command(self.edition, uid=self._slot.uid if self._slot else None)
        self.remote = remote_tests.RemoteTests(ex, command, declarable=self.declarable, mistakes=self.mistakes,
                                               max_output_bytes=self.max_output_bytes, flags=self.flags,
                                               failed_lines=self.failed_lines, mistaken=self.mistaken)

    def finish(self, ex) -> None:
        from tools.grading import sandbox

        if self.remote is not None:
            self.remote.close()
        if self._slot is not None:
            sandbox.kill_uid(self._slot.uid)
            self._slot.release()
            self._slot = None

    async def kernel_ready(self, ex) -> None:
        await self.remote.install()  # the data channel's server, before any student code

    async def run(self, ex, cell, index: int, run_next: RunNext):
        if not (nbcore.is_test(cell) and cell.source.strip()):
            return await run_next(cell, index)
        cell = await self.remote.run_test(cell, index, ex._get_timeout(cell))
        await ex.ensure_kernel()  # the student's function killed the kernel: a fresh one, replayed
        return cell


# ------------------------------------------------------------------------ crash recovery
class Recovery(Step):
    """A kernel that dies or stops answering costs the cell, not the notebook.

    nbclient raises ``DeadKernelError`` when the kernel dies under a cell (``os._exit``, a
    segfault, the OOM killer) and ``CellTimeoutError`` when, after the cell's timeout, the kernel
    does not stop when interrupted; nbgrader then drops the whole submission ("Removing failed
    assignment"). Here the cell gets a ``KernelDied`` (or ``CellTimeoutError``) error output, the
    kernel is restarted through its kernel manager (``km.restart_kernel``: the sandbox's manager
    restarts sandboxed), the cells that ran before it are replayed silently on the fresh kernel
    (demo cells, cells that killed a kernel and cells cut by a timeout excepted; the replay's
    outputs are discarded, the recorded ones kept) through the steps after this one, and
    execution goes on with the next cell. A kernel that keeps dying (``max_restarts`` restarts
    for the notebook) ends it: the remaining cells get a ``GradingBudgetExceeded`` error and are
    not run. When only the end of a cell's output went missing (the kernel still answers), the
    cell gets a ``GradingOutputLost`` error (a test cell scores 0: it cannot be vouched for). A
    kernel found dead before a cell runs (it died between cells, or during a call a test runner
    made into it) is restarted and replayed the same way first (:meth:`ensure_kernel`).
    """

    def __init__(self, max_restarts: int) -> None:
        self.max_restarts = max_restarts
        self.replay: list[int] = []
        self.restarts = 0
        self.gave_up = ""
        self._below: RunNext | None = None

    def start(self, ex) -> None:
        self.replay, self.restarts, self.gave_up, self._below = [], 0, "", None

    def skip(self, ex, cell, index: int) -> bool:
        if nbcore.runs_code(cell) and not self.gave_up:
            run_sync(self.ensure_kernel)(ex)
        if self.gave_up and nbcore.runs_code(cell):
            cell.outputs = [error_output(BUDGET_ENAME, self.gave_up)]
            cell.execution_count = None
            return True
        return False

    async def ensure_kernel(self, ex) -> bool:
        """Restart the kernel (and replay) if it died outside a cell this step ran; whether it had died."""
        if ex.km is None or ex.kc is None or self.gave_up or await ensure_async(ex.km.is_alive()):
            return False
        ex.log.warning("The kernel died outside a cell: restarting it")
        await self._recover(ex)
        return True

    async def run(self, ex, cell, index: int, run_next: RunNext):
        self._below = run_next
        try:
            cell = await run_next(cell, index)
        except DeadKernelError:
            ex.log.warning("Cell %s killed the kernel: restarting it", index)
            await self._recover(ex)
            cell.outputs.append(error_output(KERNEL_DIED, (
                "the kernel died while running this cell (it exited, crashed or ran out of memory): a test cell "
                "scores 0; " + self._then())))
            return cell
        except CellTimeoutError:
            # nbclient gave up waiting for the end of the cell's output: the socket may have dropped
            # an oversized message (ZMQ then closes it for good), or the kernel is stuck in the cell.
            if await ex.async_reconnect_client():
                ex.log.warning("Cell %s: the end of its output did not arrive", index)
                cell.outputs.append(error_output(OUTPUT_LOST, (
                    "the end of this cell's output did not reach the grader (it sent more, or larger, messages "
                    "than the grader accepts): a test cell scores 0")))
                self.replay.append(index)
            else:
                ex.log.warning("Cell %s did not stop when interrupted: restarting the kernel", index)
                await self._recover(ex)
                cell.outputs.append(error_output("CellTimeoutError", (
                    "the cell did not stop when interrupted after its time limit: a test cell scores 0; "
                    + self._then())))
            return cell
        if nbcore.runs_code(cell) and not self._was_cut(ex, cell):
            self.replay.append(index)
        return cell

    def _then(self) -> str:
        if self.gave_up:
            return "the kernel had died too often: the rest of the notebook was not run"
        return "the grader started a new kernel, re-ran the cells before this one and went on with the next"

    @staticmethod
    def _was_cut(ex, cell) -> bool:
        """The cell was interrupted by a timeout (replaying it would hang again)."""
        cut = {(ex.error_on_timeout or {}).get("ename"), BUDGET_ENAME}
        return any(o.get("output_type") == "error" and o.get("ename") in cut for o in cell.outputs)

    async def _recover(self, ex) -> None:
        """Fresh kernel, replay; again (without the cell that killed the replay) if it dies."""
        while True:
            if self.restarts >= self.max_restarts:
                self.gave_up = (
                    f"the kernel died (or hung) {self.restarts + 1} time(s) while grading this notebook, the most "
                    "it may: the rest of the notebook was not run (a test cell scores 0); the cells before are graded")
                ex.log.warning("Kernel died %d time(s): the rest of the notebook is not run", self.restarts + 1)
                with contextlib.suppress(Exception):  # a live kernel for whatever still talks to it
                    await ex.async_restart_kernel()
                return
            self.restarts += 1
            await ex.async_restart_kernel()
            failed = await self._replay_cells(ex)
            if failed is None:
                return
            self.replay.remove(failed)

    async def _replay_cells(self, ex) -> int | None:
        """Re-run the cells recorded for replay on the fresh kernel, outputs discarded; the
        index of a cell under which the kernel died again (None: replay done)."""
        budget = ex.step(Budget)
        for index in list(self.replay):
            if budget is not None and budget.spent():
                return None  # the budget step marks the cells left
            original = ex.nb.cells[index]
            twin = NotebookNode(cell_type="code", source=original.source, outputs=[], execution_count=None,
                                metadata=copy.deepcopy(original.get("metadata", {})))
            try:  # the steps after this one: no recovery inside a replay, no checks of the steps before
                await self._below(twin, index)
            except DeadKernelError:
                ex.log.warning("The kernel died again while replaying cell %s", index)
                return index
            except CellTimeoutError:
                if not await ex.async_reconnect_client():
                    return index
            finally:
                ex.nb.cells[index] = original
        return None


# ------------------------------------------------------------------------ time budget
class Budget(Step):
    """A time budget per notebook (``seconds``; 0: none).

    nbgrader executes a submission one notebook at a time, each with a kernel of its own; the
    budget is the wall-clock time one notebook may take, kernel start (and restarts) included.
    A cell gets at most what is left of it (or its own timeout, whichever is shorter): a cell
    still running when the budget runs out is interrupted and gets a ``GradingBudgetExceeded``
    error, and the code cells after it are not run and get the same error, saying where the
    budget ran out, so graded cells among them score 0, the cells before keep their points and
    the notebook still goes through the rest of nbgrader's chain (scores are saved). Markdown
    and raw cells (a written answer graded by hand) are left as they are.
    """

    def __init__(self, seconds: int) -> None:
        self.seconds = seconds
        self.deadline: float | None = None
        self.ran_out = ""  # where the budget ran out ("while cell 6 (ex_square) ran"), once it has

    def start(self, ex) -> None:
        self.deadline = time.monotonic() + self.seconds if self.seconds > 0 else None
        self.ran_out = ""

    def finish(self, ex) -> None:
        self.deadline = None

    def left(self) -> float | None:
        """Seconds left for the notebook under grading (None: no budget)."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def spent(self) -> bool:
        """Whether the notebook's budget is used up."""
        left = self.left()
        return left is not None and left <= 0

    def timeout(self, ex, cell, timeout: int | None) -> int | None:
        left = self.left()
        if cell is None or left is None:  # kernel_info and other requests: nbclient's own timeout
            return timeout
        left = max(1, math.ceil(left))
        return left if timeout is None else min(timeout, left)

    def skip(self, ex, cell, index: int) -> bool:
        # Only cells that would run are marked: markdown and raw cells (a written answer graded
        # by hand) have no outputs and stay as they are.
        if not (self.spent() and nbcore.runs_code(cell)):
            return False
        where = f" (it ran out {self.ran_out})" if self.ran_out else ""
        cell.outputs = [error_output(BUDGET_ENAME, (
            f"the time budget of this notebook ({self.seconds} s to grade it) was used up before "
            f"this cell ran{where}: it was not run (a test cell scores 0); the cells before it are graded"))]
        cell.execution_count = None
        return True

    async def run(self, ex, cell, index: int, run_next: RunNext):
        cell = await run_next(cell, index)
        if nbcore.runs_code(cell) and self.spent():  # nbclient returns other cells untouched (no outputs)
            timeout_ename = (ex.error_on_timeout or {}).get("ename")
            interrupted = False
            for i, out in enumerate(cell.get("outputs", [])):
                if out.get("output_type") == "error" and out.get("ename") == timeout_ename:
                    interrupted = True
                    cell.outputs[i] = error_output(BUDGET_ENAME, (
                        f"the time budget of this notebook ({self.seconds} s to grade it) ran out while "
                        "this cell ran: it was interrupted (a test cell scores 0); the cells after it are not run"))
            if not self.ran_out:
                self.ran_out = f"{'while' if interrupted else 'after'} {_cell_name(cell, index)} ran"
        return cell


# ------------------------------------------------------------------------ output caps
class CapOutput(Step):
    """A cell keeps bounded outputs, capped *while* they arrive.

    nbclient keeps every output message of a cell in memory, and nbgrader's ``LimitOutput``
    truncates only afterwards, so a cell printing a few hundred MB costs the grader that much
    memory (or more) and, as the messages take longer than nbclient waits for them, fails the
    whole notebook. Here each message is capped as it arrives (:class:`~tools.grading.nbgrader_ext.OutputCap`):
    a cell keeps the head and tail of its text with one line saying how much was cut, and at most
    ``max_display_bytes`` of images and other display data. Two more guards keep each message
    small: the kernel sends stdout/stderr every ``kernel_flush_bytes`` (a start-up line patches
    ipykernel's ``OutStream``; a student could undo it, the next guard cannot be undone), and
    the grader's ZMQ sockets drop any message over ``max_message_bytes`` before reading it and
    queue at most ``max_queued_messages`` (a dropped message loses that cell's output tail).
    The grader's memory per cell then stays under about ``max_output_bytes + max_display_bytes
    + max_queued_messages * max_message_bytes``. Error tracebacks are capped too.

    The executor hands it nbclient's message handling (:meth:`message`, :meth:`output`,
    :meth:`cleared`, :meth:`executed`) while a cell runs.
    """

    def __init__(self, max_output_bytes: int, max_display_bytes: int, kernel_flush_bytes: int,
                 max_message_bytes: int, max_queued_messages: int) -> None:
        self.max_output_bytes, self.max_display_bytes = max_output_bytes, max_display_bytes
        self.kernel_flush_bytes = kernel_flush_bytes
        self.max_message_bytes, self.max_queued_messages = max_message_bytes, max_queued_messages
        self.cap: OutputCap | None = None
        self.note: NotebookNode | None = None
        self.output_task: asyncio.Task | None = None

    def kernel_arguments(self, ex) -> list[str]:
        arg = kernel_flush_argument(self.kernel_flush_bytes)
        return [arg] if arg else []

    def configure_client(self, ex, kc) -> None:
        """Socket limits on the client's own ZMQ context (a context option applies to the
        sockets created afterwards: the client's channels)."""
        import zmq

        if self.max_message_bytes > 0:
            kc.context.setsockopt(zmq.MAXMSGSIZE, self.max_message_bytes)
        if self.max_queued_messages > 0:
            kc.context.setsockopt(zmq.RCVHWM, self.max_queued_messages)

    def begin(self) -> None:
        """A cell starts: a fresh cap."""
        self.cap, self.note = OutputCap(self.max_output_bytes, self.max_display_bytes), None

    async def run(self, ex, cell, index: int, run_next: RunNext):
        self.begin()
        try:
            return await run_next(cell, index)
        finally:
            self._finish_outputs(cell)
            self.cap = None
            task, self.output_task = self.output_task, None
            if task is not None and not task.done():  # nbclient leaves it reading after an IOPub timeout
                task.cancel()

    def _finish_outputs(self, cell) -> None:
        """Append the kept tail of the cell's text (once)."""
        if self.cap is not None and not self.cap.finished:
            for out in self.cap.finish():
                last = cell.outputs[-1] if cell.outputs else None
                if last is not None and last.get("output_type") == "stream" and last.get("name") == out.name:
                    last["text"] += out.text
                else:
                    cell.outputs.append(out)

    def executed(self, reply: dict) -> None:
        """The cell's execute reply: its error (which nbgrader copies into the outputs) capped."""
        if (reply.get("content") or {}).get("status") == "error":
            cap_error(reply["content"], self.max_output_bytes)

    def message(self, msg, cell) -> None:
        """Before nbclient processes ``msg``: the tail at the end of the cell, updates capped."""
        content = msg.get("content") or {}
        if self.cap is not None:
            if msg["msg_type"] == "status" and content.get("execution_state") == "idle":
                self._finish_outputs(cell)  # before nbclient's own end-of-cell processing
            elif (content.get("transient") or {}).get("display_id") and isinstance(content.get("data"), dict):
                # update_display_data rewrites earlier outputs without passing through output()
                content["data"] = self.cap.display(content["data"], count=False)

    def output(self, ex, outs, msg, display_id, cell_index, base):
        """nbclient's ``output`` (``base``) for a message capped first; None: nothing to add."""
        cap = self.cap
        if cap is None or ex.output_hook_stack[msg["parent_header"].get("msg_id")]:
            return base(outs, msg, display_id, cell_index)
        if ex.clear_before_next_output:  # nbclient clears the outputs below; start afresh
            cap.reset()
            self.note = None
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            text = cap.stream(content.get("name", "stdout"), content.get("text", ""))
            if not text:
                return None
            content["text"] = text
            last = outs[-1] if outs else None
            if (not ex.clear_before_next_output and last is not None and last.get("output_type") == "stream"
                    and last.get("name") == content.get("name")):
                last["text"] += text  # one output per run of text, not one per message
                return last
        elif kind in ("execute_result", "display_data"):
            data = cap.display(content.get("data") or {})
            if data is None:
                if self.note is not None:  # forgotten whenever the outputs are cleared
                    self.note["data"]["text/plain"] = cap.display_note()
                else:
                    self.note = NotebookNode(output_type="display_data", metadata={},
                                             data={"text/plain": cap.display_note()})
                    outs.append(self.note)
                return None
            content["data"] = data
        elif kind == "error":
            cap_error(content, self.max_output_bytes)
        return base(outs, msg, display_id, cell_index)

    def cleared(self, ex, msg) -> None:
        """The cell's outputs were cleared (not waiting for the next output): the cap starts afresh."""
        hooked = ex.output_hook_stack[msg["parent_header"].get("msg_id")]
        if self.cap is not None and not hooked and not (msg.get("content") or {}).get("wait"):
            self.cap.reset()
            self.note = None
