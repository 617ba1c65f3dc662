"""The student edition of td_lib (tools/build/student_edition.py): no answer, no exercise named, the
home registry in place, and the rest of the library intact (what the text may say:
tests/test_edition_answers.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tools.build import student_edition as se


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    return se.build(tmp_path_factory.mktemp("edition"))


def test_the_edition_passes_its_own_check(edition):
    assert se.check(edition) == []


def test_no_counterpart_is_importable_and_the_rest_works(edition):
    code = ("import sys\n"
            "import td_lib, td_lib.mixed_cumulant as m, td_lib.cnn_lcn as cl, td_lib.early_linear as el\n"
            "assert td_lib.__file__.startswith(sys.argv[1])\n"
            "missing = [n for n, mod in (('kappa4_v', m), ('initial_error', cl), ('noise_floor', cl),"
            " ('ntk_at_init', el)) if hasattr(mod, n)]\n"
            "assert not missing, missing\n"
            "assert cl.J2 and cl.generalisation_error\n"  # general tools (exercises.GENERAL_TOOLS) stay
            "try:\n    from td_lib.mixed_cumulant import kappa4_v\nexcept ImportError:\n    pass\n"
            "else:\n    raise SystemExit('kappa4_v imported')\n"
            "X, S = el.make_data(20, 5, rng=0)\n"  # what answers may use is still there
            "assert X.shape == (20, 5)\n"
            "from td_lib.core.gaussian import gaussian_expectation\n"
            "assert abs(gaussian_expectation(lambda z: z**2) - 1) < 1e-12\n"
            "from td_lib import own_work\nfrom td_lib.own_work import COUNTERPARTS\n"
            "import json\nassert {k: list(v) for k, v in COUNTERPARTS.items()} == json.loads(sys.argv[2])\n"
            "assert not hasattr(own_work, 'DELEGATE_CUTS') and not hasattr(own_work, 'GENERAL_TOOLS')\n")
    registry = se.home_registry()
    assert registry and all(n.startswith("td_lib.") for ns in registry.values() for n in ns)
    out = subprocess.run([sys.executable, "-s", "-c", code, str(edition.parent), json.dumps(registry)],
                         capture_output=True, text=True,
                         cwd=str(edition.parent), env=se.edition_env(edition))
    assert out.returncode == 0, out.stderr[-2000:]


def test_every_registry_entry_of_td_lib_was_located():
    reg = se.counterparts()
    names = sorted({n for ns in reg.values() for n in ns if n.startswith("td_lib.")})
    where = se.locate(names)
    assert sorted(where) == names and all(f.endswith(".py") for f, _ in where.values())


def test_cut_drop_and_scrub_on_a_small_module():
    src = ('"""Module.\n\nSeed §7.3, Exercise 7.3.C.3 (the check).\nKept line.\n"""\n'
           "from .a import keep, gone\n__all__ = ['keep', 'gone', 'other']\n\n\n"
           "@decorator\ndef gone(x):\n    return x  # Exercise 7.2.A.2 says so\n\n\n"
           "def other():\n    # the closed form of exercise ex72A_kappa4\n    return keep(1)  # ex72A_kappa4\n")
    text = se._cut_definitions(src, {"gone"})
    text = se._drop_names(text, {"gone"}, "m")
    text = se._scrub(text)
    assert "def gone" not in text and "@decorator" not in text
    assert "from .a import keep\n" in text and "__all__ = ['keep', 'other']" in text
    assert "Kept line." in text and not se.NAMES_EXERCISE.search(text), text
    assert "return keep(1)\n" in text
    compile(text, "<edition>", "exec")


def test_examples_using_a_cut_function_go_with_it():
    """A docstring example calling a cut function, or a name such an example bound, is dropped with
    its output; an Examples heading left empty goes too; other examples stay."""
    src = ('def kept():\n    """Kept.\n\n    Examples\n    --------\n    >>> x = gone(1)\n    >>> x + 1\n    3\n'
           '    >>> kept_value = 4\n    >>> kept_value\n    4\n    """\n\n\n'
           'def other():\n    """Other.\n\n    Examples\n    --------\n    >>> gone(2)\n    4\n    """\n')
    text = se._prune_examples(src, {"gone"})
    assert "gone" not in text and "x + 1" not in text and "    3\n" not in text, text
    assert ">>> kept_value = 4" in text and "Examples" in text.split("def other")[0]
    assert "Examples" not in text.split("def other")[1], text
    compile(text, "<edition>", "exec")


