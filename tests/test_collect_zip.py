"""The hand-in (``tools/build/handin.py``) and its import (``make collect-zip``, ``tools/grading/collect_zip.py``).

Made-up LMS downloads, on the smallest course (assignment ``a1``, notebooks ``nb1`` and ``nb2``
released), imported in-process (no nbgrader, no kernel):

- every id form a course uses (``_``, ``-``, ``.``, digits, the course id ``td-course`` itself)
  reaches ``submitted/<id>/`` intact from hand-in zips the LMS renamed (prefixes ``48213_``,
  ``Submission 3 - ``, suffixes ``-1``, `` (2)``), nested in the LMS's own folders and zips;
  two students with the same surname never collide;
- the newer of two hand-ins of one student wins and is reported; two of the same time with
  different notebooks are both refused; nothing ever says to delete a file;
- loose ``<id>_<notebook>.ipynb`` files (the former convention) are imported only when exactly
  one roster id of the gradebook fits: ``td-course_nb1`` and ``jean_dupont_nb1`` with
  ``dupont`` also on the roster are refused, never guessed;
- hostile manifests (ids with ``/``, ``..``, an absolute path, control characters, too long,
  not text; another assignment; a changed notebook; a path as a notebook name) and hostile
  entries (a link, a zip bomb) are refused with the reason, and nothing is written outside the
  course;
- the hand-in command refuses a bad id, writes a zip ``collect_zip`` reads, and the handout's
  copy (``tools.build.handout.handin_script``) runs with the standard library alone;
- the sentence saying which id to give is the same in the hand-in command, the handout's
  README, the course README and the site.
"""

from __future__ import annotations

import datetime
import inspect
import io
import json
import os
import re
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tools import env
from tools.build import handin, handout
from tools.grading import collect_zip

A = "a1"
NBS = ("nb1", "nb2")
T0 = datetime.datetime(2026, 12, 1, 10, 0, tzinfo=datetime.UTC)
#: every id form: "_", "-", ".", digits, the course id, two students sharing a surname
IDS = ("jean_dupont", "marie_dupont", "jean-pierre.martin", "22004517", "td-course", "a.b_c-9", "dupont")


def nb(owner: str, which: str, version: int = 1) -> bytes:
    """A notebook (JSON) that says whose it is."""
    return json.dumps({"cells": [], "metadata": {"owner": owner, "nb": which, "v": version},
                       "nbformat": 4, "nbformat_minor": 5}).encode()


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """The smallest course collect_zip imports into: a1 with nb1 and nb2 released."""
    c = tmp_path / "course"
    (c / "source" / A).mkdir(parents=True)
    (c / "release" / A).mkdir(parents=True)
    for n in NBS:
        (c / "release" / A / f"{n}.ipynb").write_bytes(nb("release", n))
    return c


def roster(course: Path, ids: tuple[str, ...]) -> None:
    """The gradebook's students (nbgrader's own gradebook, as ``nbgrader db student add`` leaves it)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for sid in ids:
            gb.add_student(sid)


def handin_zip(sid: str, version: int = 1, created: datetime.datetime = T0, assignment: str = A,
               notebooks: tuple[str, ...] = NBS) -> bytes:
    """The bytes of a hand-in zip as the hand-in command writes it."""
    buf = io.BytesIO()
    data = {f"{n}.ipynb": nb(sid, n, version) for n in notebooks}
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(handin.MANIFEST, json.dumps(handin.manifest(sid, assignment, data, created)))
        for name, b in data.items():
            z.writestr(name, b)
    return buf.getvalue()


def raw_zip(entries: dict[str, bytes | str]) -> bytes:
    """A zip of ``entries`` (name -> content), written as given (hostile ones included)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return buf.getvalue()


def run(course: Path, download: Path, capsys, force: bool = False) -> tuple[int, str, str]:
    """``collect_zip.collect`` on ``download``: (status, stdout, stderr)."""
    status = collect_zip.collect(A, download, course, force=force)
    out = capsys.readouterr()
    return status, out.out, out.err


def listed(err: str) -> dict[str, str]:
    """The files the import lists as not collected: path -> reason."""
    rows = {}
    for ln in err.splitlines():
        if ln.startswith("  ") and " -- " in ln:
            where, why = ln[2:].split(" -- ", 1)
            rows[where] = why
    return rows


