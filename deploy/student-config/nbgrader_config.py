"""nbgrader for a student's server on the course's JupyterHub (on its JUPYTER_CONFIG_PATH).

The student side only needs the exchange and the course id. Every user server may run under
one system account (a local spawner as one user, a container image as ``jovyan``): the hub
user's name, not the system account's, names a submission and finds its feedback.
"""

import os

c = get_config()  # noqa: F821

c.CourseDirectory.course_id = os.environ.get("TD_COURSE_ID", "td-course")
c.Exchange.root = os.environ.get("TD_EXCHANGE", "/srv/nbgrader/exchange")
if os.environ.get("JUPYTERHUB_USER"):
    c.CourseDirectory.student_id = os.environ["JUPYTERHUB_USER"]
