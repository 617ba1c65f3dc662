"""Only what students have (issue 37, point 4): ``tools.build.release_lint`` finds every mention, in the
released notebooks and the student site, of a file, command or edition a student does not receive.

Each rule is shown to report a planted mention and to let the allowed look-alikes pass; the set of
what a student receives comes from the handout (a planted ``dist/`` changes it); the in-process
release equals nbgrader's; and the course's own release is clean (this last test names what is left
to fix until it is)."""

# nbgrader metadata lines of the planted sources are long by nature (as in course/source)
# ruff: noqa: E501

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from tools import env, nbcore
from tools.build import release_lint

NB = '''# %% [markdown]
# # A notebook
# PLANTED

# %% nbgrader={"grade": false, "grade_id": "ans", "locked": false, "schema_version": 3, "solution": true, "task": false}
def f(x):
    """Double x."""
    ### BEGIN SOLUTION
    # the reference is in checks/secret.py (python -m checks.grading.bake)
    return 2 * x
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "test_ans", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
from td_lib.own_work import own_work, passed
_f = own_work(f, "ans")
# CODE
assert _f(1) == 2, "f(1) should be 2: f doubles x"
passed("f")
### BEGIN HIDDEN TESTS
# from tests/test_hidden.py, make figures, the solutions edition
assert _f(5) == 10, "f(5) should be 10: f doubles x"
### END HIDDEN TESTS
'''


def course_with(tmp_path: Path, markdown: str = "Nothing to see.", code: str = "") -> Path:
    """A course root holding one source whose first markdown cell says ``markdown`` and whose
    visible test carries the comment ``code``."""
    folder = tmp_path / "course" / "source" / "a1"
    folder.mkdir(parents=True, exist_ok=True)
    text = NB.replace("PLANTED", markdown.replace("\n", "\n# ")).replace("# CODE", code or "# nothing")
    (folder / "nb1.py").write_text(text)
    return tmp_path / "course"


@pytest.fixture(scope="module")
def repo() -> release_lint.Repository:
    return release_lint.repository()


def findings(tmp_path: Path, repo, markdown: str = "Nothing to see.", code: str = "") -> list[str]:
    course = course_with(tmp_path, markdown, code)
    return [str(f) for f in release_lint.lint_sources(course, release_lint.received(course=course), repo)]


PLANTED = [
    ("Over 200 batches (`checks/two_moments.py`) the deviations are small.", "path checks/two_moments.py"),
    ("checked in `tests/test_early_linear.py`.", "path tests/test_early_linear.py"),
    ("full resolution: scripts/cnn_lcn_figures.py", "path scripts/cnn_lcn_figures.py"),
    ("the figures come from `cnn_lcn_figures.py`", "file cnn_lcn_figures.py"),
    ("run `make figures` for the full sweep", "command make figures"),
    ("`make` builds everything", "command make:"),
    ("the sources are in course/source/<assignment>/", "path course/source/<assignment>/"),
    ("(`python -m tools.build.fake_students check`)", "command python -m tools.build.fake_students"),
    ("Worked solutions are in the solutions edition of this notebook.", "names the solutions edition"),
    ("see the instructor's notebook", "names an instructor's edition"),
    ("(Errata: the original 2026 course notes, NB2 §7, printed 3.97)", "names a section of the original course"),
    ("developed in the Physics of\nDeep Learning day", "names the Physics of Deep Learning day"),
    ("the infinite-width NTK in its Notebook 2.", "names a notebook of another course"),
]


@pytest.mark.parametrize(("text", "rule"), PLANTED, ids=[r for _, r in PLANTED])
def test_each_planted_mention_is_reported(tmp_path, repo, text, rule):
    found = findings(tmp_path, repo, markdown=text)
    assert len(found) == 1 and rule in found[0], found
    assert found[0].startswith("a1/nb1.ipynb:cell 0: "), found


def test_a_baked_marker_naming_the_bake_command_is_reported_in_a_visible_test(tmp_path, repo):
    marker = "# BEGIN BAKED ref_values (python -m checks.grading.bake; do not edit by hand)"
    found = findings(tmp_path, repo, code=marker)
    assert len(found) == 1 and "command python -m checks.grading.bake" in found[0], found
    assert found[0].startswith("a1/nb1.ipynb:cell 2: "), found
    plain = "# BEGIN BAKED ref_values (expected values computed on the instructor's side; do not edit)"
    assert findings(tmp_path, repo, code=plain) == []


ALLOWED = [
    "Your instructor imports the uploads; values computed on the instructor's side.",
    "(Errata: the original course notes printed 3.97; exact quadrature gives 3.96.)",
    "The engine is `td_lib/cnn_lcn/integrals.py`; open `td2_7_1_two_moments.ipynb` first.",
    "Install with `python -m pip install -r requirements-student.txt`; see the README.md.",
    "`lcn_sgd_step` must make it itself; the two make nearly the same predictions.",
    "The ratio t/T and 1/π, and https://arxiv.org/abs/2006.00000 for the paper.",
]