def submitted(course: Path) -> dict[str, dict[str, bytes]]:
    """student -> notebook -> bytes, of course/submitted/*/a1/."""
    out: dict[str, dict[str, bytes]] = {}
    for d in sorted((course / "submitted").glob(f"*/{A}")) if (course / "submitted").exists() else []:
        out[d.parent.name] = {p.stem: p.read_bytes() for p in d.glob("*.ipynb")}
    return out


def no_deletion_advice(text: str) -> None:
    for words in ("delete", "remove", "keep one", "keep only"):
        assert words not in text.lower(), f"the import suggests to {words!r}:\n{text}"


# ---------------------------------------------------------------------------- the hand-in
def test_every_id_form_reaches_its_own_folder(course: Path, tmp_path: Path, capsys) -> None:
    """An LMS download with each id form, renamed and nested by the LMS: each hand-in lands in
    submitted/<its manifest's id>/, byte for byte, with a timestamp; nothing else is created."""
    inner = raw_zip({f"Submission 3 - {A}__handin (2).zip": handin_zip("jean-pierre.martin"),
                     f"a.b_c-9/{A}__handin-1.zip": handin_zip("a.b_c-9")})
    lms = raw_zip({
        f"Jean Dupont_48213_assignsubmission_file_/48213_{A}__handin.zip": handin_zip("jean_dupont"),
        f"Marie Dupont_48214_assignsubmission_file_/48214_{A}__handin.zip": handin_zip("marie_dupont"),
        f"48215_{A}__handin-1.zip": handin_zip("22004517"),
        "handin.zip": handin_zip("td-course"),
        "dupont/whatever the LMS calls it.zip": handin_zip("dupont"),
        "group B.zip": inner,
        f"__MACOSX/._48213_{A}__handin.zip": b"\0\5\26\7",
    })
    (tmp_path / "dl.zip").write_bytes(lms)
    status, out, err = run(course, tmp_path / "dl.zip", capsys)
    assert status == 0, out + err
    got = submitted(course)
    assert sorted(got) == sorted(IDS), out + err
    for sid in IDS:
        assert got[sid] == {n: nb(sid, n) for n in NBS}, f"{sid}'s notebooks are not its own"
        stamp = (course / "submitted" / sid / A / "timestamp.txt").read_text()
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ UTC", stamp)
    assert f"collected {2 * len(IDS)} notebook(s) of {len(IDS)} student(s)" in out
    assert "ignored 1 file(s) of operating-system residue" in out


def test_the_newer_handin_wins_and_is_reported(course: Path, tmp_path: Path, capsys) -> None:
    """Two hand-ins of one student (a resubmission): the newer manifest wins whatever the order
    or the names; the older is reported, stays in the download's copy, and nothing says to delete."""
    dl = tmp_path / "dl"
    (dl / "attempt 2").mkdir(parents=True)
    (dl / f"{A}__handin.zip").write_bytes(handin_zip("jean_dupont", 2, T0 + datetime.timedelta(hours=1)))
    (dl / "attempt 2" / f"{A}__handin (1).zip").write_bytes(handin_zip("jean_dupont", 1, T0))
    status, out, err = run(course, dl, capsys)
    assert status == 0, out + err
    assert submitted(course) == {"jean_dupont": {n: nb("jean_dupont", n, 2) for n in NBS}}
    assert re.search(r"newer hand-in wins: jean_dupont: attempt 2/a1__handin \(1\)/ .* replaced by the newer "
                     r"a1__handin/", out), out
    assert (course / "downloaded" / A / "archive" / "attempt 2" / f"{A}__handin (1).zip").is_file()
    no_deletion_advice(out + err)


def test_two_handins_of_the_same_time_are_both_refused(course: Path, tmp_path: Path, capsys) -> None:
    dl = tmp_path / "dl"
    dl.mkdir()
    (dl / "one.zip").write_bytes(handin_zip("jean_dupont", 1))
    (dl / "two.zip").write_bytes(handin_zip("jean_dupont", 2))
    (dl / "same.zip").write_bytes(handin_zip("marie_dupont", 1))
    (dl / "same-1.zip").write_bytes(handin_zip("marie_dupont", 1))  # the LMS gave the same file twice
    status, out, err = run(course, dl, capsys)
    assert status == 1
    assert sorted(submitted(course)) == ["marie_dupont"], out + err
    rows = listed(err)
    assert "same time" in rows["one/"] and "same time" in rows["two/"], err
    no_deletion_advice(out + err)


