"""Hand in an assignment from the student handout: one zip that names its student itself.

    python handin.py --id <your student id> [--assignment <assignment>]     (in the handout)
    python -m tools.build.handin --id jean_dupont --assignment td2_7_learned_first --notebooks DIR

writes ``<assignment>__handin.zip`` next to this file (the handout's folder) holding

- ``manifest.json``: ``{"format": 1, "student_id", "assignment", "notebooks": {name: sha256},
  "created"}`` (:func:`manifest`), and
- the assignment's notebooks, ``<notebook>.ipynb``, as they are saved on disk,

and tells the student to upload that one file to the assignment's page of the LMS. The LMS
may rename the zip, put it in folders or zips of its own, add prefixes and suffixes to its
name: ``make collect-zip`` (``tools/grading/collect_zip.py``) reads the student id from the manifest
only, never from a file name, and checks each notebook against its hash.

The student id is checked here (:func:`check_id`, the same function ``collect_zip`` applies to
every manifest): letters, digits, ``_``, ``-`` and ``.``, starting and ending with a letter or a
digit, at most :data:`MAX_ID` characters.

This file is shipped as ``handin.py`` in the handout (``tools/build/handout.py`` fills
:data:`ASSIGNMENTS` with the handout's assignments and their notebooks): it uses the standard
library only and runs with the handout's Python (3.11).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import re
import sys
import textwrap
import zipfile
from pathlib import Path

FORMAT = 1
MANIFEST = "manifest.json"
SUFFIX = "__handin.zip"
MAX_ID = 64
_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")

#: The one sentence that says which id to give, in the handout's README, the course README and
#: the hand-in command's help (the same words everywhere; tests/test_collect_zip.py checks).
WHICH_ID = ("Your student id is your login on the course's learning platform (LMS), exactly as "
            "the platform spells it, for example `jean_dupont`, `marie.dupont-2` or `22004517`.")

#: assignment -> its notebooks' names (``<name>.ipynb``); filled in the handout's copy of this file.
ASSIGNMENTS: dict[str, list[str]] = {}  # HANDOUT-ASSIGNMENTS


def check_id(student_id: object) -> str | None:
    """Why ``student_id`` is not a usable student id, or None when it is.

    Parameters
    ----------
    student_id : object
        What the student typed, or what a manifest holds (any JSON value).

    Returns
    -------
    str or None
        A reason in words for a student (``"it contains '/'"``), None for a valid id.
    """
    if not isinstance(student_id, str):
        return f"it is not text ({type(student_id).__name__})"
    if not student_id:
        return "it is empty"
    if len(student_id) > MAX_ID:
        return f"it is longer than {MAX_ID} characters"
    bad = sorted({c for c in student_id if not (c.isascii() and (c.isalnum() or c in "._-"))})
    if bad:
        shown = ", ".join(repr(c) if c.isprintable() else f"U+{ord(c):04X}" for c in bad)
        return f"it contains {shown}: only letters, digits, '_', '-' and '.' are allowed"
    if ".." in student_id:
        return "it contains '..'"
    if not _ID.fullmatch(student_id):
        return "it must start and end with a letter or a digit"
    return None


def sha256(data: bytes) -> str:
    """The hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def manifest(student_id: str, assignment: str, notebooks: dict[str, bytes],
             created: datetime.datetime | None = None) -> dict:
    """The manifest of a hand-in: format, student id, assignment, ``{name: sha256}``, creation time (UTC)."""
    when = created or datetime.datetime.now(datetime.UTC)
    return {"format": FORMAT, "student_id": student_id, "assignment": assignment,
            "notebooks": {name: sha256(data) for name, data in sorted(notebooks.items())},
            "created": when.astimezone(datetime.UTC).isoformat(timespec="microseconds")}


