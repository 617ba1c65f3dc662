"""The service's web pages under the hub (``/services/grading/``), behind the hub's OAuth.

Every handler is a ``jupyterhub.services.auth.HubOAuthenticated`` tornado handler: a browser
is sent through the hub's login (OAuth, no confirmation page for this service), an API
client may send a hub token (``Authorization: token ...``). Who is an instructor: a name in
``--instructors`` or a member of the hub group ``--instructor-group``.

    /services/grading/                      my submissions (an instructor: a link to the class)
    /services/grading/submissions/<id>      the feedback of one submission (its student, instructors)
    /services/grading/class                 every submission of the class (instructors)
    /services/grading/report/<assignment>   tools/report/report.py's page on the live grades (instructors)
    /services/grading/api/submissions       the same as JSON; ?all=1 for instructors
    /services/grading/api/submissions/<id>

Another student's submission answers 404 (as one that does not exist), an instructor's page
403. What a feedback shows is :func:`tools.live_grading.policy.view`'s; every time is written by
:func:`tools.live_grading.policy.when`, in the course's time zone (``timezone`` in the policy file).

Everything under ``/api/`` answers JSON, errors too (``{"error", "status"}``): 401 without a
session or token (never a redirect to the login page), 403, 404 (another student's submission,
an id that is no number, a path that names nothing), 405, and 429 with ``Retry-After`` (seconds)
when a user asks more than :attr:`Service.api_per_minute` times a minute.

What a student wrote (names, messages, code) is escaped by the templates (Jinja autoescape), and
every response carries a Content-Security-Policy (:func:`content_security_policy`): the pages'
one style sheet and one script run (by hash; ``live_grading_assets.html.j2``), nothing else
does, and a page talks to nothing but this service. The report page gets the report's own policy
(:func:`tools.report.report.content_security_policy`: no script at all).
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import json
import logging
import math
import os
import re
import time
from collections import deque
from pathlib import Path

from jupyterhub.services.auth import HubOAuth, HubOAuthCallbackHandler, HubOAuthenticated
from jupyterhub.utils import url_path_join
from tornado import web

from tools.live_grading.policy import Policy, exercise_of, first_line, local_times, mistake_of, titles, view, when
from tools.live_grading.queue import Queue, Row

log = logging.getLogger("tools.live_grading")
TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
STATE_TEXT = {"queued": "queued", "grading": "grading", "graded": "graded", "refused": "refused",
              "failed": "not graded (error)"}
#: an assignment's name as the pages accept it (no path, no dot file)
NAME = re.compile(r"^[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,99}$")
#: the largest id the queue can hold (sqlite's INTEGER)
MAX_ID = 2**63 - 1


class Service:
    """What the handlers share: queue, policy, course, who instructs."""

    #: API requests a user may make per minute (the pages poll every 5 s: 12)
    api_per_minute = 120

    def __init__(self, queue: Queue, policy: Policy, course: Path, state: Path, instructors: set[str],
                 instructor_group: str = "instructors"):
        self.queue, self.policy, self.course, self.state = queue, policy, Path(course), Path(state)
        self.instructors, self.instructor_group = set(instructors), instructor_group
        self._duedates: dict[str, tuple[float, object]] = {}
        self._names: dict[str, tuple[tuple, dict, float]] = {}
        self._hits: dict[str, deque] = {}

    def is_instructor(self, user: dict) -> bool:
        return user.get("name") in self.instructors or self.instructor_group in (user.get("groups") or [])

    @property
    def tz(self):
        return self.policy.timezone()

    def when(self, value) -> str | None:
        """A time as the pages write it (:func:`tools.live_grading.policy.when`, the course's zone)."""
        return when(value, self.tz)

    def duedate(self, assignment: str):
        """The assignment's due date in the course's gradebook (cached one minute)."""
        import datetime as dt
        import warnings

        hit = self._duedates.get(assignment)
        if hit and time.monotonic() - hit[0] < 60:
            return hit[1]
        due = None
        try:
            from nbgrader.api import Gradebook

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with Gradebook(f"sqlite:///{self.course / 'gradebook.db'}") as gb:
                    d = gb.find_assignment(assignment).duedate
            if d is not None:
                due = d if d.tzinfo else d.replace(tzinfo=dt.UTC)
        except Exception:  # noqa: BLE001 - no gradebook, no such assignment: no due date
            due = None
        self._duedates[assignment] = (time.monotonic(), due)
        return due

    def deadline(self, assignment: str) -> tuple[object, str]:
        """(the deadline, where it comes from: ``policy``, ``gradebook`` or ``none``)."""
        pol = self.policy.get(assignment)
        if pol.deadline is not None:
            return pol.deadline, "policy"
        due = self.duedate(assignment)
        return (due, "gradebook") if due is not None else (None, "none")

    def names(self, assignment: str) -> dict:
        """Exercise titles and cell labels of ``assignment`` (:func:`tools.live_grading.policy.titles`
        on its released notebooks, else its source), computed once per version of the notebooks."""
        if not NAME.match(assignment or ""):
            return {}
        hit = self._names.get(assignment)
        if hit and time.monotonic() - hit[2] < 10:  # a page of many rows looks once
            return hit[1]
        for sub in ("release", "source"):
            nbs = sorted((self.course / sub / assignment).glob("*.ipynb"))
            if nbs:
                break
        key = tuple((str(p), p.stat().st_mtime_ns) for p in nbs if p.exists())
        names = hit[1] if hit and hit[0] == key else titles(nbs)
        self._names[assignment] = (key, names, time.monotonic())
        return names

    def throttle(self, user: str, now: float | None = None) -> float:
        """0 if ``user`` may make one more API request now, else the seconds to wait."""
        now = time.monotonic() if now is None else now
        hits = self._hits.setdefault(user, deque())
        while hits and hits[0] <= now - 60:
            hits.popleft()
        if len(hits) >= self.api_per_minute:
            return max(hits[0] + 60 - now, 0.001)
        hits.append(now)
        return 0.0

    def _reused(self, value) -> str:
        if isinstance(value, int | float) and not isinstance(value, bool) and value < 1e9:
            row = self.queue.get(int(value)) if 0 < value <= MAX_ID else None
            return self.when(row.submitted) if row else f"submission {int(value)}"
        return self.when(value) or str(value)

    def summary(self, row: Row, instructor: bool) -> dict:
        """One row for a page or the API, as the policy allows."""
        reason = local_times(row.reason or "", self.tz)
        d = {"id": row.id, "student": row.student, "assignment": row.assignment, "timestamp": row.timestamp,
             "submitted_at": self.when(row.submitted), "state": row.state, "state_text": STATE_TEXT.get(row.state,
                                                                                                      row.state),
             "reason": reason if instructor else first_line(reason), "noticed": self.when(row.noticed),
             "finished_at": self.when(row.finished), "waited": row.waited,
             "to_feedback": None if row.finished is None else round(max(0.0, row.finished - row.submitted), 1),
             "link": row.state != "refused", "feedback": None}
        if row.state == "graded" and row.result:
            deadline, source = self.deadline(row.assignment)
            v = view(row.result, self.policy.get(row.assignment), deadline, instructor=instructor,
                     names=self.names(row.assignment))
            v["deadline_at"], v["deadline_from"] = self.when(deadline), source
            v["reused"] = {nb: self._reused(x) for nb, x in v["reused"].items()}
            d["feedback"] = v
        return d

    def assignment_info(self, assignment: str) -> dict:
        """What the class page says of an assignment's settings."""
        pol = self.policy.get(assignment)
        deadline, source = self.deadline(assignment)
        return {"name": assignment, "deadline_at": self.when(deadline), "deadline_from": source,
                "mode": pol.hidden_before_deadline, "max_per_hour": pol.max_per_hour, "enabled": pol.enabled}

    def mistakes(self, rows: list[Row]) -> list[dict]:
        """Per assignment and exercise, over the latest graded submission of each student: how many
        students made each known mistake (a cell's ``mistake``), and how many failed a test in a way
        no known mistake explains."""
        latest: dict[tuple[str, str], Row] = {}
        for r in rows:  # newest first
            if r.state == "graded" and r.result and (r.student, r.assignment) not in latest:
                latest[(r.student, r.assignment)] = r
        out = []
        for assignment in sorted({a for _s, a in latest}):
            names = self.names(assignment)
            exercises: dict[str, dict] = {}
            students = 0
            for (student, a), r in sorted(latest.items()):
                if a != assignment:
                    continue
                students += 1
                for c in r.result.get("cells") or []:
                    if c.get("kind") != "test" or c.get("passed") is not False:
                        continue
                    ex_id = exercise_of(c.get("grade_id", ""))
                    ex = exercises.setdefault(ex_id, {"name": ex_id, "title": (names.get("exercises") or {}).get(
                        ex_id) or ex_id, "mistakes": {}, "unexplained": set()})
                    m = mistake_of(c)
                    if m:
                        k = ex["mistakes"].setdefault(str(m["name"]), {
                            "name": str(m["name"]), "hint": str(m.get("hint") or ""), "students": set()})
                        k["students"].add(student)
                    else:
                        ex["unexplained"].add(student)
            out.append({"assignment": assignment, "students": students, "exercises": [
                {"name": ex["name"], "title": ex["title"], "unexplained": len(ex["unexplained"]),
                 "mistakes": sorted(({"name": k["name"], "hint": k["hint"], "count": len(k["students"])}
                                     for k in ex["mistakes"].values()), key=lambda k: (-k["count"], k["name"]))}
                for ex in exercises.values()]})
        return out


def _environment():
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["j2", "html"]),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = lambda x: "" if x is None else f"{x:g}"
    return env