def test_an_earlier_submission_is_kept_unless_forced(course: Path, tmp_path: Path, capsys) -> None:
    dl = tmp_path / "dl"
    dl.mkdir()
    (dl / "h.zip").write_bytes(handin_zip("jean_dupont", 2))
    old = course / "submitted" / "jean_dupont" / A
    old.mkdir(parents=True)
    (old / "nb1.ipynb").write_bytes(b"from the exchange")
    status, out, err = run(course, dl, capsys)
    assert status == 1 and (old / "nb1.ipynb").read_bytes() == b"from the exchange"
    assert "FORCE=1" in listed(err)["hand-in h/ (made 2026-12-01 10:00:00 UTC)"], err
    status, out, err = run(course, dl, capsys, force=True)
    assert status == 0, out + err
    assert submitted(course) == {"jean_dupont": {n: nb("jean_dupont", n, 2) for n in NBS}}


def test_a_missing_notebook_is_reported(course: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "h.zip").write_bytes(handin_zip("22004517", notebooks=("nb2",)))
    status, out, err = run(course, tmp_path / "h.zip", capsys)
    assert status == 0, out + err
    assert re.search(r"22004517 +1 of 2 notebooks, from hand-in h/ .*; missing \(graded 0\): nb1", out), out


# ------------------------------------------------------------------- hostile hand-ins
HOSTILE_IDS = {
    "slash": "jean/dupont",
    "dotdot": "..",
    "dotdot-inside": "a..b",
    "traversal": "../../evil",
    "absolute": "/etc/evil",
    "newline": "alice\nbob",
    "nul": "alice\x00",
    "escape": "alice\x1b[2J",
    "too-long": "a" * (handin.MAX_ID + 1),
    "empty": "",
    "not-text": 5,
    "space": "jean dupont",
    "leading-dot": ".hidden",
    "unicode": "jéan",
}


@pytest.mark.parametrize("sid", list(HOSTILE_IDS.values()), ids=list(HOSTILE_IDS))
def test_check_id_refuses(sid: object) -> None:
    assert handin.check_id(sid), f"{sid!r} was accepted"


@pytest.mark.parametrize("sid", IDS)
def test_check_id_accepts_the_course_ids(sid: str) -> None:
    assert handin.check_id(sid) is None


def _manifest_zip(manifest: object, files: dict[str, bytes] | None = None) -> bytes:
    files = {f"{n}.ipynb": nb("x", n) for n in NBS} if files is None else files
    return raw_zip({handin.MANIFEST: json.dumps(manifest) if not isinstance(manifest, bytes) else manifest, **files})


def _good_manifest(**change: object) -> dict:
    m = handin.manifest("jean_dupont", A, {f"{n}.ipynb": nb("x", n) for n in NBS}, T0)
    m.update(change)
    return m


def test_hostile_manifests_are_refused_with_the_reason(course: Path, tmp_path: Path, capsys) -> None:
    """Each bad manifest is refused, with its reason; nothing is written outside the course,
    no student folder is made for any of them; the one good hand-in next to them is imported."""
    dl = tmp_path / "dl"
    dl.mkdir()
    cases: dict[str, tuple[bytes, str]] = {
        f"id-{k}": (_manifest_zip(_good_manifest(student_id=v)), "is refused") for k, v in HOSTILE_IDS.items()}
    cases |= {
        "other-assignment": (_manifest_zip(_good_manifest(assignment="cnn_lcn")), "not of a1"),
        "changed-notebook": (_manifest_zip(_good_manifest(), {"nb1.ipynb": b"edited", "nb2.ipynb": nb("x", "nb2")}),
                             "hash differs"),
        "missing-notebook": (_manifest_zip(_good_manifest(), {"nb2.ipynb": nb("x", "nb2")}), "does not hold"),
        "path-as-name": (_manifest_zip(_good_manifest(notebooks={"../../nb1.ipynb": handin.sha256(b"x")}),
                                       {"nb1.ipynb": b"x"}), "not a notebook of a1"),
        "unknown-notebook": (_manifest_zip(_good_manifest(notebooks={"nb9.ipynb": handin.sha256(b"x")}),
                                           {"nb9.ipynb": b"x"}), "not a notebook of a1"),
        "not-json": (_manifest_zip(b"{not json"), "not JSON"),
        "other-format": (_manifest_zip(_good_manifest(format=2)), "not of format 1"),
        "no-time": (_manifest_zip(_good_manifest(created="yesterday")), "no valid creation time"),
        "naive-time": (_manifest_zip(_good_manifest(created="2026-12-01T10:00:00")), "no valid creation time"),
        "huge-manifest": (_manifest_zip(json.dumps({"pad": "x" * 100_000}).encode()), "over 64 kB"),
        "a-list": (_manifest_zip([1, 2]), "not of format 1"),
    }
    for name, (data, _) in cases.items():
        (dl / f"{name}.zip").write_bytes(data)
    (dl / "good.zip").write_bytes(handin_zip("marie_dupont"))
    outside = sorted(p for p in tmp_path.rglob("*") if not p.is_relative_to(course))
    status, out, err = run(course, dl, capsys)
    assert status == 1
    assert submitted(course) == {"marie_dupont": {n: nb("marie_dupont", n) for n in NBS}}, out + err
    assert sorted(p.name for p in (course / "submitted").iterdir()) == ["marie_dupont"]
    rows = listed(err)
    for name, (_, why) in cases.items():
        assert f"{name}/" in rows, f"{name} not listed:\n{err}"
        assert rows[f"{name}/"].startswith("hand-in refused: ") and why in rows[f"{name}/"], (name, rows[f"{name}/"])
    assert sorted(p for p in tmp_path.rglob("*") if not p.is_relative_to(course)) == outside
    assert not list(tmp_path.rglob("evil*"))
    for ln in err.splitlines():  # a control character of an id is shown escaped, never printed
        assert "\x1b" not in ln and "\x00" not in ln
    no_deletion_advice(out + err)


