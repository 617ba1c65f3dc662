"""The course's ``Execute``: one nbgrader preprocessor running a notebook's cells through a list of steps.

:class:`GradingExecute` is nbgrader's ``Execute`` (nbclient underneath) with the cell execution
spelled as a list of small steps (:mod:`tools.grading.steps`), composed here in the open:

- :func:`course_steps`, what ``nbgrader autograde`` runs (``course/nbgrader_config.py`` lists
  this class in its autograde chain): demo cells skipped, the instructor's registry of exercises
  in the kernel's guard (the kernel has the whole library), a dead kernel restarted and the
  notebook carried on, a time budget per notebook, outputs capped while they arrive;
- :func:`grader_steps`, what ``make grade`` and the live service run (``runner`` set, by
  ``tools.grading.grade``'s task): the same, plus the notebook's grading edition of ``td_lib`` in the
  kernel's sandbox, the integrity probe, each cell's time, and test cells run in a test runner
  (``tools/grading/remote_tests.py``), out of the student's reach.

A flood, a hang or a crash costs the student the affected cells, never the notebook. Each
notebook's report (:class:`tools.grading.record.NotebookReport`) is written to ``report_dir``
when set. The class's configurable traits keep the names ``c.GradingExecute.*`` of the
course's configuration.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time

from nbclient.util import ensure_async, run_hook, run_sync
from nbgrader.preprocessors import Execute
from traitlets import Dict, Enum, Integer, Unicode

from tools.grading.record import NotebookReport
from tools.grading.steps import (
    Budget,
    CapOutput,
    InstructorGuard,
    IntegrityProbe,
    Recovery,
    SandboxedKernel,
    SkipDemo,
    Step,
    TestRunner,
    Timing,
)


def course_steps(ex: GradingExecute) -> list[Step]:
    """The steps of ``nbgrader autograde``: demo cells skipped, the instructor's registry in the
    kernel's guard, recovery, budget, output caps."""
    return [SkipDemo(), InstructorGuard(), Recovery(ex.max_kernel_restarts), Budget(ex.notebook_budget), _cap(ex)]


def grader_steps(ex: GradingExecute, notebook: str) -> list[Step]:
    """The steps of ``make grade`` for ``notebook``: :func:`course_steps` with the notebook's
    edition of ``td_lib`` in the kernel, the integrity probe, the cells' times and test cells in
    a test runner (between the timing and the recovery: a test cell is not replayed)."""
    declarable = ex.declarable.get(notebook)
    return [SkipDemo(), SandboxedKernel(ex.editions.get(notebook, "")), IntegrityProbe(ex.flags),
            Timing(ex.cell_times),
            TestRunner(ex.flags, ex.failed_lines, ex.mistaken, sandboxed=ex.runner == "sandbox",
                       edition=ex.runner_edition, declarable=None if declarable is None else frozenset(declarable),
                       mistakes=ex.known_mistakes.get(notebook, {}), max_output_bytes=ex.max_output_bytes),
            Recovery(ex.max_kernel_restarts), Budget(ex.notebook_budget), _cap(ex)]


def _cap(ex: GradingExecute) -> CapOutput:
    return CapOutput(ex.max_output_bytes, ex.max_display_bytes, ex.kernel_flush_bytes, ex.max_message_bytes,
                     ex.max_queued_messages)