def _render(name: str, **kw) -> str:
    return _environment().get_template(name).render(**kw)


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


@functools.cache
def content_security_policy() -> str:
    """The pages' Content-Security-Policy: their style sheet and script (the macros of
    ``live_grading_assets.html.j2``, rendered as the pages render them) by hash, requests to
    this origin only (the script polls the API), no plugin, frame, form or base URL."""
    assets = _environment().get_template("live_grading_assets.html.j2").module
    return (f"default-src 'none'; script-src {_sha256(str(assets.poll()))}; style-src {_sha256(str(assets.style()))}; "
            "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


class Base(HubOAuthenticated, web.RequestHandler):
    def initialize(self, service: Service, hub_auth: HubOAuth) -> None:
        self.service, self.hub_auth = service, hub_auth

    @property
    def user(self) -> dict:
        return self.current_user

    @property
    def instructor(self) -> bool:
        return self.service.is_instructor(self.current_user)

    def set_default_headers(self) -> None:
        self.set_header("Content-Security-Policy", content_security_policy())
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Referrer-Policy", "same-origin")

    def url(self, *parts: str) -> str:
        return url_path_join(self.hub_auth.base_url, *parts)

    def own_row(self, row_id: str) -> Row:
        n = int(row_id) if row_id.isdigit() and len(row_id) <= 19 else 0
        row = self.service.queue.get(n) if 0 < n <= MAX_ID else None
        if row is None or not (row.student == self.user["name"] or self.instructor):
            raise web.HTTPError(404, "no such submission")  # another student's: as if it did not exist
        return row

    def page(self, template: str, **kw) -> None:
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.write(_render(template, user=self.user["name"], instructor=self.instructor, url=self.url,
                           hub=self.hub_auth.hub_prefix, **kw))

    def json(self, data) -> None:
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "no-store")
        self.write(json.dumps(data))


