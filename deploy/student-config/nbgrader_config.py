"""nbgrader for a student's server on the course's JupyterHub (on its JUPYTER_CONFIG_PATH).

The student side only needs the exchange and the course id. Every user server may run under
one system account (a local spawner as one user, a container image as ``jovyan``): the hub
user's name, not the system account's, names a submission and finds its feedback.

The hub installs this folder into the student environment (``deploy/class_setup.py``) with the
course's exchange classes beside it (``tools/grading/exchange.py`` as ``td_exchange.py``: nbgrader and
the standard library only): fetch, submit, list and feedback refuse an exchange writable by
everyone without the sticky bit and a course folder that is not the exchange owner's (planted).
"""

import os
import sys

c = get_config()  # noqa: F821

c.CourseDirectory.course_id = os.environ.get("TD_COURSE_ID", "td-course")
c.Exchange.root = os.environ.get("TD_EXCHANGE", "/srv/nbgrader/exchange")
if os.environ.get("JUPYTERHUB_USER"):
    c.CourseDirectory.student_id = os.environ["JUPYTERHUB_USER"]

_here = os.path.dirname(os.path.abspath(__file__))  # noqa: F821 (set by traitlets' config loader)
if os.path.exists(os.path.join(_here, "td_exchange.py")):
    import importlib.util

    if "td_exchange" not in sys.modules:  # by its path: nbgrader imports the classes by this module's name
        _spec = importlib.util.spec_from_file_location("td_exchange", os.path.join(_here, "td_exchange.py"))
        sys.modules["td_exchange"] = importlib.util.module_from_spec(_spec)
        _spec.loader.exec_module(sys.modules["td_exchange"])
    sys.modules["td_exchange"].configure(c, "td_exchange")
