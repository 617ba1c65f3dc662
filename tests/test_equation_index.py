"""The equation -> function index (``docs/EQUATIONS.md``, ``python -m tools.build.equation_index``).

Two promises: the checked-in index is exactly what the docstrings generate (it cannot drift), and
every numbered equation a notebook's text cites leads to at least one td_lib function or class
whose docstring cites it (a newcomer goes from a formula in a notebook to its code in one hop).
The fix for an unresolved equation is a citation line in the docstring of the function that
implements it (``References``: ``Mori et al. (CNN vs LCN), eq. 17``); an equation that is
prose only (a step of a derivation, a theorem) goes into ``PROSE_ONLY`` with the reason.
"""

from __future__ import annotations

import doctest

import pytest

from tools.build import equation_index as ei

# Equations the notebooks cite that no code computes, by design. Keep this short: an equation
# that some function computes is cited in that function's docstring instead.
PROSE_ONLY = {
    ("mori", "22"): "Result 3.2 (eps_LCN(P alpha) = eps_CNN(alpha)): a theorem, checked by Exercise C's tests",
    ("mori", "35"): "a teacher with full permutation symmetry: the outlook of cnn_lcn_3, not studied",
    ("mori", "38"): "field covariances, a step of the derivation of Result 3.1 (its result is eqs 41-43)",
    ("mori", "52"): "the O(1/D) change of (R, Q) per step, a step of the derivation of Result 3.1",
    ("mori", "59"): "x_r . x_q ~ D S_rq, a step of the derivation of Result 3.1",
    **{("mori", str(k)): "App. G's proof of Result 3.2 (Exercise C, a derivation)" for k in range(83, 87)},
    ("bardone_goldt", "6"): "the likelihood-ratio expansion, the paper's proof device (cited for rigour)",
    ("bardone_goldt", "7"): "the likelihood-ratio expansion, the paper's proof device (cited for rigour)",
    ("bardone_goldt", "9"): "the small-overlap loss expansion: the student's loss_coefficients (7.2.D.3), "
                            "td_lib has the exact loss (hermite.mcm_relu_loss)",
    ("basri", "13"): "the zero-initialised-bias NTK the course contrasts with, not the one it uses",
}


@pytest.fixture(scope="module")
def lib():
    return ei.library()


def test_the_checked_in_index_is_what_the_docstrings_generate():
    text = ei.render()
    assert ei.OUT.exists(), f"{ei.OUT.relative_to(ei.REPO)} is missing: run `make equations`"
    assert ei.OUT.read_text() == text, (f"{ei.OUT.relative_to(ei.REPO)} is stale (a docstring citation, a "
                                        "function's name or module, or a notebook changed): run `make equations`")


def test_every_equation_a_notebook_cites_has_code(lib):
    objs, _, _ = lib
    implemented = {c for o in objs.values() for c in o.cites}
    unresolved, cited = [], set()
    for nb in ei.notebook_files():
        for line, key, label in ei.notebook_citations(nb):
            cited.add((key, label))
            if (key, label) not in implemented and (key, label) not in PROSE_ONLY:
                unresolved.append(f"{nb.relative_to(ei.REPO)}:{line}: {key} eq. {label}")
    assert not unresolved, (
        "equations the notebooks cite that no td_lib function or class cites in its docstring: add the "
        "citation to the References of the function that implements it (e.g. 'Mori et al. (CNN vs LCN), "
        "eq. 17'), or, if it is prose only, to PROSE_ONLY in this test with the reason:\n  "
        + "\n  ".join(unresolved))
    stale = sorted(k for k in PROSE_ONLY if k not in cited or k in implemented)
    assert not stale, f"PROSE_ONLY entries no longer needed (not cited, or now implemented): {stale}"


def test_every_notebook_has_a_source_and_every_source_a_title(lib):
    for nb in ei.notebook_files():
        assert ei.notebook_source(nb) in ei.BY_KEY
    objs, _, _ = lib
    unnamed = sorted(f"{o.path}:{o.line} {o.dotted}: eq. {label}" for o in objs.values()
                     for key, label in o.cites if key is None)
    assert not unnamed, ("docstring equations without a source (name the paper in the References line, "
                         "or add the source to tools.build.equation_index.SOURCES):\n  " + "\n  ".join(unnamed))


