"""Import work handed in outside the exchange (an LMS download): hand-in zips, never a guessed id.

    make collect-zip A=<assignment> ZIP=<zip file or folder> [FORCE=1]
    python -m tools.grading.collect_zip ASSIGNMENT PATH [--force] [--course DIR]

Students on laptops hand in with the handout's command (``python handin.py --id <login>``,
``tools/build/handin.py``), which writes one zip per assignment: ``manifest.json`` (format, student id,
assignment, the SHA-256 of each notebook, creation time) and the notebooks. They upload it to
the course's LMS; the instructor downloads the assignment's submissions as a zip (or a folder)
and imports them here. The LMS may rename the hand-in zip, add prefixes (``48213_``,
``Submission 3 - ``) and resubmission suffixes (``-1``, `` (2)``), put it in folders or zips of
its own: the student id is read **from the manifest only**, never from a name.

What it does: copies PATH into ``course/downloaded/<assignment>/archive/`` (the previous
import's copy is replaced), extracts it into ``course/downloaded/<assignment>/extracted/`` (each
``.zip``/``.tar.gz`` into a folder of its name next to it, archives inside archives too, as
data: :mod:`tools.grading.safe_files`), then

- each folder holding a ``manifest.json`` is a hand-in (:func:`read_handin`): it is imported
  only if the manifest is well formed, its id passes :func:`tools.build.handin.check_id` (letters,
  digits, ``_``, ``-``, ``.``; no ``/``, ``..``, control character; at most 64 characters), its
  assignment is ASSIGNMENT and every notebook it lists is there with its hash; else it is
  refused, with the reason;
- two hand-ins of one student: the newer manifest wins, the other is reported (both stay in the
  download's copy); two of the same time with different notebooks: neither is imported;
- a loose notebook (the former ``<student id>_<notebook>.ipynb`` convention, with LMS prefixes
  and suffixes) is imported only when its id is certain (:func:`legacy_id`): exactly one student
  of the gradebook's roster fits its name; else it is refused with the reason. A student with a
  hand-in zip in the download gets the zip, not loose files; two loose files of one student's
  notebook are both refused (which is the latest cannot be told);
- each accepted submission is written to ``course/submitted/<student>/<assignment>/`` (nbgrader's
  layout, as ``nbgrader collect`` leaves it) with a ``timestamp.txt``: the time of the import,
  so that ``make grade`` grades a re-imported submission again.

It reports per student the notebooks imported and missing (graded 0 if they stay so), every
hand-in replaced by a newer one, and every file of the download that was not imported, with the
reason, and then exits 1 (0 when everything was imported). Operating-system residue
(``__MACOSX/``, ``.DS_Store``, ``._*``, ``.ipynb_checkpoints/``) is counted but not listed. A
student who already has a submission of the assignment in ``course/submitted/`` (from the
exchange or an earlier import) is not replaced unless ``--force`` (``FORCE=1``). Nothing here
ever suggests removing a file from the download.

The download is students' data: regular files only; a symbolic link (in the folder or as an
archive entry), a device, a FIFO, an entry with an absolute path or a ``..``, an encrypted
entry, a file over 50 MB and whatever exceeds :data:`LIMITS` in total (a zip bomb) are refused,
never followed or written, and listed with the reason.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import sqlite3
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tools import env
from tools.build import handin
from tools.grading import safe_files

DOWNLOADED = "downloaded"
#: what one download may hold (a class's notebooks): 20000 files, 50 MB each, 2 GB in total
LIMITS = safe_files.Limits(max_files=20_000, max_file_bytes=50 * safe_files.MB, max_total_bytes=2048 * safe_files.MB,
                           max_entries=50_000)
#: archives inside archives extracted, at most
NESTED = 3
JUNK = re.compile(r"(^|/)(__MACOSX/|\.ipynb_checkpoints/|\.DS_Store$|Thumbs\.db$|desktop\.ini$|\._)")
ARCHIVES = (".zip", ".gz")
#: a manifest larger than this is refused unread (a real one is a few hundred bytes)
MAX_MANIFEST = 64 * 1024
#: resubmission suffixes an LMS or a browser adds before ``.ipynb``: ``-1``, `` (2)``
RESUBMISSION = re.compile(r"(?:-[0-9]+| ?\([0-9]+\))$")
#: what may stand between an LMS prefix and the student id of a loose notebook's name (the
#: more there are, the more names are refused as fitting two ids: never guess)
SEPARATORS = "_ -."

HELP = """\
Import one assignment's work handed in through an LMS (its download: a zip or a folder) into
course/submitted/<student>/ASSIGNMENT/. The id comes only from the manifest of each hand-in zip
(the handout's `python handin.py --id <login>`); a loose <id>_<notebook>.ipynb only when exactly
one student of the gradebook fits. Whatever is not imported is listed with the reason (exit 1).
Then `make grade A=ASSIGNMENT`. Details: `python -m pydoc tools.grading.collect_zip`."""

EXAMPLES = """\
examples:
  make collect-zip A=td2_7_learned_first ZIP=~/Downloads/td2_7_learned_first.zip
  python -m tools.grading.collect_zip cnn_lcn ~/Downloads/cnn_lcn/         # a folder of hand-in zips
  make collect-zip A=cnn_lcn ZIP=~/Downloads/cnn_lcn.zip FORCE=1    # again, replacing earlier imports"""


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m tools.grading.collect_zip``."""
    p = argparse.ArgumentParser(prog="python -m tools.grading.collect_zip", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("assignment", help="the assignment the notebooks belong to, e.g. td2_7_learned_first")
    p.add_argument("path", type=Path, metavar="PATH",
                   help="the downloaded zip file (or .tar.gz), or a folder of hand-in zips and notebooks")
    p.add_argument("--force", action="store_true",
                   help="replace the submissions of students already in course/submitted/ (default: keep them, "
                        "list the student)")
    p.add_argument("--course", type=Path, default=env.COURSE, metavar="DIR",
                   help="nbgrader course root (default: course/ of this repository)")
    return p


def _show(path: Path) -> str:
    """``path`` relative to the working directory when under it (course/...), else absolute."""
    return path.relative_to(Path.cwd()).as_posix() if path.is_relative_to(Path.cwd()) else str(path)


def stage(path: Path, archive: Path) -> list[safe_files.Refusal]:
    """Copy the download ``path`` (a file or a folder) into nbgrader's ``archive`` folder, a
    folder as data (:func:`tools.grading.safe_files.copy_tree`); the files not copied."""
    if archive.parent.exists():
        shutil.rmtree(archive.parent)
    archive.mkdir(parents=True)
    if path.is_dir():
        return safe_files.copy_tree(path, archive, LIMITS)
    shutil.copy2(path, archive / path.name)
    return []


def _stem(name: str) -> str:
    """An archive's folder name, as nbgrader's: ``a.zip`` -> ``a``, ``a.tar.gz`` -> ``a``."""
    stem, _ = os.path.splitext(name)
    return stem[:-4] if stem.endswith(".tar") else stem


def _unpack(src: Path, into: Path, shown: str, budget: safe_files.Budget, depth: int) -> None:
    """Extract the archive ``src`` (``shown`` in the download) into ``into``, then the archives it held."""
    before = len(budget.refused)
    safe_files.extract_archive(src, into, budget=budget, prefix=f"{shown}/")
    if len(budget.refused) > before and budget.refused[-1].path == shown:
        return  # not an archive at all
    for dirpath, _, names in sorted(os.walk(into)):  # written just now: regular files and folders only
        for name in sorted(names):
            if os.path.splitext(name)[1] not in ARCHIVES:
                continue
            inner = Path(dirpath) / name
            inner_shown = f"{shown}/{inner.relative_to(into).as_posix()}"
            if JUNK.search(inner_shown):
                continue  # macOS residue named like an archive (``__MACOSX/._x.zip``): counted as residue
            if depth + 1 >= NESTED:
                budget.refused.append(safe_files.Refusal(
                    inner_shown, f"an archive inside {NESTED} archives: not extracted"))
                continue
            _unpack(inner, inner.parent / _stem(name), inner_shown, budget, depth + 1)


def extract(archive: Path, extracted: Path) -> list[safe_files.Refusal]:
    """nbgrader's ``ExtractorPlugin.extract``, as data: the files of ``archive`` copied into
    ``extracted``, each archive (``.zip``, ``.gz``) extracted into a folder of its name next to
    them, archives inside it too (:data:`NESTED` deep), within :data:`LIMITS` all together;
    the files not taken, named as in the download."""
    if extracted.exists():
        shutil.rmtree(extracted)
    extracted.mkdir(parents=True)
    budget = safe_files.Budget(LIMITS)
    safe_files.copy_tree(archive, extracted, skip=[f"*{ext}" for ext in ARCHIVES], budget=budget)
    for dirpath, _, names in sorted(os.walk(archive)):  # stage() wrote it: regular files and folders only
        for name in sorted(names):
            if os.path.splitext(name)[1] in ARCHIVES:
                src = Path(dirpath) / name
                rel = src.relative_to(archive)
                if JUNK.search(rel.as_posix()):
                    continue
                _unpack(src, extracted / rel.parent / _stem(name), rel.as_posix(), budget, 0)
    return budget.refused




# ------------------------------------------------------------------ what the download holds
@dataclass
class Handin:
    """One hand-in zip of the download, read and checked (:func:`read_handin`).

    Parameters
    ----------
    where : str
        Its folder in the extracted download (``/``-separated, the zip's name without ``.zip``).
    student_id : str
        The id of its manifest.
    created : datetime.datetime
        The creation time of its manifest (UTC).
    notebooks : dict[str, bytes]
        Notebook name (without ``.ipynb``) -> its bytes, hash checked.
    """

    where: str
    student_id: str
    created: datetime.datetime
    notebooks: dict[str, bytes]


@dataclass
class Outcome:
    """What an import found: submissions to write, and what was not taken (path, reason)."""

    submissions: dict[str, tuple[str, dict[str, bytes]]] = field(default_factory=dict)
    not_taken: list[tuple[str, str]] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    junk: int = 0


def _created(value: object) -> datetime.datetime | None:
    """The manifest's ``created`` as an aware UTC datetime, or None."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        when = datetime.datetime.fromisoformat(value)
    except ValueError:
        return None
    return when.astimezone(datetime.UTC) if when.tzinfo else None


def read_handin(folder: Path, where: str, assignment: str, released: Sequence[str]) -> Handin | str:
    """The hand-in in ``folder`` (its ``manifest.json`` and notebooks), or why it is refused.

    Parameters
    ----------
    folder : Path
        A folder of the extracted download holding a ``manifest.json`` (written by safe_files:
        regular files only).
    where : str
        The folder's path in the download, for messages.
    assignment : str
        The assignment being imported; a hand-in of another one is refused.
    released : sequence of str
        The assignment's notebooks (names without ``.ipynb``).

    Returns
    -------
    Handin or str
        The checked hand-in, or the reason it is refused (words for the instructor).
    """
    path = folder / handin.MANIFEST
    if path.stat().st_size > MAX_MANIFEST:
        return f"its manifest.json is over {MAX_MANIFEST // 1024} kB: not a manifest of the hand-in command"
    try:
        m = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError):
        return "its manifest.json is not JSON: the zip was not written by the hand-in command"
    if not isinstance(m, dict) or m.get("format") != handin.FORMAT:
        return f"its manifest.json is not of format {handin.FORMAT}"
    why = handin.check_id(m.get("student_id"))
    if why:
        return f"the student id of its manifest ({str(m.get('student_id'))[:80]!r}) is refused: {why}"
    sid = m["student_id"]
    if m.get("assignment") != assignment:
        return f"a hand-in of {str(m.get('assignment'))[:80]!r} by {sid}, not of {assignment}"
    created = _created(m.get("created"))
    if created is None:
        return f"{sid}'s manifest has no valid creation time"
    listed = m.get("notebooks")
    if not isinstance(listed, dict) or not listed:
        return f"{sid}'s manifest lists no notebook"
    notebooks: dict[str, bytes] = {}
    for name, digest in sorted(listed.items()):
        stem = name[:-len(".ipynb")] if isinstance(name, str) and name.endswith(".ipynb") else None
        if stem not in released:
            return f"{sid}'s manifest lists {str(name)[:80]!r}, not a notebook of {assignment} ({', '.join(released)})"
        nb = folder / name
        if not nb.is_file():
            return f"{sid}'s manifest lists {name}, which the zip does not hold"
        data = nb.read_bytes()
        if digest != handin.sha256(data):
            return (f"{sid}'s {name} is not the notebook the manifest lists (its hash differs): "
                    f"changed after the hand-in")
        notebooks[stem] = data
    return Handin(where, sid, created, notebooks)


def read_roster(course: Path) -> list[str]:
    """The student ids of the gradebook's roster (``course/gradebook.db``), read-only; [] without one."""
    db = course / "gradebook.db"
    if not db.is_file():
        return []
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return sorted(r[0] for r in con.execute("SELECT id FROM student") if isinstance(r[0], str))
        finally:
            con.close()
    except sqlite3.Error:
        return []


def legacy_id(filename: str, released: Sequence[str], roster: Sequence[str]) -> tuple[str, str] | str:
    """The (student id, notebook) of a loose notebook named ``[<LMS prefix>]<id>_<notebook>[suffix].ipynb``,
    or why it cannot be read with certainty.

    The id is certain only when exactly one (roster id, notebook) pair fits the name: the part
    before ``_<notebook>`` is the roster id, or ends with it right after one of
    :data:`SEPARATORS` (an LMS prefix such as ``48213_`` or ``Submission 3 - ``). An id that is
    not on the roster is never taken: ``jean_dupont_x`` could be ``jean_dupont`` or ``dupont``.

    Parameters
    ----------
    filename : str
        The file's name (no folder).
    released : sequence of str
        The assignment's notebooks (names without ``.ipynb``).
    roster : sequence of str
        The gradebook's student ids.

    Returns
    -------
    tuple of str, or str
        ``(student id, notebook)``, or the reason.
    """
    if not filename.endswith(".ipynb"):
        return "not a notebook"
    stem = filename[:-len(".ipynb")]
    bases = {stem, RESUBMISSION.sub("", stem)}
    heads = sorted({(b[:-len(nb) - 1], nb) for b in bases for nb in released if b.endswith(f"_{nb}")})
    if not heads:
        return (f"not named <student id>_<notebook>.ipynb with a notebook of this assignment "
                f"({', '.join(released)})")
    if not roster:
        return ("a loose notebook, and the gradebook has no student roster to check its id against: "
                "ask the student to hand in with the handout's handin.py")
    fits = sorted({(r, nb) for head, nb in heads for r in roster
                   if handin.check_id(r) is None
                   and (head == r or (head.endswith(r) and head[-len(r) - 1] in SEPARATORS))})
    if len(fits) == 1:
        return fits[0]
    if not fits:
        return (f"no student of the gradebook's roster fits the name (read {', '.join(sorted({h for h, _ in heads}))!r}"
                f" before the notebook's name): the id cannot be read with certainty")
    return (f"the name fits several students of the roster ({', '.join(sorted({r for r, _ in fits}))}): "
            f"the id cannot be read with certainty")


def survey(extracted: Path, assignment: str, released: Sequence[str], roster: Sequence[str]) -> Outcome:
    """What the extracted download holds: the submission of each student, and every file not taken."""
    out = Outcome()
    files = sorted(f.relative_to(extracted).as_posix() for f in extracted.rglob("*") if f.is_file())
    taken: set[str] = set()
    handins: dict[str, list[Handin]] = {}
    by_folder: dict[str, list[str]] = {}
    for rel in files:
        if not JUNK.search(rel):
            by_folder.setdefault(os.path.dirname(rel), []).append(rel)
    for rel in files:
        if JUNK.search(rel) or Path(rel).name != handin.MANIFEST:
            continue
        folder = (extracted / rel).parent
        where = os.path.dirname(rel) or "."
        inside = by_folder[os.path.dirname(rel)]
        got = read_handin(folder, where, assignment, released)
        if isinstance(got, str):
            out.not_taken.append((f"{where}/", f"hand-in refused: {got}"))
            taken.update(inside)
            continue
        handins.setdefault(got.student_id, []).append(got)
        listed = {f"{nb}.ipynb" for nb in got.notebooks} | {handin.MANIFEST}
        for f in inside:
            taken.add(f)
            if Path(f).name not in listed:
                out.not_taken.append((f, "in a hand-in zip but not in its manifest"))
    for sid, mine in sorted(handins.items()):
        mine.sort(key=lambda h: h.created)
        newest = mine[-1]
        ties = [h for h in mine if h.created == newest.created and h.notebooks != newest.notebooks]
        if ties:
            for h in mine:
                out.not_taken.append((f"{h.where}/", f"hand-ins of {sid} made at the same time "
                                                     f"({newest.created:%Y-%m-%d %H:%M:%S} UTC) hold different "
                                                     f"notebooks: none of them is imported"))
            continue
        out.submissions[sid] = (f"hand-in {newest.where}/ (made {newest.created:%Y-%m-%d %H:%M:%S} UTC)",
                                newest.notebooks)
        for h in mine[:-1]:
            out.superseded.append(f"{sid}: {h.where}/ (made {h.created:%Y-%m-%d %H:%M:%S} UTC) replaced by the "
                                  f"newer {newest.where}/ (made {newest.created:%Y-%m-%d %H:%M:%S} UTC)")
    loose: dict[tuple[str, str], list[str]] = {}
    for rel in files:
        if rel in taken:
            continue
        if JUNK.search(rel):
            out.junk += 1
            continue
        if Path(rel).suffix in ARCHIVES:
            continue  # an archive inside the download, extracted next to itself
        got = legacy_id(Path(rel).name, released, roster)
        if isinstance(got, str):
            out.not_taken.append((rel, got))
        elif got[0] in out.submissions:
            out.not_taken.append((rel, f"a loose notebook of {got[0]}, who handed in a zip in this download: "
                                       f"the zip is imported"))
        elif got[0] in handins:
            out.not_taken.append((rel, f"a loose notebook of {got[0]}, whose hand-in zips in this download are "
                                       f"refused (listed): not imported either"))
        else:
            loose.setdefault(got, []).append(rel)
    for (sid, nb), rels in sorted(loose.items()):
        if len(rels) > 1:
            for rel in rels:
                out.not_taken.append((rel, f"one of {len(rels)} loose files of {sid}'s {nb}: which is the latest "
                                           f"cannot be told, none is imported (ask {sid} for a hand-in zip, or "
                                           f"import the right file alone: ZIP=<that file> FORCE=1)"))
            continue
        _, nbs = out.submissions.setdefault(sid, ("loose notebooks (id found in the roster)", {}))
        nbs[nb] = (extracted / rels[0]).read_bytes()
    return out


# ----------------------------------------------------------------------------- import
def write(course: Path, assignment: str, out: Outcome, force: bool) -> dict[str, str]:
    """Write each submission of ``out`` to ``course/submitted/<id>/<assignment>/`` with a
    ``timestamp.txt`` (the time of the import); student -> where it came from. A student who
    already has a submission there is kept (listed in ``out.not_taken``) unless ``force``."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    done: dict[str, str] = {}
    submitted = course / "submitted"
    for sid, (source, notebooks) in sorted(out.submissions.items()):
        if handin.check_id(sid) is not None:  # read_handin and the roster check it: never reached
            raise ValueError(f"unsafe student id {sid!r}")
        dest = submitted / sid / assignment
        if dest.is_symlink() or dest.parent.is_symlink():
            out.not_taken.append((source, f"{_show(dest)} is a symbolic link: not written"))
            continue
        if dest.exists():
            if not force:
                out.not_taken.append((source, f"{sid} already has a submission in {_show(dest)}/: kept "
                                              f"(FORCE=1, --force, replaces it)"))
                continue
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        for nb, data in sorted(notebooks.items()):
            (dest / f"{nb}.ipynb").write_bytes(data)
        (dest / "timestamp.txt").write_text(now)
        done[sid] = source
    return done


def collect(assignment: str, path: Path, course: Path = env.COURSE, force: bool = False) -> int:
    """Import the download ``path`` of ``assignment`` into ``course``; the exit status
    (0: all imported, 1: something listed as not imported, 2: nothing done)."""
    course = course.resolve()
    if not (course / "source" / assignment).is_dir():
        known = sorted(p.name for p in (course / "source").iterdir() if p.is_dir())
        print(f"no assignment {assignment!r} in {_show(course)}/source/ (assignments: {', '.join(known)})",
              file=sys.stderr)
        return 2
    released = sorted(p.stem for p in (course / "release" / assignment).glob("*.ipynb"))
    if not released:
        print(f"{assignment} is not released ({_show(course)}/release/{assignment}/ holds no notebook): "
              f"run `make release` first", file=sys.stderr)
        return 2
    path = path.expanduser().resolve()
    if not path.exists():
        print(f"{path}: no such file or folder", file=sys.stderr)
        return 2
    top = course / DOWNLOADED / assignment
    archive, extracted = top / "archive", top / "extracted"
    if path.is_relative_to(top):
        print(f"{path} is inside {_show(top)}/, which each import replaces: put the download elsewhere",
              file=sys.stderr)
        return 2
    refused = stage(path, archive)
    refused += extract(archive, extracted)
    out = survey(extracted, assignment, released, read_roster(course))
    done = write(course, assignment, out, force)
    return report(assignment, course, extracted, out, done, released, refused)


def report(assignment: str, course: Path, extracted: Path, out: Outcome, done: dict[str, str],
           released: Sequence[str], refused: Sequence[safe_files.Refusal] = ()) -> int:
    """Print what was imported and every file of the download that was not; 1 if there is one."""
    count = sum(len(out.submissions[sid][1]) for sid in done)
    print(f"collected {count} notebook(s) of {len(done)} student(s) into "
          f"{_show(course)}/submitted/<student>/{assignment}/")
    for sid, source in sorted(done.items()):
        nbs = out.submissions[sid][1]
        missing = sorted(set(released) - set(nbs))
        print(f"  {sid:16s} {len(nbs)} of {len(released)} notebooks, from {source}"
              + (f"; missing (graded 0): {', '.join(missing)}" if missing else ""))
    for line in out.superseded:
        print(f"  newer hand-in wins: {line}")
    if out.junk:
        print(f"ignored {out.junk} file(s) of operating-system residue (__MACOSX/, .DS_Store, checkpoints)")
    if out.not_taken or refused:
        sys.stdout.flush()
        print(f"NOT collected: {len(out.not_taken) + len(refused)} file(s) of the download (extracted in "
              f"{_show(extracted)}/):", file=sys.stderr)
        for where, why in out.not_taken:
            print(f"  {where} -- {why}", file=sys.stderr)
        for r in refused:
            print(f"  {r.path} -- refused: {r.reason}", file=sys.stderr)
        print("Nothing above was imported under a guessed id. Students hand in with the handout's command "
              "`python handin.py --id <login>`, which writes one zip naming them; a loose "
              "<student>_<notebook>.ipynb is imported only when exactly one student of the gradebook fits its "
              "name. Ask the students listed for a hand-in zip, then run the command again on the new download.",
              file=sys.stderr)
        if refused:
            print("A refused file was not even extracted (links, special files, paths that leave the folder and "
                  "oversized files are never taken): ask its student for the notebook itself.", file=sys.stderr)
        return 1
    print(f"next: make grade A={assignment}")
    return 0


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    return collect(a.assignment, a.path, a.course, a.force)


if __name__ == "__main__":
    sys.exit(main())
