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

from tools import env, exchange
from tools.grade import add_kernel_options
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
                   help="per-assignment settings, TOML: deadline, max_per_hour, hidden_before_deadline, enabled "
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
                        "exchange's record (the folder's latest ctime, tools/exchange.py), not from its name "
                        "(default: off, as on a hub where everyone runs as one account)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="grade on this Dask scheduler, tcp://HOST:8786 (default: a local cluster)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="workers of the local cluster (default: one per CPU core)")
    p.add_argument("--batch", type=int, default=4, metavar="N",
                   help="submissions (of distinct students) graded together on the cluster (default: 4)")
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
                   help="a grading function instead of the course's grader, for tests (default: tools.grade)")
    p.add_argument("-v", "--verbose", action="store_true", help="log every scan and grading step (default: off)")
    return p


def refuser(policy: Policy, course: Path, inbound: Path | None = None):
    """Why an arriving submission is refused outright (live grading off, unknown assignment, and
    with ``inbound``: what ``tools.exchange.inspect`` refuses: a folder another system user wrote,
    a link, a folder holding links or special files), or None."""
    def refuse(a: Arrival) -> str | None:
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
    (``tools.exchange.inspect``: the latest ctime of the folder and its contents, which no user can
    set back) instead of its name: a backdated name does not escape the limit per hour."""

    def __init__(self, queue: Queue, inbound: Path):
        self.queue, self.inbound = queue, inbound

    def known(self) -> set[str]:
        return self.queue.known()

    def add(self, arrivals, limit, refuse=lambda a: None, now: float | None = None):
        return self.queue.add([self.recorded(a) for a in arrivals], limit, refuse, now)

    def recorded(self, a: Arrival) -> Arrival:
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


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if a.verbose else logging.INFO, stream=sys.stderr,
                        format="[grading %(asctime)s %(levelname)s] %(message)s")
    if not a.verbose:  # Dask's own chatter (read when distributed is imported, later)
        os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")
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
        log.info("%d submission(s) left 'grading' by a previous run are queued again", back)
    policy_file = a.policy or (course / "live_grading.toml")
    policy = Policy.load(policy_file, AssignmentPolicy(max_per_hour=a.max_per_hour, hidden_before_deadline=a.hidden))
    inbound = a.exchange / a.course_id / "inbound"
    watcher = Watcher(RecordedTimes(queue, inbound) if a.check_owner else queue, inbound, policy.limit,
                      refuser(policy, course, inbound if a.check_owner else None), a.settle)
    if a.grader:
        grader = load_grader(a.grader)
    else:
        if not a.no_sandbox:
            from tools import sandbox

            ok, why = sandbox.available()
            if not ok:
                print(f"cannot sandbox kernels: {why} (use --no-sandbox for trusted submissions)", file=sys.stderr)
                return 2
        grader = CourseGrader(course, inbound, state, sandbox=not a.no_sandbox, workers=a.workers,
                              scheduler=a.scheduler, limits={"mem_limit": int(a.mem_gb * (1 << 30))})
        threading.Thread(target=grader.client, daemon=True, name="dask-start").start()  # ready before the first
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
        close = getattr(grader, "close", None)
        if close:
            close()
    return 0


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
