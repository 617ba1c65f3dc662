"""The service's web pages under the hub (``/services/grading/``), behind the hub's OAuth.

Every handler is a ``jupyterhub.services.auth.HubOAuthenticated`` tornado handler: a browser
is sent through the hub's login (OAuth, no confirmation page for this service), an API
client may send a hub token (``Authorization: token ...``). Who is an instructor: a name in
``--instructors`` or a member of the hub group ``--instructor-group``.

    /services/grading/                      my submissions (an instructor: a link to the class)
    /services/grading/submissions/<id>      the feedback of one submission (its student, instructors)
    /services/grading/class                 every submission of the class (instructors)
    /services/grading/report/<assignment>   tools/report.py's page on the live grades (instructors)
    /services/grading/api/submissions       the same as JSON; ?all=1 for instructors
    /services/grading/api/submissions/<id>

Another student's submission answers 404 (as one that does not exist), an instructor's page
403. What a feedback shows is :func:`tools.live_grading.policy.view`'s.

What a student wrote (names, messages, code) is escaped by the templates (Jinja autoescape), and
every response carries a Content-Security-Policy (:func:`content_security_policy`): the pages'
one style sheet and one script run (by hash; ``live_grading_assets.html.j2``), nothing else
does, and a page talks to nothing but this service. The report page gets the report's own policy
(:func:`tools.report.content_security_policy`: no script at all).
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import json
import logging
import os
import time
from pathlib import Path

from jupyterhub.services.auth import HubOAuth, HubOAuthCallbackHandler, HubOAuthenticated
from jupyterhub.utils import url_path_join
from tornado import web

from tools.live_grading.policy import Policy, view
from tools.live_grading.queue import Queue, Row, when

log = logging.getLogger("tools.live_grading")
TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
STATE_TEXT = {"queued": "queued", "grading": "grading", "graded": "graded", "refused": "refused",
              "failed": "not graded (error)"}


class Service:
    """What the handlers share: queue, policy, course, who instructs."""

    def __init__(self, queue: Queue, policy: Policy, course: Path, state: Path, instructors: set[str],
                 instructor_group: str = "instructors"):
        self.queue, self.policy, self.course, self.state = queue, policy, Path(course), Path(state)
        self.instructors, self.instructor_group = set(instructors), instructor_group
        self._duedates: dict[str, tuple[float, object]] = {}

    def is_instructor(self, user: dict) -> bool:
        return user.get("name") in self.instructors or self.instructor_group in (user.get("groups") or [])

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

    def summary(self, row: Row, instructor: bool) -> dict:
        """One row for a page or the API, as the policy allows."""
        d = {"id": row.id, "student": row.student, "assignment": row.assignment, "timestamp": row.timestamp,
             "state": row.state, "reason": row.reason, "noticed": when(row.noticed),
             "waited": row.waited, "feedback": None}
        if row.state == "graded" and row.result:
            v = view(row.result, self.policy.get(row.assignment), self.duedate(row.assignment), instructor=instructor)
            d["feedback"] = v
        return d


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
        row = self.service.queue.get(int(row_id))
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
        rows = [self.service.summary(r, True) for r in self.service.queue.rows()]
        assignments = sorted({r["assignment"] for r in rows if r["state"] == "graded"})
        self.page("live_grading_class.html.j2", rows=rows, counts=self.service.queue.counts(),
                  assignments=assignments)


class ReportHandler(Base):
    @web.authenticated
    async def get(self, assignment: str) -> None:
        if not self.instructor:
            raise web.HTTPError(403, "instructors only")
        course = self.service.state / "courses" / assignment
        if not (course / "gradebook.db").exists():
            raise web.HTTPError(404, f"nothing of {assignment} graded yet")
        out = self.service.state / "reports" / f"{assignment}.html"
        graded = [r.finished or 0 for r in self.service.queue.rows(assignment=assignment) if r.state == "graded"]
        if not out.exists() or out.stat().st_mtime < max(graded, default=0):
            await asyncio.get_running_loop().run_in_executor(None, write_report, assignment, course, out)
        from tools import report

        page = out.read_bytes()
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Content-Security-Policy", report.content_security_policy(page.decode("utf-8")))
        self.write(page)


def write_report(assignment: str, course: Path, out: Path) -> Path:
    """tools/report.py's page on the service's course of ``assignment`` (the latest graded
    submission of each student)."""
    from tools import report

    return report.write(report.collect(assignment, course), out)


class ApiList(Base):
    @web.authenticated
    def get(self) -> None:
        everyone = self.get_argument("all", "") and self.instructor
        rows = self.service.queue.rows(student=None if everyone else self.user["name"])
        self.json({"user": self.user["name"], "instructor": self.instructor,
                   "submissions": [self.service.summary(r, self.instructor) for r in rows]})


class ApiOne(Base):
    @web.authenticated
    def get(self, row_id: str) -> None:
        self.json(self.service.summary(self.own_row(row_id), self.instructor))


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
        (url_path_join(prefix, "oauth_callback"), HubOAuthCallbackHandler),
    ]
    return web.Application(routes, cookie_secret=cookie_secret(service.state), xsrf_cookies=False)
