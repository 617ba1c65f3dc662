"""``python -m tools.live_grading``: the grading service (see ``tools/live_grading/__init__.py``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import fcntl
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

from tools import env
from tools.grading.grade import add_kernel_options
from tools.live_grading.policy import MODES, AssignmentPolicy, Policy
from tools.live_grading.queue import Arrival, Queue
from tools.live_grading.watch import Watcher
from tools.live_grading.worker import CourseGrader, Worker, load_grader

log = logging.getLogger("tools.live_grading")

HELP = """\
Grade each submission as it arrives in the nbgrader exchange and show the student the result
within a minute, as the assignment's policy allows (visible tests at once, hidden ones as
pass/fail until the deadline); refuse more than N submissions per student and hour. The hub
starts it (deploy/jupyterhub_config.py, TD_GRADING_SERVICE=1) and serves its pages under
/services/grading/; the queue survives restarts. Internals: python -m pydoc tools.live_grading."""

EXAMPLES = """\
examples:
  make hub TD_GRADING_SERVICE=1          # the usual way: the hub starts the service (deploy/README.md)
  python -m tools.live_grading --no-web --exit-when-idle --no-sandbox   # grade what is waiting, then stop
  python -m tools.live_grading --scheduler tcp://head-node:8786 --policy course/live_grading.toml"""