def write_zip(out: Path, student_id: str, assignment: str, notebooks: dict[str, bytes],
              created: datetime.datetime | None = None) -> Path:
    """Write the hand-in zip ``out`` (``manifest.json`` and the notebooks); return ``out``."""
    why = check_id(student_id)
    if why:
        raise ValueError(f"student id {student_id!r}: {why}")
    tmp = out.with_name(out.name + ".part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(MANIFEST, json.dumps(manifest(student_id, assignment, notebooks, created), indent=2) + "\n")
        for name, data in sorted(notebooks.items()):
            z.writestr(name, data)
    tmp.replace(out)
    return out


def read_notebooks(folder: Path, names: list[str] | None = None) -> tuple[dict[str, bytes], list[str], list[str]]:
    """The notebooks of ``folder`` to hand in (``names``, default every ``*.ipynb``).

    Returns
    -------
    notebooks : dict[str, bytes]
        File name -> content, of each notebook found and readable as JSON.
    missing : list[str]
        The ``names`` not in the folder (handed in without them: graded 0).
    problems : list[str]
        Notebooks not readable as JSON (half saved?): the student is told what to do, and
        nothing is written.
    """
    problems: list[str] = []
    missing: list[str] = []
    wanted = names if names is not None else sorted(p.name for p in folder.glob("*.ipynb") if p.is_file())
    out: dict[str, bytes] = {}
    for name in wanted:
        path = folder / name
        if not path.is_file():
            missing.append(name)
            continue
        data = path.read_bytes()
        try:
            json.loads(data)
        except ValueError:
            problems.append(f"{path}: not a readable notebook: open it in JupyterLab, save it and run this again")
            continue
        out[name] = data
    return out, missing, problems


HELP = textwrap.fill(
    "Hand in an assignment: write ONE zip of your notebooks of the assignment and a manifest with your "
    "student id, to upload to the assignment's page on the course's learning platform (LMS). Save your "
    f"notebooks first (File > Save); hand in again at will: the newest zip counts. {WHICH_ID}", 95)

EXAMPLES = """\
examples:
  python handin.py --id jean_dupont --assignment td2_7_learned_first
  python handin.py --id 22004517 --assignment cnn_lcn"""


def build_parser() -> argparse.ArgumentParser:
    """The command line of the hand-in command."""
    p = argparse.ArgumentParser(prog="python handin.py", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--id", required=True, dest="student_id", metavar="ID",
                   help="your student id: your login on the course's LMS, e.g. jean_dupont")
    p.add_argument("--assignment", metavar="NAME",
                   help="the assignment to hand in, a folder of notebooks/ (default: the only one there)")
    p.add_argument("--notebooks", type=Path, metavar="DIR",
                   help="the folder of the assignments' notebook folders (default: notebooks/ next to this file)")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help="where to write the zip (default: the folder of this file)")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the hand-in command; the exit status (0: the zip is written)."""
    a = build_parser().parse_args(argv)
    here = Path(__file__).resolve().parent
    root = (a.notebooks or here / "notebooks").resolve()
    why = check_id(a.student_id)
    if why:
        print(f"student id {a.student_id!r} refused: {why}.\n{WHICH_ID}", file=sys.stderr)
        return 2
    present = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    known = sorted(ASSIGNMENTS) or present
    assignment = a.assignment
    if assignment is None:
        if len(known) != 1:
            print(f"say which assignment: --assignment NAME, one of {', '.join(known) or '(none found)'}",
                  file=sys.stderr)
            return 2
        assignment = known[0]
    if assignment not in known or not (root / assignment).is_dir():
        print(f"no assignment {assignment!r} in {root} (assignments: {', '.join(known) or 'none'})", file=sys.stderr)
        return 2
    names = ASSIGNMENTS.get(assignment)
    notebooks, missing, problems = read_notebooks(root / assignment, names)
    if problems or not notebooks:
        print("nothing written:\n  " + "\n  ".join(problems or [f"no notebook in {root / assignment}"]),
              file=sys.stderr)
        return 1
    out = write_zip((a.out or here).resolve() / f"{assignment}{SUFFIX}", a.student_id, assignment, notebooks)
    print(f"wrote {out}\n  student id: {a.student_id}\n  assignment: {assignment}\n  notebooks: "
          + ", ".join(sorted(notebooks))
          + (f"\n  MISSING from {root / assignment} (graded 0): {', '.join(missing)}" if missing else "")
          + f"\nUpload this one file to the page of {assignment} on the course's LMS (its name does not matter)."
          "\nIf the student id above is not your LMS login, run this again with the right --id.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
