"""Test cells run outside the student's kernel: the verdict is computed where student code cannot reach.

While ``python -m tools.grading.grade`` grades a notebook, every autograded test cell runs in a **test
runner** (:mod:`tools.grading.runner`): a separate process, sandboxed as an unprivileged user of its own
(``tools/grading/sandbox.py``), started per notebook, that holds the cell's code, its hidden inputs and
its expected values. The student's kernel (sandboxed too) runs the other cells: imports, data
and the student's answers. The grader, this module's :class:`RemoteTests`, stands between
them and is the only party that talks to both::

    grader ──"run cell"──▶ runner ──"call my_ntk(X, W, v)"──▶ grader ──▶ student's kernel
                            ▲                                              │ answer (data), checked
                            └──────── result (arrays, numbers) or the error ◀┘ against a schema

One direction of authority (docs/GRADING.md): the grader asks the kernel, tagged with a fresh
id, only for what the runner needs: "what are the names this test declares" (the student's
functions and values the test cell reads without binding; the cell's imports, helpers and
baked values are its own) and "call this function with these data". The kernel's answer is
accepted only if it answers the pending request, in the form :mod:`tools.grading.wire` checks
(``check_reply``, ``check_describe``, ``check_callback``); the grader builds every message to
the runner itself from the checked fields, so nothing the kernel sends chooses an operation or
a name on the trusted side, and nothing it sends is executed there. Any other message is a
**protocol violation**: the cell fails with a ``ProtocolViolation`` error (whatever the test
concluded), the student is flagged with what was sent, and the runner, still healthy, goes on
with the next cell. A callable a test passes to the student's function (``np.abs``, a lambda)
goes by reference when a library defines it, else as a call-back that reaches only the
callables registered for that call, with data arguments; ``input()`` raises inside a graded call.

Output: the runner's prints and the student's prints during the calls, in order, in the cell's
outputs (capped as any cell's); a failure gives the usual error output
(``AssertionError: <message>``). The cell's time limit (what is left of the notebook's budget
when shorter) covers everything done for the cell, the runner's requests to the kernel included.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

from tools.grading import wire
from tools.grading.runner import free_names  # noqa: F401 - the names a test cell declares (re-exported)

SERVER = "__td_rpc__"
WIRE_SOURCE = Path(wire.__file__).read_text()
INSTALL = (f"import types as _td_t\n_td_m = _td_t.ModuleType('td_wire')\nexec({WIRE_SOURCE!r}, _td_m.__dict__)\n"
           f"{SERVER} = _td_m.Server(get_ipython().user_ns)\ndel _td_t, _td_m\n")
VIOLATION = "ProtocolViolation"
MISTAKE_LEAD = "This looks like a known mistake:"  # then the hint (tools.grading.mistakes), after the test's message
GRACE = 5.0  # seconds a runner may take past the cell's deadline to report before it is killed
MAX_LINE = wire.MAX_BYTES + (1 << 20)  # longest message line accepted from a runner


def _stream_output(name: str, text: str):
    from nbformat.notebooknode import NotebookNode

    return NotebookNode(output_type="stream", name=name, text=text)


# ============================================================ the grader's side
class RunnerProcess:
    """The grader's handle on one test runner (a child process, JSON lines both ways).

    ``command(fd)`` gives the command line that starts :mod:`tools.grading.runner` with its replies on
    file descriptor ``fd`` (``tools.grading.sandbox.runner_command``: sandboxed); by default the runner
    runs unsandboxed (``--no-sandbox``, and the protocol's own tests)."""

    def __init__(self, command=None, env: dict | None = None):
        r, w = os.pipe()
        argv = command(w) if command is not None else [sys.executable, "-I", "-m", "tools.grading.runner", str(w)]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, pass_fds=(w,), env=env, cwd="/",
                                     start_new_session=True)
        os.close(w)
        self.fd = r
        self.buf = b""

    def send(self, msg: dict) -> None:
        self.proc.stdin.write(json.dumps(msg, allow_nan=False).encode() + b"\n")
        self.proc.stdin.flush()

    def recv(self, deadline: float) -> dict | None:
        """The next message, or None at the deadline, when the runner has gone or sent a line
        longer than :data:`MAX_LINE`."""
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or len(self.buf) > MAX_LINE:
                return None
            ready, _, _ = select.select([self.fd], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(self.fd, 1 << 20)
                if not chunk:
                    return None
                self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        try:
            msg = json.loads(line)
        except ValueError:
            return None
        return msg if isinstance(msg, dict) else None

    def close(self) -> None:
        try:
            self.send({"op": "exit"})
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except Exception:  # noqa: BLE001
            self.kill()
        finally:
            with contextlib.suppress(OSError):
                os.close(self.fd)

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, 9)
        with contextlib.suppress(Exception):
            self.proc.kill()
            self.proc.wait(timeout=5)