class MineHandler(Base):
    @web.authenticated
    def get(self) -> None:
        rows = [self.service.summary(r, self.instructor) for r in self.service.queue.rows(student=self.user["name"])]
        pending = any(r["state"] in ("queued", "grading") for r in rows)
        self.page("live_grading_student.html.j2", rows=rows, pending=pending)


class FeedbackHandler(Base):
    @web.authenticated
    def get(self, row_id: str) -> None:
        row = self.own_row(row_id)
        self.page("live_grading_feedback.html.j2", row=self.service.summary(row, self.instructor),
                  pending=row.state in ("queued", "grading"))


class ClassHandler(Base):
    @web.authenticated
    def get(self) -> None:
        if not self.instructor:
            raise web.HTTPError(403, "instructors only")
        everything = self.get_argument("all", "") == "1"
        all_rows = self.service.queue.rows()
        shown, seen = [], set()
        for r in all_rows:  # newest first: the first of each student and assignment is the latest
            if everything or (r.student, r.assignment) not in seen:
                shown.append(r)
            seen.add((r.student, r.assignment))
        rows = [self.service.summary(r, True) for r in shown]
        names = sorted({r.assignment for r in all_rows})
        graded = {r.assignment for r in all_rows if r.state == "graded"}
        assignments = [{**self.service.assignment_info(a), "report": a in graded and bool(NAME.match(a))}
                       for a in names]
        self.page("live_grading_class.html.j2", rows=rows, counts=self.service.queue.counts(),
                  assignments=assignments, everything=everything, total=len(all_rows),
                  mistakes=self.service.mistakes(all_rows))


