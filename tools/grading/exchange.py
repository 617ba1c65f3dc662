"""The course's nbgrader exchange: one that knows who submits (configured in
``course/nbgrader_config.py`` through ``c.ExchangeFactory.*``; the hub ships this file to the
student servers as ``td_exchange.py``, so it imports nothing of the course: stdlib and nbgrader).

nbgrader's file-system exchange believes a submission's folder name
(``inbound/<student>+<assignment>+<timestamp>+<random>``): whoever writes the folder chooses the
student it is collected as and the time it was handed in, and a world-writable exchange root
without the sticky bit lets any student rename the course's folder and put their own in its place.
Here the file system says who and when, not the name:

- **The root is sticky** (``1777``): anyone may create an entry, only its owner (or the root's
  owner, or root) may rename or remove it. The instructor's release creates it so (and adds the
  sticky bit to a root of their own that lacks it); every side refuses a root that is writable by
  everyone without it.
- **The course folder belongs to the course**: to root or to the owner of the exchange root (the
  instructor: ``install -d -m 1777 -o <instructor>``). A course folder of anyone else was
  planted; release, collect, fetch, submit, list and feedback refuse it (and symbolic links in
  its place).
- **inbound is write-only for students** (``3733``: setgid, sticky, ``-wx`` for others): they
  create their submission folder but cannot list, rename or remove anyone else's.
- **collect takes a submission only when the folder's owner is the student its name claims**:
  ``os.lstat`` of the entry (never following a link) gives the uid, ``pwd`` its login name; a
  symbolic link, a file, a folder holding a link or a special file, or a folder of another user
  is refused and logged (``REFUSED ...``), never collected.
- **The time is the exchange's own record**: the latest *ctime* (``lstat``) of the folder and of
  everything in it. The kernel sets a ctime to the current time at each change (creating,
  writing, renaming, chmod, ``utime``) and no user can set it back, so a name or a
  ``timestamp.txt`` that claims an earlier time changes nothing, and touching the folder after
  submitting only makes it later. collect orders a student's submissions by it, compares it
  with the due date and writes it to ``submitted/<student>/<assignment>/timestamp.txt`` (the
  student's own file is replaced), so late penalties and the Formgrader see it. (A record the
  trusted side writes itself would need a process watching the exchange; the command-line
  collect has none, and the live grading service reads the same ctime.)
- **One account** (``CourseExchange.one_account``, ``TD_EXCHANGE_ONE_ACCOUNT=1``): when every
  student runs as one system account (the hub's trial with the simple spawner, a container image
  as ``jovyan``, the README's tests) the owner cannot tell students apart and the owner check is
  off; the sticky bit, the refusal of links and the recorded time still hold.

:func:`inspect` is the check itself (the live grading service's ``--check-owner`` uses it).
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import os
import pwd
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from nbgrader.exchange.default import (
    ExchangeCollect,
    ExchangeFetchAssignment,
    ExchangeFetchFeedback,
    ExchangeList,
    ExchangeReleaseAssignment,
    ExchangeReleaseFeedback,
    ExchangeSubmit,
)
from traitlets import Bool
from traitlets.config import Configurable

ROOT_MODE = 0o1777  # sticky: only an entry's owner renames or removes it
INBOUND_MODE = 0o3733  # setgid (the instructor's group), sticky, students: create only
#: a student or assignment id (hub user names, nbgrader assignment names; no "..", no "/")
NAME = re.compile(r"^[A-Za-z0-9_@][A-Za-z0-9_.@+\-]*$")


# ------------------------------------------------------------------ the checks
def parse_name(name: str) -> tuple[str, str, str] | None:
    """(student, assignment, claimed timestamp) of an inbound folder name, split as nbgrader's
    collect does (``rsplit('+', 3)``: a student id may hold a ``+``), or None."""
    parts = name.rsplit("+", 3)
    if len(parts) < 3 or not all(NAME.match(x) for x in parts[:2]) or not parts[2]:
        return None
    return parts[0], parts[1], parts[2]


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def root_problem(root: str | os.PathLike) -> str | None:
    """Why the exchange root is unsafe (a link, not a folder, writable by everyone without the
    sticky bit), or None."""
    try:
        st = os.lstat(root)
    except FileNotFoundError:
        return f"the exchange {root} does not exist"
    if stat.S_ISLNK(st.st_mode):
        return f"the exchange {root} is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return f"the exchange {root} is not a folder"
    if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
        return (f"the exchange {root} is writable by everyone without the sticky bit (any user can rename the "
                f"course's folder and put their own in its place): run `sudo chmod 1777 {root}`")
    return None


def trusted_uids(root: str | os.PathLike) -> set[int]:
    """Who may own a course folder: root and the owner of the exchange root."""
    return {0, os.lstat(root).st_uid}


def course_problem(course: str | os.PathLike, trusted: set[int]) -> str | None:
    """Why ``<root>/<course_id>`` (if it exists) is not the course's own: a link, not a folder,
    or owned by someone the exchange does not trust; the same for its inbound, outbound and
    feedback folders. None if it is fine or does not exist yet."""
    for p in (Path(course), *(Path(course) / sub for sub in ("inbound", "outbound", "feedback"))):
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            return f"{p} is not a folder but a {'symbolic link' if stat.S_ISLNK(st.st_mode) else 'file'}: planted?"
        if st.st_uid not in trusted:
            who = ", ".join(sorted(user_name(u) for u in trusted))
            return (f"{p} belongs to {user_name(st.st_uid)}, not to the exchange's owner ({who}): planted by a "
                    f"user? Remove it (as root) and release again; an instructor other than the exchange's owner "
                    f"must own the exchange: `sudo chown <instructor> {Path(course).parent}`")
    return None


@dataclass(frozen=True)
class Submission:
    """What the file system says of one inbound entry."""

    name: str  # the entry's name in inbound/
    student: str  # the student its name claims ("" if the name is not a submission's)
    assignment: str
    claimed: str  # the timestamp its name claims (never used)
    owner: str  # the login name of the entry's owner (lstat)
    time: float | None  # the exchange's record: the latest ctime of the folder and its contents
    problem: str | None  # why it is refused, or None

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def utc(self) -> dt.datetime | None:
        """The recorded time as nbgrader compares times: a naive datetime in UTC."""
        return None if self.time is None else dt.datetime.fromtimestamp(self.time, dt.UTC).replace(tzinfo=None)

    @property
    def timestamp(self) -> str:
        """The recorded time in nbgrader's ``timestamp.txt`` format."""
        return self.utc.strftime("%Y-%m-%d %H:%M:%S.%f") + " UTC"


