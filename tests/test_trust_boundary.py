"""The grader's trust boundary (docs/GRADING.md), attacked from the student's kernel.

A real IPython kernel plays the student: its notebook code replaces the data channel's server
(``__td_rpc__``), reaches the kernel's stdin channel, rebinds the names a test reads, answers
with forged, replayed, oversized and out-of-order messages, or stays silent. The grader's side
is the course's own (:class:`tools.grading.remote_tests.RemoteTests`, a real test runner process).
Every payload, if anything on the trusted side executed it or named an operation by it, would
leave a marker file on the host; each test checks that none exists, that the verdict is the one
an honest grader gives (the cell fails, with a ``ProtocolViolation`` where the kernel broke the
protocol, and the student is flagged with what was sent) and that the next cell, and the next
student, are graded normally.

The sandboxes themselves (bubblewrap: the runner's and the kernel's) are checked at the end:
who they run as, what they see, a capped disk.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest
from nbformat.notebooknode import NotebookNode

from tools import env, nbcore
from tools.grading import remote_tests, sandbox, wire

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

HONEST = ("from td_lib.own_work import own_work, passed\n_f = own_work(double, 'exX')\n"
          "assert _f(3) == 6, 'double(3) should be 6'\nprint('honest ok')\n")
DOUBLE = "def double(x):\n    return 2 * x\n"


class Grader(remote_tests.RemoteTests):
    """The grader's side of the channel around a real kernel (the grading executor's TestRunner step)."""

    timeout = 20

    def __init__(self, km, kc, declarable=None):
        super().__init__(self, declarable=declarable, max_output_bytes=100_000)
        self.km, self.kc = km, kc

    async def student(self, code: str) -> None:
        """Run one of the student's cells in the kernel."""
        await self.kernel_run(code, 30)

    async def test(self, source: str, grade_id: str = "test_x") -> NotebookNode:
        cell = NotebookNode(cell_type="code", source=source, outputs=[], execution_count=None,
                            metadata={"nbgrader": {"grade_id": grade_id}})
        return await self.run_test(cell, 0, self.timeout)


def error_of(cell) -> dict | None:
    errs = [o for o in cell.outputs if o.get("output_type") == "error"]
    return errs[-1] if errs else None