def test_engines_whose_default_is_cut_are_found(tmp_path):
    lib = tmp_path / "td_lib"
    lib.mkdir()
    (lib / "m.py").write_text("def engine(f=None):\n    return library_default('gone', globals(), 'f')\n\n\n"
                              "def caller():\n    return engine()\n\n\ndef free():\n    return 1\n")
    assert se._needing(lib, {"gone"}) == {"engine", "caller"}


def test_engines_ask_for_the_students_function_in_the_edition(edition):
    """An engine whose default is a cut counterpart names the argument to pass; a general tool
    (exercises.GENERAL_TOOLS) stays."""
    code = ("import numpy as np\n"
            "import td_lib.teacher_student as ts, td_lib.circle_net as b, td_lib.kernels as k\n"
            "import td_lib.early_linear as el, td_lib.mixed_cumulant as mixed_cumulant, td_lib.cnn_lcn as cl\n"
            "from td_lib.core.gaussian import arccos_kernel\n"
            "for call, arg in ((lambda: ts.eq10_norm_scan(n=10), 'cross_moment'),\n"
            "                  (lambda: b.train_circle_net((1,), n_train=8, pairs=2, steps=1), 'ntk'),\n"
            "                  (lambda: k.finite_width_coefficients(np.ones((4, 2)), [0], batches=2), 'kernel'),\n"
            "                  (lambda: el.lemma_sweep([8]), 'ntk'),\n"
            "                  (lambda: el.agreement_run(8), 'linear_kernels'),\n"
            "                  (lambda: cl.phase_diagram(cs=np.array([0.0]), alpha_F=np.array([0.01]),\n"
            "                                            etas=np.geomspace(0.1, 3, 5)), 'optimal_eta'),\n"
            "                  (lambda: mixed_cumulant.sample(5, 6, correlated=True, clone=True, rng=0), 'cross')):\n"
            "    try:\n        call()\n    except TypeError as e:\n"
            "        assert f'{arg} is required: pass your own function' in str(e), e\n"
            "    else:\n        raise SystemExit(arg + ': no error')\n")
    out = subprocess.run([sys.executable, "-s", "-c", code], capture_output=True, text=True,
                         cwd=str(edition.parent), env=se.edition_env(edition))
    assert out.returncode == 0, out.stderr[-2000:]


def test_the_handout_cuts_every_exercise():
    reg = se.counterparts()
    assert se.handout_exercises() == sorted(reg)
    assert se.general_tools() <= {n for ns in reg.values() for n in ns}, "a general tool outside the registry"


def test_the_grading_edition_cuts_the_general_tools_of_its_exercises_too(tmp_path):
    """The grading kernel of lesson 1 has no J2 (a general tool of its exercise A), while the
    students' edition keeps it; other notebooks' general tools stay in both."""
    lesson1 = ["exA_j2_erf", "exB_lcn_sgd_step", "exC_matched_init"]
    edition = se.build(tmp_path / "grading", exercises=lesson1, keep_general=False)
    assert se.check(edition, exercises=lesson1, keep_general=False) == []
    code = ("import td_lib.cnn_lcn as cl\nfrom td_lib.core.gaussian import arccos_kernel\n"
            "print(sorted(n for n in ('J2', 'j2_entries', 'sgd_step', 'generalisation_error') if hasattr(cl, n)))\n")
    out = subprocess.run([sys.executable, "-s", "-c", code], capture_output=True, text=True,
                         cwd=str(edition.parent), env=se.edition_env(edition))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["['generalisation_error']"], out.stdout
