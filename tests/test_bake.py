"""Baked expected values (checks/grading/bake.py): they match the references, drift is caught,
and the literals round-trip exactly."""

from __future__ import annotations

import shutil

import pytest

from checks.grading import bake, baked


@pytest.mark.slow  # ~1 min of references (escape laws, sweeps, demo runs): once per make test
def test_every_baked_region_matches_what_its_reference_computes_now():
    problems = bake.bake(check=True)
    assert problems == [], "\n".join(problems)


def test_every_region_has_a_reference_and_every_reference_a_region():
    names = {name for p in bake.sources() for name, *_ in bake.regions(p.read_text())}
    assert names == set(baked.REGISTRY), (names ^ set(baked.REGISTRY))


def test_render_and_read_round_trip_exactly():
    values = {"_cases": [(0.002, 1.0, 6, 1.0, 0.0)], "_refs": [0.1 + 0.2, 1 / 3, -2.5e-300],
              "_d": {(False, 5.0): [0.49867785052263675, 0.0]}, "_s": "text"}
    lines = bake.render("demo", values, indent="    ")
    text = "x = 1\n" + "\n".join(lines) + "\ny = 2\n"
    [(name, first, last, indent)] = bake.regions(text)
    assert (name, indent) == ("demo", "    ")
    got = bake.read_values(text, first, last)
    assert got == values and repr(got["_refs"][0]) == repr(0.1 + 0.2)


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


def test_a_hand_edited_value_and_a_stray_region_are_caught(tmp_path):
    root = tmp_path / "course" / "source"
    shutil.copytree(bake.SOURCES, root)
    path = root / "cnn_lcn" / "cnn_lcn_3_noise_floor_phase.py"
    text = path.read_text()
    [(name, first, last, _)] = [r for r in bake.regions(text) if r[0] == "noise_floor_visible"]
    lines = text.split("\n")
    j = next(i for i in range(first, last) if lines[i].startswith("_refs"))
    lines[j] = lines[j].replace("0.0022053155816871683", "0.0022053155826871683", 1)  # 5e-10 relative
    assert lines[j] != text.split("\n")[j], "the planted edit did not apply"
    path.write_text("\n".join(lines) + "\n# BEGIN BAKED no_such_reference\n# END BAKED no_such_reference\n")
    problems = bake.bake(check=True, root=root)
    assert any("noise_floor_visible._refs differs" in p for p in problems), problems
    assert any("no function no_such_reference" in p for p in problems), problems
    # Writing restores the value the reference computes.
    assert bake.bake(root=root) == [f"{path}:{text.count(chr(10)) + 2}: no function no_such_reference in "
                                    "checks/grading/baked.py"]
    assert "0.0022053155816871683" in path.read_text()
