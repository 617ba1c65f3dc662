"""Test cells run outside the student's kernel: the verdict is computed where student code cannot reach.

While ``python -m tools.grade`` grades a notebook, every autograded test cell runs in a
**test runner**: a separate Python process of the grader's own (``python -m tools.remote_tests``),
started per notebook, that holds the cell's code, its hidden inputs and its expected values. The
student's kernel (sandboxed, ``tools/sandbox.py``) runs the other cells: imports, data and the
student's answers. When a test calls a function the student wrote, the call travels to the
student's kernel as data and the result comes back as data (:mod:`tools.wire`: JSON, no pickle):

    grader ──"run cell"──▶ runner ──"call my_ntk(X, W, v, phi, dphi)"──▶ grader ──▶ student's kernel
                            ▲                                                          │
                            └──────── result (arrays, numbers) or the exception ◀──────┘

So the student's code never sees a test's source, its expected values or the comparison that
decides the grade, and nothing it replaces in its own process (``numpy.allclose``, builtins,
IPython's machinery, the delegation guard's module) changes a verdict: the comparisons run in
the runner. A callable a test passes to the student's function (``np.abs``, a lambda) goes by
reference when a library defines it, else as a call-back through the grader. Arrays, tensors
and random generators an argument carried are copied back after the call, as if the call had
run in place. Names a test cell uses but does not define (``np``, ``my_ntk``) are looked up in
the student's kernel: a module is imported in the runner (from an allowed list of packages), a
function becomes a proxy, a value is copied.

Output: the runner's prints and the student's prints during the calls, in order, in the cell's
outputs; a failure gives the usual error output (``AssertionError: <message>``). The cell's
timeout (``Execute.timeout``) covers the whole cell: a student's function still running then is
interrupted and the cell fails.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import io
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

from tools import wire

#: top-level packages a runner imports when the student's notebook names a module or function
ALLOWED = frozenset({"numpy", "scipy", "math", "cmath", "torch", "td_lib", "statistics", "fractions", "itertools",
                     "functools", "random", "matplotlib"})
WIRE_SOURCE = Path(wire.__file__).read_text()
SERVER = "__td_rpc__"
INSTALL = (f"import types as _td_t\n_td_m = _td_t.ModuleType('td_wire')\nexec({WIRE_SOURCE!r}, _td_m.__dict__)\n"
           f"{SERVER} = _td_m.Server(get_ipython().user_ns)\ndel _td_t, _td_m\n")


def free_names(source: str) -> list[str]:
    """Names ``source`` reads that it never binds (nor are builtins), in order of appearance."""
    tree = ast.parse(source)
    bound, loads = set(), []
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (bound.add(n.id) if isinstance(n.ctx, (ast.Store, ast.Del)) else loads.append(n.id))
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
    seen = []
    for name in loads:
        if name not in bound and not hasattr(builtins, name) and name not in seen:
            seen.append(name)
    return seen


# =================================================================== the runner process
class _Channel:
    """JSON lines: requests from the grader on stdin, replies on a file descriptor of their own
    (the runner's stdout stays free for libraries that write to it)."""

    def __init__(self, fd_out: int):
        self.inp = sys.stdin.buffer
        self.out = os.fdopen(fd_out, "wb", buffering=0)

    def send(self, msg: dict) -> None:
        self.out.write(json.dumps(msg, allow_nan=False).encode() + b"\n")

    def recv(self) -> dict:
        line = self.inp.readline()
        if not line:
            raise SystemExit(0)
        return json.loads(line)


class _Stream(io.TextIOBase):
    def __init__(self, channel: _Channel, name: str):
        self.channel, self.name = channel, name

    def write(self, text: str) -> int:
        if text:
            self.channel.send({"op": "stream", "name": self.name, "text": text})
        return len(text)

    def writable(self) -> bool:
        return True


class Runner:
    """The test runner's state: the test cells' namespace and the proxies to the student's kernel."""

    def __init__(self, channel: _Channel):
        self.ch = channel
        self.ns: dict = {"__name__": "__main__", "__builtins__": builtins}
        self.from_student: set[str] = set()
        self.last_line: int | None = None  # line of the test cell where the last failing cell stopped
        self.callbacks: dict[int, object] = {}
        # Tests wrap the student's function in td_lib.own_work.own_work(fn, exercise): keep the
        # exercise with the proxy, so the call in the student's kernel runs under the guard.
        ow = importlib.import_module("td_lib.own_work")
        original = ow.own_work

        def own_work(fn, exercise):
            if isinstance(fn, Remote):
                return Remote(self, fn.name, exercise)
            return original(fn, exercise)

        ow.own_work = own_work

    # ----------------------------------------------------------------- encoding hooks
    def encode_callable(self, obj):
        if isinstance(obj, Remote):
            return {"rf": obj.name}
        ref = wire._ref_of(obj)
        if ref is not None:
            return {"ref": ref}
        n = len(self.callbacks)
        self.callbacks[n] = obj
        return {"cb": n}

    def decode_callable(self, tagged):
        if "rf" in tagged:
            return Remote(self, str(tagged["rf"]))
        raise wire.WireError("the student's kernel sent a call-back where a value was expected")

    # ---------------------------------------------------------------------- a call
    def call(self, remote: Remote, args: tuple, kwargs: dict):
        self.callbacks.clear()
        self.ch.send({"op": "call", "name": remote.name, "exercise": remote.exercise,
                      "args": wire.encode(list(args), self.encode_callable),
                      "kwargs": wire.encode(kwargs, self.encode_callable)})
        while True:
            msg = self.ch.recv()
            if msg["op"] == "callback":
                self.ch.send({"op": "callback_result", **self._callback(msg)})
                continue
            if msg["op"] != "result":
                raise RuntimeError(f"test runner: unexpected message {msg['op']!r}")
            if "err" in msg:
                raise wire.exception(msg["err"])
            for i, value in msg.get("after", {}).items():
                wire.copy_into(args[int(i)], wire.decode(value))
            return wire.decode(msg["ok"], self.decode_callable, ALLOWED)

    def _callback(self, msg: dict) -> dict:
        try:
            fn = self.callbacks[int(msg["cb"])]
            args = wire.decode(msg["args"], self.decode_callable, ALLOWED)
            kwargs = wire.decode(msg["kwargs"], self.decode_callable, ALLOWED)
            return {"ok": wire.encode(fn(*args, **kwargs), self.encode_callable)}
        except Exception as exc:  # noqa: BLE001 - reported to the student's kernel as the callable's error
            return {"err": wire.error_of(exc)}

    # ---------------------------------------------------------------------- a cell
    def resolve(self, names: list[str]) -> None:
        """Bind the names a cell reads from the student's notebook (fresh for every cell)."""
        wanted = [n for n in names if n not in self.ns or n in self.from_student]
        if not wanted:
            return
        self.ch.send({"op": "need", "names": wanted})
        msg = self.ch.recv()
        for name, info in msg["info"].items():
            self.ns.pop(name, None)
            self.from_student.discard(name)
            kind = info.get("kind")
            try:
                if kind == "module" and str(info["module"]).split(".")[0] in ALLOWED:
                    value = importlib.import_module(str(info["module"]))
                elif kind == "ref":
                    value = wire.decode({"ref": info["ref"]}, allowed_refs=ALLOWED)
                elif kind == "function":
                    value = Remote(self, name)
                elif kind == "value":
                    value = wire.decode(info["value"], self.decode_callable, ALLOWED)
                else:
                    continue  # missing or unreadable: the cell gets a NameError, as in the notebook
            except Exception:  # noqa: BLE001 - a module outside ALLOWED, a malformed value
                continue
            self.ns[name] = value
            self.from_student.add(name)

    def run(self, source: str, label: str) -> dict | None:
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = _Stream(self.ch, "stdout"), _Stream(self.ch, "stderr")
        try:
            self.resolve(free_names(source))
            code = compile(source, label, "exec")
            exec(code, self.ns)  # noqa: S102 - the instructor's test cell
            return None
        except BaseException as exc:  # noqa: BLE001 - the cell's failure is its result
            self.last_line = failed_line(exc, label)  # the grader asks for it: {"op": "where"}
            return wire.error_of(exc)
        finally:
            sys.stdout, sys.stderr = saved


def failed_line(exc: BaseException, label: str) -> int | None:
    """The line of the test cell (compiled as ``label``) where ``exc`` stopped it, 1-based, or None.

    The grader keeps it (``tools/grade.py``: ``failed_lines`` of a grading record), so a service
    can tell whether a test cell failed in its visible part or in its hidden tests."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == label:
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is None and isinstance(exc, SyntaxError) and exc.filename == label:
        line = exc.lineno
    return line


class Remote:
    """A function of the student's notebook, called in the student's kernel."""

    def __init__(self, runner: Runner, name: str, exercise: str | None = None):
        self.runner, self.name, self.exercise = runner, name, exercise
        self.__name__ = self.__qualname__ = name

    def __call__(self, *args, **kwargs):
        return self.runner.call(self, args, kwargs)

    def __repr__(self) -> str:
        return f"<your function {self.name}>"


def serve(fd_out: int) -> None:
    """The runner's loop: one ``run`` request per test cell."""
    ch = _Channel(fd_out)
    runner = Runner(ch)
    while True:
        msg = ch.recv()
        if msg["op"] == "run":
            err = runner.run(msg["source"], msg.get("label", "<test cell>"))
            ch.send({"op": "done", "error": err})
        elif msg["op"] == "where":  # where the last failing cell stopped (its visible or hidden part)
            ch.send({"op": "where", "line": runner.last_line})
        elif msg["op"] == "exit":
            return


# ============================================================ the grader's side
class RunnerProcess:
    """The grader's handle on one test runner (a child process, JSON lines both ways)."""

    def __init__(self, env: dict | None = None):
        r, w = os.pipe()
        self.proc = subprocess.Popen([sys.executable, "-m", "tools.remote_tests", str(w)], stdin=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(w,),
                                     env=env, cwd=str(Path(__file__).resolve().parent.parent))
        os.close(w)
        self.fd = r
        self.buf = b""

    def send(self, msg: dict) -> None:
        self.proc.stdin.write(json.dumps(msg, allow_nan=False).encode() + b"\n")
        self.proc.stdin.flush()

    def recv(self, deadline: float) -> dict | None:
        """The next message, or None at the deadline or when the runner has gone."""
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.fd], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(self.fd, 1 << 20)
                if not chunk:
                    return None
                self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line)

    def close(self) -> None:
        try:
            self.send({"op": "exit"})
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except Exception:  # noqa: BLE001
            self.proc.kill()
        finally:
            os.close(self.fd)