def text_of(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")


@pytest.fixture(scope="module")
def loop():
    lp = asyncio.new_event_loop()
    yield lp
    lp.close()


@pytest.fixture
def grader(loop):
    """A fresh kernel (unsandboxed: the boundary under test here is the protocol) and the grader."""
    from jupyter_client.manager import AsyncKernelManager

    async def start():
        km = AsyncKernelManager(kernel_name="python3")
        await km.start_kernel(cwd="/tmp")
        kc = km.client()
        kc.start_channels()
        await kc.wait_for_ready(timeout=60)
        g = Grader(km, kc)
        await g.install()
        return g

    g = loop.run_until_complete(start())
    yield g

    async def stop():
        g.close()
        g.kc.stop_channels()
        await g.km.shutdown_kernel(now=True)

    loop.run_until_complete(stop())


def run(loop, coro):
    return loop.run_until_complete(coro)


def marker(tmp_path: Path, name: str) -> tuple[Path, str]:
    """A host path a payload would create, and Python source that creates it."""
    path = tmp_path / f"PWNED-{name}"
    return path, f"open({str(path)!r}, 'w').write('pwned')"


HONEST_DESCRIBE = ("r = json.loads(req)\n"
                   "self.out = json.dumps({'id': r['id'], 'info': {n: {'kind': 'function'} for n in r['names']}})")


def evil_server(call: str = "self.out = ''", describe: str = HONEST_DESCRIBE) -> str:
    """Notebook code that replaces the data channel's server by one whose methods run ``call``
    and ``describe`` (bodies, with ``req`` the request's JSON)."""
    body = lambda src: "\n".join("        " + ln for ln in src.split("\n"))  # noqa: E731
    return ("import json\nclass _Evil:\n    out = ''\n    def describe(self, req):\n" + body(describe) + "\n"
            "    def call(self, req):\n" + body(call) + "\n__td_rpc__ = _Evil()\n")


def assert_violation(g: Grader, cell, path: Path) -> None:
    err = error_of(cell)
    assert err is not None and err["ename"] == remote_tests.VIOLATION, cell.outputs
    assert any("protocol violation" in f for f in g.flags), g.flags
    assert not path.exists(), "a payload from the kernel ran on the trusted side"


def assert_next_student_graded(g: Grader, loop) -> None:
    """The runner is still healthy: an honest answer, with the server installed afresh, passes."""
    run(loop, g.install())
    run(loop, g.student(DOUBLE))
    cell = run(loop, g.test(HONEST, "test_next"))
    assert error_of(cell) is None and "honest ok" in text_of(cell), cell.outputs


# ------------------------------------------------------------------ commands through the channel
def test_input_in_student_code_raises_and_opens_no_channel(grader, loop, tmp_path):
    path, payload = marker(tmp_path, "input")
    run(loop, grader.student(
        "import json\n"
        "def double(x):\n"
        f"    input(json.dumps({{'op': 'run', 'source': {payload!r}, 'label': 'x'}}))\n"
        "    return 2 * x\n"))
    cell = run(loop, grader.test(HONEST))
    err = error_of(cell)
    assert err["ename"] == "RuntimeError" and "input() is not available" in err["evalue"], cell.outputs
    assert not path.exists() and not grader.flags
    assert_next_student_graded(grader, loop)


def test_a_prompt_on_the_stub_channel_that_names_an_operation_is_a_violation(grader, loop, tmp_path):
    path, payload = marker(tmp_path, "prompt")
    run(loop, grader.student(
        "import json, sys\n"
        "def double(x):\n"
        "    f = sys._getframe(1)\n"
        "    while f is not None and 'ask' not in f.f_locals:\n"
        "        f = f.f_back\n"
        f"    for m in ({{'op': 'run', 'source': {payload!r}}}, {{'op': 'callback', 'cb': 0, 'source': {payload!r}}},\n"
        "              {'id': 1, 'cb': 0, 'args': {'l': []}, 'kwargs': {'d': []}, 'op': 'exit'}):\n"
        "        print(f.f_locals['ask'](json.dumps(m)))\n"
        "    return 2 * x\n"))
    cell = run(loop, grader.test(HONEST))
    assert_violation(grader, cell, path)
    assert "refused by the grader" in text_of(cell)  # what the kernel got back: an error, nothing else
    assert_next_student_graded(grader, loop)


@pytest.mark.parametrize("reply", [
    "{'op': 'run', 'source': PAYLOAD, 'label': 'x', 'id': ID, 'ok': 6, 'after': {}}",   # an operation
    "{'id': ID, 'ok': {'ref': 'os:system'}, 'after': {}}",                               # a name on our side
    "{'id': ID, 'ok': {'cb': 0}, 'after': {}}",                                          # a call-back
    "{'id': ID - 1, 'ok': 6, 'after': {}}",                                              # replayed / stale id
    "{'id': ID + 1, 'ok': 6, 'after': {}}",                                              # out of order
    "{'id': True, 'ok': 6, 'after': {}}",                                                # a bool for an id
    "{'id': ID, 'ok': 6, 'after': {'0': {'nd': '|O', 's': [1], 'b': ''}}}",              # object array
    "{'id': ID, 'ok': 6, 'after': {'7': 1}}",                                            # no such argument
    "{'id': ID, 'ok': {'nd': '<f8', 's': [-1], 'b': ''}, 'after': {}}",                  # bad shape
    "{'id': ID, 'ok': {'ng': 'os.system', 'st': 1}, 'after': {}}",                       # generator by name
    "{'id': ID, 'err': {'ename': 'X', 'evalue': 'y', 'source': PAYLOAD}}",               # smuggled field
    "[ID, 6]",                                                                           # another form
    "'not json {'",                                                                      # not JSON
])
def test_a_forged_reply_from_a_replaced_server_is_a_violation(grader, loop, tmp_path, reply):
    path, payload = marker(tmp_path, "reply")
    run(loop, grader.student(DOUBLE + evil_server(
        f"ID = json.loads(req)['id']\nPAYLOAD = {payload!r}\nr = {reply}\n"
        "self.out = r if isinstance(r, str) else json.dumps(r)")))
    cell = run(loop, grader.test(HONEST))
    assert_violation(grader, cell, path)
    assert_next_student_graded(grader, loop)


@pytest.mark.parametrize("info", [
    "{'double': {'kind': 'module', 'module': 'os'}}",             # a module chosen by the kernel
    "{'double': {'kind': 'ref', 'ref': 'os:system'}}",            # a library function chosen by the kernel
    "{'double': {'kind': 'function'}, 'np': {'kind': 'function'}}",  # a name nobody asked for
    "{'double': {'kind': 'value', 'value': {'rf': 'evil'}}}",     # a function disguised as a value
])
def test_a_forged_description_of_names_is_a_violation(grader, loop, tmp_path, info):
    path, _ = marker(tmp_path, "describe")
    run(loop, grader.student(DOUBLE + evil_server(
        describe=f"self.out = json.dumps({{'id': json.loads(req)['id'], 'info': {info}}})")))
    cell = run(loop, grader.test(HONEST))
    assert_violation(grader, cell, path)
    assert_next_student_graded(grader, loop)


def test_an_oversized_answer_is_a_violation(grader, loop, tmp_path, monkeypatch):
    monkeypatch.setattr(wire, "MAX_BYTES", 1 << 20)  # the grader's cap, lowered to keep the test fast
    path, _ = marker(tmp_path, "big")
    run(loop, grader.student(DOUBLE + evil_server(
        "self.out = json.dumps({'id': json.loads(req)['id'], 'ok': 'x' * (3 << 20), 'after': {}})")))
    cell = run(loop, grader.test(HONEST))
    assert_violation(grader, cell, path)


def test_a_test_that_catches_everything_still_fails_on_a_violation(grader, loop, tmp_path):
    path, _ = marker(tmp_path, "catch")
    run(loop, grader.student(DOUBLE + evil_server("self.out = json.dumps({'id': 0, 'ok': 6, 'after': {}})")))
    cell = run(loop, grader.test("try:\n    double(3)\nexcept Exception:\n    pass\nprint('swallowed')\n"))
    assert_violation(grader, cell, path)


# ------------------------------------------------------------------ the trusted side's names
def _course_test_cell(notebook: str, grade_id: str) -> str:
    src = next(p for p in nbcore.sources() if p.stem == notebook)
    return next(c.source for c in nbcore.read_source(src).cells if nbcore.grade_id(c) == grade_id)


def test_rebinding_a_name_the_test_reads_does_not_change_its_reference(grader, loop):
    """7.3.B's hidden test compares with scipy's ive: a notebook that rebinds ``ive`` to its own
    answer (and hard-codes the visible cases) passed every part of the cell at a521584."""
    run(loop, grader.student(
        "import numpy as np\n"
        "_known = {(1, 2.0): 0.21526928924893765, (6, 2.0): 2.16559915379896e-4}\n"
        "def vm_eigenvalue(ell, kappa):\n"
        "    r = np.vectorize(lambda l, k: _known.get((int(l), float(k)), 0.5))(ell, kappa)\n"
        "    return float(r) if np.ndim(r) == 0 else r\n"
        "ive = vm_eigenvalue\n"
        "np.allclose = lambda *a, **k: True\n"))
    cell = run(loop, grader.test(_course_test_cell("td2_7_3_spectral_bias", "test_ex73B_vm_eigenvalue"),
                                 "test_ex73B_vm_eigenvalue"))
    err = error_of(cell)
    assert err is not None and err["ename"] == "AssertionError" and "elementwise" in err["evalue"], cell.outputs
    assert "passes the visible tests" in text_of(cell)  # the visible part, with baked numbers, passed


def test_a_name_no_answer_cell_defines_is_never_taken_from_the_kernel(grader, loop):
    """A helper an earlier test cell defined is not in the next cell's namespace, and a name the
    notebook defines outside its answer cells is not fetched: the student's no-op cannot stand in."""
    grader.declarable = frozenset({"double"})
    run(loop, grader.student(DOUBLE + "def _check(*a, **k):\n    return None\n"))
    first = run(loop, grader.test("def _check(x):\n    assert x == 7, 'not seven: the check itself is strict'\n"
                                  "_check(7)\n"))
    assert error_of(first) is None, first.outputs
    second = run(loop, grader.test("_check(double(3))\n"))
    err = error_of(second)
    assert err["ename"] == "NameError" and "_check" in err["evalue"], second.outputs


def test_silence_costs_the_cell_not_the_budget_nor_the_next_cell(grader, loop):
    """A kernel that never answers: the cell ends at its time limit (the runner's requests count
    in it), and the next cell, with a fresh server, is graded."""
    run(loop, grader.student(DOUBLE + evil_server(describe="__import__('time').sleep(600)")))
    grader.timeout = 6
    t0 = time.monotonic()
    cell = run(loop, grader.test(HONEST))
    took = time.monotonic() - t0
    assert error_of(cell) is not None and took < grader.timeout + remote_tests.GRACE + 15, (took, cell.outputs)
    grader.timeout = 20
    assert_next_student_graded(grader, loop)


def test_a_callback_reaches_only_the_callables_of_its_call(grader, loop, tmp_path):
    """A test passes a lambda; the student's function calls it (allowed, data arguments), then
    forges a call-back to another number, which is refused."""
    path, _ = marker(tmp_path, "cb")
    run(loop, grader.student(
        "import json, sys\n"
        "def apply(f, x):\n"
        "    y = f(x)\n"
        "    fr = sys._getframe(1)\n"
        "    while fr is not None and 'ask' not in fr.f_locals:\n"
        "        fr = fr.f_back\n"
        "    if x == 5:\n"
        "        print(fr.f_locals['ask'](json.dumps({'id': fr.f_locals['req']['id'], 'cb': 99,\n"
        "                                             'args': {'l': [1]}, 'kwargs': {'d': []}})))\n"
        "    return y\n"))
    ok = run(loop, grader.test("assert apply(lambda t: t * 10, 2) == 20, 'apply should call the function'\n"))
    assert error_of(ok) is None, ok.outputs
    bad = run(loop, grader.test("assert apply(lambda t: t * 10, 5) == 50, 'apply should call the function'\n"))
    assert_violation(grader, bad, path)


# ------------------------------------------------------------------ the sandboxes
needs_sandbox = pytest.mark.skipif(not sandbox.available()[0], reason=sandbox.available()[1])


@needs_sandbox
def test_the_runner_runs_unprivileged_without_network_checkout_or_course(tmp_path):
    slot = sandbox.UidSlot() if os.geteuid() == 0 else None
    rp = remote_tests.RunnerProcess(sandbox.runner_command("", uid=slot.uid if slot else None))
    try:
        probe = ("import os, socket, json\nout = {{'uid': os.getuid(), 'repo': os.path.exists({!r}),\n"
                 "       'course': os.path.exists({!r}), 'tools': os.path.exists({!r})}}\n"
                 "try:\n    socket.create_connection(('127.0.0.1', 1), timeout=1); out['net'] = True\n"
                 "except OSError as e:\n    out['net'] = str(e)\n"
                 "try:\n    open({!r}, 'w'); out['wrote'] = True\nexcept OSError:\n    out['wrote'] = False\n"
                 "print(json.dumps(out))\n").format(str(env.REPO / "checks"), str(env.REPO / "course"),
                                                str(env.REPO / "tools" / "grading" / "grade.py"), str(tmp_path / "x"))
        rp.send({"op": "run", "source": probe, "label": "<probe>", "student": []})
        text, deadline = "", time.monotonic() + 60
        while True:
            msg = rp.recv(deadline)
            assert msg is not None, "the sandboxed runner did not answer"
            if msg["op"] == "stream":
                text += msg["text"]
            elif msg["op"] == "done":
                assert msg["error"] is None, msg
                break
        got = json.loads(text)
        if slot is not None:
            assert got["uid"] == slot.uid
        assert not got["repo"] and not got["course"] and not got["tools"], got
        assert got["net"] is not True and got["wrote"] is False, got
        assert not (tmp_path / "x").exists()
    finally:
        rp.close()
        if slot is not None:
            sandbox.kill_uid(slot.uid)
            slot.release()


@needs_sandbox
def test_the_kernel_disk_is_capped_and_a_full_disk_is_the_students_own_error(tmp_path, loop):
    work = tmp_path / "work"
    work.mkdir()
    (work / "data.txt").write_text("mine")
    os.chmod(tmp_path, 0o755)
    os.chmod(work, 0o755)
    os.chmod(work / "data.txt", 0o644)

    async def go():
        from tools.grading.kernel import SandboxKernelManager

        km = SandboxKernelManager(kernel_name="python3", workdir=str(work), work_size=16 << 20)
        await km.start_kernel()
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            out = []
            code = ("import os\nprint(open('data.txt').read(), os.getuid())\n"
                    "try:\n    open('fill', 'wb').write(b'0' * (64 << 20))\n"
                    "except OSError as e:\n    print('full:', e)\n"
                    "print(os.path.exists({!r}), os.path.exists({!r}))\n").format(str(env.REPO / "checks"), str(work))
            await kc.execute_interactive(code, timeout=60,
                                         output_hook=lambda m: out.append(m["content"].get("text", "")))
            return "".join(out)
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

    text = run(loop, go())
    assert text.startswith("mine"), text
    assert "full: [Errno 28] No space left on device" in text, text
    assert "False False" in text, text  # neither the checkout nor the host's copy of the files
    assert not (work / "fill").exists() and sorted(p.name for p in work.iterdir()) == ["data.txt"], \
        "the kernel wrote into the host's folder"


# ------------------------------------------------------------------ the lint that keeps test cells self-contained
def _nb(*cells):
    from nbformat.v4 import new_code_cell, new_notebook

    out = []
    for kind, gid, src in cells:
        meta = {"grade_id": gid, "schema_version": 3, "locked": kind == "test", "grade": kind == "test",
                "solution": kind == "answer", "points": 1 if kind == "test" else 0}
        out.append(new_code_cell(src, metadata={"nbgrader": meta}))
    return new_notebook(cells=out)


def test_lint_refuses_a_test_cell_that_reads_a_name_it_does_not_own():
    from tools.build import nbtool

    answer = ("answer", "exA", "def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\nTABLE = [1]\n")
    good = ("test", "test_A", "import numpy as np\nfrom td_lib.own_work import own_work, passed\n"
            "assert np.isclose(own_work(f, 'exA')(1), TABLE[0]), 'f(1) should be 1, the first entry'\npassed('f')")
    bad = ("test", "test_B", "from td_lib.own_work import own_work, passed\n"
           "assert np.isclose(own_work(f, 'exA')(1), _helper(1)), 'f(1) should be what the helper says'\npassed('f')")
    problems = nbtool.lint_tests(_nb(answer, good, bad), "nb")
    reads = [p for p in problems if "reads" in p]
    assert len(reads) == 2 and all("(test_B)" in p for p in reads), problems
    assert any("'np'" in p for p in reads) and any("'_helper'" in p for p in reads)


def test_a_forged_result_then_a_command_through_input_runs_nothing(grader, loop, tmp_path):
    """a521584: the first prompt ended the runner's call with a forged result, the second made the
    runner, back in its loop, execute the payload (as root under make grade)."""
    path, payload = marker(tmp_path, "sequence")
    run(loop, grader.student(
        "import json, sys\n"
        "def double(x):\n"
        f"    for m in ({{'op': 'result', 'ok': 6, 'after': {{}}}}, {{'op': 'run', 'source': {payload!r}}}):\n"
        "        try:\n"
        "            input(json.dumps(m))\n"
        "        except RuntimeError:\n"
        "            pass\n"
        "        f = sys._getframe(1)\n"
        "        while f is not None and 'ask' not in f.f_locals:\n"
        "            f = f.f_back\n"
        "        f.f_locals['ask'](json.dumps(m))\n"
        "    return 2 * x\n"))
    cell = run(loop, grader.test(HONEST))
    assert_violation(grader, cell, path)
    assert_next_student_graded(grader, loop)
