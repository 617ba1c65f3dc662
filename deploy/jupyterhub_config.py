"""JupyterHub for a class of td-course: ``jupyterhub -f deploy/jupyterhub_config.py``.

Every value comes from an environment variable with a default for one course machine, so
the same file serves a class and the end-to-end test (tests/test_hub.py); deploy/README.md
maps each one to Zero to JupyterHub on Kubernetes.

- JupyterLab is the default UI of every user server (``/lab``).
- Students run the course's *student environment*: ``TD_STUDENT_ENV`` (required; never this
  checkout's ``.venv``) is a Python prefix (a venv) holding the handout (``make handout``:
  requirements-student.txt + the td_lib wheel) plus ``jupyterhub`` for
  ``jupyterhub-singleuser``; their servers get a copy of ``deploy/student-config`` installed in
  that environment (``deploy/class_setup.py``) on ``JUPYTER_CONFIG_PATH``: the student side of
  nbgrader only (assignment list, validate), the exchange (the course's classes,
  ``tools/grading/exchange.py`` as ``td_exchange.py``), the course id, the hub user as student id. Their
  environment names no path of this checkout (PATH is the student environment's and the system's).
- With one system user per student (``localprocess``, as root) ``deploy/class_setup.py`` closes the
  checkout, the course root, the hub's and the grading service's state and the students' homes to
  other users each time the hub starts.
- Instructors (``TD_INSTRUCTORS``) run the course's own environment (``TD_INSTRUCTOR_ENV``,
  the repository's venv) in the course root (``TD_COURSE_DIR``), with every nbgrader
  extension, the formgrader included (``deploy/instructor-config``): what ``make formgrader``
  opens on one machine. They are hub admins.
- The nbgrader exchange ``TD_EXCHANGE`` is one folder shared by everyone (on one machine a
  local folder, ``1777``, owned by the first instructor; on Kubernetes a ReadWriteMany volume
  mounted in every pod), driven by the course's exchange classes (``tools/grading/exchange.py``).
"""

import os
import sys
from pathlib import Path


