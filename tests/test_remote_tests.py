"""The channel between the student's kernel and the test runner (tools/grading/wire.py) and the runner's
name resolution (tools/grading/remote_tests.py). The end-to-end properties (verdicts equal to serial
nbgrader, hostile submissions at 0) are in tests/test_grade.py."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from tools.grading import remote_tests, wire


def round_trip(obj):
    return wire.decode(wire.loads(wire.dumps(wire.encode(obj))))


def test_plain_values_and_containers_round_trip_exactly():
    obj = {"a": [1, 2.5, -0.0, 1e-300, float("inf"), -float("inf")], (1, "k"): (None, True, "x", 3 + 4j),
           "big": 2**80}
    got = round_trip(obj)
    assert got == obj and isinstance(got[(1, "k")], tuple) and math.copysign(1, got["a"][2]) == -1
    assert math.isnan(round_trip(float("nan")))


def test_arrays_tensors_and_generators_keep_dtype_shape_and_state():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = round_trip(a)
    assert got.dtype == np.float32 and got.shape == (3, 4) and np.array_equal(got, a)  # bytes, not text: exact
    assert round_trip(np.float64(0.1)) == 0.1 and isinstance(round_trip(np.int64(3)), np.int64)
    t = torch.linspace(0, 1, 5, dtype=torch.float64).requires_grad_(True)
    tt = round_trip(t)
    assert tt.dtype == torch.float64 and tt.requires_grad and torch.equal(tt.detach(), t.detach())
    g = np.random.default_rng(5)
    g2 = round_trip(g)
    assert np.array_equal(g.standard_normal(4), g2.standard_normal(4))
    tg = torch.Generator().manual_seed(7)
    tg2 = round_trip(tg)
    assert torch.equal(torch.rand(3, generator=tg), torch.rand(3, generator=tg2))


def test_refused_values_name_their_type():
    class Mine:
        pass

    with pytest.raises(wire.WireError, match="Mine"):
        wire.encode(Mine())
    with pytest.raises(wire.WireError, match="dtype object"):
        wire.encode(np.array([object()], dtype=object))
    with pytest.raises(wire.WireError, match="malformed"):
        wire.decode({"zz": 1})
    with pytest.raises(wire.WireError, match="refused reference"):
        wire.decode({"ref": "os:system"}, allowed_refs=frozenset({"numpy"}))


def test_library_functions_travel_by_reference_and_others_need_a_hook():
    assert wire.encode(np.abs) == {"ref": "numpy:absolute"}
    assert wire.decode(wire.encode(math.sqrt)) is math.sqrt
    with pytest.raises(wire.WireError):
        wire.encode(lambda x: x)
    assert wire.encode(lambda x: x, callable_hook=lambda f: {"cb": 0}) == {"cb": 0}


def test_exceptions_keep_their_class_name_and_select_nothing():
    e = wire.exception({"ename": "ValueError", "evalue": "bad"})
    assert isinstance(e, ValueError) and isinstance(e, wire.RemoteError) and str(e) == "bad"
    assert type(e).__name__ == "ValueError"
    d = wire.exception({"ename": "DelegationError", "evalue": "off"})
    assert type(d).__name__ == "DelegationError" and isinstance(d, wire.RemoteError)
    # A name that would change a test's control flow is only a label.
    for name in ("StopIteration", "SystemExit", "KeyboardInterrupt", "GeneratorExit", "__import__('os')"):
        e = wire.exception({"ename": name, "evalue": "x"})
        assert type(e).__bases__ == (wire.RemoteError,), name


def test_free_names_are_what_a_cell_reads_and_never_binds():
    src = ("import numpy as np\n_f = own_work(my_fn, 'ex')\nfor _i in range(3):\n    assert _f(_i) == ref[_i], 'm'\n"
           "def _h(x):\n    return helper(x) + _i\n")
    assert remote_tests.free_names(src) == ["own_work", "my_fn", "ref", "helper"]


def _start_runner():
    r, w = os.pipe()
    proc = subprocess.Popen([sys.executable, "-I", "-m", "tools.grading.runner", str(w)], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, pass_fds=(w,), cwd="/")
    os.close(w)
    return proc, os.fdopen(r, "rb")


def test_runner_asks_only_for_declared_names_and_computes_the_verdict_itself():
    """Play the grader: the runner asks for the declared names and calls; the 'student' answers with data."""
    proc, out = _start_runner()
    send = lambda m: (proc.stdin.write(json.dumps(m).encode() + b"\n"), proc.stdin.flush())  # noqa: E731
    recv = lambda: json.loads(out.readline())  # noqa: E731
    cell = ("import numpy as np\nfrom td_lib.own_work import own_work\n_f = own_work(double, 'exX')\n"
            "_a = np.arange(3.0)\nprint('checking')\nassert np.array_equal(_f(_a), 2 * _a), 'double is wrong'\n")
    try:
        send({"op": "run", "source": cell, "label": "<t>", "student": ["double"]})
        need = recv()
        assert need["op"] == "need" and need["names"] == ["double"]
        send({"op": "names", "id": need["id"], "info": {"double": {"kind": "function"}}})
        assert recv() == {"op": "stream", "name": "stdout", "text": "checking"}
        assert recv()["op"] == "stream"  # the newline
        call = recv()
        assert call["op"] == "call" and call["name"] == "double" and call["exercise"] == "exX"
        x = wire.decode(call["args"])[0]
        send({"op": "result", "id": call["id"], "ok": wire.encode(2 * x + (x == 2)), "after": {}})  # wrong at x = 2
        done = recv()
        assert done == {"op": "done", "error": {"ename": "AssertionError", "evalue": "double is wrong"},
                        "mistake": None}
        # A reference in the answer is refused by the runner (it never imports what the kernel names).
        send({"op": "run", "source": cell, "label": "<t>", "student": ["double"]})
        need = recv()
        send({"op": "names", "id": need["id"], "info": {"double": {"kind": "function"}}})
        for _ in range(6):
            msg = recv()
            if msg["op"] == "call":
                send({"op": "result", "id": msg["id"], "ok": {"ref": "os:getcwd"}, "after": {}})
            if msg["op"] == "done":
                break
        assert msg["op"] == "done" and "reference" in msg["error"]["evalue"]
        # A fresh namespace per cell: a name an earlier cell bound is not there.
        send({"op": "run", "source": "_f", "label": "<t2>", "student": []})
        done = recv()
        assert done["error"]["ename"] == "NameError"
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
        out.close()


def test_runner_exits_when_the_grader_goes():
    proc, out = _start_runner()
    proc.stdin.close()
    t0 = time.monotonic()
    assert proc.wait(timeout=20) == 0 and time.monotonic() - t0 < 20
    out.close()
