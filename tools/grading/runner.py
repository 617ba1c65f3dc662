"""The test runner: the process that runs a notebook's autograded test cells while it is graded.

Started by the grader (:class:`tools.grading.remote_tests.RunnerProcess`) once per notebook, sandboxed
as an unprivileged user of its own (``tools/grading/sandbox.py``: no network, no checkout, no course,
the notebook's grading edition of ``td_lib`` read-only), it talks JSON lines with the grader
only: requests on stdin, replies on a file descriptor of their own. It imports the standard
library and :mod:`tools.grading.wire`, nothing else of the repository (in the sandbox it starts as
``python -s -E -m tools.grading.runner`` in ``/runner``, which holds only those two files).

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
  by the grader against the schema of :func:`tools.grading.wire.check_reply` first) and may relay
  call-backs ``{"op": "callback", "id", "cb", "args", "kwargs"}`` to callables the test passed.
- ``{"op": "done", "error", "mistake"}`` ends the cell; ``{"op": "where"}`` asks where the last
  failing cell stopped; ``{"op": "exit"}`` ends the runner.
- A ``run`` request may carry the exercise's **known mistakes** (``"mistakes"``: each a
  ``name``, a ``hint``, the instructor's ``program`` that defines the wrong functions, the names it
  ``defines``, and the tolerances ``rtol``/``atol``; :mod:`tools.grading.mistakes`) and the seconds the
  cell has left (``"budget"``). When the cell fails, the runner calls each mistake's functions
  on the inputs the test gave the student's (recorded at each call) and compares the results
  with the student's: a mistake whose results all agree within its tolerances is named in
  ``done`` (``{"name", "hint"}``), the closest one if several do. The failure stays a failure.

Data from the student's kernel is decoded without references to any library (``ref``) and
with functions only as the declared names: nothing the kernel sends names an operation or
selects code here.
"""

from __future__ import annotations

import ast
import builtins
import copy
import importlib
import io
import json
import math
import os
import signal
import sys
import time

from tools.grading import wire

MISTAKE_SECONDS = 30.0  # at most this long to compare a failed cell's calls with its known mistakes
MAX_CALLS = 256  # calls of the student's functions kept per cell for that comparison


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
        self.calls: list[tuple[str, tuple, dict, object]] = []  # (name, args, kwargs, result) of the running cell
        self.recording = True
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
        inputs = self._snapshot(args, kwargs) if self.recording and len(self.calls) < MAX_CALLS else None
        try:
            result = self._call(remote, args, kwargs)
        except Exception as exc:
            if inputs is not None:
                self.calls.append((remote.name, *inputs, _Raised(type(exc).__name__)))
            raise
        finally:
            self.callbacks = saved
        if inputs is not None:
            kept = self._snapshot((result,), {})
            if kept is not None:
                self.calls.append((remote.name, *inputs, kept[0][0]))
        return result

    def _snapshot(self, args: tuple, kwargs: dict):
        """A copy of a call's inputs as the test gave them (the student's function may change them
        in place), or None where they cannot be copied."""
        try:
            return copy.deepcopy((args, kwargs), {id(self): self})
        except Exception:  # noqa: BLE001 - an input that cannot be copied: that call is not compared
            return None

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
        self.calls = []
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

    def recognise(self, mistakes: list, budget: float) -> dict | None:
        """The known mistake the failed cell's calls look like (``{"name", "hint"}``), or None:
        :func:`recognise` on the calls of the cell just run, within ``budget`` seconds."""
        calls, self.calls = self.calls, []
        if not mistakes or not calls:
            return None
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = io.StringIO()  # a mistake's prints are not the student's output
        self.recording = False  # a student's function passed to a mistake is called, not recorded
        try:
            return recognise(mistakes, calls, budget)
        finally:
            sys.stdout, sys.stderr = saved
            self.recording = True


class _Raised:
    """A call of the student's function that raised (its exception's type name)."""

    def __init__(self, ename: str):
        self.ename = ename


class _OutOfTime(BaseException):
    pass


def _alarm(signum, frame):
    raise _OutOfTime