def _walk(folder: str) -> tuple[float, str | None]:
    """(latest ctime, first entry that is neither a folder nor a regular file) under ``folder``,
    never following a link."""
    latest, bad = os.lstat(folder).st_ctime, None
    stack = [folder]
    while stack:
        d = stack.pop()
        with os.scandir(d) as it:
            for e in it:
                st = e.stat(follow_symlinks=False)
                latest = max(latest, st.st_ctime)
                if stat.S_ISDIR(st.st_mode):
                    stack.append(e.path)
                elif not stat.S_ISREG(st.st_mode) and bad is None:
                    bad = os.path.relpath(e.path, folder)
    return latest, bad


def inspect(inbound: str | os.PathLike, name: str, check_owner: bool = True) -> Submission:
    """The check of one entry of ``inbound``: a real folder (``lstat``), holding only folders and
    regular files, owned by the system user its name claims (unless ``check_owner`` is off), and
    its recorded time."""
    parsed = parse_name(name)
    student, assignment, claimed = parsed or ("", "", "")
    path = os.path.join(inbound, name)
    try:
        st = os.lstat(path)
    except OSError as e:
        return Submission(name, student, assignment, claimed, "?", None, f"cannot be read: {e.strerror}")
    owner = user_name(st.st_uid)

    def refused(why: str, time: float | None = None) -> Submission:
        return Submission(name, student, assignment, claimed, owner, time, why)

    if parsed is None:
        return refused("not named <student>+<assignment>+<timestamp>+<random>")
    if stat.S_ISLNK(st.st_mode):
        return refused(f"a symbolic link (to {os.readlink(path)!r}), written by {owner}: a submission is a folder")
    if not stat.S_ISDIR(st.st_mode):
        return refused(f"not a folder, written by {owner}")
    if check_owner and owner != student:
        return refused(f"written by {owner}, not by {student}")
    try:
        latest, bad = _walk(path)
    except OSError as e:
        return refused(f"cannot be read: {e.strerror}")
    if bad is not None:
        return refused(f"holds {bad!r}, a symbolic link or special file: a submission holds files only", latest)
    return Submission(name, student, assignment, claimed, owner, latest, None)


