"""The mutation corpus of every autograded code exercise (tools/mutants.py).

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

from td_lib.own_work import COUNTERPARTS
from tools import fake_students, mutants, nbcore

SOURCES = nbcore.sources()
IDS = [f"{p.parent.name}/{p.stem}" for p in SOURCES]


@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_corpus_covers_every_exercise(src):
    problems = mutants.corpus_problems(src)
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_delegates_wherever_the_library_has_a_counterpart(src):
    """An exercise with library counterparts (td_lib.own_work.COUNTERPARTS) has a 'delegates'
    variant in its corpus. (This rule lives here, not in tools/mutants.py: ``tools`` imports
    neither td_lib nor checks.)"""
    corpus = fake_students.fixture(src).get("mutants", {})
    missing = [f"{ex}: has library counterparts {COUNTERPARTS[ex]} but no 'delegates' variant in "
               f"the 'mutants' of checks/fixtures/{src.parent.name}/{src.stem}.json"
               for ex, spec in corpus.items() if ex in COUNTERPARTS and "delegates" not in spec]
    assert missing == [], "\n".join(missing)


def test_a_delegation_must_fail_every_test_unless_delegates_fails_says_which():
    spec = {"tests": ["test_a", "test_b"], "delegates": "..."}
    assert fake_students.delegates_fails(spec) == ["test_a", "test_b"]
    assert fake_students.delegates_fails({**spec, "delegates_fails": ["test_a"]}) == ["test_a"]


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
