"""Submissions are data (tools/grading/safe_files.py and its users), on real hostile files, no mocks.

A student's folder may hold symbolic links (to a root-only file, to a folder, to another
student's submission, to ``/dev/zero``, dangling), a FIFO, a device node, a hard link, a file
over the size cap, too many files; an LMS download may hold a zip with ``../evil``, an absolute
path, a symbolic-link entry, a zip bomb or an entry whose declared size lies. In each case the
refused entry is named, nothing outside the destination is written, memory and disk stay
bounded, and the good files beside it are taken. Then the same through the live service
(``CourseGrader.place``, ``watch.scan``/``Watcher.poll``) and ``make collect-zip``.
"""

from __future__ import annotations

import datetime as dt
import os
import resource
import socket
import stat
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tools.grading import safe_files as sf
from tools.grading.safe_files import Limits

ROOT = os.geteuid() == 0
SECRET = b"TOP-SECRET-7f3a9c: the instructor's solutions"
GOOD = b'{"cells": [], "nbformat": 4}'
SMALL = Limits(max_files=20, max_file_bytes=1000, max_total_bytes=2500)


def snapshot(top: Path, but: Path | None = None) -> dict[str, tuple]:
    """Every path under ``top`` (not under ``but``) with its type, size and mtime."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for n in dirnames + filenames:
            p = Path(dirpath) / n
            if but is not None and p.is_relative_to(but):
                continue
            st = p.lstat()
            out[str(p.relative_to(top))] = (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns)
    return out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def tree_bytes(top: Path) -> int:
    return sum(p.lstat().st_size for p in top.rglob("*") if p.is_file() and not p.is_symlink())


def all_bytes(top: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(top.rglob("*")) if p.is_file() and not p.is_symlink())


@pytest.fixture
def secret(tmp_path) -> Path:
    """A root-only file outside the student's folder (the instructor's solutions, the gradebook)."""
    d = tmp_path / "instructor"
    d.mkdir(mode=0o700)
    f = d / "solutions.py"
    f.write_bytes(SECRET)
    f.chmod(0o600)
    return f


@pytest.fixture
def hostile(tmp_path, secret) -> Path:
    """A student's folder with good files next to every kind of bad entry."""
    other = tmp_path / "inbound" / "bob+a1+t+r"
    other.mkdir(parents=True)
    (other / "nb.ipynb").write_bytes(SECRET)
    s = tmp_path / "inbound" / "alice+a1+t+r"
    s.mkdir()
    (s / "nb.ipynb").write_bytes(GOOD)
    (s / "data").mkdir()
    (s / "data" / "points.csv").write_bytes(b"1,2\n3,4\n")
    (s / "to_secret.txt").symlink_to(secret)
    (s / "to_folder").symlink_to(secret.parent)
    (s / "to_bob").symlink_to(other)
    (s / "data" / "bob_nb.ipynb").symlink_to(other / "nb.ipynb")
    (s / "zeros.bin").symlink_to("/dev/zero")
    (s / "dangling.txt").symlink_to(tmp_path / "nowhere")
    (s / "relative_up").symlink_to("../../instructor/solutions.py")
    os.mkfifo(s / "pipe")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(s / "sock"))
    sock.close()
    return s


BAD = {"to_secret.txt": "symbolic link", "to_folder": "symbolic link", "to_bob": "symbolic link",
       "data/bob_nb.ipynb": "symbolic link", "zeros.bin": "symbolic link", "dangling.txt": "symbolic link",
       "relative_up": "symbolic link", "pipe": "named pipe", "sock": "socket"}


# ------------------------------------------------------------------ folders
def test_read_tree_takes_regular_files_only(hostile, tmp_path):
    before = snapshot(tmp_path)
    files, refused = sf.read_tree(hostile)
    assert files == {"nb.ipynb": GOOD, "data/points.csv": b"1,2\n3,4\n"}
    got = {r.path: r.reason for r in refused}
    assert set(got) == set(BAD), got
    for path, word in BAD.items():
        assert word in got[path] and "only regular files are graded" in got[path], (path, got[path])
    assert SECRET not in b"".join(files.values())
    assert snapshot(tmp_path) == before, "reading wrote or changed something"
    assert str(refused[0]) == f"{refused[0].path}: {refused[0].reason}"


