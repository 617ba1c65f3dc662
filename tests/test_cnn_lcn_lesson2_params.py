"""Lesson 2's Figure 3 and 7 parameters are held once (``checks.cnn_lcn_notebook_check``): the
notebook, released to students and so unable to import checks, writes them as literals
``pick(full, quick)``; these must equal the check module's values in both modes."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from checks.cnn_lcn_notebook_check import lesson2_values

NB2 = Path(__file__).resolve().parent.parent / "course/source/cnn_lcn/cnn_lcn_2_specialisation.py"


def _lesson2_literals(quick: bool) -> dict:
    """Lesson 2's variables of Figures 3 and 7 as its source writes them, ``pick(full, quick)``
    resolved: the assignments by name, the k_s list of ``runs3`` and the ``n_ckpt`` of its runs."""
    env = {"np": np, "pick": (lambda full, q: q) if quick else (lambda full, q: full)}

    def value(expr: ast.expr):
        return eval(compile(ast.Expression(expr), "lesson 2", "eval"), env)  # the notebook's own literals

    tree = ast.parse(NB2.read_text())
    names = {"FIG3", "Ds3", "n_init3", "amax3", "FIG7", "Ds7", "n_init7", "amax7", "jobs7"}
    out, n_ckpt = {}, []
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in names:
                out[name] = value(node.value)
            elif name == "runs3":  # {k: ... for k in progress(pick([...], [...]), desc=...)}
                out["ks3"] = value(node.value.generators[0].iter.args[0])
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and ast.unparse(call.func) == "cl.specialisation_runs":
            n_ckpt += [value(kw.value) for kw in call.keywords if kw.arg == "n_ckpt"]
    assert len(n_ckpt) == 2 and len(set(n_ckpt)) == 1, f"the runs of Figures 3 and 7 use n_ckpt {n_ckpt}"
    out["n_ckpt"] = n_ckpt[0]
    return out


def _plain(x):
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, np.ndarray)):
        return tuple(_plain(v) for v in (x.tolist() if isinstance(x, np.ndarray) else x))
    return x


@pytest.mark.parametrize("quick", [False, True])
def test_lesson2_parameters_are_the_check_modules(quick):
    """The parameters of lesson 2's Figures 3 and 7 are held once, in checks.cnn_lcn_notebook_check
    (claims and baked references use them); the notebook, which cannot import checks, writes the
    same values as literals."""
    mine, ref = _lesson2_literals(quick), lesson2_values(quick)
    assert set(mine) == set(ref)
    for name in ref:
        assert _plain(mine[name]) == _plain(ref[name]), (
            f"lesson 2's {name} (quick={quick}): {mine[name]} != {ref[name]}")
