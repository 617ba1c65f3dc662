"""Students' files as data: regular files only, no link ever followed, every size capped.

A student writes their submission folder (and the archives an LMS hands in); the grading
tools read it as root. Everything here takes such files **as data**:

- only *regular files* are taken. A symbolic link (to a file, to a folder, dangling), a device,
  a named pipe (FIFO), a socket or a hard link to another file is refused, never opened: no
  link is followed, not even one swapped in between the check and the open (each folder and
  file is opened relative to its parent's file descriptor with ``O_NOFOLLOW``, a file also
  with ``O_NONBLOCK`` so that a FIFO cannot block, and checked again with ``fstat``);
- nothing is written outside the destination: names come from the folder's own entries or
  from an archive's entries with no absolute path and no ``..``;
- sizes are capped (:class:`Limits`): the number of files, each file's size and the total size.
  At most *cap* + 1 bytes of a file are read, so a file that never ends (``/dev/zero``) or an
  archive that lies about its sizes cannot exhaust memory or disk.

Each file not taken is a :class:`Refusal`: its path relative to the folder (or
``<archive>/<entry>``) and the reason in words a student understands. The functions:

- :func:`read_tree` -- a folder's files as ``{relative path: bytes}``, and the refusals;
- :func:`copy_tree` -- copy a folder's files to a new folder; the refusals;
- :func:`extract_zip`, :func:`extract_tar`, :func:`extract_archive` -- an archive's regular
  files into a folder; the refusals;
- :func:`walk` -- every entry of a folder with its ``lstat`` (nothing followed, bounded): when a
  folder last changed.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

MB = 1024 * 1024
CHUNK = 1 << 16
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Limits:
    """Caps on what is taken from one folder or archive.

    Parameters
    ----------
    max_files : int
        Regular files taken (default 200); the next ones are refused.
    max_file_bytes : int
        Size of one file (default 50 MB).
    max_total_bytes : int
        Size of all files taken together (default 100 MB).
    max_entries : int
        Entries looked at, whatever they are (default 2000): a folder of a million entries is
        not walked to its end; the rest is refused as one.
    max_depth : int
        Folders nested in one another (default 16).
    hard_links : bool
        Take a regular file that has other names too (``st_nlink > 1``: it may be another
        user's file linked into the folder). Default False: refused.
    """

    max_files: int = 200
    max_file_bytes: int = 50 * MB
    max_total_bytes: int = 100 * MB
    max_entries: int = 2000
    max_depth: int = 16
    hard_links: bool = False


#: the defaults: 200 files, 50 MB each, 100 MB in total
LIMITS = Limits()


@dataclass(frozen=True)
class Refusal:
    """A file (or folder entry, or archive entry) that was not taken.

    Parameters
    ----------
    path : str
        Its path relative to the folder, ``/``-separated; in an archive ``<archive>/<entry>``
        with the entry's name as the archive spells it.
    reason : str
        Why, in words for a student: ``"a symbolic link: only regular files are graded"``.
    """

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"

    def as_dict(self) -> dict[str, str]:
        """``{"path", "reason"}`` (JSON, a result record)."""
        return {"path": self.path, "reason": self.reason}


@dataclass
class Budget:
    """What is left of :class:`Limits` while files are taken (shared by several calls, e.g. the
    archives of one download)."""

    limits: Limits = LIMITS
    files: int = 0
    bytes: int = 0
    entries: int = 0
    refused: list[Refusal] = field(default_factory=list)

    @property
    def bytes_left(self) -> int:
        return max(0, self.limits.max_total_bytes - self.bytes)


def _size(n: int) -> str:
    return f"{n / MB:g} MB" if n >= MB else f"{n} bytes"


def _kind(mode: int) -> str | None:
    """Why an entry of this mode is refused (None: a regular file or a folder)."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link: only regular files are graded"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file: only regular files are graded"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO): only regular files are graded"
    if stat.S_ISSOCK(mode):
        return "a socket: only regular files are graded"
    return "not a regular file: only regular files are graded"


HARD_LINK = "a hard link (the same file has another name elsewhere): only the folder's own regular files are graded"


def _too_big(limits: Limits) -> str:
    return f"larger than {_size(limits.max_file_bytes)}: a file may hold at most {_size(limits.max_file_bytes)}"


def _over_total(limits: Limits) -> str:
    return f"the files together exceed {_size(limits.max_total_bytes)}: this one and the next were not taken"


def _declared_over(budget, lim, path: str, size: int) -> bool:
    """Refuse (into ``budget``) an archive entry whose declared size or the file count is over the
    caps; whether it was refused. The bytes are counted again while extracting: sizes can lie."""
    why = (_too_many(lim) if budget.files >= lim.max_files else _too_big(lim) if size > lim.max_file_bytes
           else _over_total(lim) if size > budget.bytes_left else None)
    if why is not None:
        budget.refused.append(Refusal(path, why))
    return why is not None


def _too_many(limits: Limits) -> str:
    return f"more than {limits.max_files} files: only the first {limits.max_files} are taken"


def _skipped(name: str, skip: Iterable[str]) -> bool:
    return any(fnmatch.fnmatch(name, pat) for pat in skip)


class _Stop(Exception):
    """The entry budget is spent: the walk stops."""


def _walk_fd(top: Path, budget: Budget, skip: Iterable[str],
             on_file: Callable[[int, str, str, os.stat_result], None]) -> None:
    """Call ``on_file(parent fd, name, relative path, lstat)`` for each regular file under ``top``
    (sorted, depth first); refuse everything else into ``budget.refused``."""
    lim = budget.limits
    skip = tuple(skip)

    def visit(fd: int, rel: str, depth: int) -> None:
        with os.scandir(fd) as it:
            names = sorted(e.name for e in it)
        for name in names:
            path = f"{rel}{name}"
            if _skipped(name, skip):
                continue
            budget.entries += 1
            if budget.entries > lim.max_entries:
                budget.refused.append(Refusal(path, f"more than {lim.max_entries} entries: this one and the "
                                                    f"rest were not looked at"))
                raise _Stop
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError as e:
                budget.refused.append(Refusal(path, f"could not be read ({e.strerror})"))
                continue
            why = _kind(st.st_mode)
            if why:
                budget.refused.append(Refusal(path, why))
            elif stat.S_ISDIR(st.st_mode):
                if depth >= lim.max_depth:
                    budget.refused.append(Refusal(path + "/", f"folders nested more than {lim.max_depth} deep: "
                                                              f"not looked at"))
                    continue
                try:
                    sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError as e:  # swapped for a link since the lstat (ELOOP), or unreadable
                    why = _kind(stat.S_IFLNK) if e.errno in (errno.ELOOP, errno.ENOTDIR) else None
                    budget.refused.append(Refusal(path + "/", why or f"could not be read ({e.strerror})"))
                    continue
                try:
                    visit(sub, path + "/", depth + 1)
                finally:
                    os.close(sub)
            elif st.st_nlink > 1 and not lim.hard_links:
                budget.refused.append(Refusal(path, HARD_LINK))
            else:
                on_file(fd, name, path, st)

    fd = os.open(top, _DIR_FLAGS)  # OSError if top is a link (ELOOP), not a folder or missing
    try:
        visit(fd, "", 0)
    except _Stop:
        pass
    finally:
        os.close(fd)


def _open_regular(dir_fd: int, name: str, path: str, st: os.stat_result, budget: Budget) -> int | None:
    """An fd on the regular file ``name`` (the one ``st`` describes), or None (refused)."""
    lim = budget.limits
    if budget.files >= lim.max_files:
        budget.refused.append(Refusal(path, _too_many(lim)))
        return None
    if st.st_size > lim.max_file_bytes:
        budget.refused.append(Refusal(path, _too_big(lim)))
        return None
    if st.st_size > budget.bytes_left:
        budget.refused.append(Refusal(path, _over_total(lim)))
        return None
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except OSError as e:
        why = _kind(stat.S_IFLNK) if e.errno == errno.ELOOP else None
        budget.refused.append(Refusal(path, why or f"could not be read ({e.strerror})"))
        return None
    now = os.fstat(fd)
    why = _kind(now.st_mode) or ("changed while it was read" if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino)
                                 else None)
    if why:
        os.close(fd)
        budget.refused.append(Refusal(path, why))
        return None
    return fd