def test_copy_tree_copies_no_byte_through_a_link(hostile, tmp_path):
    dst = tmp_path / "state" / "submitted" / "alice" / "a1"
    before = snapshot(tmp_path)
    refused = sf.copy_tree(hostile, dst, skip=("submission_secret.txt",))
    assert {r.path for r in refused} == set(BAD)
    assert sorted(p.relative_to(dst).as_posix() for p in dst.rglob("*") if p.is_file()) == \
        ["data/points.csv", "nb.ipynb"]
    assert not any(p.is_symlink() for p in dst.rglob("*"))
    assert SECRET not in all_bytes(dst)
    assert snapshot(tmp_path, but=tmp_path / "state") == before, "something outside the destination changed"
    assert (dst / "nb.ipynb").read_bytes() == GOOD and stat.S_IMODE((dst / "nb.ipynb").stat().st_mode) == 0o644


def test_the_folder_itself_a_link_is_refused(hostile, tmp_path, secret):
    link = tmp_path / "inbound" / "mallory+a1+t+r"
    link.symlink_to(secret.parent)
    for fn in (lambda: sf.read_tree(link), lambda: sf.copy_tree(link, tmp_path / "out")):
        with pytest.raises(OSError):
            fn()
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.skipif(not ROOT, reason="mknod and hard links to another user's file need root")
def test_device_node_and_hard_link(tmp_path, secret):
    s = tmp_path / "s"
    s.mkdir()
    (s / "nb.ipynb").write_bytes(GOOD)
    os.mknod(s / "zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))  # the /dev/zero device
    os.link(secret, s / "hard.txt")
    files, refused = sf.read_tree(s)
    assert files == {"nb.ipynb": GOOD}
    got = {r.path: r.reason for r in refused}
    assert "device" in got["zero"] and "hard link" in got["hard.txt"], got
    refused = sf.copy_tree(s, tmp_path / "out")
    assert {r.path for r in refused} == {"zero", "hard.txt"} and SECRET not in all_bytes(tmp_path / "out")


def test_caps_on_size_and_count(tmp_path):
    s = tmp_path / "s"
    s.mkdir()
    (s / "a_ok.txt").write_bytes(b"x" * 900)
    with open(s / "b_big.bin", "wb") as f:  # over the per-file cap (sparse: no disk used)
        f.truncate(60 * sf.MB)
    (s / "c_ok.txt").write_bytes(b"y" * 900)
    (s / "d_over_total.txt").write_bytes(b"z" * 900)  # 2700 > 2500 in total
    many = s / "many"
    many.mkdir()
    for i in range(25):
        (many / f"f{i:02d}").write_bytes(b"")
    files, refused = sf.read_tree(s, SMALL)
    got = {r.path: r.reason for r in refused}
    assert set(files) == {"a_ok.txt", "c_ok.txt", *(f"many/f{i:02d}" for i in range(18))}
    assert "larger than 1000 bytes" in got["b_big.bin"]
    assert "exceed 2500 bytes" in got["d_over_total.txt"]
    assert [p for p in got if p.startswith("many/")] == [f"many/f{i:02d}" for i in range(18, 25)]
    assert all("more than 20 files" in got[f"many/f{i:02d}"] for i in range(18, 25))
    # the defaults, as documented
    assert (sf.LIMITS.max_files, sf.LIMITS.max_file_bytes, sf.LIMITS.max_total_bytes) == (200, 50 * sf.MB, 100 * sf.MB)
    files, refused = sf.read_tree(s)
    assert [r.path for r in refused] == ["b_big.bin"] and "larger than 50 MB" in refused[0].reason
    out = tmp_path / "out"
    sf.copy_tree(s, out, SMALL)
    assert not (out / "b_big.bin").exists() and not (out / "d_over_total.txt").exists()
    assert tree_bytes(out) <= SMALL.max_total_bytes


def test_a_file_that_never_ends_is_cut_at_the_cap(tmp_path):
    """A regular file read past its cap (it grows, or lies): at most cap + 1 bytes are read, the
    partial copy is removed. A named pipe fed forever stands in for it here."""
    s = tmp_path / "s"
    s.mkdir()
    (s / "nb.ipynb").write_bytes(GOOD)
    big = s / "grows.bin"
    big.write_bytes(b"0" * 10)
    out = tmp_path / "out"
    b = sf.Budget(SMALL)
    fd = os.open(s, os.O_RDONLY | os.O_DIRECTORY)
    try:
        st = os.stat("grows.bin", dir_fd=fd)
        with open("/dev/zero", "rb") as zero:  # the file, once open, "holds" endless zeros
            out.mkdir()
            dst_fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
            assert not sf._write_file(dst_fd, ["grows.bin"], "grows.bin", b, zero.read, st.st_mtime_ns)
            os.close(dst_fd)
    finally:
        os.close(fd)
    assert "larger than 1000 bytes" in b.refused[0].reason and not any(out.iterdir())


# ---------------------------------------------------------------- archives
def _zip(path: Path, entries: list[tuple[str, bytes, int | None]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if mode is not None:
                info.create_system = 3
                info.external_attr = mode << 16
            z.writestr(info, data)
    return path


def test_zip_slip_absolute_and_symlink_entries(tmp_path, secret):
    dl = tmp_path / "download"
    dl.mkdir()
    z = _zip(dl / "sub.zip", [
        ("alice_nb.ipynb", GOOD, None),
        ("../evil.py", b"pwned", None),
        ("a/../../evil2.py", b"pwned", None),
        (str(tmp_path / "abs_evil.py"), b"pwned", None),
        ("..\\win_evil.py", b"pwned", None),
        ("C:/drive_evil.py", b"pwned", None),
        ("bob_nb.ipynb", str(secret).encode(), stat.S_IFLNK | 0o777),
        ("folder/carol_nb.ipynb", GOOD, stat.S_IFREG | 0o644),
        ("pipe", b"", stat.S_IFIFO | 0o644),
    ])
    before = snapshot(tmp_path)
    dst = tmp_path / "extracted" / "x"
    refused = sf.extract_zip(z, dst)
    got = {r.path: r.reason for r in refused}
    assert set(got) == {"sub.zip/../evil.py", "sub.zip/a/../../evil2.py", f"sub.zip/{tmp_path}/abs_evil.py",
                        "sub.zip/..\\win_evil.py", "sub.zip/C:/drive_evil.py", "sub.zip/bob_nb.ipynb", "sub.zip/pipe"}
    assert "'..'" in got["sub.zip/../evil.py"] and "absolute" in got[f"sub.zip/{tmp_path}/abs_evil.py"]
    assert "symbolic link" in got["sub.zip/bob_nb.ipynb"] and "named pipe" in got["sub.zip/pipe"]
    assert sorted(p.relative_to(dst).as_posix() for p in dst.rglob("*") if p.is_file()) == \
        ["alice_nb.ipynb", "folder/carol_nb.ipynb"]
    assert not any(p.is_symlink() for p in dst.rglob("*"))
    assert snapshot(tmp_path, but=tmp_path / "extracted") == before
    assert not list(tmp_path.rglob("*evil*"))


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> Path:
    """A zip of a 1 GB file of zeros (about 1 MB), written streaming, and a good file."""
    p = tmp_path_factory.mktemp("bomb") / "bomb.zip"
    zeros = bytes(sf.MB)
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("alice_nb.ipynb", GOOD)
        with z.open("bomb.bin", "w", force_zip64=True) as f:
            for _ in range(1024):
                f.write(zeros)
    assert p.stat().st_size < 5 * sf.MB
    return p


def test_zip_bomb(tmp_path, bomb):
    rss = peak_rss_mb()
    dst = tmp_path / "x"
    t0 = time.monotonic()
    refused = sf.extract_zip(bomb, dst)
    assert [(r.path, "larger than 50 MB" in r.reason) for r in refused] == [("bomb.zip/bomb.bin", True)]
    assert (dst / "alice_nb.ipynb").read_bytes() == GOOD and not (dst / "bomb.bin").exists()
    assert time.monotonic() - t0 < 5, "the declared size alone refuses it: nothing to inflate"
    assert peak_rss_mb() - rss < 100
    # a budget over 1 GB per file but 200 MB in total: refused by the total
    refused = sf.extract_zip(bomb, tmp_path / "y", Limits(max_file_bytes=2048 * sf.MB, max_total_bytes=200 * sf.MB))
    assert [r.path for r in refused] == ["bomb.zip/bomb.bin"] and "exceed 200 MB" in refused[0].reason
    assert tree_bytes(tmp_path / "y") <= 200 * sf.MB


def _set_declared_size(path: Path, name: str, size: int) -> None:
    """Make the local header and the central directory of ``name`` declare ``size`` bytes."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        local = z.getinfo(name).header_offset
    assert data[local:local + 4] == b"PK\x03\x04"
    struct.pack_into("<I", data, local + 22, size)
    i = 0
    while (i := data.find(b"PK\x01\x02", i + 1)) >= 0:
        n = struct.unpack_from("<H", data, i + 28)[0]
        if data[i + 46:i + 46 + n] == name.encode():
            struct.pack_into("<I", data, i + 24, size)
    path.write_bytes(bytes(data))


def test_zip_whose_declared_size_lies(tmp_path):
    p = tmp_path / "liar.zip"
    zeros = bytes(sf.MB)
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("liar.bin", "w") as f:
            for _ in range(300):  # 300 MB of zeros, ~300 KB compressed
                f.write(zeros)
        z.writestr("alice_nb.ipynb", GOOD)
    _set_declared_size(p, "liar.bin", 40 * sf.MB)  # under the 50 MB cap: only counting catches it
    assert zipfile.ZipFile(p).getinfo("liar.bin").file_size == 40 * sf.MB
    rss = peak_rss_mb()
    dst = tmp_path / "x"
    refused = sf.extract_zip(p, dst)
    assert [r.path for r in refused] == ["liar.zip/liar.bin"], refused
    assert "damaged" in refused[0].reason or "larger" in refused[0].reason
    assert sorted(x.name for x in dst.iterdir()) == ["alice_nb.ipynb"], "the partial file was left"
    assert peak_rss_mb() - rss < 100
    # the same lie under a small cap: cut at cap + 1 bytes, named as too large
    refused = sf.extract_zip(p, tmp_path / "y", Limits(max_file_bytes=45 * sf.MB, max_total_bytes=45 * sf.MB))
    assert refused and refused[0].path == "liar.zip/liar.bin"
    assert tree_bytes(tmp_path / "y") <= 45 * sf.MB


def test_tar_links_and_slip(tmp_path, secret):
    import io
    import tarfile

    p = tmp_path / "dl.tar.gz"
    with tarfile.open(p, "w:gz") as t:
        for name, kind in [("alice_nb.ipynb", tarfile.REGTYPE), ("../evil.py", tarfile.REGTYPE),
                           ("link", tarfile.SYMTYPE), ("hard", tarfile.LNKTYPE), ("dev", tarfile.CHRTYPE)]:
            ti = tarfile.TarInfo(name)
            ti.type = kind
            data = GOOD if kind == tarfile.REGTYPE else b""
            ti.size = len(data)
            if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                ti.linkname = str(secret)
            t.addfile(ti, io.BytesIO(data))
    refused = sf.extract_archive(p, tmp_path / "x")
    got = {r.path: r.reason for r in refused}
    assert set(got) == {"dl.tar.gz/../evil.py", "dl.tar.gz/link", "dl.tar.gz/hard", "dl.tar.gz/dev"}, got
    assert [x.name for x in (tmp_path / "x").iterdir()] == ["alice_nb.ipynb"]
    assert not (tmp_path / "evil.py").exists()


# ------------------------------------------------------------ the live service
def _row(inbound: str):
    from tools.live_grading.queue import Row

    return Row(id=1, student="alice", assignment="a1", timestamp="t", submitted=0.0, inbound=inbound, noticed=0.0,
               state="grading", reason="", attempts=1, started=None, finished=None)


def test_place_copies_no_byte_of_a_secret(hostile, tmp_path):
    from tools.live_grading.worker import CourseGrader, note_refusals

    (hostile / "submission_secret.txt").write_text("s")
    (hostile / "timestamp.txt").write_text("t")
    g = CourseGrader(tmp_path / "course", tmp_path / "inbound", tmp_path / "state")
    course = tmp_path / "state" / "courses" / "a1"
    course.mkdir(parents=True)
    before = snapshot(tmp_path, but=course)
    refused = g.place(_row(hostile.name), course)
    dest = course / "submitted" / "alice" / "a1"
    assert SECRET not in all_bytes(course), "a byte of the secret reached the grading course"
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == \
        ["data/points.csv", "nb.ipynb", "timestamp.txt"]
    assert {r.path for r in refused} == set(BAD)
    assert snapshot(tmp_path, but=course) == before
    # the student's page shows them: the result's "errors" (Grader's notes), and "refused" for tools
    res = note_refusals({"score": 1.0, "errors": ["x"]}, refused)
    assert res["refused"][0] == {"path": refused[0].path, "reason": refused[0].reason}
    assert any("to_secret.txt" in e and "symbolic link" in e for e in res["errors"]) and "x" in res["errors"]
    # the folder itself a link: an error, nothing copied
    (tmp_path / "inbound" / "alice+a1+u+r").symlink_to(tmp_path / "instructor")
    with pytest.raises(OSError):
        g.place(_row("alice+a1+u+r"), course)
    assert SECRET not in all_bytes(course)


def test_place_does_not_follow_a_link_to_dev_zero(tmp_path):
    from tools.live_grading.worker import CourseGrader

    s = tmp_path / "inbound" / "alice+a1+t+r"
    s.mkdir(parents=True)
    (s / "nb.ipynb").write_bytes(GOOD)
    (s / "zeros.ipynb").symlink_to("/dev/zero")
    course = tmp_path / "course-a1"
    course.mkdir()
    t0 = time.monotonic()
    refused = CourseGrader(tmp_path, tmp_path / "inbound", tmp_path / "state").place(_row(s.name), course)
    assert [r.path for r in refused] == ["zeros.ipynb"] and time.monotonic() - t0 < 5
    assert tree_bytes(course) == len(GOOD)


def test_a_bad_folder_never_stops_the_watcher(tmp_path, caplog):
    from tests.test_live_grading import T0, _submit
    from tools.live_grading.queue import Queue
    from tools.live_grading.watch import Watcher, scan

    inbound = tmp_path / "exchange" / "c" / "inbound"
    # an inbound folder of an older nbgrader (no submission_secret.txt) holding a dangling link
    bad = _submit(inbound, "alice", "a1", T0, complete=False)
    (bad / "timestamp.txt").write_text("2026-11-30 10:00:00.000000 UTC")
    (bad / "gone.ipynb").symlink_to(tmp_path / "nowhere")
    (bad / "loop").symlink_to("loop")
    old = time.time() - 60
    for p in bad.iterdir():
        os.utime(p, (old, old), follow_symlinks=False)
    os.utime(bad, (old, old))
    _submit(inbound, "bob", "a1", T0 + dt.timedelta(minutes=1))
    # a folder that is a link to another student's submission: not a submission
    (inbound / "mallory+a1+2026-11-30 10:05:00.000000 UTC+ff").symlink_to(bad)
    q = Queue(tmp_path / "q.sqlite")
    w = Watcher(q, inbound, limit=lambda a: 0, settle=1.0)
    import logging

    from tools.live_grading import watch

    said: list[str] = []  # the watcher's own log (other tests may change propagation or levels)
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: said.append(record.getMessage())
    level, watch.log.disabled = watch.log.level, False
    watch.log.addHandler(handler)
    watch.log.setLevel(logging.WARNING)
    try:
        rows = w.poll()
    finally:
        watch.log.removeHandler(handler)
        watch.log.setLevel(level)
    assert "bob" in {r.student for r in rows}, "one bad folder stopped everyone's submissions"
    assert "mallory" not in {r.student for r in rows}, "a link in inbound was taken for a submission"
    assert {r.student for r in rows} == {"alice", "bob"}, "the dangling link's folder is queued (place refuses it)"
    assert any("mallory" in m and "link" in m for m in said), said
    assert scan(inbound, set(), now=time.time()) is not None


# ------------------------------------------------------------------ collect-zip
def _course(tmp_path: Path) -> Path:
    """The smallest course collect_zip runs on: assignment a1, one released notebook nb1, a roster."""
    c = tmp_path / "course"
    (c / "source" / "a1").mkdir(parents=True)
    (c / "release" / "a1").mkdir(parents=True)
    (c / "release" / "a1" / "nb1.ipynb").write_bytes(GOOD)
    (c / "nbgrader_config.py").write_text("c = get_config()\n")
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{c / 'gradebook.db'}") as gb:  # the roster makes loose files' ids certain
        for sid in ("alice", "bob", "carol", "dave", "erin"):
            gb.add_student(sid)
    return c


def _collect(course: Path, download: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    return subprocess.run([sys.executable, "-m", "tools.grading.collect_zip", "a1", str(download),
                           "--course", str(course), "--force"], cwd=Path(__file__).resolve().parent.parent,
                          env=env, text=True, capture_output=True, timeout=300)


def test_collect_zip_refuses_hostile_entries(tmp_path, secret):
    course = _course(tmp_path)
    dl = tmp_path / "dl"
    dl.mkdir()
    zeros = bytes(sf.MB)
    with zipfile.ZipFile(dl / "lms.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("alice_nb1.ipynb", GOOD)
        z.writestr("../../evil_nb1.ipynb", b"pwned")
        z.writestr(str(tmp_path / "abs_nb1.ipynb"), b"pwned")
        info = zipfile.ZipInfo("bob_nb1.ipynb")
        info.create_system, info.external_attr = 3, (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, str(secret))
        with z.open("carol_nb1.ipynb", "w") as f:  # 60 MB: over the per-file cap
            for _ in range(60):
                f.write(zeros)
    (dl / "dave_nb1.ipynb").symlink_to(secret)  # a link in a downloaded folder
    (dl / "erin_nb1.ipynb").write_bytes(GOOD)
    before = snapshot(tmp_path, but=course)
    p = _collect(course, dl, tmp_path)
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert SECRET not in all_bytes(course), "the secret was copied into the course"
    assert snapshot(tmp_path, but=course) == before, "something outside the course was written"
    assert not list(tmp_path.rglob("*evil*")) and not (tmp_path / "abs_nb1.ipynb").exists()
    subs = course / "submitted"
    assert sorted(x.name for x in subs.iterdir()) == ["alice", "erin"], out
    assert (subs / "alice" / "a1" / "nb1.ipynb").read_bytes() == GOOD
    listed = [ln.strip() for ln in p.stderr.splitlines() if ln.startswith("  ")]
    for name in ("lms.zip/../../evil_nb1.ipynb", f"lms.zip/{tmp_path}/abs_nb1.ipynb", "lms.zip/bob_nb1.ipynb",
                 "lms.zip/carol_nb1.ipynb", "dave_nb1.ipynb"):
        assert any(ln.startswith(name + " ") for ln in listed), f"{name} not listed:\n{out}"
    assert "NOT collected: 5 file(s)" in p.stderr, out
    assert tree_bytes(course / "downloaded") < 10 * sf.MB


def test_make_grade_reads_a_submission_as_data(tmp_path):
    """``make grade`` (tools.grading.grade) takes a collected submission's files through read_tree: a link
    to a secret is refused and named, its bytes never read; the notebook beside it is taken."""
    from tools.grading import grade

    secret = tmp_path / "secret.txt"
    secret.write_text("THE-INSTRUCTOR-SECRET")
    sub = tmp_path / "submitted" / "mallory" / "a1"
    sub.mkdir(parents=True)
    (sub / "nb.ipynb").write_text("{}")
    (sub / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")
    (sub / "data.txt").symlink_to(secret)
    files, refused = grade._read_tree(sub)
    assert sorted(files) == ["nb.ipynb", "timestamp.txt"]
    assert not any(b"THE-INSTRUCTOR-SECRET" in v for v in files.values())
    assert [r.path for r in refused] == ["data.txt"] and "link" in refused[0].reason