class ReportHandler(Base):
    @web.authenticated
    async def get(self, assignment: str) -> None:
        if not self.instructor:
            raise web.HTTPError(403, "instructors only")
        course = self.service.state / "courses" / assignment
        if not NAME.match(assignment) or not (course / "gradebook.db").exists():
            raise web.HTTPError(404, f"nothing of {assignment} graded yet")
        out = self.service.state / "reports" / f"{assignment}.html"
        graded = [r.finished or 0 for r in self.service.queue.rows(assignment=assignment) if r.state == "graded"]
        if not out.exists() or out.stat().st_mtime < max(graded, default=0):
            await asyncio.get_running_loop().run_in_executor(None, write_report, assignment, course, out)
        from tools.report import report

        page = out.read_bytes()
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Content-Security-Policy", report.content_security_policy(page.decode("utf-8")))
        self.write(page)


def write_report(assignment: str, course: Path, out: Path) -> Path:
    """tools/report/report.py's page on the service's course of ``assignment`` (the latest graded
    submission of each student)."""
    from tools.report import report

    return report.write(report.collect(assignment, course), out)


class Api(Base):
    """Every API answer is JSON, errors too; no redirect to the login page."""

    def prepare(self) -> None:
        if self.current_user is None:
            if "redirect" in self.__dict__:  # a hub user this service does not allow (jupyterhub's marker)
                raise web.HTTPError(403, "this hub user may not use the grading service")
            self._error_headers = {"WWW-Authenticate": 'token realm="grading"'}
            raise web.HTTPError(401, "sign in through the hub, or send a hub token (Authorization: token ...)")
        wait = self.service.throttle(self.current_user["name"])
        if wait:
            self._error_headers = {"Retry-After": str(math.ceil(wait))}
            raise web.HTTPError(429, f"more than {self.service.api_per_minute} requests a minute: "
                                     f"ask again in {math.ceil(wait)} s")

    def write_error(self, status_code: int, **kwargs) -> None:
        e = (kwargs.get("exc_info") or (None, None, None))[1]
        message = e.log_message if isinstance(e, web.HTTPError) and e.log_message else self._reason
        for k, v in getattr(self, "_error_headers", {}).items():  # send_error cleared the headers set before
            self.set_header(k, v)
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps({"error": first_line(message), "status": status_code}))


class ApiList(Api):
    def get(self) -> None:
        everyone = self.get_argument("all", "") and self.instructor
        rows = self.service.queue.rows(student=None if everyone else self.user["name"])
        self.json({"user": self.user["name"], "instructor": self.instructor,
                   "submissions": [self.service.summary(r, self.instructor) for r in rows]})


class ApiOne(Api):
    def get(self, row_id: str) -> None:
        self.json(self.service.summary(self.own_row(row_id), self.instructor))


class ApiNone(Api):
    """Any other path under ``api/``: 404, as JSON (after the same sign-in check)."""

    def get(self, *_args) -> None:
        raise web.HTTPError(404, "no such API: api/submissions or api/submissions/<id>")


def cookie_secret(state: Path) -> bytes:
    """The pages' cookie secret, kept in the state folder (0600): a restart keeps browsers signed in."""
    f = Path(state) / "cookie_secret"
    if not f.exists():
        f.touch(mode=0o600)
        f.write_bytes(os.urandom(32))
    return f.read_bytes()


def make_app(service: Service, prefix: str | None = None) -> web.Application:
    """The tornado application; ``prefix`` defaults to ``$JUPYTERHUB_SERVICE_PREFIX``."""
    prefix = prefix or os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/grading/")
    auth = HubOAuth.instance(cache_max_age=60)  # the one the OAuth callback handler uses too
    kw = {"service": service, "hub_auth": auth}
    routes = [
        (prefix, MineHandler, kw),
        (url_path_join(prefix, r"submissions/(\d+)"), FeedbackHandler, kw),
        (url_path_join(prefix, "class"), ClassHandler, kw),
        (url_path_join(prefix, r"report/([A-Za-z0-9_.\-]+)"), ReportHandler, kw),
        (url_path_join(prefix, "api/submissions"), ApiList, kw),
        (url_path_join(prefix, r"api/submissions/(\d+)"), ApiOne, kw),
        (url_path_join(prefix, r"api(?:/.*)?"), ApiNone, kw),
        (url_path_join(prefix, "oauth_callback"), HubOAuthCallbackHandler),
    ]
    return web.Application(routes, cookie_secret=cookie_secret(service.state), xsrf_cookies=False)
