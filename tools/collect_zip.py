"""Import work handed in outside the exchange (an LMS download) with nbgrader's ``zip_collect``.

    make collect-zip A=<assignment> ZIP=<zip file or folder> [FORCE=1]
    python -m tools.collect_zip ASSIGNMENT PATH [--force] [--course DIR]

Students on laptops upload their notebooks to the course's LMS; the instructor downloads
them as a zip (or a folder) and imports them here. The file naming is nbgrader's
``FileNameCollectorPlugin.named_regexp`` in ``course/nbgrader_config.py``: in any folder of
the archive, ``<student>_<notebook>.ipynb`` (``alice_td2_7_1_two_moments.ipynb``), optionally
after a prefix of the LMS ending in ``_`` (``48213_alice_td2_7_1_two_moments.ipynb``) and
with a resubmission suffix ``-<n>`` before ``.ipynb``.

What it does: copies PATH into ``course/downloaded/<assignment>/archive/`` (nbgrader's
folder for downloads; the previous import's copy is replaced), extracts it into
``course/downloaded/<assignment>/extracted/`` as nbgrader's ``zip_collect`` would (each
``.zip``/``.tar.gz`` into a folder of its name next to it, archives inside archives too), runs
``nbgrader zip_collect --strict`` on the extracted files (copies each matching notebook to
``course/submitted/<student>/<assignment>/<notebook>.ipynb``), writes each imported submission
a ``timestamp.txt`` (the time of the import, so that ``make grade`` grades a re-imported
submission again), and reports:

- every file of the download that was *not* collected (a name that does not follow the
  convention, a notebook of another assignment, a file that is not a notebook, a file refused
  as below), and exits 1 if there is one; operating-system residue (``__MACOSX/``,
  ``.DS_Store``, ``._*``, ``.ipynb_checkpoints/``) is counted but not listed;
- per student, the notebooks of the assignment that are missing (graded 0 if they stay so).

A student who already has a submission of the assignment in ``course/submitted/`` (from the
exchange or an earlier import) stops nbgrader unless ``--force`` (``FORCE=1``), which
replaces it. nbgrader's full log is kept in ``course/downloaded/<assignment>/zip_collect.log``.

The download is students' data, copied and extracted here (``tools.safe_files``), not by
nbgrader: regular files only; a symbolic link (in the folder or as an archive entry), a
device, a FIFO, an entry with an absolute path or a ``..``, an encrypted entry, a file over
50 MB and whatever exceeds :data:`LIMITS` in total (a zip bomb) are refused, never followed
or written, and listed with the reason.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tools import env, safe_files

DOWNLOADED = "downloaded"
#: what one download may hold (a class's notebooks): 20000 files, 50 MB each, 2 GB in total
LIMITS = safe_files.Limits(max_files=20_000, max_file_bytes=50 * safe_files.MB, max_total_bytes=2048 * safe_files.MB,
                           max_entries=50_000)
#: archives inside archives extracted, at most
NESTED = 3
JUNK = re.compile(r"(^|/)(__MACOSX/|\.ipynb_checkpoints/|\.DS_Store$|Thumbs\.db$|desktop\.ini$|\._)")
ARCHIVES = (".zip", ".gz")  # nbgrader's ExtractorPlugin.zip_ext
_COPY = re.compile(r"Copying from: (.*?)\s*$")
_COPY_TO = re.compile(r"Copying to: (.*?)\s*$")

HELP = """\
Import notebooks handed in outside the exchange (a zip or a folder downloaded from an LMS)
into course/submitted/<student>/ASSIGNMENT/, with nbgrader's zip_collect. Files must be named
<student>_<notebook>.ipynb (alice_td2_7_1_two_moments.ipynb), in any folder, optionally after
an LMS prefix ending in "_"; every file not collected is listed (exit status 1). Then grade
with `make grade A=ASSIGNMENT` as usual. Details: `python -m pydoc tools.collect_zip`."""

EXAMPLES = """\
examples:
  make collect-zip A=td2_7_learned_first ZIP=~/Downloads/td2_7_learned_first.zip
  python -m tools.collect_zip cnn_lcn ~/Downloads/cnn_lcn/         # a folder of .ipynb files
  make collect-zip A=cnn_lcn ZIP=~/Downloads/cnn_lcn.zip FORCE=1    # again, replacing earlier imports"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.collect_zip", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("assignment", help="the assignment the notebooks belong to, e.g. td2_7_learned_first")
    p.add_argument("path", type=Path, metavar="PATH",
                   help="the downloaded zip file (or .tar.gz), or a folder of notebooks and zips")
    p.add_argument("--force", action="store_true",
                   help="replace the submissions of students already in course/submitted/ (default: stop)")
    p.add_argument("--course", type=Path, default=env.COURSE, metavar="DIR",
                   help="nbgrader course root (default: course/ of this repository)")
    return p


def _show(path: Path) -> str:
    """``path`` relative to the working directory when under it (course/...), else absolute."""
    return path.relative_to(Path.cwd()).as_posix() if path.is_relative_to(Path.cwd()) else str(path)