def test_links_and_bombs_in_a_handin_are_refused(course: Path, tmp_path: Path, capsys) -> None:
    """A hand-in zip whose notebook is a symbolic link entry (to a secret), or whose notebook is
    a zip bomb: the entry is refused by safe_files, so the hand-in lacks it and is refused."""
    secret = tmp_path / "secret.txt"
    secret.write_text("THE-INSTRUCTOR-SECRET")
    link = io.BytesIO()
    with zipfile.ZipFile(link, "w") as z:
        z.writestr(handin.MANIFEST, json.dumps(_good_manifest(notebooks={"nb1.ipynb": handin.sha256(b"x")})))
        info = zipfile.ZipInfo("nb1.ipynb")
        info.create_system, info.external_attr = 3, (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, str(secret))
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(handin.MANIFEST, json.dumps(_good_manifest(notebooks={"nb1.ipynb": handin.sha256(b"x")})))
        with z.open("nb1.ipynb", "w") as f:
            for _ in range(60):  # 60 MB of zeros: over the 50 MB cap of a file
                f.write(bytes(1 << 20))
    dl = tmp_path / "dl"
    dl.mkdir()
    (dl / "link.zip").write_bytes(link.getvalue())
    (dl / "bomb.zip").write_bytes(bomb.getvalue())
    status, out, err = run(course, dl, capsys)
    assert status == 1
    assert submitted(course) == {}
    rows = listed(err)
    assert "link" in rows["link.zip/nb1.ipynb"] and "does not hold" in rows["link/"], err
    assert "50 MB" in rows["bomb.zip/nb1.ipynb"] and "does not hold" in rows["bomb/"], err
    assert not any(b"THE-INSTRUCTOR-SECRET" in p.read_bytes() for p in course.rglob("*") if p.is_file())


# ---------------------------------------------------------------- loose files (legacy)
@pytest.mark.parametrize(("name", "ids", "want"), [
    ("jean_dupont_nb1.ipynb", ("jean_dupont", "marie_dupont"), ("jean_dupont", "nb1")),
    ("marie_dupont_nb1.ipynb", ("jean_dupont", "marie_dupont"), ("marie_dupont", "nb1")),
    ("48213_jean_dupont_nb1-1.ipynb", ("jean_dupont",), ("jean_dupont", "nb1")),
    ("Submission 3 - 22004517_nb2 (2).ipynb", ("22004517",), ("22004517", "nb2")),
    ("jean-pierre.martin_nb2.ipynb", ("jean-pierre.martin", "martin"), None),  # "martin" fits too
    ("jean_dupont_nb1.ipynb", ("jean_dupont", "dupont"), None),    # two roster ids fit: never guess
    ("td-course_nb1.ipynb", ("alice",), None),                     # the course id is no student
    ("jean_dupont_nb1.ipynb", (), None),                           # no roster: nothing is certain
    ("nb1.ipynb", ("nb1",), None),                                 # no id at all
    ("jean_dupont-nb1.ipynb", ("jean_dupont",), None),             # not <id>_<notebook>
    ("jean_dupont_notes.txt", ("jean_dupont",), None),
])
def test_legacy_id_is_certain_or_refused(name: str, ids: tuple[str, ...], want: tuple[str, str] | None) -> None:
    got = collect_zip.legacy_id(name, NBS, ids)
    if want is None:
        assert isinstance(got, str) and got, f"{name} with roster {ids} was read as {got}"
    else:
        assert got == want