def _pump(read: Callable[[int], bytes], write: Callable[[bytes], object], path: str, budget: Budget) -> bool:
    """Copy at most the caps' bytes from ``read`` to ``write``; False (refused) past a cap."""
    lim = budget.limits
    cap = min(lim.max_file_bytes, budget.bytes_left)
    n = 0
    while True:
        chunk = read(min(CHUNK, cap + 1 - n))
        if not chunk:
            break
        n += len(chunk)
        if n > cap:
            budget.refused.append(Refusal(path, _too_big(lim) if cap == lim.max_file_bytes else _over_total(lim)))
            return False
        write(chunk)
    budget.files += 1
    budget.bytes += n
    return True


def read_tree(folder: str | os.PathLike, limits: Limits = LIMITS,
              skip: Iterable[str] = ()) -> tuple[dict[str, bytes], list[Refusal]]:
    """The regular files of ``folder``, read as data.

    Parameters
    ----------
    folder : path
        A folder (itself not a symbolic link).
    limits : Limits
        The caps (default :data:`LIMITS`: 200 files, 50 MB each, 100 MB in total).
    skip : iterable of str
        Name patterns (``fnmatch``, as ``shutil.ignore_patterns``) left out silently, at any
        depth: ``(".ipynb_checkpoints", "submission_secret.txt")``.

    Returns
    -------
    files : dict[str, bytes]
        Relative ``/``-separated path -> content, for each file taken.
    refused : list[Refusal]
        Every entry not taken, and why.

    Raises
    ------
    OSError
        ``folder`` is missing, not a folder, or a symbolic link.
    """
    budget = Budget(limits)
    files: dict[str, bytes] = {}

    def take(dir_fd: int, name: str, path: str, st: os.stat_result) -> None:
        fd = _open_regular(dir_fd, name, path, st, budget)
        if fd is None:
            return
        chunks: list[bytes] = []
        try:
            if _pump(lambda k: os.read(fd, k), chunks.append, path, budget):
                files[path] = b"".join(chunks)
        except OSError as e:
            budget.refused.append(Refusal(path, f"could not be read ({e.strerror})"))
        finally:
            os.close(fd)

    _walk_fd(Path(folder), budget, skip, take)
    return files, budget.refused