def _load(path: Path):
    """A module of this folder by its path (deploy/ is not a package, and sys.path stays as it is)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class_setup = _load(Path(__file__).resolve().parent / "class_setup.py")

c = get_config()  # noqa: F821

DEPLOY = Path(__file__).resolve().parent
REPO = DEPLOY.parent


def _env_list(name: str, default: str = "") -> list[str]:
    return [u.strip() for u in os.environ.get(name, default).split(",") if u.strip()]


HUB_ROOT = Path(os.environ.get("TD_HUB_ROOT", "/srv/td-course/hub"))  # hub state, user homes
EXCHANGE = os.environ.get("TD_EXCHANGE", "/srv/nbgrader/exchange")
COURSE_DIR = os.environ.get("TD_COURSE_DIR", str(REPO / "course"))
COURSE_ID = os.environ.get("TD_COURSE_ID", "td-course")
INSTRUCTORS = _env_list("TD_INSTRUCTORS", "instructor")
STUDENTS = _env_list("TD_STUDENTS")
# Students never run in the instructor's environment (this checkout's .venv: full td_lib, checks, tools).
_problem = class_setup.student_env_problem(os.environ.get("TD_STUDENT_ENV"), REPO)
if _problem:
    raise SystemExit(f"deploy/jupyterhub_config.py: {_problem}")
STUDENT_ENV = Path(os.environ["TD_STUDENT_ENV"])
STUDENT_CONFIG = class_setup.student_config_dir(STUDENT_ENV)
INSTRUCTOR_ENV = Path(os.environ.get("TD_INSTRUCTOR_ENV", str(REPO / ".venv")))

# ------------------------------------------------------------------ network and state
c.JupyterHub.ip = os.environ.get("TD_HUB_IP", "127.0.0.1")
c.JupyterHub.port = int(os.environ.get("TD_HUB_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ.get("TD_HUB_API_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{os.environ.get('TD_PROXY_API_PORT', '8001')}"
# The `configurable-http-proxy` of the hub's own environment (the PyPI package; the npm one
# works the same).
_chp = Path(sys.prefix) / "bin" / "configurable-http-proxy"
c.ConfigurableHTTPProxy.command = [str(_chp) if _chp.exists() else "configurable-http-proxy"]
c.ConfigurableHTTPProxy.pid_file = str(HUB_ROOT / "jupyterhub-proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{HUB_ROOT / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(HUB_ROOT / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(HUB_ROOT / "jupyterhub.pid")
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True

# ------------------------------------------------------------------- who comes in
# TD_AUTHENTICATOR: "dummy" (tests, a demo: one shared password TD_DUMMY_PASSWORD),
# "native" (nativeauthenticator) or any authenticator entry point ("github", "ldapauthenticator"...).
c.JupyterHub.authenticator_class = os.environ.get("TD_AUTHENTICATOR", "pam")
if c.JupyterHub.authenticator_class == "dummy":
    c.DummyAuthenticator.password = os.environ.get("TD_DUMMY_PASSWORD", "")
c.Authenticator.admin_users = set(INSTRUCTORS)
if STUDENTS:
    c.Authenticator.allowed_users = set(STUDENTS) | set(INSTRUCTORS)
else:
    c.Authenticator.allow_all = True

# ------------------------------------------------------------------- user servers
# TD_SPAWNER: "simple" (SimpleLocalProcessSpawner: every server under the hub's account,
# homes under TD_HUB_ROOT/home; one machine, tests), "localprocess" (one system user per
# student) or "kubespawner" (Zero to JupyterHub sets it itself).
c.JupyterHub.spawner_class = os.environ.get("TD_SPAWNER", "localprocess")
if c.JupyterHub.spawner_class == "simple":
    c.SimpleLocalProcessSpawner.home_dir_template = str(HUB_ROOT / "home" / "{username}")
c.Spawner.default_url = "/lab"
c.Spawner.http_timeout = int(os.environ.get("TD_SPAWN_TIMEOUT", "120"))
c.Spawner.start_timeout = int(os.environ.get("TD_SPAWN_TIMEOUT", "120"))
c.Spawner.environment = {"TD_EXCHANGE": EXCHANGE, "TD_COURSE_ID": COURSE_ID,
                         "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
# Nothing of the hub's own environment reaches a server but the locale (not its PATH, VIRTUAL_ENV,
# PYTHONPATH or conda variables: they name the instructor's environment); _per_role sets PATH.
c.Spawner.env_keep = ["LANG", "LC_ALL", "JUPYTERHUB_SINGLEUSER_APP"]
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
if os.geteuid() == 0:  # servers spawned as root (the simple spawner under a root hub)
    c.Spawner.args = ["--allow-root"]


def _per_role(spawner) -> None:
    """Students: the student environment and config; instructors: the course's."""
    name = spawner.user.name
    env = dict(spawner.environment)
    if name in INSTRUCTORS:
        env.update(JUPYTER_CONFIG_PATH=str(DEPLOY / "instructor-config"), TD_COURSE_DIR=COURSE_DIR)
        if c.JupyterHub.spawner_class == "simple":  # the trial: every student is the hub's account
            env["TD_EXCHANGE_ONE_ACCOUNT"] = "1"
        spawner.cmd = [str(INSTRUCTOR_ENV / "bin" / "jupyterhub-singleuser")]
        spawner.notebook_dir = COURSE_DIR
        env["PATH"] = f"{INSTRUCTOR_ENV / 'bin'}{os.pathsep}{os.environ.get('PATH', SYSTEM_PATH)}"
    else:
        env.update(JUPYTER_CONFIG_PATH=str(STUDENT_CONFIG))
        spawner.cmd = [str(STUDENT_ENV / "bin" / "jupyterhub-singleuser")]
        env["PATH"] = f"{STUDENT_ENV / 'bin'}{os.pathsep}{SYSTEM_PATH}"
    if c.JupyterHub.spawner_class == "simple":
        Path(spawner.home_dir).mkdir(parents=True, exist_ok=True)
    spawner.environment = env


c.Spawner.pre_spawn_hook = _per_role

