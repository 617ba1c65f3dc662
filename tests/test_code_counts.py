"""One idea, one place: the counts of tools/meta/code_counts.py stay at their targets, and each
counter finds a planted copy (so the targets cannot hold by a counter that sees nothing)."""

from __future__ import annotations

from pathlib import Path

from tools.meta import code_counts as cc


def test_counts_are_at_their_targets():
    c = cc.counts()
    assert [x.split(" ")[-1] for x in c["result types"]] == ["Run"], \
        f"one run record (td_lib.core.run.Run) and its subclasses; also found: {c['result types']}"
    assert [x.split(" ")[-1] for x in c["schedule implementations"]] == ["checkpoints"], \
        f"recording times come from td_lib.core.run.checkpoints; also built at: {c['schedule implementations']}"
    assert c["hand-updated bars"] == [x for x in c["hand-updated bars"] if x.startswith("td_lib/core/run.py")] \
        and len(c["hand-updated bars"]) == 1, \
        f"a hand-stepped loop advances td_lib.core.run.ticker; bars updated by hand at: {c['hand-updated bars']}"
    long = c[f"functions over {cc.LONG} lines"]
    assert long == [], f"split by responsibility: {long}"
    assert c["function definitions in JSON"] == [], "graded code lives in Python files (checks/fixtures)"


def _plant(tmp_path: Path, code: str) -> list[Path]:
    p = tmp_path / "planted.py"
    p.write_text(code)
    return [p]


PLANTED = """\
import numpy as np
from dataclasses import dataclass


@dataclass
class MyHistory:
    steps: np.ndarray
    loss: np.ndarray


def train_thing(n) -> dict:
    return {}


def times(T):
    return sorted(set(np.geomspace(1, T, 20).astype(int).tolist()) | {0})


def loop(pbar, n):
    pbar.update(n)


def long():
""" + "".join(f"    x{i} = {i}\n" for i in range(81))


def test_each_counter_finds_a_planted_copy(tmp_path, monkeypatch):
    monkeypatch.setattr(cc, "REPO", tmp_path)
    files = _plant(tmp_path, PLANTED)
    assert [x.split(" ")[1] for x in cc.result_types(files)] == ["MyHistory", "train_thing"]
    assert [x.split(" ")[-1] for x in cc.schedules(files)] == ["times"]
    assert len(cc.hand_bars(files)) == 1
    assert [x.split(" ")[1] for x in cc.long_functions(files)] == ["long"]