def _makedirs(root_fd: int, parts: list[str]) -> int:
    """An fd on ``root/parts...`` (made as needed; no link followed). The caller closes it."""
    fd = os.dup(root_fd)
    try:
        for p in parts:
            try:
                os.mkdir(p, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            sub = os.open(p, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = sub
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_file(dst_fd: int, parts: list[str], path: str, budget: Budget, read: Callable[[int], bytes],
                mtime_ns: int | None = None) -> bool:
    """Write ``dst/parts`` from ``read`` within the caps; True if taken. A refused file leaves nothing."""
    try:
        dir_fd = _makedirs(dst_fd, parts[:-1])
    except OSError:
        budget.refused.append(Refusal(path, "clashes with another file of the same name"))
        return False
    try:
        try:
            out = os.open(parts[-1], _WRITE_FLAGS, 0o644, dir_fd=dir_fd)
        except FileExistsError:
            budget.refused.append(Refusal(path, "appears twice: only the first one is taken"))
            return False
        except OSError:
            budget.refused.append(Refusal(path, "clashes with another file of the same name"))
            return False
        ok = False
        try:
            ok = _pump(read, lambda b: os.write(out, b), path, budget)
            if ok and mtime_ns is not None:
                os.utime(out, ns=(mtime_ns, mtime_ns))
        except (OSError, EOFError, zipfile.BadZipFile, tarfile.TarError, zlib.error, NotImplementedError,
                RuntimeError) as e:
            budget.refused.append(Refusal(path, f"could not be read: damaged? ({e})"))
            ok = False
        finally:
            os.close(out)
            if not ok:
                os.unlink(parts[-1], dir_fd=dir_fd)
        return ok
    finally:
        os.close(dir_fd)


def copy_tree(src: str | os.PathLike, dst: str | os.PathLike, limits: Limits = LIMITS,
              skip: Iterable[str] = (), budget: Budget | None = None) -> list[Refusal]:
    """Copy the regular files of ``src`` into ``dst`` (made if missing), as data.

    Parameters
    ----------
    src : path
        A folder (itself not a symbolic link).
    dst : path
        The destination folder; a file already there is not replaced (refused as twice).
    limits : Limits
        The caps (default :data:`LIMITS`); ignored when ``budget`` is given.
    skip : iterable of str
        Name patterns left out silently (see :func:`read_tree`).
    budget : Budget, optional
        A budget shared with other calls.

    Returns
    -------
    list[Refusal]
        Every entry not copied, and why. Files are written ``0644`` with their modification time;
        empty folders are not copied.

    Raises
    ------
    OSError
        ``src`` is missing, not a folder, or a symbolic link; ``dst`` cannot be made.
    """
    budget = budget if budget is not None else Budget(limits)
    first = len(budget.refused)
    Path(dst).mkdir(parents=True, exist_ok=True)
    dst_fd = os.open(dst, _DIR_FLAGS)
    try:
        def take(dir_fd: int, name: str, path: str, st: os.stat_result) -> None:
            fd = _open_regular(dir_fd, name, path, st, budget)
            if fd is None:
                return
            try:
                _write_file(dst_fd, path.split("/"), path, budget, lambda k: os.read(fd, k), st.st_mtime_ns)
            finally:
                os.close(fd)

        _walk_fd(Path(src), budget, skip, take)
    finally:
        os.close(dst_fd)
    return budget.refused[first:]


# ------------------------------------------------------------------------ archives
_DRIVE = re.compile(r"^[A-Za-z]:")


def _entry_parts(name: str) -> list[str] | str:
    """The safe path components of an archive entry's name, or why it is refused."""
    if name.startswith(("/", "\\")) or _DRIVE.match(name):
        return "an absolute path: it would be written outside the folder"
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        return "a path with '..': it would be written outside the folder"
    if "\0" in name:
        return "a name with a NUL character"
    return parts


def _open_archive(archive: str | os.PathLike):
    return os.fdopen(os.open(archive, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb")


def extract_zip(archive: str | os.PathLike, dst: str | os.PathLike, limits: Limits = LIMITS, *,
                budget: Budget | None = None, prefix: str | None = None) -> list[Refusal]:
    """Extract the regular files of a zip archive into ``dst`` (made if missing), as data.

    Refused: entries with an absolute path or a ``..``, symbolic links and other special files
    (the Unix mode in ``external_attr``), encrypted entries, entries whose declared size is over
    the per-file cap or the total left, and entries that turn out larger than the caps or
    damaged while extracted (bytes are counted: the declared sizes may lie). A refused entry
    leaves no file behind.

    Parameters
    ----------
    archive : path
        The zip file (not a symbolic link).
    dst : path
        The destination folder.
    limits : Limits
        The caps (default :data:`LIMITS`); ignored when ``budget`` is given.
    budget : Budget, optional
        A budget shared with other calls (the archives of one download).
    prefix : str, optional
        Put before each entry's name in a refusal; default ``"<archive file name>/"``.

    Returns
    -------
    list[Refusal]
        Every entry not extracted (one for the whole archive if it cannot be read as a zip).
    """
    budget = budget if budget is not None else Budget(limits)
    lim = budget.limits
    first = len(budget.refused)
    prefix = f"{Path(archive).name}/" if prefix is None else prefix
    Path(dst).mkdir(parents=True, exist_ok=True)
    dst_fd = os.open(dst, _DIR_FLAGS)
    try:
        with _open_archive(archive) as fh, zipfile.ZipFile(fh) as z:
            for info in z.infolist():
                path = prefix + info.orig_filename
                budget.entries += 1
                if budget.entries > lim.max_entries:
                    budget.refused.append(Refusal(path, f"more than {lim.max_entries} entries: this one and the "
                                                        f"rest were not looked at"))
                    break
                parts = _entry_parts(info.orig_filename)
                mode = info.external_attr >> 16  # the Unix mode, whichever system wrote it (0: none)
                fmt = stat.S_IFMT(mode)
                why = parts if isinstance(parts, str) else None
                if why is None and fmt and not stat.S_ISREG(fmt) and not stat.S_ISDIR(fmt):
                    why = _kind(fmt)
                if why:
                    budget.refused.append(Refusal(path, why))
                    continue
                if not parts:
                    continue
                if info.is_dir() or stat.S_ISDIR(fmt):
                    try:
                        os.close(_makedirs(dst_fd, parts))
                    except OSError:
                        budget.refused.append(Refusal(path, "clashes with another file of the same name"))
                    continue
                if info.flag_bits & 0x1:
                    budget.refused.append(Refusal(path, "encrypted: it cannot be read"))
                elif not _declared_over(budget, lim, path, info.file_size):
                    try:
                        src = z.open(info)
                    except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, EOFError) as e:
                        budget.refused.append(Refusal(path, f"could not be read: damaged? ({e})"))
                        continue
                    with src:
                        _write_file(dst_fd, parts, path, budget, src.read)
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        budget.refused.append(Refusal(prefix.rstrip("/") or str(archive), f"not a readable zip archive ({e})"))
    finally:
        os.close(dst_fd)
    return budget.refused[first:]


def extract_tar(archive: str | os.PathLike, dst: str | os.PathLike, limits: Limits = LIMITS, *,
                budget: Budget | None = None, prefix: str | None = None) -> list[Refusal]:
    """Extract the regular files of a tar archive (``.tar``, ``.tar.gz``, ...) into ``dst``, as data.

    As :func:`extract_zip`: refused are absolute paths, ``..``, symbolic and hard links, devices,
    FIFOs, and files over the caps (bytes counted while extracted).
    """
    budget = budget if budget is not None else Budget(limits)
    lim = budget.limits
    first = len(budget.refused)
    prefix = f"{Path(archive).name}/" if prefix is None else prefix
    Path(dst).mkdir(parents=True, exist_ok=True)
    dst_fd = os.open(dst, _DIR_FLAGS)
    try:
        with _open_archive(archive) as fh, tarfile.open(fileobj=fh, mode="r:*") as t:
            for m in t:
                path = prefix + m.name
                budget.entries += 1
                if budget.entries > lim.max_entries:
                    budget.refused.append(Refusal(path, f"more than {lim.max_entries} entries: this one and the "
                                                        f"rest were not looked at"))
                    break
                parts = _entry_parts(m.name)
                why = parts if isinstance(parts, str) else None
                if why is None and not (m.isreg() or m.isdir()):
                    why = {tarfile.SYMTYPE: _kind(stat.S_IFLNK), tarfile.LNKTYPE: HARD_LINK,
                           tarfile.CHRTYPE: _kind(stat.S_IFCHR), tarfile.BLKTYPE: _kind(stat.S_IFBLK),
                           tarfile.FIFOTYPE: _kind(stat.S_IFIFO)}.get(m.type, _kind(0))
                if why:
                    budget.refused.append(Refusal(path, why))
                    continue
                if not parts:
                    continue
                if m.isdir():
                    try:
                        os.close(_makedirs(dst_fd, parts))
                    except OSError:
                        budget.refused.append(Refusal(path, "clashes with another file of the same name"))
                elif not _declared_over(budget, lim, path, m.size):
                    src = t.extractfile(m)
                    with src:
                        _write_file(dst_fd, parts, path, budget, src.read)
    except (tarfile.TarError, OSError, EOFError, zlib.error) as e:
        budget.refused.append(Refusal(prefix.rstrip("/") or str(archive), f"not a readable tar archive ({e})"))
    finally:
        os.close(dst_fd)
    return budget.refused[first:]


def extract_archive(archive: str | os.PathLike, dst: str | os.PathLike, limits: Limits = LIMITS, *,
                    budget: Budget | None = None, prefix: str | None = None) -> list[Refusal]:
    """:func:`extract_zip` or :func:`extract_tar`, whichever ``archive`` is (one refusal if neither)."""
    budget = budget if budget is not None else Budget(limits)
    prefix = f"{Path(archive).name}/" if prefix is None else prefix
    try:
        with _open_archive(archive) as fh:
            is_zip = zipfile.is_zipfile(fh)
    except OSError as e:
        budget.refused.append(Refusal(prefix.rstrip("/"), f"could not be read ({e.strerror})"))
        return budget.refused[-1:]
    if is_zip:
        return extract_zip(archive, dst, budget=budget, prefix=prefix)
    return extract_tar(archive, dst, budget=budget, prefix=prefix)


def walk(folder: str | os.PathLike, limits: Limits = LIMITS) -> Iterator[tuple[str, os.stat_result]]:
    """Every entry under ``folder`` with its ``lstat``, folders first, nothing followed.

    At most ``limits.max_entries`` entries, ``limits.max_depth`` levels. An unreadable folder
    raises ``OSError`` (as ``folder`` missing, not a folder, or a symbolic link).
    """
    seen = 0

    def visit(fd: int, rel: str, depth: int) -> Iterator[tuple[str, os.stat_result]]:
        nonlocal seen
        with os.scandir(fd) as it:
            names = sorted(e.name for e in it)
        for name in names:
            seen += 1
            if seen > limits.max_entries:
                raise _Stop
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            yield rel + name, st
            if stat.S_ISDIR(st.st_mode) and depth < limits.max_depth:
                sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
                try:
                    yield from visit(sub, f"{rel}{name}/", depth + 1)
                finally:
                    os.close(sub)

    fd = os.open(folder, _DIR_FLAGS)
    try:
        yield from visit(fd, "", 0)
    except _Stop:
        return
    finally:
        os.close(fd)