class GradingExecute(Execute):
    """nbgrader's ``Execute`` as the course grades: each cell through :attr:`steps` (module docstring).

    The steps are built when a notebook starts (:func:`course_steps`, or :func:`grader_steps`
    when ``runner`` is set); :meth:`step` finds one by type. The methods below are nbclient's
    hooks, each handing its part to the steps.
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
                 "GradingOutputLost error).").tag(config=True)
    notebook_budget = Integer(
        600, help="Seconds one notebook may take to grade (kernel start and every cell included); the "
                  "cells left when it runs out are not run and score 0. 0: no budget.").tag(config=True)
    max_kernel_restarts = Integer(
        3, help="Fresh kernels a notebook may get after its kernel died; then its remaining cells are not "
                "run and score 0. 0: a dead kernel ends the notebook.").tag(config=True)

    # Set by make grade's task (tools/grading/grade.py) for the submission it grades; empty under nbgrader autograde.
    runner = Enum(["", "process", "sandbox"], "", help="Where test cells run: '' in the kernel (nbgrader's "
                  "way); 'process': in a test runner process (tools/grading/remote_tests.py) running as the grader "
                  "(--no-sandbox); 'sandbox': in a sandboxed test runner. Set: the grader's steps "
                  "(grader_steps).").tag(config=True)
    runner_edition = Unicode("", help="Host folder of the test runner's edition of td_lib (sandboxed runner)."
                             ).tag(config=True)
    editions = Dict(help="Notebook -> host folder of its grading edition of td_lib, mounted in its kernel's "
                         "sandbox.").tag(config=True)
    declarable = Dict(help="Notebook -> the names its answer cells define in the course's source: all a test "
                           "may ask the kernel for (a notebook not listed: no filter).").tag(config=True)
    known_mistakes = Dict(help="Notebook -> test cell -> the known mistakes of its exercise (tools.grading.mistakes), "
                               "sent to the test runner.").tag(config=True)
    report_dir = Unicode("", help="Folder where each notebook's report goes, <notebook>.json "
                                  "(tools.grading.record.NotebookReport); empty: none.").tag(config=True)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.steps: list[Step] = course_steps(self)
        self.flags: set[str] = set()
        self.cell_times: list = []
        self.failed_lines: dict[str, int] = {}
        self.mistaken: dict[str, str] = {}

    def step(self, kind: type) -> Step | None:
        """The step of type ``kind`` in :attr:`steps` (None: not there)."""
        return next((s for s in self.steps if isinstance(s, kind)), None)

    # ------------------------------------------------------------------ a notebook
    def preprocess(self, nb, resources=None, km=None):
        """Execute ``nb`` through the steps; write its report to ``report_dir`` if set."""
        notebook = (resources or {}).get("unique_key", "")
        self.flags, self.cell_times, self.failed_lines, self.mistaken = set(), [], {}, {}
        self.steps = grader_steps(self, notebook) if self.runner else course_steps(self)
        t0 = time.perf_counter()
        try:
            for s in self.steps:
                s.start(self)
            return super().preprocess(nb, resources, km)
        finally:
            for s in reversed(self.steps):
                s.finish(self)
            if self.report_dir:
                NotebookReport(seconds=round(time.perf_counter() - t0, 2), flags=sorted(self.flags),
                               cells=self.cell_times, failed_lines=self.failed_lines,
                               mistakes=self.mistaken).write(os.path.join(self.report_dir, f"{notebook or '?'}.json"))

    def preprocess_cell(self, cell, resources, index):
        """A cell a step replaces is not run (demo, budget used up, kernel given up on)."""
        for s in self.steps:
            if s.skip(self, cell, index):
                return cell, resources
        return super().preprocess_cell(cell, resources, index)

    # ------------------------------------------------------------------ a cell
    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        """Run the cell through the steps, nbclient's own execution last."""
        async def run_from(i: int, cell, index: int):
            if i == len(self.steps):
                return await Execute.async_execute_cell(self, cell, index, execution_count, store_history)
            return await self.steps[i].run(self, cell, index, lambda c, n: run_from(i + 1, c, n))

        return await run_from(0, cell, cell_index)

    execute_cell = run_sync(async_execute_cell)

    def _get_timeout(self, cell):
        timeout = super()._get_timeout(cell)
        for s in self.steps:
            timeout = s.timeout(self, cell, timeout)
        return timeout

    async def ensure_kernel(self) -> bool:
        """A kernel that died outside a cell (a test runner's call into it) restarted and the
        cells replayed (:class:`~tools.grading.steps.Recovery`); whether it had died."""
        recovery = self.step(Recovery)
        return await recovery.ensure_kernel(self) if recovery is not None else False

    # ------------------------------------------------------------------ the kernel and its client
    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        for s in self.steps:
            s.configure_manager(self, km)
        return km

    async def async_start_new_kernel(self, **kwargs):
        for s in self.steps:
            for arg in s.kernel_arguments(self):
                if arg not in self.extra_arguments:
                    self.extra_arguments = [*self.extra_arguments, arg]
        await super().async_start_new_kernel(**kwargs)

    start_new_kernel = run_sync(async_start_new_kernel)

    def _new_client(self):
        kc = self.km.client()
        for s in self.steps:
            s.configure_client(self, kc)
        return kc

    async def async_start_new_kernel_client(self):
        """nbclient 0.11's, with the steps' client settings before the channels start and their
        :meth:`~tools.grading.steps.Step.kernel_ready` once the kernel answers."""
        assert self.km is not None
        try:
            self.kc = self._new_client()
            await ensure_async(self.kc.start_channels())
            await ensure_async(self.kc.wait_for_ready(timeout=self.startup_timeout))
        except Exception as e:
            self.log.error("Error occurred while starting new kernel client for kernel %s: %s",
                           getattr(self.km, "kernel_id", None), e)
            await self._async_cleanup_kernel()
            raise
        self.kc.allow_stdin = False
        await run_hook(self.on_notebook_start, notebook=self.nb)
        for s in self.steps:
            await s.kernel_ready(self)
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
        self.kc = self._new_client()
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

    # ------------------------------------------------------------------ nbclient's messages (output caps)
    def on_cell_executed(self, **kwargs):
        # nbgrader's hook copies the reply's error into the outputs when no output shows it
        cap = self.step(CapOutput)
        if cap is not None:
            cap.executed(kwargs.get("execute_reply") or {})
        return super().on_cell_executed(**kwargs)

    async def _async_poll_output_msg(self, parent_msg_id, cell, cell_index):
        cap = self.step(CapOutput)
        if cap is not None:
            cap.output_task = asyncio.current_task()
        return await super()._async_poll_output_msg(parent_msg_id, cell, cell_index)

    def process_message(self, msg, cell, cell_index):
        cap = self.step(CapOutput)
        if cap is not None:
            cap.message(msg, cell)
        return super().process_message(msg, cell, cell_index)

    def output(self, outs, msg, display_id, cell_index):
        cap = self.step(CapOutput)
        if cap is None:
            return super().output(outs, msg, display_id, cell_index)
        return cap.output(self, outs, msg, display_id, cell_index, super().output)

    def clear_output(self, outs, msg, cell_index):
        super().clear_output(outs, msg, cell_index)
        cap = self.step(CapOutput)
        if cap is not None:
            cap.cleared(self, msg)
