"""``--help`` of the instructor and author command lines reads as a manual, not as internals.

For each CLI the README or docs/AUTHORING.md gives: ``python -m tools.<name> --help`` exits 0
and prints the usage, then what the command does in 3 to 5 lines (no preprocessor, class or
fingerprint talk: that stays in the module docstring, ``python -m pydoc tools.<name>``), then
every argument and option with a help text (defaults said), then an ``examples:`` section.
The parser comes from the module's ``build_parser()``, which ``main`` uses.
"""

from __future__ import annotations

import argparse
import importlib
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from tools import env

#: command lines people do not type, with the reason
NOT_FOR_PEOPLE = {"grading.runner": "the test runner, started by the grader inside its sandbox"}


def _command_lines() -> list[str]:
    """Every ``tools`` module or package that runs as ``python -m tools.<name>`` (``<name>``
    dotted below ``tools``: ``grading.grade``, ``live_grading``)."""
    root = env.REPO / "tools"
    found = [".".join(p.relative_to(root).with_suffix("").parts) for p in sorted(root.rglob("*.py"))
             if p.name != "__main__.py" and 'if __name__ == "__main__":' in p.read_text()]
    found += [".".join(p.parent.relative_to(root).parts) for p in sorted(root.rglob("__main__.py"))]
    return [n for n in found if n not in NOT_FOR_PEOPLE]


CLIS = _command_lines()
# tools/build/handout.py is being reworked elsewhere (issue 23, the handout): it still prints its
# module docstring and has an option without help. Drop this mark when it has build_parser().
PENDING: dict[str, str] = {}
INTERNALS = ("Preprocessor", "Execute", "fingerprint", "ClearOutput", "SaveAutoGrades", "nbgrader_ext")


PARAMS = [pytest.param(name, id=name) for name in CLIS] + [
    pytest.param(name, id=name, marks=pytest.mark.xfail(reason=why, strict=False)) for name, why in PENDING.items()]


def _run_help(cmd: tuple[str, ...]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", f"tools.{cmd[0]}", *cmd[1:], "--help"], cwd=env.REPO,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def helps() -> dict[tuple[str, ...], subprocess.CompletedProcess]:
    """(tool, subcommand...) -> its ``--help`` run, all started at once (each one imports its tool)."""
    cmds = [(name, *sub) for name in CLIS + list(PENDING) if hasattr(importlib.import_module(f"tools.{name}"),
                                                                     "build_parser")
            for sub, _ in _parsers(importlib.import_module(f"tools.{name}").build_parser())]
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(cmds, pool.map(_run_help, cmds)))


def _parsers(p: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    """(subcommand path, parser) of ``p`` and of every subcommand under it."""
    yield prefix, p
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*prefix, name))


def _undocumented(p: argparse.ArgumentParser) -> list[str]:
    """Arguments and options of ``p`` without a help text, or with a default it does not say."""
    bad = []
    for action in p._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        name = "/".join(action.option_strings) or action.metavar or action.dest
        if not action.help or action.help == argparse.SUPPRESS:
            bad.append(f"{name}: no help text")
        elif action.option_strings and action.default not in (None, False, argparse.SUPPRESS) \
                and "default" not in action.help:
            bad.append(f"{name}: its default {action.default!r} is not said")
        if isinstance(action, argparse._SubParsersAction):
            bad += [f"{name} {c.dest}: no help text" for c in action._choices_actions if not c.help]
    return bad


@pytest.mark.parametrize("name", PARAMS)
def test_help_reads_as_a_manual(name, helps):
    module = importlib.import_module(f"tools.{name}")
    assert hasattr(module, "build_parser"), f"tools.{name}: give main's parser a build_parser() function"
    for sub, parser in _parsers(module.build_parser()):
        where = f"python -m tools.{' '.join((name, *sub))} --help"
        run = helps[(name, *sub)]
        assert run.returncode == 0, f"{where} exited {run.returncode}:\n{run.stderr}"
        text = run.stdout
        head, _, rest = text.partition("\n\n")
        assert head.startswith("usage: "), f"{where} must start with the usage:\n{text}"
        sections = re.split(r"^(?=\S[^\n]*:\n)", rest, flags=re.M)
        intro = sections[0].strip().splitlines()
        assert 3 <= len(intro) <= 5, (
            f"{where}: say what the command does in 3 to 5 lines before the options, not {len(intro)}:\n"
            + "\n".join(intro))
        shown = [w for w in INTERNALS if w in text]
        assert not shown, f"{where} shows internals {shown}: keep them in the module docstring"
        titles = [s.split(":", 1)[0] for s in sections[1:]]
        assert titles and titles[-1] == "examples", f"{where}: end with an 'examples:' section, not {titles}"
        examples = sections[-1].splitlines()[1:]
        assert 2 <= sum(1 for ln in examples if re.match(r"\s+(make|python) ", ln)) <= 4, (
            f"{where}: give 2 to 4 example commands:\n" + "\n".join(examples))
        bad = _undocumented(parser)
        assert not bad, f"{where}:\n  " + "\n  ".join(bad)


@pytest.mark.parametrize(("target", "name"), [("grade", "grading.grade"), ("collect-zip", "grading.collect_zip")])
def test_make_target_passes_every_option(target, name):
    """``make grade`` / ``make collect-zip`` forward every option of their tool (as a variable)."""
    makefile = (env.REPO / "Makefile").read_text()
    recipe = re.search(rf"^{target}:.*?\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe, f"Makefile has no {target} target"
    parser = importlib.import_module(f"tools.{name}").build_parser()
    options = [a.option_strings[-1] for a in parser._actions
               if a.option_strings and not isinstance(a, argparse._HelpAction)]
    missing = [o for o in options if not re.search(rf"{o}\b", recipe.group(1))]
    assert not missing, f"make {target} cannot pass {missing} of python -m tools.{name}"