def stage(path: Path, archive: Path) -> list[safe_files.Refusal]:
    """Copy the download ``path`` (a file or a folder) into nbgrader's ``archive`` folder, a
    folder as data (:func:`tools.safe_files.copy_tree`); the files not copied."""
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
                _unpack(src, extracted / rel.parent / _stem(name), rel.as_posix(), budget, 0)
    return budget.refused


def collected(log: str, extracted: Path) -> dict[Path, Path]:
    """extracted file -> submitted file, from nbgrader's ``Copying from/to`` log lines."""
    out: dict[Path, Path] = {}
    src = None
    for line in log.splitlines():
        if m := _COPY.search(line):
            src = Path(m.group(1))
        elif (m := _COPY_TO.search(line)) and src is not None:
            if src.is_relative_to(extracted):
                out[src] = Path(m.group(1))
            src = None
    return out


def collect(assignment: str, path: Path, course: Path = env.COURSE, force: bool = False) -> int:
    """Import the download ``path`` of ``assignment`` into ``course``; the exit status."""
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
    # nbgrader finds no archive folder under this name, so it extracts nothing (that was done
    # above, as data) and collects from extracted/.
    cmd = [sys.executable, "-m", "nbgrader", "zip_collect", assignment, "--strict",
           f"--CourseDirectory.root={course}", "--ZipCollectApp.archive_directory=archive.extracted-by-collect_zip",
           *(["--force"] if force else [])]
    p = subprocess.run(cmd, cwd=course, capture_output=True, text=True, env=os.environ.copy())
    log = p.stdout + p.stderr
    (top / "zip_collect.log").write_text(log)
    done = collected(log, extracted)
    students = stamp(done)
    if p.returncode != 0:
        errors = [ln for ln in log.splitlines() if "ERROR" in ln or "CRITICAL" in ln] or log.splitlines()[-20:]
        print(f"nbgrader zip_collect failed (log: {_show(top / 'zip_collect.log')}):\n  " + "\n  ".join(errors),
              file=sys.stderr)
        if "Directory not empty" in log and "submitted" in log:
            print("a student in the download already has a submission of this assignment: "
                  "FORCE=1 (--force) replaces it", file=sys.stderr)
        if refused:
            print("refused, not extracted:\n  " + "\n  ".join(map(str, refused)), file=sys.stderr)
        if "Duplicate submission file" in log:
            last = re.findall(r"Parsing file: (.*?)\s*$", log, re.M)
            print(f"two files of the download give the same student and notebook (the second: "
                  f"{_show(Path(last[-1])) if last else '?'}): keep one of them", file=sys.stderr)
        return 2
    return report(assignment, course, extracted, done, students, released, refused)


def stamp(done: dict[Path, Path]) -> dict[str, list[str]]:
    """Give each imported submission a ``timestamp.txt`` (the time of the import: ``make grade``
    regrades a submission whose timestamp changed); return student -> notebooks imported."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    students: dict[str, list[str]] = {}
    for dest in done.values():
        students.setdefault(dest.parent.parent.name, []).append(dest.stem)
        if not (dest.parent / "timestamp.txt").exists():
            (dest.parent / "timestamp.txt").write_text(now)
    return students


def report(assignment: str, course: Path, extracted: Path, done: dict[Path, Path],
           students: dict[str, list[str]], released: list[str],
           refused: Sequence[safe_files.Refusal] = ()) -> int:
    """Print what was imported and every file of the download that was not (``refused``: not
    even extracted); 1 if there is one."""
    files = sorted(f for f in extracted.rglob("*") if f.is_file())
    rel = {f: f.relative_to(extracted).as_posix() for f in files}
    junk = [f for f in files if f not in done and JUNK.search(rel[f])]
    # Archives inside the download were extracted next to themselves by nbgrader.
    inner = [f for f in files if f not in done and f not in junk and f.suffix in ARCHIVES]
    missed = [f for f in files if f not in done and f not in junk and f not in inner]
    print(f"collected {len(done)} notebook(s) of {len(students)} student(s) into "
          f"{_show(course)}/submitted/<student>/{assignment}/")
    for sid, nbs in sorted(students.items()):
        missing = sorted(set(released) - set(nbs))
        print(f"  {sid:16s} {len(set(nbs))} of {len(released)} notebooks"
              + (f"; missing (graded 0): {', '.join(missing)}" if missing else ""))
    if junk:
        print(f"ignored {len(junk)} file(s) of operating-system residue (__MACOSX/, .DS_Store, checkpoints)")
    if missed or refused:
        sys.stdout.flush()
        print(f"NOT collected: {len(missed) + len(refused)} file(s) of the download (extracted in "
              f"{_show(extracted)}/):", file=sys.stderr)
        for f in missed:
            print(f"  {rel[f]}", file=sys.stderr)
        for r in refused:
            print(f"  {r.path} (refused: {r.reason})", file=sys.stderr)
        print(f"A notebook must be named <student>_<notebook>.ipynb, <notebook> one of: {', '.join(released)} "
              f"(an LMS prefix ending in '_' before it is allowed). Rename these files in the download "
              f"and run the command again with FORCE=1 (--force).", file=sys.stderr)
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
