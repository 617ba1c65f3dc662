"""The mutation corpus of every autograded code exercise (tools/meta/mutants.py).

Static rules (fast): every autograded code exercise has a corpus with at least one correct
alternative and four wrong answers in four error classes, and a delegation wherever the
exercise has a library counterpart. Pipeline test: the corpus runs as the autograder runs
(one kernel per notebook, two notebooks at a time), every correct alternative gets full
marks, every wrong answer loses points on its exercise and every delegation scores 0 on it;
the per-exercise acceptance and kill rates are printed.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import pytest

from checks.grading.exercises import COUNTERPARTS
from tools import nbcore
from tools.build import fake_students
from tools.meta import mutants

SOURCES = nbcore.sources()
IDS = [f"{p.parent.name}/{p.stem}" for p in SOURCES]


@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_corpus_covers_every_exercise(src):
    problems = mutants.corpus_problems(src)
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_delegates_wherever_the_library_has_a_counterpart(src):
    """An exercise with library counterparts (checks/grading/exercises.py) has a 'delegates'
    variant in its corpus. (This rule lives here, not in tools/meta/mutants.py: ``tools`` imports
    neither td_lib nor checks.)"""
    corpus = fake_students.fixture(src).get("mutants", {})
    missing = [f"{ex}: has library counterparts {COUNTERPARTS[ex]} but no 'delegates' variant in "
               f"checks/fixtures/{src.parent.name}/{src.stem}/{ex}/ (no delegates.py)"
               for ex, spec in corpus.items() if ex in COUNTERPARTS and "delegates" not in spec]
    assert missing == [], "\n".join(missing)


def test_a_delegation_must_fail_every_test_unless_delegates_fails_says_which():
    spec = {"tests": ["test_a", "test_b"], "delegates": "..."}
    assert fake_students.delegates_fails(spec) == ["test_a", "test_b"]
    assert fake_students.delegates_fails({**spec, "delegates_fails": ["test_a"]}) == ["test_a"]


def test_a_fixture_file_submits_the_text_below_its_mark(tmp_path):
    f = tmp_path / "wrong_x.py"
    f.write_text("import numpy as np\n\n# %%\ndef f():\n    return np.pi\n")
    assert fake_students.cell_source(f) == "def f():\n    return np.pi\n"
    f.write_text("def f():\n    pass\n")
    with pytest.raises(ValueError, match="no line '# %%'"):
        fake_students.cell_source(f)


def test_wrong_answers_and_their_classes_are_listed_together(tmp_path, monkeypatch):
    src = next(p for p in SOURCES if p.stem == "td2_7_2_higher_cumulants")
    ex = tmp_path / src.parent.name / src.stem / "ex72C_escape_times"
    ex.mkdir(parents=True)
    (ex.parent / "__init__.py").write_text('PARTIAL_FAILS = []\nRAISES_FAILS = []\n')
    (ex / "__init__.py").write_text('TESTS = ["test_ex72C_basic"]\nWRONG = {"a": "sign"}\n')
    (ex / "wrong_a.py").write_text("# %%\npass\n")
    monkeypatch.setattr(fake_students, "FIXTURES", tmp_path)
    assert fake_students.fixture(src)["mutants"]["ex72C_escape_times"]["wrong"] == {
        "a": {"class": "sign", "source": "pass\n"}}
    (ex / "wrong_b.py").write_text("# %%\npass\n")
    with pytest.raises(ValueError, match=r"files without a class \['b'\]"):
        fake_students.fixture(src)


def test_every_fixture_file_is_one_the_loader_reads():
    """A cell file's name says what it is (checks/fixtures/__init__.py); a misnamed one would be skipped."""
    root = fake_students.FIXTURES
    bad = []
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root)
        if f.name == "__init__.py":
            continue
        if rel.parts[0] == "hostile":
            ok = len(rel.parts) == 5
        else:
            ok = len(rel.parts) == 4 and (f.stem in ("partial", "raises", "delegates")
                                          or f.stem.startswith(("correct_", "wrong_")))
        if not ok or not (f.parent / "__init__.py").is_file():
            bad.append(str(rel))
            continue
        fake_students.cell_source(f)
    assert bad == [], f"fixture files the loader does not read: {bad}"


def test_defined_names():
    src = "import math\n\ndef f(x):\n    return x\n\nA, (B, C) = 1, (2, 3)\nclass K: pass\n"
    assert mutants.defined_names(src) == {"f", "A", "B", "C", "K"}
    assert mutants.defined_names("def broken(:\n") == set()


def _run(src):
    from tools import env

    env.setup()
    return mutants.run(src, verbose=False)


@pytest.fixture(scope="module")
def outcomes():
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as pool:
        return dict(zip(SOURCES, pool.map(_run, SOURCES)))


@pytest.mark.pipeline
@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_mutation_corpus(src, outcomes):
    table, problems = mutants.summary(outcomes[src])
    print(f"\n{src.stem}\n{table}")
    assert outcomes[src], f"{src.name}: the corpus ran no variant"
    assert problems == [], "\n".join(problems)