HUB_ROOT.mkdir(parents=True, exist_ok=True)
HUB_ROOT.chmod(0o700)  # the hub's database and secret, the grading service's state by default
# The class's set-up (deploy/class_setup.py): the students' config into the student environment;
# the exchange 1777 (sticky: only an entry's owner renames it), owned by the first instructor with
# one system user each (students' servers trust the exchange's owner as the course's); and, as
# root with one system user each, the checkout, the course, the hub's and the grading state and
# the students' homes closed to other users.
for _line in class_setup.setup({**os.environ, "TD_STUDENT_ENV": str(STUDENT_ENV), "TD_EXCHANGE": EXCHANGE,
                                "TD_COURSE_DIR": COURSE_DIR, "TD_HUB_ROOT": str(HUB_ROOT),
                                "TD_SPAWNER": c.JupyterHub.spawner_class}, REPO):
    print(f"[td-course setup] {_line}", file=sys.stderr)

# ------------------------------------------------------------ live grading (optional)
# TD_GRADING_SERVICE=1: a hub-managed service (python -m tools.live_grading, in the instructor
# environment) grades each submission as it arrives in the exchange and shows the student
# the result under /services/grading/ (deploy/README.md, "Live grading"). Every user may
# reach it (the default `user` role gets access:services!service=grading); the service
# itself decides what each one sees.
if os.environ.get("TD_GRADING_SERVICE", "") not in ("", "0"):
    GRADING_STATE = os.environ.get("TD_GRADING_STATE", str(HUB_ROOT / "grading"))
    _grading = [str(INSTRUCTOR_ENV / "bin" / "python"), "-m", "tools.live_grading",
                "--course", COURSE_DIR, "--exchange", EXCHANGE, "--course-id", COURSE_ID,
                "--state", GRADING_STATE, "--instructors", ",".join(INSTRUCTORS),
                "--max-per-hour", os.environ.get("TD_GRADING_MAX_PER_HOUR", "3"),
                "--hidden", os.environ.get("TD_GRADING_HIDDEN", "passfail"),
                "--poll", os.environ.get("TD_GRADING_POLL", "2"),
                "--mem-gb", os.environ.get("TD_GRADING_MEM_GB", "6")]
    if os.environ.get("TD_GRADING_POLICY"):
        _grading += ["--policy", os.environ["TD_GRADING_POLICY"]]
    if os.environ.get("TD_GRADING_SCHEDULER"):
        _grading += ["--scheduler", os.environ["TD_GRADING_SCHEDULER"]]
    if os.environ.get("TD_GRADING_WORKERS"):
        _grading += ["--workers", os.environ["TD_GRADING_WORKERS"]]
    if os.environ.get("TD_GRADING_NO_SANDBOX", "") not in ("", "0"):
        _grading.append("--no-sandbox")
    if c.JupyterHub.spawner_class == "localprocess":  # one system user per student: they own their submissions
        _grading.append("--check-owner")
    c.JupyterHub.services = [{
        "name": "grading",
        "url": f"http://127.0.0.1:{os.environ.get('TD_GRADING_PORT', '10101')}",
        "command": _grading,
        "cwd": str(REPO),
        "environment": {"TD_EXCHANGE": EXCHANGE, "TD_COURSE_DIR": COURSE_DIR, "TD_COURSE_ID": COURSE_ID,
                        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
                        "PATH": f"{INSTRUCTOR_ENV / 'bin'}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"},
        "oauth_no_confirm": True,
        "display": True,
    }]
    c.JupyterHub.load_roles = [{"name": "user", "scopes": ["self", "access:services!service=grading"]}]
    # A managed service that exits (a crash, SIGKILL, the OOM killer, a stop) is started again by the
    # hub once its poll notices, every Spawner.poll_interval seconds: 30 by default, and a service's
    # spawner (jupyterhub.services.service._ServiceSpawner) is built without the hub's config, so
    # c.Spawner settings do not reach it. Poll it every TD_GRADING_HUB_POLL seconds (default 2): the
    # pages answer 503 for seconds, not half a minute; what was being graded is graded again.
    from jupyterhub.services import service as _service
    from traitlets import default as _default

    class _PolledServiceSpawner(_service._ServiceSpawner):
        @_default("poll_interval")
        def _poll_interval(self):
            return max(1, int(os.environ.get("TD_GRADING_HUB_POLL", "2")))

        @_default("poll_jitter")
        def _poll_jitter(self):
            return 0.0

    _service._ServiceSpawner = _PolledServiceSpawner
