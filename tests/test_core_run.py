"""The run skeleton (td_lib.core.run): one schedule, one run record, one progress helper."""

from dataclasses import dataclass

import numpy as np
import pytest
import torch

from td_lib.core.run import Run, checkpoints, static, ticker


@pytest.mark.parametrize("T, num", [(10, 5), (1000, 60), (2000, 40), (7, 30)])
def test_log_schedules_are_the_expressions_they_replace(T, num):
    g = np.geomspace(1, T, num)
    assert checkpoints(T, num=num).tolist() == sorted({0} | set(g.astype(int).tolist()))
    assert checkpoints(T, num=num, rounding="round").tolist() == np.unique(np.r_[0, np.round(g).astype(int)]).tolist()
    assert checkpoints(T, num=num, zero=False).tolist() == sorted(set(g.astype(int).tolist()))
    a = checkpoints(float(T), num=num, start=1e-2, integer=False)
    np.testing.assert_array_equal(a, np.concatenate([[0.0], np.geomspace(1e-2, T, num)]))
    assert checkpoints(T, num=num).dtype == np.int64 and a.dtype == np.float64


def test_even_schedule_ends_on_end():
    assert checkpoints(250, every=100).tolist() == [0, 100, 200, 250]
    assert checkpoints(200, every=100).tolist() == [0, 100, 200]


@pytest.mark.parametrize("kw, match", [(dict(end=0, num=3), "end"), (dict(end=np.nan, num=3), "end"),
                                       (dict(end=10), "exactly one"), (dict(end=10, num=3, every=2), "exactly one"),
                                       (dict(end=10, num=0), "num"), (dict(end=10, every=0), "every"),
                                       (dict(end=10.5, every=2), "whole number"),
                                       (dict(end=10, num=3, start=11), "start"),
                                       (dict(end=10, num=3, rounding="ceil"), "rounding")])
def test_schedule_refuses_bad_input_by_name(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        checkpoints(**kw)


@dataclass
class _Loss(Run):
    loss: np.ndarray
    lr: float = static(default=0.1)
    w_final: np.ndarray = static(default=None)


def test_run_record_orders_time_first_and_is_numpy():
    r = _Loss(t=torch.tensor([0, 1, 5]), loss=torch.ones(3, 2), w_final=np.zeros((4, 4)))
    assert isinstance(r.t, np.ndarray) and isinstance(r.loss, np.ndarray) and r.loss.shape == (3, 2)
    assert r.at(5) == 2 and r.at(0.9) == 1 and r.final("loss").shape == (2,)
    with pytest.raises(ValueError, match=r"_Loss\.loss must have the time axis first"):
        _Loss(t=np.arange(3), loss=np.ones((2, 3)))
    with pytest.raises(ValueError, match="non-decreasing"):
        _Loss(t=np.array([0, 2, 1]), loss=np.ones(3))
    with pytest.raises(ValueError, match="time must lie"):
        r.at(6)


def test_ticker_counts_and_closes(capsys):
    with ticker(10, "chunks", "default") as advance:
        advance(4)
        advance(6)
    out = capsys.readouterr().out
    assert "chunks" in out and "10/10" in out
    with ticker(10, False, "x") as advance:
        advance(3)
    assert capsys.readouterr().out == ""
    with pytest.raises(TypeError, match="progress"):
        with ticker(3, 1.5, "x"):
            pass