def test_loose_files_only_with_a_certain_id(course: Path, tmp_path: Path, capsys) -> None:
    """Loose notebooks next to hand-in zips: imported when exactly one roster id fits, refused
    (listed with the reason) otherwise; a student with a hand-in gets the zip, two loose copies
    of one notebook are both refused; nothing says to delete a file."""
    roster(course, ("jean_dupont", "marie_dupont", "22004517", "bob"))
    dl = tmp_path / "dl"
    (dl / "Jean Dupont_1_assignsubmission_file_").mkdir(parents=True)
    (dl / "Jean Dupont_1_assignsubmission_file_" / "1_jean_dupont_nb1.ipynb").write_bytes(nb("jean_dupont", "nb1"))
    (dl / "marie_dupont_nb1-1.ipynb").write_bytes(nb("marie_dupont", "nb1"))
    (dl / "td-course_nb1.ipynb").write_bytes(nb("someone", "nb1"))
    (dl / "22004517_nb2.ipynb").write_bytes(nb("loose", "nb2"))
    (dl / "h.zip").write_bytes(handin_zip("22004517"))
    (dl / "bob_nb1.ipynb").write_bytes(nb("bob", "nb1", 1))
    (dl / "bob_nb1 (1).ipynb").write_bytes(nb("bob", "nb1", 2))
    (dl / "notes.txt").write_text("hello")
    status, out, err = run(course, dl, capsys)
    assert status == 1
    assert submitted(course) == {"jean_dupont": {"nb1": nb("jean_dupont", "nb1")},
                                 "marie_dupont": {"nb1": nb("marie_dupont", "nb1")},
                                 "22004517": {n: nb("22004517", n) for n in NBS}}, out + err
    rows = listed(err)
    assert "no student of the gradebook's roster fits" in rows["td-course_nb1.ipynb"]
    assert "who handed in a zip" in rows["22004517_nb2.ipynb"]
    assert "latest cannot be told" in rows["bob_nb1.ipynb"] and "latest cannot be told" in rows["bob_nb1 (1).ipynb"]
    assert rows["notes.txt"] == "not a notebook"
    assert len(rows) == 5, err
    no_deletion_advice(out + err)


# ------------------------------------------------------------------ the hand-in command
def test_handin_command_refuses_bad_ids(tmp_path: Path, capsys) -> None:
    (tmp_path / "notebooks" / A).mkdir(parents=True)
    (tmp_path / "notebooks" / A / "nb1.ipynb").write_bytes(nb("me", "nb1"))
    for bad in ("", "../x", "jean dupont", "a/b", "x" * 65):
        status = handin.main(["--id", bad, "--notebooks", str(tmp_path / "notebooks"), "--out", str(tmp_path)])
        err = capsys.readouterr().err
        assert status == 2 and "refused" in err and handin.WHICH_ID in err, (bad, err)
    assert not list(tmp_path.glob("*.zip"))


def test_handin_command_writes_what_collect_zip_imports(course: Path, tmp_path: Path, capsys) -> None:
    """The command's zip, renamed as an LMS would, imports under the id typed, byte for byte; a
    corrupt notebook stops the command with a message and writes nothing."""
    nbs = tmp_path / "handout" / "notebooks"
    (nbs / A).mkdir(parents=True)
    for n in NBS:
        (nbs / A / f"{n}.ipynb").write_bytes(nb("jean_dupont", n, 3))
    assert handin.main(["--id", "jean_dupont", "--notebooks", str(nbs), "--out", str(tmp_path)]) == 0
    said = capsys.readouterr().out
    made = tmp_path / f"{A}{handin.SUFFIX}"
    assert f"wrote {made}" in said and "Upload this one file" in said
    with zipfile.ZipFile(made) as z:
        m = json.loads(z.read(handin.MANIFEST))
        assert sorted(z.namelist()) == sorted([handin.MANIFEST, "nb1.ipynb", "nb2.ipynb"])
    assert (m["format"], m["student_id"], m["assignment"]) == (1, "jean_dupont", A)
    assert m["notebooks"] == {f"{n}.ipynb": handin.sha256(nb("jean_dupont", n, 3)) for n in NBS}
    assert collect_zip._created(m["created"]) is not None
    dl = tmp_path / "dl"
    dl.mkdir()
    made.rename(dl / f"48213_Submission 3 - {A}__handin-2.zip")
    status, out, err = run(course, dl, capsys)
    assert status == 0, out + err
    assert submitted(course) == {"jean_dupont": {n: nb("jean_dupont", n, 3) for n in NBS}}
    (nbs / A / "nb2.ipynb").write_text('{"cells": [')  # saved half-way
    assert handin.main(["--id", "jean_dupont", "--notebooks", str(nbs), "--out", str(tmp_path)]) == 1
    assert "not a readable notebook" in capsys.readouterr().err
    assert not made.exists()