@pytest.mark.parametrize("text, expected", [
    ("Mori et al. (CNN vs LCN), eqs 17-18 and 72.", [("mori", "17"), ("mori", "18"), ("mori", "72")]),
    ("Tian 2020, eqs. 1–5", [("tian", str(k)) for k in range(1, 6)]),
    ("Bardone & Goldt (2024), eq. (1) (the model); course notes §7.2, Exercise 7.2.D.", [("bardone_goldt", "1")]),
    ("Hu et al. (2020), eqs. (5), (9) and (11) and Thm. 3.2.", [("hu", "5"), ("hu", "9"), ("hu", "11")]),
    ("Basri et al. (NeurIPS 2019); course notes §7.3, demo 7.3.D and eq. 7.3.A.3.", [("course", "7.3.A.3")]),
    ("Course notes NB2 §7.3, Exercise 7.3.A (eqs 7.3.A.1–3).",
     [("course", "7.3.A.1"), ("course", "7.3.A.2"), ("course", "7.3.A.3")]),
    ("Mori et al. (CNN vs LCN), eqs 65-67 (CNN) and 77-79 (LCN).",
     [("mori", str(k)) for k in (65, 66, 67, 77, 78, 79)]),
    ("Mori et al., eq. 36 (CNN) and eq. 68 (LCN); Cho & Saul (2009).", [("mori", "36"), ("mori", "68")]),
    ("Mori et al. (CNN vs LCN), eqs 41-43 / 72; Saad & Solla (1995), eq. 3",
     [("mori", "41"), ("mori", "42"), ("mori", "43"), ("mori", "72"), ("saad_solla", "3")]),
    ("Basri et al.'s eq. 13 uses a zero-initialised bias; Eqs 44–45", [("basri", "13"), ("basri", "44"),
                                                                       ("basri", "45")]),
    ("the names eq34 and Result 3.1, Theorem 6, Fig. 8 are not equations", []),
])
def test_citations_are_read_and_attributed(text, expected):
    assert [(k, e) for k, e, _ in ei.attribute(text, None)] == expected


def test_an_unnamed_equation_takes_the_default_source():
    assert [(k, e) for k, e, _ in ei.attribute("(eq. 28 with chi = c)", "mori")] == [("mori", "28")]
    with pytest.raises(ValueError, match="range"):
        ei.equation_refs("eqs 5-900")


def test_only_the_summary_and_references_cite():
    doc = ("Eq. 28: eps_g.\n\nParameters\n----------\nT : teacher norm (eq. 7)\n\n"
           "References\n----------\nMori et al. (CNN vs LCN), eqs 28 and 103.\n\nExamples\n--------\n>>> 1 # eq. 9\n")
    assert [e for _, e in ei.equation_refs(ei.cited_text(doc))] == ["28", "28", "103"]


def test_notebook_uses_follow_imports_and_reexports(lib, tmp_path):
    objs, exports, modules = lib
    nb = tmp_path / "cnn_lcn_9_x.py"
    nb.write_text("# %%\nfrom td_lib import cnn_lcn as cl\nfrom td_lib.cnn_lcn.odes import rhs as f\n"
                  "cl.integrate\nf(1)\ndef rhs(): pass\n")
    assert ei.notebook_uses(nb, objs, exports, modules) == {"td_lib.cnn_lcn.integrate.integrate",
                                                            "td_lib.cnn_lcn.odes.rhs"}


def test_markdown_citations_carry_their_line(tmp_path):
    nb = tmp_path / "td2_7_4_x.py"
    nb.write_text("# %% [markdown]\n# Intro.\n#\n# Bardone and Goldt's eq. 9,\n# then eq. 10.\n#\n"
                  "# Eq. 12. Solution (7.4.B.1): a label, not an equation.\n\n"
                  "# %%\nx = 1  # eq. 5 in code is not prose\n")
    # a source named earlier in the paragraph holds; the next paragraph is the notebook's paper (Tian)
    assert ei.notebook_citations(nb) == [(4, "bardone_goldt", "9"), (5, "bardone_goldt", "10"), (7, "tian", "12")]


def test_doctests():
    failures, _ = doctest.testmod(ei)
    assert failures == 0