class _Cell:
    """What the grader knows while one test cell runs: its declared names, its deadline, the
    first protocol violation of the kernel (if any)."""

    def __init__(self, declared: list[str], deadline: float):
        self.declared = frozenset(declared)
        self.deadline = deadline
        self.violation: str | None = None
        self.mistakes: list[dict] = []  # the known mistakes sent with the cell
        self.mistake: dict | None = None  # the one the runner recognised, if the cell failed

    def violate(self, what: str, sent) -> None:
        if self.violation is None:
            shown = sent if isinstance(sent, str) else json.dumps(sent, default=str)
            self.violation = f"{what} (sent: {shown[:300]!r})"


class RemoteTests:
    """Autograded test cells run in a test runner, their calls answered by the student's kernel.

    The grader's side of the channel (see the module docstring), for one notebook at a time:
    :meth:`install` puts the data channel's server in a fresh kernel, :meth:`run_test` runs one
    test cell in the runner (started on the first one) and sets the cell's outputs,
    :meth:`close` ends the runner. The grading executor (``tools.grading.steps.TestRunner``)
    holds one per notebook.

    Parameters
    ----------
    kernel : object
        Whatever holds the student's kernel: its ``kc`` (client) and ``km`` (manager) are read
        at each request (a restarted kernel has a new client).
    runner_command : callable, optional
        ``fd -> argv`` of a sandboxed runner (``tools.grading.sandbox.runner_command``); None: the
        runner runs unsandboxed (``--no-sandbox``, and the protocol's own tests).
    declarable : frozenset of str, optional
        The names the notebook's answer cells define in the course's source; a test cell's free
        names outside it are never asked of the kernel (None: not known, no filter).
    mistakes : dict, optional
        Test cell grade id -> the known mistakes of its exercise (``tools.grading.mistakes``), sent to the runner.
    max_output_bytes : int
        Cap of a test cell's stream output and error message (0: none).
    flags : set of str, optional
        Where protocol violations are flagged (the notebook's integrity flags).
    failed_lines : dict, optional
        Where the line of each failing test cell goes (grade id -> line); None: not asked.
    mistaken : dict, optional
        Where the known mistake each failing test recognised goes (grade id -> name); None: not kept.
    """

    def __init__(self, kernel, runner_command=None, declarable: frozenset | None = None,
                 mistakes: dict | None = None, max_output_bytes: int = 0, flags: set | None = None,
                 failed_lines: dict | None = None, mistaken: dict | None = None) -> None:
        self.kernel = kernel
        self.runner_command = runner_command
        self.declarable = declarable
        self.mistakes = mistakes or {}
        self.max_output_bytes = int(max_output_bytes or 0)
        self.flags = flags if flags is not None else set()
        self.failed_lines = failed_lines
        self.mistaken = mistaken
        self._seq = 0
        self._runner: RunnerProcess | None = None

    def _next_id(self) -> int:
        self._seq += 1
        return self._seq

    async def kernel_run(self, code: str, timeout: float, user_expressions: dict | None = None,
                         stdin_hook=None, on_stream=None) -> dict:
        """Run ``code`` in the student's kernel; its stream output goes to ``on_stream(name, text)``.
        Raises ``TimeoutError`` after ``timeout`` s and ``DeadKernelError`` if the kernel dies."""
        import asyncio

        from nbclient.exceptions import DeadKernelError
        from nbclient.util import ensure_async

        def on_output(msg):
            if on_stream is not None and msg["header"]["msg_type"] == "stream":
                on_stream(str(msg["content"].get("name", "stdout")), str(msg["content"].get("text", "")))

        task = asyncio.ensure_future(ensure_async(self.kernel.kc.execute_interactive(
            code, silent=False, store_history=False, user_expressions=user_expressions or {},
            allow_stdin=stdin_hook is not None, stdin_hook=stdin_hook or (lambda m: None),
            output_hook=on_output, timeout=timeout)))
        while True:  # a function that kills the kernel must not cost the cell's whole time limit
            done, _ = await asyncio.wait({task}, timeout=1.0)
            if done:
                return task.result()["content"]
            if not await ensure_async(self.kernel.km.is_alive()):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
                raise DeadKernelError("the kernel died")

    async def _value(self, code: str, timeout: float, **kw):
        """Run ``code`` and read the server's answer (``__td_rpc__.out``), parsed as JSON.
        Raises :class:`tools.grading.wire.ProtocolViolation` for anything but a JSON text."""
        for attempt in (0, 1):
            content = await self.kernel_run(code, timeout, user_expressions={"r": f"{SERVER}.out"}, **kw)
            res = content.get("user_expressions", {}).get("r", {})
            if res.get("status") == "ok":
                text = res.get("data", {}).get("text/plain", "")
                if not isinstance(text, str) or len(text) > 2 * wire.MAX_BYTES:
                    raise wire.ProtocolViolation("an answer over the size limit")
                try:
                    value = ast.literal_eval(text)
                except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
                    raise wire.ProtocolViolation("an answer that is not a string") from None
                return wire.parse(value)
            if attempt == 0:  # a restarted kernel, or a submission that deleted the server: install again
                await self.install()
        raise RuntimeError("the student's kernel did not answer the grader")

    async def install(self) -> None:
        """Put the server (:class:`tools.grading.wire.Server`) in the student's kernel."""
        await self.kernel_run(INSTALL, timeout=60)

    async def _describe(self, names: list[str], cell: _Cell) -> dict:
        """What the kernel's notebook defines under ``names`` (each checked: a function, a value
        as data, missing, unreadable); a violation or a silent kernel leaves every name missing."""
        missing = {n: {"kind": "missing"} for n in names}
        req_id = self._next_id()
        code = f"{SERVER}.describe({wire.dumps({'id': req_id, 'names': names})!r})"
        try:
            answer = await self._value(code, max(1.0, cell.deadline - time.monotonic()))
            return wire.check_describe(answer, req_id, names)["info"]
        except wire.ProtocolViolation as v:
            cell.violate(f"the answer about the names {names} was not the one asked for: {v}", str(v))
            return missing
        except TimeoutError:  # a silent kernel: stop what it is doing, every name is missing
            await self._interrupt()
            return missing
        except Exception:  # noqa: BLE001 - a dead kernel: every name is missing
            return missing

    async def _interrupt(self) -> None:
        """Interrupt the kernel after a request ran out of time, so it is free for the next one."""
        from nbclient.util import ensure_async

        await ensure_async(self.kernel.km.interrupt_kernel())
        with contextlib.suppress(Exception):
            await self._value(f"{SERVER}.out = ''", 15)

    def _stdin_hook(self, call_id: int, runner_id, registered: set, cell: _Cell, add_stream):
        """The kernel's stdin channel during call ``call_id``: a call-back request, checked, goes
        to the runner; anything else is a violation and the student's code gets an error."""
        runner = self._runner

        def hook(req):
            prompt = req.get("content", {}).get("prompt", "")
            try:
                cb = wire.check_callback(wire.parse(prompt), call_id, registered)
            except wire.ProtocolViolation as v:
                cell.violate(f"a request on the kernel's input channel that is not a call-back of this call: {v}",
                             prompt)
                self.kernel.kc.input(json.dumps({"err": {"ename": VIOLATION, "evalue": "refused by the grader"}}))
                return
            runner.send({"op": "callback", "id": runner_id, "cb": cb["cb"], "args": cb["args"],
                         "kwargs": cb["kwargs"]})
            self.kernel.kc.input(json.dumps(self._callback_result(cell, runner_id, add_stream)))

        return hook

    def _callback_result(self, cell: _Cell, runner_id, add_stream) -> dict:
        """The runner's answer to a call-back (its output relayed), as data for the kernel."""
        runner = self._runner
        while True:
            m = runner.recv(cell.deadline)
            if m is None:
                return {"err": {"ename": "TimeoutError", "evalue": "the test did not answer a call-back in time"}}
            op = m.get("op")
            if op == "stream":
                add_stream(str(m.get("name")), str(m.get("text")))
            elif op == "callback_result" and m.get("id") == runner_id:
                return {k: m[k] for k in ("ok", "err") if k in m}
            elif op == "call":  # a call-back of the test calling the student again: not supported
                runner.send({"op": "result", "id": m.get("id"), "err": {
                    "ename": "RuntimeError", "evalue": "a test's call-back cannot call your function again"}})
            else:
                return {"err": {"ename": "RuntimeError", "evalue": "the test runner sent a message out of turn"}}

    async def _call(self, msg: dict, cell: _Cell, add_stream) -> dict:
        """Run one call of the runner in the student's kernel; the answer, checked, as
        ``{"ok", "after"}`` or ``{"err"}`` (built here from the checked fields)."""
        name = msg.get("name")
        if name not in cell.declared:
            return {"err": {"ename": "NameError", "evalue": f"{name!r} is not a name this test declared"}}
        args = msg.get("args")
        n_args = len(args["l"]) if isinstance(args, dict) and isinstance(args.get("l"), list) else 0
        registered = wire.callbacks_in([args, msg.get("kwargs")])
        call_id = self._next_id()
        request = {"id": call_id, "name": name, "exercise": msg.get("exercise"), "args": args,
                   "kwargs": msg.get("kwargs")}
        code = f"{SERVER}.call({wire.dumps(request)!r})"
        try:
            answer = await self._value(code, max(1.0, cell.deadline - time.monotonic()),
                                          stdin_hook=self._stdin_hook(call_id, msg.get("id"), registered, cell,
                                                                          add_stream),
                                          on_stream=add_stream)
            reply = wire.check_reply(answer, call_id, n_args, cell.declared)
        except wire.ProtocolViolation as v:
            cell.violate(f"the answer to a call of {name} was not in the expected form: {v}", str(v))
            return {"err": {"ename": VIOLATION, "evalue": "the answer was refused by the grader"}}
        except TimeoutError:
            await self._interrupt()  # the interrupted call is over
            return {"err": {"ename": "CellTimeoutError",
                            "evalue": f"your function {name} did not return before the cell's time limit"}}
        except Exception as exc:  # noqa: BLE001 - a dead kernel, a kernel that does not answer
            if type(exc).__name__ == "DeadKernelError":
                from tools.grading.nbgrader_ext import KERNEL_DIED

                why = (f"the kernel died while running your function {name} "
                       "(it exited, crashed or ran out of memory)")
                return {"err": {"ename": KERNEL_DIED, "evalue": why}}
            return {"err": {"ename": type(exc).__name__, "evalue": f"calling your function {name}: {exc}"}}
        if cell.violation:  # a refused call-back during the call: the call fails whatever it returned
            return {"err": {"ename": VIOLATION, "evalue": "a message of the call was refused by the grader"}}
        return {"err": reply["err"]} if "err" in reply else {"ok": reply["ok"], "after": reply["after"]}

    def _start_runner(self) -> RunnerProcess:
        if self._runner is None:
            self._runner = RunnerProcess(self.runner_command)
        return self._runner

    def _drop_runner(self) -> None:
        if self._runner is not None:
            self._runner.kill()
            with contextlib.suppress(OSError):
                os.close(self._runner.fd)
            self._runner = None

    async def _serve(self, cell: _Cell, add_stream) -> dict | None:
        """Answer the runner's requests until the cell is done; the cell's error, or None."""
        runner = self._runner
        while True:
            msg = runner.recv(cell.deadline + GRACE)
            if msg is None:
                self._drop_runner()
                return {"ename": "CellTimeoutError", "evalue": "the test did not finish before the cell's time limit"}
            op = msg.get("op")
            if op == "stream":
                add_stream(str(msg.get("name")), str(msg.get("text")))
            elif op == "need":
                names = [n for n in msg.get("names", []) if n in cell.declared]
                runner.send({"op": "names", "id": msg.get("id"), "info": await self._describe(names, cell)})
            elif op == "call":
                runner.send({"op": "result", "id": msg.get("id"), **await self._call(msg, cell, add_stream)})
            elif op == "done":
                err = msg.get("error")
                named = msg["mistake"].get("name") if isinstance(msg.get("mistake"), dict) else None
                cell.mistake = next((m for m in cell.mistakes if m["name"] == named), None)  # one we sent
                return err if isinstance(err, dict) else None
            else:
                self._drop_runner()
                return {"ename": "RuntimeError", "evalue": "the test runner sent a message out of turn"}

    async def run_test(self, cell, index: int, timeout: float | None):
        """Run test cell ``cell`` (the ``index``-th of its notebook) in the runner, within
        ``timeout`` seconds (None: 90); set its outputs and execution count; return it."""
        from tools.grading.nbgrader_ext import OutputCap, cap_error, error_output

        runner = self._start_runner()
        outputs: list = []
        cap = OutputCap(self.max_output_bytes, 0)  # the test's and the student's prints

        def add_stream(name: str, text: str) -> None:
            name = name if name in ("stdout", "stderr") else "stdout"
            shown = cap.stream(name, text)
            if not shown:
                return
            if outputs and outputs[-1].get("output_type") == "stream" and outputs[-1]["name"] == name:
                outputs[-1]["text"] += shown
            else:
                outputs.append(_stream_output(name, shown))

        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", str(index))
        declared = [n for n in free_names(cell.source) if self.declarable is None or n in self.declarable]
        state = _Cell(declared, time.monotonic() + float(timeout or 90))
        label = f"<test cell {grade_id}>"
        request = {"op": "run", "source": cell.source, "label": label, "student": sorted(state.declared)}
        known = self.mistakes.get(grade_id)
        if known:  # the instructor's known mistakes of the exercise (tools.grading.mistakes), never the kernel's
            state.mistakes = list(known)
            request.update(mistakes=state.mistakes, budget=max(0.0, state.deadline - time.monotonic()))
        runner.send(request)
        error = await self._serve(state, add_stream)
        outputs += cap.finish()
        lines = self.failed_lines
        if error and lines is not None and self._runner is not None:
            self._runner.send({"op": "where"})
            msg = self._runner.recv(min(time.monotonic() + 10, state.deadline + GRACE))
            if msg and msg.get("op") == "where" and isinstance(msg.get("line"), int):
                lines[grade_id] = int(msg["line"])
        if state.violation:  # the cell fails, whatever the test concluded; the student is flagged
            self.flags.add(f"protocol violation in {grade_id}: {state.violation}")
            error = {"ename": VIOLATION, "evalue": (
                "a message from your notebook's kernel was not an answer the grader asked for, so this test "
                "cannot be trusted and scores 0: " + state.violation)}
        if error and state.mistake and not state.violation:
            seen = self.mistaken
            if seen is not None:
                seen[grade_id] = str(state.mistake.get("name"))
            error = {**error, "evalue": f"{error.get('evalue')}\n\n{MISTAKE_LEAD} {state.mistake['hint']}"}
        if error:
            error = cap_error({"ename": str(error.get("ename")), "evalue": str(error.get("evalue"))},
                              self.max_output_bytes)
            outputs.append(error_output(error["ename"], error["evalue"]))
        cell.outputs = outputs
        count = getattr(self.kernel, "code_cells_executed", 0) + 1  # nbclient's count of the cells run
        with contextlib.suppress(AttributeError):
            self.kernel.code_cells_executed = count
        cell.execution_count = count
        return cell

    def close(self) -> None:
        """End the test runner (a fresh one starts at the next test cell)."""
        if self._runner is not None:
            self._runner.close()
            self._runner = None