def _env(name: str, default: str) -> str:
    return os.environ.get(name) or default


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.live_grading", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    course = Path(_env("TD_COURSE_DIR", str(env.COURSE)))
    p.add_argument("--course", type=Path, default=course, metavar="DIR",
                   help="the nbgrader course root (default: $TD_COURSE_DIR, else course/ of this repository)")
    p.add_argument("--exchange", type=Path, default=Path(_env("TD_EXCHANGE", "/srv/nbgrader/exchange")),
                   metavar="DIR", help="nbgrader's exchange (default: $TD_EXCHANGE, else /srv/nbgrader/exchange)")
    p.add_argument("--course-id", default=_env("TD_COURSE_ID", "td-course"), metavar="ID",
                   help="the course id in the exchange (default: $TD_COURSE_ID, else td-course)")
    p.add_argument("--state", type=Path, metavar="DIR",
                   help="the service's own folder: queue.sqlite, a course per assignment, reports "
                        "(default: <course>/.live_grading)")
    p.add_argument("--policy", type=Path, metavar="FILE",
                   help="settings, TOML: timezone; per assignment deadline, max_per_hour, hidden_before_deadline, "
                        "enabled "
                        "(default: <course>/live_grading.toml if it exists; else the two options below)")
    p.add_argument("--max-per-hour", type=int, default=3, metavar="N",
                   help="accepted submissions per student, assignment and hour, more are refused; 0: no limit "
                        "(default: 3; the policy file's [defaults] wins)")
    p.add_argument("--hidden", choices=MODES, default="passfail",
                   help="what a student sees of hidden tests before the deadline: passfail or nothing "
                        "(default: passfail; the policy file's [defaults] wins)")
    p.add_argument("--instructors", default=_env("TD_INSTRUCTORS", ""), metavar="A,B",
                   help="hub users who see the whole class (default: $TD_INSTRUCTORS)")
    p.add_argument("--instructor-group", default="instructors", metavar="NAME",
                   help="members of this hub group are instructors too (default: instructors)")
    p.add_argument("--check-owner", action="store_true",
                   help="with one system user per student: refuse a submission whose folder (lstat, never a link) "
                        "another system user wrote, a link, or a folder holding links, and take its time from the "
                        "exchange's record (the folder's latest ctime, tools/grading/exchange.py), not from its name "
                        "(default: off, as on a hub where everyone runs as one account)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="grade on this Dask scheduler, tcp://HOST:8786 (default: a local cluster)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="workers of the local cluster (default: one per CPU core)")
    p.add_argument("--batch", type=int, default=4, metavar="N",
                   help="submissions graded at once, each on its own and recorded as soon as it is graded "
                        "(default: 4)")
    p.add_argument("--no-warm-up", action="store_true",
                   help="do not grade each assignment's released notebooks once at start (default: warm up, so "
                        "the first submission is graded as fast as the next ones)")
    add_kernel_options(p, runs_as="the service's user")
    p.add_argument("--poll", type=float, default=2.0, metavar="S",
                   help="seconds between two looks at the exchange (default: 2)")
    p.add_argument("--settle", type=float, default=2.0, metavar="S",
                   help="a submission folder without nbgrader's last file counts once unchanged this long (default: 2)")
    p.add_argument("--url", default=_env("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101"),
                   help="where the pages listen (default: $JUPYTERHUB_SERVICE_URL, which the hub sets)")
    p.add_argument("--no-web", action="store_true", help="no pages: only watch and grade (default: serve the pages)")
    p.add_argument("--exit-when-idle", action="store_true",
                   help="stop once nothing new is in the exchange and the queue is empty (default: run until "
                        "SIGTERM)")
    p.add_argument("--grader", metavar="MODULE:FUNCTION",
                   help="a grading function instead of the course's grader, for tests (default: tools.grading.grade)")
    p.add_argument("-v", "--verbose", action="store_true", help="log every scan and grading step (default: off)")
    return p


def refuser(policy: Policy, course: Path, inbound: Path | None = None):
    """Why an arriving submission is refused outright (live grading off, unknown assignment, and
    with ``inbound``: what ``tools.grading.exchange.inspect`` refuses: a folder another system user wrote,
    a link, a folder holding links or special files), or None."""
    def refuse(a: Arrival) -> str | None:
        from tools.grading import exchange  # nbgrader: imported once a submission comes, not before the pages are up

        if not policy.get(a.assignment).enabled:
            return f"live grading is off for {a.assignment}; the instructor grades it after collecting"
        if (course / "source").is_dir() and not (course / "source" / a.assignment).is_dir():
            return f"the course has no assignment {a.assignment}"
        if inbound is not None:
            sub = exchange.inspect(inbound, a.inbound)
            if sub.ok and sub.student != a.student:  # the watcher and the exchange split names alike
                return f"this submission's name names {sub.student}, not {a.student}"
            if not sub.ok:
                owner_mismatch = sub.problem.startswith("written by")
                return f"this submission was {sub.problem}" if owner_mismatch else f"refused: {sub.problem}"
        return None
    return refuse


class RecordedTimes:
    """The queue as the watcher sees it, with each arrival's time taken from the exchange's record
    (``tools.grading.exchange.inspect``: the latest ctime of the folder and its contents, which no user can
    set back) instead of its name: a backdated name does not escape the limit per hour."""

    def __init__(self, queue: Queue, inbound: Path):
        self.queue, self.inbound = queue, inbound

    def known(self) -> set[str]:
        return self.queue.known()

    def add(self, arrivals, limit, refuse=lambda a: None, now: float | None = None):
        return self.queue.add([self.recorded(a) for a in arrivals], limit, refuse, now)

    def recorded(self, a: Arrival) -> Arrival:
        from tools.grading import exchange

        sub = exchange.inspect(self.inbound, a.inbound, check_owner=False)
        if sub.time is None:
            return dataclasses.replace(a, submitted=time.time())  # unreadable: now, never the name
        if abs(sub.time - a.submitted) > 60:
            log.warning("%s: the name says %s, the exchange recorded %s; the exchange's time counts",
                        a.inbound, a.timestamp, sub.timestamp)
        return dataclasses.replace(a, submitted=sub.time)


def _loop(stop: threading.Event, every: float, fn) -> None:
    while not stop.is_set():
        try:
            fn()
        except (Exception, SystemExit):  # noqa: BLE001 - a bad scan must not stop the service
            log.exception("in %s", getattr(fn, "__name__", fn))
        stop.wait(every)


def quiet(verbose: bool = False) -> None:
    """A service log that shows what matters: the libraries' routine notes (Dask's start-up,
    alembic's migration context, SQLAlchemy's autoflush warnings inside nbgrader, the leaked
    semaphores multiprocessing's tracker reports when worker processes end) are silenced, or kept
    for ``--verbose``; other warnings stay."""
    import warnings

    if verbose:
        return
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")  # read when distributed is imported, later
    # the tracker runs in a process of its own, started later: it reads the filter from the environment
    leak = "ignore::UserWarning:multiprocessing.resource_tracker"
    os.environ["PYTHONWARNINGS"] = ",".join(x for x in (os.environ.get("PYTHONWARNINGS"), leak) if x)
    warnings.filterwarnings("ignore", message=r"resource_tracker: There appear to be", category=UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            from sqlalchemy.exc import SAWarning
        except ImportError:  # pragma: no cover - nbgrader brings it
            SAWarning = None  # noqa: N806
    if SAWarning is not None:
        warnings.filterwarnings("ignore", category=SAWarning)
    for name in ("alembic", "traitlets", "nbgrader", "distributed", "tornado.access"):
        logging.getLogger(name).setLevel(logging.WARNING)
    for h in logging.getLogger().handlers:  # nbgrader's apps set their own loggers' levels back to INFO
        h.addFilter(_routine)


#: loggers whose messages below WARNING are routine (nbgrader's merge, copying, converting)
ROUTINE = ("traitlets", "nbgrader", "alembic", "NbGraderAPI", "Autograde", "distributed", "tornado.access")


def _routine(record: logging.LogRecord) -> bool:
    """False for a routine library message (see :func:`quiet`)."""
    if record.name.split(".")[0] in ROUTINE and record.levelno < logging.WARNING:
        return False
    # nbgrader's exchange check, made by every nbgrader app the merge starts (the service uses no exchange
    # there), and Dask stopping a worker busy with a grading when the service stops (it is queued again)
    return not (record.name.split(".")[0] in ROUTINE
                and str(record.msg).startswith(("Unwritable directory", "Worker process still alive after")))


def assignments_to_warm(course: Path, policy: Policy) -> list[str]:
    """The course's assignments that are graded live (a source folder, enabled in the policy)."""
    src = course / "source"
    names = sorted(p.name for p in src.iterdir() if p.is_dir()) if src.is_dir() else []
    return [n for n in names if policy.get(n).enabled and not n.startswith(".")]


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if a.verbose else logging.INFO, stream=sys.stderr,
                        format="[grading %(asctime)s %(levelname)s] %(message)s")
    # the service's own lines whatever a library does to the root logger's level (copydetect's quieting)
    logging.getLogger("tools").setLevel(logging.DEBUG if a.verbose else logging.INFO)
    quiet(a.verbose)
    course = a.course.resolve()
    state = (a.state or course / ".live_grading").resolve()
    state.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(PermissionError):
        state.chmod(0o700)  # its courses hold the sources and hidden tests; its queue every student's results
    lock = (state / "service.lock").open("a+")  # one service per state folder (held until the process ends)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"another grading service runs on {state}", file=sys.stderr)
        return 1
    queue = Queue(state / "queue.sqlite")
    back = queue.recover()
    if back:
        log.info("%d submission(s) left 'grading' by a previous run are queued again (no attempt used)", back)
    policy_file = a.policy or (course / "live_grading.toml")
    policy = Policy.load(policy_file, AssignmentPolicy(max_per_hour=a.max_per_hour, hidden_before_deadline=a.hidden))
    inbound = a.exchange / a.course_id / "inbound"
    watcher = Watcher(RecordedTimes(queue, inbound) if a.check_owner else queue, inbound, policy.limit,
                      refuser(policy, course, inbound if a.check_owner else None), a.settle)
    if a.grader:
        grader = load_grader(a.grader)
    else:
        if not a.no_sandbox:
            from tools.grading import sandbox

            ok, why = sandbox.available()
            if not ok:
                print(f"cannot sandbox kernels: {why} (use --no-sandbox for trusted submissions)", file=sys.stderr)
                return 2
        grader = CourseGrader(course, inbound, state, sandbox=not a.no_sandbox, workers=a.workers,
                              scheduler=a.scheduler, limits={"mem_limit": int(a.mem_gb * (1 << 30))}, queue=queue)
        # the cluster, each assignment's inputs and a first grading on every worker, before the first submission
        warm = [] if a.no_warm_up else assignments_to_warm(course, policy)
        threading.Thread(target=_warm, args=(grader, warm, queue), daemon=True, name="warm-up").start()
    worker = Worker(queue, grader, batch=max(1, a.batch))
    stop = threading.Event()
    threads = [threading.Thread(target=_loop, args=(stop, a.poll, watcher.poll), daemon=True, name="watch"),
               threading.Thread(target=worker.run, args=(stop,), daemon=True, name="grade")]
    for t in threads:
        t.start()
    log.info("watching %s; state in %s; policy %s", inbound, state,
             policy_file if policy_file.exists() else "(defaults: no policy file)")
    try:
        if a.no_web:
            _wait(stop, queue, watcher, a)
        else:
            asyncio.run(_serve(a, queue, policy, course, state, stop))
    finally:
        stop.set()
        worker.shutdown()  # what was being graded goes back to the queue, no attempt used
        close = getattr(grader, "close", None)
        if close:
            close()
    return 0


def _warm(grader: CourseGrader, assignments: list[str], queue: Queue) -> None:
    try:  # submissions waiting (a restart): they warm the workers themselves, nothing goes before them
        grader.warm(assignments, grade=queue.pending() == 0)
    except Exception:  # noqa: BLE001 - grading still works, only the first one is slower
        log.exception("warm-up")


def _wait(stop: threading.Event, queue: Queue, watcher: Watcher, a) -> None:
    got = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: got.set())
    while not got.is_set():
        if a.exit_when_idle and queue.pending() == 0 and not watcher.poll() and queue.pending() == 0:
            log.info("nothing left to grade: %s", queue.counts())
            return
        got.wait(min(a.poll, 0.5))


async def _serve(a, queue: Queue, policy: Policy, course: Path, state: Path, stop: threading.Event) -> None:
    from tools.live_grading.app import Service, make_app

    instructors = {u.strip() for u in a.instructors.split(",") if u.strip()}
    service = Service(queue, policy, course, state, instructors, a.instructor_group)
    url = urlparse(a.url)
    app = make_app(service)
    server = app.listen(url.port or 80, url.hostname or "127.0.0.1")
    log.info("pages on %s (instructors: %s)", a.url, ", ".join(sorted(instructors)) or "none")
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, done.set)
    t0 = time.monotonic()
    await done.wait()
    log.info("stopping after %.0f s", time.monotonic() - t0)
    server.stop()


if __name__ == "__main__":
    sys.exit(main())
