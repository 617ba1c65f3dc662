"""The home guard (td_lib.own_work): the functions its registry lists are off while a student's function runs
in a test cell. td_lib's own registry is empty; the tests fill it as the handout's edition is generated."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from checks.grading import exercises
from td_lib import mixed_cumulant, own_work
from td_lib.own_work import COUNTERPARTS, DelegationError, library_off


@pytest.fixture(autouse=True)
def registry(monkeypatch):
    """td_lib's registry holding the instructor's (the handout's holds the general tools only)."""
    for ex, names in exercises.COUNTERPARTS.items():
        monkeypatch.setitem(COUNTERPARTS, ex, names)


def test_the_library_names_no_exercise():
    assert own_work.COUNTERPARTS == exercises.COUNTERPARTS  # the fixture's doing: td_lib's is empty
    import importlib
    import sys
    saved = sys.modules.pop("td_lib.own_work")
    try:
        assert importlib.import_module("td_lib.own_work").COUNTERPARTS == {}
    finally:
        sys.modules["td_lib.own_work"] = saved


def test_every_registered_counterpart_resolves():
    # In the full (instructor) environment every dotted name must import: a typo would
    # silently switch nothing off.
    missing = [(ex, name) for ex, names in exercises.COUNTERPARTS.items() for name in names
               if own_work._resolve(name) is None]
    assert missing == []


def test_counterpart_is_off_under_every_alias_and_back_on_after():
    from td_lib.mixed_cumulant import kappa4_v as alias

    before = mixed_cumulant.kappa4_v(10.0)
    with library_off("ex72A_kappa4"):
        for f in (mixed_cumulant.kappa4_v, alias):
            with pytest.raises(DelegationError, match="`your function` calls `td_lib.mixed_cumulant.kappa4_v`, "
                                                      "which is not there when your work is graded"):
                f(10.0)
    assert mixed_cumulant.kappa4_v(10.0) == before == -200 / 121


def test_restored_after_an_exception_and_reentrant():
    with pytest.raises(ZeroDivisionError):
        with library_off("ex72A_kappa4"):
            with library_off("ex72A_kappa4"):
                pass
            with pytest.raises(DelegationError):
                mixed_cumulant.kappa4_v(1.0)  # still off after the inner block closed
            raise ZeroDivisionError
    assert mixed_cumulant.kappa4_v(1.0) == pytest.approx(-0.5, abs=1e-15)


def test_own_work_passes_honest_code_and_blocks_delegation():
    def honest(b):
        return -2.0 * b * b / (1.0 + b) ** 2

    def lazy(b):
        return mixed_cumulant.kappa4_v(b)

    assert own_work.own_work(honest, "ex72A_kappa4")(10.0) == pytest.approx(-200 / 121, abs=1e-15)
    with pytest.raises(DelegationError) as err:
        own_work.own_work(lazy, "ex72A_kappa4")(10.0)
    assert str(err.value).startswith("`lazy` calls `td_lib.mixed_cumulant.kappa4_v`, which is not there when your "
                                     "work is graded: write it yourself"), err.value
    assert lazy(10.0) == pytest.approx(-200 / 121, abs=1e-15)  # outside grading it works


def test_the_message_names_the_innermost_graded_function():
    """A graded function calling another graded one: the error names the one that delegated."""
    def lazy(b):
        return mixed_cumulant.kappa4_v(b)

    def outer(b):
        return own_work.own_work(lazy, "ex72A_kappa4")(b)

    with pytest.raises(DelegationError, match="^`lazy` calls"):
        own_work.own_work(outer, "ex72A_kappa4")(1.0)
    def direct(b):
        return mixed_cumulant.kappa4_v(b)

    with pytest.raises(DelegationError, match="^`direct` calls"):
        own_work.own_work(direct, "ex72A_kappa4")(1.0)
    assert own_work._graded == []  # nothing left behind, errors included


def test_stub_message_names_the_function_but_real_errors_pass_through():
    def gd_step_bound(lam):
        raise NotImplementedError()

    with pytest.raises(NotImplementedError, match="`gd_step_bound` is not written yet"):
        own_work.own_work(gd_step_bound, "x")(1.0)

    def inner():
        raise NotImplementedError("a library feature that is missing")

    def student(x):
        return inner()

    with pytest.raises(NotImplementedError, match="a library feature"):
        own_work.own_work(student, "x")(1.0)
    with pytest.raises(TypeError, match="expected the function you wrote"):
        own_work.own_work(3.0, "x")


def test_closures_methods_and_wrappers_are_switched_off(monkeypatch):
    k = 3

    def closure(x):
        return k * x

    @functools.wraps(closure)
    def wrapper(x):
        return closure(x)

    class Model:
        def step(self, x):
            return x + 1

        @staticmethod
        def helper(x):
            return x - 1

    ns = {"closure": closure, "wrapper": wrapper, "Model": Model}
    monkeypatch.setitem(__import__("sys").modules, "fake_counterparts", type("M", (), ns))
    monkeypatch.setitem(COUNTERPARTS, "exX", ("fake_counterparts.wrapper", "fake_counterparts.Model"))
    with library_off("exX"):
        for call in (lambda: closure(1), lambda: wrapper(1), lambda: Model().step(1), lambda: Model.helper(1)):
            with pytest.raises(DelegationError):
                call()
    assert (closure(1), wrapper(1), Model().step(1), Model.helper(1)) == (3, 3, 2, 0)


def test_unknown_names_are_skipped():
    with library_off("no-such-exercise", "checks.no_such_module.f", "td_lib.mixed_cumulant.no_such_function"):
        assert mixed_cumulant.kappa4_v(0.0) == 0.0


def test_student_or_says_which_version_runs(capsys):
    def lib(x):
        return 2 * x

    def stub(x):
        raise NotImplementedError()

    def broken(x):
        raise ValueError("bad shape")

    def off(x):
        return 2 * x + 1

    probe = lambda f: f(1.0)
    assert own_work.student_or(lib, lib, probe, "demo") is lib
    assert own_work.student_or(stub, lib, probe, "demo") is lib
    assert own_work.student_or(broken, lib, probe, "demo") is lib
    assert own_work.student_or(off, lib, probe, "demo", agree=lambda a, b: abs(a - b) < 1e-9) is lib
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "demo: using your function."
    assert "not written yet" in out[1] and "ValueError: bad shape" in out[2] and "disagrees" in out[3]


def test_demo_result_shows_the_students_result_or_the_reference(capsys):
    reference = {"curve": [1.0, 2.0], "n": 3.0}

    def mine():
        return {"curve": np.array([1.0, 2.0]), "n": 3.0}

    def stub():
        raise NotImplementedError()

    def broken():
        raise ValueError("bad shape")

    def off():
        return {"curve": np.array([1.0, 2.5]), "n": 3.0}

    got = own_work.demo_result(stub, reference, "f")
    assert isinstance(got["curve"], np.ndarray) and got["curve"].tolist() == [1.0, 2.0] and got["n"] == 3.0
    assert own_work.demo_result(broken, reference, "f")["curve"].tolist() == [1.0, 2.0]
    assert own_work.demo_result(mine, reference, "f", rtol=1e-9)["curve"] is not None
    assert own_work.demo_result(off, reference, "f", rtol=1e-9)["curve"].tolist() == [1.0, 2.5]
    out = capsys.readouterr().out.splitlines()
    assert "not written yet" in out[0] and "reference results" in out[0]
    assert "ValueError: bad shape" in out[1] and "reference results" in out[1]
    assert out[2] == "f: this demo uses your functions."
    assert "differ from the course's reference" in out[3]
    nan_ref = own_work.demo_result(stub, {"t": [[None, 2.0]]}, "f")["t"]  # a baked None is a NaN
    assert np.isnan(nan_ref[0, 0]) and nan_ref[0, 1] == 2.0


def test_library_default_names_the_argument_when_the_library_has_none():
    from td_lib.core.validate import library_default

    assert library_default("kappa4_v", vars(mixed_cumulant), "kappa4") is mixed_cumulant.kappa4_v
    with pytest.raises(TypeError, match="cross_moment is required: pass your own function"):
        library_default("relu_cross_moment", {}, "cross_moment")
