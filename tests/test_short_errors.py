"""td_lib.short_errors: a test's failure shown as its message in the student's kernel."""

from __future__ import annotations

from jupyter_client.manager import start_new_kernel

from td_lib import short_errors


def _run(kc, code: str) -> list[tuple[str, object]]:
    kc.execute(code)
    outs = []
    while True:
        m = kc.get_iopub_msg(timeout=60)
        kind = m["msg_type"]
        if kind == "error":
            outs.append(("error", m["content"]["traceback"]))
        elif kind == "stream":
            outs.append(("stream", m["content"]["text"]))
        elif kind == "status" and m["content"]["execution_state"] == "idle":
            return outs


def test_messages_replace_tracebacks_in_a_real_kernel():
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        assert _run(kc, "import td_lib.short_errors as s; print(s.install())") == [("stream", "True\n")]
        [(kind, tb)] = _run(kc, "x = 1\nassert x == 2, 'x should be 2; got ' + str(x)")
        assert kind == "error" and tb == ["AssertionError: x should be 2; got 1",
                                          "(raised at line 2 of this cell; run `%tb` for the full traceback)"]
        [(_, tb)] = _run(kc, "def f():\n    raise NotImplementedError('write f')\n\nf()")
        assert tb[0] == "NotImplementedError: write f" and "line 4 of this cell" in tb[1]
        # no message, or another error: IPython's own traceback (in whatever xmode it is set to)
        for code, name in (("assert 1 == 2", "AssertionError"), ("1 / 0", "ZeroDivisionError")):
            [(_, tb)] = _run(kc, code)
            assert name in tb[-1] and "raised at line" not in "".join(tb), tb
        [(_, tb)] = _run(kc, "assert False, 'again'\n")
        [(kind, full)] = _run(kc, "%tb")         # IPython's traceback on request
        assert kind == "error" and "again" in full[-1] and "raised at line" not in "".join(full), full
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_short_traceback_outside_a_kernel():
    assert short_errors.short_traceback(NotImplementedError(), None) is None
    assert short_errors.short_traceback(AssertionError("  wrong  "), None) == ["AssertionError: wrong"]
    assert short_errors.install() is False   # no IPython shell in pytest
