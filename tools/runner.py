"""The test runner: the process that runs a notebook's autograded test cells while it is graded.

Started by the grader (:class:`tools.remote_tests.RunnerProcess`) once per notebook, sandboxed
as an unprivileged user of its own (``tools/sandbox.py``: no network, no checkout, no course,
the notebook's grading edition of ``td_lib`` read-only), it talks JSON lines with the grader
only: requests on stdin, replies on a file descriptor of their own. It imports the standard
library and :mod:`tools.wire`, nothing else of the repository (in the sandbox it starts as
``python -s -E -m tools.runner`` in ``/runner``, which holds only those two files).

The grader asks, the runner answers (docs/GRADING.md):

- ``{"op": "run", "source", "label", "student"}``: run one test cell in a **fresh namespace**.
  ``student`` lists the names the cell reads without binding them (the student's functions and
  values, declared by the cell's own source): the runner asks the grader for those and nothing
  else (``{"op": "need", "id", "names"}``, answered by ``{"op": "names", "id", "info"}``: each
  a ``function`` of the student's, a ``value`` as data, or missing). Every other name the cell
  reads comes from the cell itself: its imports, its baked values, its helpers. Nothing of an
  earlier cell is kept, so a restarted runner loses nothing.
- During the cell, a call of a student's function is ``{"op": "call", "id", "name",
  "exercise", "args", "kwargs"}``; the grader answers ``{"op": "result", "id", ...}`` (checked
  by the grader against the schema of :func:`tools.wire.check_reply` first) and may relay
  call-backs ``{"op": "callback", "id", "cb", "args", "kwargs"}`` to callables the test passed.
- ``{"op": "done", "error"}`` ends the cell; ``{"op": "where"}`` asks where the last failing
  cell stopped; ``{"op": "exit"}`` ends the runner.

Data from the student's kernel is decoded without references to any library (``ref``) and
with functions only as the declared names: nothing the kernel sends names an operation or
selects code here.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import io
import json
import os
import sys

from tools import wire


def free_names(source: str) -> list[str]:
    """Names ``source`` reads that it never binds (nor are builtins), in order of appearance:
    for a test cell, the student's work it declares."""
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
    seen: list[str] = []
    for name in loads:
        if name not in bound and not hasattr(builtins, name) and name not in seen:
            seen.append(name)
    return seen


class Channel:
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
    def __init__(self, channel: Channel, name: str):
        self.channel, self.name = channel, name

    def write(self, text: str) -> int:
        if text:
            self.channel.send({"op": "stream", "name": self.name, "text": text})
        return len(text)

    def writable(self) -> bool:
        return True


class Remote:
    """A function of the student's notebook, called in the student's kernel."""

    def __init__(self, runner: Runner, name: str, exercise: str | None = None):
        self.runner, self.name, self.exercise = runner, name, exercise
        self.__name__ = self.__qualname__ = name

    def __call__(self, *args, **kwargs):
        return self.runner.call(self, args, kwargs)

    def __repr__(self) -> str:
        return f"<your function {self.name}>"