def close(got, want, rtol: float, atol: float) -> bool:
    """``got`` equals ``want`` within ``|got - want| <= atol + rtol |want|``, elementwise, through
    tuples, lists and dicts (same structure), numpy arrays of the same shape, numbers and the
    rest by ``==``; NaN matches NaN."""
    if isinstance(want, _Raised) or isinstance(got, _Raised):
        return isinstance(want, _Raised) and isinstance(got, _Raised) and want.ename == got.ename
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and \
            all(close(got[k], want[k], rtol, atol) for k in want)
    if isinstance(want, (tuple, list)):
        return isinstance(got, (tuple, list)) and len(got) == len(want) and \
            all(close(g, w, rtol, atol) for g, w in zip(got, want, strict=True))
    if isinstance(want, (bool, str, bytes, type(None))) or isinstance(got, (bool, str, bytes, type(None))):
        return type(got) is type(want) and got == want
    if isinstance(want, (int, float, complex)) and isinstance(got, (int, float, complex)):
        if got == want:  # infinities of one sign included
            return True
        if math.isnan(abs(want)) or math.isnan(abs(got)):
            return math.isnan(abs(want)) and math.isnan(abs(got))
        return bool(abs(got - want) <= atol + rtol * abs(want))
    try:
        import numpy as np

        g, w = np.asarray(got), np.asarray(want)
        if g.shape != w.shape or g.dtype.kind not in "biufc" or w.dtype.kind not in "biufc":
            return bool(g.shape == w.shape and np.array_equal(g, w))
        return bool(np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True))
    except Exception:  # noqa: BLE001 - values that cannot be compared do not match
        return False


def _distance(got, want) -> float:
    """How far ``got`` is from ``want`` (largest relative difference), to rank matching mistakes."""
    try:
        import numpy as np

        if isinstance(want, (tuple, list)):
            return max((_distance(g, w) for g, w in zip(got, want, strict=True)), default=0.0)
        if isinstance(want, dict):
            return max((_distance(got[k], want[k]) for k in want), default=0.0)
        g, w = np.asarray(got, dtype=complex), np.asarray(want, dtype=complex)
        d = np.abs(g - w) / (1e-300 + np.abs(w))
        return float(np.nanmax(d)) if d.size else 0.0
    except Exception:  # noqa: BLE001
        return 0.0


def recognise(mistakes: list, calls: list, budget: float) -> dict | None:
    """Which known mistake the student's ``calls`` (``(name, args, kwargs, result)``) look like.

    Each mistake's ``program`` (the instructor's wrong answer) runs in a fresh namespace; its
    functions named in ``defines`` are called with the recorded inputs of every call of the same
    name. A mistake matches when at least one call is compared and every compared result agrees
    with the student's within the mistake's ``rtol``/``atol``. Returns the closest match as
    ``{"name", "hint"}``; None when none matches, a program fails, or ``budget`` seconds run out
    (checked by an interval timer: a slow mistake costs no more than the budget)."""
    if budget <= 0.5:
        return None
    best = None
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, budget)
    try:
        for m in mistakes:
            try:
                ns: dict = {"__name__": "__td_mistake__", "__builtins__": builtins}
                exec(compile(m["program"], f"<known mistake {m['name']}>", "exec"), ns)  # noqa: S102 - instructor code
                compared, distance = 0, 0.0
                for name, args, kwargs, result in calls:
                    if name not in m["defines"] or not callable(ns.get(name)):
                        continue
                    a, k = copy.deepcopy((args, kwargs))
                    try:
                        want = ns[name](*a, **k)
                    except Exception as exc:  # noqa: BLE001 - the mistake raises too: compared as such
                        want = _Raised(type(exc).__name__)
                    if not close(result, want, float(m["rtol"]), float(m["atol"])):  # the grader sends both
                        break
                    compared += 1
                    distance = max(distance, _distance(result, want))
                else:
                    if compared and (best is None or distance < best[0]):
                        best = (distance, m)
            except _OutOfTime:
                break
            except Exception:  # noqa: BLE001 - a mistake that cannot be evaluated here matches nothing
                continue
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return None if best is None else {"name": str(best[1]["name"]), "hint": str(best[1]["hint"])}


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
            t0 = time.monotonic()
            err = runner.run(msg["source"], msg.get("label", "<test cell>"), list(msg.get("student", [])))
            mistake = None
            if err is not None and msg.get("mistakes"):
                left = float(msg.get("budget", 0)) - (time.monotonic() - t0) - 1.0
                mistake = runner.recognise(msg["mistakes"], min(left, MISTAKE_SECONDS))
            runner.calls = []
            ch.send({"op": "done", "error": err, "mistake": mistake})
        elif msg["op"] == "where":  # where the last failing cell stopped (its visible or hidden part)
            ch.send({"op": "where", "line": runner.last_line})
        elif msg["op"] == "exit":
            return


if __name__ == "__main__":
    serve(int(sys.argv[1]))