@pytest.mark.parametrize("text", ALLOWED)
def test_what_students_have_or_plain_prose_is_not_reported(tmp_path, repo, text):
    assert findings(tmp_path, repo, markdown=text) == []


def test_solutions_and_hidden_tests_are_not_in_the_release(tmp_path, repo):
    """The planted source's answer and hidden-test regions name checks/, tests/, make figures and
    the solutions edition: nbgrader's release drops both regions, so nothing is reported."""
    nb = release_lint.release_notebook(course_with(tmp_path) / "source" / "a1" / "nb1.py")
    text = "\n".join(c.source for c in nb.cells)
    assert "checks/secret.py" not in text and "tests/test_hidden.py" not in text
    assert "raise NotImplementedError()" in text and 'passed("f")' in text
    assert findings(tmp_path, repo) == []


def test_what_students_receive_comes_from_the_handout(tmp_path, repo):
    have = release_lint.received()
    assert "notebooks/td2_7_learned_first/td2_7_1_two_moments.ipynb" in have.files
    assert "td_lib/cnn_lcn/integrals.py" in have.files and "README.md" in have.files
    assert not any(f.startswith(("checks/", "tests/", "tools/", "scripts/")) for f in have.files)
    # a handout that shipped its Makefile and a scripts folder would make those mentions fine
    dist = tmp_path / "dist"
    (dist / "scripts").mkdir(parents=True)
    (dist / "scripts" / "cnn_lcn_figures.py").write_text("")
    (dist / "Makefile").write_text("figures:\n")
    shipped = release_lint.received(dist)
    text = "full resolution: `scripts/cnn_lcn_figures.py` (`make figures`)"
    assert [f.rule for f in release_lint.lint_text(text, "x", shipped, repo)] == []
    rules = [f.rule for f in release_lint.lint_text(text, "x", have, repo)]
    assert rules == ["path scripts/cnn_lcn_figures.py: students get no scripts/",
                     "command make figures: students get no Makefile"], rules


def test_a_built_handout_and_site_pages_are_linted(tmp_path, repo):
    dist = tmp_path / "dist"
    (dist / "notebooks" / "a1").mkdir(parents=True)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("see `tests/test_x.py`")])
    nbformat.write(nb, str(dist / "notebooks" / "a1" / "nb.ipynb"))
    (dist / "README.md").write_text("Start with `make lab`.\n")
    found = [str(f) for f in release_lint.lint_dist(dist, repo)]
    assert found == ["a1/nb.ipynb:cell 0: see `tests/test_x.py`  [path tests/test_x.py: students get no tests/]",
                     "dist/README.md: Start with `make lab`.  [command make lab: students get no Makefile]"], found
    site = tmp_path / "site"
    (site / "_static").mkdir(parents=True)
    (site / "_static" / "x.html").write_text("<p>checks/ignored.py</p>")
    (site / "page.html").write_text("<html><script>var a = 'checks/in_script.js';</script>"
                                    "<p>The <b>solutions&nbsp;edition</b> has it.</p></html>")
    found = [str(f) for f in release_lint.lint_site(site, release_lint.received(), repo)]
    assert found == ["page.html: The solutions edition has it.  [names the solutions edition]"], found


@pytest.mark.pipeline
def test_the_in_process_release_is_nbgraders(tmp_path):
    """The text release_lint reads is what ``nbgrader generate_assignment`` releases (one notebook)."""
    from tools.build import pipeline

    src = nbcore.sources("td2_7_learned_first")[0]
    course = tmp_path / "course"
    (course / "source" / src.parent.name).mkdir(parents=True)
    shutil.copy(env.COURSE / "nbgrader_config.py", course)
    shutil.copy(src, course / "source" / src.parent.name / src.name)
    shutil.copy(src.parent / "jupytext.toml", course / "source" / src.parent.name)
    out = pipeline.release(src.parent.name, course)
    theirs = nbformat.read(str(out / f"{src.stem}.ipynb"), as_version=4)
    ours = release_lint.release_notebook(course / "source" / src.parent.name / src.name)
    assert [(c.cell_type, c.source) for c in ours.cells] == [(c.cell_type, c.source) for c in theirs.cells]
    assert [str(f) for f in release_lint.lint_release(out)] == [
        str(f) for f in release_lint.lint_sources(course)]


def test_the_course_release_names_only_what_students_receive(repo):
    """The sources' release and the student site's home page; fails, listing each mention, until
    the notebooks (and site/index.md) are fixed."""
    have = release_lint.received()
    found = release_lint.lint_sources(have=have, repo=repo) + release_lint.lint_site(None, have, repo)
    assert found == [], f"{len(found)} mention(s):\n" + "\n".join(map(str, found))