def copy_submission(src: str, dest: str, ignore=None, log=None) -> None:
    """Copy the folder ``src`` to ``dest`` (which must not exist) without ever following a
    link: folders are opened with ``O_NOFOLLOW`` relative to their parent, files too, so an
    entry swapped for a link after :func:`inspect` is skipped, not read. ``ignore`` is
    ``shutil.copytree``'s (nbgrader's ignore patterns, size limits)."""
    def copy_dir(src_fd: int, src_path: str, dest_path: str) -> None:
        os.mkdir(dest_path, 0o755)
        names = sorted(os.listdir(src_fd))
        skip = ignore(src_path, names) if ignore else set()
        for n in names:
            if n in skip:
                continue
            try:
                fd = os.open(n, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=src_fd)
            except OSError as e:  # ELOOP: a link
                if log:
                    log.warning("not copied: %s (%s)", os.path.join(src_path, n), e.strerror)
                continue
            try:
                st = os.fstat(fd)
                if stat.S_ISDIR(st.st_mode):
                    copy_dir(fd, os.path.join(src_path, n), os.path.join(dest_path, n))
                elif stat.S_ISREG(st.st_mode):
                    with os.fdopen(os.dup(fd), "rb") as fin, open(os.path.join(dest_path, n), "wb") as fout:
                        while chunk := fin.read(1 << 20):
                            fout.write(chunk)
                elif log:
                    log.warning("not copied: %s (not a regular file)", os.path.join(src_path, n))
            finally:
                os.close(fd)

    top = os.open(src, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        copy_dir(top, src, dest)
    finally:
        os.close(top)


# -------------------------------------------------------------- nbgrader's side
class CourseExchange(Configurable):
    """What every job of the course's exchange shares: the checks of the root and the course."""

    one_account = Bool(False, help=(
        "Every student runs as one system account (the hub's simple spawner, a container as jovyan, "
        "tests): the folder's owner cannot name the student, so collect believes the folder's name; "
        "links are still refused and the time is still the exchange's record.")).tag(config=True)

    def course_folder(self) -> str:
        return os.path.join(self.root, self.coursedir.course_id)

    def check_exchange(self) -> None:
        """Fail (nbgrader's ExchangeError) on an unsafe root or a planted course folder."""
        problem = root_problem(self.root)
        if problem is None and self.coursedir.course_id:
            problem = course_problem(self.course_folder(), trusted_uids(self.root))
        if problem:
            self.fail(problem)

    def start(self):
        if os.path.lexists(self.root):
            self.check_exchange()
        return super().start()


class ReleaseAssignment(CourseExchange, ExchangeReleaseAssignment):
    """release_assignment: a sticky root (created so, or made so if it is the instructor's), a
    course folder of the instructor's, inbound write-only and sticky."""

    def ensure_root(self):
        if not os.path.lexists(self.root):
            self.log.warning("Creating exchange directory: %s (mode 1777)", self.root)
            try:
                os.makedirs(self.root)
                os.chmod(self.root, ROOT_MODE)
            except PermissionError:
                self.fail(f"Could not create {self.root}, permission denied.")
            return
        st = os.lstat(self.root)
        if stat.S_ISDIR(st.st_mode) and st.st_mode & 0o7777 != ROOT_MODE and st.st_uid == os.geteuid():
            self.log.warning("Exchange %s: mode %o -> 1777 (sticky: only an entry's owner may rename it)",
                             self.root, st.st_mode & 0o7777)
            os.chmod(self.root, ROOT_MODE)
        problem = root_problem(self.root)
        if problem:
            self.fail(problem)

    def start(self):  # the root may be repaired before it is checked
        return super(CourseExchange, self).start()

    def init_dest(self):
        if self.coursedir.course_id:
            problem = course_problem(self.course_folder(), trusted_uids(self.root) | {os.geteuid()})
            if problem:
                self.fail(problem)
        super().init_dest()
        if os.geteuid() not in trusted_uids(self.root):
            self.log.warning("You (%s) do not own the exchange %s: students' servers will refuse the course's folder "
                             "as planted. Run `sudo chown %s %s`.", user_name(os.geteuid()), self.root,
                             user_name(os.geteuid()), self.root)
        inbound = os.lstat(self.inbound_path)
        if inbound.st_uid == os.geteuid() and inbound.st_mode & 0o7777 != INBOUND_MODE:
            os.chmod(self.inbound_path, INBOUND_MODE)


class ReleaseFeedback(CourseExchange, ExchangeReleaseFeedback):
    """release_feedback, from the course's own folder only."""


class FetchAssignment(CourseExchange, ExchangeFetchAssignment):
    """fetch_assignment, from the course's own folder only (never a planted one)."""


class FetchFeedback(CourseExchange, ExchangeFetchFeedback):
    """fetch_feedback, from the course's own folder only."""


class Submit(CourseExchange, ExchangeSubmit):
    """submit, into the course's own inbound only."""


class List(CourseExchange, ExchangeList):
    """list (the assignment list of the Lab), of the course's own folder only."""


class Collect(CourseExchange, ExchangeCollect):
    """collect: a submission is taken when its folder's owner is the student its name claims
    (:func:`inspect`), at the time the exchange recorded; anything else is refused and logged."""

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = self.course_folder()
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not os.access(self.inbound_path, os.R_OK | os.X_OK):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        self.refused: list[Submission] = []
        self.times: dict[str, Submission] = {}
        by_student: dict[str, list[dict]] = {}
        for name in sorted(os.listdir(self.inbound_path)):
            sub = inspect(self.inbound_path, name, check_owner=not self.one_account)
            if sub.assignment != self.coursedir.assignment_id and sub.student:
                continue  # another assignment's
            if not fnmatch.fnmatchcase(sub.student, self.coursedir.student_id or "*"):
                continue  # --student=<id> (nbgrader's default is "*")
            if not sub.ok:
                self.refused.append(sub)
                self.log.error("REFUSED %s/%s: %s; not collected", self.inbound_path, name, sub.problem)
                continue
            self.times[os.path.join(self.inbound_path, name)] = sub
            by_student.setdefault(sub.student, []).append(
                {"username": sub.student, "filename": name, "timestamp": sub.utc})
        from nbgrader.api import Gradebook, MissingEntry

        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                self.duedate = gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                self.duedate = None
        self.src_records = []
        for records in by_student.values():
            records = self._sort_by_timestamp(records)
            if self.duedate is not None and self.before_duedate:
                records = [r for r in records if r["timestamp"] <= self.duedate] or records
            self.src_records.append(records[0])
        if self.refused:
            self.log.error("%d entr%s of inbound refused (not collected): see the REFUSED lines above",
                           len(self.refused), "y" if len(self.refused) == 1 else "ies")

    def copy_files(self):
        self.check_owner = False  # done above, and stricter (nbgrader's own check only warns)
        return super().copy_files()

    def do_copy(self, src, dest, log=None):
        from nbgrader.utils import ignore_patterns

        size = self.get_size(src)
        if size > 1000 * self.coursedir.max_dir_size:
            raise RuntimeError(f"Directory size is too big. Size is {size}, maximum size is "
                               f"{1000 * self.coursedir.max_dir_size}")
        copy_submission(src, dest, ignore_patterns(exclude=self.coursedir.ignore, include=self.coursedir.include,
                                                   max_file_size=self.coursedir.max_file_size, log=self.log),
                        log=self.log)
        sub = self.times[src]
        with open(os.path.join(dest, "timestamp.txt"), "w") as f:  # the exchange's record, not the student's
            f.write(sub.timestamp)
        self.log.info("%s %s: submitted at %s (the exchange's record; the name says %s)",
                      sub.student, sub.assignment, sub.timestamp, sub.claimed)


#: ``c.ExchangeFactory.<job> = <class>`` for course/nbgrader_config.py and the student config
FACTORY = {"release_assignment": "ReleaseAssignment", "release_feedback": "ReleaseFeedback",
           "fetch_assignment": "FetchAssignment", "fetch_feedback": "FetchFeedback", "submit": "Submit",
           "list": "List", "collect": "Collect"}


def configure(c, module: str = "tools.grading.exchange") -> None:
    """Point nbgrader's ExchangeFactory at these classes (``module``: this file's import name)."""
    for job, cls in FACTORY.items():
        setattr(c.ExchangeFactory, job, f"{module}.{cls}")