class Runner:
    """One notebook's test cells: a fresh namespace per cell, proxies to the student's kernel."""

    def __init__(self, channel: Channel):
        self.ch = channel
        self.next_id = 0
        self.student: frozenset[str] = frozenset()  # the names the running cell declared
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

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

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
        if "rf" in tagged and tagged["rf"] in self.student:
            return Remote(self, str(tagged["rf"]))
        raise wire.WireError("the student's kernel sent a function where a value was expected")

    def decode(self, data):
        """Data from the kernel: no library reference, functions only as declared names."""
        return wire.decode(data, self.decode_callable, allowed_refs=frozenset())

    # ---------------------------------------------------------------------- a call
    def call(self, remote: Remote, args: tuple, kwargs: dict):
        saved, self.callbacks = self.callbacks, {}
        try:
            return self._call(remote, args, kwargs)
        finally:
            self.callbacks = saved

    def _call(self, remote: Remote, args: tuple, kwargs: dict):
        call_id = self._id()
        self.ch.send({"op": "call", "id": call_id, "name": remote.name, "exercise": remote.exercise,
                      "args": wire.encode(list(args), self.encode_callable),
                      "kwargs": wire.encode(kwargs, self.encode_callable)})
        while True:
            msg = self.ch.recv()
            if msg.get("op") == "callback" and msg.get("id") == call_id:
                self.ch.send({"op": "callback_result", "id": call_id, **self._callback(msg)})
                continue
            if msg.get("op") != "result" or msg.get("id") != call_id:
                raise RuntimeError("test runner: the grader sent a message out of turn")
            if "err" in msg:
                raise wire.exception(msg["err"])
            for i, value in msg.get("after", {}).items():
                wire.copy_into(args[int(i)], self.decode(value))
            return self.decode(msg["ok"])

    def _callback(self, msg: dict) -> dict:
        try:
            fn = self.callbacks[int(msg["cb"])]
            args = self.decode(msg["args"])
            kwargs = self.decode(msg["kwargs"])
            return {"ok": wire.encode(fn(*args, **kwargs), self.encode_callable)}
        except Exception as exc:  # noqa: BLE001 - reported to the student's kernel as the callable's error
            return {"err": wire.error_of(exc)}

    # ---------------------------------------------------------------------- a cell
    def resolve(self, ns: dict) -> None:
        """Bind, in ``ns``, the student's names the running cell declared (asked of the grader)."""
        if not self.student:
            return
        req_id = self._id()
        names = sorted(self.student)
        self.ch.send({"op": "need", "id": req_id, "names": names})
        msg = self.ch.recv()
        if msg.get("op") != "names" or msg.get("id") != req_id:
            raise RuntimeError("test runner: the grader sent a message out of turn")
        for name in names:
            info = msg["info"].get(name, {})
            if info.get("kind") == "function":
                ns[name] = Remote(self, name)
            elif info.get("kind") == "value":
                try:
                    ns[name] = self.decode(info["value"])
                except Exception:  # noqa: BLE001 - unreadable: the cell gets a NameError, as in the notebook
                    continue

    def run(self, source: str, label: str, student: list[str]) -> dict | None:
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = _Stream(self.ch, "stdout"), _Stream(self.ch, "stderr")
        self.student = frozenset(student)
        ns: dict = {"__name__": "__main__", "__builtins__": builtins}
        try:
            self.resolve(ns)
            code = compile(source, label, "exec")
            exec(code, ns)  # noqa: S102 - the instructor's test cell
            return None
        except BaseException as exc:  # noqa: BLE001 - the cell's failure is its result
            self.last_line = failed_line(exc, label)  # the grader asks for it: {"op": "where"}
            return wire.error_of(exc)
        finally:
            sys.stdout, sys.stderr = saved
            self.student = frozenset()


def failed_line(exc: BaseException, label: str) -> int | None:
    """The line of the test cell (compiled as ``label``) where ``exc`` stopped it, 1-based, or None.

    The grader keeps it (``failed_lines`` of a grading record), so a service can tell whether a
    test cell failed in its visible part or in its hidden tests."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == label:
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is None and isinstance(exc, SyntaxError) and exc.filename == label:
        line = exc.lineno
    return line


def serve(fd_out: int) -> None:
    """The runner's loop: one ``run`` request per test cell."""
    ch = Channel(fd_out)
    runner = Runner(ch)
    while True:
        msg = ch.recv()
        if msg["op"] == "run":
            err = runner.run(msg["source"], msg.get("label", "<test cell>"), list(msg.get("student", [])))
            ch.send({"op": "done", "error": err})
        elif msg["op"] == "where":  # where the last failing cell stopped (its visible or hidden part)
            ch.send({"op": "where", "line": runner.last_line})
        elif msg["op"] == "exit":
            return


if __name__ == "__main__":
    serve(int(sys.argv[1]))
