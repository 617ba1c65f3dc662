"""Baked expected values (checks/grading/bake.py): they match the references, drift is caught,
the literals round-trip exactly, and the sources hold one line per region while every reader
sees the values (tools.nbcore.read_source)."""

from __future__ import annotations

import shutil

import pytest

from checks.grading import bake, registry
from tools import nbcore
from tools.build import nbtool


@pytest.mark.slow  # ~1 min of references (escape laws, sweeps, demo runs): once per make test
def test_every_baked_region_matches_what_its_reference_computes_now():
    problems = bake.bake(check=True)
    assert problems == [], "\n".join(problems)


def test_every_region_has_a_reference_and_every_reference_a_region():
    names = {name for p in bake.sources() for name, *_ in bake.markers(p.read_text())}
    reg = registry.registry()
    assert names == set(reg), (names ^ set(reg))


def test_every_region_has_data_and_all_data_a_region():
    for p in bake.sources():
        names = [name for name, *_ in bake.markers(p.read_text())]
        data = set(bake.read_data(bake.data_path(p.stem)))
        assert set(names) == data, f"{p.name}: {set(names) ^ data}"


def test_the_sources_hold_no_values_and_the_readers_see_them():
    for p in bake.sources():
        text = p.read_text()
        assert not bake.regions(text) and not nbtool.lint_baked(p), p.name
        values = bake.read_data(bake.data_path(p.stem))
        cells = "\n".join(c.source for c in nbcore.read_source(p).cells)
        for name, first, last, _ in bake.regions(cells):
            assert bake.read_values(cells, first, last) == values[name], (p.name, name)
        assert {r[0] for r in bake.regions(cells)} == set(values), p.name


def test_render_and_read_round_trip_exactly(tmp_path):
    values = {"_cases": [(0.002, 1.0, 6, 1.0, 0.0)], "_refs": [0.1 + 0.2, 1 / 3, -2.5e-300],
              "_d": {(False, 5.0): [0.49867785052263675, 0.0]}, "_s": "text", "_n": None}
    lines = nbcore.baked_region("demo", values, indent="    ")
    text = "x = 1\n" + "\n".join(lines) + "\ny = 2\n"
    [(name, first, last, indent)] = bake.regions(text)
    assert (name, indent) == ("demo", "    ")
    got = bake.read_values(text, first, last)
    assert got == values and repr(got["_refs"][0]) == repr(0.1 + 0.2)
    # the data file round-trips too, and the one line expands to the same region
    (tmp_path / "nb.json").write_text(bake.data_text({"demo": values}, "nb"))
    assert bake.read_data(tmp_path / "nb.json") == {"demo": values} == nbcore.baked_values("nb", tmp_path)
    collapsed = bake.collapse(text, "nb")
    assert collapsed == "x = 1\n" + bake.marker("demo", "nb", "    ") + "\ny = 2\n"
    assert nbcore.expand_baked(collapsed, {"demo": values}, "nb.py") == text
    with pytest.raises(ValueError, match="region demo has no data"):
        nbcore.expand_baked(collapsed, {}, "nb.py")


def test_close_is_relative_with_a_floor_for_zeros():
    assert bake.close([1.0, 0.0], [1.0 + 1e-13, 1e-16])
    assert not bake.close([1.0], [1.0 + 1e-11])
    assert not bake.close((1.0,), [1.0]), "a tuple is not a list"
    assert not bake.close({"a": 1.0}, {"b": 1.0})
    assert not bake.close(True, 1.0)


def test_plain_refuses_what_is_not_a_literal():
    with pytest.raises(ValueError, match="finite"):
        bake.plain(float("nan"))
    with pytest.raises(TypeError, match="cannot bake"):
        bake.plain(object())


def test_lint_reports_a_region_expanded_in_the_source(tmp_path):
    src = next(p for p in bake.sources() if p.stem == "cnn_lcn_3_noise_floor_phase")
    path = tmp_path / src.name
    text = src.read_text()
    [(name, line, indent)] = [m for m in bake.markers(text) if m[0] == "noise_floor_visible"]
    lines = text.split("\n")
    lines[line:line + 1] = nbcore.baked_region(name, {"_x": 1.0}, indent)
    path.write_text("\n".join(lines))
    [problem] = nbtool.lint_baked(path)
    assert "noise_floor_visible is expanded" in problem and "python -m checks.grading.bake" in problem


def test_a_hand_edited_value_a_stray_region_and_stray_data_are_caught(tmp_path):
    root = tmp_path / "course" / "source"
    shutil.copytree(bake.SOURCES, root, ignore=shutil.ignore_patterns("*.ipynb"))
    data = tmp_path / "baked_values"
    shutil.copytree(bake.DATA, data)
    path = root / "cnn_lcn" / "cnn_lcn_3_noise_floor_phase.py"
    dpath = bake.data_path(path.stem, data)
    stored = dpath.read_text()
    edited = stored.replace("0.0022053155816871683", "0.0022053155826871683", 1)  # 5e-10 relative
    assert edited != stored, "the planted edit did not apply"
    dpath.write_text(edited.replace('"regions": {', '"regions": {\n  "gone_region": {"_a": "1.0"},', 1))
    text = path.read_text()
    path.write_text(text + "\n# BAKED no_such_reference (stray)\n")
    problems = bake.bake(check=True, root=root, data=data, only=(path.stem,))
    assert any("noise_floor_visible._refs differs" in p for p in problems), problems
    assert any("no function no_such_reference" in p for p in problems), problems
    assert any("data for region gone_region" in p and path.name in p for p in problems), problems
    # Writing restores the value the reference computes and drops the stray data.
    assert bake.bake(root=root, data=data, only=(path.stem,)) == [
        f"{path}:{text.count(chr(10)) + 2}: no function no_such_reference in checks/grading/baked*.py"]
    assert "0.0022053155816871683" in dpath.read_text() and "gone_region" not in dpath.read_text()