def test_the_handout_copy_runs_with_the_standard_library(tmp_path: Path) -> None:
    """handout.handin_script fills in the assignments; the script runs isolated (``python -I``,
    no repository on the path), hands in only the handout's notebooks, and leaks() accepts it
    while refusing any other .py file or a changed handin.py."""
    dist = tmp_path / "dist"
    (dist / "notebooks" / A).mkdir(parents=True)
    for n in NBS:
        (dist / "notebooks" / A / f"{n}.ipynb").write_bytes(nb("me", n))
    (dist / "notebooks" / A / "Untitled.ipynb").write_bytes(nb("me", "scratch"))
    script = handout.handin_script(handout.handout_assignments(dist))
    assert "ASSIGNMENTS: dict[str, list[str]] = {\"a1\": [\"Untitled.ipynb\"" in script
    (dist / "notebooks" / A / "Untitled.ipynb").unlink()
    script = handout.handin_script(handout.handout_assignments(dist))
    (dist / handout.HANDIN).write_text(script)
    (dist / "notebooks" / A / "Untitled.ipynb").write_bytes(nb("me", "scratch"))  # not the handout's: left out
    (dist / "notebooks" / A / "nb2.ipynb").unlink()  # deleted by the student: handed in without it, said
    p = subprocess.run([sys.executable, "-I", handout.HANDIN, "--id", "a.b_c-9"], cwd=dist, capture_output=True,
                       text=True, timeout=60, env={"PATH": os.environ.get("PATH", "")})
    assert p.returncode == 0, p.stdout + p.stderr
    assert "MISSING" in p.stdout and "nb2.ipynb" in p.stdout, p.stdout
    with zipfile.ZipFile(dist / f"{A}{handin.SUFFIX}") as z:
        assert sorted(z.namelist()) == sorted([handin.MANIFEST, "nb1.ipynb"])
        assert json.loads(z.read(handin.MANIFEST))["student_id"] == "a.b_c-9"
    (dist / "notebooks" / A / "nb2.ipynb").write_bytes(nb("me", "nb2"))
    (dist / "notebooks" / A / "Untitled.ipynb").unlink()
    (dist / f"{A}{handin.SUFFIX}").unlink()
    assert handout.source_files(dist) == []
    (dist / handout.HANDIN).write_text(script + "\nprint('changed')\n")
    (dist / "other.py").write_text("")
    assert handout.source_files(dist) == ["source file in the handout: handin.py",
                                          "source file in the handout: other.py"]
    assert "source_files(dist)" in inspect.getsource(handout.leaks), "leaks() no longer uses source_files()"


# ------------------------------------------------------------------- the same words
def _flat(text: str) -> str:
    return " ".join(text.split())


def test_which_id_is_said_in_the_same_words_everywhere() -> None:
    """The hand-in command, the handout's README, the course README and the site name the id to
    give (the LMS login) in one sentence, with examples; no one says "course id" any more."""
    readme_template = handout.readme("w.whl", [A])
    texts = {"the hand-in command's help": handin.HELP, "the handout's README": readme_template,
             "README.md": (env.REPO / "README.md").read_text(),
             "site/index.md": (env.REPO / "site" / "index.md").read_text()}
    for where, text in texts.items():
        assert _flat(handin.WHICH_ID) in _flat(text), f"{where} does not say which id, in the same words"
        assert "course id>" not in text, f"{where} still asks for the <course id>"
    assert "handin.py --id jean_dupont" in readme_template
    assert "nbgrader zip_collect" not in readme_template