def _stream_output(name: str, text: str):
    from nbformat.notebooknode import NotebookNode

    return NotebookNode(output_type="stream", name=name, text=text)


class RemoteTestsMixin:
    """For an nbgrader ``Execute`` preprocessor: autograded test cells run in a test runner,
    every other cell in the kernel (see the module docstring). ``tools/grade.py`` mixes it into
    its sandboxed Execute."""

    async def _td_kernel(self, code: str, timeout: float, user_expressions: dict | None = None,
                         stdin_hook=None, on_stream=None) -> dict:
        """Run ``code`` in the student's kernel; its stream output goes to ``on_stream(name, text)``.
        Raises ``TimeoutError`` after ``timeout`` s and ``DeadKernelError`` if the kernel dies."""
        import asyncio

        from nbclient.exceptions import DeadKernelError
        from nbclient.util import ensure_async

        def on_output(msg):
            if on_stream is not None and msg["header"]["msg_type"] == "stream":
                on_stream(msg["content"]["name"], msg["content"]["text"])

        task = asyncio.ensure_future(ensure_async(self.kc.execute_interactive(
            code, silent=False, store_history=False, user_expressions=user_expressions or {},
            allow_stdin=stdin_hook is not None, stdin_hook=stdin_hook or (lambda m: None),
            output_hook=on_output, timeout=timeout)))
        while True:  # a function that kills the kernel must not cost the cell's whole time limit
            done, _ = await asyncio.wait({task}, timeout=1.0)
            if done:
                return task.result()["content"]
            if not await ensure_async(self.km.is_alive()):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
                raise DeadKernelError("the kernel died")

    async def _td_value(self, code: str, timeout: float, **kw) -> dict:
        for attempt in (0, 1):
            content = await self._td_kernel(code, timeout, user_expressions={"r": f"{SERVER}.out"}, **kw)
            res = content.get("user_expressions", {}).get("r", {})
            if res.get("status") == "ok":
                return wire.loads(ast.literal_eval(res["data"]["text/plain"]))
            if attempt == 0:  # a restarted kernel, or a submission that deleted the server: install again
                await self._td_install()
        raise RuntimeError("the student's kernel did not answer the grader")

    async def _td_install(self) -> None:
        """Put the server (:class:`tools.wire.Server`) in the student's kernel."""
        await self._td_kernel(INSTALL, timeout=60)

    async def _td_call(self, msg: dict, deadline: float, add_stream) -> dict:
        """Run one call of the runner in the student's kernel (call-backs answered by the runner)."""
        from nbclient.util import ensure_async

        runner = self._td_runner

        def stdin_hook(req):
            prompt = req["content"].get("prompt", "")
            try:
                cb = json.loads(prompt)
                runner.send({"op": "callback", **cb})
                while True:
                    m = runner.recv(deadline)
                    if m is None:
                        raise TimeoutError("the test runner did not answer a call-back")
                    if m["op"] == "stream":
                        add_stream(m["name"], m["text"])
                        continue
                    if m["op"] == "callback_result":
                        m.pop("op")
                        self.kc.input(json.dumps(m))
                        return
                    raise RuntimeError(f"unexpected message {m['op']!r} during a call-back")
            except Exception as exc:  # noqa: BLE001 - the student's call fails with the reason
                self.kc.input(json.dumps({"err": wire.error_of(exc)}))

        request = {k: msg[k] for k in ("name", "exercise", "args", "kwargs")}
        code = f"{SERVER}.call({wire.dumps(request)!r})"
        try:
            return await self._td_value(code, max(1.0, deadline - time.monotonic()), stdin_hook=stdin_hook,
                                        on_stream=add_stream)
        except TimeoutError:
            await ensure_async(self.km.interrupt_kernel())
            try:
                return await self._td_value(f"{SERVER}.out = ''", 15)  # the interrupted call is over
            except Exception:  # noqa: BLE001
                pass
            return {"err": {"ename": "CellTimeoutError",
                            "evalue": f"your function {msg['name']} did not return before the cell's time limit"}}
        except Exception as exc:  # noqa: BLE001 - a dead kernel, a reply the grader cannot read
            if type(exc).__name__ == "DeadKernelError":
                from tools.nbgrader_ext import KERNEL_DIED

                why = (f"the kernel died while running your function {msg['name']} "
                       "(it exited, crashed or ran out of memory)")
                return {"err": {"ename": KERNEL_DIED, "evalue": why}}
            return {"err": {"ename": type(exc).__name__, "evalue": f"calling your function {msg['name']}: {exc}"}}

    async def _td_run_test(self, cell, index: int):
        from tools.nbgrader_ext import OutputCap, cap_error, error_output

        if getattr(self, "_td_runner", None) is None:
            self._td_runner = RunnerProcess()
        runner = self._td_runner
        outputs: list = []

        cap = OutputCap(int(getattr(self, "max_output_bytes", 0) or 0), 0)  # the test's and the student's prints

        def add_stream(name: str, text: str) -> None:
            shown = cap.stream(name, text)
            if not shown:
                return
            if outputs and outputs[-1].get("output_type") == "stream" and outputs[-1]["name"] == name:
                outputs[-1]["text"] += shown
            else:
                outputs.append(_stream_output(name, shown))

        timeout = self._get_timeout(cell) if hasattr(self, "_get_timeout") else self.timeout
        deadline = time.monotonic() + float(timeout or 90)
        label = f"<test cell {cell.metadata.get('nbgrader', {}).get('grade_id', index)}>"
        runner.send({"op": "run", "source": cell.source, "label": label})
        error = None
        while True:
            msg = runner.recv(deadline + 30)
            if msg is None:
                error = {"ename": "CellTimeoutError", "evalue": "the test did not finish before the cell's time limit"}
                runner.proc.kill()
                runner.close()
                self._td_runner = None
                break
            op = msg["op"]
            if op == "stream":
                add_stream(msg["name"], msg["text"])
            elif op == "need":
                try:
                    info = await self._td_value(f"{SERVER}.describe({wire.dumps(msg['names'])!r})", 60)
                except Exception:  # noqa: BLE001 - the kernel is gone: every name is missing
                    info = {n: {"kind": "missing"} for n in msg["names"]}
                runner.send({"op": "names", "info": info})
            elif op == "call":
                runner.send({"op": "result", **await self._td_call(msg, deadline, add_stream)})
            elif op == "done":
                error = msg.get("error")
                break
        outputs += cap.finish()
        lines = getattr(self, "td_failed_lines", None)  # tools/grade.py collects them per notebook
        if error and lines is not None and self._td_runner is not None:
            runner.send({"op": "where"})
            msg = runner.recv(time.monotonic() + 10)
            if msg and msg.get("op") == "where" and msg.get("line"):
                lines[cell.metadata.get("nbgrader", {}).get("grade_id", str(index))] = int(msg["line"])
        if error:
            error = cap_error(dict(error), int(getattr(self, "max_output_bytes", 0) or 0))
            outputs.append(error_output(error["ename"], error["evalue"]))
        cell.outputs = outputs
        self.code_cells_executed = getattr(self, "code_cells_executed", 0) + 1
        cell.execution_count = self.code_cells_executed
        return cell

    def _td_close(self) -> None:
        if getattr(self, "_td_runner", None) is not None:
            self._td_runner.close()
            self._td_runner = None


if __name__ == "__main__":
    serve(int(sys.argv[1]))
